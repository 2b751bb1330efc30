"""Integer instructions with PTX-specific rules, lowered through ``ptxvm.lift.intops``."""

from __future__ import annotations

from ...ir import nodes as ptx
from ..function import FunctionLowering


def lower_generic(fl: FunctionLowering, ins: ptx.Instruction) -> None:
    raise fl.unsupported(ins, "has no LLVM lowering yet")
