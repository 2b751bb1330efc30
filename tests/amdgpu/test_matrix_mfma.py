"""PTX mma / wmma.mma on AMD matrix cores (issue 15): MFMA on gfx908/gfx90a/gfx942, WMMA on
gfx1100, the shared fma lowering on gfx906/gfx1030 (ptxvm/amdgpu/matrix.py, isa/matrix_units.toml).

* The plan (which lane and register every instruction operand comes from) against numpy models
  of the instructions written here from the AMD ISA manuals (CDNA3 ISA §7.1, the 4x4 "16 block"
  MFMA layouts; RDNA3 ISA §7.9, WMMA in wave32) and the PTX fragment layouts of
  tests/models/fragments.py: D must be A @ B + C for every shape and type a unit takes. No LLVM.
* The assembly of the fixtures: v_mfma / v_wmma where the target has matrix cores, none where
  it has not.
* Runs on the AMD ISA emulator equal to numpy and to the interpreter (slow; skipped without the
  emulator or clang): instruction-level kernels of every unit and the wmma fixture.
"""

from __future__ import annotations

import dataclasses
import re
import warnings
from importlib.util import find_spec

import numpy as np
import pytest

import ptxvm
from ptxvm.amdgpu.matrix_plan import NONE, choose, plan
from ptxvm.amdgpu.targets import load_target
from ptxvm.machine import fragments as F

from models import fragments as M
from models.fixtures import FIXTURES

MATRIX_TARGETS = {"gfx908": "v_mfma", "gfx90a": "v_mfma", "gfx942": "v_mfma", "gfx1100": "v_wmma"}
PLAIN_TARGETS = ("gfx906", "gfx1030")
WMMA_CASES = [("m16n16k16", "f16", "f32", "f32"), ("m16n16k16", "f16", "f16", "f16"), ("m32n8k16", "f16", "f32", "f32"),
              ("m8n32k16", "f16", "f16", "f32"), ("m16n16k16", "bf16", "f32", "f32"), ("m32n8k16", "bf16", "f32", "f32"),
              ("m8n32k16", "bf16", "f32", "f32"), ("m16n16k8", "tf32", "f32", "f32"), ("m16n16k16", "s8", "s32", "s32"),
              ("m32n8k16", "u8", "s32", "s32"), ("m8n32k16", "s8", "s32", "s32")]


# ------------------------------------------------------------------ the instructions, from the ISA

def _mfma_4x4(a_op: np.ndarray, b_op: np.ndarray, c: np.ndarray) -> np.ndarray:
    """One 32-lane half of a 4x4 "16 block" MFMA: block b is lanes 4b..4b+3; lane 4b+i holds
    row i of the block's A (its k values) and column i of its B; D row r of the block lies in
    result register r of lane 4b + column."""
    d = c.copy()
    for lane in range(32):
        blk = lane // 4
        for r in range(4):
            d[lane, r] += (a_op[4 * blk + r] * b_op[lane]).sum()
    return d


def _wmma_16x16x16(a_op: np.ndarray, b_op: np.ndarray, c: np.ndarray) -> np.ndarray:
    """WMMA in wave32: lane i (and i + 16, which must hold the same) is row i of A and column i
    of B, k in element order; D[2v + lane // 16][lane % 16] is result register v."""
    assert (a_op[:16] == a_op[16:]).all() and (b_op[:16] == b_op[16:]).all(), "lanes 16..31 must repeat 0..15"
    a, b = a_op[:16], b_op[:16].T                                      # A [16, 16], B [k, col]
    d = c.copy()
    for lane in range(32):
        for v in range(8):
            d[lane, v] += (a[2 * v + lane // 16] * b[:, lane % 16]).sum()
    return d


MODELS = {"mfma": _mfma_4x4, "wmma": _wmma_16x16x16}


def _ptx_layout(op: str, shape: str, role: str, elem: str) -> np.ndarray:
    if op == "mma":
        return M.mma_layout(shape, role, elem)
    f = F.fragment(op, shape, role, elem)             # wmma: ptxvm's own choice (test_matrix_wmma pins it)
    return f.coords


def _gather(values: np.ndarray, src: np.ndarray, frag: F.Fragment) -> np.ndarray:
    """[32, count] operand values from a PTX fragment's per-lane values [32, elements]."""
    lane, reg, sub = src[..., 0], src[..., 1], src[..., 2]
    pad = lane == NONE                                                # a padding zero
    out = values[np.where(pad, 0, lane), np.where(pad, 0, reg * frag.per_reg + sub)]
    return np.where(pad, 0, out)


def _simulate(op, shape, types, unit, rng):
    dtype, atype, btype, ctype = types
    m, n, k = F.shape_mnk(shape)
    lo, hi = (0, 255) if atype == "u8" else (-128, 127) if atype == "s8" else (-3, 3)
    a, b = rng.integers(lo, hi + 1, (m, k)), rng.integers(lo, hi + 1, (k, n))
    c = rng.integers(-1000, 1000, (m, n))
    frags = [F.fragment(op, shape, r, t) for r, t in (("a", atype), ("b", btype), ("c", ctype), ("d", dtype))]
    lay = {r: _ptx_layout(op, shape, r, t) for r, t in (("a", atype), ("b", btype), ("c", ctype), ("d", dtype))}
    held = {r: mat[lay[r][..., 0], lay[r][..., 1]] for r, mat in (("a", a), ("b", b), ("c", c))}
    p = plan(unit.name, op, shape, types)
    model = MODELS["wmma" if unit.call.startswith("wmma") else "mfma"]
    results = []
    for g in range(p.groups):
        acc = np.zeros((32, unit.count("d")), np.int64) if unit.acc == "s32" else _gather(held["c"], p.c[g], frags[2])
        for s in range(p.steps):
            acc = model(_gather(held["a"], p.a[g, s], frags[0]), _gather(held["b"], p.b[g, s], frags[1]), acc)
        results.append(acc)
    res = np.stack(results)                                           # [groups, 32, count]
    d = res[p.d[..., 1], p.d[..., 0], p.d[..., 2]]                     # [32, D elements]
    if unit.acc == "s32":
        d = d + held["c"]
    want = (a @ b + c)[lay["d"][..., 0], lay["d"][..., 1]]
    return d, want


def _matrix_cases():
    cases = [("mma", s, (d, a, b, c)) for (s, a, b, c, d, _sm) in M.MMA_CASES]
    cases += [("wmma", s, (d, e, e, c)) for (s, e, d, c) in WMMA_CASES]
    out = []
    for target in MATRIX_TARGETS:
        units = load_target(target).matrix_units
        for op, shape, types in cases:
            unit = choose(units, types)
            if unit is not None:
                out.append(pytest.param(target, op, shape, types, id=f"{target}-{op}-{shape}-{'.'.join(types)}"))
    return out


@pytest.mark.parametrize("target,op,shape,types", _matrix_cases())
def test_plan_computes_a_times_b_plus_c(target, op, shape, types):
    unit = choose(load_target(target).matrix_units, types)
    got, want = _simulate(op, shape, types, unit, np.random.default_rng(15))
    np.testing.assert_array_equal(got, want)


def test_targets_name_their_matrix_units():
    assert not load_target("gfx906").matrix_units and not load_target("gfx1030").matrix_units
    assert choose(load_target("gfx90a").matrix_units, ("f32", "f16", "f16", "f32")).asm.startswith("v_mfma_f32_4x4x4")
    assert choose(load_target("gfx1100").matrix_units, ("s32", "u8", "s8", "s32")).call == "wmma_iu8"
    # What no unit computes exactly keeps the shared lowering: f64, u8 on CDNA, tf32 on RDNA3.
    assert choose(load_target("gfx942").matrix_units, ("f64", "f64", "f64", "f64")) is None
    assert choose(load_target("gfx942").matrix_units, ("s32", "u8", "u8", "s32")) is None
    assert choose(load_target("gfx1100").matrix_units, ("f32", "tf32", "tf32", "f32")) is None
    assert choose(load_target("gfx908").matrix_units, ("f32", "bf16", "bf16", "f32")) is None


# ------------------------------------------------------------------ assembly

LLVM = find_spec("llvmlite") is not None
needs_llvm = pytest.mark.skipif(not LLVM, reason="llvmlite is not installed")

MMA_KERNEL = """.version 8.7
.target sm_80
.address_size 64
.visible .entry k(.param .u64 p)
{
  .reg .b32 %a<4>, %b<2>; .reg .f32 %c<4>, %d<4>; .reg .b64 %x;
  ld.param.u64 %x, [p];
  ld.global.v4.b32 {%a0, %a1, %a2, %a3}, [%x];
  ld.global.v2.b32 {%b0, %b1}, [%x+16];
  ld.global.v4.f32 {%c0, %c1, %c2, %c3}, [%x+32];
  mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%d0, %d1, %d2, %d3}, {%a0, %a1, %a2, %a3}, {%b0, %b1}, {%c0, %c1, %c2, %c3};
  st.global.v4.f32 [%x+48], {%d0, %d1, %d2, %d3};
  ret;
}
"""


def _asm(source, target) -> str:
    from ptxvm.amdgpu.codegen import compile_unlinked
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return compile_unlinked(source, target).asm()


@needs_llvm
@pytest.mark.parametrize("target", ["gfx90a", "gfx1100"])
def test_one_mma_is_matrix_instructions_not_scratch(target):
    asm = _asm(MMA_KERNEL, target)
    assert len(re.findall(r"^\s*v_(mfma|wmma)", asm, re.M)) == (4 if target == "gfx90a" else 1)
    assert "ds_bpermute_b32" in asm
    assert not re.search(r"^\s*(scratch_|buffer_)(load|store)", asm, re.M), "the operands went through memory"


@needs_llvm
def test_the_generic_lowering_stays_selectable():
    plain = dataclasses.replace(load_target("gfx90a"), matrix_units=())
    assert "v_mfma" not in _asm(MMA_KERNEL, plain)


FIXTURE_FILES = ["nvcc/sm80/tensor_core.ptx", "nvcc/sm80/mma_gemm.ptx", "nvcc/sm80/wmma_gemm.ptx",
                 "triton/matmul_kernel_32x32x32.ptx"]

def _fixture_params():
    out = []
    for path in FIXTURE_FILES:
        for target in [*MATRIX_TARGETS, *PLAIN_TARGETS]:
            marks = [pytest.mark.slow]
            if target == "gfx906" and path == "nvcc/sm80/mma_gemm.ptx":    # test_amdgpu_fixtures LLVM_ABORTS
                marks.append(pytest.mark.xfail(strict=True, raises=ptxvm.CodegenError,
                                               reason="LLVM runs out of registers for the shared lowering"))
            out.append(pytest.param(path, target, marks=marks, id=f"{path.split('/')[-1]}-{target}"))
    return out


@needs_llvm
@pytest.mark.parametrize("path,target", _fixture_params())
def test_fixture_assembly_uses_the_matrix_cores(path, target):
    asm = _asm(FIXTURES / path, target)
    found = set(re.findall(r"^\s*(v_mfma|v_wmma)", asm, re.M))
    if target in PLAIN_TARGETS:
        assert not found
    else:
        assert MATRIX_TARGETS[target] in found
