"""tests/cuda/mipmap.cu (nvcc 13's PTX, every build) on interp and cpu against the independent
texture model: tex2DLod, tex2DGrad, tex3DLod over mipmapped arrays, txq.num_mipmap_levels and
a formatted (sust.p) store to a half-float surface checked against numpy's float16 rounding."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import ptxvm
from tests.models import texture as model

EXECUTORS = ["interp", "cpu"]
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "nvcc"
BUILDS = sorted(p.parent.name for p in FIXTURES.glob("*/mipmap.ptx"))
f32 = np.float32


def kernel(build, name):
    path = FIXTURES / build / "mipmap.ptx"
    return ptxvm.Module(path.read_text(), str(path))[name]


def _chain(rng, shape, ch=1):
    mip = ptxvm.MipmappedArray(shape, np.float32, ch)
    for lv in mip.levels:
        lv.copy_from_host(rng.uniform(-1, 1, lv.data.shape).astype(np.float32))
    return mip, [lv.data.reshape((1,) * (4 - lv.data.ndim) + lv.data.shape) for lv in mip.levels]


@pytest.mark.parametrize("executor", EXECUTORS)
@pytest.mark.parametrize("build", BUILDS)
def test_lod_grad_and_levels(executor, build):
    rng = np.random.default_rng(8)
    mip, levels = _chain(rng, (16, 32))
    tex = ptxvm.TextureObject(mip, normalized_coords=True, filter_mode="linear", address_mode="wrap",
                              mipmap_filter_mode="linear")
    n = 96
    u, v = rng.uniform(-0.5, 1.5, n).astype(f32), rng.uniform(-0.5, 1.5, n).astype(f32)
    lod = rng.uniform(-1, 6, n).astype(f32)
    out = np.zeros(n, f32)
    kernel(build, "mip_lod")((2,), (64,), [tex, u, v, lod, out, n], device=executor)
    kw = dict(modes=("wrap",) * 3, filter_mode="linear", mip_filter="linear")
    want = [model.fetch_mip(levels, [u[i], v[i]], lod[i], **kw)[0] for i in range(n)]
    np.testing.assert_array_equal(out, np.array(want, f32))
    g = (rng.uniform(-1, 1, (n, 4)) * 2.0 ** rng.uniform(-7, 0, (n, 4))).astype(f32)
    kernel(build, "mip_grad")((2,), (64,), [tex, u, v, g, out, n], device=executor)
    want = [model.fetch_mip(levels, [u[i], v[i]], model.lod_from_gradients(g[i, :2], g[i, 2:], (32, 16)),
                            **kw)[0] for i in range(n)]
    np.testing.assert_array_equal(out, np.array(want, f32))
    count = np.zeros(1, np.int32)
    kernel(build, "mip_levels")((1,), (1,), [tex, count], device=executor)
    assert count[0] == 6                                      # 32 x 16: 6 levels down to 1 x 1


@pytest.mark.parametrize("executor", EXECUTORS)
@pytest.mark.parametrize("build", BUILDS)
def test_lod_3d(executor, build):
    rng = np.random.default_rng(9)
    mip, levels = _chain(rng, (4, 8, 8), ch=4)
    tex = ptxvm.TextureObject(mip, normalized_coords=True, filter_mode="point", address_mode="clamp")
    n = 40
    p = np.concatenate([rng.uniform(-0.2, 1.2, (n, 3)), rng.uniform(-1, 4, (n, 1))], axis=1).astype(f32)
    out = np.zeros(n, f32)
    kernel(build, "mip_lod3d")((1,), (64,), [tex, p, out, n], device=executor)
    want = []
    for q in p:
        t = model.fetch_mip(levels, list(q[:3]), q[3], modes=("clamp",) * 3)
        want.append(f32(f32(f32(t[0] + t[1]) + t[2]) + t[3]))
    np.testing.assert_array_equal(out, np.array(want, f32))


@pytest.mark.parametrize("executor", EXECUTORS)
@pytest.mark.parametrize("build", BUILDS)
def test_store_formatted_half4(executor, build):
    rng = np.random.default_rng(10)
    w, h = 9, 5
    arr = ptxvm.CudaArray((h, w), np.float16, 4)
    colour = (rng.uniform(-2, 2, (h * w, 4)) * 1000).astype(f32)
    colour[0] = [70000.0, 1e-8, -0.0, 65504.0]                   # overflow, underflow, signed zero, max
    kernel(build, "store_formatted")((1, 1), (16, 8), [ptxvm.SurfaceObject(arr), colour, w, h], device=executor)
    with np.errstate(over="ignore"):
        want = colour.reshape(h, w, 4).astype(np.float16)       # round to nearest even, 70000 -> inf
    np.testing.assert_array_equal(arr.to_numpy().view(np.uint16), want.view(np.uint16))
