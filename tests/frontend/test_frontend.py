"""The frontend on the fixture corpus: every file parses, verifies and round-trips."""

from __future__ import annotations

import shutil
import subprocess
import warnings
from pathlib import Path

import pytest

import ptxvm
from ptxvm.frontend.printer import format_module
from ptxvm.ir import nodes as ir
from ptxvm.ir.types import ScalarType, StateSpace

from models.fixtures import FIXTURES, PTX_FILES, fixture_id


def _parse(path: Path) -> ir.Module:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # newer .version warnings (numba emits 9.5)
        return ptxvm.parse(path.read_bytes(), filename=str(path))


def test_corpus_is_complete() -> None:
    variants = {p.relative_to(FIXTURES).parts[0] for p in PTX_FILES}
    assert {"nvcc", "numba", "triton"} <= variants
    nvcc_variants = {p.parent.name for p in PTX_FILES if p.relative_to(FIXTURES).parts[0] == "nvcc"}
    assert {"sm80", "sm90", "sm80-lineinfo", "sm80-G"} <= nvcc_variants
    kernels = sum(len(_parse(p).kernels) for p in (FIXTURES / "nvcc" / "sm80").glob("*.ptx"))
    assert kernels >= 40


@pytest.mark.parametrize("path", PTX_FILES, ids=fixture_id)
def test_fixture_parses_verifies_and_round_trips(path: Path) -> None:
    module = _parse(path)
    assert module.kernels, "every fixture file defines at least one kernel"
    printed = format_module(module)
    again = ptxvm.parse(printed, filename=f"{path.name} (printed)")
    assert again == module
    # Printing is a fixed point after one round.
    assert format_module(again) == printed


def test_vector_add_shape() -> None:
    m = _parse(FIXTURES / "nvcc" / "sm80" / "elementwise.ptx")
    k = m.kernels["_Z10vector_addPKfS0_Pfi"]
    assert [(p.space, p.type) for p in k.params] == [
        (StateSpace.PARAM, ScalarType.U64), (StateSpace.PARAM, ScalarType.U64),
        (StateSpace.PARAM, ScalarType.U64), (StateSpace.PARAM, ScalarType.U32)]
    ops = [i.opcode for i in k.body.instructions()]
    assert "ld" in ops and "st" in ops and "add" in ops
    ld = next(i for i in k.body.instructions() if i.opcode == "ld" and i.mod("space") == "global")
    assert ld.types == (ScalarType.F32,)


def test_lineinfo_locations_are_kept() -> None:
    m = _parse(FIXTURES / "nvcc" / "sm80-lineinfo" / "elementwise.ptx")
    files = [i for i in m.items if isinstance(i, ir.FileDirective)]
    locs = [s for f in m.kernels.values() for s in f.body.walk() if isinstance(s, ir.Loc)]
    assert files and locs
    assert all(l.file in {f.index for f in files} for l in locs)


def test_debug_sections_are_kept_verbatim() -> None:
    path = FIXTURES / "nvcc" / "sm80-G" / "elementwise.ptx"
    m = _parse(path)
    sections = [i for i in m.items if isinstance(i, ir.Section)]
    assert {s.name for s in sections} >= {".debug_info", ".debug_abbrev"}
    text = path.read_text()
    assert all(s.body in text for s in sections)
    assert "debug" in m.target


def test_call_prototypes_and_indirect_calls() -> None:
    m = _parse(FIXTURES / "nvcc" / "sm80" / "calls.ptx")
    protos = [s for f in m.functions.values() if f.body for s in f.body.walk() if isinstance(s, ir.CallPrototype)]
    assert protos
    indirect = [i for f in m.functions.values() if f.body for i in f.body.instructions()
                if i.opcode == "call" and any(isinstance(o, ir.Register) for o in i.operands)]
    assert indirect


def test_triton_matmul_has_tensor_core_and_async_copy() -> None:
    m = _parse(FIXTURES / "triton" / "matmul_kernel_64x64x32.ptx")
    ops = {i.full_opcode for f in m.kernels.values() for i in f.body.instructions()}
    assert any(o.startswith("mma.sync.aligned.m16n8k16") for o in ops)
    assert any(o.startswith("ldmatrix") for o in ops)
    assert any(o.startswith("cp.async.cg.shared.global") for o in ops)


def test_newer_version_warns_but_parses() -> None:
    text = ".version 9.9\n.target sm_100\n.address_size 64\n.visible .entry k()\n{\n\tret;\n}\n"
    with pytest.warns(UserWarning, match="newer"):
        m = ptxvm.parse(text)
    assert m.version == "9.9"


_PTXAS = shutil.which("ptxas")
_PTXAS_SAMPLE = [p for p in PTX_FILES if p.parent.name == "sm80"]


def _ptxas(path: Path, target: str, tmp_path: Path) -> subprocess.CompletedProcess:
    return subprocess.run([_PTXAS, f"-arch={target}", str(path), "-o", str(tmp_path / "out.cubin")],
                          capture_output=True, text=True, timeout=300)


def _ptxas_accepts(path: Path, tmp_path: Path) -> None:
    module = _parse(path)
    target = next((t for t in module.target if t.startswith("sm_")), "sm_80")
    original = _ptxas(path, target, tmp_path)
    if original.returncode != 0:
        # e.g. numba's .version 9.5 on a CUDA 13.0 ptxas: nothing to compare against.
        pytest.skip(f"this ptxas rejects the original file too: {original.stderr.strip()[:200]}")
    out = tmp_path / (path.stem + ".ptx")
    out.write_text(format_module(module))
    proc = _ptxas(out, target, tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]


@pytest.mark.skipif(_PTXAS is None, reason="ptxas is not installed")
@pytest.mark.parametrize("path", _PTXAS_SAMPLE[:4], ids=fixture_id)
def test_printed_ptx_is_accepted_by_ptxas(path: Path, tmp_path: Path) -> None:
    _ptxas_accepts(path, tmp_path)


@pytest.mark.slow
@pytest.mark.skipif(_PTXAS is None, reason="ptxas is not installed")
@pytest.mark.parametrize("path", PTX_FILES, ids=fixture_id)
def test_printed_ptx_is_accepted_by_ptxas_whole_corpus(path: Path, tmp_path: Path) -> None:
    _ptxas_accepts(path, tmp_path)
