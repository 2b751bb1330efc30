"""txq/suq attribute queries, sust.p formatted stores and tld4 on cubemaps (PTX ISA 9.0
§9.7.10.4 tld4, §9.7.10.7 txq, §9.7.11.3 sust, §9.7.11.4 suq) on interp and cpu. Expected
values are written here by hand: OpenCL's cl.h codes for the format attributes, CUDA's enums
for the sampler ones (docs/textures.md says why), numpy conversions for sust.p."""

from __future__ import annotations

import numpy as np
import pytest

import ptxvm
from tests.interp.test_texture_surfaces import launch
from tests.models import texture as model

EXECUTORS = ["interp", "cpu"]

_TXQ = ["width", "height", "depth", "channel_data_type", "channel_order", "normalized_coords",
        "array_size", "num_mipmap_levels", "num_samples", "force_unnormalized_coords", "filter_mode",
        "addr_mode_0", "addr_mode_1", "addr_mode_2"]


def _queries(executor, op, names, obj):
    got = []
    for q in names:
        body = f"""{op}.{q}.b32 %r10, [%rd1];
    st.global.b32 [%rd10], %r10;"""
        got.append(int(launch(executor, body, obj, [0], [0])[0, 0]))
    return dict(zip(names, got))


@pytest.mark.parametrize("executor", EXECUTORS)
def test_txq_every_attribute(executor):
    mip = ptxvm.MipmappedArray((2, 16, 8), np.uint8, 4, levels=3, layered=True)
    tex = ptxvm.TextureObject(mip, normalized_coords=True, filter_mode="linear", read_mode="normalized_float",
                              address_mode=("wrap", "mirror", "border"))
    got = _queries(executor, "txq", _TXQ, tex)
    assert got == dict(width=8, height=16, depth=0, channel_data_type=0x10D2, channel_order=0x10B5,
                       normalized_coords=1, array_size=2, num_mipmap_levels=3, num_samples=1,
                       force_unnormalized_coords=0, filter_mode=1, addr_mode_0=0, addr_mode_1=2, addr_mode_2=3)
    plain = ptxvm.TextureObject(ptxvm.CudaArray((4, 5, 6), np.int16, 2))
    got = _queries(executor, "txq", ["channel_data_type", "channel_order", "normalized_coords",
                                     "num_mipmap_levels", "filter_mode", "addr_mode_0", "depth"], plain)
    assert got == dict(channel_data_type=0x10D8, channel_order=0x10B2, normalized_coords=0,
                       num_mipmap_levels=1, filter_mode=0, addr_mode_0=1, depth=4)


@pytest.mark.parametrize("executor", EXECUTORS)
def test_suq_formats_and_layout(executor):
    surf = ptxvm.SurfaceObject(ptxvm.CudaArray((3, 5), np.float16, 1))
    got = _queries(executor, "suq", ["width", "height", "channel_data_type", "channel_order", "memory_layout"], surf)
    assert got == dict(width=5, height=3, channel_data_type=0x10DD, channel_order=0x10B0, memory_layout=0)


@pytest.mark.parametrize("executor", EXECUTORS)
def test_txq_level_extents_and_a_level_beyond(executor):
    mip = ptxvm.MipmappedArray((12, 40), np.float32, levels=5)
    tex = ptxvm.TextureObject(mip, normalized_coords=True)
    body = """txq.level.width.b32 %r10, [%rd1], %r6;
    txq.level.height.b32 %r11, [%rd1], %r6;
    st.global.v2.b32 [%rd10], {%r10, %r11};"""
    got = launch(executor, body, tex, [0, 1, 2, 3, 4], [0] * 5)
    assert got[:, :2].tolist() == [[40, 12], [20, 6], [10, 3], [5, 1], [2, 1]]
    with pytest.raises(ptxvm.KernelFault, match=r"queries level 5 of MipmappedArray\(.*\), which has 5 level") as e:
        launch(executor, body, tex, [0, 5], [0, 0])
    assert "thread (1, 0, 0)" in str(e.value)


@pytest.mark.parametrize("executor", EXECUTORS)
def test_txq_on_a_surface_handle_is_an_error(executor):
    surf = ptxvm.SurfaceObject(ptxvm.CudaArray((4,), np.float32))
    body = """txq.channel_order.b32 %r10, [%rd1];"""
    with pytest.raises(ptxvm.KernelFault, match=r"texture handle 0x[0-9a-f]+ in argument 0 \(`obj`\) is not a "
                                                 "texture object"):
        launch(executor, body, surf, [0], [0])


def test_unknown_query_is_refused_with_its_location():
    body = """txq.level.channel_order.b32 %r10, [%rd1], %r6;"""
    with pytest.raises(ptxvm.PtxError, match=r"surf.ptx:\d+:\d+.*queries an attribute ptxvm does not know"):
        launch("interp", body, 0, [0], [0])


# sust.p: x counts elements; the sources are .f32 for a float array, .s32/.u32 for integers.
_SUSTP = """sust.p.2d{vec}.b32.{mode} [%rd1, {{%r6, %r7}}], {{{vals}}};"""


def _sust_p(executor, arr, xs, ys, vals, vec="v4", mode="trap"):
    regs = {"v4": "%r20, %r21, %r22, %r23", "v2": "%r20, %r21", "": "%r20"}[vec]
    body = ("mov.b32 %r20, {};\n    mov.b32 %r21, {};\n    mov.b32 %r22, {};\n    mov.b32 %r23, {};\n    "
            .format(*[f"0x{int(v) & 0xFFFFFFFF:08x}" for v in vals]))
    body += _SUSTP.format(vec="." + vec if vec else "", mode=mode, vals=regs)
    launch(executor, body, ptxvm.SurfaceObject(arr), xs, ys)


@pytest.mark.parametrize("executor", EXECUTORS)
def test_sust_p_float_formats(executor):
    f = np.array([1.5, -2.25, 65519.0, 1e-8], np.float32)
    bits = f.view(np.uint32)
    a32 = ptxvm.CudaArray((2, 3), np.float32, 4)
    _sust_p(executor, a32, [2], [1], bits)
    want = np.zeros((2, 3, 4), np.float32)
    want[1, 2] = f
    np.testing.assert_array_equal(a32.to_numpy(), want)
    a16 = ptxvm.CudaArray((2, 3), np.float16, 2)                 # .x .y written, .z .w ignored
    _sust_p(executor, a16, [0], [0], bits)
    np.testing.assert_array_equal(a16.to_numpy()[0, 0], f[:2].astype(np.float16))
    a1 = ptxvm.CudaArray((3,), np.float32, 4)
    a1.copy_from_host(np.full((3, 4), 7.0, np.float32))
    _sust_p(executor, a1, [1], [0], bits, vec="v2", mode="zero")  # a missing source writes 0
    want = np.full((3, 4), 7.0, np.float32)
    want[1] = [1.5, -2.25, 0, 0]
    np.testing.assert_array_equal(a1.to_numpy(), want)


@pytest.mark.parametrize("executor", EXECUTORS)
@pytest.mark.parametrize("dtype", [np.uint8, np.int8, np.uint16, np.int16, np.int32, np.uint32])
def test_sust_p_integer_formats_saturate(executor, dtype):
    vals = [300, -5, 70000, -(2 ** 31)]
    arr = ptxvm.CudaArray((1, 2), dtype, 4)
    _sust_p(executor, arr, [1], [0], vals)
    info = np.iinfo(dtype)
    src = np.array(vals, np.int64) if info.min < 0 else np.array(vals, np.int64) & 0xFFFFFFFF
    np.testing.assert_array_equal(arr.to_numpy()[0, 1], np.clip(src, info.min, info.max).astype(dtype))


@pytest.mark.parametrize("executor", EXECUTORS)
def test_sust_p_out_of_range_counts_elements(executor):
    arr = ptxvm.CudaArray((2, 4), np.uint16, 2)                  # 4-byte elements, 16 bytes a row
    _sust_p(executor, arr, [9], [1], [1, 2, 3, 4], vec="v2", mode="clamp")
    assert arr.to_numpy()[1, 3].tolist() == [1, 2]
    with pytest.raises(ptxvm.KernelFault, match=r"accesses bytes 16..19 of row 0.*out of range \(.trap\)"):
        _sust_p(executor, arr, [4], [0], [1, 2, 3, 4], vec="v2")


@pytest.mark.parametrize("executor", EXECUTORS)
@pytest.mark.parametrize("comp", "rg")
def test_tld4_on_a_cubemap(executor, comp):
    rng = np.random.default_rng(41)
    faces = rng.uniform(-1, 1, (6, 4, 4, 2)).astype(np.float32)
    tex = ptxvm.TextureObject(ptxvm.CudaArray.from_numpy(faces, channels=2, cubemap=True))
    dirs = rng.normal(size=(16, 3)).astype(np.float32)
    dirs[:3] = [[1, 0.2, -0.3], [0.1, -1, 0.9], [-0.5, 0.5, -1]]
    body = f"""mov.b32 %r8, 0f3F800000;
    setp.lt.u32 %p1, %r1, 16;
    @%p1 ld.global.b32 %r8, [%rd3+64];
    tld4.{comp}.cube.v4.f32.f32 {{%r10, %r11, %r12, %r13}}, [%rd1, {{%r6, %r7, %r8, %r8}}];
    st.global.v4.b32 [%rd10], {{%r10, %r11, %r12, %r13}};"""
    # z rides 16 lanes after x in the cx column (the helper kernel loads x and y only)
    xs = np.concatenate([dirs[:, 0], dirs[:, 2]]).view(np.int32)
    ys = np.concatenate([dirs[:, 1], dirs[:, 1]]).view(np.int32)
    got = launch(executor, body, tex, xs, ys, np.float32)[:16]
    want = []
    for x, y, z in dirs:
        face, s, t = model.cube_direction(x, y, z)
        want.append(model.gather4(faces[face].reshape(1, 4, 4, 2), [s * 4, t * 4], "rg".index(comp),
                                  modes=("clamp",) * 3))
    np.testing.assert_array_equal(got, np.array(want, np.float32))
