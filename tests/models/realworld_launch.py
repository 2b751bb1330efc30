"""How the real-world corpus tests (tests/interp/test_realworld_*.py) find and launch the
kernels of tests/cuda/cub_*.cu, thrust_algos.cu, cg_tiles.cu, warp_asm.cu and libcuxx*.cu
(their nvcc fixtures), and the registry of their cases: one function per kernel family,
registered under the kernel names (as the source writes them) it checks."""

from __future__ import annotations

import re
import warnings
from dataclasses import dataclass, field
from functools import cache
from typing import Callable

import numpy as np
import pytest

import ptxvm
from ptxvm.demangle import demangle

from models.fixtures import FIXTURES

STEMS = ("cub_block", "cub_sort_hist", "cub_warp", "cub_device", "thrust_algos", "cg_tiles",
         "warp_asm", "libcuxx", "libcuxx_barrier")
VARIANTS = ("sm90", "sm80-lineinfo", "sm80-G")      # besides sm80
# nvcc's -G output of these is over the fixture size limit (MANIFEST.json lists them as dropped)
NO_DEBUG_BUILD = ("cub_device", "thrust_algos")
I32, U32 = np.int32, np.uint32
# The interpreter bug the -G builds show (the cpu executor runs those kernels right)
@cache
def module(stem: str, variant: str = "sm80") -> ptxvm.Module:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ptxvm.Module.from_file(FIXTURES / "nvcc" / variant / f"{stem}.ptx")


def short_name(mangled: str) -> str:
    """`void f<128>(int const*, int*)` -> `f<128>`: the name as the source writes it (the
    mangled name where ptxvm's demangler gives up)."""
    full = demangle(mangled)
    if full is None or not full.endswith(")"):
        return mangled
    full = re.sub(r"^void ", "", full)
    depth = 0
    for j in range(len(full) - 1, -1, -1):
        depth += {")": 1, "(": -1}.get(full[j], 0)
        if depth == 0:
            return full[:j]
    return full


def unversioned(name: str) -> str:
    """CUB/Thrust put the target in their inline namespaces (CUB_300001_SM_800, _SM_900)."""
    return re.sub(r"_SM_\d+", "_SM", name)


def kernel(stem: str, name: str, variant: str = "sm80"):
    mod = module(stem, variant)
    hits = [k for k in mod.kernels if unversioned(short_name(k)) == unversioned(name)]
    assert len(hits) == 1, (name, [short_name(k) for k in mod.kernels])
    return mod[hits[0]]


def ints(n: int, lo: int = -50, hi: int = 50, seed: int = 0, dtype=I32) -> np.ndarray:
    return np.random.default_rng(seed).integers(lo, hi, n).astype(dtype)


def tparam(name: str) -> int:
    """The first integer template argument: `cub_warp_sum<16>` -> 16."""
    return int(re.search(r"<(\d+)", name).group(1))


@dataclass
class Cases:
    """kernel name -> (case function ``fn(name, device, variant)``, stem, xfail reason)."""

    entries: dict[str, tuple[Callable, str, str | None]] = field(default_factory=dict)
    labels: dict[str, str] = field(default_factory=dict)     # test ids for long kernel names

    def case(self, stem: str, *names: str, xfail: str | None = None):
        def wrap(fn):
            for n in names:
                self.entries[n] = (fn, stem, xfail)
            return fn
        return wrap

    def run(self, name: str, device: str, variant: str = "sm80") -> None:
        self.entries[name][0](name, device, variant)

    def _id(self, name: str) -> str:
        return re.sub(r"[^\w<>,:/]+", "_", self.labels.get(name, name))

    def params(self) -> list:
        out = []
        for name, (_, _, xfail) in self.entries.items():
            marks = [pytest.mark.xfail(strict=True, reason=xfail)] if xfail else []
            out.append(pytest.param(name, marks=marks, id=self._id(name)))
        return out

    def variant_params(self, known_bugs: dict[tuple[str, str], str]) -> list:
        """(name, variant) for every other nvcc build; ``known_bugs[(name, variant)]``: a strict
        xfail reason."""
        out = []
        for name, (_, stem, xfail) in self.entries.items():
            for v in VARIANTS:
                if v == "sm80-G" and stem in NO_DEBUG_BUILD:
                    continue
                reason = xfail or known_bugs.get((name, v))
                marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
                out.append(pytest.param(name, v, marks=marks, id=f"{self._id(name)}-{v}"))
        return out
