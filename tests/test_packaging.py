"""The installed environment resolves our top-level packages from anywhere, not same-named strays."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_top_level_packages_are_ours_outside_the_repo(tmp_path):
    # lime 0.2.0.1 ships a stray top-level `benchmark` package that shadows ours; `make` removes it
    code = "import benchmark, generators, leaderboard, submissions as s; " \
           "print('\\n'.join(m.__file__ for m in (benchmark, generators, leaderboard, s)))"
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    for line in out.stdout.split():
        assert Path(line).resolve().parent.parent == ROOT, line
