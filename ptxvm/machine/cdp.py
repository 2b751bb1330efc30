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
its other work). The NULL stream, ``cudaStreamFireAndForget`` and ``cudaStreamTailLaunch`` are
the streams a device launch may name (device streams of ``cudaStreamCreateWithFlags`` are not
provided: their entry point is refused like any unknown external function).

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
from .launch import Dim3
from .memory import Allocation, DeviceMemory

CUDA_SUCCESS = 0
STREAM_NULL, STREAM_TAIL, STREAM_FIRE_AND_FORGET = 0, 3, 4     # cuda_device_runtime_api.h
STREAMS = {STREAM_NULL: "the NULL stream", STREAM_TAIL: "cudaStreamTailLaunch",
           STREAM_FIRE_AND_FORGET: "cudaStreamFireAndForget"}
MAX_BLOCK_THREADS = 1024
MAX_GRID = ((1 << 31) - 1, 65535, 65535)

# Entry point -> what it does (the same for the CDP2 names and CUDA 11's CDP1 names).
ENTRY_POINTS = {
    **dict.fromkeys(("__cudaCDP2GetParameterBufferV2", "cudaGetParameterBufferV2"), "param_buffer"),
    **dict.fromkeys(("__cudaCDP2LaunchDeviceV2", "cudaLaunchDeviceV2"), "launch"),
    **dict.fromkeys(("__cudaCDP2Malloc", "cudaMalloc"), "malloc"),
    **dict.fromkeys(("__cudaCDP2Free", "cudaFree"), "free"),
    **dict.fromkeys(("__cudaCDP2GetLastError", "cudaGetLastError", "__cudaCDP2PeekAtLastError",
                     "cudaPeekAtLastError"), "last_error"),
}
_SYNC_GONE = ("calls `{name}`, device-side cudaDeviceSynchronize, which CUDA 12 removed (CDP2: a child "
              "grid completes before its parent grid, and a parent cannot wait for it; nvcc 13 rejects "
              "it in device code); rebuild without it, e.g. move the dependent work into a child or "
              "tail launch (cudaStreamTailLaunch)")
REFUSED = {name: _SYNC_GONE.format(name=name) for name in ("cudaDeviceSynchronize", "__cudaCDP2DeviceSynchronize")}


class DeviceRuntimeError(Exception):
    """A device-side launch CUDA would refuse or ptxvm cannot hold: the executor reports it as a
    trap of the calling thread, at the call."""


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
class DeviceRuntime:
    """The device runtime of one grid: its parameter buffers and the grids it launched."""

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
        return DeviceRuntime(self.memory, self.kernels, self.depth + 1, self.tree)

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

    def launch(self, buffer: int, stream: int) -> int:
        """``cudaLaunchDeviceV2``: queue the grid whose parameters ``buffer`` holds; cudaSuccess."""
        entry = self.buffers.pop(buffer, None)
        if entry is None:
            raise DeviceRuntimeError(f"cudaLaunchDeviceV2 was given {buffer:#x}, which is no parameter buffer "
                                     "of cudaGetParameterBufferV2 (or one launched already)")
        kernel, grid, block, shared, buf = entry
        try:
            return self._queue(kernel, grid, block, shared, buf, stream)
        finally:
            self.memory.free(buf)            # the runtime owns the buffer: copied, or refused

    def _queue(self, kernel: ir.Function, grid: Dim3, block: Dim3, shared: int, buf: Allocation,
               stream: int) -> int:
        if stream not in STREAMS:
            raise DeviceRuntimeError(f"a device launch of `{kernel.name}` names stream {stream:#x}; ptxvm's device "
                                     f"runtime provides {', '.join(STREAMS.values())}")
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
