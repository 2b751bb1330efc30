"""The generated driver loop of a host kernel: ``ptxvm_run`` runs whole CTAs' threads to their
next stops in native code, releasing plain barriers and warp exchanges itself, so barrier-heavy
kernels run without returning to Python (the executor settles everything else)."""

from __future__ import annotations

from llvmlite import ir

from ..lift.function import I1, I8, I8P, I32, I64
from . import layout as L
from .state import field_ptr

I64P = ir.PointerType(I64)


def _loop(fn: ir.Function, b: ir.IRBuilder, count: ir.Value, body, name: str) -> None:
    """for i in range(count): body(i) -- an IR loop; ``body`` may create blocks."""
    pre = b.block
    head, loop, done = (fn.append_basic_block(f"{name}_{x}") for x in ("head", "body", "done"))
    b.branch(head)
    b.position_at_end(head)
    i = b.phi(I64)
    i.add_incoming(I64(0), pre)
    b.cbranch(b.icmp_unsigned("<", i, count), loop, done)
    b.position_at_end(loop)
    body(i)
    i.add_incoming(b.add(i, I64(1)), b.block)
    b.branch(head)
    b.position_at_end(done)


# size: a generated-IR builder: its blocks are tied by phis and shared values, so split every
# helper would take a dozen IR values and the control flow would no longer read in one place.
def _release_warps_ir(fn: ir.Function, b: ir.IRBuilder, base, stride, first, tpc, slots) -> None:
    """Per warp of the CTA: the lanes stopped at one warp-exchange site take part (as the
    executor's ``_release_warps``): their published values go to the warp's exchange snapshot,
    each gets the participation mask, and they become runnable.

    Which site, when the warp's lanes wait at several (lanes run ahead of each other between
    stops, where the interpreter runs the lowest PC first): a lockstep point (volatile shared
    access) first; then a warp instruction whose membermask lanes are all there; then one
    without a membermask (activemask); then the lowest site. Lanes a membermask names that wait
    elsewhere must move first, or the instruction would run without them (fuzzer findings)."""
    # Long (why): one IR construction whose nested loops (warps, lanes, candidate sites, members)
    # share the builder, the scratch slots and the per-lane record lookups as closures; split
    # apart, each piece would take and return most of them.
    site_slot, mask_slot, max_slot, live_slot, pres_slot, req_slot = slots
    nwarps = b.udiv(b.add(tpc, I64(31)), I64(32))
    lane0 = b.gep(base, [b.mul(first, stride)])
    cta = b.inttoptr(b.load(field_ptr(b, lane0, L.T_CTA, I64)), I8P)
    xchg = b.inttoptr(b.load(field_ptr(b, cta, L.C_XCHG, I64)), I8P)

    def lane_thr(w, lane):
        t = b.add(b.mul(w, I64(32)), lane)
        inb = b.icmp_unsigned("<", t, tpc)
        # Lanes past the CTA's last thread read lane 0's record (never used), not past the array.
        safe = b.select(inb, t, I64(0))
        return t, inb, b.gep(base, [b.mul(b.add(first, safe), stride)])

    def at_warp(inb, thr):
        return b.and_(inb, b.icmp_unsigned("==", b.load(field_ptr(b, thr, L.T_STATE, I32)), I32(L.State.WARP)))

    # size: the body of the per-warp IR loop of _release_warps_ir, tied to it by phis.
    def per_warp(w):
        # Long (why): the release steps of one warp in order (scan, choose the site, mask,
        # release), sharing the warp's index and slots; see the docstring above.
        b.store(I32(0x7FFFFFFF), site_slot)
        b.store(I32(-1), max_slot)
        b.store(I64(0), live_slot)
        b.store(I64(0), mask_slot)

        def scan(lane):
            _t, inb, thr = lane_thr(w, lane)
            live = b.and_(inb, b.icmp_unsigned("!=", b.load(field_ptr(b, thr, L.T_STATE, I32)), I32(L.State.EXITED)))
            b.store(b.or_(b.load(live_slot), b.shl(b.zext(live, I64), lane)), live_slot)
            at = at_warp(inb, thr)
            key = _warp_key(b, thr)
            lo, hi = b.load(site_slot), b.load(max_slot)
            b.store(b.select(b.and_(at, b.icmp_signed("<", key, lo)), key, lo), site_slot)
            b.store(b.select(b.and_(at, b.icmp_signed(">", key, hi)), key, hi), max_slot)

        _loop(fn, b, I64(32), scan, "wscan")
        # The lanes this warp has: a bound LLVM cannot fold, so the nested loops below stay loops
        # (unrolled 32 x 32 they made code generation take minutes).
        rest = b.sub(tpc, b.mul(w, I64(32)))
        nl = b.select(b.icmp_unsigned("<", rest, I64(32)), rest, I64(32))
        lo = b.load(site_slot)
        several = b.and_(b.icmp_signed("<", lo, b.load(max_slot)), b.icmp_signed(">=", lo, I32(1 << 30)))
        pick, chosen = fn.append_basic_block("wpick"), fn.append_basic_block("wchosen")
        b.cbranch(several, pick, chosen)
        b.position_at_end(pick)
        b.store(I32(0x7FFFFFFF), max_slot)              # now: the least (class << 28 | site)

        def candidate(lane):
            _t, inb, thr = lane_thr(w, lane)
            yes, no = fn.append_basic_block("wc_yes"), fn.append_basic_block("wc_no")
            b.cbranch(at_warp(inb, thr), yes, no)
            b.position_at_end(yes)
            site = b.load(field_ptr(b, thr, L.T_SITE, I32))
            b.store(I64(0), pres_slot)
            b.store(I64(0), req_slot)

            def member(m):
                _, inb2, thr2 = lane_thr(w, m)
                here = b.and_(at_warp(inb2, thr2),
                              b.icmp_unsigned("==", b.load(field_ptr(b, thr2, L.T_SITE, I32)), site))
                b.store(b.or_(b.load(pres_slot), b.shl(b.zext(here, I64), m)), pres_slot)
                masked = b.and_(here, b.icmp_unsigned("==", b.load(field_ptr(b, thr2, L.T_AUX, I32)), I32(2)))
                need = b.or_(b.zext(b.load(field_ptr(b, thr2, L.T_AUX2, I32)), I64), I64(1 << 32))
                b.store(b.or_(b.load(req_slot), b.select(masked, need, I64(0))), req_slot)

            _loop(fn, b, nl, member, "wmem")
            req = b.load(req_slot)
            has_mask = b.icmp_unsigned("!=", b.lshr(req, I64(32)), I64(0))
            missing = b.and_(b.and_(req, b.load(live_slot)), b.xor(b.load(pres_slot), I64(-1)))
            complete = b.icmp_unsigned("==", b.and_(missing, I64(0xFFFFFFFF)), I64(0))
            cls = b.select(has_mask, b.select(complete, I32(1), I32(3)), I32(2))
            ckey = b.or_(b.shl(cls, I32(28)), site)
            cur = b.load(max_slot)
            b.store(b.select(b.icmp_signed("<", ckey, cur), ckey, cur), max_slot)
            b.branch(no)
            b.position_at_end(no)

        _loop(fn, b, nl, candidate, "wcand")
        best = b.and_(b.load(max_slot), I32((1 << 28) - 1))
        b.store(b.add(best, I32(1 << 30)), site_slot)    # a warp instruction's key
        b.branch(chosen)
        b.position_at_end(chosen)

        def make_mask(lane):
            _t, inb, thr = lane_thr(w, lane)
            hit = b.and_(at_warp(inb, thr), b.icmp_unsigned("==", _warp_key(b, thr), b.load(site_slot)))
            b.store(b.or_(b.load(mask_slot), b.select(hit, b.shl(I64(1), lane), I64(0))), mask_slot)

        def release(lane):
            _t, _inb, thr = lane_thr(w, lane)
            mask = b.load(mask_slot)
            hit = b.trunc(b.lshr(mask, lane), ir.IntType(1))
            yes, no = fn.append_basic_block("wr_yes"), fn.append_basic_block("wr_no")
            b.cbranch(hit, yes, no)
            b.position_at_end(yes)
            dst = b.gep(xchg, [b.mul(b.add(b.mul(w, I64(32)), lane), I64(L.OUT_SLOTS * 8))])
            for k in range(L.OUT_SLOTS):
                b.store(b.load(field_ptr(b, thr, L.T_OUT + 8 * k, I64)), field_ptr(b, dst, 8 * k, I64))
            b.store(mask, field_ptr(b, thr, L.T_IN, I64))
            b.store(I32(L.State.RUNNABLE), field_ptr(b, thr, L.T_STATE, I32))
            b.branch(no)
            b.position_at_end(no)

        _loop(fn, b, I64(32), make_mask, "wmask")
        _loop(fn, b, I64(32), release, "wrel")

    _loop(fn, b, nwarps, per_warp, "warps")


def _warp_key(b: ir.IRBuilder, thr) -> ir.Value:
    """Release order of a lane stopped at a warp exchange: its site, lockstep points first."""
    lockstep = b.icmp_unsigned("==", b.load(field_ptr(b, thr, L.T_AUX, I32)), I32(1))
    site = b.load(field_ptr(b, thr, L.T_SITE, I32))
    return b.select(lockstep, site, b.add(site, I32(1 << 30)))


# size: the generated driver loop (see _release_warps_ir): blocks tied by phis and shared values.
def add_driver(llmod: ir.Module, kernel: ir.Function, record_bytes: int, name: str = "ptxvm_run") -> ir.Function:
    """``i32 ptxvm_run(ctx, records, n, stride, first_thread, first_round)``: run the threads of
    whole CTAs (``n`` threads, a multiple of the CTA size) to their next stops.

    Per CTA it repeats rounds while the CTA is only waiting at one plain barrier (every non-exited
    thread at `bar.sync id` without a count, id < 16): it releases the barrier itself, so
    barrier-heavy kernels run without returning to Python.  Anything else (counts, arrivals,
    bar.red, warp exchanges, printf, yields) is left for the executor.  Returns the first state
    that ends the launch (fault, trap, watchdog, assert), leaving the other threads where they
    are so the executor can report precisely; else 0 when every thread has exited, PENDING when
    some wait for the executor. Adds the instructions its threads ran to the context's X_STEPS.

    The first round also zeroes each thread's record just before writing its identity: in the
    cache, rather than a separate pass over the whole batch (uninitialised registers read 0)."""
    # Long (why): one function of IR whose blocks are linked by phis across the CTA loop, the
    # round loop and the per-thread loop (counters, barrier id, the CTA's first thread); split
    # into helpers, each would have to take and hand back most of those values and blocks.
    fn = ir.Function(llmod, ir.FunctionType(I32, [I64P, I8P, I64, I64, I64, I64]), name=name)
    # The kernel runs only from here: inlined into the loop over threads (no call, no prologue
    # and epilogue per thread and stop), and not kept as a function of its own.
    kernel.attributes.add("alwaysinline")
    kernel.linkage = "internal"
    ctx, base, n, stride, first_thread, first_round = fn.args
    blocks = {k: fn.append_basic_block(k) for k in (
        "entry", "cta_head", "cta_init", "round", "thr", "run", "classify", "round_end", "release",
        "cta_next", "done", "fatal")}
    b = ir.IRBuilder(blocks["entry"])
    ld = lambda slot: b.load(b.gep(ctx, [I64(slot)]))
    ntid_x, ntid_y = ld(L.X_NTID), ld(L.X_NTID + 1)
    tpc = b.mul(b.mul(ntid_x, ntid_y), ld(L.X_NTID + 2))
    nctas = b.udiv(n, tpc)
    cta_base = b.udiv(first_thread, tpc)            # chunks are whole CTAs
    memset = llmod.declare_intrinsic("llvm.memset", [I8P, I64])
    # Scratch of the warp release, in the entry block (no stack growth per round).
    warp_slots = (b.alloca(I32), b.alloca(I64), b.alloca(I32), b.alloca(I64), b.alloca(I64), b.alloca(I64))
    steps_sum, pending = b.alloca(I64), b.alloca(I1)
    b.store(I64(0), steps_sum)
    b.store(I1(0), pending)
    b.branch(blocks["cta_head"])

    b.position_at_end(blocks["cta_head"])
    c = b.phi(I64)
    c.add_incoming(I64(0), blocks["entry"])
    more = fn.append_basic_block("cta_more")
    b.cbranch(b.icmp_unsigned("<", c, nctas), more, blocks["done"])
    b.position_at_end(more)
    # Asked to stop (Ctrl-C): between CTAs, for kernels whose threads are short.
    stop = b.load_atomic(b.gep(ctx, [I64(L.X_STOP)]), "monotonic", 8)
    interrupted = fn.append_basic_block("interrupted")
    b.cbranch(b.icmp_unsigned("!=", stop, I64(0)), interrupted, blocks["cta_init"]).set_weights([1, 1000])
    b.position_at_end(interrupted)
    b.ret(I32(L.State.INTERRUPTED))

    # First call: each thread's identity and memory, written here (native) rather than by numpy,
    # once per CTA before its first round (not in every round of the call).
    b.position_at_end(blocks["cta_init"])
    first0 = b.mul(c, tpc)
    init_loop = fn.append_basic_block("init")
    b.cbranch(b.icmp_unsigned("!=", first_round, I64(0)), init_loop, blocks["round"])
    b.position_at_end(init_loop)
    # %tid and the record's place are counted, not divided out, per thread (divisions were a
    # sixth of a vector add's time); the CTA's record is the same for all its threads.
    t0, tx, ty, tz = (b.phi(I64) for _ in range(4))
    for v in (t0, tx, ty, tz):
        v.add_incoming(I64(0), blocks["cta_init"])
    gt0 = b.add(first_thread, first0)                # index of the CTA's first thread in the batch
    cta_rec = b.add(ld(L.X_CTAS), b.mul(b.add(cta_base, c), I64(L.CTA_RECORD)))
    ithr = b.gep(base, [b.mul(b.add(first0, t0), stride)])
    b.call(memset, [ithr, ir.Constant(I8, 0), I64(record_bytes), I1(0)])
    b.store(b.trunc(t0, I32), field_ptr(b, ithr, L.T_LINEAR, I32))
    for k, v in enumerate((tx, ty, tz)):
        b.store(b.trunc(v, I32), field_ptr(b, ithr, L.T_TID + 4 * k, I32))
    b.store(cta_rec, field_ptr(b, ithr, L.T_CTA, I64))
    b.store(b.add(ld(L.X_LOCAL_BASE), b.mul(b.add(gt0, t0), ld(L.X_LOCAL_STRIDE))), field_ptr(b, ithr, L.T_LOCAL, I64))
    b.store(ld(L.X_KFRAME), field_ptr(b, ithr, L.T_SP, I64))
    tx1 = b.add(tx, I64(1))
    wrap_x = b.icmp_unsigned("==", tx1, ntid_x)
    ty1 = b.add(ty, b.zext(wrap_x, I64))
    wrap_y = b.icmp_unsigned("==", ty1, ntid_y)
    t0n = b.add(t0, I64(1))
    for v, nxt in ((t0, t0n), (tx, b.select(wrap_x, I64(0), tx1)), (ty, b.select(wrap_y, I64(0), ty1)),
                   (tz, b.add(tz, b.zext(wrap_y, I64)))):
        v.add_incoming(nxt, init_loop)
    b.cbranch(b.icmp_unsigned("<", t0n, tpc), init_loop, blocks["round"])

    b.position_at_end(blocks["round"])
    # ``released``: the previous round ended with the CTA's plain barrier complete, so threads
    # waiting there run (their state word is rewritten at their next stop, not by a pass here).
    released = b.phi(I1)
    released.add_incoming(I1(0), blocks["cta_init"])
    released.add_incoming(I1(0), init_loop)
    first = b.mul(c, tpc)
    b.branch(blocks["thr"])

    b.position_at_end(blocks["thr"])
    t, exited, atbar, other, bid, warps = (b.phi(ty) for ty in (I64, I64, I64, I64, I32, I64))
    for v, init in ((t, I64(0)), (exited, I64(0)), (atbar, I64(0)), (other, I64(0)), (bid, I32(-1)), (warps, I64(0))):
        v.add_incoming(init, blocks["round"])
    thr = b.gep(base, [b.mul(b.add(first, t), stride)])
    check_blk = b.block
    st0 = b.load(field_ptr(b, thr, L.T_STATE, I32))
    go = b.or_(b.icmp_unsigned("==", st0, I32(L.State.RUNNABLE)),
               b.and_(released, b.icmp_unsigned("==", st0, I32(L.State.BARRIER))))
    b.cbranch(go, blocks["run"], blocks["classify"])

    b.position_at_end(blocks["run"])
    # Each call may run QUANTUM instructions before yielding, within the launch's budget.
    steps = b.load(field_ptr(b, thr, L.T_STEPS, I64))
    budget = ld(L.X_BUDGET)
    quantum = b.add(steps, ld(L.X_QUANTUM))      # QUANTUM; short in cooperative launches
    b.store(b.select(b.icmp_unsigned("<", quantum, budget), quantum, budget), field_ptr(b, thr, L.T_LIMIT, I64))
    st1 = b.call(kernel, [ctx, thr])
    ran = b.sub(b.load(field_ptr(b, thr, L.T_STEPS, I64)), steps)
    b.store(b.add(b.load(steps_sum), ran), steps_sum)
    is_fatal = b.or_(b.or_(b.icmp_unsigned("==", st1, I32(L.State.FAULT)), b.icmp_unsigned("==", st1, I32(L.State.TRAP))),
                     b.or_(b.icmp_unsigned("==", st1, I32(L.State.WATCHDOG)), b.icmp_unsigned("==", st1, I32(L.State.ASSERT))))
    is_fatal = b.or_(is_fatal, b.icmp_unsigned("==", st1, I32(L.State.INTERRUPTED)))
    b.cbranch(is_fatal, blocks["fatal"], blocks["classify"]).set_weights([1, 1000])

    b.position_at_end(blocks["classify"])
    st = b.phi(I32)
    st.add_incoming(st0, check_blk)
    st.add_incoming(st1, blocks["run"])
    aux = b.load(field_ptr(b, thr, L.T_AUX, I32))
    aux2 = b.load(field_ptr(b, thr, L.T_AUX2, I32))
    fresh = b.icmp_signed("==", bid, I32(-1))
    # The common case first: at the plain barrier the CTA's threads wait at (or the first one).
    same = b.and_(b.and_(b.icmp_unsigned("==", st, I32(L.State.BARRIER)), b.icmp_unsigned("==", aux2, I32(0))),
                  b.or_(fresh, b.icmp_unsigned("==", aux, bid)))
    cls_fast, cls_slow, cls_join = (fn.append_basic_block(n) for n in ("cls_bar", "cls_other", "cls_join"))
    # Weighted, so that LLVM keeps the branch: as selects, the slow side ran for every thread.
    b.cbranch(same, cls_fast, cls_slow).set_weights([1000, 1])
    b.position_at_end(cls_fast)
    atbar_f = b.add(atbar, I64(1))
    b.branch(cls_join)
    b.position_at_end(cls_slow)
    is_exit = b.icmp_unsigned("==", st, I32(L.State.EXITED))
    is_bar = b.and_(b.icmp_unsigned("==", st, I32(L.State.BARRIER)), b.icmp_unsigned("==", aux2, I32(0)))
    mism = b.and_(is_bar, b.and_(b.not_(fresh), b.icmp_unsigned("!=", aux, bid)))
    bid_s = b.select(b.and_(is_bar, fresh), aux, bid)
    exited_s = b.add(exited, b.zext(is_exit, I64))
    atbar_s = b.add(atbar, b.zext(is_bar, I64))
    is_warp = b.icmp_unsigned("==", st, I32(L.State.WARP))
    warps_s = b.add(warps, b.zext(is_warp, I64))
    other_s = b.add(b.add(other, b.zext(b.not_(b.or_(b.or_(is_exit, is_bar), is_warp)), I64)), b.zext(mism, I64))
    b.branch(cls_join)
    b.position_at_end(cls_join)

    def join(ty, fast, slow):
        v = b.phi(ty)
        v.add_incoming(fast, cls_fast)
        v.add_incoming(slow, cls_slow)
        return v

    exited2, atbar2, other2 = join(I64, exited, exited_s), join(I64, atbar_f, atbar_s), join(I64, other, other_s)
    bid2, warps2 = join(I32, aux, bid_s), join(I64, warps, warps_s)
    t2 = b.add(t, I64(1))
    for v, new in ((t, t2), (exited, exited2), (atbar, atbar2), (other, other2), (bid, bid2), (warps, warps2)):
        v.add_incoming(new, cls_join)
    b.cbranch(b.icmp_unsigned("<", t2, tpc), blocks["thr"], blocks["round_end"])

    b.position_at_end(blocks["round_end"])
    quiet = b.icmp_unsigned("==", other2, I64(0))
    can = b.and_(b.and_(b.icmp_unsigned(">", atbar2, I64(0)), quiet), b.icmp_unsigned("<", bid2, I32(16)))
    bar_or_next = fn.append_basic_block("bar_or_next")
    warp_blk = fn.append_basic_block("warp_release")
    b.cbranch(b.and_(quiet, b.icmp_unsigned(">", warps2, I64(0))), warp_blk, bar_or_next)
    b.position_at_end(bar_or_next)
    b.cbranch(can, blocks["release"], blocks["cta_next"])
    b.position_at_end(warp_blk)
    _release_warps_ir(fn, b, base, stride, first, tpc, warp_slots)
    released.add_incoming(I1(0), b.block)
    b.branch(blocks["round"])

    b.position_at_end(blocks["release"])
    released.add_incoming(I1(1), blocks["release"])
    b.branch(blocks["round"])

    b.position_at_end(blocks["cta_next"])
    # The CTA's last round of this call: threads not exited wait for the executor.
    b.store(b.or_(b.load(pending), b.icmp_unsigned("!=", exited2, tpc)), pending)
    c.add_incoming(b.add(c, I64(1)), blocks["cta_next"])
    b.branch(blocks["cta_head"])
    def count_steps():
        b.atomic_rmw("add", b.gep(ctx, [I64(L.X_STEPS)]), b.load(steps_sum), "monotonic")

    b.position_at_end(blocks["done"])
    count_steps()
    b.ret(b.select(b.load(pending), I32(L.PENDING), I32(0)))
    b.position_at_end(blocks["fatal"])
    count_steps()
    b.ret(st1)
    return fn
