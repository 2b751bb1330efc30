"""The device runtime's entry points on the interpreter (dynamic parallelism, CDP2: see
``machine.cdp``): `call`s of these external functions run as builtins of the calling lanes, in
lane order, against the launch's device runtime (``Batch.env.runtime``); a lane is the caller
(linear CTA id, linear thread id) whose streams, events and last error the runtime keeps."""

from __future__ import annotations

import numpy as np

from ..ir import nodes as ir
from ..ir.types import ScalarType
from ..machine import heap
from ..machine.cdp import ARG_BYTES, CREATES, ENTRY_POINTS, MEMORY_ALLOCATION, DeviceRuntimeError, api_call
from .program import CompileContext, reader, writer


def _arg_reader(ctx: CompileContext, ins, args, i, t=ScalarType.U64):
    """Argument ``i`` of the call as ``t``'s bits: a `.param` variable's first bytes, or a register."""
    op = args.elements[i]
    pv = ctx.pvar(op.name) if isinstance(op, ir.Symbol) else None
    if pv is None:
        return reader(ctx, op, t, ins)
    key, size = pv
    n = t.bits // 8
    dt = np.uint64 if n == 8 else np.uint32
    return lambda b, lanes: np.ascontiguousarray(b.pbuf(key, size)[lanes, :n]).view(dt).reshape(-1)


def _ret_writer(ctx: CompileContext, ins, ret):
    """Write a builtin's 64-bit result (a pointer) to the call's result `.param` or register."""
    if ret is None or not ret.elements:
        return None
    op = ret.elements[0]
    pv = ctx.pvar(op.name) if isinstance(op, ir.Symbol) else None
    if pv is not None:
        key, size = pv
        return lambda b, lanes, value: b.pbuf(key, size).__setitem__(
            (lanes, slice(0, 8)), value.astype(np.uint64).reshape(-1, 1).view(np.uint8))
    w = writer(ctx, op, ScalarType.U64, ins)
    return lambda b, lanes, value: w(b, lanes, value.astype(np.uint64))


def _dim3_arg(ctx, ins, args, i):
    """A by-value dim3 argument (`.param .align 4 .b8 p[12]`): (lanes, 3) uint32."""
    op = args.elements[i]
    pv = ctx.pvar(op.name) if isinstance(op, ir.Symbol) else None
    if pv is None or pv[1] < 12:
        raise ctx.unsupported(ins, f"passes `{op}` as a dim3, which is not a 12-byte `.param` variable")
    key, size = pv
    return lambda b, lanes: np.ascontiguousarray(b.pbuf(key, size)[lanes, :12]).view(np.uint32).reshape(-1, 3)


def _ret32_writer(ctx, ins, ret):
    """Write a builtin's 32-bit result (a cudaError_t) to the call's result `.param` or register."""
    if ret is None or not ret.elements:
        return lambda b, lanes, value: None
    op = ret.elements[0]
    pv = ctx.pvar(op.name) if isinstance(op, ir.Symbol) else None
    if pv is not None:
        key, size = pv
        return lambda b, lanes, value: b.pbuf(key, size).__setitem__(
            (lanes, slice(0, 4)), value.astype(np.uint32).reshape(-1, 1).view(np.uint8))
    w = writer(ctx, op, ScalarType.U32, ins)
    return lambda b, lanes, value: w(b, lanes, value.astype(np.uint32))


def _callers(b, lanes) -> list[tuple[int, int]]:
    """(linear CTA id in the grid, linear thread id in the CTA) of each lane."""
    return list(zip((b.first_cta + b.cta_slot[lanes]).tolist(), b.tid_linear[lanes].tolist()))


def _per_lane(rt_call):
    """Run ``rt_call(runtime, k)`` for each lane in order (the device runtime's calls are per
    thread); a refusal of the runtime stops that lane with its message."""
    def run(b, lanes):
        out = np.zeros(lanes.shape, dtype=np.uint64)
        runtime = b.env.runtime
        for k, lane in enumerate(lanes):
            try:
                out[k] = rt_call(runtime, b, lanes, k)
            except DeviceRuntimeError as e:
                from .ops.control import _Trap      # (control imports this module's table)
                raise _Trap(int(lane), str(e)) from None
        return out
    return run


def _cdp_param_buffer(ctx: CompileContext, ins, ret, args):
    """`cudaGetParameterBufferV2(func, dim3 grid, dim3 block, unsigned shared)` (machine.cdp)."""
    func, grid, block = _arg_reader(ctx, ins, args, 0), _dim3_arg(ctx, ins, args, 1), _dim3_arg(ctx, ins, args, 2)
    shared = _arg_reader(ctx, ins, args, 3, ScalarType.U32)
    out = _ret_writer(ctx, ins, ret)

    def call(rt, b, lanes, k):
        if k == 0:
            call.vals = (func(b, lanes), grid(b, lanes), block(b, lanes), shared(b, lanes))
        f, g, bl, sh = call.vals
        return rt.parameter_buffer(int(f[k]), tuple(int(x) for x in g[k]), tuple(int(x) for x in bl[k]), int(sh[k]))
    each = _per_lane(call)

    def run(b, lanes):
        ptrs = each(b, lanes)
        if out is not None:
            out(b, lanes, ptrs)
    return run


def _cdp_launch(ctx: CompileContext, ins, ret, args):
    """`cudaLaunchDeviceV2(buffer, stream)`: the child grid runs after this grid (machine.cdp)."""
    buf, stream = _arg_reader(ctx, ins, args, 0), _arg_reader(ctx, ins, args, 1)
    out = _ret32_writer(ctx, ins, ret)

    def call(rt, b, lanes, k):
        if k == 0:
            call.vals = (buf(b, lanes), stream(b, lanes), _callers(b, lanes))
        return rt.launch(int(call.vals[0][k]), int(call.vals[1][k]), call.vals[2][k])
    each = _per_lane(call)
    return lambda b, lanes: out(b, lanes, each(b, lanes))


def _cdp_malloc(ctx: CompileContext, ins, ret, args):
    """Device-side `cudaMalloc(void **p, size_t size)`: a device-heap block stored at ``*p``;
    cudaErrorMemoryAllocation (2, also the thread's last error) and NULL when the heap is exhausted."""
    where, size = _arg_reader(ctx, ins, args, 0), _arg_reader(ctx, ins, args, 1)
    out = _ret32_writer(ctx, ins, ret)

    def run(b, lanes):
        ptrs = heap.malloc(b.memory, size(b, lanes))
        b.store("generic", where(b, lanes), ptrs.astype(np.uint64), lanes)
        for caller in (_callers(b, lanes[ptrs == 0]) if b.env.runtime is not None else ()):
            b.env.runtime.fail(caller, MEMORY_ALLOCATION)
        out(b, lanes, np.where(ptrs == 0, MEMORY_ALLOCATION, 0))
    return run


def _cdp_free(ctx: CompileContext, ins, ret, args):
    """Device-side `cudaFree(p)`: as `free`; cudaSuccess."""
    ptr = _arg_reader(ctx, ins, args, 0)
    out = _ret32_writer(ctx, ins, ret)

    def run(b, lanes):
        heap.free(b.memory, ptr(b, lanes), lanes)
        out(b, lanes, np.zeros(lanes.shape, dtype=np.uint32))
    return run


def _cdp_api(what: str):
    """The stream, event and last-error calls (``machine.cdp.api_call``): their cudaError_t to
    the result; a created stream's or event's handle to ``*arg0``, only on success."""
    def build(ctx: CompileContext, ins, ret, args):
        sizes = ARG_BYTES[what]
        given = len(args.elements) if args is not None else 0
        if given != len(sizes):
            raise ctx.unsupported(ins, f"passes {given} arguments; the device runtime's call takes {len(sizes)}")
        readers = [_arg_reader(ctx, ins, args, i, ScalarType.U64 if n == 8 else ScalarType.U32)
                   for i, n in enumerate(sizes)]
        out = _ret32_writer(ctx, ins, ret)

        def run(b, lanes):
            vals, callers = [r(b, lanes) for r in readers], _callers(b, lanes)
            codes, handles = np.zeros(lanes.shape, np.uint32), np.zeros(lanes.shape, np.uint64)
            for k, lane in enumerate(lanes):
                try:
                    codes[k], handles[k] = api_call(b.env.runtime, what, callers[k], [int(v[k]) for v in vals])
                except DeviceRuntimeError as e:
                    from .ops.control import _Trap      # (control imports this module's table)
                    raise _Trap(int(lane), str(e)) from None
            ok = codes == 0
            if what in CREATES and ok.any():
                b.store("generic", vals[0][ok], handles[ok], lanes[ok])
            out(b, lanes, codes)
        return run
    return build


_IMPLS = {"param_buffer": _cdp_param_buffer, "launch": _cdp_launch, "malloc": _cdp_malloc,
          "free": _cdp_free, **{what: _cdp_api(what) for what in ARG_BYTES}}
BUILTINS = {name: _IMPLS[what] for name, what in ENTRY_POINTS.items()}


