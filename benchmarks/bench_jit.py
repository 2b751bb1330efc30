#!/usr/bin/env python3
"""Host JIT benchmark: fixture kernels on ptxvm's LLVM JIT (``device="cpu"``) against C, numpy and
the interpreter, all in the same run.

For each kernel (the interpreter benchmark's six, plus an all-pairs n-body step) it runs, in this
process:
  * the JIT on the nvcc PTX (tests/fixtures/nvcc/sm80), on DeviceArrays placed once (so a launch is
    timed like a GPU kernel, without host<->device copies), in the steady state, on all the cores
    the executor uses and again with the process pinned to one core; its compile time (first
    launch minus steady launch of a one-CTA grid, in a new Module) with the compile cache cold,
    then warm (a disk hit in another new Module);
  * the same algorithm in C, compiled here with ``gcc -O2`` into a shared library (ctypes), single
    threaded;
  * the same algorithm in numpy;
  * the interpreter (``device="interp"``), at a smaller size where the full one would take long;
and reports time per work unit (element, multiply-add, n-body interaction, mandelbrot iteration),
the ratios JIT/C, JIT/numpy and interpreter/JIT, and the JIT's compile time split into lifting
(Python) and LLVM (the worker's O2 + codegen). Every output is checked against numpy, and the JIT's
output bit for bit against the interpreter's at the interpreter's size.

The compile cache lives in a temporary directory for the run (your own cache is not touched):
"cold" is a real miss (lift + LLVM), "warm" a disk hit in a new Module (lift + cache read + load).

    python benchmarks/bench_jit.py              # full sizes (about a minute or two on 2 cores)
    python benchmarks/bench_jit.py --quick      # small sizes, a few seconds plus the cold compiles
    python benchmarks/bench_jit.py --json
    python benchmarks/bench_jit.py --threads 1  # pin the whole process to one core
    python benchmarks/bench_jit.py --cases nbody mandelbrot --cflags="-O2 -march=native"
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
import ptxvm

FIX = ROOT / "tests" / "fixtures" / "nvcc" / "sm80"
COMPUTE_BOUND = ("matmul_tiled", "mandelbrot", "nbody")

# --------------------------------------------------------------------------- the C versions

C_SOURCE = r"""
#include <math.h>
#include <stdint.h>
#include <string.h>

void vector_add(const float *a, const float *b, float *c, int n)
{
    for (int i = 0; i < n; ++i)
        c[i] = a[i] + b[i];
}

/* the kernel's tree: out[b] = tree sum of the 256 values of block b (0 past n) */
void block_reduce(const float *x, float *out, int n)
{
    float s[256];
    int blocks = (n + 255) / 256;
    for (int b = 0; b < blocks; ++b) {
        for (int t = 0; t < 256; ++t) {
            int i = b * 256 + t;
            s[t] = i < n ? x[i] : 0.0f;
        }
        for (int stride = 128; stride > 0; stride >>= 1)
            for (int t = 0; t < stride; ++t)
                s[t] += s[t + stride];
        out[b] = s[0];
    }
}

/* __shfl_down_sync tree per warp of 32 (lanes past the end read their own value) */
void warp_reduce(const float *x, float *out, int n)
{
    float v[32], w[32];
    for (int k = 0; k < n / 32; ++k) {
        memcpy(v, x + 32 * k, sizeof v);
        for (int off = 16; off > 0; off >>= 1) {
            for (int l = 0; l < 32; ++l)
                w[l] = v[l] + (l + off < 32 ? v[l + off] : v[l]);
            memcpy(v, w, sizeof v);
        }
        out[k] = v[0];
    }
}

void histogram(const uint32_t *x, uint32_t *hist, int n)
{
    for (int b = 0; b < 64; ++b)
        hist[b] = 0;
    for (int i = 0; i < n; ++i)
        hist[x[i] & 63]++;
}

/* C = A @ B, each C[i][j] accumulated in k order (i-k-j loops: the cache-friendly order) */
void matmul(const float *A, const float *B, float *C, int n)
{
    for (int i = 0; i < n; ++i) {
        float *c = C + (long)i * n;
        for (int j = 0; j < n; ++j)
            c[j] = 0.0f;
        for (int k = 0; k < n; ++k) {
            float a = A[(long)i * n + k];
            const float *b = B + (long)k * n;
            for (int j = 0; j < n; ++j)
                c[j] += a * b[j];
        }
    }
}

void mandelbrot(int *iters, int w, int h, int max_iter)
{
    for (int i = 0; i < w * h; ++i) {
        float cx = -2.0f + 3.0f * (float)(i % w) / (float)w;
        float cy = -1.5f + 3.0f * (float)(i / w) / (float)h;
        float x = 0.0f, y = 0.0f;
        int k = 0;
        while (k < max_iter && x * x + y * y <= 4.0f) {
            float xt = x * x - y * y + cx;
            y = 2.0f * x * y + cy;
            x = xt;
            ++k;
        }
        iters[i] = k;
    }
}

/* pos: n x (x, y, z, mass); acc: n x (ax, ay, az, 0); j over all bodies in order */
void nbody(const float *pos, float *acc, int n, float eps2)
{
    for (int i = 0; i < n; ++i) {
        float px = pos[4 * i], py = pos[4 * i + 1], pz = pos[4 * i + 2];
        float ax = 0.0f, ay = 0.0f, az = 0.0f;
        for (int j = 0; j < n; ++j) {
            float dx = pos[4 * j] - px, dy = pos[4 * j + 1] - py, dz = pos[4 * j + 2] - pz;
            float r2 = dx * dx + dy * dy + dz * dz + eps2;
            float inv = 1.0f / sqrtf(r2);
            float s = pos[4 * j + 3] * inv * inv * inv;
            ax += dx * s;
            ay += dy * s;
            az += dz * s;
        }
        acc[4 * i] = ax;
        acc[4 * i + 1] = ay;
        acc[4 * i + 2] = az;
        acc[4 * i + 3] = 0.0f;
    }
}
"""

_P, _I, _F = ctypes.c_void_p, ctypes.c_int, ctypes.c_float
C_SIGNATURES = {"vector_add": (_P, _P, _P, _I), "block_reduce": (_P, _P, _I), "warp_reduce": (_P, _P, _I),
                "histogram": (_P, _P, _I), "matmul": (_P, _P, _P, _I), "mandelbrot": (_P, _I, _I, _I),
                "nbody": (_P, _P, _I, _F)}


def build_c(cc: str, cflags: list[str], workdir: Path) -> tuple[ctypes.CDLL, str]:
    src, lib = workdir / "bench_jit.c", workdir / "bench_jit.so"
    src.write_text(C_SOURCE)
    cmd = [cc, *cflags, "-shared", "-fPIC", str(src), "-o", str(lib), "-lm"]
    r = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if r.returncode:
        raise SystemExit(f"C build failed: {' '.join(cmd)}\n{r.stderr}")
    dll = ctypes.CDLL(str(lib))
    for name, sig in C_SIGNATURES.items():
        getattr(dll, name).argtypes = sig
        getattr(dll, name).restype = None
    version = subprocess.run([cc, "--version"], capture_output=True, text=True, check=False).stdout.splitlines()[0]
    return dll, version


# --------------------------------------------------------------------------- cases

@dataclass
class Case:
    """One kernel at one size: its arrays, launch, numpy model, C call and output check."""

    stem: str                                  # fixture file
    kernel: str
    grid: tuple
    block: tuple
    arrays: dict[str, np.ndarray]              # inputs and (zeroed) outputs, host copies
    out: str                                   # the output array's name
    args: Callable                             # get(name) -> tuple of kernel arguments
    c_call: Callable                           # (lib, ptr(name)) -> None
    model: Callable                            # () -> expected output
    check: Callable                            # (got, want) -> bool
    work: Callable                             # (output) -> work units done
    unit: str
    reset: tuple[str, ...] = ()                # outputs the kernel accumulates into: zeroed per launch
    extra: dict = field(default_factory=dict)


def _exact(got, want):
    return np.array_equal(got, want)


def case_vector_add(n):
    rng = np.random.default_rng(1)
    a, b = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    return Case("elementwise", "vector_add", ((n + 255) // 256,), (256,),
                {"a": a, "b": b, "c": np.zeros(n, np.float32)}, "c",
                lambda g: (g("a"), g("b"), g("c"), n),
                lambda lib, p: lib.vector_add(p("a"), p("b"), p("c"), n),
                lambda: a + b, _exact, lambda _o: n, "elem")


def case_block_reduce(n):
    n = max(n, 256)
    x = np.random.default_rng(2).random(n, dtype=np.float32)
    blocks = (n + 255) // 256

    def model():
        v = np.zeros(blocks * 256, np.float32)
        v[:n] = x
        v = v.reshape(blocks, 256)
        while v.shape[1] > 1:
            h = v.shape[1] // 2
            v = v[:, :h] + v[:, h:]
        return v[:, 0]
    return Case("reductions", "block_sum_static", (blocks,), (256,),
                {"x": x, "out": np.zeros(blocks, np.float32)}, "out",
                lambda g: (g("x"), g("out"), n),
                lambda lib, p: lib.block_reduce(p("x"), p("out"), n),
                model, _exact, lambda _o: n, "elem")


def case_warp_shuffle_reduce(n):
    n = max(n, 256) // 256 * 256
    x = np.random.default_rng(3).random(n, dtype=np.float32)

    def model():
        v = x.reshape(-1, 32).copy()
        for off in (16, 8, 4, 2, 1):
            shifted = np.concatenate([v[:, off:], v[:, -off:]], axis=1)[:, :32]
            v = v + shifted
        return v[:, 0]
    return Case("warp_shuffle", "warp_sum_down", (n // 256,), (256,),
                {"x": x, "out": np.zeros(n // 32, np.float32)}, "out",
                lambda g: (g("x"), g("out")),
                lambda lib, p: lib.warp_reduce(p("x"), p("out"), n),
                model, _exact, lambda _o: n, "elem")


def case_histogram(n):
    x = np.random.default_rng(4).integers(0, 1 << 20, n, dtype=np.uint32)
    blocks = min((n + 255) // 256, 1024)
    return Case("atomics", "histogram_shared", (blocks,), (256,),
                {"x": x, "hist": np.zeros(64, np.uint32)}, "hist",
                lambda g: (g("x"), g("hist"), n),
                lambda lib, p: lib.histogram(p("x"), p("hist"), n),
                lambda: np.bincount(x & 63, minlength=64).astype(np.uint32), _exact,
                lambda _o: n, "elem", reset=("hist",))


def case_matmul_tiled(n):
    """n: the matrix side (a multiple of 16)."""
    side = max(16, n // 16 * 16)
    rng = np.random.default_rng(5)
    A, B = rng.random((side, side), dtype=np.float32), rng.random((side, side), dtype=np.float32)
    # fma accumulation differs from numpy's BLAS matmul by rounding only: compared with a tolerance
    return Case("bench_kernels", "matmul_tiled", (side // 16, side // 16), (16, 16),
                {"A": A, "B": B, "C": np.zeros((side, side), np.float32)}, "C",
                lambda g: (g("A"), g("B"), g("C"), side),
                lambda lib, p: lib.matmul(p("A"), p("B"), p("C"), side),
                lambda: A @ B, lambda got, want: np.allclose(got, want, rtol=1e-4, atol=1e-4 * side),
                lambda _o: side ** 3, "fma", extra={"side": side})


MANDEL_ITER = 256


def case_mandelbrot(n):
    """n: pixels (a w x w square)."""
    w = max(16, round(n ** 0.5))
    h = w
    max_iter = MANDEL_ITER

    def model():
        i = np.arange(w * h)
        cx = np.float32(-2.0) + np.float32(3.0) * (i % w).astype(np.float32) / np.float32(w)
        cy = np.float32(-1.5) + np.float32(3.0) * (i // w).astype(np.float32) / np.float32(h)
        x = np.zeros_like(cx)
        y = np.zeros_like(cy)
        k = np.zeros(w * h, np.int32)
        live = np.arange(w * h)                 # indices still iterating: work shrinks as pixels escape
        for _ in range(max_iter):
            xl, yl = x[live], y[live]
            esc = xl * xl + yl * yl > 4
            if esc.any():
                keep = ~esc
                live, xl, yl = live[keep], xl[keep], yl[keep]
                if not live.size:
                    break
            xt = xl * xl - yl * yl + cx[live]
            y[live] = np.float32(2) * xl * yl + cy[live]
            x[live] = xt
            k[live] += 1
        return k
    # float op order differs (nvcc contracts to fma; gcc -O2 for x86-64 does not): an escape count
    # may differ by one at the set's boundary
    return Case("bench_kernels", "mandelbrot", ((w * h + 255) // 256,), (256,),
                {"it": np.zeros(w * h, np.int32)}, "it",
                lambda g: (g("it"), w, h, max_iter),
                lambda lib, p: lib.mandelbrot(p("it"), w, h, max_iter),
                model, lambda got, want: (np.abs(got - want) <= 1).mean() > 0.99,
                lambda out: int(out.astype(np.int64).sum()), "iter", extra={"w": w, "max_iter": max_iter})


EPS2 = np.float32(0.01)


def case_nbody(n):
    """n: bodies (a multiple of 256)."""
    n = max(256, n // 256 * 256)
    rng = np.random.default_rng(6)
    pos = rng.random((n, 4), dtype=np.float32)
    pos[:, 3] = rng.random(n, dtype=np.float32) + np.float32(0.5)

    def model(chunk=256):
        out = np.zeros((n, 4), np.float32)
        p, m = pos[:, :3], pos[:, 3]
        for s in range(0, n, chunk):
            d = p[None, :, :] - p[s:s + chunk, None, :]                # (chunk, n, 3)
            r2 = np.einsum("ijk,ijk->ij", d, d) + EPS2
            inv = np.float32(1) / np.sqrt(r2)
            w = m[None, :] * inv * inv * inv
            out[s:s + chunk, :3] = np.einsum("ijk,ij->ik", d, w)
        return out

    def check(got, want):
        return np.allclose(got, want, rtol=1e-3, atol=1e-4 * float(np.abs(want).max()))
    return Case("bench_kernels", "nbody_step", (n // 256,), (256,),
                {"pos": pos, "acc": np.zeros((n, 4), np.float32)}, "acc",
                lambda g: (g("pos"), g("acc"), n, EPS2),
                lambda lib, p: lib.nbody(p("pos"), p("acc"), n, EPS2),
                model, check, lambda _o: n * n, "pair")


CASES = {"vector_add": case_vector_add, "block_reduce": case_block_reduce,
         "warp_shuffle_reduce": case_warp_shuffle_reduce, "histogram": case_histogram,
         "matmul_tiled": case_matmul_tiled, "mandelbrot": case_mandelbrot, "nbody": case_nbody}
# (full size, quick size, interpreter size cap); matmul: the side; mandelbrot: pixels; nbody: bodies
SIZES = {"vector_add": (1 << 22, 1 << 16, 1 << 18), "block_reduce": (1 << 18, 1 << 14, 1 << 16),
         "warp_shuffle_reduce": (1 << 18, 1 << 14, 1 << 16), "histogram": (1 << 20, 1 << 14, 1 << 16),
         "matmul_tiled": (256, 64, 48), "mandelbrot": (1 << 20, 1 << 14, 1 << 12),
         "nbody": (4096, 512, 256)}


# --------------------------------------------------------------------------- measuring

def _module(stem: str):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ptxvm.Module.from_file(FIX / f"{stem}.ptx")


class _Pinned:
    """Pin this thread (and the threads it starts, e.g. the JIT's CTA workers) to some cores."""

    def __init__(self, cpus) -> None:
        self.cpus, self.old = set(cpus), None

    def __enter__(self):
        self.old = os.sched_getaffinity(0)
        os.sched_setaffinity(0, self.cpus)

    def __exit__(self, *exc):
        os.sched_setaffinity(0, self.old)


def interleaved(fns: dict[str, Callable], repeat: int, budget: float = 6.0) -> dict[str, float]:
    """Best time of each function over ``repeat`` rounds, one call of each per round, so that a
    change in the machine's load hits every column alike; stops early once ``budget`` s are spent."""
    t_best = dict.fromkeys(fns, float("inf"))
    start = time.perf_counter()
    for _ in range(max(1, repeat)):
        for key, fn in fns.items():
            t = time.perf_counter()
            fn()
            t_best[key] = min(t_best[key], time.perf_counter() - t)
        if time.perf_counter() - start > budget:
            break
    return t_best


def _host_threads() -> int:
    from ptxvm.jit.threads import host_threads
    return host_threads()


def jit_workers(case: Case) -> int:
    """Host threads the JIT executor runs CTAs on (ptxvm.jit.executor._Batch.run)."""
    return min(_host_threads(), int(np.prod(case.grid)))


def launch_host(k, case: Case, device: str) -> tuple[float, np.ndarray]:
    """One launch on numpy arrays (copied in and out by the launch): (seconds, output)."""
    arrays = {k_: v.copy() for k_, v in case.arrays.items()}
    t = time.perf_counter()
    k(case.grid, case.block, case.args(arrays.__getitem__), device=device)
    return time.perf_counter() - t, arrays[case.out]


TINY = {"matmul_tiled": 16, "nbody": 256}          # one-CTA sizes: launches that cost milliseconds


def measure_compile(name: str, case: Case) -> tuple[dict, object]:
    """Compile time = first launch - steady launch of a one-CTA case, in a new Module:
    cold (nothing cached: lift + LLVM O2 + load), then warm (another new Module, the in-memory
    cache dropped: lift + disk cache hit + load). Also the cold compile's phases."""
    from ptxvm.driver.api import default_device
    from ptxvm.machine.symbols import layout
    from ptxvm.backend import toolchain
    from ptxvm.jit.host import HostHooks
    from ptxvm.jit.layout import THREAD_HEADER
    from ptxvm.jit.loader import host_target
    from ptxvm.lift.module import lift_kernel
    tiny = CASES[name](TINY.get(name, 256))
    out = {}
    for which in ("cold", "warm"):
        toolchain.clear_memory_cache()
        k = _module(case.stem)[case.kernel]
        first = launch_host(k, tiny, "cpu")[0]
        steady = min(launch_host(k, tiny, "cpu")[0] for _ in range(3))
        out[f"compile_{which}_s"] = max(first - steady, 0.0)
        out[f"first_launch_{which}_tiny_s"] = first
    program = k.module._programs[(k.name, 0, "cpu")]
    triple, cpu, features = host_target()
    t = time.perf_counter()
    lay = layout(k.module.ir, k.ir, default_device().image(k.module), 0)
    lift_kernel(k.module.ir, k.ir.name, HostHooks(triple=triple), lay)
    out["lift_s"] = time.perf_counter() - t
    # the worker's own time for the cold compile, kept with the cached result
    res = toolchain.compile_ir(program.lifted.llvm_ir, triple=triple, cpu=cpu, features=features, opt=2,
                               emit=("obj",), reloc="pic", codemodel="jitdefault")
    out["llvm_s"] = res.seconds
    out["llvm_ir_kib"] = len(program.lifted.llvm_ir) / 1024
    out["save_slots"] = (program.record_bytes - THREAD_HEADER) // 8
    return out, k


def run_case(name: str, n: int, n_interp: int, lib, repeat: int, one_core: bool) -> dict:
    case = CASES[name](n)
    want = case.model()
    row = {"case": name, "n": n, "unit": case.unit, "work": case.work(want), **case.extra}
    comp, k = measure_compile(name, case)
    row.update(comp)

    # the JIT on DeviceArrays placed once; outputs it accumulates into are zeroed per launch
    dev = {key: ptxvm.to_device(v) for key, v in case.arrays.items()}
    zeros = {key: np.zeros_like(case.arrays[key]) for key in case.reset}

    def jit():
        for key in case.reset:
            dev[key].copy_from_host(zeros[key])
        k(case.grid, case.block, case.args(dev.__getitem__), device="cpu")

    def jit_1core():
        with _Pinned([min(os.sched_getaffinity(0))]):
            jit()

    t = time.perf_counter()
    jit()
    row["jit_first_full_s"] = time.perf_counter() - t       # first launch at this size, compiled already
    row["first_launch_cold_s"] = row["compile_cold_s"] + row["jit_first_full_s"]
    jout = dev[case.out].copy_to_host()
    row["thread_instructions"] = k.stats.instructions
    row["jit_threads"] = jit_workers(case)
    c_arrays = {key: v.copy() for key, v in case.arrays.items()}
    c_ptr = lambda key: c_arrays[key].ctypes.data
    fns = {"c": lambda: case.c_call(lib, c_ptr), "numpy": case.model, "jit": jit}
    if one_core:
        fns["jit_1core"] = jit_1core
    times = interleaved(fns, repeat)
    row.update({f"{key}_s": v for key, v in times.items()})

    # the interpreter at its size (the program prepared first, untimed), checked against numpy
    # there; the JIT's output at that size must equal the interpreter's bit for bit
    icase = CASES[name](n_interp) if n_interp != n else case
    ik = _module(case.stem)[case.kernel]
    launch_host(ik, CASES[name](TINY.get(name, 256)), "interp")
    t_interp, iout = launch_host(ik, icase, "interp")
    iwant = icase.model() if icase is not case else want
    row.update({"n_interp": n_interp, "work_interp": icase.work(iwant), "interp_s": t_interp})
    row["ok"] = {"c": bool(case.check(c_arrays[case.out], want)), "jit": bool(case.check(jout, want)),
                 "interp": bool(icase.check(iout, iwant)),
                 "jit_eq_interp": bool(np.array_equal(launch_host(k, icase, "cpu")[1], iout))}

    npu = {key: times[key] / row["work"] * 1e9 for key in times}
    npu["interp"] = t_interp / row["work_interp"] * 1e9
    row["ns_per_unit"] = npu
    row["ratio"] = {"jit_vs_c": npu["jit"] / npu["c"], "jit_vs_numpy": npu["jit"] / npu["numpy"],
                    "interp_vs_jit": npu["interp"] / npu["jit"]}
    if one_core:
        row["ratio"]["jit_1core_vs_c"] = npu["jit_1core"] / npu["c"]
        row["ratio"]["interp_vs_jit_1core"] = npu["interp"] / npu["jit_1core"]
    return row


# --------------------------------------------------------------------------- report

def _size(r: dict) -> str:
    if r["case"] == "matmul_tiled":
        return f"{r['side']}^2"
    if r["case"] == "mandelbrot":
        return f"{r['w']}^2"
    n = r["n"]
    return f"2^{n.bit_length() - 1}" if n & (n - 1) == 0 else str(n)


def print_table(rows: list[dict], meta: dict) -> None:
    one = any("jit_1core" in r["ns_per_unit"] for r in rows)
    print(f"\nns per work unit (lower is better); JIT on {meta['jit_threads_max']} host thread(s) of "
          f"{meta['cpus']} usable core(s){', and pinned to 1 core (1c)' if one else ''}; "
          f"C: {meta['cc']} {' '.join(meta['cflags'])}, 1 thread")
    head = (f"{'kernel':20s} {'size':>7s} {'unit':>5s} {'C':>8s} {'numpy':>8s} {'JIT':>8s} "
            + (f"{'JIT 1c':>8s} " if one else "") + f"{'interp':>9s} | {'JIT/C':>6s} "
            + (f"{'1c/C':>6s} " if one else "") + f"{'JIT/np':>6s} {'int/JIT':>7s}"
            + (f" {'int/1c':>6s}" if one else "") + f" | {'cold':>6s} {'warm':>6s} {'lift':>5s} {'llvm':>5s}  ok")
    print(head)
    print("-" * len(head))
    for r in rows:
        u, q = r["ns_per_unit"], r["ratio"]
        ok = all(r["ok"].values())
        bad = "" if ok else " BAD:" + ",".join(k for k, v in r["ok"].items() if not v)
        print(f"{r['case']:20s} {_size(r):>7s} {r['unit']:>5s} {u['c']:8.3f} {u['numpy']:8.3f} {u['jit']:8.3f} "
              + (f"{u['jit_1core']:8.3f} " if one else "") + f"{u['interp']:9.1f} | {q['jit_vs_c']:6.1f} "
              + (f"{q['jit_1core_vs_c']:6.1f} " if one else "") + f"{q['jit_vs_numpy']:6.2f} "
              f"{q['interp_vs_jit']:7.0f}" + (f" {q['interp_vs_jit_1core']:6.0f}" if one else "")
              + f" | {r['compile_cold_s']:6.2f} {r['compile_warm_s']:6.2f} {r['lift_s']:5.2f} {r['llvm_s']:5.2f}"
              f"  {'ok' if ok else ''}{bad}")
    print("\ncold/warm: compile time, s = first launch - steady launch of a one-CTA grid in a new Module (cold: "
          "lift + LLVM O2 + load; warm: lift + disk cache hit + load);\nlift/llvm: phases of the cold compile, s. "
          "Steady launches best of N, the columns interleaved; JIT on DeviceArrays (no host copies).\n"
          "interp: run at a smaller size where needed (--json: n_interp), scaled per unit.")


def print_goals(rows: list[dict]) -> None:
    cb = [r for r in rows if r["case"] in COMPUTE_BOUND]
    if not cb:
        return
    key = "jit_1core_vs_c" if all("jit_1core_vs_c" in r["ratio"] for r in cb) else "jit_vs_c"
    ikey = "interp_vs_jit_1core" if key == "jit_1core_vs_c" else "interp_vs_jit"
    print("\ngoals (compute-bound kernels: " + ", ".join(sorted({r["case"] for r in cb})) + "):")
    worst = max(cb, key=lambda r: r["ratio"][key])
    met = worst["ratio"][key] <= 3
    print(f"  JIT within 3x of C per element ({'1 core' if key.endswith('1core_vs_c') else 'all cores'}): "
          f"{'MET' if met else 'MISSED'}; " + ", ".join(f"{r['case']} {r['ratio'][key]:.1f}x" for r in cb)
          + (" (all cores: " + ", ".join(f"{r['case']} {r['ratio']['jit_vs_c']:.1f}x" for r in cb) + ")"
             if key != "jit_vs_c" else ""))
    slow = min(cb, key=lambda r: r["ratio"][ikey])
    print(f"  JIT >= 10x faster than the interpreter: {'MET' if slow['ratio'][ikey] >= 10 else 'MISSED'}; "
          + ", ".join(f"{r['case']} {r['ratio'][ikey]:.0f}x" for r in cb) + f" ({'1 core' if ikey.endswith('1core') else 'all cores'})")
    print("  compile time (cold / warm, s): " + ", ".join(
        f"{r['case']} {r['compile_cold_s']:.2f}/{r['compile_warm_s']:.2f}" for r in cb))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="small sizes, one repeat: a few seconds plus the compiles")
    ap.add_argument("--json", action="store_true", help="print the results as JSON")
    ap.add_argument("--cases", nargs="*", choices=sorted(CASES), help="run only these")
    ap.add_argument("--repeat", type=int, help="best of N for the steady-state timings (default 5, quick 2; fewer when slow)")
    ap.add_argument("--threads", type=int, default=0,
                    help="pin the whole process to this many cores (default: all it may use). The JIT runs "
                         "CTAs on as many host threads as the process may use cores ($PTXVM_NUM_THREADS "
                         "sets another count)")
    ap.add_argument("--no-1core", dest="one_core", action="store_false",
                    help="skip the extra JIT measurement pinned to one core")
    ap.add_argument("--cc", default=os.environ.get("CC", "gcc"), help="C compiler (default $CC or gcc)")
    ap.add_argument("--cflags", default="-O2", help="flags of the C build (default -O2)")
    args = ap.parse_args(argv)
    if args.threads:
        cpus = sorted(os.sched_getaffinity(0))[:args.threads]
        os.sched_setaffinity(0, cpus)
    cpus = len(os.sched_getaffinity(0))
    one_core = args.one_core and cpus > 1
    repeat = args.repeat or (2 if args.quick else 5)
    names = args.cases or list(CASES)
    if shutil.which(args.cc) is None:
        print(f"no C compiler `{args.cc}` (pass --cc)", file=sys.stderr)
        return 2

    workdir = Path(tempfile.mkdtemp(prefix="ptxvm-bench-jit-"))
    old_cache = os.environ.get("PTXVM_CACHE_DIR")
    os.environ["PTXVM_CACHE_DIR"] = str(workdir / "cache")     # cold means cold; yours is untouched
    os.environ.pop("PTXVM_NO_CACHE", None)
    rows = []
    try:
        lib, cc_version = build_c(args.cc, args.cflags.split(), workdir)
        from ptxvm.backend import toolchain
        t = time.perf_counter()
        toolchain.ping()                                         # the LLVM worker's start-up, once
        # one-time process costs (imports, LLVM's initialisation, the first load) are not any
        # kernel's compile time: pay them on a throwaway compile, then empty both caches
        warm = case_vector_add(256)
        launch_host(_module(warm.stem)[warm.kernel], warm, "cpu")
        worker_start = time.perf_counter() - t
        shutil.rmtree(workdir / "cache", ignore_errors=True)
        toolchain.clear_memory_cache()
        for name in names:
            full, quick, cap = SIZES[name]
            n = quick if args.quick else full
            row = run_case(name, n, min(n, cap), lib, repeat, one_core)
            rows.append(row)
            if not args.json:
                u = row["ns_per_unit"]
                print(f"  {name:20s} C {u['c']:.3f}  numpy {u['numpy']:.3f}  JIT {u['jit']:.3f}  interp "
                      f"{u['interp']:.1f} ns/{row['unit']}  ({'ok' if all(row['ok'].values()) else 'BAD'})",
                      file=sys.stderr, flush=True)
    finally:
        if old_cache is None:
            os.environ.pop("PTXVM_CACHE_DIR", None)
        else:
            os.environ["PTXVM_CACHE_DIR"] = old_cache
        shutil.rmtree(workdir, ignore_errors=True)
    meta = {"cpus": cpus, "os_cpu_count": os.cpu_count(), "jit_threads_max": _host_threads(),
            "cc": args.cc, "cc_version": cc_version, "cflags": args.cflags.split(), "repeat": repeat,
            "quick": args.quick, "llvm_worker_start_s": worker_start, "mandelbrot_max_iter": MANDEL_ITER}
    if args.json:
        print(json.dumps({"meta": meta, "rows": rows}, indent=1))
    else:
        print_table(rows, meta)
        print(f"LLVM worker start-up and first JIT use (once per process): {worker_start:.2f} s; {cc_version}")
        print_goals(rows)
    return 0 if all(all(r["ok"].values()) for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
