"""`interp`: the numpy SIMT interpreter, the reference semantics (and the default device)."""

from __future__ import annotations

from . import Capabilities, Executor, LaunchRequest, register


def _launch(request: LaunchRequest):
    from ...interp.executor import prepare, run_kernel
    from ..hostlaunch import HostBackend, launch_on_host

    def run(program, geometry, memory, params, max_steps, stats, env):
        # Traces and printf both go to trace_out (default: stdout).
        run_kernel(program, geometry, memory, params, request.shared_mem, max_steps, stats=stats,
                   trace=request.trace, out=request.trace_out, env=env)

    # share_arrays: the interpreter works on writable numpy arguments in place.
    return launch_on_host(request, HostBackend("interp", prepare, run, share_arrays=True))


EXECUTOR = register(Executor(
    "interp", "the numpy interpreter, the reference semantics",
    Capabilities(host_cpu=True, reference=True, deterministic=True, measures_steps=True, trace=True,
                 printf=True, heap=True, warp=True, cooperative=True),
    _launch))
