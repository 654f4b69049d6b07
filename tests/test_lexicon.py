"""`generators.lexicon`: WordNet is set up under the data home atomically — a reader never sees a
half-copied folder, processes that set it up at once end with one whole copy (the demo's trust and
robustness tracks run side by side), and a half copy an older run left is replaced."""

from __future__ import annotations

import threading

from generators.lexicon import _complete, _install


def _files(tmp_path, n=30):
    src = tmp_path / "src"
    src.mkdir()
    names = ["lexnames", "index.sense"] + [f"data-{k}" for k in range(n)]
    for name in names:
        (src / name).write_bytes(name.encode() * 2000)
    return [src / name for name in names]


def test_concurrent_set_ups_end_with_one_whole_readable_copy(tmp_path):
    files = _files(tmp_path)
    corpus = tmp_path / "nltk_data" / "corpora" / "wordnet"
    seen_half = []

    def watch():  # a reader polling while the copies run: the folder is whole whenever it exists
        for _ in range(2000):
            if corpus.exists() and sorted(p.name for p in corpus.iterdir()) != sorted(f.name for f in files):
                seen_half.append(sorted(p.name for p in corpus.iterdir()))

    errors = []

    def install():
        try:
            _install(corpus, files)
        except Exception as exc:  # noqa: BLE001 - collected and asserted below
            errors.append(exc)

    threads = [threading.Thread(target=install) for _ in range(4)] + [threading.Thread(target=watch)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and not seen_half
    assert _complete(corpus) and sorted(p.name for p in corpus.iterdir()) == sorted(f.name for f in files)
    assert all((corpus / f.name).read_bytes() == f.read_bytes() for f in files)
    assert corpus.stat().st_mode & 0o755 == 0o755  # readable by the trust track's unprivileged worker
    assert [p.name for p in corpus.parent.iterdir()] == ["wordnet"]  # no temporary folder left behind


def test_a_half_copy_left_by_an_older_run_is_replaced(tmp_path):
    files = _files(tmp_path, n=3)
    corpus = tmp_path / "corpora" / "wordnet"
    corpus.mkdir(parents=True)
    (corpus / "data-0").write_bytes(b"truncat")  # killed mid-copy: no lexnames, a short file
    assert not _complete(corpus)
    _install(corpus, files)
    assert _complete(corpus) and (corpus / "data-0").read_bytes() == files[2].read_bytes()
    assert [p.name for p in corpus.parent.iterdir()] == ["wordnet"]
