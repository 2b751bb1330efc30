"""Half-precision formats and the one rounding routine every f16/bf16 result goes through, with
the decoding and packing helpers (see ``half`` for the semantics this serves)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .intops import _bitlen, to_unsigned


_U64 = np.uint64


@dataclass(frozen=True)
class Fmt:
    """A binary floating-point storage format."""
    name: str
    p: int        # significand bits including the hidden bit
    ebits: int    # exponent field bits

    @property
    def nbits(self) -> int:
        return 1 + self.ebits + self.p - 1

    @property
    def bias(self) -> int:
        return (1 << (self.ebits - 1)) - 1

    @property
    def qmin(self) -> int:
        """Exponent of the smallest subnormal (the quantum at the bottom)."""
        return 1 - self.bias - (self.p - 1)

    @property
    def inf_bits(self) -> int:
        return ((1 << self.ebits) - 1) << (self.p - 1)

    @property
    def max_bits(self) -> int:
        return self.inf_bits - 1

    @property
    def nan_bits(self) -> int:
        return (1 << (self.nbits - 1)) - 1      # 0x7FFF / 0x7FFFFFFF

    @property
    def dtype(self):
        return {16: np.uint16, 32: np.uint32}[self.nbits]


F16 = Fmt("f16", 11, 5)


BF16 = Fmt("bf16", 8, 8)


F32 = Fmt("f32", 24, 8)


_FMTS = {"f16": F16, "bf16": BF16, "f32": F32}


_RNDS = ("rn", "rz", "rm", "rp", "rna")


def _fmt(t: str) -> tuple[Fmt, bool]:
    """``(format, packed)`` for a half type name."""
    t = t.lstrip(".")
    packed = t.endswith("x2")
    try:
        return _FMTS[t[:-2] if packed else t], packed
    except KeyError:
        raise ValueError(f"not a half-precision type: {t!r}") from None


def _round_pack(neg, m, e, fmt: Fmt, rnd: str = "rn", satfinite: bool = False,
                ftz: bool = False) -> np.ndarray:
    """Round ``(-1)^neg * m * 2^e`` (``m`` uint64 >= 0, ``e`` int64) to
    ``fmt`` with rounding mode ``rnd`` and return the bits.  Overflow gives
    inf or the largest finite value as IEEE 754 prescribes for the mode
    (always the largest finite value with ``satfinite``)."""
    if rnd not in _RNDS:
        raise ValueError(f"bad rounding mode {rnd!r}")
    neg, m, e = np.broadcast_arrays(np.asarray(neg, bool), to_unsigned(m, 64),
                                    np.asarray(e, np.int64))
    p = fmt.p
    L = _bitlen(m)
    E = e + L - 1
    q = np.maximum(E - (p - 1), fmt.qmin)
    s = q - e
    # s <= 0: exact, left-align.
    k_exact = m << np.clip(-s, 0, 63).astype(np.uint64)
    # s > 0: drop s low bits.
    big = s > 64
    sr = np.clip(s, 1, 64)
    sh = np.minimum(sr, 63).astype(np.uint64)
    k = np.where(sr >= 64, _U64(0), m >> sh)
    low = np.where(sr >= 64, ~_U64(0), (_U64(1) << sh) - _U64(1))
    r = np.where(big, m, m & low)
    half = _U64(1) << (sr - 1).astype(np.uint64)
    gt = ~big & (r > half)
    eq = ~big & (r == half)
    nz = r != 0
    if rnd == "rn":
        up = gt | (eq & ((k & _U64(1)) == 1))
    elif rnd == "rna":
        up = gt | eq
    elif rnd == "rz":
        up = np.zeros(m.shape, bool)
    elif rnd == "rm":
        up = neg & nz
    else:  # rp
        up = ~neg & nz
    k = np.where(s <= 0, k_exact, k + up.astype(np.uint64)).astype(np.int64)
    mag = ((q - fmt.qmin) << (p - 1)) + k
    mag = np.where(m == 0, 0, mag)
    if ftz:
        mag = np.where(mag < (1 << (p - 1)), 0, mag)
    if satfinite:
        to_inf = np.zeros(m.shape, bool)
    elif rnd in ("rn", "rna"):
        to_inf = np.ones(m.shape, bool)
    elif rnd == "rz":
        to_inf = np.zeros(m.shape, bool)
    elif rnd == "rm":
        to_inf = neg
    else:
        to_inf = ~neg
    mag = np.where(mag >= fmt.inf_bits, np.where(to_inf, fmt.inf_bits, fmt.max_bits), mag)
    out = mag | (neg.astype(np.int64) << (fmt.nbits - 1))
    return out.astype(fmt.dtype)


def _decode64(x):
    """float64 array -> (neg, m uint64, e int64) of its finite value."""
    b = np.atleast_1d(np.asarray(x, np.float64)).view(np.uint64)
    neg = (b >> _U64(63)) == 1
    ef = ((b >> _U64(52)) & _U64(0x7FF)).astype(np.int64)
    frac = b & _U64((1 << 52) - 1)
    m = np.where(ef == 0, frac, frac | _U64(1 << 52))
    e = np.where(ef == 0, -1074, ef - 1075)
    return neg, m, e


def _two_sum(x, y):
    with np.errstate(invalid="ignore", over="ignore"):
        s = x + y
        bb = s - x
        t = (x - (s - bb)) + (y - bb)
    return s, np.where(np.isfinite(s), t, 0.0)


def _round_f64(s, fmt: Fmt, rnd: str = "rn", tail=None, *, satfinite=False,
               ftz=False, sat=False, relu=False):
    """Round ``s + tail`` (float64 arrays; ``tail`` the exact error, or None)
    to ``fmt``; NaN -> canonical NaN; +-inf -> +-inf (+-max with
    satfinite); then the ``.sat``/``.relu`` clamps."""
    s = np.atleast_1d(np.asarray(s, np.float64))
    neg, m, e = _decode64(s)
    if tail is not None:
        tail = np.asarray(tail, np.float64)
        adj = np.where(tail == 0, 0, np.where((tail < 0) == neg, 1, -1))
        m = (m << _U64(2)) + adj.astype(np.int64).astype(np.uint64)   # wraps for -1: fine
        e = e - 2
    out = _round_pack(neg, m, e, fmt, rnd, satfinite=satfinite, ftz=ftz).astype(np.int64)
    sign = neg.astype(np.int64) << (fmt.nbits - 1)
    inf = fmt.max_bits if satfinite else fmt.inf_bits
    out = np.where(np.isinf(s), sign | inf, out)
    isnan = np.isnan(s)
    out = np.where(isnan, fmt.nan_bits, out)
    if sat:
        mag = out & ((1 << (fmt.nbits - 1)) - 1)
        one = fmt.bias << (fmt.p - 1)
        negv = (out >> (fmt.nbits - 1)) == 1
        out = np.where(isnan | negv, 0, np.where(mag > one, one, out))
    if relu:
        negv = (out >> (fmt.nbits - 1)) == 1
        out = np.where(~isnan & negv, 0, out)
    return out.astype(fmt.dtype)


def _to_f64(h, fmt: Fmt, ftz: bool = False):
    """Exact float64 value of half bits (after optional input flush)."""
    h = to_unsigned(h, 16)
    if ftz:
        h = _flush_in(h, fmt)
    with np.errstate(invalid="ignore"):          # signalling NaNs: no warning
        if fmt is F16:
            return h.view(np.float16).astype(np.float64)
        return (h.astype(np.uint32) << np.uint32(16)).view(np.float32).astype(np.float64)


def _flush_in(h, fmt: Fmt):
    """Flush subnormal half inputs to sign-preserving zero."""
    h = to_unsigned(h, 16)
    expf = (h >> np.uint16(fmt.p - 1)) & np.uint16((1 << fmt.ebits) - 1)
    return np.where(expf == 0, h & np.uint16(0x8000), h)


def unpack_x2(x):
    """Split packed ``x2`` bits into ``(element0 = low, element1 = high)``."""
    x = to_unsigned(x, 32)
    return (x & np.uint32(0xFFFF)).astype(np.uint16), (x >> np.uint32(16)).astype(np.uint16)


def pack_x2(lo, hi):
    """Pack two uint16 arrays, ``lo`` in bits 15..0 and ``hi`` in 31..16."""
    return to_unsigned(lo, 16).astype(np.uint32) | (to_unsigned(hi, 16).astype(np.uint32) << np.uint32(16))


def _elementwise(fn, t, *ops):
    """Apply ``fn(fmt, *uint16 operands)`` to a scalar or per half of x2."""
    fmt, packed = _fmt(t)
    if not packed:
        return fn(fmt, *[to_unsigned(o, 16) for o in ops])
    halves = [unpack_x2(o) for o in ops]
    lo = fn(fmt, *[h[0] for h in halves])
    hi = fn(fmt, *[h[1] for h in halves])
    if isinstance(lo, tuple) or lo.dtype == bool:
        return lo, hi
    return pack_x2(lo, hi)
