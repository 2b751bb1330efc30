"""`ptxvm run`: argument specs, outputs, clear errors."""

from __future__ import annotations

import numpy as np
import pytest

from ptxvm.cli import main
from models.fixtures import FIXTURES

ELEMENTWISE = str(FIXTURES / "nvcc" / "sm80" / "elementwise.ptx")


def test_run_vector_add_saves_outputs(tmp_path, capsys):
    out = tmp_path / "out.npz"
    rc = main(["run", ELEMENTWISE, "--kernel", "vector_add", "--grid", "4", "--block", "256",
               "--arg", "f32[1000]=random(seed=1)", "--arg", "f32[1000]=arange", "--arg", "f32[1000]=zeros",
               "--arg", "1000", "-o", str(out)])
    assert rc == 0
    text = capsys.readouterr().out
    assert "thread-instructions" in text and "saved 3 arrays" in text
    z = np.load(out)
    a = np.random.default_rng(1).random(1000).astype(np.float32)
    assert np.array_equal(z["arg2"], a + np.arange(1000, dtype=np.float32))
    assert np.array_equal(z["_Z10vector_addPKfS0_Pfi_param_2"], z["arg2"])


def test_run_reads_npy_and_npz(tmp_path):
    a = np.arange(64, dtype=np.float32)
    np.save(tmp_path / "a.npy", a)
    np.savez(tmp_path / "b.npz", b=np.ones(64, np.float32))
    out = tmp_path / "o.npz"
    assert main(["run", ELEMENTWISE, "-k", "vector_add", "-g", "1", "-b", "64", "-a", str(tmp_path / "a.npy"),
                 "-a", f"{tmp_path / 'b.npz'}:b", "-a", "f32[64]=zeros", "-a", "64", "-o", str(out), "-q"]) == 0
    assert np.array_equal(np.load(out)["arg2"], a + 1)


@pytest.mark.parametrize("args, message", [
    (["--kernel", "nope"], "no kernel named `nope`"),
    (["--kernel", "vector_add", "--arg", "q32[4]=zeros"], "unknown element type `q32`"),
    (["--kernel", "vector_add", "--arg", "f32[4]=bogus"], "unknown generator `bogus`"),
    (["--kernel", "vector_add", "--arg", "banana"], "not a number, an array spec"),
    (["--kernel", "vector_add", "--grid", "0"], "--grid must be X[,Y[,Z]] positive integers"),
    (["--kernel", "vector_add", "--arg", "1"], "takes 4 arguments"),
    ([], "has 8 kernels; choose one with --kernel"),
])
def test_run_argument_errors(args, message, capsys):
    assert main(["run", ELEMENTWISE, *args]) == 2      # usage errors (the help: 2 = usage)
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_run_reports_kernel_faults(tmp_path, capsys):
    ptx = tmp_path / "oob.ptx"
    ptx.write_text(".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k(.param .u64 p)\n{\n"
                   ".reg .b64 %rd<3>;\n.reg .b32 %r<2>;\nld.param.u64 %rd1, [p];\nmov.u32 %r1, 7;\n"
                   "st.global.u32 [%rd1+64], %r1;\nret;\n}\n")
    assert main(["run", str(ptx), "--arg", "u32[4]=zeros"]) == 1
    err = capsys.readouterr().err
    assert "oob.ptx:10:1: error: out-of-bounds global access" in err and "block (0, 0, 0), thread (0, 0, 0)" in err


def test_run_trace_prints_the_chosen_threads_instructions(capsys):
    assert main(["run", str(FIXTURES / "nvcc" / "sm80-lineinfo" / "elementwise.ptx"), "-k", "vector_add",
                 "-g", "2", "-b", "64", "-a", "f32[128]=arange", "-a", "f32[128]=ones", "-a", "f32[128]=zeros",
                 "-a", "128", "--trace", "1:3", "-q"]) == 0
    lines = capsys.readouterr().err.splitlines()
    assert lines and all(l.startswith("trace block (1, 0, 0) thread (3, 0, 0) ") for l in lines)
    assert any("add.f32" in l and "elementwise.cu:" in l for l in lines)
    assert ": ret;" in lines[-1]


def test_run_trace_spec_errors(capsys):
    assert main(["run", ELEMENTWISE, "-k", "vector_add", "--trace", "x", "-a", "0", "-a", "0", "-a", "0",
                 "-a", "0"]) == 2
    assert "expected BLOCK:THREAD" in capsys.readouterr().err
