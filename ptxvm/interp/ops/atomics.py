"""Atomic and reduction instructions (PTX ISA §9.7.12.5): atom and red."""

from __future__ import annotations

import numpy as np

from ...ir import nodes as ir
from ...machine.addressmap import LOCAL_LIMIT, SHARED_BASE, SHARED_LIMIT
from ...machine.memory import MemoryFault, check_alignment
from ..access import faulting_lanes, first_fault
from ..atomic_order import sequential_rmw
from ..program import CompileContext, address, numpy_dtype, reader, writer
from ..state import UINT
from . import impl
from .common import _thread_ids
from .memory import _TRACKED, fault_lane, space_of


_ATOM_OPS = ("add", "inc", "dec", "exch", "cas", "min", "max", "and", "or", "xor")


def _elements(op: ir.Operand) -> tuple[ir.Operand, ...]:
    return op.elements if isinstance(op, ir.Vector) else (op,)


@impl("atom", "red")
def _atom(ctx: CompileContext, ins: ir.Instruction):
    t = ins.types[0]
    op = next((m for m in ins.modifiers if m in _ATOM_OPS), None)
    if op is None:
        raise ctx.unsupported(ins, "is not executable yet")
    # Vector atomics (sm_90, §9.7.13.5: .v2/.v4 .f32, .v2/.v4/.v8 of halves): each element is
    # its own atomic at a + i*size (atomicity per element, none across the vector), done in
    # element order; d and b are brace vectors of the width.
    width = next((int(m[1:]) for m in ins.modifiers if m in ("v2", "v4", "v8")), 1)
    is_red = ins.opcode == "red"
    space = space_of(ins)
    a_idx = 0 if is_red else 1
    addr = address(ctx, ins.operands[a_idx], space, ins)
    srcs = [op_ for op_ in ins.operands[a_idx + 1:] if not _is_policy(op_, ins)]
    vals = [[reader(ctx, e, t, ins) for e in _elements(o)] for o in srcs]
    dsts = None if is_red else [writer(ctx, e, t, ins) for e in _elements(ins.operands[0])]
    if any(len(v) != width for v in vals) or (dsts is not None and len(dsts) != width):
        raise ctx.unsupported(ins, f"needs {width}-element vectors for its value operands")
    apply = None
    if t.value in ("f16", "f16x2", "bf16", "bf16x2"):
        if op not in ("add", "min", "max", "exch", "cas"):
            raise ctx.unsupported(ins, "(half precision atomics) is not executable yet")
        if op in ("add", "min", "max"):
            from ..numerics import half
            fn = {"add": half.add, "min": half.min_, "max": half.max_}[op]
            ut = UINT[t.bits]

            def apply(op_, cur, v, cmpv=None):
                return np.asarray(fn(cur, v, t.value)).astype(ut)
    vt = np.dtype(UINT[t.bits]) if t.value in ("f16", "f16x2", "bf16", "bf16x2") else numpy_dtype(t)
    size = max(t.bits // 8, 1)
    whole = size * width

    def run(b, lanes):
        a = addr(b, lanes)
        args = [[v(b, lanes).view(vt) for v in per] for per in vals]
        try:
            check_alignment(a, whole, space)
            if width > 1:
                bad = faulting_lanes(b, space, a, whole, write=True)
                if bad is not None and bad.any():
                    raise MemoryFault("vector atomic out of bounds", 0, int(a[bad][0]), space)
            olds = [atomic_rmw(b, space, a + np.uint64(i * size), lanes, op, [x[i] for x in args], vt, apply)
                    for i in range(width)]
        except MemoryFault as e:
            # Nothing was written; the threads in range complete (the fault-write rule of ..access).
            bad = faulting_lanes(b, space, a, whole, write=True)
            if bad is None:
                raise fault_lane(e, a, lanes) from None
            ok = ~bad
            if ok.any():
                try:
                    sub = [[x[ok] for x in per] for per in args]
                    olds = [atomic_rmw(b, space, a[ok] + np.uint64(i * size), lanes[ok], op,
                                       [x[i] for x in sub], vt, apply) for i in range(width)]
                    done(b, a[ok], lanes[ok], sub, olds)
                except MemoryFault as e2:
                    raise fault_lane(e2, a[ok], lanes[ok]) from None
            raise first_fault(b, space, a, whole, lanes, bad, write=True) from None
        done(b, a, lanes, args, olds)

    def done(b, a, lanes, args, olds):
        for i, old in enumerate(olds):
            ai = a + np.uint64(i * size)
            if b.memory.writes is not None and space in _TRACKED:
                # A failed compare-and-swap writes nothing; every other atomic writes.
                wrote = old.view(UINT[size * 8]) == args[0][i].view(UINT[size * 8]) if op == "cas" else \
                    np.ones(ai.shape, dtype=bool)
                b.memory.writes.record(ai[wrote], size, _thread_ids(b, lanes)[wrote])
            if dsts is not None:
                dsts[i](b, lanes, old.view(UINT[max(t.bits, 8)]))
    return run, 0, -1


def _is_policy(op: ir.Operand, ins: ir.Instruction) -> bool:
    """The trailing cache-policy operand of `.L2::cache_hint` forms is a hint, not a value."""
    return op is ins.operands[-1] and any(m.startswith("L2::cache_hint") for m in ins.modifiers)


def _apply(op: str, cur, v, cmpv=None):
    with np.errstate(all="ignore"):
        if op == "add":
            if cur.dtype.kind == "f":
                # One IEEE add, rounded to nearest; a NaN result follows the f32/f64 NaN policy
                # of every other float result (canonical f32 NaN, f64 payload of the first NaN).
                from .. import numerics as num
                return num.fadd(cur, v.astype(cur.dtype))
            return cur + v
        if op == "exch":
            return v
        if op == "min":
            return np.minimum(cur, v) if cur.dtype.kind != "f" else np.fmin(cur, v)
        if op == "max":
            return np.maximum(cur, v) if cur.dtype.kind != "f" else np.fmax(cur, v)
        if op == "and":
            return cur & v
        if op == "or":
            return cur | v
        if op == "xor":
            return cur ^ v
        if op == "inc":
            # PTX: ((old >= b) ? 0 : old + 1), unsigned.
            return np.where(cur >= v, cur.dtype.type(0), cur + cur.dtype.type(1))
        if op == "dec":
            return np.where((cur == 0) | (cur > v), v, cur - cur.dtype.type(1))
        if op == "cas":
            return np.where(cur == cmpv, v, cur)
    raise AssertionError(op)


def atomic_rmw(b, space: str, addr: np.ndarray, lanes: np.ndarray, op: str, args: list, vt: np.dtype,
               apply=None) -> np.ndarray:
    """Apply an atomic op lane by lane in lane order; returns each lane's old value.

    Colliding lanes see each other's updates in lane order, exactly as a sequential execution
    would. Lanes are processed in rounds: each round takes, for every distinct address, the
    lowest-numbered lane not yet done; where one address has many lanes, ``atomic_order``
    computes the same outcome with scans instead of a round per lane.
    """
    size = vt.itemsize
    cells = _cells(b, space, addr, size, lanes)     # (buffer view, element index) per lane
    buf, idx = cells
    view = buf[:buf.size - buf.size % size].view(vt) if buf.size % size else buf.view(vt)
    old = np.empty(addr.shape, dtype=vt)
    if not idx.size:
        return old

    def rounds(sel: np.ndarray) -> None:
        _rounds(view, idx, sel, op, args, apply, old)

    sequential_rmw(view, idx, op, args, old, apply, rounds)
    return old


def _rounds(view, idx, sel_all, op, args, apply, old) -> None:
    """The lanes ``sel_all`` (indices, ascending) in rounds, one lane per address each."""
    sub = idx[sel_all]
    order = np.lexsort((np.arange(sub.size), sub))
    sidx = sub[order]
    first = np.ones(sidx.size, dtype=bool)
    first[1:] = sidx[1:] != sidx[:-1]
    rank = np.arange(sidx.size) - np.maximum.accumulate(np.where(first, np.arange(sidx.size), 0))
    for r in range(int(rank.max()) + 1 if rank.size else 0):
        sel = sel_all[order[rank == r]]
        cur = view[idx[sel]]
        old[sel] = cur
        if op == "cas":
            new = (apply or _apply)(op, cur, args[1][sel], args[0][sel])
        else:
            new = (apply or _apply)(op, cur, args[0][sel])
        view[idx[sel]] = new


def _cells(b, space: str, addr: np.ndarray, size: int, lanes: np.ndarray):
    if space in ("global", "generic") and not (
            ((addr >= SHARED_BASE) & (addr < LOCAL_LIMIT)).any()):
        groups = b.memory.element_index(addr, size, "global")
        if len(groups) == 1:
            sel, alloc, idx = groups[0]
            return alloc.data, idx
        raise MemoryFault("atomics spanning several allocations in one instruction are not "
                          "executable yet", 0, int(addr[0]), space)
    if space == "generic":
        if ((addr >= SHARED_BASE) & (addr < SHARED_LIMIT)).all():
            space, addr = "shared", addr - np.uint64(SHARED_BASE)
        else:
            raise MemoryFault("generic atomics outside global and shared memory are not executable yet",
                              0, int(addr[0]), space)
    buf, idx = b._window(space, addr, size, lanes)
    return buf, idx // size
