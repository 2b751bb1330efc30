"""The warp-as-SIMD lowering: one LLVM function runs a whole warp, its registers ``<32 x T>``.

Control flow is the interpreter's: every lane has a PC (the index of its straight-line segment);
the warp runs the segment at the lowest PC among its runnable lanes, for the lanes there (the
mask), then each of those lanes takes its own successor.  So divergent branches, loops with a
per-lane exit and unstructured control flow all reconverge as the interpreter's threads do.
``bar.sync`` ends a segment: the lanes there wait, and the warp function returns when no lane
can run; the CTA driver (``driver``) runs the CTA's warps in turn and releases the barrier when
every warp is waiting or done, so nothing is recorded per thread.  Registers live in allocas
(promoted to SSA by LLVM), written to the warp's slot of a state buffer only across a barrier."""

from __future__ import annotations

from dataclasses import dataclass

from llvmlite import ir

from ...errors import UnsupportedError
from ...ir import nodes as ptx
from ...ir.types import ScalarType, StateSpace
from ...lift.function import I1, I8, I8P, I32, I64, immediate_bits, storage_type
from ...lift.module import Site
from ...machine.addressmap import SHARED_BASE
from .. import layout as L
from . import memory as M
from . import vec as V
from .ops import lower_alu, lower_shfl

I64P = ir.PointerType(I64)
EXIT = 0x7FFFFFFF                 # the PC of a lane that has exited (or never existed)
PC_OFF, WAIT_OFF, STEPS_OFF, REGS_OFF = 0, 128, 144, 400     # the warp state buffer's layout
OUT_LANE, OUT_SITE, OUT_ADDR, OUT_KIND, OUT_SIZE, OUT_SPACE, OUT_STEPS = range(7)
_ENDS = {"bra", "ret", "exit", "bar", "barrier"}


@dataclass
class Segment:
    instructions: list[tuple[ptx.Instruction, tuple[int, int, int] | None]]


def segments(kernel: ptx.Function) -> tuple[list[Segment], dict[str, int]]:
    """Straight-line stretches in program order, split at labels and after branches and
    barriers; and the segment of each label."""
    segs: list[Segment] = [Segment([])]
    labels: dict[str, int] = {}
    loc = None
    for st in kernel.body.statements:
        if isinstance(st, ptx.Label):
            if segs[-1].instructions:
                segs.append(Segment([]))
            labels[st.name] = len(segs) - 1
        elif isinstance(st, ptx.Loc):
            loc = (st.file, st.line, st.column)
        elif isinstance(st, ptx.Instruction):
            segs[-1].instructions.append((st, loc))
            if st.opcode in _ENDS:
                segs.append(Segment([]))
    return segs, labels


_NO_DEST = {"st", "bar", "barrier", "bra", "ret", "exit"}


def _names(op) -> list[str]:
    if isinstance(op, ptx.Negated):
        return _names(op.operand)
    if isinstance(op, ptx.Pair):
        return _names(op.first) + _names(op.second)
    if isinstance(op, ptx.Register):
        return [op.name]
    if isinstance(op, ptx.Address) and isinstance(op.base, ptx.Register):
        return [op.base.name]
    return []


def live_across_barriers(kernel: ptx.Function) -> set[str]:
    """The registers some lane may still read after a barrier: the union of the live-in sets of
    the segments that follow a barrier (where waiting lanes resume; every other lane has exited
    when the warp returns).  Per-lane liveness over the segment graph: a write kills only when
    unguarded (a guarded one leaves its lanes' old values); every other register an instruction
    names counts as read."""
    segs, labels = segments(kernel)
    use: list[set[str]] = []
    kill: list[set[str]] = []
    succ: list[set[int]] = []
    resume: set[int] = set()
    for k, seg in enumerate(segs):
        u: set[str] = set()
        d: set[str] = set()
        nxt = {k + 1} if k + 1 < len(segs) else set()
        for ins, _loc in seg.instructions:
            reads = list(ins.operands[1:] if ins.opcode not in _NO_DEST else ins.operands)
            if ins.guard is not None:
                reads.append(ins.guard.register)
            u |= {n for o in reads for n in _names(o)} - d
            if ins.opcode not in _NO_DEST and ins.operands and ins.guard is None:
                d |= set(_names(ins.operands[0])) - u
            elif ins.opcode not in _NO_DEST and ins.operands:
                u |= set(_names(ins.operands[0])) - d
            if ins.opcode == "bra":
                nxt.add(labels.get(ins.operands[0].name, k))
                if ins.guard is None:
                    nxt.discard(k + 1)
            elif ins.opcode in ("ret", "exit") and ins.guard is None:
                nxt.discard(k + 1)
            elif ins.opcode in ("bar", "barrier") and k + 1 < len(segs):
                resume.add(k + 1)
        use.append(u)
        kill.append(d)
        succ.append(nxt)
    live: list[set[str]] = [set() for _ in segs]
    changed = True
    while changed:
        changed = False
        for k in reversed(range(len(segs))):
            out = set().union(*(live[j] for j in succ[k])) if succ[k] else set()
            new = use[k] | (out - kill[k])
            if new != live[k]:
                live[k], changed = new, True
    return set().union(*(live[k] for k in resume)) if resume else set()


class WarpLowering:
    """Builds ``i32 ptxvm_simd_warp(ctx, state, cta_record, warp, out)``: run the warp until no
    lane can run; 0 all exited, BARRIER some wait at bar.sync, else a fatal state (``out``)."""

    def __init__(self, llmod: ir.Module, kernel: ptx.Function, layout, sites: list[Site]) -> None:
        self.kernel, self.layout, self.sites = kernel, layout, sites
        self.gcheck = M.add_global_check(llmod)
        fty = ir.FunctionType(I32, [I64P, I8P, I64, I64, I64P])
        self.fn = fn = ir.Function(llmod, fty, name="ptxvm_simd_warp")
        fn.linkage = "internal"
        self.ctx, self.state, self.cta, self.warp, self.out = fn.args
        self.state.add_attribute("noalias")
        self.entry = fn.append_basic_block("entry")
        self.b = ir.IRBuilder(self.entry)
        self.regs: dict[str, tuple[ir.Value, ScalarType]] = {}
        self._slots: dict[ir.IntType, ir.Value] = {}
        self.ptr_slot = self.b.alloca(V.I64V, name="ptrs")
        self.ins: ptx.Instruction | None = None
        self.loc: tuple[int, int, int] | None = None

    # ------------------------------------------------------------------ helpers for ops/memory
    def unsupported(self, ins, why: str) -> UnsupportedError:
        span = ins.span
        return UnsupportedError(f"`{ins}` {why} (host JIT, warp-SIMD path)", filename=span.filename,
                                line=span.line or None, column=span.column or None)

    def new_block(self, name: str) -> ir.Block:
        return self.fn.append_basic_block(name)

    def value_slot(self, ity: ir.IntType) -> ir.Value:
        if ity not in self._slots:
            with self.b.goto_block(self.entry):
                self.b.position_at_start(self.entry)
                self._slots[ity] = self.b.alloca(V.vt(ity))
        return self._slots[ity]

    def site(self, ins: ptx.Instruction) -> int:
        self.sites.append(Site(len(self.sites) + 1, self.kernel.name, ins, self.loc))
        return len(self.sites)

    def ctx_slot(self, slot: int) -> ir.Value:
        return self.b.load(self.b.gep(self.ctx, [I64(slot)]))

    def fault(self, lane, site: int, addr, kind, size, space: int, state: int = L.State.FAULT) -> None:
        """Record the fault of ``lane`` in ``out`` and leave the warp function."""
        b = self.b
        for k, v in ((OUT_LANE, b.zext(lane, I64)), (OUT_SITE, I64(site)), (OUT_ADDR, addr),
                     (OUT_KIND, b.zext(kind, I64)), (OUT_SIZE, b.zext(size, I64)), (OUT_SPACE, I64(space))):
            b.store(v, b.gep(self.out, [I64(k)]))
        self._store_steps()
        b.ret(I32(state))

    def _store_steps(self) -> None:
        self.b.store(self.b.load(self.steps_total), self.b.gep(self.out, [I64(OUT_STEPS)]))

    # ------------------------------------------------------------------ registers
    def ld(self, p: ir.Value) -> ir.Value:
        return self.b.load(p, align=16)        # the state buffer is malloc'd: 16-byte aligned

    def st(self, v: ir.Value, p: ir.Value) -> None:
        self.b.store(v, p, align=16)

    def _state_ptr(self, offset: int, t: ir.Type) -> ir.Value:
        return self.b.bitcast(self.b.gep(self.state, [I64(offset)]), ir.PointerType(t))

    def declare(self) -> None:
        """Each register's home is the warp's slot of the state buffer (PC, waiting lanes, per-lane
        step counts, then the PTX registers, each 32 lanes of its storage type), but the warp
        function works on allocas (SSA values once LLVM promotes them): the homes are read at
        entry and written back only when the warp returns at a barrier, so a stretch without a
        barrier keeps its registers out of memory.  A kernel without a barrier never resumes a
        warp: its registers start undefined (as the per-thread path's allocas) and are never
        written back; its PC, waiting lanes and step counts are still read (the driver sets them)."""
        b = self.b
        self.resumes = any(isinstance(st, ptx.Instruction) and st.opcode in ("bar", "barrier")
                           for st in self.kernel.body.statements)
        kept = live_across_barriers(self.kernel) if self.resumes else set()
        self._homes: list[tuple[ir.Value, ir.Value, bool]] = []

        def home(offset: int, t: ir.Type, load: bool) -> ir.Value:
            slot = b.alloca(t)
            ptr = self._state_ptr(offset, t)
            self._homes.append((slot, ptr, load))
            if load:
                b.store(self.ld(ptr), slot)
            return slot

        self.pc = home(PC_OFF, V.vt(I32), True)
        self.waiting = home(WAIT_OFF, V.vt(I1), True)
        self.steps = home(STEPS_OFF, V.I64V, True)
        at = REGS_OFF
        for d in self.kernel.body.statements:
            if isinstance(d, ptx.VarDecl) and d.space is StateSpace.REG:
                for name in d.register_names():
                    st = storage_type(d.type)
                    self.regs[name] = (home(at, V.vt(st), name in kept), d.type)
                    at += max(st.width * V.WARP // 8, 16)
        self.state_bytes = at
        self.steps_total = b.alloca(I64, name="steps_total")
        b.store(b.load(b.gep(self.out, [I64(OUT_STEPS)])), self.steps_total)

    def _save(self) -> None:
        """The allocas back to their homes in the state buffer (the warp resumes later)."""
        for slot, ptr, kept in self._homes:
            if kept:
                self.st(self.b.load(slot), ptr)

    def read(self, op: ptx.Operand, t: ScalarType) -> ir.Value:
        b = self.b
        width = max(t.bits, 8)
        if isinstance(op, ptx.Negated):
            return b.not_(self.read(op.operand, ScalarType.PRED))
        if isinstance(op, ptx.Register) and op.name in self.regs:
            slot, rt = self.regs[op.name]
            raw = self.ld(slot)
            if (t is ScalarType.PRED) != (rt is ScalarType.PRED):
                raise self.unsupported(self.ins, f"uses `{op}` as {t.value} but it is declared {rt.value}")
            return raw if t is ScalarType.PRED else self._as(V.resize(b, raw, width, False), t)
        if isinstance(op, ptx.Register):
            return self._as(V.resize(b, self.special(op), width, False), t)
        if isinstance(op, ptx.Immediate):
            if t is ScalarType.PRED:
                return V.const(I1, int(op.value) & 1)
            return self._as(V.const(ir.IntType(width), immediate_bits(op, t)), t)
        if isinstance(op, ptx.Symbol):          # a shared variable's address (accept checked it)
            return self._as(V.const(ir.IntType(width), self.layout.shared[op.name]), t)
        raise self.unsupported(self.ins, f"operand `{op}` cannot be read here")

    def _as(self, v: ir.Value, t: ScalarType) -> ir.Value:
        if t is ScalarType.F32:
            return self.b.bitcast(v, V.vt(ir.FloatType()))
        if t is ScalarType.F64:
            return self.b.bitcast(v, V.vt(ir.DoubleType()))
        return v

    def write(self, op: ptx.Operand, t: ScalarType, value: ir.Value, mask: ir.Value) -> None:
        b = self.b
        if isinstance(op, ptx.Sink):
            return
        if not isinstance(op, ptx.Register) or op.name not in self.regs:
            raise self.unsupported(self.ins, f"cannot write to `{op}`")
        slot, rt = self.regs[op.name]
        if (rt is ScalarType.PRED) != (t is ScalarType.PRED):
            raise self.unsupported(self.ins, f"`{op}` is a {rt.value} register")
        if isinstance(value.type.element, (ir.FloatType, ir.DoubleType)):
            value = b.bitcast(value, V.vt(ir.IntType(64 if isinstance(value.type.element, ir.DoubleType) else 32)))
        if rt is not ScalarType.PRED:
            value = V.resize(b, value, max(rt.bits, 8), t.kind == "s")
        self.st(b.select(mask, value, self.ld(slot)), slot)

    def special(self, op: ptx.Register) -> ir.Value:
        comp = {"x": 0, "y": 1, "z": 2}.get(op.component or "x", 0)
        return self.sregs[(op.name, comp)]

    def _special_registers(self) -> None:
        b = self.b
        nt = [b.trunc(self.ctx_slot(L.X_NTID + i), I32) for i in range(3)]
        linear = b.add(V.splat(b, b.trunc(b.mul(self.warp, I64(V.WARP)), I32)), V.lanes())
        # A vector division is 32 scalar ones: only blocks wider than one dimension pay it.
        flat = b.icmp_unsigned("==", b.mul(nt[1], nt[2]), I32(1))
        pre, split, join = b.block, self.new_block("tid_split"), self.new_block("tid_join")
        b.cbranch(flat, join, split)
        b.position_at_end(split)
        rest = b.udiv(linear, V.splat(b, nt[0]))
        parts = (b.urem(linear, V.splat(b, nt[0])), b.urem(rest, V.splat(b, nt[1])), b.udiv(rest, V.splat(b, nt[1])))
        b.branch(join)
        b.position_at_end(join)
        tx, ty, tz = (b.phi(V.vt(I32)) for _ in range(3))
        for phi, fast, slow in zip((tx, ty, tz), (linear, V.const(I32, 0), V.const(I32, 0)), parts):
            phi.add_incoming(fast, pre)
            phi.add_incoming(slow, split)
        cta = b.inttoptr(self.cta, ir.PointerType(I32))
        self.sregs = {("%tid", 0): tx, ("%tid", 1): ty, ("%tid", 2): tz, ("%laneid", 0): V.lanes()}
        for i in range(3):
            self.sregs[("%ntid", i)] = V.splat(b, nt[i])
            self.sregs[("%nctaid", i)] = V.splat(b, b.trunc(self.ctx_slot(L.X_NCTAID + i), I32))
            self.sregs[("%ctaid", i)] = V.splat(b, b.load(b.gep(cta, [I64(L.C_CTAID // 4 + i)])))
        shared = b.load(b.gep(b.inttoptr(self.cta, I64P), [I64(L.C_SHARED // 8)]))
        self.shared_base = shared

    def cvta(self, v: ir.Value, ins) -> ir.Value:
        return v                         # cvta.to.global: global addresses are generic ones

    def address(self, a: ptx.Address) -> ir.Value:
        """``[base+offset]`` per lane (i64), as ``FunctionLowering.address`` forms it."""
        b = self.b
        if isinstance(a.base, ptx.Symbol):
            return V.const(I64, (self.layout.shared[a.base.name] + a.offset) & (2 ** 64 - 1))
        slot, rt = self.regs[a.base.name]
        raw = self.ld(slot)
        if rt.bits <= 32 and a.offset:
            w = max(rt.bits, 32)
            raw = V.resize(b, raw, w, False)
            return V.resize(b, b.add(raw, V.const(ir.IntType(w), a.offset & (2 ** w - 1))), 64, False)
        base = V.resize(b, raw, 64, False)
        return b.add(base, V.const(I64, a.offset & (2 ** 64 - 1))) if a.offset else base

    # ------------------------------------------------------------------ building
    def build(self) -> ir.Function:
        segs, labels = segments(self.kernel)
        self.declare()
        self._special_registers()
        b = self.b
        self.budget = self.ctx_slot(L.X_BUDGET)
        dispatch = self.new_block("dispatch")
        b.branch(dispatch)
        blocks = [self.new_block(f"seg{k}") for k in range(len(segs))]
        b.position_at_end(dispatch)
        mask, pc = self._dispatch(blocks)
        for k, seg in enumerate(segs):
            b.position_at_end(blocks[k])
            self._segment(k, seg, len(segs), labels, mask, pc)
            if not b.block.is_terminated:
                b.branch(dispatch)
        return self.fn

    def _dispatch(self, blocks: list[ir.Block]):
        b = self.b
        pc, wait = self.ld(self.pc), self.ld(self.waiting)
        live = b.and_(b.icmp_unsigned("!=", pc, V.const(I32, EXIT)), b.not_(wait))
        done, go = self.new_block("warp_done"), self.new_block("go")
        b.cbranch(V.any_(b, live), go, done)
        b.position_at_end(done)
        self._store_steps()
        if not self.resumes:
            b.ret(I32(0))
        else:
            at_barrier, finished = self.new_block("at_barrier"), self.new_block("finished")
            b.cbranch(V.any_(b, wait), at_barrier, finished)
            b.position_at_end(at_barrier)
            self._save()
            b.ret(I32(L.State.BARRIER))
            b.position_at_end(finished)
            b.ret(I32(0))
        b.position_at_end(go)
        # Asked to stop (Ctrl-C, from another host thread): polled at every segment, as endless
        # loops pass here (a plain load on x86).
        stop = b.load_atomic(b.gep(self.ctx, [I64(L.X_STOP)]), "monotonic", 8)
        with b.if_then(b.icmp_unsigned("!=", stop, I64(0)), likely=False):
            self.fault(I32(0), 0, I64(0), I32(0), I32(0), 0, L.State.INTERRUPTED)
        m = V.reduce(b, "umin", b.select(live, pc, V.const(I32, EXIT)))
        mask = b.and_(live, b.icmp_unsigned("==", pc, V.splat(b, m)))
        sw = b.switch(m, blocks[0] if blocks else done)
        for k, blk in enumerate(blocks):
            sw.add_case(I32(k), blk)
        return mask, pc

    def _segment(self, k: int, seg: Segment, n: int, labels: dict[str, int], mask, pc) -> None:
        b = self.b
        nxt = k + 1 if k + 1 < n else EXIT
        count = len(seg.instructions)
        if count:
            steps = b.add(self.ld(self.steps), b.select(mask, V.const(I64, count), V.const(I64, 0)))
            self.st(steps, self.steps)
            b.store(b.add(b.load(self.steps_total), b.zext(b.mul(V.popcount(b, mask), I32(count)), I64)),
                    self.steps_total)
            over = b.and_(mask, b.icmp_unsigned(">", steps, V.splat(b, self.budget)))
            with b.if_then(V.any_(b, over), likely=False):
                self.ins, self.loc = seg.instructions[0]
                site = self.site(self.ins)          # the watchdog names the stretch's first instruction
                self.fault(V.first_lane(b, over), site, I64(0), I32(0), I32(0), 0, L.State.WATCHDOG)
        new_pc = b.select(mask, V.const(I32, nxt), pc)
        for ins, loc in seg.instructions:
            self.ins, self.loc = ins, loc
            m = mask
            if ins.guard is not None:
                g = self.read(ins.guard.register, ScalarType.PRED)
                m = b.and_(mask, b.not_(g) if ins.guard.negated else g)
            if ins.opcode == "bra":
                target = ins.operands[0].name
                if target not in labels:
                    raise self.unsupported(ins, f"branches to `{target}`, which is no label of the kernel")
                new_pc = b.select(m, V.const(I32, labels[target]), new_pc)
            elif ins.opcode in ("ret", "exit"):
                new_pc = b.select(m, V.const(I32, EXIT), new_pc)
            elif ins.opcode in ("bar", "barrier"):
                self.st(b.or_(self.ld(self.waiting), m), self.waiting)
            else:
                self._instruction(ins, m)
        self.st(new_pc, self.pc)

    def _instruction(self, ins: ptx.Instruction, m) -> None:
        op = ins.opcode
        if op == "shfl":
            return lower_shfl(self, ins, m)
        if op in ("ld", "st"):
            return self._memory(ins, m)
        lower_alu(self, ins, m)

    def _memory(self, ins: ptx.Instruction, m) -> None:
        b = self.b
        space, t = ins.mod("space"), ins.types[0]
        ity = ir.IntType(max(t.bits, 8))
        size = ity.width // 8
        skip, go = self.new_block("mem_skip"), self.new_block("mem")
        b.cbranch(V.any_(b, m), go, skip)
        b.position_at_end(go)
        if ins.opcode == "ld" and space == "param":
            value = self._param(ins, ity, m)
        elif ins.opcode == "ld":
            c = M.checked_pointers(self, ins, space, self.address(ins.operands[1]), size, m, False)
            c.fault_rest(self)        # a load's completed lanes change nothing a fault report shows
            value = M.gather(self, c.ptrs, ity, m)
        else:
            c = M.checked_pointers(self, ins, space, self.address(ins.operands[0]), size, m, True)
            v = self.read(ins.operands[1], t)
            if not isinstance(v.type.element, ir.IntType):
                v = b.bitcast(v, V.vt(ity))
            with b.if_then(V.any_(b, c.ok)):
                M.scatter(self, c.ptrs, V.resize(b, v, ity.width, False), c.ok)
            c.fault_rest(self)        # the in-range lanes stored first, as the interpreter's rule
        if ins.opcode == "ld":
            self.write(ins.operands[0], t, value, m)
        b.branch(skip)
        b.position_at_end(skip)

    def _param(self, ins: ptx.Instruction, ity: ir.IntType, m) -> ir.Value:
        """A kernel parameter: one checked load for the warp, broadcast."""
        b = self.b
        a = ins.operands[1]
        off = self.layout.params[a.base.name] + a.offset
        size = ity.width // 8
        site = self.site(ins)
        # A negative offset (``[p+-8]``) is below the block: it faults like any other overrun,
        # in the first active lane (the thread the per-thread path reports).
        beyond = I1(1) if off < 0 else b.icmp_unsigned(">", I64(off + size), self.ctx_slot(L.X_PARAM_SIZE))
        with b.if_then(beyond, likely=False):
            self.fault(V.first_lane(b, m), site, I64(off), I32(L.FaultKind.BOUNDS), I32(size), L.Space.PARAM)
        p = b.gep(b.inttoptr(self.ctx_slot(L.X_PARAMS), I8P), [I64(off)])
        return V.splat(b, b.load(b.bitcast(p, ir.PointerType(ity)), align=1))


__all__ = ["WarpLowering", "segments", "SHARED_BASE", "I8"]
