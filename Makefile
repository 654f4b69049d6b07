# Two entry points: `make demo` (set up + run the main job) and `make test` (set up + run the tests).
PYTHON ?= python3.11
VENV   ?= .venv
PY      = $(VENV)/bin/python
PIP     = $(VENV)/bin/pip
STAMP   = $(VENV)/.xaibench-installed
SYSTEM_PACKAGES = bubblewrap wordnet-base wordnet-sense-index
BROWSER_PACKAGES = chromium chromium-driver

.PHONY: setup demo reference test lint perf site screenshots clean

$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip
	# The CPU build of torch that is on disk; installed first so nothing pulls CUDA wheels.
	$(PIP) install --quiet torch==2.13.0
	$(PIP) install --quiet -e '.[test,ray]'
	# MetaQuantus (benchmark/gtfree/meta.py) without its dependencies: it requires torchvision and timm only for
	# its ImageNet experiment configs, and PyPI's torchvision does not load beside our CPU torch (nor would
	# pip keep the CPU build); its real needs (quantus, captum, pandas, cachetools) come with '.'.
	$(PIP) install --quiet --no-deps metaquantus==0.0.5
	# lime 0.2.0.1 installs its own benchmark scripts as a top-level package named `benchmark`,
	# which would shadow ours; remove that stray package (recognised by its files) only.
	@for d in $(VENV)/lib/python*/site-packages/benchmark; do \
	  if [ -f "$$d/text_perf.py" ] && [ ! -f "$$d/runner.py" ]; then rm -rf "$$d"; echo "removed lime's stray $$d"; fi; \
	done
	# metaquantus 0.0.5 installs its own tests as a top-level package named `tests`, which would shadow ours
	# (`from tests.conftest import ...`); remove that stray package (recognised by its files) only.
	@for d in $(VENV)/lib/python*/site-packages/tests; do \
	  if [ -f "$$d/test_meta_evaluation.py" ] && [ ! -f "$$d/test_metric_board.py" ]; then rm -rf "$$d"; \
	    echo "removed metaquantus's stray $$d"; fi; \
	done
	# System packages, installed where this machine allows (root + apt): bubblewrap, the sandbox
	# submissions run in (without it they run in a plain ground-truth-free worker, and the harness says
	# so once); WordNet 3.0 for the trust track (data/wordnet/SOURCE.md; its tests skip without it).
	@{ command -v bwrap >/dev/null 2>&1 && [ -f /usr/share/wordnet/data.noun ]; } || \
	  { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 && \
	    { apt-get install -y -qq $(SYSTEM_PACKAGES) >/dev/null 2>&1 || \
	      { apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq $(SYSTEM_PACKAGES) >/dev/null 2>&1; }; }; } || \
	  echo "note: could not install $(SYSTEM_PACKAGES); no sandbox for submissions, no WordNet for the trust track"
	# Debian's Chromium and its driver (~120 MB) for the site's browser tests and `make screenshots`
	# (those tests skip, saying why, without them). Separate, so a failure here costs nothing above.
	@{ command -v chromium >/dev/null 2>&1 && command -v chromedriver >/dev/null 2>&1; } || \
	  { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 && \
	    { apt-get install -y -qq $(BROWSER_PACKAGES) >/dev/null 2>&1 || \
	      { apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq $(BROWSER_PACKAGES) >/dev/null 2>&1; }; }; } || \
	  echo "note: could not install $(BROWSER_PACKAGES); the site's browser tests will skip"
	@touch $(STAMP)

setup: $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/xaibench demo

# The reference leaderboard shipped with the package (docs/reference.md): every track at its default scale (each
# board within REFERENCE_BUDGET CPU-minutes, the scale rule), every built-in verified in a results repository with a
# round of hidden copies, revealed and audited, exported to leaderboard/reference/shipped/ and docs/reference.md.
# Hours; run it again to resume. `xaibench reference build --plan` says what it will build and what it will cost.
REFERENCE_BUDGET ?= 12
reference: $(STAMP)
	$(VENV)/bin/xaibench reference build --board-budget $(REFERENCE_BUDGET) $(REFERENCE_ARGS)

# Style and docstrings (ruff), the import contracts of DESIGN §3 (import-linter) and types (mypy on
# benchmark/, leaderboard/, generators/ and submissions/), all configured in pyproject.toml; about a minute;
# run before the tests.
lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/lint-imports
	$(VENV)/bin/mypy

# The tests on TEST_WORKERS processes (pytest-xdist; the CI machine has two cores, and three processes keep them
# busy while tests wait on worker starts, subprocesses and fsync — docs/performance.md: 0.98× on an idle machine,
# 0.82× beside a niced build), one module per process at a
# time (`--dist loadscope`: a module's fixtures are built once) in the order tests/conftest.py gives (the modules
# holding a slow test first), each computing on one thread. TEST_WORKERS=0 runs them in this process;
# `make test TEST_WORKERS=auto` uses every core. `pytest -m "not slow"` is the fast tier (docs/performance.md).
# The 25 slowest tests are listed at the end (what to cut when the suite outgrows its 10 minutes).
TEST_WORKERS ?= 3

test: lint
	$(PY) -m pytest -q -n $(TEST_WORKERS) --dist loadscope --no-loadscope-reorder --durations=25

# The leaderboard as a static site, from the results in $$XAIBENCH_HOME (after `make demo`).
site: $(STAMP)
	$(VENV)/bin/xaibench site --out site

# The README's two leaderboard screenshots (1280 px, headless Chromium) of the current code and results.
screenshots: site
	$(PY) -m leaderboard.site.browser site docs

perf: $(STAMP)
	$(PY) -m pytest -q -s tests/perf -p no:cacheprovider -o addopts= -o python_files="bench_*.py"

clean:
	rm -rf $(VENV) .xaibench xaibench-data results site
