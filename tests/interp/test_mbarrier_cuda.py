"""tests/cuda/mbarrier_kernels.cu as nvcc 13 compiled it (tests/fixtures/nvcc/*/mbarrier_kernels.ptx):
cuda::barrier (arrive/wait tokens, arrive_and_drop), cuda::memcpy_async on a barrier (cp.async on
sm_80, cp.async.bulk + expect_tx on sm_90) and raw inline-asm mbarrier + cp.async.bulk (sm_90), on
interp and cpu against numpy models written from the source's comments; translated for the six AMD
targets; the raw kernel (no %globaltimer back-off, which the emulator cannot run) on the AMD ISA
emulator (slow, skipped without it)."""

from __future__ import annotations

import warnings
from functools import lru_cache

import numpy as np
import pytest

import ptxvm
from models.fixtures import FIXTURES
from models.matrix_harness import EXECUTORS

STEM = "mbarrier_kernels"
RNG = np.random.default_rng(2024)


@lru_cache(maxsize=None)
def _module(variant: str) -> ptxvm.Module:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ptxvm.Module.from_file(FIXTURES / "nvcc" / variant / f"{STEM}.ptx")


@lru_cache(maxsize=None)
def _ir(variant: str):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ptxvm.load(FIXTURES / "nvcc" / variant / f"{STEM}.ptx")


def _kernel(variant: str, name: str):
    m = _module(variant)
    return m[next(k for k in m.kernels if name in k)]


def _blocks(x: np.ndarray, b: int) -> np.ndarray:
    return x.reshape(-1, b)


def model(name: str, x: np.ndarray, b: int) -> np.ndarray:
    t = np.arange(b)
    rows = _blocks(x, b).astype(np.int64)
    if name == "barrier_arrive_wait":
        v = rows
        for _ in range(3):
            v = np.roll(v, -1, axis=1) + t
        return v.reshape(-1)
    if name == "barrier_drop":
        h = b // 2
        v = 2 * np.roll(rows, -1, axis=1)
        v[:, :h] += rows[:, (t[:h] + 2) % h]
        return v.reshape(-1)
    if name == "memcpy_async_barrier":
        return (np.roll(_blocks(x, b), -1, axis=1) + np.float32(1)).reshape(-1)
    if name == "raw_bulk_tx":
        return (2 * rows + t).reshape(-1)
    raise KeyError(name)


def _inputs(name: str, n: int):
    if name == "memcpy_async_barrier":
        return RNG.random(n, dtype=np.float32), np.zeros(n, np.float32)
    return RNG.integers(-1000, 1000, n, dtype=np.int32), np.zeros(n, np.int32)


NAMES = ("barrier_arrive_wait", "barrier_drop", "memcpy_async_barrier", "raw_bulk_tx")


def _run(name: str, variant: str, device: str, blocks: int = 2, b: int = 64) -> None:
    x, out = _inputs(name, blocks * b)
    _kernel(variant, name)(blocks, b, (x, out), device=device)
    want = model(name, x, b)
    np.testing.assert_array_equal(out, want.astype(out.dtype))


@pytest.mark.parametrize("executor", EXECUTORS)
@pytest.mark.parametrize("variant", ["sm80", "sm90"])
@pytest.mark.parametrize("name", NAMES)
def test_kernel_matches_its_model(name: str, variant: str, executor: str) -> None:
    _run(name, variant, executor)


@pytest.mark.parametrize("variant", ["sm80-lineinfo", "sm80-G"])
@pytest.mark.parametrize("name", NAMES)
def test_other_builds_on_the_interpreter(name: str, variant: str) -> None:
    _run(name, variant, "interp")


def test_the_sm90_build_uses_the_bulk_copy_engine() -> None:
    """What the sm_90 kernels exercise (so the tests above cover it)."""
    text = (FIXTURES / "nvcc" / "sm90" / f"{STEM}.ptx").read_text()
    for form in ("mbarrier.try_wait.parity.shared::cta.b64", "mbarrier.arrive.expect_tx", "mbarrier.expect_tx",
                 "mbarrier.arrive_drop", "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes",
                 "cp.async.bulk.global.shared::cta.bulk_group", "cp.async.bulk.wait_group.read",
                 "fence.proxy.async.shared::cta"):
        assert form in text, form


# -- AMD -------------------------------------------------------------------------------------------

TARGETS = ("gfx906", "gfx908", "gfx90a", "gfx942", "gfx1030", "gfx1100")


@pytest.mark.lld
@pytest.mark.parametrize("variant", ["sm80", "sm90"])
@pytest.mark.parametrize("target", TARGETS)
def test_translates_for_every_amd_target(target: str, variant: str) -> None:
    from ptxvm.amdgpu import load_target
    from ptxvm.amdgpu.lowering import lift_module
    m = _ir(variant)
    text = lift_module(m, load_target(target))
    for name in m.kernels:
        assert f'define amdgpu_kernel void @"{name}"(' in text


@pytest.mark.slow
@pytest.mark.lld
@pytest.mark.parametrize("target", ["gfx90a", "gfx1100"])
def test_compiles_for_amd(target: str) -> None:
    obj = ptxvm.compile(_ir("sm90"), target=target)
    assert sorted(obj.kernels) == sorted(_ir("sm90").kernels)


def _emu_missing() -> str | None:
    from ptxvm.driver.executors import emu
    return emu.why_unavailable()


@pytest.mark.slow
@pytest.mark.parametrize("target", ["gfx90a", "gfx942", "gfx1100"])
def test_raw_bulk_kernel_on_the_emulator(target: str) -> None:
    """One wave per block (the emulator runs a block's waves one at a time until s_barrier, so
    a wave spinning on another wave's arrival would never end; a counted thread block of one
    wave meets no such wait)."""
    why = _emu_missing()
    if why:
        pytest.skip(f"emu executors unavailable: {why}")
    _run("raw_bulk_tx", "sm90", f"emu:{target}", blocks=2, b=32)
