"""cp.async and its groups (PTX ISA §9.7.9.25.3): global -> shared copies of 4, 8 or 16 bytes.

The copy is done when the instruction executes. The ISA lets it complete at any time up to the
``cp.async.wait_group`` / ``wait_all`` that covers it, and a program that reads the destination
(or writes the source) before that wait races with the copy, so an immediate copy is one of the
executions the ISA allows; ``commit_group`` and the waits then have nothing left to do.

``src-size`` (a u32, at most ``cp-size``) copies that many source bytes and fills the rest of the
destination with zeros; the ``ignore-src`` predicate copies none. Only the bytes copied are read,
so a zero-fill copy from an address outside every allocation does not fault (CUTLASS and Triton
use ``src-size = 0`` for predicated-off tiles). Both addresses must be aligned to ``cp-size``
(§6.4.1, Addresses as Operands). A ``src-size`` above ``cp-size`` is undefined in the ISA and a
trap here.
"""

from __future__ import annotations

import numpy as np

from ...ir import nodes as ir
from ...ir.types import ScalarType
from ...machine.memory import MemoryFault
from ...machine.reports import cp_async_too_big
from ..access import fault_for, faulting_lanes
from ..program import CompileContext, address, reader
from . import impl
from .control import _Trap
from .memory import fault_lane


_WORD = {4: np.uint32, 8: np.uint64, 16: np.uint64}


def source_bytes_reader(ctx: CompileContext, ins: ir.Instruction, size: int):
    """Per lane: how many source bytes the copy reads (``cp-size``, ``src-size`` or 0)."""
    if len(ins.operands) < 4:
        return lambda b, lanes: np.full(lanes.shape, size, dtype=np.int64)
    op = ins.operands[3]
    reg = ctx.register(op) if isinstance(op, ir.Register) else None
    if isinstance(op, ir.Negated) or (reg is not None and reg[1] is ScalarType.PRED):
        ignore = reader(ctx, op, ScalarType.PRED, ins)
        return lambda b, lanes: np.where(ignore(b, lanes), 0, size).astype(np.int64)
    src_size = reader(ctx, op, ScalarType.U32, ins)
    return lambda b, lanes: src_size(b, lanes).astype(np.int64)


@impl("cp.async")
def _cp_async(ctx: CompileContext, ins: ir.Instruction):
    size_op = ins.operands[2]
    if not isinstance(size_op, ir.Immediate) or int(size_op.value) not in (4, 8, 16):
        raise ctx.unsupported(ins, "needs a cp-size of 4, 8 or 16 (PTX ISA 9.7.9.25.3.1)")
    size = int(size_op.value)
    dst_space, src_space = "shared", "global"     # the only form: cp.async.{ca,cg}.shared{::cta}.global
    dst = address(ctx, ins.operands[0], dst_space, ins)
    src = address(ctx, ins.operands[1], src_space, ins)
    nbytes = source_bytes_reader(ctx, ins, size)
    word = np.dtype(_WORD[size])
    nwords = size // word.itemsize

    def run(b, lanes):
        d, s, n = dst(b, lanes), src(b, lanes), nbytes(b, lanes)
        if (n > size).any():
            raise _Trap(int(lanes[np.argmax(n > size)]), cp_async_too_big(ins))
        # The fault-write rule (..access): the threads whose copy is in range complete it, a
        # faulting thread's copy writes nothing, the lowest faulting thread is reported.
        src_bad = _source_faults(b, s, n, size)
        dst_bad = faulting_lanes(b, dst_space, d, size, write=True)
        if src_bad is None and dst_bad is None:
            copy(b, lanes, d, s, n)
            return
        bad = src_bad if dst_bad is None else dst_bad if src_bad is None else src_bad | dst_bad
        ok = ~bad
        if ok.any():
            copy(b, lanes[ok], d[ok], s[ok], n[ok])
        i = int(np.argmax(bad))
        if src_bad is not None and src_bad[i]:
            raise _source_fault(b, int(s[i]), int(n[i]), size, int(lanes[i]))
        raise fault_for(b, dst_space, int(d[i]), size, int(lanes[i]), write=True)

    def copy(b, lanes, d, s, n):
        """The copy for lanes whose source and destination are in range."""
        try:
            if (n == size).all():
                words = [b.load(src_space, s + np.uint64(8 * i), word, lanes, aligned=True) for i in range(nwords)]
            else:
                data = np.zeros((lanes.size, size), dtype=np.uint8)
                for i in range(size):          # a partial copy reads only its first n bytes
                    sel = np.nonzero(n > i)[0]
                    if sel.size:
                        data[sel, i] = b.load(src_space, s[sel] + np.uint64(i), np.uint8, lanes[sel], aligned=True)
                words = [np.ascontiguousarray(data[:, 8 * i:8 * i + word.itemsize]).view(word).reshape(-1)
                         for i in range(nwords)]
        except MemoryFault as e:
            raise fault_lane(e, s, lanes) from None
        try:
            for i, w in enumerate(words):
                b.store(dst_space, d + np.uint64(8 * i), w, lanes, aligned=True)
        except MemoryFault as e:
            raise fault_lane(e, d, lanes) from None
    return run, 0, -1


@impl("cp.async.commit_group", "cp.async.wait_group", "cp.async.wait_all")
def _groups(ctx: CompileContext, ins: ir.Instruction):
    # every cp.async has completed when it executed (see the module docstring)
    return (lambda b, lanes: None), 0, -1


def _source_faults(b, s: np.ndarray, n: np.ndarray, size: int) -> np.ndarray | None:
    """Lanes whose copy faults on its source: a whole copy's ``size`` bytes, a partial copy's
    alignment and first ``n`` bytes (the host JIT's order: alignment, then byte by byte)."""
    whole = n == size
    if whole.all():
        return faulting_lanes(b, "global", s, size, write=False)
    bad = np.zeros(s.shape, dtype=bool)
    if whole.any():
        sub = faulting_lanes(b, "global", s[whole], size, write=False)
        if sub is not None:
            bad[whole] = sub
    some = np.nonzero((n > 0) & ~whole)[0]
    if some.size:
        mis = faulting_lanes(b, "global", s[some], 1, write=False, align=size)
        if mis is not None:
            bad[some] = mis
        for i in range(size):
            sel = some[n[some] > i]
            if sel.size:
                sub = faulting_lanes(b, "global", s[sel] + np.uint64(i), 1, write=False, align=1)
                if sub is not None:
                    bad[sel] |= sub
    return bad if bad.any() else None


def _source_fault(b, s: int, n: int, size: int, lane: int):
    """The fault of one lane's source: as the host JIT checks it (see _source_faults)."""
    if n == size:
        return fault_for(b, "global", s, size, lane, write=False)
    one = np.array([s], dtype=np.uint64)
    if faulting_lanes(b, "global", one, 1, write=False, align=size) is not None:
        return fault_for(b, "global", s, 1, lane, write=False, align=size)
    for i in range(n):
        if faulting_lanes(b, "global", one + np.uint64(i), 1, write=False, align=1) is not None:
            return fault_for(b, "global", s + i, 1, lane, write=False, align=1)
    raise AssertionError("no faulting source byte")    # _source_faults marked this lane
