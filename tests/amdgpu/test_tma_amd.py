"""cp.async.bulk.tensor on the AMD targets: lowered by lift/ops/tma.py as a software copy loop over
the box (no TMA unit), the nvcc 13 fixture (tests/cuda/tma_copy.cu, both directions) translating
for all six targets. Execution on the ISA emulator is not checked (see docs/tensor-cores.md)."""
from __future__ import annotations

import pytest

import ptxvm

from models.fixtures import FIXTURES

pytestmark = pytest.mark.lld

FAST = ["gfx90a", "gfx1100"]
SLOW = ["gfx906", "gfx908", "gfx942", "gfx1030"]


def _check(target: str) -> None:
    obj = ptxvm.compile((FIXTURES / "nvcc" / "sm90a" / "tma_copy.ptx").read_text(), target=target)
    for name in ("_Z13tma_load_tile14CUtensorMap_stPfii", "_Z14tma_store_tile14CUtensorMap_stPKfii"):
        start = obj.asm.index(f"\n{name}:\n")
        body = obj.asm[start:obj.asm.index(".Lfunc_end", start)]
        # the box loop reads global memory and writes LDS (load) or the reverse (store)
        assert "global_load" in body or "flat_load" in body, (target, name)
        assert "ds_write" in body or "ds_store" in body or "ds_read" in body or "ds_load" in body, (target, name)


@pytest.mark.parametrize("target", FAST)
def test_tma_fixture_translates(target):
    _check(target)


@pytest.mark.slow
@pytest.mark.parametrize("target", SLOW)
def test_tma_fixture_translates_everywhere(target):
    _check(target)


def test_amd_launchers_refuse_a_tensor_map_argument():
    import numpy as np

    from ptxvm.driver import kernarg
    from ptxvm.errors import LaunchError
    src = (FIXTURES / "nvcc" / "sm90a" / "tma_copy.ptx").read_text()
    name = "_Z13tma_load_tile14CUtensorMap_stPfii"
    obj = ptxvm.compile(src, target="gfx90a")
    k = ptxvm.Module(src)[name]
    tmap = ptxvm.TensorMap.tiled("float32", 2, 0x10000, (64, 64), (256,), (32, 16), (1, 1))
    with pytest.raises(LaunchError, match="TensorMap"):
        kernarg.pack(obj.metadata[name], k.params, (tmap, np.zeros(4, np.float32), 0, 0), (1, 1, 1), (32, 1, 1), 0,
                     device="emu:gfx90a")
