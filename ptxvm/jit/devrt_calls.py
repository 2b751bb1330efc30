"""The host JIT's lowering of the device runtime's entry points (``machine.cdp``: dynamic
parallelism's parameter buffers and launches, device cudaMalloc/cudaFree, streams, events and the
per-thread last error): the calling thread stops with the call's operands in T_OUT and the DevRt
op in T_AUX; the executor answers in T_OUT (``jit.devrt``: device memory and the runtime live in
Python). ``h`` is the ``HostHooks`` lowering the function."""

from __future__ import annotations

from llvmlite import ir

from ..ir import nodes as ptx
from ..lift.function import I32, I64, FunctionLowering
from ..machine import cdp
from . import layout as L

I32P, I64P = ir.PointerType(I32), ir.PointerType(I64)


def lower(h, fl: FunctionLowering, ins: ptx.Instruction, what: str, rets, args) -> None:
    """A CDP2 entry point (machine.cdp): the thread stops with its operands in T_OUT, the
    executor answers in T_OUT (device memory and the runtime live in Python)."""
    b = fl.b
    bufs = []
    for a in args:
        buf = fl.param_buffer(a.name) if isinstance(a, ptx.Symbol) else None
        if buf is None:
            raise fl.unsupported(ins, f"passes `{a}`, which is not a `.param` variable")
        bufs.append(buf)
    word = lambda buf, k, ty: b.load(b.bitcast(b.gep(buf, [I64(k * (ty.width // 8))]), ir.PointerType(ty)))
    if what in cdp.ARG_BYTES:
        _lower_api(h, fl, ins, what, rets, bufs, word)
        return
    if what == "param_buffer":
        ops = [word(bufs[0], 0, I64), *(b.zext(word(bufs[i], k, I32), I64) for i in (1, 2) for k in range(3)),
               b.zext(word(bufs[3], 0, I32), I64)]
    elif what in ("launch", "free"):
        ops = [word(buf, 0, I64) for buf in bufs]
    elif what == "malloc":
        ops = [word(bufs[1], 0, I64), I64(0), word(bufs[0], 0, I64)]    # size, -, where (read back)
    for i, v in enumerate(ops):
        b.store(v, h.thr(fl, L.T_OUT + 8 * i, I64))
    code = {"param_buffer": L.DevRt.PARAM_BUFFER, "launch": L.DevRt.LAUNCH, "malloc": L.DevRt.MALLOC,
            "free": L.DevRt.FREE}[what]
    b.store(I32(code), h.thr(fl, L.T_AUX, I32))
    h.stop(fl, L.State.DEVRT, fl.ml.site(fl, ins), ins)
    result = b.load(h.thr(fl, L.T_OUT, I64)) if what == "param_buffer" else I64(0)
    if what == "launch":
        result = b.load(h.thr(fl, L.T_OUT, I64))
    if what == "malloc":
        where = b.load(h.thr(fl, L.T_OUT + 16, I64))      # `.param`s do not survive the stop
        ptr = h.access(fl, "generic", where, 8, ins, write=True)
        b.store(b.load(h.thr(fl, L.T_OUT, I64)), b.bitcast(ptr, I64P))
        result = b.load(h.thr(fl, L.T_OUT + 8, I64))
    if rets:
        ret = fl.param_buffer(rets[0].name)
        if what == "param_buffer":
            b.store(result, b.bitcast(ret, I64P))
        else:
            b.store(b.trunc(result, I32), b.bitcast(ret, I32P))


def _lower_api(h, fl: FunctionLowering, ins: ptx.Instruction, what: str, rets, bufs, word) -> None:
    """A stream, event or last-error call (machine.cdp.api_call): its arguments to T_OUT, the
    executor answers the cudaError_t (T_OUT[0]), a created handle (T_OUT[1]) and the first
    argument back (T_OUT[2]: `.param`s do not survive the stop); the handle is stored at that
    address only on success."""
    b, sizes = fl.b, cdp.ARG_BYTES[what]
    if len(bufs) != len(sizes):
        raise fl.unsupported(ins, f"passes {len(bufs)} arguments; the device runtime's call takes {len(sizes)}")
    for i, (buf, n) in enumerate(zip(bufs, sizes)):
        v = word(buf, 0, I64) if n == 8 else b.zext(word(buf, 0, I32), I64)
        b.store(v, h.thr(fl, L.T_OUT + 8 * i, I64))
    b.store(I32(L.DevRt.API + list(cdp.ARG_BYTES).index(what)), h.thr(fl, L.T_AUX, I32))
    h.stop(fl, L.State.DEVRT, fl.ml.site(fl, ins), ins)
    error = b.load(h.thr(fl, L.T_OUT, I64))
    if what in cdp.CREATES:
        store, done = fl.new_block("devrt_store_handle"), fl.new_block("devrt_stored")
        b.cbranch(b.icmp_unsigned("==", error, I64(0)), store, done)
        b.position_at_end(store)
        where = b.load(h.thr(fl, L.T_OUT + 16, I64))
        ptr = h.access(fl, "generic", where, 8, ins, write=True)
        b.store(b.load(h.thr(fl, L.T_OUT + 8, I64)), b.bitcast(ptr, I64P))
        b.branch(done)
        b.position_at_end(done)
    if rets:
        b.store(b.trunc(error, I32), b.bitcast(fl.param_buffer(rets[0].name), I32P))
