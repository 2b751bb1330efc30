"""A launch too big for one batch: the interpreter runs as many CTAs at once as fit its memory
budget ($PTXVM_INTERP_BATCH_BYTES, default 4 GiB), batch after batch. Each batch has its own
shared memory, barriers and thread geometry (%ctaid offset by the batch's first CTA); results
must not depend on how the grid was cut."""

from __future__ import annotations

import numpy as np
import pytest

import ptxvm
from ptxvm.interp import executor

HEAD = ".version 8.0\n.target sm_80\n.address_size 64\n"

# out[g] = 2 * x[blk*B + (t+1) % B] + x[g] + blk, with x staged through dynamic shared memory and a
# barrier between the store and the neighbour's load (g = blk*B + t).
NEIGHBOUR = HEAD + """
.extern .shared .align 4 .b8 dsm[];
.visible .entry k(.param .u64 px, .param .u64 pout)
{
  .reg .b32 %r<16>;
  .reg .b64 %rd<8>;
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %ctaid.x;
  mov.u32 %r3, %ntid.x;
  mad.lo.u32 %r4, %r2, %r3, %r1;
  ld.param.u64 %rd1, [px];
  mul.wide.u32 %rd2, %r4, 4;
  add.s64 %rd3, %rd1, %rd2;
  ld.global.u32 %r5, [%rd3];
  mov.u32 %r6, dsm;
  shl.b32 %r7, %r1, 2;
  add.u32 %r8, %r6, %r7;
  st.shared.u32 [%r8], %r5;
  bar.sync 0;
  add.u32 %r9, %r1, 1;
  rem.u32 %r9, %r9, %r3;
  shl.b32 %r9, %r9, 2;
  add.u32 %r9, %r6, %r9;
  ld.shared.u32 %r10, [%r9];
  shl.b32 %r10, %r10, 1;
  add.u32 %r10, %r10, %r5;
  add.u32 %r10, %r10, %r2;
  ld.param.u64 %rd4, [pout];
  add.s64 %rd5, %rd4, %rd2;
  st.global.u32 [%rd5], %r10;
  ret;
}
"""


def model(x: np.ndarray, block: int) -> np.ndarray:
    blocks = x.size // block
    xs = x.reshape(blocks, block).astype(np.uint64)
    out = 2 * np.roll(xs, -1, axis=1) + xs + np.arange(blocks, dtype=np.uint64)[:, None]
    return (out & 0xFFFFFFFF).astype(np.uint32).reshape(-1)


def test_million_threads_in_several_batches_match_numpy(monkeypatch):
    n, block = 1 << 20, 256
    rng = np.random.default_rng(2024)
    x = rng.integers(0, 1 << 31, n, dtype=np.uint32)
    k = ptxvm.Module(NEIGHBOUR, "batches.ptx")["k"]
    # Each CTA needs at least block * 64 bytes of bookkeeping plus its shared memory, so this budget
    # admits at most 16 MiB / (16 KiB + 1 KiB) = 963 of the 4096 CTAs per batch: >= 5 batches.
    budget = 16 << 20
    monkeypatch.setenv(executor.BUDGET_ENV, str(budget))
    out = np.zeros(n, np.uint32)
    stats = k(n // block, block, (x, out), shared_mem=block * 4)
    assert np.array_equal(out, model(x, block))
    per_cta_floor = block * 64 + block * 4
    assert stats.batches >= -(-(n // block) // (budget // per_cta_floor)) >= 5
    # The same launch in one batch executes exactly the same thread-instructions.
    monkeypatch.delenv(executor.BUDGET_ENV)
    out1 = np.zeros(n, np.uint32)
    one = k(n // block, block, (x, out1), shared_mem=block * 4)
    assert one.batches == 1 and one.instructions == stats.instructions == n * 25     # 25 instructions, all run by every thread
    assert np.array_equal(out1, out)


@pytest.mark.parametrize("raw", ["lots", "0", "-5"])
def test_bad_budget_is_refused(monkeypatch, raw):
    monkeypatch.setenv(executor.BUDGET_ENV, raw)
    with pytest.raises(ValueError, match=executor.BUDGET_ENV):
        executor.memory_budget_default()
