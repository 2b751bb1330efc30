"""Special registers: the target gives the primitives, the lifter derives the warp registers.

A target's ``special_register`` answers what only it can know: ``%tid``, ``%ntid``, ``%ctaid``,
``%nctaid``, clocks and timers, shared-memory sizes, SM ids.  The registers of the 32-lane PTX
warp (PTX ISA §10: ``%laneid``, ``%warpid``, ``%nwarpid``, ``%lanemask_*``) are derived here,
once, from the target's warp model: ``linear_tid`` (the thread's index in its CTA, x fastest)
and ``lane_id`` (its lane in its 32-lane warp; AMD wave64 targets answer with the lane in the
half-wave, the hardware's own count).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from llvmlite import ir

from .function import I32

if TYPE_CHECKING:
    from ..ir import nodes as ptx
    from .function import FunctionLowering

WARP_SIZE = 32
_LOG2_WARP = 5


def _nwarpid(fl: FunctionLowering) -> ir.Value:
    """Warps per CTA: ceil(threads / 32) (a CTA holds at most 1,024 threads: no overflow)."""
    b = fl.b
    n = [fl.hooks.special_register(fl, "%ntid", c, 32, fl.ins) for c in "xyz"]
    return b.lshr(b.add(b.mul(b.mul(n[0], n[1]), n[2]), I32(WARP_SIZE - 1)), I32(_LOG2_WARP))


def _lanemask(which: str) -> Callable[[FunctionLowering], ir.Value]:
    def derive(fl: FunctionLowering) -> ir.Value:
        b = fl.b
        one = b.shl(I32(1), fl.hooks.lane_id(fl))      # lane < 32: in range
        lt = b.sub(one, I32(1))
        le = b.or_(lt, one)
        return {"eq": one, "lt": lt, "le": le, "gt": b.not_(le), "ge": b.not_(lt)}[which]
    return derive


DERIVED: dict[str, Callable[[FunctionLowering], ir.Value]] = {
    "%laneid": lambda fl: fl.hooks.lane_id(fl),
    "%warpid": lambda fl: fl.b.lshr(fl.hooks.linear_tid(fl), I32(_LOG2_WARP)),
    "%nwarpid": _nwarpid,
    **{f"%lanemask_{w}": _lanemask(w) for w in ("eq", "lt", "le", "gt", "ge")},
}


def special_register(fl: FunctionLowering, name: str, component: str | None, bits: int,
                     ins: ptx.Instruction | None) -> ir.Value:
    """The value of special register ``name`` (i32 or i64 bits; the caller resizes)."""
    derive = DERIVED.get(name)
    if derive is not None:
        return derive(fl)
    return fl.hooks.special_register(fl, name, component, bits, ins)
