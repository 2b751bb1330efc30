"""Data movement and conversion (PTX ISA §9.7.9.1 mov, §9.7.9.21 cvt, §9.7.9.22 cvta, isspacep)."""

from __future__ import annotations

from llvmlite import ir

from ...ir import nodes as ptx
from ...ir.types import ScalarType
from ..function import I64, FunctionLowering, resize
from . import lowers


@lowers("mov")
def _mov(fl: FunctionLowering, ins: ptx.Instruction) -> None:
    t = ins.types[0]
    d, a = ins.operands
    b = fl.b
    if isinstance(a, ptx.Vector):              # pack: element 0 in the low bits
        n = len(a.elements)
        ew = t.bits // n
        et = ScalarType(f"b{ew}")
        acc = ir.IntType(t.bits)(0)
        for i, e in enumerate(a.elements):
            v = resize(b, fl.read(e, et), t.bits, False)
            acc = b.or_(acc, b.shl(v, ir.IntType(t.bits)(i * ew))) if i else v
        fl.write(d, ScalarType(f"b{t.bits}"), acc)
        return
    if isinstance(d, ptx.Vector):              # unpack
        n = len(d.elements)
        ew = t.bits // n
        et = ScalarType(f"b{ew}")
        x = fl.read(a, ScalarType(f"b{t.bits}"))
        for i, e in enumerate(d.elements):
            part = b.trunc(b.lshr(x, x.type(i * ew)) if i else x, ir.IntType(ew))
            fl.write(e, et, part)
        return
    if t is ScalarType.PRED:
        fl.write(d, t, fl.read(a, t))
        return
    fl.write(d, t, fl.read(a, t))


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
    from .float_ops import lower_cvt
    lower_cvt(fl, ins)


_SPACES = ("global", "shared", "local", "const", "param")


def _space(ins: ptx.Instruction) -> str:
    s = ins.mod("space") or "generic"
    return s.split("::")[0]


@lowers("cvta")
def _cvta(fl: FunctionLowering, ins: ptx.Instruction) -> None:
    t = ins.types[0]
    d, a = ins.operands
    to_generic = ins.mod("to") is None
    x = resize(fl.b, fl.read(a, t), 64, False)
    r = fl.hooks.cvta(fl, x, _space(ins), to_generic)
    fl.write(d, t, resize(fl.b, r, max(t.bits, 8), False))


@lowers("isspacep")
def _isspacep(fl: FunctionLowering, ins: ptx.Instruction) -> None:
    d, a = ins.operands
    x = fl.read(a, ScalarType.U64)
    fl.write(d, ScalarType.PRED, fl.hooks.isspacep(fl, x, _space(ins)))


__all__ = ["I64"]
