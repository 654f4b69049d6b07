"""CLI commands contributed by the generators package (registered via `xaibench.commands`)."""


def register(app) -> None:  # filled in by the generators
    pass
