"""`cpu`: the LLVM host JIT (the lifted kernel compiled for this CPU, run by host threads)."""

from __future__ import annotations

from . import Capabilities, Executor, LaunchRequest, register


def _launch(request: LaunchRequest):
    from ...jit.executor import compile_kernel, run_kernel
    from ..hostlaunch import HostBackend, launch_on_host

    def run(program, geometry, memory, params, max_steps, stats, env):
        run_kernel(program, geometry, memory, params, request.shared_mem, max_steps, stats=stats, env=env)

    # The JIT works on writable numpy arguments in place (no copy in, no copy back, no fresh pages
    # to fault in) when their host address keeps the device address's alignment: generated
    # atomics (and 16-byte mbarrier copies) assume the natural alignment PTX checked on the
    # device address, which starts on a 256-byte boundary. Other arrays get aligned copies.
    return launch_on_host(request, HostBackend("cpu", compile_kernel, run, share_arrays=True, share_align=16))


EXECUTOR = register(Executor(
    "cpu", "the LLVM host JIT, compiled for this CPU",
    # Not deterministic: CTAs run on several host threads, so atomics of different CTAs land in
    # a varying order. No steps: it runs threads one by one, there are no group steps to count.
    Capabilities(host_cpu=True, packages=("llvmlite",), needs_why="compiles the kernel with LLVM",
                 deterministic=False, measures_steps=False, trace=False, printf=True, heap=True, warp=True,
                 cooperative=True),
    _launch))
