"""The driver loop of a host kernel that never stops (no barrier, warp exchange, printf, yield,
heap or device-runtime stop): each thread runs from its start to its exit in one call, so it
needs no record of its own between calls. ``ptxvm_run`` then runs every thread in one record on
the host thread's stack, which stays in the L1 cache, instead of one record per thread in the
batch's array (the record traffic was most of a memory-bound kernel's time: 256 bytes zeroed,
written and read back per thread, for a vector add's 12 bytes of data).

Only an ending that is not an exit (a fault, trap, watchdog, assert, interrupt) leaves a trace
in the batch's records, as the executor reports from there: the thread's record is copied to its
slot, the other threads of the chunk are marked exited (before it) or not run (after it), and the
call returns the state, exactly as the per-thread driver leaves a chunk that stopped there. The
chunks that ended cleanly wrote nothing; the executor marks their threads exited (``compact``)."""

from __future__ import annotations

from llvmlite import ir

from ..lift.function import I1, I8, I8P, I32, I64
from . import layout as L
from .state import field_ptr

I64P = ir.PointerType(I64)


# size: a generated-IR builder like driver.add_driver: its blocks are tied by phis and shared values,
# so helpers would each take a dozen IR values and the control flow would no longer read in one place.
def add_compact_driver(llmod: ir.Module, kernel: ir.Function, record_bytes: int, name: str = "ptxvm_run") -> ir.Function:
    """``i32 ptxvm_run(ctx, records, n, stride, first_thread, first_round)``, as ``driver.add_driver``
    (same arguments, same results) for a kernel without stops: 0 when every thread of the ``n``
    (whole CTAs) exited, else the state that ended the launch."""
    # Long (why): one function of IR whose loops (CTAs, threads) share the counters and the
    # record; split apart, each piece would take and hand back most of them.
    fn = ir.Function(llmod, ir.FunctionType(I32, [I64P, I8P, I64, I64, I64, I64]), name=name)
    kernel.attributes.add("alwaysinline")
    kernel.linkage = "internal"
    ctx, base, n, stride, first_thread, _first_round = fn.args
    blocks = {k: fn.append_basic_block(k) for k in (
        "entry", "cta_head", "cta_more", "interrupted", "cta_body", "thr", "thr_next", "cta_next", "done",
        "fatal", "fix_head", "fix_body", "fix_done")}
    b = ir.IRBuilder(blocks["entry"])
    ld = lambda slot: b.load(b.gep(ctx, [I64(slot)]))
    ntid_x, ntid_y = ld(L.X_NTID), ld(L.X_NTID + 1)
    tpc = b.mul(b.mul(ntid_x, ntid_y), ld(L.X_NTID + 2))
    nctas = b.udiv(n, tpc)
    cta_base = b.udiv(first_thread, tpc)            # chunks are whole CTAs
    budget, quantum = ld(L.X_BUDGET), ld(L.X_QUANTUM)
    limit0 = b.select(b.icmp_unsigned("<", quantum, budget), quantum, budget)   # steps start at 0
    memset = llmod.declare_intrinsic("llvm.memset", [I8P, I64])
    memcpy = llmod.declare_intrinsic("llvm.memcpy", [I8P, I8P, I64])
    rec_t = ir.ArrayType(I8, record_bytes)
    rec_slot = b.alloca(rec_t, name="record")
    rec_slot.align = 64
    rec = b.bitcast(rec_slot, I8P)
    steps_sum = b.alloca(I64)
    b.store(I64(0), steps_sum)
    b.branch(blocks["cta_head"])

    b.position_at_end(blocks["cta_head"])
    c = b.phi(I64)
    c.add_incoming(I64(0), blocks["entry"])
    b.cbranch(b.icmp_unsigned("<", c, nctas), blocks["cta_more"], blocks["done"])
    b.position_at_end(blocks["cta_more"])
    # Asked to stop (Ctrl-C): between CTAs, as the per-thread driver.
    stop = b.load_atomic(b.gep(ctx, [I64(L.X_STOP)]), "monotonic", 8)
    b.cbranch(b.icmp_unsigned("!=", stop, I64(0)), blocks["interrupted"], blocks["cta_body"]).set_weights([1, 1000])
    b.position_at_end(blocks["interrupted"])
    b.ret(I32(L.State.INTERRUPTED))

    b.position_at_end(blocks["cta_body"])
    first0 = b.mul(c, tpc)                           # the CTA's first thread in the chunk
    gt0 = b.add(first_thread, first0)                # ... in the batch
    cta_rec = b.add(ld(L.X_CTAS), b.mul(b.add(cta_base, c), I64(L.CTA_RECORD)))
    local_base, local_stride, kframe = ld(L.X_LOCAL_BASE), ld(L.X_LOCAL_STRIDE), ld(L.X_KFRAME)
    b.branch(blocks["thr"])

    # One thread: a fresh record (the per-thread driver's first round writes the same fields), run
    # to its end. %tid is counted, not divided out (as there).
    b.position_at_end(blocks["thr"])
    t0, tx, ty, tz = (b.phi(I64) for _ in range(4))
    for v in (t0, tx, ty, tz):
        v.add_incoming(I64(0), blocks["cta_body"])
    b.call(memset, [rec, ir.Constant(I8, 0), I64(record_bytes), I1(0)])
    b.store(b.trunc(t0, I32), field_ptr(b, rec, L.T_LINEAR, I32))
    for k, v in enumerate((tx, ty, tz)):
        b.store(b.trunc(v, I32), field_ptr(b, rec, L.T_TID + 4 * k, I32))
    b.store(cta_rec, field_ptr(b, rec, L.T_CTA, I64))
    b.store(b.add(local_base, b.mul(b.add(gt0, t0), local_stride)), field_ptr(b, rec, L.T_LOCAL, I64))
    b.store(kframe, field_ptr(b, rec, L.T_SP, I64))
    b.store(limit0, field_ptr(b, rec, L.T_LIMIT, I64))
    st = b.call(kernel, [ctx, rec])
    b.store(b.add(b.load(steps_sum), b.load(field_ptr(b, rec, L.T_STEPS, I64))), steps_sum)
    b.cbranch(b.icmp_unsigned("==", st, I32(L.State.EXITED)), blocks["thr_next"], blocks["fatal"]).set_weights([1000, 1])

    b.position_at_end(blocks["thr_next"])
    tx1 = b.add(tx, I64(1))
    wrap_x = b.icmp_unsigned("==", tx1, ntid_x)
    ty1 = b.add(ty, b.zext(wrap_x, I64))
    wrap_y = b.icmp_unsigned("==", ty1, ntid_y)
    t0n = b.add(t0, I64(1))
    for v, nxt in ((t0, t0n), (tx, b.select(wrap_x, I64(0), tx1)), (ty, b.select(wrap_y, I64(0), ty1)),
                   (tz, b.add(tz, b.zext(wrap_y, I64)))):
        v.add_incoming(nxt, blocks["thr_next"])
    b.cbranch(b.icmp_unsigned("<", t0n, tpc), blocks["thr"], blocks["cta_next"])

    b.position_at_end(blocks["cta_next"])
    c.add_incoming(b.add(c, I64(1)), blocks["cta_next"])
    b.branch(blocks["cta_head"])

    def count_steps():
        b.atomic_rmw("add", b.gep(ctx, [I64(L.X_STEPS)]), b.load(steps_sum), "monotonic")

    b.position_at_end(blocks["done"])
    count_steps()
    b.ret(I32(0))

    # The chunk ends here: the thread's record to its slot; the chunk's other threads exited
    # (before it) or never started (after it: runnable, as the per-thread driver leaves them).
    b.position_at_end(blocks["fatal"])
    bad = b.add(first0, t0)
    b.call(memcpy, [b.gep(base, [b.mul(bad, stride)]), rec, I64(record_bytes), I1(0)])
    b.branch(blocks["fix_head"])
    b.position_at_end(blocks["fix_head"])
    j = b.phi(I64)
    j.add_incoming(I64(0), blocks["fatal"])
    b.cbranch(b.icmp_unsigned("<", j, n), blocks["fix_body"], blocks["fix_done"])
    b.position_at_end(blocks["fix_body"])
    skip, write = fn.append_basic_block("fix_skip"), fn.append_basic_block("fix_write")
    b.cbranch(b.icmp_unsigned("==", j, bad), skip, write)
    b.position_at_end(write)
    state = b.select(b.icmp_unsigned("<", j, bad), I32(L.State.EXITED), I32(L.State.RUNNABLE))
    b.store(state, field_ptr(b, b.gep(base, [b.mul(j, stride)]), L.T_STATE, I32))
    b.branch(skip)
    b.position_at_end(skip)
    j.add_incoming(b.add(j, I64(1)), skip)
    b.branch(blocks["fix_head"])
    b.position_at_end(blocks["fix_done"])
    count_steps()
    b.ret(st)
    return fn
