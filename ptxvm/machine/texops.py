"""Texture and surface instructions as pure functions over lane arrays, shared by every executor
that runs them on the host (PTX ISA 9.0 §9.7.10 tex, tld4, txq; §9.7.11 suld, sust, sured, suq).

An executor parses an instruction once (``plan``), reads its operands however it holds
registers (the interpreter: numpy readers over a batch; the host JIT: one thread's values
passed through a callback), and calls ``tex``/``tld4``/``txq``/``suld``/``sust``/``sured``/``suq``
with them. Sharing these functions is what makes the executors agree bit for bit, errors included:
a fetch the model refuses raises ``TextureError`` naming the position of the lane in the arrays,
which the executor turns into its KernelFault for that thread.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterator

import numpy as np

from ..errors import UnsupportedError
from ..ir import nodes as ir
from ..ir.types import ScalarType
from . import texfetch
from .textures import AddressMode, CudaArray, SurfaceObject, TextureObject, lookup

F32 = np.float32
UINT = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}

# Coordinate vector layout per geometry: (a leading layer index, spatial axes).
TEX_GEOMS = {"1d": (False, 1), "2d": (False, 2), "3d": (False, 3), "a1d": (True, 1), "a2d": (True, 2),
             "cube": (False, 3), "acube": (True, 3)}
SURF_GEOMS = {"1d": (False, 1), "2d": (False, 2), "3d": (False, 3), "a1d": (True, 1), "a2d": (True, 2)}
_COMPONENTS = {"r": 0, "g": 1, "b": 2, "a": 3}
QUERIES = ("width", "height", "depth", "array_size")
RED_OPS = ("add", "min", "max", "and", "or")
RED_TYPES = {"u32": np.uint32, "s32": np.int32, "b32": np.uint32, "u64": np.uint64, "s64": np.int64,
             "b64": np.uint64}


class TextureError(Exception):
    """A fetch or access the model refuses, for the lane at position ``index`` of the arrays."""

    def __init__(self, index: int, message: str) -> None:
        super().__init__(message)
        self.index, self.message = index, message


@dataclass(frozen=True)
class Plan:
    """What an instruction does, decided once from its text (operands stay IR nodes: each
    executor reads them its own way)."""

    op: str                            # tex, tld4, txq, suq, suld, sust, sured
    full_opcode: str
    geom: str = ""
    layered: bool = False
    axes: int = 0
    dtype: ScalarType | None = None    # tex/tld4: the result type; surfaces: the element type
    integer: bool = False              # tex: .s32 coordinates (texel indices)
    component: int = 0                 # tld4
    query: str = ""                    # txq / suq
    vec: int = 1                       # surfaces: elements per access
    mode: str = "trap"                 # surfaces: out-of-range handling
    red: str = ""                      # sured: the operation
    handle: ir.Operand | None = None   # the address operand's base (register, parameter, reference)
    layer: ir.Operand | None = None
    coords: tuple = ()                 # spatial coordinate operands, x first
    coord_type: ScalarType = ScalarType.S32
    dests: tuple = ()                  # destination operands (tex, tld4, txq, suq, suld)
    pred: ir.Operand | None = None     # tex/tld4's optional predicate destination
    values: tuple = ()                 # sust/sured source operands

    @property
    def nbytes(self) -> int:
        return self.vec * self.dtype.bits // 8

    @property
    def reference(self) -> str | None:
        """The `.texref`/`.surfref` name when the instruction names one (no register or parameter)."""
        return self.handle.name if isinstance(self.handle, ir.Symbol) else None


def unsupported(ins: ir.Instruction, why: str) -> UnsupportedError:
    span = ins.span
    return UnsupportedError(f"`{ins.full_opcode}` {why}", filename=span.filename, line=span.line or None,
                            column=span.column or None)


def _geom(ins: ir.Instruction, table) -> str:
    for m in ins.modifiers:
        if m in table:
            return m
    raise unsupported(ins, f"has a geometry ptxvm does not execute (supported: {', '.join(table)})")


def _elements(op) -> tuple:
    return tuple(op.elements) if isinstance(op, ir.Vector) else (op,)


def _coord_operands(ins, a: ir.Address, n: int, layered: bool, surface: bool):
    if len(a.extra) == 2 and not surface:
        raise unsupported(ins, "names an explicit sampler ([tex, sampler, coords], independent texture "
                               "mode), which ptxvm does not execute yet")
    if len(a.extra) != 1 or (not surface and not isinstance(a.extra[0], ir.Vector) and n + layered > 1):
        raise unsupported(ins, "has a coordinate operand ptxvm does not read")
    elems = _elements(a.extra[0])
    if len(elems) < n + layered:
        raise unsupported(ins, f"needs {n + layered} coordinates, has {len(elems)}")
    return (elems[0] if layered else None), elems[layered:layered + n]


def _dest(d):
    pred = None
    if isinstance(d, ir.Pair):
        d, pred = d.first, d.second
    return _elements(d), pred


def plan(ins: ir.Instruction) -> Plan:
    """The instruction's plan; an UnsupportedError (located) for a form ptxvm does not execute."""
    op = ins.opcode
    if op in ("tex", "tld4"):
        return _plan_fetch(ins)
    if op in ("txq", "suq"):
        q = next((m for m in ins.modifiers if m in QUERIES), None)
        if q is None or ins.has("level") or len(ins.operands) != 2:
            raise unsupported(ins, "queries an attribute ptxvm does not report yet "
                                   "(it reports .width, .height, .depth, .array_size)")
        a = ins.operands[1]
        return Plan(op, ins.full_opcode, query=q, handle=a.base if isinstance(a, ir.Address) else a,
                    dests=(ins.operands[0],))
    if op in ("suld", "sust", "sured"):
        return _plan_surface(ins)
    raise unsupported(ins, "is not a texture or surface instruction")


def _plan_fetch(ins: ir.Instruction) -> Plan:
    if ins.opcode == "tld4":
        geom = _geom(ins, {"2d": 0, "a2d": 0})
        comp = next((_COMPONENTS[m] for m in ins.modifiers if m in _COMPONENTS), None)
        dtype, ctype = ins.types[0], ScalarType.F32
        if comp is None or len(ins.operands) != 2 or dtype.value not in ("f32", "s32", "u32"):
            raise unsupported(ins, "has a form ptxvm does not execute (offset/depth operands, no .comp)")
    else:
        geom = _geom(ins, TEX_GEOMS)
        comp = 0
        dtype, ctype = ins.types[0], ins.types[1]
        if dtype.value not in ("f32", "s32", "u32") or ctype.value not in ("f32", "s32"):
            raise unsupported(ins, f"returns .{dtype.value} from .{ctype.value} coordinates; ptxvm "
                                   "executes .f32/.s32/.u32 results from .f32/.s32 coordinates")
        want = 2 if ins.has("grad") else 1 if ins.has("level") else 0
        if len(ins.operands) - 2 != want:
            raise unsupported(ins, "has offset or depth-compare operands, which ptxvm does not execute")
    layered, n = TEX_GEOMS[geom]
    a = ins.operands[1]
    if not isinstance(a, ir.Address):
        raise unsupported(ins, "has a texture operand ptxvm does not read")
    layer, coords = _coord_operands(ins, a, n, layered, False)
    dests, pred = _dest(ins.operands[0])
    return Plan(ins.opcode, ins.full_opcode, geom=geom, layered=layered, axes=n, dtype=dtype,
                integer=ctype.kind != "f", component=comp, handle=a.base, layer=layer, coords=coords,
                coord_type=ctype, dests=dests, pred=pred)


def _plan_surface(ins: ir.Instruction) -> Plan:
    geom = _geom(ins, SURF_GEOMS)
    t = ins.types[0]
    mode = next((m for m in ("trap", "clamp", "zero") if ins.has(m)), "trap")   # §9.7.11: .trap default
    red = ""
    if ins.opcode == "sured":
        red = next((m for m in ins.modifiers if m in RED_OPS), "")
        if not ins.has("b") or not red or t.value not in RED_TYPES:
            raise unsupported(ins, "is a form ptxvm does not execute (it runs sured.b with "
                                   ".add/.min/.max/.and/.or on 32/64-bit integers)")
        vec = 1
    else:
        if not ins.has("b") or t.bits not in (8, 16, 32, 64):
            raise unsupported(ins, "is a formatted (.p) or unsized access ptxvm does not execute yet")
        vec = 4 if ins.has("v4") else 2 if ins.has("v2") else 1
    layered, n = SURF_GEOMS[geom]
    load = ins.opcode == "suld"
    a = ins.operands[1] if load else ins.operands[0]
    if not isinstance(a, ir.Address):
        raise unsupported(ins, "has a surface operand ptxvm does not read")
    layer, coords = _coord_operands(ins, a, n, layered, True)
    data = _elements(ins.operands[0] if load else ins.operands[1])
    return Plan(ins.opcode, ins.full_opcode, geom=geom, layered=layered, axes=n, dtype=t, vec=vec, mode=mode,
                red=red, handle=a.base, layer=layer, coords=coords, dests=data if load else (),
                values=() if load else data)


# ---------------------------------------------------------------------------- objects

def argument_of(params: np.ndarray, offsets: dict[str, int], handle: int) -> str:
    """' in argument i (`name`)' for the kernel parameter that holds ``handle``, else ''."""
    for i, (name, off) in enumerate(offsets.items()):
        raw = params[off:off + 8]
        if raw.size == 8 and int(raw.view(np.uint64)[0]) == handle:
            return f" in argument {i} (`{name}`)"
    return ""


def reference_handle(textures, name: str) -> int:
    """The handle of the object bound to reference ``name`` (``textures``: the launch's bindings)."""
    obj = dict(textures).get(name)
    if obj is None:
        raise TextureError(0, f"texture/surface reference `{name}` is not bound "
                              "(Module.bind_texture(name, ...) before the launch)")
    return obj.handle


def objects(handles: np.ndarray, kind: type, where: Callable[[int], str]) -> Iterator[tuple[object, np.ndarray]]:
    """(object, lane mask) per distinct handle; a handle that is no live ``kind`` is an error
    (``where(handle)`` names the launch argument that carried it, when one did)."""
    what = "texture" if kind is TextureObject else "surface"
    for h in np.unique(handles):
        sel = handles == h
        obj = lookup(int(h), kind)
        if obj is None:
            raise TextureError(_first(sel), f"{what} handle 0x{int(h):x}{where(int(h))} is not a {what} object")
        yield obj, sel


def _first(sel: np.ndarray) -> int:
    return int(np.nonzero(sel)[0][0])


# ---------------------------------------------------------------------------- fetches

def _check_format(tex: TextureObject, p: Plan, k: int) -> None:
    returns_float = tex.array.dtype.kind == "f" or tex.read.name == "NORMALIZED_FLOAT"
    if returns_float != (p.dtype.kind == "f"):
        got = "float" if returns_float else "integer"
        raise TextureError(k, f"`{p.full_opcode}` returns .{p.dtype.value} but {tex.array!r} read with "
                              f"read_mode={tex.read.name.lower()} gives {got} texels")


def _layers(arr: CudaArray, layer: np.ndarray | None, sel: np.ndarray, p: Plan) -> np.ndarray:
    count = arr.layers if (arr.layered or arr.cubemap) else 0
    if layer is None:
        return np.zeros(int(sel.sum()), dtype=np.int64)
    lay = layer[sel].view(np.uint32).astype(np.int64)
    bad = lay >= max(count, 1) if (arr.layered or arr.cubemap) else lay != 0
    if bad.any():
        k = int(np.nonzero(bad)[0][0])
        raise TextureError(int(np.nonzero(sel)[0][k]), f"`{p.full_opcode}` reads layer {int(lay[k])} of {arr!r}, "
                                                       f"which has {count} layer(s)")
    return lay


class _FaceView:
    """A cubemap's face sampled as a normalised 2D texture, clamped at the face edges."""

    def __init__(self, tex: TextureObject) -> None:
        self.array, self.filter, self.read, self.srgb = tex.array, tex.filter, tex.read, tex.srgb
        self.border, self.normalized_coords = tex.border, True
        self.address = (AddressMode.CLAMP,) * 3


def _linear_fetch(tex: TextureObject, idx: np.ndarray, integer: bool, k: int, p: Plan) -> np.ndarray:
    if not integer:
        raise TextureError(k, f"`{p.full_opcode}` samples linear memory with float coordinates; "
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


def _fetch_lanes(tex: TextureObject, p: Plan, spatial, layer, k: int) -> np.ndarray:
    arr = tex.array
    if p.geom in ("cube", "acube"):
        if not arr.cubemap:
            raise TextureError(k, f"`{p.full_opcode}` samples {arr!r}, which is not a cubemap")
        face, s, t = texfetch.cube_face(*[v.view(F32) for v in spatial])
        return texfetch.sample(_FaceView(tex), [s, t], layer * 6 + face, False)
    if arr.cubemap or len(arr.extent) != len(spatial):
        raise TextureError(k, f"`{p.full_opcode}` ({p.geom}) reads {arr!r}, an array of another geometry")
    coords = [v.view(np.int32) if p.integer else v.view(F32) for v in spatial]
    if arr.linear:
        return _linear_fetch(tex, coords[0], p.integer, k, p)
    return texfetch.sample(tex, coords, layer, p.integer)


def _raw(values: np.ndarray, dtype: ScalarType) -> np.ndarray:
    if dtype.kind == "f":
        return values.astype(F32).view(np.uint32)
    return (values.astype(np.int64) & 0xFFFFFFFF).astype(np.uint32)


def _u32(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a)
    return a.view(np.uint32) if a.dtype.itemsize == 4 else a.astype(np.uint32)


def tex(p: Plan, handles: np.ndarray, layer, coords, where) -> np.ndarray:
    """tex: (lanes, 4) uint32, the four components' bits (.level/.grad: the arrays ptxvm builds
    have one mip level, which every level of detail selects)."""
    coords = [_u32(c) for c in coords]
    result = np.zeros((handles.size, 4), dtype=np.int64 if p.dtype.kind != "f" else F32)
    for obj, sel in objects(handles, TextureObject, where):
        k = _first(sel)
        _check_format(obj, p, k)
        lay = _layers(obj.array, None if layer is None else _u32(layer), sel, p)
        result[sel] = _fetch_lanes(obj, p, [c[sel] for c in coords], lay, k)
    return _raw(result, p.dtype)


def tld4(p: Plan, handles: np.ndarray, layer, coords, where) -> np.ndarray:
    """tld4: (lanes, 4) uint32, one component of the bilinear footprint's four texels."""
    coords = [_u32(c) for c in coords]
    result = np.zeros((handles.size, 4), dtype=np.int64 if p.dtype.kind != "f" else F32)
    for obj, sel in objects(handles, TextureObject, where):
        k = _first(sel)
        _check_format(obj, p, k)
        if obj.array.cubemap or obj.array.linear or len(obj.array.extent) != 2:
            raise TextureError(k, f"`{p.full_opcode}` gathers from {obj.array!r}, not a 2D array")
        lay = _layers(obj.array, None if layer is None else _u32(layer), sel, p)
        result[sel] = texfetch.gather4(obj, [c[sel].view(F32) for c in coords], lay, p.component)
    return _raw(result, p.dtype)


def array_query(arr: CudaArray, q: str) -> int:
    """txq/suq: extents (0 for an axis the array lacks, as cudaArrayGetInfo's extent has it)
    and the layer count."""
    if q == "array_size":
        return arr.layers
    ext = tuple(arr.extent) + (0, 0)
    return int(ext[("width", "height", "depth").index(q)])


def query(p: Plan, handles: np.ndarray, where) -> np.ndarray:
    """txq / suq: (lanes,) uint32."""
    kind = TextureObject if p.op == "txq" else SurfaceObject
    out = np.zeros(handles.size, dtype=np.uint32)
    for obj, sel in objects(handles, kind, where):
        out[sel] = array_query(obj.array, p.query)
    return out


__all__ = ["Plan", "TextureError", "plan", "tex", "tld4", "query", "array_query", "argument_of",
           "reference_handle", "objects", "unsupported", "UINT", "RED_TYPES"]
