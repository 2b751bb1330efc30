"""Integer type facts and raw-bit conversions shared by the integer semantics (see ``intops``)."""

from __future__ import annotations

import numpy as np


_UDT = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}


_SDT = {8: np.int8, 16: np.int16, 32: np.int32, 64: np.int64}


_U64 = np.uint64


_M32 = 0xFFFFFFFF


_TYPES = {}


for _w in (8, 16, 32, 64):
    _TYPES[f"u{_w}"] = (_w, False)
    _TYPES[f"b{_w}"] = (_w, False)
    _TYPES[f"s{_w}"] = (_w, True)


def type_info(t: str) -> tuple[int, bool]:
    """``(bit width, signed)`` of an integer PTX type name (``"s32"`` ...)."""
    try:
        return _TYPES[t.lstrip(".")]
    except KeyError:
        raise ValueError(f"not a PTX integer type: {t!r}") from None


def to_unsigned(x, bits: int) -> np.ndarray:
    """Reinterpret ``x`` (array of any integer/bool dtype, or Python int)
    modulo ``2**bits`` as an unsigned array of that width (at least 1-D).
    A float array of exactly ``bits`` width is reinterpreted bit for bit."""
    udt = _UDT[bits]
    if isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_)):
        return np.array([int(x) & ((1 << bits) - 1)], dtype=udt)
    a = np.atleast_1d(np.asarray(x))
    if a.dtype == udt:
        return a
    if a.dtype.kind in "iub":
        return a.astype(udt)
    if a.dtype.kind == "f" and a.dtype.itemsize * 8 == bits:
        return a.view(udt)          # float registers: reinterpret the raw bits
    raise TypeError(f"integer operand (or {bits}-bit float bits) expected, got dtype {a.dtype}")


def to_signed(x, bits: int) -> np.ndarray:
    """Two's-complement view of ``x`` as a signed array of width ``bits``."""
    return to_unsigned(x, bits).view(_SDT[bits])


def _val(x, t):
    """Operand value as int64 (<= 32-bit types) or as int64/uint64 (64-bit)."""
    bits, signed = type_info(t)
    if bits == 64:
        return to_signed(x, 64) if signed else to_unsigned(x, 64)
    v = to_signed(x, bits) if signed else to_unsigned(x, bits)
    return v.astype(np.int64)


def _wrap(v, bits):
    """Reduce an integer array modulo ``2**bits`` into the unsigned dtype."""
    return np.asarray(v).astype(_UDT[bits])


def _clamp_to(v, bits, signed):
    """Clamp an int64 array to the range of a ``bits``-wide integer type."""
    lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
    return np.clip(v, lo, min(hi, (1 << 63) - 1))


def _packed(t):
    return t.lstrip(".") in ("u16x2", "s16x2")


def _split16x2(x):
    x = to_unsigned(x, 32)
    return (x & 0xFFFF).astype(np.uint16), (x >> 16).astype(np.uint16)


def _join16x2(lo, hi):
    return lo.astype(np.uint32) | (hi.astype(np.uint32) << 16)


def _per_half(fn, a, b, t, **kw):
    et = "u16" if t.lstrip(".") == "u16x2" else "s16"
    alo, ahi = _split16x2(a)
    blo, bhi = _split16x2(b)
    return _join16x2(fn(alo, blo, et, **kw), fn(ahi, bhi, et, **kw))
