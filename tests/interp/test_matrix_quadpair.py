"""mma.sync.aligned.m8n8k4 with .f16 (PTX ISA 9.0 §9.7.14.5.1, sm_70's form) on every executor
of EXECUTORS: the warp's four quad-pair products, each D_q = A_q @ B_q + C_q, for every .row/.col
of A and B and every accumulator pair ptxas accepts, against the independent model in
tests/models/quadpair.py (inputs whose products and sums are exact, so any order agrees)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

import ptxvm
from ptxvm.machine import fragments as F
from ptxvm.testing.ptxgen import GeneratedKernel, check_agreement
from ptxvm.testing.ptxgen.kernel import KERNEL
from ptxvm.testing.ptxgen.tensor import mma_forms, mma_ptx
from ptxvm.testing.ptxgen.values import words

from models import fragments as M
from models import quadpair as Q
from models.matrix_harness import EXECUTORS, exact_values, np_regs, register_kernel, run, vec

WARPS = 2
LAYOUTS = [("row", "col"), ("row", "row"), ("col", "col"), ("col", "row")]
DC = [("f16", "f16"), ("f32", "f16"), ("f32", "f32")]       # (d, c) pairs ptxas 13 accepts


def _rt(elem: str) -> str:
    return "f32" if elem == "f32" else "b32"


def _opcode(al: str, bl: str, dt: str, ct: str) -> str:
    return f"mma.sync.aligned.m8n8k4.{al}.{bl}.{dt}.f16.f16.{ct}"


def _kernel(al: str, bl: str, dt: str, ct: str) -> str:
    nd, nc = (4 if dt == "f16" else 8), (4 if ct == "f16" else 8)
    body = f"{_opcode(al, bl, dt, ct)} {vec('d', nd)}, {vec('a', 2)}, {vec('b', 2)}, {vec('c', nc)};"
    return register_kernel(body, [("a", 2, "b32"), ("b", 2, "b32"), ("c", nc, _rt(ct))], [("d", nd, _rt(dt))])


def _case(al, bl, dt, ct, rng, values=None):
    """(kernel text, arrays, expected D elements [W, 32, 8])."""
    a = values[0] if values else exact_values(rng, "f16", (WARPS, 4, 8, 4))
    b = values[1] if values else exact_values(rng, "f16", (WARPS, 4, 4, 8))
    c = values[2] if values else exact_values(rng, ct, (WARPS, 4, 8, 8))
    d = np.einsum("wqik,wqkj->wqij", a, b) + c
    regs = {}
    for role, elem, mat, lay in (("a", "f16", a, al), ("b", "f16", b, bl), ("c", ct, c, None)):
        el = M.encode(Q.lanes_of(mat, Q.layout(role, elem, lay or "row")), elem)
        regs[role] = np.stack([M.pack(w, elem) for w in el])
    arrays = [np_regs(regs["a"], "b32"), np_regs(regs["b"], "b32"), np_regs(regs["c"], _rt(ct))]
    arrays.append(np.zeros((WARPS, 32, 4 if dt == "f16" else 8), dtype=np.uint32))
    return _kernel(al, bl, dt, ct), arrays, Q.lanes_of(d, Q.layout("d", dt))


def _result(arrays, dt):
    return M.decode(np.stack([M.unpack(w, dt) for w in arrays[-1]]), dt)


@pytest.mark.parametrize("executor", EXECUTORS)
@pytest.mark.parametrize("dt,ct", DC)
@pytest.mark.parametrize("al,bl", LAYOUTS)
def test_quad_pair_products_every_layout_and_accumulator(executor, al, bl, dt, ct):
    rng = np.random.default_rng(hash((al, bl, dt, ct)) & 0xFFFF)
    text, arrays, expect = _case(al, bl, dt, ct, rng)
    run(text, arrays, 32 * WARPS, executor)
    np.testing.assert_array_equal(_result(arrays, dt), expect)


@pytest.mark.parametrize("executor", EXECUTORS)
def test_the_four_products_are_independent(executor):
    """Computation q reads only its own lanes: A_q = (q + 1) * ones, B = C = 0 except B_2 = ones:
    D_2 = 3 * 4 everywhere and the three others stay 0."""
    a = np.ones((WARPS, 4, 8, 4)) * np.arange(1, 5)[None, :, None, None]
    b = np.zeros((WARPS, 4, 4, 8))
    b[:, 2] = 1
    c = np.zeros((WARPS, 4, 8, 8))
    text, arrays, expect = _case("row", "col", "f32", "f32", None, values=(a, b, c))
    run(text, arrays, 32 * WARPS, executor)
    got = _result(arrays, "f32")
    np.testing.assert_array_equal(got, expect)
    q = np.array([Q.computation(lane) for lane in range(32)])
    assert (got[:, q == 2] == 12).all() and (got[:, q != 2] == 0).all()


@pytest.mark.parametrize("executor", EXECUTORS)
def test_f16_accumulator_rounds_per_step(executor):
    """ptxvm's documented rule (isa/instructions.toml, mma notes) for f16 C and D: one f16
    rounding per k in order. C = 2048 (f16 spacing 2) and four products of 1: each step 2049
    ties back to 2048, where the exact 2052 is an f16."""
    a, b = np.ones((WARPS, 4, 8, 4)), np.ones((WARPS, 4, 4, 8))
    c = np.full((WARPS, 4, 8, 8), 2048.0)
    text, arrays, expect = _case("col", "row", "f16", "f16", None, values=(a, b, c))
    run(text, arrays, 32 * WARPS, executor)
    assert (_result(arrays, "f16") == 2048.0).all() and (expect == 2052.0).all()


@pytest.mark.parametrize("role,elem,lay", [("a", "f16", "row"), ("a", "f16", "col"), ("b", "f16", "row"),
                                           ("b", "f16", "col"), ("c", "f16", None), ("c", "f32", None)])
def test_fragment_embedding_matches_the_isa_formulas(role, elem, lay):
    """fragments.py's block-diagonal embedding: (row, col) = the model's (row, col) of
    computation q shifted by 8q along A's rows, B's columns, both of C/D."""
    frag = F.fragment("mma", "m8n8k4", role, elem, lay)
    model = Q.layout(role, elem, lay or "row")
    q, r, c = model[..., 0], model[..., 1], model[..., 2]
    want = {"a": (8 * q + r, c), "b": (r, 8 * q + c), "c": (8 * q + r, 8 * q + c)}[role]
    np.testing.assert_array_equal(frag.coords, np.stack(want, axis=-1))
    assert frag.blocks == 4 and frag.regs == {"a": 2, "b": 2}.get(role, 4 if elem == "f16" else 8)


@pytest.mark.parametrize("executor", EXECUTORS)
def test_an_f16_d_with_an_f32_c_is_refused(executor):
    """ptxas 13: ".dtype must be '.f32' when .ctype is '.f32'" for m8n8k4."""
    text = register_kernel(f"{_opcode('row', 'col', 'f16', 'f32')} {vec('d', 4)}, {vec('a', 2)}, {vec('b', 2)}, "
                           f"{vec('c', 8)};", [("a", 2, "b32"), ("b", 2, "b32"), ("c", 8, "f32")],
                           [("d", 4, "b32")])
    arrays = [np.zeros((1, 32, n), dtype=np.uint32) for n in (2, 2, 8, 4)]
    with pytest.raises(ptxvm.PtxError, match="does not take a .f16 D with a .f32 C") as e:
        run(text, arrays, 32, executor)
    assert "mma.sync" in str(e.value) and e.value.line is not None


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="ptxas not installed")
@pytest.mark.parametrize("sm", [75, 80, 90])
def test_ptxas_accepts_every_kernel_and_refuses_f16_d_with_f32_c(tmp_path, sm):
    """The oracle of legality (ptxas 13 has no sm_70 target; the ISA gives sm_70)."""
    def verdict(text: str) -> subprocess.CompletedProcess:
        src = tmp_path / "k.ptx"
        # the harness's `mad.lo %gid, %gx, %ntid.x, %gid` reads a special register directly, which
        # ptxas refuses (ptxvm accepts it); any register does for the verdict on the mma
        src.write_text(text.replace(".target sm_90", f".target sm_{sm}").replace("%ntid.x", "%gx"))
        return subprocess.run(["ptxas", f"-arch=sm_{sm}", str(src), "-o", str(tmp_path / "k.o")],
                              capture_output=True, text=True)
    for al, bl in LAYOUTS:
        for dt, ct in DC:
            r = verdict(_kernel(al, bl, dt, ct))
            assert r.returncode == 0, r.stderr
    r = verdict(_kernel("row", "col", "f16", "f32"))
    assert r.returncode != 0 and ".dtype must be '.f32'" in r.stderr


FIXTURE = Path(__file__).resolve().parents[1] / "ptx" / "handwritten" / "mma_m8n8k4_f16.ptx"


@pytest.mark.parametrize("executor", EXECUTORS)
def test_handwritten_fixture_computes_four_products(executor):
    """tests/ptx/handwritten/mma_m8n8k4_f16.ptx (lane addresses written by hand from the ISA's
    formulas, .row.row, f32 accumulators): D[q] = A[q] @ B[q] + C[q] for row-major arrays."""
    rng = np.random.default_rng(70)
    a = rng.integers(-3, 4, (4, 8, 4)).astype(np.float16)
    b = rng.integers(-3, 4, (4, 4, 8)).astype(np.float16)
    c = rng.integers(-8, 9, (4, 8, 8)).astype(np.float32)
    d = np.zeros((4, 8, 8), dtype=np.float32)
    module = ptxvm.Module(FIXTURE.read_text())
    module["mma_m8n8k4_f16"](1, 32, (a, b, c, d), device=executor)
    want = np.einsum("qik,qkj->qij", a.astype(np.float64), b.astype(np.float64)) + c
    np.testing.assert_array_equal(d, want)


QUAD_FORMS = [f for f in mma_forms() if f.shape == "m8n8k4" and f.atype == "f16"]


def test_the_fuzzer_draws_every_legal_quad_pair_form():
    got = {(f.layout, f.dtype, f.ctype) for f in QUAD_FORMS}
    assert got == {(f"{al}.{bl}", dt, ct) for al, bl in LAYOUTS for dt, ct in DC}


@pytest.mark.parametrize("form", QUAD_FORMS, ids=lambda f: f.opcode())
def test_quad_pair_forms_agree_on_random_bits(form):
    """Random words (NaN payloads, infinities, subnormals): interp and cpu bit for bit, neither
    refusing the form."""
    ptx, n_in, n_out = mma_ptx(form)
    rng = np.random.default_rng(len(ptx))
    threads = 64
    args = (words(rng, n_in * threads), np.zeros(n_out * threads, dtype=np.uint64),
            np.zeros(1, np.uint64), np.zeros(1, np.uint64), 0)
    gk = GeneratedKernel(ptx, KERNEL, (1, 1, 1), (threads, 1, 1), args, (1,), False, (), None, 0)
    check_agreement(gk, allow_refusal=False)
