"""Data movement (PTX ISA §9.7.9): mov and prmt."""

from __future__ import annotations

from llvmlite import ir

from ...ir import nodes as ptx
from ...ir.types import ScalarType
from ..semantics import intops as X
from ..function import FunctionLowering, resize
from . import lowers
from .common import B32, _simple


@lowers("prmt")
def _prmt(fl, ins):
    mode = ins.mod("prmtmode")
    _simple(fl, ins, lambda b, x, y, s: X.prmt(b, x, y, s, mode=mode), [B32, B32, B32], B32)


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
