"""The attacks on the hidden copies' constructions (issue #58), staged for a resource: the test submissions
`tests/submissions/candidate_prober` and `tests/submissions/published_answers` ship empty data files; `stage` copies
one into a folder with the data a submitter could make from the public resource and the construction's public rules.

* `idc_candidates(resource)` — the words the IDC construction's public rules let a draw plant
  (`generators.idc.hidden.listable_candidates`): what a submitter can list without the secret;
* `idc_common_words(resource, max_df)` — the same mask without any knowledge of the construction: every word but the
  most frequent (the stop-word filter the candidate prober also gets from the rules);
* `idc_answers(resource)` / `rcnn_answers(resource)` — the published evaluation split's ground truth per document
  id (IDC: the `gt` flags; RCNN: SR 3, SDK 2, N 1), the public data the published-answers prior returns.

Used by tests/test_hidden_idc.py, tests/test_hidden_rcnn.py and tests/perf/hidden_attacks.py."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np

SUBMISSIONS = Path(__file__).parent / "submissions"


def stage(name: str, out: Path, candidates: list[str] | None = None,
          answers: dict[str, list[float]] | None = None) -> Path:
    """A copy of test submission `name` (a folder of tests/submissions) at `out` with its data files filled:
    `candidates.json` from `candidates`, `answers.json` from `answers` (each left empty when None)."""
    shutil.copytree(SUBMISSIONS / name, out, ignore=shutil.ignore_patterns("__pycache__"))
    if candidates is not None:
        (out / "candidates.json").write_text(json.dumps({"words": sorted(candidates)}))
    if answers is not None and (out / "answers.json").exists():
        (out / "answers.json").write_text(json.dumps({"documents": answers}))
    return out


def idc_candidates(resource: Any, config: Any = None) -> list[str]:
    """The words the IDC construction (with `config`, default its own) may plant on `resource`, from public rules."""
    from generators.idc.hidden import listable_candidates

    return sorted(listable_candidates(resource, config))


def idc_common_words(resource: Any, max_df: float) -> list[str]:
    """The twin of `idc_candidates` that knows no construction: every word (`is_word`) of the published training
    split held by at most `max_df` of the test documents — all words but the few most frequent (on the demo's MR
    at 0.1: all but 18, "the" … "its"), which WGA never puts in a feature set."""
    from collections import Counter

    from benchmark.tokenize import is_word
    from generators.idc.hidden import _public

    pub = _public(resource)
    test = [d.tokens for d in pub.splits["test"]]
    df = Counter(w for d in test for w in set(d))
    return sorted({w for d in pub.splits["train"] for w in d.tokens if is_word(w) and df[w] <= max_df * len(test)})


def idc_answers(resource: Any) -> dict[str, list[float]]:
    """{document id: its published `gt` flags (0 / 1 per token)} of the published test split."""
    t = resource.table("test", columns=["id", "gt"]).to_pydict()
    return {str(i): [float(g) for g in flags] for i, flags in zip(t["id"], t["gt"])}


def rcnn_answers(resource: Any, pool: bool = True) -> dict[str, list[float]]:
    """{review id: per token 3 (SR), 2 (SDK) or 1 (N)} of the published verified reviews (0 stays free for what the
    published-answers attack demotes); with `pool`, also every other review of the pool the resource records (a copy
    may verify other reviews than the published model): 2 where the published generator selects the token, 1 where
    it does not — public too (the published model and the reviews are), made once offline."""
    from benchmark.models.rcnn import load_rcnn
    from generators.rcnn.build import RCNNBuildConfig, load_splits

    t = resource.table("test", columns=["id", "partition"]).to_pydict()  # N, SDK, SR = 0, 1, 2
    out = {str(i): [float(p) + 1.0 for p in np.asarray(part)] for i, part in zip(t["id"], t["partition"])}
    if pool:
        params = resource.params
        cfg = RCNNBuildConfig(**{k: params[k] for k in RCNNBuildConfig.__dataclass_fields__ if k in params})
        _, reviews, _ = load_splits(cfg, params.get("data"))
        folder = (params.get("models") or {}).get("rcnn") or params.get("model") or resource.config
        published = load_rcnn(resource.root / "model" / folder, name="rcnn")
        for i, z in zip(reviews.ids, published.selections(reviews.tokens)):
            out.setdefault(str(i), [2.0 if x else 1.0 for x in z])
    return out
