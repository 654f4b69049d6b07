"""The leaderboard: Results → ranked boards → summaries → tables and the static site.

The ranking rules, one module each, in the order a board applies them: `selection` (which results a
board ranks), `ranks` (paired-bootstrap ranks and their intervals), `verdicts` (gates, and whether the
board discriminates), `agreement` (how far its metrics agree), `boards` (a board from those rules:
`boards(results)`), `summaries` (Bradley–Terry across boards: `track_summary`, `overall`); `stats` holds
the statistics they use. `render` prints boards as terminal tables, Markdown and CSV; `site` is the one
HTML path (`xaibench site`, and `xaibench leaderboard --format html` on one page); `loading` reads a
results folder, `repository` a results repository; `cli` registers the commands.
"""
