"""Golden LLVM IR of the AMDGPU lifting (before optimisation) for representative kernels, per
target: the kernel ABI, special registers, addressing, barriers and the wave64 warp emulation
(``ds_bpermute``/ballot restricted to a 32-lane half).  A change here is a change in what we
hand LLVM: rewrite with ``pytest --update-golden`` (or PTXVM_UPDATE_GOLDEN=1) and review the diff.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import ptxvm

# Links code objects: needs ld.lld from the ziglang wheel (the `amdgpu` extra).
pytestmark = pytest.mark.lld

GOLDEN = Path(__file__).parents[1] / "golden" / "amdgpu"
SOURCE = GOLDEN / "lifted.ptx"


@pytest.mark.parametrize("target", ["gfx90a", "gfx1030"])
def test_lifted_llvm_ir_is_golden(target):
    obj = ptxvm.compile(SOURCE.read_text(), target=target)
    text = obj.llvm_ir
    path = GOLDEN / f"lifted.{target}.ll"
    if os.environ.get("PTXVM_UPDATE_GOLDEN") == "1":
        path.write_text(text)
    assert path.exists(), f"{path} is missing: create it with --update-golden"
    assert text == path.read_text(), f"{path.name} changed: rerun with --update-golden and review the diff"


def test_wave64_warp_emulation_stays_in_the_half_wave():
    """On gfx90a a PTX warp is half a wave: the lane id is masked to 5 bits and exchanges go
    through ds_bpermute with addresses inside the lane's own half."""
    ir = (GOLDEN / "lifted.gfx90a.ll").read_text()
    asm = ptxvm.compile(SOURCE.read_text(), target="gfx90a").asm
    assert "llvm.amdgcn.ds.bpermute" in ir and "ds_bpermute_b32" in asm
    assert "s_barrier" in asm
    wave32 = (GOLDEN / "lifted.gfx1030.ll").read_text()
    assert "llvm.amdgcn.ds.bpermute" in wave32 or "ds_bpermute" in ptxvm.compile(SOURCE.read_text(),
                                                                                 target="gfx1030").asm
