"""LLVM IR emitters for PTX ``cvt`` (PTX ISA 9.0 §9.7.9.21), bit-identical to the interpreter.

Public emitters (conventions of :mod:`ptxvm.lift`: f32 ``float``, f64 ``double``, f16/bf16
``i16`` bits, packed x2 ``i32`` with element 0 low, integers ``iN`` of the PTX width):

``cvt(b, x, *, dst, src, rnd=None, ftz=False, sat=False, relu=False, satfinite=False)``
    Every scalar form: int<->int, float->int, int->float, float<->float among
    f16 bf16 f32 f64, and ``cvt.{rna,rn,rz}.tf32.f32`` (result: ``i32`` bits).
``cvt_pack_x2(b, a, b2, *, dst, rnd="rn", relu=False, satfinite=False) -> i32``
    ``cvt.rn{.relu}{.satfinite}.{f16x2,bf16x2}.f32 d, a, b``: ``a`` goes to the UPPER half
    of ``d`` and ``b`` to the lower half (the ISA's operand order).

Rules (the interpreter's, which follow the ISA):

* int -> int: truncation, or sign/zero extension by the *source* type; ``.sat`` clamps the
  source value to the destination range (a ``.bN`` destination is not clamped).
* float -> int: rounding ``.rni .rzi .rmi .rpi`` (``rn rz rm rp`` accepted as aliases), then
  clamping to the destination range; NaN -> 0.  Without a rounding modifier f32/f64
  sources round toward zero and f16/bf16 sources to nearest even (the interpreter's
  defaults; ptxas requires the modifier).  ``.ftz`` flushes a subnormal f32 or half source.
* int -> float: correctly rounded in ``.rn .rz .rm .rp`` (64-bit sources too).
* float -> float: ``.rn .rz .rm .rp`` (and ``.rna`` to f16/bf16) when narrowing, exact when
  widening; ``.rni ...`` round to an integral value in the source format first.  ``.ftz``
  flushes an f32 source and an f32 result.  ``.sat`` clamps to [+0.0, 1.0] (NaN -> +0.0);
  ``.relu`` and ``.satfinite`` apply to f16/bf16 destinations.  NaN results: f32
  ``0x7fffffff``; f16/bf16 ``0x7fff``; f64 ``0xfff8000000000000`` from f32/f64 sources and
  ``0x7fffffffffffffff`` from f16/bf16 sources.
* ``cvt.rna{.satfinite}.tf32.f32``: round to 10 fraction bits, ties away from zero; NaN ->
  0x7fffffff; ``.satfinite`` clamps to MAX_NORM (infinities included).
* ``cvt.{rn,rz}{.satfinite}{.relu}.tf32.f32``: ties to even / toward zero, low 13 bits zero;
  NaN -> 0x7fffffff (as ``.rna``); ``.relu``: negative -> +0.0.

Everything is integer-bit code from :mod:`ptxvm.lift.semantics.cvt_bits` (no FPU rounding mode).
The narrow float forms (e4m3/e5m2/e2m3/e3m2/e2m1/ue8m0, ``cvt.rs.bf16x2``) and cvt.pack are
:mod:`ptxvm.lift.semantics.narrow`'s; other forms raise :class:`ptxvm.UnsupportedError`.
"""

from __future__ import annotations

from llvmlite import ir

from ...errors import UnsupportedError
from ...isa import typeset
from .cvt_bits import (
    F32,
    F64,
    FMTS,
    HALF,
    I64,
    IRNDS,
    RNDS,
    Fmt,
    apply_relu,
    c64,
    canonical_nan,
    const,
    decode,
    flush_subnormal,
    from_bits,
    native_f16,
    rint_bits,
    round_pack,
    saturate,
    shift_round,
    to_bits,
    umin,
)

_IRND_ALIAS = {"rn": "rni", "rz": "rzi", "rm": "rmi", "rp": "rpi"}
_AS_RND = {"rni": "rn", "rzi": "rz", "rmi": "rm", "rpi": "rp"}
_HALF = tuple(t for t in typeset("half") if not t.endswith("x2"))      # f16 bf16


def _name(dst: str, src: str, rnd, ftz, sat, relu, satfinite) -> str:
    mods = [m for m, on in ((rnd, rnd), ("relu", relu), ("satfinite", satfinite), ("ftz", ftz),
                            ("sat", sat)) if on]
    return "cvt" + "".join(f".{m}" for m in mods) + f".{dst}.{src}"


def _int_info(t: str) -> tuple[int, bool, bool] | None:
    """'s32' -> (32, signed, is_bits_type); None for non-integer types."""
    if len(t) >= 2 and t[0] in "sub" and t[1:].isdigit() and int(t[1:]) in (8, 16, 32, 64):
        return int(t[1:]), t[0] == "s", t[0] == "b"
    return None


def cvt(b: ir.IRBuilder, x: ir.Value, *, dst: str, src: str, rnd: str | None = None,
        ftz: bool = False, sat: bool = False, relu: bool = False, satfinite: bool = False) -> ir.Value:
    """Emit ``cvt{.rnd}{.relu}{.satfinite}{.ftz}{.sat}.dst.src`` on ``x``; see the module docstring."""
    dst, src = dst.lstrip("."), src.lstrip(".")
    name = _name(dst, src, rnd, ftz, sat, relu, satfinite)

    def unsupported(why: str) -> UnsupportedError:
        return UnsupportedError(f"{name} {why}")

    di, si = _int_info(dst), _int_info(src)
    if dst == "tf32":
        # cvt.rna{.satfinite}.tf32.f32 and cvt.{rn,rz}{.satfinite}{.relu}.tf32.f32 (§9.7.9.21)
        if src != "f32" or rnd not in ("rna", "rn", "rz") or (rnd == "rna" and relu) or ftz or sat:
            raise unsupported("is not a tf32 form of §9.7.9.21 (cvt.rna{.satfinite}.tf32.f32, "
                              "cvt.{rn,rz}{.satfinite}{.relu}.tf32.f32)")
        if rnd == "rna":
            return _tf32_rna(b, to_bits(b, x, F32), satfinite)
        return _tf32_rn_rz(b, to_bits(b, x, F32), rnd, relu, satfinite)
    if di is not None and si is not None:
        if rnd is not None or ftz or relu or satfinite:
            raise unsupported("has modifiers an integer conversion does not take")
        return _i2i(b, x, si, di, sat)
    if (di is None and dst not in FMTS) or (si is None and src not in FMTS):
        raise unsupported("is not supported (packed/fp8/fp6/fp4 forms are not executable)")
    if di is not None:                                          # float -> int
        if relu or satfinite:
            raise unsupported("takes no .relu/.satfinite")
        sf = FMTS[src]
        if rnd is None:
            irnd = "rni" if src in _HALF else "rzi"
        else:
            irnd = _IRND_ALIAS.get(rnd, rnd)
        if irnd not in IRNDS:
            raise unsupported("needs an integer rounding modifier (.rni .rzi .rmi .rpi)")
        if src != "bf16" and not di[2] and (not ftz or irnd in ("rzi", "rni")) and native_f16(b):
            return _native_f2i(b, x, src, di, irnd)        # (a flushed subnormal rounds to 0 anyway)
        bits = to_bits(b, x, sf)
        if ftz and sf is not F64:
            bits = flush_subnormal(b, bits, sf)
        return _f2i(b, bits, sf, di, irnd)
    df = FMTS[dst]
    half_dst = dst in _HALF
    if (relu or satfinite) and not half_dst:
        raise unsupported("takes .relu/.satfinite only with an f16/bf16 destination")
    if si is not None:                                          # int -> float
        r = rnd or "rn"
        if r not in RNDS or r == "rna" or relu or satfinite:
            raise unsupported("needs .rn/.rz/.rm/.rp (and no .relu/.satfinite)")
        if r == "rn" and not sat and df in (F32, F64) and native_f16(b):
            return (b.sitofp if si[1] else b.uitofp)(x, _FLOAT[dst])
        out = _i2f(b, x, si, df, r)
        if sat:
            out = saturate(b, out, df, ir.Constant(ir.IntType(1), 0))
        return from_bits(b, out, df)
    sf = FMTS[src]
    if not (ftz or sat or relu or satfinite) and native_f16(b) and src in _FLOAT and dst in _FLOAT:
        canon = 0x7FFFFFFF if dst == "f32" else 0xFFF8000000000000
        if src != dst and rnd in (None, "rn"):
            if dst == "f64" and rnd is None:                                # exact widening
                return from_bits(b, canonical_nan(b, b.fpext(x, _FLOAT[dst]), df.ty, canon), df)
            if dst == "f32" and rnd == "rn":
                return from_bits(b, canonical_nan(b, b.fptrunc(x, _FLOAT[dst]), df.ty, canon), df)
        if src == dst and rnd in IRNDS:                                     # round to an integral value
            return from_bits(b, canonical_nan(b, _round_integral(b, x, rnd), df.ty, canon), df)
    if not (ftz or sat or relu or satfinite) and native_f16(b):
        if src == "f16" and dst in ("f32", "f64") and rnd is None:       # exact widening
            v = b.fpext(b.bitcast(x, HALF), ir.FloatType() if dst == "f32" else ir.DoubleType())
            return from_bits(b, canonical_nan(b, v, df.ty, 0x7FFFFFFF if dst == "f32" else (1 << 63) - 1), df)
        if src == "f32" and dst == "f16" and rnd == "rn":
            r = b.fptrunc(from_bits(b, to_bits(b, x, F32), F32), HALF)
            return canonical_nan(b, r, df.ty, 0x7FFF)
    if rnd is not None and rnd not in IRNDS and (rnd not in RNDS or (rnd == "rna" and not half_dst)):
        raise unsupported("has an unknown rounding modifier")
    out = _f2f(b, to_bits(b, x, sf), sf, df, rnd, ftz=ftz, satfinite=satfinite)
    if sat:
        out = saturate(b, out, df)
    if relu:
        out = apply_relu(b, out, df)
    return from_bits(b, out, df)


def cvt_pack_x2(b: ir.IRBuilder, a: ir.Value, b2: ir.Value, *, dst: str, rnd: str = "rn",
                relu: bool = False, satfinite: bool = False) -> ir.Value:
    """``cvt.rnd{.relu}{.satfinite}.{f16x2,bf16x2}.f32 d, a, b``: ``d = cvt(a) << 16 | cvt(b)``."""
    dst = dst.lstrip(".")
    if dst not in ("f16x2", "bf16x2") or rnd not in RNDS:
        raise UnsupportedError(f"cvt.{rnd}.{dst}.f32 (two sources) is not supported")
    hi = cvt(b, a, dst=dst[:-2], src="f32", rnd=rnd, relu=relu, satfinite=satfinite)
    lo = cvt(b, b2, dst=dst[:-2], src="f32", rnd=rnd, relu=relu, satfinite=satfinite)
    i32 = ir.IntType(32)
    return b.or_(b.shl(b.zext(hi, i32), ir.Constant(i32, 16)), b.zext(lo, i32))


# ---------------------------------------------------------------------------
# native forms (AMD GPUs; see cvt_bits: native_f16): exact LLVM operations

_FLOAT = {"f32": ir.FloatType(), "f64": ir.DoubleType()}
_ROUND_INTRINSIC = {"rni": "llvm.roundeven", "rzi": "llvm.trunc", "rmi": "llvm.floor", "rpi": "llvm.ceil"}


def _intrinsic(b: ir.IRBuilder, name: str, ret: ir.Type, args: list) -> ir.Value:
    fn = b.module.globals.get(name)
    if fn is None:
        fn = ir.Function(b.module, ir.FunctionType(ret, [a.type for a in args]), name=name)
    return b.call(fn, args)


def _round_integral(b: ir.IRBuilder, v, irnd: str):
    suffix = "f32" if v.type == _FLOAT["f32"] else "f64"
    return _intrinsic(b, f"{_ROUND_INTRINSIC[irnd]}.{suffix}", v.type, [v])


def _native_f2i(b: ir.IRBuilder, x, src: str, di: tuple[int, bool, bool], irnd: str):
    """Round to an integral value, then ``llvm.fpto[su]i.sat``: clamped to the destination's
    range, NaN -> 0, which is PTX's float -> int rule.  An f16 source is widened exactly first."""
    dw, dsigned, _ = di
    v = b.fpext(b.bitcast(x, HALF), _FLOAT["f32"]) if src == "f16" else x
    suffix = "f32" if v.type == _FLOAT["f32"] else "f64"
    if irnd != "rzi":
        v = _round_integral(b, v, irnd)
    ity = ir.IntType(dw)
    return _intrinsic(b, f"llvm.fpto{'s' if dsigned else 'u'}i.sat.i{dw}.{suffix}", ity, [v])


# ---------------------------------------------------------------------------
# the four families


def _i2i(b: ir.IRBuilder, x, si: tuple[int, bool, bool], di: tuple[int, bool, bool], sat: bool):
    sw, ssigned, _ = si
    dw, dsigned, dbits = di
    dty = ir.IntType(dw)
    if sat and not dbits:
        v = b.sext(x, I64) if ssigned and sw < 64 else (b.zext(x, I64) if sw < 64 else x)
        hi = (1 << (dw - 1)) - 1 if dsigned else (1 << dw) - 1
        if ssigned:
            if dsigned:
                v = b.select(b.icmp_signed("<", v, c64(-(1 << (dw - 1)))), c64(-(1 << (dw - 1))), v)
            else:
                v = b.select(b.icmp_signed("<", v, c64(0)), c64(0), v)
            if hi < (1 << 63):          # a signed value never exceeds 2^64 - 1
                v = b.select(b.icmp_signed(">", v, c64(hi)), c64(hi), v)
        else:
            v = umin(b, v, c64(hi))     # unsigned source: only the top bound can bite
        return b.trunc(v, dty) if dw < 64 else v
    if dw > sw:
        return b.sext(x, dty) if ssigned else b.zext(x, dty)
    if dw < sw:
        return b.trunc(x, dty)
    return x


def _f2i(b: ir.IRBuilder, bits, sf: Fmt, di: tuple[int, bool, bool], irnd: str):
    """Round to an integer (exactly, from the decoded significand) and clamp; NaN -> 0."""
    dw, dsigned, _ = di
    d = decode(b, bits, sf)
    lead = b.sub(c64(63), b.ctlz(d.m, ir.Constant(ir.IntType(1), 0)))
    # |x| >= 2^64 (or inf): saturates whatever the destination
    huge = b.or_(d.is_inf, b.and_(b.icmp_unsigned("!=", d.m, c64(0)),
                                  b.icmp_signed(">=", b.add(d.e, lead), c64(64))))
    k = shift_round(b, d.neg, d.m, b.sub(c64(0), d.e), _AS_RND[irnd])
    if dsigned:
        hi, lo_mag = (1 << (dw - 1)) - 1, 1 << (dw - 1)
        over_pos = b.or_(huge, b.icmp_unsigned(">", k, c64(hi)))
        over_neg = b.or_(huge, b.icmp_unsigned(">", k, c64(lo_mag)))
        val = b.select(d.neg, b.sub(c64(0), k), k)
        val = b.select(b.and_(b.not_(d.neg), over_pos), c64(hi), val)
        val = b.select(b.and_(d.neg, over_neg), c64(-lo_mag), val)
    else:
        hi = (1 << dw) - 1
        over = b.or_(huge, b.icmp_unsigned(">", k, c64(hi)))
        val = b.select(over, c64(hi), k)
        val = b.select(d.neg, c64(0), val)      # negative values round to <= 0: clamp to 0
    val = b.select(d.is_nan, c64(0), val)
    return b.trunc(val, ir.IntType(dw)) if dw < 64 else val


def _i2f(b: ir.IRBuilder, x, si: tuple[int, bool, bool], df: Fmt, rnd: str):
    sw, ssigned, _ = si
    v = x if sw == 64 else (b.sext(x, I64) if ssigned else b.zext(x, I64))
    if ssigned:
        neg = b.icmp_signed("<", v, c64(0))
        m = b.select(neg, b.sub(c64(0), v), v)      # INT64_MIN -> 2^63 as an unsigned magnitude
    else:
        neg = ir.Constant(ir.IntType(1), 0)
        m = v
    return round_pack(b, neg, m, c64(0), df, rnd)


def _nan_result(sf: Fmt, df: Fmt) -> int:
    if df is F32:
        return 0x7FFFFFFF
    if df is F64:
        return 0xFFF8000000000000 if sf in (F32, F64) else 0x7FFFFFFFFFFFFFFF
    return 0x7FFF


def _f2f(b: ir.IRBuilder, bits, sf: Fmt, df: Fmt, rnd: str | None, *, ftz: bool, satfinite: bool):
    if ftz and sf is F32:
        bits = flush_subnormal(b, bits, sf)
    if rnd in IRNDS:
        bits = rint_bits(b, bits, sf, rnd)     # exact; then convert to nearest
        rnd = "rn"
    rnd = rnd or "rn"
    d = decode(b, bits, sf)
    dty = df.ty
    out = bits if sf is df else round_pack(b, d.neg, d.m, d.e, df, rnd, satfinite=satfinite)
    if sf is not df or satfinite:
        # an infinite source stays infinite in every mode (the largest finite with .satfinite)
        big = df.max_bits if satfinite else df.inf_bits
        inf = b.or_(const(dty, big), b.shl(b.zext(d.neg, dty), const(dty, df.nbits - 1)))
        out = b.select(d.is_inf, inf, out)
    out = b.select(d.is_nan, const(dty, _nan_result(sf, df)), out)
    if ftz and df is F32:
        out = flush_subnormal(b, out, df)
    return out


def _tf32_rn_rz(b: ir.IRBuilder, u, rnd: str, relu: bool = False, satfinite: bool = False):
    """``cvt.{rn,rz}{.satfinite}{.relu}.tf32.f32`` (§9.7.9.21), as the interpreter's
    ``_tf32_rn_rz``: the result is an f32 bit pattern with the low 13 bits zero; .rn rounds the
    magnitude to 10 fraction bits with ties to even (carrying up to infinity), .rz truncates; a
    NaN gives 0x7FFFFFFF (as .rna); .satfinite: a magnitude above MAX_NORM
    (0x7F7FE000), infinities included, gives MAX_NORM with the sign kept; .relu: a negative
    result (and -0.0) gives +0.0."""
    i32 = ir.IntType(32)

    def k(v: int) -> ir.Constant:
        return ir.Constant(i32, v)
    sign = b.and_(u, k(0x80000000))
    mag = b.and_(u, k(0x7FFFFFFF))
    if rnd == "rn":
        odd = b.and_(b.lshr(mag, k(13)), k(1))
        mag_r = b.and_(b.add(b.add(mag, k(0x0FFF)), odd), k(0xFFFFE000))
    else:
        mag_r = b.and_(mag, k(0xFFFFE000))
    if satfinite:
        mag_r = b.select(b.icmp_unsigned(">", mag, k(0x7F7FE000)), k(0x7F7FE000), mag_r)
    r = b.or_(sign, mag_r)
    if relu:
        r = b.select(b.icmp_unsigned("!=", sign, k(0)), k(0), r)
    return b.select(b.icmp_unsigned(">", mag, k(0x7F800000)), k(0x7FFFFFFF), r)


def _tf32_rna(b: ir.IRBuilder, u, satfinite: bool = False):
    """Add half a tf32 ulp to the magnitude bits and clear the 13 dropped bits: ties go away
    from zero and a carry moves into the exponent (up to infinity). ``.satfinite`` (§9.7.9.21):
    a result beyond MAX_NORM (an infinite input too) is MAX_NORM 0x7F7FE000 with the sign kept."""
    i32 = ir.IntType(32)
    r = b.and_(b.add(u, ir.Constant(i32, 0x1000)), ir.Constant(i32, 0xFFFFE000))
    if satfinite:
        inf = b.icmp_unsigned(">=", b.and_(r, ir.Constant(i32, 0x7FFFFFFF)), ir.Constant(i32, 0x7F800000))
        top = b.or_(b.and_(u, ir.Constant(i32, 0x80000000)), ir.Constant(i32, 0x7F7FE000))
        r = b.select(inf, top, r)
    nan = b.icmp_unsigned(">", b.and_(u, ir.Constant(i32, 0x7FFFFFFF)), ir.Constant(i32, 0x7F800000))
    return b.select(nan, ir.Constant(i32, 0x7FFFFFFF), r)
