"""The forms of issue 14 (cvt to/from the narrow float formats, cvt.rs.bf16x2, cvt.pack, lop3 d|p,
setp/set on f16x2/bf16x2) are in the fuzzer's drawable set, and kernels made only of them, on pool
registers holding the generator's input values, agree bit for bit on interp and cpu; each is
written as ptxas 13.0 accepts it (checked when ptxas is installed)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from ptxvm.testing.ptxgen import BLOCKS, GRIDS, build_kernel, check_agreement
from ptxvm.testing.ptxgen.program import POOL, Imm, Inst, Layout
from ptxvm.testing.ptxgen.kernel import render_kernel
from ptxvm.testing.ptxgen.strategies import _arith

PTXAS = shutil.which("ptxas")

FUZZ = settings(deadline=None, derandomize=True, database=None, print_blob=False,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

NARROW_FORMS = ("fp8-from-f32", "fp8-from-half", "half-from-fp8", "ue8m0-from-f32", "bf16x2-from-ue8m0",
                "pack-x2-rs")


def _new(v) -> bool:
    return (v.opcode == "cvt.pack" or (v.opcode == "lop3" and v.form == "boolop")
            or (v.opcode == "cvt" and v.form in NARROW_FORMS)
            or (v.opcode in ("setp", "set") and any(t in ("f16x2", "bf16x2") for t in v.types)))


def _usable() -> list:
    _, by, _ = _arith()
    return [(v, combos) for forms in by.values() for v, combos in forms if _new(v)]


def test_the_fuzzer_draws_every_new_form() -> None:
    keys = {v.key for v, _ in _usable()}
    want = {f"cvt:fp8-from-f32:{t}x2.f32" for t in ("e4m3", "e5m2", "e2m3", "e3m2", "e2m1")}
    want |= {f"cvt:half-from-fp8:f16x2.{t}x2" for t in ("e4m3", "e5m2", "e2m3", "e3m2", "e2m1")}
    want |= {"cvt:fp8-from-half:e4m3x2.f16x2", "cvt:fp8-from-half:e5m2x2.f16x2", "cvt:ue8m0-from-f32:ue8m0x2.f32",
             "cvt:ue8m0-from-f32:ue8m0x2.bf16x2", "cvt:bf16x2-from-ue8m0:bf16x2.ue8m0x2", "cvt:pack-x2-rs:bf16x2.f32",
             "cvt.pack:16:u16.s32", "cvt.pack:16:s16.s32", "cvt.pack:8:u8.s32.b32", "cvt.pack:8:s8.s32.b32",
             "cvt.pack:subbyte:s32.b32", "lop3:boolop:b32", "setp:half:f16x2", "setp:half:bf16x2",
             "set:half:f16x2.f16x2", "set:half:u32.bf16x2"}
    assert want <= keys, sorted(want - keys)
    assert "cvt:pack-x2-rs:f16x2.f32" not in keys          # refused by design (refusals.py)


@st.composite
def _new_form_kernels(draw):
    usable = _usable()
    chunks = []
    for _ in range(draw(st.integers(4, 14))):
        v, combos = usable[draw(st.integers(0, len(usable) - 1))]
        combo = combos[draw(st.integers(0, len(combos) - 1))]
        args = tuple(Imm(draw(st.integers(o.lo or 0, o.hi if o.hi is not None else 255))) if o.role == "imm"
                     else draw(st.integers(0, POOL[o.cls] - 1)) for o in v.operands)
        pair = draw(st.integers(0, POOL["p"] - 1)) if v.pair == "req" else None
        chunks.append(Inst(v, combo, args, pair=pair))
    layout = Layout(draw(st.sampled_from(GRIDS)), draw(st.sampled_from(BLOCKS)))
    return build_kernel(tuple(chunks), layout, draw(st.integers(0, 2**32 - 1)))


@settings(FUZZ, max_examples=30)
@given(_new_form_kernels())
def test_kernels_of_the_new_forms_agree(gk) -> None:
    check_agreement(gk, allow_refusal=False)


def _ptxas(ptx: str, arch: str) -> subprocess.CompletedProcess:
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "k.ptx"
        path.write_text(ptx)
        return subprocess.run([PTXAS, f"-arch={arch}", str(path), "-o", os.devnull], capture_output=True, text=True)


LOWER = {100: "sm_90", 90: "sm_89", 89: "sm_80"}


@pytest.mark.skipif(PTXAS is None, reason="ptxas is not installed")
def test_generated_new_forms_are_what_ptxas_accepts_at_their_target() -> None:
    """Each new template as the generator writes it (one instruction, pool registers, its .b8
    operands through %t8, sm_100a where the form is arch-specific) assembles with ptxas at the
    kernel's .target, and the forms above sm_80 fail one architecture lower."""
    layout = Layout((1, 1, 1), (32, 1, 1))
    for v, combos in _usable():
        for c in combos[:2]:
            args = tuple(Imm(o.lo or 0) if o.role == "imm" else 0 for o in v.operands)
            ptx, _, sm = render_kernel([Inst(v, c, args, pair=0 if v.pair == "req" else None)], layout)
            target = re.search(r"\.target (sm_\w+)", ptx).group(1)
            r = _ptxas(ptx, target)
            assert r.returncode == 0, (v.text(c), target, r.stderr[:300])
            if sm in LOWER:
                low = re.sub(r"\.target sm_\w+", f".target {LOWER[sm]}", ptx)
                assert _ptxas(low, LOWER[sm]).returncode != 0, (v.text(c), LOWER[sm])
