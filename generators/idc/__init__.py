"""IDC pseudo-ground-truth generators (SPECS §5): the MILP interpretation-feature solver lives in `milp`."""
