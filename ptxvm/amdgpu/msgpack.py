"""A MessagePack decoder, just enough for the AMDGPU metadata note (no dependency).

Decodes every MessagePack type except extension types (the AMDGPU note has none):
nil, booleans, integers, floats, strings, binary, arrays and maps.  Malformed input
raises ``MsgpackError``.
"""

from __future__ import annotations

import struct
from typing import Any


class MsgpackError(ValueError):
    pass


class _Reader:
    def __init__(self, data: bytes) -> None:
        self.data, self.pos = data, 0

    def take(self, n: int) -> bytes:
        if self.pos + n > len(self.data):
            raise MsgpackError(f"truncated MessagePack data at byte {self.pos} (needs {n} more)")
        out = self.data[self.pos:self.pos + n]
        self.pos += n
        return out

    def unpack(self, fmt: str) -> Any:
        return struct.unpack(">" + fmt, self.take(struct.calcsize(">" + fmt)))[0]


# Fixed-width formats: first byte -> struct format of the value that follows.
_SCALARS = {0xCA: "f", 0xCB: "d", 0xCC: "B", 0xCD: "H", 0xCE: "I", 0xCF: "Q",
            0xD0: "b", 0xD1: "h", 0xD2: "i", 0xD3: "q"}
_STR_LEN = {0xD9: "B", 0xDA: "H", 0xDB: "I"}
_BIN_LEN = {0xC4: "B", 0xC5: "H", 0xC6: "I"}
_ARRAY_LEN = {0xDC: "H", 0xDD: "I"}
_MAP_LEN = {0xDE: "H", 0xDF: "I"}
_MAX_DEPTH = 64


def _value(r: _Reader, depth: int) -> Any:
    if depth > _MAX_DEPTH:
        raise MsgpackError("MessagePack data nested too deeply")
    at = r.pos
    tag = r.take(1)[0]
    if tag <= 0x7F:
        return tag
    if tag >= 0xE0:
        return tag - 0x100
    if 0xA0 <= tag <= 0xBF:
        return _text(r, tag & 0x1F, at)
    if 0x90 <= tag <= 0x9F:
        return [_value(r, depth + 1) for _ in range(tag & 0x0F)]
    if 0x80 <= tag <= 0x8F:
        return _map(r, tag & 0x0F, depth)
    if tag == 0xC0:
        return None
    if tag in (0xC2, 0xC3):
        return tag == 0xC3
    if tag in _SCALARS:
        return r.unpack(_SCALARS[tag])
    if tag in _STR_LEN:
        return _text(r, r.unpack(_STR_LEN[tag]), at)
    if tag in _BIN_LEN:
        return r.take(r.unpack(_BIN_LEN[tag]))
    if tag in _ARRAY_LEN:
        return [_value(r, depth + 1) for _ in range(r.unpack(_ARRAY_LEN[tag]))]
    if tag in _MAP_LEN:
        return _map(r, r.unpack(_MAP_LEN[tag]), depth)
    raise MsgpackError(f"unsupported MessagePack type byte 0x{tag:02x} at byte {at}")


def _text(r: _Reader, n: int, at: int) -> str:
    try:
        return r.take(n).decode("utf-8")
    except UnicodeDecodeError:
        raise MsgpackError(f"MessagePack string at byte {at} is not UTF-8") from None


def _map(r: _Reader, n: int, depth: int) -> dict:
    out = {}
    for _ in range(n):
        key = _value(r, depth + 1)
        if isinstance(key, (list, dict)):
            raise MsgpackError("MessagePack map key is not a scalar")
        out[key] = _value(r, depth + 1)
    return out


def unpackb(data: bytes) -> Any:
    """Decode one MessagePack value that fills ``data`` exactly."""
    r = _Reader(bytes(data))
    value = _value(r, 0)
    if r.pos != len(r.data):
        raise MsgpackError(f"{len(r.data) - r.pos} bytes after the MessagePack value")
    return value
