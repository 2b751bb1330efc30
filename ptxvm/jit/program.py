"""A kernel compiled for the host JIT: lifted with the host hooks, code-generated, loaded, with
what the executor needs to know of it (record size, heap use, frame depths)."""

from __future__ import annotations

import ctypes
from dataclasses import dataclass

from .. import limits
from ..ir import nodes as ptx
from ..lift.module import LiftedModule, lift_kernel
from ..machine.image import ModuleImage
from ..machine.symbols import layout
from ..passes import CallGraph
from .host import HostHooks

_DRIVER = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64,
                           ctypes.c_int64, ctypes.c_int64)


@dataclass
class JitProgram:
    kernel: ptx.Function
    lifted: LiftedModule
    symbols: object                    # machine.symbols.Symbols: the launch's memory layout
    record_bytes: int
    loaded: object                     # keeps the machine code alive
    driver: object
    files: dict[int, str]
    heap: bool = False                 # calls device malloc/free: its CTAs run in order, on one host thread
    exchanges: bool = True             # warp instructions: the CTAs need exchange slots
    call_frames: int | None = 0        # local bytes the `.func` frames need at most (None: recursion)
    kernel_stack: int = 0              # host stack bytes of the kernel's own `.param` buffers
    max_frame: int = 0                 # host stack bytes of the largest `.func` activation
    compact: bool = False              # never stops: the driver runs its threads in one record (jit.compact)
    driver_mode: str = ""              # which driver and why, for the launch statistics
    vector: bool = False               # the warp-as-SIMD path: no thread record or local memory touched

    @property
    def kernel_frame(self) -> int:
        return self.symbols.frame_bytes.get(self.kernel.name, 0)

    @property
    def local_window(self) -> int:
        """Per-thread local memory: the kernel's frame, plus a call stack for the `.func` frames:
        as deep as the call graph needs, or (recursion) the stack budget, limits.stack_per_thread."""
        frames = self.call_frames
        return self.kernel_frame + (limits.current().stack_per_thread if frames is None else frames)


def compile_kernel(module: ptx.Module, kernel: ptx.Function, image: ModuleImage, dynamic_shared: int,
                   *, opt: int = 2) -> JitProgram:
    from .loader import host_target, jit_ir
    lay = layout(module, kernel, image, dynamic_shared)
    triple, _cpu, _features = host_target()
    hooks = HostHooks(triple=triple)
    lifted = lift_kernel(module, kernel.name, hooks, lay)
    from .simd import MODE, RECORD_BYTES, lift_simd       # the warp-as-SIMD path, where it applies
    vector, why = lift_simd(module, kernel, lay, triple)
    if vector is not None:
        loaded = jit_ir(vector.llvm_ir, opt=opt)
        files = {i.index: i.path for i in module.items if isinstance(i, ptx.FileDirective)}
        return JitProgram(kernel, vector, lay, RECORD_BYTES, loaded, _DRIVER(loaded.address("ptxvm_run")), files,
                          exchanges=False, compact=True, driver_mode=MODE, vector=True)
    loaded = jit_ir(lifted.llvm_ir, opt=opt)
    driver = _DRIVER(loaded.address("ptxvm_run"))
    record = hooks.record_bytes
    files = {i.index: i.path for i in module.items if isinstance(i, ptx.FileDirective)}
    graph = CallGraph.of(module)
    return JitProgram(kernel, lifted, lay, record, loaded, driver, files, graph.uses_heap(kernel.name), hooks.exchanges,
                      _call_frames(graph, kernel.name, lay.frame_bytes, lay.frame_align),
                      hooks.kernel_stack, hooks.max_frame, hooks.compact,
                      hooks.driver_mode() + f"; simd path not taken: {why}")


def _call_frames(graph: CallGraph, kernel: str, frame_bytes: dict[str, int],
                 frame_align: dict[str, int]) -> int | None:
    """Local bytes the deepest chain of `.func` frames below ``kernel`` needs (each frame aligned
    as push_frame aligns it), or None when the call graph has a cycle (recursion). Callees are
    the call graph's (``passes.CallGraph``: an indirect call may reach any address-taken one)."""
    memo: dict[str, int | None] = {}
    active: set[str] = set()

    def need(name: str) -> int | None:
        if name in active:
            return None
        if name in memo:
            return memo[name]
        active.add(name)
        deepest = 0
        for callee in sorted(_callees(graph, name)):
            n = need(callee)
            if n is None:
                active.discard(name)
                memo[name] = None
                return None
            deepest = max(deepest, n)
        active.discard(name)
        own = frame_bytes.get(name, 0) if name != kernel else 0
        memo[name] = deepest + (own + frame_align.get(name, 16) if own else 0)
        return memo[name]

    return need(kernel)


def _callees(graph: CallGraph, name: str) -> set[str]:
    """The `.func`s with a body that ``name`` may transfer control to."""
    if name not in graph.facts:
        return set()
    return {n for n in graph.successors(name)
            if n in graph.functions and graph.functions[n].body is not None and not graph.functions[n].is_kernel}
