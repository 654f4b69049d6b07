"""Shared fixtures: a session-wide XAIBENCH_HOME holding tiny real AIXI resources and a CNN."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

import pytest

os.environ.setdefault("XAIBENCH_PROGRESS", "0")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")

# Under pytest-xdist (`make test` runs `-n 2`) every worker is one process per core: its torch, OpenMP and
# BLAS run on one thread (read at their first import, which comes after this file), and so do the
# sandboxed workers it starts (they inherit these variables). Two workers of two threads each on two cores
# only contend. A test that needs another count sets it (torch.set_num_threads) and restores it.
if os.environ.get("PYTEST_XDIST_WORKER"):
    for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ.setdefault(_var, "1")


def pytest_collection_modifyitems(config, items) -> None:
    """Two rules for `@pytest.mark.slow` (a test that takes more than 5 s on the 2-core CI machine; `make test`
    and CI run it, `pytest -m "not slow"` is the fast tier): it says why (`reason=`), and the modules holding
    one run first, so that under pytest-xdist (`--dist loadscope`, one module per process at a time) the long
    modules start at once and the short ones fill in at the end."""
    silent = [item.nodeid for item in items
              if (mark := item.get_closest_marker("slow")) is not None and not mark.kwargs.get("reason")]
    if silent:
        raise pytest.UsageError(f"@pytest.mark.slow needs reason=\"what costs the time\": {', '.join(silent[:5])}")
    slow = {item.path for item in items if item.get_closest_marker("slow") is not None}
    items.sort(key=lambda item: item.path not in slow)  # stable: each module keeps its order


@pytest.fixture(scope="session")
def aixi_home(tmp_path_factory) -> Path:
    """Tiny AIXI-Shape and AIXI-Color resources (all three functions) with a CNN for shape-ssin."""
    home = tmp_path_factory.mktemp("xaibench-home")
    old = os.environ.get("XAIBENCH_HOME")
    os.environ["XAIBENCH_HOME"] = str(home)
    from generators.aixi.build import build_aixi
    from generators.aixi.train import TrainConfig, train_aixi

    build_aixi("shape", 96, 24, workers=1)
    build_aixi("color", 48, 24, workers=1)
    train_aixi("aixi/shape-ssin", TrainConfig(epochs=1, batch_size=32))
    yield home
    if old is None:
        os.environ.pop("XAIBENCH_HOME", None)
    else:
        os.environ["XAIBENCH_HOME"] = old


def mirror_dir_or_skip(name: str, *files: str) -> Path:
    """The data mirror's folder `name` (e.g. rt_polarity), or skip the test, saying how to run it, when the
    folder or one of `files` inside it is absent."""
    from benchmark.resources.store import mirror_root

    root = mirror_root()
    if root is None or not (Path(root) / name).is_dir() or not all((Path(root) / name / f).is_file() for f in files):
        pytest.skip(f"data mirror folder {name}/ not found (mirror root: {root}); set XAIBENCH_DATA_MIRROR to the "
                    "shared data folder to run this test")
    return Path(root) / name


@pytest.fixture(scope="session")
def idc_home(aixi_home) -> Path:
    """Tiny IDC resources (idc/mr-wga, -milp, -hybrid) built from 240 real MR documents per split with a
    one-epoch Kim CNN and HAN (|V| = 400, ≥ 2 words of V per MILP document), in the session home. Skips when the MR
    mirror is absent."""
    mirror_dir_or_skip("rt_polarity", "rt-polarity.pos")
    from generators.idc.build import IdcConfig, build_idc

    os.environ["XAIBENCH_HOME"] = str(aixi_home)
    build_idc(IdcConfig(limit=240, epochs=1, vocab_size=400, min_words=2, milp_threads=1))
    return aixi_home


@pytest.fixture()
def home(aixi_home, monkeypatch, tmp_path) -> Path:
    """The session resources, with a fresh cache/results area per test."""
    monkeypatch.setenv("XAIBENCH_HOME", str(aixi_home))
    return aixi_home


def write_submission(folder: Path, name: str, body: str, params: str = "", caps: str = "",
                     modalities: str = '["image"]') -> Path:
    """A submission folder with an `explainer.py` whose Explainer.explain has `body`."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "submission.toml").write_text(textwrap.dedent(f"""\
        [submission]
        name = "{name}"
        version = "0.0.1"
        kind = "explainer"
        entry = "explainer:Explainer"

        [capabilities]
        modalities = {modalities}
        {caps}

        [parameters]
        {params}
        """))
    (folder / "explainer.py").write_text(
        "import numpy as np\nimport time\n\n\nclass Explainer:\n    def __init__(self, **kw):\n"
        "        self.kw = kw\n\n    def explain(self, model, batch):\n"
        + textwrap.indent(textwrap.dedent(body), " " * 8)
    )
    return folder


@pytest.fixture()
def one_torch_thread():
    """torch on one thread for the test (tiny recurrent steps: OpenMP threads only contend — 10× slower
    on a busy 2-core machine); the previous setting is restored afterwards."""
    import torch

    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


# --------------------------------------------------------------------------------------------------
# the static site (tests/test_site.py, tests/test_site_browser.py): real results and bad input


@pytest.fixture(scope="session")
def site_results(aixi_home, tmp_path_factory):
    """Real results: occlusion, random, uniform on aixi/shape-ssin (cnn and function, 6 images; saliency
    and input×gradient on the cnn), written
    to a fresh results folder, plus hand-made bad inputs. Returns (results_dir, details)."""
    os.environ["XAIBENCH_HOME"] = str(aixi_home)
    import copy
    import json

    from benchmark.store.results import MetricSummary
    from benchmark.runner import evaluate

    results = tmp_path_factory.mktemp("site-results")
    made = {}
    for sub in ("occlusion", "random", "uniform", "saliency", "input-x-gradient"):
        for model in ("cnn", "function"):
            if sub in ("saliency", "input-x-gradient") and model == "function":
                continue  # gradient methods need the white-box CNN
            made[(sub, model)] = evaluate(sub, "aixi", "aixi/shape-ssin", model=model, limit=6, batch_size=4,
                                          results_dir=results, sandbox="none", timeout_s=0)
    # a result on another resource revision (signed, so only the revision check can drop it)
    other = copy.deepcopy(made[("occlusion", "cnn")])
    other.resource["revision"] = "0" * 16
    other.submission["name"] = "occlusion-old"
    other.created = "2000-01-01T00:00:00+00:00"
    other.save(results / "aixi" / "old-revision.json")
    # a result that fails verification: changed after it was written
    tampered = results / "aixi" / "tampered.json"
    t = copy.deepcopy(made[("random", "cnn")])
    t.submission["name"] = "tampered"
    t.save(tampered)
    d = json.loads(tampered.read_text())
    d["metrics"]["kl"]["mean"] = 0.0
    tampered.write_text(json.dumps(d))
    # a board with one submission whose metric is undefined for every instance, and whose cache is gone
    lone = copy.deepcopy(made[("occlusion", "function")])
    lone.resource["name"] = "aixi/color-ssin"
    lone.metrics["pcc"] = MetricSummary(None, None, None, 0, lone.n_instances, "higher", "PCC")
    lone.extra["cache"] = "cache/does-not-exist.sqlite"
    lone.save(results / "aixi" / "lone.json")
    # a ranked result whose cache is gone: its picture cannot be drawn
    gone = copy.deepcopy(made[("uniform", "function")])
    gone.submission["name"] = "no-cache"
    gone.extra["cache"] = "cache/does-not-exist.sqlite"
    gone.save(results / "aixi" / "no-cache.json")
    # a file that is not a result
    (results / "broken.json").write_text("[1, 2")
    return results, made


@pytest.fixture(scope="session")
def site(site_results, tmp_path_factory):
    from leaderboard.site import build_site

    import shutil

    from benchmark.runner import evaluate

    given, _ = site_results
    # the site's boards with their built-in floors (a board without them is unranked, leaderboard.floors, #58):
    # the data priors foreground and centre-prior beside the results above, in a copy of their folder
    results = tmp_path_factory.mktemp("site-results-floors") / "results"
    shutil.copytree(given, results)
    for sub in ("foreground", "centre-prior"):
        for model in ("cnn", "function"):
            evaluate(sub, "aixi", "aixi/shape-ssin", model=model, limit=6, batch_size=4, results_dir=results,
                     sandbox="none", timeout_s=0)
    out = tmp_path_factory.mktemp("site") / "site"
    report = build_site(out, results, sample=2)
    return out, report


