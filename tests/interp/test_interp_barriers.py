"""Named barriers on the interpreter: `bar/barrier .arrive`, `.sync` with thread counts, `bar.red`
with counts, and the deadlock and misuse reports (PTX ISA 9.0 §9.7.13.1).

The rules modelled (from the ISA text): each CTA has barriers 0..15; `arrive` marks the
executing threads' arrival and does not wait; `sync`/`red` mark it and wait; a barrier with a
thread count b completes once b threads (counted per warp) have arrived by either kind, one without
a count once every non-exited thread of the CTA has; then it is reinitialised for reuse.

Kernels put the waiting side at *lower* PCs than the side it waits for, so lowest-PC-first
scheduling runs the waiters first: a barrier that did not wait would let them read stale data.
Expected outputs come from numpy models of what each thread computes.
"""

from __future__ import annotations

import numpy as np
import pytest

import ptxvm

HEAD = ".version 8.0\n.target sm_80\n.address_size 64\n"
REGS = ".reg .pred %p<8>;\n.reg .b32 %r<32>;\n.reg .b64 %rd<16>;\n"
RNG = np.random.default_rng(7)

# (arrive, sync) spellings: `bar` is `barrier ... .aligned`; `.cta` is the only scope
SPELLINGS = [("bar.arrive", "bar.sync"), ("barrier.arrive", "barrier.sync"),
             ("barrier.cta.arrive.aligned", "barrier.cta.sync.aligned"), ("bar.cta.arrive", "bar.cta.sync")]


def _kernel(body: str, params: str = ".param .u64 pin, .param .u64 pout", decls: str = "") -> ptxvm.Kernel:
    text = HEAD + f".visible .entry k({params})\n{{\n" + REGS + decls + body.strip() + "\n}\n"
    return ptxvm.Module(text, "barriers.ptx")["k"]


def _line_of(body: str, needle: str, decls: str = "") -> int:
    """The source line of the first body line containing ``needle`` in the text _kernel builds."""
    before = HEAD + ".visible .entry k(...)\n{\n" + REGS + decls
    lines = body.strip().splitlines()
    return before.count("\n") + 1 + next(i for i, ln in enumerate(lines) if needle in ln)


# Global index helpers: %r2 = ctaid.x, %rd1 = in, %rd2 = out.
PROLOGUE = """
mov.u32 %r1, %tid.x;
mov.u32 %r2, %ctaid.x;
ld.param.u64 %rd1, [pin];
ld.param.u64 %rd2, [pout];
"""


def _producer_consumer(arrive: str, sync: str, bid: str = "1", count: str = "128") -> str:
    """Warp 0 produces buf[0..31] = in[cta*32 + i] * 3 and arrives; warps 1..3 sync with a count
    and read out[cta*96 + j] = buf[(7*j) % 32] + j.  The consumer code comes first (lower PCs)."""
    return PROLOGUE + f"""
setp.lt.u32 %p1, %r1, 32;
@%p1 bra PRODUCER;
{sync} {bid}, {count};
sub.u32 %r3, %r1, 32;
mul.lo.u32 %r4, %r3, 7;
and.b32 %r4, %r4, 31;
shl.b32 %r4, %r4, 2;
mov.u32 %r5, buf;
add.u32 %r5, %r5, %r4;
ld.shared.u32 %r6, [%r5];
add.u32 %r6, %r6, %r3;
mad.lo.u32 %r7, %r2, 96, %r3;
mul.wide.u32 %rd3, %r7, 4;
add.s64 %rd4, %rd2, %rd3;
st.global.u32 [%rd4], %r6;
ret;
PRODUCER:
mad.lo.u32 %r3, %r2, 32, %r1;
mul.wide.u32 %rd3, %r3, 4;
add.s64 %rd4, %rd1, %rd3;
ld.global.u32 %r4, [%rd4];
mul.lo.u32 %r4, %r4, 3;
shl.b32 %r5, %r1, 2;
mov.u32 %r6, buf;
add.u32 %r6, %r6, %r5;
st.shared.u32 [%r6], %r4;
{arrive} {bid}, {count};
ret;
"""


BUF = ".shared .align 4 .b32 buf[32];\n"


def _expected_pc(inp: np.ndarray, blocks: int) -> np.ndarray:
    out = np.zeros(blocks * 96, np.uint32)
    for c in range(blocks):
        buf = inp[c * 32:(c + 1) * 32] * np.uint32(3)
        j = np.arange(96, dtype=np.uint32)
        out[c * 96:(c + 1) * 96] = buf[(7 * j) % 32] + j
    return out


@pytest.mark.parametrize("arrive, sync", SPELLINGS)
def test_producer_arrives_consumers_sync_with_a_count(arrive, sync):
    blocks = 3
    inp = RNG.integers(0, 1 << 20, blocks * 32, dtype=np.uint32)
    out = np.zeros(blocks * 96, np.uint32)
    _kernel(_producer_consumer(arrive, sync), decls=BUF)(blocks, 128, (inp, out))
    assert np.array_equal(out, _expected_pc(inp, blocks))


def test_barrier_id_and_count_in_registers():
    blocks = 2
    inp = RNG.integers(0, 1 << 20, blocks * 32, dtype=np.uint32)
    out = np.zeros(blocks * 96, np.uint32)
    body = "mov.u32 %r20, 5;\nmov.u32 %r21, 128;\n" + _producer_consumer("bar.arrive", "bar.sync", "%r20", "%r21")
    _kernel(body, decls=BUF)(blocks, 128, (inp, out))
    assert np.array_equal(out, _expected_pc(inp, blocks))


def test_arrive_does_not_wait():
    """Warp 0 arrives at barrier 1 (count 64) and then syncs with warp 1 at barrier 2; warp 1 syncs
    at barrier 2 first and only then at barrier 1. If `arrive` waited, warp 0 would wait at
    barrier 1 for warp 1, which waits at barrier 2 for warp 0: a deadlock."""
    body = PROLOGUE + """
setp.lt.u32 %p1, %r1, 32;
@%p1 bra PRODUCER;
bar.sync 2, 64;
bar.sync 1, 64;
and.b32 %r3, %r1, 31;
shl.b32 %r4, %r3, 2;
mov.u32 %r5, buf;
add.u32 %r5, %r5, %r4;
ld.shared.u32 %r6, [%r5];
mov.u32 %r5, buf2;
add.u32 %r5, %r5, %r4;
ld.shared.u32 %r7, [%r5];
mul.wide.u32 %rd3, %r3, 8;
add.s64 %rd4, %rd2, %rd3;
st.global.v2.u32 [%rd4], {%r6, %r7};
ret;
PRODUCER:
shl.b32 %r4, %r1, 2;
mov.u32 %r5, buf;
add.u32 %r5, %r5, %r4;
add.u32 %r6, %r1, 1000;
st.shared.u32 [%r5], %r6;
bar.arrive 1, 64;
mov.u32 %r5, buf2;
add.u32 %r5, %r5, %r4;
mul.lo.u32 %r6, %r1, %r1;
st.shared.u32 [%r5], %r6;
bar.sync 2, 64;
ret;
"""
    out = np.zeros((32, 2), np.uint32)
    _kernel(body, decls=BUF + ".shared .align 4 .b32 buf2[32];\n")(1, 64, (np.zeros(1, np.uint32), out))
    t = np.arange(32, dtype=np.uint32)
    assert np.array_equal(out[:, 0], t + 1000) and np.array_equal(out[:, 1], t * t)


def test_double_buffered_pipeline_reuses_barriers_phase_after_phase():
    """Producer warp 0 fills buf for K rounds: it waits for EMPTY (barrier 2, count 128) before
    every refill and arrives at FULL (barrier 1); consumer warps 1..3 sync at FULL, add buf[j % 32]
    to an accumulator and arrive at EMPTY. Each round needs the previous phase to have completed
    and the barrier to be reinitialised."""
    K = 5
    body = PROLOGUE + f"""
mov.u32 %r10, 0;
mov.u32 %r11, 0;
setp.lt.u32 %p1, %r1, 32;
@%p1 bra PRODUCER;
sub.u32 %r3, %r1, 32;
and.b32 %r4, %r3, 31;
shl.b32 %r4, %r4, 2;
mov.u32 %r5, buf;
add.u32 %r5, %r5, %r4;
CLOOP:
bar.sync 1, 128;
ld.shared.u32 %r6, [%r5];
add.u32 %r11, %r11, %r6;
bar.arrive 2, 128;
add.u32 %r10, %r10, 1;
setp.lt.u32 %p2, %r10, {K};
@%p2 bra CLOOP;
mad.lo.u32 %r7, %r2, 96, %r3;
mul.wide.u32 %rd3, %r7, 4;
add.s64 %rd4, %rd2, %rd3;
st.global.u32 [%rd4], %r11;
ret;
PRODUCER:
shl.b32 %r4, %r1, 2;
mov.u32 %r5, buf;
add.u32 %r5, %r5, %r4;
mad.lo.u32 %r3, %r2, 32, %r1;
mul.wide.u32 %rd3, %r3, 4;
add.s64 %rd4, %rd1, %rd3;
ld.global.u32 %r8, [%rd4];
PLOOP:
setp.eq.u32 %p3, %r10, 0;
@!%p3 bar.sync 2, 128;
mad.lo.u32 %r6, %r8, %r10, %r10;
st.shared.u32 [%r5], %r6;
bar.arrive 1, 128;
add.u32 %r10, %r10, 1;
setp.lt.u32 %p2, %r10, {K};
@%p2 bra PLOOP;
ret;
"""
    blocks = 2
    inp = RNG.integers(0, 1000, blocks * 32, dtype=np.uint32)
    out = np.zeros(blocks * 96, np.uint32)
    _kernel(body, decls=BUF)(blocks, 128, (inp, out))
    want = np.zeros(blocks * 96, np.uint64)
    for c in range(blocks):
        for i in range(K):
            buf = inp[c * 32:(c + 1) * 32].astype(np.uint64) * i + i     # round i: in*i + i
            want[c * 96:(c + 1) * 96] += buf[np.arange(96) % 32]
    assert np.array_equal(out, want.astype(np.uint32))


def test_partial_warp_counts_as_a_whole_warp():
    """A 48-thread block: warp 0 arrives with count 64, the 16-thread warp 1 syncs with count 64.
    Barriers count warps, so 32 + one (partial) warp = 64 completes the barrier."""
    body = PROLOGUE + """
setp.lt.u32 %p1, %r1, 32;
@%p1 bra PRODUCER;
bar.sync 3, 64;
sub.u32 %r3, %r1, 32;
shl.b32 %r4, %r3, 2;
mov.u32 %r5, buf;
add.u32 %r5, %r5, %r4;
ld.shared.u32 %r6, [%r5];
mul.wide.u32 %rd3, %r3, 4;
add.s64 %rd4, %rd2, %rd3;
st.global.u32 [%rd4], %r6;
ret;
PRODUCER:
shl.b32 %r4, %r1, 2;
mov.u32 %r5, buf;
add.u32 %r5, %r5, %r4;
mul.lo.u32 %r6, %r1, 5;
st.shared.u32 [%r5], %r6;
bar.arrive 3, 64;
ret;
"""
    out = np.zeros(16, np.uint32)
    _kernel(body, decls=BUF)(1, 48, (np.zeros(1, np.uint32), out))
    assert np.array_equal(out, np.arange(16, dtype=np.uint32) * 5)


def test_bar_red_with_a_thread_count_alongside_a_named_barrier():
    """Warps 0..1 reduce with `bar.red.popc` on barrier 4 (count 64) while warps 2..3 meet on
    barrier 0 (count 64) and then run `bar.red.or` on barrier 5 (count 64): each reduction covers
    the threads of its own barrier only."""
    body = PROLOGUE + """
setp.lt.u32 %p1, %r1, 64;
and.b32 %r3, %r1, 7;
setp.eq.u32 %p2, %r3, 3;
@%p1 bra LOW;
bar.sync 0, 64;
setp.eq.u32 %p3, %r1, 100;
bar.red.or.pred %p4, 5, 64, %p3;
selp.u32 %r4, 1, 0, %p4;
bra.uni STORE;
LOW:
bar.red.popc.u32 %r4, 4, 64, %p2;
STORE:
mul.wide.u32 %rd3, %r1, 4;
add.s64 %rd4, %rd2, %rd3;
st.global.u32 [%rd4], %r4;
ret;
"""
    out = np.zeros(128, np.uint32)
    _kernel(body)(1, 128, (np.zeros(1, np.uint32), out))
    want = np.concatenate([np.full(64, sum(1 for t in range(64) if t % 8 == 3)), np.full(64, 1)])
    assert np.array_equal(out, want.astype(np.uint32))


# ------------------------------------------------------------------------------------------ faults

def test_deadlock_when_the_count_is_never_reached():
    """Warps 1..3 sync at barrier 1 expecting 128 threads; warp 0 exits without arriving."""
    body = PROLOGUE + """
setp.lt.u32 %p1, %r1, 32;
@%p1 bra DONE;
bar.sync 1, 128;
DONE:
ret;
"""
    with pytest.raises(ptxvm.DeadlockError) as e:
        _kernel(body)(2, 128, (np.zeros(1, np.uint32), np.zeros(1, np.uint32)))
    line = _line_of(body, "bar.sync 1, 128")
    block = ("  block ({b}, 0, 0): 96 of 96 non-exited threads wait at barriers, 32 exited\n"
             "    barrier 1 expects 128 threads, has 96 (96 waiting, 0 by `bar.arrive`)\n"
             "      waiting: threads [(32, 0, 0), (33, 0, 0), (34, 0, 0)] ... at line {line}: `bar.sync 1, 128;`")
    assert e.value.message == (
        "deadlock: threads wait at a barrier that the rest of their block can never reach\n"
        + block.format(b=0, line=line) + "\n" + block.format(b=1, line=line) + "\n"
        "  in kernel `k`, block (0, 0, 0), thread (32, 0, 0)")
    assert e.value.block == (0, 0, 0) and e.value.thread == (32, 0, 0)


def test_deadlock_report_counts_arrivals():
    """Warp 0 arrives at barrier 2 with count 128, warps 1..2 wait there, warp 3 exits: 96 < 128."""
    body = PROLOGUE + """
setp.ge.u32 %p2, %r1, 96;
@%p2 bra DONE;
setp.lt.u32 %p1, %r1, 32;
@%p1 bra PRODUCER;
bar.sync 2, 128;
DONE:
ret;
PRODUCER:
bar.arrive 2, 128;
ret;
"""
    with pytest.raises(ptxvm.DeadlockError) as e:
        _kernel(body)(1, 128, (np.zeros(1, np.uint32), np.zeros(1, np.uint32)))
    line = _line_of(body, "bar.sync 2, 128")
    assert e.value.message == (
        "deadlock: threads wait at a barrier that the rest of their block can never reach\n"
        "  block (0, 0, 0): 64 of 64 non-exited threads wait at barriers, 64 exited\n"
        "    barrier 2 expects 128 threads, has 96 (64 waiting, 32 by `bar.arrive`)\n"
        f"      waiting: threads [(32, 0, 0), (33, 0, 0), (34, 0, 0)] ... at line {line}: `bar.sync 2, 128;`\n"
        "  in kernel `k`, block (0, 0, 0), thread (32, 0, 0)")


@pytest.mark.parametrize("ins, message", [
    ("bar.sync 16;", "barrier id 16 is out of range (a CTA has barriers 0..15)"),
    ("bar.sync 1, 48;", "barrier thread count 48 is not a multiple of the warp size (32)"),
    ("bar.arrive 1, 0;", "barrier thread count 0 is not a non-zero multiple of the warp size (32)"),
])
def test_bad_barrier_operands_fault(ins, message):
    body = PROLOGUE + ins + "\nret;\n"
    with pytest.raises(ptxvm.TrapError) as e:
        _kernel(body)(1, 64, (np.zeros(1, np.uint32), np.zeros(1, np.uint32)))
    assert e.value.message.startswith(message + "\n  in kernel `k`, block (0, 0, 0), thread (0, 0, 0)")
    assert e.value.line == _line_of(body, ins)


def test_bar_arrive_needs_a_count():
    with pytest.raises(ptxvm.UnsupportedError, match=r"`bar.arrive` needs a thread count"):
        _kernel(PROLOGUE + "bar.arrive 1;\nret;\n")(1, 32, (np.zeros(1, np.uint32), np.zeros(1, np.uint32)))


def test_bar_red_and_arrive_on_one_barrier_is_refused():
    body = PROLOGUE + """
setp.lt.u32 %p1, %r1, 32;
@%p1 bra PRODUCER;
bar.red.popc.u32 %r4, 1, 64, %p1;
ret;
PRODUCER:
bar.arrive 1, 64;
ret;
"""
    with pytest.raises(ptxvm.TrapError) as e:
        _kernel(body)(1, 64, (np.zeros(1, np.uint32), np.zeros(1, np.uint32)))
    assert e.value.message.startswith("barrier 1 is used by `bar.red` and by `bar.arrive` in one phase "
                                      "(PTX ISA 9.7.13.1: unpredictable)")
