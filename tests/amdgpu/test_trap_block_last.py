"""A kernel's trap block is its last block: LLVM 22's gfx11 backend leaves the pseudos of any
block after an ``llvm.trap`` unexpanded (a uniform 64-bit add's ``S_ADD_U64_PSEUDO``) and aborts
at emission ("Unsupported instruction").  The kernel below aborted that way before the trap block
was moved last (reduced from tests/fixtures/nvcc/sm80/tensor_core.ptx with llvm-reduce); ptxas
accepts it."""

from __future__ import annotations

import re

import pytest

import ptxvm
from ptxvm.amdgpu import available, load_target
from ptxvm.amdgpu.codegen import compile_unlinked
from ptxvm.amdgpu.lowering import lift_module

# A trap before a loop whose exit block adds two uniform 64-bit values (the loop keeps the
# optimiser from hoisting the add above the trap).
TRAP_THEN_ADD = r"""
.version 8.0
.target sm_80
.address_size 64

.visible .entry trap_then_add(.param .u64 a, .param .u64 out, .param .u32 n)
{
    .reg .pred %p<3>;
    .reg .b32 %r<5>;
    .reg .b64 %rd<6>;
    ld.param.u64 %rd1, [a];
    ld.param.u64 %rd2, [out];
    ld.param.u32 %r1, [n];
    setp.gt.u32 %p1, %r1, 64;
    @%p1 trap;
    mov.u32 %r3, 0;
    mov.u32 %r4, 0;
LOOP:
    ld.global.u32 %r2, [%rd1];
    add.u32 %r4, %r4, %r2;
    add.s64 %rd1, %rd1, 4;
    add.u32 %r3, %r3, 1;
    setp.lt.u32 %p2, %r3, %r1;
    @%p2 bra LOOP;
    add.s64 %rd5, %rd2, %rd1;
    st.global.u32 [%rd5], %r4;
    ret;
}
"""


def test_the_trap_block_is_the_kernels_last_block():
    text = lift_module(ptxvm.parse(TRAP_THEN_ADD), load_target("gfx1100"))
    body = text[text.index("define amdgpu_kernel"):]
    body = body[:body.index("\n}\n")]
    blocks = re.split(r"\n(?=[\w.\"]+:)", body)
    assert [i for i, blk in enumerate(blocks) if "llvm.trap" in blk] == [len(blocks) - 1]


@pytest.mark.parametrize("target", available())
def test_a_trap_before_a_uniform_64_bit_add_compiles(target):
    unlinked = compile_unlinked(TRAP_THEN_ADD, target, use_cache=False)
    assert re.search(r"^\s*s_trap\s+2", unlinked.asm(), re.M)
