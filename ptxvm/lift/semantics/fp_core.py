"""LLVM IR building blocks for the PTX float emitters (:mod:`ptxvm.lift.semantics.fp`).

Everything here is branch-free (``select``) and never depends on the FPU's rounding mode:
every LLVM float operation used is IEEE round-to-nearest-even (no fast-math flags), and the
directed roundings ``rz rm rp`` are derived from an exactly known result.

The exact result is handled as an unevaluated pair ``hi + lo`` where ``hi`` is the
round-to-nearest value of the exact result and only the *sign* of ``lo`` is known
(``lo`` = the error of an error-free transformation).  Given that pair, the directed result
is ``hi`` or its neighbour one unit in the last place away, chosen on the bit pattern
(:func:`step`), except for subnormal results, which are rounded afresh on the subnormal grid
(:func:`round_f64_scaled`) because there ``hi`` itself may be a double rounding.

PTX result policies (same as ``ptxvm.interp.numerics.core``): every f32 NaN result is
0x7fffffff; an f64 NaN result is the first NaN operand with its quiet bit set, else
0xfff8000000000000; ``.ftz`` flushes f32 subnormal inputs and results to signed zero;
``.sat`` clamps to [0, 1] with NaN -> +0.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from llvmlite import ir

from ...errors import UnsupportedError
from ...isa import modifier_group

I1 = ir.IntType(1)
I32 = ir.IntType(32)
I64 = ir.IntType(64)
F32T = ir.FloatType()
F64T = ir.DoubleType()
RNDS = modifier_group("rnd")                 # rn rz rm rp, from isa/instructions.toml


@dataclass(frozen=True)
class Fmt:
    """Bit layout of one binary float format."""
    name: str
    ty: ir.Type
    ity: ir.IntType
    bits: int
    mant: int            # stored fraction bits
    canon_nan: int       # the NaN a result gets when no operand NaN is propagated

    @property
    def sign(self) -> int:
        return 1 << (self.bits - 1)

    @property
    def expmask(self) -> int:
        return ((1 << (self.bits - 1 - self.mant)) - 1) << self.mant

    @property
    def quiet(self) -> int:
        return 1 << (self.mant - 1)

    @property
    def inf(self) -> int:
        return self.expmask


FMT32 = Fmt("f32", F32T, I32, 32, 23, 0x7FFFFFFF)
FMT64 = Fmt("f64", F64T, I64, 64, 52, 0xFFF8000000000000)


def fmt_of(x: ir.Value, what: str = "float operation") -> Fmt:
    """The format of an LLVM ``float``/``double`` value; anything else is unsupported."""
    if isinstance(x.type, ir.FloatType):
        return FMT32
    if isinstance(x.type, ir.DoubleType):
        return FMT64
    raise UnsupportedError(f"{what}: operand type {x.type} is not .f32 (float) or .f64 (double)")


def check_rnd(rnd: str, what: str) -> None:
    if rnd not in RNDS:
        raise UnsupportedError(f"{what}: rounding modifier .{rnd} is not one of .rn .rz .rm .rp")


# ---------------------------------------------------------------------------------- constants

def ic(ty: ir.IntType, value: int) -> ir.Constant:
    """Integer constant, printed in the signed range (what LLVM's text parser accepts)."""
    v = value & ((1 << ty.width) - 1)
    if ty.width > 1 and v >> (ty.width - 1):
        v -= 1 << ty.width
    return ir.Constant(ty, v)


def fc(fmt: Fmt, value: float) -> ir.Constant:
    """Float constant of an exactly representable value."""
    return ir.Constant(fmt.ty, value)


def fbits(fmt: Fmt, bits: int) -> ir.Constant:
    """Float constant from its bit pattern (NaN payloads survive)."""
    return ic(fmt.ity, bits).bitcast(fmt.ty)


# ---------------------------------------------------------------------------------- bit views

def to_bits(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    return b.bitcast(x, fmt_of(x).ity)


def from_bits(b: ir.IRBuilder, u: ir.Value, fmt: Fmt) -> ir.Value:
    return b.bitcast(u, fmt.ty)


def signbit(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    """i1: the sign bit of ``x`` (set for -0 and negative NaNs too)."""
    fmt = fmt_of(x)
    return b.icmp_signed("<", to_bits(b, x), ic(fmt.ity, 0))


def intrinsic(b: ir.IRBuilder, name: str, ret: ir.Type, args: Sequence[ir.Value]) -> ir.Value:
    """Call an LLVM intrinsic (fully mangled name), declaring it on first use."""
    mod = b.module
    fn = mod.globals.get(name)
    if fn is None:
        fn = ir.Function(mod, ir.FunctionType(ret, [a.type for a in args]), name=name)
    return b.call(fn, list(args))


def _suffix(x: ir.Value) -> str:
    return "f32" if fmt_of(x) is FMT32 else "f64"


def fabs_(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    return intrinsic(b, f"llvm.fabs.{_suffix(x)}", x.type, [x])


def fma_(b: ir.IRBuilder, x: ir.Value, y: ir.Value, z: ir.Value) -> ir.Value:
    """IEEE fused multiply-add, one round-to-nearest rounding (``llvm.fma``)."""
    return intrinsic(b, f"llvm.fma.{_suffix(x)}", x.type, [x, y, z])


def sqrt_(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    """IEEE correctly rounded square root (``llvm.sqrt`` without fast-math flags)."""
    return intrinsic(b, f"llvm.sqrt.{_suffix(x)}", x.type, [x])


def is_nan(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    return b.fcmp_unordered("uno", x, x)


def is_finite(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    fmt = fmt_of(x)
    return b.fcmp_ordered("<", fabs_(b, x), fbits(fmt, fmt.inf))


def is_inf(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    fmt = fmt_of(x)
    return b.fcmp_ordered("==", fabs_(b, x), fbits(fmt, fmt.inf))


def is_zero(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    return b.fcmp_ordered("==", x, fc(fmt_of(x), 0.0))


def all_(b: ir.IRBuilder, *conds: ir.Value) -> ir.Value:
    r = conds[0]
    for c in conds[1:]:
        r = b.and_(r, c)
    return r


def signed_zero(b: ir.IRBuilder, neg: ir.Value, fmt: Fmt) -> ir.Value:
    """+0.0 or -0.0 according to the i1 ``neg``."""
    return b.select(neg, fbits(fmt, fmt.sign), fc(fmt, 0.0))


def zero_sum(b: ir.IRBuilder, neg_x: ir.Value, neg_y: ir.Value, fmt: Fmt, rnd: str) -> ir.Value:
    """Sign of an exactly zero sum x + y (IEEE 754 §6.3): in .rm it is -0 unless both addends
    are +0; in every other mode it is -0 only if both addends are -0.  Applies to x - x as well
    as to ±0 + ±0 (then x is a product and its sign the XOR of the factors' signs)."""
    neg = b.or_(neg_x, neg_y) if rnd == "rm" else b.and_(neg_x, neg_y)
    return signed_zero(b, neg, fmt)


# ------------------------------------------------------------------------- .ftz / NaN / .sat

def flush(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    """Subnormal -> zero of the same sign (any format; PTX .ftz uses it on f32 only)."""
    fmt = fmt_of(x)
    u = to_bits(b, x)
    sub = b.icmp_unsigned("==", b.and_(u, ic(fmt.ity, fmt.expmask)), ic(fmt.ity, 0))
    return from_bits(b, b.select(sub, b.and_(u, ic(fmt.ity, fmt.sign)), u), fmt)


def ftz_in(b: ir.IRBuilder, x: ir.Value, ftz: bool) -> ir.Value:
    """PTX ``.ftz`` on an operand: applies to .f32 only."""
    return flush(b, x) if ftz and fmt_of(x) is FMT32 else x


def quiet(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    """Set the quiet bit of a NaN, keeping sign and payload."""
    fmt = fmt_of(x)
    return from_bits(b, b.or_(to_bits(b, x), ic(fmt.ity, fmt.quiet)), fmt)


def nan_policy(b: ir.IRBuilder, r: ir.Value, inputs: Sequence[ir.Value]) -> ir.Value:
    """Replace a NaN result: f32 -> 0x7fffffff; f64 -> the first NaN input, quieted, else
    0xfff8000000000000 (PTX ISA §9.7.3: payloads are supported for double precision only).

    Done on the bit patterns: LLVM may pick any NaN for a float operation, so a float
    ``select(isnan(r), NaN, r)`` is legally folded to ``r`` by the optimizer; an integer
    select of the bits cannot be."""
    fmt = fmt_of(r)
    fill = ic(fmt.ity, fmt.canon_nan)
    if fmt is FMT64:
        for x in reversed(list(inputs)):
            fill = b.select(is_nan_bits(b, x), to_bits(b, quiet(b, x)), fill)
    # The test is a float compare (one instruction); the select stays on the bits.
    return from_bits(b, b.select(is_nan(b, r), fill, to_bits(b, r)), fmt)


def is_nan_bits(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    """NaN test on the bit pattern (exponent all ones, mantissa non-zero)."""
    fmt = fmt_of(x)
    mag = b.and_(to_bits(b, x), ic(fmt.ity, ~fmt.sign & ((1 << fmt.ity.width) - 1)))
    return b.icmp_unsigned(">", mag, ic(fmt.ity, fmt.expmask))


def saturate(b: ir.IRBuilder, r: ir.Value) -> ir.Value:
    """PTX ``.sat``: clamp to [0.0, 1.0]; NaN -> +0.0; -0.0 -> +0.0."""
    fmt = fmt_of(r)
    r = b.select(b.fcmp_ordered(">", r, fc(fmt, 1.0)), fc(fmt, 1.0), r)
    # unordered-or-<=: NaN and every non-positive value (including -0) become +0
    return b.select(b.fcmp_unordered("<=", r, fc(fmt, 0.0)), fc(fmt, 0.0), r)


def finish(b: ir.IRBuilder, r: ir.Value, inputs: Sequence[ir.Value], *, ftz: bool = False,
           sat: bool = False) -> ir.Value:
    """Result policies in the interpreter's order: .ftz flush (f32), NaN policy, .sat."""
    r = ftz_in(b, r, ftz)
    r = nan_policy(b, r, inputs)
    return saturate(b, r) if sat else r


# ------------------------------------------------------------------- error-free transformations

def two_sum(b: ir.IRBuilder, x: ir.Value, y: ir.Value) -> tuple[ir.Value, ir.Value]:
    """Knuth's TwoSum: s = RN(x + y) and e with x + y == s + e exactly (if s is finite)."""
    s = b.fadd(x, y)
    yy = b.fsub(s, x)
    xx = b.fsub(s, yy)
    e = b.fadd(b.fsub(x, xx), b.fsub(y, yy))
    return s, e


def fma_error(b: ir.IRBuilder, x: ir.Value, y: ir.Value, z: ir.Value) -> tuple[ir.Value, ir.Value]:
    """r = RN(x*y + z) and a value with the sign of the exact error x*y + z - r.

    Boldo & Muller's ErrFma (2005): u1 + u2 = x*y exactly, two TwoSums and a final sum give
    x*y + z = r + r2 + r3 exactly with r2 = RN(r2 + r3); we return r2 (its sign is the sign
    of the error).  Valid when nothing underflows or overflows: callers scale the operands
    into [2**-400, 2**400] first."""
    r = fma_(b, x, y, z)
    u1 = b.fmul(x, y)
    u2 = fma_(b, x, y, b.fneg(u1))
    a1, a2 = two_sum(b, z, u2)
    b1, b2 = two_sum(b, u1, a1)
    g = b.fadd(b.fsub(b1, r), b2)
    return r, b.fadd(g, a2)


# --------------------------------------------------------------------------- directed rounding

def step(b: ir.IRBuilder, bits: ir.Value, neg: ir.Value, bigger: ir.Value, smaller: ir.Value,
         rnd: str) -> ir.Value:
    """Directed rounding from the nearest value: ``bits`` is RN(exact) (or ±inf when RN
    overflowed), ``neg`` the sign of the exact value, ``bigger``/``smaller`` whether the exact
    magnitude is above/below |RN|.  One step of the integer bit pattern moves one ulp in
    magnitude, across binade and subnormal boundaries and from max-finite to inf."""
    ity = bits.type
    false = ir.Constant(I1, 0)
    if rnd == "rz":
        up, down = false, smaller
    elif rnd == "rp":
        up, down = b.and_(bigger, b.not_(neg)), b.and_(smaller, neg)
    elif rnd == "rm":
        up, down = b.and_(bigger, neg), b.and_(smaller, b.not_(neg))
    else:
        return bits
    return b.sub(b.add(bits, b.zext(up, ity)), b.zext(down, ity))


def round_f64_to_f32(b: ir.IRBuilder, s: ir.Value, e: ir.Value | None, rnd: str) -> ir.Value:
    """Round the exact real ``s + e`` to f32 (directed modes), where ``s`` is a nonzero finite
    double, ``e`` a double with |e| <= ulp(s)/2 (None: zero) -- or, for quotients and square
    roots, where ``s`` is known to lie on the same side of every f32 number as the exact value.

    RN24(s) is exact-or-adjacent, and s - RN24(s) is exact (Sterbenz), so its sign (then e's)
    says on which side of the f32 result the exact value lies.  An RN overflow gives ±inf and
    s - inf = -inf says "smaller", which steps to max-finite where the mode asks for it."""
    r = b.fptrunc(s, F32T)
    d = b.fsub(s, b.fpext(r, F64T))
    zero = fc(FMT64, 0.0)
    gt = b.fcmp_ordered(">", d, zero)
    lt = b.fcmp_ordered("<", d, zero)
    if e is not None:
        d0 = b.fcmp_ordered("==", d, zero)
        gt = b.or_(gt, b.and_(d0, b.fcmp_ordered(">", e, zero)))
        lt = b.or_(lt, b.and_(d0, b.fcmp_ordered("<", e, zero)))
    neg = signbit(b, s)
    bigger, smaller = b.select(neg, lt, gt), b.select(neg, gt, lt)
    return from_bits(b, step(b, to_bits(b, r), neg, bigger, smaller, rnd), FMT32)


def pow2_f64(b: ir.IRBuilder, k: ir.Value) -> ir.Value:
    """2.0**k for an i32 k in [-1022, 1023] (built from the exponent field)."""
    return from_bits(b, b.shl(b.zext(b.add(k, ic(I32, 1023)), I64), ic(I64, 52)), FMT64)


def clamp_i32(b: ir.IRBuilder, k: ir.Value, lo: int, hi: int) -> ir.Value:
    k = b.select(b.icmp_signed("<", k, ic(I32, lo)), ic(I32, lo), k)
    return b.select(b.icmp_signed(">", k, ic(I32, hi)), ic(I32, hi), k)


def split_f64(b: ir.IRBuilder, x: ir.Value) -> tuple[ir.Value, ir.Value]:
    """x == m * 2**e with |m| in [1, 2), sign of x kept, for finite nonzero x (subnormals are
    first scaled by 2**64, exactly).  Other inputs give garbage: callers select them away."""
    u = to_bits(b, x)
    sub = b.icmp_unsigned("==", b.and_(u, ic(I64, FMT64.expmask)), ic(I64, 0))
    u = to_bits(b, b.select(sub, b.fmul(x, fc(FMT64, 2.0 ** 64)), x))
    e = b.trunc(b.and_(b.lshr(u, ic(I64, 52)), ic(I64, 0x7FF)), I32)
    e = b.sub(e, b.select(sub, ic(I32, 1023 + 64), ic(I32, 1023)))
    m = b.or_(b.and_(u, ic(I64, ~FMT64.expmask)), ic(I64, 1023 << 52))
    return from_bits(b, m, FMT64), e


def round_f64_scaled(b: ir.IRBuilder, hi: ir.Value, lo: ir.Value, k: ir.Value, rnd: str) -> ir.Value:
    """Round the exact real ``(hi + lo) * 2**k`` to f64 in the directed mode ``rnd``
    (.rn never needs it: LLVM's own operations are correctly rounded to nearest).

    ``hi`` = RN53(hi + lo), a normal double (callers keep it within [2**-400, 2**400]);
    only the sign of ``lo`` is used; ``k`` is an i32.  With hi = m * 2**E0, E = E0 + k:

    * E >= -1022: m * 2**E is the RN result (built from bits; E > 1023 means RN overflowed to
      inf), then :func:`step` applies the directed mode;
    * E < -1022 (subnormal result): q = |m| * 2**(E + 1074) < 2**52 is the exact value on the
      subnormal grid, up to ``lo``; its integer part n, fraction f and sign(lo) decide the
      integer M to round to, and M is directly the result's bit pattern (M = 2**52 is the
      smallest normal)."""
    if rnd not in ("rz", "rm", "rp"):
        raise ValueError(f"round_f64_scaled: directed modes only, got {rnd!r}")
    hb = to_bits(b, hi)
    neg = b.icmp_signed("<", hb, ic(I64, 0))
    frac = b.and_(hb, ic(I64, (1 << 52) - 1))
    sign = b.and_(hb, ic(I64, FMT64.sign))
    e = b.add(b.sub(b.trunc(b.lshr(b.and_(hb, ic(I64, FMT64.expmask)), ic(I64, 52)), I32),
                    ic(I32, 1023)), k)
    zero = fc(FMT64, 0.0)
    lo_pos, lo_neg = b.fcmp_ordered(">", lo, zero), b.fcmp_ordered("<", lo, zero)
    bigger, smaller = b.select(neg, lo_neg, lo_pos), b.select(neg, lo_pos, lo_neg)

    # normal (or overflowing) result
    over = b.icmp_signed(">", e, ic(I32, 1023))
    en = b.zext(b.add(clamp_i32(b, e, -1022, 1023), ic(I32, 1023)), I64)
    nbits = b.or_(b.or_(sign, frac), b.shl(en, ic(I64, 52)))
    nbits = b.select(over, b.or_(sign, ic(I64, FMT64.inf)), nbits)
    normal = step(b, nbits, neg, b.and_(bigger, b.not_(over)), b.or_(smaller, over), rnd)

    # subnormal result: q = |m| * 2**s, exact for s in [-60, 51]; for s < -60 the exact value
    # is below 2**-59 units, and any q in (0, 1/2) rounds the same way
    s = clamp_i32(b, b.add(e, ic(I32, 1074)), -60, 51)
    m = from_bits(b, b.or_(frac, ic(I64, 1023 << 52)), FMT64)
    q = b.fmul(m, pow2_f64(b, s))
    n = b.fptoui(q, I64)
    f = b.fsub(q, b.uitofp(n, F64T))
    f0 = b.fcmp_ordered("==", f, zero)
    one = lambda c: b.zext(c, I64)
    floor_m = b.sub(n, one(b.and_(f0, smaller)))
    exact = b.and_(f0, b.not_(b.or_(bigger, smaller)))
    ceil_m = b.add(floor_m, one(b.not_(exact)))
    if rnd == "rz":
        mag = floor_m
    elif rnd == "rp":
        mag = b.select(neg, floor_m, ceil_m)
    else:
        mag = b.select(neg, ceil_m, floor_m)
    subn = b.or_(sign, mag)
    res = b.select(b.icmp_signed("<", e, ic(I32, -1022)), subn, normal)
    return from_bits(b, res, FMT64)
