"""Control flow and CTA-wide synchronisation (PTX ISA §9.7.12, §9.7.13)."""

from __future__ import annotations

from ...ir import nodes as ir
from ...ir.types import ScalarType
from ..program import CompileContext, Control, reader
from . import impl


@impl("bra")
def _bra(ctx: CompileContext, ins: ir.Instruction):
    target = ins.operands[0]
    if not isinstance(target, ir.Symbol) or target.name not in ctx.labels:
        raise ctx.unsupported(ins, f"branches to `{target}`, which is not a label of this kernel")
    return None, Control.BRANCH, ctx.labels[target.name]


@impl("exit")
def _exit(ctx: CompileContext, ins: ir.Instruction):
    return None, Control.EXIT, -1


@impl("trap", "brkpt")
def _trap(ctx: CompileContext, ins: ir.Instruction):
    from ...errors import TrapError

    def run(b, lanes):
        raise _Trap(int(lanes[0]), f"`{ins.opcode}` executed")
    return run, Control.NEXT, -1


class _Trap(Exception):
    def __init__(self, lane: int, message: str) -> None:
        super().__init__(message)
        self.lane, self.message = lane, message


@impl("bar", "barrier")
def _bar(ctx: CompileContext, ins: ir.Instruction):
    if ins.has("red") or ins.has("arrive") or ins.has("warp"):
        raise ctx.unsupported(ins, "is not executable yet")
    bid = reader(ctx, ins.operands[0], ScalarType.U32, ins) if ins.operands else None
    count = reader(ctx, ins.operands[1], ScalarType.U32, ins) if len(ins.operands) > 1 else None

    def run(b, lanes):
        ids = bid(b, lanes).astype("int64") if bid is not None else 0
        b.bar_id[lanes] = ids
        b.bar_count[lanes] = count(b, lanes).astype("int64") if count is not None else 0
    return run, Control.BARRIER, -1
