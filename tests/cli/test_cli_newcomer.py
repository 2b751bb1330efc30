"""The command line a newcomer meets (issue 12): demangled kernel names and the `--kernel`
short form, usage errors with exit code 2, consistent short flags, --version / info, --json,
every --help example runs.

Expected demangled names come from GNU c++filt (recorded in tests/data/demangle_cxxfilt.tsv),
expected limits and messages from ptxvm.limits' documented text and the PTX types' ranges.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from ptxvm import cli
from ptxvm.cli import main
from ptxvm.demangle import base_name, demangle, kernel_matches, short_param

DATA = Path(__file__).parents[1] / "data" / "demangle_cxxfilt.tsv"


def _cxxfilt_rows() -> list[tuple[str, str, str]]:
    rows = []
    for line in DATA.read_text().splitlines():
        if line and not line.startswith("#"):
            kind, mangled, out = line.split("\t")
            rows.append((kind, mangled, out))
    return rows


def test_demangle_matches_cxxfilt():
    rows = _cxxfilt_rows()
    assert len(rows) > 700
    wrong, undecoded = [], []
    for kind, mangled, out in rows:
        expected = None if out == mangled else out       # c++filt could not decode it either
        got = demangle(mangled)
        if got is not None and got != expected:
            wrong.append((mangled, got, expected))
        if got is None and expected is not None and kind in ("entry", "extra"):
            undecoded.append(mangled)
    assert not wrong, wrong[:5]
    assert not undecoded, undecoded[:5]
    # Every kernel name of the fixtures, and most other names c++filt decodes, are decoded.
    names = [r for r in rows if r[0] == "name" and r[2] != r[1]]
    decoded = sum(demangle(m) is not None for _, m, _ in names)
    assert decoded >= 0.97 * len(names), (decoded, len(names))
    # CUB's transform_kernel<...>(..., kernel_arg<...>...) kernels (pack expansions) are among them.
    assert any("transform_kernel" in m for k, m, _ in rows if k == "entry")


def test_demangle_refuses_what_it_cannot_decode():
    for text in ("vector_add", "_Z", "_Z3fo", "_Z10vector_addPKfS9_Pfi", "_Z3foov.part.0", "_ZN3foo", "_Z1fIT_Ev"):
        assert demangle(text) is None, text


def test_short_forms():
    assert base_name("_Z10vector_addPKfS0_Pfi") == "vector_add"
    assert base_name("_ZN2ns6kernelIiEEvPKT_PS1_i") == "kernel"
    assert base_name("add_kernel") == "add_kernel"
    numba = ("_ZN13numba_kernels10vector_addB2v7B92cw51cXTLSUwv1sDUaKthoaNgoKmjgOR3W3CwAkMXLaJtQYkOIgxJU0"
             "gCqOkEJoHkbttqdVhoqlspQGNFHSgJ5BnXagIAE5ArrayIfLi1E1A7mutable7alignedE")
    assert base_name(numba) == "vector_add"
    names = ["_Z10vector_addPKfS0_Pfi", "_Z6kernelIfLi256EEvPT_i", "_Z6kernelIiLi128EEvPT_i", "add_kernel"]
    assert kernel_matches(names, "vector_add") == ["_Z10vector_addPKfS0_Pfi"]
    assert kernel_matches(names, "vector_add(float const*, float const*, float*, int)") == [names[0]]
    assert kernel_matches(names, "kernel") == names[1:3]
    assert kernel_matches(names, "kernel<int, 128>") == [names[2]]
    assert kernel_matches(names, "add_kernel") == ["add_kernel"]
    assert kernel_matches(names, "nope") == []
    assert short_param("_Z10vector_addPKfS0_Pfi", "_Z10vector_addPKfS0_Pfi_param_3") == "param_3"
    assert short_param("_Z10vector_addPKfS0_Pfi", "a") == "a"


# ------------------------------------------------------------------ the command line

ROOT = Path(__file__).resolve().parents[2]
ELEMENTWISE = str(ROOT / "tests" / "fixtures" / "nvcc" / "sm80" / "elementwise.ptx")
SAXPY = ["-k", "saxpy", "-b", "4", "-a", "4", "-a", "2", "-a", "f32[4]=arange", "-a", "f32[4]=ones"]

F16_PTX = """.version 8.0
.target sm_80
.address_size 64
.visible .entry hk(.param .f16 h, .param .u64 out)
{
.reg .b16 %h<2>;
.reg .b64 %rd<2>;
ld.param.b16 %h1, [h];
ld.param.u64 %rd1, [out];
st.global.b16 [%rd1], %h1;
ret;
}
"""

# The limits' own message: the allocation limit and the shared-memory limit in force by default.
LIMIT_TEXT = ("needs 400,000,000,000 bytes (373 GiB), more than ptxvm's limit of 8,589,934,592 bytes (8 GiB) "
              "(allocation; raise it with PTXVM_LIMIT_ALLOCATION=... or ptxvm.limits.configure(allocation=...))")
SHARED_TEXT = ("needs 100,000,000,000 bytes (93.1 GiB), more than ptxvm's limit of 1,073,741,824 bytes (1 GiB) "
               "(shared_per_block; raise it with PTXVM_LIMIT_SHARED_PER_BLOCK=... or "
               "ptxvm.limits.configure(shared_per_block=...))")


@pytest.fixture
def f16_ptx(tmp_path) -> str:
    p = tmp_path / "h.ptx"
    p.write_text(F16_PTX)
    return str(p)


@pytest.fixture(autouse=True)
def _default_limits(monkeypatch):
    from ptxvm import limits
    for k in list(os.environ):
        if k.startswith("PTXVM_LIMIT_"):
            monkeypatch.delenv(k)
    limits.reset()
    yield
    limits.reset()


# Float ranges from IEEE 754: binary32's largest finite value is (2 - 2^-23) * 2^127 = 3.4028235e38,
# binary16's is (2 - 2^-10) * 2^15 = 65504; u8 holds 0..255.
@pytest.mark.parametrize("argv, message", [
    (["-k", "saxpy", "-a", "4", "-a", "1e40", "-a", "f32[4]=zeros", "-a", "f32[4]=zeros"],
     ("ptxvm run: error: --arg #2 '1e40' (`param_1`, .f32): out of range for .f32 (largest finite magnitude "
      "3.4028235e+38)")),
    (["-k", "saxpy", "-a", "4", "-a", "1", "-a", "u8[10]=full(300)", "-a", "f32[4]=zeros"],
     "ptxvm run: error: --arg #3 'u8[10]=full(300)': 300 does not fit uint8 (range 0 to 255)"),
    (["-k", "saxpy", "-a", "4", "-a", "1", "-a", "u8[300]=arange", "-a", "f32[4]=zeros"],
     "ptxvm run: error: --arg #3 'u8[300]=arange': arange counts up to 299, more than uint8 holds (largest 255)"),
    (["-k", "saxpy", "-a", "4", "-a", "1", "-a", "f32[100000000000]=zeros", "-a", "f32[4]=zeros"],
     f"ptxvm run: error: --arg #3 'f32[100000000000]=zeros' {LIMIT_TEXT}"),
    (["-k", "saxpy", "-a", "4", "-a", "1", "-a", "f32[4]=zeros", "-a", "f32[4]=zeros", "--shared", "100000000000"],
     f"ptxvm run: error: --shared 100000000000 {SHARED_TEXT}"),
    (["-k", "saxpy", "-a", "4", "-a", "1", "-a", "f32[4]=zeros", "-a", "f32[4]=zeros", "--shared", "-1"],
     "ptxvm run: error: --shared must be 0 or more bytes, got -1"),
    ([*SAXPY, "--grid", "1,x"], "ptxvm run: error: --grid must be X[,Y[,Z]] positive integers, got '1,x'"),
    ([*SAXPY, "--block", "0"], "ptxvm run: error: --block must be X[,Y[,Z]] positive integers, got '0'"),
    (["-k", "saxpy", "-a", "4", "-a", "2", "-a", "f32[4,]=zeros", "-a", "f32[4]=ones"],
     "ptxvm run: error: --arg #3 'f32[4,]=zeros': the shape must be N or N,M,... non-negative integers"),
    (["-k", "saxpy", "-a", "4x", "-a", "2", "-a", "f32[4]=arange", "-a", "f32[4]=ones"],
     "ptxvm run: error: --arg #1 '4x': not a number, an array spec like f32[16]=zeros, or an .npy/.npz file"),
    (["-k", "saxpy", "-a", "1.5", "-a", "2", "-a", "f32[4]=arange", "-a", "f32[4]=ones"],
     "ptxvm run: error: --arg #1 '1.5' (`param_0`, .u32): an integer parameter takes an integer"),
    (["-k", "saxpy", "-a", "4294967296", "-a", "2", "-a", "f32[4]=arange", "-a", "f32[4]=ones"],
     "ptxvm run: error: --arg #1 '4294967296' (`param_0`, .u32): does not fit .u32 (range 0 to 4294967295)"),
    (["-k", "saxpy", "-a", "f32[4]=arange", "-a", "2", "-a", "f32[4]=arange", "-a", "f32[4]=ones"],
     ("ptxvm run: error: --arg #1 'f32[4]=arange' (`param_0`, .u32): an array is passed as a pointer, which "
      "needs a 64-bit parameter")),
    (["-k", "saxpy", "-a", "4"],
     ("ptxvm run: error: kernel `saxpy` takes 4 arguments (param_0: .u32, param_1: .f32, param_2: .u64, "
      "param_3: .u64), got 1 --arg")),
    ([*SAXPY, "--max-steps", "0"],
     "ptxvm run: error: argument --max-steps: must be at least 1, got 0 (leave it out for the default budget)"),
    ([*SAXPY, "--max-steps", "-5"],
     "ptxvm run: error: argument --max-steps: must be at least 1, got -5 (leave it out for the default budget)"),
])
def test_launch_mistakes_are_usage_errors(argv, message, capsys):
    assert main(["run", ELEMENTWISE, *argv]) == 2
    err = capsys.readouterr().err
    assert message in err, err
    assert "internal error" not in err and "Traceback" not in err


@pytest.mark.parametrize("value", ["70000", "1e10", "-65520"])
def test_f16_scalars_out_of_range(value, f16_ptx, capsys):
    assert main(["run", f16_ptx, "-a", value, "-a", "u16[1]=zeros"]) == 2
    assert (f"ptxvm run: error: --arg #1 '{value}' (`h`, .f16): out of range for .f16 (largest finite "
            "magnitude 65504)") in capsys.readouterr().err


def test_f16_scalars_in_range_are_passed(f16_ptx, tmp_path):
    # 65519 rounds to 65504 (the largest finite binary16), so it is in range; 1.5 is exact: 0x3e00.
    out = tmp_path / "o.npz"
    assert main(["run", f16_ptx, "-a", "65519", "-a", "u16[1]=zeros", "-q", "-o", str(out)]) == 0
    import numpy as np
    assert np.load(out)["arg1"][0] == 0x7BFF
    assert main(["run", f16_ptx, "-a", "1.5", "-a", "u16[1]=zeros", "-q", "-o", str(out)]) == 0
    assert np.load(out)["arg1"][0] == 0x3E00


def test_difftest_and_record_share_the_checks(tmp_path, capsys):
    assert main(["difftest", ELEMENTWISE, "-k", "saxpy", "-a", "4", "-a", "1e40", "-a", "f32[4]=zeros",
                 "-a", "f32[4]=zeros", "-e", "interp,interp"]) == 2
    assert "--arg #2 '1e40' (`param_1`, .f32): out of range for .f32" in capsys.readouterr().err
    assert main(["difftest", ELEMENTWISE, *SAXPY, "-e", "interp,interp", "--max-steps", "0"]) == 2
    assert "argument --max-steps: must be at least 1, got 0" in capsys.readouterr().err
    assert main(["record", ELEMENTWISE, *SAXPY, "--shared", "100000000000", "-o", str(tmp_path / "g.npz")]) == 2
    assert f"--shared 100000000000 {SHARED_TEXT}" in capsys.readouterr().err


# ------------------------------------------------------------------ kernel names

TEMPLATES_PTX = """.version 8.0
.target sm_80
.address_size 64
.visible .entry _Z6kernelIfLi256EEvPT_i(.param .u64 _Z6kernelIfLi256EEvPT_i_param_0, .param .u32 _Z6kernelIfLi256EEvPT_i_param_1)
{
ret;
}
.visible .entry _Z6kernelIiLi128EEvPT_i(.param .u64 _Z6kernelIiLi128EEvPT_i_param_0, .param .u32 _Z6kernelIiLi128EEvPT_i_param_1)
{
ret;
}
"""


def test_run_shows_the_cxx_name_and_short_parameters(capsys):
    assert main(["run", ELEMENTWISE, *SAXPY]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "saxpy(int, float, float const*, float*) [_Z5saxpyifPKfPf]"    # c++filt's spelling
    assert out[1].startswith("saxpy<<<(1,), (4,)>>>: ")
    assert out[2].startswith("  arg2 param_2: float32[4] [0., 1., 2., 3.]")
    assert out[3].startswith("  arg3 param_3: float32[4] [1., 3., 5., 7.]")     # 2 * [0 1 2 3] + 1


def test_check_shows_the_cxx_name(capsys):
    assert main(["check", ELEMENTWISE]) == 0
    out = capsys.readouterr().out
    assert "  kernel vector_add(float const*, float const*, float*, int) [_Z10vector_addPKfS0_Pfi] (line" in out
    assert main(["check", "--json", ELEMENTWISE]) == 0
    k = json.loads(capsys.readouterr().out)["kernels"][0]
    assert (k["name"], k["demangled"], k["short_name"]) == (
        "_Z10vector_addPKfS0_Pfi", "vector_add(float const*, float const*, float*, int)", "vector_add")


@pytest.mark.parametrize("wanted", ["saxpy", "_Z5saxpyifPKfPf", "saxpy(int, float, float const*, float*)"])
def test_kernel_short_form_in_every_command(wanted, tmp_path, capsys):
    launch = ["-b", "4", "-a", "4", "-a", "2", "-a", "f32[4]=arange", "-a", "f32[4]=ones"]
    assert main(["run", ELEMENTWISE, "-k", wanted, *launch, "-q"]) == 0
    g = tmp_path / "g.npz"
    assert main(["record", ELEMENTWISE, "-k", wanted, *launch, "-o", str(g), "-q"]) == 0
    assert main(["difftest", ELEMENTWISE, "-k", wanted, *launch, "-e", "interp,interp", "-q"]) == 0
    assert main(["difftest", ELEMENTWISE, "-k", wanted, "--golden", str(g), "-e", "interp", "-q"]) == 0


def test_unknown_and_ambiguous_kernels_list_candidates(tmp_path, capsys):
    p = tmp_path / "t.ptx"
    p.write_text(TEMPLATES_PTX)
    for cmd in (["run", str(p)], ["difftest", str(p), "-e", "interp,interp"], ["record", str(p), "-o", "x.npz"]):
        assert main([*cmd, "-k", "kernel", "-a", "f32[4]=zeros", "-a", "4"]) == 2
        err = capsys.readouterr().err
        assert (f"--kernel `kernel` is ambiguous in {p}: it matches 2 kernels: "
                "void kernel<float, 256>(float*, int) (_Z6kernelIfLi256EEvPT_i); "
                "void kernel<int, 128>(int*, int) (_Z6kernelIiLi128EEvPT_i); "
                "give the full C++ signature or the PTX name") in err, err
        assert main([*cmd, "-k", "nope"]) == 2
        assert (f"{p} has no kernel named `nope`; its kernels: kernel (_Z6kernelIfLi256EEvPT_i), "
                "kernel (_Z6kernelIiLi128EEvPT_i)") in capsys.readouterr().err
    assert main(["run", str(p), "-k", "kernel<int, 128>", "-a", "i32[4]=zeros", "-a", "4", "-q"]) == 0


# ------------------------------------------------------------------ difftest labels

OOB_PTX = """.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 p)
{
.reg .b64 %rd<3>;
.reg .b32 %r<2>;
ld.param.u64 %rd1, [p];
mov.u32 %r1, 7;
st.global.u32 [%rd1+64], %r1;
ret;
}
"""


def test_difftest_labels_a_reference_fault_as_a_fault(tmp_path, capsys):
    p = tmp_path / "oob.ptx"
    p.write_text(OOB_PTX)
    assert main(["difftest", str(p), "-a", "u32[4]=zeros", "-e", "interp,interp"]) == 1
    out = capsys.readouterr().out
    assert f"  FAULT on interp: {p}:10:1: out-of-bounds global access of 4 bytes" in out
    assert out.count("error:") == 0 and "MISMATCH" not in out
    assert out.splitlines()[-1] == "difftest: FAULT: 1 launch, 0 buffer comparisons, 0 differ, 1 error"
    assert main(["difftest", str(p), "-a", "u32[4]=zeros", "-e", "interp,interp", "--json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["cases"][0]["errors"][0]["kind"] == "fault"


# ------------------------------------------------------------------ --json

def test_run_json(capsys):
    assert main(["run", ELEMENTWISE, *SAXPY, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["ok"] and doc["kernel"] == "_Z5saxpyifPKfPf"
    assert doc["demangled"] == "saxpy(int, float, float const*, float*)"
    assert doc["grid"] == [1] and doc["block"] == [4] and doc["device"] == "interp"
    assert doc["args"][0] == {"index": 0, "param": "param_0", "type": "u32", "kind": "scalar", "value": 4}
    assert doc["args"][3]["values"] == [1.0, 3.0, 5.0, 7.0] and doc["args"][3]["dtype"] == "float32"
    assert doc["stats"]["instructions"] > 0


def test_run_json_errors(tmp_path, capsys):
    assert main(["run", ELEMENTWISE, "-k", "saxpy", "-a", "1e40", "--json"]) == 2
    doc = json.loads(capsys.readouterr().out)
    assert doc["ok"] is False and doc["error"]["usage"] is True and doc["error"]["type"] == "ArgError"
    p = tmp_path / "oob.ptx"
    p.write_text(OOB_PTX)
    assert main(["run", str(p), "-a", "u32[4]=zeros", "--json"]) == 1
    err = json.loads(capsys.readouterr().out)["error"]
    assert err["type"] == "KernelFault" and err["line"] == 10 and err["thread"] == [0, 0, 0]
    assert err["kernel"] == "k" and err["space"] == "global" and f"0x{err['address']:x}" in err["message"]
    assert main(["run", str(tmp_path / "missing.ptx"), "--json"]) == 1
    err = json.loads(capsys.readouterr().out)["error"]
    assert err == {"type": "FileNotFoundError", "message": f"{tmp_path / 'missing.ptx'}: No such file or directory",
                   "usage": False}


def test_record_json(tmp_path, capsys):
    g = tmp_path / "g.npz"
    assert main(["record", ELEMENTWISE, *SAXPY, "-o", str(g), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["ok"] and doc["golden"] == str(g) and doc["kernel"] == "_Z5saxpyifPKfPf" and doc["arrays"] == 2
    assert doc["provenance"]["executor"] == "interp"


# ------------------------------------------------------------------ flags, version, info, cache

def _subparsers(ap):
    import argparse
    for a in ap._actions:
        if isinstance(a, argparse._SubParsersAction):
            return a.choices
    return {}


# Long options that are one meaning under two spellings (singular/plural, alias).
SAME = [{"--executor", "--executors"}, {"--output", "--output-dir"}]


def test_a_short_flag_means_one_thing_in_every_command():
    meaning: dict[str, tuple[str, str]] = {}
    clashes = []
    for name, sp in _subparsers(cli.build_parser()).items():
        for a in sp._actions:
            shorts = [o for o in a.option_strings if not o.startswith("--")]
            longs = {o for o in a.option_strings if o.startswith("--")}
            for s in shorts:
                key = min(longs) if longs else s
                key = next((min(g) for g in SAME if longs & g), key)
                if s in meaning and meaning[s][1] != key:
                    clashes.append(f"{s}: {meaning[s][0]} {meaning[s][1]} vs {name} {key}")
                meaning.setdefault(s, (name, key))
    assert not clashes, clashes


def test_version_lists_the_parts(capsys):
    assert main(["--version"]) == 0
    lines = capsys.readouterr().out.splitlines()
    import platform
    from importlib.metadata import version
    assert lines[0] == "ptxvm 0.1.0"
    assert lines[1] == (f"Python CPython {platform.python_version()}, numpy {version('numpy')}, "
                        f"lark {version('lark')}")
    assert lines[2].startswith(f"llvmlite {version('llvmlite')} (LLVM ")
    assert lines[3].startswith("lld ")
    assert lines[4] == "PTX ISA up to 9.0"
    targets = sorted(p.stem for p in (ROOT / "isa" / "targets").glob("*.toml"))
    assert lines[5] == "AMD targets: " + ", ".join(targets)


def test_info_json(capsys):
    from ptxvm.limits import current
    assert main(["info", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["ptxvm"] == "0.1.0" and doc["ptx_isa"] == "9.0"
    assert doc["limits"]["allocation"] == current().allocation == 8 << 30
    assert set(doc["executors"]) >= {"interp", "cpu"}
    assert {"platform", "cache", "llvm", "lld", "amd_targets"} <= set(doc)
    assert main(["info"]) == 0
    assert "  allocation               8,589,934,592 bytes (8 GiB)" in capsys.readouterr().out


def test_cache_info_and_clear(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PTXVM_CACHE_DIR", str(tmp_path / "c"))
    monkeypatch.delenv("PTXVM_NO_CACHE", raising=False)
    assert main(["check", "-q", ELEMENTWISE]) == 0          # one parse-cache entry
    assert main(["cache", "info", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["dir"] == str(tmp_path / "c") and doc["entries"] >= 1 and doc["bytes"] > 0
    assert main(["cache", "clear"]) == 0
    assert capsys.readouterr().out == f"removed {doc['entries']} cache entr{'y' if doc['entries'] == 1 else 'ies'} " \
                                      f"from {tmp_path / 'c'}\n"
    assert main(["cache", "info"]) == 0
    assert "entries:   0, 0 bytes" in capsys.readouterr().out


def test_isa_help_and_parsed_only_rows(capsys):
    assert main(["isa", "--help"]) == 0
    text = capsys.readouterr().out
    assert "come next" not in text
    assert main(["isa", "--status", "parsed-only"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) > 2 and all(" parsed-only " in line for line in out[1:-1])


# ------------------------------------------------------------------ every --help example runs

# Commands whose examples run here, in this order and in one folder per group (record's
# goldens are what difftest's examples replay). translate's need ld.lld and are its own tests'.
EXAMPLE_GROUPS = [[None], ["check"], ["fmt"], ["isa"], ["run"], ["record", "difftest"], ["info"], ["cache"]]
_SHELL = re.compile(r"[|&;<>*]")


def help_examples(epilog: str) -> list[str]:
    """The commands of an epilog's ``examples:`` block: ``\\``-continued lines joined, the
    description after three spaces or more dropped."""
    block = epilog.split("examples:\n", 1)[1].split("\n\n", 1)[0] if "examples:\n" in epilog else ""
    cmds: list[str] = []
    cont = False
    for line in block.splitlines():
        text = re.split(r"\s{3,}", line.strip(), maxsplit=1)[0]
        if cont:
            cmds[-1] += " " + text.rstrip("\\").strip()
        elif text.startswith("ptxvm "):
            cmds.append(text.rstrip("\\").strip())
        cont = line.rstrip().endswith("\\")
    return cmds


def _epilog(name):
    ap = cli.build_parser()
    return ap.epilog if name is None else _subparsers(ap)[name].epilog


def test_every_command_has_examples():
    names = [None, *_subparsers(cli.build_parser())]
    for name in names:
        assert help_examples(_epilog(name) or ""), f"`ptxvm {name or ''} --help` shows no examples"


@pytest.mark.slow
@pytest.mark.parametrize("group", EXAMPLE_GROUPS, ids=lambda g: "+".join(n or "ptxvm" for n in g))
def test_help_examples_run(group, tmp_path, monkeypatch, capsys):
    (tmp_path / "tests").symlink_to(ROOT / "tests")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PTXVM_CACHE_DIR", str(tmp_path / "cache"))
    bindir = tmp_path / "bin"
    bindir.mkdir()
    shim = bindir / "ptxvm"
    shim.write_text(f"#!/bin/sh\nexec {shlex.quote(sys.executable)} -m ptxvm \"$@\"\n")
    shim.chmod(0o755)
    env = {**os.environ, "PATH": f"{bindir}{os.pathsep}{os.environ['PATH']}", "PYTHONPATH": str(ROOT)}
    for name in group:
        for cmd in help_examples(_epilog(name)):
            if _SHELL.search(cmd.replace("'", "").replace('"', "")) and not cmd.count("'") % 2:
                r = subprocess.run(cmd, shell=True, capture_output=True, text=True, cwd=tmp_path, env=env,
                                   timeout=300, check=False)
                code, out, err = r.returncode, r.stdout, r.stderr
            else:
                code = main(shlex.split(cmd)[1:])
                cap = capsys.readouterr()
                out, err = cap.out, cap.err
            assert code == 0, f"{cmd}\n{err}"
            assert out.strip() or any(tmp_path.iterdir()), cmd
            assert "internal error" not in err, cmd


def test_isa_status_unknown_needs_coverage_files(capsys):
    assert main(["isa", "--status", "unknown"]) == 2
    assert ("ptxvm isa: error: --status unknown lists the opcodes of --coverage files that the table lacks; "
            "give --coverage FILE...") in capsys.readouterr().err
    assert main(["isa", "--status", "unknown", "--coverage", ELEMENTWISE]) == 0


def test_run_on_the_jit_says_steps_are_not_measured() -> None:
    # The JIT runs threads one by one: it has no steps to count, so it shows none ("0 steps" was a lie).
    fixture = Path(__file__).resolve().parents[1] / "fixtures" / "nvcc" / "sm80" / "elementwise.ptx"
    args = ["run", str(fixture), "--kernel", "vector_add", "--grid", "1", "--block", "32", "--arg", "f32[8]=arange",
            "--arg", "f32[8]=arange", "--arg", "f32[8]=zeros", "--arg", "8"]
    cpu = subprocess.run([sys.executable, "-m", "ptxvm", *args, "--device", "cpu"], capture_output=True, text=True)
    assert cpu.returncode == 0, cpu.stderr
    assert "(steps n/a, 1 batch)" in cpu.stdout
    interp = subprocess.run([sys.executable, "-m", "ptxvm", *args, "--device", "interp"], capture_output=True, text=True)
    assert interp.returncode == 0 and " steps, " in interp.stdout and "divergent" in interp.stdout
    js = json.loads(subprocess.run([sys.executable, "-m", "ptxvm", *args, "--device", "cpu", "--json"],
                                   capture_output=True, text=True).stdout)
    assert js["stats"]["steps"] is None and js["stats"]["instructions"] > 0
