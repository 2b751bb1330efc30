"""Floating-point-only instructions (PTX ISA §9.7.3-9.7.5: single/double, half and mixed
precision): testp, copysign, fma and the approximate functions, lowered to LLVM IR."""

from __future__ import annotations

from ...ir import nodes as ptx
from ...ir.types import ScalarType
from ...isa import typeset
from ..function import FunctionLowering
from . import lowers


HALF = tuple(ScalarType(t) for t in typeset("half"))         # f16 f16x2 bf16 bf16x2 (the table's)


_SCALAR_HALF = (ScalarType.F16, ScalarType.BF16)


_UNARY_APPROX = {"sin": "fsin", "cos": "fcos", "ex2": "fex2", "lg2": "flg2", "tanh": "ftanh"}


def _rnd(ins: ptx.Instruction, default: str = "rn") -> str:
    return ins.mod("rnd") or ins.mod("rnonly") or default


def _flags(ins: ptx.Instruction) -> dict:
    return {"ftz": "ftz" in ins.modifiers}


def lower_float(fl: FunctionLowering, ins: ptx.Instruction) -> None:
    t = ins.types[0]
    if ins.opcode in ("add", "sub", "mul", "fma") and (
            t.value == "f32x2" or (t is ScalarType.F32 and len(ins.types) == 2 and ins.types[1] in _SCALAR_HALF)):
        return _lower_f32_split(fl, ins)
    if len(ins.types) > 1 or t not in (ScalarType.F32, ScalarType.F64, *HALF):
        raise fl.unsupported(ins, f"has no LLVM lowering for type combination {'.'.join(x.value for x in ins.types)}")
    if t in HALF:
        return _lower_half(fl, ins, t)
    from ..semantics import fp
    op = ins.opcode
    ops = ins.operands
    d = ops[0]
    srcs = [fl.read(o, t) for o in ops[1:]]
    b = fl.b
    ftz = "ftz" in ins.modifiers
    sat = "sat" in ins.modifiers
    if op in ("add", "sub", "mul"):
        r = getattr(fp, "f" + op)(b, *srcs, rnd=_rnd(ins), ftz=ftz, sat=sat)
    elif op == "fma" or (op == "mad" and (ins.mod("rnd") or t is ScalarType.F64)):
        r = fp.ffma(b, *srcs, rnd=_rnd(ins), ftz=ftz, sat=sat)
    elif op == "mad":
        r = fp.fmad_f32_legacy(b, *srcs, ftz=ftz, sat=sat)
    elif op == "div":
        kind = "approx" if "approx" in ins.modifiers else "full" if "full" in ins.modifiers else _rnd(ins)
        r = fp.fdiv(b, *srcs, kind=kind, ftz=ftz)
    elif op in ("rcp", "sqrt"):
        kind = "approx" if "approx" in ins.modifiers else _rnd(ins)
        r = (fp.frcp if op == "rcp" else fp.fsqrt)(b, *srcs, kind=kind, ftz=ftz)
    elif op == "rsqrt":
        r = fp.frsqrt(b, *srcs, ftz=ftz)
    elif op in _UNARY_APPROX:
        r = getattr(fp, _UNARY_APPROX[op])(b, *srcs, ftz=ftz)
    elif op in ("min", "max"):
        # min/max{.ftz}{.NaN}{.xorsign.abs}.f32 d, a, b and min/max{.ftz}{.NaN}{.abs}.f32 d, a, b, c
        # (§9.7.3.11-12); the plain forms keep their lowering
        ext = {}
        if len(srcs) != 2 or "xorsign" in ins.modifiers or "abs" in ins.modifiers:
            xorsign = "xorsign" in ins.modifiers
            if t is not ScalarType.F32 or len(srcs) > 3 or (xorsign and ("abs" not in ins.modifiers
                                                                          or len(srcs) > 2)):
                raise fl.unsupported(ins, "is not a form of §9.7.3.11-12 (.xorsign needs .abs and two "
                                          "sources; .abs and three sources are .f32 only)")
            ext = {"abs_": "abs" in ins.modifiers, "xorsign": xorsign}
        r = (fp.fmin if op == "min" else fp.fmax)(b, *srcs, ftz=ftz, nan="NaN" in ins.modifiers, **ext)
    elif op in ("abs", "neg"):
        r = (fp.fabs if op == "abs" else fp.fneg)(b, *srcs, ftz=ftz)
    elif op == "copysign":
        r = fp.copysign(b, *srcs)
    else:
        raise fl.unsupported(ins, "has no floating-point lowering yet")
    fl.write(d, t, r)


def _lower_f32_split(fl: FunctionLowering, ins: ptx.Instruction) -> None:
    """``.f32x2`` (§9.7.3: two independent f32 operations on the halves of .b64 registers,
    element 0 in the low 32 bits) and mixed precision ``.f32.{f16,bf16}`` (§9.7.5: every
    source but the last is half precision, converted exactly to f32, then one f32 operation)."""
    from llvmlite import ir
    from ..semantics import cvt, fp
    b = fl.b
    op = ins.opcode
    d, *src_ops = ins.operands
    kw = dict(rnd=_rnd(ins), ftz="ftz" in ins.modifiers, sat="sat" in ins.modifiers)
    emit = fp.ffma if op == "fma" else getattr(fp, "f" + op)
    f32, i32, i64 = ir.FloatType(), ir.IntType(32), ir.IntType(64)
    if ins.types[0].value == "f32x2":
        b64 = ScalarType("b64")
        srcs = [fl.read(o, b64) for o in src_ops]
        halves = []
        for shift in (0, 32):
            xs = [b.bitcast(b.trunc(b.lshr(x, i64(shift)) if shift else x, i32), f32) for x in srcs]
            halves.append(b.zext(b.bitcast(emit(b, *xs, **kw), i32), i64))
        fl.write(d, b64, b.or_(halves[0], b.shl(halves[1], i64(32))))
        return
    half_t = ins.types[1]
    xs = [cvt.cvt(b, fl.read(o, half_t), dst="f32", src=half_t.value) if k < len(src_ops) - 1
          else fl.read(o, ScalarType.F32) for k, o in enumerate(src_ops)]
    fl.write(d, ScalarType.F32, emit(b, *xs, **kw))


def _lower_half(fl: FunctionLowering, ins: ptx.Instruction, t: ScalarType) -> None:
    from ..semantics import half
    op = ins.opcode
    d, *src_ops = ins.operands
    srcs = [fl.read(o, t) for o in src_ops]
    b = fl.b
    kw = {"type": t.value}
    ftz, sat, relu = "ftz" in ins.modifiers, "sat" in ins.modifiers, "relu" in ins.modifiers
    if op in ("add", "sub", "mul"):
        r = getattr(half, "h" + op)(b, *srcs, rnd=_rnd(ins), ftz=ftz, sat=sat, **kw)
    elif op in ("fma", "mad"):
        r = half.hfma(b, *srcs, rnd=_rnd(ins), ftz=ftz, sat=sat, relu=relu, **kw)
    elif op in ("min", "max"):
        r = (half.hmin if op == "min" else half.hmax)(
            b, *srcs, ftz=ftz, nan="NaN" in ins.modifiers,
            xorsign_abs="xorsign" in ins.modifiers, relu=relu, **kw)
    elif op in ("neg", "abs"):
        r = (half.hneg if op == "neg" else half.habs)(b, *srcs, ftz=ftz, **kw)
    elif hasattr(half, "h" + op):
        r = getattr(half, "h" + op)(b, *srcs, **kw)
    else:
        raise fl.unsupported(ins, "has no half-precision lowering yet")
    fl.write(d, t, r)


@lowers("testp")
def _testp(fl: FunctionLowering, ins: ptx.Instruction) -> None:
    from ..semantics import fp
    t = ins.types[0]
    d, a = ins.operands
    fl.write(d, ScalarType.PRED, fp.testp(fl.b, fl.read(a, t), ins.mod("testpop")))


@lowers("rcp", "sqrt", "rsqrt", "sin", "cos", "ex2", "lg2", "tanh", "fma", "copysign")
def _float_only(fl: FunctionLowering, ins: ptx.Instruction) -> None:
    lower_float(fl, ins)


@lowers("rcp.approx.ftz.f64", "rsqrt.approx.ftz.f64")
def _approx_f64(fl: FunctionLowering, ins: ptx.Instruction) -> None:
    """The f64 approximations are table entries of their own (their type is in the opcode)."""
    from ..semantics import fp
    d, a = ins.operands
    x = fl.read(a, ScalarType.F64)
    if ins.opcode.startswith("rcp"):
        r = fp.frcp(fl.b, x, kind="approx", ftz=True)
    else:
        r = fp.frsqrt(fl.b, x, ftz=True)
    fl.write(d, ScalarType.F64, r)
