"""Data movement (PTX ISA §9.7.9): mov and prmt."""

from __future__ import annotations

import numpy as np

from ...ir import nodes as ir
from ...ir.types import ScalarType
from ..numerics import intops
from ..program import CompileContext, reader, writer
from ..state import UINT
from . import impl
from .common import _result


@impl("prmt")
def _prmt(ctx, ins):
    mode = next((m for m in ins.modifiers if m in ("f4e", "b4e", "rc8", "ecl", "ecr", "rc16")), None)
    return _result(ctx, ins, ScalarType.B32, lambda a, b, c: intops.prmt(a, b, c, mode), ["b32", "b32", "b32"])


@impl("mov")
def _mov(ctx: CompileContext, ins: ir.Instruction):
    t = ins.types[0]
    if t.bits > 64:
        raise ctx.unsupported(ins, f"moves .{t.value} values, which the interpreter does not hold yet")
    d, s = ins.operands[0], ins.operands[1]
    if isinstance(d, ir.Vector) or isinstance(s, ir.Vector):
        return _pack(ctx, ins, t, d, s), 0, -1
    src, dst = reader(ctx, s, t, ins), writer(ctx, d, t, ins)
    return (lambda b, lanes: dst(b, lanes, src(b, lanes))), 0, -1


def _pack(ctx, ins, t, d, s):
    """`mov.b64 {lo, hi}, %rd` / `mov.b64 %rd, {lo, hi}`: element 0 is the least significant part."""
    vec = d if isinstance(d, ir.Vector) else s
    parts = len(vec.elements)
    pbits = t.bits // parts
    pt = ScalarType(f"b{pbits}")
    whole_t = UINT[t.bits]
    if isinstance(d, ir.Vector):
        src = reader(ctx, s, t, ins)
        dsts = [writer(ctx, e, pt, ins) for e in d.elements]

        def unpack(b, lanes):
            v = src(b, lanes)
            for i, w in enumerate(dsts):
                w(b, lanes, ((v >> whole_t(i * pbits)) & whole_t((1 << pbits) - 1)).astype(UINT[pbits]))
        return unpack
    srcs = [reader(ctx, e, pt, ins) for e in s.elements]
    dst = writer(ctx, d, t, ins)

    def pack(b, lanes):
        v = np.zeros(lanes.shape, dtype=whole_t)
        for i, r in enumerate(srcs):
            v |= r(b, lanes).astype(whole_t) << whole_t(i * pbits)
        dst(b, lanes, v)
    return pack
