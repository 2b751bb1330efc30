"""Conversion (PTX ISA §9.7.9.21): cvt, lowered through the shared conversion semantics."""

from __future__ import annotations

from ...ir import nodes as ptx
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
