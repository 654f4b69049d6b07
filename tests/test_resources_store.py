"""`benchmark.resources.store` listing: every local config is listed under its family's name."""

from __future__ import annotations

import json

from benchmark.resources.store import list_local_resources


def test_a_provenance_without_its_family_is_listed_under_the_folder_name(tmp_path, monkeypatch):
    monkeypatch.setenv("XAIBENCH_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XAIBENCH_DATA_MIRROR", str(tmp_path / "no-mirror"))
    folder = tmp_path / "home" / "resources" / "toy"
    folder.mkdir(parents=True)
    split = {"file": "c/train-00000-of-00001.parquet", "rows": 1, "bytes": 1}
    (folder / "provenance.json").write_text(json.dumps({"configs": {"c": {"revision": "0" * 64,
                                                                          "splits": {"train": split}}}}))
    assert [(r.family, r.name) for r in list_local_resources()] == [("toy", "toy/c")]
