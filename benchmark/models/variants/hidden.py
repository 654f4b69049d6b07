"""Hidden copies of a model under test: models no submission has seen, drawn from a secret at evaluation time.

Why (issue #50, DESIGN §8): any rule over a *published* model can be met by a submission that recognises that
model (its outputs are public) and answers from a data prior there — a lexicon turned toward the predicted
class, a foreground mask, the published ground truth itself. Leaderboards protect test *data* with a private
split; here the *model* is kept private: every ground-truth board is also scored on copies of its model whose
reasoning is drawn from a secret after the code was submitted, with ground truth of the same kind recomputed on
the copy, and boards rank by those scores (`leaderboard`). References: Zhang et al. 2023 (AttributionLab: a
model whose weights make the ground truth hold exactly), Zhou et al. AAAI 2022 ("Do Feature Attribution Methods
Correctly Attribute Features?": features planted in the data the model must use), Adebayo et al. ICLR 2022.

**Secrets and rounds.** A `Round` is a secret (32 random bytes) and an id. Locally (`local_round`) the secret is
made on first use at `<data home>/keys/hidden.secret` (0600; the data home is never mounted in a submission's
sandbox), and the round id is derived from it (`local-<12 hex>`); a results repository's maintainer keeps one
secret per round and reveals it when the round ends (`leaderboard.repository`).

**Draws.** Draw k of a board is determined by the round's secret and the board's public resource:

    material_k = HMAC-SHA256(secret, "xaibench-hidden-draw-v1|<track>|<family>/<config>|<revision>|<k>")
    seed_k     = the first 8 bytes of material_k as an unsigned integer, top bit cleared (63 bits)
    commitment = sha256("xaibench-hidden-commit-v1|" + material_k as hex)

The model under test is not part of the key: the copies of one draw share their construction (IDC's Kim CNN and
HAN are trained on the same planted data). The commitment goes into Results and verification records; after the
secret is revealed anyone recomputes material_k, checks the commitment and rebuilds the copy.

**Constructions.** A track whose ground truth comes from its model says how to build a copy
(`Track.hidden_copy`): the AIXI function model draws its pattern weights here (`benchmark.tracks.aixi`); tracks
whose copies need training (IDC, RCNN) look up a `Construction` registered by their generator through the
`xaibench.hidden_copies` entry-point group (the harness never imports `generators`, DESIGN §3). A construction
writes a **derived resource**: a resource root (provenance.json, the evaluation split with the ground truth
recomputed on the copy, its own `model/` folders) that the track's own `instances` and `build_model` read like the
published one. It is built once per draw, atomically, under `<data home>/hidden/<round>/...` (`build_cached`), and
only its model folder is ever shown to a worker: the secret words, the ground truth and the statistics stay with
the harness.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import secrets as _secrets
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Protocol

import numpy as np

from benchmark.errors import XaibenchError
from benchmark.registry import Registry

__all__ = ["CONSTRUCTIONS", "Construction", "Draw", "NoHiddenCopy", "Round", "build_cached",
           "hidden_root", "local_round", "secret_path"]

_ROUND_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
_DRAW_TAG = b"xaibench-hidden-draw-v1"
_COMMIT_TAG = "xaibench-hidden-commit-v1"


class NoHiddenCopy(XaibenchError):
    """A board's model admits no hidden copy (no construction for it), or this draw cannot be built (e.g. its planted
    words occur in too few instances): the message says which and why; the board is still built."""


@dataclass(frozen=True)
class Round:
    """A secret and its round id (module docstring). `commitment` is sha256 of the secret: published when the round
    starts, checked against the secret when it is revealed."""

    id: str
    secret: bytes

    def __post_init__(self) -> None:
        if not isinstance(self.id, str) or not _ROUND_RE.match(self.id):
            raise XaibenchError(f"round id {self.id!r} must be 1–64 letters, digits, '.', '_' or '-'")
        if not isinstance(self.secret, bytes) or len(self.secret) < 16:
            raise XaibenchError("a round's secret must be at least 16 bytes")

    @property
    def commitment(self) -> str:
        """sha256 hex of the secret (what a round publishes before it is revealed)."""
        return hashlib.sha256(self.secret).hexdigest()

    def draw(self, track: str, resource: str, revision: str, index: int) -> "Draw":
        """Draw `index` (0-based) of the board of `track` on `resource` (`<family>/<config>`) at `revision`."""
        if isinstance(index, bool) or not isinstance(index, int) or index < 0:
            raise XaibenchError(f"a draw index is an integer ≥ 0, got {index!r}")
        key = f"{track}|{resource}|{revision}|{index}".encode()
        material = hmac.new(self.secret, _DRAW_TAG + b"|" + key, hashlib.sha256).hexdigest()
        return Draw(round=self.id, track=track, resource=resource, revision=str(revision), index=index,
                    material=material)

    def draws(self, track: str, resource: str, revision: str, n: int) -> list["Draw"]:
        """Draws 0 … n−1 of a board."""
        return [self.draw(track, resource, revision, k) for k in range(n)]


@dataclass(frozen=True)
class Draw:
    """One hidden copy's draw (module docstring). `material` is secret until the round is revealed: never write it
    where a submission or a published Result could read it; publish `commitment` instead."""

    round: str
    track: str
    resource: str
    revision: str
    index: int
    material: str  # HMAC hex (secret)

    @property
    def seed(self) -> int:
        """A 63-bit seed for the construction's random choices (numpy, torch)."""
        return int(self.material[:16], 16) & ((1 << 63) - 1)

    @property
    def commitment(self) -> str:
        """sha256 hex committing to the draw (published; checkable once the secret is revealed)."""
        return hashlib.sha256(f"{_COMMIT_TAG}|{self.material}".encode()).hexdigest()

    def rng(self, purpose: str) -> np.random.Generator:
        """A numpy generator for one purpose of the construction (independent streams per purpose)."""
        sub = hashlib.sha256(f"{self.material}|{purpose}".encode()).digest()
        return np.random.default_rng(int.from_bytes(sub[:16], "little"))

    def torch_seed(self, purpose: str) -> int:
        """A seed for `torch.manual_seed` for one purpose (63 bits)."""
        sub = hashlib.sha256(f"{self.material}|torch|{purpose}".encode()).digest()
        return int.from_bytes(sub[:8], "little") & ((1 << 63) - 1)

    def public(self) -> dict[str, Any]:
        """What a Result or record may carry of the draw: round, index and commitment (never the material)."""
        return {"round": self.round, "draw": self.index, "commitment": self.commitment}


def secret_path() -> Path:
    """The per-home secret's file (`<data home>/keys/hidden.secret`)."""
    from benchmark.resources import data_home

    return data_home() / "keys" / "hidden.secret"


def local_round() -> Round:
    """This home's round: its secret read from `secret_path()`, made on first use (32 random bytes, hex, mode 0600,
    written atomically: two processes starting at once agree on one). A secret file that does not hold 64 hex digits
    is refused in one line (a lost or changed secret would silently change every hidden copy)."""
    path = secret_path()
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        os.chmod(path.parent, 0o700)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".hidden-", suffix=".tmp")
        try:
            with os.fdopen(fd, "w") as fh:
                fh.write(_secrets.token_hex(32) + "\n")
            os.chmod(tmp, 0o600)
            try:
                os.link(tmp, path)  # never replaces a secret another process made first
            except FileExistsError:
                pass
        finally:
            os.unlink(tmp)
    text = path.read_text().strip()
    if not re.fullmatch(r"[0-9a-f]{64}", text):
        raise XaibenchError(f"the hidden-copy secret {path} is damaged (not 64 hex digits); restore it from a backup, "
                            "or delete it to start a new round (hidden scores of the old round stop matching)")
    secret = bytes.fromhex(text)
    return Round(f"local-{hashlib.sha256(b'xaibench-round-v1' + secret).hexdigest()[:12]}", secret)


class Construction(Protocol):
    """How a track's hidden copies are built (registered in `CONSTRUCTIONS` under the track's name).

    `build(resource, draw, out)` writes a derived resource at `out` (module docstring): `write_config` of the
    published resource's family and config name into the root `out`, with the split the track evaluates holding the
    ground truth recomputed on the copy and `model/<folder>` holding each model under test the published resource
    holds (the same folder names, so `Track.build_model` finds them), trained or edited from `draw` alone; its params
    record `hidden` = {"construction", "version", "draw": draw.public()} and its stats the construction's counts. It
    returns those statistics (no secret in them: counts and rates only). It raises `NoHiddenCopy` (one line: which
    draw, why) when the draw cannot give a copy whose ground truth holds."""

    track: str
    version: str  # part of the cache key: bump it when the construction changes what it builds
    description: str  # one line for boards and docs: what the copy relies on, how its ground truth holds

    def build(self, resource: Any, draw: Draw, out: Path) -> dict[str, Any]:
        """Write the derived resource of `draw` at `out`; return its statistics."""
        ...


CONSTRUCTIONS: Registry[Construction] = Registry("hidden-copy construction", group="xaibench.hidden_copies")


def hidden_root() -> Path:
    """Where hidden copies are cached: `<data home>/hidden` (inside the data home: never mounted for a worker)."""
    from benchmark.resources import data_home

    return data_home() / "hidden"


def copy_folder(draw: Draw, resource: Any, version: str) -> Path:
    """The cache folder of one draw's derived resource:
    `<hidden root>/<round>/<family>__<config>@<revision[:12]>/d<k>-<commitment[:12]>-<version>`."""
    name = f"{resource.family}__{resource.config}@{str(resource.revision)[:12]}"
    return hidden_root() / draw.round / name / f"d{draw.index}-{draw.commitment[:12]}-{version}"


def build_cached(construction: Construction, resource: Any, draw: Draw,
                 on_build: Callable[[str], None] | None = None) -> Path:
    """The derived resource of `draw` (built once and cached, `copy_folder`): built into a temporary folder beside
    its place and renamed there only when complete, so an interrupted build leaves nothing half-made; a build that
    fails raises (NoHiddenCopy with the reason) and caches nothing. `on_build(message)` is told when a build starts."""
    dest = copy_folder(draw, resource, construction.version)
    if (dest / "provenance.json").is_file():
        return dest
    dest.parent.mkdir(parents=True, exist_ok=True)
    os.chmod(hidden_root(), 0o700)
    if on_build is not None:
        on_build(f"building hidden copy {draw.index} of {resource.name} ({construction.description})")
    tmp = Path(tempfile.mkdtemp(dir=dest.parent, prefix=f".{dest.name}-"))
    try:
        stats = construction.build(resource, draw, tmp)
        if not (tmp / "provenance.json").is_file():
            raise XaibenchError(f"the {construction.track} hidden-copy construction wrote no resource "
                                f"(provenance.json) for draw {draw.index}")
        (tmp / "hidden.json").write_text(json.dumps({"draw": draw.public(), "stats": stats,
                                                    "construction": construction.version}, sort_keys=True))
        try:
            os.rename(tmp, dest)
        except OSError:  # another process finished the same draw first
            if not (dest / "provenance.json").is_file():
                raise
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return dest


def read_stats(folder: Path) -> dict[str, Any]:
    """The statistics a cached derived resource was built with (`build_cached`'s `hidden.json`)."""
    try:
        data = json.loads((Path(folder) / "hidden.json").read_text())
    except (OSError, ValueError):
        return {}
    return data.get("stats", {}) if isinstance(data, dict) else {}
