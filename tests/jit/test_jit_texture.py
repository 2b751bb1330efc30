"""Texture instructions in the host JIT's own situations: a fetch inside a called `.func` (which
the JIT does not inline: its callback works where a stop could not), handles loaded from global
memory, many CTAs on parallel host threads; each against the interpreter bit for bit and the
independent model in tests/models/texture.py."""

from __future__ import annotations

import numpy as np
import pytest

import ptxvm
from tests.models import texture as model

pytest.importorskip("llvmlite")

# out[i] = luminance-free sum of the 4 channels of tex2D(texs[i % 2], x_i + 0.25, y_i), where the
# handle comes from a table in global memory and the fetch is in a called .func.
PTX = """.version 8.0
.target sm_80
.address_size 64

.func (.reg .f32 s) fetch_sum(.reg .b64 t, .reg .f32 x, .reg .f32 y)
{
    .reg .f32 %f<8>;
    tex.2d.v4.f32.f32 {%f1, %f2, %f3, %f4}, [t, {x, y}];
    add.f32 %f5, %f1, %f2;
    add.f32 %f6, %f3, %f4;
    add.f32 s, %f5, %f6;
    ret;
}

.visible .entry k(.param .u64 texs, .param .u64 xs, .param .u64 ys, .param .u64 out, .param .u32 n)
{
    .reg .b32 %r<8>;
    .reg .f32 %f<8>;
    .reg .b64 %rd<16>;
    .reg .pred %p<2>;
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, %ctaid.x;
    mov.u32 %r3, %ntid.x;
    mad.lo.s32 %r4, %r2, %r3, %r1;
    ld.param.u32 %r5, [n];
    setp.ge.s32 %p1, %r4, %r5;
    @%p1 bra DONE;
    and.b32 %r6, %r4, 1;
    mul.wide.u32 %rd1, %r6, 8;
    ld.param.u64 %rd2, [texs];
    add.s64 %rd2, %rd2, %rd1;
    ld.global.u64 %rd3, [%rd2];
    mul.wide.s32 %rd4, %r4, 4;
    ld.param.u64 %rd5, [xs];
    add.s64 %rd5, %rd5, %rd4;
    ld.global.f32 %f1, [%rd5];
    add.f32 %f1, %f1, 0f3E800000;
    ld.param.u64 %rd6, [ys];
    add.s64 %rd6, %rd6, %rd4;
    ld.global.f32 %f2, [%rd6];
    call.uni (%f3), fetch_sum, (%rd3, %f1, %f2);
    ld.param.u64 %rd7, [out];
    add.s64 %rd7, %rd7, %rd4;
    st.global.f32 [%rd7], %f3;
DONE:
    ret;
}
"""


def _run(executor: str, texs, xs, ys):
    n = xs.size
    out = np.zeros(n, np.float32)
    table = np.array([t.handle for t in texs], np.uint64)
    ptxvm.Module(PTX, "jit_texture.ptx")["k"]((n + 63) // 64, 64, [table, xs, ys, out, n], device=executor)
    return out


def test_fetch_in_a_called_function_from_a_handle_table_many_ctas():
    rng = np.random.default_rng(5)
    data = [rng.standard_normal((6, 9, 4)).astype(np.float32) for _ in range(2)]
    texs = [ptxvm.TextureObject(ptxvm.CudaArray.from_numpy(data[0], channels=4), filter_mode="linear",
                                address_mode="border", border_color=(1, 2, 3, 4)),
            ptxvm.TextureObject(ptxvm.CudaArray.from_numpy(data[1], channels=4), filter_mode="linear",
                                address_mode="wrap", normalized_coords=True)]
    n = 64 * 40
    xs = rng.uniform(-3, 12, n).astype(np.float32)
    ys = rng.uniform(-3, 9, n).astype(np.float32)
    ys[1::2] /= np.float32(6)
    xs[1::2] /= np.float32(9)
    got = _run("cpu", texs, xs, ys)
    np.testing.assert_array_equal(got.view(np.uint32), _run("interp", texs, xs, ys).view(np.uint32))
    want = []
    for i in range(n):
        t = data[i % 2].reshape(1, 6, 9, 4)
        kw = dict(modes=("border",) * 3, filter_mode="linear", border=(1, 2, 3, 4)) if i % 2 == 0 else \
            dict(modes=("wrap",) * 3, filter_mode="linear", normalized=True)
        v = model.fetch(t, [np.float32(xs[i] + np.float32(0.25)), ys[i]], **kw)
        want.append(np.float32(np.float32(v[0] + v[1]) + np.float32(v[2] + v[3])))
    np.testing.assert_array_equal(got, np.array(want, np.float32))


def test_bad_handle_in_the_table_is_a_fault_of_the_thread_in_the_function():
    arr = ptxvm.CudaArray((4, 4), np.float32, channels=4)
    good = ptxvm.TextureObject(arr)
    xs = np.zeros(4, np.float32)
    for executor in ("interp", "cpu"):
        bogus = type("H", (), {"handle": 0xDEAD})()
        with pytest.raises(ptxvm.KernelFault, match=r"(?s)texture handle 0xdead is not a texture object.*"
                                                     r"thread \(1, 0, 0\).*tex\.2d\.v4\.f32\.f32"):
            _run(executor, [good, bogus], xs, xs)


# A fetch in a loop with a per-thread trip count (threads of one warp stop at the texture
# instruction in different iterations, and at a surface store after it), then a barrier.
LOOP = """.version 8.0
.target sm_80
.address_size 64
.visible .entry loop(.param .u64 t, .param .u64 s, .param .u64 out)
{
    .reg .b32 %r<12>;
    .reg .f32 %f<12>;
    .reg .b64 %rd<8>;
    .reg .pred %p<2>;
    ld.param.u64 %rd1, [t];
    ld.param.u64 %rd2, [s];
    mov.u32 %r1, %tid.x;
    and.b32 %r2, %r1, 7;
    mov.f32 %f1, 0f00000000;
    mov.u32 %r3, 0;
LOOP:
    setp.ge.u32 %p1, %r3, %r2;
    @%p1 bra DONE;
    add.u32 %r4, %r1, %r3;
    cvt.rn.f32.u32 %f2, %r4;
    mul.f32 %f2, %f2, 0f3E800000;
    tex.1d.v4.f32.f32 {%f3, %f4, %f5, %f6}, [%rd1, {%f2}];
    add.f32 %f1, %f1, %f3;
    shl.b32 %r5, %r1, 2;
    sust.b.1d.b32.trap [%rd2, {%r5}], %r3;
    add.u32 %r3, %r3, 1;
    bra LOOP;
DONE:
    bar.sync 0;
    ld.param.u64 %rd3, [out];
    mul.wide.u32 %rd4, %r1, 4;
    add.s64 %rd3, %rd3, %rd4;
    st.global.f32 [%rd3], %f1;
    ret;
}
"""


def test_fetch_in_a_divergent_loop_with_a_surface_store():
    rng = np.random.default_rng(9)
    data = rng.standard_normal(40).astype(np.float32)
    got = {}
    for executor in ("interp", "cpu"):
        tex = ptxvm.TextureObject(ptxvm.CudaArray.from_numpy(data), filter_mode="linear")
        arr = ptxvm.CudaArray((64,), np.uint32)
        out = np.zeros(64, np.float32)
        ptxvm.Module(LOOP, "loop.ptx")["loop"](1, 64, [tex, ptxvm.SurfaceObject(arr), out], device=executor)
        got[executor] = (out, arr.to_numpy())
    np.testing.assert_array_equal(got["cpu"][0].view(np.uint32), got["interp"][0].view(np.uint32))
    np.testing.assert_array_equal(got["cpu"][1], got["interp"][1])
    t = data.reshape(1, 1, -1, 1)
    for i in range(64):
        acc = np.float32(0)
        for k in range(i & 7):
            x = np.float32(np.float32(i + k) * np.float32(0.25))
            acc = np.float32(acc + np.float32(model.fetch(t, [x], modes=("clamp",) * 3, filter_mode="linear")[0]))
        assert got["cpu"][0][i] == acc, i
        assert got["cpu"][1][i] == max((i & 7) - 1, 0), i
