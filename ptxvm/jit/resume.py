"""The stops of a host kernel: what each saves and reloads, found by liveness over LLVM allocas.

A kernel stops (a barrier, a warp exchange, printf) by saving registers into its thread record
and returning; the driver later calls it again and the entry block's switch jumps to the stop's
resume block, which reloads them.  Only what the code after some stop may read gets a record
slot, and each stop stores and each resume reloads only what it must (``lower_stops``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from llvmlite import ir

from ..lift.function import I1, I32, I64
from . import layout as L
from .state import HostFunctionState, Stop, field_ptr

if TYPE_CHECKING:
    from ..lift.function import FunctionLowering

Save = list[tuple[ir.Value, int]]          # (register alloca, record offset)


def _record_offsets(fl: FunctionLowering, st: HostFunctionState,
                    live_in: dict[int, set[int]]) -> tuple[list[ir.Value], dict[int, int], int]:
    """The registers some stop's continuation may read, and their record offsets, packed densely
    (wide registers first, then 4-byte ones: a small record keeps a CTA's records in cache);
    returns (kept, offset by id, 8-byte save slots used)."""
    regs = [slot for slot, _t in fl.all_registers()]
    saved = {a for s in st.stops for a in live_in.get(id(s.cont), ())}
    kept = [slot for slot in regs if id(slot) in saved and slot is not st.limit_reg and slot is not st.steps_reg]
    size = {id(slot): 4 if slot.type.pointee.width <= 32 else 8 * ((slot.type.pointee.width + 63) // 64)
            for slot in kept}
    offsets, at = {}, L.THREAD_HEADER
    for slot in sorted(kept, key=lambda s: size[id(s)] == 4):
        offsets[id(slot)] = at
        at += size[id(slot)]
    return kept, offsets, (at - L.THREAD_HEADER + 7) // 8


def lower_stops(fl: FunctionLowering, st: HostFunctionState) -> int:
    """Fill every stop and resume block of kernel ``fl`` and the entry's resume switch; returns
    the 8-byte record slots its saves use.

    A register's record slot is its home across stops.  A stop stores only what may have been
    written since the thread's start or, separately, since a resume (``dirty``, forward
    may-analyses; which applies is known at run time: ``fresh``), and a resume reloads only
    what is read, or stored by a later stop, before the next stop (``needed``).  Loop-invariant
    registers of a barrier loop then stay in the record instead of being reloaded and stored
    back every round."""
    if not st.stops:
        return 0
    slot_ids = {id(slot) for slot, _t in fl.all_registers()}
    # A stop carries what its continuation needs across the return: an edge stop -> cont.
    live_in = live_allocas(fl.llfn, slot_ids, {id(s.stop): id(s.cont) for s in st.stops})
    kept, offsets, used = _record_offsets(fl, st, live_in)
    keeps = {s.k: [(slot, offsets[id(slot)]) for slot in kept if id(slot) in live_in.get(id(s.cont), ())]
             for s in st.stops}
    resumes = [s.resume for s in st.stops]
    to_cont = {id(s.resume): id(s.cont) for s in st.stops}
    dirty_f = may_dirty(fl.llfn, slot_ids, [fl.body], resumes, to_cont)
    dirty_r = may_dirty(fl.llfn, slot_ids, resumes, [fl.body], to_cont)
    saves = {s.k: ([(slot, off) for slot, off in keeps[s.k] if id(slot) in dirty_f.get(id(s.stop), ())],
                   [(slot, off) for slot, off in keeps[s.k] if id(slot) in dirty_r.get(id(s.stop), ())])
             for s in st.stops}
    needed = live_allocas(fl.llfn, slot_ids, {}, {id(s.stop): {id(slot) for slot, _o in saves[s.k][1]}
                                                   for s in st.stops})
    b = ir.IRBuilder()
    for s in st.stops:
        _emit_stop(fl, st, b, s, *saves[s.k])
        _emit_resume(st, b, s, [(slot, off) for slot, off in keeps[s.k] if id(slot) in needed.get(id(s.cont), ())])
    eb = fl._alloca_b
    sw = eb.switch(eb.load(field_ptr(eb, st.thr, L.T_RESUME, I32)), fl.body)
    for s in st.stops:
        sw.add_case(I32(s.k), s.resume)
    return used


def _store_all(b: ir.IRBuilder, thr: ir.Value, save: Save) -> None:
    for slot, off in save:
        b.store(b.load(slot), field_ptr(b, thr, off, slot.type.pointee))


def _emit_stop(fl: FunctionLowering, st: HostFunctionState, b: ir.IRBuilder, s: Stop,
               save_f: Save, save_r: Save) -> None:
    # Only what the code after the stop may read survives it: saving dead registers would keep
    # every value alive everywhere and make LLVM spill.
    b.position_at_end(s.stop)
    b.store(b.load(st.steps_reg), field_ptr(b, st.thr, L.T_STEPS, I64))
    if save_f != save_r:
        on_f, on_r, done = (fl.new_block(f"stop{s.k}_{x}") for x in ("fresh", "resumed", "saved"))
        b.cbranch(b.load(st.fresh), on_f, on_r)
        for blk, save in ((on_f, save_f), (on_r, save_r)):
            b.position_at_end(blk)
            _store_all(b, st.thr, save)
            b.branch(done)
        b.position_at_end(done)
    else:
        _store_all(b, st.thr, save_r)
    b.store(I32(s.k), field_ptr(b, st.thr, L.T_RESUME, I32))
    b.ret(I32(s.state))


def _emit_resume(st: HostFunctionState, b: ir.IRBuilder, s: Stop, reload: Save) -> None:
    b.position_at_end(s.resume)
    b.store(I1(0), st.fresh)
    for slot, off in reload:
        b.store(b.load(field_ptr(b, st.thr, off, slot.type.pointee)), slot)
    b.store(b.load(field_ptr(b, st.thr, L.T_STEPS, I64)), st.steps_reg)   # saved at the stop
    b.store(b.load(field_ptr(b, st.thr, L.T_LIMIT, I64)), st.limit_reg)   # set anew each round
    b.branch(s.cont)


def live_allocas(fn: ir.Function, slots: set[int], edges: dict[int, int],
                  extra_use: dict[int, set[int]] | None = None) -> dict[int, set[int]]:
    """Backward liveness of register allocas over ``fn``'s blocks: per block (by id), the allocas
    that may be loaded before being stored on some path from its start (``extra_use``: allocas
    a block reads after its instructions, e.g. the saves a stop block will get)."""
    use: dict[int, set[int]] = {}
    kill: dict[int, set[int]] = {}
    succ: dict[int, list[int]] = {}
    for blk in fn.blocks:
        u, d = set(), set()
        for ins in blk.instructions:
            if isinstance(ins, ir.LoadInstr) and id(ins.operands[0]) in slots:
                a = id(ins.operands[0])
                if a not in d:
                    u.add(a)
            elif isinstance(ins, ir.StoreInstr) and id(ins.operands[1]) in slots:
                d.add(id(ins.operands[1]))
        u |= (extra_use or {}).get(id(blk), set()) - d
        use[id(blk)], kill[id(blk)] = u, d
        term = blk.terminator
        succ[id(blk)] = [id(op) for op in (term.operands if term is not None else ()) if isinstance(op, ir.Block)]
        if isinstance(term, ir.SwitchInstr):
            succ[id(blk)] += [id(dest) for _val, dest in term.cases] + [id(term.default)]
        if id(blk) in edges:
            succ[id(blk)].append(edges[id(blk)])
    live: dict[int, set[int]] = {k: set(v) for k, v in use.items()}
    order = [id(b) for b in reversed(fn.blocks)]
    changed = True
    while changed:
        changed = False
        for k in order:
            out = set().union(*(live[s] for s in succ[k] if s in live)) if succ[k] else set()
            new = use[k] | (out - kill[k])
            if new != live[k]:
                live[k] = new
                changed = True
    return live


def _successors(blk: ir.Block) -> list[int]:
    term = blk.terminator
    out = [id(op) for op in (term.operands if term is not None else ()) if isinstance(op, ir.Block)]
    if isinstance(term, ir.SwitchInstr):
        out += [id(dest) for _val, dest in term.cases] + [id(term.default)]
    return out


def may_dirty(fn: ir.Function, slots: set[int], starts: list[ir.Block], ends: list[ir.Block],
               edges: dict[int, int]) -> dict[int, set[int]]:
    """Forward may-analysis over ``fn``'s blocks on the paths from ``starts`` only (the thread's
    start ``body``, or the resumes): per block (by id) reached that way, the register allocas
    that may have been stored since, at the block's start: the registers whose record slots may
    be stale there.  ``ends`` (the other kind of start) receive nothing; ``edges`` adds the
    resume -> continuation edges (not branches yet)."""
    gen: dict[int, set[int]] = {}
    preds: dict[int, list[int]] = {id(blk): [] for blk in fn.blocks}
    for blk in fn.blocks:
        gen[id(blk)] = {id(ins.operands[1]) for ins in blk.instructions
                        if isinstance(ins, ir.StoreInstr) and id(ins.operands[1]) in slots}
        for s in _successors(blk) + ([edges[id(blk)]] if id(blk) in edges else []):
            preds.setdefault(s, []).append(id(blk))
    start_ids, end_ids = {id(b) for b in starts}, {id(b) for b in ends}
    inn: dict[int, set[int] | None] = {id(blk): (set() if id(blk) in start_ids else None) for blk in fn.blocks}
    out: dict[int, set[int] | None] = {id(blk): None for blk in fn.blocks}
    changed = True
    while changed:
        changed = False
        for blk in fn.blocks:
            k = id(blk)
            if k in end_ids:
                continue
            new_in = set() if k in start_ids else None
            for p in preds.get(k, ()):
                if out[p] is not None:
                    new_in = (new_in or set()) | out[p]
            new_out = None if new_in is None else new_in | gen[k]
            if new_in != inn[k] or new_out != out[k]:
                inn[k], out[k] = new_in, new_out
                changed = True
    return {k: v for k, v in inn.items() if v is not None}

