"""What a run leaves on disk: the Result schema and its signatures, the output cache; advice on a failed write.

What it holds:

* `results` — the Result schema: one JSON file per (submission, track, resource revision, model);
* `integrity` — the signatures that tell a Result the harness wrote from one changed afterwards;
* `cache` — the per-instance output cache a run resumes from (one SQLite file per run's content key);
* `storage` — what is full or not writable when a write fails, and what would help.

What it may import: `benchmark.errors`, `benchmark.progress` and `benchmark.resources` (the data home), nothing
above it — the runner, the tracks, the metrics, the variant runs and `xaibench verify` import it. The isolation
package imports only `cache` (the `Entry` it carries back from the worker) and `storage`, never a Result or its
signature (`[tool.importlinter]` in pyproject.toml). The software provenance a Result records
(`benchmark.provenance`) stays beside it: the resources record it too, and the store reads the data home from
`benchmark.resources`. Nothing is re-exported: import `benchmark.store.results` and the others by name.
"""
