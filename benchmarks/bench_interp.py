#!/usr/bin/env python3
"""Interpreter benchmark: fixture kernels on ptxvm's interpreter against numpy in the same run.

For each kernel and size it runs, in this process:
  * ptxvm's interpreter on the nvcc PTX (tests/fixtures/nvcc/sm80), checked against numpy;
  * the same algorithm written in numpy (the limit a vectorised interpreter can approach);
  * optionally numba's CUDA simulator (NUMBA_ENABLE_CUDASIM=1) in a subprocess of --peer-python,
    at the sizes it finishes in reasonable time.
and reports thread-instructions per second, times and ratios, and the peak memory (tracemalloc,
which sees numpy's buffers) of each interpreter launch.

    python benchmarks/bench_interp.py            # sizes 2^10, 2^14, 2^18, 2^20
    python benchmarks/bench_interp.py --quick    # 2^10, 2^14
    python benchmarks/bench_interp.py --json
    python benchmarks/bench_interp.py --peer-python auto   # numba in a cached venv of its own

numba is not a dependency of ptxvm (it pins its own llvmlite): ``--peer-python auto`` creates a
virtual environment under ~/.cache/ptxvm/bench-peers/numba with ``pip install numba`` the first
time and runs the simulator there; without a numba the column says n/a.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
import tracemalloc
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
import ptxvm  # noqa: E402

FIX = ROOT / "tests" / "fixtures" / "nvcc" / "sm80"


def _mod(stem: str):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ptxvm.Module.from_file(FIX / f"{stem}.ptx")


def case_vector_add(n):
    rng = np.random.default_rng(1)
    a, b = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    c = np.zeros(n, np.float32)
    return (_mod("elementwise")["vector_add"], ((n + 255) // 256,), (256,), (a, b, c, n), 0,
            lambda: a + b, lambda: c)


def case_block_reduce(n):
    n = max(n, 256)
    x = np.random.default_rng(2).random(n, dtype=np.float32)
    blocks = (n + 255) // 256
    out = np.zeros(blocks, np.float32)

    def model():
        v = np.zeros(blocks * 256, np.float32)
        v[:n] = x
        v = v.reshape(blocks, 256)
        while v.shape[1] > 1:
            h = v.shape[1] // 2
            v = v[:, :h] + v[:, h:]
        return v[:, 0]
    return _mod("reductions")["block_sum_static"], (blocks,), (256,), (x, out, n), 0, model, lambda: out


def case_warp_shuffle_reduce(n):
    n = max(n, 32)
    x = np.random.default_rng(3).random(n, dtype=np.float32)
    out = np.zeros(n // 32, np.float32)

    def model():
        v = x.reshape(-1, 32).copy()
        for off in (16, 8, 4, 2, 1):
            shifted = np.concatenate([v[:, off:], v[:, -off:]], axis=1)[:, :32]
            v = v + shifted
        return v[:, 0]
    return _mod("warp_shuffle")["warp_sum_down"], (n // 256 or 1,), (min(n, 256),), (x, out), 0, model, lambda: out


def case_histogram(n):
    x = np.random.default_rng(4).integers(0, 1 << 20, n, dtype=np.uint32)
    hist = np.zeros(64, np.uint32)
    blocks = min((n + 255) // 256, 1024)
    return (_mod("atomics")["histogram_shared"], (blocks,), (256,), (x, hist, n), 0,
            lambda: np.bincount(x & 63, minlength=64).astype(np.uint32), lambda: hist)


def case_matmul_tiled(n):
    side = max(16, int(round(n ** 0.5)) // 16 * 16)
    rng = np.random.default_rng(5)
    A, B = rng.random((side, side), dtype=np.float32), rng.random((side, side), dtype=np.float32)
    C = np.zeros((side, side), np.float32)
    # fma accumulation differs from numpy's matmul by rounding only: compared with a tolerance
    return (_mod("bench_kernels")["matmul_tiled"], (side // 16, side // 16), (16, 16), (A, B, C, side), 0,
            lambda: (A.astype(np.float64) @ B.astype(np.float64)).astype(np.float32), lambda: C)


def case_mandelbrot(n):
    w = max(32, int(round(n ** 0.5)))
    h = max(1, n // w)
    it = np.zeros(w * h, np.int32)
    max_iter = 64

    def model():
        i = np.arange(w * h)
        cx = np.float32(-2.0) + np.float32(3.0) * (i % w).astype(np.float32) / np.float32(w)
        cy = np.float32(-1.5) + np.float32(3.0) * (i // w).astype(np.float32) / np.float32(h)
        x = np.zeros_like(cx)
        y = np.zeros_like(cy)
        k = np.zeros(w * h, np.int32)
        for _ in range(max_iter):
            live = x * x + y * y <= 4
            if not live.any():
                break
            xt = x * x - y * y + cx
            y = np.where(live, np.float32(2) * x * y + cy, y)
            x = np.where(live, xt, x)
            k += live
        return k
    return _mod("bench_kernels")["mandelbrot"], ((w * h + 255) // 256,), (256,), (it, w, h, max_iter), 0, model, lambda: it


CASES = {"vector_add": case_vector_add, "block_reduce": case_block_reduce,
         "warp_shuffle_reduce": case_warp_shuffle_reduce, "histogram": case_histogram,
         "matmul_tiled": case_matmul_tiled, "mandelbrot": case_mandelbrot}
# A 1024x1024 tiled matmul is ~7G thread-instructions: minutes per launch; --matmul-max raises it.
MATMUL_MAX = 2 ** 18
EXACT = {"vector_add", "block_reduce", "warp_shuffle_reduce", "histogram"}


def best(fn, repeat: int) -> float:
    t_best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        t_best = min(t_best, time.perf_counter() - t)
    return t_best


_SIM = """
import os, sys, time, numpy as np
os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
from numba import cuda
n = int(sys.argv[1])
@cuda.jit
def block_sum(x, out, n):
    s = cuda.shared.array(256, dtype=np.float32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * cuda.blockDim.x + t
    s[t] = x[i] if i < n else np.float32(0)
    cuda.syncthreads()
    stride = 128
    while stride > 0:
        if t < stride:
            s[t] += s[t + stride]
        cuda.syncthreads()
        stride //= 2
    if t == 0:
        out[cuda.blockIdx.x] = s[0]
x = np.random.rand(n).astype(np.float32); out = np.zeros((n + 255) // 256, np.float32)
t = time.perf_counter(); block_sum[(n + 255) // 256, 256](x, out, n); print(time.perf_counter() - t)
"""


PEER_VENV = Path.home() / ".cache" / "ptxvm" / "bench-peers" / "numba"


def peer_python(choice: str) -> str:
    """The interpreter that runs numba's simulator: ``auto`` makes (once) a venv with numba."""
    if choice != "auto":
        return choice
    py = PEER_VENV / "bin" / "python"
    if not py.exists():
        print(f"installing numba into {PEER_VENV} (once) ...", file=sys.stderr, flush=True)
        subprocess.run([sys.executable, "-m", "venv", str(PEER_VENV)], check=True)
        subprocess.run([str(py), "-m", "pip", "install", "-q", "numba"], check=True)
    return str(py)


def numba_sim_block_reduce(python: str, n: int, timeout: float) -> float | None:
    try:
        r = subprocess.run([python, "-c", _SIM, str(n)], capture_output=True, text=True, timeout=timeout)
        return float(r.stdout.strip().splitlines()[-1]) if r.returncode == 0 else None
    except (subprocess.TimeoutExpired, ValueError, IndexError, OSError):
        return None


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="sizes 2^10 and 2^14 only")
    ap.add_argument("--json", action="store_true", help="print the results as JSON")
    ap.add_argument("--cases", nargs="*", choices=sorted(CASES), help="run only these")
    ap.add_argument("--peer-python", default=sys.executable,
                    help="interpreter with numba installed, for numba's CUDA simulator (default: this "
                         "one; 'auto': a cached venv with numba, created on first use)")
    args = ap.parse_args(argv)
    args.peer_python = peer_python(args.peer_python)
    sizes = [2 ** 10, 2 ** 14] if args.quick else [2 ** 10, 2 ** 14, 2 ** 18, 2 ** 20]
    rows = []
    for name in args.cases or CASES:
        for n in sizes:
            if name == "matmul_tiled" and n > MATMUL_MAX:
                continue
            k, grid, block, kargs, shared, model, result = CASES[name](n)
            k(grid, block, kargs, shared_mem=shared)                      # compile + warm up
            ok = np.array_equal(result(), model()) if name in EXACT else \
                np.allclose(result(), model(), rtol=1e-4, atol=1e-4) if name == "matmul_tiled" else \
                (np.abs(result() - model()) <= 1).mean() > 0.99           # mandelbrot: f32 op order
            t_interp = best(lambda: k(grid, block, kargs, shared_mem=shared), 2)
            stats = k.stats
            tracemalloc.start()
            k(grid, block, kargs, shared_mem=shared)
            peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
            t_numpy = best(model, 3)
            row = {"case": name, "n": n, "ok": bool(ok), "interp_s": t_interp, "numpy_s": t_numpy,
                   "ratio_vs_numpy": t_interp / t_numpy, "thread_instructions": stats.instructions,
                   "tips": stats.instructions / t_interp, "peak_MiB": peak / 2 ** 20}
            if name == "block_reduce" and n <= 2 ** 14:
                sim = numba_sim_block_reduce(args.peer_python, n, timeout=300)
                row["numba_sim_s"] = sim
                row["speedup_vs_numba_sim"] = (sim / t_interp) if sim else None
            rows.append(row)
            if not args.json:
                extra = ""
                if "numba_sim_s" in row:
                    extra = (f"  numba-sim {row['numba_sim_s']:.3f}s ({row['speedup_vs_numba_sim']:.0f}x)"
                             if row["numba_sim_s"] else "  numba-sim n/a")
                print(f"{name:20s} n=2^{n.bit_length() - 1:<2d} {'ok ' if ok else 'BAD'} interp "
                      f"{t_interp * 1000:9.1f} ms  {row['tips'] / 1e6:7.1f} M thr-instr/s  numpy "
                      f"{t_numpy * 1000:8.2f} ms  ratio {row['ratio_vs_numpy']:8.1f}x  peak "
                      f"{row['peak_MiB']:7.1f} MiB{extra}", flush=True)
    if args.json:
        print(json.dumps(rows, indent=1))
    va = [r for r in rows if r["case"] == "vector_add" and r["n"] == 2 ** 20]
    if va and not args.json:
        r = va[0]
        print(f"\ngoals: vector add 2^20 within 50x of numpy: {r['ratio_vs_numpy']:.0f}x; "
              f">= 100M thread-instructions/s: {r['tips'] / 1e6:.0f}M; peak < 2 GiB: "
              f"{max(x['peak_MiB'] for x in rows):.0f} MiB max")
    return 0 if all(r["ok"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
