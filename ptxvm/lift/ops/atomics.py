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


def _elements(op: ptx.Operand) -> tuple[ptx.Operand, ...]:
    return op.elements if isinstance(op, ptx.Vector) else (op,)


@lowers("atom", "red")
def _atom(fl: FunctionLowering, ins: ptx.Instruction) -> None:
    t = ins.types[0]
    op = next((m for m in ins.modifiers if m in _OPS), None)
    if op is None:
        raise fl.unsupported(ins, "has no LLVM lowering yet")
    # Vector atomics (sm_90, §9.7.13.5): one scalar atomic per element at a + i*size, in element
    # order (atomicity per element only), as the interpreter does; on AMD the target's scalar
    # atomics, so a loop of them.
    width = next((int(m[1:]) for m in ins.modifiers if m in ("v2", "v4", "v8")), 1)
    is_red = ins.opcode == "red"
    k = 0 if is_red else 1
    size = max(t.bits // 8, 1)
    b = fl.b
    ity = ir.IntType(size * 8)
    hint = any(m.startswith("L2::cache_hint") for m in ins.modifiers)
    srcs = ins.operands[k + 1:len(ins.operands) - 1 if hint else None]
    per = [_elements(o) for o in srcs]
    dsts = None if is_red else _elements(ins.operands[0])
    if any(len(e) != width for e in per) or (dsts is not None and len(dsts) != width):
        raise fl.unsupported(ins, f"needs {width}-element vectors for its value operands")
    base = pointer(fl, ins, ins.operands[k], size * width, write=True)
    signed = t.kind == "s"
    for i in range(width):
        vals = [fl.read(e[i], t) for e in per]
        pi = b.gep(base, [ir.IntType(64)(i * size)]) if i else base
        p = b.bitcast(pi, ir.PointerType(ity))
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
        if dsts is not None:
            fl.write(dsts[i], t, to_value(b, old, t))


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
        intr = fl.ml.llmod.declare_intrinsic(name, [fty], ir.FunctionType(fty, [fty, fty]))
        return _cas_loop(fl, p, ity, lambda old: to_bits(b, b.call(intr, [to_value(b, old, t), vals[0]]), t))
    raise fl.unsupported(ins, "has no LLVM lowering for this floating-point atomic")
