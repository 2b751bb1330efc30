"""Memory instructions (PTX ISA §9.7.9): ld, ldu, st, the cache hints (prefetch, discard,
applypriority, createpolicy) and the address-space queries cvta and isspacep."""

from __future__ import annotations

import numpy as np

from ...ir import nodes as ir
from ...ir.types import ScalarType
from ...machine import reports
from ...machine.addressmap import (LOCAL_BASE, LOCAL_LIMIT, NULL_LIMIT, PARAM_BASE, PARAM_LIMIT, SHARED_BASE, SHARED_LIMIT)
from ...machine.memory import MemoryFault, check_alignment
from ..access import faulting_lanes, first_fault
from ..lanevalues import Affine
from ..program import CompileContext, address, address_formula, reader, writer
from ..state import UINT
from . import formulas, impl, slices
from .common import _thread_ids


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
    if t.bits > 64:
        raise ctx.unsupported(ins, f"moves .{t.value} values, which the interpreter does not hold yet")
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
    if t.bits > 64:
        raise ctx.unsupported(ins, f"moves .{t.value} values, which the interpreter does not hold yet")
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


@impl("prefetch", "prefetchu", "discard", "applypriority")
def _noop(ctx, ins):
    # Cache hints change no value.
    return (lambda b, lanes: None), 0, -1
