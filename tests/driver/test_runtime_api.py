"""The runtime API a CUDA user reaches for (issue 18 item 5): N-D device arrays and their views,
copies, memset, DLPack, ``__cuda_array_interface__``, ``Module.get_global``, streams and
events, kernel attributes, and launches mixing device and host arrays, on both CPU executors.
Expected values are numpy's own operations on the same data."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

import ptxvm
from ptxvm import LaunchError

# One thread per element: out[i] = in[i] * 2 + counter (a .global), counter += 1 by thread 0;
# scale[i] = coef[i % 4] * table[i % 4][1] (a .const and a 2-D .global).
PTX = textwrap.dedent("""\
    .version 8.0
    .target sm_80
    .address_size 64
    .global .u32 counter;
    .global .f32 table[4][2];
    .const .f32 coef[4] = {1.0, 2.0, 3.0, 4.0};

    .visible .entry twice(.param .u64 pin, .param .u64 pout, .param .u32 n)
    {
        .reg .pred %p<3>;
        .reg .b32 %r<8>;
        .reg .f32 %f<4>;
        .reg .b64 %rd<8>;
        mov.u32 %r1, %tid.x;
        ld.param.u32 %r2, [n];
        setp.ge.u32 %p1, %r1, %r2;
        @%p1 bra DONE;
        ld.global.u32 %r3, [counter];
        cvt.rn.f32.u32 %f3, %r3;
        ld.param.u64 %rd1, [pin];
        ld.param.u64 %rd2, [pout];
        mul.wide.u32 %rd3, %r1, 4;
        add.s64 %rd4, %rd1, %rd3;
        add.s64 %rd5, %rd2, %rd3;
        ld.global.f32 %f1, [%rd4];
        add.f32 %f1, %f1, %f1;
        add.f32 %f1, %f1, %f3;
        st.global.f32 [%rd5], %f1;
    DONE:
        bar.sync 0;
        setp.ne.u32 %p2, %r1, 0;
        @%p2 bra END;
        add.u32 %r3, %r3, 1;
        st.global.u32 [counter], %r3;
    END:
        ret;
    }

    .visible .entry scale(.param .u64 pout)
    .maxntid 128, 1, 1
    {
        .reg .b32 %r<4>;
        .reg .f32 %f<4>;
        .reg .b64 %rd<8>;
        .local .align 4 .b8 frame[16];
        .shared .align 4 .f32 tile[32];
        mov.u32 %r1, %tid.x;
        and.b32 %r2, %r1, 3;
        mul.wide.u32 %rd1, %r2, 4;
        mov.u64 %rd2, coef;
        add.s64 %rd2, %rd2, %rd1;
        ld.const.f32 %f1, [%rd2];
        mul.wide.u32 %rd3, %r2, 8;
        mov.u64 %rd4, table;
        add.s64 %rd4, %rd4, %rd3;
        ld.global.f32 %f2, [%rd4+4];
        mul.f32 %f1, %f1, %f2;
        ld.param.u64 %rd5, [pout];
        mul.wide.u32 %rd6, %r1, 4;
        add.s64 %rd5, %rd5, %rd6;
        st.global.f32 [%rd5], %f1;
        ret;
    }
    """)


@pytest.fixture
def mod():
    return ptxvm.Module(PTX, "runtime_api.ptx")


# ------------------------------------------------------------------ device arrays

def test_empty_zeros_shapes_and_strides():
    z = ptxvm.zeros((3, 4), np.int16)
    assert (z.shape, z.dtype, z.strides, z.ndim, z.size, z.nbytes) == ((3, 4), np.int16, (8, 2), 2, 12, 24)
    assert np.array_equal(z.copy_to_host(), np.zeros((3, 4), np.int16))
    assert ptxvm.empty(5, np.float32).shape == (5,)
    with pytest.raises(LaunchError, match="negative dimension"):
        ptxvm.empty((2, -1))


def test_views_share_memory_like_numpy_views():
    host = np.arange(60, dtype=np.int32).reshape(3, 4, 5)
    d = ptxvm.to_device(host)
    for key in [(1,), (slice(None), 2), (slice(None, None, -1), slice(1, 4, 2)), (Ellipsis, 3),
                (None, 0, slice(1, None)), (2, 3)]:
        v = d[key]
        assert np.array_equal(v.copy_to_host(), host[key]), key
        assert v.strides == host[key].strides, key
    view = d[:, 1, ::2]
    view[...] = -7                              # a write through a strided view
    expect = host.copy()
    expect[:, 1, ::2] = -7
    assert np.array_equal(d.copy_to_host(), expect)
    assert d[1, 2, 3] == expect[1, 2, 3] and isinstance(d[1, 2, 3], np.int32)


def test_reshape_transpose_ravel():
    host = np.arange(12, dtype=np.float64)
    d = ptxvm.to_device(host)
    r = d.reshape(3, 4)
    assert np.array_equal(r.copy_to_host(), host.reshape(3, 4)) and r.ptr == d.ptr
    assert np.array_equal(r.T.copy_to_host(), host.reshape(3, 4).T) and not r.T.is_c_contiguous
    assert np.array_equal(r[:, 1:3].copy_to_host(), host.reshape(3, 4)[:, 1:3])
    with pytest.raises(TypeError, match="would copy"):
        r.T.ravel()                             # numpy copies a transposed ravel
    with pytest.raises(TypeError, match="would copy"):
        d[np.array([0, 2])]                     # fancy indexing copies


def test_copies_memset_fill():
    a = ptxvm.to_device(np.arange(8, dtype=np.uint32))
    b = ptxvm.zeros(8, np.uint32)
    b.copy_to_device(a)
    out = np.empty(8, np.uint32)
    assert b.copy_to_host(out=out) is out and np.array_equal(out, np.arange(8))
    with pytest.raises(LaunchError, match="out must be a uint32\\[8\\]"):
        b.copy_to_host(out=np.empty(8, np.int64))
    ptxvm.memset(b, 0xAB)
    assert np.array_equal(b.copy_to_host(), np.full(8, 0xABABABAB, np.uint32))
    b[2:4].fill(5)
    assert list(b.copy_to_host()[:5]) == [0xABABABAB, 0xABABABAB, 5, 5, 0xABABABAB]
    a[1:].copy_to_device(a[:-1])                # overlapping: as if through a temporary
    assert list(a.copy_to_host()) == [0, 0, 1, 2, 3, 4, 5, 6]
    with pytest.raises(LaunchError, match="one byte"):
        b.memset(256)
    with pytest.raises(LaunchError, match="strided view"):
        ptxvm.to_device(np.zeros((4, 4), np.uint8))[:, 1].memset(1)


def test_array_protocols():
    host = np.arange(6, dtype=np.float32).reshape(2, 3)
    d = ptxvm.to_device(host)
    assert np.array_equal(np.asarray(d), host)
    cai = d.T.__cuda_array_interface__
    assert cai == {"shape": (3, 2), "typestr": "<f4", "data": (d.ptr, False), "strides": (4, 12), "version": 3}
    assert d.__cuda_array_interface__["strides"] is None
    shared = np.from_dlpack(d)                  # zero copy: writes through it are device writes
    shared[1, 1] = 99
    assert d.copy_to_host()[1, 1] == 99
    assert d.__dlpack_device__() == (1, 0)


def test_from_dlpack_shares_the_exporters_memory(mod):
    src = np.zeros(32, np.float32)
    d = ptxvm.from_dlpack(src)
    mod.get_global("table")[:, 1] = 1
    mod["scale"](1, 32, (d,))
    assert np.array_equal(src, np.tile(np.float32([1, 2, 3, 4]), 8))    # the kernel wrote src itself
    with pytest.raises(LaunchError, match="does not export"):
        ptxvm.from_dlpack([1, 2, 3])


def test_freed_array_is_a_clear_error():
    d = ptxvm.zeros(4, np.int32)
    v = d[1:]
    d.free()
    with pytest.raises(LaunchError, match="was freed"):
        v.copy_to_host()


# ------------------------------------------------------------------ launches

def test_mixed_device_and_host_arguments(mod, executor):
    host_in = np.arange(64, dtype=np.float32)
    d_out = ptxvm.zeros(64, np.float32)
    mod["twice"](1, 64, (host_in, d_out, np.uint32(64)), device=executor)
    assert np.array_equal(d_out.copy_to_host(), host_in * 2)
    d_in = ptxvm.to_device(host_in)
    out = np.zeros(64, np.float32)
    mod["twice"](1, 64, (d_in, out, np.uint32(64)), device=executor)
    assert np.array_equal(out, host_in * 2 + 1)      # counter was 1 after the first launch


def test_strided_view_argument_is_a_pointer_to_its_first_element(mod, executor):
    d = ptxvm.to_device(np.arange(40, dtype=np.float32).reshape(4, 10))
    out = ptxvm.zeros(10, np.float32)
    mod["twice"](1, 10, (d[2], out, np.uint32(10)), device=executor)
    assert np.array_equal(out.copy_to_host(), np.arange(20, 30, dtype=np.float32) * 2)


def test_get_global_reads_and_writes_persist(mod, executor):
    counter = mod.get_global("counter")
    assert (counter.shape, counter.dtype) == ((), np.uint32)
    counter[()] = 40
    table = mod.get_global("table")
    assert (table.shape, table.dtype) == ((4, 2), np.float32)
    table[:, 1] = [0.5, 1.5, 2.5, 3.5]
    out = np.zeros(8, np.float32)
    mod["twice"](1, 8, (np.ones(8, np.float32), out, np.uint32(8)), device=executor)
    assert np.array_equal(out, np.full(8, 42, np.float32))
    assert counter.copy_to_host() == 41                # the kernel's write shows in the array
    mod["scale"](1, 8, (out,), device=executor)
    coef = np.array([1, 2, 3, 4], np.float32)
    assert np.array_equal(out, np.tile(coef * np.array([0.5, 1.5, 2.5, 3.5], np.float32), 2))
    assert np.array_equal(mod.get_global("coef").copy_to_host(), coef)
    assert mod.get_global("coef", dtype=np.uint32).copy_to_host()[0] == np.float32(1).view(np.uint32)
    with pytest.raises(LaunchError, match="no .global or .const variable `nope`.*counter, table, coef"):
        mod.get_global("nope")


def test_streams_order_and_events_time(mod, executor):
    s = ptxvm.Stream()
    start, end = ptxvm.Event(), ptxvm.Event()
    out = np.zeros(16, np.float32)
    k = mod["twice"]
    start.record(s)
    k[1, 16, s, 0](np.ones(16, np.float32), out, np.uint32(16), device=executor)
    k(1, 16, (out, out, np.uint32(16)), device=executor, stream=s)
    end.record(s)
    s.synchronize()
    assert s.launches == 2 and s.last_stats is k.stats and s.query()
    assert np.array_equal(out, np.full(16, 5, np.float32))     # (1*2+0)*2+1, in launch order
    assert start.elapsed_time(end) > 0 and ptxvm.get_elapsed_time(start, end) == start.elapsed_time(end)


def test_bad_stream_and_event_use():
    k = ptxvm.Module(PTX, "runtime_api.ptx")["scale"]
    with pytest.raises(LaunchError, match="stream must be a ptxvm.Stream, 0 or None.*got str 'fast'"):
        k[1, 1, "fast", 0](np.zeros(4, np.float32))
    with pytest.raises(LaunchError, match="never recorded"):
        ptxvm.Event().elapsed_time(ptxvm.Event())
    e = ptxvm.Event(disable_timing=True)
    e.record()
    with pytest.raises(LaunchError, match="timing disabled"):
        e.elapsed_time(e)


def test_kernel_attributes(mod):
    a = mod["scale"].attributes
    assert (a.shared_size_bytes, a.local_size_bytes, a.const_size_bytes) == (128, 16, 16)
    assert a.max_threads_per_block == 128 and a.ptx_version == 80 and a.param_size_bytes == 8
    assert a.num_regs == 4 + 4 + 8
    b = mod["twice"].attributes
    assert (b.shared_size_bytes, b.max_threads_per_block, b.param_size_bytes) == (0, 1024, 20)
    assert set(b.as_dict()) >= {"num_regs", "max_threads_per_block", "shared_size_bytes", "local_size_bytes"}
