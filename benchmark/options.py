"""What the `xaibench` commands share to validate their options while the command line is parsed.

Every numeric option of every command declares a range (typer's `min=` / `max=`) and every option with
a fixed set of values is a choice (a `StrEnum` annotation, or `lazy_choice` where the set is known only
at run time, such as the registered tracks). The parser then refuses a bad value before the command
body runs, so nothing is computed or written; `benchmark.cli.main` prints the refusal as one line
(`error: ...`) with exit status 2. `tests/test_cli_options.py` walks every command and checks that
each numeric option has a range and each enumerated option is a choice.

The helpers here are callbacks (`typer.Option(..., callback=...)`): `exclusive(low, high)` makes bounds
strict where typer's `min=` / `max=` are inclusive (a learning rate must be > 0), `lazy_choice` checks a
value against names computed when the option is parsed, `device_name` checks a torch device name.
"""

from __future__ import annotations

import re
from typing import Any, Callable, Iterable

import typer

__all__ = ["HIDDEN_DRAWS", "SEED_MAX", "TIMEOUT_MAX_S", "TIME_BUDGET_MAX_S", "device_name", "exclusive", "lazy_choice"]

# numpy's RandomState and torch.manual_seed accept seeds in [0, 2**32 - 1] (numpy refuses larger ones).
SEED_MAX = 2**32 - 1
# Per-instance explanation limit: SIGALRM timers overflow past ~2**31 s; a day is beyond any explainer.
TIMEOUT_MAX_S = 86_400.0
# Hidden copies per board (benchmark.models.variants.hidden; the demo uses fewer, on a prefix of the instances,
# and says so).
HIDDEN_DRAWS = 3
# Whole-run budgets (training, solving): thirty days.
TIME_BUDGET_MAX_S = 30 * 86_400.0


def exclusive(low: float | None = None, high: float | None = None) -> Callable[[Any], Any]:
    """A callback refusing the bounds themselves: values ≤ `low` or ≥ `high` (None passes: the option was
    not given).

    Pair it with `min=low` / `max=high`, which declare the range (and show it in `--help`); typer's
    bounds are inclusive, so a learning rate (`exclusive(0)`) or a share of a file (`exclusive(0, 1)`)
    needs this as well."""

    def check(value: Any) -> Any:
        if value is None:
            return value
        if low is not None and not value > low:
            raise typer.BadParameter(f"{value:g} is not greater than {low:g}")
        if high is not None and not value < high:
            raise typer.BadParameter(f"{value:g} is not less than {high:g}")
        return value

    return check


def device_name(value: str) -> str:
    """Callback for a torch training device: 'auto', 'cpu', 'cuda' or 'cuda:<k>'."""
    if value is not None and not re.fullmatch(r"auto|cpu|cuda(:\d+)?", value):
        raise typer.BadParameter(f"'{value}' is not a device; use auto, cpu, cuda or cuda:<k> (e.g. cuda:0)")
    return value


def lazy_choice(names: Callable[[Any], Iterable[str]], what: str) -> Callable[..., Any]:
    """A callback that accepts only names from `names(ctx)`, a function called when the option is parsed
    (so the choices can come from registries that are expensive to load or filled by plugins).

    `names` receives the click context (to depend on options parsed before, e.g. the models of the
    chosen track: give that option `is_eager=True` so it is parsed first). `what` names the kind of
    value in the error message. Works for single and repeated (`List[str]`) options; None passes.
    The returned function carries `names` and `what` as attributes (the option walk of the tests
    recognises a lazy choice by them)."""

    def check(ctx: typer.Context, param: typer.CallbackParam, value: Any) -> Any:
        if value is None or ctx.resilient_parsing:
            return value
        known = list(names(ctx))
        for v in [value] if isinstance(value, str) else list(value):
            if v not in known:
                raise typer.BadParameter(f"'{v}' is not a known {what}; choose from: {', '.join(known)}")
        return value

    check.names, check.what = names, what  # type: ignore[attr-defined]  # markers on a function object
    return check
