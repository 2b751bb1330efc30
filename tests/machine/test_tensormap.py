"""ptxvm.machine.tensormap's host API and box layout against tests/models/tensormap.py."""
import numpy as np
import pytest

from ptxvm.machine.tensormap import TensorMap, box_layout
from tests.models.tensormap import load_box, swizzle128


def _gather(t, tm, coords):
    flat = t.reshape(-1).view(np.uint8)
    size = tm.element_size
    out = np.zeros(len(box_layout(tm, coords)) * size, np.uint8)
    for so, go in box_layout(tm, coords):
        if go is not None:
            out[so:so + size] = flat[go:go + size]
    return out.view(t.dtype)


@pytest.mark.parametrize("coords", [(0, 0), (-3, 2), (8, 10), (28, -5)])
@pytest.mark.parametrize("estr", [(1, 1), (2, 3)])
def test_2d_box_matches_model(coords, estr):
    t = np.arange(12 * 32, dtype=np.float32).reshape(12, 32) + 1
    tm = TensorMap.tiled("float32", 2, 0, (32, 12), (32 * 4,), (8, 6), estr)
    assert tm == TensorMap.decode(tm.encode())
    np.testing.assert_array_equal(_gather(t, tm, coords), load_box(t, coords, (8, 6), estr).reshape(-1))


@pytest.mark.parametrize("span,swz", [(32, "32b"), (64, "64b"), (128, "128b")])
def test_swizzle_matches_model(span, swz):
    tm = TensorMap.tiled("uint8", 2, 0, (span, 64), (span,), (span, 64), (1, 1), swizzle=swz)
    for k, (so, _) in enumerate(box_layout(tm, (0, 0))):
        assert so == swizzle128(k, span)


@pytest.mark.parametrize("kw", [dict(box_dims=(300, 4)), dict(global_strides=(20,)), dict(element_strides=(9, 1)),
                                dict(global_address=8)])
def test_bad_arguments_name_the_argument(kw):
    args = dict(dtype="float32", rank=2, global_address=0, global_dims=(32, 12), global_strides=(128,),
                box_dims=(8, 6), element_strides=(1, 1))
    args.update(kw)
    with pytest.raises(ValueError, match=next(iter(kw))):
        TensorMap.tiled(**args)


def test_wrong_object_refused():
    with pytest.raises(ValueError, match="not a ptxvm tensor map"):
        TensorMap.decode(bytes(128), "kernel arg tmap")
