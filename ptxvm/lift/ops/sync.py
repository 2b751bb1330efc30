"""Synchronisation (PTX ISA §9.7.12): bar/barrier and the memory fences membar/fence."""

from __future__ import annotations

from ...ir import nodes as ptx
from ...ir.types import ScalarType
from ..function import FunctionLowering, I32
from . import lowers


@lowers("membar", "fence")
def _fence(fl: FunctionLowering, ins: ptx.Instruction) -> None:
    """The host runs CTAs concurrently, so fences are real fences."""
    fl.hooks.fence(fl, ins)


@lowers("bar", "barrier")
def _bar(fl: FunctionLowering, ins: ptx.Instruction) -> None:
    ops = ins.operands
    mode = "arrive" if "arrive" in ins.modifiers else "red" if "red" in ins.modifiers else "sync"
    if "warp" in ins.modifiers:        # bar.warp.sync: lanes of a converged warp: a warp exchange
        fl.hooks.warp_exchange(fl, ins, [])
        return
    if "cluster" in ins.modifiers:
        raise fl.unsupported(ins, "synchronises a cluster")
    if mode == "red":
        # bar.red.op.pred p, a{, b}, {!}c
        dst, rest = ops[0], ops[1:]
        bid = fl.read(rest[0], ScalarType.U32)
        count = fl.read(rest[1], ScalarType.U32) if len(rest) == 3 else None
        pred = fl.read(rest[-1], ScalarType.PRED)
        redop = ins.mod("redop") or next(m for m in ins.modifiers if m in ("popc", "and", "or"))
        t = ins.types[0] if ins.types else ScalarType.PRED
        r = fl.hooks.barrier(fl, ins, bid, count, reduce=(redop, pred))
        fl.write(dst, t, r if t is ScalarType.PRED else r)
        return
    bid = fl.read(ops[0], ScalarType.U32) if ops else I32(0)
    count = fl.read(ops[1], ScalarType.U32) if len(ops) > 1 else None
    if mode == "arrive" and count is None:
        raise fl.unsupported(ins, "is refused: `bar.arrive` needs a thread count: `bar.arrive a, b` "
                                  "(PTX ISA 9.7.13.1)")
    fl.hooks.barrier(fl, ins, bid, count, arrive=(mode == "arrive"))
