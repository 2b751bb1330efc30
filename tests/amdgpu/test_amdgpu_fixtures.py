"""The committed PTX corpus (nvcc sm_80, numba, Triton) translated to AMD GPU code objects.

Every file either translates (and its object passes the structural check inside
``ptxvm.compile``) or is refused with an UnsupportedError naming an instruction.  The
refusals are listed here with the reason, so a new failure and a newly translatable file
both show.  The default run lifts every file for gfx90a and gfx1030 (refusals happen
while lifting, before LLVM) and compiles one small file per target; the whole corpus for
every target is ``-m slow``.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

import ptxvm
from ptxvm.amdgpu import available, load_target
from ptxvm.amdgpu.lowering import lift_module

# Links code objects: needs ld.lld from the ziglang wheel (the `amdgpu` extra).
pytestmark = pytest.mark.lld

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
CORPUS = sorted([*FIXTURES.glob("nvcc/sm80/*.ptx"), *FIXTURES.glob("numba/*.ptx"), *FIXTURES.glob("triton/*.ptx")])

# file -> (what the error names, why): the same for every target.
EXPECTED_UNSUPPORTED = {
    "nvcc/sm80/cdp.ptx": ("__cudaCDP2GetParameterBufferV2", "dynamic parallelism: HIP has no device-side kernel launch"),
    "nvcc/sm80/cdp_streams.ptx": ("__cudaCDP2StreamCreateWithFlags",
                                  "device streams of dynamic parallelism: HIP has no device-side kernel launch"),
}
# (file, target) -> (what the error names, why): refusals of one target only.
EXPECTED_UNSUPPORTED_ON = {
    ("nvcc/sm80/mipmap.ptx", "gfx90a"): ("tex.level", "CDNA has no image_sample_l/image_sample_d"),
}


def _id(p: Path) -> str:
    return str(p.relative_to(FIXTURES))


def _load(p: Path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")          # numba/Triton write newer PTX versions
        return ptxvm.load(p)


def test_expected_list_names_real_files():
    names = {_id(p) for p in CORPUS}
    assert set(EXPECTED_UNSUPPORTED) <= names
    assert len(names) - len(EXPECTED_UNSUPPORTED) >= 25


@pytest.mark.parametrize("target", ["gfx90a", "gfx1030"])
@pytest.mark.parametrize("path", CORPUS, ids=_id)
def test_corpus_lifts_or_is_refused_as_listed(path, target):
    module = _load(path)
    expected = EXPECTED_UNSUPPORTED.get(_id(path)) or EXPECTED_UNSUPPORTED_ON.get((_id(path), target))
    if expected is None:
        ir = lift_module(module, load_target(target))
        for name in module.kernels:
            assert f'define amdgpu_kernel void @"{name}"(' in ir
        return
    with pytest.raises(ptxvm.UnsupportedError) as info:
        lift_module(module, load_target(target))
    err = info.value
    assert expected[0] in str(err) and err.line and err.filename == str(path)


@pytest.mark.parametrize("target", available())
def test_one_nvcc_file_compiles_per_target(target):
    obj = ptxvm.compile(_load(FIXTURES / "nvcc/sm80/elementwise.ptx"), target=target)
    assert obj.kernels == list(_load(FIXTURES / "nvcc/sm80/elementwise.ptx").kernels)
    assert all(m["wavefront_size"] == load_target(target).wave_size for m in obj.metadata.values())


# (file, target) -> why LLVM itself aborts (a CodegenError naming the crash, the host unharmed).
LLVM_ABORTS = {
    # gfx906 has no matrix cores: the shared lowering (lift/ops/matrix.py) of mma_gemm_f16 (4
    # unrolled m16n8k16 per loop) needs more registers than LLVM finds (already so before the
    # MFMA/WMMA lowering, commit 10680d3).
    ("nvcc/sm80/mma_gemm.ptx", "gfx906"): "LLVM runs out of registers allocating mma_gemm_f16's shared mma lowering",
}


@pytest.mark.slow
@pytest.mark.parametrize("target", available())
@pytest.mark.parametrize("path", [p for p in CORPUS if _id(p) not in EXPECTED_UNSUPPORTED], ids=_id)
def test_corpus_compiles_for_every_target(path, target, request):
    why = LLVM_ABORTS.get((_id(path), target))
    if why is not None:
        request.applymarker(pytest.mark.xfail(strict=True, raises=ptxvm.CodegenError, reason=why))
    module = _load(path)
    obj = ptxvm.compile(module, target=target)
    assert obj.kernels == list(module.kernels)
    for name, k in module.kernels.items():
        explicit = [a for a in obj.metadata[name]["args"] if not a["kind"].startswith("hidden_")]
        assert [a["name"] for a in explicit] == [d.name for d in k.params]
