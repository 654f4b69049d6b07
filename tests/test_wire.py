"""The harness ↔ worker message format (`benchmark.isolation.wire`): what crosses, with how few copies, and
what a hostile peer cannot make the reader do (issue #47: served models' `predict` traffic).

* Round trip of every allowed dtype, nested in JSON values; arrays come back equal, writable, aligned.
* The reader's arrays are views of the one buffer a message was received into (no copy after the
  kernel's); decoded from read-only bytes they are copies (still writable).
* The header is padded so that the first array starts 64-byte aligned.
* A length prefix alone never makes the reader allocate more than `FIRST_READ`; a message larger than
  that still arrives whole (the buffer grows as its bytes do).
* Malformed frames: a bad dtype, a shape that does not fit its bytes, stray bytes — `WireError`.
"""

from __future__ import annotations

import socket
import struct
import threading
import tracemalloc

import numpy as np
import pytest

from benchmark.isolation import wire


@pytest.fixture()
def pair():
    a, b = socket.socketpair()
    ca, cb = wire.Channel(a), wire.Channel(b)
    yield ca, cb
    ca.close()
    cb.close()


def _send_in_thread(channel: wire.Channel, obj) -> threading.Thread:
    t = threading.Thread(target=channel.send, args=(obj,), daemon=True)
    t.start()
    return t


def test_every_dtype_round_trips_writable_and_aligned(pair):
    sender, reader = pair
    arrays = {name: (np.arange(7) % 2).astype(name).reshape(7, 1) for name in sorted(wire.DTYPES)}
    msg = {"type": "batch", "arrays": arrays, "nested": [1, 2.5, None, "x", (3, np.float32(1.5))],
           "empty": np.zeros((0, 3), dtype=np.float32), "inf": float("inf")}
    t = _send_in_thread(sender, msg)
    got = reader.recv()
    t.join()
    for name, arr in arrays.items():
        out = got["arrays"][name]
        assert out.dtype == arr.dtype and np.array_equal(out, arr)
        assert out.flags.writeable and out.flags.aligned
    assert got["nested"] == [1, 2.5, None, "x", [3, 1.5]] and got["inf"] == float("inf")
    assert got["empty"].shape == (0, 3)


def test_a_large_array_is_a_view_of_the_received_buffer_and_starts_aligned(pair):
    sender, reader = pair
    images = np.random.default_rng(0).random((64, 128, 128)).astype(np.float32)  # what exhaustive LIME sends
    frame = wire.encode({"type": "predict", "inputs": images})
    (hlen,) = struct.unpack_from("<I", frame, 8)
    assert (4 + hlen) % wire.ALIGN == 0  # the first array's offset in the payload
    t = _send_in_thread(sender, {"type": "predict", "inputs": images})
    got = reader.recv()["inputs"]
    t.join()
    assert np.array_equal(got, images) and got.flags.writeable and got.flags.aligned
    assert not got.flags.owndata  # a view of the message buffer, not a copy of its own
    copied = wire.decode(frame[8:])["inputs"]  # from read-only bytes: a copy, writable
    assert copied.flags.writeable and np.array_equal(copied, images)
    copied[0, 0, 0] = -1.0


def test_a_length_prefix_alone_does_not_make_the_reader_allocate_it(pair):
    sender, reader = pair
    tracemalloc.start()
    try:
        sender.sock.sendall(struct.pack("<Q", wire.MAX_BYTES) + b"0123456789")
        sender.sock.shutdown(socket.SHUT_WR)
        with pytest.raises(wire.PeerClosed):
            reader.recv()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 2 * wire.FIRST_READ < wire.MAX_BYTES


def test_a_message_larger_than_the_first_read_arrives_whole(pair, monkeypatch):
    monkeypatch.setattr(wire, "FIRST_READ", 4096)
    sender, reader = pair
    x = np.arange(100_000, dtype=np.float64)
    t = _send_in_thread(sender, {"x": x, "y": np.arange(5, dtype=np.int8)})
    got = reader.recv()
    t.join()
    assert np.array_equal(got["x"], x) and np.array_equal(got["y"], np.arange(5))


def _frame(header: dict, body: bytes) -> bytes:
    hb = __import__("json").dumps(header).encode()
    return struct.pack("<I", len(hb)) + hb + body


@pytest.mark.parametrize("header,body,why", [
    ({"body": {"__nd__": 0}, "__arrays__": [["object", [1], 8]]}, b"\0" * 8, "not allowed"),
    ({"body": {"__nd__": 0}, "__arrays__": [["float32", [3], 8]]}, b"\0" * 8, "does not match"),
    ({"body": {"__nd__": 0}, "__arrays__": [["float32", [2], 8]]}, b"\0" * 9, "stray bytes"),
    ({"body": {"__nd__": 1}, "__arrays__": [["float32", [2], 8]]}, b"\0" * 8, "out of range"),
])
def test_a_malformed_frame_is_refused_with_the_reason(header, body, why):
    with pytest.raises(wire.WireError, match=why):
        wire.decode(bytearray(_frame(header, body)))


def test_a_deadline_passes_when_nothing_arrives(pair):
    import time

    with pytest.raises(wire.Deadline):
        pair[1].recv(time.monotonic() + 0.05)
