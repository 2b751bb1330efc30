"""Control flow (PTX ISA §9.7.10) and the miscellaneous §9.7.13 instructions: bra, brx.idx, call,
ret, exit, trap, brkpt, nanosleep."""

from __future__ import annotations

from llvmlite import ir

from ...ir import nodes as ptx
from ...ir.types import ScalarType
from ..function import FunctionLowering
from . import lowers
from .common import U32


@lowers("nanosleep")
def _nanosleep(fl, ins):
    """Suspends the thread for a while: a chance for the threads it waits for to run."""
    fl.hooks.yield_thread(fl, ins)


@lowers("brx.idx")
def _brx_idx(fl, ins):
    """`brx.idx index, tlist` (§9.7.12.2): a switch over the `.branchtargets` labels; an index
    past the list traps (undefined in the ISA)."""
    index, tlist = ins.operands[0], ins.operands[1]
    targets = fl.branch_targets(tlist.name) if isinstance(tlist, ptx.Symbol) else None
    if targets is None:
        raise fl.unsupported(ins, f"branches through `{tlist}`, which is not a `.branchtargets` list")
    b = fl.b
    i = fl.read(index, U32)
    bad = fl.new_block("brx_bad")
    sw = b.switch(i, bad)
    for k, name in enumerate(targets):
        sw.add_case(ir.IntType(32)(k), fl.label(name))
    b.position_at_end(bad)
    fl.hooks.trap(fl, ins, "brx.idx")


@lowers("bra")
def _bra(fl: FunctionLowering, ins: ptx.Instruction) -> None:
    target = ins.operands[0]
    if not isinstance(target, ptx.Symbol) or len(ins.operands) != 1:
        raise fl.unsupported(ins, "is an indirect branch (`bra` through `.branchtargets`)")
    blk = fl.label(target.name)
    if ins.guard is None:
        fl.b.branch(blk)
        return
    p = fl.read(ins.guard.register, ScalarType.PRED)
    fall = fl.new_block("fall")
    if ins.guard.negated:
        fl.b.cbranch(p, fall, blk)
    else:
        fl.b.cbranch(p, blk, fall)
    fl.b.position_at_end(fall)


@lowers("ret")
def _ret(fl: FunctionLowering, ins: ptx.Instruction) -> None:
    if fl.inline:
        fl.b.branch(fl.inline[-1][1])
    elif fl.is_kernel:
        fl.hooks.exit_thread(fl, ins)
    else:
        fl.ml.return_from(fl)


@lowers("exit")
def _exit(fl: FunctionLowering, ins: ptx.Instruction) -> None:
    if fl.is_kernel:
        fl.hooks.exit_thread(fl, ins)
    else:
        fl.hooks.exit_from_function(fl, ins)


@lowers("trap", "brkpt")
def _trap(fl: FunctionLowering, ins: ptx.Instruction) -> None:
    fl.hooks.trap(fl, ins, ins.opcode)


@lowers("call")
def _call(fl: FunctionLowering, ins: ptx.Instruction) -> None:
    ops = list(ins.operands)
    rets: tuple = ()
    if ops and isinstance(ops[0], ptx.ParenList):
        rets = ops.pop(0).elements
    callee = ops.pop(0)
    args = ops.pop(0).elements if ops and isinstance(ops[0], ptx.ParenList) else ()
    if not isinstance(callee, ptx.Symbol):
        return _indirect_call(fl, ins, callee, rets, args, ops)
    if callee.name in ("vprintf", "__assertfail", "malloc", "free") or callee.name in fl.hooks.extra_builtins:
        fl.hooks.builtin_call(fl, ins, callee.name, rets, args)
        return
    target = fl.ml.ptx_functions.get(callee.name)
    if target is not None and target.body is not None and fl.ml.synchronises(target):
        if any(callee.name == p.split("#")[0] for p, _ in fl.inline):
            raise fl.unsupported(ins, "recurses into a function that synchronises (barrier, warp "
                                      "instruction or printf), which cannot be inlined")
        names = [d.name for d in (*target.returns, *target.params)]
        bufs = {}
        for name, op in zip(names, (*rets, *args)):
            buf = fl.param_buffer(op.name) if isinstance(op, ptx.Symbol) else None
            if buf is None:
                raise fl.unsupported(ins, _not_param(op))
            bufs[name] = buf
        fl.inline_call(target, bufs)
        return
    fn = fl.ml.device_function(callee.name, ins)
    ptrs = []
    for op in (*rets, *args):
        if not isinstance(op, ptx.Symbol) or fl.param_buffer(op.name) is None:
            raise fl.unsupported(ins, _not_param(op))
        ptrs.append(fl.param_buffer(op.name))
    fl.hooks.before_call(fl)
    status = fl.b.call(fn, [*fl.hooks.function_prefix_values(fl), *ptrs])
    fl.hooks.after_call(fl, status)


def _not_param(op) -> str:
    """Why an argument the lifter cannot bind is refused (ptxas accepts registers and
    immediates in non-ABI calls; the lifter passes `.param` buffers only)."""
    what = "a register" if isinstance(op, ptx.Register) else "an immediate" if isinstance(op, ptx.Immediate) \
        else "not a `.param` variable"
    if what.startswith("not"):
        return f"passes `{op}`, which is {what}"
    return (f"passes `{op}`, which is {what}: calls that pass registers or immediates instead of "
            f"`.param` variables are not translated")


def _indirect_call(fl: FunctionLowering, ins: ptx.Instruction, callee, rets, args, rest) -> None:
    """`call (r), %fptr, (a), proto;`: compare the pointer with every function of a matching
    shape (or the `.calltargets` list) and call the one it names; anything else faults."""
    candidates = [f for f in fl.ml.ptx_functions.values()
                  if f.body is not None and not f.is_kernel
                  and len(f.params) == len(args) and len(f.returns) == len(rets)]
    if not candidates:
        raise fl.unsupported(ins, "is an indirect call with no function of a matching shape in the module")
    ptrs = []
    for op in (*rets, *args):
        if not isinstance(op, ptx.Symbol) or fl.param_buffer(op.name) is None:
            raise fl.unsupported(ins, _not_param(op))
        ptrs.append(fl.param_buffer(op.name))
    b = fl.b
    target = fl.read(callee, ScalarType.U64)
    done = fl.new_block("icall_done")
    for f in candidates:
        if fl.ml.synchronises(f):
            raise fl.unsupported(ins, f"may call `{f.name}` indirectly, which synchronises")
        addr = fl.hooks.symbol_address(fl, f.name, None, ins)
        hit, miss = fl.new_block(f"icall_{f.name}"), fl.new_block("icall_next")
        b.cbranch(b.icmp_unsigned("==", target, addr), hit, miss)
        b.position_at_end(hit)
        fn = fl.ml.device_function(f.name, ins)
        fl.hooks.before_call(fl)
        status = b.call(fn, [*fl.hooks.function_prefix_values(fl), *ptrs])
        fl.hooks.after_call(fl, status)
        b.branch(done)
        b.position_at_end(miss)
    fl.hooks.bad_call(fl, ins, target)
    b.position_at_end(done)
