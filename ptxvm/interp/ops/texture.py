"""Texture and surface instructions (PTX ISA 9.0 §9.7.10 tex, tld4, txq; §9.7.11 suld, sust,
sured, suq) over the shared model in machine.textures / machine.texfetch.

A texture or surface operand is a 64-bit object handle (a register or a kernel parameter) or a
module `.texref`/`.surfref` bound through ``Module.bind_texture``. A value that is no live
object's handle is a KernelFault naming the kernel argument that carried it, when one did.
"""

from __future__ import annotations

import numpy as np

from ...ir import nodes as ir
from ...ir.types import ScalarType
from ...machine import texfetch
from ...machine.textures import CudaArray, SurfaceObject, TextureObject, lookup
from ..program import CompileContext, reader, writer
from ..state import StackFault
from . import impl

F32 = np.float32

# Coordinate vector layout per geometry: (has a leading layer index, spatial axes, vector size).
_GEOMS = {"1d": (False, 1), "2d": (False, 2), "3d": (False, 3), "a1d": (True, 1), "a2d": (True, 2),
          "cube": (False, 3), "acube": (True, 3)}


class TextureFault(StackFault):
    """A fetch the model refuses for one thread (a KernelFault naming thread and instruction)."""


def _geom(ins: ir.Instruction, table) -> str:
    for m in ins.modifiers:
        if m in table:
            return m
    raise _unsup(ins, "has a geometry the interpreter does not execute "
                      f"(supported: {', '.join(table)})")


def _unsup(ins, why):
    from ...errors import UnsupportedError
    span = ins.span
    return UnsupportedError(f"`{ins.full_opcode}` {why}", filename=span.filename, line=span.line or None,
                            column=span.column or None)


def _handle_source(ctx: CompileContext, ins: ir.Instruction, a: ir.Address):
    """A per-lane reader of the object handle: a register, a kernel parameter's value, or a
    bound texture/surface reference."""
    base = a.base
    if isinstance(base, ir.Register):
        return reader(ctx, base, ScalarType.U64, ins)
    if isinstance(base, ir.Symbol) and base.name in ctx.symbols.params:
        off = ctx.symbols.params[base.name]
        return lambda b, lanes: np.full(lanes.shape, b.params[off:off + 8].view(np.uint64)[0])
    if isinstance(base, ir.Symbol):
        name = base.name
        return lambda b, lanes: np.full(lanes.shape, _reference(b, name, lanes), dtype=np.uint64)
    raise _unsup(ins, "names its texture with an operand the interpreter does not read")


def _reference(b, name: str, lanes) -> int:
    obj = dict(b.env.textures).get(name)
    if obj is None:
        raise TextureFault(int(lanes[0]), f"texture/surface reference `{name}` is not bound "
                                          "(Module.bind_texture(name, ...) before the launch)")
    return obj.handle


def _argument_of(b, ctx: CompileContext, handle: int) -> str:
    for i, (name, off) in enumerate(ctx.symbols.params.items()):
        raw = b.params[off:off + 8]
        if raw.size == 8 and int(raw.view(np.uint64)[0]) == handle:
            return f" in argument {i} (`{name}`)"
    return ""


def objects(b, ctx, ins, handles: np.ndarray, lanes: np.ndarray, kind: type):
    """(object, lane mask) per distinct handle; a handle that is no live ``kind`` faults."""
    what = "texture" if kind is TextureObject else "surface"
    for h in np.unique(handles):
        sel = handles == h
        obj = lookup(int(h), kind)
        if obj is None:
            raise TextureFault(int(lanes[sel][0]), f"{what} handle 0x{int(h):x}{_argument_of(b, ctx, int(h))} "
                                                   f"is not a {what} object")
        yield obj, sel


def _coords(ctx, ins, a: ir.Address, n: int, layered: bool, ctype: ScalarType):
    if len(a.extra) == 2:
        raise _unsup(ins, "names an explicit sampler ([tex, sampler, coords], independent texture "
                          "mode), which the interpreter does not execute yet")
    if len(a.extra) != 1 or not isinstance(a.extra[0], ir.Vector) and n + layered > 1:
        raise _unsup(ins, "has a coordinate operand the interpreter does not read")
    elems = a.extra[0].elements if isinstance(a.extra[0], ir.Vector) else (a.extra[0],)
    if len(elems) < n + layered:
        raise _unsup(ins, f"needs {n + layered} coordinates, has {len(elems)}")
    layer = reader(ctx, elems[0], ScalarType.U32, ins) if layered else None
    spatial = [reader(ctx, e, ctype, ins) for e in elems[layered:layered + n]]
    return layer, spatial


def _layers(arr: CudaArray, layer_r, b, lanes, sel, cube: bool, ins) -> np.ndarray:
    count = arr.layers if (arr.layered or arr.cubemap) else 0
    if layer_r is None:
        return np.zeros(int(sel.sum()), dtype=np.int64)
    layer = layer_r(b, lanes)[sel].astype(np.int64)
    bad = layer >= max(count, 1) if (arr.layered or arr.cubemap) else layer != 0
    if bad.any():
        k = int(np.nonzero(bad)[0][0])
        raise TextureFault(int(lanes[sel][k]), f"`{ins.full_opcode}` reads layer {int(layer[k])} of {arr!r}, "
                                               f"which has {count} layer(s)")
    return layer


def _dest(ctx, ins, dtype: ScalarType):
    d = ins.operands[0]
    pred = None
    if isinstance(d, ir.Pair):
        d, pred = d.first, writer(ctx, d.second, ScalarType.PRED, ins)
    elems = d.elements if isinstance(d, ir.Vector) else (d,)
    return [writer(ctx, e, dtype, ins) for e in elems], pred


def _check_format(tex: TextureObject, dtype: ScalarType, ins, lane: int) -> None:
    returns_float = tex.array.dtype.kind == "f" or tex.read.name == "NORMALIZED_FLOAT"
    if returns_float != (dtype.kind == "f"):
        got = "float" if returns_float else "integer"
        raise TextureFault(lane, f"`{ins.full_opcode}` returns .{dtype.value} but {tex.array!r} read with "
                                 f"read_mode={tex.read.name.lower()} gives {got} texels")


def _store_result(ws, dtype: ScalarType, b, lanes, values: np.ndarray) -> None:
    if dtype.kind == "f":
        if dtype.bits != 32:
            raise ValueError
        raw = values.astype(F32).view(np.uint32)
    else:
        raw = (values.astype(np.int64) & 0xFFFFFFFF).astype(np.uint32)
    for i, w in enumerate(ws):
        w(b, lanes, raw[:, i])


def _fetch_lanes(tex: TextureObject, geom: str, spatial_vals, layer, integer: bool, lane0: int, ins):
    arr = tex.array
    if geom in ("cube", "acube"):
        if not arr.cubemap:
            raise TextureFault(lane0, f"`{ins.full_opcode}` samples {arr!r}, which is not a cubemap")
        face, s, t = texfetch.cube_face(*[v.view(F32) for v in spatial_vals])
        face_tex = _FaceView(tex)
        return texfetch.sample(face_tex, [s, t], layer * 6 + face, False)
    if arr.cubemap or len(arr.extent) != len(spatial_vals):
        raise TextureFault(lane0, f"`{ins.full_opcode}` ({geom}) reads {arr!r}, an array of another geometry")
    coords = [v.view(np.int32) if integer else v.view(F32) for v in spatial_vals]
    if arr.linear:
        return _linear_fetch(tex, coords[0], integer, lane0, ins)
    return texfetch.sample(tex, coords, layer, integer)


class _FaceView:
    """A cubemap's face sampled as a normalised 2D texture, clamped at the face edges."""

    def __init__(self, tex: TextureObject) -> None:
        from ...machine.textures import AddressMode
        self.array, self.filter, self.read, self.srgb = tex.array, tex.filter, tex.read, tex.srgb
        self.border, self.normalized_coords = tex.border, True
        self.address = (AddressMode.CLAMP,) * 3


def _linear_fetch(tex: TextureObject, idx: np.ndarray, integer: bool, lane0: int, ins) -> np.ndarray:
    if not integer:
        raise TextureFault(lane0, f"`{ins.full_opcode}` samples linear memory with float coordinates; "
                                  "linear memory is fetched by integer index (tex1Dfetch)")
    # Linear memory has no addressing: an index out of range returns zeros (programming guide).
    data = tex.array.data[:, 0] if tex.array.data.ndim == 2 else tex.array.data.reshape(-1)
    n = data.shape[0]
    i = idx.astype(np.int64)
    inside = (i >= 0) & (i < n)
    vals = texfetch.convert(data[np.clip(i, 0, n - 1)][:, None], tex.array.dtype, tex.read, tex.srgb)
    vals = np.where(inside[:, None], vals, np.zeros_like(vals))
    out = np.zeros((i.shape[0], 4), dtype=vals.dtype)
    out[:, :1] = vals
    return out


@impl("tex")
def _tex(ctx: CompileContext, ins: ir.Instruction):
    geom = _geom(ins, _GEOMS)
    layered, n = _GEOMS[geom]
    dtype, ctype = ins.types[0], ins.types[1]
    if dtype.value not in ("f32", "s32", "u32") or ctype.value not in ("f32", "s32"):
        raise _unsup(ins, f"returns .{dtype.value} from .{ctype.value} coordinates; the interpreter "
                          "executes .f32/.s32/.u32 results from .f32/.s32 coordinates")
    extra = len(ins.operands) - 2
    want = 2 if ins.has("grad") else 1 if ins.has("level") else 0
    if extra != want:
        raise _unsup(ins, "has offset or depth-compare operands, which the interpreter does not execute")
    addr = ins.operands[1]
    handle_r = _handle_source(ctx, ins, addr)
    layer_r, coord_rs = _coords(ctx, ins, addr, n, layered, ctype)
    ws, pred = _dest(ctx, ins, dtype)
    integer = ctype.kind != "f"

    def run(b, lanes):
        handles = handle_r(b, lanes)
        result = np.zeros((lanes.size, 4), dtype=np.int64 if dtype.kind != "f" else F32)
        spatial = [r(b, lanes) for r in coord_rs]
        for tex, sel in objects(b, ctx, ins, handles, lanes, TextureObject):
            lane0 = int(lanes[sel][0])
            _check_format(tex, dtype, ins, lane0)
            layer = _layers(tex.array, layer_r, b, lanes, sel, geom in ("cube", "acube"), ins)
            # .level / .grad: the arrays ptxvm builds have one mip level, which every LOD selects.
            result[sel] = _fetch_lanes(tex, geom, [s[sel] for s in spatial], layer, integer, lane0, ins)
        _store_result(ws, dtype, b, lanes, result)
        if pred is not None:
            pred(b, lanes, np.ones(lanes.shape, dtype=bool))
    return run, 0, -1


__all__ = ["TextureFault", "objects"]


_COMPONENTS = {"r": 0, "g": 1, "b": 2, "a": 3}


@impl("tld4")
def _tld4(ctx: CompileContext, ins: ir.Instruction):
    geom = _geom(ins, {"2d": 0, "a2d": 0})
    comp = next((_COMPONENTS[m] for m in ins.modifiers if m in _COMPONENTS), None)
    dtype = ins.types[0]
    if comp is None or len(ins.operands) != 2 or dtype.value not in ("f32", "s32", "u32"):
        raise _unsup(ins, "has a form the interpreter does not execute (offset/depth operands, no .comp)")
    addr = ins.operands[1]
    handle_r = _handle_source(ctx, ins, addr)
    layer_r, coord_rs = _coords(ctx, ins, addr, 2, geom == "a2d", ScalarType.F32)
    ws, pred = _dest(ctx, ins, dtype)

    def run(b, lanes):
        handles = handle_r(b, lanes)
        result = np.zeros((lanes.size, 4), dtype=np.int64 if dtype.kind != "f" else F32)
        spatial = [r(b, lanes) for r in coord_rs]
        for tex, sel in objects(b, ctx, ins, handles, lanes, TextureObject):
            lane0 = int(lanes[sel][0])
            _check_format(tex, dtype, ins, lane0)
            if tex.array.cubemap or tex.array.linear or len(tex.array.extent) != 2:
                raise TextureFault(lane0, f"`{ins.full_opcode}` gathers from {tex.array!r}, not a 2D array")
            layer = _layers(tex.array, layer_r, b, lanes, sel, False, ins)
            result[sel] = texfetch.gather4(tex, [s[sel].view(F32) for s in spatial], layer, comp)
        _store_result(ws, dtype, b, lanes, result)
        if pred is not None:
            pred(b, lanes, np.ones(lanes.shape, dtype=bool))
    return run, 0, -1


# txq attributes the interpreter reports: extents (0 for an axis the array lacks, as
# cudaArrayGetInfo's extent has it) and the layer count.
_TXQ = {"width": 0, "height": 1, "depth": 2}


def array_query(arr: CudaArray, q: str) -> int:
    if q == "array_size":
        return arr.layers
    ext = tuple(arr.extent) + (0, 0)
    return int(ext[_TXQ[q]])


@impl("txq")
def _txq(ctx: CompileContext, ins: ir.Instruction):
    q = next((m for m in ins.modifiers if m in _TXQ or m == "array_size"), None)
    if q is None or ins.has("level") or len(ins.operands) != 2:
        raise _unsup(ins, "queries an attribute the interpreter does not report yet "
                          "(it reports .width, .height, .depth, .array_size)")
    d = writer(ctx, ins.operands[0], ScalarType.B32, ins)
    handle_r = _handle_source(ctx, ins, ins.operands[1])

    def run(b, lanes):
        out = np.zeros(lanes.size, dtype=np.uint32)
        for tex, sel in objects(b, ctx, ins, handle_r(b, lanes), lanes, TextureObject):
            out[sel] = array_query(tex.array, q)
        d(b, lanes, out)
    return run, 0, -1
