"""The state of one batch of CTAs executing together: registers, memory windows, PCs.

Threads are numbered CTA-major, then by linear thread index within the CTA
(x fastest), so a PTX warp is 32 consecutive threads of one CTA.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from .. import limits
from ..ir.types import ScalarType
from ..machine import reports
from ..machine.addressmap import LOCAL_BASE, LOCAL_LIMIT, PARAM_BASE, PARAM_LIMIT, SHARED_BASE, SHARED_LIMIT
from ..machine.launch import Geometry
from ..machine.memory import DeviceMemory, MemoryFault, check_alignment, window_offsets
from .lanevalues import Affine, materialize

WARP = 32

UINT = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}
SINT = {8: np.int8, 16: np.int16, 32: np.int32, 64: np.int64}
FLOAT = {32: np.float32, 64: np.float64, 16: np.float16}


def storage_dtype(t: ScalarType) -> np.dtype:
    """Registers hold raw bits: bool for predicates, uintN otherwise."""
    if t is ScalarType.PRED:
        return np.dtype(bool)
    return np.dtype(UINT[max(t.bits, 8)])


class StackFault(Exception):
    """A call past limits.call_depth or limits.stack_per_thread (a KernelFault for the user)."""

    def __init__(self, lane: int, message: str) -> None:
        super().__init__(message)
        self.lane, self.message = lane, message
        self.address: int | None = None


class BadCall(StackFault):
    """An indirect call through an address that is no function's (a KernelFault naming it)."""

    def __init__(self, lane: int, address: int) -> None:
        super().__init__(lane, reports.bad_indirect_call(address))
        self.address = address


def window_stride(nbytes: int) -> int:
    """Bytes between neighbouring CTAs' shared (threads' local) windows in the flat arrays: a
    multiple of 16, so an aligned access of up to 16 bytes is one element of ``view(dtype)``
    (an odd-sized -G frame once shifted odd threads' words: ``idx // n`` rounded down)."""
    return (max(nbytes, 16) + 15) // 16 * 16


@dataclass
class Batch:
    """CTAs ``first_cta .. first_cta + n_ctas - 1`` (linear CTA ids) of one launch."""

    geometry: Geometry
    first_cta: int
    n_ctas: int
    memory: DeviceMemory
    params: np.ndarray                  # uint8: the kernel's .param block
    shared_bytes: int
    local_bytes: int
    dynamic_shared: int = 0
    regs: dict[str, np.ndarray] = field(default_factory=dict)     # or lanevalues.Affine formulas
    formula_arrays: dict[str, np.ndarray] = field(default_factory=dict)   # materialised formulas, read-only
    steps: int = 0
    thread_instructions: int = 0
    divergent_steps: int = 0

    def __post_init__(self) -> None:
        tpc = self.geometry.threads_per_cta
        self.n = n = self.n_ctas * tpc
        self.all = np.arange(n, dtype=np.int64)
        self.shared = np.zeros(self.n_ctas * window_stride(self.shared_bytes), dtype=np.uint8)
        self.local = np.zeros(n * window_stride(self.local_bytes), dtype=np.uint8) if self.local_bytes else \
            np.zeros(16, dtype=np.uint8)
        self.exited = np.zeros(n, dtype=bool)
        self.waiting = np.zeros(n, dtype=bool)
        # Scheduling: one PC for everybody while converged, per-thread PCs otherwise.
        self.pc_scalar = 0
        self.pc: np.ndarray | None = None
        # Calls: per-thread depth; per depth level the call site and saved callee state.
        self.pbufs: dict[str, np.ndarray] = {}
        self.depth = np.zeros(n, dtype=np.int64)
        self.frames: list[dict] = []
        self.printed: list[tuple[int, str]] = []      # (thread, text) of printf, in execution order
        self.stack_base = 0                  # local offset where the first `.func` frame starts

    # Thread geometry, computed on first use (a 2^20-thread batch need not pay for unused ones).
    @cached_property
    def _linear(self) -> np.ndarray:
        t = self.all.astype(np.int32) if self.n < 2**31 else self.all
        return t

    @cached_property
    def cta_slot(self) -> np.ndarray:
        return self._linear // self.geometry.threads_per_cta

    @cached_property
    def tid_linear(self) -> np.ndarray:
        return self._linear % self.geometry.threads_per_cta

    @cached_property
    def tid(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        lin = self.tid_linear
        bx, by, _ = self.geometry.block
        return (lin % bx, (lin // bx) % by, lin // (bx * by))

    @cached_property
    def ctaid(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        cta = self.first_cta + self.cta_slot
        gx, gy, _ = self.geometry.grid
        return (cta % gx, (cta // gx) % gy, cta // (gx * gy))

    @cached_property
    def laneid(self) -> np.ndarray:
        return self.tid_linear % WARP

    @cached_property
    def warpid(self) -> np.ndarray:
        return self.tid_linear // WARP

    @cached_property
    def bar_id(self) -> np.ndarray:
        return np.zeros(self.n, dtype=np.int64)

    @cached_property
    def bar_count(self) -> np.ndarray:
        return np.zeros(self.n, dtype=np.int64)

    @cached_property
    def bar_pred(self) -> np.ndarray:
        return np.zeros(self.n, dtype=bool)

    @cached_property
    def bar_pc(self) -> np.ndarray:
        return np.full(self.n, -1, dtype=np.int64)

    # Barrier phases (see barriers.py): per CTA and barrier id, the weighted tally of `bar.arrive`
    # arrivals and the largest thread count they announced; per thread, the barriers it arrived at.
    @cached_property
    def bar_arrived(self) -> np.ndarray:
        return np.zeros((self.n_ctas, 16), dtype=np.float64)

    @cached_property
    def bar_arrive_want(self) -> np.ndarray:
        return np.zeros((self.n_ctas, 16), dtype=np.int64)

    @cached_property
    def bar_arrive_mask(self) -> np.ndarray:
        return np.zeros(self.n, dtype=np.uint16)

    @cached_property
    def warp_weight(self) -> np.ndarray:
        """What one thread's arrival counts at a barrier: barriers count warps (32 threads each),
        so a thread of a partial last warp of p threads weighs 32/p."""
        tpc = self.geometry.threads_per_cta
        pop = np.minimum(WARP, tpc - self.warpid.astype(np.int64) * WARP)
        return WARP / pop

    # ------------------------------------------------------------ call frames
    # Each thread's local window is a stack: the kernel's `.local` variables at offset 0, then one
    # frame per active `.func` call. ``fp`` is the frame base of the function a thread runs now,
    # ``sp`` the end of its last frame (calls.py pushes and pops them).
    @cached_property
    def fp(self) -> np.ndarray:
        return np.zeros(self.n, dtype=np.int64)

    @cached_property
    def sp(self) -> np.ndarray:
        return np.full(self.n, self.stack_base, dtype=np.int64)

    @cached_property
    def thread_steps(self) -> np.ndarray:
        """Per thread: the divergent steps it ran (the watchdog's per-thread count, executor.py).
        int32: a quarter of an int64 scatter's cost per step; 2^31 divergent steps are days."""
        return np.zeros(self.n, dtype=np.int32)

    @cached_property
    def stack_used(self) -> np.ndarray:
        """Per thread: stack bytes of its active `.func` calls (checked against
        limits.stack_per_thread at each call, see ops/calls.py)."""
        return np.zeros(self.n, dtype=np.int64)

    def grow_local(self, need: int, lane: int) -> None:
        """Widen every thread's local window to at least ``need`` bytes (deeper call frames).
        The calls have checked the stack budget, so ``need`` is at most the kernel's frame plus
        limits.stack_per_thread."""
        if need <= self.local_bytes:
            return
        cap = self.stack_base + limits.current().stack_per_thread
        if need > cap:
            raise StackFault(lane, reports.local_window_full(need, cap))
        old = self.local_bytes
        new = min(max(need, 2 * old, 256), cap)
        new = (new + 15) // 16 * 16
        grown = np.zeros((self.n, new), dtype=np.uint8)
        if old:
            grown[:, :old] = self.local.reshape(self.n, window_stride(old))[:, :old]
        self.local = grown.reshape(-1)
        self.local_bytes = new

    # ------------------------------------------------------------ lane selection
    # ``lanes`` is an index array of threads; the batch's own ``all`` array (every
    # thread, in order) is recognised by identity so the converged case reads and
    # writes whole arrays instead of gathering and scattering.
    def take(self, arr: np.ndarray, lanes: np.ndarray) -> np.ndarray:
        return arr if lanes is self.all else arr[lanes]

    def assign(self, key: str, t: ScalarType, lanes: np.ndarray, values) -> None:
        """Write register ``key`` for ``lanes``. A whole-batch write of an array an instruction
        just computed takes the array itself as the register (no copy); anything that may be
        shared (another register, a formula's cached array, a view into memory) is copied."""
        if lanes is self.all and isinstance(values, np.ndarray) and self._fresh(values, t):
            self.regs[key] = values
            self.formula_arrays.pop(key, None)
            return
        self.put(self.reg(key, t), lanes, values)

    def _fresh(self, v: np.ndarray, t: ScalarType) -> bool:
        if v.shape != (self.n,) or v.dtype != storage_dtype(t) or not v.flags.writeable \
                or not v.flags.c_contiguous:
            return False
        owner = v.base
        if owner is not None and (not isinstance(owner, np.ndarray) or owner.base is not None
                                  or owner.nbytes != v.nbytes):
            return False                 # a view into something larger (memory, a window)
        for held in (self.regs, self.formula_arrays):
            for r in held.values():
                if r is v or (owner is not None and r is owner):
                    return False
        return True

    def put(self, arr: np.ndarray, lanes: np.ndarray, values) -> None:
        if lanes is self.all:
            arr[...] = values
        else:
            arr[lanes] = values

    # ------------------------------------------------------------ registers
    def pbuf(self, key: str, size: int) -> np.ndarray:
        """Per-thread bytes of a `.param` variable (call arguments and results): shape (n, size)."""
        arr = self.pbufs.get(key)
        if arr is None:
            arr = self.pbufs[key] = np.zeros((self.n, max((size + 7) // 8 * 8, 8)), dtype=np.uint8)
        return arr

    def reg(self, key: str, t: ScalarType) -> np.ndarray:
        """A register's array, to write into (a formula value becomes its array for good)."""
        arr = self.regs.get(key)
        if arr is None:
            arr = self.regs[key] = np.zeros(self.n, dtype=storage_dtype(t))
        elif isinstance(arr, Affine):
            cached = self.formula_arrays.pop(key, None)
            arr = self.regs[key] = cached if cached is not None else self.materialize(arr)
        return arr

    def read_reg(self, key: str, t: ScalarType) -> np.ndarray:
        """A register's array, to read (a formula value stays one; its array is cached)."""
        arr = self.regs.get(key)
        if isinstance(arr, Affine):
            cached = self.formula_arrays.get(key)
            if cached is None:
                cached = self.formula_arrays[key] = self.materialize(arr)
            return cached
        return arr if arr is not None else self.reg(key, t)

    def set_formula(self, key: str, v: Affine) -> None:
        self.regs[key] = v
        self.formula_arrays.pop(key, None)

    def reg_if_any(self, key: str) -> np.ndarray | None:
        """A register's array (to write into) if it was ever written."""
        return self.reg(key, ScalarType.U64) if key in self.regs else None

    def materialize(self, v: Affine) -> np.ndarray:
        """A formula value (lanevalues.Affine) as the per-lane uint array it stands for."""
        return materialize(v, self.n, self.geometry.threads_per_cta, lambda: self.tid_linear,
                           lambda: self.cta_slot)

    # ------------------------------------------------------------ memory
    def load(self, space: str, addr: np.ndarray, dtype: np.dtype, lanes: np.ndarray,
             aligned: bool = False) -> np.ndarray:
        dtype = np.dtype(dtype)
        n = dtype.itemsize
        if not aligned:
            check_alignment(addr, n, space)
        if space in ("global", "const"):
            return self.memory.load(addr, dtype, space)
        if space == "generic":
            return self._generic(addr, n, lanes, lambda sp, a, l: self.load(sp, a, dtype, l), dtype)
        buf, idx = self._window(space, addr, n, lanes)
        return buf.view(dtype)[idx // n]

    def store(self, space: str, addr: np.ndarray, values: np.ndarray, lanes: np.ndarray,
              aligned: bool = False) -> None:
        n = values.dtype.itemsize
        if not aligned:
            check_alignment(addr, n, space)
        if space in ("global", "const"):
            self.memory.store(addr, values, space)
            return
        if space == "generic":
            self._generic(addr, n, lanes, None, None, values=values)
            return
        if space == "param":
            raise MemoryFault(reports.STORE_TO_PARAM, 0,
                              int(addr[0]), space)
        buf, idx = self._window(space, addr, n, lanes)
        buf.view(values.dtype)[idx // n] = values

    def _window(self, space: str, addr: np.ndarray, n: int, lanes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        if space == "shared":
            off = window_offsets(addr, n, self.shared_bytes, space)
            return self.shared, self.take(self.cta_slot, lanes) * window_stride(self.shared_bytes) + off
        if space == "local":
            off = window_offsets(addr, n, self.local_bytes, space)
            return self.local, lanes.astype(np.int64) * window_stride(self.local_bytes) + off
        if space == "param":
            off = window_offsets(addr, n, self.params.size, space)
            return self.params, off
        raise MemoryFault(f"unknown state space .{space}", 0, int(addr[0]) if addr.size else 0, space)

    def _generic(self, addr, n, lanes, fn, dtype, values=None):
        """Split a generic access by window; returns the gathered values for loads."""
        out = np.empty(addr.shape, dtype=dtype) if dtype is not None else None
        kinds = np.full(addr.shape, 0, dtype=np.int8)
        kinds[(addr >= SHARED_BASE) & (addr < SHARED_LIMIT)] = 1
        kinds[(addr >= LOCAL_BASE) & (addr < LOCAL_LIMIT)] = 2
        kinds[(addr >= PARAM_BASE) & (addr < PARAM_LIMIT)] = 3
        for k, space, base in ((0, "global", 0), (1, "shared", SHARED_BASE), (2, "local", LOCAL_BASE),
                               (3, "param", PARAM_BASE)):
            sel = kinds == k
            if not sel.any():
                continue
            part = addr[sel] - np.uint64(base)
            if values is None:
                out[sel] = fn(space, part, lanes[sel])
            else:
                self.store(space, part, values[sel], lanes[sel])
        return out
