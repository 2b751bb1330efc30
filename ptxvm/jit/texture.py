"""Texture and surface instructions on the host JIT, through the shared model of
machine.texops / machine.surfops: the same functions the interpreter calls for its lanes, so
both executors agree bit for bit, faults included, by construction.

In a kernel (and the `.func`s inlined into it) the thread stops at the instruction
(``State.TEXTURE``) with its operands in T_OUT: ``handle, layer, x, y, z, value0..5`` (the
instruction's bits, zero-extended); between rounds the executor runs every thread stopped at
one site in one vectorized call (``settle``) and leaves the results in T_OUT[0..3]. A
refused fetch is the KernelFault of the thread the model names.

A `.func` cannot stop (its LLVM frame would be lost): there the code calls back into the
executor (``X_HOST_CALL``, ``HostCall.TEXTURE``) with a buffer ``site`` + the same operand
columns + four results, one thread at a time (about 0.6 ms a fetch, 300 times a stop's share).
"""

from __future__ import annotations

import ctypes

import numpy as np
from llvmlite import ir

from ..errors import KernelFault
from ..ir import nodes as ptx
from ..ir.texture import Plan
from ..lift.function import I8, I32, I64, FunctionLowering
from ..machine import surfops, texops
from . import layout as L

COLUMNS = 11                                 # handle, layer, 3 coordinates, 6 values
_HANDLE, _LAYER, _COORDS, _VALUES = 0, 1, 2, 5
_CALL_SLOTS = 1 + COLUMNS + 4                # the callback's buffer: site, columns, results


def _results(p: Plan) -> tuple[int, int]:
    """(how many results, their width in bits)."""
    if p.op in ("tex", "tld4"):
        return 4, 32
    if p.op in ("txq", "suq"):
        return 1, 32
    if p.op == "suld":
        return p.vec, p.dtype.bits
    return 0, 32


def lower(hooks, fl: FunctionLowering, ins: ptx.Instruction, p: Plan, handle, layer, coords, values):
    """The host target's ``texture`` hook (see lift.ops.texture)."""
    b = fl.b
    ops = [(_HANDLE, handle), (_LAYER, layer)] + [(_COORDS + i, c) for i, c in enumerate(coords)] + \
          [(_VALUES + i, v) for i, v in enumerate(values)]
    site = fl.ml.site(fl, ins)
    n, width = _results(p)
    if fl.is_kernel:
        for k, v in ops:
            if v is not None:
                b.store(v if v.type.width == 64 else b.zext(v, I64), hooks.thr(fl, L.T_OUT + 8 * k, I64))
        hooks.stop(fl, L.State.TEXTURE, site, ins)
        out = [b.load(hooks.thr(fl, L.T_OUT + 8 * i, I64)) for i in range(n)]
    else:
        buf = b.bitcast(fl.alloca_bytes(_CALL_SLOTS * 8, 8, "texcall"), ir.PointerType(I64))
        b.store(I64(site), buf)
        for k, v in ops:
            if v is not None:
                b.store(v if v.type.width == 64 else b.zext(v, I64), b.gep(buf, [I32(1 + k)]))
        fnty = ir.FunctionType(I64, [I64, I32, I64])
        callback = b.inttoptr(hooks.ctx(fl, L.X_HOST_CALL), fnty.as_pointer())
        status = b.call(callback, [b.ptrtoint(hooks.thr(fl, 0, I8), I64), I32(L.HostCall.TEXTURE),
                                   b.ptrtoint(buf, I64)])
        bad, ok = fl.new_block("tex_fault"), fl.new_block("tex_ok")
        b.cbranch(b.icmp_unsigned("!=", status, I64(0)), bad, ok)
        hooks._fault(fl, bad, site, handle if handle is not None else I64(0), L.FaultKind.TEXTURE, 0)
        b.position_at_end(ok)
        out = [b.load(b.gep(buf, [I32(1 + COLUMNS + i)])) for i in range(n)]
    return [b.trunc(v, ir.IntType(width)) if width < 64 else v for v in out]


# ---------------------------------------------------------------------- the executor's side

def _plan(launch, site_id: int) -> Plan:
    plans = launch.__dict__.setdefault("texture_plans", {})
    p = plans.get(site_id)
    if p is None:
        p = plans[site_id] = texops.plan(launch.program.lifted.sites[site_id - 1].instruction)
    return p


def _run(launch, p: Plan, cols: np.ndarray) -> np.ndarray | None:
    """The instruction for the threads whose operand columns are ``cols`` (n, COLUMNS)."""
    handles = np.ascontiguousarray(cols[:, _HANDLE])
    if p.reference is not None:
        handles[:] = texops.reference_handle(launch.env.textures, p.reference)
    layer = cols[:, _LAYER].astype(np.uint32) if p.layer is not None else None
    coords = [cols[:, _COORDS + i].astype(np.uint32) for i in range(len(p.coords))]

    def where(h: int) -> str:
        return texops.argument_of(launch.params, launch.program.symbols.params, h)

    if p.op == "tex":
        lod = [cols[:, _VALUES + i].astype(np.uint32) for i in range(len(p.lod_operands))]
        return texops.tex(p, handles, layer, coords, where, lod=lod)
    if p.op == "tld4":
        return texops.tld4(p, handles, layer, coords, where)
    if p.op in ("txq", "suq"):
        level = cols[:, _VALUES].astype(np.uint32) if p.level is not None else None
        return texops.query(p, handles, where, level=level)[:, None]
    if p.op == "suld":
        return surfops.suld(p, handles, layer, coords, where)
    ut = texops.UINT[p.dtype.bits]
    values = [cols[:, _VALUES + i].astype(ut) for i in range(len(p.values))]
    if p.op == "sust":
        surfops.sust(p, handles, layer, coords, values, where)
    else:
        surfops.sured(p, handles, layer, coords, values[0], where)
    return None


def settle(batch, threads: np.ndarray) -> None:
    """Every thread stopped at a texture instruction, one vectorized call per site (threads in
    order, as the interpreter's lanes); the results go to T_OUT, a refusal is the thread's fault."""
    v = batch.view
    sites = v["site"][threads]
    for s in np.unique(sites):
        ts = threads[sites == s]
        p = _plan(batch.launch, int(s))
        try:
            res = _run(batch.launch, p, v["out"][ts, :COLUMNS])
        except texops.TextureError as e:
            raise batch._error(KernelFault, int(ts[e.index]), e.message) from None
        if res is not None:
            v["out"][ts, :res.shape[1]] = res.astype(np.uint64)


def host_call(batch, t: int, address: int) -> int:
    """One thread's instruction from inside a `.func`; 0, or 1 with the fault's message in
    ``batch.heap_faults[t]`` (the executor's table of faults it holds the message of)."""
    slots = np.ctypeslib.as_array((ctypes.c_uint64 * _CALL_SLOTS).from_address(address))
    p = None
    try:
        p = _plan(batch.launch, int(slots[0]))
        res = _run(batch.launch, p, slots[None, 1:1 + COLUMNS])
        if res is not None:
            slots[1 + COLUMNS:1 + COLUMNS + res.shape[1]] = res[0].astype(np.uint64)
        return 0
    except texops.TextureError as e:
        batch.heap_faults[t] = (e.message, None, None)
    except Exception as e:  # noqa: BLE001 - an exception cannot cross the generated code
        what = p.full_opcode if p is not None else "a texture instruction"
        batch.heap_faults[t] = (f"internal error in `{what}`: {type(e).__name__}: {e}", None, None)
    return 1
