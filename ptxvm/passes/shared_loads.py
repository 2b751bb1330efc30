"""Groups of `ld.shared` one range check can cover (the host JIT checks every access).

A group is two or more plain ``ld.shared`` through one base register with constant offsets, in
a straight-line stretch of one statement list where the register keeps its value and only
``pure`` instructions (isa class: no effect beyond their destination registers, no fault) lie
between them.  The host checks the whole group's range with one compare at its first load; if
that fails, a slow path checks each load in program order and faults at the first bad one,
exactly where the loads one by one would have: nothing between them is observable.
"""

from __future__ import annotations

from ..ir import nodes as ir
from ..isa import OpClass, opcodes_in

# (instruction, base register, offset, size in bytes), in program order
Member = tuple[ir.Instruction, ir.Register, int, int]
Groups = dict[int, tuple[list[Member], int]]


def space_of(ins: ir.Instruction) -> str:
    """The state space an ld/st addresses (``generic`` when none is written)."""
    if ins.opcode == "ld.global.nc":
        return "global"
    s = ins.mod("space")
    return "generic" if s is None else s.split("::")[0]


def _elements(op: ir.Operand) -> tuple[ir.Operand, ...]:
    return op.elements if isinstance(op, ir.Vector) else (op,)


def _dest_registers(op: ir.Operand) -> list[tuple[str, str | None]]:
    if isinstance(op, ir.Register):
        return [(op.name, op.component)]
    if isinstance(op, ir.Vector):
        return [r for e in op.elements for r in _dest_registers(e)]
    if isinstance(op, ir.Pair):
        return [r for e in (op.first, op.second) for r in _dest_registers(e)]
    return []


def _member(st: ir.Instruction) -> Member | None:
    """``st`` as a group member: a plain, unguarded `ld.shared` through a register base."""
    a = st.operands[1] if len(st.operands) > 1 else None
    if not (st.opcode == "ld" and st.guard is None and space_of(st) == "shared"
            and not ({"volatile", "relaxed", "acquire"} & set(st.modifiers))
            and isinstance(a, ir.Address) and isinstance(a.base, ir.Register)
            and not a.extra and 0 <= a.offset < (1 << 31) and st.types):
        return None
    size = max(st.types[0].bits // 8, 1) * len(_elements(st.operands[0]))
    return (st, a.base, a.offset, size)


def shared_load_groups(body: ir.Block, shared_bytes: int) -> Groups:
    """id(instruction) -> (members, index) for the groups of ``body`` that fit in a
    ``shared_bytes`` window; members as ``Member`` (see the module docstring)."""
    pure = opcodes_in(OpClass.PURE)
    groups: Groups = {}
    seen: set[int] = set()

    def close(open_: dict) -> None:
        for members in open_.values():
            if len(members) > 1 and max(o + z for _i, _r, o, z in members) <= shared_bytes:
                for k, m in enumerate(members):
                    groups[id(m[0])] = (members, k)
        open_.clear()

    def scan(block: ir.Block) -> None:
        open_: dict = {}
        for st in block.statements:
            if isinstance(st, ir.Block):
                close(open_)
                scan(st)
                continue
            if not isinstance(st, ir.Instruction):
                if isinstance(st, ir.Label):
                    close(open_)
                continue
            if id(st) in seen:                   # one object at two places: never grouped
                groups.pop(id(st), None)
                close(open_)
                continue
            seen.add(id(st))
            member = _member(st)
            if member is not None:
                open_.setdefault((member[1].name, member[1].component), []).append(member)
            elif st.opcode not in pure:
                close(open_)
                continue
            for reg in _dest_registers(st.operands[0]) if st.operands else ():
                members = open_.pop(reg, None)
                if members is not None:
                    open_[("#closed", id(members))] = members
        close(open_)

    scan(body)
    return groups
