"""ld, st, ldu, cvta, isspacep, atom, red, fences (PTX ISA §9.7.9, §9.7.13).

Memory-order, scope and cache qualifiers change nothing in a sequential
execution of one instruction for all lanes; they are accepted and ignored.
"""

from __future__ import annotations

import numpy as np

from ...ir import nodes as ir
from ...ir.types import ScalarType
from ...machine import reports
from ...machine.addressmap import (LOCAL_BASE, LOCAL_LIMIT, NULL_LIMIT, PARAM_BASE, PARAM_LIMIT, SHARED_BASE,
                                   SHARED_LIMIT)
from ...machine.memory import MemoryFault, check_alignment
from ..access import faulting_lanes, first_fault
from ..lanevalues import Affine
from ..program import CompileContext, address, address_formula, numpy_dtype, reader, writer
from ..state import UINT
from . import formulas, impl, slices

_SPACES = ("global", "shared", "local", "param", "const")


def space_of(ins: ir.Instruction) -> str:
    if ins.opcode == "ld.global.nc":
        return "global"
    for m in ins.modifiers:
        base = m.split("::")[0]
        if base in _SPACES:
            return base
    return "generic"


def fault_lane(e: MemoryFault, addr: np.ndarray, lanes: np.ndarray) -> MemoryFault:
    """Point a fault raised deep in the memory layer at the thread whose address caused it."""
    hits = np.nonzero(addr == np.uint64(e.address))[0]
    if hits.size == 0:
        # Window offsets are reported relative to their window.
        hits = np.nonzero((addr - np.uint64(SHARED_BASE) == np.uint64(e.address))
                          | (addr - np.uint64(LOCAL_BASE) == np.uint64(e.address))
                          | (addr - np.uint64(PARAM_BASE) == np.uint64(e.address)))[0]
    e.lane = int(lanes[hits[0]]) if hits.size else int(lanes[0])
    return e


def lowest_fault(b, space: str, addr: np.ndarray, nbytes: int, lanes: np.ndarray, e: MemoryFault, *,
                 write: bool) -> MemoryFault:
    """What to report after the memory layer raised ``e`` for an access by ``lanes``: the fault
    of the lowest faulting lane, the whole access's span (see ..access); ``e`` itself when no
    lane's access is out of range (a limit of the interpreter, not a fault of the program)."""
    bad = faulting_lanes(b, space, addr, nbytes, write=write)
    if bad is None:
        return fault_lane(e, addr, lanes)
    return first_fault(b, space, addr, nbytes, lanes, bad, write=write)


def pvar_of(ctx: CompileContext, space: str, a) -> tuple[str, int, int] | None:
    """(key, size, offset) when ``[a]`` names a per-thread `.param` variable."""
    if space == "param" and isinstance(a, ir.Address) and isinstance(a.base, ir.Symbol):
        hit = ctx.pvar(a.base.name)
        if hit is not None:
            return hit[0], hit[1], a.offset
    return None


def _pvar_check(ctx, ins, key: str, size: int, off: int, nbytes: int) -> None:
    if off < 0 or off + nbytes > size:
        raise ctx.unsupported(ins, f"accesses bytes {off}..{off + nbytes - 1} of a {size}-byte .param variable")


@impl("ld", "ldu", "ld.global.nc")
def _ld(ctx: CompileContext, ins: ir.Instruction):
    t = ins.types[0]
    space = space_of(ins)
    pv = pvar_of(ctx, space, ins.operands[1])
    if pv is not None:
        key, psize, off = pv
        d = ins.operands[0]
        elems = d.elements if isinstance(d, ir.Vector) else (d,)
        n = max(t.bits // 8, 1)
        _pvar_check(ctx, ins, key, psize, off, n * len(elems))
        ws = [writer(ctx, e, t, ins) for e in elems]
        dt = UINT[max(t.bits, 8)]

        def run_pvar(b, lanes):
            buf = b.pbuf(key, psize)
            for i, w in enumerate(ws):
                o = off + i * n
                w(b, lanes, np.ascontiguousarray(buf[lanes, o:o + n]).view(dt).reshape(-1))
        return run_pvar, 0, -1
    addr = address(ctx, ins.operands[1], space, ins)
    d = ins.operands[0]
    elems = d.elements if isinstance(d, ir.Vector) else (d,)
    writers = [writer(ctx, e, t, ins) for e in elems]
    size = max(t.bits // 8, 1)
    dtype = UINT[max(t.bits, 8)]
    total = size * len(elems)
    a_op = ins.operands[1]
    use_formulas = formulas.enabled()
    if space == "param" and isinstance(a_op, ir.Address) and isinstance(a_op.base, ir.Symbol) \
            and a_op.base.name in ctx.symbols.params:
        # A kernel parameter: one value for every thread.
        off = ctx.symbols.params[a_op.base.name] + a_op.offset

        def run_param(b, lanes):
            for i, w in enumerate(writers):
                o = off + i * size
                if o < 0 or o + size > b.params.size:
                    raise MemoryFault(reports.param_out_of_bounds(o), int(lanes[0]), o, "param")
                value = b.params[o:o + size].view(dtype)[0]
                w(b, lanes, Affine.make(size * 8, int(value)) if use_formulas and lanes is b.all else
                  np.full(lanes.shape, value))
        return run_param, 0, -1
    formula = address_formula(ctx, a_op, space, ins) if use_formulas and isinstance(a_op, ir.Address) \
        else None

    def run(b, lanes):
        if formula is not None and lanes is b.all:
            af = formula(b)
            if af is not None and slices.load(b, space, af, writers, size, dtype):
                return
        a = addr(b, lanes)
        try:
            check_alignment(a, total, space)
            for i, w in enumerate(writers):
                w(b, lanes, b.load(space, a + np.uint64(i * size) if i else a, dtype, lanes, aligned=True))
        except MemoryFault as e:
            # A load writes only registers, which a fault leaves unobservable: report, done.
            raise lowest_fault(b, space, a, total, lanes, e, write=False) from None
    return run, 0, -1


@impl("st")
def _st(ctx: CompileContext, ins: ir.Instruction):
    t = ins.types[0]
    space = space_of(ins)
    pv = pvar_of(ctx, space, ins.operands[0])
    if pv is not None:
        key, psize, off = pv
        s_ = ins.operands[1]
        elems = s_.elements if isinstance(s_, ir.Vector) else (s_,)
        n = max(t.bits // 8, 1)
        _pvar_check(ctx, ins, key, psize, off, n * len(elems))
        rs = [reader(ctx, e, t, ins) for e in elems]

        def run_pvar(b, lanes):
            buf = b.pbuf(key, psize)
            for i, r in enumerate(rs):
                o = off + i * n
                buf[lanes, o:o + n] = r(b, lanes).reshape(-1, 1).view(np.uint8)
        return run_pvar, 0, -1
    addr = address(ctx, ins.operands[0], space, ins)
    s = ins.operands[1]
    elems = s.elements if isinstance(s, ir.Vector) else (s,)
    readers = [reader(ctx, e, t, ins) for e in elems]
    size = max(t.bits // 8, 1)
    total = size * len(elems)
    a_op = ins.operands[0]
    formula = address_formula(ctx, a_op, space, ins) if formulas.enabled() and isinstance(a_op, ir.Address) \
        else None

    def run(b, lanes):
        if formula is not None and lanes is b.all and b.memory.writes is None:
            af = formula(b)
            if af is not None and slices.store(b, space, af, readers, size):
                return
        a = addr(b, lanes)
        # Checked before anything is written: the threads in range complete the store, a faulting
        # thread writes none of its elements (the fault-write rule of ..access).
        bad = faulting_lanes(b, space, a, total, write=True)
        if bad is None:
            store(b, a, lanes)
            return
        ok = ~bad
        if ok.any():
            store(b, a[ok], lanes[ok])
        raise first_fault(b, space, a, total, lanes, bad, write=True)

    def store(b, a, lanes):
        try:
            for i, r in enumerate(readers):
                b.store(space, a + np.uint64(i * size) if i else a, r(b, lanes), lanes, aligned=True)
        except MemoryFault as e:
            raise fault_lane(e, a, lanes) from None
        if b.memory.writes is not None and space in _TRACKED:
            b.memory.writes.record(a, total, _thread_ids(b, lanes))
    return run, 0, -1


# Write attribution (DeviceMemory.writes) covers what can land in a global allocation.
_TRACKED = ("global", "generic")


def _thread_ids(b, lanes: np.ndarray) -> np.ndarray:
    """Batch lanes -> global linear thread ids (threads are numbered CTA-major in a batch)."""
    return np.int64(b.first_cta * b.geometry.threads_per_cta) + lanes.astype(np.int64)


_WINDOWS = {"shared": (SHARED_BASE, SHARED_LIMIT), "local": (LOCAL_BASE, LOCAL_LIMIT),
            "param": (PARAM_BASE, PARAM_LIMIT), "global": (0, 0), "const": (0, 0)}


@impl("cvta")
def _cvta(ctx: CompileContext, ins: ir.Instruction):
    t = ins.types[0]
    space = space_of(ins)
    to = ins.has("to")
    src = reader(ctx, ins.operands[1], t, ins)
    dst = writer(ctx, ins.operands[0], t, ins)
    base = _WINDOWS[space][0]
    ut = UINT[t.bits]

    def run(b, lanes):
        v = src(b, lanes)
        dst(b, lanes, (v - ut(base) if to else v + ut(base)).astype(ut))
    return run, 0, -1


@impl("isspacep")
def _isspacep(ctx, ins):
    space = space_of(ins)
    src = reader(ctx, ins.operands[1], ScalarType.U64, ins)
    dst = writer(ctx, ins.operands[0], ScalarType.PRED, ins)
    lo, hi = _WINDOWS[space]

    def run(b, lanes):
        a = src(b, lanes)
        if space in ("global", "const"):
            windows = ((a >= SHARED_BASE) & (a < SHARED_LIMIT)) | ((a >= LOCAL_BASE) & (a < LOCAL_LIMIT)) | \
                      ((a >= PARAM_BASE) & (a < PARAM_LIMIT))
            dst(b, lanes, ~windows & (a >= NULL_LIMIT))
        else:
            dst(b, lanes, (a >= lo) & (a < hi))
    return run, 0, -1


@impl("membar", "fence", "prefetch", "prefetchu", "discard", "applypriority", "nanosleep")
def _noop(ctx, ins):
    # A single sequential executor is already sequentially consistent; nothing to do.
    return (lambda b, lanes: None), 0, -1


_ATOM_OPS = ("add", "inc", "dec", "exch", "cas", "min", "max", "and", "or", "xor")


@impl("atom", "red")
def _atom(ctx: CompileContext, ins: ir.Instruction):
    t = ins.types[0]
    op = next((m for m in ins.modifiers if m in _ATOM_OPS), None)
    if op is None or ins.has("v2") or ins.has("v4") or ins.has("v8"):
        raise ctx.unsupported(ins, "is not executable yet")
    is_red = ins.opcode == "red"
    space = space_of(ins)
    a_idx = 0 if is_red else 1
    addr = address(ctx, ins.operands[a_idx], space, ins)
    vals = [reader(ctx, o, t, ins) for o in ins.operands[a_idx + 1:]]
    dst = None if is_red else writer(ctx, ins.operands[0], t, ins)
    apply = None
    if t.value in ("f16", "f16x2", "bf16", "bf16x2"):
        if op not in ("add", "min", "max", "exch", "cas"):
            raise ctx.unsupported(ins, "(half precision atomics) is not executable yet")
        if op in ("add", "min", "max"):
            from .. import half
            fn = {"add": half.add, "min": half.min_, "max": half.max_}[op]
            ut = UINT[t.bits]

            def apply(op_, cur, v, cmpv=None):
                return np.asarray(fn(cur, v, t.value)).astype(ut)
    vt = np.dtype(UINT[t.bits]) if t.value in ("f16", "f16x2", "bf16", "bf16x2") else numpy_dtype(t)
    size = max(t.bits // 8, 1)

    def run(b, lanes):
        a = addr(b, lanes)
        args = [v(b, lanes).view(vt) for v in vals]
        try:
            check_alignment(a, size, space)
            old = atomic_rmw(b, space, a, lanes, op, args, vt, apply)
        except MemoryFault as e:
            # Nothing was written; the threads in range complete (the fault-write rule of ..access).
            bad = faulting_lanes(b, space, a, size, write=True)
            if bad is None:
                raise fault_lane(e, a, lanes) from None
            ok = ~bad
            if ok.any():
                try:
                    done(b, a[ok], lanes[ok], [x[ok] for x in args],
                         atomic_rmw(b, space, a[ok], lanes[ok], op, [x[ok] for x in args], vt, apply))
                except MemoryFault as e2:
                    raise fault_lane(e2, a[ok], lanes[ok]) from None
            raise first_fault(b, space, a, size, lanes, bad, write=True) from None
        done(b, a, lanes, args, old)

    def done(b, a, lanes, args, old):
        if b.memory.writes is not None and space in _TRACKED:
            # A failed compare-and-swap writes nothing; every other atomic writes.
            wrote = old.view(UINT[size * 8]) == args[0].view(UINT[size * 8]) if op == "cas" else \
                np.ones(a.shape, dtype=bool)
            b.memory.writes.record(a[wrote], size, _thread_ids(b, lanes)[wrote])
        if dst is not None:
            dst(b, lanes, old.view(UINT[max(t.bits, 8)]))
    return run, 0, -1


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

    Lanes are processed in rounds: each round takes, for every distinct address,
    the lowest-numbered lane not yet done, so colliding lanes see each other's
    updates in lane order, exactly as a sequential execution would.
    """
    size = vt.itemsize
    cells = _cells(b, space, addr, size, lanes)     # (buffer view, element index) per lane
    buf, idx = cells
    view = buf[:buf.size - buf.size % size].view(vt) if buf.size % size else buf.view(vt)
    old = np.empty(addr.shape, dtype=vt)
    order = np.lexsort((np.arange(idx.size), idx))
    sidx = idx[order]
    first = np.ones(sidx.size, dtype=bool)
    first[1:] = sidx[1:] != sidx[:-1]
    rank = np.arange(sidx.size) - np.maximum.accumulate(np.where(first, np.arange(sidx.size), 0))
    for r in range(int(rank.max()) + 1 if rank.size else 0):
        sel = order[rank == r]
        cur = view[idx[sel]]
        old[sel] = cur
        if op == "cas":
            new = (apply or _apply)(op, cur, args[1][sel], args[0][sel])
        else:
            new = (apply or _apply)(op, cur, args[0][sel])
        view[idx[sel]] = new
    return old


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
