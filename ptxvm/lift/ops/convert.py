"""Conversion (PTX ISA §9.7.9.21-22): cvt and cvt.pack, lowered through the shared conversion semantics."""

from __future__ import annotations

from llvmlite import ir

from ...ir import nodes as ptx
from ...ir.types import ScalarType
from ..function import FunctionLowering, resize
from . import lowers


def lower_cvt(fl: FunctionLowering, ins: ptx.Instruction) -> None:
    from ..semantics import cvt
    dst_t = ins.types[0]
    src_t = ins.types[1] if len(ins.types) > 1 else dst_t
    ops = ins.operands
    rnd = ins.mod("rnd") or ins.mod("irnd") or ins.mod("rnonly") or ins.mod("rna")
    flags = dict(ftz="ftz" in ins.modifiers, sat="sat" in ins.modifiers, relu="relu" in ins.modifiers,
                 satfinite="satfinite" in ins.modifiers)
    if len(ops) == 3:                  # cvt.rn.f16x2.f32 d, a, b (packed from two f32)
        r = cvt.cvt_pack_x2(fl.b, fl.read(ops[1], src_t), fl.read(ops[2], src_t), dst=dst_t.value,
                            rnd=rnd or "rn", relu=flags["relu"], satfinite=flags["satfinite"])
        fl.write(ops[0], dst_t, r)
        return
    if len(ops) != 2:
        raise fl.unsupported(ins, "has no LLVM lowering for this cvt form yet")
    x = fl.read(ops[1], src_t)
    fl.write(ops[0], dst_t, cvt.cvt(fl.b, x, dst=dst_t.value, src=src_t.value, rnd=rnd, **flags))


@lowers("cvt")
def _cvt(fl: FunctionLowering, ins: ptx.Instruction) -> None:
    if ins.form in _NARROW_FORMS:
        return _lower_narrow(fl, ins)
    dst_t, src_t = ins.types[0], ins.types[1] if len(ins.types) > 1 else ins.types[0]
    ops = ins.operands
    b = fl.b
    plain_int = (dst_t.kind in "usb" and src_t.kind in "usb" and dst_t.bits <= 64 and src_t.bits <= 64
                 and "sat" not in ins.modifiers and len(ops) == 2)
    if plain_int:
        x = fl.read(ops[1], src_t)
        fl.write(ops[0], dst_t, resize(b, x, max(dst_t.bits, 8), src_t.kind == "s"))
        return
    from .convert import lower_cvt
    lower_cvt(fl, ins)


# --- narrow floats (§9.7.9.21, formats §5.2.5) and cvt.pack (§9.7.9.22) ---------------------------

_NARROW_FORMS = ("pack-x2-rs", "fp8-from-f32", "fp8-from-half", "half-from-fp8", "ue8m0-from-f32",
                 "bf16x2-from-ue8m0", "x4-rs")


def _slot(t: str) -> int:
    return 4 if t.startswith("e2m1") else 8


def _narrow_pair(fl: FunctionLowering, ins: ptx.Instruction, src_t: str) -> list[ir.Value]:
    """[first, second] source element as i32: f32 bits of two .f32 sources or of a packed f16x2 /
    bf16x2 source's upper and lower half (exactly widened), or a packed narrow source's codes."""
    from ..semantics import cvt
    b, i32 = fl.b, ir.IntType(32)
    if src_t == "f32":
        return [b.bitcast(fl.read(o, ScalarType.F32), i32) for o in ins.operands[1:3]]
    wide = src_t in ("f16x2", "bf16x2")
    x = b.zext(fl.read(ins.operands[1], ScalarType.B32 if wide else ScalarType.B16), i32) if not wide else \
        fl.read(ins.operands[1], ScalarType.B32)
    n = 16 if wide else _slot(src_t)
    pair = [b.and_(b.lshr(x, ir.Constant(i32, n)), ir.Constant(i32, (1 << n) - 1)), b.and_(x, ir.Constant(i32, (1 << n) - 1))]
    if src_t == "f16x2":
        i16 = ir.IntType(16)
        return [b.bitcast(cvt.cvt(b, b.trunc(v, i16), dst="f32", src="f16"), i32) for v in pair]
    if src_t == "bf16x2":
        return [b.shl(v, ir.Constant(i32, 16)) for v in pair]
    return pair


def _lower_narrow(fl: FunctionLowering, ins: ptx.Instruction) -> None:
    """cvt to/from .e4m3x2 .e5m2x2 .e2m3x2 .e3m2x2 .e2m1x2 .ue8m0x2 and cvt.rs.bf16x2.f32: the first
    source element lands in the upper element of d."""
    from ..semantics import narrow
    form, dst_t, src_t = ins.form, ins.types[0].value, ins.types[-1].value
    relu, satf = "relu" in ins.modifiers, "satfinite" in ins.modifiers
    rnd = ins.mod("frnd3") or ins.mod("rnonly") or ins.mod("rs") or "rn"
    if form == "x4-rs" or (form == "pack-x2-rs" and dst_t == "f16x2"):
        raise fl.unsupported(ins, "(stochastic rounding to f16x2 or to an x4 narrow type) is not executable: the ISA "
                                  "text does not fix how the random bits align below f16's normal range or which bits "
                                  "each x4 element takes")
    b, i32 = fl.b, ir.IntType(32)
    hi, lo = _narrow_pair(fl, ins, src_t)
    if form == "pack-x2-rs":
        r = fl.read(ins.operands[3], ScalarType.B32)
        hi = narrow.bf16_rs(b, hi, b.lshr(r, ir.Constant(i32, 16)), relu=relu, satfinite=satf)
        lo = narrow.bf16_rs(b, lo, r, relu=relu, satfinite=satf)
        out_t, slot = ScalarType.B32, 16
    elif form in ("half-from-fp8", "bf16x2-from-ue8m0"):
        f = src_t[:-2]
        conv = (lambda c: narrow.ue8m0_to_bf16(b, c)) if f == "ue8m0" else (lambda c: narrow.to_f16(b, c, f, relu=relu))
        hi, lo = conv(hi), conv(lo)
        out_t, slot = ScalarType.B32, 16
    else:
        f, slot = dst_t[:-2], _slot(dst_t)
        hi, lo = (narrow.encode(b, v, f, rnd, relu=relu, satfinite=satf) for v in (hi, lo))
        out_t = ScalarType.B8 if slot == 4 else ScalarType.B16
    d = b.or_(b.shl(hi, ir.Constant(i32, slot)), lo)
    fl.write(ins.operands[0], out_t, d if out_t is ScalarType.B32 else b.trunc(d, ir.IntType(out_t.bits)))


@lowers("cvt.pack")
def _cvt_pack(fl: FunctionLowering, ins: ptx.Instruction) -> None:
    """cvt.pack.sat.conv.s32{.b32} d, a, b{, c}: d = c << 2*size | sat(a) << size | sat(b)."""
    from ..semantics import narrow
    conv = ins.mod("subbyte") or ins.types[0].value
    if conv not in narrow.PACK_RANGE or "sat" not in ins.modifiers:
        raise fl.unsupported(ins, "is not a form of cvt.pack (§9.7.9.22)")
    ops = ins.operands
    a, c = (fl.read(o, ScalarType.S32) for o in ops[1:3])
    high = fl.read(ops[3], ScalarType.B32) if int(conv[1:]) < 16 else None
    fl.write(ops[0], ScalarType.U32, narrow.pack_sat(fl.b, a, c, conv, high))
