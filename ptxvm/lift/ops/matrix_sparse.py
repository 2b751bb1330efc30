"""mma.sp and mma.sp::ordered_metadata (PTX ISA 9.0 §9.7.14.6) on LLVM targets: the semantics of
interp/ops/matrix_sparse.py from the same tables (ptxvm.machine.fragments: the stored A as an
M x K/2 fragment, sparse_meta for where each stored element's metadata lies) and the same rule
per type (ops.matrix.accumulate, over the stored elements in storage order).

A, B and every lane's metadata register cross the warp in one exchange; each lane then finds,
for each stored element of the rows of its D elements, the metadata lane and field from a
constant table indexed by (row, element), and so the row of B it multiplies. A lane whose own
metadata the selector reads traps on a field the ISA leaves undefined (equal indices, unordered
with ::ordered_metadata, a tf32 field other than 0b0100/0b1110), as the interpreter faults.
"""

from __future__ import annotations

from llvmlite import ir

from ...ir import nodes as ptx
from ...ir.types import ScalarType
from ...machine import fragments as F
from ..function import I32, I64, FunctionLowering
from .matrix import _accumulate as accumulate  # mma's one accumulation rule per type (one source)
from .matrix import mma_layouts
from .matrix import _mma_types as mma_types
from .matrix_frag import (Published, coord_table, elements, full_warp_check, lane_coord, load_element,
                          matrix_local, pack_regs, reg_type, regs_of)


def _form(fl: FunctionLowering, ins: ptx.Instruction):
    if ins.mod("mma_kind") is not None or ins.mod("block_scale") is not None:
        raise fl.unsupported(ins, "(.kind and block-scaled forms, sm_120) is not executable yet")
    if len(ins.operands) != 6:
        raise fl.unsupported(ins, "with block-scale operands is not executable yet")
    shape, types = ins.mod("mma_shape"), mma_types(fl, ins, False)
    if types[1] in ("s4", "u4"):
        raise fl.unsupported(ins, "(the .s4/.u4 forms) is not executable yet")
    sel = ins.operands[5]
    try:
        F.mma_sm(shape, types[1], types[2], types[3], types[0], mma_layouts(ins), sparse=True)
        if not isinstance(sel, ptx.Immediate):
            raise F.FragmentError("takes a constant sparsity selector (PTX ISA §9.7.14.6.3)")
        meta = F.sparse_meta(shape, types[1], int(sel.value))
        frags = tuple(F.fragment("mma.sp", shape, r, t) for r, t in zip("abcd", (types[1], types[2], types[3], types[0])))
    except F.FragmentError as e:
        raise fl.unsupported(ins, str(e)) from None
    return shape, types, meta, frags


def _undefined(b: ir.IRBuilder, field: ir.Value, chunk: int, ordered: bool) -> ir.Value:
    """i1: the 4-bit metadata field (i32) is one the ISA leaves undefined."""
    if chunk == 2:
        return b.and_(b.icmp_unsigned("!=", field, I32(0b0100)), b.icmp_unsigned("!=", field, I32(0b1110)))
    lo, hi = b.and_(field, I32(3)), b.lshr(field, I32(2))
    return b.icmp_unsigned(">=", lo, hi) if ordered else b.icmp_unsigned("==", lo, hi)


def _check_own(fl: FunctionLowering, ins: ptx.Instruction, meta: F.SparseMeta, mine: ir.Value, lane: ir.Value,
               ordered: bool) -> None:
    """Trap when a field of this lane's metadata that the selector reads is undefined."""
    b = fl.b
    used = [0] * 32                                   # per lane: bit f set if field f is read
    for lane_of, shift in zip(meta.table[..., 0].reshape(-1), meta.table[..., 1].reshape(-1)):
        used[int(lane_of)] |= 1 << (int(shift) // 4)
    mask = b.extract_element(ir.Constant(ir.VectorType(I32, 32), used), lane)
    wrong = ir.Constant(ir.IntType(1), 0)
    for f in range(8):
        field = b.and_(b.lshr(mine, I32(4 * f)), I32(15))
        read = b.icmp_unsigned("!=", b.and_(mask, I32(1 << f)), I32(0))
        wrong = b.or_(wrong, b.and_(read, _undefined(b, field, meta.chunk, ordered)))
    bad, ok = fl.new_block("mma_sp_bad_meta"), fl.new_block("mma_sp_meta")
    b.cbranch(wrong, bad, ok)
    b.position_at_end(bad)
    fl.hooks.trap(fl, ins, ins.opcode)
    b.position_at_end(ok)


def lower(fl: FunctionLowering, ins: ptx.Instruction) -> None:
    """Lower an mma.sp / mma.sp::ordered_metadata (registered in ops.matrix)."""
    shape, types, meta, (fa, fb, fc, fd) = _form(fl, ins)
    rd, ra, rb, rc = (regs_of(fl, ins, ins.operands[i], f.regs, f.reg_bits, f"the {w} fragment")
                      for i, f, w in ((0, fd, "D"), (1, fa, "A"), (2, fb, "B"), (3, fc, "C")))
    (re,) = regs_of(fl, ins, ins.operands[4], 1, 32, "the metadata")
    b = fl.b
    ordered = ins.opcode.endswith("ordered_metadata")
    pub = Published(fl, ins, [(fa, list(ra)), (fb, list(rb))], extra=[b.zext(fl.read(re, ScalarType.B32), I64)])
    full_warp_check(fl, ins, pub.view.mask)
    _check_own(fl, ins, meta, fl.read(re, ScalarType.B32), pub.view.lane, ordered)
    a_mat, b_mat = matrix_local(fl, pub, 0, fa, "mma_sp_a"), matrix_local(fl, pub, 1, fb, "mma_sp_b")
    c_vals = elements(fl, fc, [fl.read(r, reg_type(fc)) for r in rc])
    half, n = fa.cols, fb.cols
    t = meta.table.reshape(-1, 4)
    table = ir.Constant(ir.VectorType(I32, len(t)),
                        [int(x[0]) | int(x[1]) << 8 | int(x[2]) << 16 | int(x[3]) << 24 for x in t])
    out = []
    for e, coords in enumerate(coord_table(fd.coords)):
        row, col = lane_coord(b, coords, pub.view.lane)

        def operand(j, row=row, col=col):
            idx = b.add(b.mul(row, I64(half)), j)
            entry = b.extract_element(table, b.trunc(idx, I32))
            src, shift = b.and_(entry, I32(255)), b.and_(b.lshr(entry, I32(8)), I32(255))
            slot, first = b.and_(b.lshr(entry, I32(16)), I32(255)), b.lshr(entry, I32(24))
            field = b.and_(b.lshr(b.trunc(pub.extra_value(b, src, 0), I32), shift), I32(15))
            if meta.chunk == 2:
                pos = b.lshr(b.and_(field, I32(3)), I32(1))
            else:
                pos = b.and_(b.lshr(field, b.mul(slot, I32(2))), I32(3))
            k = b.zext(b.add(first, pos), I64)
            return load_element(b, a_mat, idx), load_element(b, b_mat, b.add(b.mul(k, I64(n)), col))
        out.append(accumulate(fl, ins, types, operand, c_vals[e], half))
    for r, v in zip(rd, pack_regs(fl, fd, out)):
        fl.write(r, reg_type(fd), v)
