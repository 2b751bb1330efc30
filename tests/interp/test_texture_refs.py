"""Texture and surface references (tests/ptx/textures/texref.ptx) bound with Module.bind_texture,
on every host executor."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import ptxvm
from tests.models import texture as model

EXECUTORS = ["interp", "cpu"]
PTX = Path(__file__).resolve().parents[1] / "ptx" / "textures" / "texref.ptx"


def _module():
    return ptxvm.Module(PTX.read_text(), str(PTX))


@pytest.mark.parametrize("executor", EXECUTORS)
@pytest.mark.parametrize("mode,flt", [("clamp", "linear"), ("border", "linear"), ("clamp", "point")])
def test_texref_bound_to_array(executor, mode, flt):
    m = _module()
    data = np.array([1, -2, 4, 8.5, 16, 3, 0.25], np.float32)
    m.bind_texture("tref", ptxvm.CudaArray.from_numpy(data), address_mode=mode, filter_mode=flt,
                   border_color=(100, 0, 0, 0))
    n = 9
    out = np.zeros(n, np.float32)
    m["blur_ref"](1, 32, [out, n], device=executor)
    t = data.reshape(1, 1, -1, 1)
    kw = dict(modes=(mode,) * 3, filter_mode=flt, border=(100, 0, 0, 0))
    want = [np.float32(model.fetch(t, [np.float32(i) - np.float32(0.5)], **kw)[0]
                       + model.fetch(t, [np.float32(i) + np.float32(1.5)], **kw)[0]) for i in range(n)]
    np.testing.assert_array_equal(out, np.array(want, np.float32))


@pytest.mark.parametrize("executor", EXECUTORS)
def test_surfref(executor):
    m = _module()
    arr = ptxvm.CudaArray.from_numpy(np.arange(10, dtype=np.uint32) + 5)
    m.bind_texture("sref", ptxvm.SurfaceObject(arr))
    m["copy_surf"](1, 32, [8], device=executor)
    want = np.arange(10, dtype=np.uint32) + 5
    want[:8] *= 2
    np.testing.assert_array_equal(arr.to_numpy(), want)
    with pytest.raises(ptxvm.KernelFault, match=r"bytes 40\.\.43 .*out of range \(\.trap\)"):
        m["copy_surf"](1, 32, [11], device=executor)


@pytest.mark.parametrize("executor", EXECUTORS)
def test_unbound_reference(executor):
    with pytest.raises(ptxvm.KernelFault, match=r"reference `tref` is not bound"):
        _module()["blur_ref"](1, 4, [np.zeros(4, np.float32), 4], device=executor)


def test_bind_texture_checks_the_name_and_kind():
    m = _module()
    with pytest.raises(ptxvm.LaunchError, match=r"`nope` is not a \.texref/\.surfref .*references: tref, sref"):
        m.bind_texture("nope", np.zeros(4, np.float32))
    with pytest.raises(ptxvm.LaunchError, match=r"`sref` is a \.surfref; got a TextureObject"):
        m.bind_texture("sref", ptxvm.TextureObject(np.zeros(4, np.float32)))


@pytest.mark.parametrize("executor", EXECUTORS)
def test_float_fetch_of_linear_memory_is_a_located_fault(executor):
    """A reference bound to linear memory (tex1Dfetch's kind) sampled with float coordinates:
    the same fault, naming the instruction, its line and the thread, on every executor."""
    m = _module()
    m.bind_texture("tref", np.zeros(4, np.float32))
    with pytest.raises(ptxvm.KernelFault, match=r"(?s)texref\.ptx:25:\d+: .*`tex\.1d\.v4\.f32\.f32` samples "
                                                 r"linear memory with float coordinates.*thread \(0, 0, 0\)"):
        m["blur_ref"](1, 4, [np.zeros(4, np.float32), 4], device=executor)
