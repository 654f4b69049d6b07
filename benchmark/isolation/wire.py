"""The message format between the harness and a submission's worker process (DESIGN §8).

The worker runs untrusted code, so nothing it sends is ever unpickled or evaluated: a message is a
JSON header plus raw array buffers, decoded with a fixed list of dtypes and checked sizes.

Frame on the wire::

    u64 little-endian  total length L of what follows (≤ the reader's `max_bytes`)
    u32 little-endian  header length H
    H bytes            UTF-8 JSON object; arrays inside it are replaced by {"__nd__": k}; the writer
                       pads it with spaces so that the first array starts 64-byte aligned
    L - 4 - H bytes    the arrays' bytes, back to back, in the order of `header["__arrays__"]`,
                       each entry [dtype, shape, nbytes]

`encode(obj)` accepts JSON values, tuples (sent as lists), NumPy arrays and scalars;
`decode(payload)` returns the same structure with writable NumPy arrays of their own. Anything else
(an object that does not serialise, an unknown dtype, a shape that does not match its byte count,
a header that is not a JSON object) raises `WireError` with the reason, so a garbled or hostile
message becomes a recorded failure, never a crash of the harness.

Large arrays cross with two copies, the kernel's: the writer hands the socket each array's own
buffer after the header (`encode_parts`, no joined copy), the reader receives into one buffer per
message (`recv_into`) and the decoded arrays are views of it (`decode` copies only from a read-only or
misaligned buffer). A served model's `predict` of 64 images of 128×128 (4 MiB) took five copies before.
"""

from __future__ import annotations

import json
import math
import os
import select
import socket
import struct
import time
from typing import Any

import numpy as np

DTYPES = frozenset({"float16", "float32", "float64", "int8", "int16", "int32", "int64",
                    "uint8", "uint16", "uint32", "bool"})
MAX_BYTES = 1 << 30  # default cap on one message (1 GiB): a batch of perturbed images fits easily
MAX_DEPTH = 64
ALIGN = 64  # the first array's offset in the payload is a multiple of this
FIRST_READ = 16 << 20  # a message's buffer starts at most this large and doubles as its bytes arrive


class WireError(Exception):
    """A message that cannot be encoded or decoded (the reason says why)."""


class PeerClosed(WireError):
    """The other side closed the channel (exited, crashed or was killed)."""


class Deadline(WireError):
    """No complete message before the deadline."""


def _pack(obj: Any, arrays: list[np.ndarray], depth: int = 0) -> Any:
    if depth > MAX_DEPTH:
        raise WireError("object nested too deeply to send")
    if obj is None or isinstance(obj, (bool, str)):
        return obj
    if isinstance(obj, (int, np.integer)) and not isinstance(obj, np.bool_):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        v = float(obj)
        return v if math.isfinite(v) else {"__float__": repr(v)}
    if isinstance(obj, np.bool_):
        return bool(obj)
    if isinstance(obj, np.ndarray):
        if obj.dtype.name not in DTYPES:
            raise WireError(f"cannot send an array of dtype {obj.dtype} (allowed: {', '.join(sorted(DTYPES))})")
        arrays.append(np.ascontiguousarray(obj))
        return {"__nd__": len(arrays) - 1}
    if isinstance(obj, (list, tuple)):
        return [_pack(v, arrays, depth + 1) for v in obj]
    if isinstance(obj, dict):
        out = {}
        for k, v in obj.items():
            if not isinstance(k, str) or k.startswith("__"):
                raise WireError(f"cannot send a dict key {k!r} (keys are strings not starting with '__')")
            out[k] = _pack(v, arrays, depth + 1)
        return out
    raise WireError(f"cannot send an object of type {type(obj).__name__}")


def encode_parts(obj: Any) -> list[bytes | memoryview]:
    """One frame for `obj` as buffers to send in order: the length prefix and header, then each array's
    own buffer (no copy)."""
    arrays: list[np.ndarray] = []
    body = _pack(obj, arrays)
    header = {"body": body, "__arrays__": [[a.dtype.name, list(a.shape), a.nbytes] for a in arrays]}
    hb = json.dumps(header, separators=(",", ":"), allow_nan=False).encode()
    hb += b" " * (-(4 + len(hb)) % ALIGN)  # JSON allows trailing spaces: the arrays start aligned
    total = 4 + len(hb) + sum(a.nbytes for a in arrays)
    return [struct.pack("<QI", total, len(hb)) + hb, *(a.data.cast("B") for a in arrays if a.nbytes)]


def encode(obj: Any) -> bytes:
    """One frame (length prefix included) for `obj`, as one bytes object."""
    return b"".join(encode_parts(obj))


def _unpack(obj: Any, arrays: list[np.ndarray], depth: int = 0) -> Any:
    if depth > MAX_DEPTH:
        raise WireError("message nested too deeply")
    if isinstance(obj, list):
        return [_unpack(v, arrays, depth + 1) for v in obj]
    if isinstance(obj, dict):
        if set(obj) == {"__nd__"}:
            k = obj["__nd__"]
            if not isinstance(k, int) or isinstance(k, bool) or not 0 <= k < len(arrays):
                raise WireError(f"array reference {k!r} out of range")
            return arrays[k]
        if set(obj) == {"__float__"}:
            if obj["__float__"] not in ("nan", "inf", "-inf"):
                raise WireError(f"bad non-finite float {obj['__float__']!r}")
            return float(obj["__float__"])
        return {k: _unpack(v, arrays, depth + 1) for k, v in obj.items()}
    return obj


def decode(payload: bytes | bytearray | memoryview) -> Any:
    """The object of one frame's payload (everything after the u64 length). Its arrays are views of
    `payload` when that is a writable buffer and they fall aligned (the caller gives each message a buffer
    of its own, as `Channel.recv` does), else copies: writable either way."""
    view = memoryview(payload)
    if len(view) < 4:
        raise WireError("message shorter than its header length field")
    (hlen,) = struct.unpack_from("<I", view, 0)
    if 4 + hlen > len(view):
        raise WireError(f"header length {hlen} exceeds the message ({len(view)} bytes)")
    try:
        header = json.loads(bytes(view[4 : 4 + hlen]).decode())
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise WireError(f"header is not JSON ({type(exc).__name__})") from None
    if not isinstance(header, dict) or not isinstance(header.get("__arrays__"), list) or "body" not in header:
        raise WireError("header is not a message object")
    arrays, offset = [], 4 + hlen
    for spec in header["__arrays__"]:
        if not (isinstance(spec, list) and len(spec) == 3):
            raise WireError("bad array descriptor")
        dtype, shape, nbytes = spec
        if dtype not in DTYPES:
            raise WireError(f"array dtype {dtype!r} is not allowed")
        if not (isinstance(shape, list) and len(shape) <= 32
                and all(isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in shape)):
            raise WireError(f"bad array shape {shape!r}")
        itemsize = np.dtype(dtype).itemsize
        if not isinstance(nbytes, int) or nbytes != math.prod(shape) * itemsize or offset + nbytes > len(view):
            raise WireError(f"array of shape {shape} and dtype {dtype} does not match its {nbytes!r} bytes")
        arr = np.frombuffer(view[offset : offset + nbytes], dtype=dtype).reshape(shape)
        arrays.append(arr if arr.flags.writeable and arr.flags.aligned else arr.copy())
        offset += nbytes
    if offset != len(view):
        raise WireError(f"{len(view) - offset} stray bytes after the arrays")
    return _unpack(header["body"], arrays)


class Channel:
    """Framed messages over a connected socket; reads honour a deadline (`time.monotonic()` value)."""

    def __init__(self, sock: socket.socket, max_bytes: int = MAX_BYTES) -> None:
        self.sock = sock
        self.max_bytes = max_bytes
        self.sock.setblocking(True)

    def send(self, obj: Any) -> None:
        """Send `obj` as one frame; WireError when it is over `max_bytes`, PeerClosed when the other end
        is gone."""
        parts = encode_parts(obj)
        size = sum(len(p) if isinstance(p, bytes) else p.nbytes for p in parts) - 8
        if size > self.max_bytes:
            raise WireError(f"message of {size:,} bytes exceeds the {self.max_bytes:,}-byte limit")
        try:
            for part in parts:
                self.sock.sendall(part)
        except (BrokenPipeError, ConnectionResetError) as exc:
            raise PeerClosed(f"channel closed while sending ({exc.strerror or exc})") from None

    def _read(self, n: int, deadline: float | None) -> bytearray:
        """Exactly n bytes, received into one buffer; the buffer grows (doubling from `FIRST_READ`) only as
        bytes arrive, so a length prefix alone never makes the reader hold more than that."""
        buf = bytearray(min(n, FIRST_READ))
        got = 0
        while got < n:
            if got == len(buf):
                buf.extend(bytes(min(n, 2 * len(buf)) - len(buf)))
            if deadline is not None:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise Deadline("deadline passed")
                ready, _, _ = select.select([self.sock], [], [], left)
                if not ready:
                    raise Deadline("deadline passed")
            try:
                k = self.sock.recv_into(memoryview(buf)[got:], len(buf) - got)
            except ConnectionResetError:
                k = 0
            if not k:
                raise PeerClosed("channel closed")
            got += k
        return buf

    def recv(self, deadline: float | None = None) -> Any:
        """The next message; Deadline when `deadline` passes first, PeerClosed at the end of the stream,
        WireError for a frame over `max_bytes` or malformed."""
        (length,) = struct.unpack("<Q", bytes(self._read(8, deadline)))
        if length > self.max_bytes:
            raise WireError(f"message of {length:,} bytes exceeds the {self.max_bytes:,}-byte limit")
        return decode(self._read(length, deadline))

    def close(self) -> None:
        """Close the socket (errors ignored)."""
        try:
            self.sock.close()
        except OSError:
            pass


def channel_from_fd(fd: int, max_bytes: int = MAX_BYTES) -> Channel:
    """The worker's end: a socket inherited as file descriptor `fd`."""
    sock = socket.socket(fileno=fd)
    os.set_inheritable(sock.fileno(), False)
    return Channel(sock, max_bytes)
