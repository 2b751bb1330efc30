"""Target hooks for the host JIT: threads as resumable state machines, checked memory.

A lowered kernel is ``i32 kernel(i64* ctx, i8* thread_record)``.  It runs one thread
until the thread exits, faults, or reaches a synchronisation point (a barrier, a warp
instruction, printf); there it saves every register into its record, notes where to
resume, and returns.  The executor settles the synchronisation across threads and calls
the thread again, which restores its registers and continues after the stop.

Every memory access is checked against the launch's allocation map (global and const
memory through a page table, shared and local memory against their window sizes), so
no PTX program can touch host memory outside the buffers it was given; a bad access
records a fault report in the thread record and stops the thread.
"""

from __future__ import annotations

from llvmlite import ir

from ..interp.memory import GLOBAL_BASE, LOCAL_BASE, LOCAL_LIMIT, SHARED_BASE, SHARED_LIMIT
from ..interp.state import PARAM_BASE, PARAM_LIMIT
from ..ir import nodes as ptx
from ..ir.types import ScalarType
from ..lift.function import I1, I8, I8P, I32, I64, FunctionLowering, resize
from ..lift.hooks import TargetHooks, WarpView
from ..lift.nan import defer_nan_canonicalisation
from . import layout as L

I32P, I64P = ir.PointerType(I32), ir.PointerType(I64)


def _field(b: ir.IRBuilder, base: ir.Value, offset: int, ty: ir.Type) -> ir.Value:
    p = b.gep(base, [I64(offset)]) if offset else base
    return b.bitcast(p, ir.PointerType(ty))


class HostWarpView(WarpView):
    def __init__(self, xchg: ir.Value, mask: ir.Value, lane: ir.Value) -> None:
        self.xchg, self.mask, self.lane = xchg, mask, lane

    def value(self, b: ir.IRBuilder, lane: ir.Value, slot: int) -> ir.Value:
        idx = b.add(b.mul(b.zext(lane, I64), I64(L.OUT_SLOTS * 8)), I64(slot * 8))
        return b.load(b.bitcast(b.gep(self.xchg, [idx]), I64P))


class _CountingLowering(FunctionLowering):
    """A ``FunctionLowering`` that tells its hooks about each instruction as the walk reaches it
    (``fl.ins`` is set just before an instruction is lowered): the host counts executed
    instructions there and gives loop headers' watchdog reports the instruction that follows."""

    @property
    def ins(self) -> ptx.Instruction | None:
        return self.__dict__.get("_ins")

    @ins.setter
    def ins(self, ins: ptx.Instruction | None) -> None:
        self.__dict__["_ins"] = ins
        if ins is not None:
            self.hooks.before_instruction(self, ins)


class HostHooks(TargetHooks):
    name = "host"

    def __init__(self, triple: str = "", data_layout: str = "") -> None:
        self.triple, self.data_layout = triple, data_layout
        self.save_slots = 0
        self.exchanges = False            # some instruction exchanges values across a warp
        self.kernel_stack = 0             # bytes of the kernel's own `.param` buffers (host stack)
        self.max_frame = 0                # the largest `.func` frame cost (bytes)

    @property
    def record_bytes(self) -> int:
        """Bytes of a thread record (the executor's stride), once every function is lowered."""
        return (L.THREAD_HEADER + 8 * self.save_slots + 15) // 16 * 16

    def finish_module(self, ml, entry: ir.Function) -> None:
        add_driver(ml.llmod, entry, self.record_bytes)

    # ------------------------------------------------------------------ ABI
    def kernel_signature(self) -> ir.FunctionType:
        return ir.FunctionType(I32, [I64P, I8P])

    def function_prefix_args(self) -> list[ir.Type]:
        return [I64P, I8P]

    def function_prefix_values(self, fl: FunctionLowering) -> list[ir.Value]:
        return [fl.llfn.args[0], fl.llfn.args[1]]

    def begin_function(self, fl: FunctionLowering) -> None:
        fl.__class__ = _CountingLowering
        fl.ctx, fl.thr = fl.llfn.args[0], fl.llfn.args[1]
        fl.ctx.name, fl.thr.name = "ctx", "thr"
        fl.stops = []
        fl.fault_block = None
        fl.shared_groups = _shared_load_groups(fl.fn.body, fl.ml.layout.shared_bytes)
        fl.group_state = {}
        fl.watchdog_sites = []            # watchdog reports waiting for their stretch's first instruction
        # Executed instructions, counted in a register (promoted by mem2reg; consecutive adds fold);
        # it reaches the thread record at stops, calls, returns, exits and faults.
        fl.steps_reg = fl.hidden_register("steps", ScalarType.U64)
        fl.b.store(fl.b.load(self.thr(fl, L.T_STEPS, I64)), fl.steps_reg)
        if fl.is_kernel:
            fl.limit_reg = fl.hidden_register("limit", ScalarType.U64)
            fl.fresh = fl._alloca_b.alloca(I1, name="fresh")     # started in this call (not resumed)
            fl.b.store(I1(1), fl.fresh)
            fl.b.store(fl.b.load(self.thr(fl, L.T_LIMIT, I64)), fl.limit_reg)
        else:
            self._enter_frame(fl)
            self.push_frame(fl, fl.fn)

    def _enter_frame(self, fl: FunctionLowering) -> None:
        """Before a `.func`'s body touches its frame: bound the call depth (limits.call_depth) and
        the bytes of stack its active frames use (limits.stack_per_thread), so that a runaway
        recursion or a huge by-value `.param` faults instead of overflowing the host stack (the
        executor's host threads have a stack well above the budget). The frame's cost is known
        once the function is lowered (``finish_function``): a constant global until then. The
        fault keeps T_SITE, which the caller set to its `call` (``before_call``)."""
        b = fl.b
        p = self.thr(fl, L.T_DEPTH, I32)
        d = b.add(b.load(p), I32(1))
        b.store(d, p)
        deep, ok = fl.new_block("too_deep"), fl.new_block("depth_ok")
        b.cbranch(b.icmp_unsigned(">", b.zext(d, I64), self.ctx(fl, L.X_CALL_DEPTH)), deep, ok)
        b.position_at_end(deep)
        self._fault(fl, None, None, b.zext(d, I64), L.FaultKind.STACK, 0)
        b.position_at_end(ok)
        fl.frame_cost = ir.GlobalVariable(fl.ml.llmod, I64, name=f"ptxvm.frame_cost.{fl.llfn.name}")
        fl.frame_cost.global_constant = True
        fl.frame_cost.linkage = "internal"
        sp = self.thr(fl, L.T_STACK, I64)
        used = b.add(b.load(sp), b.load(fl.frame_cost))
        big, fits = fl.new_block("stack_budget"), fl.new_block("stack_ok")
        b.cbranch(b.icmp_unsigned(">", used, self.ctx(fl, L.X_STACK_LIMIT)), big, fits)
        b.position_at_end(big)
        self._fault(fl, None, None, used, L.FaultKind.STACK, 1)
        b.position_at_end(fits)
        b.store(used, sp)

    def function_return(self, fl: FunctionLowering) -> None:
        b = fl.b
        b.store(b.load(fl.steps_reg), self.thr(fl, L.T_STEPS, I64))
        p = self.thr(fl, L.T_DEPTH, I32)
        b.store(b.sub(b.load(p), I32(1)), p)
        sp = self.thr(fl, L.T_STACK, I64)
        b.store(b.sub(b.load(sp), b.load(fl.frame_cost)), sp)
        self._release_frame(fl)

    def before_instruction(self, fl: FunctionLowering, ins: ptx.Instruction) -> None:
        """Each instruction the walk reaches: one more executed instruction (guarded or not, as
        the interpreter counts), and the site of the watchdog reports of the stretch it starts."""
        b = fl.b
        b.store(b.add(b.load(fl.steps_reg), I64(1)), fl.steps_reg)
        if fl.watchdog_sites:
            site = I32(fl.ml.site(fl, ins))
            for store, placeholder in fl.watchdog_sites:
                store.replace_usage(placeholder, site)
            fl.watchdog_sites = []

    def _frame_cost(self, fl: FunctionLowering) -> int:
        """Host stack bytes one activation of ``fl``'s function accounts for: its `.param` buffers
        and its registers (allocas of the entry block; spilled at worst), its `.local` frame, and
        a call's overhead (return address, saved registers)."""
        allocas = [i for i in fl.entry.instructions if isinstance(i, ir.AllocaInstr)]
        size = 64 + fl.ml.layout.frame_bytes.get(fl.fn.name, 0)
        for a in allocas:
            t = a.type.pointee
            size += t.count * 1 if isinstance(t, ir.ArrayType) else 8 * max(1, (getattr(t, "width", 64) + 63) // 64)
        return size

    # ------------------------------------------------------------------ local call frames
    def push_frame(self, fl: FunctionLowering, f) -> None:
        """Each activation of a `.func` with `.local` variables gets its own frame on the
        thread's local-memory stack, so recursion keeps them apart (as the interpreter does)."""
        lay = fl.ml.layout
        size = lay.frame_bytes.get(f.name, 0)
        if not size:
            fl.frames.append((f.name, None))
            return
        b = fl.b
        align = lay.frame_align.get(f.name, 16)
        sp_p = self.thr(fl, L.T_SP, I64)
        fp = b.and_(b.add(b.load(sp_p), I64(align - 1)), I64(-align))
        top = b.add(fp, I64(size))
        deep, ok = fl.new_block("stack_overflow"), fl.new_block("frame_ok")
        b.cbranch(b.icmp_unsigned(">", top, self.ctx(fl, L.X_LOCAL_SIZE)), deep, ok)
        b.position_at_end(deep)
        # Entering a called `.func`: its `call` is the site (before_call); an inlined one: here.
        site = fl.ml.site(fl, fl.ins) if f is not fl.fn and fl.ins is not None else None
        self._fault(fl, None, site, top, L.FaultKind.STACK, 2)
        b.position_at_end(ok)
        b.store(top, sp_p)
        slot = fl.hidden_register(f"fp_{len(fl.frames)}", ScalarType.U64)
        b.store(fp, slot)
        fl.frames.append((f.name, slot))

    def pop_frame(self, fl: FunctionLowering, f) -> None:
        """Leaving an inlined ``f``: release its frame (the thread's stack top goes back)."""
        self._release_frame(fl)
        fl.frames.pop()

    def _release_frame(self, fl: FunctionLowering) -> None:
        _name, slot = fl.frames[-1]
        if slot is not None:
            fl.b.store(fl.b.load(slot), self.thr(fl, L.T_SP, I64))

    def frame_address(self, fl: FunctionLowering, name: str) -> ir.Value | None:
        """The address of a `.local` variable of the innermost active function frame."""
        lay = fl.ml.layout
        if not fl.frames:
            off = lay.local_frames.get(fl.fn.name, {}).get(name)
            return None if off is None else I64(off)
        fname, slot = fl.frames[-1]
        off = lay.local_frames.get(fname, {}).get(name)
        if off is None:
            return None
        return fl.b.add(fl.b.load(slot), I64(off)) if slot is not None else I64(off)

    def after_call(self, fl: FunctionLowering, status: ir.Value) -> None:
        b = fl.b
        b.store(b.load(self.thr(fl, L.T_STEPS, I64)), fl.steps_reg)
        stop, cont = fl.new_block("callee_stopped"), fl.new_block("after_call")
        b.cbranch(b.icmp_unsigned("!=", status, I32(0)), stop, cont)
        b.position_at_end(stop)
        b.ret(status)
        b.position_at_end(cont)

    # ------------------------------------------------------------------ context access
    def ctx(self, fl: FunctionLowering, slot: int) -> ir.Value:
        return fl.b.load(fl.b.gep(fl.ctx, [I64(slot)]))

    def thr(self, fl: FunctionLowering, offset: int, ty: ir.Type) -> ir.Value:
        return _field(fl.b, fl.thr, offset, ty)

    def set_state(self, fl: FunctionLowering, state: int, site: int) -> None:
        b = fl.b
        b.store(I32(state), self.thr(fl, L.T_STATE, I32))
        b.store(I32(site), self.thr(fl, L.T_SITE, I32))

    def cta_field(self, fl: FunctionLowering, offset: int, ty: ir.Type) -> ir.Value:
        cta = fl.b.inttoptr(fl.b.load(self.thr(fl, L.T_CTA, I64)), I8P)
        return _field(fl.b, cta, offset, ty)

    # ------------------------------------------------------------------ stops
    def stop(self, fl: FunctionLowering, state: int, site: int, ins: ptx.Instruction) -> None:
        """Save registers, record the resume point, return ``state``; continue after resume."""
        if not fl.is_kernel:
            raise fl.unsupported(ins, "synchronises inside a called function, which the host JIT "
                                      "does not support yet")
        self.set_state(fl, state, site)
        k = len(fl.stops) + 1
        stop_blk, resume_blk, cont = fl.new_block(f"stop{k}"), fl.new_block(f"resume{k}"), fl.new_block(f"cont{k}")
        fl.b.branch(stop_blk)
        fl.stops.append((k, state, stop_blk, resume_blk, cont))
        fl.b.position_at_end(cont)

    def finish_function(self, fl: FunctionLowering) -> None:
        defer_nan_canonicalisation(fl)
        fl.watchdog_sites = []            # a stretch without instructions: its report has no site
        if not fl.is_kernel:
            cost = self._frame_cost(fl)
            fl.frame_cost.initializer = I64(cost)
            self.max_frame = max(self.max_frame, cost)
            return
        self.kernel_stack = self._frame_cost(fl)
        regs = [slot for slot, _t in fl.all_registers()]
        # A stop carries what its continuation needs across the return: an edge stop -> cont.
        edges = {id(stop_blk): id(cont) for _k, _s, stop_blk, _r, cont in fl.stops}
        live_in = _live_allocas(fl.llfn, {id(slot) for slot in regs}, edges) if fl.stops else {}
        # Only what the code after some stop may read gets a save slot, packed densely (wide
        # registers first, then 4-byte ones): a small record keeps a CTA's records in cache.
        saved = {a for _k, _s, _stop, _r, cont in fl.stops for a in live_in.get(id(cont), ())}
        kept = [slot for slot in regs if id(slot) in saved and slot is not fl.limit_reg and slot is not fl.steps_reg]
        size = {id(slot): 4 if slot.type.pointee.width <= 32 else 8 * ((slot.type.pointee.width + 63) // 64)
                for slot in kept}
        offsets, at = {}, L.THREAD_HEADER
        for slot in sorted(kept, key=lambda s: size[id(s)] == 4):
            offsets[id(slot)] = at
            at += size[id(slot)]
        self.save_slots = max(self.save_slots, (at - L.THREAD_HEADER + 7) // 8)
        # A register's record slot is its home across stops.  A stop stores only what may have
        # been written since the thread's start or, separately, since a resume (``dirty``,
        # forward may-analyses; which applies is known at run time: ``fresh``), and a resume
        # reloads only what is read, or stored by a later stop, before the next stop
        # (``needed``).  Loop-invariant registers of a barrier loop then stay in the record
        # instead of being reloaded and stored back every round.
        slot_ids = {id(slot) for slot in regs}
        keeps = {k: [(slot, offsets[id(slot)]) for slot in kept if id(slot) in live_in.get(id(cont), ())]
                 for k, _s, _stop, _r, cont in fl.stops}
        resumes = [r for _k, _s, _stop, r, _c in fl.stops]
        to_cont = {id(r): id(c) for _k, _s, _stop, r, c in fl.stops}
        dirty_f = _may_dirty(fl.llfn, slot_ids, [fl.body], resumes, to_cont)
        dirty_r = _may_dirty(fl.llfn, slot_ids, resumes, [fl.body], to_cont)
        saves = {k: ([(slot, off) for slot, off in keeps[k] if id(slot) in dirty_f.get(id(stop_blk), ())],
                     [(slot, off) for slot, off in keeps[k] if id(slot) in dirty_r.get(id(stop_blk), ())])
                 for k, _s, stop_blk, _r, _c in fl.stops}
        needed = _live_allocas(fl.llfn, slot_ids, {}, {id(stop_blk): {id(slot) for slot, _o in saves[k][1]}
                                                        for k, _s, stop_blk, _r, _c in fl.stops})
        b = ir.IRBuilder()
        for k, state, stop_blk, resume_blk, cont in fl.stops:
            # Only what the code after the stop may read survives it: saving dead registers
            # would keep every value alive everywhere and make LLVM spill.
            b.position_at_end(stop_blk)
            b.store(b.load(fl.steps_reg), _field(b, fl.thr, L.T_STEPS, I64))
            save_f, save_r = saves[k]
            if save_f != save_r:
                on_f, on_r, done = (fl.new_block(f"stop{k}_{x}") for x in ("fresh", "resumed", "saved"))
                b.cbranch(b.load(fl.fresh), on_f, on_r)
                for blk, save in ((on_f, save_f), (on_r, save_r)):
                    b.position_at_end(blk)
                    for slot, off in save:
                        b.store(b.load(slot), _field(b, fl.thr, off, slot.type.pointee))
                    b.branch(done)
                b.position_at_end(done)
            else:
                for slot, off in save_r:
                    b.store(b.load(slot), _field(b, fl.thr, off, slot.type.pointee))
            b.store(I32(k), _field(b, fl.thr, L.T_RESUME, I32))
            b.ret(I32(state))
            b.position_at_end(resume_blk)
            b.store(I1(0), fl.fresh)
            for slot, off in keeps[k]:
                if id(slot) in needed.get(id(cont), ()):
                    b.store(b.load(_field(b, fl.thr, off, slot.type.pointee)), slot)
            b.store(b.load(_field(b, fl.thr, L.T_STEPS, I64)), fl.steps_reg)   # saved at the stop
            b.store(b.load(_field(b, fl.thr, L.T_LIMIT, I64)), fl.limit_reg)   # set anew each round
            b.branch(cont)
        eb = fl._alloca_b
        if fl.stops:
            resume = eb.load(_field(eb, fl.thr, L.T_RESUME, I32))
            sw = eb.switch(resume, fl.body)
            for k, _s, _stop, resume_blk, _c in fl.stops:
                sw.add_case(I32(k), resume_blk)

    # ------------------------------------------------------------------ control
    def exit_thread(self, fl: FunctionLowering, ins) -> None:
        fl.b.store(fl.b.load(fl.steps_reg), self.thr(fl, L.T_STEPS, I64))
        fl.b.store(I32(L.State.EXITED), self.thr(fl, L.T_STATE, I32))
        fl.b.ret(I32(L.State.EXITED))

    def bad_call(self, fl: FunctionLowering, ins: ptx.Instruction, target: ir.Value) -> None:
        """An indirect call through an address that is no function of this module: a fault."""
        site = fl.ml.site(fl, ins)
        self._fault(fl, None, site, target, L.FaultKind.BAD_CALL, 0)

    def exit_from_function(self, fl: FunctionLowering, ins: ptx.Instruction) -> None:
        self.exit_thread(fl, ins)

    def trap(self, fl: FunctionLowering, ins: ptx.Instruction, kind: str) -> None:
        site = fl.ml.site(fl, ins)
        self.set_state(fl, L.State.TRAP, site)
        fl.b.ret(I32(L.State.TRAP))

    def loop_header(self, fl: FunctionLowering, instructions: int) -> None:
        """Where a labelled stretch starts (every loop passes one): past the thread's limit (its
        quantum, at most the launch's budget: a countdown, one compare here) the slow path stops
        with a watchdog fault past the budget, stops when the executor asks (Ctrl-C: X_STOP), and
        else yields (in modules that can spin-wait: volatile, atomic or acquire accesses) so the
        threads it waits for can run, or sets the next quantum. Instructions are counted by
        ``before_instruction``."""
        b = fl.b
        n = b.load(fl.steps_reg)
        limit = b.load(fl.limit_reg) if fl.is_kernel else b.load(self.thr(fl, L.T_LIMIT, I64))
        slow, ok = fl.new_block("limit"), fl.new_block("run")
        b.cbranch(b.icmp_unsigned(">", n, limit), slow, ok).set_weights([1, 1000])
        b.position_at_end(slow)
        b.store(n, self.thr(fl, L.T_STEPS, I64))
        over, poll, intr, spin = (fl.new_block(x) for x in ("watchdog", "poll", "interrupted", "yield"))
        budget = self.ctx(fl, L.X_BUDGET)
        b.cbranch(b.icmp_unsigned(">", n, budget), over, poll)
        for blk, state in ((over, L.State.WATCHDOG), (intr, L.State.INTERRUPTED)):
            b.position_at_end(blk)
            b.store(I32(state), self.thr(fl, L.T_STATE, I32))
            placeholder = I32(0)
            fl.watchdog_sites.append((b.store(placeholder, self.thr(fl, L.T_SITE, I32)), placeholder))
            b.ret(I32(state))
        b.position_at_end(poll)
        # Atomic: another host thread writes it, and a plain load could be hoisted out of the loop.
        stop = b.load_atomic(b.gep(fl.ctx, [I64(L.X_STOP)]), "monotonic", 8)
        b.cbranch(b.icmp_unsigned("!=", stop, I64(0)), intr, spin)
        b.position_at_end(spin)
        quantum = b.add(n, I64(L.QUANTUM))
        nxt = b.select(b.icmp_unsigned("<", quantum, budget), quantum, budget)
        if fl.is_kernel and fl.ml.may_spin:
            self.stop(fl, L.State.YIELD, 0, None)
        elif fl.is_kernel:
            b.store(nxt, fl.limit_reg)
        else:
            b.store(nxt, self.thr(fl, L.T_LIMIT, I64))
        b.branch(ok)
        b.position_at_end(ok)

    def before_call(self, fl: FunctionLowering) -> None:
        b = fl.b
        b.store(b.load(fl.steps_reg), self.thr(fl, L.T_STEPS, I64))
        # The callee's entry checks (depth, stack budget) report at this `call`.
        if fl.ins is not None:
            b.store(I32(fl.ml.site(fl, fl.ins)), self.thr(fl, L.T_SITE, I32))

    def yield_thread(self, fl: FunctionLowering, ins: ptx.Instruction) -> None:
        if fl.is_kernel:
            self.stop(fl, L.State.YIELD, fl.ml.site(fl, ins), ins)

    def warp_lockstep(self, fl: FunctionLowering, ins: ptx.Instruction) -> None:
        """Before a volatile shared access: let the warp's lanes catch up with each other, so
        legacy warp-synchronous code (no __syncwarp) sees lockstep execution as on the
        interpreter and pre-Volta GPUs."""
        if fl.is_kernel:
            self.warp_exchange(fl, ins, [], lockstep=True)

    def barrier(self, fl, ins, barrier_id, count, *, arrive=False, reduce=None):
        b = fl.b
        site = fl.ml.site(fl, ins)
        b.store(barrier_id, self.thr(fl, L.T_AUX, I32))
        b.store(count if count is not None else I32(0), self.thr(fl, L.T_AUX2, I32))
        if reduce is not None:
            b.store(b.zext(reduce[1], I64), self.thr(fl, L.T_OUT, I64))
        state = L.State.ARRIVE if arrive else L.State.BARRIER_RED if reduce is not None else L.State.BARRIER
        self.stop(fl, state, site, ins)
        if reduce is None:
            return None
        got = b.load(self.thr(fl, L.T_IN, I64))
        if reduce[0] == "popc":
            return b.trunc(got, I32)
        return b.icmp_unsigned("!=", got, I64(0))

    def warp_exchange(self, fl, ins, values, lockstep: bool = False):
        self.exchanges = True             # the executor gives the CTAs exchange slots
        b = fl.b
        site = fl.ml.site(fl, ins)
        if len(values) > L.OUT_SLOTS:
            raise fl.unsupported(ins, "publishes too many values for one warp exchange")
        for i, v in enumerate(values):
            b.store(v, self.thr(fl, L.T_OUT + 8 * i, I64))
        # For the release (_release_warps_ir): T_AUX 1 = a lockstep point, 2 = a warp instruction
        # with its membermask in T_AUX2, 0 = one without (activemask).
        member = None if lockstep else _membermask(ins)
        if member is not None:
            b.store(fl.read(member, ScalarType.B32), self.thr(fl, L.T_AUX2, I32))
        b.store(I32(1 if lockstep else 2 if member is not None else 0), self.thr(fl, L.T_AUX, I32))
        self.stop(fl, L.State.WARP, site, ins)
        mask = b.trunc(b.load(self.thr(fl, L.T_IN, I64)), I32)
        linear = b.load(self.thr(fl, L.T_LINEAR, I32))
        lane = b.and_(linear, I32(31))
        warp = b.zext(b.lshr(linear, I32(5)), I64)
        base = b.inttoptr(b.load(self.cta_field(fl, L.C_XCHG, I64)), I8P)
        xchg = b.gep(base, [b.mul(warp, I64(32 * L.OUT_SLOTS * 8))])
        return HostWarpView(xchg, mask, lane)

    def builtin_call(self, fl, ins, name, rets, args):
        b = fl.b
        if name in ("vprintf", "__assertfail"):
            site = fl.ml.site(fl, ins)
            for i, a in enumerate(args):
                buf = fl.param_buffer(a.name) if isinstance(a, ptx.Symbol) else None
                if buf is None:
                    raise fl.unsupported(ins, f"passes `{a}`, which is not a `.param` variable")
                b.store(b.load(b.bitcast(buf, I64P)), self.thr(fl, L.T_OUT + 8 * i, I64))
            if name == "__assertfail":
                self.set_state(fl, L.State.ASSERT, site)
                b.ret(I32(L.State.ASSERT))
                fl.b.position_at_end(fl.new_block("after_assert"))
                return
            self.stop(fl, L.State.PRINTF, site, ins)
            if rets:
                buf = fl.param_buffer(rets[0].name)
                b.store(I32(0), b.bitcast(buf, I32P))          # vprintf's result: 0
            return
        if name in ("malloc", "free"):
            # The device heap lives in Python (interp.heap, shared with the interpreter): the thread
            # stops with its operand, the executor allocates or frees and remaps the page table.
            a = args[0] if args else None
            buf = fl.param_buffer(a.name) if isinstance(a, ptx.Symbol) else None
            if buf is None:
                raise fl.unsupported(ins, f"passes `{a}`, which is not a `.param` variable")
            operand = b.load(b.bitcast(buf, I64P))
            site = fl.ml.site(fl, ins)
            if fl.is_kernel:
                b.store(operand, self.thr(fl, L.T_OUT, I64))
                self.stop(fl, L.State.MALLOC if name == "malloc" else L.State.FREE, site, ins)
                # after the resume: the return buffer is read by the ld.param that follows the call
                result = b.load(self.thr(fl, L.T_OUT, I64))
            else:
                # A .func cannot stop (its LLVM frame would be lost): call back into the executor.
                fnty = ir.FunctionType(I64, [I64, I32, I64])
                callback = b.inttoptr(self.ctx(fl, L.X_HOST_CALL), fnty.as_pointer())
                op = L.HostCall.MALLOC if name == "malloc" else L.HostCall.FREE
                result = b.call(callback, [b.ptrtoint(self.thr(fl, 0, I8), I64), I32(op), operand])
                if name == "free":
                    bad, ok = fl.new_block("bad_free"), fl.new_block("free_ok")
                    b.cbranch(b.icmp_unsigned("!=", result, I64(0)), bad, ok)
                    self._fault(fl, bad, site, operand, L.FaultKind.HEAP, 0, L.Space.GLOBAL)
                    b.position_at_end(ok)
            if name == "malloc" and rets:
                b.store(result, b.bitcast(fl.param_buffer(rets[0].name), I64P))
            return
        raise fl.unsupported(ins, f"calls `{name}`, which the host JIT does not provide yet")

    # ------------------------------------------------------------------ identity
    def special_register(self, fl, name, component, bits, ins):
        b = fl.b
        comp = {"x": 0, "y": 1, "z": 2}.get(component or "x", 0)
        linear = lambda: b.load(self.thr(fl, L.T_LINEAR, I32))  # noqa: E731
        if name == "%tid":
            return b.load(self.thr(fl, L.T_TID + 4 * comp, I32))
        if name == "%ntid":
            return b.trunc(self.ctx(fl, L.X_NTID + comp), I32)
        if name == "%nctaid":
            return b.trunc(self.ctx(fl, L.X_NCTAID + comp), I32)
        if name == "%ctaid":
            return b.load(self.cta_field(fl, L.C_CTAID + 4 * comp, I32))
        if name == "%laneid":
            return b.and_(linear(), I32(31))
        if name == "%warpid":
            return b.lshr(linear(), I32(5))
        if name == "%nwarpid":
            n = b.mul(b.mul(self.ctx(fl, L.X_NTID), self.ctx(fl, L.X_NTID + 1)), self.ctx(fl, L.X_NTID + 2))
            return b.trunc(b.lshr(b.add(n, I64(31)), I64(5)), I32)
        if name.startswith("%lanemask_"):
            lane = b.zext(b.and_(linear(), I32(31)), I64)
            one = b.shl(I64(1), lane)
            lt = b.sub(one, I64(1))
            le = b.sub(b.shl(one, I64(1)), I64(1))
            v = {"eq": one, "lt": lt, "le": le, "gt": b.not_(le), "ge": b.not_(lt)}[name[len("%lanemask_"):]]
            return b.trunc(v, I32)
        if name in ("%clock", "%clock64", "%clock_hi", "%globaltimer", "%globaltimer_lo", "%globaltimer_hi"):
            steps = b.load(self.thr(fl, L.T_STEPS, I64))       # monotone and deterministic
            v = b.lshr(steps, I64(32)) if name.endswith("_hi") else steps
            return v if bits == 64 else b.trunc(v, I32)
        if name in ("%smid", "%gridid") or name.startswith("%reserved_smem_offset"):
            return I32(0) if bits <= 32 else I64(0)
        if name == "%nsmid":
            return I32(1)
        if name == "%dynamic_smem_size":
            return b.trunc(self.ctx(fl, L.X_DYN_SHARED), I32)
        if name in ("%total_smem_size", "%aggr_smem_size"):
            return b.trunc(self.ctx(fl, L.X_SHARED_SIZE), I32)
        raise fl.unsupported(ins, f"reads special register `{name}`, which the host JIT does not provide")

    # ------------------------------------------------------------------ memory
    def param_pointer(self, fl, offset, element: int = 0, count: int = 1, ins: ptx.Instruction | None = None):
        """Pointer to the kernel parameter block at ``offset``; with ``ins``, ``count`` accesses of
        ``element`` bytes there are checked against the block's size first, each in turn (the
        interpreter's order: the first element out of range is the one reported)."""
        b = fl.b
        if ins is not None:
            site = fl.ml.site(fl, ins)
            size = self.ctx(fl, L.X_PARAM_SIZE)
            for i in range(count):
                at = offset + i * element
                bad, ok = fl.new_block("param_oob"), fl.new_block("param_ok")
                if at < 0:
                    b.branch(bad)
                else:
                    b.cbranch(b.icmp_unsigned(">", I64(at + element), size), bad, ok)
                self._fault(fl, bad, site, I64(at & 0xFFFF_FFFF_FFFF_FFFF), L.FaultKind.BOUNDS, element,
                            L.Space.PARAM)
                b.position_at_end(ok)
            if offset < 0:
                return ir.Constant(I8P, None)        # not reached: the access faults
        base = b.inttoptr(self.ctx(fl, L.X_PARAMS), I8P)
        return b.gep(base, [I64(offset)]) if offset else base

    def symbol_address(self, fl, name, space, ins):
        lay = fl.ml.layout
        b = fl.b
        if name in lay.params:
            if fl.is_kernel:
                return I64(lay.params[name] if space == "param" else PARAM_BASE + lay.params[name])
        if fl.param_buffer(name) is not None:
            raise fl.unsupported(ins, f"takes the address of the `.param` variable `{name}`")
        if name in lay.shared:
            return I64(lay.shared[name])
        addr = self.frame_address(fl, name)
        if addr is not None:
            return addr
        if name in lay.local:
            raise fl.unsupported(ins, f"refers to the `.local` variable `{name}` outside its function")
        index = fl.ml.symbol_index(name)
        if index is None:
            raise fl.unsupported(ins, f"refers to `{name}`, which has no storage in this launch")
        table = b.inttoptr(self.ctx(fl, L.X_SYMBOLS), I64P)
        return b.load(b.gep(table, [I64(index)]))

    def cvta(self, fl, address, space, to_generic):
        b = fl.b
        base = {"shared": SHARED_BASE, "local": LOCAL_BASE, "param": PARAM_BASE}.get(space)
        if base is None:
            return address               # global and const addresses are generic addresses
        return b.add(address, I64(base)) if to_generic else b.sub(address, I64(base))

    def isspacep(self, fl, address, space):
        b = fl.b
        win = {"shared": (SHARED_BASE, SHARED_LIMIT), "local": (LOCAL_BASE, LOCAL_LIMIT),
               "param": (PARAM_BASE, PARAM_LIMIT)}.get(space)
        if win is not None:
            return b.icmp_unsigned("<", b.sub(address, I64(win[0])), I64(win[1] - win[0]))
        return b.icmp_unsigned(">=", address, I64(GLOBAL_BASE))

    def access(self, fl, space, address, size, ins, *, write, align=None):
        b = fl.b
        site = fl.ml.site(fl, ins)
        align = align or size
        code = L.space_code(space)
        fault = fl.new_block("fault")
        ok_blk = fl.new_block("mem_ok")
        if space == "const" and write:
            self._fault(fl, fault, site, address, L.FaultKind.READONLY, size, code)
            b.branch(fault)
            b.position_at_end(ok_blk)
            return ir.Constant(I8P, None)
        if align > 1:
            mis = b.icmp_unsigned("!=", b.and_(address, I64(align - 1)), I64(0))
            nxt = fl.new_block("aligned")
            mis_blk = fl.new_block("misaligned")
            b.cbranch(mis, mis_blk, nxt)
            b.position_at_end(mis_blk)
            self._fault(fl, None, site, address, L.FaultKind.MISALIGNED, align, code)   # the size it must align to
            b.position_at_end(nxt)
        self._fault(fl, fault, site, address, L.FaultKind.BOUNDS, size, code)
        group = fl.shared_groups.get(id(ins)) if space == "shared" and not write else None
        if group is not None and self._grouped_check(fl, group, ins, size, align, site):
            # In bounds: the group's one range check (or its slow path) has shown it.
            b.branch(ok_blk)
            b.position_at_end(ok_blk)
            return b.gep(b.inttoptr(b.load(self.cta_field(fl, L.C_SHARED, I64)), I8P), [address])
        if space in ("shared", "local"):
            ptr = self._window(fl, space, address, size, fault)
        elif space in ("global", "const"):
            ptr = self._global(fl, address, size, fault, const=(space == "const"))
        else:
            ptr = self._generic(fl, address, size, fault, write)
        b.branch(ok_blk)
        b.position_at_end(ok_blk)
        return ptr

    def _grouped_check(self, fl, group, ins, size, align, site) -> bool:
        """A `ld.shared` of a group (``_shared_load_groups``): loads through one base register
        with constant offsets, only side-effect-free instructions between them.  The first one
        checks the whole group's range with one compare; when that fails, a slow path checks
        each load in program order (alignment, then bounds) and faults at the first bad one,
        exactly where the loads one by one would have faulted: nothing between them has an
        effect outside the thread's registers.  False: check this load alone."""
        members, index = group
        st = fl.group_state.get(id(members))
        b = fl.b
        if index == 0:
            hit = fl.register(members[0][1])
            if hit is None or not isinstance(hit[0].type.pointee, ir.IntType):
                fl.group_state[id(members)] = None
                return False
            base = resize(b, b.load(hit[0]), 64, False)
            max_end = max(off + sz for _ins, _reg, off, sz in members)
            slow, fast = fl.new_block("group_slow"), fl.new_block("group_fast")
            b.cbranch(b.icmp_unsigned(">", base, I64(fl.ml.layout.shared_bytes - max_end)), slow, fast)
            b.position_at_end(fast)
            st = fl.group_state[id(members)] = {"base": base, "tail": slow, "resume": fast}
        if st is None:
            return False
        m_ins, _reg, off, m_size = members[index]
        if m_ins is not ins or m_size != size:
            raise fl.unsupported(ins, "is lowered differently from its pre-scan (a ptxvm bug)")
        here = b.block
        b.position_at_end(st["tail"])
        address = b.add(st["base"], I64(off)) if off else st["base"]
        if align > 1:
            mis = fl.new_block("group_misaligned")
            nxt = fl.new_block("group_aligned")
            b.cbranch(b.icmp_unsigned("!=", b.and_(address, I64(align - 1)), I64(0)), mis, nxt)
            b.position_at_end(mis)
            self._fault(fl, None, site, address, L.FaultKind.MISALIGNED, align, L.Space.SHARED)
            b.position_at_end(nxt)
        oob, nxt = fl.new_block("group_oob"), fl.new_block("group_next")
        limit = fl.ml.layout.shared_bytes
        bad = b.icmp_unsigned(">", address, I64(limit - size)) if limit >= size else ir.Constant(I1, 1)
        b.cbranch(bad, oob, nxt)
        b.position_at_end(oob)
        self._fault(fl, None, site, address, L.FaultKind.BOUNDS, size, L.Space.SHARED)
        b.position_at_end(nxt)
        if index == len(members) - 1:
            b.branch(st["resume"])          # not reached: some load of the group is out of bounds
        st["tail"] = nxt
        b.position_at_end(here)
        return True

    def _fault(self, fl, blk, site, address, kind, size, space: int = L.Space.GENERIC) -> None:
        """Fill ``blk`` (or the current block) with: record the fault (``space``: where the access
        was checked; ``site`` None: keep the site already recorded), stop the thread."""
        b = fl.b
        here = b.block
        if blk is not None:
            b.position_at_end(blk)
        b.store(address, self.thr(fl, L.T_FAULT_ADDR, I64))
        b.store(I32(kind), self.thr(fl, L.T_FAULT_KIND, I32))
        b.store(I32(size), self.thr(fl, L.T_FAULT_SIZE, I32))
        b.store(I32(space), self.thr(fl, L.T_FAULT_SPACE, I32))
        b.store(b.load(fl.steps_reg), self.thr(fl, L.T_STEPS, I64))
        if site is None:
            b.store(I32(L.State.FAULT), self.thr(fl, L.T_STATE, I32))
        else:
            self.set_state(fl, L.State.FAULT, site)
        b.ret(I32(L.State.FAULT))
        if blk is not None:
            b.position_at_end(here)

    def _window(self, fl, space, offset, size, fault) -> ir.Value:
        b = fl.b
        if space == "shared":
            # The window's size is the layout's (the launch context holds the same number): a
            # constant, so the check is one compare with an immediate.
            limit, base = fl.ml.layout.shared_bytes, b.load(self.cta_field(fl, L.C_SHARED, I64))
            bad = (b.icmp_unsigned(">", offset, I64(limit - size)) if limit >= size
                   else ir.Constant(ir.IntType(1), 1))
        else:
            limit, base = self.ctx(fl, L.X_LOCAL_SIZE), b.load(self.thr(fl, L.T_LOCAL, I64))
            end = b.add(offset, I64(size))
            bad = b.or_(b.icmp_unsigned(">", end, limit), b.icmp_unsigned("<", end, offset))
        ok = fl.new_block(f"{space}_ok")
        b.cbranch(bad, fault, ok)
        b.position_at_end(ok)
        return b.gep(b.inttoptr(base, I8P), [offset])

    def _global(self, fl, address, size, fault, const=False) -> ir.Value:
        b = fl.b
        rel = b.sub(address, I64(GLOBAL_BASE))
        page = b.lshr(rel, I64(L.PAGE_SHIFT))
        ok1 = fl.new_block("page_ok")
        b.cbranch(b.icmp_unsigned("<", page, self.ctx(fl, L.X_NPAGES)), ok1, fault)
        b.position_at_end(ok1)
        pages = b.inttoptr(self.ctx(fl, L.X_PAGES), I32P)
        idx = b.load(b.gep(pages, [page]))
        ok2 = fl.new_block("alloc_ok")
        b.cbranch(b.icmp_signed("<", idx, I32(0)), fault, ok2)
        b.position_at_end(ok2)
        entry = b.mul(b.zext(idx, I64), I64(L.ALLOC_ENTRY // 8))
        allocs = b.inttoptr(self.ctx(fl, L.X_ALLOCS), I64P)
        base = b.load(b.gep(allocs, [entry]))
        end = b.load(b.gep(allocs, [b.add(entry, I64(1))]))
        host = b.load(b.gep(allocs, [b.add(entry, I64(2))]))
        stop = b.add(address, I64(size))
        bad = b.or_(b.icmp_unsigned("<", address, base), b.icmp_unsigned(">", stop, end))
        if const:           # the .const state space reaches only const allocations (as the interpreter)
            is_const = b.load(b.gep(allocs, [b.add(entry, I64(3))]))
            bad = b.or_(bad, b.icmp_unsigned("==", is_const, I64(0)))
        ok3 = fl.new_block("in_bounds")
        b.cbranch(bad, fault, ok3)
        b.position_at_end(ok3)
        return b.gep(b.inttoptr(host, I8P), [b.sub(address, base)])

    def _generic(self, fl, address, size, fault, write) -> ir.Value:
        b = fl.b
        shared_b, local_b, param_b, global_b, done = (fl.new_block(n) for n in
                                                      ("gen_shared", "gen_local", "gen_param", "gen_global", "gen_done"))
        is_sh = b.icmp_unsigned("<", b.sub(address, I64(SHARED_BASE)), I64(SHARED_LIMIT - SHARED_BASE))
        not_sh = fl.new_block("gen_not_shared")
        b.cbranch(is_sh, shared_b, not_sh)
        b.position_at_end(not_sh)
        is_lo = b.icmp_unsigned("<", b.sub(address, I64(LOCAL_BASE)), I64(LOCAL_LIMIT - LOCAL_BASE))
        not_lo = fl.new_block("gen_not_local")
        b.cbranch(is_lo, local_b, not_lo)
        b.position_at_end(not_lo)
        is_pa = b.icmp_unsigned("<", b.sub(address, I64(PARAM_BASE)), I64(PARAM_LIMIT - PARAM_BASE))
        b.cbranch(is_pa, param_b, global_b)
        incoming = []
        b.position_at_end(shared_b)
        p = self._window(fl, "shared", b.sub(address, I64(SHARED_BASE)), size, fault)
        incoming.append((p, b.block))
        b.branch(done)
        b.position_at_end(local_b)
        p = self._window(fl, "local", b.sub(address, I64(LOCAL_BASE)), size, fault)
        incoming.append((p, b.block))
        b.branch(done)
        b.position_at_end(param_b)
        if write:
            b.branch(fault)
        else:
            off = b.sub(address, I64(PARAM_BASE))
            end = b.add(off, I64(size))
            okp = fl.new_block("param_ok")
            b.cbranch(b.icmp_unsigned(">", end, self.ctx(fl, L.X_PARAM_SIZE)), fault, okp)
            b.position_at_end(okp)
            incoming.append((b.gep(b.inttoptr(self.ctx(fl, L.X_PARAMS), I8P), [off]), b.block))
            b.branch(done)
        b.position_at_end(global_b)
        p = self._global(fl, address, size, fault)
        incoming.append((p, b.block))
        b.branch(done)
        b.position_at_end(done)
        phi = b.phi(I8P)
        for v, blk in incoming:
            phi.add_incoming(v, blk)
        return phi


__all__ = ["HostHooks", "I1", "I8"]


# Instructions with no effect beyond their destination registers: they may lie between the loads
# of a group (nothing they do can be observed if a later load of the group faults instead).
_PURE = frozenset({"add", "sub", "mul", "mad", "mul24", "mad24", "fma", "and", "or", "xor", "not", "cnot",
                   "shl", "shr", "mov", "cvt", "cvta", "setp", "selp", "set", "slct", "neg", "abs", "min",
                   "max", "popc", "clz", "brev", "bfe", "bfi", "prmt", "sad", "copysign", "testp", "lop3",
                   "shf"})


def _dest_registers(op) -> list[tuple[str, str | None]]:
    if isinstance(op, ptx.Register):
        return [(op.name, op.component)]
    if isinstance(op, ptx.Vector):
        return [r for e in op.elements for r in _dest_registers(e)]
    if isinstance(op, ptx.Pair):
        return [r for e in (op.first, op.second) for r in _dest_registers(e)]
    return []


def _shared_load_groups(body: ptx.Block, shared_bytes: int) -> dict[int, tuple[list, int]]:
    """Groups of plain `ld.shared` through one base register with small constant offsets, in
    straight-line stretches of a statement list where the register keeps its value and only
    ``_PURE`` instructions lie between them: id(instruction) -> (members, index); members are
    (instruction, base register, offset, size), in program order."""
    from ..lift.ops.memory import _elements, space_of
    groups: dict[int, tuple[list, int]] = {}
    seen: set[int] = set()

    def close(open_: dict) -> None:
        for members in open_.values():
            if len(members) > 1 and max(o + z for _i, _r, o, z in members) <= shared_bytes:
                for k, m in enumerate(members):
                    groups[id(m[0])] = (members, k)
        open_.clear()

    def scan(block: ptx.Block) -> None:
        open_: dict = {}
        for st in block.statements:
            if isinstance(st, ptx.Block):
                close(open_)
                scan(st)
                continue
            if not isinstance(st, ptx.Instruction):
                if isinstance(st, ptx.Label):
                    close(open_)
                continue
            if id(st) in seen:                   # one object at two places: never grouped
                groups.pop(id(st), None)
                close(open_)
                continue
            seen.add(id(st))
            a = st.operands[1] if len(st.operands) > 1 else None
            member = (st.opcode == "ld" and st.guard is None and space_of(st) == "shared"
                      and not ({"volatile", "relaxed", "acquire"} & set(st.modifiers))
                      and isinstance(a, ptx.Address) and isinstance(a.base, ptx.Register)
                      and not a.extra and 0 <= a.offset < (1 << 31) and st.types)
            if member:
                key = (a.base.name, a.base.component)
                size = max(st.types[0].bits // 8, 1) * len(_elements(st.operands[0]))
                open_.setdefault(key, []).append((st, a.base, a.offset, size))
            elif st.opcode not in _PURE:
                close(open_)
                continue
            for reg in _dest_registers(st.operands[0]) if st.operands else ():
                members = open_.pop(reg, None)
                if members is not None:
                    open_[("#closed", id(members))] = members
        close(open_)

    scan(body)
    return groups


def _live_allocas(fn: ir.Function, slots: set[int], edges: dict[int, int],
                  extra_use: dict[int, set[int]] | None = None) -> dict[int, set[int]]:
    """Backward liveness of register allocas over ``fn``'s blocks: per block (by id), the allocas
    that may be loaded before being stored on some path from its start (``extra_use``: allocas
    a block reads after its instructions, e.g. the saves a stop block will get)."""
    use: dict[int, set[int]] = {}
    kill: dict[int, set[int]] = {}
    succ: dict[int, list[int]] = {}
    for blk in fn.blocks:
        u, d = set(), set()
        for ins in blk.instructions:
            if isinstance(ins, ir.LoadInstr) and id(ins.operands[0]) in slots:
                a = id(ins.operands[0])
                if a not in d:
                    u.add(a)
            elif isinstance(ins, ir.StoreInstr) and id(ins.operands[1]) in slots:
                d.add(id(ins.operands[1]))
        u |= (extra_use or {}).get(id(blk), set()) - d
        use[id(blk)], kill[id(blk)] = u, d
        term = blk.terminator
        succ[id(blk)] = [id(op) for op in (term.operands if term is not None else ()) if isinstance(op, ir.Block)]
        if isinstance(term, ir.SwitchInstr):
            succ[id(blk)] += [id(dest) for _val, dest in term.cases] + [id(term.default)]
        if id(blk) in edges:
            succ[id(blk)].append(edges[id(blk)])
    live: dict[int, set[int]] = {k: set(v) for k, v in use.items()}
    order = [id(b) for b in reversed(fn.blocks)]
    changed = True
    while changed:
        changed = False
        for k in order:
            out = set().union(*(live[s] for s in succ[k] if s in live)) if succ[k] else set()
            new = use[k] | (out - kill[k])
            if new != live[k]:
                live[k] = new
                changed = True
    return live


def _successors(blk: ir.Block) -> list[int]:
    term = blk.terminator
    out = [id(op) for op in (term.operands if term is not None else ()) if isinstance(op, ir.Block)]
    if isinstance(term, ir.SwitchInstr):
        out += [id(dest) for _val, dest in term.cases] + [id(term.default)]
    return out


def _may_dirty(fn: ir.Function, slots: set[int], starts: list[ir.Block], ends: list[ir.Block],
               edges: dict[int, int]) -> dict[int, set[int]]:
    """Forward may-analysis over ``fn``'s blocks on the paths from ``starts`` only (the thread's
    start ``body``, or the resumes): per block (by id) reached that way, the register allocas
    that may have been stored since, at the block's start: the registers whose record slots may
    be stale there.  ``ends`` (the other kind of start) receive nothing; ``edges`` adds the
    resume -> continuation edges (not branches yet)."""
    gen: dict[int, set[int]] = {}
    preds: dict[int, list[int]] = {id(blk): [] for blk in fn.blocks}
    for blk in fn.blocks:
        gen[id(blk)] = {id(ins.operands[1]) for ins in blk.instructions
                        if isinstance(ins, ir.StoreInstr) and id(ins.operands[1]) in slots}
        for s in _successors(blk) + ([edges[id(blk)]] if id(blk) in edges else []):
            preds.setdefault(s, []).append(id(blk))
    start_ids, end_ids = {id(b) for b in starts}, {id(b) for b in ends}
    inn: dict[int, set[int] | None] = {id(blk): (set() if id(blk) in start_ids else None) for blk in fn.blocks}
    out: dict[int, set[int] | None] = {id(blk): None for blk in fn.blocks}
    changed = True
    while changed:
        changed = False
        for blk in fn.blocks:
            k = id(blk)
            if k in end_ids:
                continue
            new_in = set() if k in start_ids else None
            for p in preds.get(k, ()):
                if out[p] is not None:
                    new_in = (new_in or set()) | out[p]
            new_out = None if new_in is None else new_in | gen[k]
            if new_in != inn[k] or new_out != out[k]:
                inn[k], out[k] = new_in, new_out
                changed = True
    return {k: v for k, v in inn.items() if v is not None}


def _loop(fn: ir.Function, b: ir.IRBuilder, count: ir.Value, body, name: str) -> None:
    """for i in range(count): body(i) -- an IR loop; ``body`` may create blocks."""
    pre = b.block
    head, loop, done = (fn.append_basic_block(f"{name}_{x}") for x in ("head", "body", "done"))
    b.branch(head)
    b.position_at_end(head)
    i = b.phi(I64)
    i.add_incoming(I64(0), pre)
    b.cbranch(b.icmp_unsigned("<", i, count), loop, done)
    b.position_at_end(loop)
    body(i)
    i.add_incoming(b.add(i, I64(1)), b.block)
    b.branch(head)
    b.position_at_end(done)


def _release_warps_ir(fn: ir.Function, b: ir.IRBuilder, base, stride, first, tpc, slots) -> None:
    """Per warp of the CTA: the lanes stopped at one warp-exchange site take part (as the
    executor's ``_release_warps``): their published values go to the warp's exchange snapshot,
    each gets the participation mask, and they become runnable.

    Which site, when the warp's lanes wait at several (lanes run ahead of each other between
    stops, where the interpreter runs the lowest PC first): a lockstep point (volatile shared
    access) first; then a warp instruction whose membermask lanes are all there; then one
    without a membermask (activemask); then the lowest site. Lanes a membermask names that wait
    elsewhere must move first, or the instruction would run without them (fuzzer findings)."""
    site_slot, mask_slot, max_slot, live_slot, pres_slot, req_slot = slots
    nwarps = b.udiv(b.add(tpc, I64(31)), I64(32))
    lane0 = b.gep(base, [b.mul(first, stride)])
    cta = b.inttoptr(b.load(_field(b, lane0, L.T_CTA, I64)), I8P)
    xchg = b.inttoptr(b.load(_field(b, cta, L.C_XCHG, I64)), I8P)

    def lane_thr(w, lane):
        t = b.add(b.mul(w, I64(32)), lane)
        inb = b.icmp_unsigned("<", t, tpc)
        # Lanes past the CTA's last thread read lane 0's record (never used), not past the array.
        safe = b.select(inb, t, I64(0))
        return t, inb, b.gep(base, [b.mul(b.add(first, safe), stride)])

    def at_warp(inb, thr):
        return b.and_(inb, b.icmp_unsigned("==", b.load(_field(b, thr, L.T_STATE, I32)), I32(L.State.WARP)))

    def per_warp(w):
        b.store(I32(0x7FFFFFFF), site_slot)
        b.store(I32(-1), max_slot)
        b.store(I64(0), live_slot)
        b.store(I64(0), mask_slot)

        def scan(lane):
            t, inb, thr = lane_thr(w, lane)
            live = b.and_(inb, b.icmp_unsigned("!=", b.load(_field(b, thr, L.T_STATE, I32)), I32(L.State.EXITED)))
            b.store(b.or_(b.load(live_slot), b.shl(b.zext(live, I64), lane)), live_slot)
            at = at_warp(inb, thr)
            key = _warp_key(b, thr)
            lo, hi = b.load(site_slot), b.load(max_slot)
            b.store(b.select(b.and_(at, b.icmp_signed("<", key, lo)), key, lo), site_slot)
            b.store(b.select(b.and_(at, b.icmp_signed(">", key, hi)), key, hi), max_slot)

        _loop(fn, b, I64(32), scan, "wscan")
        # The lanes this warp has: a bound LLVM cannot fold, so the nested loops below stay loops
        # (unrolled 32 x 32 they made code generation take minutes).
        rest = b.sub(tpc, b.mul(w, I64(32)))
        nl = b.select(b.icmp_unsigned("<", rest, I64(32)), rest, I64(32))
        lo = b.load(site_slot)
        several = b.and_(b.icmp_signed("<", lo, b.load(max_slot)), b.icmp_signed(">=", lo, I32(1 << 30)))
        pick, chosen = fn.append_basic_block("wpick"), fn.append_basic_block("wchosen")
        b.cbranch(several, pick, chosen)
        b.position_at_end(pick)
        b.store(I32(0x7FFFFFFF), max_slot)              # now: the least (class << 28 | site)

        def candidate(lane):
            t, inb, thr = lane_thr(w, lane)
            yes, no = fn.append_basic_block("wc_yes"), fn.append_basic_block("wc_no")
            b.cbranch(at_warp(inb, thr), yes, no)
            b.position_at_end(yes)
            site = b.load(_field(b, thr, L.T_SITE, I32))
            b.store(I64(0), pres_slot)
            b.store(I64(0), req_slot)

            def member(m):
                _, inb2, thr2 = lane_thr(w, m)
                here = b.and_(at_warp(inb2, thr2),
                              b.icmp_unsigned("==", b.load(_field(b, thr2, L.T_SITE, I32)), site))
                b.store(b.or_(b.load(pres_slot), b.shl(b.zext(here, I64), m)), pres_slot)
                masked = b.and_(here, b.icmp_unsigned("==", b.load(_field(b, thr2, L.T_AUX, I32)), I32(2)))
                need = b.or_(b.zext(b.load(_field(b, thr2, L.T_AUX2, I32)), I64), I64(1 << 32))
                b.store(b.or_(b.load(req_slot), b.select(masked, need, I64(0))), req_slot)

            _loop(fn, b, nl, member, "wmem")
            req = b.load(req_slot)
            has_mask = b.icmp_unsigned("!=", b.lshr(req, I64(32)), I64(0))
            missing = b.and_(b.and_(req, b.load(live_slot)), b.xor(b.load(pres_slot), I64(-1)))
            complete = b.icmp_unsigned("==", b.and_(missing, I64(0xFFFFFFFF)), I64(0))
            cls = b.select(has_mask, b.select(complete, I32(1), I32(3)), I32(2))
            ckey = b.or_(b.shl(cls, I32(28)), site)
            cur = b.load(max_slot)
            b.store(b.select(b.icmp_signed("<", ckey, cur), ckey, cur), max_slot)
            b.branch(no)
            b.position_at_end(no)

        _loop(fn, b, nl, candidate, "wcand")
        best = b.and_(b.load(max_slot), I32((1 << 28) - 1))
        b.store(b.add(best, I32(1 << 30)), site_slot)    # a warp instruction's key
        b.branch(chosen)
        b.position_at_end(chosen)

        def make_mask(lane):
            t, inb, thr = lane_thr(w, lane)
            hit = b.and_(at_warp(inb, thr), b.icmp_unsigned("==", _warp_key(b, thr), b.load(site_slot)))
            b.store(b.or_(b.load(mask_slot), b.select(hit, b.shl(I64(1), lane), I64(0))), mask_slot)

        def release(lane):
            t, inb, thr = lane_thr(w, lane)
            mask = b.load(mask_slot)
            hit = b.trunc(b.lshr(mask, lane), ir.IntType(1))
            yes, no = fn.append_basic_block("wr_yes"), fn.append_basic_block("wr_no")
            b.cbranch(hit, yes, no)
            b.position_at_end(yes)
            dst = b.gep(xchg, [b.mul(b.add(b.mul(w, I64(32)), lane), I64(L.OUT_SLOTS * 8))])
            for k in range(L.OUT_SLOTS):
                b.store(b.load(_field(b, thr, L.T_OUT + 8 * k, I64)), _field(b, dst, 8 * k, I64))
            b.store(mask, _field(b, thr, L.T_IN, I64))
            b.store(I32(L.State.RUNNABLE), _field(b, thr, L.T_STATE, I32))
            b.branch(no)
            b.position_at_end(no)

        _loop(fn, b, I64(32), make_mask, "wmask")
        _loop(fn, b, I64(32), release, "wrel")

    _loop(fn, b, nwarps, per_warp, "warps")


def _membermask(ins: ptx.Instruction):
    """The membermask operand of a warp instruction (shfl.sync: the fifth operand; vote, match,
    redux: the third; bar.warp.sync: the only one), or None (activemask)."""
    index = {"shfl": 4, "vote": 2, "match": 2, "redux.sync": 2, "bar.warp.sync": 0}.get(ins.opcode)
    if index is None or len(ins.operands) <= index:
        return None
    return ins.operands[index]


def _warp_key(b: ir.IRBuilder, thr) -> ir.Value:
    """Release order of a lane stopped at a warp exchange: its site, lockstep points first."""
    lockstep = b.icmp_unsigned("==", b.load(_field(b, thr, L.T_AUX, I32)), I32(1))
    site = b.load(_field(b, thr, L.T_SITE, I32))
    return b.select(lockstep, site, b.add(site, I32(1 << 30)))


def add_driver(llmod: ir.Module, kernel: ir.Function, record_bytes: int, name: str = "ptxvm_run") -> ir.Function:
    """``i32 ptxvm_run(ctx, records, n, stride, first_thread, first_round)``: run the threads of
    whole CTAs (``n`` threads, a multiple of the CTA size) to their next stops.

    Per CTA it repeats rounds while the CTA is only waiting at one plain barrier (every non-exited
    thread at `bar.sync id` without a count, id < 16): it releases the barrier itself, so
    barrier-heavy kernels run without returning to Python.  Anything else (counts, arrivals,
    bar.red, warp exchanges, printf, yields) is left for the executor.  Returns the first state
    that ends the launch (fault, trap, watchdog, assert), leaving the other threads where they
    are so the executor can report precisely; else 0 when every thread has exited, PENDING when
    some wait for the executor. Adds the instructions its threads ran to the context's X_STEPS.

    The first round also zeroes each thread's record just before writing its identity: in the
    cache, rather than a separate pass over the whole batch (uninitialised registers read 0)."""
    fn = ir.Function(llmod, ir.FunctionType(I32, [I64P, I8P, I64, I64, I64, I64]), name=name)
    # The kernel runs only from here: inlined into the loop over threads (no call, no prologue
    # and epilogue per thread and stop), and not kept as a function of its own.
    kernel.attributes.add("alwaysinline")
    kernel.linkage = "internal"
    ctx, base, n, stride, first_thread, first_round = fn.args
    blocks = {k: fn.append_basic_block(k) for k in (
        "entry", "cta_head", "cta_init", "round", "thr", "run", "classify", "round_end", "release",
        "cta_next", "done", "fatal")}
    b = ir.IRBuilder(blocks["entry"])
    ld = lambda slot: b.load(b.gep(ctx, [I64(slot)]))  # noqa: E731
    ntid_x, ntid_y = ld(L.X_NTID), ld(L.X_NTID + 1)
    tpc = b.mul(b.mul(ntid_x, ntid_y), ld(L.X_NTID + 2))
    nctas = b.udiv(n, tpc)
    cta_base = b.udiv(first_thread, tpc)            # chunks are whole CTAs
    memset = llmod.declare_intrinsic("llvm.memset", [I8P, I64])
    # Scratch of the warp release, in the entry block (no stack growth per round).
    warp_slots = (b.alloca(I32), b.alloca(I64), b.alloca(I32), b.alloca(I64), b.alloca(I64), b.alloca(I64))
    steps_sum, pending = b.alloca(I64), b.alloca(I1)
    b.store(I64(0), steps_sum)
    b.store(I1(0), pending)
    b.branch(blocks["cta_head"])

    b.position_at_end(blocks["cta_head"])
    c = b.phi(I64)
    c.add_incoming(I64(0), blocks["entry"])
    more = fn.append_basic_block("cta_more")
    b.cbranch(b.icmp_unsigned("<", c, nctas), more, blocks["done"])
    b.position_at_end(more)
    # Asked to stop (Ctrl-C): between CTAs, for kernels whose threads are short.
    stop = b.load_atomic(b.gep(ctx, [I64(L.X_STOP)]), "monotonic", 8)
    interrupted = fn.append_basic_block("interrupted")
    b.cbranch(b.icmp_unsigned("!=", stop, I64(0)), interrupted, blocks["cta_init"]).set_weights([1, 1000])
    b.position_at_end(interrupted)
    b.ret(I32(L.State.INTERRUPTED))

    # First call: each thread's identity and memory, written here (native) rather than by numpy,
    # once per CTA before its first round (not in every round of the call).
    b.position_at_end(blocks["cta_init"])
    first0 = b.mul(c, tpc)
    init_loop = fn.append_basic_block("init")
    b.cbranch(b.icmp_unsigned("!=", first_round, I64(0)), init_loop, blocks["round"])
    b.position_at_end(init_loop)
    # %tid and the record's place are counted, not divided out, per thread (divisions were a
    # sixth of a vector add's time); the CTA's record is the same for all its threads.
    t0, tx, ty, tz = (b.phi(I64) for _ in range(4))
    for v in (t0, tx, ty, tz):
        v.add_incoming(I64(0), blocks["cta_init"])
    gt0 = b.add(first_thread, first0)                # index of the CTA's first thread in the batch
    cta_rec = b.add(ld(L.X_CTAS), b.mul(b.add(cta_base, c), I64(L.CTA_RECORD)))
    ithr = b.gep(base, [b.mul(b.add(first0, t0), stride)])
    b.call(memset, [ithr, ir.Constant(I8, 0), I64(record_bytes), I1(0)])
    b.store(b.trunc(t0, I32), _field(b, ithr, L.T_LINEAR, I32))
    for k, v in enumerate((tx, ty, tz)):
        b.store(b.trunc(v, I32), _field(b, ithr, L.T_TID + 4 * k, I32))
    b.store(cta_rec, _field(b, ithr, L.T_CTA, I64))
    b.store(b.add(ld(L.X_LOCAL_BASE), b.mul(b.add(gt0, t0), ld(L.X_LOCAL_STRIDE))), _field(b, ithr, L.T_LOCAL, I64))
    b.store(ld(L.X_KFRAME), _field(b, ithr, L.T_SP, I64))
    tx1 = b.add(tx, I64(1))
    wrap_x = b.icmp_unsigned("==", tx1, ntid_x)
    ty1 = b.add(ty, b.zext(wrap_x, I64))
    wrap_y = b.icmp_unsigned("==", ty1, ntid_y)
    t0n = b.add(t0, I64(1))
    for v, nxt in ((t0, t0n), (tx, b.select(wrap_x, I64(0), tx1)), (ty, b.select(wrap_y, I64(0), ty1)),
                   (tz, b.add(tz, b.zext(wrap_y, I64)))):
        v.add_incoming(nxt, init_loop)
    b.cbranch(b.icmp_unsigned("<", t0n, tpc), init_loop, blocks["round"])

    b.position_at_end(blocks["round"])
    # ``released``: the previous round ended with the CTA's plain barrier complete, so threads
    # waiting there run (their state word is rewritten at their next stop, not by a pass here).
    released = b.phi(I1)
    released.add_incoming(I1(0), blocks["cta_init"])
    released.add_incoming(I1(0), init_loop)
    first = b.mul(c, tpc)
    b.branch(blocks["thr"])

    b.position_at_end(blocks["thr"])
    t, exited, atbar, other, bid, warps = (b.phi(ty) for ty in (I64, I64, I64, I64, I32, I64))
    for v, init in ((t, I64(0)), (exited, I64(0)), (atbar, I64(0)), (other, I64(0)), (bid, I32(-1)), (warps, I64(0))):
        v.add_incoming(init, blocks["round"])
    thr = b.gep(base, [b.mul(b.add(first, t), stride)])
    check_blk = b.block
    st0 = b.load(_field(b, thr, L.T_STATE, I32))
    go = b.or_(b.icmp_unsigned("==", st0, I32(L.State.RUNNABLE)),
               b.and_(released, b.icmp_unsigned("==", st0, I32(L.State.BARRIER))))
    b.cbranch(go, blocks["run"], blocks["classify"])

    b.position_at_end(blocks["run"])
    # Each call may run QUANTUM instructions before yielding, within the launch's budget.
    steps = b.load(_field(b, thr, L.T_STEPS, I64))
    budget = ld(L.X_BUDGET)
    quantum = b.add(steps, I64(L.QUANTUM))
    b.store(b.select(b.icmp_unsigned("<", quantum, budget), quantum, budget), _field(b, thr, L.T_LIMIT, I64))
    st1 = b.call(kernel, [ctx, thr])
    ran = b.sub(b.load(_field(b, thr, L.T_STEPS, I64)), steps)
    b.store(b.add(b.load(steps_sum), ran), steps_sum)
    is_fatal = b.or_(b.or_(b.icmp_unsigned("==", st1, I32(L.State.FAULT)), b.icmp_unsigned("==", st1, I32(L.State.TRAP))),
                     b.or_(b.icmp_unsigned("==", st1, I32(L.State.WATCHDOG)), b.icmp_unsigned("==", st1, I32(L.State.ASSERT))))
    is_fatal = b.or_(is_fatal, b.icmp_unsigned("==", st1, I32(L.State.INTERRUPTED)))
    b.cbranch(is_fatal, blocks["fatal"], blocks["classify"]).set_weights([1, 1000])

    b.position_at_end(blocks["classify"])
    st = b.phi(I32)
    st.add_incoming(st0, check_blk)
    st.add_incoming(st1, blocks["run"])
    aux = b.load(_field(b, thr, L.T_AUX, I32))
    aux2 = b.load(_field(b, thr, L.T_AUX2, I32))
    fresh = b.icmp_signed("==", bid, I32(-1))
    # The common case first: at the plain barrier the CTA's threads wait at (or the first one).
    same = b.and_(b.and_(b.icmp_unsigned("==", st, I32(L.State.BARRIER)), b.icmp_unsigned("==", aux2, I32(0))),
                  b.or_(fresh, b.icmp_unsigned("==", aux, bid)))
    cls_fast, cls_slow, cls_join = (fn.append_basic_block(n) for n in ("cls_bar", "cls_other", "cls_join"))
    # Weighted, so that LLVM keeps the branch: as selects, the slow side ran for every thread.
    b.cbranch(same, cls_fast, cls_slow).set_weights([1000, 1])
    b.position_at_end(cls_fast)
    atbar_f = b.add(atbar, I64(1))
    b.branch(cls_join)
    b.position_at_end(cls_slow)
    is_exit = b.icmp_unsigned("==", st, I32(L.State.EXITED))
    is_bar = b.and_(b.icmp_unsigned("==", st, I32(L.State.BARRIER)), b.icmp_unsigned("==", aux2, I32(0)))
    mism = b.and_(is_bar, b.and_(b.not_(fresh), b.icmp_unsigned("!=", aux, bid)))
    bid_s = b.select(b.and_(is_bar, fresh), aux, bid)
    exited_s = b.add(exited, b.zext(is_exit, I64))
    atbar_s = b.add(atbar, b.zext(is_bar, I64))
    is_warp = b.icmp_unsigned("==", st, I32(L.State.WARP))
    warps_s = b.add(warps, b.zext(is_warp, I64))
    other_s = b.add(b.add(other, b.zext(b.not_(b.or_(b.or_(is_exit, is_bar), is_warp)), I64)), b.zext(mism, I64))
    b.branch(cls_join)
    b.position_at_end(cls_join)

    def join(ty, fast, slow):
        v = b.phi(ty)
        v.add_incoming(fast, cls_fast)
        v.add_incoming(slow, cls_slow)
        return v

    exited2, atbar2, other2 = join(I64, exited, exited_s), join(I64, atbar_f, atbar_s), join(I64, other, other_s)
    bid2, warps2 = join(I32, aux, bid_s), join(I64, warps, warps_s)
    t2 = b.add(t, I64(1))
    for v, new in ((t, t2), (exited, exited2), (atbar, atbar2), (other, other2), (bid, bid2), (warps, warps2)):
        v.add_incoming(new, cls_join)
    b.cbranch(b.icmp_unsigned("<", t2, tpc), blocks["thr"], blocks["round_end"])

    b.position_at_end(blocks["round_end"])
    quiet = b.icmp_unsigned("==", other2, I64(0))
    can = b.and_(b.and_(b.icmp_unsigned(">", atbar2, I64(0)), quiet), b.icmp_unsigned("<", bid2, I32(16)))
    bar_or_next = fn.append_basic_block("bar_or_next")
    warp_blk = fn.append_basic_block("warp_release")
    b.cbranch(b.and_(quiet, b.icmp_unsigned(">", warps2, I64(0))), warp_blk, bar_or_next)
    b.position_at_end(bar_or_next)
    b.cbranch(can, blocks["release"], blocks["cta_next"])
    b.position_at_end(warp_blk)
    _release_warps_ir(fn, b, base, stride, first, tpc, warp_slots)
    released.add_incoming(I1(0), b.block)
    b.branch(blocks["round"])

    b.position_at_end(blocks["release"])
    released.add_incoming(I1(1), blocks["release"])
    b.branch(blocks["round"])

    b.position_at_end(blocks["cta_next"])
    # The CTA's last round of this call: threads not exited wait for the executor.
    b.store(b.or_(b.load(pending), b.icmp_unsigned("!=", exited2, tpc)), pending)
    c.add_incoming(b.add(c, I64(1)), blocks["cta_next"])
    b.branch(blocks["cta_head"])
    def count_steps():
        b.atomic_rmw("add", b.gep(ctx, [I64(L.X_STEPS)]), b.load(steps_sum), "monotonic")

    b.position_at_end(blocks["done"])
    count_steps()
    b.ret(b.select(b.load(pending), I32(L.PENDING), I32(0)))
    b.position_at_end(blocks["fatal"])
    count_steps()
    b.ret(st1)
    return fn
