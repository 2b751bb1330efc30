"""LLVM IR emitters for PTX .f32/.f64 arithmetic (PTX ISA 9.0 §9.7.3): add sub mul fma mad
div rcp sqrt with .rn/.rz/.rm/.rp, .ftz and .sat; the approximate math functions, min/max,
abs/neg/copysign, comparisons and testp are re-exported from :mod:`fp_approx` and
:mod:`fp_misc`, so the lifter calls everything as ``fp.<name>``.

Semantics are bit-identical to the interpreter (``ptxvm.interp.numerics.arith``); see
:mod:`fp_core` for the NaN/.ftz/.sat policies and the directed-rounding machinery.

* ``.rn`` uses LLVM's own IEEE operations (``fadd``/``fmul``/``fdiv``, ``llvm.fma``,
  ``llvm.sqrt``; correctly rounded on every target and never given fast-math flags).
* ``.rz/.rm/.rp`` on .f32 compute the exact result as a double pair (f32 sums and
  products are exact in f64 with TwoSum; f64 quotients and square roots of f32 operands
  lie on the right side of every f32 number) and round it to f32 with
  :func:`fp_core.round_f64_to_f32`.
* ``.rz/.rm/.rp`` on .f64: add uses TwoSum directly (its error is exact even for
  subnormal sums); mul/div/sqrt/fma scale the operands to mantissas in [1, 2) so the
  error-free transformations (``fma``-based product error, division and square-root
  remainders, ErrFma) cannot underflow, then round ``(hi + lo) * 2**k`` with
  :func:`fp_core.round_f64_scaled`.  Non-finite operands and zero products take the
  native ``.rn`` operation, which is exact there.
"""

from __future__ import annotations

from llvmlite import ir

from ...errors import UnsupportedError
from .fp_approx import fcos, fex2, flg2, frsqrt, fsin, ftanh
from .fp_core import (
    F64T,
    FMT32,
    FMT64,
    I32,
    RNDS,
    Fmt,
    all_,
    check_rnd,
    clamp_i32,
    fabs_,
    fbits,
    fc,
    finish,
    flush,
    fma_,
    fma_error,
    fmt_of,
    from_bits,
    ftz_in,
    intrinsic,
    is_finite,
    is_inf,
    is_nan,
    is_zero,
    pow2_f64,
    round_f64_scaled,
    round_f64_to_f32,
    signbit,
    signed_zero,
    split_f64,
    sqrt_,
    step,
    to_bits,
    two_sum,
    zero_sum,
)
from .fp_misc import copysign, fabs, fcompare, fmax, fmin, fneg, testp

__all__ = [
    "copysign", "fabs", "fadd", "fcompare", "fcos", "fdiv", "fex2", "ffma", "flg2",
    "fmad_f32_legacy", "fmax", "fmin", "fmul", "fneg", "frcp", "frsqrt", "fsin", "fsqrt",
    "fsub", "ftanh", "testp",
]


def _same(what: str, *xs: ir.Value) -> Fmt:
    fmt = fmt_of(xs[0], what)
    for x in xs[1:]:
        if fmt_of(x, what) is not fmt:
            raise UnsupportedError(f"{what}: operands of different float types")
    return fmt


# ------------------------------------------------------------------------------------ add/sub

def _add(b: ir.IRBuilder, x: ir.Value, y: ir.Value, negate_y: bool, rnd: str, ftz: bool,
         sat: bool) -> ir.Value:
    op = "sub" if negate_y else "add"
    fmt = _same(op, x, y)
    check_rnd(rnd, op)
    x, y = ftz_in(b, x, ftz), ftz_in(b, y, ftz)
    # NaN propagation reads the operands as written (sub propagates y's own payload)
    inputs = (x, y)
    yy = b.fneg(y) if negate_y else y
    native = b.fadd(x, yy)
    if rnd == "rn":
        return finish(b, native, inputs, ftz=ftz, sat=sat)
    if fmt is FMT32:
        s, e = two_sum(b, b.fpext(x, F64T), b.fpext(yy, F64T))   # exact: no f64 overflow
        r = round_f64_to_f32(b, s, e, rnd)
    else:
        # TwoSum is exact unless s overflows; then the exact |sum| exceeds max-finite and
        # "smaller than inf" steps to max-finite where the mode asks for it
        s, e = two_sum(b, x, yy)
        over = is_inf(b, s)
        neg = signbit(b, s)
        zero = fc(fmt, 0.0)
        lo_pos = b.and_(b.fcmp_ordered(">", e, zero), b.not_(over))
        lo_neg = b.and_(b.fcmp_ordered("<", e, zero), b.not_(over))
        bigger = b.select(neg, lo_neg, lo_pos)
        smaller = b.or_(b.select(neg, lo_pos, lo_neg), over)
        r = from_bits(b, step(b, to_bits(b, s), neg, bigger, smaller, rnd), fmt)
    finite = b.and_(is_finite(b, x), is_finite(b, y))
    exact_zero = b.and_(finite, is_zero(b, native))   # RN(x+y) == 0 only for an exact zero
    r = b.select(exact_zero, zero_sum(b, signbit(b, x), signbit(b, yy), fmt, rnd), r)
    r = b.select(finite, r, native)
    return finish(b, r, inputs, ftz=ftz, sat=sat)


def fadd(b: ir.IRBuilder, x: ir.Value, y: ir.Value, *, rnd: str = "rn", ftz: bool = False,
         sat: bool = False) -> ir.Value:
    """``add{.rnd}{.ftz}{.sat}.f32`` / ``add{.rnd}.f64``: x + y rounded once."""
    return _add(b, x, y, False, rnd, ftz, sat)


def fsub(b: ir.IRBuilder, x: ir.Value, y: ir.Value, *, rnd: str = "rn", ftz: bool = False,
         sat: bool = False) -> ir.Value:
    """``sub``: x + (-y) exactly (negation is exact), NaN payload from y itself."""
    return _add(b, x, y, True, rnd, ftz, sat)


# ---------------------------------------------------------------------------------------- mul

def fmul(b: ir.IRBuilder, x: ir.Value, y: ir.Value, *, rnd: str = "rn", ftz: bool = False,
         sat: bool = False) -> ir.Value:
    """``mul{.rnd}{.ftz}{.sat}.f32`` / ``mul{.rnd}.f64``."""
    fmt = _same("mul", x, y)
    check_rnd(rnd, "mul")
    x, y = ftz_in(b, x, ftz), ftz_in(b, y, ftz)
    native = b.fmul(x, y)
    if rnd == "rn":
        return finish(b, native, (x, y), ftz=ftz, sat=sat)
    gen = all_(b, is_finite(b, x), is_finite(b, y), b.not_(is_zero(b, x)), b.not_(is_zero(b, y)))
    if fmt is FMT32:
        p = b.fmul(b.fpext(x, F64T), b.fpext(y, F64T))     # the product of two f32 is exact
        r = round_f64_to_f32(b, p, None, rnd)
    else:
        one = fc(fmt, 1.0)
        mx, ex = split_f64(b, b.select(gen, x, one))
        my, ey = split_f64(b, b.select(gen, y, one))
        ph = b.fmul(mx, my)
        pl = fma_(b, mx, my, b.fneg(ph))                  # exact: ph in [1, 4)
        r = round_f64_scaled(b, ph, pl, b.add(ex, ey), rnd)
    return finish(b, b.select(gen, r, native), (x, y), ftz=ftz, sat=sat)


# ---------------------------------------------------------------------------------------- fma

def ffma(b: ir.IRBuilder, x: ir.Value, y: ir.Value, z: ir.Value, *, rnd: str = "rn",
         ftz: bool = False, sat: bool = False) -> ir.Value:
    """``fma.rnd{.ftz}{.sat}.f32`` / ``fma.rnd.f64`` (and ``mad.rnd``): x*y + z, one rounding."""
    fmt = _same("fma", x, y, z)
    check_rnd(rnd, "fma")
    x, y, z = ftz_in(b, x, ftz), ftz_in(b, y, ftz), ftz_in(b, z, ftz)
    inputs = (x, y, z)
    native = fma_(b, x, y, z)
    if rnd == "rn":
        return finish(b, native, inputs, ftz=ftz, sat=sat)
    finite = all_(b, is_finite(b, x), is_finite(b, y), is_finite(b, z))
    neg_p = b.xor(signbit(b, x), signbit(b, y))
    # an exact zero (x*y == -z, or zero product plus zero z) has the zero-sum sign of the
    # mode; RN(x*y + z) is zero only for an exact zero once our inputs are scaled or widened
    zero = zero_sum(b, neg_p, signbit(b, z), fmt, rnd)
    if fmt is FMT32:
        p = b.fmul(b.fpext(x, F64T), b.fpext(y, F64T))     # exact
        s, e = two_sum(b, p, b.fpext(z, F64T))             # exact: no overflow in f64
        nonzero = b.not_(is_zero(b, s))
        r = round_f64_to_f32(b, s, e, rnd)
    else:
        r, nonzero = _fma64_directed(b, x, y, z, finite, rnd)
    r = b.select(b.and_(finite, nonzero), r, b.select(is_zero(b, native), zero, native))
    return finish(b, r, inputs, ftz=ftz, sat=sat)


_FAR = 110    # exponent gap beyond which the smaller addend only acts as a sticky bit


def _fma64_directed(b: ir.IRBuilder, x: ir.Value, y: ir.Value, z: ir.Value, finite: ir.Value,
                    rnd: str) -> tuple[ir.Value, ir.Value]:
    """Directed f64 fma for finite operands: (result, i1 "exact value is nonzero").

    x = mx*2**ex, y = my*2**ey, product scale k = ex + ey.  The operands are rescaled so that
    ErrFma runs on numbers in [2**-200, 2**112] (no underflow, no overflow):
    * |ez - k| <= 110: z' = mz * 2**(ez - k), exact;
    * z far below the product: z' = ±2**-200 (below half an ulp of the 106-bit product,
      so every rounding decision and the error's sign are unchanged);
    * z far above the product: the product becomes ±2**-200 and the scale is ez.
    The scaled result r1 is zero only for an exact zero (the caller applies the zero rule)."""
    fmt = FMT64
    one = fc(fmt, 1.0)
    pz = b.or_(is_zero(b, x), is_zero(b, y))
    gen = b.and_(finite, b.not_(pz))
    mx, ex = split_f64(b, b.select(gen, x, one))
    my, ey = split_f64(b, b.select(gen, y, one))
    k = b.add(ex, ey)
    zz = is_zero(b, z)
    mz, ez = split_f64(b, b.select(b.and_(gen, b.not_(zz)), z, one))
    d = b.sub(ez, k)
    zdom = b.and_(b.icmp_signed(">", d, ir.Constant(I32, _FAR)), b.not_(zz))
    pdom = b.icmp_signed("<", d, ir.Constant(I32, -_FAR))
    tiny = fc(fmt, 2.0 ** -200)
    csign = lambda mag, sgn: intrinsic(b, "llvm.copysign.f64", F64T, [mag, sgn])
    a_ = b.select(zdom, csign(tiny, mx), mx)
    b_ = b.select(zdom, csign(one, my), my)
    zs = b.fmul(mz, pow2_f64(b, clamp_i32(b, d, -_FAR, _FAR)))
    zs = b.select(pdom, csign(tiny, mz), zs)
    c_ = b.select(zdom, mz, b.select(zz, fc(fmt, 0.0), zs))
    kk = b.select(zdom, ez, k)
    r1, err = fma_error(b, a_, b_, c_)
    nonzero = b.and_(gen, b.not_(is_zero(b, r1)))
    safe = b.select(nonzero, r1, one)
    return round_f64_scaled(b, safe, err, kk, rnd), nonzero


def fmad_f32_legacy(b: ir.IRBuilder, x: ir.Value, y: ir.Value, z: ir.Value, *, ftz: bool = False,
                    sat: bool = False) -> ir.Value:
    """``mad{.ftz}{.sat}.f32`` without a rounding modifier.  The interpreter (the reference)
    computes it fused with round-to-nearest, i.e. as ``fma.rn`` (the form sm_20+ gives it);
    we do the same so the two executors agree."""
    return ffma(b, x, y, z, rnd="rn", ftz=ftz, sat=sat)


# ---------------------------------------------------------------------------- div / rcp / sqrt

_DIV_KINDS = (*RNDS, "approx", "full")


def fdiv(b: ir.IRBuilder, x: ir.Value, y: ir.Value, *, kind: str = "rn", ftz: bool = False) -> ir.Value:
    """``div.rnd{.ftz}.f32`` / ``div.rnd.f64`` (IEEE quotient), ``div.approx{.ftz}.f32`` and
    ``div.full{.ftz}.f32``.

    approx/full return the correctly rounded quotient, inside the ISA's 2-ulp bound, as the
    interpreter does; div.approx also implements the ISA's large-divisor rule: for
    2**126 < |y| < 2**128 the result is NaN if x is infinite, else a zero (signed as x*y)."""
    fmt = _same("div", x, y)
    if kind not in _DIV_KINDS:
        raise UnsupportedError(f"div: unknown kind .{kind}")
    if kind in ("approx", "full"):
        if fmt is not FMT32:
            raise UnsupportedError(f"div.{kind}.f64 does not exist in PTX (only .f32)")
        x, y = ftz_in(b, x, ftz), ftz_in(b, y, ftz)
        r = finish(b, b.fdiv(x, y), (x, y), ftz=ftz)
        if kind == "approx":
            large = b.and_(b.fcmp_ordered(">", fabs_(b, y), fc(fmt, 2.0 ** 126)),
                           is_finite(b, y))
            z = signed_zero(b, b.xor(signbit(b, x), signbit(b, y)), fmt)
            special = b.select(is_inf(b, x), fbits(fmt, fmt.canon_nan), z)
            r = b.select(b.and_(large, b.not_(is_nan(b, x))), special, r)
        return r
    x, y = ftz_in(b, x, ftz), ftz_in(b, y, ftz)
    native = b.fdiv(x, y)
    if kind == "rn":
        return finish(b, native, (x, y), ftz=ftz)
    gen = all_(b, is_finite(b, x), is_finite(b, y), b.not_(is_zero(b, x)), b.not_(is_zero(b, y)))
    if fmt is FMT32:
        # the f64 quotient of two f32 lies within 2**-53 (relative) of the exact one, and an
        # exact quotient that is not an f32 number is >= ~2**-48 away from each: same side
        q = b.fdiv(b.fpext(x, F64T), b.fpext(y, F64T))
        r = round_f64_to_f32(b, q, None, kind)
    else:
        one = fc(fmt, 1.0)
        mx, ex = split_f64(b, b.select(gen, x, one))
        my, ey = split_f64(b, b.select(gen, y, one))
        q = b.fdiv(mx, my)                                   # in (1/2, 2)
        rem = fma_(b, b.fneg(q), my, mx)                     # exact remainder of RN division
        r = round_f64_scaled(b, q, b.fmul(rem, my), b.sub(ex, ey), kind)   # sign(rem / my)
    return finish(b, b.select(gen, r, native), (x, y), ftz=ftz)


def frcp(b: ir.IRBuilder, x: ir.Value, *, kind: str = "rn", ftz: bool = False) -> ir.Value:
    """``rcp.rnd{.ftz}.f32`` / ``rcp.rnd.f64`` (IEEE 1/x), ``rcp.approx{.ftz}.f32`` (correctly
    rounded, within the 1-ulp bound) and ``rcp.approx.ftz.f64`` (§9.7.3.14: subnormal inputs
    and results flushed when ``ftz``, RN reciprocal, every NaN result the canonical
    0xfff8000000000000), as the interpreter's ``rcp_approx``."""
    fmt = fmt_of(x, "rcp")
    if kind == "approx":
        if fmt is FMT32:
            return fdiv(b, fc(fmt, 1.0), x, kind="rn", ftz=ftz)
        xx = flush(b, x) if ftz else x
        r = b.fdiv(fc(fmt, 1.0), xx)
        r = flush(b, r) if ftz else r
        return b.select(is_nan(b, r), fbits(fmt, fmt.canon_nan), r)
    if kind not in RNDS:
        raise UnsupportedError(f"rcp: unknown kind .{kind}")
    return fdiv(b, fc(fmt, 1.0), x, kind=kind, ftz=ftz)


def fsqrt(b: ir.IRBuilder, x: ir.Value, *, kind: str = "rn", ftz: bool = False) -> ir.Value:
    """``sqrt.rnd{.ftz}.f32`` / ``sqrt.rnd.f64`` and ``sqrt.approx{.ftz}.f32`` (correctly
    rounded, within its bound).  sqrt(-0) = -0, sqrt(x < 0) = NaN, sqrt(+inf) = +inf."""
    fmt = fmt_of(x, "sqrt")
    if kind == "approx":
        if fmt is not FMT32:
            raise UnsupportedError("sqrt.approx.f64 does not exist in PTX (only .f32)")
        kind = "rn"
    check_rnd(kind, "sqrt")
    x = ftz_in(b, x, ftz)
    native = sqrt_(b, x)
    if kind == "rn":
        return finish(b, native, (x,), ftz=ftz)
    gen = b.and_(is_finite(b, x), b.fcmp_ordered(">", x, fc(fmt, 0.0)))
    if fmt is FMT32:
        # sqrt of an f32 cannot come within 2**-53 (relative) of an f32 number it is not
        s = sqrt_(b, b.fpext(x, F64T))
        r = round_f64_to_f32(b, s, None, kind)
    else:
        m, e = split_f64(b, b.select(gen, x, fc(fmt, 1.0)))
        odd = b.trunc(e, ir.IntType(1))
        m = b.select(odd, b.fmul(m, fc(fmt, 2.0)), m)          # [1, 4), even exponent
        e = b.sub(e, b.zext(odd, I32))
        s = sqrt_(b, m)                                        # [1, 2)
        rem = fma_(b, b.fneg(s), s, m)                         # exact remainder
        r = round_f64_scaled(b, s, rem, b.ashr(e, ir.Constant(I32, 1)), kind)
    return finish(b, b.select(gen, r, native), (x,), ftz=ftz)
