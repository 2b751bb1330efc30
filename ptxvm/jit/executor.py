"""The host JIT executor (``device="cpu"``): batches of CTAs and their synchronisation (compiling
a kernel: ``program``; the host threads: ``threads``).

Each round, generated code (``ptxvm_run``) runs every runnable thread of a batch to its
next stop; CTAs are split into chunks that run on host threads in parallel (ctypes
releases the GIL).  Between rounds the executor settles what the stopped threads wait
for, vectorized over the whole batch with numpy: barriers (per CTA and barrier id, with
thread counts, ``bar.arrive`` and ``bar.red``), warp exchanges (per warp, the lanes
stopped at the lowest instruction form the participating group), and printf.
"""

from __future__ import annotations

import ctypes
import sys
from functools import cached_property

import numpy as np

from .. import limits
from ..errors import DeadlockError, KernelFault, TrapError, WatchdogError
from ..lift.module import Site
from ..machine import cooperative, heap, reports
from ..machine.addressmap import LOCAL_BASE, SHARED_BASE, window_of
from ..machine.launch import PLAIN, Environment, Geometry, LaunchStats
from ..machine.memory import DeviceMemory, MemoryFault
from ..machine.printf import format_printf
from ..machine.reports import MATRIX_OPS, BarrierWait, BlockWait, WaitSite, cp_async_too_big, kernel_fault, matrix_trap, \
    tensor_copy_trap
from . import devrt, mbarrier_wait, pagetable, texture
from . import layout as L
from .program import JitProgram, compile_kernel
from .scratch import ScratchPool
from .threads import _HostThreads, _pool, host_stack_bytes, host_threads

# Per batch: thread records, local and shared memory, exchange slots. Small enough that its
# buffers come back from _SCRATCH and stay largely in the caches between rounds; large enough
# that the executor's own cost per batch (about 0.2 ms of Python) is noise.
DEFAULT_MEMORY_BUDGET = 16 << 20
VECTOR_RECORDS = 256 << 20
# Batch buffers kept for the next launch (page faults on fresh memory cost more than the zeroing).
_SCRATCH = ScratchPool(limit=4 * DEFAULT_MEMORY_BUDGET)
_HOST_CALL = ctypes.CFUNCTYPE(ctypes.c_uint64, ctypes.c_uint64, ctypes.c_uint32, ctypes.c_uint64)


class _Launch:
    """One launch: the shared tables every batch uses."""

    def __init__(self, program: JitProgram, geometry: Geometry, memory: DeviceMemory, params: np.ndarray,
                 dynamic_shared: int, max_steps: int, env: Environment = PLAIN) -> None:
        self.program, self.geometry, self.memory, self.env = program, geometry, memory, env
        self.envreg = np.array(env.envreg, dtype=np.uint32)
        self.params = np.ascontiguousarray(params, dtype=np.uint8)
        sym = program.symbols
        names = program.lifted.symbols
        self.symtab = np.array([sym.globals.get(n, sym.functions.get(n, 0)) for n in names] or [0],
                               dtype=np.uint64)
        self.ctx = np.zeros(L.CTX_SLOTS, dtype=np.uint64)
        c = self.ctx
        c[L.X_PARAMS] = self.params.ctypes.data
        c[L.X_SYMBOLS] = self.symtab.ctypes.data
        self.retired: list[np.ndarray] = []
        self.pages: np.ndarray | None = None
        self.allocs: np.ndarray | None = None
        self.map_memory()
        c[L.X_SHARED_SIZE], c[L.X_LOCAL_SIZE] = sym.shared_bytes, program.local_window
        c[L.X_NTID:L.X_NTID + 3] = geometry.block
        c[L.X_NCTAID:L.X_NCTAID + 3] = geometry.grid
        c[L.X_BUDGET] = max_steps
        c[L.X_DYN_SHARED] = dynamic_shared
        c[L.X_PARAM_SIZE] = self.params.size
        c[L.X_ENVREG] = self.envreg.ctypes.data
        # A thread spinning on a grid barrier yields soon, so the CTAs it waits for run.
        c[L.X_QUANTUM] = cooperative.SPIN_QUANTUM if env.cooperative else L.QUANTUM
        lim = limits.current()
        c[L.X_CALL_DEPTH], c[L.X_STACK_LIMIT] = lim.call_depth, lim.stack_per_thread
        lim.check("stack_per_thread", program.kernel_stack, f"kernel `{program.kernel.name}`'s `.param` "
                  "buffers for its calls")

    def map_memory(self) -> None:
        """Bring the page and allocation tables the generated code checks accesses against up to
        the live allocations (at the start, and after device malloc/free: ``jit.pagetable``)."""
        table = pagetable.table_for(self.memory)
        with table.lock:
            # Old tables stay alive while the launch runs: generated code may still hold them.
            self.retired += table.sync(self.memory.allocations, quiescent=self.pages is None)
            self.pages, self.allocs = table.pages, table.allocs
            c = self.ctx
            c[L.X_PAGES], c[L.X_NPAGES], c[L.X_ALLOCS] = self.pages.ctypes.data, table.npages, self.allocs.ctypes.data


def run_kernel(program: JitProgram, geometry: Geometry, memory: DeviceMemory, params: np.ndarray,
               dynamic_shared: int, max_steps: int, stats: LaunchStats | None = None, out=None,
               memory_budget: int = DEFAULT_MEMORY_BUDGET, env: Environment = PLAIN) -> LaunchStats:
    """Run every CTA, in batches of as many as fit ``memory_budget``; a cooperative launch
    (``env``) as one batch, every CTA resident while a grid barrier spins."""
    stats = stats if stats is not None else LaunchStats()
    launch = _Launch(program, geometry, memory, params, dynamic_shared, max_steps, env)
    tpc = geometry.threads_per_cta
    sym = program.symbols
    # The vector path touches no record (but a faulting chunk's) nor local memory: its batches are
    # bounded by the records' address space (VECTOR_RECORDS), not by the budget of memory used.
    per_cta = (0 if program.vector else tpc * (program.record_bytes + program.local_window)) + sym.shared_bytes \
        + CTA_EXTRA(tpc, program.exchanges)
    cap = VECTOR_RECORDS // (tpc * program.record_bytes) if program.vector else geometry.ctas
    ctas_per_batch = max(1, min(geometry.ctas, memory_budget // max(per_cta, 1), cap))
    if env.cooperative:
        cooperative.check_memory(program.kernel.name, geometry, per_cta)
        ctas_per_batch = geometry.ctas
    for first in range(0, geometry.ctas, ctas_per_batch):
        n = min(ctas_per_batch, geometry.ctas - first)
        _Batch(launch, first, n, stats, out or sys.stdout).run()
        stats.batches += 1
    return stats


def CTA_EXTRA(tpc: int, exchanges: bool = True) -> int:
    return L.CTA_RECORD + (_xchg_bytes(tpc) if exchanges else 0)


def _xchg_bytes(tpc: int) -> int:
    """A CTA's warp exchange slots: OUT_SLOTS words per lane."""
    return ((tpc + 31) // 32) * 32 * L.OUT_SLOTS * 8


class _Batch:
    def __init__(self, launch: _Launch, first_cta: int, n_ctas: int, stats: LaunchStats, out) -> None:
        self.launch, self.first, self.n_ctas, self.stats, self.out = launch, first_cta, n_ctas, stats, out
        p, g = launch.program, launch.geometry
        self.tpc = tpc = g.threads_per_cta
        self.n = n = n_ctas * tpc
        self.stride = p.record_bytes
        self.records = _SCRATCH.take(n * self.stride, zero=False)    # the driver zeroes each record
        self.view = self.records.view(L.thread_dtype(self.stride))
        self.nwarps = (tpc + 31) // 32
        self.shared = _SCRATCH.take(n_ctas * max(p.symbols.shared_bytes, 16))
        lb = max(p.local_window, 16)
        self.local = _SCRATCH.take(16 if p.vector else n * lb)
        xchg_cta = _xchg_bytes(tpc) if p.exchanges else 0
        self._xchg_bytes = _SCRATCH.take(max(n_ctas * xchg_cta, 8))
        self.xchg = self._xchg_bytes.view(np.uint64)
        self.ctas = np.zeros((n_ctas, L.CTA_RECORD // 4), dtype=np.uint32)
        ids = np.arange(first_cta, first_cta + n_ctas)
        gx, gy = g.grid[0], g.grid[1]
        self.ctas[:, 0], self.ctas[:, 1], self.ctas[:, 2] = ids % gx, (ids // gx) % gy, ids // (gx * gy)
        ptrs = self.ctas.view(np.uint64)
        ptrs[:, L.C_SHARED // 8] = self.shared.ctypes.data + np.arange(n_ctas, dtype=np.uint64) * max(p.symbols.shared_bytes, 16)
        ptrs[:, L.C_XCHG // 8] = self.xchg.ctypes.data + np.arange(n_ctas, dtype=np.uint64) * xchg_cta
        # The thread records' identity fields are written by the generated driver's first round.
        self.ctx = launch.ctx.copy()
        self.ctx[L.X_CTAS], self.ctx[L.X_LOCAL_BASE] = self.ctas.ctypes.data, self.local.ctypes.data
        self.ctx[L.X_LOCAL_STRIDE], self.ctx[L.X_KFRAME] = lb, p.kernel_frame
        self.arrived = {}                  # (cta slot, barrier id) -> bar.arrive count
        self.heap_faults: dict[int, tuple[str, int, str]] = {}    # thread -> bad free in a .func

    @cached_property
    def cta_slot(self) -> np.ndarray:
        """The CTA (slot in the batch) of each thread; only the executor's slow paths need it."""
        return np.arange(self.n, dtype=np.int64) // self.tpc

    # ------------------------------------------------------------------ rounds
    def run(self) -> None:
        # Atomics make the order of CTAs observable (float sums round differently, atom returns
        # differ): run such kernels' CTAs in order on one host thread, as the interpreter does.
        serial = self.launch.program.lifted.atomics or self.launch.program.heap
        workers = self.workers = 1 if serial else min(host_threads(), self.n_ctas)
        self.stats.host_driver = self.launch.program.driver_mode
        self.stats.host_threads = max(self.stats.host_threads, workers)
        # A few chunks per host thread, from a queue: one slow chunk does not hold the others up.
        nchunks = min(self.n_ctas, 4 * workers) if workers > 1 else 1
        chunks = np.array_split(np.arange(self.n_ctas), nchunks) if nchunks > 1 else [np.arange(self.n_ctas)]
        chunks = [(int(c[0]) * self.tpc, int(c.size) * self.tpc) for c in chunks if c.size]
        ctx = self.ctx.ctypes.data
        base = self.records.ctypes.data
        drv = self.launch.program.driver
        pool = _pool(workers, host_stack_bytes(self.launch.program))
        # The heap callback lives while the generated code may call it; dropped at the end, so
        # the batch's arrays do not wait in a reference cycle for the garbage collector.
        callback = _HOST_CALL(self._on_host_call)
        self.ctx[L.X_HOST_CALL] = ctypes.cast(callback, ctypes.c_void_p).value
        try:
            init = 1
            while True:
                codes = self._round(pool, [(drv, ctx, base + s * self.stride, m, self.stride, s, init)
                                           for s, m in chunks])
                init = 0
                if L.State.INTERRUPTED in codes:
                    raise KeyboardInterrupt
                if any(c > 0 for c in codes):
                    if self.launch.program.compact:
                        # Chunks that ended cleanly wrote no record (jit.compact): their threads exited.
                        for (s, m), code in zip(chunks, codes):
                            if code == 0:
                                self.view["state"][s:s + m] = L.State.EXITED
                    self._fatal(self.view["state"])
                if not any(codes):        # every thread exited (no pass over the records)
                    break
                state = self.view["state"]
                if not self._settle(state):
                    raise self._deadlock(state)
        finally:
            self.ctx[L.X_HOST_CALL] = 0
            del callback
            self.stats.instructions += int(self.ctx[L.X_STEPS])
        # Only after a clean end: a fault report may still read the batch's memory.
        _SCRATCH.give((self.records, self.shared, self.local, self._xchg_bytes))
        self.records = self.shared = self.local = self.xchg = self._xchg_bytes = self.view = None

    def _round(self, pool: _HostThreads, calls: list[tuple]) -> list[int]:
        """Run the driver calls on the host threads and wait for them. On Ctrl-C (the main thread
        gets KeyboardInterrupt while it waits) the generated code is asked to stop (X_STOP, which
        it polls at loop headers and per CTA), the calls are waited for, and the interrupt goes on."""
        results, futures = pool.run_queued(calls, self.workers)
        try:
            for f in futures:
                f.result()
            return results
        except KeyboardInterrupt:
            self.ctx[L.X_STOP] = 1
            for f in futures:
                while not f.done():
                    try:
                        f.exception()
                    except KeyboardInterrupt:
                        continue
            raise

    def _settle(self, state: np.ndarray) -> bool:
        """Release what can be released; False when nothing could (deadlock)."""
        released = False
        v = self.view
        mbarrier_wait.raise_if_stalled(self, state, _waiting(state))    # every thread spins on mbarriers
        yl = np.nonzero(state == L.State.YIELD)[0]
        busy = np.unique(self.cta_slot[yl] * self.nwarps + (v["linear"][yl] >> 5)) if yl.size else None
        if yl.size:
            state[yl] = L.State.RUNNABLE
            released = True
        hp = np.nonzero((state == L.State.MALLOC) | (state == L.State.FREE))[0]
        if hp.size:
            devrt.heap_calls(self, hp, state)
            state[hp] = L.State.RUNNABLE
            released = True
        dv = np.nonzero(state == L.State.DEVRT)[0]
        if dv.size:
            devrt.device_runtime_calls(self, dv)
            state[dv] = L.State.RUNNABLE
            released = True
        tx = np.nonzero(state == L.State.TEXTURE)[0]
        if tx.size:
            texture.settle(self, tx)
            state[tx] = L.State.RUNNABLE
            released = True
        pr = np.nonzero(state == L.State.PRINTF)[0]
        if pr.size:
            self._printf(pr)
            state[pr] = L.State.RUNNABLE
            released = True
        self._check_barrier_operands(state)
        ar = np.nonzero(state == L.State.ARRIVE)[0]
        for t in ar:
            key = (int(self.cta_slot[t]), int(v["aux"][t]))
            self.arrived.setdefault(key, set()).add(int(v["linear"][t]))
        if ar.size:
            state[ar] = L.State.RUNNABLE
            released = True
        wp = np.nonzero(state == L.State.WARP)[0]
        if wp.size and busy is not None:
            # A warp with a yielded lane is not complete yet: that lane may still reach the
            # same warp instruction (a divergent path with nanosleep, found by the fuzzer).
            wp = wp[~np.isin(self.cta_slot[wp] * self.nwarps + (v["linear"][wp] >> 5), busy)]
        if wp.size:
            released |= self._release_warps(wp)
        bw = np.nonzero(_waiting(state))[0]
        if bw.size:
            released |= self._release_barriers(bw, state)
        return released

    def _release_warps(self, lanes: np.ndarray) -> bool:
        """Per warp, release the lanes stopped at one warp-exchange site, chosen as the generated
        driver chooses (host._release_warps_ir): a lockstep point first, then a warp instruction
        whose membermask lanes are all there, then one without a membermask, then the lowest."""
        v = self.view
        warp = self.cta_slot[lanes] * self.nwarps + (v["linear"][lanes] >> 5)
        aux = v["aux"][lanes]
        site0 = v["site"][lanes].astype(np.int64)
        # Per (warp, site): the lanes there and the union of their membermasks.
        ws, inv = np.unique(warp * (1 << 32) + site0, return_inverse=True)
        bit = np.uint64(1) << (v["linear"][lanes] & 31).astype(np.uint64)
        present = np.zeros(ws.size, dtype=np.uint64)
        np.bitwise_or.at(present, inv, bit)
        masked = aux == 2
        required = np.zeros(ws.size, dtype=np.uint64)
        np.bitwise_or.at(required, inv[masked], v["aux2"][lanes][masked].astype(np.uint64))
        has_mask = np.zeros(ws.size, dtype=bool)
        has_mask[inv[masked]] = True
        state = v["state"]
        all_warp = self.cta_slot * self.nwarps + (v["linear"] >> 5)
        live_t = np.nonzero(state != L.State.EXITED)[0]
        live = np.zeros(self.n_ctas * self.nwarps, dtype=np.uint64)
        np.bitwise_or.at(live, all_warp[live_t], np.uint64(1) << (v["linear"][live_t] & 31).astype(np.uint64))
        missing = required & live[ws >> 32] & ~present
        cls = np.where(has_mask, np.where(missing == 0, 1, 3), 2)
        lockstep = np.zeros(ws.size, dtype=bool)
        lockstep[inv[aux == 1]] = True
        cls = np.where(lockstep, 0, cls)
        site = (cls[inv] << 28) | site0
        order = np.lexsort((site, warp))
        lanes, warp, site = lanes[order], warp[order], site[order]
        first = np.ones(lanes.size, dtype=bool)
        first[1:] = warp[1:] != warp[:-1]
        lowest = np.maximum.accumulate(np.where(first, np.arange(lanes.size), 0))
        chosen = lanes[site == site[lowest]]
        cw = self.cta_slot[chosen] * self.nwarps + (v["linear"][chosen] >> 5)
        bits = (np.uint64(1) << (v["linear"][chosen] & 31).astype(np.uint64))
        masks = np.zeros(self.n_ctas * self.nwarps, dtype=np.uint64)
        np.bitwise_or.at(masks, cw, bits)
        v["inbox"][chosen] = masks[cw]
        slots = (cw * 32 + (v["linear"][chosen] & 31)).astype(np.int64)
        x = self.xchg.reshape(-1, L.OUT_SLOTS)
        x[slots] = v["out"][chosen]
        v["state"][chosen] = L.State.RUNNABLE
        return True

    def _check_barrier_operands(self, state: np.ndarray) -> None:
        """Barrier ids 0..15 and warp-multiple counts (PTX ISA 9.7.13.1), as the interpreter checks."""
        v = self.view
        at = np.nonzero(_waiting(state) | (state == L.State.ARRIVE))[0]
        if not at.size:
            return
        bid, cnt = v["aux"][at].astype(np.int64) & 0xFFFFFFFF, v["aux2"][at].astype(np.int64) & 0xFFFFFFFF
        arrive = state[at] == L.State.ARRIVE
        bad_id = bid > 15
        bad_cnt = (cnt % 32 != 0) | (arrive & (cnt == 0))
        for k in np.nonzero(bad_id | bad_cnt)[0][:1]:
            t = int(at[k])
            if bad_id[k]:
                msg = f"barrier id {int(bid[k])} is out of range (a CTA has barriers 0..15)"
            elif arrive[k]:
                msg = f"barrier thread count {int(cnt[k])} is not a non-zero multiple of the warp size (32)"
            else:
                msg = f"barrier thread count {int(cnt[k])} is not a multiple of the warp size (32)"
            raise self._error(TrapError, t, msg)

    def _barrier_count(self, who: np.ndarray, arrived: set[int]) -> tuple[int, int]:
        """(waiting, arrived) in threads, counting whole warps as the hardware does."""
        lin = self.view["linear"][who]
        warps_waiting = set((lin >> 5).tolist())
        warps_arrived = {t >> 5 for t in arrived} - warps_waiting
        return 32 * len(warps_waiting), 32 * len(warps_arrived)

    def _release_barriers(self, waiting: np.ndarray, state: np.ndarray) -> bool:
        """Per (CTA, barrier id), vectorized: release the waiters of every barrier that is complete."""
        v = self.view
        live = np.bincount(self.cta_slot[state != L.State.EXITED], minlength=self.n_ctas)
        keys = self.cta_slot[waiting] * 16 + (v["aux"][waiting].astype(np.int64) & 15)
        uniq, inv, n_wait = np.unique(keys, return_inverse=True, return_counts=True)
        want = np.zeros(uniq.size, dtype=np.int64)
        np.maximum.at(want, inv, v["aux2"][waiting].astype(np.int64))
        # A warp arrives once all its non-exited threads wait at the barrier (PTX ISA §9.7.13.1:
        # the instruction waits for the rest of the warp, then marks the warp's arrival).
        wkeys, w_here = np.unique(inv * 64 + (v["linear"][waiting] >> 5), return_counts=True)
        warp_all = self.cta_slot * 64 + (v["linear"] >> 5)
        live_w = np.bincount(warp_all[state != L.State.EXITED], minlength=self.n_ctas * 64)
        whole = w_here == live_w[(uniq[wkeys // 64] // 16) * 64 + wkeys % 64]
        warps_waiting = np.bincount(wkeys[whole] // 64, minlength=uniq.size)
        arrived_threads = np.zeros(uniq.size, dtype=np.int64)
        arrived_warps = np.zeros(uniq.size, dtype=np.int64)
        for i, key in enumerate(uniq.tolist()):
            got = self.arrived.get(divmod(key, 16))
            if got:
                mine = set((v["linear"][waiting[inv == i]] >> 5).tolist())
                arrived_threads[i] = len(got)
                arrived_warps[i] = len({t >> 5 for t in got} - mine)
        cta = uniq // 16
        done = np.where(want > 0, 32 * (warps_waiting + arrived_warps) >= want,
                        n_wait + arrived_threads >= live[cta])
        if not done.any():
            return False
        red_thread = self._red_sites()[v["site"][waiting]]
        special = set(np.unique(inv[red_thread]).tolist()) | {
            i for i, key in enumerate(uniq.tolist()) if divmod(key, 16) in self.arrived}
        for i in sorted(special):
            if not done[i]:
                continue
            key = int(uniq[i])
            who = waiting[inv == i]
            site = self.launch.program.lifted.sites[int(v["site"][who[0]]) - 1]
            if "red" in site.instruction.modifiers:
                if arrived_threads[i]:
                    raise self._error(TrapError, int(who[0]), f"barrier {key % 16} is used by `bar.red` and by "
                                                              "`bar.arrive` in one phase (PTX ISA 9.7.13.1: unpredictable)")
                vals = v["out"][who, 0]
                op = next(m for m in site.instruction.modifiers if m in ("popc", "and", "or"))
                r = int(np.count_nonzero(vals)) if op == "popc" else int(bool(vals.all())) if op == "and" \
                    else int(bool(vals.any()))
                v["inbox"][who] = r
            self.arrived.pop(divmod(key, 16), None)
        state[waiting[done[inv]]] = L.State.RUNNABLE
        return True

    def _red_sites(self) -> np.ndarray:
        """Per site id: is it a `bar.red`?"""
        if getattr(self, "_red", None) is None:
            sites = self.launch.program.lifted.sites
            self._red = np.zeros(len(sites) + 1, dtype=bool)
            for st in sites:
                self._red[st.index] = st.instruction.opcode in ("bar", "barrier") and "red" in st.instruction.modifiers
        return self._red

    # ------------------------------------------------------------------ reports
    def _where(self, t: int) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
        v = self.view
        block = tuple(int(x) for x in self.ctas[self.cta_slot[t], :3])
        return block, tuple(int(x) for x in v["tid"][t])

    def _site(self, t: int) -> Site | None:
        s = int(self.view["site"][t])
        sites = self.launch.program.lifted.sites
        return sites[s - 1] if 0 < s <= len(sites) else None

    def _error(self, cls, t: int, message: str, **extra) -> KernelFault:
        block, thread = self._where(t)
        site = self._site(t) if cls is not DeadlockError else None   # a deadlock is no one instruction
        return kernel_fault(cls, message, kernel=self.launch.program.kernel.name, block=block, thread=thread,
                            instruction=site.instruction if site else None, loc=site.loc if site else None,
                            files=self.launch.program.files, memory=self.launch.memory,
                            address=extra.get("address"), space=extra.get("space"))

    def _fatal(self, state: np.ndarray) -> None:
        bad = np.nonzero(np.isin(state, (L.State.FAULT, L.State.TRAP, L.State.WATCHDOG, L.State.ASSERT)))[0]
        t = int(bad[0])
        st = int(state[t])
        v = self.view
        if st == L.State.WATCHDOG:
            raise self._error(WatchdogError, t, reports.watchdog_message(int(self.launch.ctx[L.X_BUDGET])))
        if st == L.State.TRAP:
            site = self._site(t)
            what = site.instruction.opcode if site else "trap"
            if what == "cp.async":
                raise self._error(TrapError, t, cp_async_too_big(site.instruction))
            if what == "brx.idx":
                raise self._error(TrapError, t, f"`brx.idx` index is past the targets of `{site.instruction.operands[1]}`")
            if what in MATRIX_OPS or what in ("cp.async.bulk.tensor", "cp.reduce.async.bulk"):
                raise self._error(TrapError, t, (matrix_trap if what in MATRIX_OPS else tensor_copy_trap)(site.instruction))
            raise self._error(TrapError, t, f"`{what}` executed" + (self.launch.env.trap_hint if what == "trap" else ""))
        if st == L.State.ASSERT:
            raise self._error(TrapError, t, self._assert_text(t))
        addr, kind, size = int(v["fault_addr"][t]), int(v["fault_kind"][t]), int(v["fault_size"][t])
        site = self._site(t)
        # The space the generated code checked the access in (cp.async has two), else the window
        # a generic address lies in.
        space = L.Space.NAMES.get(int(v["fault_space"][t]), "generic")
        if space == "generic":
            space, addr_in = window_of(addr)
        else:
            addr_in = addr
        if space == "param" and addr_in >= 1 << 63:
            addr_in -= 1 << 64                  # a constant offset below the block, as written
        if kind == L.FaultKind.STACK:
            raise self._error(KernelFault, t, _stack_message(size, addr, self.launch.program.local_window))
        if kind in (L.FaultKind.HEAP, L.FaultKind.TEXTURE):
            msg, address, space = self.heap_faults.get(t, ("bad free", addr, "global"))
            raise self._error(KernelFault, t, msg, address=address, space=space)
        if kind == L.FaultKind.BAD_CALL:
            raise self._error(KernelFault, t, reports.bad_indirect_call(addr), address=addr)
        if kind == L.FaultKind.MISALIGNED:
            msg = reports.misaligned(space, size, addr_in)
        elif kind == L.FaultKind.READONLY:
            msg = reports.STORE_TO_PARAM if space == "param" else reports.STORE_TO_CONST
        elif space == "param":
            msg = reports.param_out_of_bounds(addr_in)
        elif space in ("shared", "local"):
            limit = self.launch.program.symbols.shared_bytes if space == "shared" else self.launch.program.local_window
            msg = reports.window_out_of_bounds(space, size, addr_in, limit)
        else:
            msg = reports.out_of_bounds(space, size, addr, self.launch.memory.nearest(addr))
        raise self._error(KernelFault, t, msg, address=addr_in, space=space)

    def _assert_text(self, t: int) -> str:
        out = self.view["out"][t]
        read = _MemoryReader(self)
        text = read.cstring(int(out[0]), t)
        where = read.cstring(int(out[1]), t)
        func = read.cstring(int(out[3]), t)
        return reports.assert_failed(text, func, where, int(out[2]) & 0xFFFFFFFF)

    def _remap(self) -> None:
        """The launch's tables after heap blocks came or went, in this batch's context too."""
        self.launch.map_memory()
        for slot in (L.X_PAGES, L.X_NPAGES, L.X_ALLOCS):
            self.ctx[slot] = self.launch.ctx[slot]

    def _on_host_call(self, thr: int, op: int, operand: int) -> int:
        """malloc/free from inside a `.func` (generated code calls this; it must not raise)."""
        t = (thr - self.records.ctypes.data) // self.stride
        if op == L.HostCall.TEXTURE:             # no remap: textures allocate nothing
            return texture.host_call(self, t, operand)
        memory = self.launch.memory
        try:
            if op == L.HostCall.MALLOC:
                return int(heap.malloc(memory, np.array([operand], dtype=np.uint64))[0])
            heap.free(memory, np.array([operand], dtype=np.uint64), np.array([t]))
            return 0
        except MemoryFault as e:
            self.heap_faults[t] = (e.message, e.address, e.space)
            return 1
        except Exception as e:  # noqa: BLE001 - an exception cannot cross the generated code
            self.heap_faults[t] = (f"internal error in the device heap: {type(e).__name__}: {e}", operand, "global")
            return 0 if op == L.HostCall.MALLOC else 1
        finally:
            self._remap()

    def _printf(self, threads: np.ndarray) -> None:
        reader = _MemoryReader(self)
        order = threads[np.argsort(self.cta_slot[threads] * self.tpc + self.view["linear"][threads], kind="stable")]
        for t in order:
            out = self.view["out"][t]
            reader.lane = int(t)
            self.out.write(format_printf(reader, int(out[0]), int(out[1]), int(t)))
        self.out.flush()

    def _deadlock(self, state: np.ndarray) -> DeadlockError:
        """Per blocked CTA and barrier: what it expects, what has arrived, who waits where."""
        blocks = [self._block_wait(state, cta) for cta in range(self.n_ctas)]
        first = np.nonzero(_waiting(state))[0]
        t = int(first[0]) if first.size else int(np.nonzero(state != L.State.EXITED)[0][0])
        return self._error(DeadlockError, t, reports.deadlock_message(w for w in blocks if w is not None))

    def _block_wait(self, state: np.ndarray, cta: int) -> BlockWait | None:
        """The deadlock report's facts of one CTA slot (None: nothing of it waits)."""
        v = self.view
        sel = self.cta_slot == cta
        waiting = np.nonzero(sel & _waiting(state))[0]
        if waiting.size == 0:
            return None
        n_live = int((sel & (state != L.State.EXITED)).sum())
        bars = []
        for bid in np.unique(v["aux"][waiting]):
            here = waiting[v["aux"][waiting] == bid]
            want = int(v["aux2"][here].max())
            sites = []
            for s in np.unique(v["site"][here])[:4]:
                ins = self.launch.program.lifted.sites[int(s) - 1].instruction
                who = here[v["site"][here] == s]
                sites.append(WaitSite(tuple(self._where(int(t))[1] for t in who[:3]), who.size > 3,
                                      ins.span.line, str(ins)))
            w, a = self._barrier_count(here, self.arrived.get((cta, int(bid)), set())) if want else (here.size, 0)
            bars.append(BarrierWait(int(bid), want, w + a, a, tuple(sites)))
        return BlockWait(self._where(int(waiting[0]))[0], int(waiting.size), n_live,
                         int((sel & (state == L.State.EXITED)).sum()), tuple(bars))


class _MemoryReader:
    """Byte reads for printf/assert text: the generic address space as one thread sees it."""

    def __init__(self, batch: _Batch) -> None:
        self.batch, self.lane = batch, 0

    def _byte(self, addr: int, t: int) -> int:
        bt = self.batch
        sym = bt.launch.program.symbols
        if SHARED_BASE <= addr < SHARED_BASE + sym.shared_bytes:
            return int(bt.shared[int(bt.cta_slot[t]) * max(sym.shared_bytes, 16) + addr - SHARED_BASE])
        lw = bt.launch.program.local_window
        if LOCAL_BASE <= addr < LOCAL_BASE + lw:
            return int(bt.local[t * max(lw, 16) + addr - LOCAL_BASE])
        a = bt.launch.memory.find(addr)
        return int(a.data[addr - a.base]) if a is not None else 0

    def load(self, space, addrs, dtype, lanes):
        return np.array([self._byte(int(a), int(self.lane)) for a in addrs], dtype=np.uint8)

    def cstring(self, addr: int, t: int, limit: int = 4096) -> str:
        out = bytearray()
        while addr and len(out) < limit:
            c = self._byte(addr + len(out), t)
            if c == 0:
                break
            out.append(c)
        return out.decode("utf-8", "replace")


def _waiting(state: np.ndarray) -> np.ndarray:
    return (state == L.State.BARRIER) | (state == L.State.BARRIER_RED)


def _stack_message(which: int, value: int, local_window: int) -> str:
    """A stack fault: ``which`` 0: the call depth ``value`` is past limits.call_depth; 1: the frames
    need ``value`` bytes, past limits.stack_per_thread; 2: the local-memory window is full."""
    if which == 0:
        return reports.call_depth_exceeded(value)
    if which == 1:
        return reports.stack_exceeded(value)
    return reports.local_window_full(value, local_window)


__all__ = ["DEFAULT_MEMORY_BUDGET", "JitProgram", "compile_kernel", "host_stack_bytes", "run_kernel"]
