"""tests/cuda/texture_surface.cu (nvcc's PTX in tests/fixtures/nvcc/*/) on the executors against
numpy, plus the surface instructions' out-of-range modes and the texture errors."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import ptxvm
from tests.models import texture as model

EXECUTORS = ["interp", "cpu"]
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "nvcc"
BUILDS = sorted(p.parent.name for p in FIXTURES.glob("*/texture_surface.ptx"))


def _module(build):
    path = FIXTURES / build / "texture_surface.ptx"
    return ptxvm.Module(path.read_text(), str(path))


def _k(m, prefix):
    return m[next(n for n in m.kernels if prefix in n)]


@pytest.mark.parametrize("executor", EXECUTORS)
@pytest.mark.parametrize("build", BUILDS)
def test_tex2d_luminance(executor, build):
    rng = np.random.default_rng(1)
    h, w = 9, 13
    img = rng.random((h, w, 4), dtype=np.float32)
    tex = ptxvm.TextureObject(ptxvm.CudaArray.from_numpy(img, channels=4))
    out = np.zeros(h * w, np.float32)
    _k(_module(build), "tex2d_luminance")((2, 2), (8, 8), [tex, out, w, h], device=executor)
    want = (0.299 * img[..., 0].astype(np.float64) + 0.587 * img[..., 1] + 0.114 * img[..., 2]).reshape(-1)
    np.testing.assert_allclose(out, want, rtol=1e-6, atol=1e-7)   # nvcc's f32 mul/fma chain


@pytest.mark.parametrize("executor", EXECUTORS)
@pytest.mark.parametrize("build", BUILDS)
def test_tex2d_sample_uv_bilinear_normalised(executor, build):
    rng = np.random.default_rng(2)
    h, w = 6, 8
    img = rng.uniform(-1, 1, (h, w)).astype(np.float32)
    tex = ptxvm.TextureObject(ptxvm.CudaArray.from_numpy(img), filter_mode="linear", normalized_coords=True,
                              address_mode="wrap")
    u = np.concatenate([rng.uniform(-1.5, 2.5, 50), np.arange(9) / 8]).astype(np.float32)
    v = np.concatenate([rng.uniform(-1.5, 2.5, 50), np.arange(9) / 6]).astype(np.float32)
    out = np.zeros(u.size, np.float32)
    _k(_module(build), "tex2d_sample_uv")((1,), (64,), [tex, u, v, out, u.size], device=executor)
    want = [model.fetch(img.reshape(1, h, w, 1), [a, b], modes=("wrap",) * 3, filter_mode="linear",
                        normalized=True)[0] for a, b in zip(u, v)]
    np.testing.assert_array_equal(out, np.array(want, np.float32))


@pytest.mark.parametrize("executor", EXECUTORS)
@pytest.mark.parametrize("build", BUILDS)
def test_tex1d_fetch_linear_memory(executor, build):
    n = 50
    f = (np.arange(n, dtype=np.float32) * 0.25 - 3).astype(np.float32)
    iv = (np.arange(n, dtype=np.int32) * 7 - 100).astype(np.int32)
    idx = np.array([(i * 13) % (n + 9) - 4 for i in range(n)], np.int32)    # some out of range
    out = np.zeros(n, np.float32)
    iout = np.zeros(n, np.int32)
    ftex, itex = ptxvm.TextureObject(f), ptxvm.TextureObject(iv)
    _k(_module(build), "tex1d_fetch")((1,), (64,), [ftex, itex, idx, out, iout, n], device=executor)
    fetched = np.where((idx >= 0) & (idx < n), f[np.clip(idx, 0, n - 1)], 0).astype(np.float32)
    np.testing.assert_array_equal(out, f + fetched)
    np.testing.assert_array_equal(iout, iv * 2)


@pytest.mark.parametrize("executor", EXECUTORS)
@pytest.mark.parametrize("build", BUILDS)
def test_tex3d_copy(executor, build):
    rng = np.random.default_rng(3)
    d, h, w = 3, 5, 6
    vol = rng.uniform(-5, 5, (d, h, w)).astype(np.float32)
    tex = ptxvm.TextureObject(ptxvm.CudaArray.from_numpy(vol), filter_mode="linear")
    out = np.zeros(vol.size, np.float32)
    _k(_module(build), "tex3d_copy")((1, 1, 1), (8, 8, 4), [tex, out, w, h, d], device=executor)
    np.testing.assert_array_equal(out, vol.reshape(-1))       # voxel centres: alpha = 0 exactly


@pytest.mark.parametrize("executor", EXECUTORS)
@pytest.mark.parametrize("build", BUILDS)
def test_surf2d_scale(executor, build):
    rng = np.random.default_rng(4)
    h, w = 7, 9
    a = rng.uniform(-3, 3, (h, w)).astype(np.float32)
    arr = ptxvm.CudaArray.from_numpy(a)
    _k(_module(build), "surf2d_scale")((2, 1), (8, 8), [ptxvm.SurfaceObject(arr), w, h], device=executor)
    x, y = np.meshgrid(np.arange(w), np.arange(h))
    np.testing.assert_array_equal(arr.to_numpy(), (2 * a + (x - y).astype(np.float32)).astype(np.float32))


@pytest.mark.parametrize("executor", EXECUTORS)
@pytest.mark.parametrize("build", BUILDS)
def test_surf2d_uchar4(executor, build):
    h, w = 5, 300
    arr = ptxvm.CudaArray((h, w), np.uint8, channels=4)
    check = np.zeros(h * w, np.int32)
    _k(_module(build), "surf2d_uchar4")((5, 1), (64, 8), [ptxvm.SurfaceObject(arr), check, w, h], device=executor)
    x, y = np.meshgrid(np.arange(w), np.arange(h))
    want = np.stack([x & 255, y & 255, (x + y) & 255, np.full_like(x, 255)], axis=-1).astype(np.uint8)
    np.testing.assert_array_equal(arr.to_numpy(), want)
    np.testing.assert_array_equal(check, np.full(h * w, 255))


@pytest.mark.parametrize("executor", EXECUTORS)
def test_garbage_handle_names_the_argument(executor):
    m = _module(BUILDS[0])
    out = np.zeros(16, np.float32)
    with pytest.raises(ptxvm.KernelFault, match=r"texture handle 0x1234 in argument 0 .* is not a texture object"):
        _k(m, "tex2d_luminance")((1, 1), (4, 4), [0x1234, out, 4, 4], device=executor)


@pytest.mark.parametrize("executor", EXECUTORS)
def test_surface_where_texture_expected_and_destroyed_object(executor):
    m = _module(BUILDS[0])
    arr = ptxvm.CudaArray((4, 4), np.float32, channels=4)
    out = np.zeros(16, np.float32)
    with pytest.raises(ptxvm.KernelFault, match="is not a texture object"):
        _k(m, "tex2d_luminance")((1, 1), (4, 4), [ptxvm.SurfaceObject(arr), out, 4, 4], device=executor)
    tex = ptxvm.TextureObject(arr)
    tex.destroy()
    with pytest.raises(ptxvm.KernelFault, match="is not a texture object"):
        _k(m, "tex2d_luminance")((1, 1), (4, 4), [tex, out, 4, 4], device=executor)


@pytest.mark.parametrize("executor", EXECUTORS)
def test_channel_format_the_instruction_cannot_read(executor):
    """tex.2d.v4.f32 on int32 texels read as elements: integers, not floats."""
    m = _module(BUILDS[0])
    arr = ptxvm.CudaArray((4, 4), np.int32, channels=4)
    out = np.zeros(16, np.float32)
    with pytest.raises(ptxvm.KernelFault, match=r"returns \.f32 but .*int32.* gives integer texels") as e:
        _k(m, "tex2d_luminance")((1, 1), (4, 4), [ptxvm.TextureObject(arr), out, 4, 4], device=executor)
    assert "tex.2d.v4.f32.f32" in str(e.value) and "thread" in str(e.value)


@pytest.mark.parametrize("executor", EXECUTORS)
def test_surface_store_out_of_range_traps(executor):
    """surf2d_scale launched with w larger than the surface: the first thread past the row faults
    (.trap), no thread of the failing instruction writes."""
    m = _module(BUILDS[0])
    a = np.ones((4, 4), np.float32)
    arr = ptxvm.CudaArray.from_numpy(a)
    with pytest.raises(ptxvm.KernelFault, match=r"bytes 16\.\.19 of row 0.*out of range \(\.trap\)") as e:
        _k(m, "surf2d_scale")((1, 1), (8, 4), [ptxvm.SurfaceObject(arr), 8, 4], device=executor)
    assert "suld.b.2d.b32.trap" in str(e.value)
    assert "(4, 0, 0)" in str(e.value)      # the thread: tid (4, 0, 0)
