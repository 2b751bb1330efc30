"""An `mma`/`wmma.mma` computed once per warp (PTX ISA 9.0 §9.7.14), for targets whose lanes run
one after another between warp exchanges (the host JIT: ``TargetHooks.warp_lanes_in_turn``).

The shared lowering (ops.matrix) has every lane copy the whole of A and B out of the exchange
and compute its own D elements: 32 gathers of the same matrices per warp, most of an mma's
time. Here the first lane to run after the exchange gathers A and B once, computes D for all
32 lanes (element by element with the same accumulation as ops.matrix, so the same bits) and
writes each lane's D registers into that lane's row of the exchange snapshot
(``WarpView.store``); then every lane reads its own. The snapshot stays until the warp's next
exchange, and no lane reaches that before all have run (a round runs every runnable thread),
as the shared lowering's reads of A and B already rely on. Slot 0 of lane 0's row is the flag:
every lane publishes 0 there, the computing lane sets it to 1.
"""

from __future__ import annotations

from llvmlite import ir

from ...ir import nodes as ptx
from ...machine import fragments as F
from ..function import I32, I64, FunctionLowering
from .matrix_frag import (MAX_SLOTS, Published, coord_table, elements, full_warp_check, lane_coord, load_element,
                          matrix_local, needed_regs, pack_regs, reg_type)


def _slots(groups: list[tuple[F.Fragment, list]]) -> int:
    """Exchange slots ``groups`` take, packed as Published packs them."""
    return sum(len(regs) if frag.reg_bits == 64 else (len(regs) + 1) // 2 for frag, regs in groups)


def _d_slot(fd: F.Fragment, r: int) -> tuple[int, int]:
    """(slot, shift) of D register ``r`` in a lane's row: after the flag, 32-bit ones paired."""
    return (1 + r, 0) if fd.reg_bits == 64 else (1 + r // 2, 32 * (r % 2))


def lower_once(fl: FunctionLowering, ins: ptx.Instruction, types, frags: tuple[F.Fragment, ...],
               regs: tuple[tuple[ptx.Operand, ...], ...], accumulate) -> bool:
    """Lower the mma this way when the target's lanes run in turn and the fragments fit one
    exchange (A, B and C, and D back); False: the caller's per-lane lowering. ``accumulate`` is
    ops.matrix's rule: (fl, ins, types, operand(k), C element bits, K) -> D element bits."""
    fa, fb, fc, fd = frags
    ra, rb, rc, rd = regs
    groups = [(fa, list(ra[:needed_regs(fa)])), (fb, list(rb[:needed_regs(fb)])), (fc, list(rc))]
    if not fl.hooks.warp_lanes_in_turn or 1 + _slots(groups) > MAX_SLOTS or _d_slot(fd, fd.regs - 1)[0] >= MAX_SLOTS:
        return False
    pub = Published(fl, ins, groups, extra=[I64(0)])
    view = pub.view
    full_warp_check(fl, ins, view.mask)
    b = fl.b
    first, done = fl.new_block("mma_warp_once"), fl.new_block("mma_warp_done")
    b.cbranch(b.icmp_unsigned("==", view.value(b, I32(0), 0), I64(0)), first, done)
    b.position_at_end(first)
    a_mat = matrix_local(fl, pub, 0, fa, "mma_a")
    b_mat = matrix_local(fl, pub, 1, fb, "mma_b")
    same_c = bool((fc.coords == fd.coords).all())
    c_mat = None if same_c else matrix_local(fl, pub, 2, fc, "mma_c")
    _all_lanes(fl, ins, types, pub, frags, (a_mat, b_mat, c_mat), accumulate)
    view.store(b, I32(0), 0, I64(1))
    b.branch(done)
    b.position_at_end(done)
    for r, dst in enumerate(rd):
        slot, shift = _d_slot(fd, r)
        v = view.value(b, view.lane, slot)
        if fd.reg_bits == 32:
            v = b.trunc(b.lshr(v, I64(shift)) if shift else v, I32)
        fl.write(dst, reg_type(fd), v)
    return True


def _all_lanes(fl: FunctionLowering, ins: ptx.Instruction, types, pub: Published, frags, mats, accumulate) -> None:
    """An IR loop over the 32 lanes: each lane's D elements, stored into its row (its C, read
    from the row first, is then no longer needed)."""
    fa, fb, fc, fd = frags
    a_mat, b_mat, c_mat = mats
    b = fl.b
    pre = b.block
    loop, after = fl.new_block("mma_lanes"), fl.new_block("mma_lanes_done")
    b.branch(loop)
    b.position_at_end(loop)
    lane = b.phi(I32)
    lane.add_incoming(I32(0), pre)
    if c_mat is None:
        c_vals = elements(fl, fc, [pub.reg_of(b, 2, lane, r, fc.reg_bits) for r in range(fc.regs)])
    k_count, n = fa.cols, fb.cols
    out = []
    for e, table in enumerate(coord_table(fd.coords)):
        row, col = lane_coord(b, table, lane)

        def operand(k, row=row, col=col):
            return (load_element(b, a_mat, b.add(b.mul(row, I64(k_count)), k)),
                    load_element(b, b_mat, b.add(b.mul(k, I64(n)), col)))
        c_e = c_vals[e] if c_mat is None else load_element(b, c_mat, b.add(b.mul(row, I64(fc.cols)), col))
        out.append(accumulate(fl, ins, types, operand, c_e, k_count))
    packed = pack_regs(fl, fd, out)
    for r in range(0, fd.regs, 1 if fd.reg_bits == 64 else 2):
        v = packed[r] if fd.reg_bits == 64 else b.zext(packed[r], I64)
        if fd.reg_bits == 32 and r + 1 < fd.regs:
            v = b.or_(v, b.shl(b.zext(packed[r + 1], I64), I64(32)))
        pub.view.store(b, lane, _d_slot(fd, r)[0], v)
    nxt = b.add(lane, I32(1))
    lane.add_incoming(nxt, b.block)
    b.cbranch(b.icmp_unsigned("<", nxt, I32(32)), loop, after)
    b.position_at_end(after)
