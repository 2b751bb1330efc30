"""mma.sp and mma.sp::ordered_metadata (PTX ISA 9.0 §9.7.14.6) on every executor of EXECUTORS:
every shape x type form the ISA lists (but .s4/.u4), every selector it defines, both variants,
against the independent model of tests/models/sparse.py: a random 2:4 (tf32 1:2) sparse A, its
metadata in the lanes the selector names (random bits in every other lane, which must be
ignored), D = A @ B + C exactly (exact inputs)."""

from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pytest

import ptxvm
from ptxvm.testing.ptxgen import check_agreement
from ptxvm.testing.ptxgen.tensor import sparse_forms, sparse_kernel

from models import fragments as M
from models import sparse as S
from models.matrix_harness import EXECUTORS, exact_values, lanes_of, np_regs, reg_type, register_kernel, run, vec

WARPS = 2
# (shape, atype, btype, ctype = dtype, sm)
FORMS = [("m16n8k16", "f16", "f16", "f16", 80), ("m16n8k16", "f16", "f16", "f32", 80),
         ("m16n8k32", "f16", "f16", "f16", 80), ("m16n8k32", "f16", "f16", "f32", 80),
         ("m16n8k16", "bf16", "bf16", "f32", 80), ("m16n8k32", "bf16", "bf16", "f32", 80),
         ("m16n8k8", "tf32", "tf32", "f32", 80), ("m16n8k16", "tf32", "tf32", "f32", 80),
         ("m16n8k32", "s8", "s8", "s32", 80), ("m16n8k32", "u8", "s8", "s32", 80),
         ("m16n8k64", "s8", "u8", "s32", 80), ("m16n8k64", "u8", "u8", "s32", 80),
         ("m16n8k64", "e4m3", "e5m2", "f32", 89), ("m16n8k64", "e5m2", "e4m3", "f32", 89)]
CASES = [(f, sel, var) for f in FORMS for sel in S.SELECTORS[(f[0], S.family(f[1]))]
         for var in ("sp", "sp::ordered_metadata")]


def _lean(form, sel, var) -> bool:
    """The default run: each form with its first selector ordered and its last one plain (the
    whole product is marked slow)."""
    sels = S.SELECTORS[(form[0], S.family(form[1]))]
    return (sel, var) in ((sels[0], "sp::ordered_metadata"), (sels[-1], "sp"))


PARAMS = [pytest.param(f, sel, var, marks=() if _lean(f, sel, var) else pytest.mark.slow,
                       id=f"{'-'.join(map(str, f[:4]))}-{sel}-{var}") for f, sel, var in CASES]


def _opcode(var, shape, at, bt, ct, sat=""):
    return f"mma.{var}.sync.aligned.{shape}.row.col{sat}.{ct}.{at}.{bt}.{ct}"


def _sparse_a(rng, shape, at, ordered, pick=None):
    """(full A [W, 16, K] values, fields [W, 16, chunks] metadata fields, stored values). The
    positions of each chunk's stored elements are random (with plain .sp in either order, so
    that decreasing index pairs are run too), or ``pick`` (lo, hi) in every chunk."""
    k = int(shape.split("k")[1])
    width = S.CHUNK[(shape, S.family(at))]
    chunks = k // width
    full = np.zeros((WARPS, 16, k))
    fields = np.zeros((WARPS, 16, chunks), dtype=np.int64)
    vals = exact_values(rng, at, (WARPS, 16, chunks, width // 2))
    vals = np.where(vals == 0, 1, vals)              # stored elements non-zero, as the ISA stores them
    for w in range(WARPS):
        for r in range(16):
            for c in range(chunks):
                if width == 2:
                    p = int(rng.integers(2))
                    fields[w, r, c] = (0b0100, 0b1110)[p]
                    full[w, r, c * 2 + p] = vals[w, r, c, 0]
                    continue
                lo, hi = pick or (int(x) for x in rng.choice(4, 2, replace=False))
                if ordered and lo > hi:
                    lo, hi = hi, lo
                fields[w, r, c] = lo | hi << 2
                full[w, r, c * 4 + lo], full[w, r, c * 4 + hi] = vals[w, r, c, 0], vals[w, r, c, 1]
    return full, fields, vals


def _case(form, sel, var, rng, b=None, c=None, pick=None):
    shape, at, bt, ct, _sm = form
    ordered = var.endswith("ordered_metadata")
    full, fields, vals = _sparse_a(rng, shape, at, ordered, pick)
    (_, k), n = full.shape[1:], 8
    b = exact_values(rng, bt, (WARPS, k, n)) if b is None else b
    c = exact_values(rng, ct, (WARPS, 16, n)) if c is None else c
    d = np.einsum("wik,wkj->wij", full, b) + c
    na = S.a_count(shape, at)
    a_el = np.zeros((WARPS, 32, na))
    for lane in range(32):
        for i in range(na):
            r, ch, slot = S.a_stored(shape, at, lane, i)
            a_el[:, lane, i] = vals[:, r, ch, slot]
    meta = rng.integers(0, 2**32, (WARPS, 32), dtype=np.uint64)         # unread lanes: random bits
    read = set()
    for r in range(16):
        for ch in range(fields.shape[2]):
            lane, bit = S.meta_field(shape, at, sel, r, ch)
            if lane not in read:
                meta[:, lane], read = 0, read | {lane}
            meta[:, lane] |= fields[:, r, ch].astype(np.uint64) << np.uint64(bit)
    bco = np.array([[S.b_layout(shape, bt, lane, i) for i in range(k * n // 32)] for lane in range(32)]) \
        if S.b_layout(shape, bt, 0, 0) is not None else M.mma_layout(shape, "b", bt)
    cco = M.mma_layout("m16n8k16", "c", ct)
    regs = {"a": np.stack([M.pack(w, at) for w in M.encode(a_el, at)]),
            "b": np.stack([M.pack(w, bt) for w in M.encode(lanes_of(b, bco), bt)]),
            "c": np.stack([M.pack(w, ct) for w in M.encode(lanes_of(c, cco), ct)]),
            "e": meta[..., None]}
    counts = {r: regs[r].shape[-1] for r in regs}
    nd = counts["c"]
    rts = {"a": "b32", "b": "b32", "c": reg_type(ct, "c"), "e": "b32", "d": reg_type(ct, "d")}
    body = (f"{_opcode(var, shape, at, bt, ct)} {vec('d', nd)}, {vec('a', counts['a'])}, {vec('b', counts['b'])}, "
            f"{vec('c', nd)}, %e0, {sel};")
    text = register_kernel(body, [(r, counts[r], rts[r]) for r in "abce"], [("d", nd, rts["d"])])
    arrays = [np_regs(regs[r], rts[r]) for r in "abce"] + [np.zeros((WARPS, 32, nd), dtype=np.uint32)]
    return text, arrays, lanes_of(d, cco)


def _result(arrays, ct):
    return M.decode(np.stack([M.unpack(w, ct) for w in arrays[-1]]), ct)


@pytest.mark.parametrize("executor", EXECUTORS)
@pytest.mark.parametrize("form,sel,var", PARAMS)
def test_mma_sp_every_form_selector_and_variant(executor, form, sel, var):
    rng = np.random.default_rng(hash((form, sel, var)) & 0xFFFF)
    text, arrays, expect = _case(form, sel, var, rng)
    run(text, arrays, 32 * WARPS, executor)
    np.testing.assert_array_equal(_result(arrays, form[3]), expect)


F16 = ("m16n8k16", "f16", "f16", "f32", 80)


def _fault(executor: str, interp_message: str) -> str:
    return interp_message if executor == "interp" else "a sparsity metadata field the ISA leaves undefined"


@pytest.mark.parametrize("executor", EXECUTORS)
@pytest.mark.parametrize("var,field", [("sp", 0b0101), ("sp::ordered_metadata", 0b0001)])
def test_undefined_metadata_faults_naming_the_lane(executor, var, field):
    """Equal indices (both variants) and, with ::ordered_metadata, decreasing ones: undefined
    (§9.7.14.6.1, §9.7.14.6.3); the selector-1 lane of group 3 (lane 13) gives one."""
    text, arrays, _ = _case(F16, 1, var, np.random.default_rng(1))
    arrays[3][:, 13, 0] = 0x88888808 | field << 4          # field 1 (bits 4..7) bad, the others 0b1000
    with pytest.raises(ptxvm.KernelFault, match=_fault(executor, f"lane 13's metadata field {field:#06b}")):
        run(text, arrays, 32 * WARPS, executor)


@pytest.mark.parametrize("executor", EXECUTORS)
def test_tf32_fields_other_than_the_two_are_undefined(executor):
    form = ("m16n8k8", "tf32", "tf32", "f32", 80)
    text, arrays, _ = _case(form, 2, "sp::ordered_metadata", np.random.default_rng(4))
    arrays[3][:, 6, 0] = 0x44444448                         # lane 6 (group 1, selector 2): field 0 is 0b1000
    with pytest.raises(ptxvm.KernelFault, match=_fault(executor, "lane 6's metadata field 0b1000")):
        run(text, arrays, 32 * WARPS, executor)


@pytest.mark.parametrize("executor", EXECUTORS)
def test_a_structural_zero_multiplies_nothing(executor):
    """ptxvm's rule (isa/instructions.toml, mma.sp notes): only the stored elements are multiplied.
    Every chunk stores columns 0 and 1, so B's rows 2, 3, 6, 7, ... meet only structural zeros:
    infinities there leave D finite (a dense product with the zeros would give NaN)."""
    rng = np.random.default_rng(5)
    b = exact_values(rng, "f16", (WARPS, 16, 8))
    b[:, 2::4] = np.inf
    b[:, 3::4] = -np.inf
    text, arrays, _ = _case(F16, 0, "sp::ordered_metadata", np.random.default_rng(6), b=b,
                            c=np.zeros((WARPS, 16, 8)), pick=(0, 1))
    run(text, arrays, 32 * WARPS, executor)
    b[:, 2::4] = b[:, 3::4] = 0
    _, _, expect = _case(F16, 0, "sp::ordered_metadata", np.random.default_rng(6), b=b,
                         c=np.zeros((WARPS, 16, 8)), pick=(0, 1))
    got = _result(arrays, "f32")
    assert np.isfinite(got).all()
    np.testing.assert_array_equal(got, expect)


@pytest.mark.parametrize("executor", EXECUTORS)
@pytest.mark.parametrize("op,sel,why", [
    ("mma.sp.sync.aligned.m16n8k32.row.col.f32.bf16.bf16.f32", "2", r"selector in \{0, 1\}, not 2"),
    ("mma.sp.sync.aligned.m16n8k64.row.col.s32.s8.s8.s32", "1", r"selector in \{0\}, not 1"),
    ("mma.sp.sync.aligned.m16n8k16.row.col.f16.f16.f16.f32", "0", "does not take a .f16 D with a .f32 C"),
    ("mma.sp.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", "%e1", "constant sparsity selector"),
])
def test_forms_the_isa_does_not_define_are_located_errors(executor, op, sel, why):
    text = register_kernel(f"{op} {vec('d', 4)}, {vec('a', 4)}, {vec('b', 4)}, {vec('c', 4)}, %e0, {sel};",
                           [("a", 4, "b32"), ("b", 4, "b32"), ("c", 4, "f32"), ("e", 2, "b32")], [("d", 4, "f32")])
    arrays = [np.zeros((1, 32, n), dtype=np.uint32) for n in (4, 4, 4, 2, 4)]
    with pytest.raises(ptxvm.PtxError, match=why) as e:
        run(text, arrays, 32, executor)
    assert "mma.sp" in str(e.value) and e.value.line is not None


@pytest.mark.parametrize("executor", EXECUTORS)
def test_the_s4_forms_are_refused_by_name(executor):
    op = "mma.sp.sync.aligned.m16n8k64.row.col.s32.s4.s4.s32"
    text = register_kernel(f"{op} {vec('d', 4)}, {vec('a', 2)}, {vec('b', 2)}, {vec('c', 4)}, %e0, 0;",
                           [("a", 2, "b32"), ("b", 2, "b32"), ("c", 4, "b32"), ("e", 1, "b32")], [("d", 4, "b32")])
    arrays = [np.zeros((1, 32, n), dtype=np.uint32) for n in (2, 2, 4, 1, 4)]
    with pytest.raises(ptxvm.UnsupportedError, match="s4/.u4"):
        run(text, arrays, 32, executor)


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="ptxas not installed")
def test_ptxas_accepts_every_kernel(tmp_path):
    """ptxas 13 is the oracle of legality: every kernel the tests run assembles (sm_89: the fp8
    forms need it; the others also assemble for sm_80)."""
    rng = np.random.default_rng(0)
    for form, sel, var in CASES:
        text = _case(form, sel, var, rng)[0].replace("%ntid.x", "%gx")      # (the harness's mad.lo)
        src = tmp_path / "k.ptx"
        sm = form[4]
        src.write_text(text.replace(".target sm_90", f".target sm_{sm}"))
        r = subprocess.run(["ptxas", f"-arch=sm_{sm}", str(src), "-o", str(tmp_path / "k.o")],
                           capture_output=True, text=True)
        assert r.returncode == 0, (form, sel, var, r.stderr)


SPARSE_FORMS = sparse_forms()


def test_the_fuzzer_draws_every_form_selector_and_variant():
    got = {(f.shape, f.atype, f.btype, f.ctype, f.selector, f.ordered) for f in SPARSE_FORMS}
    for (shape, at, bt, ct, _sm), sel, var in CASES:
        assert (shape, at, bt, ct, sel, var != "sp") in got


@pytest.mark.slow                  # (the default run's fuzz test draws these forms too)
@pytest.mark.parametrize("form", SPARSE_FORMS, ids=lambda f: f"{f.opcode()}-{f.selector}")
def test_sparse_forms_agree_on_random_bits(form):
    """Random fragments (NaN payloads, infinities, subnormals, integer boundaries) and random
    defined metadata: interp and cpu bit for bit, neither refusing the form."""
    check_agreement(sparse_kernel(form, 64, 11), allow_refusal=False)
