"""Tracks: how a resource family is evaluated (instances, models under test, metrics)."""

from benchmark.tracks.base import TRACKS, Instances, Track, get_track

__all__ = ["TRACKS", "Instances", "Track", "get_track"]
