"""Instruction implementations, one module per PTX ISA chapter.

Each implementation is a *builder*: given the compile context and an IR
instruction it returns ``(run, control, target)`` where ``run(batch, lanes)``
executes the instruction for the lanes (an index array of threads that stand
at it and whose guard holds). Builders resolve operands once, at compile time.
"""

from __future__ import annotations

from typing import Callable

IMPLS: dict[str, Callable] = {}


def impl(*opcodes: str):
    def register(fn):
        for name in opcodes:
            IMPLS[name] = fn
        return fn
    return register


def load_all() -> dict[str, Callable]:
    from . import (arith, async_copy, atomics, compare, control, convert, floating, integer,  # noqa: F401
                   logic, matrix, memory, move, sync, warp)  # (registration; the chapter files of lift.ops)
    from . import texture, surface  # noqa: F401  (PTX ISA §9.7.10-11)
    from . import wgmma  # noqa: F401  (PTX ISA §9.7.15)
    from . import mbarrier  # noqa: F401  (PTX ISA §9.7.13.15, §9.7.9.25.4)
    from . import tma  # noqa: F401  (PTX ISA §9.7.9.25.5)
    return IMPLS
