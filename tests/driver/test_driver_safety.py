"""The launch API aliases, frees, locks and refuses like a real runtime (issue 12).

Expected values come from what a GPU does (both stores of an aliased launch land), from the
PTX/IEEE ranges of the `.param` types, and from counting bytes by hand.
"""

from __future__ import annotations

import gc
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

import ptxvm
from ptxvm.driver import Device
from ptxvm.driver.api import default_device

HEAD = ".version 7.0\n.target sm_70\n.address_size 64\n"

# Stores 1 through p0 and 2 through p1+4 (one thread).
ALIAS = HEAD + """.visible .entry two_stores(.param .u64 p0, .param .u64 p1)
{
    .reg .b64 %rd<3>;
    .reg .b32 %r<2>;
    ld.param.u64 %rd1, [p0];
    ld.param.u64 %rd2, [p1];
    mov.u32 %r1, 1;
    st.global.u32 [%rd1], %r1;
    mov.u32 %r1, 2;
    st.global.u32 [%rd2+4], %r1;
    ret;
}
"""

# out[i] = in[i] * 2 + tag, one thread per element.
TWICE = HEAD + """.visible .entry twice(.param .u64 src, .param .u64 dst, .param .u32 tag, .param .u32 n)
{
    .reg .pred %p;
    .reg .b32 %r<6>;
    .reg .b64 %rd<5>;
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, %ctaid.x;
    mov.u32 %r3, %ntid.x;
    mad.lo.u32 %r1, %r2, %r3, %r1;
    ld.param.u32 %r4, [n];
    setp.ge.u32 %p, %r1, %r4;
    @%p ret;
    ld.param.u64 %rd1, [src];
    ld.param.u64 %rd2, [dst];
    mul.wide.u32 %rd3, %r1, 4;
    add.u64 %rd1, %rd1, %rd3;
    add.u64 %rd2, %rd2, %rd3;
    ld.global.u32 %r5, [%rd1];
    ld.param.u32 %r4, [tag];
    mad.lo.u32 %r5, %r5, 2, %r4;
    st.global.u32 [%rd2], %r5;
    ret;
}
"""

SCALARS = HEAD + """.visible .entry scalars(.param .f32 x, .param .f16 h, .param .u8 b, .param .s16 s,
                                 .param .f64 d, .param .u64 out)
{
    ret;
}
"""


@pytest.fixture(scope="module")
def alias_kernel():
    return ptxvm.Module(ALIAS)["two_stores"]


@pytest.fixture(scope="module")
def twice():
    return ptxvm.Module(TWICE)["twice"]


@pytest.fixture(scope="module")
def scalars():
    return ptxvm.Module(SCALARS)["scalars"]


# ------------------------------------------------------------------------------ aliasing

def test_same_array_twice_aliases(alias_kernel, executor):
    a = np.zeros(2, np.uint32)
    alias_kernel(1, 1, (a, a), device=executor)
    assert a.tolist() == [1, 2]          # on a GPU both stores land in one buffer


def test_overlapping_views_alias(alias_kernel, executor):
    a = np.zeros(3, np.uint32)
    alias_kernel(1, 1, (a[0:], a[1:]), device=executor)
    assert a.tolist() == [1, 0, 2]       # p1+4 is a[1:]'s second element, a[2]


def test_view_inside_a_larger_array_aliases(alias_kernel, executor):
    a = np.full(8, 7, np.uint32)
    alias_kernel(1, 1, (a, a[4:6]), device=executor)
    assert a.tolist() == [1, 7, 7, 7, 7, 2, 7, 7]    # untouched bytes keep their values


def test_disjoint_arrays_stay_separate(alias_kernel, executor):
    a, b = np.zeros(2, np.uint32), np.zeros(2, np.uint32)
    alias_kernel(1, 1, (a, b), device=executor)
    assert a.tolist() == [1, 0] and b.tolist() == [0, 2]


def test_write_through_writable_alias_of_readonly_view_is_allowed(alias_kernel, executor):
    a = np.zeros(2, np.uint32)
    ro = a.view()
    ro.flags.writeable = False
    alias_kernel(1, 1, (a, ro), device=executor)       # the second store goes through ro: p1+4
    # ro's bytes changed, but every changed byte is also `a`'s (written through the alias).
    assert a.tolist() == [1, 2]


def test_write_to_readonly_array_is_refused(alias_kernel, executor):
    a = np.zeros(2, np.uint32)
    ro = np.zeros(2, np.uint32)
    ro.flags.writeable = False
    with pytest.raises(ptxvm.LaunchError, match=r"wrote to read-only numpy argument\(s\) `p1`"):
        alias_kernel(1, 1, (a, ro), device=executor)


# ------------------------------------------------------------------------------ arrays of the wrong kind

def test_device_array_of_another_device_is_refused(alias_kernel):
    other = Device()
    d = ptxvm.to_device(np.zeros(2, np.uint32), other)
    with pytest.raises(ptxvm.LaunchError) as e:
        alias_kernel(1, 1, (d, d))
    assert "argument `p0`: the DeviceArray at 0x" in e.value.message
    assert "belongs to another ptxvm.Device" in e.value.message


def test_device_array_used_after_free_is_refused(alias_kernel):
    d = ptxvm.to_device(np.zeros(2, np.uint32))
    view = d[1:]
    d.free()
    with pytest.raises(ptxvm.LaunchError, match=r"argument `p1`: the DeviceArray at 0x[0-9a-f]+ "
                                                r"\(uint32\[1\]\) was freed"):
        alias_kernel(1, 1, (np.zeros(2, np.uint32), view))
    with pytest.raises(ptxvm.LaunchError, match=r"copy_to_host: the DeviceArray .* was freed"):
        d.copy_to_host()


def test_device_array_results_are_read_back(alias_kernel):
    d = ptxvm.to_device(np.zeros(2, np.uint32))
    alias_kernel(1, 1, (d, d))
    assert d.copy_to_host().tolist() == [1, 2]


def test_zero_d_array_is_refused(alias_kernel, executor):
    with pytest.raises(ptxvm.LaunchError) as e:
        alias_kernel(1, 1, (np.array(5, np.uint32), np.zeros(2, np.uint32)), device=executor)
    assert e.value.message == (
        "argument `p0` (.u64) is a 0-d numpy array; pass an array of 1 or more dimensions for a "
        "pointer, or a scalar (a.item(), np.float32(x)) for a value")


def test_object_array_is_refused(alias_kernel, executor):
    with pytest.raises(ptxvm.LaunchError) as e:
        alias_kernel(1, 1, (np.zeros(2, np.uint32), np.array([1, "x"], dtype=object)), device=executor)
    assert e.value.message == (
        "argument `p1` (.u64) is a numpy array of dtype object, which holds Python objects; pass an "
        "array of a numeric dtype (e.g. float32, int32, uint8)")


def test_to_device_refuses_object_arrays():
    with pytest.raises(ptxvm.LaunchError, match="to_device: the array is a numpy array of dtype object"):
        ptxvm.to_device(np.array([None, 1], dtype=object))


# ------------------------------------------------------------------------------ leaks

def _rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096


@pytest.mark.parametrize("device,launches", [
    ("interp", 200), ("cpu", 40), pytest.param("cpu", 200, marks=pytest.mark.slow)])
def test_launch_buffers_are_released(twice, device, launches):
    """200 launches of 3 x 4 MiB fresh arrays: device memory and RSS stay flat (before the fix
    every launch's buffers stayed referenced: 480 MiB per 40 launches). The JIT copies 24 MiB
    per launch, so its default run has 40."""
    mem = default_device().memory
    n = 1 << 20                                           # 4 MiB of uint32
    twice(1, 1, (np.ones(n, np.uint32), np.zeros(n, np.uint32), 0, 1), device=device)   # warm up
    gc.collect()
    live, count, rss = mem.live_bytes(), len(mem.allocations), _rss_bytes()
    for i in range(launches):
        src, dst, spare = np.full(n, i, np.uint32), np.zeros(n, np.uint32), np.zeros(n, np.uint32)
        twice(1, 1, (src, dst, 5, 1), device=device)
        assert dst[0] == 2 * i + 5 and dst[1] == 0
        del src, dst, spare
    gc.collect()
    assert mem.live_bytes() == live and len(mem.allocations) == count
    assert _rss_bytes() - rss < 150 << 20


def test_freed_allocation_drops_its_bytes_and_faults_when_touched(alias_kernel):
    d = ptxvm.to_device(np.zeros(1 << 16, np.uint32))
    mem = default_device().memory
    live = mem.live_bytes()
    stale = d.ptr
    d.free()
    assert mem.live_bytes() == live - (1 << 18)
    assert mem.find(stale) is None
    assert "which was freed" in mem.nearest(stale + 8)


def test_device_array_is_freed_when_collected():
    mem = default_device().memory
    gc.collect()
    live = mem.live_bytes()
    d = ptxvm.to_device(np.zeros(1000, np.uint64))
    assert mem.live_bytes() == live + 8000
    view = d[10:]
    del d
    gc.collect()
    assert mem.live_bytes() == live + 8000            # the view keeps the memory alive
    del view
    gc.collect()
    assert mem.live_bytes() == live


# ------------------------------------------------------------------------------ threads

def test_concurrent_to_device_gives_distinct_addresses():
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    found: list[list[int]] = [[] for _ in range(4)]
    keep = []

    def work(k: int) -> None:
        for _ in range(300):
            d = ptxvm.to_device(np.zeros(4, np.uint32))
            keep.append(d)
            found[k].append(d.ptr)
    try:
        threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(old)
    ptrs = [p for f in found for p in f]
    assert len(ptrs) == 1200 and len(set(ptrs)) == 1200


def _threaded_launches(twice, device: str, total: int) -> None:
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    errors: list[str] = []

    def work(k: int) -> None:
        for i in range(total // 4):
            n = 8 + (i % 5)
            src = np.arange(n, dtype=np.uint32) + 1000 * k + i
            if i % 2:
                dst = ptxvm.to_device(np.zeros(n, np.uint32))
                twice(1, 32, (ptxvm.to_device(src), dst, k, n), device=device)
                got = dst.copy_to_host()
            else:
                got = np.zeros(n, np.uint32)
                twice(1, 32, (src, got, k, n), device=device)
            if not np.array_equal(got, src * 2 + k):
                errors.append(f"thread {k} launch {i}: {got} != {src * 2 + k}")
    try:
        threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(old)
    assert errors == []


@pytest.mark.parametrize("device,launches", [
    ("interp", 1000), ("cpu", 64), pytest.param("cpu", 1000, marks=pytest.mark.slow)])
def test_launches_from_four_threads_are_correct(twice, device, launches):
    """4 threads, a 1 us switch interval, 1,000 launches in all, numpy and device arrays mixed.
    (The JIT's CTA pool threads fight for the GIL at that interval, ~60 ms a launch: the full
    count on cpu is slow.)"""
    _threaded_launches(twice, device, launches)


# ------------------------------------------------------------------------------ Python API mistakes

def test_args_not_in_a_tuple(alias_kernel, executor):
    x, y = np.zeros(2, np.uint32), np.zeros(2, np.uint32)
    with pytest.raises(ptxvm.LaunchError) as e:
        alias_kernel(1, 4, 4, 1.0, x, y)
    assert e.value.message == (
        "kernel arguments must be one tuple or list, got int 4; call kernel(grid, block, (arg0, arg1, ...)) "
        "or kernel[grid, block](arg0, arg1, ...)")


def test_device_slot_given_an_array(alias_kernel):
    with pytest.raises(ptxvm.LaunchError, match=r"device must be a name such as 'interp' or 'cpu', got ndarray; "
                                                r"were the kernel arguments passed without a tuple\?"):
        alias_kernel(1, 1, (), 0, np.zeros(2))


def test_shared_mem_must_be_an_int(alias_kernel):
    with pytest.raises(ptxvm.LaunchError, match=r"shared_mem must be a byte count \(int\), got float 1.0"):
        alias_kernel(1, 1, (np.zeros(2, np.uint32),) * 2, 1.0)


def _launch_scalars(k, **changes):
    values = dict(x=1.0, h=1.0, b=1, s=1, d=1.0, out=np.zeros(2, np.uint32))
    values.update(changes)
    k(1, 1, tuple(values.values()))


@pytest.mark.parametrize("name,value,message", [
    ("x", 1e40, "argument `x` = 1e+40 is out of range for .f32 (finite values up to ±3.40282347e+38); "
                "pass a value in range, or float('inf') for infinity"),
    ("x", 10 ** 400, "argument `x` = " + str(10 ** 400) + " is out of range for .f32 (finite values up to "
                     "±3.40282347e+38); pass a value in range, or float('inf') for infinity"),
    ("h", 70000, "argument `h` = 70000 is out of range for .f16 (finite values up to ±65504); "
                 "pass a value in range, or float('inf') for infinity"),
    ("h", 1e10, "argument `h` = 10000000000.0 is out of range for .f16 (finite values up to ±65504); "
                "pass a value in range, or float('inf') for infinity"),
    ("b", 256, "argument `b` = 256 does not fit .u8 [0, 255]"),
    ("s", -32769, "argument `s` = -32769 does not fit .s16 [-32768, 32767]"),
    ("b", 1.5, "argument `b` is .u8 (an integer); got float 1.5"),
    ("x", "1", "argument `x` is .f32 (a float); got str '1'"),
])
def test_scalar_out_of_range(scalars, name, value, message):
    with pytest.raises(ptxvm.LaunchError) as e:
        _launch_scalars(scalars, **{name: value})
    assert e.value.message == message


@pytest.mark.parametrize("name,value", [
    ("x", 3.4028235e38),      # FLT_MAX itself
    ("x", (2.0 ** 128 - 2.0 ** 104) + 2.0 ** 102),   # FLT_MAX + a quarter ulp: rounds to FLT_MAX
    ("x", float("inf")), ("x", float("nan")), ("x", -3.4e38),
    ("h", 65504), ("h", 65519.99),   # below 65520, the midpoint to the next (overflowing) step
    ("h", float("-inf")), ("d", 1e308),
])
def test_scalar_in_range_is_accepted(scalars, name, value):
    _launch_scalars(scalars, **{name: value})


@pytest.mark.parametrize("name,value", [
    ("h", 65520),                          # halfway between 65504 and 2^16
    ("x", 2.0 ** 128 - 2.0 ** 103),        # halfway between FLT_MAX and 2^128
])
def test_midpoint_above_the_largest_float_overflows(scalars, name, value):
    # Round-to-nearest-even sends the midpoint to the even neighbour, 2^k: infinity (IEEE 754 §7.4).
    with pytest.raises(ptxvm.LaunchError, match=f"argument `{name}` = .* is out of range for"):
        _launch_scalars(scalars, **{name: value})


def test_module_given_a_file_name(tmp_path):
    with pytest.raises(ptxvm.PtxSyntaxError) as e:
        ptxvm.Module("saxpy.ptx")
    assert e.value.message == ("ptxvm.Module() takes PTX text, and 'saxpy.ptx' looks like a file name (it has "
                               "no PTX directives); use ptxvm.Module.from_file('saxpy.ptx')")
    f = tmp_path / "kernel_source"
    f.write_text(ALIAS)
    with pytest.raises(ptxvm.PtxSyntaxError, match="use ptxvm.Module.from_file"):
        ptxvm.Module(str(f))
    assert "two_stores" in ptxvm.Module.from_file(f).kernels


def test_numba_style_shared_mem_is_checked(alias_kernel):
    with pytest.raises(ptxvm.LaunchError, match=r"shared_mem must be a byte count \(int\), got float 2.5"):
        alias_kernel[1, 1, 0, 2.5](np.zeros(2, np.uint32), np.zeros(2, np.uint32))
    a = np.zeros(2, np.uint32)
    alias_kernel[1, 1, 0, 64](a, a)
    assert a.tolist() == [1, 2]


def test_kernels_are_found_by_their_cxx_name_and_faults_name_them_demangled() -> None:
    import numpy as np
    m = ptxvm.Module.from_file(Path(__file__).resolve().parents[1] / "fixtures" / "nvcc" / "sm80" / "elementwise.ptx")
    assert m["vector_add"] is not None and m["vector_add(float const*, float const*, float*, int)"] is not None
    with pytest.raises(ptxvm.LaunchError, match=r"no kernel named `nope` in .*vector_add\(float const\*, "
                                                r"float const\*, float\*, int\) \[_Z10vector_addPKfS0_Pfi\]"):
        m["nope"]
    a = np.zeros(4, np.float32)
    with pytest.raises(ptxvm.KernelFault) as e:      # n = 64 reads past the 4-element arrays
        m["vector_add"]((1,), (64,), (a, a, a, np.int32(64)))
    assert "in kernel `vector_add(float const*, float const*, float*, int)` (_Z10vector_addPKfS0_Pfi)" in str(e.value)
