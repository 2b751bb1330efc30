"""tests/cuda/imaging.cu (nvcc 13's PTX, every build) on the executors against numpy and the
independent texture model."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import ptxvm
from tests.models import texture as model

EXECUTORS = ["interp", "cpu"]
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "nvcc"
BUILDS = sorted(p.parent.name for p in FIXTURES.glob("*/imaging.ptx"))
f32 = np.float32


def kernel(build, prefix):
    path = FIXTURES / build / "imaging.ptx"
    m = ptxvm.Module(path.read_text(), str(path))
    return m[next(n for n in m.kernels if prefix in n)]


@pytest.mark.parametrize("executor", EXECUTORS)
@pytest.mark.parametrize("build", BUILDS)
def test_resize_bilinear(executor, build):
    rng = np.random.default_rng(1)
    src = rng.uniform(0, 1, (7, 9)).astype(f32)
    tex = ptxvm.TextureObject(ptxvm.CudaArray.from_numpy(src), filter_mode="linear", normalized_coords=True)
    dw, dh = 20, 13
    dst = np.zeros(dw * dh, f32)
    kernel(build, "resize_bilinear")((2, 2), (16, 8), [tex, dst, dw, dh], device=executor)
    want = [model.fetch(src.reshape(1, 7, 9, 1), [f32(f32(x + f32(0.5)) / f32(dw)), f32(f32(y + f32(0.5)) / f32(dh))],
                        modes=("clamp",) * 3, filter_mode="linear", normalized=True)[0]
            for y in range(dh) for x in range(dw)]
    # (x + 0.5f) / dw: nvcc may compute the quotient with a reciprocal; allow one ulp of the
    # coordinate, which moves alpha by at most one 1/256 step.
    np.testing.assert_allclose(dst, np.array(want, f32), atol=1.0 / 256 + 1e-6)
    exact = np.mean(dst == np.array(want, f32))
    assert exact > 0.9, exact


@pytest.mark.parametrize("executor", EXECUTORS)
@pytest.mark.parametrize("build", BUILDS)
def test_box_filter(executor, build):
    rng = np.random.default_rng(2)
    h, w, r = 6, 10, 1
    src = rng.integers(0, 100, (h, w)).astype(f32)
    tex = ptxvm.TextureObject(ptxvm.CudaArray.from_numpy(src))         # point, clamp (unnormalised)
    dst = np.zeros(h * w, f32)
    kernel(build, "box_filter")((1, 1), (16, 8), [tex, dst, w, h, r], device=executor)
    pad = np.pad(src, r, mode="edge")
    want = sum(pad[r + dy:r + dy + h, r + dx:r + dx + w] for dy in range(-r, r + 1) for dx in range(-r, r + 1))
    np.testing.assert_allclose(dst.reshape(h, w), want / 9.0, rtol=1e-6)   # integer sums: exact until / 9


@pytest.mark.parametrize("executor", EXECUTORS)
@pytest.mark.parametrize("build", BUILDS)
def test_layered(executor, build):
    rng = np.random.default_rng(3)
    layers, h, w = 3, 5, 4
    src = rng.integers(-8, 8, (layers, h, w)).astype(f32)
    tex = ptxvm.TextureObject(ptxvm.CudaArray.from_numpy(src, layered=True))
    dst = np.zeros(h * w, f32)
    kernel(build, "layered_weighted")((1, 1), (8, 8), [tex, dst, w, h, layers], device=executor)
    want = sum((l + 1) * src[l] for l in range(layers))
    np.testing.assert_array_equal(dst.reshape(h, w), want)
    with pytest.raises(ptxvm.KernelFault, match=r"reads layer 3 of CudaArray\(layered"):
        kernel(build, "layered_weighted")((1, 1), (8, 8), [tex, dst, w, h, layers + 1], device=executor)


@pytest.mark.parametrize("executor", EXECUTORS)
@pytest.mark.parametrize("build", BUILDS)
def test_cube_lookup(executor, build):
    rng = np.random.default_rng(4)
    faces = rng.uniform(0, 1, (6, 8, 8)).astype(f32)
    tex = ptxvm.TextureObject(ptxvm.CudaArray.from_numpy(faces, cubemap=True), filter_mode="linear")
    dirs = rng.normal(size=(40, 3)).astype(f32)
    out = np.zeros(40, f32)
    kernel(build, "cube_lookup")((1,), (64,), [tex, dirs.reshape(-1).copy(), out, 40], device=executor)
    want = []
    for x, y, z in dirs:
        face, s, t = model.cube_direction(x, y, z)
        want.append(model.fetch(faces[face].reshape(1, 8, 8, 1), [s, t], modes=("clamp",) * 3,
                                filter_mode="linear", normalized=True)[0])
    np.testing.assert_array_equal(out, np.array(want, f32))


@pytest.mark.parametrize("executor", EXECUTORS)
@pytest.mark.parametrize("build", BUILDS)
def test_surf_invert(executor, build):
    rng = np.random.default_rng(5)
    h, w = 4, 12
    img = rng.integers(0, 256, (h, w, 4)).astype(np.uint8)
    arr = ptxvm.CudaArray.from_numpy(img, channels=4)
    right = np.full(h * w, -1, np.int32)
    kernel(build, "surf_invert")((1, 1), (16, 4), [ptxvm.SurfaceObject(arr), right, w, h], device=executor)
    inv = 255 - img
    np.testing.assert_array_equal(arr.to_numpy(), inv)
    want = np.zeros((h, w), np.int32)
    want[:, :-1] = inv[:, 1:, 0]
    np.testing.assert_array_equal(right.reshape(h, w), want)


@pytest.mark.parametrize("executor", EXECUTORS)
@pytest.mark.parametrize("build", BUILDS)
def test_fetch_gather(executor, build):
    data = (np.arange(30, dtype=f32) * f32(0.5) - 4).astype(f32)
    idx = np.array([0, 29, 30, -1, 7, 1 << 20, 15, 3], np.int32)
    out = np.zeros(idx.size, f32)
    kernel(build, "fetch_gather")((1,), (32,), [ptxvm.TextureObject(data), idx, out, idx.size], device=executor)
    want = np.where((idx >= 0) & (idx < 30), 2 * data[np.clip(idx, 0, 29)], 0).astype(f32)
    np.testing.assert_array_equal(out, want)
