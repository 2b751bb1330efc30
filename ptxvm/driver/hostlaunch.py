"""What the executors that run in this process share: the driver's device memory and module
image, the program cache, the CTA memory check, argument binding, the `.param` block and
copying results back. An executor here supplies only how to prepare a program and run it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from .. import limits
from ..errors import LaunchError
from ..machine import cdp, cooperative, hostheap
from ..machine.launch import Environment, Geometry, LaunchStats
from ..machine.symbols import param_block
from .args import bind
from .arrays import default_device
from .executors import LaunchRequest


@dataclass(frozen=True)
class HostBackend:
    key: str                       # the program cache key (the executor's name)
    # prepare(module IR, kernel IR, module image, dynamic shared bytes) -> program with .symbols
    prepare: Callable[..., Any]
    # run(program, geometry, memory, params, max_steps, stats, env): the launch, filling stats
    # (env: machine.launch.Environment, the %envreg values and device runtime of the launch)
    run: Callable[..., None]
    share_arrays: bool             # works on writable numpy arguments in place (else copies)
    share_align: int = 1           # ... whose host address is a multiple of this


def launch_on_host(request: LaunchRequest, backend: HostBackend) -> LaunchStats:
    """Prepare (cached per module), check one CTA's memory, bind the arguments, run, copy back.
    ``request.kernel.stats`` holds this launch's statistics, also after a fault."""
    kernel = request.kernel
    dev = default_device()
    hostheap.keep_heap_pages()          # numpy temporaries reuse mapped pages (machine.hostheap)
    program = _program(kernel, dev, request.shared_mem, backend)
    _check_cta(kernel.name, program, request.block, request.shared_mem)
    with dev.memory.holding():
        binding = bind(dev, kernel.params, request.args, share=backend.share_arrays,
                       share_align=backend.share_align)
        try:
            params = param_block(kernel.ir, program.symbols, binding.raw)
            stats = LaunchStats()
            ir_module = kernel.module.ir
            runtime = cdp.DeviceRuntime.for_module(dev.memory, ir_module, dev.image(kernel.module).functions) \
                if cdp.uses_device_runtime(ir_module) else None
            env, workspace = cooperative.environment(dev.memory, ir_module, request.cooperative, runtime,
                                                     _trap_hint(kernel.module, request.cooperative))
            if getattr(kernel.module, "textures", None):     # bound .texref/.surfref (bind_texture)
                env = replace(env, textures=tuple(kernel.module.textures.items()))
            max_steps = request.max_steps or limits.current().steps_per_thread
            try:
                backend.run(program, Geometry(request.grid, request.block), dev.memory, params,
                            max_steps, stats, env)
                if runtime is not None:
                    _run_children(kernel, dev, backend, runtime, max_steps, stats)
            finally:
                if runtime is not None:
                    runtime.release()
                kernel.stats = stats
                if workspace is not None:
                    dev.memory.free(workspace)
        finally:
            wrote_readonly = binding.finish(dev)
    if wrote_readonly:
        raise LaunchError(f"the kernel wrote to read-only numpy argument(s) "
                          f"{', '.join(f'`{n}`' for n in wrote_readonly)}; pass writable arrays "
                          "to receive the writes")
    return stats


def _run_children(kernel, dev, backend: HostBackend, runtime, max_steps: int, stats: LaunchStats) -> None:
    """The grids the launch's kernels launched from the device (``machine.cdp``), after it."""
    from .api import Kernel
    module = kernel.module
    hint = cooperative.trap_hint(module.ir, False)

    def run_grid(child: cdp.ChildGrid, sub: cdp.DeviceRuntime) -> None:
        k = Kernel(module, module.ir.kernels[child.kernel])
        program = _program(k, dev, child.shared, backend)
        _check_cta(k.name, program, child.block, child.shared)
        params = np.zeros(max((len(child.params) + 15) // 16 * 16, 16), dtype=np.uint8)
        params[:len(child.params)] = np.frombuffer(child.params, dtype=np.uint8)
        env = Environment(trap_hint=hint, runtime=sub)
        backend.run(program, Geometry(child.grid, child.block), dev.memory, params, max_steps, stats, env)

    cdp.complete(runtime, run_grid)


def _trap_hint(module, is_cooperative: bool) -> str:
    """``cooperative.trap_hint``, kept with the module (it scans every instruction: 0.4 ms a
    launch for a numba kernel with libdevice's functions)."""
    key = ("trap hint", bool(is_cooperative))
    hint = module._programs.get(key)
    if hint is None:
        hint = module._programs[key] = cooperative.trap_hint(module.ir, is_cooperative)
    return hint


def _program(kernel, dev, shared_mem: int, backend: HostBackend):
    image = dev.image(kernel.module)
    key = (kernel.name, shared_mem, backend.key)
    program = kernel.module._programs.get(key)
    if program is None:
        program = backend.prepare(kernel.module.ir, kernel.ir, image, shared_mem)
        kernel.module._programs[key] = program
    return program


def _check_cta(name: str, program, b: tuple[int, int, int], shared_mem: int) -> None:
    """Static + dynamic shared, and the memory one CTA needs, before a batch is made."""
    sym = program.symbols
    lim = limits.current()
    lim.check("shared_per_block", sym.shared_bytes,
              f"kernel `{name}`'s shared memory ({sym.shared_bytes - shared_mem:,} static + "
              f"{shared_mem:,} dynamic bytes)")
    tpb = b[0] * b[1] * b[2]
    lim.check("batch_memory", tpb * sym.local_bytes + sym.shared_bytes,
              f"one block of {tpb} threads of kernel `{name}` ({sym.local_bytes:,} bytes of "
              f".local per thread, {sym.shared_bytes:,} of .shared)")
