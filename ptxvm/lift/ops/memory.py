"""Memory instructions (PTX ISA §9.7.9): ld, ldu, st, the cache hints (prefetch, discard,
applypriority, createpolicy) and the address-space queries cvta and isspacep."""

from __future__ import annotations

from llvmlite import ir

from ...ir import nodes as ptx
from ...ir.types import ScalarType
from ..function import FunctionLowering, resize, to_bits, to_value
from . import lowers


_SPACES = ("global", "shared", "local", "const", "param")


def _space(ins: ptx.Instruction) -> str:
    s = ins.mod("space") or "generic"
    return s.split("::")[0]


@lowers("cvta")
def _cvta(fl: FunctionLowering, ins: ptx.Instruction) -> None:
    t = ins.types[0]
    d, a = ins.operands
    to_generic = ins.mod("to") is None
    x = resize(fl.b, fl.read(a, t), 64, False)
    r = fl.hooks.cvta(fl, x, _space(ins), to_generic)
    fl.write(d, t, resize(fl.b, r, max(t.bits, 8), False))


@lowers("isspacep")
def _isspacep(fl: FunctionLowering, ins: ptx.Instruction) -> None:
    d, a = ins.operands
    x = fl.read(a, ScalarType.U64)
    fl.write(d, ScalarType.PRED, fl.hooks.isspacep(fl, x, _space(ins)))


def space_of(ins: ptx.Instruction) -> str:
    if ins.opcode == "ld.global.nc":
        return "global"
    s = ins.mod("space")
    return "generic" if s is None else s.split("::")[0]


def _elements(op: ptx.Operand) -> tuple[ptx.Operand, ...]:
    return op.elements if isinstance(op, ptx.Vector) else (op,)


def param_bytes(fl: FunctionLowering, name: str, buf: ir.Value) -> int | None:
    """The size of the `.param` variable ``name`` whose storage is ``buf``: the array a call site
    or an inlined callee's caller allocated, or the declaration of this function's own parameter."""
    v = buf.operands[0] if isinstance(buf, ir.CastInstr) and buf.opname == "bitcast" else buf
    if isinstance(v, ir.AllocaInstr) and isinstance(v.type.pointee, ir.ArrayType):
        return v.type.pointee.count
    for d in (*fl.fn.params, *fl.fn.returns):
        if d.name == name:
            return d.size_bytes() or 0
    return None


def pointer(fl: FunctionLowering, ins: ptx.Instruction, addr: ptx.Address, size: int, *, write: bool,
            element: int | None = None) -> ir.Value:
    """An i8* to ``size`` bytes at the address operand (checked by the target where it must be).

    `.param` variables are addressed directly, so they are checked here: a constant offset
    outside a per-thread variable is refused when the kernel is loaded (as the interpreter
    does), and a kernel parameter offset is checked by the host target against the block."""
    space = space_of(ins)
    b = fl.b
    if space == "param":
        if isinstance(addr.base, ptx.Symbol):
            buf = fl.param_buffer(addr.base.name)
            if buf is not None:
                have = param_bytes(fl, addr.base.name, buf)
                if have is not None and (addr.offset < 0 or addr.offset + size > have):
                    raise fl.unsupported(ins, f"accesses bytes {addr.offset}..{addr.offset + size - 1} of a "
                                              f"{have}-byte .param variable")
                return b.gep(buf, [ir.IntType(64)(addr.offset)]) if addr.offset else buf
            offset = fl.ml.layout.params.get(addr.base.name)
            if offset is not None and fl.is_kernel:
                if write:
                    raise fl.unsupported(ins, "writes a kernel parameter")
                e = element or size
                return fl.hooks.param_pointer(fl, offset + addr.offset, element=e, count=size // e, ins=ins)
        if isinstance(addr.base, ptx.Symbol) or ins.mod("space") == "param::func":
            raise fl.unsupported(ins, "addresses `.param` space through a register")
        # A kernel parameter's address taken with `mov` (§5.1.6.1): the target reads the launch's
        # parameter block through it (the host checks it against the block; AMD: the kernarg).
    return fl.hooks.access(fl, space, fl.address(addr, space), size, ins, write=write)


def _lockstep(fl: FunctionLowering, ins: ptx.Instruction) -> None:
    if "volatile" in ins.modifiers and space_of(ins) in ("shared", "generic"):
        fl.hooks.warp_lockstep(fl, ins)


def _ordering(ins: ptx.Instruction) -> str | None:
    """Orderings that matter when CTAs run concurrently (spin-waits on flags)."""
    if "volatile" in ins.modifiers or "relaxed" in ins.modifiers:
        return "monotonic"
    if "acquire" in ins.modifiers:
        return "acquire"
    if "release" in ins.modifiers:
        return "release"
    return None


@lowers("ld", "ldu", "ld.global.nc")
def _ld(fl: FunctionLowering, ins: ptx.Instruction) -> None:
    t = ins.types[0]
    _lockstep(fl, ins)
    d, a = ins.operands[0], ins.operands[1]
    dsts = _elements(d)
    ebytes = max(t.bits // 8, 1)
    b = fl.b
    base = pointer(fl, ins, a, ebytes * len(dsts), write=False, element=ebytes)
    ity = ir.IntType(ebytes * 8)
    order = _ordering(ins)
    for i, e in enumerate(dsts):
        p = b.bitcast(b.gep(base, [ir.IntType(64)(i * ebytes)]) if i else base, ir.PointerType(ity))
        if order is not None and fl.hooks.orders_accesses_in_lowering:
            raw = b.load_atomic(p, "acquire" if order == "acquire" else "monotonic", ebytes)
        else:
            raw = b.load(p, align=1)
        if t is ScalarType.PRED:
            raise fl.unsupported(ins, "loads a predicate")
        fl.write(e, t, to_value(b, raw, t) if t.bits == ebytes * 8 else raw)


@lowers("st")
def _st(fl: FunctionLowering, ins: ptx.Instruction) -> None:
    t = ins.types[0]
    _lockstep(fl, ins)
    a, s = ins.operands[0], ins.operands[1]
    srcs = _elements(s)
    ebytes = max(t.bits // 8, 1)
    b = fl.b
    base = pointer(fl, ins, a, ebytes * len(srcs), write=True, element=ebytes)
    ity = ir.IntType(ebytes * 8)
    order = _ordering(ins)
    for i, e in enumerate(srcs):
        v = to_bits(b, fl.read(e, t), t)
        if v.type.width != ebytes * 8:
            v = b.trunc(v, ity) if v.type.width > ebytes * 8 else b.zext(v, ity)
        p = b.bitcast(b.gep(base, [ir.IntType(64)(i * ebytes)]) if i else base, ir.PointerType(ity))
        if order is not None and fl.hooks.orders_accesses_in_lowering:
            b.store_atomic(v, p, "release" if order == "release" else "monotonic", ebytes)
        else:
            b.store(v, p, align=1)


@lowers("prefetch", "prefetchu", "discard", "applypriority", "createpolicy")
def _nop(fl: FunctionLowering, ins: ptx.Instruction) -> None:
    """Sequentially these change nothing (cache hints); a policy is an opaque 0."""
    if ins.opcode == "createpolicy":
        fl.write(ins.operands[0], ScalarType.B64, ir.IntType(64)(0))
