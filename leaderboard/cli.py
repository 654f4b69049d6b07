"""CLI commands contributed by the leaderboard package (registered via `xaibench.commands`)."""


def register(app) -> None:  # filled in by the leaderboard
    pass
