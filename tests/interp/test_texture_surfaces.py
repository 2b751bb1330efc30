"""suld/sust/sured/suq out-of-range modes, tld4's order, txq, and layered errors, on hand PTX
against numpy (PTX ISA 9.0 §9.7.10-11)."""

from __future__ import annotations

import numpy as np
import pytest

import ptxvm
from tests.models import texture as model

EXECUTORS = ["interp", "cpu"]

_HEAD = """.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 obj, .param .u64 cx, .param .u64 cy, .param .u64 out, .param .u32 n)
{{
    .reg .b32 %r<24>;
    .reg .b64 %rd<24>;
    .reg .pred %p<2>;
    mov.u32 %r1, %tid.x;
    ld.param.u32 %r5, [n];
    setp.ge.s32 %p1, %r1, %r5;
    @%p1 bra DONE;
    ld.param.u64 %rd1, [obj];
    mul.wide.s32 %rd2, %r1, 4;
    ld.param.u64 %rd3, [cx];
    cvta.to.global.u64 %rd3, %rd3;
    add.s64 %rd3, %rd3, %rd2;
    ld.global.b32 %r6, [%rd3];
    ld.param.u64 %rd4, [cy];
    cvta.to.global.u64 %rd4, %rd4;
    add.s64 %rd4, %rd4, %rd2;
    ld.global.b32 %r7, [%rd4];
    mul.wide.s32 %rd9, %r1, 16;
    ld.param.u64 %rd10, [out];
    cvta.to.global.u64 %rd10, %rd10;
    add.s64 %rd10, %rd10, %rd9;
    {body}
DONE:
    ret;
}}
"""


def launch(executor, body, obj, xs, ys, out_dtype=np.uint32):
    n = len(xs)
    out = np.zeros((n, 4), out_dtype)
    k = ptxvm.Module(_HEAD.format(body=body), "surf.ptx")["k"]
    k((1,), (max(n, 1),), [obj, np.ascontiguousarray(xs, np.int32), np.ascontiguousarray(ys, np.int32), out, n],
      device=executor)
    return out


def _surface(h=3, w=4):
    a = (np.arange(h * w, dtype=np.uint32) * 0x01010101 + 0x100).reshape(h, w)
    return a, ptxvm.CudaArray.from_numpy(a)


@pytest.mark.parametrize("executor", EXECUTORS)
def test_suld_clamp_and_zero(executor):
    a, arr = _surface()
    xs = [0, 4, 12, 16, -4, 100, 8, 13]
    ys = [0, 1, 2, 0, 1, 2, -1, 5]
    body = """suld.b.2d.b32.clamp {%r10}, [%rd1, {%r6, %r7}];
    suld.b.2d.b32.zero {%r11}, [%rd1, {%r6, %r7}];
    st.global.v2.b32 [%rd10], {%r10, %r11};"""
    got = launch(executor, body, ptxvm.SurfaceObject(arr), xs, ys)
    raw = a.view(np.uint8).reshape(3, 16)
    for i, (x, y) in enumerate(zip(xs, ys)):
        inside = 0 <= x and x + 4 <= 16 and 0 <= y < 3
        cx, cy = min(max(x, 0), 12), min(max(y, 0), 2)
        assert got[i, 0] == raw[cy, cx:cx + 4].view(np.uint32)[0], (x, y)
        assert got[i, 1] == (raw[y, x:x + 4].view(np.uint32)[0] if inside else 0), (x, y)


@pytest.mark.parametrize("executor", EXECUTORS)
def test_sust_zero_drops_and_v2_b16(executor):
    a, arr = _surface()
    before = a.copy()
    xs = [0, 14, 16, -2, 6]
    ys = [0, 1, 1, 2, 2]
    body = """mov.b32 %r12, 0xBEEF;
    cvt.u16.u32 %rs1, %r1;
    cvt.u16.u32 %rs2, %r12;
    sust.b.2d.v2.b16.zero [%rd1, {%r6, %r7}], {%rs1, %rs2};"""
    launch(executor, ".reg .b16 %rs<4>;\n    " + body, ptxvm.SurfaceObject(arr), xs, ys)
    raw = before.view(np.uint8).reshape(3, 16).copy()
    for i, (x, y) in enumerate(zip(xs, ys)):
        if 0 <= x and x + 4 <= 16:
            raw[y, x:x + 4] = np.array([i, 0xBEEF], np.uint16).view(np.uint8)
    np.testing.assert_array_equal(arr.to_numpy().view(np.uint8).reshape(3, 16), raw)


@pytest.mark.parametrize("executor", EXECUTORS)
def test_sured_add_and_max(executor):
    a, arr = _surface()
    before = a.astype(np.int64)
    xs = [0, 0, 4, 4, 4, 12, 20]
    ys = [0, 0, 1, 1, 1, 2, 0]
    # The barrier orders every add before every max on every executor (the host JIT runs a
    # thread on to its next stop, so without it one thread's max could precede another's add).
    body = """sured.b.add.2d.u32.zero [%rd1, {%r6, %r7}], %r1;
    bar.sync 0;
    sured.b.max.2d.u32.clamp [%rd1, {%r6, %r7}], 0x7fffffff;"""
    launch(executor, body, ptxvm.SurfaceObject(arr), xs, ys)
    want = before.copy()
    for i, (x, y) in enumerate(zip(xs, ys)):
        if x + 4 <= 16:
            want[y, x // 4] += i
    for x, y in zip(xs, ys):
        cx = min(x, 12) // 4
        want[y, cx] = max(want[y, cx] & 0xFFFFFFFF, 0x7FFFFFFF)
    np.testing.assert_array_equal(arr.to_numpy().astype(np.int64), want & 0xFFFFFFFF)


@pytest.mark.parametrize("executor", EXECUTORS)
def test_suq_and_txq(executor):
    arr = ptxvm.CudaArray((5, 3, 7), np.float32, layered=True)
    body = """{op}.width.b32 %r10, [%rd1];
    {op}.height.b32 %r11, [%rd1];
    {op}.depth.b32 %r12, [%rd1];
    {op}.array_size.b32 %r13, [%rd1];
    st.global.v4.b32 [%rd10], {{%r10, %r11, %r12, %r13}};"""
    got = launch(executor, body.format(op="suq"), ptxvm.SurfaceObject(arr), [0], [0])
    assert got[0].tolist() == [7, 3, 0, 5]
    got = launch(executor, body.format(op="txq"), ptxvm.TextureObject(arr), [0], [0])
    assert got[0].tolist() == [7, 3, 0, 5]


@pytest.mark.parametrize("executor", EXECUTORS)
@pytest.mark.parametrize("comp", "rgba")
@pytest.mark.parametrize("mode", ["clamp", "border", "wrap", "mirror"])
def test_tld4_order(executor, comp, mode):
    rng = np.random.default_rng(11)
    data = rng.uniform(-1, 1, (4, 5, 2)).astype(np.float32)        # two channels: .b/.a read 0
    norm = mode in ("wrap", "mirror")
    tex = ptxvm.TextureObject(ptxvm.CudaArray.from_numpy(data, channels=2), address_mode=mode,
                              normalized_coords=norm, border_color=(0.5, -0.5, 0, 0))
    scale = (1 / 5, 1 / 4) if norm else (1, 1)
    xs = np.array([0.5, 1.0, 1.3, 4.9, -0.2, 5.5, 2.75, 0.0], np.float32) * np.float32(scale[0])
    ys = np.array([0.5, 2.0, 3.9, 0.1, -1.0, 4.5, 1.25, 0.0], np.float32) * np.float32(scale[1])
    body = f"""tld4.{comp}.2d.v4.f32.f32 {{%r10, %r11, %r12, %r13}}, [%rd1, {{%r6, %r7}}];
    st.global.v4.b32 [%rd10], {{%r10, %r11, %r12, %r13}};"""
    got = launch(executor, body, tex, xs.view(np.int32), ys.view(np.int32), np.float32)
    want = [model.gather4(data.reshape(1, 4, 5, 2), [x, y], "rgba".index(comp), modes=(mode,) * 3,
                          normalized=norm, border=(0.5, -0.5, 0, 0)) for x, y in zip(xs, ys)]
    np.testing.assert_array_equal(got, np.array(want, np.float32))


def test_gather4_model_order_by_hand():
    # 2x2 texture T[j][i] = 10*j + i; at the centre (1, 1) the footprint is i = 0..1, j = 0..1:
    # counter-clockwise from lower left: T[0, 1], T[1, 1], T[1, 0], T[0, 0] as (i, j).
    t = np.array([[0, 1], [10, 11]], np.float32).reshape(1, 2, 2, 1)
    assert model.gather4(t, [1.0, 1.0], 0, modes=("clamp",) * 3) == [10, 11, 1, 0]


@pytest.mark.parametrize("executor", EXECUTORS)
def test_layer_beyond_the_array_is_an_error(executor):
    arr = ptxvm.CudaArray((2, 4, 4), np.float32, layered=True)
    body = """tex.a2d.v4.f32.f32 {%r10, %r11, %r12, %r13}, [%rd1, {%r7, %r6, %r6, %r6}];
    st.global.v4.b32 [%rd10], {%r10, %r11, %r12, %r13};"""
    with pytest.raises(ptxvm.KernelFault, match=r"reads layer 2 of CudaArray\(layered float32x1\[2, 4, 4\]\), "
                                                 r"which has 2 layer\(s\)") as e:
        launch(executor, body, ptxvm.TextureObject(arr), [0, 0, 0], [0, 1, 2])
    assert "thread (2, 0, 0)" in str(e.value)


@pytest.mark.parametrize("executor", EXECUTORS)
def test_surface_handle_must_be_a_surface(executor):
    arr = ptxvm.CudaArray((4, 4), np.uint32)
    body = """suld.b.2d.b32.trap {%r10}, [%rd1, {%r6, %r7}];"""
    with pytest.raises(ptxvm.KernelFault, match=r"surface handle 0x[0-9a-f]+ in argument 0 \(`obj`\) is not a "
                                                 "surface object"):
        launch(executor, body, ptxvm.TextureObject(arr), [0], [0])


def test_api_errors():
    with pytest.raises(ptxvm.LaunchError, match="not a CUDA array format"):
        ptxvm.CudaArray((4,), np.float64)
    with pytest.raises(ptxvm.LaunchError, match="1, 2 or 4"):
        ptxvm.CudaArray((4,), np.float32, channels=3)
    with pytest.raises(ptxvm.LaunchError, match="filter_mode=linear needs"):
        ptxvm.TextureObject(ptxvm.CudaArray((4,), np.int32), filter_mode="linear")
    with pytest.raises(ptxvm.LaunchError, match="normalized_float needs 8- or 16-bit"):
        ptxvm.TextureObject(ptxvm.CudaArray((4,), np.float32), read_mode="normalized_float")
    with pytest.raises(ptxvm.LaunchError, match="address_mode 'repeat'"):
        ptxvm.TextureObject(ptxvm.CudaArray((4,), np.float32), address_mode="repeat")
    with pytest.raises(ptxvm.LaunchError, match="a cubemap is"):
        ptxvm.CudaArray((6, 4, 5), np.float32, cubemap=True)
    arr = ptxvm.CudaArray.from_numpy(np.arange(8, dtype=np.uint8).reshape(2, 4))
    np.testing.assert_array_equal(arr.to_numpy(), np.arange(8).reshape(2, 4))
