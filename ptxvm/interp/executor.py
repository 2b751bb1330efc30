"""Run a compiled kernel: batching CTAs, lowest-PC-first scheduling, barriers, faults.

While every live thread of the batch stands at one PC (the common case) the
scheduler keeps a single scalar PC and runs each instruction for all threads
at once. A divergent branch switches to per-thread PCs; each step then runs
the instruction at the lowest PC among runnable threads, for all threads
there, which reconverges naturally; once all are at one PC again the scalar
mode resumes.
"""

from __future__ import annotations

import numpy as np

from ..errors import DeadlockError, KernelFault, LaunchError, TrapError, WatchdogError
from ..ir import nodes as ir
from ..machine import reports
from ..machine.image import ModuleImage
from ..machine import cooperative
from ..machine.launch import PLAIN, Environment, Geometry, LaunchStats
from ..machine.memory import DeviceMemory, MemoryFault
from ..machine.reports import BarrierWait, BlockWait, WaitSite, kernel_fault
from ..machine.symbols import layout
from . import barriers
from .barriers import BarrierMisuse
from .compile import compile_kernel
from .polling import poll_edges
from .ops.control import _Trap
from .program import Control, Program
from .state import Batch, StackFault

# The watchdog: instructions one thread may execute (guard true or false), on every executor.
# The fixture kernels, tests and benchmarks need at most ~130k (a recursion test); an endless
# loop of the interpreter at the CLI's default size (one thread, ~5 us a step) stops in ~3 s.
DEFAULT_MAX_STEPS = 500_000
FAIRNESS_PERIOD = 64                 # divergent steps between forward-progress turns
DEFAULT_MEMORY_BUDGET = 4 << 30      # bytes of registers + windows per batch (24 GiB machines, shared)
BUDGET_ENV = "PTXVM_INTERP_BATCH_BYTES"   # overrides the default per launch (smaller: more batches)


def memory_budget_default() -> int:
    """The batch budget when a launch names none: $PTXVM_INTERP_BATCH_BYTES, else 4 GiB."""
    import os
    raw = os.environ.get(BUDGET_ENV)
    if not raw:
        return DEFAULT_MEMORY_BUDGET
    try:
        value = int(raw, 0)
    except ValueError:
        raise ValueError(f"${BUDGET_ENV} must be a byte count, got {raw!r}") from None
    if value <= 0:
        raise ValueError(f"${BUDGET_ENV} must be positive, got {raw!r}")
    return value


def run_kernel(program: Program, geometry: Geometry, memory: DeviceMemory, params: np.ndarray,
               dynamic_shared: int = 0, max_steps: int = DEFAULT_MAX_STEPS,
               memory_budget: int | None = None, stats: LaunchStats | None = None,
               out=None, trace: frozenset[int] | None = None, env: Environment = PLAIN) -> LaunchStats:
    """Run every CTA of the launch; ``trace`` holds global linear thread ids to trace.

    CTAs run in batches of as many as fit ``memory_budget`` bytes of registers, shared and local
    memory (default: :func:`memory_budget_default`); each batch runs to completion before the next.
    A cooperative launch (``env``) runs as one batch: a grid barrier needs every CTA running while
    the others spin (lowest-PC-first scheduling with its fairness turns interleaves them).
    """
    _check_max_steps(max_steps)
    stats = stats or LaunchStats()
    memory_budget = memory_budget or memory_budget_default()
    sym = program.symbols
    tpc = geometry.threads_per_cta
    regs = max(len(program.ops), 8)
    per_cta = tpc * (regs * 8 + sym.local_bytes + 64) + sym.shared_bytes
    ctas_per_batch = max(1, min(geometry.ctas, memory_budget // max(per_cta, 1)))
    if env.cooperative:
        cooperative.check_memory(program.kernel.name, geometry, per_cta)
        ctas_per_batch = geometry.ctas
    envreg = np.array(env.envreg, dtype=np.uint32)
    polls = poll_edges(program)
    for first in range(0, geometry.ctas, ctas_per_batch):
        n = min(ctas_per_batch, geometry.ctas - first)
        b = Batch(geometry, first, n, memory, params, sym.shared_bytes, sym.local_bytes, dynamic_shared)
        b.program = program
        b.env, b.envreg = env, envreg
        b.poll_edges, b.polling = polls, np.zeros(n * tpc, dtype=bool) if polls else None
        b.stack_base = sym.frame_bytes.get(program.kernel.name, 0)     # first `.func` frame
        base = first * tpc
        b.trace = np.array(sorted(t - base for t in trace if base <= t < base + b.n), dtype=np.int64) \
            if trace else None
        b.trace_out = out
        try:
            _run_batch(program, b, max_steps)
        finally:
            _flush_printf(b, out)
        stats.instructions += b.thread_instructions
        stats.steps += b.steps
        stats.divergent_steps += b.divergent_steps
        stats.batches += 1
    return stats


def _check_max_steps(max_steps) -> None:
    if isinstance(max_steps, bool) or not isinstance(max_steps, (int, np.integer)) or max_steps < 1:
        raise LaunchError(f"max_steps must be a positive number of instructions per thread, got {max_steps!r} "
                          f"(the default is {DEFAULT_MAX_STEPS:,}; on the command line: --max-steps N)")


def _over_budget(b: Batch, lanes: np.ndarray, max_steps: int) -> int | None:
    """The lowest of ``lanes`` that has now executed more than ``max_steps`` instructions, or None.
    A thread's count is the batch's converged steps (every live thread runs those) plus its own
    divergent ones (``Batch.thread_steps``)."""
    uniform = b.steps - b.divergent_steps
    counts = uniform + b.thread_steps[lanes].astype(np.int64) if b.divergent_steps else None
    if counts is None:
        return int(lanes[0]) if uniform > max_steps else None
    over = counts > max_steps
    return int(lanes[np.argmax(over)]) if over.any() else None


def _lowest_pc(b: Batch, runnable: np.ndarray, pcs: np.ndarray) -> int:
    """The PC to run next: the first in program order, where a thread inside a called function
    stands at its call site (threads compare by their call stacks, outermost call site first,
    then by PC). Code of a `.func` may lie anywhere in the op list; without this, threads that
    branched around a call would run ahead of the threads in it, past the reconvergence point,
    and meet a warp instruction without them (the host JIT's warp release sees them together)."""
    if not b.frames or not b.depth[runnable].any():
        return int(pcs.min())
    cand = np.nonzero(runnable)[0]
    level = 0
    while True:
        inside = b.depth[cand] > level
        key = np.where(inside, b.frames[level]["site"][cand], b.pc[cand]) if inside.any() else b.pc[cand]
        first = key.min()
        cand = cand[key == first]
        if not (b.depth[cand] > level).all():
            return int(first)         # threads of this frame at `first` (the call itself, if others are in it)
        level += 1


# size: the interpreter's scheduling loop; pc, lanes and the runnable mask stay locals shared by
# its branches, which split would travel through a state object on every step of the hot loop.
def _run_batch(program: Program, b: Batch, max_steps: int) -> None:
    ops = program.ops
    n_ops = len(ops)
    alive = b.all
    polling = b.polling
    while True:
        if b.pc is None:
            p = b.pc_scalar
            lanes = alive
            if lanes.size == 0:
                return
        else:
            runnable = ~b.exited & ~b.waiting
            if not runnable.any():
                if _release_barriers(b, program):
                    continue
                if b.waiting.any():
                    raise _deadlock(program, b)
                return
            choose = runnable
            if polling is not None and polling.any() and (others := runnable & ~polling).any():
                choose = others          # threads spinning in a poll loop run when no other can
            pcs = np.where(choose, b.pc, np.iinfo(np.int64).max)
            p = _lowest_pc(b, choose, pcs)
            if b.divergent_steps % FAIRNESS_PERIOD == FAIRNESS_PERIOD - 1:
                # Forward progress (as independent thread scheduling guarantees): now and then
                # run the threads furthest ahead, so a lock holder is not starved by spinners.
                # Over every runnable thread, spinners too: two poll loops that wait for each
                # other (mbarrier producer/consumer warps) alternate between "all polling" and
                # "one polling", and a period-64 turn could always fall on the second kind.
                hi = int(np.where(runnable, b.pc, -1).max())
                if hi != p and hi < n_ops and not ops[hi].warp_sync:
                    p = hi
            here = pcs == p
            lanes = np.nonzero(here)[0]
            if polling is not None:
                polling[lanes] = False
            if lanes.size == runnable.sum() and not b.waiting.any():
                # Reconverged: back to one PC for everybody.
                b.pc, b.pc_scalar = None, p
                alive = lanes = b.all if lanes.size == b.n else lanes
            else:
                b.divergent_steps += 1
                b.thread_steps += here      # a contiguous add: cheaper than a scatter to ``lanes``
        if p >= n_ops:
            raise _fault(TrapError, program, b, int(lanes[0]), "ran past the last instruction "
                         "without `ret` or `exit`", ops[-1] if ops else None)
        b.steps += 1
        # The budget is per thread (as on the host JIT); no thread ran more steps than the batch.
        if b.steps > max_steps and (over := _over_budget(b, lanes, max_steps)) is not None:
            raise _fault(WatchdogError, program, b, over,
                         reports.watchdog_message(max_steps), ops[p])
        op = ops[p]
        active = lanes
        if op.guard is not None:
            g = op.guard(b, lanes)
            if op.guard_negated:
                g = ~g
            active = lanes[g] if not g.all() else lanes
        b.thread_instructions += lanes.size       # reached, guard true or false (see LaunchStats)
        if b.trace is not None and b.trace.size:
            _trace(b, program, op, active)
        ctl = op.control
        if op.run is not None and active.size and ctl != Control.JUMP:
            try:
                op.run(b, active)
            except (MemoryFault, _Trap, BarrierMisuse, StackFault) as e:
                raise _op_error(program, b, op, e) from None
        if ctl == Control.NEXT:
            _advance(b, lanes, p + 1)
        elif ctl == Control.BRANCH:
            if polling is not None and b.pc is not None and p in b.poll_edges:
                polling[active] = True       # back into a poll loop (interp.polling)
            if active.size == lanes.size:
                _advance(b, lanes, op.target)
            elif active.size == 0:
                _advance(b, lanes, p + 1)
            else:
                _diverge(b, alive)
                taken = np.zeros(b.n, dtype=bool)
                taken[active] = True
                b.pc[lanes] = np.where(taken[lanes], op.target, p + 1)
        elif ctl == Control.JUMP:
            try:
                new = op.run(b, active) if active.size else np.empty(0, dtype=np.int64)
            except (MemoryFault, _Trap, BarrierMisuse, StackFault) as e:
                raise _op_error(program, b, op, e) from None
            if b.pc is None and active.size == lanes.size and (new == new[0]).all():
                b.pc_scalar = int(new[0])
            else:
                _diverge(b, alive)
                b.pc[lanes] = p + 1
                b.pc[active] = new
        elif ctl == Control.EXIT:
            if b.pc is None and active is alive and alive is b.all:
                b.exited[...] = True         # the whole converged batch exits: it is done
                return
            if active.size:
                _diverge(b, alive)
                b.exited[active] = True
                b.pc[lanes] = p + 1
                alive = np.nonzero(~b.exited)[0]
                _release_barriers(b, program)
            else:
                _advance(b, lanes, p + 1)
        elif ctl == Control.BARRIER:
            release = getattr(op.run, "on_release", None)
            if b.pc is None and active.size == lanes.size and _whole_ctas(b, active):
                b.pc_scalar = p + 1          # everybody arrived at once: nothing to wait for
                if release is not None:
                    release(b, active)
                continue
            _diverge(b, alive)
            b.pc[lanes] = p + 1
            b.waiting[active] = True
            b.bar_pc[active] = p
            _release_barriers(b, program)


def _trace(b: Batch, program: Program, op, active: np.ndarray) -> None:
    """One line per traced thread that executes ``op`` (guard true)."""
    import sys
    hit = np.intersect1d(active, b.trace, assume_unique=False)
    if not hit.size:
        return
    stream = b.trace_out if b.trace_out is not None else sys.stderr
    src = ""
    if op.loc is not None:
        f, line, _ = op.loc
        src = f"  [{program.files.get(f, f'file {f}')}:{line}]"
    for lane in hit:
        block, thread = _thread_of(b, int(lane))
        stream.write(f"trace block {block} thread {thread} step {b.steps} pc {op.pc} line {op.ins.span.line}: "
                     f"{op.ins}{src}\n")


def _flush_printf(b: Batch, out) -> None:
    """printf output in thread order (each thread's lines in the order it printed them)."""
    if not b.printed:
        return
    import sys
    stream = out if out is not None else sys.stdout
    for _, text in sorted(b.printed, key=lambda e: e[0]):
        stream.write(text)
    stream.flush()
    b.printed.clear()


def _advance(b: Batch, lanes: np.ndarray, to: int) -> None:
    if b.pc is None:
        b.pc_scalar = to
    else:
        b.pc[lanes] = to


def _diverge(b: Batch, alive: np.ndarray) -> None:
    if b.pc is None:
        b.pc = np.full(b.n, b.pc_scalar, dtype=np.int64)


def _whole_ctas(b: Batch, active: np.ndarray) -> bool:
    """Whether ``active`` holds every live thread, waiting with no count at a barrier no thread has
    `bar.arrive`d at (so it completes at once, and nothing else can complete with it)."""
    counts = b.bar_count[active]
    return not counts.any() and active.size == int((~b.exited).sum()) and not b.bar_arrived.any()


def _release_barriers(b: Batch, program: Program | None = None) -> bool:
    """Complete every barrier phase whose arrivals are in; True if a waiting thread was released."""
    try:
        return barriers.release(b, program)
    except BarrierMisuse as e:
        op = program.ops[e.pc] if program is not None and e.pc is not None else None
        raise _fault(TrapError, program, b, e.lane, e.message, op) from None


def _op_error(program: Program, b: Batch, op, e: Exception):
    """The user-facing error for a fault raised while ``op`` ran."""
    if isinstance(e, MemoryFault):
        return _fault(KernelFault, program, b, e.lane, e.message, op, address=e.address, space=e.space)
    if isinstance(e, StackFault):
        return _fault(KernelFault, program, b, e.lane, e.message, op, address=e.address)
    hint = getattr(b, "env", PLAIN).trap_hint if op.ins.opcode == "trap" else ""
    cls = DeadlockError if getattr(e, "deadlock", False) else TrapError    # ops.mbarrier's stall report
    return _fault(cls, program, b, e.lane, e.message + hint, op)


def _thread_of(b: Batch, lane: int) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
    block = tuple(int(c[lane]) for c in b.ctaid)
    thread = tuple(int(c[lane]) for c in b.tid)
    return block, thread


def _fault(cls, program: Program, b: Batch, lane: int, message: str, op, **extra) -> KernelFault:
    block, thread = _thread_of(b, lane)
    return kernel_fault(cls, message, kernel=program.kernel.name, block=block, thread=thread,
                        instruction=op.ins if op is not None else None, loc=op.loc if op is not None else None,
                        files=program.files, memory=b.memory, address=extra.get("address"),
                        space=extra.get("space"))


def _deadlock(program: Program, b: Batch) -> DeadlockError:
    """Per blocked CTA and barrier: what it expects, what has arrived, who waits where."""
    blocks = [_block_wait(program, b, cta) for cta in range(b.n_ctas)]
    lane = int(np.nonzero(b.waiting)[0][0])
    return _fault(DeadlockError, program, b, lane, reports.deadlock_message(w for w in blocks if w is not None), None)


def _block_wait(program: Program, b: Batch, cta: int) -> BlockWait | None:
    """The deadlock report's facts of one CTA slot (None: nothing of it waits)."""
    sel = b.cta_slot == cta
    waiting = np.nonzero(sel & b.waiting)[0]
    if waiting.size == 0:
        return None
    n_live = int((sel & ~b.exited).sum())
    bars = []
    for bid in np.unique(b.bar_id[waiting]):
        _, weighted, want, _ = barriers.status(b, int(bid))
        here = waiting[b.bar_id[waiting] == bid]
        sites = []
        for pc in np.unique(b.bar_pc[here])[:4]:
            op = program.ops[int(pc)]
            who = here[b.bar_pc[here] == pc]
            sites.append(WaitSite(tuple(_thread_of(b, int(t))[1] for t in who[:3]), who.size > 3,
                                  op.ins.span.line, str(op.ins)))
        counted = want[cta] > 0
        bars.append(BarrierWait(int(bid), int(want[cta]), float(weighted[cta]) if counted else int(here.size),
                                float(b.bar_arrived[cta, bid]) if counted else 0, tuple(sites)))
    return BlockWait(_thread_of(b, int(waiting[0]))[0], int(waiting.size), n_live, int((sel & b.exited).sum()),
                     tuple(bars))


def prepare(module: ir.Module, kernel: ir.Function, image: ModuleImage, dynamic_shared: int) -> Program:
    return compile_kernel(module, kernel, layout(module, kernel, image, dynamic_shared))
