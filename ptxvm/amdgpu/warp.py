"""PTX warps on AMD waves (a mixin of AmdgpuHooks).

A PTX warp is 32 lanes.  On wave32 targets (RDNA) a wave is exactly one warp.  On wave64
targets (CDNA, GCN) each half of a wave is one PTX warp: lane ``l`` of the wave is lane
``l & 31`` of warp ``l >> 5``, and every exchange stays inside the lane's half.

A warp exchange needs no memory and no waiting: lanes of a wave execute together, so the
values the lanes publish are simply read across lanes —

* the participating mask is the wave's ``exec`` mask (``ballot(true)``) shifted down to the
  lane's half; lanes that exited or branched elsewhere are not in it, as in PTX;
* a published predicate (``zext i1``) becomes one ballot: another lane's value is a bit;
* any other value is fetched with ``ds_bpermute`` from lane ``(me & 32) | lane``
  (twice for 64-bit values).
"""

from __future__ import annotations

from llvmlite import ir

from ..lift.function import FunctionLowering
from ..lift.hooks import WarpView
from .llvm_ext import I1, I32, I64, call


class AmdWarpView(WarpView):
    def __init__(self, hooks: WarpHooks, fl: FunctionLowering, values: list[ir.Value]) -> None:
        b = fl.b
        self.hooks = hooks
        self.lane = hooks.lane_in_warp(fl)
        self.half = hooks.warp_base(fl)                                  # i32: 0 or 32
        self.mask = hooks.warp_ballot(fl, I1(1))
        self.slots: list[tuple[str, tuple[ir.Value, ...]]] = []
        for v in values:
            src = _zext_source(v)
            if src is not None and src.type == I1:
                self.slots.append(("bit", (hooks.warp_ballot(fl, src),)))
            elif src is not None and src.type.width <= 32:
                self.slots.append(("u32", (b.zext(src, I32) if src.type.width < 32 else src,)))
            else:
                self.slots.append(("u64", (b.trunc(v, I32), b.trunc(b.lshr(v, I64(32)), I32))))

    def ballot(self, b: ir.IRBuilder, slot: int) -> ir.Value | None:
        kind, parts = self.slots[slot]
        return parts[0] if kind == "bit" else None     # the ballot of the published predicate

    def value(self, b: ir.IRBuilder, lane: ir.Value, slot: int) -> ir.Value:
        kind, parts = self.slots[slot]
        if kind == "bit":
            return b.zext(b.and_(b.lshr(parts[0], lane), I32(1)), I64)
        index = b.shl(b.or_(self.half, b.and_(lane, I32(31))), I32(2))   # ds_bpermute takes byte addresses
        got = [call(b, "llvm.amdgcn.ds.bpermute", I32, [index, p]) for p in parts]
        if kind == "u32":
            return b.zext(got[0], I64)
        return b.or_(b.zext(got[0], I64), b.shl(b.zext(got[1], I64), I64(32)))


def _zext_source(v: ir.Value) -> ir.Value | None:
    """What a published value was widened from (the lifter publishes ``zext`` of narrow values)."""
    if isinstance(v, ir.CastInstr) and v.opname == "zext":
        return v.operands[0]
    return None


class WarpHooks:
    wave_size: int

    def wave_lane(self, fl: FunctionLowering) -> ir.Value:
        """This lane's index in its wave (``v_mbcnt``)."""
        b = fl.b
        lo = call(b, "llvm.amdgcn.mbcnt.lo", I32, [I32(-1), I32(0)])
        if self.wave_size == 32:
            return lo
        return call(b, "llvm.amdgcn.mbcnt.hi", I32, [I32(-1), lo])

    def lane_in_warp(self, fl: FunctionLowering) -> ir.Value:
        lane = self.wave_lane(fl)
        return lane if self.wave_size == 32 else fl.b.and_(lane, I32(31))

    def warp_base(self, fl: FunctionLowering) -> ir.Value:
        """The wave lane of this PTX warp's lane 0."""
        if self.wave_size == 32:
            return I32(0)
        return fl.b.and_(self.wave_lane(fl), I32(32))

    def warp_ballot(self, fl: FunctionLowering, pred: ir.Value) -> ir.Value:
        """i32: bit ``l`` set when lane ``l`` of this PTX warp is active and ``pred`` holds there."""
        b = fl.b
        if self.wave_size == 32:
            return call(b, "llvm.amdgcn.ballot.i32", I32, [pred])
        wide = call(b, "llvm.amdgcn.ballot.i64", I64, [pred])
        return b.trunc(b.lshr(wide, b.zext(self.warp_base(fl), I64)), I32)

    def warp_exchange(self, fl, ins, values):
        if ins.opcode == "bar.warp.sync" or (ins.opcode == "bar" and "warp" in ins.modifiers):
            # __syncwarp orders memory among the warp's lanes; lanes of a wave already run together.
            fl.b.fence("acq_rel", "wavefront")
        return AmdWarpView(self, fl, values)

    def warp_lockstep(self, fl, ins):
        """Lanes of a wave run in lockstep on AMD GPUs: legacy warp-synchronous code holds."""
