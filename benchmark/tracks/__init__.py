"""Tracks: how a resource family is evaluated (instances, models under test, metrics).

The built-in tracks are the modules `load_builtin` imports; each registers itself (`register_track`)
when imported, and `TRACKS` runs `load_builtin` on its first lookup (`get_track`, `TRACKS.names()`,
...), so `base` never imports a concrete track."""

from benchmark.tracks.base import TRACKS, Instances, Track, TrackMetadata, get_track, register_track


def load_builtin() -> None:
    """Import the built-in track modules (each registers its tracks); `TRACKS` runs it on its first lookup."""
    import benchmark.tracks.aixi  # noqa: F401  (registers itself)
    import benchmark.tracks.idc  # noqa: F401
    import benchmark.tracks.rcnn  # noqa: F401
    import benchmark.tracks.trust  # noqa: F401
    import benchmark.tracks.robustness  # noqa: F401


TRACKS.on_first_lookup(load_builtin)

__all__ = ["TRACKS", "Instances", "Track", "TrackMetadata", "get_track", "load_builtin", "register_track"]
