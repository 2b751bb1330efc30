"""The ``ptxvm`` command line, in-process (``ptxvm.cli.main``) and as ``python -m ptxvm``."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import ptxvm
from ptxvm import cli
from ptxvm.frontend.printer import format_module

from models.ptx_samples import BAD, VADD

ROOT = Path(__file__).resolve().parents[2]


SHARED = """\
.version 8.0
.target sm_80
.address_size 64

.shared .align 4 .b8 tile[1024];
.extern .shared .align 16 .b8 dyn[];
.const .align 4 .b8 coeffs[64];

.visible .entry k(.param .u64 k_param_0)
.maxntid 128, 1, 1
{
\t.local .align 8 .b8 __local_depot[32];
\t.reg .b32 \t%r<4>;
\t.reg .b64 \t%rd<3>;

\tmov.u32 \t%r1, tile;
\tmov.u32 \t%r2, dyn;
\tld.const.u32 \t%r3, [coeffs];
\tst.shared.u32 \t[%r1], %r3;
\tret;
}
"""


@pytest.fixture
def vadd(tmp_path: Path) -> Path:
    p = tmp_path / "vadd.ptx"
    p.write_text(VADD)
    return p


@pytest.fixture
def bad(tmp_path: Path) -> Path:
    p = tmp_path / "bad.ptx"
    p.write_text(BAD)
    return p


@pytest.fixture(autouse=True)
def _private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PTXVM_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("PTXVM_NO_CACHE", raising=False)
    monkeypatch.delenv("PTXVM_DEBUG", raising=False)


def run_cli(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    full_env = dict(os.environ)
    full_env["PYTHONPATH"] = str(ROOT) + os.pathsep + full_env.get("PYTHONPATH", "")
    full_env.update(env or {})
    return subprocess.run([sys.executable, "-m", "ptxvm", *args], capture_output=True, text=True,
                          env=full_env, timeout=120)


def no_traceback(text: str) -> bool:
    return "Traceback" not in text and 'File "' not in text


# ------------------------------------------------------------------ check

def test_check_good_file_in_process(vadd: Path, capsys) -> None:
    assert cli.main(["check", str(vadd)]) == 0
    out = capsys.readouterr().out
    assert f"{vadd}: ok" in out
    assert "kernel vadd" in out
    assert ".u64 param_a" in out and ".u32 param_n" in out     # nvcc-style names shortened
    assert "registers:    25 declared" in out
    assert "shared 0 B" in out
    assert re.search(r"instructions: 24 \(ld 6, add 4", out)


def test_check_good_file_subprocess(vadd: Path) -> None:
    r = run_cli("check", str(vadd))
    assert r.returncode == 0, r.stderr
    assert "kernel vadd" in r.stdout
    assert r.stderr == ""


def test_check_bad_file_reports_every_error(bad: Path, capsys) -> None:
    assert cli.main(["check", str(bad)]) == 1
    out = capsys.readouterr().out
    assert re.search(rf"^{re.escape(str(bad))}:27:\d+: error: .*%r9", out, re.M)
    assert re.search(rf"^{re.escape(str(bad))}:40:\d+: error: unknown instruction `addx`", out, re.M)
    assert "    addx.f32" in out and "^" in out          # source line and caret
    assert f"{bad}: 2 errors" in out
    assert no_traceback(out)


def test_check_bad_file_subprocess_has_no_traceback(bad: Path, tmp_path: Path) -> None:
    binary = tmp_path / "binary.ptx"
    binary.write_bytes(b".version 8.0\n\xff\xfe\x00garbage")
    r = run_cli("check", str(bad), str(binary))
    assert r.returncode == 1
    assert no_traceback(r.stdout + r.stderr)
    assert f"{bad}:27:" in r.stdout
    assert f"{binary}:2:1: error: file is not UTF-8 text" in r.stdout
    assert "checked 2 files: 0 ok, 2 with errors" in r.stdout


def test_check_mixed_files_exit_1(vadd: Path, bad: Path, capsys) -> None:
    assert cli.main(["check", str(vadd), str(bad)]) == 1
    out = capsys.readouterr().out
    assert "checked 2 files: 1 ok, 1 with errors" in out


def test_check_quiet(vadd: Path, bad: Path, capsys) -> None:
    assert cli.main(["check", "-q", str(vadd)]) == 0
    assert capsys.readouterr().out == ""
    assert cli.main(["check", "-q", str(bad)]) == 1
    assert "2 errors" in capsys.readouterr().out


def test_check_json_shape(vadd: Path, bad: Path, capsys) -> None:
    assert cli.main(["check", "--json", str(vadd), str(bad)]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2
    good, wrong = map(json.loads, lines)
    for rec in (good, wrong):
        assert {"file", "ok", "errors", "warnings", "kernels"} <= rec.keys()
    assert good["file"] == str(vadd) and good["ok"] is True and good["errors"] == []
    (k,) = good["kernels"]
    assert k["name"] == "vadd"
    assert [(p["name"], p["type"], p["size"]) for p in k["params"]] == [
        ("vadd_param_a", "u64", 8), ("vadd_param_b", "u64", 8), ("vadd_param_c", "u64", 8),
        ("vadd_param_n", "u32", 4)]
    assert k["registers"] == {"b32": 8, "b64": 11, "f32": 4, "pred": 2}
    assert k["instruction_count"] == 24 and k["opcodes"]["ld"] == 6
    assert k["full_opcodes"]["ld.global.f32"] == 2
    assert k["shared_bytes"] == 0 and k["calls_functions"] is False
    assert wrong["ok"] is False and wrong["kernels"] == []
    assert [(e["line"], e["severity"]) for e in wrong["errors"]] == [(27, "error"), (40, "error")]
    assert all({"line", "column", "message"} <= e.keys() for e in wrong["errors"])


def test_check_json_unreadable_file(tmp_path: Path, capsys) -> None:
    missing = tmp_path / "missing.ptx"
    assert cli.main(["check", "--json", str(missing)]) == 1
    rec = json.loads(capsys.readouterr().out)
    assert rec["ok"] is False and "cannot read" in rec["errors"][0]["message"]


def test_check_summary_memory(tmp_path: Path, capsys) -> None:
    p = tmp_path / "shared.ptx"
    p.write_text(SHARED)
    assert cli.main(["check", "--json", str(p)]) == 0
    (k,) = json.loads(capsys.readouterr().out)["kernels"]
    assert k["shared_bytes"] == 1024 and k["shared_vars"] == ["tile"]
    assert k["dynamic_shared"] == ["dyn"]
    assert k["const_bytes"] == 64 and k["local_bytes"] == 32
    assert k["directives"] == {"maxntid": [128, 1, 1]}
    assert cli.main(["check", str(p)]) == 0
    out = capsys.readouterr().out
    assert "shared 1024 B (1.0 KiB) (1 var) + dynamic (dyn)" in out
    assert "directives:   .maxntid 128, 1, 1" in out


def test_check_warnings_are_compiler_style(tmp_path: Path, capsys) -> None:
    p = tmp_path / "new.ptx"
    p.write_text(VADD.replace(".version 8.0", ".version 9.5"))
    for _ in range(2):     # the second run is served from the cache: the warning must still show
        assert cli.main(["check", str(p)]) == 0
        out = capsys.readouterr().out
        assert f"{p}:4: warning: PTX ISA 9.5 is newer" in out
        assert "UserWarning" not in out
    assert cli.main(["check", "--json", str(p)]) == 0
    rec = json.loads(capsys.readouterr().out)
    assert rec["warnings"][0]["line"] == 4 and "9.5" in rec["warnings"][0]["message"]


def test_check_no_cache_flag(vadd: Path, tmp_path: Path, capsys) -> None:
    assert cli.main(["check", "--no-cache", "--json", str(vadd)]) == 0
    assert json.loads(capsys.readouterr().out)["cached"] is False
    assert not (tmp_path / "cache").exists()


# ------------------------------------------------------------------ fmt

def test_fmt_round_trip(vadd: Path, tmp_path: Path, capsys) -> None:
    assert cli.main(["fmt", str(vadd)]) == 0
    text = capsys.readouterr().out
    assert ptxvm.parse(text) == ptxvm.parse(VADD)
    assert text == format_module(ptxvm.parse(VADD))
    # The hand-written file is not canonical; the printed one is.
    assert cli.main(["fmt", "--check", str(vadd)]) == 1
    assert "not canonical" in capsys.readouterr().err
    out = tmp_path / "canon.ptx"
    assert cli.main(["fmt", str(vadd), "-o", str(out)]) == 0
    assert out.read_text() == text
    assert cli.main(["fmt", "--check", str(out)]) == 0
    assert "canonical" in capsys.readouterr().out


def test_fmt_bad_file(tmp_path: Path, capsys) -> None:
    p = tmp_path / "syntax.ptx"
    p.write_text(".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k( {\n}\n")
    assert cli.main(["fmt", str(p)]) == 1
    err = capsys.readouterr().err
    assert f"{p}:4:" in err and "not formatted" in err


def test_fmt_output_needs_one_file(vadd: Path, capsys) -> None:
    assert cli.main(["fmt", str(vadd), str(vadd), "-o", "x.ptx"]) == 2
    assert "one input file" in capsys.readouterr().err


# ------------------------------------------------------------------ isa

def test_isa_listing(capsys) -> None:
    assert cli.main(["isa"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^mov\s+supported\s", out, re.M)
    assert re.search(r"^\d+ opcodes: .*supported", out, re.M)


def test_isa_status_filter_and_json(capsys) -> None:
    assert cli.main(["isa", "--json", "--status", "supported"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["opcodes"] and all(o["status"] == "supported" for o in doc["opcodes"])
    assert {"opcode", "status", "section", "title", "forms"} <= doc["opcodes"][0].keys()
    assert sum(doc["counts"].values()) == doc["total"]


def test_isa_coverage(vadd: Path, tmp_path: Path, capsys) -> None:
    odd = tmp_path / "odd.ptx"
    odd.write_text(BAD)
    assert cli.main(["isa", "--coverage", str(vadd), str(odd), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    by_op = {o["opcode"]: o for o in doc["opcodes"]}
    assert by_op["ld"]["count"] == 12 and by_op["ld"]["status"] == "supported"
    assert by_op["addx.f32"]["status"] == "unknown"
    assert doc["counts"]["unknown"] == 1
    assert cli.main(["isa", "--coverage", str(vadd)]) == 0
    assert "distinct opcodes in 1 file" in capsys.readouterr().out


# ------------------------------------------------------------------ failures

def test_unreadable_files(tmp_path: Path, capsys) -> None:
    missing = tmp_path / "nope.ptx"
    assert cli.main(["check", str(missing)]) == 1
    out = capsys.readouterr().out
    assert f"cannot read {missing}: No such file or directory" in out
    assert cli.main(["check", str(tmp_path)]) == 1
    assert "is a directory" in capsys.readouterr().out
    assert cli.main(["fmt", str(missing)]) == 1
    assert f"cannot read {missing}" in capsys.readouterr().err


def test_internal_error_is_reported_without_traceback(vadd: Path, monkeypatch, capsys) -> None:
    import ptxvm.passes.summary as summary

    def boom(module):
        raise RuntimeError("boom")

    monkeypatch.setattr(summary, "summarize_module", boom)
    assert cli.main(["check", str(vadd)]) == 2
    err = capsys.readouterr().err
    assert "ptxvm: internal error: RuntimeError: boom (please report this with the input file)" in err
    assert no_traceback(err)
    monkeypatch.setenv("PTXVM_DEBUG", "1")
    assert cli.main(["check", str(vadd)]) == 2
    assert "Traceback" in capsys.readouterr().err


def test_ptx_error_and_interrupt(vadd: Path, monkeypatch, capsys) -> None:
    import ptxvm.frontend.cache as cache

    def table_broken(*a, **k):
        raise ptxvm.errors.IsaTableError("instructions.toml: op.x: unknown modifier group 'y'")

    monkeypatch.setattr(cache, "check_file", table_broken)
    assert cli.main(["check", str(vadd)]) == 1
    assert "unknown modifier group" in capsys.readouterr().err

    def interrupted(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(cache, "check_file", interrupted)
    assert cli.main(["check", str(vadd)]) == 130
    assert "interrupted" in capsys.readouterr().err


def test_usage_errors(capsys) -> None:
    assert cli.main([]) == 2
    assert cli.main(["check"]) == 2
    assert cli.main(["frobnicate"]) == 2
    err = capsys.readouterr().err
    assert "usage:" in err and no_traceback(err)


def test_version_and_help(capsys) -> None:
    assert cli.main(["--version"]) == 0
    assert capsys.readouterr().out.splitlines()[0] == f"ptxvm {ptxvm.__version__}"   # then its dependencies
    for cmd in ([], ["check"], ["fmt"], ["isa"]):
        assert cli.main([*cmd, "--help"]) == 0
        assert "examples:" in capsys.readouterr().out


def test_module_entry_point_help() -> None:
    r = run_cli("--help")
    assert r.returncode == 0 and "examples:" in r.stdout and "check" in r.stdout
