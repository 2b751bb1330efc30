"""ldmatrix, stmatrix and movmatrix (PTX ISA 9.0 §9.7.14.5.15-17) on every executor of EXECUTORS,
against tests/models/fragments.py's ldmatrix_layout; and the fragment tables of
ptxvm.machine.fragments against the same independent model."""

from __future__ import annotations

import numpy as np
import pytest

from ptxvm.machine import fragments as F

from models import fragments as M
from models.matrix_harness import EXECUTORS, HEADER, module, register_kernel, vec

COUNT = {"x1": 1, "x2": 2, "x4": 4}


def _kernel(op: str, num: str, trans: bool, generic: bool) -> str:
    n = COUNT[num]
    tr = ".trans" if trans else ""
    sp = "" if generic else ".shared"
    lines = [HEADER, ".visible .entry k(.param .u64 prow, .param .u64 poff, .param .u64 pregs)", "{",
             ".shared .align 16 .b8 tile[512];",
             f"  .reg .b32 %r<{n}>, %t, %i, %w, %o; .reg .b64 %g, %s, %p, %a; .reg .pred %q;",
             "  mov.u32 %t, %tid.x;", "  ld.param.u64 %p, [prow];", "  mov.u32 %i, %t;",
             "IN:", "  setp.ge.u32 %q, %i, 128;", "  @%q bra INDONE;", "  mul.wide.u32 %g, %i, 4;",
             "  mov.u64 %s, tile;", "  add.s64 %s, %s, %g;", "  add.s64 %g, %p, %g;",
             "  ld.global.b32 %w, [%g];", "  st.shared.b32 [%s], %w;", "  add.u32 %i, %i, 32;", "  bra IN;",
             "INDONE:", "  bar.sync 0;",
             "  ld.param.u64 %p, [poff];", "  mul.wide.u32 %g, %t, 4;", "  add.s64 %g, %p, %g;",
             "  ld.global.u32 %o, [%g];", "  cvt.u64.u32 %a, %o;", "  mov.u64 %s, tile;",
             *(["  cvta.shared.u64 %s, %s;"] if generic else []), "  add.s64 %a, %a, %s;",
             "  ld.param.u64 %p, [pregs];", "  mul.wide.u32 %g, %t, %s_bytes;".replace("%s_bytes", str(4 * n)),
             "  add.s64 %g, %p, %g;"]
    if op == "ldmatrix":
        lines.append(f"  ldmatrix.sync.aligned.m8n8.{num}{tr}{sp}.b16 {vec('r', n)}, [%a];")
        lines += [f"  st.global.b32 [%g+{4 * i}], %r{i};" for i in range(n)]
    else:
        lines += [f"  ld.global.b32 %r{i}, [%g+{4 * i}];" for i in range(n)]
        lines.append(f"  stmatrix.sync.aligned.m8n8.{num}{tr}{sp}.b16 [%a], {vec('r', n)};")
        lines += ["  bar.sync 0;", "  ld.param.u64 %p, [prow];", "  mov.u32 %i, %t;", "OUT:",
                  "  setp.ge.u32 %q, %i, 128;", "  @%q bra DONE;", "  mul.wide.u32 %g, %i, 4;", "  mov.u64 %s, tile;",
                  "  add.s64 %s, %s, %g;", "  add.s64 %g, %p, %g;", "  ld.shared.b32 %w, [%s];",
                  "  st.global.b32 [%g], %w;", "  add.u32 %i, %i, 32;", "  bra OUT;", "DONE:"]
    return "\n".join(lines + ["  ret;", "}"]) + "\n"


def _offsets(rng, n):
    """Row addresses: lanes 8i..8i+7 point at a random permutation of the 32 rows of the tile;
    the lanes whose address ldmatrix does not read give a misaligned one (it must be ignored)."""
    off = (rng.permutation(32) * 16).astype(np.uint32)
    off[8 * n:] = 3
    return off


@pytest.mark.parametrize("executor", EXECUTORS)
@pytest.mark.parametrize("num", ["x1", "x2", "x4"])
@pytest.mark.parametrize("trans", [False, True])
@pytest.mark.parametrize("generic", [False, True])
def test_ldmatrix(executor, num, trans, generic):
    rng = np.random.default_rng(COUNT[num] * 4 + trans * 2 + generic)
    n = COUNT[num]
    tile = rng.integers(0, 2**16, (32, 8), dtype=np.uint16)
    off = _offsets(rng, n)
    regs = np.zeros((32, n), np.uint32)
    module(_kernel("ldmatrix", num, trans, generic))["k"](1, 32, (tile.copy(), off, regs), device=executor)
    at = M.ldmatrix_layout(trans)
    for i in range(n):
        mat = tile[off[8 * i:8 * i + 8] // 16]            # matrix i: its rows as lanes 8i.. name them
        lo = mat[at[:, 0, 0], at[:, 0, 1]].astype(np.uint32)
        hi = mat[at[:, 1, 0], at[:, 1, 1]].astype(np.uint32)
        np.testing.assert_array_equal(regs[:, i], lo | (hi << 16))


@pytest.mark.parametrize("executor", EXECUTORS)
@pytest.mark.parametrize("num", ["x1", "x2", "x4"])
@pytest.mark.parametrize("trans", [False, True])
@pytest.mark.parametrize("generic", [False, True])
def test_stmatrix(executor, num, trans, generic):
    rng = np.random.default_rng(100 + COUNT[num] * 4 + trans * 2 + generic)
    n = COUNT[num]
    tile = rng.integers(0, 2**16, (32, 8), dtype=np.uint16)
    off = _offsets(rng, n)
    regs = rng.integers(0, 2**32, (32, n), dtype=np.uint32)
    out = tile.copy()
    module(_kernel("stmatrix", num, trans, generic))["k"](1, 32, (out, off, regs.copy()), device=executor)
    expect = tile.copy()
    at = M.ldmatrix_layout(trans)
    for i in range(n):
        mat = np.zeros((8, 8), np.uint16)
        mat[at[:, 0, 0], at[:, 0, 1]] = regs[:, i] & 0xFFFF
        mat[at[:, 1, 0], at[:, 1, 1]] = regs[:, i] >> 16
        expect[off[8 * i:8 * i + 8] // 16] = mat
    np.testing.assert_array_equal(out, expect)


@pytest.mark.parametrize("executor", EXECUTORS)
def test_movmatrix_transposes_the_warp_fragment(executor):
    rng = np.random.default_rng(5)
    src = rng.integers(0, 2**32, (2, 32, 1), dtype=np.uint32)
    dst = np.zeros_like(src)
    text = register_kernel("movmatrix.sync.aligned.m8n8.trans.b16 %d0, %a0;", [("a", 1, "b32")], [("d", 1, "b32")])
    module(text)["k"](1, 64, (src.copy(), dst), device=executor)
    at = M.ldmatrix_layout(False)
    for w in range(2):
        mat = np.zeros((8, 8), np.uint32)
        mat[at[:, 0, 0], at[:, 0, 1]] = src[w, :, 0] & 0xFFFF
        mat[at[:, 1, 0], at[:, 1, 1]] = src[w, :, 0] >> 16
        t = mat.T
        np.testing.assert_array_equal(dst[w, :, 0], t[at[:, 0, 0], at[:, 0, 1]] | (t[at[:, 1, 0], at[:, 1, 1]] << 16))


@pytest.mark.parametrize("shape,at,bt,ct,dt,sm", M.MMA_CASES, ids=str)
def test_shared_fragment_tables_match_the_isa_formulas(shape, at, bt, ct, dt, sm):
    """ptxvm.machine.fragments (what every executor uses) against the model's formulas, and the
    minimum sm isa/matrix.toml gives the combination."""
    for role, elem in (("a", at), ("b", bt), ("c", ct), ("d", dt)):
        frag = F.fragment("mma", shape, role, elem)
        np.testing.assert_array_equal(frag.coords, M.mma_layout(shape, role, elem))
        assert frag.regs * frag.per_reg == M.mma_layout(shape, role, elem).shape[1]
    assert F.mma_sm(shape, at, bt, ct, dt) <= sm
    np.testing.assert_array_equal(F.ldmatrix_coords(True), M.ldmatrix_layout(True))
    np.testing.assert_array_equal(F.ldmatrix_coords(False), M.ldmatrix_layout(False))


@pytest.mark.parametrize("shape,elem", sorted(M.WMMA_AB), ids=str)
def test_wmma_register_counts_are_the_isa_lists(shape, elem):
    na, nb = M.WMMA_AB[(shape, elem)]
    assert (F.fragment("wmma", shape, "a", elem).regs, F.fragment("wmma", shape, "b", elem).regs) == (na, nb)
    for acc in {"f64": ["f64"], "s8": ["s32"], "u8": ["s32"], "s4": ["s32"], "u4": ["s32"], "b1": ["s32"]}.get(
            elem, ["f32"] + (["f16"] if elem == "f16" else [])):
        assert F.fragment("wmma", shape, "c", acc).regs == M.wmma_c_regs(shape, acc)
