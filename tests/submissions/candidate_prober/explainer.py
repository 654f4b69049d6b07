"""An attack on the IDC hidden copies (issue #58), kept as a test submission: knowing the construction's public rules.

The planted words of an IDC copy are drawn among candidates that public rules fix (`generators.idc.hidden`). This
submission ships the candidates a submitter can list from those rules (`candidates.json`, written for a resource
by `tests/construction_attacks.py`; empty as shipped) and explains a document d with predicted class c by
leave-one-out occlusion restricted to the candidates and the words the lexicon ties to c:

    score(w) = p_c(d) − p_c(d without w)   if w is a candidate or σ(d) s(w) > lexicon_min
             = 0                            otherwise

with s(w) the lexicon asset's class log-odds (> 0: class 1) and σ(d) = +1 when c = 1, −1 otherwise. Without the
candidates the gate is a data prior the copies defeat (on the v1 construction, 3 copies × 100 documents of the
demo's MR: κ 0.38 against occlusion's 0.44); with them it came first there (0.51 against input×gradient's 0.49)
while occlusion was 0.44: the rules gave the planted words away.

`probe = false` calls no model for the candidates ("candidate prior"): every candidate scores 1 and every other
word max(0, σ(d) s(w)) / its document's maximum (the predicted-class lexicon)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from submissions.text_common import LexiconControl, documents, explain_nonempty, predict_in_chunks


def _candidates() -> frozenset[str]:
    data = json.loads(Path(__file__).with_name("candidates.json").read_text(encoding="utf-8"))
    return frozenset(str(w) for w in data["words"])


class CandidateProber(LexiconControl):
    """Attack: occlusion on the listable candidates and the lexicon's predicted-class words (module docstring)."""

    def __init__(self, probe: bool = True, lexicon_min: float = 0.5) -> None:
        self.probe, self.lexicon_min = bool(probe), float(lexicon_min)
        self.candidates = _candidates()

    def explain(self, model, batch):
        """One float32 score per word: one `predict` call per batch, for the documents and every deletion of a
        gated word."""
        lex = self.check(model)
        docs = documents(batch)

        def run(idx: list[int]) -> list[np.ndarray]:
            chosen = [docs[i] for i in idx]
            probs = predict_in_chunks(model, chosen)
            cls = probs.argmax(1)
            signed = [np.maximum(lex.scores(d) * (1.0 if c == 1 else -1.0), 0.0) for d, c in zip(chosen, cls)]
            is_cand = [np.array([w in self.candidates for w in d], dtype=bool) for d in chosen]
            if not self.probe:
                return [np.where(k, 1.0, s / s.max() if s.max() > 0 else s) for k, s in zip(is_cand, signed)]
            where = [np.flatnonzero(k | (s > self.lexicon_min)) for k, s in zip(is_cand, signed)]
            deleted = [d[:k] + d[k + 1:] for d, ks in zip(chosen, where) for k in ks]
            after = predict_in_chunks(model, deleted) if deleted else np.zeros((0, probs.shape[1]))
            out, row = [], 0
            for d, c, p, ks in zip(chosen, cls, probs, where):
                s = np.zeros(len(d))
                s[ks] = p[c] - after[row:row + len(ks), c]
                row += len(ks)
                out.append(s)
            return out

        return explain_nonempty(docs, run)
