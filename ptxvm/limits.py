"""The one set of resource limits every executor enforces the same way.

A GPU refuses what it cannot hold (a launch with too many blocks, a frame that does not
fit its stack); ptxvm must too, *before* it allocates, with a ``ResourceError`` (or, for
what a running kernel does, a ``KernelFault``) that says what was asked and what the limit
is. The defaults are sized for a workstation (a 24 GiB machine runs them all at once);
each can be changed for one process with an environment variable ``PTXVM_LIMIT_<NAME>``
(e.g. ``PTXVM_LIMIT_DEVICE_MEMORY=64G``) or in code with ``ptxvm.limits.configure(...)``.

These numbers are ptxvm's, not the hardware's: where CUDA documents a limit (1024 threads
per block, 2^31-1 blocks in x, 65535 in y and z) it is kept in ``driver``; these bound
what a simulation on the host may use.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, fields, replace

from .errors import ResourceError

_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


@dataclass(frozen=True, slots=True)
class Limits:
    """ptxvm's limits. Sizes in bytes, counts as numbers."""

    device_memory: int = 16 << 30         # all device allocations together (globals, arrays, heap)
    allocation: int = 8 << 30             # one allocation (a `.global` array, an argument, malloc)
    shared_per_block: int = 1 << 30       # static + dynamic `.shared` of one CTA
    local_per_thread: int = 16 << 20      # a thread's `.local` declarations (the kernel's own frame)
    stack_per_thread: int = 512 << 10     # `.func` frames (locals and by-value `.param`s) per thread
    call_depth: int = 4096                # nested `.func` calls per thread (recursion depth)
    registers_per_function: int = 1 << 20  # declared registers of one kernel or function
    threads_per_grid: int = 1 << 32       # blocks x threads per block of one launch
    batch_memory: int = 2 << 30           # memory one batch of CTAs may use while it runs
    # The watchdog: instructions one thread may run in a launch (an endless loop stops within
    # seconds on the interpreter; a launch's max_steps= / --max-steps overrides it).
    steps_per_thread: int = 500_000
    # The device a cooperative launch runs on keeps this many CTAs resident at once (a grid
    # barrier needs every CTA of the grid running; CUDA refuses a larger cooperative grid with
    # cudaErrorCooperativeLaunchTooLarge). Their memory together must also fit batch_memory.
    cooperative_ctas: int = 1024
    # Dynamic parallelism (CDP2): child grids pending at once (CUDA's
    # cudaLimitDevRuntimePendingLaunchCount default) and nesting depth (CUDA's hardware limit, 24).
    cdp_pending_launches: int = 2048
    cdp_depth: int = 24

    def check(self, name: str, asked: int, what: str, *, where: str = "") -> None:
        """Raise ``ResourceError`` unless ``asked`` fits the limit ``name``."""
        limit = getattr(self, name)
        if asked > limit:
            at = f"{where}: " if where else ""
            size = name not in COUNTS
            raise ResourceError(
                f"{at}{what} needs {describe(asked, size)}, more than ptxvm's limit of {describe(limit, size)} "
                f"({name}; raise it with PTXVM_LIMIT_{name.upper()}=... or ptxvm.limits.configure({name}=...))")


# Limits that count things rather than bytes.
COUNTS = frozenset({"call_depth", "registers_per_function", "threads_per_grid", "steps_per_thread",
                    "cooperative_ctas", "cdp_pending_launches", "cdp_depth"})


def describe(n: int, size: bool = True) -> str:
    """``n`` as a byte size (``12,582,912 bytes (12 MiB)``) or a count a person reads at a glance."""
    if not size:
        return f"{n:,}"
    for unit, scale in (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale:
            return f"{n:,} bytes ({n / scale:.3g} {unit})"
    return f"{n:,} bytes"


def parse_size(text: str) -> int:
    """``"64G"``, ``"512k"``, ``"4096"`` -> bytes; raises ValueError on anything else."""
    m = re.fullmatch(r"\s*(\d+)\s*([kKmMgGtT]?)(?:i?[bB])?\s*", text)
    if not m:
        raise ValueError(f"not a size: {text!r} (use e.g. 4096, 512K, 64M, 16G)")
    return int(m.group(1)) * _UNITS[m.group(2).upper()]


def _from_environment(base: Limits) -> Limits:
    changes = {}
    for f in fields(Limits):
        raw = os.environ.get(f"PTXVM_LIMIT_{f.name.upper()}")
        if raw is not None:
            try:
                changes[f.name] = parse_size(raw)
            except ValueError as e:
                raise ResourceError(f"PTXVM_LIMIT_{f.name.upper()}: {e}") from None
    return replace(base, **changes)


_CURRENT: Limits | None = None


def current() -> Limits:
    """The limits in force: the defaults, then ``PTXVM_LIMIT_*``, then ``configure``."""
    global _CURRENT
    if _CURRENT is None:
        _CURRENT = _from_environment(Limits())
    return _CURRENT


def configure(**changes: int) -> Limits:
    """Change limits for this process (``configure(call_depth=100)``); returns the new set."""
    global _CURRENT
    unknown = set(changes) - {f.name for f in fields(Limits)}
    if unknown:
        raise ValueError(f"unknown limit(s) {sorted(unknown)}; known: {[f.name for f in fields(Limits)]}")
    _CURRENT = replace(current(), **changes)
    return _CURRENT


def reset() -> None:
    """Back to the defaults and the environment (tests use this)."""
    global _CURRENT
    _CURRENT = None
