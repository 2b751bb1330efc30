"""Atomic and reduction instructions (PTX ISA §9.7.12.5): atom and red."""

from __future__ import annotations

from llvmlite import ir

from ...ir import nodes as ptx
from ...isa import typeset
from ..function import FunctionLowering, to_bits, to_value
from . import lowers
from .memory import pointer


_OPS = ("add", "min", "max", "inc", "dec", "and", "or", "xor", "exch", "cas")


_HALF = typeset("half")


def _cas_loop(fl: FunctionLowering, p: ir.Value, ity: ir.Type, new_of) -> ir.Value:
    """old = *p; do { new = new_of(old) } while (!cas(p, old, new)); returns old (bits)."""
    b = fl.b
    first = b.load_atomic(p, "monotonic", ity.width // 8)
    pre = b.block
    loop, done = fl.new_block("cas"), fl.new_block("cas_done")
    b.branch(loop)
    b.position_at_end(loop)
    old = b.phi(ity)
    old.add_incoming(first, pre)
    new = new_of(old)
    res = b.cmpxchg(p, old, new, "seq_cst", "monotonic")
    seen, ok = b.extract_value(res, 0), b.extract_value(res, 1)
    old.add_incoming(seen, b.block)
    b.cbranch(ok, done, loop)
    b.position_at_end(done)
    return old


@lowers("atom", "red")
def _atom(fl: FunctionLowering, ins: ptx.Instruction) -> None:
    t = ins.types[0]
    op = next((m for m in ins.modifiers if m in _OPS), None)
    if op is None or any(v in ins.modifiers for v in ("v2", "v4", "v8")):
        raise fl.unsupported(ins, "has no LLVM lowering yet")
    is_red = ins.opcode == "red"
    k = 0 if is_red else 1
    size = max(t.bits // 8, 1)
    b = fl.b
    ity = ir.IntType(size * 8)
    vals = [fl.read(o, t) for o in ins.operands[k + 1:]]
    p = b.bitcast(pointer(fl, ins, ins.operands[k], size, write=True), ir.PointerType(ity))
    signed = t.kind == "s"
    native = fl.hooks.native_atomic(fl, ins, op, t, p, vals)
    if native is not None:
        old = native
    elif t.kind == "f":
        old = _float_atomic(fl, ins, t, op, p, ity, vals)
    elif op == "cas":
        res = b.cmpxchg(p, to_bits(b, vals[0], t), to_bits(b, vals[1], t), "seq_cst", "seq_cst")
        old = b.extract_value(res, 0)
    else:
        rmw = {"add": "add", "and": "and", "or": "or", "xor": "xor", "exch": "xchg", "inc": "uinc_wrap",
               "dec": "udec_wrap", "min": "min" if signed else "umin", "max": "max" if signed else "umax"}[op]
        old = b.atomic_rmw(rmw, p, vals[0], "seq_cst")
    if not is_red:
        fl.write(ins.operands[0], t, to_value(b, old, t))


def _float_atomic(fl, ins, t, op, p, ity, vals):
    b = fl.b
    if op == "exch":
        return b.atomic_rmw("xchg", p, to_bits(b, vals[0], t), "seq_cst")
    if op == "cas":
        res = b.cmpxchg(p, to_bits(b, vals[0], t), to_bits(b, vals[1], t), "seq_cst", "seq_cst")
        return b.extract_value(res, 0)
    if t.value in _HALF:
        from ..semantics import half
        fn = {"add": lambda x, y: half.hadd(b, x, y, type=t.value),
              "min": lambda x, y: half.hmin(b, x, y, type=t.value),
              "max": lambda x, y: half.hmax(b, x, y, type=t.value)}.get(op)
        if fn is None:
            raise fl.unsupported(ins, "(half precision atomic) has no LLVM lowering")
        return _cas_loop(fl, p, ity, lambda old: fn(old, vals[0]))
    if op == "add":
        from ..semantics import fp    # the same rounding and NaN policy as add.f32/add.f64
        return _cas_loop(fl, p, ity, lambda old: to_bits(b, fp.fadd(b, to_value(b, old, t), vals[0]), t))
    if op in ("min", "max"):
        name = "llvm.minnum" if op == "min" else "llvm.maxnum"
        fty = vals[0].type
        intr = fl.ml.llmod.declare_intrinsic(name, [fty])
        return _cas_loop(fl, p, ity, lambda old: to_bits(b, b.call(intr, [to_value(b, old, t), vals[0]]), t))
    raise fl.unsupported(ins, "has no LLVM lowering for this floating-point atomic")
