"""LLVM IR emitters for PTX half-precision arithmetic (``.f16 .bf16 .f16x2 .bf16x2``).

Values are ``i16`` bit patterns (scalars) or ``i32`` (packed; element 0 in the low half);
``type`` is one of ``f16 bf16 f16x2 bf16x2``.  Packed forms apply the scalar operation to
each half.  Semantics are bit-identical to ``ptxvm.interp.numerics.half`` (PTX ISA 9.0 §9.7.4):

``hadd / hsub / hmul(b, x, y, *, type, rnd="rn", ftz=False, sat=False)``
``hfma(b, x, y, z, *, type, rnd="rn", ftz=False, sat=False, relu=False)``
    The exact result rounded once to nearest even (``.rn`` is the only PTX mode).  NaN
    results are the canonical ``0x7fff``; ``.ftz`` flushes subnormal inputs and subnormal
    rounded results to signed zeros (f16 only: bf16 with ``.ftz`` is unsupported, as in the
    interpreter); ``.sat`` clamps to [+0.0, 1.0] (NaN -> +0.0); ``.relu`` maps negative
    results and -0.0 to +0.0 (NaN stays NaN).
``hmin / hmax(b, x, y, *, type, ftz=False, nan=False, xorsign_abs=False, relu=False)``
    ``-0.0 < +0.0``; one NaN operand is ignored, two give the canonical NaN; ``.NaN``: any
    NaN operand gives it; ``.xorsign.abs``: min/max of the magnitudes with the sign
    ``sign(a) ^ sign(b)``.  ``.relu`` is not a half min/max modifier: UnsupportedError.
``hneg / habs(b, x, *, type, ftz=False)``: sign-bit flip / clear (NaNs too).
``hcompare(b, x, y, op, *, type, ftz=False)``: ``setp`` comparison ``eq ne lt le gt ge``
    (false with a NaN), ``equ neu ltu leu gtu geu`` (true with a NaN), ``num``, ``nan``;
    ``-0 == +0``.  Scalars give an ``i1``; x2 types give ``(lo_pred, hi_pred)``.
``hex2_approx(b, x, *, type, ftz=False)``, ``htanh_approx(b, x, *, type)``: see
    :mod:`ptxvm.lift.semantics.half_approx` (correctly rounded results, as the interpreter gives).

How the single rounding is exact without any FPU rounding mode: operands are converted
exactly to f64 (an integer significand times a power of two); a product of two halves is
exact in f64 (<= 22 significant bits, exponent inside f64's normal range) and a sum is
``s = fl64(a + b)`` plus its exact error ``t`` from Knuth's TwoSum (round-to-nearest f64,
the LLVM default on every target; no fast-math flags, so nothing is reassociated or
contracted).  The pair is rounded to the half format by integer code: the tail only
matters through its sign, folded in as a sticky bit (``m -> 4m +- 1``), which is exact
because every rounding boundary of the <= 11-bit format lies on ``s``'s 53-bit grid.
Min, max, comparisons, neg and abs are integer code on the bit patterns.
"""

from __future__ import annotations

from collections.abc import Callable

from llvmlite import ir

from ...errors import UnsupportedError
from .cvt_bits import (
    BF16,
    F16,
    F64,
    HALF,
    I1,
    I64,
    Fmt,
    apply_relu,
    c64,
    canonical_nan,
    const,
    decode,
    flush_subnormal,
    native_f16,
    round_pack,
    saturate,
)

I16 = ir.IntType(16)
I32 = ir.IntType(32)
DOUBLE = ir.DoubleType()
_FMT = {"f16": F16, "bf16": BF16}


def half_type(t: str, what: str) -> tuple[Fmt, bool]:
    """``(format, packed)`` for a half type name, or UnsupportedError naming ``what``."""
    t = t.lstrip(".")
    packed = t.endswith("x2")
    fmt = _FMT.get(t[:-2] if packed else t)
    if fmt is None:
        raise UnsupportedError(f"{what}.{t} is not a half-precision form")
    return fmt, packed


def split(b: ir.IRBuilder, x):
    """Packed ``i32`` -> (element 0 = low half, element 1 = high half) as ``i16``."""
    return b.trunc(x, I16), b.trunc(b.lshr(x, ir.Constant(I32, 16)), I16)


def pack(b: ir.IRBuilder, lo, hi):
    return b.or_(b.zext(lo, I32), b.shl(b.zext(hi, I32), ir.Constant(I32, 16)))


def per_element(b: ir.IRBuilder, packed: bool, fn: Callable, *ops):
    """Apply ``fn(*i16 operands)`` to a scalar or to each half of packed operands."""
    if not packed:
        return fn(*ops)
    halves = [split(b, o) for o in ops]
    lo = fn(*[h[0] for h in halves])
    hi = fn(*[h[1] for h in halves])
    if isinstance(lo, tuple) or lo.type == I1:
        return lo, hi
    return pack(b, lo, hi)


# ---------------------------------------------------------------------------
# exact f64 view of a half value, and the one rounding back


def to_f64(b: ir.IRBuilder, h, fmt: Fmt):
    """Exact f64 value of half bits: significand (< 2^11) as f64 times 2^e (an exact power of
    two built from bits, always a normal f64), sign applied; inf and NaN by bits."""
    d = decode(b, h, fmt)
    mant = b.uitofp(d.m, DOUBLE)                                    # exact: < 2^11
    scale = b.bitcast(b.shl(b.add(d.e, c64(1023)), c64(52)), DOUBLE)  # 2^e, e in [-133, 127]
    v = b.fmul(mant, scale)                                         # exact (power of two, no underflow)
    v = b.select(d.neg, b.fsub(ir.Constant(DOUBLE, -0.0), v), v)
    inf = b.select(d.neg, ir.Constant(DOUBLE, float("-inf")), ir.Constant(DOUBLE, float("inf")))
    v = b.select(d.is_inf, inf, v)
    return b.select(d.is_nan, ir.Constant(DOUBLE, float("nan")), v)


def two_sum(b: ir.IRBuilder, x, y):
    """Knuth's TwoSum: ``s = fl(x + y)`` and the exact error ``t = (x + y) - s``."""
    s = b.fadd(x, y)
    bb = b.fsub(s, x)
    t = b.fadd(b.fsub(x, b.fsub(s, bb)), b.fsub(y, bb))
    return s, t


def round_f64(b: ir.IRBuilder, s, t, fmt: Fmt, *, ftz: bool = False, sat: bool = False,
              relu: bool = False):
    """Round ``s + t`` (f64; ``t`` the exact tail of ``s`` or None) to ``fmt`` once, to
    nearest even; then the canonical NaN, ``.ftz`` result flush, ``.sat`` and ``.relu``."""
    d = decode(b, b.bitcast(s, I64), F64)
    m, e = d.m, d.e
    if t is not None:
        tbits = b.bitcast(t, I64)
        t_nz = b.icmp_unsigned("!=", b.and_(tbits, c64((1 << 63) - 1)), c64(0))
        t_neg = b.icmp_unsigned("!=", b.lshr(tbits, c64(63)), c64(0))
        adj = b.select(b.icmp_unsigned("==", t_neg, d.neg), c64(1), c64(-1))
        # sticky tail: 4m +- 1 at e - 2 lies strictly between the same rounding boundaries
        m = b.select(t_nz, b.add(b.shl(m, c64(2)), adj), m)
        e = b.select(t_nz, b.sub(e, c64(2)), e)
    out = round_pack(b, d.neg, m, e, fmt, "rn", ftz=ftz)
    inf = b.or_(const(fmt.ty, fmt.inf_bits), b.shl(b.zext(d.neg, fmt.ty), const(fmt.ty, fmt.nbits - 1)))
    out = b.select(d.is_inf, inf, out)
    out = b.select(d.is_nan, const(fmt.ty, 0x7FFF), out)
    if sat:
        out = saturate(b, out, fmt, d.is_nan)
    if relu:
        out = apply_relu(b, out, fmt, d.is_nan)
    return out


# ---------------------------------------------------------------------------
# add / sub / mul / fma


def _arith(op: str, b: ir.IRBuilder, ops, *, type: str, rnd: str, ftz: bool, sat: bool, relu: bool):
    fmt, packed = half_type(type, op)
    if rnd != "rn":
        raise UnsupportedError(f"{op}.{rnd}.{type.lstrip('.')} is not a PTX form (half precision rounds .rn only)")
    if ftz and fmt is BF16:
        raise UnsupportedError(f"{op}.ftz.{type.lstrip('.')} is not supported (.ftz is defined for f16 only)")
    if fmt is F16 and not (ftz or sat or relu) and native_f16(b):
        return per_element(b, packed, lambda *hs: _native_arith(b, op, hs), *ops)

    def one(*hs):
        vs = [to_f64(b, flush_subnormal(b, h, fmt) if ftz else h, fmt) for h in hs]
        if op == "add":
            s, t = two_sum(b, vs[0], vs[1])
        elif op == "sub":
            s, t = two_sum(b, vs[0], b.fsub(ir.Constant(DOUBLE, -0.0), vs[1]))
        elif op == "mul":
            s, t = b.fmul(vs[0], vs[1]), None                       # exact in f64
        else:
            s, t = two_sum(b, b.fmul(vs[0], vs[1]), vs[2])          # product exact, one TwoSum
        if t is not None:
            # the tail of an infinite or NaN sum is NaN: no tail then
            fin = b.fcmp_ordered("<", b.call(_fabs(b), [s]), ir.Constant(DOUBLE, float("inf")))
            t = b.select(fin, t, ir.Constant(DOUBLE, 0.0))
        return round_f64(b, s, t, fmt, ftz=ftz, sat=sat, relu=relu)
    return per_element(b, packed, one, *ops)


def _native_arith(b: ir.IRBuilder, op: str, hs):
    """One f16 ``op`` as LLVM ``half`` arithmetic (see cvt_bits: native_f16); NaN -> 0x7fff."""
    vs = [b.bitcast(h, HALF) for h in hs]
    if op == "fma":
        fn = b.module.globals.get("llvm.fma.f16")
        if fn is None:
            fn = ir.Function(b.module, ir.FunctionType(HALF, [HALF] * 3), name="llvm.fma.f16")
        r = b.call(fn, vs)
    else:
        r = {"add": b.fadd, "sub": b.fsub, "mul": b.fmul}[op](*vs)
    return canonical_nan(b, r, I16, 0x7FFF)


def _fabs(b: ir.IRBuilder):
    return b.module.declare_intrinsic("llvm.fabs", [DOUBLE])


def hadd(b: ir.IRBuilder, x, y, *, type: str, rnd: str = "rn", ftz: bool = False, sat: bool = False):
    """``add{.rn}{.ftz}{.sat}.{f16,f16x2}`` / ``add{.rn}.{bf16,bf16x2}``."""
    return _arith("add", b, (x, y), type=type, rnd=rnd, ftz=ftz, sat=sat, relu=False)


def hsub(b: ir.IRBuilder, x, y, *, type: str, rnd: str = "rn", ftz: bool = False, sat: bool = False):
    """``sub{.rn}{.ftz}{.sat}`` half forms."""
    return _arith("sub", b, (x, y), type=type, rnd=rnd, ftz=ftz, sat=sat, relu=False)


def hmul(b: ir.IRBuilder, x, y, *, type: str, rnd: str = "rn", ftz: bool = False, sat: bool = False):
    """``mul{.rn}{.ftz}{.sat}`` half forms."""
    return _arith("mul", b, (x, y), type=type, rnd=rnd, ftz=ftz, sat=sat, relu=False)


def hfma(b: ir.IRBuilder, x, y, z, *, type: str, rnd: str = "rn", ftz: bool = False, sat: bool = False,
         relu: bool = False):
    """``fma.rn{.ftz}{.sat|.relu}.{f16,f16x2}`` / ``fma.rn{.relu}.{bf16,bf16x2}``: one rounding."""
    return _arith("fma", b, (x, y, z), type=type, rnd=rnd, ftz=ftz, sat=sat, relu=relu)


# ---------------------------------------------------------------------------
# neg / abs / min / max / compare (integer code on the bits)


def hneg(b: ir.IRBuilder, x, *, type: str, ftz: bool = False):
    fmt, packed = half_type(type, "neg")
    return per_element(b, packed, lambda h: b.xor(flush_subnormal(b, h, fmt) if ftz else h,
                                                  ir.Constant(I16, 0x8000)), x)


def habs(b: ir.IRBuilder, x, *, type: str, ftz: bool = False):
    fmt, packed = half_type(type, "abs")
    return per_element(b, packed, lambda h: b.and_(flush_subnormal(b, h, fmt) if ftz else h,
                                                   ir.Constant(I16, 0x7FFF)), x)


def _is_nan(b: ir.IRBuilder, h, fmt: Fmt):
    return b.icmp_unsigned(">", b.and_(h, ir.Constant(I16, 0x7FFF)), ir.Constant(I16, fmt.inf_bits))


def _signed_value(b: ir.IRBuilder, h):
    """Bits -> an i32 ordered like the values (sign-magnitude to two's complement): +-0 -> 0."""
    mag = b.zext(b.and_(h, ir.Constant(I16, 0x7FFF)), I32)
    neg = b.icmp_unsigned("!=", b.and_(h, ir.Constant(I16, 0x8000)), ir.Constant(I16, 0))
    return b.select(neg, b.sub(ir.Constant(I32, 0), mag), mag)


def _total_key(b: ir.IRBuilder, h):
    """Bits -> an i32 ordered like the values with -0 < +0 (the min/max order)."""
    v = b.shl(_signed_value(b, h), ir.Constant(I32, 1))
    pos = b.icmp_unsigned("==", b.and_(h, ir.Constant(I16, 0x8000)), ir.Constant(I16, 0))
    return b.or_(v, b.zext(pos, I32))            # +0 -> 1, -0 -> 0; others keep their order


def _minmax(want_min: bool, b: ir.IRBuilder, x, y, *, type: str, ftz: bool, nan: bool,
            xorsign_abs: bool, relu: bool):
    op = "min" if want_min else "max"
    fmt, packed = half_type(type, op)
    if relu:
        raise UnsupportedError(f"{op}.relu.{type.lstrip('.')} is not supported (no .relu for half min/max)")

    def one(h1, h2):
        if ftz:
            h1, h2 = flush_subnormal(b, h1, fmt), flush_subnormal(b, h2, fmt)
        sign = b.and_(b.xor(h1, h2), ir.Constant(I16, 0x8000))
        if xorsign_abs:
            h1, h2 = b.and_(h1, ir.Constant(I16, 0x7FFF)), b.and_(h2, ir.Constant(I16, 0x7FFF))
        n1, n2 = _is_nan(b, h1, fmt), _is_nan(b, h2, fmt)
        k1, k2 = _total_key(b, h1), _total_key(b, h2)
        pick1 = b.icmp_signed("<=" if want_min else ">=", k1, k2)     # ties: the first operand
        r = b.select(pick1, h1, h2)
        r = b.select(n1, h2, b.select(n2, h1, r))                      # one NaN: the other operand
        if xorsign_abs:
            r = b.or_(r, sign)
        is_nan_r = b.and_(n1, n2) if not nan else b.or_(n1, n2)
        return b.select(is_nan_r, ir.Constant(I16, 0x7FFF), r)
    return per_element(b, packed, one, x, y)


def hmin(b: ir.IRBuilder, x, y, *, type: str, ftz: bool = False, nan: bool = False,
         xorsign_abs: bool = False, relu: bool = False):
    """``min{.ftz}{.NaN}{.xorsign.abs}`` half forms."""
    return _minmax(True, b, x, y, type=type, ftz=ftz, nan=nan, xorsign_abs=xorsign_abs, relu=relu)


def hmax(b: ir.IRBuilder, x, y, *, type: str, ftz: bool = False, nan: bool = False,
         xorsign_abs: bool = False, relu: bool = False):
    """``max{.ftz}{.NaN}{.xorsign.abs}`` half forms."""
    return _minmax(False, b, x, y, type=type, ftz=ftz, nan=nan, xorsign_abs=xorsign_abs, relu=relu)


_ORDERED = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}


def hcompare(b: ir.IRBuilder, x, y, op: str, *, type: str, ftz: bool = False):
    """``setp.op{.ftz}`` on half types: ``i1``, or ``(lo, hi)`` for x2 types."""
    fmt, packed = half_type(type, f"setp.{op}")
    op = op.lstrip(".")
    base = op[:-1] if op.endswith("u") and op[:-1] in _ORDERED else op
    if base not in _ORDERED and op not in ("num", "nan"):
        raise UnsupportedError(f"setp.{op}.{type.lstrip('.')}: unknown comparison")

    def one(h1, h2):
        if ftz:
            h1, h2 = flush_subnormal(b, h1, fmt), flush_subnormal(b, h2, fmt)
        unord = b.or_(_is_nan(b, h1, fmt), _is_nan(b, h2, fmt))
        if op == "num":
            return b.not_(unord)
        if op == "nan":
            return unord
        c = b.icmp_signed(_ORDERED[base], _signed_value(b, h1), _signed_value(b, h2))
        return b.or_(unord, c) if op != base else b.and_(b.not_(unord), c)
    return per_element(b, packed, one, x, y)


__all__ = [
    "habs",
    "hadd",
    "half_type",
    "hcompare",
    "hfma",
    "hmax",
    "hmin",
    "hmul",
    "hneg",
    "hsub",
    "pack",
    "per_element",
    "round_f64",
    "split",
    "to_f64",
    "two_sum",
]


from .half_approx import hex2_approx, htanh_approx

__all__ += ["hex2_approx", "htanh_approx"]
