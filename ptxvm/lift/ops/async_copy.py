"""cp.async and its groups (PTX ISA §9.7.9.25.3), done when the instruction executes, as the
interpreter does (ptxvm/interp/ops/async_copy.py says why the ISA allows it): the groups
and waits then have nothing left to do.

A full copy is one checked load of ``cp-size`` bytes and one store. With ``src-size`` (or
``ignore-src``) below ``cp-size`` only the first ``src-size`` source bytes are read, one
checked byte at a time into an integer (no stack buffer, which an AMD GPU would keep in
scratch), and the rest of the destination is zero; the checks come in the interpreter's
order (source alignment, source bytes, destination), so faults match.
"""

from __future__ import annotations

from llvmlite import ir

from ...ir import nodes as ptx
from ...ir.types import ScalarType
from ..function import I32, I64, FunctionLowering
from . import lowers


def _copy_size(fl: FunctionLowering, ins: ptx.Instruction) -> int:
    op = ins.operands[2]
    if not isinstance(op, ptx.Immediate) or int(op.value) not in (4, 8, 16):
        raise fl.unsupported(ins, "needs a cp-size of 4, 8 or 16 (PTX ISA 9.7.9.25.3.1)")
    return int(op.value)


def _source_bytes(fl: FunctionLowering, ins: ptx.Instruction, size: int) -> ir.Value | int:
    """How many source bytes the copy reads: an int when the operands fix it, else an i32."""
    if len(ins.operands) < 4:
        return size
    op = ins.operands[3]
    if isinstance(op, ptx.Immediate):
        return int(op.value)
    reg = fl.register(op) if isinstance(op, ptx.Register) else None
    if isinstance(op, ptx.Negated) or (reg is not None and reg[1] is ScalarType.PRED):
        return fl.b.select(fl.read(op, ScalarType.PRED), I32(0), I32(size))     # ignore-src
    return fl.read(op, ScalarType.U32)


@lowers("cp.async")
def _cp_async(fl: FunctionLowering, ins: ptx.Instruction) -> None:
    size = _copy_size(fl, ins)
    b = fl.b
    word = ir.IntType(8 * size)
    dst_addr = fl.address(ins.operands[0], "shared")
    src_addr = fl.address(ins.operands[1], "global")
    n = _source_bytes(fl, ins, size)

    def store(value: ir.Value) -> None:
        dst = fl.hooks.access(fl, "shared", dst_addr, size, ins, write=True)
        b.store(value, b.bitcast(dst, word.as_pointer()), align=1)

    def full() -> None:
        src = fl.hooks.access(fl, "global", src_addr, size, ins, write=False)
        store(b.load(b.bitcast(src, word.as_pointer()), align=1))

    if isinstance(n, int):
        if n > size:
            fl.hooks.trap(fl, ins, "trap")
            fl.continue_in(fl.new_block("after_trap"))
            return
        if n == size:
            full()
            return
        n = I32(n)
    too_big, ok = fl.new_block("cp_async_src_size"), fl.new_block("cp_async_ok")
    b.cbranch(b.icmp_unsigned(">", n, I32(size)), too_big, ok)
    b.position_at_end(too_big)
    fl.hooks.trap(fl, ins, "trap")        # src-size > cp-size: undefined in the ISA, a trap here
    b.position_at_end(ok)
    whole, part, end = fl.new_block("cp_async_full"), fl.new_block("cp_async_part"), fl.new_block("cp_async_end")
    b.cbranch(b.icmp_unsigned("==", n, I32(size)), whole, part)
    b.position_at_end(whole)
    full()
    b.branch(end)
    b.position_at_end(part)
    some, loop, merge = fl.new_block("cp_async_some"), fl.new_block("cp_async_byte"), fl.new_block("cp_async_merge")
    b.cbranch(b.icmp_unsigned("!=", n, I32(0)), some, merge)
    b.position_at_end(some)
    fl.hooks.access(fl, "global", src_addr, 1, ins, write=False, align=size)   # the source's alignment
    first = b.block
    b.branch(loop)
    b.position_at_end(loop)
    i = b.phi(I32)
    acc = b.phi(word)
    i.add_incoming(I32(0), first)
    acc.add_incoming(word(0), first)
    p = fl.hooks.access(fl, "global", b.add(src_addr, b.zext(i, I64)), 1, ins, write=False, align=1)
    shift = b.mul(i, I32(8))
    new = b.or_(acc, b.shl(b.zext(b.load(p, align=1), word), b.zext(shift, word) if word.width > 32 else shift))
    nxt = b.add(i, I32(1))
    tail = b.block                       # the byte's checks added blocks: the loop's latch is here
    i.add_incoming(nxt, tail)
    acc.add_incoming(new, tail)
    b.cbranch(b.icmp_unsigned("<", nxt, n), loop, merge)
    b.position_at_end(merge)
    value = b.phi(word)
    value.add_incoming(word(0), part)
    value.add_incoming(new, tail)
    store(value)
    b.branch(end)
    b.position_at_end(end)


@lowers("cp.async.commit_group", "cp.async.wait_group", "cp.async.wait_all")
def _groups(fl: FunctionLowering, ins: ptx.Instruction) -> None:
    """Every cp.async completed when it executed: nothing to wait for."""
