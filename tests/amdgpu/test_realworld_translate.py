"""The real-world corpus (tests/cuda/cub_*.cu, thrust_algos.cu, cg_tiles.cu, warp_asm.cu,
libcuxx*.cu; nvcc sm_80 PTX) translated for all six AMD targets: every file gives a linked,
checked code object with one kernel descriptor per `.entry` and the kernel's own arguments, or
is refused with the located reason listed here; the hand-written forms of tests/ptx/handwritten
lift for every target. The default run lifts the small files for every
target (the refusals happen while lifting) and compiles one; ``-m slow`` compiles every file
for every target (about 15 minutes on two cores: the Thrust and CUB device files hold 30
large kernels)."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

import ptxvm
from ptxvm.amdgpu import load_target
from ptxvm.amdgpu.lowering import lift_module

pytestmark = pytest.mark.lld

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "nvcc" / "sm80"
TARGETS = ("gfx906", "gfx908", "gfx90a", "gfx942", "gfx1030", "gfx1100")
STEMS = ("cub_block", "cub_sort_hist", "cub_warp", "cub_device", "thrust_algos", "cg_tiles", "warp_asm",
         "libcuxx", "libcuxx_barrier")
SMALL = ("cub_warp", "cg_tiles", "warp_asm", "libcuxx", "libcuxx_barrier")
# stem -> (what the error quotes, why): the same on every target
REFUSED: dict[str, tuple[str, str]] = {}     # none since mbarrier lowers (lift/ops/mbarrier.py)


def _load(stem: str):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ptxvm.load(FIXTURES / f"{stem}.ptx")


def _refused(stem: str, target: str, action) -> None:
    quoted, _ = REFUSED[stem]
    with pytest.raises(ptxvm.UnsupportedError) as info:
        action()
    err = info.value
    assert quoted in str(err) and target in str(err), str(err)
    assert err.filename == str(FIXTURES / f"{stem}.ptx") and err.line and err.column


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("stem", SMALL)
def test_small_files_lift_for_every_target(stem: str, target: str) -> None:
    module = _load(stem)
    if stem in REFUSED:
        return _refused(stem, target, lambda: lift_module(module, load_target(target)))
    text = lift_module(module, load_target(target))
    for name in module.kernels:
        assert f'define amdgpu_kernel void @"{name}"(' in text


def _compile_and_check(stem: str, target: str) -> None:
    module = _load(stem)
    if stem in REFUSED:
        return _refused(stem, target, lambda: ptxvm.compile(module, target=target))
    obj = ptxvm.compile(module, target=target)
    assert obj.kernels == list(module.kernels)
    wave = load_target(target).wave_size
    for name, k in module.kernels.items():
        md = obj.metadata[name]
        assert md["wavefront_size"] == wave
        explicit = [a for a in md["args"] if not a["kind"].startswith("hidden_")]
        assert [a["name"] for a in explicit] == [p.name for p in k.params]


@pytest.mark.parametrize("target", ["gfx90a", "gfx1100"])
def test_warp_asm_compiles(target: str) -> None:
    _compile_and_check("warp_asm", target)


@pytest.mark.slow
@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("stem", STEMS)
def test_every_file_compiles_for_every_target(stem: str, target: str) -> None:
    _compile_and_check(stem, target)


HANDWRITTEN = sorted((Path(__file__).resolve().parents[1] / "ptx" / "handwritten").glob("*.ptx"))


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("path", [p for p in HANDWRITTEN if "rejected" not in p.stem], ids=lambda p: p.stem)
def test_handwritten_forms_lift_for_every_target(path: Path, target: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        module = ptxvm.load(path)
    text = lift_module(module, load_target(target))
    assert f'define amdgpu_kernel void @"{path.stem}"(' in text
