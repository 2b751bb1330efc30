"""Synchronisation (PTX ISA §9.7.12): bar/barrier and the memory fences membar/fence."""

from __future__ import annotations

import numpy as np

from ...ir import nodes as ir
from ...ir.types import ScalarType
from .. import barriers
from ..program import CompileContext, Control, reader, writer
from . import impl


@impl("bar", "barrier")
def _bar(ctx: CompileContext, ins: ir.Instruction):
    """`bar/barrier{.cta}.sync|arrive|red{.aligned}` (§9.7.13.1); the phase bookkeeping lives in
    ..barriers. `.aligned` promises converged warps, which lowest-PC-first scheduling never needs."""
    if ins.has("warp"):
        raise ctx.unsupported(ins, "is not executable yet")
    red = next((m for m in ins.modifiers if m in ("popc", "and", "or")), None) if ins.has("red") else None
    ops = ins.operands[1:] if red else ins.operands       # bar.red: d, a{, b}, {!}c
    bid = reader(ctx, ops[0], ScalarType.U32, ins) if ops else None
    count = reader(ctx, ops[1], ScalarType.U32, ins) if len(ops) > (2 if red else 1) else None
    pred = reader(ctx, ops[-1], ScalarType.PRED, ins) if red else None
    if ins.has("arrive"):
        if count is None:
            raise ctx.unsupported(ins, "needs a thread count: `bar.arrive a, b` (PTX ISA 9.7.13.1)")

        def run_arrive(b, lanes):
            ids = bid(b, lanes).astype(np.int64)
            counts = count(b, lanes).astype(np.int64)
            barriers.check_operands(b, lanes, ids, counts, arrive=True)
            barriers.arrive(b, lanes, ids, counts)
        return run_arrive, Control.NEXT, -1

    def run(b, lanes):
        ids = bid(b, lanes).astype(np.int64)
        counts = count(b, lanes).astype(np.int64) if count is not None else None
        barriers.check_operands(b, lanes, ids, counts, arrive=False)
        b.put(b.bar_id, lanes, ids)
        b.put(b.bar_count, lanes, counts if counts is not None else 0)
        if pred is not None:
            b.put(b.bar_pred, lanes, pred(b, lanes))
    if red:
        out_t = ScalarType.U32 if red == "popc" else ScalarType.PRED
        dst = writer(ctx, ins.operands[0], out_t, ins)

        def on_release(b, lanes):
            """The reduction over every thread of each CTA that took part, delivered to all of them."""
            cta = b.cta_slot[lanes]
            votes = b.bar_pred[lanes]
            ones = np.bincount(cta, weights=votes.astype(np.int64), minlength=b.n_ctas).astype(np.int64)
            total = np.bincount(cta, minlength=b.n_ctas)
            per = {"popc": ones, "and": ones == total, "or": ones > 0}[red]
            val = per[cta]
            dst(b, lanes, val.astype(np.uint32) if red == "popc" else val.astype(bool))
        run.on_release = on_release
    return run, Control.BARRIER, -1


@impl("membar", "fence")
def _fence(ctx, ins):
    # A single sequential executor is already sequentially consistent; nothing to do.
    return (lambda b, lanes: None), 0, -1
