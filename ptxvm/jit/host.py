"""Target hooks for the host JIT: threads as resumable state machines, checked memory.

A lowered kernel is ``i32 kernel(i64* ctx, i8* thread_record)``.  It runs one thread
until the thread exits, faults, or reaches a synchronisation point (a barrier, a warp
instruction, printf); there it saves every register into its record, notes where to
resume, and returns.  The executor settles the synchronisation across threads and calls
the thread again, which restores its registers and continues after the stop.

Here: the ABI, call frames and their budgets, stops, control and the primitive special
registers.  Elsewhere in ``jit/``: checked memory access (``checked``), the save and reload
of registers at stops (``resume``), the driver loop over a CTA's threads (``driver``), the
per-function state (``state``).
"""

from __future__ import annotations

from llvmlite import ir

from ..ir import nodes as ptx
from ..ir.types import ScalarType
from ..lift.function import I1, I8, I8P, I32, I64, FunctionLowering
from ..lift.hooks import TargetHooks, WarpView
from ..lift.nan import defer_nan_canonicalisation
from ..machine import cdp
from ..passes.shared_loads import shared_load_groups
from . import devrt_calls
from . import layout as L
from . import texture as texture_call
from .checked import CheckedMemory
from .compact import add_compact_driver
from .driver import add_driver
from .resume import lower_stops
from .state import HostFunctionState, Stop, field_ptr, host_state

I32P, I64P = ir.PointerType(I32), ir.PointerType(I64)


class HostWarpView(WarpView):
    def __init__(self, xchg: ir.Value, mask: ir.Value, lane: ir.Value) -> None:
        self.xchg, self.mask, self.lane = xchg, mask, lane

    def _slot(self, b: ir.IRBuilder, lane: ir.Value, slot: int) -> ir.Value:
        idx = b.add(b.mul(b.zext(lane, I64), I64(L.OUT_SLOTS * 8)), I64(slot * 8))
        return b.bitcast(b.gep(self.xchg, [idx]), I64P)

    def value(self, b: ir.IRBuilder, lane: ir.Value, slot: int) -> ir.Value:
        return b.load(self._slot(b, lane, slot))

    def store(self, b: ir.IRBuilder, lane: ir.Value, slot: int, value: ir.Value) -> None:
        b.store(value, self._slot(b, lane, slot))


class HostHooks(CheckedMemory, TargetHooks):
    name = "host"
    orders_accesses_in_lowering = True   # ordered accesses are LLVM atomics (CTAs run concurrently)
    warp_lanes_in_turn = True            # a round runs each runnable thread in turn (jit/driver.py)
    # printf and the device runtime's calls stop the thread (the executor prints, allocates, queues).
    stopping_builtins = frozenset({"vprintf"}) | frozenset(cdp.ENTRY_POINTS)
    extra_builtins = frozenset(cdp.ENTRY_POINTS) | frozenset(cdp.REFUSED)

    def __init__(self, triple: str = "", data_layout: str = "") -> None:
        self.triple, self.data_layout = triple, data_layout
        self.save_slots = 0
        self.exchanges = False            # some instruction exchanges values across a warp
        self.kernel_stack = 0             # bytes of the kernel's own `.param` buffers (host stack)
        self.max_frame = 0                # the largest `.func` frame cost (bytes)
        self.kernel_stops = 0             # stops the kernel's lowering made (barriers, warp, printf, yields)
        self.stop_states: set[int] = set()  # the thread states of those stops (layout.State)
        self.host_calls = False           # calls back into the executor (malloc/free in a `.func`, textures)
        self.compact = False              # the driver runs threads without a record each (jit/compact)
        self._ctx_loads: list[tuple[int, ir.Instruction]] = []    # (slot, load): see _mark_invariant

    @property
    def record_bytes(self) -> int:
        """Bytes of a thread record (the executor's stride), once every function is lowered."""
        return (L.THREAD_HEADER + 8 * self.save_slots + 15) // 16 * 16

    texture = texture_call.lower         # tex, tld4, txq, suld, sust, sured, suq (lift.ops.texture)

    def finish_module(self, ml, entry: ir.Function) -> None:
        # A kernel that never stops runs each thread start to end in one call: one record per host
        # thread serves them all. The executor's callback (X_HOST_CALL) finds a thread by its
        # record's place, so kernels that call it keep a record per thread.
        self.compact = self.kernel_stops == 0 and not self.host_calls
        self._mark_invariant(ml.llmod)
        if self.compact:
            add_compact_driver(ml.llmod, entry, self.record_bytes)
        else:
            add_driver(ml.llmod, entry, self.record_bytes)

    # ------------------------------------------------------------------ ABI
    def kernel_signature(self) -> ir.FunctionType:
        return ir.FunctionType(I32, [I64P, I8P])

    def function_prefix_args(self) -> list[ir.Type]:
        return [I64P, I8P]

    def function_prefix_values(self, fl: FunctionLowering) -> list[ir.Value]:
        return [fl.llfn.args[0], fl.llfn.args[1]]

    def new_function_state(self, fl: FunctionLowering) -> HostFunctionState:
        ctx, thr = fl.llfn.args[0], fl.llfn.args[1]
        ctx.name, thr.name = "ctx", "thr"
        # Executed instructions, counted in a register (promoted by mem2reg; consecutive adds fold);
        # it reaches the thread record at stops, calls, returns, exits and faults.
        st = HostFunctionState(ctx, thr, fl.hidden_register("steps", ScalarType.U64),
                               shared_load_groups(fl.fn.body, fl.ml.layout.shared_bytes))
        if fl.is_kernel:
            st.limit_reg = fl.hidden_register("limit", ScalarType.U64)
            st.fresh = fl._alloca_b.alloca(I1, name="fresh")     # started in this call (not resumed)
        return st

    def begin_function(self, fl: FunctionLowering) -> None:
        st = host_state(fl)
        fl.b.store(fl.b.load(self.thr(fl, L.T_STEPS, I64)), st.steps_reg)
        if fl.is_kernel:
            fl.b.store(I1(1), st.fresh)
            fl.b.store(fl.b.load(self.thr(fl, L.T_LIMIT, I64)), st.limit_reg)
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
        cost = host_state(fl).frame_cost = ir.GlobalVariable(fl.ml.llmod, I64, name=f"ptxvm.frame_cost.{fl.llfn.name}")
        cost.global_constant = True
        cost.linkage = "internal"
        sp = self.thr(fl, L.T_STACK, I64)
        used = b.add(b.load(sp), b.load(cost))
        big, fits = fl.new_block("stack_budget"), fl.new_block("stack_ok")
        b.cbranch(b.icmp_unsigned(">", used, self.ctx(fl, L.X_STACK_LIMIT)), big, fits)
        b.position_at_end(big)
        self._fault(fl, None, None, used, L.FaultKind.STACK, 1)
        b.position_at_end(fits)
        b.store(used, sp)

    def function_return(self, fl: FunctionLowering) -> None:
        b = fl.b
        b.store(b.load(host_state(fl).steps_reg), self.thr(fl, L.T_STEPS, I64))
        p = self.thr(fl, L.T_DEPTH, I32)
        b.store(b.sub(b.load(p), I32(1)), p)
        sp = self.thr(fl, L.T_STACK, I64)
        b.store(b.sub(b.load(sp), b.load(host_state(fl).frame_cost)), sp)
        self._release_frame(fl)

    def before_instruction(self, fl: FunctionLowering, ins: ptx.Instruction) -> None:
        """Each instruction the walk reaches: one more executed instruction (guarded or not, as
        the interpreter counts), and the site of the watchdog reports of the stretch it starts."""
        b = fl.b
        st = host_state(fl)
        b.store(b.add(b.load(st.steps_reg), I64(1)), st.steps_reg)
        if st.watchdog_sites:
            site = I32(fl.ml.site(fl, ins))
            for store, placeholder in st.watchdog_sites:
                store.replace_usage(placeholder, site)
            st.watchdog_sites = []

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
        b.store(b.load(self.thr(fl, L.T_STEPS, I64)), host_state(fl).steps_reg)
        stop, cont = fl.new_block("callee_stopped"), fl.new_block("after_call")
        b.cbranch(b.icmp_unsigned("!=", status, I32(0)), stop, cont)
        b.position_at_end(stop)
        b.ret(status)
        b.position_at_end(cont)

    # ------------------------------------------------------------------ context access
    def ctx(self, fl: FunctionLowering, slot: int) -> ir.Value:
        if slot == L.X_HOST_CALL:
            self.host_calls = True        # the executor's callback: it finds the thread by its record
        load = fl.b.load(fl.b.gep(host_state(fl).ctx, [I64(slot)]))
        self._ctx_loads.append((slot, load))
        return load

    def driver_mode(self) -> str:
        """The launch statistics' words for the driver this kernel got, and why."""
        if self.compact:
            return "compact (no stops: threads run start to end in one record per host thread)"
        names = {v: k.lower() for k, v in vars(L.State).items() if k.isupper()}
        why = sorted(names.get(s, str(s)) for s in self.stop_states)
        if self.host_calls:
            why.append("executor callback")
        return "per-thread records (" + ", ".join(why) + ")"

    def _mark_invariant(self, llmod: ir.Module) -> None:
        """The launch context's slots that no one writes while the generated code runs, as
        invariant loads: LLVM may then hoist them out of the driver's loop over threads (it could
        not prove a global store does not write the context). Not X_STEPS, X_STOP (other host
        threads write them), nor the page tables when a callback may remap them (device malloc
        and free in a `.func`: ``executor._remap``)."""
        moving = {L.X_STEPS, L.X_STOP} | ({L.X_PAGES, L.X_NPAGES, L.X_ALLOCS} if self.host_calls else set())
        md = llmod.add_metadata([])
        for slot, load in self._ctx_loads:
            if slot not in moving:
                load.set_metadata("invariant.load", md)
        self._ctx_loads = []

    def thr(self, fl: FunctionLowering, offset: int, ty: ir.Type) -> ir.Value:
        return field_ptr(fl.b, host_state(fl).thr, offset, ty)

    def set_state(self, fl: FunctionLowering, state: int, site: int) -> None:
        b = fl.b
        b.store(I32(state), self.thr(fl, L.T_STATE, I32))
        b.store(I32(site), self.thr(fl, L.T_SITE, I32))

    def cta_field(self, fl: FunctionLowering, offset: int, ty: ir.Type) -> ir.Value:
        cta = fl.b.inttoptr(fl.b.load(self.thr(fl, L.T_CTA, I64)), I8P)
        return field_ptr(fl.b, cta, offset, ty)

    # ------------------------------------------------------------------ stops
    def stop(self, fl: FunctionLowering, state: int, site: int, ins: ptx.Instruction) -> None:
        """Save registers, record the resume point, return ``state``; continue after resume."""
        if not fl.is_kernel:
            raise fl.unsupported(ins, "synchronises inside a called function, which the host JIT "
                                      "does not support yet")
        self.set_state(fl, state, site)
        stops = host_state(fl).stops
        k = len(stops) + 1
        stop = Stop(k, state, fl.new_block(f"stop{k}"), fl.new_block(f"resume{k}"), fl.new_block(f"cont{k}"))
        fl.b.branch(stop.stop)
        stops.append(stop)
        fl.b.position_at_end(stop.cont)

    def finish_function(self, fl: FunctionLowering) -> None:
        defer_nan_canonicalisation(fl)
        st = host_state(fl)
        st.watchdog_sites = []            # a stretch without instructions: its report has no site
        if not fl.is_kernel:
            cost = self._frame_cost(fl)
            st.frame_cost.initializer = I64(cost)
            self.max_frame = max(self.max_frame, cost)
            return
        self.kernel_stack = self._frame_cost(fl)
        self.kernel_stops += len(st.stops)
        self.stop_states |= {s.state for s in st.stops}
        self.save_slots = max(self.save_slots, lower_stops(fl, st))

    # ------------------------------------------------------------------ control
    def exit_thread(self, fl: FunctionLowering, ins) -> None:
        fl.b.store(fl.b.load(host_state(fl).steps_reg), self.thr(fl, L.T_STEPS, I64))
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
        n = b.load(host_state(fl).steps_reg)
        limit = b.load(host_state(fl).limit_reg) if fl.is_kernel else b.load(self.thr(fl, L.T_LIMIT, I64))
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
            host_state(fl).watchdog_sites.append((b.store(placeholder, self.thr(fl, L.T_SITE, I32)), placeholder))
            b.ret(I32(state))
        b.position_at_end(poll)
        # Atomic: another host thread writes it, and a plain load could be hoisted out of the loop.
        stop = b.load_atomic(b.gep(host_state(fl).ctx, [I64(L.X_STOP)]), "monotonic", 8)
        b.cbranch(b.icmp_unsigned("!=", stop, I64(0)), intr, spin)
        b.position_at_end(spin)
        quantum = b.add(n, self.ctx(fl, L.X_QUANTUM))     # short in cooperative launches
        nxt = b.select(b.icmp_unsigned("<", quantum, budget), quantum, budget)
        if fl.is_kernel and fl.ml.may_spin:
            self.stop(fl, L.State.YIELD, 0, None)
        elif fl.is_kernel:
            b.store(nxt, host_state(fl).limit_reg)
        else:
            b.store(nxt, self.thr(fl, L.T_LIMIT, I64))
        b.branch(ok)
        b.position_at_end(ok)

    def before_call(self, fl: FunctionLowering) -> None:
        b = fl.b
        b.store(b.load(host_state(fl).steps_reg), self.thr(fl, L.T_STEPS, I64))
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
        if name in cdp.REFUSED:
            raise fl.unsupported(ins, cdp.REFUSED[name])
        if name in cdp.ENTRY_POINTS:
            devrt_calls.lower(self, fl, ins, cdp.ENTRY_POINTS[name], rets, args)
            return
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
        """Primitive special registers (the warp registers are derived in ``lift.sregs``)."""
        read = _SREGS.get(name)
        if read is None and name.startswith("%reserved_smem_offset"):
            read = _zero
        if read is None and name.startswith("%envreg"):
            read = _envreg
        if read is None:
            raise fl.unsupported(ins, f"reads special register `{name}`, which the host JIT does not provide")
        return read(self, fl, {"x": 0, "y": 1, "z": 2}.get(component or "x", 0), name, bits)

    def linear_tid(self, fl: FunctionLowering) -> ir.Value:
        return fl.b.load(self.thr(fl, L.T_LINEAR, I32))     # written by the driver at the start


def _membermask(ins: ptx.Instruction):
    """The membermask operand of a warp instruction (shfl.sync: the fifth operand; vote, match,
    redux: the third; bar.warp.sync: the only one), or None (activemask)."""
    index = {"shfl": 4, "vote": 2, "match": 2, "redux.sync": 2, "bar.warp.sync": 0}.get(ins.opcode)
    if index is None or len(ins.operands) <= index:
        return None
    return ins.operands[index]


# ---------------------------------------------------------------------- primitive special registers
# Each: (hooks, fl, component 0-2, name, bits) -> the value (i32, or i64 for 64-bit reads).

def _tid(h: HostHooks, fl: FunctionLowering, comp: int, name: str, bits: int) -> ir.Value:
    return fl.b.load(h.thr(fl, L.T_TID + 4 * comp, I32))


def _ntid(h: HostHooks, fl: FunctionLowering, comp: int, name: str, bits: int) -> ir.Value:
    return fl.b.trunc(h.ctx(fl, L.X_NTID + comp), I32)


def _nctaid(h: HostHooks, fl: FunctionLowering, comp: int, name: str, bits: int) -> ir.Value:
    return fl.b.trunc(h.ctx(fl, L.X_NCTAID + comp), I32)


def _ctaid(h: HostHooks, fl: FunctionLowering, comp: int, name: str, bits: int) -> ir.Value:
    return fl.b.load(h.cta_field(fl, L.C_CTAID + 4 * comp, I32))


def _clock(h: HostHooks, fl: FunctionLowering, comp: int, name: str, bits: int) -> ir.Value:
    b = fl.b
    steps = b.load(h.thr(fl, L.T_STEPS, I64))       # monotone and deterministic
    v = b.lshr(steps, I64(32)) if name.endswith("_hi") else steps
    return v if bits == 64 else b.trunc(v, I32)


def _zero(h: HostHooks, fl: FunctionLowering, comp: int, name: str, bits: int) -> ir.Value:
    return I32(0) if bits <= 32 else I64(0)


def _nsmid(h: HostHooks, fl: FunctionLowering, comp: int, name: str, bits: int) -> ir.Value:
    return I32(1)


def _dynamic_smem(h: HostHooks, fl: FunctionLowering, comp: int, name: str, bits: int) -> ir.Value:
    return fl.b.trunc(h.ctx(fl, L.X_DYN_SHARED), I32)


def _total_smem(h: HostHooks, fl: FunctionLowering, comp: int, name: str, bits: int) -> ir.Value:
    return fl.b.trunc(h.ctx(fl, L.X_SHARED_SIZE), I32)


def _envreg(h: HostHooks, fl: FunctionLowering, comp: int, name: str, bits: int) -> ir.Value:
    """Driver-defined (PTX ISA §10.27): the launch's value (machine.cooperative: the grid workspace)."""
    b = fl.b
    table = b.inttoptr(h.ctx(fl, L.X_ENVREG), ir.PointerType(I32))
    return b.load(b.gep(table, [I32(int(name[len("%envreg"):]))]))


_SREGS = {
    "%tid": _tid, "%ntid": _ntid, "%nctaid": _nctaid, "%ctaid": _ctaid,
    **dict.fromkeys(("%clock", "%clock64", "%clock_hi", "%globaltimer", "%globaltimer_lo",
                     "%globaltimer_hi"), _clock),
    "%smid": _zero, "%gridid": _zero, "%nsmid": _nsmid,
    "%dynamic_smem_size": _dynamic_smem, "%total_smem_size": _total_smem, "%aggr_smem_size": _total_smem,
}

__all__ = ["I1", "I8", "HostHooks"]
