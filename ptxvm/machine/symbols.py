"""Where a launch's names live: module globals, the shared and local windows' variables, the
kernel's `.param` block (its layout and its bytes), call frames and function addresses.

The interpreter and the host JIT lay a kernel out with the same ``layout``, so an address a
kernel computes is the same on both.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..ir import nodes as ir
from ..ir.types import StateSpace
from .image import ModuleImage


@dataclass
class Symbols:
    """Where module-level and kernel-level names live for this launch."""

    globals: dict[str, int] = field(default_factory=dict)      # name -> generic address
    shared: dict[str, int] = field(default_factory=dict)       # name -> offset in the shared window
    local: dict[str, int] = field(default_factory=dict)        # name -> offset in the local window
    params: dict[str, int] = field(default_factory=dict)       # name -> offset in the param block
    functions: dict[str, int] = field(default_factory=dict)    # name -> function "address"
    shared_bytes: int = 0
    local_bytes: int = 0
    # Call frames (interpreter): per function, its `.local` variables' offsets in its frame, the
    # frame's size and alignment. A kernel's frame starts at local offset 0; a `.func`'s at the
    # stack pointer of the calling thread when it is called.
    local_frames: dict[str, dict[str, int]] = field(default_factory=dict)
    frame_bytes: dict[str, int] = field(default_factory=dict)
    frame_align: dict[str, int] = field(default_factory=dict)
    dynamic_shared_at: int = 0                                 # offset of `.extern .shared` arrays


def _place(d: ir.VarDecl, table: dict[str, int], at: int) -> int:
    """Put ``d`` at the first offset from ``at`` its alignment allows; the offset after it."""
    align = d.align or max(d.element_bytes(), 1)
    at = (at + align - 1) // align * align
    table[d.name] = at
    return at + (d.size_bytes() or 0)


def layout(module: ir.Module, kernel: ir.Function, image: ModuleImage, dynamic_shared: int) -> Symbols:
    """The symbol layout of one launch of ``kernel`` with ``dynamic_shared`` extra shared bytes."""
    s = Symbols(globals=dict(image.addresses), functions=dict(image.functions))
    off = 0
    extern_shared = []
    for d in module.items:
        if isinstance(d, ir.VarDecl) and d.space is StateSpace.SHARED:
            if d.size_bytes() is None or (d.linkage and d.linkage.value == "extern"):
                extern_shared.append(d)
            else:
                off = _place(d, s.shared, off)
    local = 0
    funcs = [kernel] + [f for f in module.functions.values() if f.body is not None and not f.is_kernel]
    for f in funcs:
        frame: dict[str, int] = {}
        frame_end, frame_align = 0, 16
        for st in f.body.walk():
            if isinstance(st, ir.VarDecl):
                if st.space is StateSpace.SHARED:
                    if st.size_bytes() is None:
                        extern_shared.append(st)
                    else:
                        off = _place(st, s.shared, off)
                elif st.space is StateSpace.LOCAL:
                    # One flat placement of every function's locals (what the host JIT reads) and,
                    # for the interpreter, a call frame per function: each activation of a `.func`
                    # (recursion included) gets its own copy of its `.local` variables.
                    local = _place(st, s.local, local)
                    frame_end = _place(st, frame, frame_end)
                    frame_align = max(frame_align, st.align or 1)
        s.local_frames[f.name] = frame
        s.frame_bytes[f.name] = (frame_end + frame_align - 1) // frame_align * frame_align
        s.frame_align[f.name] = frame_align
    dyn = (off + 15) // 16 * 16
    for d in extern_shared:
        s.shared[d.name] = dyn
    s.dynamic_shared_at = dyn
    s.shared_bytes = dyn + dynamic_shared if (extern_shared or dynamic_shared) else off
    s.local_bytes = local
    p = 0
    for prm in kernel.params:
        p = _place(prm, s.params, p)
    return s


def param_block(kernel: ir.Function, symbols: Symbols, values: list[bytes]) -> np.ndarray:
    """The kernel's `.param` block: each argument's bytes at its offset, padded to 16 bytes."""
    size = 0
    for prm in kernel.params:
        size = max(size, symbols.params[prm.name] + (prm.size_bytes() or 0))
    buf = np.zeros(max((size + 15) // 16 * 16, 16), dtype=np.uint8)
    for prm, raw in zip(kernel.params, values):
        o = symbols.params[prm.name]
        buf[o:o + len(raw)] = np.frombuffer(raw, dtype=np.uint8)
    return buf
