"""Texture and surface instructions (PTX ISA 9.0 §9.7.10 tex, tld4, txq; §9.7.11 suld, sust,
sured, suq): the operands are read here, the same way for every target, from the instruction's
``ir.texture.Plan``; what a fetch or surface access becomes is the target's ``texture`` hook
(the host JIT: the shared model through a callback; AMD: image instructions on descriptors).

The hook gets the handle (i64: a register's or a kernel parameter's value; None when the
instruction names a `.texref`/`.surfref`, which the target resolves by ``plan.reference``), the
layer (i32 or None), the coordinates (i32 bits each) and the values (sust/sured: the stored
element type's bits; tex.level/tex.grad: the LOD or the gradients' f32 bits; txq.level: the
level), and returns the results as integers: four i32 components (tex, tld4),
one i32 (txq, suq), ``vec`` element-width integers (suld), none (sust, sured).
"""

from __future__ import annotations

from llvmlite import ir

from ...ir import nodes as ptx
from ...ir.texture import Plan, plan
from ...ir.types import ScalarType
from ..function import FunctionLowering, resize, to_bits, to_value
from . import lowers

I1 = ir.IntType(1)
I64 = ir.IntType(64)


def handle_value(fl: FunctionLowering, ins: ptx.Instruction, p: Plan) -> ir.Value | None:
    base = p.handle
    if isinstance(base, ptx.Register):
        return fl.read(base, ScalarType.U64)
    if isinstance(base, ptx.Symbol):
        offset = fl.ml.layout.params.get(base.name)
        if offset is not None and fl.is_kernel:
            ptr = fl.hooks.param_pointer(fl, offset, element=8, count=1, ins=ins)
            return fl.b.load(fl.b.bitcast(ptr, ir.PointerType(I64)), align=1)
        if fl.param_buffer(base.name) is not None or any(d.name == base.name for d in fl.fn.params):
            raise fl.unsupported(ins, f"takes its texture from the `.func` parameter `{base.name}`; "
                                      "pass the handle in a register")
        return None                   # a module .texref/.surfref: the target resolves the name
    raise fl.unsupported(ins, "names its texture with an operand ptxvm does not read")


def _bits(fl: FunctionLowering, op: ptx.Operand, t: ScalarType) -> ir.Value:
    return to_bits(fl.b, fl.read(op, t), t)


@lowers("tex", "tld4", "txq")
def lower_texture(fl: FunctionLowering, ins: ptx.Instruction) -> None:
    p = plan(ins)
    hook = getattr(fl.hooks, "texture", None)
    if hook is None:
        raise fl.unsupported(ins, f"has no lowering for the {fl.hooks.name} target yet")
    handle = handle_value(fl, ins, p)
    layer = _bits(fl, p.layer, ScalarType.U32) if p.layer is not None else None
    ctype = p.coord_type if p.op in ("tex", "tld4") else ScalarType.S32
    coords = [_bits(fl, c, ctype) for c in p.coords]
    values = [_bits(fl, v, p.dtype) for v in p.values]
    if p.op == "tex":
        values = [_bits(fl, v, ScalarType.F32) for v in p.lod_operands]     # .level / .grad
    elif p.level is not None:
        values = [_bits(fl, p.level, ScalarType.U32)]                        # txq.level
    out = hook(fl, ins, p, handle, layer, coords, values)
    b = fl.b
    if p.op in ("txq", "suq"):
        fl.write(p.dests[0], ScalarType.B32, out[0])
        return
    if p.op in ("sust", "sured"):
        return
    width = 32 if p.op in ("tex", "tld4") else p.dtype.bits
    for e, v in zip(p.dests, out):
        fl.write(e, p.dtype, to_value(b, resize(b, v, width, False), p.dtype))
    if p.pred is not None:
        fl.write(p.pred, ScalarType.PRED, I1(1))     # the texel is always resident


__all__ = ["lower_texture", "handle_value"]
