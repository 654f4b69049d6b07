"""TEF speed: batched candidate evaluation (all candidates of a position in ONE predict, ONE tagger and ONE
attribution call; step 1 in one attribution call) vs the straightforward sequential loop (one predict,
one tagger and one attribution call per candidate / masked text). Same adversarial texts; ≥ 5× faster.

Run as a script (``python tests/perf/bench_tef.py [--n 8]``) or as a pytest test
(``pytest -s tests/perf/bench_tef.py -p no:cacheprovider --override-ini addopts=``).

Model: the robustness resource's Kim CNN (`$XAIBENCH_HOME/resources/robustness/model/mr-cnn`) if built,
else a randomly initialised Kim CNN over the MR vocabulary (seed 0); explainer: the built-in saliency
submission, in process; synonym space: the resource's counter-fitted space if built, else plain GloVe-50d
(top 20,000 words; speed only). Texts: the first `n` MR test sentences. One torch thread.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch


def setup(n: int, kind: str = "cnn"):
    from benchmark.attacks.synonyms import SynonymSpace
    from benchmark.models.text import KimCNN, WordModel, build_vocab, load_word_model
    from benchmark.resources import resource_root
    from generators.corpora import load_mr
    from generators.robustness.build import SPACE_FILE, explainer_fn

    torch.set_num_threads(1)
    mr = load_mr()
    root = resource_root("robustness")
    if (root / "model" / f"mr-{kind}" / "config.json").is_file():
        model = load_word_model(root / "model" / f"mr-{kind}", kind)
    else:
        torch.manual_seed(0)
        vocab = build_vocab([d.tokens for d in mr["train"]])
        model = WordModel(KimCNN(len(vocab), max_len=64), vocab, name="cnn")
    if (root / SPACE_FILE).is_file():
        space = SynonymSpace.load(root / SPACE_FILE)
    else:
        from generators.robustness.counterfit import glove_vocabulary

        space = SynonymSpace(*glove_vocabulary(20000), name="glove-50d")
    attribute, _ = explainer_fn("saliency", model)
    texts = [d.tokens for d in mr["test"] if len(d.tokens) <= (model.max_len or 10**9)][:n]
    return model, attribute, space, texts


def run(n: int = 8) -> float:
    from benchmark.attacks.filters import PosTagger
    from benchmark.attacks.tef import AttackConfig, Attacker

    model, attribute, space, texts = setup(n)
    out = {}
    for batched in (True, False):
        att = Attacker(model.predict, attribute, space, AttackConfig(method="tef", batched=batched), tagger=PosTagger())
        att.attack(texts[0])  # warm-up (imports, first calls)
        att.tagger._cache.clear()
        t = time.perf_counter()
        res = [att.attack(x) for x in texts]
        out[batched] = (time.perf_counter() - t, res)
    (tb, rb), (ts, rs) = out[True], out[False]
    for a, b in zip(rb, rs):
        assert a.adversarial() == b.adversarial(), "batched and sequential TEF disagree"
        assert [s.position for s in a.steps] == [s.position for s in b.steps]
        assert np.allclose([s.d for s in a.steps], [s.d for s in b.steps], atol=1e-6)
    calls_b = sum(r.calls["predict"] + r.calls["attribute"] for r in rb)
    calls_s = sum(r.calls["predict"] + r.calls["attribute"] for r in rs)
    subs = sum(r.r for r in rb)
    ratio = ts / tb
    print(f"TEF on {len(texts)} MR sentences ({subs} substitutions): batched {tb:.2f} s ({calls_b} model/explainer "
          f"calls), sequential {ts:.2f} s ({calls_s} calls); identical adversarial texts; speed-up {ratio:.1f}x")
    return ratio


def test_batched_tef_is_5x_faster():
    assert run(8) >= 5.0


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--n", type=int, default=8)
    run(p.parse_args().n)
