"""mma.sp and mma.sp::ordered_metadata (PTX ISA 9.0 §9.7.14.6): D = A * B + C with a 2:4 (tf32:
1:2) structured-sparse A, of which the fragments hold the stored M x K/2 elements and a metadata
register per lane says where each lies (the selector operand picks the lanes that give it;
ptxvm.machine.fragments.sparse_meta).

The arithmetic is ops.tensor_math's rule per type (isa/instructions.toml), over the stored
elements only: D[r, c] = C[r, c] + sum over the K/2 stored elements j of row r, in storage order
(k order with ordered metadata), of A[r, j] * B[k(r, j), c]. A structural zero multiplies
nothing (an infinite B element in its row does not make a NaN). Metadata the ISA leaves undefined
(two equal indices, unordered indices with ::ordered_metadata, a tf32 field other than 0b0100
and 0b1110) is a fault naming the lane.
"""

from __future__ import annotations

import numpy as np

from ...ir import nodes as ir
from ...ir.types import ScalarType
from ...machine import fragments as F
from ..program import CompileContext, reader
from .control import _Trap
from .matrix import _fragments, mma_layouts, mma_types, product
from .tensor_regs import bad, check_regs, frag_reader, frag_writer, from_matrix, to_matrix, warps_of


def sparse_form(ctx: CompileContext, ins: ir.Instruction):
    """(shape, types, SparseMeta) of a checked mma.sp; located errors for what the ISA does not
    define, UnsupportedError for the forms not executable."""
    if ins.mod("mma_kind") is not None or ins.mod("block_scale") is not None:
        raise ctx.unsupported(ins, "(.kind and block-scaled forms, sm_120) is not executable yet")
    if len(ins.operands) != 6:
        raise ctx.unsupported(ins, "with block-scale operands is not executable yet")
    shape, types = ins.mod("mma_shape"), mma_types(ins, False)
    if types[1] in ("s4", "u4"):
        raise ctx.unsupported(ins, "(the .s4/.u4 forms) is not executable yet")
    try:
        sm = F.mma_sm(shape, types[1], types[2], types[3], types[0], mma_layouts(ins), sparse=True)
        sel = ins.operands[5]
        if not isinstance(sel, ir.Immediate):
            raise F.FragmentError("takes a constant sparsity selector (PTX ISA §9.7.14.6.3)")
        meta = F.sparse_meta(shape, types[1], int(sel.value))
    except F.FragmentError as e:
        raise bad(ins, str(e)) from None
    if ctx.module.sm is not None and ctx.module.sm < sm:
        raise bad(ins, f"needs sm_{sm} or later; the module targets sm_{ctx.module.sm}")
    return shape, types, meta


def positions(fields: np.ndarray, slots: np.ndarray, chunk: int, ordered: bool) -> tuple[np.ndarray, np.ndarray]:
    """(position of each stored element in its chunk, whether its metadata field is defined)."""
    lo, hi = fields & 3, fields >> 2
    if chunk == 2:
        return lo >> 1, (fields == 0b0100) | (fields == 0b1110)
    return np.where(slots == 1, hi, lo), (lo < hi) if ordered else (lo != hi)


def build(ctx: CompileContext, ins: ir.Instruction):
    """The run closure of an mma.sp / mma.sp::ordered_metadata (registered in ops.matrix)."""
    shape, types, meta = sparse_form(ctx, ins)
    fa, fb, fc, fd = _fragments(ins, "mma.sp", shape, types)
    ra = frag_reader(ctx, ins, ins.operands[1], fa, "the A fragment")
    rb = frag_reader(ctx, ins, ins.operands[2], fb, "the B fragment")
    rc = frag_reader(ctx, ins, ins.operands[3], fc, "the C fragment")
    wd = frag_writer(ctx, ins, ins.operands[0], fd, "the D fragment")
    (e_op,) = check_regs(ctx, ins, ins.operands[4], 1, 32, "the metadata")
    re = reader(ctx, e_op, ScalarType.B32, ins)
    compute = product(ins, types)
    ordered = ins.opcode.endswith("ordered_metadata")
    lane_of, shift, slot, first = (meta.table[..., i] for i in range(4))

    def run(b, lanes):
        wl = warps_of(b, lanes, ins)
        a, bb, c = to_matrix(fa, ra(b, wl)), to_matrix(fb, rb(b, wl)), to_matrix(fc, rc(b, wl))
        e = re(b, wl.reshape(-1)).astype(np.int64).reshape(wl.shape)            # [W, 32]
        fields = (e[:, lane_of] >> shift) & 15                                    # [W, M, K/2]
        pos, ok = positions(fields, slot, meta.chunk, ordered)
        if not ok.all():
            w, r, j = (int(x[0]) for x in np.nonzero(~ok))
            raise _Trap(int(wl[w, lane_of[r, j]]), f"`{ins.full_opcode}`: lane {int(lane_of[r, j])}'s metadata "
                        f"field {int(fields[w, r, j]):#06b} (bits {int(shift[r, j])}..{int(shift[r, j]) + 3}) "
                        "is not a defined index pair (PTX ISA §9.7.14.6.1: undefined)")
        k = first + pos                                                           # [W, M, K/2]
        warps, m, half = k.shape
        bsel = bb[np.arange(warps)[:, None, None], k]                              # [W, M, K/2, N]
        n = bsel.shape[-1]
        d = compute(a.reshape(warps * m, 1, half), bsel.reshape(warps * m, half, n),
                    c.reshape(warps * m, 1, n)).reshape(warps, m, n)
        wd(b, wl, from_matrix(fd, d))
    return run, 0, -1
