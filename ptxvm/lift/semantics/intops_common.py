"""Small LLVM IR helpers shared by the integer emitters (``intops_*``).

Everything here is branch-free and never produces poison: LLVM's ``shl``/``lshr``/``ashr``
by an amount >= the width is poison, so every variable shift goes through a clamp first.
"""

from __future__ import annotations

from llvmlite import ir

from ...errors import UnsupportedError

I1 = ir.IntType(1)
I8 = ir.IntType(8)
I32 = ir.IntType(32)
I64 = ir.IntType(64)


def width(v: ir.Value) -> int:
    """Bit width of an integer LLVM value."""
    t = v.type
    if not isinstance(t, ir.IntType):
        raise UnsupportedError(f"integer operand expected, got LLVM type {t}")
    return t.width


def const(ty: ir.IntType, value: int) -> ir.Constant:
    """An ``iN`` constant from any Python int, reduced modulo 2**N and printed in the signed
    range (LLVM's text parser wants constants that fit the type)."""
    n = ty.width
    v = value & ((1 << n) - 1)
    if n > 1 and v >> (n - 1):
        v -= 1 << n
    return ir.Constant(ty, v)


def ones(ty: ir.IntType) -> ir.Constant:
    return const(ty, -1)


def resize(b: ir.IRBuilder, v: ir.Value, ty: ir.IntType, signed: bool = False) -> ir.Value:
    """Truncate or extend ``v`` to ``ty`` (sign-extend when ``signed``)."""
    w = width(v)
    if ty.width == w:
        return v
    if ty.width < w:
        return b.trunc(v, ty)
    return b.sext(v, ty) if signed else b.zext(v, ty)


def intrinsic(b: ir.IRBuilder, name: str, ret: ir.Type, args: list[ir.Value]) -> ir.Value:
    """Call the LLVM intrinsic ``name`` (fully mangled, e.g. ``llvm.sadd.sat.i32``), declaring it
    in the builder's module on first use."""
    mod = b.module
    fn = mod.globals.get(name)
    if fn is None:
        fn = ir.Function(mod, ir.FunctionType(ret, [a.type for a in args]), name=name)
    return b.call(fn, args)


def umin_const(b: ir.IRBuilder, v: ir.Value, limit: int) -> ir.Value:
    """``min(v, limit)`` with ``v`` read as unsigned."""
    c = const(v.type, limit)
    return b.select(b.icmp_unsigned(">", v, c), c, v)


def amount(b: ir.IRBuilder, n: ir.Value, ty: ir.IntType) -> ir.Value:
    """A shift amount ``n`` (unsigned, any width) for a ``ty`` value, clamped to ``ty.width``
    *before* resizing, so that truncation can never wrap a large amount into a small one."""
    return resize(b, umin_const(b, n, ty.width), ty)


def shl_sat(b: ir.IRBuilder, x: ir.Value, n: ir.Value) -> ir.Value:
    """``x << n`` with ``n`` unsigned of any width; amounts >= width give 0 (never poison)."""
    ty = x.type
    k = amount(b, n, ty)
    big = b.icmp_unsigned(">=", k, const(ty, ty.width))
    r = b.shl(x, b.select(big, const(ty, 0), k))
    return b.select(big, const(ty, 0), r)


def lshr_sat(b: ir.IRBuilder, x: ir.Value, n: ir.Value) -> ir.Value:
    """``x >> n`` (logical) with amounts >= width giving 0 (never poison)."""
    ty = x.type
    k = amount(b, n, ty)
    big = b.icmp_unsigned(">=", k, const(ty, ty.width))
    r = b.lshr(x, b.select(big, const(ty, 0), k))
    return b.select(big, const(ty, 0), r)


def lowmask(b: ir.IRBuilder, n: ir.Value, ty: ir.IntType) -> ir.Value:
    """A ``ty`` mask of the low ``n`` bits (``n`` unsigned; ``n >= width`` gives all ones)."""
    return b.not_(shl_sat(b, ones(ty), n))


def check_mode(instr: str, value, allowed) -> None:
    """Refuse a modifier value the emitter does not implement, naming the instruction."""
    if value not in allowed:
        raise UnsupportedError(f"{instr}: modifier {value!r} is not supported "
                               f"(expected one of {', '.join(map(repr, allowed))})")
