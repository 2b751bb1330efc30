"""Bit-exact PTX half precision (``f16``, ``bf16`` and packed ``x2``) semantics.

Scalars are held in ``uint16`` arrays of raw bits, packed ``.f16x2`` /
``.bf16x2`` values in ``uint32`` with element 0 in the **low** half (PTX ISA
9.0, 5.2.x "Packed Data Types").  Every function is vectorised over threads;
type arguments are the PTX type names ``"f16" "f16x2" "bf16" "bf16x2"``.

Rounding, once, from exact values
---------------------------------
All results are produced by :func:`_round_pack`, which rounds an *exact*
value ``(-1)^neg * m * 2^e`` (integer ``m``) to the destination format in
any of ``rn rz rm rp rna`` with integer arithmetic: no host FPU rounding mode
is involved and there is exactly one rounding.

The exact values come from float64:

* ``a*b`` of two f16 (11-bit) or bf16 (8-bit) significands has at most 22
  bits and an exponent inside float64's normal range, so float64 holds it
  exactly.
* Sums (``add``, ``sub``, the addition of ``fma``) are computed as
  ``s = fl64(x + y)`` plus the exact error ``t = (x + y) - s`` of Knuth's
  TwoSum (error-free in round-to-nearest barring overflow, which cannot occur
  for these magnitudes).  The pair ``(s, t)`` is rounded as ``s`` with a
  sticky tail: ``m -> 4m +- 1`` at ``e - 2`` when ``t != 0``.  That is exact
  because every rounding boundary of a <= 24-bit format near ``s`` lies on
  ``s``'s 53-bit grid, at least one float64 ulp from ``s`` unless it *is*
  ``s``, while ``|t| <= ulp(s)/2``: ``s + t`` and ``s +- ulp/4`` lie on the
  same side of every boundary.

Why computing in f32 and rounding again would also be exact for ``add sub
mul div sqrt``: for a basic operation whose operands are p-bit floats,
rounding first to p' >= 2p + 2 bits and then to p bits equals rounding once
(Figueroa, "When is double rounding innocuous?", 1995): 24 >= 2*11 + 2 for
f16 and 24 >= 2*8 + 2 for bf16.  That theorem does **not** cover ``fma``
(``a*b + c`` is not a basic operation on p-bit operands: the exact sum can
need ~80 bits and f32 rounding can create a false tie), which is why this
module never double-rounds and keeps the TwoSum tail instead.

Implementation choices (ISA leaves them open or is terse)
---------------------------------------------------------
* NaN results are the canonical NaN ``0x7FFF`` for f16 and bf16 (and
  ``0x7FFFFFFF``/``0x7FFFFFFFFFFFFFFF`` for f32/f64 results of
  conversions); no NaN payload is propagated (the canonical NaN is what
  the ISA names for ``.NaN`` min/max and ``.relu``; we use it throughout).
* ``.ftz`` flushes subnormal inputs and subnormal (after rounding) results
  to sign-preserving zero.
* ``.sat`` clamps to ``[+0.0, 1.0]``; NaN and ``-0.0`` give ``+0.0``.
* ``.relu`` (``fma.relu``, ``cvt.relu``) maps negative results and ``-0.0``
  to ``+0.0``; NaN stays (canonical) NaN.
* ``min``/``max`` order ``-0.0 < +0.0``.
* ``.approx`` (``ex2``, ``tanh``) return the correctly rounded value (float64
  evaluation rounded once), inside the ISA bounds (ex2.f16 2^-9.9, ex2.bf16
  2^-7, tanh.f16 2^-10.987, tanh.bf16 2^-8 relative error).
"""

from __future__ import annotations

import numpy as np

# The formats and rounding live in half_core, the conversions in half_cvt; this module adds the
# arithmetic and is the one name for all three (hence the re-exports).
from .half_core import (BF16, F16, F32, _elementwise, _flush_in, _fmt, _round_f64, _to_f64,  # noqa: F401
                        _two_sum, pack_x2, unpack_x2)
from .half_cvt import (cvt_x2_f32, f32_to_half, f64_to_half, half_rint, half_to_f32, half_to_f64,
                       half_to_half, half_to_int, int_to_half)  # noqa: F401  (re-exported)

__all__ = [
    "BF16",
    "F16",
    "F32",
    "abs_",
    "add",
    "cvt_x2_f32",
    "ex2_approx",
    "f32_to_half",
    "f64_to_half",
    "fma",
    "half_rint",
    "half_to_f32",
    "half_to_f64",
    "half_to_half",
    "half_to_int",
    "int_to_half",
    "max_",
    "min_",
    "mul",
    "neg",
    "pack_x2",
    "setp",
    "sub",
    "tanh_approx",
    "unpack_x2",
]


def _arith(op, t, ftz, sat, relu, *ops):
    def one(fmt, *hs):
        if ftz and fmt is BF16:
            raise ValueError(".ftz is not defined for bf16 add/sub/mul/fma")
        vs = [_to_f64(h, fmt, ftz=ftz) for h in hs]
        with np.errstate(invalid="ignore", over="ignore"):
            if op == "add":
                s, tl = _two_sum(vs[0], vs[1])
            elif op == "sub":
                s, tl = _two_sum(vs[0], -vs[1])
            elif op == "mul":
                s, tl = vs[0] * vs[1], None          # exact in float64
            else:  # fma: a*b exact, one TwoSum
                s, tl = _two_sum(vs[0] * vs[1], vs[2])
        return _round_f64(s, fmt, "rn", tl, ftz=ftz, sat=sat, relu=relu)
    return _elementwise(one, t, *ops)


def add(a, b, t: str = "f16", *, ftz: bool = False, sat: bool = False):
    """``add{.rn}{.ftz}{.sat}.{f16,f16x2} d, a, b`` / ``add{.rn}.{bf16,bf16x2}``
    (9.7.4.1): exact sum rounded once to nearest-even."""
    return _arith("add", t, ftz, sat, False, a, b)


def sub(a, b, t: str = "f16", *, ftz: bool = False, sat: bool = False):
    """``sub{.rn}{.ftz}{.sat}`` half forms (9.7.4.2)."""
    return _arith("sub", t, ftz, sat, False, a, b)


def mul(a, b, t: str = "f16", *, ftz: bool = False, sat: bool = False):
    """``mul{.rn}{.ftz}{.sat}`` half forms (9.7.4.3)."""
    return _arith("mul", t, ftz, sat, False, a, b)


def fma(a, b, c, t: str = "f16", *, ftz: bool = False, sat: bool = False,
        relu: bool = False):
    """``fma.rn{.ftz}{.sat|.relu}.{f16,f16x2}`` and
    ``fma.rn{.relu}.{bf16,bf16x2}`` (9.7.4.4): ``a*b + c`` with a single
    rounding (exact product, TwoSum tail; see the module docstring)."""
    return _arith("fma", t, ftz, sat, relu, a, b, c)


def neg(a, t: str = "f16", *, ftz: bool = False):
    """``neg{.ftz}`` half forms (9.7.4.5): flips the sign bit (also of NaN)."""
    def one(fmt, h):
        if ftz:
            h = _flush_in(h, fmt)
        return h ^ np.uint16(0x8000)
    return _elementwise(one, t, a)


def abs_(a, t: str = "f16", *, ftz: bool = False):
    """``abs{.ftz}`` half forms (9.7.4.6): clears the sign bit."""
    def one(fmt, h):
        if ftz:
            h = _flush_in(h, fmt)
        return h & np.uint16(0x7FFF)
    return _elementwise(one, t, a)


def _minmax(a, b, t, ftz, nan, xorsign_abs, want_min):
    def one(fmt, x, y):
        if ftz:
            x, y = _flush_in(x, fmt), _flush_in(y, fmt)
        sign = (x ^ y) & np.uint16(0x8000)
        if xorsign_abs:
            x, y = x & np.uint16(0x7FFF), y & np.uint16(0x7FFF)
        vx, vy = _to_f64(x, fmt), _to_f64(y, fmt)
        nx, ny = np.isnan(vx), np.isnan(vy)
        # order with -0 < +0: compare (value, sign-bit) lexicographically
        sx = (x >> np.uint16(15)) == 1
        sy = (y >> np.uint16(15)) == 1
        x_lt_y = (vx < vy) | ((vx == vy) & sx & ~sy)
        pick_x = x_lt_y if want_min else ((vy < vx) | ((vx == vy) & sy & ~sx))
        tie = (vx == vy) & (sx == sy)
        r = np.where(pick_x | tie, x, y)
        r = np.where(nx & ~ny, y, np.where(ny & ~nx, x, r))
        isnan_r = (nx & ny) | ((nx | ny) & nan)
        if xorsign_abs:
            r = r | sign
        return np.where(isnan_r, np.uint16(fmt.nan_bits), r).astype(np.uint16)
    return _elementwise(one, t, a, b)


def min_(a, b, t: str = "f16", *, ftz: bool = False, nan: bool = False,
         xorsign_abs: bool = False):
    """``min{.ftz}{.NaN}{.xorsign.abs}`` half forms (9.7.4.7).  Without
    ``.NaN`` a NaN operand is ignored (both NaN: canonical NaN); with
    ``.NaN`` any NaN operand gives the canonical NaN.  ``.xorsign.abs``:
    the minimum of ``|a|`` and ``|b|`` with sign ``sign(a) ^ sign(b)`` (a
    NaN result stays the canonical NaN).  ``-0.0 < +0.0``."""
    return _minmax(a, b, t, ftz, nan, xorsign_abs, True)


def max_(a, b, t: str = "f16", *, ftz: bool = False, nan: bool = False,
         xorsign_abs: bool = False):
    """``max{.ftz}{.NaN}{.xorsign.abs}`` half forms (9.7.4.8), see
    :func:`min_`."""
    return _minmax(a, b, t, ftz, nan, xorsign_abs, False)


def _approx(fn, a, t, ftz):
    def one(fmt, h):
        v = _to_f64(h, fmt, ftz=ftz)
        with np.errstate(over="ignore", invalid="ignore"):
            r = fn(v)
        return _round_f64(r, fmt, "rn", ftz=ftz)
    return _elementwise(one, t, a)


def ex2_approx(a, t: str = "f16", *, ftz: bool = False):
    """``ex2.approx.{f16,f16x2}`` and ``ex2.approx.ftz.{bf16,bf16x2}``
    (9.7.4.10): ``2^a`` correctly rounded (max relative error 2^-11 for f16
    normals, inside the ISA's 2^-9.9; bf16 2^-8, inside 2^-7)."""
    return _approx(np.exp2, a, t, ftz)


def tanh_approx(a, t: str = "f16"):
    """``tanh.approx.{f16,f16x2,bf16,bf16x2}`` (9.7.4.9): correctly rounded
    ``tanh(a)`` (ISA bound: 2^-10.987 relative for f16, 2^-8 for bf16)."""
    return _approx(np.tanh, a, t, False)


_FCMP = {
    "eq": lambda x, y: x == y,
    "ne": lambda x, y: (x != y) & ~np.isnan(x) & ~np.isnan(y),
    "lt": lambda x, y: x < y,
    "le": lambda x, y: x <= y,
    "gt": lambda x, y: x > y,
    "ge": lambda x, y: x >= y,
    "equ": lambda x, y: (x == y) | np.isnan(x) | np.isnan(y),
    "neu": lambda x, y: x != y,
    "ltu": lambda x, y: ~(x >= y),
    "leu": lambda x, y: ~(x > y),
    "gtu": lambda x, y: ~(x <= y),
    "geu": lambda x, y: ~(x < y),
    "num": lambda x, y: ~np.isnan(x) & ~np.isnan(y),
    "nan": lambda x, y: np.isnan(x) | np.isnan(y),
}


def setp(cmp: str, a, b, t: str = "f16", *, ftz: bool = False):
    """Comparison of ``setp.CmpOp{.ftz}`` / ``set`` on half types (9.7.7.2).
    Ordered ``eq ne lt le gt ge`` are false with a NaN operand; the ``u``
    forms are true; ``num``/``nan`` test for NaNs; ``-0 == +0``.  Scalar
    types return one bool array; ``.f16x2``/``.bf16x2`` return ``(p, q)``:
    ``p`` the result for the lower halves, ``q`` for the upper halves (the
    ISA's ``p|q`` destinations).  Apply ``.and/.or/.xor`` with ``c``
    yourself."""
    try:
        fn = _FCMP[cmp.lstrip(".")]
    except KeyError:
        raise ValueError(f"bad float comparison {cmp!r}") from None

    def one(fmt, x, y):
        with np.errstate(invalid="ignore"):
            return fn(_to_f64(x, fmt, ftz=ftz), _to_f64(y, fmt, ftz=ftz))
    return _elementwise(one, t, a, b)
