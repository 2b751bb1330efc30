"""Instruction lowerings, registered per opcode (``@lowers("add")``), one module per ISA chapter."""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

from ...ir import nodes as ptx

if TYPE_CHECKING:
    from ..function import FunctionLowering

Lowering = Callable[["FunctionLowering", ptx.Instruction], None]
LOWERINGS: dict[str, Lowering] = {}


def lowers(*opcodes: str) -> Callable[[Lowering], Lowering]:
    def register(fn: Lowering) -> Lowering:
        for op in opcodes:
            LOWERINGS[op] = fn
        return fn
    return register


def lower_instruction(fl: "FunctionLowering", ins: ptx.Instruction) -> None:
    fn = LOWERINGS.get(ins.opcode)
    if fn is None:
        raise fl.unsupported(ins, f"has no lowering to LLVM yet (`{ins.opcode}`)")
    fn(fl, ins)


def _load_all() -> None:
    from . import (arith, async_copy, atomics, compare, control, convert, floating, integer,  # noqa: F401
                   logic, matrix, memory, move, surface, sync, texture, warp)  # (registration; the same chapter files as interp.ops)
    from . import wgmma  # noqa: F401  (PTX ISA §9.7.15)
    from . import mbarrier  # noqa: F401  (PTX ISA §9.7.13.15, §9.7.9.25.4)
    from . import tma  # noqa: F401  (PTX ISA §9.7.9.25.5)


_load_all()
