"""Poll loops: the spin-waits whose threads the scheduler runs last.

Lowest-PC-first scheduling (``executor``) runs the threads at the lowest PC first. A thread
spinning in a loop that only reads memory waits for a write of another thread; if that thread
stands at a higher PC it would only run on the scheduler's occasional fairness turns, and a grid
barrier of cooperative groups (``machine.cooperative``) whose CTAs reach it on different paths
(two inlined copies of ``grid.sync()``) spun past the watchdog. So a loop back edge is a *poll
edge* when the loop body between its target and the branch writes nothing and synchronises with
nothing (loads, arithmetic, compares, moves, branches, fences, nanosleep) and reads memory with
a strong load (``.volatile``, ``.relaxed``, ``.acquire``: a plain load may legally be hoisted out of
a loop, so a spin on it has no defined end). Threads that take a poll edge wait at the back of
the queue: they run only when no other thread can, which is when a poll could see a new value.
"""

from __future__ import annotations

from ..machine.mbarrier import WAIT_OPCODES as MBARRIER_WAITS
from .program import Control, Program

# What a poll loop may execute besides its strong load (nothing that writes or waits).
_READ_ONLY = frozenset({
    "ld", "ldu", "mov", "cvt", "cvta", "setp", "selp", "set", "and", "or", "xor", "not", "cnot", "add", "sub",
    "mul", "mad", "shl", "shr", "bfe", "min", "max", "abs", "neg", "popc", "clz", "bra", "membar", "fence",
    "nanosleep", "isspacep", "prmt", "lop3",
}) | MBARRIER_WAITS
_STRONG = frozenset({"volatile", "relaxed", "acquire"})
_LONGEST = 64               # instructions: a spin-wait is a handful; longer loops are work


def poll_edges(program: Program) -> frozenset[int]:
    """PCs of the backward branches that close poll loops (see the module docstring)."""
    ops = program.ops
    edges = set()
    for op in ops:
        if op.control != Control.BRANCH or not 0 <= op.target <= op.pc:
            continue
        if op.pc - op.target > _LONGEST:
            continue
        body = ops[op.target:op.pc + 1]
        if all(o.ins.opcode in _READ_ONLY for o in body) and \
                any((o.ins.opcode == "ld" and _STRONG.intersection(o.ins.modifiers))
                    or o.ins.opcode in MBARRIER_WAITS for o in body):    # a phase test reads the object
            edges.add(op.pc)
    return frozenset(edges)
