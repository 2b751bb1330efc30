"""cp.async (PTX ISA §9.7.9.25.3): tests/cuda/async_copy.cu's four kernels (the __pipeline_*
primitives, cuda::memcpy_async with a cuda::pipeline, cooperative_groups::memcpy_async) in every
nvcc variant, against numpy models written from the CUDA source's comments, plus hand-written
PTX for what nvcc did not emit: src-size zero fill, ignore-src, and the faults. The default
run also runs the sm80 variant and the hand-written cases on the host JIT; the slow suite
(test_jit.py) runs all of them there."""

from __future__ import annotations

import os

import numpy as np
import pytest

import ptxvm

from models.fixture_kernels import VARIANTS, kernel, tree_sum
from models.ptx_samples import HEAD, PARTIAL

RNG = np.random.default_rng(20261130)


@pytest.fixture(autouse=True)
def device(request, executor, monkeypatch):
    variant = getattr(request.node, "callspec", None) and request.node.callspec.params.get("variant")
    if os.environ.get("PTXVM_DEVICE") == "cpu":      # the slow suite: everything on the JIT
        if executor == "interp":
            pytest.skip("this run is the interpreter's suite on the JIT")
    elif executor == "cpu" and variant not in (None, "sm80"):
        pytest.skip("the other nvcc variants run on the JIT in the slow suite (test_jit.py)")
    monkeypatch.setenv("PTXVM_DEVICE", executor)
    return executor
F32 = np.float32


@pytest.mark.parametrize("variant", VARIANTS)
def test_pipeline_primitives_reverse(variant):
    blocks = 3
    x = RNG.random((blocks * 128, 4), dtype=F32)
    out = np.zeros_like(x)
    kernel("async_copy", "pipeline_primitives_reverse", variant)(blocks, 128, (x, out))
    want = (F32(2) * x.reshape(blocks, 128, 4)[:, ::-1, :]).reshape(-1, 4)
    assert out.view(np.uint32).tolist() == want.view(np.uint32).tolist()


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("chunks", [1, 2, 5])
def test_pipeline_double_buffer_sum(variant, chunks):
    blocks = 2
    x = RNG.random(blocks * chunks * 256, dtype=F32)
    out = np.zeros(blocks, F32)
    kernel("async_copy", "pipeline_double_buffer_sum", variant)(blocks, 256, (x, out, np.int32(chunks)))
    per_thread = x.reshape(blocks, chunks, 256)
    acc = np.zeros((blocks, 256), F32)
    for c in range(chunks):                 # each thread adds its chunks in order
        acc = (acc + per_thread[:, c, :]).astype(F32)
    assert out.view(np.uint32).tolist() == tree_sum(acc).astype(F32).view(np.uint32).tolist()


@pytest.mark.parametrize("variant", VARIANTS)
def test_cuda_pipeline_add_one(variant):
    blocks, threads = 2, 64
    x = RNG.random(blocks * threads * 4, dtype=F32)
    out = np.zeros_like(x)
    kernel("async_copy", "cuda_pipeline_add_one", variant)(blocks, threads, (x, out), shared_mem=threads * 16)
    assert out.view(np.uint32).tolist() == (x + F32(1)).view(np.uint32).tolist()


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("n", [1, 37, 256, 1000])
def test_cg_memcpy_async_reverse(variant, n):
    blocks = 2
    x = RNG.integers(-2**31, 2**31, blocks * n, dtype=np.int64).astype(np.int32)
    out = np.zeros_like(x)
    kernel("async_copy", "cg_memcpy_async_reverse", variant)(blocks, 128, (x, out, np.int32(n)), shared_mem=4 * n)
    assert out.tolist() == x.reshape(blocks, n)[:, ::-1].reshape(-1).tolist()


@pytest.mark.parametrize("mode", [0, 1])
def test_src_size_and_ignore_src_fill_with_zeros(mode):
    n = 64
    x = RNG.integers(1, 256, (n, 16), dtype=np.int64).astype(np.uint8)
    out = np.full((n, 16), 0xAA, np.uint8)
    ptxvm.Module(PARTIAL, "partial.ptx")["k"](1, n, (x, out, np.uint32(mode)))
    want = x.copy()
    for t in range(n):
        copied = t % 17 if mode == 0 else (0 if t & 1 else 16)
        want[t, copied:] = 0
    assert out.tolist() == want.tolist()


# One thread copies `size` bytes from in + off to buf + doff with src-size `ssz`.
ONE = HEAD + """
.visible .entry k(.param .u64 pin, .param .u64 off, .param .u32 doff, .param .u32 ssz)
{{
  .reg .b32 %r<4>;
  .reg .b64 %rd<4>;
  .shared .align 16 .b8 buf[64];
  ld.param.u64 %rd1, [pin];
  ld.param.u64 %rd2, [off];
  add.s64 %rd3, %rd1, %rd2;
  ld.param.u32 %r1, [doff];
  mov.u32 %r2, buf;
  add.s32 %r2, %r2, %r1;
  ld.param.u32 %r3, [ssz];
  cp.async.ca.shared.global [%r2], [%rd3], {size}, %r3;
  cp.async.wait_all;
  ret;
}}
"""


def _one(size, off, doff, ssz):
    x = np.zeros(16, np.uint8)
    ptxvm.Module(ONE.format(size=size), "one.ptx")["k"](1, 1, (x, np.uint64(off), np.uint32(doff), np.uint32(ssz)))


def test_zero_fill_reads_no_source_bytes():
    _one(8, 1 << 40, 0, 0)          # src-size 0: the (unmapped) source is never read
    _one(8, 8, 0, 8)                # the last 8 bytes of the 16-byte buffer


@pytest.mark.parametrize("off, doff, ssz, message", [
    (16, 0, 8, "out-of-bounds global access"),                       # bytes 16..23 of a 16-byte buffer
    (4, 0, 8, "misaligned global access"),                          # source not 8-byte aligned
    (0, 4, 8, "misaligned shared access"),                          # destination not 8-byte aligned
    (0, 64, 8, "out-of-bounds shared access"),                      # past the 64-byte window
    (0, 0, 9, "`cp.async` src-size is larger than its cp-size 8"),
])
def test_bad_copies_fault(off, doff, ssz, message):
    with pytest.raises(ptxvm.KernelFault) as e:
        _one(8, off, doff, ssz)
    assert message in e.value.message
    assert e.value.instruction.startswith("cp.async.ca.shared.global")
