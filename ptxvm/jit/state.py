"""What the host hooks keep per lowered function: one typed record instead of attributes set on
the shared lowering object (``FunctionLowering.target_state``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple

from llvmlite import ir

if TYPE_CHECKING:
    from ..lift.function import FunctionLowering
    from ..passes.shared_loads import Groups


def field_ptr(b: ir.IRBuilder, base: ir.Value, offset: int, ty: ir.Type) -> ir.Value:
    """A ``ty*`` to the field at byte ``offset`` of a record (thread, CTA, exchange slots)."""
    p = b.gep(base, [ir.IntType(64)(offset)]) if offset else base
    return b.bitcast(p, ir.PointerType(ty))


class Stop(NamedTuple):
    """A point where the thread returns to the driver and later resumes (barrier, warp, printf)."""

    k: int                   # the resume index (T_RESUME), from 1
    state: int               # the thread state the kernel returns there
    stop: ir.Block           # saves registers, returns ``state``
    resume: ir.Block         # reloads registers (the resume switch's case ``k``)
    cont: ir.Block           # where the code continues after either


@dataclass
class GroupCheck:
    """A shared-load group's one range check (``CheckedMemory._grouped_check``)."""

    base: ir.Value           # the group's base address (i64)
    tail: ir.Block           # the slow path's next check
    resume: ir.Block         # the fast path, where the group's first load continues


@dataclass
class HostFunctionState:
    """The host JIT's state of one function being lowered."""

    ctx: ir.Value                               # i64*: the launch context (X_* slots)
    thr: ir.Value                               # i8*: this thread's record (T_* fields)
    steps_reg: ir.Value                         # executed instructions (a hidden register)
    shared_groups: Groups                       # ld.shared groups with one range check
    limit_reg: ir.Value | None = None           # kernels: the thread's step limit (quantum)
    fresh: ir.Value | None = None               # kernels: i1*, started in this call (not resumed)
    frame_cost: ir.GlobalVariable | None = None  # `.func`s: host stack bytes per activation
    stops: list[Stop] = field(default_factory=list)
    group_state: dict[int, GroupCheck | None] = field(default_factory=dict)
    # watchdog reports waiting for their stretch's first instruction: (store, placeholder site)
    watchdog_sites: list[tuple[ir.Instruction, ir.Constant]] = field(default_factory=list)


def host_state(fl: FunctionLowering) -> HostFunctionState:
    """``fl``'s host state (created by ``HostHooks.new_function_state``)."""
    return fl.target_state  # type: ignore[return-value]   # hot: every context access
