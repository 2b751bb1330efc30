"""numba's front door (issue 18, item 1): ``@ptxvm.numba.jit`` kernels in the style of numba's CUDA
documentation on every CPU executor against numpy models, the ABI of every argument kind (any
layout, DeviceArrays, scalars, tuples), per-signature compilation, ``install()``, the executor
choice, and clear ptxvm errors for what the front door cannot do. Skips without numba."""

from __future__ import annotations

import copy
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("numba")
pytest.importorskip("numba.cuda")

import ptxvm  # noqa: E402
from ptxvm.errors import LaunchError  # noqa: E402
from ptxvm.numba import NumbaError, jit  # noqa: E402

from numba import cuda  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "python_kernels"))
from numba_doc.kernels import CASES  # noqa: E402

N = 300             # threads: small, the default run's share stays a few seconds per executor
# Cases of the default run on every executor; the rest run with -m slow (and all on interp).
FAST = {"vadd", "shared_matmul", "atomic_histogram", "warp_shuffle_sum", "array_2d_strided_views",
        "array_3d", "device_function", "dynamic_shared_reverse", "complex128", "tuple_and_bool_args"}


def _equal(got, expected, rtol: float) -> bool:
    if isinstance(expected, np.ndarray):
        if got.shape != expected.shape or got.dtype != expected.dtype:
            return False
        return np.allclose(got, expected, rtol=rtol, atol=0) if rtol else np.array_equal(got, expected)
    if isinstance(expected, tuple):
        return all(_equal(g, e, rtol) for g, e in zip(got, expected))
    return got == expected


def _run_case(case, executor: str, n: int = N) -> None:
    args = case.make(np.random.default_rng(18), n)
    expected = case.model(copy.deepcopy(args))
    case.kernel.with_device(executor)[case.config(args)](*args)
    for i, (got, want) in enumerate(zip(args, expected)):
        assert _equal(got, want, case.rtol), f"{case.name}: argument {i} differs from the numpy model"


def _params():
    for c in CASES:
        marks = () if c.name in FAST else pytest.mark.slow
        yield pytest.param(c, id=c.name, marks=marks)


@pytest.mark.parametrize("case", list(_params()))
def test_doc_kernel_matches_numpy(case, executor):
    """Each documentation-style kernel leaves its arguments as the numpy model says, bit-exact
    (the float64 math case within 1e-13 relative: libdevice's sin/exp are within 2 ulp)."""
    _run_case(case, executor)


def test_at_least_fifteen_doc_kernels():
    assert len({c.kernel.py_func for c in CASES}) >= 15


# -- the ABI: layouts, DeviceArrays, scalars ----------------------------------------------------

@jit
def _affine2d(x, out, k):
    i, j = cuda.grid(2)
    if i < x.shape[0] and j < x.shape[1]:
        out[i, j] = x[i, j] * k + i * 10 + j


def _affine_model(x, k):
    i, j = np.indices(x.shape)
    return x * k + i * 10 + j


@pytest.mark.parametrize("view", ["C", "F", "step", "reversed", "transposed"])
def test_any_layout_in_and_out(view, executor):
    """Inputs and outputs in C, F, stepped, negatively strided and transposed layouts: the kernel
    indexes them with their own strides, and writes land in the viewed elements only."""
    base = np.arange(7 * 12, dtype=np.int64).reshape(7, 12)
    x = {"C": base, "F": np.asfortranarray(base), "step": base[::2, 1::3], "reversed": base[::-1, ::-2],
         "transposed": base.T}[view]
    outbase = np.full((x.shape[0] * 2, x.shape[1] * 3), -1, np.int64)
    pick = (slice(None, None, 2), slice(None, None, 3)) if view != "reversed" else \
        (slice(None, None, -2), slice(None, None, -3))
    out = outbase[pick]
    _affine2d.with_device(executor)[(1, 1), (16, 16)](x, out, -3)
    assert np.array_equal(out, _affine_model(x, -3))
    untouched = np.ones_like(outbase, bool)
    untouched[pick] = False
    assert (outbase[untouched] == -1).all()


def test_device_arrays_and_compile_once_per_signature(executor):
    """ptxvm.to_device arrays work as numba device arrays; a second launch with the same argument
    types reuses the compiled kernel, other types compile a second signature."""
    k = jit(device=executor)(_affine2d.py_func)        # its own compile cache
    x = np.arange(20, dtype=np.int64).reshape(4, 5)
    dx, dout = ptxvm.to_device(x), ptxvm.to_device(np.zeros((4, 5), np.int64))
    k[1, (8, 8)](dx, dout, 2)
    assert np.array_equal(dout.copy_to_host(), _affine_model(x, 2))
    before = len(k.overloads)
    k[1, (8, 8)](dx, dout, 5)
    assert len(k.overloads) == before
    k[1, (8, 8)](x.astype(np.float32), np.zeros((4, 5), np.float32), np.float32(0.5))
    assert len(k.overloads) == before + 1


def test_scalars_wrap_as_their_numba_type(executor):
    """Negative and wide ints, uint8, float16 and bool scalars keep their values (numba declares
    integer params .u<N>: a negative int goes as its two's complement)."""
    @jit(device=executor)
    def k(out, a, b, c, h, flag):
        out[0] = a
        out[1] = b
        out[2] = c
        out[3] = h
        out[4] = 1 if flag else 0
    out = np.zeros(5, np.float64)
    k[1, 1](out, np.int32(-7), -(2 ** 40), np.uint8(250), np.float16(1.5), False)
    assert out.tolist() == [-7.0, float(-(2 ** 40)), 250.0, 1.5, 0.0]


def test_explicit_signature_compiles_eagerly_and_converts(executor):
    """jit("void(float32[:], int32)") compiles when defined; an int64 scalar converts to int32."""
    @jit("void(float32[:], int32)", device=executor)
    def fill(a, v):
        i = cuda.grid(1)
        if i < a.size:
            a[i] = v
    assert len(fill.overloads) == 1
    a = np.zeros(40, np.float32)
    fill[1, 64](a, 9)
    assert (a == 9).all() and len(fill.overloads) == 1
    with pytest.raises(LaunchError, match=r"compiled for \(array\(float32, 1d, A\), int32\)"):
        fill[1, 64](np.zeros(4, np.int16), 1)


# -- executors and install() --------------------------------------------------------------------

def test_ptxvm_device_env_and_jit_device_choose_the_executor(monkeypatch):
    """PTXVM_DEVICE picks the executor when jit names none; jit(device=...) wins over it."""
    from ptxvm.driver import executors
    seen = []
    interp = executors.get("interp")
    executors.register(executors.Executor("numbatest", "records launches", interp.capabilities,
                                          lambda req: seen.append(req.kernel.name) or interp.launch(req)))
    try:
        @jit
        def k(a):
            a[cuda.grid(1)] = 5
        a = np.zeros(4, np.int32)
        monkeypatch.setenv("PTXVM_DEVICE", "numbatest")
        k[1, 4](a)
        assert len(seen) == 1 and seen[0].startswith("_ZN") and (a == 5).all()
        k.with_device("interp")[1, 4](a)
        jit(device="interp")(k.py_func)[1, 4](a)
        assert len(seen) == 1
    finally:
        executors.unregister("numbatest")


def test_install_makes_numba_cuda_jit_run_on_ptxvm():
    """Unmodified numba code (cuda.jit, cuda.to_device, copy_to_host) runs after install(), in a
    fresh interpreter so numba's own cuda.jit is left alone for other tests; also PTXVM_NUMBA=1
    through `python -m ptxvm.numba`."""
    script = (
        "import numpy as np\n"
        "from numba import cuda\n"
        "@cuda.jit\n"
        "def k(a, out):\n"
        "    i = cuda.grid(1)\n"
        "    if i < a.size:\n"
        "        out[i] = a[i] * 2\n"
        "a = np.arange(10, dtype=np.float32)\n"
        "d = cuda.to_device(np.zeros(10, np.float32))\n"
        "k[1, 32](a, d)\n"
        "cuda.synchronize()\n"
        "print(type(k).__module__, d.copy_to_host().tolist() == (a * 2).tolist())\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    direct = subprocess.run([sys.executable, "-c", "import ptxvm.numba; ptxvm.numba.install()\n" + script],
                            capture_output=True, text=True, env=env, timeout=300)
    assert direct.stdout.split() == ["ptxvm.numba.dispatcher", "True"], direct.stderr[-2000:]


def test_python_m_ptxvm_numba_runs_a_script(tmp_path):
    script = tmp_path / "prog.py"
    script.write_text("from numba import cuda\nimport numpy as np\n@cuda.jit\ndef k(a):\n    a[cuda.grid(1)] += 1\n"
                      "a = np.zeros(8, np.int32)\nk[1, 8](a)\nprint(a.sum())\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    r = subprocess.run([sys.executable, "-m", "ptxvm.numba", str(script)], capture_output=True, text=True,
                       env=env, timeout=300)
    assert r.stdout.strip() == "8", r.stderr[-2000:]


# -- errors: ptxvm's, never numba's traceback ---------------------------------------------------

def test_typing_error_is_a_numba_error_naming_the_kernel_line():
    @jit
    def bad(a):
        a[0] = undefined_name  # noqa: F821
    with pytest.raises(NumbaError, match=r"numba could not compile kernel `.*bad` \(.*test_numba_frontdoor.py:\d+\) "
                                         r"for \(array\(float64, 1d, C\)\)") as e:
        bad[1, 1](np.zeros(1))
    assert "name 'undefined_name' is not defined" in str(e.value)
    assert e.value.__suppress_context__ or e.value.__cause__ is None


def test_unsupported_argument_and_options_are_clear():
    @jit
    def k(a, s):
        a[0] = 1
    with pytest.raises(LaunchError, match=r"argument 1 \(`s`\) of kernel `k` has numba type unicode_type"):
        k[1, 1](np.zeros(1), "text")
    with pytest.raises(LaunchError, match=r"takes 2 arguments, got 1"):
        k[1, 1](np.zeros(1))
    with pytest.raises(LaunchError, match=r"needs a launch configuration"):
        k(np.zeros(1), 1)
    with pytest.raises(NumbaError, match=r"link="):
        jit(link=["helper.cu"])(k.py_func)
    with pytest.raises(NumbaError, match=r"debug=True"):
        jit(debug=True)(k.py_func)
    with pytest.raises(NumbaError, match=r"boundscheck"):
        jit(boundscheck=True)(k.py_func)


def test_out_of_bounds_write_is_a_kernel_fault(executor):
    """numba does not bounds-check; ptxvm does, and names the kernel."""
    @jit(device=executor)
    def oob(a):
        a[cuda.grid(1) + 100000] = 1
    with pytest.raises(ptxvm.KernelFault):
        oob[1, 1](np.zeros(4, np.float32))


_TABLE = np.arange(8, dtype=np.float32) * 3


@jit
def _namespace(out, rec):
    t = cuda.threadIdx.x
    c = cuda.const.array_like(_TABLE)
    n = cuda.syncthreads_count(1 if t % 3 == 0 else 0)
    a = cuda.syncthreads_and(1 if t < 100 else 0)
    o = cuda.syncthreads_or(1 if t == 5 else 0)
    out[t, 0] = c[t % 8]
    out[t, 1] = n
    out[t, 2] = a
    out[t, 3] = o
    out[t, 4] = cuda.activemask()
    out[t, 5] = cuda.shfl_xor_sync(0xFFFFFFFF, t, 1)
    if t == 0:
        rec.x += 1.5


def test_more_of_the_cuda_namespace_and_a_record(executor):
    """const arrays, syncthreads_count/and/or, activemask, shfl_xor_sync; a record argument is
    passed by pointer and its field written back into the array it came from. Expected by hand:
    22 of 0..63 are multiples of 3; all 64 < 100; one == 5; a full warp's mask; t ^ 1."""
    out = np.zeros((64, 6), np.float64)
    recs = np.zeros(1, dtype=[("x", np.float64), ("y", np.int32)])
    _namespace.with_device(executor)[1, 64](out, recs[0])
    t = np.arange(64)
    expected = np.stack([_TABLE[t % 8], np.full(64, 22), np.ones(64), np.ones(64), np.full(64, 0xFFFFFFFF), t ^ 1], 1)
    assert np.array_equal(out, expected)
    assert recs["x"][0] == 1.5 and recs["y"][0] == 0


def test_forall_covers_n_tasks(executor):
    @jit(device=executor)
    def inc(a):
        i = cuda.grid(1)
        if i < a.size:
            a[i] += 1
    a = np.zeros(1000, np.int32)
    inc.forall(a.size)(a)
    inc.forall(0)(a)
    assert (a == 1).all()


def test_without_numba_the_error_says_what_to_install(tmp_path):
    """With numba hidden (a module finder that refuses it), jit() is a NumbaError naming the extra."""
    code = ("import sys\n"
            "class Hide:\n"
            "    def find_spec(self, name, path=None, target=None):\n"
            "        if name == 'numba' or name.startswith('numba.'):\n"
            "            raise ImportError('hidden for the test')\n"
            "sys.meta_path.insert(0, Hide())\n"
            "import ptxvm.numba\n"
            "try:\n"
            "    ptxvm.numba.jit(lambda a: None)\n"
            "except ptxvm.PtxError as e:\n"
            "    print(type(e).__name__, e)\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert r.stdout.startswith("NumbaError") and "pip install 'ptxvm[numba]'" in r.stdout, r.stdout + r.stderr


# ------------------------------------------------------------------ runtime API through numba kernels

@jit
def _add_rows(a, out):
    i, j = cuda.grid(2)
    if i < a.shape[0] and j < a.shape[1]:
        out[i, j] = a[i, j] + 10 * i


def test_strided_and_fortran_device_arrays_and_streams(executor):
    """N-D DeviceArrays (a Fortran-ordered one, a strided view) reach numba's array ABI with
    their own strides; the stream slot takes a ptxvm.Stream and counts the launch."""
    host = np.asfortranarray(np.arange(24, dtype=np.float64).reshape(4, 6))
    d = ptxvm.to_device(host)
    assert d.strides == host.strides
    out = ptxvm.zeros((4, 6), np.float64)
    view = out[:, ::2]                                  # strides (48, 16): every other column
    s = ptxvm.Stream()
    _add_rows.with_device(executor)[(1, 1), (4, 3), s, 0](d[:, 1::2], view)
    expect = np.zeros((4, 6))
    expect[:, ::2] = host[:, 1::2] + 10 * np.arange(4)[:, None]
    assert np.array_equal(out.copy_to_host(), expect) and s.launches == 1
    with pytest.raises(LaunchError, match="stream must be a ptxvm.Stream"):
        _add_rows[(1, 1), (4, 3), object(), 0](d, out)


def test_environment_switch_runs_a_plain_numba_script(tmp_path):
    """PTXVM_NUMBA=1: the ptxvm-numba.pth the wheel installs runs ptxvm.numba.install() at start,
    so `python script.py` with plain numba.cuda.jit launches on ptxvm (no GPU here: without the
    switch numba could not launch at all)."""
    import site
    if not any((Path(d) / "ptxvm-numba.pth").is_file() for d in site.getsitepackages()):
        pytest.skip("ptxvm is not installed with its ptxvm-numba.pth (pip install -e . or the wheel)")
    script = tmp_path / "plain.py"
    script.write_text("import numpy as np\nfrom numba import cuda\n\n@cuda.jit\ndef k(a):\n    i = cuda.grid(1)\n"
                      "    if i < a.size:\n        a[i] = i * 2\n\na = np.zeros(100, np.int32)\nk[1, 128](a)\n"
                      "print('ok' if (a == 2 * np.arange(100)).all() else 'wrong')\n")
    env = {**os.environ, "PTXVM_NUMBA": "1"}
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=600)
    assert r.stdout.strip() == "ok", r.stderr[-2000:]
