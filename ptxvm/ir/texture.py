"""Texture and surface instructions decided once from their text (PTX ISA 9.0 §9.7.10 tex,
tld4, txq; §9.7.11 suld, sust, sured, suq): geometry, types, out-of-range mode and which operand
is the handle, the layer, the coordinates, the data. Every executor and the lifter read their
operands from the same ``Plan``, so they agree on which forms are executed and which refused.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import UnsupportedError
from . import nodes as ir
from .types import ScalarType

# Coordinate vector layout per geometry: (a leading layer index, spatial axes).
TEX_GEOMS = {"1d": (False, 1), "2d": (False, 2), "3d": (False, 3), "a1d": (True, 1), "a2d": (True, 2),
             "cube": (False, 3), "acube": (True, 3)}
SURF_GEOMS = {"1d": (False, 1), "2d": (False, 2), "3d": (False, 3), "a1d": (True, 1), "a2d": (True, 2)}
_COMPONENTS = {"r": 0, "g": 1, "b": 2, "a": 3}
# txq's texture and sampler attributes, suq's surface ones (§9.7.10.7, §9.7.11.4).
TXQ_QUERIES = ("width", "height", "depth", "channel_data_type", "channel_order", "normalized_coords",
               "array_size", "num_mipmap_levels", "num_samples", "force_unnormalized_coords",
               "filter_mode", "addr_mode_0", "addr_mode_1", "addr_mode_2")
SUQ_QUERIES = ("width", "height", "depth", "channel_data_type", "channel_order", "array_size",
               "memory_layout")
QUERIES = TXQ_QUERIES
RED_OPS = ("add", "min", "max", "and", "or")
RED_TYPES = ("u32", "s32", "b32", "u64", "s64", "b64")


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
    lod: str = ""                      # tex: "level" (explicit LOD) or "grad" (LOD from gradients)
    lod_operands: tuple = ()           # tex.level: (lod,); tex.grad: dPdx's then dPdy's elements
    level: ir.Operand | None = None    # txq.level: the queried level
    formatted: bool = False            # sust.p: a formatted store (x in elements)

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
        return _plan_query(ins)
    if op in ("suld", "sust", "sured"):
        return _plan_surface(ins)
    raise unsupported(ins, "is not a texture or surface instruction")


def _plan_query(ins: ir.Instruction) -> Plan:
    table = TXQ_QUERIES if ins.opcode == "txq" else SUQ_QUERIES
    q = next((m for m in ins.modifiers if m in table), None)
    level = ins.has("level") and ins.opcode == "txq"
    if q is None or (level and q not in ("width", "height", "depth")) or len(ins.operands) != 2 + level:
        raise unsupported(ins, "queries an attribute ptxvm does not know (it reports ."
                               + ", .".join(table) + ("; .level: .width, .height, .depth)" if level else ")"))
    a = ins.operands[1]
    return Plan(ins.opcode, ins.full_opcode, query=q, handle=a.base if isinstance(a, ir.Address) else a,
                dests=(ins.operands[0],), level=ins.operands[2] if level else None)


def _plan_fetch(ins: ir.Instruction) -> Plan:
    if ins.opcode == "tld4":
        geom = _geom(ins, {"2d": 0, "a2d": 0, "cube": 0, "acube": 0})
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
    lod, lod_ops = _lod_operands(ins, geom, n)
    a = ins.operands[1]
    if not isinstance(a, ir.Address):
        raise unsupported(ins, "has a texture operand ptxvm does not read")
    layer, coords = _coord_operands(ins, a, n, layered, False)
    dests, pred = _dest(ins.operands[0])
    return Plan(ins.opcode, ins.full_opcode, geom=geom, layered=layered, axes=n, dtype=dtype,
                integer=ctype.kind != "f", component=comp, handle=a.base, layer=layer, coords=coords,
                coord_type=ctype, dests=dests, pred=pred, lod=lod, lod_operands=lod_ops)


def _lod_operands(ins: ir.Instruction, geom: str, n: int) -> tuple[str, tuple]:
    """tex.level's LOD operand, or tex.grad's dPdx and dPdy elements (``n`` each: a 3D
    gradient is a .v4 whose fourth element is ignored)."""
    if ins.opcode != "tex" or not (ins.has("level") or ins.has("grad")):
        return "", ()
    if ins.has("level"):
        return "level", (ins.operands[2],)
    if geom in ("cube", "acube"):
        raise unsupported(ins, "derives a cubemap's LOD from gradients, which ptxvm does not model "
                               "(use tex.level)")
    grads = []
    for op in ins.operands[2:4]:
        elems = _elements(op)
        if len(elems) < n:
            raise unsupported(ins, f"needs {n}-element gradients, has {len(elems)}")
        grads.extend(elems[:n])
    return "grad", tuple(grads)


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
    elif ins.opcode == "sust" and ins.has("p"):
        if t.bits != 32:
            raise unsupported(ins, "is a formatted store of other than .b32 data (the ISA's sust.p stores .b32)")
        vec = 4 if ins.has("v4") else 2 if ins.has("v2") else 1
    else:
        if not ins.has("b") or t.bits not in (8, 16, 32, 64):
            raise unsupported(ins, "is a formatted (.p) load or an unsized access ptxvm does not execute")
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
                values=() if load else data, formatted=ins.opcode == "sust" and ins.has("p"))


__all__ = ["Plan", "plan", "unsupported", "TEX_GEOMS", "SURF_GEOMS", "QUERIES", "TXQ_QUERIES", "SUQ_QUERIES", "RED_OPS", "RED_TYPES"]
