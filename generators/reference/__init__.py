"""The reference leaderboard (`xaibench reference build`, `make reference`): every built-in on every board, landed
in a results repository by the flow an outsider follows, then shipped as plain files (docs/reference.md).

`plan` (what is built: each track's resources at a scale, its boards, the scale rule and its cost model),
`build` (the stages: the repository and its round, a lane per track that builds, evaluates and submits, one
maintainer lane that verifies, then reveal, audit, export and the page), `export` (the repository's tip as plain
files, written aside and swapped in), `papers` (the papers' tables beside the boards) and `docs` (the generated
docs/reference.md). Every step is an ordinary `xaibench` command; nothing here imports the leaderboard.
"""
