"""Vector helpers of the warp-as-SIMD lowering: a warp's 32 lanes as LLVM ``<32 x T>`` values."""

from __future__ import annotations

from llvmlite import ir

from ...lift.function import F32, F64, I1, I32, I64

WARP = 32


def vt(t: ir.Type) -> ir.VectorType:
    return ir.VectorType(t, WARP)


def const(t: ir.Type, value) -> ir.Constant:
    """``<32 x t>`` with every lane ``value`` (a Python number)."""
    return ir.Constant(vt(t), [ir.Constant(t, value)] * WARP)


def lanes(t: ir.Type = I32) -> ir.Constant:
    return ir.Constant(vt(t), [ir.Constant(t, i) for i in range(WARP)])


def splat(b: ir.IRBuilder, v: ir.Value) -> ir.Value:
    """A scalar broadcast to every lane."""
    if isinstance(v, ir.Constant) and not isinstance(v.type, ir.VectorType):
        return ir.Constant(vt(v.type), [v] * WARP)
    one = b.insert_element(ir.Constant(vt(v.type), ir.Undefined), v, I32(0))
    return b.shuffle_vector(one, ir.Constant(vt(v.type), ir.Undefined), const(I32, 0))


def _intrinsic(b: ir.IRBuilder, name: str, ret: ir.Type, args: list[ir.Type]) -> ir.Function:
    mod = b.module
    fn = mod.globals.get(name)
    if fn is None:
        fn = ir.Function(mod, ir.FunctionType(ret, args), name=name)
    return fn


def _suffix(t: ir.Type) -> str:
    if t == F32:
        return "f32"
    if t == F64:
        return "f64"
    return f"i{t.width}"


def reduce(b: ir.IRBuilder, op: str, v: ir.Value) -> ir.Value:
    """``llvm.vector.reduce.<op>`` (umin, umax, or, and, add) over the 32 lanes."""
    et = v.type.element
    fn = _intrinsic(b, f"llvm.vector.reduce.{op}.v{WARP}{_suffix(et)}", et, [v.type])
    return b.call(fn, [v])


def bits(b: ir.IRBuilder, mask: ir.Value) -> ir.Value:
    """A ``<32 x i1>`` mask as an i32 (lane i: bit i)."""
    return b.bitcast(mask, I32)


def any_(b: ir.IRBuilder, mask: ir.Value) -> ir.Value:
    return b.icmp_unsigned("!=", bits(b, mask), I32(0))


def first_lane(b: ir.IRBuilder, mask: ir.Value) -> ir.Value:
    """The lowest set lane of a non-empty mask (i32)."""
    fn = _intrinsic(b, "llvm.cttz.i32", I32, [I32, I1])
    return b.call(fn, [bits(b, mask), I1(1)])


def popcount(b: ir.IRBuilder, mask: ir.Value) -> ir.Value:
    fn = _intrinsic(b, "llvm.ctpop.i32", I32, [I32])
    return b.call(fn, [bits(b, mask)])


def fma(b: ir.IRBuilder, x: ir.Value, y: ir.Value, z: ir.Value) -> ir.Value:
    fn = _intrinsic(b, f"llvm.fma.v{WARP}{_suffix(x.type.element)}", x.type, [x.type] * 3)
    return b.call(fn, [x, y, z])


def resize(b: ir.IRBuilder, v: ir.Value, width: int, signed: bool) -> ir.Value:
    """Element-wise trunc / zext / sext of an integer vector to ``width`` bits."""
    have = v.type.element.width
    if have == width:
        return v
    t = vt(ir.IntType(width))
    if have > width:
        return b.trunc(v, t)
    return b.sext(v, t) if signed else b.zext(v, t)


def permute(b: ir.IRBuilder, v: ir.Value, index: ir.Value) -> ir.Value:
    """``out[i] = v[index[i]]`` (``index``: ``<32 x i32>`` in 0..31); LLVM folds constant indices
    into one shuffle."""
    out = ir.Constant(v.type, ir.Undefined)
    for i in range(WARP):
        out = b.insert_element(out, b.extract_element(v, b.extract_element(index, I32(i))), I32(i))
    return out


I64V = vt(I64)
