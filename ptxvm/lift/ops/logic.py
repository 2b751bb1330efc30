"""Logic and shift instructions (PTX ISA §9.7.7): and, or, xor, not, cnot, lop3, shl, shr, shf."""

from __future__ import annotations

from ...ir import nodes as ptx
from ...ir.types import ScalarType
from ..semantics import intops as X
from . import lowers
from .common import B32, U32, _signed, _simple, _t

PRED = ScalarType.PRED


@lowers("and", "or", "xor")
def _logic(fl, ins):
    t = _t(ins)
    fn = {"and": X.and_, "or": X.or_, "xor": X.xor}[ins.opcode]
    _simple(fl, ins, fn, [t, t])


@lowers("not", "cnot")
def _not(fl, ins):
    t = _t(ins)
    _simple(fl, ins, X.not_ if ins.opcode == "not" else X.cnot, [t])


@lowers("shl", "shr")
def _shift(fl, ins):
    t = _t(ins)
    if ins.opcode == "shl":
        _simple(fl, ins, X.shl, [t, U32])
    else:
        _simple(fl, ins, lambda b, x, n: X.shr(b, x, n, signed=_signed(t)), [t, U32])


@lowers("lop3")
def _lop3(fl, ins):
    t = _t(ins)
    ops = ins.operands
    lut = ops[4]
    if not isinstance(lut, ptx.Immediate):
        raise fl.unsupported(ins, "needs a constant lookup table operand")
    x, y, z = (fl.read(o, t) for o in ops[1:4])
    d = X.lop3(fl.b, x, y, z, int(lut.value) & 0xFF)
    if ins.form != "boolop":
        fl.write(ops[0], t, d)
        return
    # `lop3.BoolOp.b32 d|p, a, b, c, immLut, q` (§9.7.8.6): p = (d != 0) BoolOp q; d may be `_`.
    if not isinstance(ops[0], ptx.Pair):
        raise fl.unsupported(ins, "needs the destination pair `d|p`")
    b = fl.b
    q = fl.read(ops[5], PRED)                       # read before d or p is written
    nz = b.icmp_unsigned("!=", d, d.type(0))
    p = b.or_(nz, q) if ins.mod("andor") == "or" else b.and_(nz, q)
    fl.write(ops[0].first, t, d)
    fl.write(ops[0].second, PRED, p)


@lowers("shf")
def _shf(fl, ins):
    direction = ins.mod("shfdir") or ("l" if "l" in ins.modifiers else "r")
    mode = ins.mod("clampwrap") or "wrap"
    _simple(fl, ins, lambda b, lo, hi, n: X.shf(b, lo, hi, n, direction=direction, mode=mode), [B32, B32, U32], B32)
