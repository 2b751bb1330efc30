"""mbarrier objects and bulk copies (PTX ISA 9.0 §9.7.13.15, §9.7.9.25.4) on every CPU executor.

Hand-written PTX kernels; expected values come from the ISA's rules (phases complete when the
pending arrivals and the tx-count reach zero; parity flips per phase) and from the object
encoding ptxvm/machine/mbarrier.py documents (the ISA leaves it opaque: the raw words checked
here are that documented choice, written out by hand). The nvcc-built kernels of
tests/cuda/mbarrier_kernels.cu: tests/interp/test_mbarrier_cuda.py."""

from __future__ import annotations

import numpy as np
import pytest

import ptxvm
from models.matrix_harness import EXECUTORS

HEADER = ".version 8.7\n.target sm_90\n.address_size 64\n"
REGS = """  .reg .pred %p<8>;
  .reg .b32 %r<32>;
  .reg .b64 %rd<32>;
  .shared .align 8 .b64 bar;
  .shared .align 8 .b64 bar2;
  .shared .align 16 .b8 buf[512];
"""


def _kernel(name: str, params: str, body: str) -> ptxvm.Kernel:
    text = HEADER + f".visible .entry {name}({params})\n{{\n{REGS}{body}\n}}\n"
    return ptxvm.Module(text)[name]


def _word(pending: int, expected: int, tx: int, phase: int) -> int:
    """The documented encoding (machine/mbarrier.py), spelled out independently."""
    return pending | expected << 20 | (tx & (2**21 - 1)) << 40 | 1 << 62 | phase << 63


def _token(pending_after: int, phase: int) -> int:
    return pending_after | 1 << 62 | phase << 63


# -- three phases of 64 arrivals: tokens, pending counts, parity tests ---------------------------

PHASES = _kernel("phases", ".param .u64 out", """
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, bar;
  setp.ne.u32 %p1, %r1, 0;
  @%p1 bra SYNC;
  mbarrier.init.shared::cta.b64 [%r2], 64;
SYNC:
  bar.sync 0;
  mul.wide.u32 %rd2, %r1, 32;
  add.s64 %rd3, %rd1, %rd2;
  mov.u32 %r3, 0;
PHASE:
  mbarrier.arrive.shared::cta.b64 %rd4, [%r2];
  mbarrier.pending_count.b64 %r4, %rd4;
  shr.u64 %rd5, %rd4, 63;
  cvt.u32.u64 %r5, %rd5;
  shl.b32 %r6, %r5, 16;
  or.b32 %r4, %r4, %r6;
  mul.wide.u32 %rd6, %r3, 8;
  add.s64 %rd7, %rd3, %rd6;
  st.global.u32 [%rd7], %r4;
WAIT:
  mbarrier.try_wait.shared::cta.b64 %p2, [%r2], %rd4;
  @!%p2 bra WAIT;
  and.b32 %r7, %r3, 1;
  mbarrier.test_wait.parity.shared::cta.b64 %p3, [%r2], %r7;
  xor.b32 %r8, %r7, 1;
  mbarrier.test_wait.parity.shared::cta.b64 %p4, [%r2], %r8;
  selp.u32 %r9, 1, 0, %p3;
  selp.u32 %r10, 2, 0, %p4;
  or.b32 %r9, %r9, %r10;
  st.global.u32 [%rd7+4], %r9;
  bar.sync 0;
  add.u32 %r3, %r3, 1;
  setp.lt.u32 %p5, %r3, 4;
  @%p5 bra PHASE;
  ret;""")


@pytest.mark.parametrize("executor", EXECUTORS)
def test_phases_tokens_and_parity(executor):
    out = np.zeros((64, 4, 2), np.uint32)
    PHASES(1, 64, (out,), device=executor)
    for k in range(4):
        # every arrival's token carries the parity of phase k; the pending counts after the 64
        # arrivals are 63..0 in whatever order the threads arrived
        assert (out[:, k, 0] >> 16 == k & 1).all()
        assert sorted(out[:, k, 0] & 0xFFFF) == list(range(64))
        # after phase k: the phase of parity k&1 is complete, the other (the current) is not
        assert (out[:, k, 1] == 1).all()


# -- counts: noComplete, counted arrivals, arrive_drop; the raw words and tokens -------------------

COUNTS = _kernel("counts", ".param .u64 out", """
  ld.param.u64 %rd1, [out];
  mov.u32 %r2, bar;
  mbarrier.init.shared.b64 [%r2], 5;
  ld.shared.u64 %rd10, [bar];
  st.global.u64 [%rd1], %rd10;
  mbarrier.arrive.noComplete.shared.b64 %rd4, [%r2], 3;
  st.global.u64 [%rd1+8], %rd4;
  mbarrier.arrive.shared.b64 %rd5, [%r2], 2;
  st.global.u64 [%rd1+16], %rd5;
  ld.shared.u64 %rd10, [bar];
  st.global.u64 [%rd1+24], %rd10;
  mbarrier.arrive_drop.shared.b64 %rd6, [%r2], 1;
  st.global.u64 [%rd1+32], %rd6;
  ld.shared.u64 %rd10, [bar];
  st.global.u64 [%rd1+40], %rd10;
  mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%r2], 100;
  mbarrier.arrive.shared.b64 %rd7, [%r2], 4;
  ld.shared.u64 %rd10, [bar];
  st.global.u64 [%rd1+48], %rd10;
  mbarrier.complete_tx.relaxed.cta.shared::cta.b64 [%r2], 100;
  ld.shared.u64 %rd10, [bar];
  st.global.u64 [%rd1+56], %rd10;
  mbarrier.test_wait.parity.shared.b64 %p1, [%r2], 1;
  selp.u64 %rd11, 1, 0, %p1;
  st.global.u64 [%rd1+64], %rd11;
  cvta.shared.u64 %rd12, bar;
  mbarrier.inval.b64 [%rd12];
  ld.shared.u64 %rd10, [bar];
  st.global.u64 [%rd1+72], %rd10;
  ret;""")


@pytest.mark.parametrize("executor", EXECUTORS)
def test_counts_drop_and_tx(executor):
    out = np.zeros(10, np.uint64)
    COUNTS(1, 1, (out,), device=executor)
    want = [
        _word(5, 5, 0, 0),          # init 5
        _token(2, 0),               # 3 arrivals, phase 0 goes on
        _token(0, 0),               # 2 more: phase 0 completes
        _word(5, 5, 0, 1),          # phase 1 starts with the expected count
        _token(4, 1),               # arrive_drop 1: pending 4, and expected 4 from now on
        _word(4, 4, 0, 1),
        _word(0, 4, 100, 1),        # all arrived, 100 transaction bytes still pending
        _word(4, 4, 0, 0),          # complete_tx 100: phase 1 completes, phase 2 (parity 0)
        1,                          # the phase of parity 1 has completed
        0,                          # inval (through a generic address)
    ]
    assert [int(v) for v in out] == want


# -- cp.async tracked by an mbarrier (§9.7.13.15.15) ------------------------------------------------

CPASYNC = _kernel("cpasync", ".param .u64 src, .param .u64 out", """
  ld.param.u64 %rd1, [src];
  ld.param.u64 %rd2, [out];
  mov.u32 %r2, bar;
  mov.u32 %r3, buf;
  mbarrier.init.shared.b64 [%r2], 2;
  cp.async.cg.shared.global [%r3], [%rd1], 16;
  cp.async.mbarrier.arrive.noinc.shared.b64 [%r2];
  ld.shared.u64 %rd10, [bar];
  st.global.u64 [%rd2], %rd10;
  cp.async.mbarrier.arrive.shared.b64 [%r2];
  ld.shared.u64 %rd10, [bar];
  st.global.u64 [%rd2+8], %rd10;
  mbarrier.arrive.shared.b64 %rd4, [%r2];
  ld.shared.u64 %rd10, [bar];
  st.global.u64 [%rd2+16], %rd10;
  ld.shared.u64 %rd10, [buf+8];
  st.global.u64 [%rd2+24], %rd10;
  ret;""")


@pytest.mark.parametrize("executor", EXECUTORS)
def test_cp_async_arrive(executor):
    """`.noinc` is one arrival; the plain form raises the pending count first: no net change."""
    src, out = np.arange(2, dtype=np.uint64) + 40, np.zeros(4, np.uint64)
    CPASYNC(1, 1, (src, out), device=executor)
    assert [int(v) for v in out] == [_word(1, 2, 0, 0), _word(1, 2, 0, 0), _word(2, 2, 0, 1), 41]


# -- expect_tx with bulk copies into shared memory and back out ------------------------------------

BULK = _kernel("bulk", ".param .u64 src, .param .u64 dst", """
  ld.param.u64 %rd1, [src];
  ld.param.u64 %rd2, [dst];
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, bar;
  mov.u32 %r3, buf;
  setp.ne.u32 %p1, %r1, 0;
  @%p1 bra SYNC;
  mbarrier.init.shared::cta.b64 [%r2], 1;
  fence.mbarrier_init.release.cluster;
SYNC:
  bar.sync 0;
  @%p1 bra WAIT;
  mbarrier.arrive.expect_tx.release.cta.shared::cta.b64 %rd3, [%r2], 512;
  cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r3], [%rd1], 256, [%r2];
  add.u32 %r4, %r3, 256;
  add.s64 %rd4, %rd1, 256;
  cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r4], [%rd4], 256, [%r2];
WAIT:
  mbarrier.try_wait.parity.acquire.cta.shared::cta.b64 %p2, [%r2], 0, 1000;
  @!%p2 bra WAIT;
  shl.b32 %r5, %r1, 2;
  add.u32 %r6, %r3, %r5;
  ld.shared.u32 %r7, [%r6];
  add.u32 %r7, %r7, 1;
  st.shared.u32 [%r6], %r7;
  fence.proxy.async.shared::cta;
  bar.sync 0;
  @%p1 bra DONE;
  cp.async.bulk.global.shared::cta.bulk_group [%rd2], [%r3], 512;
  cp.async.bulk.commit_group;
  cp.async.bulk.wait_group.read 0;
DONE:
  ret;""")


@pytest.mark.parametrize("executor", EXECUTORS)
def test_expect_tx_with_bulk_copies(executor):
    src = np.arange(128, dtype=np.uint32) * 7 + 3
    dst = np.zeros(128, np.uint32)
    BULK(1, 128, (src, dst), device=executor)
    np.testing.assert_array_equal(dst, src + 1)


# -- producer and consumer warps through a one-slot buffer (full/empty barriers) -------------------

PIPE = _kernel("pipe", ".param .u64 src, .param .u64 dst, .param .u32 n", """
  ld.param.u64 %rd1, [src];
  ld.param.u64 %rd2, [dst];
  ld.param.u32 %r20, [n];
  mov.u32 %r1, %tid.x;
  and.b32 %r11, %r1, 31;
  mov.u32 %r2, bar;
  mov.u32 %r12, bar2;
  setp.ne.u32 %p1, %r1, 0;
  @%p1 bra SYNC;
  mbarrier.init.shared.b64 [%r2], 32;
  mbarrier.init.shared.b64 [%r12], 32;
SYNC:
  bar.sync 0;
  mov.u32 %r3, buf;
  shl.b32 %r4, %r11, 2;
  add.u32 %r5, %r3, %r4;
  mov.u32 %r6, 0;
  setp.ge.u32 %p2, %r1, 32;
  @%p2 bra CONSUMER;
PRODUCER:
  and.b32 %r7, %r6, 1;
  xor.b32 %r7, %r7, 1;
PWAIT:
  mbarrier.test_wait.parity.shared.b64 %p3, [%r12], %r7;
  @!%p3 bra PWAIT;
  mad.lo.u32 %r8, %r6, 32, %r11;
  mul.wide.u32 %rd3, %r8, 4;
  add.s64 %rd4, %rd1, %rd3;
  ld.global.u32 %r9, [%rd4];
  st.shared.u32 [%r5], %r9;
  mbarrier.arrive.release.cta.shared.b64 _, [%r2];
  add.u32 %r6, %r6, 1;
  setp.lt.u32 %p4, %r6, %r20;
  @%p4 bra PRODUCER;
  ret;
CONSUMER:
  and.b32 %r7, %r6, 1;
CWAIT:
  mbarrier.try_wait.parity.shared.b64 %p3, [%r2], %r7;
  @!%p3 bra CWAIT;
  ld.shared.u32 %r9, [%r5];
  mbarrier.arrive.shared.b64 %rd5, [%r12];
  shl.b32 %r9, %r9, 1;
  mad.lo.u32 %r8, %r6, 32, %r11;
  mul.wide.u32 %rd3, %r8, 4;
  add.s64 %rd4, %rd2, %rd3;
  st.global.u32 [%rd4], %r9;
  add.u32 %r6, %r6, 1;
  setp.lt.u32 %p4, %r6, %r20;
  @%p4 bra CONSUMER;
  ret;""")


@pytest.mark.parametrize("executor", EXECUTORS)
def test_producer_consumer_warps(executor):
    n = 6
    src = np.arange(32 * n, dtype=np.uint32) * 3 + 1
    dst = np.zeros_like(src)
    PIPE(2, 64, (src[:], dst, np.uint32(n)), device=executor)
    np.testing.assert_array_equal(dst, 2 * src)


# -- bad input: located errors -------------------------------------------------------------------

NOT_SHARED = _kernel("not_shared", ".param .u64 p", """
  ld.param.u64 %rd1, [p];
  mbarrier.init.b64 [%rd1], 1;
  ret;""")

MISALIGNED = _kernel("misaligned", "", """
  mov.u32 %r2, buf;
  mbarrier.init.shared.b64 [%r2+4], 1;
  ret;""")

UNINIT = _kernel("uninit", "", """
  mov.u32 %r2, bar;
  mbarrier.arrive.shared.b64 %rd1, [%r2];
  ret;""")

NEVER = _kernel("never", "", """
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, bar;
  setp.ne.u32 %p1, %r1, 0;
  @%p1 bra SYNC;
  mbarrier.init.shared.b64 [%r2], 64;
SYNC:
  bar.sync 0;
  mbarrier.arrive.shared.b64 %rd1, [%r2];
WAIT:
  mbarrier.try_wait.shared.b64 %p2, [%r2], %rd1;
  @!%p2 bra WAIT;
  ret;""")


def _located(err: ptxvm.KernelFault, opcode: str) -> None:
    text = str(err)
    assert opcode in text and "line" in text or ":" in text, text


@pytest.mark.parametrize("executor", EXECUTORS)
def test_object_outside_shared_memory(executor):
    with pytest.raises(ptxvm.KernelFault) as e:
        NOT_SHARED(1, 1, (np.zeros(2, np.uint64),), device=executor)
    assert "mbarrier.init.b64 [%rd1], 1;" in str(e.value)
    if executor == "interp":
        assert "needs an mbarrier object in shared memory" in str(e.value)


@pytest.mark.parametrize("executor", EXECUTORS)
def test_misaligned_object(executor):
    with pytest.raises(ptxvm.KernelFault) as e:
        MISALIGNED(1, 1, (), device=executor)
    assert "mbarrier.init.shared.b64 [%r2+4], 1;" in str(e.value)
    assert "misaligned" in str(e.value)


@pytest.mark.parametrize("executor", EXECUTORS)
def test_uninitialised_object(executor):
    with pytest.raises(ptxvm.TrapError) as e:
        UNINIT(1, 1, (), device=executor)
    assert "mbarrier.arrive.shared.b64 %rd1, [%r2];" in str(e.value)


@pytest.mark.parametrize("executor", EXECUTORS)
def test_deadlock_is_reported(executor):
    """64 arrivals expected, 32 threads: nobody can complete phase 0 (the host JIT does not know
    the object's fields, only who waits where)."""
    with pytest.raises(ptxvm.DeadlockError) as e:
        NEVER(1, 32, (), device=executor)
    text = str(e.value)
    assert "deadlock" in text and "32 of 32 non-exited threads spin on mbarrier phases" in text
    assert "at line 22: `mbarrier.try_wait.shared.b64 %p2, [%r2], %rd1;`" in text
    if executor == "interp":
        assert "phase 0 (parity), 32 of 64 arrivals pending, tx-count 0" in text


TENSOR = _kernel("tensor", ".param .align 64 .b8 tm[128]", """
  mov.u64 %rd1, tm;
  mov.u32 %r1, buf;
  mov.u32 %r2, bar;
  mov.u32 %r3, 0;
  cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%r1], [%rd1, {%r3, %r3}], [%r2];
  ret;""")


@pytest.mark.parametrize("executor", EXECUTORS)
def test_tensor_copy_with_no_tensor_map_stops_where_it_stands(executor):
    """cp.async.bulk.tensor runs (tests/interp/test_tma.py); 128 zero bytes are no ptxvm tensor map
    (a `.param` address used without cvta is not even the map's generic address): a located error."""
    with pytest.raises(ptxvm.PtxError) as e:
        TENSOR(1, 1, (np.zeros(128, np.uint8),), device=executor)
    assert e.value.line == 17 and "cp.async.bulk.tensor.2d" in str(e.value)


# -- the same kernels as AMD code objects on the ISA emulator (slow; skipped without it) -----------

def _emu_missing() -> str | None:
    from ptxvm.driver.executors import emu
    return emu.why_unavailable()


@pytest.mark.slow
@pytest.mark.parametrize("target", ["gfx90a", "gfx942", "gfx1100"])
def test_counts_on_the_emulator(target):
    if (why := _emu_missing()) is not None:
        pytest.skip(f"emu executors unavailable: {why}")
    test_counts_drop_and_tx(f"emu:{target}")


@pytest.mark.slow
@pytest.mark.parametrize("target", ["gfx90a", "gfx942"])
def test_phases_on_the_emulator(target):
    """64 threads: one wave64 (the emulator runs a block's waves one at a time, so a wave32
    target's two waves would wait for each other forever there)."""
    if (why := _emu_missing()) is not None:
        pytest.skip(f"emu executors unavailable: {why}")
    test_phases_tokens_and_parity(f"emu:{target}")
