"""Texture and surface instructions on AMD GPUs: image instructions on HIP's descriptors
(PTX ISA 9.0 §9.7.10 tex, tld4, txq; §9.7.11 suld, sust, sured, suq; docs/hip-loading.md).

A texture object handle (``cudaTextureObject_t``, a kernel argument or a register) is, as HIP's
``hipTextureObject_t``, the address of a device-side record: the image resource descriptor
(T#, 8 dwords used of 12) at byte 0 and the sampler descriptor (S#, 4 dwords used of 8) at
byte ``sampler_offset`` (48: ``HIP_SAMPLER_OBJECT_OFFSET_DWORD`` x 4). A surface object's
record holds the T# at byte 0. A module `.texref`/`.surfref` becomes a global 64-bit variable
of the same name holding such a handle (what HIP's texture references compile to: the
reference's ``textureObject`` field), which the host sets before the launch.

* ``tex`` with float coordinates: ``image.sample.lz.<dim>`` (the LOD-0 form, as HIP's
  ``tex2D`` samples in compute code; targets without it, CDNA, use ``image.sample``, whose
  derivative LOD selects the only level); cubemaps through ``cubeid/cubesc/cubetc/cubema``.
* ``tex`` with integer coordinates: ``image.load.<dim>`` (texel indices, no sampler: out of
  range reads 0 whatever the address mode); ``tex.1d`` with ``.s32`` coordinates is
  ``tex1Dfetch`` on linear memory: a ``buffer_load_format`` through the T#'s first 4 dwords.
* ``tex.level``: ``image.sample.l``; ``tex.grad``: ``image.sample.d`` (the LOD the hardware
  derives from the gradients; the T# names the mip chain, as HIP's mipmapped textures build it).
* ``tld4``: ``image.gather4.lz.2d``/``.cube`` (refused on targets without gather4).
* ``suld.b``/``sust.b``: ``image.load``/``image.store`` of ``vec`` components, the byte x
  coordinate divided by the access size (HIP's ``surf2Dread`` does the same); ``sust.p``:
  ``image.store`` with the element x, the descriptor's format doing the conversion; ``.trap`` and
  ``.clamp`` check the coordinates against ``image.getresinfo``; ``sured.b``: image atomics.
* ``txq``/``suq``: ``image.getresinfo`` (extents, layers, mip level count; ``txq.level`` at that
  level); the format and sampler attributes are refused (descriptor fields not decoded).
What each generation has is data: the ``[texture]`` section of ``isa/targets/<name>.toml``.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import cache

from llvmlite import ir

from ..ir import nodes as ptx
from ..ir.texture import Plan
from ..lift.function import FunctionLowering
from ..resources import data_dir
from .llvm_ext import CONSTANT, GLOBAL, I1, I32, I64, VOID, call, ptr

F32 = ir.FloatType()
V8I32, V4I32 = ir.VectorType(I32, 8), ir.VectorType(I32, 4)
_DIMS = {"1d": "1d", "2d": "2d", "3d": "3d", "a1d": "1darray", "a2d": "2darray", "cube": "cube", "acube": "cube"}
_ATOMIC = {"add": ("add", "add"), "min": ("smin", "umin"), "max": ("smax", "umax"), "and": ("and", "and"),
           "or": ("or", "or")}


@dataclass(frozen=True)
class TextureUnit:
    """A target's ``[texture]`` section."""

    descriptor: str              # T#/S# encoding generation: "gfx9" or "gfx10"
    sample_lz: bool              # image_sample_lz / image_gather4_lz exist
    gather4: bool                # image_gather4 exists (tld4)
    sample_lod: bool             # image_sample_l / image_sample_d exist (tex.level, tex.grad)
    sampler_offset: int          # bytes from a texture object's T# to its S# (HIP's record)


@cache
def texture_unit(target_name: str) -> TextureUnit:
    path = data_dir("isa") / "targets" / f"{target_name}.toml"
    raw = tomllib.loads(path.read_text(encoding="utf-8")).get("texture", {})
    return TextureUnit(descriptor=str(raw.get("descriptor", "gfx9")), sample_lz=bool(raw.get("sample_lz", True)),
                       gather4=bool(raw.get("gather4", True)), sample_lod=bool(raw.get("sample_lod", True)),
                       sampler_offset=int(raw.get("sampler_offset", 48)))


class TextureHooks:
    """The AMD target's ``texture`` hook (lift.ops.texture calls it with the operands' bits)."""

    def texture(self, fl: FunctionLowering, ins: ptx.Instruction, p: Plan, handle, layer, coords, values):
        unit = texture_unit(self.target.name)
        b = fl.b
        record = _record(fl, p, handle)
        rsrc = b.load(b.bitcast(record, ptr(CONSTANT, V8I32)), align=4)
        if p.op in ("txq", "suq"):
            return [_query(fl, ins, rsrc, p, values)]
        if p.op == "tex":
            return _tex(self, fl, ins, p, unit, record, rsrc, layer, coords, values)
        if p.op == "tld4":
            if not unit.gather4:
                raise fl.unsupported(ins, f"gathers (tld4), and {self.target.name} has no image_gather4 "
                                          "(CDNA keeps only image_sample/load/store/atomics)")
            samp = _sampler(b, record, unit)
            xy = [b.bitcast(c, F32) for c in coords]
            if p.geom in ("cube", "acube"):
                xy = _cube(b, xy, layer)
            elif layer is not None:
                xy.append(b.uitofp(layer, F32))
            name = f"llvm.amdgcn.image.gather4{'.lz' if unit.sample_lz else ''}.{_DIMS[p.geom]}.v4f32.f32"
            v = call(b, name, ir.VectorType(F32, 4), [I32(1 << p.component), *xy, rsrc, samp, I1(0), I32(0), I32(0)])
            return _components(b, v, 4)
        return _surface(self, fl, ins, p, rsrc, layer, coords, values)


def _record(fl: FunctionLowering, p: Plan, handle) -> ir.Value:
    """An i8 addrspace(4)* to the object's record."""
    b = fl.b
    if handle is None:
        # A `.texref`/`.surfref`: the global of that name holds the handle (set by the host).
        name = f"{p.reference}"
        gv = fl.ml.llmod.globals.get(name)
        if gv is None:
            gv = ir.GlobalVariable(fl.ml.llmod, I64, name=name, addrspace=GLOBAL)
            gv.initializer = I64(0)
            gv.align = 8
        handle = b.load(gv, align=8)
    return b.inttoptr(handle, ptr(CONSTANT))


def _sampler(b: ir.IRBuilder, record: ir.Value, unit: TextureUnit) -> ir.Value:
    at = b.gep(record, [I64(unit.sampler_offset)])
    return b.load(b.bitcast(at, ptr(CONSTANT, V4I32)), align=4)


def _components(b: ir.IRBuilder, v: ir.Value, n: int) -> list[ir.Value]:
    if isinstance(v.type, ir.VectorType):
        ints = b.bitcast(v, ir.VectorType(I32, v.type.count)) if v.type.element != I32 else v
        return [b.extract_element(ints, I32(i)) for i in range(n)]
    return [b.bitcast(v, I32) if v.type == F32 else v]


def _vec4(p: Plan) -> tuple[ir.Type, str]:
    return (ir.VectorType(F32, 4), "v4f32") if p.dtype.kind == "f" else (V4I32, "v4i32")


def _tex(hooks, fl, ins, p: Plan, unit: TextureUnit, record, rsrc, layer, coords, lod_values):
    b = fl.b
    ty, suffix = _vec4(p)
    dim = _DIMS[p.geom]
    if p.integer:
        if p.geom == "1d":
            # tex1Dfetch: linear memory is a buffer resource; its V# is the T#'s first 4 dwords.
            vsharp = b.shuffle_vector(rsrc, rsrc, ir.Constant(V4I32, [I32(i) for i in range(4)]))
            v = call(b, f"llvm.amdgcn.struct.buffer.load.format.{suffix}", ty, [vsharp, coords[0], I32(0), I32(0), I32(0)])
        else:
            if p.geom in ("cube", "acube"):
                raise fl.unsupported(ins, "fetches a cubemap with integer coordinates")
            args = list(coords) + ([layer] if layer is not None else [])
            v = call(b, f"llvm.amdgcn.image.load.{dim}.{suffix}.i32", ty, [I32(15), *args, rsrc, I32(0), I32(0)])
        return _components(b, v, 4)
    samp = _sampler(b, record, unit)
    xyz = [b.bitcast(c, F32) for c in coords]
    if p.geom in ("cube", "acube"):
        xyz = _cube(b, xyz, layer)
    elif layer is not None:
        xyz.append(b.uitofp(layer, F32))
    if p.lod and not unit.sample_lod:
        raise fl.unsupported(ins, f"samples at an explicit or gradient LOD, and {hooks.target.name} has no "
                                  "image_sample_l/image_sample_d (CDNA keeps only image_sample)")
    lod = [b.bitcast(v, F32) for v in lod_values]
    if p.lod == "level":
        # explicit LOD after the coordinates (and slice/face): image_sample_l
        v = call(b, f"llvm.amdgcn.image.sample.l.{dim}.{suffix}.f32", ty,
                 [I32(15), *xyz, lod[0], rsrc, samp, I1(0), I32(0), I32(0)])
    elif p.lod == "grad":
        # image_sample_d: dPdx's (ds/dh, dt/dh, ...) then dPdy's, in normalised units as PTX's
        v = call(b, f"llvm.amdgcn.image.sample.d.{dim}.{suffix}.f32.f32", ty,
                 [I32(15), *lod, *xyz, rsrc, samp, I1(0), I32(0), I32(0)])
    else:
        name = f"llvm.amdgcn.image.sample{'.lz' if unit.sample_lz else ''}.{dim}.{suffix}.f32"
        v = call(b, name, ty, [I32(15), *xyz, rsrc, samp, I1(0), I32(0), I32(0)])
    return _components(b, v, 4)


def _cube(b: ir.IRBuilder, xyz, layer) -> list[ir.Value]:
    """Cube coordinates as the hardware takes them: (sc/|ma| + 1.5, tc/|ma| + 1.5, face), with
    ma = 2 x the major axis (cubema) and the face + 8 x layer for cubemap arrays."""
    x, y, z = xyz
    ma = call(b, "llvm.amdgcn.cubema", F32, [x, y, z])
    sc = call(b, "llvm.amdgcn.cubesc", F32, [x, y, z])
    tc = call(b, "llvm.amdgcn.cubetc", F32, [x, y, z])
    face = call(b, "llvm.amdgcn.cubeid", F32, [x, y, z])
    inv = b.fdiv(F32(1.0), call(b, "llvm.fabs.f32", F32, [ma]))
    s = b.fadd(b.fmul(sc, inv), F32(1.5))
    t = b.fadd(b.fmul(tc, inv), F32(1.5))
    if layer is not None:
        face = b.fadd(face, b.fmul(b.uitofp(layer, F32), F32(8.0)))
    return [s, t, face]


def _resinfo(b: ir.IRBuilder, rsrc, dim: str, level=None) -> list[ir.Value]:
    v = call(b, f"llvm.amdgcn.image.getresinfo.{dim}.v4f32.i32", ir.VectorType(F32, 4),
             [I32(15), level if level is not None else I32(0), rsrc, I32(0), I32(0)])
    return _components(b, v, 4)


def _query(fl: FunctionLowering, ins, rsrc, p: Plan, values) -> ir.Value:
    """width, height: x, y of resinfo; depth: z of a 3D query; array_size: z of a 2D-array
    query; num_mipmap_levels: w (the descriptor's level count); txq.level: resinfo at that
    level. The format and sampler attributes would need T#/S# fields decoded: refused."""
    b, q = fl.b, p.query
    level = values[0] if p.level is not None else None
    if q == "depth":
        return _resinfo(b, rsrc, "3d", level)[2]
    if q == "array_size":
        return _resinfo(b, rsrc, "2darray")[2]
    if q == "num_mipmap_levels":
        return _resinfo(b, rsrc, "2d")[3]
    if q in ("width", "height"):
        return _resinfo(b, rsrc, "2d", level)[0 if q == "width" else 1]
    raise fl.unsupported(ins, f"queries .{q}, which ptxvm's AMD lowering does not decode from the "
                              "image/sampler descriptors yet")


def _surface(hooks, fl, ins, p: Plan, rsrc, layer, coords, values):
    b = fl.b
    dim = _DIMS[p.geom]
    nbytes = p.nbytes
    shift = nbytes.bit_length() - 1
    if not p.formatted:          # sust.p's x already counts elements
        coords = [b.ashr(coords[0], I32(shift)), *coords[1:]]    # bytes -> elements
    if p.mode in ("trap", "clamp"):
        coords, layer = _in_range(hooks, fl, p, rsrc, coords, layer)
    args = list(coords) + ([layer] if layer is not None else [])
    wide = p.dtype.bits == 64
    if p.op == "sured":
        signed = p.dtype.value.startswith("s")
        op = _ATOMIC[p.red][1 if not signed else 0]
        ity = I64 if wide else I32
        v = values[0] if values[0].type == ity else b.zext(values[0], ity)
        call(b, f"llvm.amdgcn.image.atomic.{op}.{dim}.{'i64' if wide else 'i32'}.i32", ity, [v, *args, rsrc, I32(0), I32(0)])
        return []
    if wide:
        raise fl.unsupported(ins, "accesses 64-bit surface elements, which ptxvm's AMD lowering does not do yet")
    n = p.vec
    vty = F32 if n == 1 else ir.VectorType(F32, n)
    suffix = "f32" if n == 1 else f"v{n}f32"
    dmask = I32((1 << n) - 1)
    if p.op == "suld":
        v = call(b, f"llvm.amdgcn.image.load.{dim}.{suffix}.i32", vty, [dmask, *args, rsrc, I32(0), I32(0)])
        return [b.trunc(c, ir.IntType(p.dtype.bits)) if p.dtype.bits < 32 else c for c in _components(b, v, n)]
    data = [b.bitcast(b.zext(v, I32) if v.type.width < 32 else v, F32) for v in values]
    if n == 1:
        vec = data[0]
    else:
        vec = ir.Constant(vty, ir.Undefined)
        for i, d in enumerate(data):
            vec = b.insert_element(vec, d, I32(i))
    call(b, f"llvm.amdgcn.image.store.{dim}.{suffix}.i32", VOID, [vec, dmask, *args, rsrc, I32(0), I32(0)])
    return []


def _in_range(hooks, fl, p: Plan, rsrc, coords, layer):
    """.trap: trap unless every coordinate is inside the surface; .clamp: clamp them."""
    b = fl.b
    size = _resinfo(b, rsrc, "2darray" if p.layered and p.axes == 2 else "3d")
    limits = size[:p.axes]
    if p.layered:
        limits = size[:p.axes] + [size[2] if p.axes == 2 else size[1]]
        coords = [*coords, layer]
    if p.mode == "clamp":
        out = []
        for c, n in zip(coords, limits):
            c = b.select(b.icmp_signed("<", c, I32(0)), I32(0), c)
            out.append(b.select(b.icmp_signed(">=", c, n), b.sub(n, I32(1)), c))
        return (out[:-1], out[-1]) if p.layered else (out, layer)
    bad = None
    for c, n in zip(coords, limits):
        outside = b.icmp_unsigned(">=", c, n)           # negative is a huge unsigned value
        bad = outside if bad is None else b.or_(bad, outside)
    trap, ok = fl.new_block("surface_out_of_range"), fl.new_block("surface_in_range")
    b.cbranch(bad, trap, ok)
    b.position_at_end(trap)
    hooks._trap(fl)                      # the dispatch aborts (a `.func` returns to its caller's trap)
    b.position_at_end(ok)
    return (coords[:-1], coords[-1]) if p.layered else (coords, layer)


__all__ = ["TextureHooks", "TextureUnit", "texture_unit"]
