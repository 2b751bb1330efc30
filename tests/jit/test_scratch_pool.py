"""The JIT executor's pool of batch buffers (ptxvm/jit/scratch.py)."""

from __future__ import annotations

import numpy as np

from ptxvm.jit.scratch import ScratchPool


def test_a_returned_buffer_of_the_same_size_is_reused_zeroed() -> None:
    pool = ScratchPool(limit=1 << 20)
    a = pool.take(4096)
    a[:] = 7
    pool.give([a])
    b = pool.take(4096)
    assert b is a and not b.any()


def test_no_reuse_across_sizes_and_unzeroed_on_request() -> None:
    pool = ScratchPool(limit=1 << 20)
    a = pool.take(4096)
    a[:] = 7
    pool.give([a])
    c = pool.take(8192)
    assert c is not a and c.size == 8192 and not c.any()
    d = pool.take(4096, zero=False)
    assert d is a and (d == 7).all()       # its user writes every byte before reading


def test_the_pool_keeps_at_most_its_limit_dropping_the_oldest() -> None:
    pool = ScratchPool(limit=10_000)
    bufs = [pool.take(4000) for _ in range(3)]
    big = np.zeros(20_000, np.uint8)
    pool.give(bufs + [big])                # a buffer over the limit is never kept
    assert pool.held == 8000
    assert pool.take(4000) is bufs[2] and pool.take(4000) is bufs[1]
    assert pool.take(4000) is not bufs[0]
