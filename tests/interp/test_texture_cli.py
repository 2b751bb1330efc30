"""`ptxvm run --arg` texture and surface specs (ptxvm/cli/texarg.py)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ptxvm.cli import main
from tests.models import texture as model

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "nvcc" / "sm80" / "texture_surface.ptx"


@pytest.mark.parametrize("device", ["interp", "cpu"])
def test_tex2d_spec_runs_with_its_sampler(tmp_path, device):
    out = tmp_path / "o.npz"
    rc = main(["run", str(FIX), "-k", "tex2d_sample_uv", "-g", "1", "-b", "64", "-q", "--device", device,
               "-a", "tex2d:f32[4,5]=random(seed=1),filter=linear,normalized=1,address=wrap",
               "-a", "f32[8]=random(seed=2)", "-a", "f32[8]=random(seed=3)", "-a", "f32[8]=zeros", "-a", "8",
               "-o", str(out)])
    assert rc == 0
    z = np.load(out)
    img = np.random.default_rng(1).random((4, 5)).astype(np.float32)
    np.testing.assert_array_equal(z["arg0"], img)
    want = [model.fetch(img.reshape(1, 4, 5, 1), [u, v], modes=("wrap",) * 3, filter_mode="linear",
                        normalized=True)[0] for u, v in zip(z["arg1"], z["arg2"])]
    np.testing.assert_array_equal(z["arg3"], np.array(want, np.float32))


@pytest.mark.parametrize("device", ["interp", "cpu"])
def test_surface_spec_saves_the_texels_after_the_launch(tmp_path, device):
    out = tmp_path / "o.npz"
    rc = main(["run", str(FIX), "-k", "surf2d_uchar4", "-g", "1,1", "-b", "8,4", "-q", "--device", device,
               "-a", "surf2d:u8[4,8]=zeros,channels=4", "-a", "i32[32]=zeros", "-a", "8", "-a", "4",
               "-o", str(out)])
    assert rc == 0
    s = np.load(out)["arg0"]
    assert s.shape == (4, 8, 4)
    x, y = np.meshgrid(np.arange(8), np.arange(4))
    np.testing.assert_array_equal(s[..., 0], x)
    np.testing.assert_array_equal(s[..., 2], x + y)


@pytest.mark.parametrize("spec,message", [
    ("tex2d:f32[4,4]=zeros,fliter=linear", "unknown texture option `fliter`"),
    ("tex2d:f32[4]=zeros", "needs a 2-dimensional shape"),
    ("tex2d:i32[4,4]=zeros,filter=linear", "filter_mode=linear needs"),
    ("tex2d:f32[4,4]=zeros,address=spiral", "address_mode 'spiral'"),
])
def test_bad_texture_specs_are_usage_errors(spec, message, capsys):
    rc = main(["run", str(FIX), "-k", "tex2d_luminance", "-a", spec, "-a", "f32[16]=zeros", "-a", "4", "-a", "4"])
    assert rc == 2
    assert message in capsys.readouterr().err
