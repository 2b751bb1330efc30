"""The JIT's page and allocation tables kept from one launch to the next (ptxvm/jit/pagetable.py),
checked against what the generated code's lookup must find: for every byte of a live allocation
its row (base, end, host pointer, is-const), for every other page below ``npages`` no row."""

from __future__ import annotations

import numpy as np

from ptxvm.jit import layout as L
from ptxvm.jit.pagetable import PageTable
from ptxvm.machine.addressmap import GLOBAL_BASE
from ptxvm.machine.memory import DeviceMemory


def _check(table: PageTable, memory: DeviceMemory) -> None:
    live = memory.allocations
    owner = {}                       # page -> allocation, from the allocations themselves
    for a in live:
        for page in range((a.base - GLOBAL_BASE) >> L.PAGE_SHIFT,
                          ((a.base + a.size - 1 - GLOBAL_BASE) >> L.PAGE_SHIFT) + 1):
            owner[page] = a
    top = max(owner, default=-1) + 1
    assert table.npages == max(top, 1) and table.pages.size >= table.npages
    for page in range(table.npages):
        row = int(table.pages[page])
        a = owner.get(page)
        if a is None:
            assert row < 0, f"page {page} maps to row {row} but holds no live allocation"
            continue
        assert row >= 0
        base, end, host, const = (int(v) for v in table.allocs[row])
        assert (base, end, host, const) == (a.base, a.base + a.size, a.data.ctypes.data, int(a.space == "const"))


def test_tables_follow_allocations_that_come_and_go() -> None:
    memory, table = DeviceMemory(), PageTable()
    rng = np.random.default_rng(1)
    held = []
    for step in range(60):
        if held and rng.random() < 0.4:
            memory.free(held.pop(int(rng.integers(len(held)))))
        else:
            size = int(rng.choice([1, 255, 256, 257, 4096, 70_000]))
            held.append(memory.alloc(size, f"a{step}", space="const" if step % 7 == 0 else "global"))
        table.sync(memory.allocations, quiescent=True)
        _check(table, memory)


def test_growth_retires_the_old_arrays_and_keeps_every_entry() -> None:
    memory, table = DeviceMemory(), PageTable()
    first = memory.alloc(64, "small")
    table.sync(memory.allocations, quiescent=True)
    old_pages = table.pages
    memory.alloc(1 << 20, "big")                  # 4096 pages: past the initial table
    retired = table.sync(memory.allocations, quiescent=True)
    assert any(r is old_pages for r in retired) and table.pages is not old_pages
    _check(table, memory)
    memory.free(first)
    assert table.sync(memory.allocations, quiescent=True) == []
    _check(table, memory)


def test_an_unchanged_allocation_table_costs_nothing() -> None:
    memory, table = DeviceMemory(), PageTable()
    memory.alloc(100, "x")
    table.sync(memory.allocations, quiescent=True)
    pages = table.pages.copy()
    assert table.sync(memory.allocations, quiescent=True) == []
    assert np.array_equal(pages, table.pages)


def test_a_row_freed_while_code_runs_is_not_reused_until_quiescent() -> None:
    memory, table = DeviceMemory(), PageTable()
    a = memory.alloc(100, "a")
    table.sync(memory.allocations, quiescent=True)
    row_a = int(table.pages[(a.base - GLOBAL_BASE) >> L.PAGE_SHIFT])
    memory.free(a)
    b = memory.alloc(100, "b")
    table.sync(memory.allocations, quiescent=False)     # a device free/malloc during a launch
    row_b = int(table.pages[(b.base - GLOBAL_BASE) >> L.PAGE_SHIFT])
    assert row_b != row_a and not table.allocs[row_a].any()   # a stale lookup finds no range
    _check(table, memory)
    memory.free(b)
    c = memory.alloc(100, "c")
    table.sync(memory.allocations, quiescent=True)
    _check(table, memory)
    assert int(table.pages[(c.base - GLOBAL_BASE) >> L.PAGE_SHIFT]) in (row_a, row_b)
