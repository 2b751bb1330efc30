"""numpy arguments used in place by the host executors (driver/args.py ``share``): the JIT shares
a writable array only when its host address keeps the device address's alignment (a device
buffer starts on a 256-byte boundary; generated atomics assume PTX's natural alignment), and
gives any other array an aligned copy; either way the kernel's writes reach the array."""

from __future__ import annotations

import numpy as np
import pytest

import ptxvm
from ptxvm.driver.api import available_devices, default_device
from ptxvm.driver.args import bind

HEAD = ".version 7.0\n.target sm_70\n.address_size 64\n"

# x[i] += 1 with atom.global.add.u64 (8-byte natural alignment), one thread per element.
BUMP = HEAD + """.visible .entry bump(.param .u64 x, .param .u32 n)
{
    .reg .pred %p;
    .reg .b32 %r<5>;
    .reg .b64 %rd<4>;
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, %ctaid.x;
    mov.u32 %r3, %ntid.x;
    mad.lo.u32 %r1, %r2, %r3, %r1;
    ld.param.u32 %r4, [n];
    setp.ge.u32 %p, %r1, %r4;
    @%p ret;
    ld.param.u64 %rd1, [x];
    mul.wide.u32 %rd2, %r1, 8;
    add.u64 %rd1, %rd1, %rd2;
    atom.global.add.u64 %rd3, [%rd1], 1;
    ret;
}
"""


def _offset_view(n: int, offset: int) -> np.ndarray:
    """n uint64 at a host address ``offset`` bytes past a 64-byte boundary."""
    raw = np.zeros(n * 8 + 128, np.uint8)
    start = (-raw.ctypes.data) % 64 + offset
    return raw[start:start + n * 8].view(np.uint64)


@pytest.mark.parametrize("offset", [0, 8, 16, 24])
def test_jit_shares_only_arrays_whose_host_address_keeps_the_alignment(offset):
    a = _offset_view(8, offset)
    params = ptxvm.Module(BUMP)["bump"].params
    dev = default_device()
    binding = bind(dev, params, (a, np.uint32(8)), share=True, share_align=16)
    try:
        assert binding.groups[0].shared == (offset % 16 == 0)
    finally:
        binding.finish(dev)


@pytest.mark.skipif("cpu" not in available_devices(), reason="the JIT needs llvmlite")
@pytest.mark.parametrize("offset", [0, 8])
def test_atomics_on_shared_and_copied_arrays(offset):
    k = ptxvm.Module(BUMP)["bump"]
    a = _offset_view(300, offset)
    a[:] = np.arange(300, dtype=np.uint64) * 3
    for _ in range(2):
        k(3, 128, (a, np.uint32(300)), device="cpu")
    assert np.array_equal(a, np.arange(300, dtype=np.uint64) * 3 + 2)
