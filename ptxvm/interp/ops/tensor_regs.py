"""What the warp-level matrix instructions (ops.matrix, PTX ISA 9.0 §9.7.14) share: a warp's
lanes, its fragment registers as element matrices, element loads and stores.

They are warp-collective (`.sync.aligned`): every lane of a warp executes the instruction
together, so the interpreter gathers the warp's registers into matrices (with the layouts of
ptxvm.machine.fragments), computes, and scatters the result. A warp of which some lanes do not
take part (divergence, a guard false in some lanes, a partial last warp) is a located fault: the
ISA leaves it undefined. The arithmetic is ops.tensor_math's one rule per type.
"""

from __future__ import annotations

import numpy as np

from ...errors import PtxSemanticError
from ...ir import nodes as ir
from ...ir.types import ScalarType
from ...machine import fragments as F
from ...machine.addressmap import SHARED_BASE, SHARED_LIMIT
from ...machine.memory import MemoryFault
from ..program import CompileContext, reader, writer
from .control import _Trap
from .memory import lowest_fault

WARP = F.WARP


def bad(ins: ir.Instruction, why: str) -> PtxSemanticError:
    s = ins.span
    return PtxSemanticError(f"`{ins.full_opcode}` {why}", filename=s.filename, line=s.line or None,
                            column=s.column or None)


def warps_of(b, lanes: np.ndarray, ins: ir.Instruction) -> np.ndarray:
    """``lanes`` as [warps, 32] in lane order; a fault unless all 32 lanes of each warp are here."""
    start = lanes - b.laneid[lanes]
    uniq, first, counts = np.unique(start, return_index=True, return_counts=True)
    bad = np.nonzero(counts != WARP)[0]
    if bad.size:
        k = bad[0]
        raise _Trap(int(lanes[first[k]]), f"`{ins.full_opcode}` is warp-collective (.sync.aligned): "
                    f"only {int(counts[k])} of the 32 lanes of this warp executed it together "
                    "(a divergent or guarded call, or a partial warp; PTX ISA §9.7.14: undefined)")
    return lanes.reshape(-1, WARP)


def uniform(values: np.ndarray, warps_lanes: np.ndarray, ins: ir.Instruction, what: str) -> np.ndarray:
    """[warps, 32] per-lane values that the ISA requires equal across a warp -> [warps]."""
    diff = np.nonzero((values != values[:, :1]).any(axis=1))[0]
    if diff.size:
        w = diff[0]
        lane = int(np.argmax(values[w] != values[w, 0]))
        raise _Trap(int(warps_lanes[w, lane]), f"`{ins.full_opcode}`: lane {lane}'s {what} differs "
                    "from lane 0's; every lane of the warp must give the same (PTX ISA §9.7.14.4)")
    return values[:, 0]


# ------------------------------------------------------------------ fragment registers

def _elements(op: ir.Operand) -> tuple[ir.Operand, ...]:
    return op.elements if isinstance(op, ir.Vector) else (op,)


def check_regs(ctx: CompileContext, ins: ir.Instruction, op: ir.Operand, regs: int, bits: int,
                what: str) -> tuple[ir.Operand, ...]:
    elems = _elements(op)
    if len(elems) != regs:
        raise bad(ins, f"takes {regs} register{'s' if regs > 1 else ''} for {what}, not {len(elems)}")
    for e in elems:
        if isinstance(e, ir.Register):
            hit = ctx.register(e)
            if hit is not None and hit[1].bits != bits:
                raise bad(ins, f"needs {bits}-bit registers for {what}; `{e}` is "
                           f".{hit[1].value} (PTX ISA §9.7.14: fragments are vectors of "
                           f"{bits}-bit registers)")
    return elems


def frag_reader(ctx, ins, op, frag: F.Fragment, what: str):
    """A closure: [warps, 32] lanes -> [warps, 32, elements] element bits (uint64)."""
    t = ScalarType.B64 if frag.reg_bits == 64 else ScalarType.B32
    rs = [reader(ctx, e, t, ins) for e in check_regs(ctx, ins, op, frag.regs, frag.reg_bits, what)]
    shifts = np.arange(frag.per_reg, dtype=np.uint64) * np.uint64(frag.elem_bits)
    mask = np.uint64((1 << frag.elem_bits) - 1) if frag.elem_bits < 64 else np.uint64(~0 & (2**64 - 1))

    def read(b, wl):
        flat = wl.reshape(-1)
        regs = np.stack([r(b, flat).astype(np.uint64) for r in rs], axis=-1)
        el = (regs[..., None] >> shifts) & mask
        return el.reshape(wl.shape + (frag.elements,))
    return read


def frag_writer(ctx, ins, op, frag: F.Fragment, what: str):
    """A closure writing [warps, 32, elements] element bits into the fragment's registers."""
    t = ScalarType.B64 if frag.reg_bits == 64 else ScalarType.B32
    ws = [writer(ctx, e, t, ins) for e in check_regs(ctx, ins, op, frag.regs, frag.reg_bits, what)]
    shifts = np.arange(frag.per_reg, dtype=np.uint64) * np.uint64(frag.elem_bits)
    dt = np.uint64 if frag.reg_bits == 64 else np.uint32

    def write(b, wl, elements):
        flat = wl.reshape(-1)
        el = elements.astype(np.uint64).reshape(flat.size, frag.regs, frag.per_reg)
        regs = np.bitwise_or.reduce(el << shifts, axis=-1) if frag.per_reg > 1 else el[..., 0]
        for i, w in enumerate(ws):
            w(b, flat, regs[:, i].astype(dt))
    return write


def to_matrix(frag: F.Fragment, elements: np.ndarray) -> np.ndarray:
    return F.scatter(frag, elements)


def from_matrix(frag: F.Fragment, matrix: np.ndarray) -> np.ndarray:
    return F.gather(frag, matrix)


# ------------------------------------------------------------------ memory helpers

def load_elements(b, space: str, addr: np.ndarray, who: np.ndarray, bits: int) -> np.ndarray:
    """Element bits at element addresses ``addr`` (byte address * 8 + bit offset for sub-byte
    elements), each attributed to the batch lane ``who`` (for shared windows and faults)."""
    flat, lanes = addr.reshape(-1), who.reshape(-1)
    if bits >= 8:
        dtype = np.dtype(f"u{bits // 8}")
        byte = flat
    else:
        dtype, byte = np.dtype(np.uint8), flat >> np.uint64(3)
    try:
        v = b.load(space, byte, dtype, lanes).astype(np.uint64)
    except MemoryFault as e:
        raise lowest_fault(b, space, byte, dtype.itemsize, lanes, e, write=False) from None
    if bits < 8:
        v = (v >> (flat & np.uint64(7))) & np.uint64((1 << bits) - 1)
    return v.reshape(addr.shape)


def store_elements(b, space: str, addr: np.ndarray, who: np.ndarray, values: np.ndarray,
                   bits: int) -> None:
    flat, lanes = addr.reshape(-1), who.reshape(-1)
    dtype = np.dtype(f"u{bits // 8}")
    try:
        b.store(space, flat, values.reshape(-1).astype(dtype), lanes)
    except MemoryFault as e:
        raise lowest_fault(b, space, flat, dtype.itemsize, lanes, e, write=True) from None


def shared_only(b, space: str, addr: np.ndarray, who: np.ndarray, ins: ir.Instruction) -> None:
    """ldmatrix/stmatrix: a generic address must point into .shared (else undefined)."""
    if space != "generic":
        return
    out = (addr < np.uint64(SHARED_BASE)) | (addr >= np.uint64(SHARED_LIMIT))
    if out.any():
        i = int(np.argmax(out.reshape(-1)))
        raise _Trap(int(who.reshape(-1)[i]), f"`{ins.full_opcode}`: the generic address "
                    f"{int(addr.reshape(-1)[i]):#x} is not in the .shared window (PTX ISA §9.7.14.5.15)")


__all__ = ["warps_of", "uniform", "bad", "check_regs", "frag_reader", "frag_writer", "to_matrix", "from_matrix",
           "load_elements", "store_elements", "shared_only", "WARP"]
