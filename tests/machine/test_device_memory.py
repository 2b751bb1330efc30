"""machine.memory, image, symbols and launch: allocations follow the address map, faults name
what they hit, initialisers are encoded as the GPU holds them."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import ptxvm
from ptxvm.machine.addressmap import ALIGN, GLOBAL_BASE, GUARD_BYTES
from ptxvm.machine.image import encode_init, place_globals
from ptxvm.machine.launch import Geometry
from ptxvm.machine.memory import DeviceMemory, MemoryFault, window_offsets

HEAD = ".version 8.0\n.target sm_80\n.address_size 64\n"


def test_allocations_are_aligned_and_guarded() -> None:
    mem = DeviceMemory()
    a = mem.alloc(10, "a")
    b = mem.alloc(300, "b")
    assert a.base == GLOBAL_BASE
    assert b.base % ALIGN == 0 and b.base - a.end >= GUARD_BYTES
    assert mem.nearest(a.end) == f"just past the end of `a` [0x{a.base:x}, 0x{a.end:x})"


def test_a_load_past_the_end_faults_with_the_nearest_allocation() -> None:
    mem = DeviceMemory()
    a = mem.alloc(8, "x")
    mem.store(np.array([a.base + 4], np.uint64), np.array([7], np.uint32))
    assert mem.load(np.array([a.base + 4], np.uint64), np.uint32).tolist() == [7]
    with pytest.raises(MemoryFault) as e:
        mem.load(np.array([a.base, a.base + 8], np.uint64), np.uint32)
    assert e.value.lane == 1 and e.value.address == a.base + 8
    assert e.value.message == (f"out-of-bounds global access of 4 bytes at 0x{a.base + 8:x} "
                               f"(just past the end of `x` [0x{a.base:x}, 0x{a.end:x}))")


def test_window_offsets_check_both_ends() -> None:
    with pytest.raises(MemoryFault, match="offset 0xfffffffffffffffc; the local window holds 16 bytes"):
        window_offsets(np.array([0, 2**64 - 4], np.uint64), 4, 16, "local")
    assert window_offsets(np.array([12], np.uint64), 4, 16, "local").tolist() == [12]


def test_geometry_is_frozen() -> None:
    g = Geometry((2, 3, 1), (32, 2, 1))
    assert (g.ctas, g.threads_per_cta) == (6, 64)
    with pytest.raises(dataclasses.FrozenInstanceError):
        g.grid = (1, 1, 1)  # type: ignore[misc]


def test_initialisers_and_placement() -> None:
    m = ptxvm.Module(HEAD + """
.global .u32 a[3] = {1, 2, 0x01020304};
.global .f32 f = 1.5;
.const .u64 p = a;
.visible .entry k() { ret; }
""", "init.ptx")
    decls = {d.name: d for d in m.ir.items if getattr(d, "name", None) in ("a", "f", "p")}
    assert encode_init(decls["a"], {}) == bytes([1, 0, 0, 0, 2, 0, 0, 0, 4, 3, 2, 1])
    assert encode_init(decls["f"], {}) == bytes([0, 0, 0xC0, 0x3F])       # 1.5f = 0x3fc00000
    mem = DeviceMemory()
    image = place_globals(m.ir, mem, {})
    pa = image.addresses["a"]
    assert pa == GLOBAL_BASE and mem.find(image.addresses["p"]).space == "const"
    # p holds a's address, resolved after every variable was placed.
    assert bytes(mem.find(image.addresses["p"]).data[:8]) == pa.to_bytes(8, "little")
