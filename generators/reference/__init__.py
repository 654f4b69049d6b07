"""The reference leaderboard: every built-in on every board, built by the flow an outsider follows.

`xaibench reference build` (`make reference`) lands them in a results repository, then ships its tip as plain files
(docs/reference.md).

`plan` (what is built: each track's resources at a scale, its boards, the scale rule and its cost model),
`build` (the stages: the repository and its round, a lane per track that builds, evaluates and submits, one
maintainer lane that verifies, then reveal, audit, export and the page), `export` (the repository's tip as plain
files, written aside and swapped in), `papers` (the papers' tables beside the boards) and `docs` (the generated
docs/reference.md). Every step is an ordinary `xaibench` command; nothing here imports the leaderboard.
"""
