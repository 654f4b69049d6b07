"""Reading a folder of Result files for the boards, for the command line and the site alike.

Shared by `xaibench leaderboard` (`leaderboard.cli`) and `xaibench site` (`leaderboard.site`), so neither
imports the other."""

from __future__ import annotations

from pathlib import Path

from benchmark.errors import XaibenchError
from benchmark.store.results import Result

__all__ = ["load_results_dir"]


def load_results_dir(directory: Path) -> tuple[list[Result], list[str]]:
    """The trained Results under `directory` (recursive), each with its companion runs from its own folder
    (`leaderboard.companions.attach`: e.g. `<model>/randomised-s<seed>/<name>.json` beside `<model>/<name>.json`;
    never another folder's), and one problem line per unreadable file; a Result whose latest `xaibench verify`
    verdict failed (for this very file) is marked "modified" (`benchmark.verify`). A missing folder gives no
    results and no problem."""
    from benchmark.verify import apply_verdicts
    from leaderboard.companions import attach

    found, problems = _load_files(directory)
    problems = problems + apply_verdicts(found)
    return attach(found), problems


def _load_files(directory: Path) -> tuple[list[Result], list[str]]:
    """`load_results`, robust to files that break its validation with a non-ResultError exception
    (e.g. a JSON list instead of an object): those become one problem message each as well."""
    from benchmark.store.results import load_results

    if not directory.is_dir():
        return [], []
    try:
        return load_results(directory)
    except (AttributeError, TypeError, ValueError, KeyError):
        pass
    found: list[Result] = []
    problems: list[str] = []
    for path in sorted(directory.rglob("*.json")):
        try:
            found.append(Result.load(path))
        except XaibenchError as exc:
            problems.append(str(exc))
        except (AttributeError, TypeError, ValueError, KeyError) as exc:
            problems.append(f"{path}: result does not follow the schema ({exc}); "
                            "delete it and re-run `xaibench evaluate`")
    return found, problems
