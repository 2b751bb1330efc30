"""The device address map: where each state space lives in the one 64-bit generic address space.

Every executor uses these numbers (the interpreter's checks, the host JIT's generated code, the
driver's function addresses), so they live here and nowhere else:

* ``[0, NULL_LIMIT)``: never mapped, so null and small pointers fault.
* ``SHARED_BASE + offset``: the executing thread's own CTA's shared memory (a `.shared`
  state-space address is the bare offset, as on NVIDIA GPUs).
* ``LOCAL_BASE + offset``: the executing thread's own local memory.
* ``PARAM_BASE + offset``: the kernel's `.param` block (read-only).
* ``GLOBAL_BASE`` upwards: global allocations (user buffers, module `.global` and `.const`
  variables), each ``ALIGN``-aligned and followed by at least ``GUARD_BYTES`` of gap, so a run
  off the end of one buffer faults instead of reading its neighbour. Global and const
  state-space addresses equal their generic addresses (cvta is the identity).
* ``FUNCTION_BASE + i * FUNCTION_STRIDE``: the "address" of the module's i-th function (what
  `mov.u64 %rd, func` gives and an indirect call jumps through); never memory.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

NULL_LIMIT = 0x1_0000
SHARED_BASE = 0x1_0000_0000
SHARED_LIMIT = 0x2_0000_0000
LOCAL_BASE = 0x2_0000_0000
LOCAL_LIMIT = 0x3_0000_0000
PARAM_BASE = 0x3_0000_0000
PARAM_LIMIT = 0x3_0001_0000
GLOBAL_BASE = 0x7_0000_0000
GUARD_BYTES = 256
ALIGN = 256                         # allocations start on ALIGN-byte boundaries
FUNCTION_BASE = 0xF000_0000_0000
FUNCTION_STRIDE = 16


@dataclass(frozen=True, slots=True)
class Window:
    """A per-CTA or per-thread state space seen through the generic address space."""

    space: str
    base: int
    limit: int                      # exclusive

    def __contains__(self, address: int) -> bool:
        return self.base <= address < self.limit


# The windows in address order; everything else (above NULL_LIMIT) is global.
WINDOWS: tuple[Window, ...] = (
    Window("shared", SHARED_BASE, SHARED_LIMIT),
    Window("local", LOCAL_BASE, LOCAL_LIMIT),
    Window("param", PARAM_BASE, PARAM_LIMIT),
)
WINDOW: dict[str, Window] = {w.space: w for w in WINDOWS}


def window_of(address: int) -> tuple[str, int]:
    """The state space a generic ``address`` lies in and its offset there (``"global"`` and the
    address itself outside the windows)."""
    for w in WINDOWS:
        if address in w:
            return w.space, address - w.base
    return "global", address


def function_addresses(names: Iterable[str]) -> dict[str, int]:
    """The address of each function of a module, in declaration order."""
    return {name: FUNCTION_BASE + i * FUNCTION_STRIDE for i, name in enumerate(names)}
