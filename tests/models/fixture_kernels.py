"""The fixture corpus's kernels as the interpreter tests launch them (kernel, VARIANTS) and the plain numpy models of what several of them compute (tree_sum, warp_bits, round_f32, ulp_distance)."""

from __future__ import annotations

import warnings
from fractions import Fraction
from functools import cache

import numpy as np

import ptxvm

from models.fixtures import FIXTURES


@cache
def fixture_module(stem: str, variant: str = "sm80") -> ptxvm.Module:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ptxvm.Module.from_file(FIXTURES / "nvcc" / variant / f"{stem}.ptx")


def kernel(stem: str, name: str, variant: str = "sm80"):
    mod = fixture_module(stem, variant)
    mangled = f"_Z{len(name)}{name}"
    hits = [k for k in mod.kernels if k.startswith(mangled)]
    assert len(hits) == 1, (name, list(mod.kernels))
    return mod[hits[0]]


VARIANTS = ["sm80", "sm90", "sm80-lineinfo", "sm80-G"]


def round_f32(q: Fraction) -> np.float32:
    """The f32 nearest to the exact rational ``q`` (ties to even): an independent fma model."""
    r = np.float32(float(q))
    cands = [r, np.nextafter(r, np.float32(np.inf)), np.nextafter(r, np.float32(-np.inf))]
    def key(c):
        return (abs(Fraction(float(c)) - q), int(np.asarray(c).view(np.uint32)) & 1)
    return min(cands, key=key)


def tree_sum(x: np.ndarray) -> np.ndarray:
    """The CUDA kernels' shared-memory tree: s[t] += s[t + stride], stride halving."""
    while x.shape[1] > 1:
        h = x.shape[1] // 2
        x = x[:, :h] + x[:, h:2 * h]
    return x[:, 0]


def warp_bits(pred: np.ndarray) -> np.ndarray:
    w = pred.reshape(-1, 32).astype(np.uint64)
    return (w << np.arange(32, dtype=np.uint64)).sum(axis=1).astype(np.uint32)


def ulp_distance(got: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """ULPs between two float arrays of one type (monotone integer mapping of the bits)."""
    bits = {np.float32: (np.int32, 0x7FFFFFFF), np.float64: (np.int64, 0x7FFFFFFFFFFFFFFF)}
    it, mask = bits[got.dtype.type]
    def key(x):
        i = x.view(it).astype(object)
        return np.array([v if v >= 0 else -(v & mask) for v in i], dtype=object)
    return np.abs(key(got) - key(ref.astype(got.dtype)))
