"""CUDA's device printf (`vprintf(fmt, args)`) and C strings, read from device memory.

Executors differ in how a thread's memory is read, so they hand in a ``ByteSource``: anything
with the interpreter batch's ``load("generic", addresses, uint8, lanes)``. The arguments are packed
in a buffer, each aligned to its size (8 bytes for floating point, pointers and long integers).
"""

from __future__ import annotations

import re
import struct
from typing import Protocol

import numpy as np


class ByteSource(Protocol):
    def load(self, space: str, addr: np.ndarray, dtype: np.dtype, lanes: np.ndarray) -> np.ndarray: ...


def load_bytes(src: ByteSource, addr: int, n: int, lane: int) -> bytes:
    """``n`` bytes at generic address ``addr`` as thread ``lane`` sees them."""
    vals = src.load("generic", np.array([addr + i for i in range(n)], dtype=np.uint64), np.uint8,
                    np.full(n, lane, dtype=np.int64))
    return bytes(vals.tolist())


def cstring(src: ByteSource, addr: int, lane: int, limit: int = 4096) -> str:
    """The NUL-terminated string at ``addr`` (at most ``limit`` bytes, UTF-8 with replacement)."""
    out = bytearray()
    while len(out) < limit:
        c = int(load_bytes(src, addr + len(out), 1, lane)[0])
        if c == 0:
            break
        out.append(c)
    return out.decode("utf-8", "replace")


_SPEC = re.compile(r"%([-+ #0]*)(\d+|\*)?(?:\.(\d+|\*))?(hh|h|ll|l|z|j|t|L)?([diouxXeEfFgGaAcspn%])")


def _arg_size(conv: str, length: str | None) -> int:
    if conv in "eEfFgGaA" or conv in "sp" or length in ("ll", "l", "z", "j", "t"):
        return 8
    return 4


def _convert(src: ByteSource, spec: str, conv: str, length: str | None, raw: bytes, lane: int) -> str:
    """One conversion of ``raw`` argument bytes."""
    if conv in "eEfFgGaA":
        v = struct.unpack("<d", raw)[0]
        return (spec + conv) % v if conv not in "aA" else float.hex(v)
    if conv == "s":
        return (spec + "s") % cstring(src, struct.unpack("<Q", raw)[0], lane)
    if conv == "p":
        return "0x%x" % struct.unpack("<Q", raw)[0]
    if conv == "c":
        return (spec + "c") % chr(raw[0])
    signed = conv in "di"
    v = int.from_bytes(raw, "little", signed=signed)
    if length == "h":
        v = int.from_bytes(raw[:2], "little", signed=signed)
    elif length == "hh":
        v = int.from_bytes(raw[:1], "little", signed=signed)
    return (spec + ("d" if conv in "iu" else conv)) % v


def format_printf(src: ByteSource, fmt_addr: int, args_addr: int, lane: int) -> str:
    """Format like CUDA's printf: the format string at ``fmt_addr``, arguments packed at
    ``args_addr`` (0: none), as thread ``lane`` sees memory."""
    fmt = cstring(src, fmt_addr, lane)
    off = 0
    out = []
    pos = 0
    for m in _SPEC.finditer(fmt):
        out.append(fmt[pos:m.start()])
        pos = m.end()
        flags, width, prec, length, conv = m.groups()
        if conv == "%":
            out.append("%")
            continue
        size = _arg_size(conv, length)
        off = (off + size - 1) // size * size
        raw = load_bytes(src, args_addr + off, size, lane) if args_addr else bytes(size)
        off += size
        spec = "%" + (flags or "") + (width or "") + (("." + prec) if prec else "")
        out.append(_convert(src, spec, conv, length, raw, lane))
    out.append(fmt[pos:])
    return "".join(out)
