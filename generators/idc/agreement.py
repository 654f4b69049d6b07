"""Agreement of a PGT or an explainer with people (issue: "agreement with people"; SPECS §5.7 in spirit).

Human rationales come from an ERASER-shape dataset (default: ERASER movie reviews, `train`/`val`),
one flag per token. Items are token positions; per document and pooled: Cohen's κ, precision, recall
(`benchmark.metrics.interpretation.token_agreement`).

* A PGT labels a token relevant iff its word is in IF_c for the document's class c.
* An explainer explains the MR model under test sentence by sentence (the model is a sentence
  classifier with a fixed length; longer sentences are cut into `max_len` chunks) for the document's
  class c; its token scores are binarised per document by the threshold rule (normalised by the
  document's positive maximum, ≥ α) or, with `top_fraction`, the highest-scoring fraction of tokens.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from benchmark.errors import ResourceError
from benchmark.metrics.interpretation import binarise_scores, token_agreement
from benchmark.progress import progress_bar


@dataclass
class Agreement:
    source: str  # "pgt idc/mr-wga" or "explainer saliency on idc/mr-wga:cnn"
    documents: int
    tokens: int
    pooled: dict[str, float]  # kappa, precision, recall over all token positions
    mean: dict[str, float]  # per-document averages
    selected_fraction: float  # share of tokens the source marks relevant
    human_fraction: float
    seconds: float

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def _summary(source: str, pred: Sequence[np.ndarray], human: Sequence[np.ndarray], t0: float) -> Agreement:
    res = token_agreement(pred, human)
    tokens = int(sum(len(h) for h in human))
    return Agreement(
        source=source, documents=len(human), tokens=tokens,
        pooled={k: float(res[f"pooled_{k}"]) for k in ("kappa", "precision", "recall")},
        mean={k: float(np.nanmean(res[k])) if len(human) else float("nan") for k in ("kappa", "precision", "recall")},
        selected_fraction=float(sum(int(np.sum(p)) for p in pred) / max(1, tokens)),
        human_fraction=float(sum(int(np.sum(h)) for h in human) / max(1, tokens)),
        seconds=round(time.perf_counter() - t0, 2),
    )


def _check_classes(corpus_classes: Sequence[str], pgt_classes: Sequence[str]) -> None:
    a, b = [c.lower() for c in corpus_classes], [c.lower() for c in pgt_classes]
    if a != b:
        raise ResourceError(f"class names differ between the rationale data {list(corpus_classes)} and the "
                            f"resource {list(pgt_classes)}; they must name the same classes in the same order")


def pgt_agreement(resource, docs: Sequence, classes: Sequence[str]) -> Agreement:
    """Token labels of the PGT of `resource` (an `idc/mr-<pgt>` Resource) vs the human rationales of `docs`."""
    from benchmark.resources import load_resource

    t0 = time.perf_counter()
    _check_classes(classes, resource.params.get("classes", []))
    feats = load_resource(f"{resource.family}/{resource.config}-features").table("features").to_pydict()
    sets: dict[int, set[str]] = {}
    for c, w in zip(feats["class"], feats["word"]):
        sets.setdefault(int(c), set()).add(w)
    pred = [np.array([w in sets.get(d.label, ()) for w in d.tokens], dtype=bool) for d in docs]
    return _summary(f"pgt {resource.name}", pred, [d.rationale for d in docs], t0)


def sentences(doc, max_len: int | None) -> list[tuple[int, int]]:
    """Token ranges [a, b) of the document's sentences (its text lines), cut into chunks of ≤ max_len."""
    line_of_source = []
    for k, line in enumerate(doc.text.split("\n")):
        line_of_source += [k] * len(line.split())
    src = np.asarray(doc.token_source, dtype=np.int64)
    if len(line_of_source) <= (src.max() if len(src) else -1):
        raise ResourceError(f"document {doc.id}: token offsets exceed its text; re-create the rationale data")
    line = np.asarray(line_of_source, dtype=np.int64)[src] if len(src) else np.zeros(0, np.int64)
    bounds = [0] + [i for i in range(1, len(line)) if line[i] != line[i - 1]] + [len(line)]
    out = []
    for a, b in zip(bounds[:-1], bounds[1:]):
        step = max_len or (b - a)
        out += [(s, min(b, s + step)) for s in range(a, b, step)]
    return [r for r in out if r[1] > r[0]]


def explainer_agreement(sub, spec, docs: Sequence, *, name: str, seed: int = 0, batch_size: int = 64,
                        alpha: float = 0.3, top_fraction: float | None = None, sandbox: str = "auto") -> Agreement:
    """Explain every document sentence by sentence for its class and compare the binarised token scores
    with the human rationales.

    The explainer (`sub`, a Submission) runs in the harness's sandboxed worker like on a track: it gets
    the sentences and the model (`spec`, with each sentence's explained class fixed to its document's
    class); the rationales stay here."""
    from dataclasses import replace

    from benchmark.isolation import Worker, WorkerConfig

    t0 = time.perf_counter()
    max_len = None
    if spec.served is None:
        max_len = getattr(spec.load(), "max_len", None)
    pieces, owners, ids = [], [], []
    for n, d in enumerate(docs):
        for a, b in sentences(d, max_len):
            pieces.append(list(d.tokens[a:b]))
            owners.append(n)
            ids.append(f"{d.id}:{a}")
    spec = replace(spec, targets={i: int(docs[n].label) for i, n in zip(ids, owners)})
    scores: list[list[np.ndarray]] = [[] for _ in docs]
    with Worker(sub, {}, spec, WorkerConfig(sandbox=sandbox)) as worker:
        refused = worker.start()
        if refused:
            raise ValueError(f"{name}: the submission refuses the model ({refused})")
        with progress_bar(len(pieces), f"agreement {name}", unit="sentence") as bar:
            for s in range(0, len(pieces), batch_size):
                sl = slice(s, s + batch_size)
                entries = worker.explain(ids[sl], pieces[sl], None, seed, [(len(p),) for p in pieces[sl]], 0)
                for e, n in zip(entries, owners[sl]):
                    if not e.ok:
                        raise ValueError(f"{name} returned an invalid explanation for {e.instance} ({e.reason})")
                    scores[n].append(np.asarray(e.array, dtype=np.float64))
                bar.advance(len(entries))
    pred, human = [], []
    for d, parts in zip(docs, scores):
        s_doc = np.concatenate(parts) if parts else np.zeros(0)
        pred.append(binarise_scores(s_doc, alpha=alpha, top_fraction=top_fraction))
        human.append(d.rationale)
    return _summary(f"explainer {name}", pred, human, t0)
