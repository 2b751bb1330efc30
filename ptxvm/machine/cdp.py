"""Dynamic parallelism (CDP2) on the executors of this process: the device runtime that
device-side kernel launches go to.

What nvcc 13 emits with ``-rdc=true`` (read from its output for ``tests/cuda/cdp.cu``): a
``k<<<grid, block, shared, stream>>>(args)`` in device code becomes
``__cudaCDP2GetParameterBufferV2(&k, dim3 grid, dim3 block, unsigned shared)``, which returns a
buffer the caller fills with the arguments at the child kernel's `.param` offsets (NULL skips the
launch), then ``__cudaCDP2LaunchDeviceV2(buffer, stream)``, which returns a cudaError_t.
``cudaMalloc``/``cudaFree``/``cudaGetLastError`` in device code become ``__cudaCDP2Malloc``,
``__cudaCDP2Free``, ``__cudaCDP2GetLastError``. CUDA 11's PTX (CDP1) calls the same entry points
without the ``__cudaCDP2`` prefix, with the same signatures; both are accepted. Device-side
``cudaDeviceSynchronize`` is gone since CUDA 12 (nvcc 13 rejects it in device code): PTX that
calls it is refused with a message that says so.

When children run (CUDA Programming Guide, "CUDA Dynamic Parallelism": a child grid is complete
before its parent grid is; work in different streams, or of parent and child, may but need not
run concurrently, and a program may not depend on it): here a grid's children run after every
CTA of the grid has finished, one after another in the order they were launched, each with all
of its own descendants, then its tail launches (``cudaStreamTailLaunch``: after the grid and all
its other work). A launch may name the NULL stream, ``cudaStreamFireAndForget``,
``cudaStreamTailLaunch`` or a device stream of ``cudaStreamCreateWithFlags``; streams, events
and the per-thread last error are ``machine.devstreams`` (why launch order keeps every stream's
order and every event wait). The ``_ptsz`` entry points (``--default-stream per-thread``) are the
same calls: on the device every stream is already private to its block.

Limits (``ptxvm.limits``): ``cdp_depth`` nesting levels (CUDA's 24), ``cdp_pending_launches``
grids launched and not yet complete (CUDA's default pending-launch count, 2048). Past either,
or with a launch configuration CUDA would refuse, the launching thread stops with a clear error
instead of a silently skipped child.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from .. import limits
from ..errors import ResourceError
from ..ir import nodes as ir
from .devstreams import (CUDA_SUCCESS, MEMORY_ALLOCATION, STREAM_FIRE_AND_FORGET, STREAM_NULL, STREAM_TAIL,
                         Caller, DeviceRuntimeError, StreamsAndEvents)
from .launch import Dim3
from .memory import Allocation, DeviceMemory

__all__ = ["CUDA_SUCCESS", "MEMORY_ALLOCATION", "STREAM_NULL", "STREAM_TAIL", "STREAM_FIRE_AND_FORGET",
           "DeviceRuntimeError", "DeviceRuntime", "ChildGrid", "ENTRY_POINTS", "ARG_BYTES", "REFUSED",
           "CREATES", "api_call", "complete", "param_size", "uses_device_runtime"]
MAX_BLOCK_THREADS = 1024
MAX_GRID = ((1 << 31) - 1, 65535, 65535)


def _names(*calls: str) -> tuple[str, ...]:
    """A call's CDP2 entry point and CUDA 11's CDP1 name (the same signature)."""
    return tuple(n for c in calls for n in (f"__cudaCDP2{c}", f"cuda{c}"))


# Entry point -> what it does (the same for the CDP2 names, CUDA 11's CDP1 names and the _ptsz ones).
ENTRY_POINTS = {
    **dict.fromkeys(_names("GetParameterBufferV2"), "param_buffer"),
    **dict.fromkeys(_names("LaunchDeviceV2", "LaunchDeviceV2_ptsz"), "launch"),
    **dict.fromkeys(_names("Malloc"), "malloc"),
    **dict.fromkeys(_names("Free"), "free"),
    **dict.fromkeys(_names("GetLastError"), "get_last_error"),
    **dict.fromkeys(_names("PeekAtLastError"), "peek_last_error"),
    **dict.fromkeys(_names("StreamCreateWithFlags"), "stream_create"),
    **dict.fromkeys(_names("StreamDestroy"), "stream_destroy"),
    **dict.fromkeys(_names("StreamWaitEvent", "StreamWaitEvent_ptsz"), "stream_wait_event"),
    **dict.fromkeys(_names("EventCreateWithFlags"), "event_create"),
    **dict.fromkeys(_names("EventRecord", "EventRecord_ptsz"), "event_record"),
    **dict.fromkeys(_names("EventRecordWithFlags", "EventRecordWithFlags_ptsz"), "event_record_flags"),
    **dict.fromkeys(_names("EventDestroy"), "event_destroy"),
}
# The argument bytes of the calls that take only pointers, handles and flags (the `.param`s nvcc
# passes: 8 for pointers and handles, 4 for flags), in order.
ARG_BYTES = {"get_last_error": (), "peek_last_error": (), "stream_create": (8, 4), "stream_destroy": (8,),
             "stream_wait_event": (8, 8, 4), "event_create": (8, 4), "event_record": (8, 8),
             "event_record_flags": (8, 8, 4), "event_destroy": (8,)}
_SYNC_GONE = ("calls `{name}`, device-side cudaDeviceSynchronize, which CUDA 12 removed (CDP2: a child "
              "grid completes before its parent grid, and a parent cannot wait for it; nvcc 13 rejects "
              "it in device code); rebuild without it, e.g. move the dependent work into a child or "
              "tail launch (cudaStreamTailLaunch)")
REFUSED = {name: _SYNC_GONE.format(name=name) for name in ("cudaDeviceSynchronize", "__cudaCDP2DeviceSynchronize")}


def uses_device_runtime(module: ir.Module) -> bool:
    """Whether ``module`` declares any device-runtime entry point (then its launches get a runtime)."""
    return any(f.body is None and f.name in ENTRY_POINTS for f in module.functions.values())


def param_size(kernel: ir.Function) -> int:
    """Bytes of ``kernel``'s `.param` block: each parameter at its alignment, in order (as
    ``machine.symbols`` places them, and as nvcc writes a parameter buffer)."""
    at = 0
    for p in kernel.params:
        align = p.align or max(p.element_bytes(), 1)
        at = (at + align - 1) // align * align + (p.size_bytes() or 0)
    return at


@dataclass(frozen=True, slots=True)
class ChildGrid:
    """One device-side launch: what the driver runs once its parent grid has finished."""

    kernel: str
    grid: Dim3
    block: Dim3
    shared: int
    params: bytes
    stream: int
    depth: int                       # the host's launch is depth 0


@dataclass
class _Tree:
    """What all grids of one host launch share: grids launched and not yet complete."""

    pending: int = 0


@dataclass
class DeviceRuntime(StreamsAndEvents):
    """The device runtime of one grid: its parameter buffers, the grids it launched, its streams,
    events and threads' last errors (``StreamsAndEvents``)."""

    memory: DeviceMemory
    kernels: dict[int, ir.Function]          # function address -> kernel
    depth: int = 0
    tree: _Tree = field(default_factory=_Tree)
    buffers: dict[int, tuple[ir.Function, Dim3, Dim3, int, Allocation]] = field(default_factory=dict)
    launched: list[ChildGrid] = field(default_factory=list)

    @classmethod
    def for_module(cls, memory: DeviceMemory, module: ir.Module, functions: dict[str, int]) -> "DeviceRuntime":
        """The runtime of a host launch: kernels found by the addresses the module image gave them."""
        return cls(memory, {functions[n]: f for n, f in module.kernels.items() if n in functions})

    def child(self) -> "DeviceRuntime":
        self.handles.grids += 1
        return DeviceRuntime(self.memory, self.kernels, self.depth + 1, self.tree, handles=self.handles,
                             grid_id=self.handles.grids)

    def parameter_buffer(self, func: int, grid: Dim3, block: Dim3, shared: int) -> int:
        """``cudaGetParameterBufferV2``: a fresh device buffer for the arguments of ``func``."""
        kernel = self.kernels.get(func)
        if kernel is None:
            raise DeviceRuntimeError(f"cudaGetParameterBufferV2 was given {func:#x}, which is the address "
                                     "of no kernel of this module")
        _check_config(kernel.name, grid, block, shared)
        size = param_size(kernel)
        buf = self.memory.alloc(max(size, 8), f"parameter buffer of a device launch of `{kernel.name}`")
        self.buffers[buf.base] = (kernel, grid, block, shared, buf)
        return buf.base

    def launch(self, buffer: int, stream: int, caller: Caller = (0, 0)) -> int:
        """``cudaLaunchDeviceV2``: queue the grid whose parameters ``buffer`` holds; cudaSuccess,
        or the error of a destroyed stream (then nothing is queued)."""
        entry = self.buffers.pop(buffer, None)
        if entry is None:
            raise DeviceRuntimeError(f"cudaLaunchDeviceV2 was given {buffer:#x}, which is no parameter buffer "
                                     "of cudaGetParameterBufferV2 (or one launched already)")
        kernel, grid, block, shared, buf = entry
        try:
            code = self.launch_stream(caller, stream, kernel.name)
            if code != CUDA_SUCCESS:
                return self.fail(caller, code)
            return self._queue(kernel, grid, block, shared, buf, stream)
        finally:
            self.memory.free(buf)            # the runtime owns the buffer: copied, or refused

    def _queue(self, kernel: ir.Function, grid: Dim3, block: Dim3, shared: int, buf: Allocation,
               stream: int) -> int:
        lim = limits.current()
        if self.depth + 1 > lim.cdp_depth:
            raise DeviceRuntimeError(_over("nesting depth", self.depth + 1, lim.cdp_depth, "cdp_depth",
                                           f"a device launch of `{kernel.name}`"))
        if self.tree.pending + 1 > lim.cdp_pending_launches:
            raise DeviceRuntimeError(_over("pending launches", self.tree.pending + 1, lim.cdp_pending_launches,
                                           "cdp_pending_launches", f"a device launch of `{kernel.name}`"))
        params = bytes(buf.data[:param_size(kernel)])
        self.tree.pending += 1
        self.launched.append(ChildGrid(kernel.name, grid, block, shared, params, stream, self.depth + 1))
        return CUDA_SUCCESS

    def release(self) -> None:
        """Parameter buffers never launched go when their grid ends."""
        for *_, buf in self.buffers.values():
            self.memory.free(buf)
        self.buffers.clear()


def complete(runtime: DeviceRuntime, run_grid: Callable[[ChildGrid, DeviceRuntime], None]) -> None:
    """Run the grids ``runtime``'s grid launched, each to completion with its own descendants, in
    launch order, its tail launches last; ``run_grid(child, its runtime)`` runs one grid."""
    runtime.release()
    order = sorted(runtime.launched, key=lambda c: c.stream == STREAM_TAIL)    # stable: launch order
    runtime.launched = []
    for grid in order:
        sub = runtime.child()
        try:
            run_grid(grid, sub)
            complete(sub, run_grid)
        finally:
            sub.release()
        runtime.tree.pending -= 1


def _check_config(kernel: str, grid: Dim3, block: Dim3, shared: int) -> None:
    """A configuration CUDA refuses (cudaErrorInvalidConfiguration) stops the launching thread."""
    what = f"a device launch of `{kernel}` with grid {grid}, block {block}"
    if any(d < 1 for d in (*grid, *block)):
        raise DeviceRuntimeError(f"{what} has a zero dimension (CUDA: cudaErrorInvalidConfiguration)")
    threads = block[0] * block[1] * block[2]
    if threads > MAX_BLOCK_THREADS or block[2] > 64:
        raise DeviceRuntimeError(f"{what} has {threads} threads per block; the limit is {MAX_BLOCK_THREADS} "
                                 "(z at most 64; CUDA: cudaErrorInvalidConfiguration)")
    if any(g > m for g, m in zip(grid, MAX_GRID)):
        raise DeviceRuntimeError(f"{what} is past CUDA's grid limits {MAX_GRID} (cudaErrorInvalidConfiguration)")
    try:
        limits.current().check("shared_per_block", shared, f"{what}: its dynamic shared memory")
    except ResourceError as e:
        raise DeviceRuntimeError(str(e)) from None


def _over(what: str, asked: int, limit: int, name: str, who: str) -> str:
    return (f"{who} needs {what} {asked:,}, more than ptxvm's limit of {limit:,} ({name}; raise it with "
            f"PTXVM_LIMIT_{name.upper()}=... or ptxvm.limits.configure({name}=...))")


_API = {
    "get_last_error": lambda rt, c: rt.last_error(c, True),
    "peek_last_error": lambda rt, c: rt.last_error(c, False),
    "stream_create": lambda rt, c, where, flags: rt.stream_create(c, flags),
    "event_create": lambda rt, c, where, flags: rt.event_create(c, flags),
    "stream_destroy": lambda rt, c, s: rt.stream_destroy(c, s),
    "stream_wait_event": lambda rt, c, s, e, flags: rt.stream_wait_event(c, s, e, flags),
    "event_record": lambda rt, c, e, s: rt.event_record(c, e, s),
    "event_record_flags": lambda rt, c, e, s, flags: rt.event_record(c, e, s, flags),
    "event_destroy": lambda rt, c, e: rt.event_destroy(c, e),
}
CREATES = frozenset({"stream_create", "event_create"})      # (error, handle): the handle goes to *arg 0


def api_call(runtime: DeviceRuntime, what: str, caller: Caller, args: list[int]) -> tuple[int, int]:
    """One thread's call of the stream, event or last-error API (``ARG_BYTES[what]`` arguments):
    (cudaError_t, the handle to store at the first argument's address: only for ``CREATES``)."""
    result = _API[what](runtime, caller, *args)
    return result if what in CREATES else (result, 0)
