"""Control flow (PTX ISA §9.7.10) and the miscellaneous §9.7.13 instructions: bra, brx.idx, call,
ret, exit, trap, brkpt, nanosleep."""

from __future__ import annotations

from llvmlite import ir

from ...ir import nodes as ptx
from ...ir.call_args import immediate_argument_bits
from ...ir.types import ScalarType
from ..function import FunctionLowering, storage_type, to_bits
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
        fl.store_register_returns()
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
        ptrs, results = _bind(fl, ins, target, rets, args)
        names = [d.name for d in (*target.returns, *target.params)]
        fl.inline_call(target, dict(zip(names, ptrs)))
        results()
        return
    fn = fl.ml.device_function(callee.name, ins)
    ptrs, results = _bind(fl, ins, target, rets, args)
    fl.hooks.before_call(fl)
    status = fl.b.call(fn, [*fl.hooks.function_prefix_values(fl), *ptrs])
    fl.hooks.after_call(fl, status)
    results()


def _bind(fl: FunctionLowering, ins: ptx.Instruction, formals, rets, args):
    """One i8* per formal (results first, then arguments, as device functions take them) and a
    function that copies the results into the caller's registers once the call returned.

    Arguments are passed by value (PTX ISA §9.7.12.5): a caller's `.param` variable is passed as
    its own buffer; a register or an immediate (``ir.call_args``' bits) is stored into a fresh
    buffer of the formal's size; a register result gets a buffer read back after the call. The
    callee sees bytes either way (function.py loads its `.reg` formals from them), so `.reg` and
    `.param` formals take any of these, as ptxas allows."""
    decls = (*formals.returns, *formals.params)
    ptrs, after = [], []
    for i, (op, formal) in enumerate(zip((*rets, *args), decls)):
        is_result = i < len(rets)
        buf = fl.param_buffer(op.name) if isinstance(op, ptx.Symbol) else None
        if buf is not None:
            ptrs.append(buf)
            continue
        if not isinstance(op, (ptx.Register, ptx.Immediate, ptx.Sink)) or (
                isinstance(op, (ptx.Immediate, ptx.Sink)) and is_result == isinstance(op, ptx.Immediate)):
            raise fl.unsupported(ins, f"passes `{op}`, which is not a `.param` variable, register or immediate")
        t = formal.type
        if formal.vector:
            ptrs.append(_vector_argument(fl, ins, op, formal, is_result, after))
            continue
        if formal.array:
            raise fl.unsupported(ins, f"passes `{op}` for the array parameter `{formal.name}`, which takes a "
                                      "`.param` variable")
        buf, slot = fl.argument_buffer(t, f"arg_{formal.name.lstrip('%')}")
        if is_result:
            if isinstance(op, ptx.Register):
                after.append((op, t, slot))
        elif isinstance(op, ptx.Immediate):
            try:
                bits = immediate_argument_bits(op, t)
            except ValueError as e:
                raise fl.unsupported(ins, f"passes `{op}` for `{formal.name}`: {e}") from None
            fl.b.store(storage_type(t)(bits), slot)
        else:
            fl.b.store(_register_bits(fl, op, t), slot)
        ptrs.append(buf)

    def results() -> None:
        for op, t, slot in after:
            fl.write(op, t, fl.b.load(slot))
    return ptrs, results


def _vector_argument(fl: FunctionLowering, ins, op, formal: ptx.VarDecl, is_result: bool, after: list) -> ir.Value:
    """The by-value buffer of a `.reg .v2`/`.v4` formal: the bytes of a vector register's
    elements in order (or of a scalar register of the vector's size), copied in before the call
    or, for a result, queued in ``after`` to be read back into the caller's registers."""
    if isinstance(op, ptx.Immediate):
        raise fl.unsupported(ins, f"passes `{op}` for `{formal.name}`, a .v{formal.vector} vector register "
                                  "parameter, which takes a register or a `.param` variable")
    size = formal.element_bytes()
    buf = fl.alloca_bytes(size, max(formal.type.bits // 8, 1), f"arg_{formal.name.lstrip('%')}")
    if isinstance(op, ptx.Sink):
        return buf
    width = fl.vector_width(op.name) if op.component is None else 0
    names = [ptx.Register(op.name, c) for c in "xyzw"[:width]] if width else [op]
    parts = fl.register_parts(op.name) if width else [(0, *fl.register(op))]
    for (off, slot, t), reg in zip(parts, names):
        part = fl.buffer_part(None, buf, off, t)
        if is_result:
            after.append((reg, t, part))
        else:
            fl.b.store(fl.b.load(slot), part)
    return buf


def _register_bits(fl: FunctionLowering, op: ptx.Register, t: ScalarType) -> ir.Value:
    """The register's value as the raw bits of a ``t`` formal (the check made their sizes equal)."""
    v = fl.read(op, t)
    return v if t is ScalarType.PRED else to_bits(fl.b, v, t)


def _prototype(fl: FunctionLowering, rest) -> ptx.CallPrototype | None:
    """The `.callprototype` a call names, from the body it sits in (the function lowered, or one
    lowered inline into it)."""
    names = {o.name for o in rest if isinstance(o, ptx.Symbol)}
    inlined = (fl.ml.ptx_functions.get(prefix.split("#")[0]) for prefix, _ in fl.inline)
    for f in (*(f for f in inlined if f is not None and f.body is not None), fl.fn):
        hit = next((s for s in f.body.walk() if isinstance(s, ptx.CallPrototype) and s.name in names), None)
        if hit is not None:
            return hit
    return None


def _indirect_call(fl: FunctionLowering, ins: ptx.Instruction, callee, rets, args, rest) -> None:
    """`call (r), %fptr, (a), proto;`: compare the pointer with every function of a matching
    shape (or the `.calltargets` list) and call the one it names; anything else faults. The
    arguments are bound once, for the prototype's formals (else the first candidate's)."""
    candidates = [f for f in fl.ml.ptx_functions.values()
                  if f.body is not None and not f.is_kernel
                  and len(f.params) == len(args) and len(f.returns) == len(rets)]
    if not candidates:
        raise fl.unsupported(ins, "is an indirect call with no function of a matching shape in the module")
    ptrs, results = _bind(fl, ins, _prototype(fl, rest) or candidates[0], rets, args)
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
    results()
