""".b128 data movement and atomics (PTX ISA 8.3: §5.2.3 `.b128` type; §9.7.9.1 mov, §9.7.9.8/9
ld/st, §9.7.13.5 atom.cas/exch.b128 on sm_90): on the host JIT against a model written from the
ISA (a .b128 value is 16 bytes little-endian: its low 64 bits at the lower address, and element 0
of a `{lo, hi}` brace the least significant half); the interpreter refuses them at the
instruction, located (its lanes hold at most 64 bits). ptxas 13 -arch=sm_90 accepts the kernel."""

from __future__ import annotations

import numpy as np
import pytest

import ptxvm

PTX = """.version 8.3
.target sm_90
.address_size 64
.visible .entry k(.param .u64 p, .param .u64 q)
{
.reg .b128 %x<4>;
.reg .b64 %rd<8>;
ld.param.u64 %rd1, [p];
ld.param.u64 %rd6, [q];
ld.global.b128 %x1, [%rd1];
mov.b128 {%rd2, %rd3}, %x1;
mov.b128 %x2, {%rd3, %rd2};
st.global.b128 [%rd1+16], %x2;
atom.global.cas.b128 %x0, [%rd1+32], %x1, %x2;
st.global.b128 [%rd6], %x0;
atom.global.cas.b128 %x0, [%rd1+48], %x1, %x2;
st.global.b128 [%rd6+16], %x0;
atom.global.exch.b128 %x3, [%rd1+64], %x2;
st.global.b128 [%rd6+32], %x3;
ret;
}
"""


def model(mem: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Pairs (lo, hi) of u64: the kernel's effect on ``mem`` and what it writes to ``q``."""
    m = mem.copy().reshape(-1, 2)
    x1 = m[0].copy()
    x2 = x1[::-1].copy()                      # halves swapped through the brace moves
    m[1] = x2
    old = []
    for slot in (2, 3):                       # cas: store x2 where the slot equals x1
        old.append(m[slot].copy())
        if (m[slot] == x1).all():
            m[slot] = x2
    old.append(m[4].copy())                   # exch: store x2, return the old value
    m[4] = x2
    return m.reshape(-1), np.concatenate(old)


def test_b128_moves_and_atomics_on_the_jit() -> None:
    mem = np.array([0x1111, 0x2222, 0, 0, 0x1111, 0x2222, 0x1111, 0x9999, 5, 6], np.uint64)
    mem[:2] |= np.uint64(0xABCD << 48)
    mem[4], mem[5] = mem[0], mem[1]            # slot 2 holds x1 (the cas stores), slot 3 not
    want_mem, want_q = model(mem)
    q = np.zeros(6, np.uint64)
    ptxvm.Module(PTX, "b128.ptx")["k"](1, 1, (mem, q), device="cpu")
    np.testing.assert_array_equal(mem, want_mem)
    np.testing.assert_array_equal(q, want_q)


def test_b128_is_refused_by_the_interpreter_at_the_load() -> None:
    with pytest.raises(ptxvm.UnsupportedError, match=r"b128\.ptx:10:1: error: `ld\.global\.b128` moves "
                                                     r"\.b128 values, which the interpreter does not hold yet"):
        ptxvm.Module(PTX, "b128.ptx")["k"](1, 1, (np.zeros(10, np.uint64), np.zeros(6, np.uint64)),
                                           device="interp")
