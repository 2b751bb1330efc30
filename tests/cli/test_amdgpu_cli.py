"""`ptxvm translate`: outputs, statistics, errors and exit statuses."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ptxvm.amdgpu.elf import read_elf
from ptxvm.cli import main

TESTS = Path(__file__).resolve().parents[1]
PROBE = TESTS / "golden" / "amdgpu" / "probe.ptx"
ELEMENTWISE = TESTS / "fixtures" / "nvcc" / "sm80" / "elementwise.ptx"
REFUSED = TESTS / "fixtures" / "nvcc" / "sm80" / "cdp.ptx"      # device-side launches: no HIP equivalent


def test_help_has_examples(capsys):
    assert main(["translate", "--help"]) == 0
    out = capsys.readouterr().out
    assert "examples:" in out and "--arch gfx90a,gfx1030" in out and "gfx942" in out


@pytest.mark.lld
def test_translate_writes_every_output(tmp_path, capsys):
    code = main(["translate", str(PROBE), "--arch", "gfx90a,gfx1030", "-o", str(tmp_path / "out"),
                 "--emit-llvm", "--emit-asm", "--metadata", "--stats"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    names = sorted(p.name for p in (tmp_path / "out").iterdir())
    assert names == sorted(f"probe.{a}.{ext}" for a in ("gfx90a", "gfx1030") for ext in ("hsaco", "ll", "s", "json"))
    for arch, mach in (("gfx90a", 0x3F), ("gfx1030", 0x36)):
        assert read_elf((tmp_path / "out" / f"probe.{arch}.hsaco").read_bytes()).flags & 0xFF == mach
        meta = json.loads((tmp_path / "out" / f"probe.{arch}.json").read_text())
        assert meta["target"] == arch and "vadd" in meta["kernels"]
    assert 'define amdgpu_kernel void @"vadd"' in (tmp_path / "out" / "probe.gfx90a.ll").read_text()
    assert "global_load_dword" in (tmp_path / "out" / "probe.gfx90a.s").read_text()
    out = captured.out
    assert "probe.gfx90a.hsaco: 11 kernels" in out
    assert "waves/SIMD" in out and "vadd" in out and "of 16" in out and "of 8" in out
    assert "[1/2]" in captured.err and "[2/2]" in captured.err        # progress on stderr


@pytest.mark.lld
def test_refused_file_reports_its_line_and_fails(tmp_path, capsys):
    code = main(["translate", str(REFUSED), str(ELEMENTWISE), "--arch", "gfx90a", "-o", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 1
    assert (f"{REFUSED}:114:2: error: `call.uni (retval0), __cudaCDP2GetParameterBufferV2, (param0, param1, "
            "param2, param3);` calls `__cudaCDP2GetParameterBufferV2`") in err
    assert not (tmp_path / "elementwise.gfx90a.hsaco").exists()      # stopped at the first failure


@pytest.mark.lld
def test_keep_going_and_json(tmp_path, capsys):
    code = main(["translate", str(REFUSED), str(ELEMENTWISE), "--arch", "gfx90a", "-o", str(tmp_path),
                 "--keep-going", "--json"])
    cap = capsys.readouterr()
    assert code == 1
    summary = json.loads(cap.out)
    assert summary["failed"] == 1
    ok = [r for r in summary["results"] if r["ok"]]
    assert [Path(r["file"]).name for r in ok] == ["elementwise.ptx"]
    assert ok[0]["kernels"]["_Z10vector_addPKfS0_Pfi"]["vgprs"] > 0
    assert (tmp_path / "elementwise.gfx90a.hsaco").is_file()


@pytest.mark.parametrize("argv, message", [
    (["--arch", "gfx9"], "unknown --arch gfx9; known targets: gfx1030"),
    (["--arch", ","], "unknown --arch"),
])
def test_usage_errors_exit_2(tmp_path, capsys, argv, message):
    assert main(["translate", str(ELEMENTWISE), "-o", str(tmp_path), *argv]) == 2
    assert message in capsys.readouterr().err


def test_same_stem_twice_is_a_usage_error(tmp_path, capsys):
    other = tmp_path / "elementwise.ptx"
    other.write_text(ELEMENTWISE.read_text())
    assert main(["translate", str(ELEMENTWISE), str(other), "--arch", "gfx90a", "-o", str(tmp_path)]) == 2
    assert "would write the same outputs" in capsys.readouterr().err


@pytest.mark.lld
def test_missing_file_and_bad_ptx(tmp_path, capsys):
    assert main(["translate", str(tmp_path / "nope.ptx"), "--arch", "gfx90a", "-o", str(tmp_path)]) == 1
    assert "nope.ptx" in capsys.readouterr().err
    bad = tmp_path / "bad.ptx"
    bad.write_text(".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k()\n{\n\tfrobnicate;\n}\n")
    assert main(["translate", str(bad), "--arch", "gfx90a", "-o", str(tmp_path)]) == 1
    assert "bad.ptx:6" in capsys.readouterr().err
