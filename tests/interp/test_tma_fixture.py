"""tests/cuda/tma_copy.cu (nvcc 13, sm_90a: libcu++'s TMA load on a cuda::barrier and the bulk-group
store) on the interpreter and the host JIT, against a numpy tile copy with out-of-bounds fill."""
from __future__ import annotations

import numpy as np
import pytest

import ptxvm

from models.fixture_kernels import kernel

EXECUTORS = ["interp", "cpu"]
H, W, PITCH = 40, 70, 72           # a 40 x 70 float tensor in rows of 72 floats (288 bytes)


def _tensor() -> np.ndarray:
    return (np.arange(H * PITCH, dtype=np.float32).reshape(H, PITCH) % 997) + 1


def _map(d, **kw):
    return ptxvm.TensorMap.tiled("float32", 2, d.ptr, (W, H), (PITCH * 4,), (32, 16), (1, 1), **kw)


@pytest.mark.parametrize("device", EXECUTORS)
@pytest.mark.parametrize("fill", ["none", "nan_request_zero_fma"])
def test_tma_load_tile_fills_outside_the_tensor(device, fill):
    a = _tensor()
    d = ptxvm.to_device(a)
    x0, y0, blocks = -5, 30, 3
    out = np.zeros(blocks * 512, np.float32)
    kernel("tma_copy", "tma_load_tile", "sm90a")((blocks,), (64,), (_map(d, oob_fill=fill), out, np.int32(x0).view(np.uint32),
                                                                    np.uint32(y0)), device=device)
    fv = np.float32(0) if fill == "none" else np.float32(np.nan)
    want = np.full((blocks, 16, 32), fv, np.float32)
    for b in range(blocks):
        ys, xs = np.arange(y0, y0 + 16), np.arange(x0 + 32 * b, x0 + 32 * b + 32)
        inside = (ys[:, None] < H) & (xs[None, :] >= 0) & (xs[None, :] < W)
        want[b][inside] = a[np.clip(ys, 0, H - 1)][:, np.clip(xs, 0, W - 1)][inside]
    np.testing.assert_array_equal(out.reshape(blocks, 16, 32), want)


@pytest.mark.parametrize("device", EXECUTORS)
def test_tma_store_tile_drops_what_lies_outside(device):
    a = np.zeros((H, PITCH), np.float32)
    d = ptxvm.to_device(a)
    src = np.arange(512, dtype=np.float32) + 1000
    x0, y0 = 50, 30
    kernel("tma_copy", "tma_store_tile", "sm90a")((1,), (64,), (_map(d), src, np.uint32(x0), np.uint32(y0)),
                                                  device=device)
    want = np.zeros((H, PITCH), np.float32)
    tile = src.reshape(16, 32)
    want[y0:H, x0:W] = tile[:H - y0, :W - x0]
    np.testing.assert_array_equal(d.copy_to_host(), want)
