"""LLVM IR emitters for PTX float min/max, abs/neg/copysign, comparisons and testp
(PTX ISA 9.0 §9.7.3.1-2, 9.7.3.9-12, §9.7.6-7 "Floating Point Comparison").

Bit-identical to ``ptxvm.interp.numerics.arith``: abs/neg/copysign are bit operations (NaN
payloads kept); ``.ftz`` (f32 only) flushes subnormal operands first.
"""

from __future__ import annotations

from llvmlite import ir

from ...errors import UnsupportedError
from .fp_core import (
    FMT32,
    Fmt,
    fabs_,
    fbits,
    fc,
    fmt_of,
    from_bits,
    ftz_in,
    ic,
    is_nan,
    quiet,
    signbit,
    to_bits,
)


def _pair(what: str, x: ir.Value, y: ir.Value) -> Fmt:
    fmt = fmt_of(x, what)
    if fmt_of(y, what) is not fmt:
        raise UnsupportedError(f"{what}: operands of different float types")
    return fmt


def _minmax(b: ir.IRBuilder, x: ir.Value, y: ir.Value, ftz: bool, nan: bool, want_min: bool) -> ir.Value:
    what = "min" if want_min else "max"
    fmt = _pair(what, x, y)
    x, y = ftz_in(b, x, ftz), ftz_in(b, y, ftz)
    xn, yn = is_nan(b, x), is_nan(b, y)
    # -0 < +0: on equal values pick by sign bit
    eq = b.fcmp_ordered("==", x, y)
    if want_min:
        pick_x = b.or_(b.fcmp_ordered("<", x, y), b.and_(eq, signbit(b, x)))
    else:
        pick_x = b.or_(b.fcmp_ordered(">", x, y), b.and_(eq, b.not_(signbit(b, x))))
    r = b.select(pick_x, x, y)
    r = b.select(xn, y, r)            # one NaN operand: the other one
    r = b.select(yn, x, r)
    both = b.and_(xn, yn)
    canon = fbits(fmt, fmt.canon_nan)
    if fmt is FMT32:
        return b.select(b.or_(xn, yn) if nan else both, canon, r)
    if nan:                           # .NaN: any NaN operand gives the canonical NaN
        return b.select(b.or_(xn, yn), canon, r)
    return b.select(both, quiet(b, x), r)


def _minmax_ext(b: ir.IRBuilder, x: ir.Value, y: ir.Value, z: ir.Value | None, ftz: bool, nan: bool,
                abs_: bool, xorsign: bool, want_min: bool) -> ir.Value:
    """``.abs``, ``.xorsign.abs`` and three-input f32 min/max, the Semantics block of PTX ISA 9.0
    §9.7.3.11-12: xorsign = sign(a) ^ sign(b) taken before ``.abs``; ``.abs`` clears the operands'
    sign bits; d = two_inputs(a, b), then d = two_inputs(d, c); a non-NaN d gets the xorsign sign
    bit (a NaN d stays the canonical 0x7fffffff).  Same as ``arith._minmax_f32_ext``."""
    what = "min" if want_min else "max"
    fmt = _pair(what, x, y)
    if fmt is not FMT32 or (z is not None and fmt_of(z, what) is not fmt):
        raise UnsupportedError(f"{what}: .abs, .xorsign.abs and three inputs are .f32 forms only")
    if xorsign and z is not None:
        raise UnsupportedError(f"{what}: .xorsign cannot be specified for three inputs")
    xs = [ftz_in(b, v, ftz) for v in ((x, y) if z is None else (x, y, z))]
    sign = ic(fmt.ity, fmt.sign)
    if xorsign:
        xsign = b.and_(b.xor(to_bits(b, xs[0]), to_bits(b, xs[1])), sign)
    if abs_:
        xs = [from_bits(b, b.and_(to_bits(b, v), ic(fmt.ity, ~fmt.sign)), fmt) for v in xs]
    r = _minmax(b, xs[0], xs[1], False, nan, want_min)
    if z is not None:
        r = _minmax(b, r, xs[2], False, nan, want_min)
    if xorsign:
        signed = from_bits(b, b.or_(b.and_(to_bits(b, r), ic(fmt.ity, ~fmt.sign)), xsign), fmt)
        r = b.select(is_nan(b, r), r, signed)
    return r


def fmin(b: ir.IRBuilder, x: ir.Value, y: ir.Value, z: ir.Value | None = None, *, ftz: bool = False,
         nan: bool = False, abs_: bool = False, xorsign: bool = False) -> ir.Value:
    """``min{.ftz}{.NaN}.f32`` / ``min.f64``: a NaN operand is ignored; both NaN -> NaN (f32
    0x7fffffff, f64 the quieted first operand); ``.NaN``: any NaN -> canonical NaN.
    ``min{.ftz}{.NaN}{.xorsign.abs}.f32 d, a, b`` and ``min{.ftz}{.NaN}{.abs}.f32 d, a, b, c``
    (``z``): see :func:`_minmax_ext` (§9.7.3.11)."""
    if z is not None or abs_ or xorsign:
        return _minmax_ext(b, x, y, z, ftz, nan, abs_, xorsign, True)
    return _minmax(b, x, y, ftz, nan, True)


def fmax(b: ir.IRBuilder, x: ir.Value, y: ir.Value, z: ir.Value | None = None, *, ftz: bool = False,
         nan: bool = False, abs_: bool = False, xorsign: bool = False) -> ir.Value:
    """``max{.ftz}{.NaN}{.xorsign.abs}.f32`` / three-input ``max{.ftz}{.NaN}{.abs}.f32`` /
    ``max.f64``; mirror of :func:`fmin` (+0 > -0; §9.7.3.12)."""
    if z is not None or abs_ or xorsign:
        return _minmax_ext(b, x, y, z, ftz, nan, abs_, xorsign, False)
    return _minmax(b, x, y, ftz, nan, False)


def fabs(b: ir.IRBuilder, x: ir.Value, *, ftz: bool = False) -> ir.Value:
    """``abs{.ftz}.f32`` / ``abs.f64``: clear the sign bit."""
    fmt = fmt_of(x, "abs")
    x = ftz_in(b, x, ftz)
    return from_bits(b, b.and_(to_bits(b, x), ic(fmt.ity, ~fmt.sign)), fmt)


def fneg(b: ir.IRBuilder, x: ir.Value, *, ftz: bool = False) -> ir.Value:
    """``neg{.ftz}.f32`` / ``neg.f64``: flip the sign bit."""
    fmt = fmt_of(x, "neg")
    x = ftz_in(b, x, ftz)
    return from_bits(b, b.xor(to_bits(b, x), ic(fmt.ity, fmt.sign)), fmt)


def copysign(b: ir.IRBuilder, x: ir.Value, y: ir.Value) -> ir.Value:
    """``copysign.type d, a, b``: the ISA copies the sign of the FIRST operand into the second,
    so the result is y's magnitude (payload included) with x's sign bit."""
    fmt = _pair("copysign", x, y)
    s = ic(fmt.ity, fmt.sign)
    mag = b.and_(to_bits(b, y), ic(fmt.ity, ~fmt.sign))
    return from_bits(b, b.or_(mag, b.and_(to_bits(b, x), s)), fmt)


# LLVM fcmp predicates: ordered "o*" are false on NaN, unordered "u*" true on NaN
_CMP = {"eq": ("o", "=="), "ne": ("o", "!="), "lt": ("o", "<"), "le": ("o", "<="),
        "gt": ("o", ">"), "ge": ("o", ">="), "equ": ("u", "=="), "neu": ("u", "!="),
        "ltu": ("u", "<"), "leu": ("u", "<="), "gtu": ("u", ">"), "geu": ("u", ">="),
        "num": ("o", "ord"), "nan": ("u", "uno")}


def fcompare(b: ir.IRBuilder, x: ir.Value, y: ir.Value, op: str, *, ftz: bool = False) -> ir.Value:
    """setp/set float comparison -> i1.  Ordered ops (``ne`` included) are false when either
    operand is NaN, the ``...u`` ops true; ``num``: neither NaN; ``nan``: either NaN; +0 == -0."""
    _pair("setp", x, y)
    if op not in _CMP:
        raise UnsupportedError(f"setp: unknown float comparison .{op}")
    x, y = ftz_in(b, x, ftz), ftz_in(b, y, ftz)
    kind, pred = _CMP[op]
    if kind == "o":
        return b.fcmp_ordered(pred, x, y)
    return b.fcmp_unordered(pred, x, y)


TESTP_OPS = ("finite", "infinite", "number", "notanumber", "normal", "subnormal")


def testp(b: ir.IRBuilder, x: ir.Value, op: str) -> ir.Value:
    """``testp.op.type`` -> i1.  As the ISA says, ±0 are *normal*; subnormal = finite,
    nonzero and below the smallest normal."""
    fmt = fmt_of(x, "testp")
    if op not in TESTP_OPS:
        raise UnsupportedError(f"testp: unknown operator .{op}")
    a = fabs_(b, x)
    inf = fbits(fmt, fmt.inf)
    if op == "finite":
        return b.fcmp_ordered("<", a, inf)
    if op == "infinite":
        return b.fcmp_ordered("==", a, inf)
    if op == "number":
        return b.fcmp_ordered("ord", x, x)
    if op == "notanumber":
        return b.fcmp_unordered("uno", x, x)
    tiny = fbits(fmt, 1 << fmt.mant)                   # smallest normal
    sub = b.and_(b.fcmp_ordered("<", a, tiny), b.fcmp_ordered("!=", a, fc(fmt, 0.0)))
    if op == "subnormal":
        return sub
    return b.and_(b.fcmp_ordered("<", a, inf), b.not_(sub))
