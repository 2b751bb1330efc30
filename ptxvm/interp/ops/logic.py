"""Logic and shift instructions (PTX ISA §9.7.7): and, or, xor, not, cnot, lop3, shl, shr, shf."""

from __future__ import annotations

import numpy as np

from ...ir import nodes as ir
from ...ir.types import ScalarType
from ..numerics import intops
from ..program import reader, writer
from ..state import SINT, UINT
from . import impl
from .common import _result


def _bitwise(fn, n_src=2):
    def build(ctx, ins):
        t = ins.types[0]
        srcs = [reader(ctx, o, t, ins) for o in ins.operands[1:1 + n_src]]
        dst = writer(ctx, ins.operands[0], t, ins)
        return (lambda b, lanes: dst(b, lanes, fn(*[s(b, lanes) for s in srcs]))), 0, -1
    return build


impl("and")(_bitwise(np.bitwise_and))


impl("or")(_bitwise(np.bitwise_or))


impl("xor")(_bitwise(np.bitwise_xor))


impl("not")(_bitwise(np.invert, 1))


@impl("shl", "shr")
def _shift(ctx, ins):
    t = ins.types[0]
    a = reader(ctx, ins.operands[1], t, ins)
    s = reader(ctx, ins.operands[2], ScalarType.U32, ins)
    dst = writer(ctx, ins.operands[0], t, ins)
    bits = t.bits
    ut = UINT[bits]
    left = ins.opcode == "shl"
    signed = t.kind == "s" and not left

    def run(b, lanes):
        x = a(b, lanes)
        n = s(b, lanes).astype(np.uint64)
        big = n >= bits                               # PTX clamps shift amounts to the width
        k = np.where(big, 0, n).astype(ut)
        if left:
            r = np.where(big, ut(0), x << k)
        elif signed:
            sx = x.view(SINT[bits])
            r = np.where(big, sx >> SINT[bits](bits - 1), sx >> k.astype(SINT[bits])).view(ut)
        else:
            r = np.where(big, ut(0), x >> k)
        dst(b, lanes, r.astype(ut))
    return run, 0, -1


@impl("lop3")
def _lop3(ctx, ins):
    t = ins.types[0]
    lut = ins.operands[4]
    if not isinstance(lut, ir.Immediate):
        raise ctx.unsupported(ins, "needs a constant lookup table operand")
    table = int(lut.value) & 0xFF
    if ins.form != "boolop":
        return _result(ctx, ins, t, lambda a, b, c: intops.lop3(a, b, c, table, t.value), [t, t, t])
    # `lop3.BoolOp.b32 d|p, a, b, c, immLut, q` (§9.7.8.6): p = (d != 0) BoolOp q; d may be `_`.
    pair = ins.operands[0]
    if not isinstance(pair, ir.Pair):
        raise ctx.unsupported(ins, "needs the destination pair `d|p`")
    srcs = [reader(ctx, o, t, ins) for o in ins.operands[1:4]]
    q = reader(ctx, ins.operands[5], ScalarType.PRED, ins)
    d = writer(ctx, pair.first, t, ins)
    p = writer(ctx, pair.second, ScalarType.PRED, ins)
    comb = np.logical_or if ins.mod("andor") == "or" else np.logical_and

    def run(b, lanes):
        r = np.asarray(intops.lop3(*[s(b, lanes) for s in srcs], table, t.value)).astype(np.uint32)
        pv = comb(r != 0, q(b, lanes))          # q is read before d or p is written
        d(b, lanes, r)
        p(b, lanes, pv)
    return run, 0, -1


@impl("shf")
def _shf(ctx, ins):
    direction = "l" if ins.has("l") else "r"
    mode = "clamp" if ins.has("clamp") else "wrap"
    return _result(ctx, ins, ScalarType.B32, lambda a, b, c: intops.shf(a, b, c, direction, mode),
                   ["b32", "b32", "u32"])


@impl("cnot")
def _cnot(ctx, ins):
    t = ins.types[0]
    return _result(ctx, ins, t, lambda a: intops.cnot(a, t.value), [t])
