"""``ex2.approx`` and ``tanh.approx`` on half types (PTX ISA 9.0 §9.7.4.9-10), as emitters.

``hex2_approx(b, x, *, type, ftz=False)``: ``ex2.approx.{f16,f16x2}`` and
    ``ex2.approx.ftz.{bf16,bf16x2}``: ``2^x``.
``htanh_approx(b, x, *, type)``: ``tanh.approx.{f16,f16x2,bf16,bf16x2}``.

The interpreter returns the correctly rounded value (inside the ISA's error bounds), so
these do too: the function is evaluated in f64 to about 1e-15 relative error with plain
f64 arithmetic (no libm, no target intrinsic: Taylor polynomials after an exact range
reduction, powers of two built from bits) and then rounded once to the half format by
integer code.  Misrounding would need the exact value within ~1e-15 (relative) of a
rounding boundary; 2^x and tanh(x) are irrational for the non-integer half inputs and the
tests check every one of the 2 x 65536 inputs of each function against a 200-digit
reference.  Integer x give exact powers of two (2^-25 is the tie that rounds to +0).
NaN gives the canonical NaN; ``ex2(+inf) = +inf``, ``ex2(-inf) = +0``,
``tanh(+-inf) = +-1``, ``tanh(-0) = -0``.  ``.ftz`` flushes subnormal inputs and results.
"""

from __future__ import annotations

import math

from llvmlite import ir

from .cvt_bits import I64, c64, decode, flush_subnormal
from .half import DOUBLE, half_type, per_element, round_f64, to_f64

_LN2 = math.log(2.0)
_LOG2E = 1.4426950408889634                  # RN(log2(e))
_LOG2E_LO = 2.0355273740931033e-17           # log2(e) - _LOG2E


def _d(v: float) -> ir.Constant:
    return ir.Constant(DOUBLE, v)


def _horner(b: ir.IRBuilder, y, coeffs: list[float]):
    """sum(coeffs[k] * y^k), highest degree first in the loop."""
    acc = _d(coeffs[-1])
    for c in reversed(coeffs[:-1]):
        acc = b.fadd(b.fmul(acc, y), _d(c))
    return acc


def _exp2_f64(b: ir.IRBuilder, y):
    """2^y for finite y in [-300, 300] (f64 in, f64 out, ~1e-15 relative): y = n + f with
    n = round(y) (exact: f64 round-to-integer by the 1.5*2^52 shift), |f| <= 1/2; 2^f =
    e^(f ln2) by its Taylor series to degree 14; times 2^n built from bits (a normal f64)."""
    shift = _d(1.5 * 2.0 ** 52)
    n = b.fsub(b.fadd(y, shift), shift)                 # round to nearest integer, exact
    f = b.fsub(y, n)                                    # exact (Sterbenz)
    t = b.fmul(f, _d(_LN2))
    p = _horner(b, t, [1.0 / math.factorial(k) for k in range(15)])
    ni = b.fptosi(n, I64)
    scale = b.bitcast(b.shl(b.add(ni, c64(1023)), c64(52)), DOUBLE)
    return b.fmul(p, scale)


def _expm1_small(b: ir.IRBuilder, y):
    """e^y - 1 for 0 <= y <= 1 by its Taylor series to degree 19 (no cancellation)."""
    return b.fmul(y, _horner(b, y, [1.0 / math.factorial(k + 1) for k in range(19)]))


def hex2_approx(b: ir.IRBuilder, x, *, type: str, ftz: bool = False):
    fmt, packed = half_type(type, "ex2.approx")

    def one(h):
        if ftz:
            h = flush_subnormal(b, h, fmt)
        d = decode(b, h, fmt)
        v = to_f64(b, h, fmt)
        # beyond +-300 both formats have long over/underflowed; keeps 2^n a normal f64
        lim = b.select(b.fcmp_ordered(">", v, _d(300.0)), _d(300.0), v)
        lim = b.select(b.fcmp_ordered("<", lim, _d(-300.0)), _d(-300.0), lim)
        r = _exp2_f64(b, b.select(d.is_nan, _d(0.0), lim))
        r = b.select(d.is_nan, v, r)                    # NaN in -> NaN out (canonical later)
        return round_f64(b, r, None, fmt, ftz=ftz)
    return per_element(b, packed, one, x)


def htanh_approx(b: ir.IRBuilder, x, *, type: str):
    fmt, packed = half_type(type, "tanh.approx")

    def one(h):
        d = decode(b, h, fmt)
        v = to_f64(b, h, fmt)
        a = b.select(d.is_nan, _d(0.0), b.call(b.module.declare_intrinsic("llvm.fabs", [DOUBLE]), [v]))
        a = b.select(b.fcmp_ordered(">", a, _d(20.0)), _d(20.0), a)   # tanh(20) = 1 - 8e-18
        # small: tanh(a) = m / (m + 2), m = e^(2a) - 1 by series (2a <= 1: no cancellation)
        m = _expm1_small(b, b.fmul(a, _d(2.0)))
        small = b.fdiv(m, b.fadd(m, _d(2.0)))
        # large: 1 - 2 / (e^(2a) + 1); 2a*log2(e) with a two-part constant (a has <= 11 bits,
        # so a * _LOG2E's rounding error is the only one, ~1e-16 relative)
        y = b.fadd(b.fmul(a, _d(2.0 * _LOG2E)), b.fmul(a, _d(2.0 * _LOG2E_LO)))
        e = _exp2_f64(b, y)
        large = b.fsub(_d(1.0), b.fdiv(_d(2.0), b.fadd(e, _d(1.0))))
        t = b.select(b.fcmp_ordered("<", a, _d(0.5)), small, large)
        t = b.select(d.neg, b.fsub(_d(-0.0), t), t)
        t = b.select(d.is_nan, v, t)
        return round_f64(b, t, None, fmt)
    return per_element(b, packed, one, x)


__all__ = ["hex2_approx", "htanh_approx"]
