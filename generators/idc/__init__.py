"""IDC pseudo-ground-truth generators (SPECS §5); the MILP solver is in `milp`, hidden copies (#50) in `hidden`."""
