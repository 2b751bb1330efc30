"""Conversion (PTX ISA §9.7.9.21-22): cvt (with the narrow float formats, §5.2.5) and cvt.pack."""

from __future__ import annotations

import numpy as np

from ...ir import nodes as ir
from ...ir.types import ScalarType
from ..numerics import half, narrow
from .. import numerics as num
from ..program import CompileContext, numpy_dtype, reader, writer
from ..state import FLOAT, SINT, UINT
from . import impl


def _int_to_int(v: np.ndarray, src: ScalarType, dst: ScalarType, sat: bool) -> np.ndarray:
    sv = v.view(numpy_dtype(src) if src.kind in "su" else UINT[src.bits])
    if sat and dst.kind in "su":
        info = np.iinfo(numpy_dtype(dst))
        wide = sv.astype(np.int64) if sv.dtype != np.uint64 else sv
        if sv.dtype == np.uint64:
            r = np.minimum(wide, np.uint64(info.max)) if info.max >= 0 else wide
            return r.astype(numpy_dtype(dst)).view(UINT[dst.bits])
        return np.clip(wide, info.min, info.max).astype(numpy_dtype(dst)).view(UINT[max(dst.bits, 8)])
    # Truncate or extend; extension follows the *source* signedness (PTX ISA cvt).
    if dst.bits > src.bits:
        base = SINT[src.bits] if src.kind == "s" else UINT[src.bits]
        return sv.view(base).astype(SINT[dst.bits] if src.kind == "s" else UINT[dst.bits]).view(UINT[dst.bits])
    return sv.view(UINT[src.bits]).astype(UINT[max(dst.bits, 8)])


_HALF = ("f16", "bf16")


_ROUNDINGS = ("rn", "rz", "rm", "rp", "rna", "rni", "rzi", "rmi", "rpi")


class CvtRefused(Exception):
    """A scalar ``cvt`` form the interpreter does not execute (the message says why)."""


@impl("cvt")
def _cvt(ctx: CompileContext, ins: ir.Instruction):
    if ins.form in _NARROW_FORMS:
        return _cvt_narrow(ctx, ins), 0, -1
    dst_t, src_t = ins.types[0], ins.types[1]
    if dst_t.value.endswith("x2") or src_t.value.endswith("x2") or len(ins.operands) > 2:
        return _cvt_pack(ctx, ins), 0, -1
    src = reader(ctx, ins.operands[1], src_t, ins)
    dst = writer(ctx, ins.operands[0], dst_t, ins)
    rnd = next((m for m in ins.modifiers if m in _ROUNDINGS), None)
    try:
        fn = scalar_cvt(dst_t, src_t, rnd, ftz=ins.has("ftz"), sat=ins.has("sat"),
                        relu=ins.has("relu"), satfinite=ins.has("satfinite"))
    except CvtRefused as e:
        raise ctx.unsupported(ins, str(e)) from None
    return (lambda b, lanes: dst(b, lanes, fn(src(b, lanes)))), 0, -1


def scalar_cvt(dst_t: ScalarType, src_t: ScalarType, rnd: str | None = None, *, ftz: bool = False,
               sat: bool = False, relu: bool = False, satfinite: bool = False):
    """The scalar ``cvt{.rnd}{.relu}{.satfinite}{.ftz}{.sat}.dst.src`` as a function from
    the source's raw bits (what a register reader gives) to the destination's raw bits
    (``UINT[max(bits, 8)]``).  Raises :class:`CvtRefused` for forms not executed.

    ``.relu``/``.satfinite`` apply to f16/bf16 destinations from a float source (PTX ISA
    9.0 §9.7.9.21 "Saturation modifier"); elsewhere they are refused rather than ignored.
    An integer rounding on a float -> float conversion rounds to an integral value first
    (cvt / half.py)."""
    d, s_ = dst_t.value, src_t.value
    dk, sk = dst_t.kind, src_t.kind
    out_u = UINT[max(dst_t.bits, 8)]
    if dk in "sub" and sk in "sub":
        return lambda x: _int_to_int(x, src_t, dst_t, sat)
    if d == "tf32":
        # cvt.rna{.satfinite}.tf32.f32 and cvt.{rn,rz}{.satfinite}{.relu}.tf32.f32 (§9.7.9.21)
        if s_ != "f32" or rnd not in ("rna", "rn", "rz") or (rnd == "rna" and relu) or ftz or sat:
            raise CvtRefused("is not a tf32 form of §9.7.9.21 (cvt.rna{.satfinite}.tf32.f32, "
                             "cvt.{rn,rz}{.satfinite}{.relu}.tf32.f32)")
        if rnd == "rna":
            fn = (lambda x: _tf32_rna(x, satfinite=True)) if satfinite else _tf32_rna
        else:
            fn = lambda x: _tf32_rn_rz(x, rnd, relu=relu, satfinite=satfinite)
    elif (relu or satfinite) and not (d in _HALF and sk == "f"):
        raise CvtRefused("is not executable: .relu/.satfinite apply to a float -> f16/bf16 conversion")
    elif s_ in _HALF or d in _HALF:
        fn = _half_cvt(d, s_, rnd, ftz, sat, relu, satfinite)
    elif sk == "f" and dk in "sub":                 # a .bN integer side reads as .uN
        fn = lambda x: num.cvt_f2i(x.view(FLOAT[src_t.bits]), d, rnd or "rzi", ftz=ftz)
    elif dk == "f" and sk in "sub":
        fn = lambda x: num.cvt_i2f(x.view(numpy_dtype(src_t)), s_, d, rnd or "rn", sat=sat)
    elif dk == "f" and sk == "f":
        fn = lambda x: num.cvt_f2f(x.view(FLOAT[src_t.bits]), d, rnd, ftz=ftz, sat=sat)
    else:
        raise CvtRefused("is not executable yet")
    want = numpy_dtype(dst_t) if dk != "f" or dst_t.bits in (32, 64) else np.dtype(np.uint16)

    def conv(x):
        r = np.asarray(fn(x))
        if r.dtype != want:
            # Models return either values or raw bits (half.py gives f32 results as uint32 bits).
            bits = r.dtype.kind in "ui" and want.kind == "f" and r.dtype.itemsize == want.itemsize
            r = r.view(want) if bits else r.astype(want)
        return r.view(out_u)
    return conv


def _tf32_rna(x: np.ndarray, satfinite: bool = False) -> np.ndarray:
    """`cvt.rna{.satfinite}.tf32.f32`: keep 10 mantissa bits, rounding to nearest with ties
    away from zero (adding half an ulp to the magnitude bits does exactly that; a carry moves
    into the exponent, up to infinity). NaN stays NaN (canonical). `.satfinite`: a result
    beyond the largest finite tf32 (an infinite input too) is that value, sign kept."""
    u = x.view(np.uint32)
    r = (u + np.uint32(0x1000)) & np.uint32(0xFFFFE000)
    if satfinite:
        inf = (r & np.uint32(0x7FFFFFFF)) == np.uint32(0x7F800000)
        r = np.where(inf, (r & np.uint32(0x80000000)) | np.uint32(0x7F7FE000), r)
    nan = (u & np.uint32(0x7FFFFFFF)) > np.uint32(0x7F800000)
    return np.where(nan, np.uint32(0x7FFFFFFF), r)


TF32_NAN = 0x7FFFFFFF        # NaN result of every tf32 cvt: the f32 canonical NaN (see _tf32_rn_rz)


TF32_MAX_NORM = 0x7F7FE000   # largest finite tf32: f32's top exponent, 10 fraction bits set


def _tf32_rn_rz(x: np.ndarray, rnd: str, relu: bool = False, satfinite: bool = False) -> np.ndarray:
    """`cvt.{rn,rz}{.satfinite}{.relu}.tf32.f32` (PTX ISA 9.0 §9.7.9.21, sm_90+).

    The result register (.b32, §9.7.9.21 "For .tf32 instruction type, operand d has .b32
    type") holds the value as an f32 bit pattern whose low 13 bits are zero: sign, the
    8-bit exponent and 10 fraction bits (§5.2.5.1: tf32 has f32's range and >= 10 bits of
    precision).  .rn rounds the magnitude to 10 fraction bits, ties to even (a carry moves
    into the exponent, up to infinity); .rz truncates.  f32 subnormals stay subnormal (same
    exponent range).  A NaN input gives 0x7FFFFFFF, the f32 canonical NaN, as cvt.rna does
    (.relu: "NaN results are converted to canonical NaN", .satfinite: "the result is NaN in
    the destination format"; the ISA leaves the tf32 register layout implementation defined,
    §5.2.5.1, so which NaN bits hardware writes is unverified: one value for every tf32 form).
    .satfinite: an input whose magnitude exceeds MAX_NORM (0x7F7FE000), infinities included,
    gives MAX_NORM with the input's sign.  .relu: "clamps the result to 0 if negative"
    (negative results and -0.0 give +0.0, as for the f16/bf16 destinations)."""
    u = x.view(np.uint32)
    sign = u & np.uint32(0x80000000)
    mag = u & np.uint32(0x7FFFFFFF)
    if rnd == "rn":
        odd = (mag >> np.uint32(13)) & np.uint32(1)
        mag_r = (mag + np.uint32(0x0FFF) + odd) & np.uint32(0xFFFFE000)
    elif rnd == "rz":
        mag_r = mag & np.uint32(0xFFFFE000)
    else:
        raise ValueError(f"cvt.tf32.f32: rounding .{rnd} is not .rn or .rz")
    if satfinite:
        mag_r = np.where(mag > np.uint32(TF32_MAX_NORM), np.uint32(TF32_MAX_NORM), mag_r)
    r = sign | mag_r
    if relu:
        r = np.where(sign != 0, np.uint32(0), r)
    return np.where(mag > np.uint32(0x7F800000), np.uint32(TF32_NAN), r).astype(np.uint32)


def _half_cvt(d, s_, rnd, ftz, sat, relu, satfinite):
    """Conversions to and from f16/bf16 (held as uint16 bits), on half.py's exact models.
    ``.relu``/``.satfinite`` reach here only with a half destination and a float source."""
    if s_ in _HALF and d in _HALF:
        return lambda x: half.half_to_half(x, s_, d, rnd or "rn", sat=sat, relu=relu, satfinite=satfinite)
    if s_ in _HALF and d == "f32":
        return lambda x: half.half_to_f32(x, s_, rnd, ftz=ftz, sat=sat)
    if s_ in _HALF and d == "f64":
        return lambda x: half.half_to_f64(x, s_, rnd, sat=sat)
    if s_ in _HALF:
        return lambda x: half.half_to_int(x, s_, d, rnd or "rni", ftz=ftz)
    if s_ == "f32":
        return lambda x: half.f32_to_half(x.view(np.float32), d, rnd or "rn", ftz=ftz, sat=sat, relu=relu,
                                          satfinite=satfinite)
    if s_ == "f64":
        return lambda x: half.f64_to_half(x.view(np.float64), d, rnd or "rn", sat=sat, relu=relu,
                                          satfinite=satfinite)
    return lambda x: half.int_to_half(x, s_, d, rnd or "rn", sat=sat)


def _cvt_pack(ctx, ins):
    """`cvt.rn.f16x2.f32 d, a, b` / `cvt.rn.bf16x2.f32`: two f32 into one packed register."""
    dst_t, src_t = ins.types[0], ins.types[1]
    if dst_t.value not in ("f16x2", "bf16x2") or src_t.value != "f32" or len(ins.operands) != 3:
        raise ctx.unsupported(ins, "is not executable yet")
    a, b_ = (reader(ctx, o, src_t, ins) for o in ins.operands[1:3])
    dst = writer(ctx, ins.operands[0], ScalarType.B32, ins)
    rnd = next((m for m in ins.modifiers if m in ("rn", "rz", "rm", "rp", "rna")), "rn")
    relu, satf = ins.has("relu"), ins.has("satfinite")
    fmt = dst_t.value[:-2]
    return lambda b, lanes: dst(b, lanes, np.asarray(half.cvt_x2_f32(
        a(b, lanes).view(np.float32), b_(b, lanes).view(np.float32), fmt, rnd, relu=relu, satfinite=satf)
    ).astype(np.uint32))


# --- the narrow float forms (PTX ISA 9.0 §9.7.9.21; formats §5.2.5) -------------------------------

_NARROW_FORMS = ("pack-x2-rs", "fp8-from-f32", "fp8-from-half", "half-from-fp8", "ue8m0-from-f32",
                 "bf16x2-from-ue8m0", "x4-rs")


def _slot(t: str) -> int:
    """Bits each element of a packed narrow type takes in the register (e2m3/e3m2: 6 bits in 8)."""
    return 4 if t.startswith("e2m1") else 8


def _cvt_narrow(ctx, ins):
    """cvt to and from .e4m3x2/.e5m2x2/.e2m3x2/.e3m2x2/.e2m1x2/.ue8m0x2, and cvt.rs.bf16x2.f32: the
    first source goes to the upper element of d ("d[15:8] = convert(a); d[7:0] = convert(b)")."""
    form, dst_t, src_t = ins.form, ins.types[0].value, ins.types[-1].value
    relu, satf = ins.has("relu"), ins.has("satfinite")
    rnd = next((m for m in ins.modifiers if m in ("rn", "rz", "rp", "rs")), "rn")
    if form == "x4-rs" or (form == "pack-x2-rs" and dst_t == "f16x2"):
        raise ctx.unsupported(ins, "(stochastic rounding to f16x2 or to an x4 narrow type) is not executable: "
                                   "the ISA text does not fix how the random bits align below f16's normal range "
                                   "or which bits each x4 element takes")
    values = _narrow_sources(ctx, ins, src_t)
    if form == "pack-x2-rs":
        rb = reader(ctx, ins.operands[3], ScalarType.B32, ins)
        conv = lambda b, lanes, v: [narrow.bf16_rs(x.astype(np.float32).view(np.uint32), r, relu=relu, satfinite=satf)
                                    for x, r in zip(v, _rs_halves(rb(b, lanes)))]
        out_t, slot = ScalarType.B32, 16
    elif form in ("half-from-fp8", "bf16x2-from-ue8m0"):
        f = narrow.fmt_of(src_t)
        to = (lambda c: narrow.ue8m0_to_bf16_bits(c)) if f.name == "ue8m0" else \
            (lambda c: narrow.to_f16_bits(c, f, relu=relu))
        conv = lambda b, lanes, v: [to(c) for c in v]
        out_t, slot = ScalarType.B32, 16
    else:
        f = narrow.fmt_of(dst_t)
        conv = lambda b, lanes, v: [narrow.encode(x, f, rnd, relu=relu, satfinite=satf) for x in v]
        slot = _slot(dst_t)
        out_t = ScalarType.B8 if slot == 4 else ScalarType.B16
    dst = writer(ctx, ins.operands[0], out_t, ins)
    udt = {8: np.uint8, 16: np.uint16, 32: np.uint32}[out_t.bits]

    def run(b, lanes):
        hi, lo = conv(b, lanes, values(b, lanes))
        d = (hi.astype(np.uint32) << np.uint32(slot)) | lo.astype(np.uint32)
        dst(b, lanes, d.astype(udt))
    return run


def _narrow_sources(ctx, ins, src_t: str):
    """A reader giving [first, second] element per lane: two .f32 sources as float64 values, or the
    upper and lower element of one packed source (f16x2/bf16x2 as float64 values, narrow codes as
    integers)."""
    if src_t == "f32":
        srcs = [reader(ctx, o, ScalarType.F32, ins) for o in ins.operands[1:3]]
        return lambda b, lanes: [_widen(s(b, lanes).view(np.float32)) for s in srcs]
    wide = src_t in ("f16x2", "bf16x2")
    src = reader(ctx, ins.operands[1], ScalarType.B32 if wide else ScalarType.B16, ins)
    shift = np.uint32(16 if wide else _slot(src_t))
    mask = np.uint32((1 << int(shift)) - 1)

    def elements(b, lanes):
        x = src(b, lanes).astype(np.uint32)
        pair = [(x >> shift) & mask, x & mask]
        if src_t == "f16x2":
            return [_widen(v.astype(np.uint16).view(np.float16)) for v in pair]
        if src_t == "bf16x2":
            return [_widen((v << np.uint32(16)).view(np.float32)) for v in pair]
        return pair
    return elements


def _widen(x: np.ndarray) -> np.ndarray:
    """Exact float64 values (signalling NaNs stay NaN: only NaN-ness is read)."""
    with np.errstate(invalid="ignore"):
        return x.astype(np.float64)


def _rs_halves(r: np.ndarray) -> list[np.ndarray]:
    """rbits for cvt.rs.bf16x2.f32: "upper 16-bits are used as random bits for operand a and lower
    16-bits ... for operand b"."""
    r = r.astype(np.uint32)
    return [r >> np.uint32(16), r & np.uint32(0xFFFF)]


# --- cvt.pack (PTX ISA 9.0 §9.7.9.22) -------------------------------------------------------------

_PACK_RANGE = {"u2": (0, 3), "s2": (-2, 1), "u4": (0, 15), "s4": (-8, 7), "u8": (0, 255), "s8": (-128, 127),
               "u16": (0, 65535), "s16": (-32768, 32767)}


@impl("cvt.pack")
def _cvt_pack_sat(ctx: CompileContext, ins: ir.Instruction):
    """`cvt.pack.sat.conv.s32{.b32} d, a, b{, c}`: a and b clamped to conv's range (.sat), b in
    d's lowest `size` bits, a above it; for conv of 8 bits or fewer the remaining upper bits of d
    are c's low bits (d = c << 2*size | a << size | b)."""
    conv = ins.mod("subbyte") or ins.types[0].value
    if conv not in _PACK_RANGE or not ins.has("sat"):
        raise ctx.unsupported(ins, "is not a form of cvt.pack (§9.7.9.22)")
    lo, hi = _PACK_RANGE[conv]
    size = int(conv[1:])
    a, b_ = (reader(ctx, o, ScalarType.S32, ins) for o in ins.operands[1:3])
    c = reader(ctx, ins.operands[3], ScalarType.B32, ins) if size < 16 else None
    dst = writer(ctx, ins.operands[0], ScalarType.U32, ins)
    mask = np.int64((1 << size) - 1)

    def run(b, lanes):
        ta = np.clip(a(b, lanes).view(np.int32).astype(np.int64), lo, hi) & mask
        tb = np.clip(b_(b, lanes).view(np.int32).astype(np.int64), lo, hi) & mask
        d = (ta << np.int64(size)) | tb
        if c is not None:
            d = d | (c(b, lanes).astype(np.int64) << np.int64(2 * size))
        dst(b, lanes, (d & np.int64(0xFFFFFFFF)).astype(np.uint32))
    return run, 0, -1
