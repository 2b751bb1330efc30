"""Which kernels the warp-as-SIMD lowering takes: a whitelist of instruction forms, checked
before any IR is built, so a kernel either runs wholly on the vector path or wholly on the
per-thread path (``refusal`` names the first instruction it cannot take, for ``--stats``)."""

from __future__ import annotations

from ...ir import nodes as ptx
from ...ir.sregs import lookup_special
from ...ir.types import ScalarType, StateSpace

_INT = {"b8", "b16", "b32", "b64", "u8", "u16", "u32", "u64", "s8", "s16", "s32", "s64"}
_ALU_INT = {"add", "sub", "mul", "mad", "and", "or", "xor", "not", "shl", "shr", "selp", "setp", "mov", "cvt", "min", "max"}
_F32_OPS = {"add", "sub", "mul", "fma", "setp", "mov", "selp"}
_SPECIAL = {"%tid", "%ntid", "%ctaid", "%nctaid", "%laneid"}
_SPACES = {"global", "shared", "param"}


def refusal(kernel: ptx.Function, layout) -> str | None:
    """None when the vector path takes ``kernel``; else why not (the first refused form)."""
    if kernel.body is None:
        return "no body"
    bar_ids: set[int] = set()
    regs = {n for st in kernel.body.statements if isinstance(st, ptx.VarDecl) for n in st.register_names()}
    for st in kernel.body.statements:
        if isinstance(st, ptx.Block):
            return "a nested `{ }` scope"
        if isinstance(st, ptx.VarDecl) and st.space not in (StateSpace.REG, StateSpace.SHARED):
            return f"a `.{st.space.value}` variable in the body"
        if isinstance(st, ptx.VarDecl) and st.space is StateSpace.REG and st.vector:
            return "a vector register"
        if isinstance(st, ptx.Instruction):
            why = _instruction(st, layout, bar_ids, regs)
            if why:
                return f"`{st}`: {why}"
    if len(bar_ids) > 1:
        return "barriers with several ids"
    return None


def _operands_ok(ins: ptx.Instruction, layout, regs: set[str]) -> str | None:
    for op in ins.operands:
        for o in (op.first, op.second) if isinstance(op, ptx.Pair) else (op,):
            if isinstance(o, ptx.Negated):
                o = o.operand
            if isinstance(o, ptx.Register) and o.name not in _SPECIAL and o.name not in regs \
                    and lookup_special(o.name, o.component) is not None:
                return f"special register {o.name}"
            if isinstance(o, ptx.Symbol) and ins.opcode != "bra" and o.name not in layout.shared:
                return f"symbol `{o.name}`"
            if isinstance(o, ptx.Address):
                if isinstance(o.base, ptx.Symbol) and o.base.name not in layout.shared \
                        and o.base.name not in layout.params:
                    return f"address of `{o.base.name}`"
                if o.extra:
                    return "an address with extra operands"
            if isinstance(o, (ptx.Vector, ptx.Offset, ptx.ParenList)):
                return "a vector, offset or list operand"
    return None


def _instruction(ins: ptx.Instruction, layout, bar_ids: set[int], regs: set[str]) -> str | None:
    op, mods, types = ins.opcode, set(ins.modifiers), [t.value for t in ins.types]
    bad = _operands_ok(ins, layout, regs)
    if bad:
        return bad
    if op in ("bra", "ret", "exit"):
        return None if not (mods - {"uni"}) else "a branch form"
    if op in ("bar", "barrier"):
        if ins.guard is not None or len(ins.operands) != 1 or not isinstance(ins.operands[0], ptx.Immediate):
            return "a guarded or counted barrier"
        if not (mods & {"sync"}) or mods - {"sync", "aligned"}:
            return "a barrier other than bar.sync"
        bar_ids.add(int(ins.operands[0].value))
        return None
    if op == "shfl":
        if ins.guard is not None or types != ["b32"] or mods - {"sync", "up", "down", "bfly", "idx", "b32"}:
            return "a shfl form"
        return None
    if op in ("ld", "st"):
        space = ins.mod("space")
        if space not in _SPACES or (op == "st" and space == "param"):
            return f"a `{op}` in the {space or 'generic'} space"
        if mods - {space, *types, "nc", "ca", "cg", "cs", "lu", "cv", "wb", "wt"} or len(types) != 1 \
                or types[0] not in _INT | {"f32", "f64"}:
            return f"a `{op}` form"
        if isinstance(ins.operands[0 if op == "st" else 1], ptx.Address) and space == "param" \
                and not isinstance(ins.operands[1].base, ptx.Symbol):
            return "a `.param` access through a register"
        return None
    if op == "cvta":
        return None if mods == {"to", "global", "u64"} else "a cvta form"
    return _alu(ins, op, mods, types)


def _alu(ins, op, mods, types) -> str | None:
    if not types:
        return "no type"
    t = types[0]
    if op == "cvt":
        if len(types) != 2 or not set(types) <= _INT or mods - set(types):
            return "a cvt form"
        return None
    if t == "pred":
        return None if op in ("and", "or", "xor", "not", "mov") and mods == {"pred"} else "a predicate form"
    if t == "f32":
        if op not in _F32_OPS or mods - {"f32", "rn", *_FLOAT_CMPS} or (op == "fma" and "rn" not in mods):
            return "an f32 form"
        if op == "setp" and (len(ins.operands) != 3 or isinstance(ins.operands[0], ptx.Pair)):
            return "a setp form"
        return None
    if t not in _INT or op not in _ALU_INT:
        return "an opcode or type the vector path does not lower yet"
    extra = mods - {t, "lo"} - ({"wide"} if op in ("mul", "mad") else set()) - _INT_CMPS
    if extra or (op in ("mul", "mad") and ins.mod("hilo") == "hi"):
        return "a modifier the vector path does not lower yet"
    if op in ("min", "max") and (t.startswith("b") or "relu" in mods):
        return "a min/max form"
    if op == "setp" and (len(ins.operands) != 3 or isinstance(ins.operands[0], ptx.Pair)):
        return "a setp form"
    if op == "setp" and ScalarType(t).bits < 16 or op == "mul" and "wide" in mods and ScalarType(t).bits > 32:
        return "a narrow setp or 64-bit mul.wide"
    return None


_FLOAT_CMPS = {"eq", "ne", "lt", "le", "gt", "ge", "equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan"}
_INT_CMPS = {"eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi", "hs"}
