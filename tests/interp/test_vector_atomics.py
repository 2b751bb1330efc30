"""Vector atomics (sm_90, PTX ISA §9.7.13.5): `atom/red.global.v2/.v4.f32.add/min/max` and the
`.v2/.v4/.v8` half forms are one atomic per element at a + i*size (atomicity per element only),
on the interpreter and the host JIT alike, bit for bit; the AMD targets translate them as a loop
of scalar atomics. The expected values come from a numpy model that applies the threads in
thread order, element by element, with the ISA's rounding (round to nearest even)."""

from __future__ import annotations

import numpy as np
import pytest

import ptxvm

HEAD = ".version 8.6\n.target sm_90\n.address_size 64\n"
SLOTS = 4          # threads t and t + 4k update the same vector


def _kernel(op: str, ty: str, width: int, reg: str, red: bool) -> str:
    n = width
    d = ", ".join(f"%d{i}" for i in range(n))
    v = ", ".join(f"%v{i}" for i in range(n))
    loads = "\n".join(f"\tld.global.{ty} %v{i}, [%rd5+{i * SIZE[ty]}];" for i in range(n))
    stores = "\n".join(f"\tst.global.{ty} [%rd6+{i * SIZE[ty]}], %d{i};" for i in range(n))
    body = (f"\tred.global.v{n}.{ty}.{op} [%rd4], {{{v}}};" if red else
            f"\tatom.global.v{n}.{ty}.{op} {{{d}}}, [%rd4], {{{v}}};\n{stores}")
    return HEAD + f""".visible .entry k(.param .u64 mem, .param .u64 src, .param .u64 old)
{{
	.reg .u32 %r<4>;
	.reg .u64 %rd<8>;
	.reg .{reg} %v<8>;
	.reg .{reg} %d<8>;
	ld.param.u64 %rd1, [mem];
	ld.param.u64 %rd2, [src];
	ld.param.u64 %rd3, [old];
	mov.u32 %r1, %tid.x;
	and.b32 %r2, %r1, {SLOTS - 1};
	mul.wide.u32 %rd4, %r2, {n * SIZE[ty]};
	add.u64 %rd4, %rd1, %rd4;
	mul.wide.u32 %rd5, %r1, {n * SIZE[ty]};
	add.u64 %rd6, %rd3, %rd5;
	add.u64 %rd5, %rd2, %rd5;
{loads}
{body}
	ret;
}}
"""


SIZE = {"f32": 4, "f16": 2, "bf16": 2, "f16x2": 4, "bf16x2": 4}


def _f32_model(op, cur, v):
    with np.errstate(all="ignore"):
        if op == "add":
            return np.float32(cur + v)
        return np.float32(np.fmin(cur, v) if op == "min" else np.fmax(cur, v))


def _f16_model(op, cur, v):
    # f16 add: the exact sum of two f16s fits a float64, rounded once to f16 (round to nearest even)
    a, b = np.float64(np.uint16(cur).view(np.float16)), np.float64(np.uint16(v).view(np.float16))
    r = a + b if op == "add" else (min(a, b) if op == "min" else max(a, b))
    return np.float16(r).view(np.uint16)


def model(op: str, ty: str, width: int, threads: int, src: np.ndarray, red: bool):
    mem = np.zeros((SLOTS, width), dtype=src.dtype)
    old = np.zeros_like(src)
    f = _f32_model if ty == "f32" else _f16_model
    for t in range(threads):              # thread order, then element order
        for i in range(width):
            s = t % SLOTS
            old[t, i] = mem[s, i]
            mem[s, i] = f(op, mem[s, i], src[t, i])
    return mem, old


CASES = [("add", "f32", 2, False), ("add", "f32", 4, False), ("min", "f32", 2, False),
         ("max", "f32", 4, False), ("add", "f32", 4, True), ("max", "f32", 2, True),
         ("add", "f16", 2, False), ("add", "f16", 8, False), ("max", "f16", 4, False)]


def _src(ty: str, width: int, threads: int) -> np.ndarray:
    rng = np.random.default_rng(14)
    if ty == "f32":
        # Sums that round: the thread order the model and the executors share is visible.
        return rng.standard_normal((threads, width)).astype(np.float32) * np.float32(1e3)
    return rng.standard_normal((threads, width)).astype(np.float16).view(np.uint16)


@pytest.mark.parametrize("op, ty, width, red", CASES, ids=[f"{'red' if c[3] else 'atom'}-v{c[2]}-{c[1]}-{c[0]}"
                                                           for c in CASES])
def test_vector_atomic(executor: str, op: str, ty: str, width: int, red: bool) -> None:
    threads = 64
    ptx = _kernel(op if ty == "f32" else f"{op}.noftz", ty, width, "f32" if ty == "f32" else "b16", red)
    src = _src(ty, width, threads)
    mem = ptxvm.to_device(np.zeros((SLOTS, width), dtype=src.dtype))
    old = ptxvm.to_device(np.zeros_like(src))
    ptxvm.Module(ptx)["k"]((1,), (threads,), (mem, ptxvm.to_device(src), old), device=executor)
    want_mem, want_old = model(op, ty, width, threads, src, red)
    np.testing.assert_array_equal(mem.copy_to_host().view(np.uint32 if ty == "f32" else np.uint16),
                                  want_mem.view(np.uint32 if ty == "f32" else np.uint16))
    if not red:
        np.testing.assert_array_equal(old.copy_to_host().view(np.uint32 if ty == "f32" else np.uint16),
                                      want_old.view(np.uint32 if ty == "f32" else np.uint16))


def test_vector_atomic_needs_a_vector_of_its_width() -> None:
    bad = HEAD + """.visible .entry k(.param .u64 mem)
{
	.reg .u64 %rd1;
	.reg .f32 %f<4>;
	ld.param.u64 %rd1, [mem];
	atom.global.v2.f32.add %f1, [%rd1], %f2;
	ret;
}
"""
    with pytest.raises(ptxvm.PtxError, match="2-element vector"):
        ptxvm.Module(bad)


@pytest.mark.lld
@pytest.mark.parametrize("target", ["gfx906", "gfx908", "gfx90a", "gfx942", "gfx1030", "gfx1100"])
def test_vector_atomics_translate_for_amd(target: str) -> None:
    for op, ty, width, red in CASES:
        ptx = _kernel(op if ty == "f32" else f"{op}.noftz", ty, width, "f32" if ty == "f32" else "b16", red)
        assert ptxvm.compile(ptx, target=target).kernels == ["k"]
