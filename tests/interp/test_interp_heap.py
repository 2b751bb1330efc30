"""`malloc`/`free` called from PTX, declared and called the way nvcc emits them
(`.extern .func (.param .b64 func_retval0) malloc(.param .b64 malloc_param_0)`,
`call.uni (retval0), malloc, (param0);`): device-heap blocks from the global allocator, bounds-
checked like any allocation, alive across launches until freed; bad frees fault precisely.
Expected values are computed in Python from what each thread writes. Every case runs on the
interpreter and on the host JIT (whose threads stop at the call for the executor's heap)."""

from __future__ import annotations

import gc

import numpy as np
import pytest

import ptxvm
from ptxvm.driver.api import default_device
from ptxvm.machine import heap


@pytest.fixture(autouse=True)
def device(executor, monkeypatch):
    monkeypatch.setenv("PTXVM_DEVICE", executor)
    return executor

HEAD = """.version 8.0
.target sm_80
.address_size 64
.extern .func (.param .b64 func_retval0) malloc
(
	.param .b64 malloc_param_0
)
;
.extern .func free
(
	.param .b64 free_param_0
)
;
"""


def _call_malloc(size_reg: str, out_reg: str) -> str:
    return f"""
{{
  .param .b64 param0;
  st.param.b64 [param0], {size_reg};
  .param .b64 retval0;
  call.uni (retval0), malloc, (param0);
  ld.param.b64 {out_reg}, [retval0];
}}"""


def _call_free(ptr_reg: str) -> str:
    return f"""
{{
  .param .b64 param0;
  st.param.b64 [param0], {ptr_reg};
  call.uni free, (param0);
}}"""


# Thread t mallocs (t % 4 + 1) * 4 u32 words, fills word i with t * 1000 + i, records the pointer,
# sums the words back, frees the block unless t is odd (`keep`), and stores the sum.
PER_THREAD = HEAD + """
.visible .entry k(.param .u64 psum, .param .u64 pptr)
{
  .reg .pred %p<4>;
  .reg .b32 %r<16>;
  .reg .b64 %rd<16>;
  mov.u32 %r1, %tid.x;
  and.b32 %r2, %r1, 3;
  add.u32 %r2, %r2, 1;
  shl.b32 %r2, %r2, 2;
  mul.wide.u32 %rd1, %r2, 4;
""" + _call_malloc("%rd1", "%rd2") + """
  ld.param.u64 %rd3, [pptr];
  mul.wide.u32 %rd4, %r1, 8;
  add.s64 %rd5, %rd3, %rd4;
  st.global.u64 [%rd5], %rd2;
  mul.lo.u32 %r3, %r1, 1000;
  mov.u32 %r4, 0;
  mov.u64 %rd6, %rd2;
FILL:
  add.u32 %r5, %r3, %r4;
  st.global.u32 [%rd6], %r5;
  add.s64 %rd6, %rd6, 4;
  add.u32 %r4, %r4, 1;
  setp.lt.u32 %p1, %r4, %r2;
  @%p1 bra FILL;
  mov.u32 %r4, 0;
  mov.u32 %r6, 0;
  mov.u64 %rd6, %rd2;
SUM:
  ld.global.u32 %r5, [%rd6];
  add.u32 %r6, %r6, %r5;
  add.s64 %rd6, %rd6, 4;
  add.u32 %r4, %r4, 1;
  setp.lt.u32 %p1, %r4, %r2;
  @%p1 bra SUM;
  and.b32 %r7, %r1, 1;
  setp.eq.u32 %p2, %r7, 1;
  @%p2 bra STORE;
""" + _call_free("%rd2") + """
STORE:
  ld.param.u64 %rd7, [psum];
  mul.wide.u32 %rd8, %r1, 4;
  add.s64 %rd9, %rd7, %rd8;
  st.global.u32 [%rd9], %r6;
  ret;
}
"""

# Reads word 0 of each block a previous launch left allocated, then frees it.
READ_AND_FREE = HEAD + """
.visible .entry k(.param .u64 pptr, .param .u64 pout)
{
  .reg .b32 %r<4>;
  .reg .b64 %rd<10>;
  mov.u32 %r1, %tid.x;
  ld.param.u64 %rd1, [pptr];
  mul.wide.u32 %rd2, %r1, 8;
  add.s64 %rd3, %rd1, %rd2;
  ld.global.u64 %rd4, [%rd3];
  ld.global.u32 %r2, [%rd4];
  ld.param.u64 %rd5, [pout];
  mul.wide.u32 %rd6, %r1, 4;
  add.s64 %rd7, %rd5, %rd6;
  st.global.u32 [%rd7], %r2;
""" + _call_free("%rd4") + """
  ret;
}
"""


def test_per_thread_blocks_are_distinct_aligned_and_survive_the_launch():
    n = 64
    sums, ptrs = np.zeros(n, np.uint32), np.zeros(n, np.uint64)
    ptxvm.Module(PER_THREAD, "heap.ptx")["k"](1, n, (sums, ptrs))
    words = [(t % 4 + 1) * 4 for t in range(n)]
    assert [int(s) for s in sums] == [sum(t * 1000 + i for i in range(w)) for t, w in enumerate(words)]
    p = [int(x) for x in ptrs]
    assert all(x != 0 and x % 16 == 0 for x in p)                # CUDA: 16-byte aligned blocks
    spans = sorted((x, x + 4 * w) for x, w in zip(p, words))
    assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:]))   # no two blocks overlap
    # Odd threads kept their blocks: a second launch reads them and frees them.
    kept = ptrs[1::2].copy()
    out = np.zeros(kept.size, np.uint32)
    ptxvm.Module(READ_AND_FREE, "heap2.ptx")["k"](1, kept.size, (kept, out))
    assert [int(v) for v in out] == [t * 1000 for t in range(1, n, 2)]


def _free_kernel(setup: str) -> str:
    """A kernel whose thread 0 runs ``setup`` (leaving a pointer in %rd2) and frees %rd2."""
    return HEAD + """
.visible .entry k(.param .u64 pbuf)
{
  .reg .pred %p<2>;
  .reg .b32 %r<4>;
  .reg .b64 %rd<8>;
  mov.u64 %rd1, 64;
""" + setup + _call_free("%rd2") + """
  ret;
}
"""


def test_double_free_faults():
    text = _free_kernel(_call_malloc("%rd1", "%rd2") + _call_free("%rd2"))
    with pytest.raises(ptxvm.KernelFault) as e:
        ptxvm.Module(text, "df.ptx")["k"](1, 1, (np.zeros(1, np.uint32),))
    assert e.value.message.startswith(f"double free of `malloc #{heap.heap_of(e.value.memory).count} (64 bytes)` at 0x")
    assert e.value.instruction == "call.uni free, (param0);" and e.value.space == "global"


def test_free_of_an_interior_pointer_or_a_foreign_buffer_faults():
    interior = _free_kernel(_call_malloc("%rd1", "%rd3") + "\nadd.s64 %rd2, %rd3, 16;")
    with pytest.raises(ptxvm.KernelFault) as e:
        ptxvm.Module(interior, "if.ptx")["k"](1, 1, (np.zeros(1, np.uint32),))
    assert "which is not the start of a block from malloc (inside `malloc #" in e.value.message
    foreign = _free_kernel("ld.param.u64 %rd2, [pbuf];")
    with pytest.raises(ptxvm.KernelFault) as e:
        ptxvm.Module(foreign, "ff.ptx")["k"](1, 1, (np.zeros(4, np.uint32),))
    assert "which is not the start of a block from malloc (inside `" in e.value.message
    assert "malloc #" not in e.value.message.split("(inside")[1].split(")")[0]


def test_use_after_free_faults():
    text = HEAD + """
.visible .entry k()
{
  .reg .b32 %r<4>;
  .reg .b64 %rd<8>;
  mov.u64 %rd1, 32;
""" + _call_malloc("%rd1", "%rd2") + _call_free("%rd2") + """
  ld.global.u32 %r1, [%rd2+4];
  ret;
}
"""
    with pytest.raises(ptxvm.KernelFault) as e:
        ptxvm.Module(text, "uaf.ptx")["k"](1, 1, ())
    assert "out-of-bounds global access of 4 bytes" in e.value.message and "which was freed" in e.value.message


def test_free_null_is_a_no_op_and_an_exhausted_heap_returns_null():
    text = HEAD + """
.visible .entry k(.param .u64 pout)
{
  .reg .b64 %rd<8>;
  mov.u64 %rd2, 0;
""" + _call_free("%rd2") + f"""
  mov.u64 %rd1, {heap.HEAP_LIMIT + 1};
""" + _call_malloc("%rd1", "%rd3") + """
  mov.u64 %rd1, 0;
""" + _call_malloc("%rd1", "%rd4") + """
  ld.param.u64 %rd5, [pout];
  st.global.v2.u64 [%rd5], {%rd3, %rd4};
  ret;
}
"""
    out = np.full(2, 7, np.uint64)
    ptxvm.Module(text, "null.ptx")["k"](1, 1, (out,))
    assert [int(v) for v in out] == [0, 0]


# --------------------------------------------------------------------- heap calls inside a .func

def test_cpp_new_and_virtual_delete_from_nvcc():
    """tests/cuda/calls.cu virtual_new_delete: `new Circle/Square` in the kernel, `delete` through
    the virtual deleting destructor, a `.func` that calls free (on the JIT: no stop inside a
    function, a call back into the executor's heap)."""
    from pathlib import Path
    mod = ptxvm.Module.from_file(Path(__file__).parents[1] / "fixtures" / "nvcc" / "sm80" / "calls.ptx")
    name = next(k for k in mod.kernels if "virtual_new_delete" in k)
    n = 100
    k = np.arange(n, dtype=np.int32)
    x = np.linspace(0.5, 3.0, n).astype(np.float32)
    out = np.zeros(n, np.float32)
    h = heap.heap_of(default_device().memory)
    live = set(h.live)
    mod[name](1, 128, (k, x, out, np.int32(n)))
    # calls.cu: Circle::area is 3.14159265f * r * r (two f32 products), Square::area s * s
    want = np.where(k & 1, (np.float32(3.14159265) * x) * x, x * x).astype(np.float32)
    assert out.view(np.uint32).tolist() == want.view(np.uint32).tolist()
    assert set(h.live) == live and h.count >= n      # every block was deleted again


# `release(p)` frees p in a called function (not inlined: it does not synchronise).
FREE_IN_FUNC = HEAD + """
.func release(.param .b64 p)
{
  .reg .b64 %rd<2>;
  ld.param.u64 %rd1, [p];
""" + _call_free("%rd1") + """
  ret;
}

.func (.param .b64 r) grab(.param .b64 n)
{
  .reg .b64 %rd<3>;
  ld.param.u64 %rd1, [n];
""" + _call_malloc("%rd1", "%rd2") + """
  st.param.b64 [r], %rd2;
  ret;
}

.visible .entry k(.param .u64 pout, .param .u32 twice)
{
  .reg .pred %p<2>;
  .reg .b32 %r<4>;
  .reg .b64 %rd<8>;
  mov.u32 %r1, %tid.x;
  mov.u64 %rd1, 16;
  {
    .param .b64 a0;
    st.param.b64 [a0], %rd1;
    .param .b64 r0;
    call.uni (r0), grab, (a0);
    ld.param.b64 %rd2, [r0];
  }
  st.global.u32 [%rd2], %r1;
  ld.global.u32 %r2, [%rd2];
  ld.param.u64 %rd3, [pout];
  mul.wide.u32 %rd4, %r1, 4;
  add.s64 %rd5, %rd3, %rd4;
  st.global.u32 [%rd5], %r2;
  {
    .param .b64 a1;
    st.param.b64 [a1], %rd2;
    call.uni release, (a1);
  }
  ld.param.u32 %r3, [twice];
  setp.eq.u32 %p1, %r3, 0;
  @%p1 bra DONE;
  {
    .param .b64 a2;
    st.param.b64 [a2], %rd2;
    call.uni release, (a2);
  }
DONE:
  ret;
}
"""


def test_malloc_and_free_inside_functions_and_a_double_free_there_faults():
    out = np.zeros(40, np.uint32)
    mod = ptxvm.Module(FREE_IN_FUNC, "func_heap.ptx")
    h = heap.heap_of(default_device().memory)
    live, count = set(h.live), h.count
    mod["k"](1, 40, (out, np.uint32(0)))
    assert out.tolist() == list(range(40)) and set(h.live) == live and h.count == count + 40
    with pytest.raises(ptxvm.KernelFault) as e:
        mod["k"](1, 40, (out, np.uint32(1)))
    # thread 0's block is the first of the second launch's 40
    assert e.value.message.startswith(f"double free of `malloc #{count + 41} (16 bytes)` at 0x")
    assert e.value.instruction == "call.uni free, (param0);" and e.value.space == "global"
    assert e.value.thread == (0, 0, 0)


@pytest.mark.parametrize("small_live", [0, 300])
def test_malloc_past_the_device_memory_limit_returns_null(device, small_live) -> None:
    # CUDA's malloc returns NULL when memory runs out; ptxvm's device_memory limit is where it
    # runs out here (the ResourceError a host allocation gets must not escape from a kernel).
    from ptxvm import limits
    text = HEAD + """
.visible .entry k(.param .u64 out)
{
  .reg .b64 %rd<4>;
  ld.param.u64 %rd3, [out];
  mov.u64 %rd1, 4096;
""" + _call_malloc("%rd1", "%rd2") + """
  st.global.u64 [%rd3], %rd2;
  ret;
}
"""
    k = ptxvm.Module(text, "oom.ptx")["k"]
    out = np.full(1, 7, np.uint64)
    mem = default_device().memory
    # 1-byte allocations live (as earlier tests leave them): each pads to a 16-byte buffer.
    smalls = [mem.alloc(1, f"small {i}") for i in range(small_live)]
    # Headroom is measured in the limit's own unit (requested bytes, not the padded buffers that
    # live_bytes counts: after other tests, hundreds of live allocations differ by > 3 KiB), and
    # no collection may free earlier tests' garbage inside the window and widen it.
    gc.collect()
    gc.disable()
    try:
        used = mem.reserved_bytes()
        limits.configure(device_memory=used + 1024)      # the 8-byte output fits, 4 KiB does not
        k((1,), (1,), (out,))
    finally:
        limits.reset()
        gc.enable()
        for a in smalls:
            mem.free(a)
    assert out[0] == 0


def test_reserved_bytes_count_requested_sizes_live_bytes_the_buffers() -> None:
    # What the device_memory limit counts (requested sizes) against what a leak check counts
    # (the 16-byte padded buffers), on a fresh memory so nothing else is live.
    from ptxvm.machine.memory import DeviceMemory
    mem = DeviceMemory()
    a, b = mem.alloc(1, "a"), mem.alloc(20, "b")
    assert mem.reserved_bytes() == 21 and mem.live_bytes() == 16 + 32
    mem.free(a)
    assert mem.reserved_bytes() == 20 and mem.live_bytes() == 32
    mem.free(b)
    assert mem.reserved_bytes() == 0 and mem.live_bytes() == 0
