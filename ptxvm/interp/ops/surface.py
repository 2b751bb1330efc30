"""Surface instructions (PTX ISA 9.0 §9.7.11): suld.b, sust.b, sured.b and suq over a CudaArray.

The x coordinate is a byte offset in the row, y/z/layer are element indices. Out of range
(any byte of the access outside the row, a row, slice or layer beyond the array):
``.trap`` faults for the thread, ``.clamp`` moves the access to the nearest position inside,
``.zero`` reads zeros and drops the store (§9.7.11.1).
"""

from __future__ import annotations

import numpy as np

from ...ir import nodes as ir
from ...ir.types import ScalarType
from ...machine.texfetch import texels_view
from ...machine.textures import CudaArray, SurfaceObject
from ..program import CompileContext, reader, writer
from ..state import UINT
from . import impl
from .texture import TextureFault, _geom, _handle_source, _unsup, array_query, objects

# geometry -> (leading layer index, spatial axes)
_SURF = {"1d": (False, 1), "2d": (False, 2), "3d": (False, 3), "a1d": (True, 1), "a2d": (True, 2)}


def _mode(ins: ir.Instruction) -> str:
    for m in ("trap", "clamp", "zero"):
        if ins.has(m):
            return m
    return "trap"          # §9.7.11: .trap is the default out-of-range mode


def _coord_readers(ctx, ins, a: ir.Address, geom: str):
    layered, n = _SURF[geom]
    if len(a.extra) != 1:
        raise _unsup(ins, "has a coordinate operand the interpreter does not read")
    e = a.extra[0]
    elems = e.elements if isinstance(e, ir.Vector) else (e,)
    if len(elems) < n + layered:
        raise _unsup(ins, f"needs {n + layered} coordinates, has {len(elems)}")
    rs = [reader(ctx, x, ScalarType.S32, ins) for x in elems[:n + layered]]
    return (rs[0] if layered else None), rs[layered:]


def _rows(arr: CudaArray) -> np.ndarray:
    v = texels_view(arr)
    return v.reshape(v.shape[0], v.shape[1], v.shape[2], -1).view(np.uint8) if v.dtype != np.uint8 else \
        v.reshape(v.shape[0], v.shape[1], v.shape[2], -1)


def _place(b, lanes, sel, arr: CudaArray, layer_r, coord_rs, nbytes: int, mode: str, ins):
    """(layer, z, y, x) per selected lane and the mask of accesses that stay inside the array."""
    rows = _rows(arr)
    L, D, H, R = rows.shape
    x = coord_rs[0](b, lanes)[sel].view(np.int32).astype(np.int64)
    y = coord_rs[1](b, lanes)[sel].view(np.int32).astype(np.int64) if len(coord_rs) > 1 else np.zeros_like(x)
    z = coord_rs[2](b, lanes)[sel].view(np.int32).astype(np.int64) if len(coord_rs) > 2 else np.zeros_like(x)
    lay = layer_r(b, lanes)[sel].view(np.uint32).astype(np.int64) if layer_r is not None else np.zeros_like(x)
    inside = (x >= 0) & (x + nbytes <= R) & (y >= 0) & (y < H) & (z >= 0) & (z < D) & (lay >= 0) & (lay < L)
    if mode == "trap" and not inside.all():
        k = int(np.nonzero(~inside)[0][0])
        raise TextureFault(int(lanes[sel][k]), f"`{ins.full_opcode}` accesses bytes {int(x[k])}..{int(x[k]) + nbytes - 1}"
                                               f" of row {int(y[k])}, slice {int(z[k])}, layer {int(lay[k])} of "
                                               f"{arr!r} ({R} bytes a row): out of range (.trap)")
    x, y = np.clip(x, 0, R - nbytes), np.clip(y, 0, H - 1)
    z, lay = np.clip(z, 0, D - 1), np.clip(lay, 0, L - 1)
    return rows, (lay, z, y, x), (inside if mode == "zero" else np.ones_like(inside))


def _shape(ctx, ins):
    t = ins.types[0]
    if not ins.has("b") or t.bits not in (8, 16, 32, 64):
        raise _unsup(ins, "is a formatted (.p) or unsized access the interpreter does not execute yet")
    vec = 4 if ins.has("v4") else 2 if ins.has("v2") else 1
    return t, vec, vec * t.bits // 8


@impl("suld")
def _suld(ctx: CompileContext, ins: ir.Instruction):
    geom = _geom(ins, _SURF)
    t, vec, nbytes = _shape(ctx, ins)
    a = ins.operands[1]
    handle_r = _handle_source(ctx, ins, a)
    layer_r, coord_rs = _coord_readers(ctx, ins, a, geom)
    d = ins.operands[0]
    elems = d.elements if isinstance(d, ir.Vector) else (d,)
    ws = [writer(ctx, e, t, ins) for e in elems]
    mode, ut = _mode(ins), UINT[t.bits]

    def run(b, lanes):
        out = np.zeros((lanes.size, nbytes), dtype=np.uint8)
        for surf, sel in objects(b, ctx, ins, handle_r(b, lanes), lanes, SurfaceObject):
            rows, (lay, z, y, x), ok = _place(b, lanes, sel, surf.array, layer_r, coord_rs, nbytes, mode, ins)
            got = rows[lay[:, None], z[:, None], y[:, None], x[:, None] + np.arange(nbytes)[None, :]]
            out[sel] = np.where(ok[:, None], got, 0)
        vals = out.view(ut).reshape(lanes.size, vec)
        for i, w in enumerate(ws):
            w(b, lanes, np.ascontiguousarray(vals[:, i]))
    return run, 0, -1


@impl("sust")
def _sust(ctx: CompileContext, ins: ir.Instruction):
    geom = _geom(ins, _SURF)
    t, vec, nbytes = _shape(ctx, ins)
    a = ins.operands[0]
    handle_r = _handle_source(ctx, ins, a)
    layer_r, coord_rs = _coord_readers(ctx, ins, a, geom)
    s = ins.operands[1]
    elems = s.elements if isinstance(s, ir.Vector) else (s,)
    rs = [reader(ctx, e, t, ins) for e in elems]
    mode, ut = _mode(ins), UINT[t.bits]

    def run(b, lanes):
        vals = np.stack([r(b, lanes).astype(ut) for r in rs], axis=1)
        data = np.ascontiguousarray(vals).view(np.uint8).reshape(lanes.size, nbytes)
        # Every thread's place is checked before any thread writes (a .trap store writes nothing).
        plans = [(surf, sel) + _place(b, lanes, sel, surf.array, layer_r, coord_rs, nbytes, mode, ins)
                 for surf, sel in objects(b, ctx, ins, handle_r(b, lanes), lanes, SurfaceObject)]
        for _surf, sel, rows, (lay, z, y, x), ok in plans:
            src = data[sel][ok]
            lay, z, y, x = lay[ok], z[ok], y[ok], x[ok]
            rows[lay[:, None], z[:, None], y[:, None], x[:, None] + np.arange(nbytes)[None, :]] = src
    return run, 0, -1


_SUQ = {"width": 0, "height": 1, "depth": 2}


@impl("suq")
def _suq(ctx: CompileContext, ins: ir.Instruction):
    q = next((m for m in ins.modifiers if m in _SUQ or m in ("array_size", "memory_layout",
                                                            "channel_order", "channel_data_type")), None)
    if q not in _SUQ and q != "array_size":
        raise _unsup(ins, "queries an attribute the interpreter does not report yet")
    d = writer(ctx, ins.operands[0], ScalarType.B32, ins)
    handle_r = _handle_source(ctx, ins, ins.operands[1])

    def run(b, lanes):
        out = np.zeros(lanes.size, dtype=np.uint32)
        for surf, sel in objects(b, ctx, ins, handle_r(b, lanes), lanes, SurfaceObject):
            out[sel] = array_query(surf.array, q)
        d(b, lanes, out)
    return run, 0, -1


_RED = {"add": np.add, "min": np.minimum, "max": np.maximum, "and": np.bitwise_and, "or": np.bitwise_or}
_RED_TYPES = {"u32": np.uint32, "s32": np.int32, "b32": np.uint32, "u64": np.uint64, "s64": np.int64,
              "b64": np.uint64}


@impl("sured")
def _sured(ctx: CompileContext, ins: ir.Instruction):
    """sured.b.op.geom.ctype.mode [a, b], c: an atomic read-modify-write of one element per thread
    (threads on the same element all apply, in any order: the operations commute)."""
    geom = _geom(ins, _SURF)
    op = next((m for m in ins.modifiers if m in _RED), None)
    t = ins.types[0]
    if not ins.has("b") or op is None or t.value not in _RED_TYPES:
        raise _unsup(ins, "is a form the interpreter does not execute (it runs sured.b with "
                          ".add/.min/.max/.and/.or on 32/64-bit integers)")
    a = ins.operands[0]
    handle_r = _handle_source(ctx, ins, a)
    layer_r, coord_rs = _coord_readers(ctx, ins, a, geom)
    src = reader(ctx, ins.operands[1], t, ins)
    mode, nt, nbytes, fn = _mode(ins), _RED_TYPES[t.value], t.bits // 8, _RED[op]

    def run(b, lanes):
        vals = src(b, lanes).view(nt) if src(b, lanes).dtype.itemsize == nbytes else src(b, lanes).astype(nt)
        plans = [(sel,) + _place(b, lanes, sel, surf.array, layer_r, coord_rs, nbytes, mode, ins)
                 for surf, sel in objects(b, ctx, ins, handle_r(b, lanes), lanes, SurfaceObject)]
        for sel, rows, (lay, z, y, x), ok in plans:
            for v, l_, z_, y_, x_, k in zip(vals[sel], lay, z, y, x, ok):
                if k:
                    cell = rows[l_, z_, y_, x_:x_ + nbytes].view(nt)
                    cell[0] = fn(cell[0], v)
    return run, 0, -1
