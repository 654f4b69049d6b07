"""A submission: its folder and metadata, how it is imported, its requirements and environments, its scaffold.

What it owns:

* `folder` — the folder with `submission.toml` and its metadata (`Submission`, `load_submission`, the
  entry-point discovery: `discover`, `get_submission`); its public names are this package's API, re-exported
  here (`from benchmark.submission import discover, load_submission`);
* `importing` — how the folder is imported as a package under a name of its own;
* `requirements` — its `requires` (PEP 508) against what is installed, and what its modules may import;
* `environments` — the environment of its own a submission with requirements is re-run in;
* `scaffold` — `xaibench new`'s ready folder.

What it may import: `benchmark.errors`, `benchmark.registry` and `benchmark.resources` (the data home), nothing
else of the harness — it sits below the isolation package, the tracks and the runner, which import it.
`xaibench check` (`benchmark.check`) runs a submission in the sandboxed worker on the tracks' kinds of model, so
it lives above them, beside the runner, not here. Importing this package loads only `folder`; callers import
the other modules by their names (`benchmark.submission.requirements`, …).
"""

from benchmark.submission.folder import (ASSET_NAME_RE, BUILTIN_ENTRY, CAPABILITY_FIELDS, CODE_SUFFIXES, ENTRY_RE,
                                         FILE_NAME_RE, KINDS, LIBRARY_PACKAGES, MAX_FILE_BYTES, MAX_FILES,
                                         MAX_SOURCE_BYTES, MODALITIES, NAME_RE, ROLES, SKIP_DIRS, Submission,
                                         accepted_parameters, builtin_folders, builtins, code_like, discover,
                                         get_submission, import_cycle, is_builtin, load_submission)

__all__ = ["ASSET_NAME_RE", "BUILTIN_ENTRY", "CAPABILITY_FIELDS", "CODE_SUFFIXES", "ENTRY_RE", "FILE_NAME_RE",
           "KINDS", "LIBRARY_PACKAGES", "MAX_FILES", "MAX_FILE_BYTES", "MAX_SOURCE_BYTES", "MODALITIES", "NAME_RE",
           "ROLES", "SKIP_DIRS", "Submission", "accepted_parameters", "builtin_folders", "builtins", "code_like",
           "discover", "get_submission", "import_cycle", "is_builtin", "load_submission"]
