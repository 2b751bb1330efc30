"""Texture and surface instructions on the interpreter (PTX ISA 9.0 §9.7.10 tex, tld4, txq;
§9.7.11 suld, sust, sured, suq, in ``surface``): operand readers around the shared lane-array
semantics of machine.texops / machine.surfops (which the host JIT calls too).

A texture or surface operand is a 64-bit object handle (a register or a kernel parameter) or a
module `.texref`/`.surfref` bound through ``Module.bind_texture``. A value that is no live
object's handle is a KernelFault naming the kernel argument that carried it, when one did.
"""

from __future__ import annotations

import numpy as np

from ...ir import nodes as ir
from ...ir.types import ScalarType
from ...machine import texops
from ..program import CompileContext, reader, writer
from ..state import StackFault
from . import impl


class TextureFault(StackFault):
    """A fetch the model refuses for one thread (a KernelFault naming thread and instruction)."""


def handle_source(ctx: CompileContext, ins: ir.Instruction, p: texops.Plan):
    """A per-lane reader of the object handle: a register, a kernel parameter's value, or a
    bound texture/surface reference."""
    base = p.handle
    if isinstance(base, ir.Register):
        return reader(ctx, base, ScalarType.U64, ins)
    if isinstance(base, ir.Symbol) and base.name in ctx.symbols.params:
        off = ctx.symbols.params[base.name]
        return lambda b, lanes: np.full(lanes.shape, b.params[off:off + 8].view(np.uint64)[0])
    if isinstance(base, ir.Symbol):
        name = base.name

        def ref(b, lanes):
            try:
                return np.full(lanes.shape, texops.reference_handle(b.env.textures, name), dtype=np.uint64)
            except texops.TextureError as e:
                raise TextureFault(int(lanes[0]), e.message) from None
        return ref
    raise texops.unsupported(ins, "names its texture with an operand the interpreter does not read")


def operands(ctx: CompileContext, ins: ir.Instruction):
    """(plan, handle reader, layer reader or None, coordinate readers)."""
    p = texops.plan(ins)
    layer = reader(ctx, p.layer, ScalarType.U32, ins) if p.layer is not None else None
    ctype = p.coord_type if p.op in ("tex", "tld4") else ScalarType.S32
    return p, handle_source(ctx, ins, p), layer, [reader(ctx, c, ctype, ins) for c in p.coords]


def call(ctx: CompileContext, b, lanes, fn, *args, **kw):
    """``fn(*args, where, **kw)``, a TextureError as the fault of the lane it names."""
    where = lambda h: texops.argument_of(b.params, ctx.symbols.params, h)   # noqa: E731
    try:
        return fn(*args, where, **kw)
    except texops.TextureError as e:
        raise TextureFault(int(lanes[e.index]), e.message) from None


def _fetch(ctx: CompileContext, ins: ir.Instruction, fn):
    p, handle_r, layer_r, coord_rs = operands(ctx, ins)
    ws = [writer(ctx, e, p.dtype, ins) for e in p.dests]
    pred = writer(ctx, p.pred, ScalarType.PRED, ins) if p.pred is not None else None
    lod_rs = [reader(ctx, e, ScalarType.F32, ins) for e in p.lod_operands]
    kw = (lambda b, lanes: {"lod": [r(b, lanes) for r in lod_rs]}) if lod_rs else (lambda b, lanes: {})

    def run(b, lanes):
        layer = layer_r(b, lanes) if layer_r is not None else None
        raw = call(ctx, b, lanes, fn, p, handle_r(b, lanes), layer, [r(b, lanes) for r in coord_rs],
                   **kw(b, lanes))
        for i, w in enumerate(ws):
            w(b, lanes, raw[:, i])
        if pred is not None:
            pred(b, lanes, np.ones(lanes.shape, dtype=bool))
    return run, 0, -1


@impl("tex")
def _tex(ctx: CompileContext, ins: ir.Instruction):
    return _fetch(ctx, ins, texops.tex)


@impl("tld4")
def _tld4(ctx: CompileContext, ins: ir.Instruction):
    return _fetch(ctx, ins, texops.tld4)


@impl("txq")
def query_op(ctx: CompileContext, ins: ir.Instruction):
    p = texops.plan(ins)
    d = writer(ctx, p.dests[0], ScalarType.B32, ins)
    handle_r = handle_source(ctx, ins, p)
    level_r = reader(ctx, p.level, ScalarType.U32, ins) if p.level is not None else None

    def run(b, lanes):
        level = level_r(b, lanes) if level_r is not None else None
        d(b, lanes, call(ctx, b, lanes, texops.query, p, handle_r(b, lanes), level=level))
    return run, 0, -1


__all__ = ["TextureFault", "handle_source", "operands", "call", "query_op"]
