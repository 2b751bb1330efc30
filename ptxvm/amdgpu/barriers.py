"""CTA barriers on AMD GPUs (PTX ISA §9.7.13.1 bar/barrier, a mixin of AmdgpuHooks).

A workgroup has one hardware barrier (``s_barrier``), which waits for every wave.  PTX has
sixteen per CTA, each with an optional thread count and an arrive-only form:

* no count, or a count equal to the block's size, on an id no `bar.arrive` uses: ``s_barrier``
  (a run-time test against ``%ntid``: the count is often a register);
* anything else (a subset of the block, an id some `bar.arrive` uses, `bar.red` with a count):
  per-id counters in LDS.  A thread adds one to ``arrived[id]``; the thread that completes the
  count clears it and advances ``generation[id]``; a `bar.sync` thread waits (``s_sleep``) until
  the generation moves.  Threads are counted one by one, as the interpreter counts them.

The LDS counters spin, so a wait only ends when the threads it waits for can run: those of other
waves always can, but the lanes of its own wave (the two PTX warps of a wave64 on gfx9) on the
other side of a branch cannot -- the wave runs one side after the other.  Producer/consumer
barriers whose two roles share a wave therefore hang on wave64 (see docs/hip-loading.md).
"""

from __future__ import annotations

from llvmlite import ir

from ..ir import nodes as ptx
from ..lift.function import FunctionLowering
from .llvm_ext import I32, LDS, VOID, ScopedAtomicRMW, ScopedLoadAtomic, call

NAMED_BARRIERS = 16                   # PTX ISA §9.7.13.1: barriers 0..15 per CTA
_COUNTERS = "__ptx_named_barriers"    # [16 x arrived][16 x generation][16 x reduction] in LDS


class BarrierHooks:
    """Barriers: ``s_barrier`` where the hardware can express them, LDS counters otherwise."""

    def barrier(self, fl, ins, barrier_id, count, *, arrive=False, reduce=None):
        lds_only = arrive or self._arrived_on(fl, ins)
        if count is None and not lds_only:
            # Without a count every thread of the block takes part, whatever the barrier id.
            return self._barrier(fl) if reduce is None else self._barrier_reduce(fl, ins, *reduce)
        total = count if count is not None else self.block_threads(fl)
        if lds_only:
            return self._counted(fl, barrier_id, total, arrive, reduce)
        b = fl.b
        with b.if_else(b.icmp_unsigned("==", count, self.block_threads(fl))) as (whole, part):
            with whole:
                r_hw = self._barrier(fl) if reduce is None else self._barrier_reduce(fl, ins, *reduce)
                hw_end = b.block
            with part:
                r_lds = self._counted(fl, barrier_id, total, arrive, reduce)
                lds_end = b.block
        if reduce is None:
            return None
        result = b.phi(r_hw.type)
        result.add_incoming(r_hw, hw_end)
        result.add_incoming(r_lds, lds_end)
        return result

    def block_threads(self, fl: FunctionLowering) -> ir.Value:
        b = fl.b
        return b.mul(self.ntid(fl, 0), b.mul(self.ntid(fl, 1), self.ntid(fl, 2)))

    def _arrive_ids(self, fl: FunctionLowering) -> frozenset[int] | None:
        """Barrier ids some `bar.arrive` of the module names (None: one names a register, so
        every counted barrier takes the LDS path).  An id arrived at without waiting cannot be
        ``s_barrier`` anywhere: its waiting side would never meet the arriving one."""
        known = getattr(self, "_arrive_cache", False)
        if known is not False:
            return known
        ids: set[int] = set()
        for f in fl.ml.module.functions.values():
            for i in (f.body.instructions() if f.body is not None else ()):
                if i.opcode in ("bar", "barrier") and "arrive" in i.modifiers and i.operands:
                    op = i.operands[0]
                    if not isinstance(op, ptx.Immediate):
                        self._arrive_cache = None
                        return None
                    ids.add(int(op.value))
        result = frozenset(ids)
        self._arrive_cache = result
        return result

    def _arrived_on(self, fl: FunctionLowering, ins: ptx.Instruction) -> bool:
        """Whether this barrier's id is one a `bar.arrive` may name (so it must count in LDS)."""
        ids = self._arrive_ids(fl)
        if ids is None:
            return True
        if not ids:
            return False
        at = 1 if "red" in ins.modifiers else 0
        first = ins.operands[at] if len(ins.operands) > at else None
        if first is None:
            return 0 in ids
        return not isinstance(first, ptx.Immediate) or int(first.value) in ids

    # ------------------------------------------------------------------ the LDS counters
    def _counters(self, llmod: ir.Module) -> ir.GlobalVariable:
        gv = llmod.globals.get(_COUNTERS)
        if gv is None:
            gv = ir.GlobalVariable(llmod, ir.ArrayType(I32, 3 * NAMED_BARRIERS), _COUNTERS, addrspace=LDS)
            gv.linkage = "internal"
            gv.initializer = ir.Constant(gv.value_type, ir.Undefined)
            gv.align = 4
        return gv

    def uses_counters(self, kernel: ptx.Function, functions) -> bool:
        """Whether ``kernel`` (or a `.func`) has a barrier that may take the LDS path: one with
        a count or an arrive, or a `bar.red` with a count."""
        for f in [kernel, *(g for g in functions.values() if not g.is_kernel)]:
            for i in (f.body.instructions() if f.body is not None else ()):
                if i.opcode in ("bar", "barrier") and "warp" not in i.modifiers and "cluster" not in i.modifiers:
                    n = len(i.operands) - (2 if "red" in i.modifiers else 0)
                    if "arrive" in i.modifiers or n > 1:
                        return True
        return False

    def init_counters(self, fl: FunctionLowering) -> None:
        """At kernel entry: clear the arrival counts (LDS starts undefined), then one
        ``s_barrier`` so no thread arrives before they are clear."""
        b = fl.b
        tid = self.linear_tid(fl)
        with b.if_then(b.icmp_unsigned("<", tid, I32(NAMED_BARRIERS))):
            b.store(I32(0), self._slot(fl, 0, tid))
        self._barrier(fl)

    def _slot(self, fl: FunctionLowering, table: int, index: ir.Value) -> ir.Value:
        gv = self._counters(fl.ml.llmod)
        i = fl.b.add(fl.b.and_(index, I32(NAMED_BARRIERS - 1)), I32(table * NAMED_BARRIERS))
        return fl.b.gep(gv, [I32(0), i], inbounds=True)

    def _rmw(self, fl: FunctionLowering, op: str, p: ir.Value, v: ir.Value, order: str) -> ir.Value:
        instr = ScopedAtomicRMW(fl.b.block, op, p, v, order, "")
        instr.scope = "workgroup"
        fl.b._insert(instr)
        return instr

    def _load(self, fl: FunctionLowering, p: ir.Value) -> ir.Value:
        instr = ScopedLoadAtomic(fl.b.block, p, "monotonic", 4, "")
        instr.scope = "workgroup"
        fl.b._insert(instr)
        return instr

    def _counted(self, fl: FunctionLowering, bid: ir.Value, total: ir.Value, arrive: bool,
                 reduce: tuple[str, ir.Value] | None) -> ir.Value | None:
        """One barrier on the LDS counters; ``bar.red``: two, the sum counted in between (the
        thread completing the first clears the sum: every participant has read the last one)."""
        if reduce is None:
            self._lds_phase(fl, bid, total, arrive, None)
            return None
        op, pred = reduce
        b = fl.b
        red = self._slot(fl, 2, bid)
        self._lds_phase(fl, bid, total, False, red)
        counted = b.not_(pred) if op == "and" else pred
        with b.if_then(counted):
            self._rmw(fl, "add", red, I32(1), "monotonic")
        self._lds_phase(fl, bid, total, False, None)
        n = self._load(fl, red)
        if op == "popc":
            return n
        return b.icmp_unsigned("==" if op == "and" else "!=", n, I32(0))

    def _lds_phase(self, fl: FunctionLowering, bid: ir.Value, total: ir.Value, arrive: bool,
                   clear: ir.Value | None) -> None:
        b = fl.b
        arrived, gen = self._slot(fl, 0, bid), self._slot(fl, 1, bid)
        seen = self._load(fl, gen)
        b.fence("release", "workgroup")
        old = self._rmw(fl, "add", arrived, I32(1), "acq_rel")
        last = b.icmp_unsigned("==", b.add(old, I32(1)), total)
        # The completing lane finishes before any lane spins: with the wait in an `else`, the
        # wave could run the waiting side first and never reach the completing one.
        with b.if_then(last):
            b.store(I32(0), arrived)
            if clear is not None:
                b.store(I32(0), clear)
            self._rmw(fl, "add", gen, I32(1), "release")
        if not arrive:
            spin, done = fl.new_block("bar_wait"), fl.new_block("bar_done")
            b.branch(spin)
            b.position_at_end(spin)
            now = self._load(fl, gen)
            wait = b.icmp_unsigned("==", now, seen)
            with b.if_then(wait):
                call(b, "llvm.amdgcn.s.sleep", VOID, [I32(1)])
            b.cbranch(wait, spin, done)
            b.position_at_end(done)
        b.fence("acquire", "workgroup")

    # ------------------------------------------------------------------ the hardware barrier
    def _barrier(self, fl: FunctionLowering) -> None:
        b = fl.b
        b.fence("release", "workgroup")
        call(b, "llvm.amdgcn.s.barrier", VOID, [])
        b.fence("acquire", "workgroup")

    def _barrier_reduce(self, fl: FunctionLowering, ins, op: str, pred: ir.Value) -> ir.Value:
        """bar.red.{popc,and,or} over the whole block: count the threads whose predicate holds in
        one LDS word.  Three barriers: the first lets every thread finish reading the previous
        result before thread 0 clears the counter, the second publishes the cleared counter, the
        third the sum.  ``and`` counts the threads where the predicate fails."""
        b = fl.b
        counter = self._reduction_counter(fl.ml.llmod)
        self._barrier(fl)
        with b.if_then(b.icmp_unsigned("==", self.linear_tid(fl), I32(0))):
            b.store(I32(0), counter)
        self._barrier(fl)
        counted = b.not_(pred) if op == "and" else pred
        with b.if_then(counted):
            self._rmw(fl, "add", counter, I32(1), "monotonic")
        self._barrier(fl)
        total = b.load(counter)
        if op == "popc":
            return total
        return b.icmp_unsigned("==" if op == "and" else "!=", total, I32(0))

    def _reduction_counter(self, llmod: ir.Module) -> ir.Value:
        name = "__ptx_barrier_reduction"
        gv = llmod.globals.get(name)
        if gv is None:
            gv = ir.GlobalVariable(llmod, I32, name, addrspace=LDS)
            gv.linkage = "internal"
            gv.initializer = ir.Constant(I32, ir.Undefined)
            gv.align = 4
        return gv


