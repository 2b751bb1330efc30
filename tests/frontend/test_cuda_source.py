"""CUDA C++ source: ptxvm.RawModule / RawKernel (CuPy's shape) and ``ptxvm run/check FILE.cu``.

Tests that compile need NVRTC (``pip install 'ptxvm[cuda]'``) and skip without it; the
no-compiler and log-parsing tests run everywhere. Expected values: numpy, hand-counted columns.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

import ptxvm
from ptxvm.cli import main
from ptxvm.errors import PtxError, UnsupportedError
from ptxvm.frontend import nvrtc
from ptxvm.frontend.nvrtc import CudaCompileError, NoCudaCompiler, compile_error

needs_nvrtc = pytest.mark.skipif(nvrtc.nvrtc_library() is None,
                                 reason="NVRTC not installed (pip install 'ptxvm[cuda]')")

TEMPLATES = r"""
template <typename T>
__global__ void axpy(T a, const T* x, T* y, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    y[i] = a * x[i] + y[i];
}

namespace ops {
template <typename T, int R>
__global__ void box_sum(const T* x, T* out, int n) {    // out[i] = x[i-R] + ... + x[i+R]
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  T s = 0;
  for (int d = -R; d <= R; ++d) { int j = i + d; if (j >= 0 && j < n) s += x[j]; }
  out[i] = s;
}
}

extern "C" __global__ void iota(int* v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) v[i] = i;
}
"""


@needs_nvrtc
@pytest.mark.parametrize("dtype, expr", [(np.float32, "axpy<float>"), (np.float64, "axpy<double>")])
def test_template_kernels_through_name_expressions(dtype, expr, executor: str) -> None:
    # --fmad=false: a * x + y rounded twice, as numpy computes it (options reach NVRTC).
    mod = ptxvm.RawModule(code=TEMPLATES, options=("--fmad=false",), name_expressions=("axpy<float>", "axpy<double>"))
    n = 1000
    x = np.random.default_rng(3).random(n).astype(dtype)
    y = np.random.default_rng(4).random(n).astype(dtype)
    want = dtype(1.5) * x + y
    mod.get_function(expr)((2,), (128,), (dtype(1.5), x, y, np.int32(n)), device=executor)
    np.testing.assert_array_equal(y, want)


@needs_nvrtc
def test_two_template_arguments_and_a_namespace(executor: str) -> None:
    mod = ptxvm.RawModule(code=TEMPLATES, name_expressions=("ops::box_sum<int, 2>",))
    x = np.arange(50, dtype=np.int32) ** 2
    out = np.zeros(50, np.int32)
    mod["ops::box_sum<int, 2>"]((1,), (64,), (x, out, np.int32(50)), device=executor)
    padded = np.concatenate([np.zeros(2, np.int32), x, np.zeros(2, np.int32)])
    np.testing.assert_array_equal(out, sum(padded[k:k + 50] for k in range(5)))
    assert mod.compiled.lowered["ops::box_sum<int, 2>"] in mod.kernels


@needs_nvrtc
def test_raw_kernel_by_c_name_and_by_template_instance(executor: str) -> None:
    iota = ptxvm.RawKernel(TEMPLATES, "iota")
    v = np.full(40, -1, np.int32)
    iota[2, 32](v, np.int32(37), device=executor)
    np.testing.assert_array_equal(v, np.r_[np.arange(37), [-1, -1, -1]].astype(np.int32))
    axpy = ptxvm.RawKernel(TEMPLATES, "axpy<float>")
    y = np.ones(8, np.float32)
    axpy((1,), (8,), (np.float32(2), np.arange(8, dtype=np.float32), y, np.int32(8)), device=executor)
    np.testing.assert_array_equal(y, 2 * np.arange(8, dtype=np.float32) + 1)
    assert isinstance(axpy, ptxvm.Kernel) and axpy.name == "_Z4axpyIfEvT_PKS0_PS0_i"


@needs_nvrtc
def test_arch_defaults_to_compute_80_and_follows_options() -> None:
    assert ".target sm_80" in ptxvm.RawModule(code=TEMPLATES).ptx
    assert ".target sm_90" in ptxvm.RawModule(code=TEMPLATES, options=("-arch=compute_90",)).ptx
    # __cluster_dims__ does not compile for compute_80 (NVRTC does not say which arch it needs).
    cluster = 'extern "C" __global__ void __cluster_dims__(2, 1, 1) k(int* x) { x[0] = 1; }'
    assert ".target sm_90" in ptxvm.RawModule(code=cluster).ptx
    with pytest.raises(CudaCompileError, match="not supported for this GPU architecture"):
        ptxvm.RawModule(code=cluster, options=("-arch=compute_80",))


BROKEN = 'extern "C" __global__ void f(float* x) {\n  int i = threadIdx.x;\n  x[i] = y * 2.0f;\n}\n'


@needs_nvrtc
def test_compile_error_is_located() -> None:
    with pytest.raises(CudaCompileError) as e:
        ptxvm.RawModule(code=BROKEN)
    (d,) = e.value.diagnostics
    # line 3 is `  x[i] = y * 2.0f;`: `y` is its 10th character.
    assert (d.filename, d.line, d.column) == ("kernel.cu", 3, 10)
    assert d.message == 'identifier "y" is undefined'
    assert str(e.value).splitlines()[1:] == ["      x[i] = y * 2.0f;", "             ^"]
    assert isinstance(e.value, PtxError)


def test_log_lines_become_diagnostics() -> None:
    # NVRTC's log layout (quoted line indented by 2, tabs kept); a warning is not an error.
    log = ('k.cu(2): warning #177-D: variable "q" was declared but never referenced\n  int q;\n      ^\n\n'
           'k.cu(3): error: expected a ";"\n  \treturn 1\n  \t       ^\n\n1 error detected in the compilation of "k.cu".\n')
    err = compile_error(log, "k.cu", "void f() {\nint q;\n\treturn 1\n}", "NVRTC_ERROR_COMPILATION")
    (d,) = err.diagnostics
    assert (d.line, d.column, d.message, d.source_line) == (3, 9, 'expected a ";"', "\treturn 1")
    unlocated = compile_error("nvcc fatal   : Unknown option '-foo'\n", "k.cu", "", "nvcc exited with 1")
    assert "Unknown option '-foo'" in unlocated.message and unlocated.line is None


def test_no_compiler_says_what_to_install(monkeypatch) -> None:
    monkeypatch.setattr(nvrtc, "nvrtc_library", lambda: None)
    monkeypatch.setattr(shutil, "which", lambda name: None)
    with pytest.raises(NoCudaCompiler, match=r"pip install 'ptxvm\[cuda\]'"):
        ptxvm.RawModule(code=TEMPLATES)


def test_unsupported_options_are_refused() -> None:
    with pytest.raises(UnsupportedError, match="jitify"):
        ptxvm.RawModule(code=TEMPLATES, jitify=True)
    with pytest.raises(PtxError, match="one of code="):
        ptxvm.RawModule()


@needs_nvrtc
def test_host_code_without_nvcc_is_explained(monkeypatch) -> None:
    monkeypatch.setattr(shutil, "which", lambda name: None)
    with pytest.raises(CudaCompileError, match="host code, which NVRTC does not compile"):
        ptxvm.RawModule(code=TEMPLATES + "int main() { return 0; }\n")


@needs_nvrtc
def test_cli_check_and_run_a_cu_file(tmp_path: Path, capsys) -> None:
    src = tmp_path / "k.cu"
    src.write_text(TEMPLATES)
    assert main(["check", str(src), "-q"]) == 0
    out = tmp_path / "o.npz"
    assert main(["run", str(src), "-k", "iota", "-g", "1", "-b", "32", "-a", "i32[32]=zeros", "-a", "32",
                 "-o", str(out), "-q"]) == 0
    np.testing.assert_array_equal(np.load(out)["arg0"], np.arange(32, dtype=np.int32))
    bad = tmp_path / "bad.cu"
    bad.write_text(BROKEN)
    capsys.readouterr()
    assert main(["check", str(bad)]) == 1
    text = capsys.readouterr().out
    assert f"{bad}:3:10: error: identifier \"y\" is undefined" in text and "Traceback" not in text
    assert main(["run", str(bad), "-k", "f"]) == 1
    assert f"{bad}:3:10: error" in capsys.readouterr().err


@needs_nvrtc
def test_raw_module_from_a_path(tmp_path: Path) -> None:
    fatbin = Path(__file__).resolve().parents[1] / "fixtures" / "elf" / "frontdoor.fatbin"
    assert "vadd" in ptxvm.RawModule(path=str(fatbin)).kernels
    src = tmp_path / "t.cu"
    src.write_text(TEMPLATES)
    mod = ptxvm.RawModule(path=str(src), name_expressions=("axpy<double>",))
    assert mod.compiled.lowered["axpy<double>"] == "_Z4axpyIdEvT_PKS0_PS0_i"
