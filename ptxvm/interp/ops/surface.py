"""Surface loads, stores and reductions on the interpreter (PTX ISA 9.0 §9.7.11 suld.b, sust.b,
sured.b, suq): operand readers around machine.surfops (suq shares txq's query)."""

from __future__ import annotations

import numpy as np

from ...ir import nodes as ir
from ...machine import surfops
from ..program import CompileContext, reader, writer
from . import impl
from .texture import call, operands, query_op


@impl("suq")
def _suq(ctx: CompileContext, ins: ir.Instruction):
    return query_op(ctx, ins)


@impl("suld")
def _suld(ctx: CompileContext, ins: ir.Instruction):
    p, handle_r, layer_r, coord_rs = operands(ctx, ins)
    ws = [writer(ctx, e, p.dtype, ins) for e in p.dests]

    def run(b, lanes):
        layer = layer_r(b, lanes) if layer_r is not None else None
        vals = call(ctx, b, lanes, surfops.suld, p, handle_r(b, lanes), layer, [r(b, lanes) for r in coord_rs])
        for i, w in enumerate(ws):
            w(b, lanes, np.ascontiguousarray(vals[:, i]))
    return run, 0, -1


@impl("sust", "sured")
def _store(ctx: CompileContext, ins: ir.Instruction):
    p, handle_r, layer_r, coord_rs = operands(ctx, ins)
    rs = [reader(ctx, e, p.dtype, ins) for e in p.values]
    fn = surfops.sust if p.op == "sust" else surfops.sured

    def run(b, lanes):
        layer = layer_r(b, lanes) if layer_r is not None else None
        values = [r(b, lanes) for r in rs]
        call(ctx, b, lanes, fn, p, handle_r(b, lanes), layer, [r(b, lanes) for r in coord_rs],
             values if p.op == "sust" else values[0])
    return run, 0, -1
