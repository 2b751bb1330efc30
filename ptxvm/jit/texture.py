"""Texture and surface instructions on the host JIT: the generated code calls back into the
executor (``X_HOST_CALL``, op ``HostCall.TEXTURE``), which runs the shared model of
machine.texops / machine.surfops for the one thread, the same functions the interpreter calls
for its lanes: both executors agree bit for bit, faults included, by construction.

A call's operand is the address of a buffer of i64 slots in the thread's frame:
``site, handle, layer, x, y, z, value0..3, result0..3`` (layer, coordinates and values are
the instruction's bits, zero-extended). A refused fetch answers 1 and leaves its message with
the batch; the generated code then faults at the instruction (FaultKind.TEXTURE).

The callback costs a few tens of microseconds a fetch (numpy on one lane): right for tests
and the imaging samples; descriptors read by generated code would be the fast path.
"""

from __future__ import annotations

import ctypes

import numpy as np
from llvmlite import ir

from ..ir import nodes as ptx
from ..ir.texture import Plan
from ..lift.function import I8, I32, I64, FunctionLowering
from ..machine import surfops, texops
from . import layout as L

SLOTS = 14
_SITE, _HANDLE, _LAYER, _COORDS, _VALUES, _RESULTS = 0, 1, 2, 3, 6, 10


def lower(hooks, fl: FunctionLowering, ins: ptx.Instruction, p: Plan, handle, layer, coords, values):
    """The host target's ``texture`` hook (see lift.ops.texture)."""
    b = fl.b
    buf = b.bitcast(fl.alloca_bytes(SLOTS * 8, 8, "texcall"), ir.PointerType(I64))
    site = fl.ml.site(fl, ins)

    def put(slot: int, v: ir.Value) -> None:
        if v.type.width < 64:
            v = b.zext(v, I64)
        b.store(v, b.gep(buf, [I32(slot)]))

    put(_SITE, I64(site))
    put(_HANDLE, handle if handle is not None else I64(0))
    if layer is not None:
        put(_LAYER, layer)
    for i, c in enumerate(coords):
        put(_COORDS + i, c)
    for i, v in enumerate(values):
        put(_VALUES + i, v)
    fnty = ir.FunctionType(I64, [I64, I32, I64])
    callback = b.inttoptr(hooks.ctx(fl, L.X_HOST_CALL), fnty.as_pointer())
    status = b.call(callback, [b.ptrtoint(hooks.thr(fl, 0, I8), I64), I32(L.HostCall.TEXTURE),
                               b.ptrtoint(buf, I64)])
    bad, ok = fl.new_block("tex_fault"), fl.new_block("tex_ok")
    b.cbranch(b.icmp_unsigned("!=", status, I64(0)), bad, ok)
    hooks._fault(fl, bad, site, handle if handle is not None else I64(0), L.FaultKind.TEXTURE, 0)
    b.position_at_end(ok)
    n = {"tex": 4, "tld4": 4, "txq": 1, "suq": 1, "suld": p.vec}.get(p.op, 0)
    out = [b.load(b.gep(buf, [I32(_RESULTS + i)])) for i in range(n)]
    width = 32 if p.op in ("tex", "tld4", "txq", "suq") else p.dtype.bits
    return [b.trunc(v, ir.IntType(width)) if width < 64 else v for v in out]


# ---------------------------------------------------------------------- the executor's side

def host_call(batch, t: int, address: int) -> int:
    """Run one thread's texture instruction; 0, or 1 with the fault's message in
    ``batch.heap_faults[t]`` (the executor's table of faults it holds the message of)."""
    slots = np.ctypeslib.as_array((ctypes.c_uint64 * SLOTS).from_address(address))
    launch = batch.launch
    program = launch.program
    site = program.lifted.sites[int(slots[_SITE]) - 1]
    plans = launch.__dict__.setdefault("texture_plans", {})
    p = plans.get(site.index)
    if p is None:
        p = plans[site.index] = texops.plan(site.instruction)
    try:
        handle = int(slots[_HANDLE])
        if p.reference is not None:
            handle = texops.reference_handle(launch.env.textures, p.reference)
        handles = np.array([handle], dtype=np.uint64)
        layer = slots[_LAYER:_LAYER + 1].astype(np.uint32) if p.layer is not None else None
        coords = [slots[_COORDS + i:_COORDS + i + 1].astype(np.uint32) for i in range(len(p.coords))]

        def where(h: int) -> str:
            return texops.argument_of(launch.params, program.symbols.params, h)

        out = _run(p, handles, layer, coords, slots, where)
        if out is not None:
            out = np.asarray(out).reshape(-1)
            slots[_RESULTS:_RESULTS + out.size] = out.astype(np.uint64)
        return 0
    except texops.TextureError as e:
        batch.heap_faults[t] = (e.message, None, None)
    except Exception as e:  # noqa: BLE001 - an exception cannot cross the generated code
        batch.heap_faults[t] = (f"internal error in `{p.full_opcode}`: {type(e).__name__}: {e}", None, None)
    return 1


def _run(p: Plan, handles, layer, coords, slots, where):
    if p.op == "tex":
        return texops.tex(p, handles, layer, coords, where)
    if p.op == "tld4":
        return texops.tld4(p, handles, layer, coords, where)
    if p.op in ("txq", "suq"):
        return texops.query(p, handles, where)
    if p.op == "suld":
        return surfops.suld(p, handles, layer, coords, where)
    ut = texops.UINT[p.dtype.bits]
    values = [slots[_VALUES + i:_VALUES + i + 1].astype(ut) for i in range(len(p.values))]
    if p.op == "sust":
        surfops.sust(p, handles, layer, coords, values, where)
    else:
        surfops.sured(p, handles, layer, coords, values[0], where)
    return None
