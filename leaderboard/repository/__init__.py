"""The results repository (docs/submitting.md): the leaderboard's source of truth outside this machine.

A git repository or a Hugging Face dataset repository holds, per submission and code hash, the
submission's metadata (`submission.json`), its source exactly as hashed (`source/`) and its Result files;
pull requests add them, `xaibench results validate` judges a pull request (pure checks over a checked-out
tree), `xaibench results verify` re-runs it in the sandbox and signs a verification record (Ed25519), and
boards and the site are built from a checkout (`--from`).

Where things are: `layout` (the paths, `submission.json`, what `source/` holds), `reading` (the one strict, bounded
reader of JSON and trees), `store` (one interface: snapshot, tip, propose, land), `git` and `hub` (its two
backends), `targets` (a target string to its store), `pull` (a pull request laid over the tip of the default
branch), `validate` (the validator), `contents` (what every field of a Result must say), `names` (names that could
pass for one another), `contributors` (a name belongs to a key: contribution signatures and name bindings),
`signed_state` (the one reader of what the maintainers signed — bindings, rounds, records — under their keys),
`migrate` (an older repository's unsigned bindings signed), `signing` (Ed25519 keys and records), `submit`
(`xaibench submit`), `rerun` (the maintainers' re-run, signing and landing, and `rehide`), `rounds` (rounds of
hidden copies: a secret committed to, then revealed), `audit` (anyone's check of a revealed round), `boards`
(Results of a checkout marked verified or self-reported) and `cli` (the commands). `benchmark` knows none of it.
"""
