"""Arithmetic shared by the integer and floating-point chapters (PTX ISA §9.7.1, §9.7.3, §9.7.4):
add, sub, mul, mad, div, rem, abs, neg, min, max, lowered to LLVM IR."""

from __future__ import annotations

from ...ir import nodes as ptx
from ...ir.types import ScalarType
from ..semantics import intops as X
from ..function import FunctionLowering
from . import lowers
from .common import _mode, _signed, _simple, _t
from .integer import _carry, _mad_cc


X2 = (ScalarType.U16X2, ScalarType.S16X2)


def _float(fl: FunctionLowering, ins: ptx.Instruction) -> bool:
    if _t(ins).kind == "f":
        from .floating import lower_float
        lower_float(fl, ins)
        return True
    return False


@lowers("add", "sub")
def _add_sub(fl, ins):
    if _float(fl, ins):
        return
    t = _t(ins)
    if "cc" in ins.modifiers:
        return _carry(fl, ins)
    fn = X.iadd if ins.opcode == "add" else X.isub
    _simple(fl, ins, lambda b, x, y: fn(b, x, y, sat="sat" in ins.modifiers, signed=_signed(t), x2=t in X2), [t, t])


def _wide(t: ScalarType) -> ScalarType:
    return ScalarType(f"{t.kind}{2 * t.bits}")


@lowers("mul")
def _mul(fl, ins):
    if _float(fl, ins):
        return
    t = _t(ins)
    mode = _mode(ins)
    _simple(fl, ins, lambda b, x, y: X.mul(b, x, y, mode=mode, signed=_signed(t)), [t, t],
            _wide(t) if mode == "wide" else t)


@lowers("mad")
def _mad(fl, ins):
    if _float(fl, ins):
        return
    if "cc" in ins.modifiers:
        return _mad_cc(fl, ins)
    t = _t(ins)
    mode = _mode(ins)
    wt = _wide(t) if mode == "wide" else t
    _simple(fl, ins, lambda b, x, y, z: X.mad(b, x, y, z, mode=mode, signed=_signed(t), sat="sat" in ins.modifiers),
            [t, t, wt], wt)


@lowers("div", "rem")
def _div(fl, ins):
    if _float(fl, ins):
        return
    t = _t(ins)
    fn = X.div if ins.opcode == "div" else X.rem
    _simple(fl, ins, lambda b, x, y: fn(b, x, y, signed=_signed(t)), [t, t])


@lowers("abs", "neg")
def _abs_neg(fl, ins):
    if _float(fl, ins):
        return
    t = _t(ins)
    _simple(fl, ins, X.iabs if ins.opcode == "abs" else X.ineg, [t])


@lowers("min", "max")
def _minmax(fl, ins):
    if _float(fl, ins):
        return
    t = _t(ins)
    fn = X.imin if ins.opcode == "min" else X.imax
    _simple(fl, ins, lambda b, x, y: fn(b, x, y, signed=_signed(t), relu="relu" in ins.modifiers, x2=t in X2), [t, t])
