"""The device runtime's services on the host JIT, answered between rounds for the threads that
stopped for them: the device heap (malloc/free, ``machine.heap``) and dynamic parallelism's
entry points (``machine.cdp``: parameter buffers, device launches, device cudaMalloc/cudaFree,
streams, events and the per-thread last error).
Each takes the executor's batch (``executor._Batch``) and the stopped threads."""

from __future__ import annotations

import numpy as np

from ..errors import KernelFault, TrapError
from ..machine import cdp, heap
from ..machine.memory import MemoryFault
from . import layout as L


def heap_calls(batch, threads: np.ndarray, state: np.ndarray) -> None:
    """Device malloc/free of the stopped threads, in thread order (as the interpreter's lane
    order), then the page table remapped for the blocks that came or went."""
    launch, out = batch.launch, batch.view["out"]
    order = threads[np.argsort(batch.cta_slot[threads] * batch.tpc + batch.view["linear"][threads], kind="stable")]
    try:
        for t in order:
            operand = np.array([out[t, 0]], dtype=np.uint64)
            if state[t] == L.State.MALLOC:
                out[t, 0] = heap.malloc(launch.memory, operand)[0]
            else:
                try:
                    heap.free(launch.memory, operand, np.array([t]))
                except MemoryFault as e:
                    raise batch._error(KernelFault, int(t), e.message, address=e.address, space=e.space) from None
    finally:
        batch._remap()


def device_runtime_calls(batch, threads: np.ndarray) -> None:
    """The stopped threads' device-runtime calls (machine.cdp), in thread order; answers in T_OUT.
    A thread is the caller (linear CTA id in the grid, linear thread id) the runtime keeps
    streams, events and last errors for."""
    out, aux = batch.view["out"], batch.view["aux"]
    runtime = batch.launch.env.runtime
    order = threads[np.argsort(batch.cta_slot[threads] * batch.tpc + batch.view["linear"][threads], kind="stable")]
    api = list(cdp.ARG_BYTES)
    try:
        for t in order:
            op, o = int(aux[t]), [int(x) for x in out[t]]
            caller = (batch.first + int(batch.cta_slot[t]), int(batch.view["linear"][t]))
            try:
                if op >= L.DevRt.API:
                    what = api[op - L.DevRt.API]
                    code, handle = cdp.api_call(runtime, what, caller, o[:len(cdp.ARG_BYTES[what])])
                    out[t, 0], out[t, 1], out[t, 2] = code, handle, o[0]
                elif op == L.DevRt.PARAM_BUFFER:
                    out[t, 0] = runtime.parameter_buffer(o[0], tuple(o[1:4]), tuple(o[4:7]), o[7])
                elif op == L.DevRt.LAUNCH:
                    out[t, 0] = runtime.launch(o[0], o[1], caller)
                elif op == L.DevRt.MALLOC:
                    ptr = int(heap.malloc(batch.launch.memory, np.array([o[0]], dtype=np.uint64))[0])
                    out[t, 0], out[t, 1] = ptr, 0 if ptr else runtime.fail(caller, cdp.MEMORY_ALLOCATION)
                else:
                    heap.free(batch.launch.memory, np.array([o[0]], dtype=np.uint64), np.array([t]))
            except cdp.DeviceRuntimeError as e:
                raise batch._error(TrapError, int(t), str(e)) from None
            except MemoryFault as e:
                raise batch._error(KernelFault, int(t), e.message, address=e.address, space=e.space) from None
    finally:
        batch._remap()
