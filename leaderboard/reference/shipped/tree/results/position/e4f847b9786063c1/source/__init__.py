"""Built-in submissions: one folder each (submission.toml + one module).

Found by the harness through the `xaibench.submissions` entry point, like third-party ones."""
