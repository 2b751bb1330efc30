"""Cooperative launches (``cudaLaunchCooperativeKernel``; ``Kernel.__call__(..., cooperative=True)``,
``ptxvm run --cooperative``) on the executors of this process.

What cooperative groups' ``this_grid()`` needs, read from the CUDA 13 headers
(``cooperative_groups/details/driver_abi.h``, ``sync.h``): the driver's *grid workspace*, whose
address the kernel reads from the driver-defined special registers ``%envreg1`` (high 32 bits)
and ``%envreg2`` (low 32 bits) (PTX ISA §10.27 leaves their meaning to the driver); the
workspace is ``struct { u32 wsSize; u32 barrier; }``. ``grid.sync()`` is a spin barrier on
``barrier``: after ``bar.sync 0`` each CTA's thread (0,0,0) adds 1 (CTA (0,0,0) adds
``0x80000000 - (nctas - 1)``) with ``atom.add.release.gpu`` and polls with ``ld.acquire.gpu`` until
bit 31 flips, then ``bar.sync 0`` again. Without a cooperative launch the registers read 0,
``is_valid()`` is false and ``sync()`` executes ``trap``.

The barrier completes only if every CTA of the grid runs while the others spin, so a cooperative
launch keeps all its CTAs resident at once (one batch on the interpreter and the host JIT, whose
schedulers switch between spinning and arriving threads; the JIT yields a spinning thread after
a short quantum). ptxvm's device holds ``limits.cooperative_ctas`` CTAs; a larger cooperative grid
is refused before anything runs, as CUDA refuses it (``cudaErrorCooperativeLaunchTooLarge``).
"""

from __future__ import annotations

import numpy as np

from .. import limits
from ..errors import ResourceError
from ..ir import nodes as ir
from .launch import ENVREGS, Environment, Geometry
from .memory import Allocation, DeviceMemory

WORKSPACE_BYTES = 8                  # details::grid_workspace: wsSize, barrier (u32 each)
ENVREG_HI, ENVREG_LO = 1, 2          # load_env_reg64<1, 2>(): %envreg1 the high word
WORKSPACE_REGS = frozenset({f"%envreg{ENVREG_HI}", f"%envreg{ENVREG_LO}"})
# A spinning thread's quantum on the host JIT in a cooperative launch (instructions before it
# yields to the CTAs it waits for): short, since each spin turn counts against the watchdog.
SPIN_QUANTUM = 64


def check_resident(kernel: str, geometry: Geometry) -> None:
    """Refuse a cooperative grid with more CTAs than ptxvm's device keeps resident."""
    lim = limits.current()
    n = geometry.ctas
    if n > lim.cooperative_ctas:
        raise ResourceError(
            f"kernel `{kernel}`: a cooperative launch keeps every block of its grid resident at once, "
            f"and grid {geometry.grid} has {n:,} blocks, more than the {lim.cooperative_ctas:,} ptxvm's device "
            f"holds (CUDA refuses it with cudaErrorCooperativeLaunchTooLarge; limit cooperative_ctas, raise it "
            f"with PTXVM_LIMIT_COOPERATIVE_CTAS=... or ptxvm.limits.configure(cooperative_ctas=...))")


def check_memory(kernel: str, geometry: Geometry, cta_bytes: int) -> None:
    """The memory of all CTAs of a cooperative grid, which one batch holds, against batch_memory."""
    limits.current().check("batch_memory", geometry.ctas * cta_bytes,
                           f"the cooperative launch of kernel `{kernel}` (all {geometry.ctas:,} blocks "
                           f"of {geometry.threads_per_cta} threads resident at once)")


def workspace(memory: DeviceMemory) -> Allocation:
    """A fresh grid workspace for one cooperative launch: wsSize, then the barrier word at 0."""
    data = np.array([WORKSPACE_BYTES, 0], dtype=np.uint32).view(np.uint8)
    return memory.alloc(WORKSPACE_BYTES, "grid workspace", data=data)


def envreg_values(workspace_address: int | None) -> tuple[int, ...]:
    """%envreg0..31 as the driver sets them: the workspace address in %envreg1:%envreg2, else 0."""
    regs = [0] * ENVREGS
    if workspace_address:
        regs[ENVREG_HI] = (workspace_address >> 32) & 0xFFFFFFFF
        regs[ENVREG_LO] = workspace_address & 0xFFFFFFFF
    return tuple(regs)


def reads_workspace(module: ir.Module) -> bool:
    """Whether any function of ``module`` reads %envreg1 or %envreg2 (cooperative groups'
    ``this_grid()``)."""
    for f in module.functions.values():
        if f.body is None:
            continue
        for ins in f.body.instructions():
            if any(isinstance(op, ir.Register) and op.name in WORKSPACE_REGS for op in ins.operands):
                return True
    return False


def trap_hint(module: ir.Module, cooperative: bool) -> str:
    """What a `trap` message adds in a launch that is not cooperative of a kernel that reads the
    grid workspace: cooperative groups' grid_group::sync() traps on the null workspace."""
    if cooperative or not reads_workspace(module):
        return ""
    return ("; the kernel reads cooperative groups' grid workspace (%envreg1, %envreg2), which only a "
            "cooperative launch provides, and grid_group::sync() traps without one: launch with "
            "cooperative=True (ptxvm run --cooperative)")


def environment(memory: DeviceMemory, module: ir.Module, cooperative: bool,
                runtime: object | None = None, hint: str | None = None) -> tuple[Environment, Allocation | None]:
    """The launch environment, and the workspace allocation the caller frees after the launch;
    ``hint``: ``trap_hint(module, cooperative)`` when the caller keeps it (it scans the module)."""
    ws = workspace(memory) if cooperative else None
    env = Environment(envreg_values(ws.base if ws is not None else None), cooperative,
                      trap_hint(module, cooperative) if hint is None else hint, runtime)
    return env, ws
