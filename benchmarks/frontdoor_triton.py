"""The Triton half of bench_frontdoors.py: tests/triton/kernels.py's kernels on ptxvm's
interpreter and JIT (ptxvm.triton), against Triton's own interpreter (TRITON_INTERPRET=1) in a
subprocess, in the same run. Triton's interpreter takes torch tensors, not numpy arrays: without
torch it is reported as not run (``pip install torch==2.13.0`` gives the CPU build here).
Every result is checked against numpy."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "triton"))


def cases(n: int) -> dict:
    """name -> (make arguments, launch(kernels, args, cdiv), check(args) -> bool)."""
    rng = np.random.default_rng(0)
    rows = max(n // 1024, 1)

    def add():
        x, y = rng.standard_normal((2, n)).astype(np.float32)
        return [x, y, np.zeros(n, np.float32)]

    def softmax():
        return [np.zeros((rows, 1024), np.float32), rng.standard_normal((rows, 1024)).astype(np.float32)]

    def hist():
        return [rng.integers(0, 64, n).astype(np.int32), np.zeros(64, np.int32)]

    def ref_softmax(x):
        e = np.exp(x.astype(np.float64) - x.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)

    return {
        "vector_add": (add, lambda K, a, cdiv: K.add_kernel[(cdiv(n, 1024),)](*a, n, BLOCK=1024),
                       lambda a: np.array_equal(a[2], a[0] + a[1])),
        "fused_softmax": (softmax, lambda K, a, cdiv: K.softmax_kernel[(rows,)](a[0], a[1], 1024, 1024, 1024, BLOCK=1024),
                          lambda a: np.allclose(a[0], ref_softmax(a[1]), rtol=2 ** -19, atol=0)),
        "atomic_histogram": (hist, lambda K, a, cdiv: K.atomic_hist_kernel[(cdiv(n, 1024),)](*a, n, BLOCK=1024),
                             lambda a: np.array_equal(a[1], np.bincount(a[0], minlength=64))),
    }


def _time(launch, make, check, repeat: int) -> tuple[float, bool]:
    best, ok = float("inf"), True
    for i in range(repeat + 1):                       # the first launch compiles: not timed
        args = make()
        t0 = time.perf_counter()
        launch(args)
        dt = time.perf_counter() - t0
        ok = ok and bool(check(args))
        if i:
            best = min(best, dt)
    return best, ok


def interpret_child(name: str, n: int, repeat: int) -> None:
    """Run under TRITON_INTERPRET=1 with torch CPU tensors; print seconds and correctness."""
    import torch
    import triton
    import kernels as K
    make, launch, check = cases(n)[name]

    def torch_launch(args):
        ts = [torch.from_numpy(a) for a in args]
        launch(K, ts, triton.cdiv)
        for a, t in zip(args, ts):
            a[...] = t.numpy()
    best, ok = _time(torch_launch, make, check, repeat)
    print(json.dumps({"seconds": best, "ok": ok}))


def _interpreter(name: str, n: int, repeat: int, timeout: float) -> dict:
    try:
        import torch  # noqa: F401
    except ImportError:
        return {"interpreter": None, "interpreter_note": "not run: TRITON_INTERPRET=1 needs torch tensors"}
    env = {**os.environ, "TRITON_INTERPRET": "1", "TRITON_DEFAULT_FP_FUSION": "1"}
    env.pop("PTXVM_TRITON", None)
    try:
        r = subprocess.run([sys.executable, __file__, name, str(n), str(repeat)], capture_output=True, text=True,
                           env=env, timeout=timeout)
        out = json.loads(r.stdout.strip().splitlines()[-1])
    except subprocess.TimeoutExpired:
        return {"interpreter": None, "interpreter_note": f"> {timeout:.0f} s"}
    except (IndexError, json.JSONDecodeError):
        return {"interpreter": None, "interpreter_note": f"failed: {r.stderr.strip().splitlines()[-1:]}"}
    return {"interpreter": out["seconds"], "interpreter_ok": out["ok"]}


def bench(n: int, repeat: int, timeout: float, interpreter: bool = True) -> list[dict]:
    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
    try:
        import triton
    except ImportError:
        return []
    import kernels as K
    import ptxvm.triton
    rows = []
    for name, (make, launch, check) in cases(n).items():
        row: dict = {"kernel": name, "elements": n}
        for device in ("interp", "cpu"):
            ptxvm.triton.activate(device=device)
            row[device], row[f"{device}_ok"] = _time(lambda a: launch(K, a, triton.cdiv), make, check, repeat)
        ptxvm.triton.deactivate()
        if interpreter:
            row.update(_interpreter(name, n, repeat, timeout))
            if row.get("interpreter"):
                row["ratio"] = {d: row["interpreter"] / row[d] for d in ("interp", "cpu")}
        rows.append(row)
    return rows


def print_rows(rows: list[dict]) -> None:
    print(f"\nTriton kernels (ptxvm.triton) vs TRITON_INTERPRET=1, best of repeat, ms")
    print(f"{'kernel':<18} {'elements':>9} {'interp':>9} {'cpu':>9} {'triton-interp':>14} {'x interp':>9} {'x cpu':>8}")
    for r in rows:
        ti = f"{r['interpreter'] * 1e3:.1f}" if r.get("interpreter") else r.get("interpreter_note", "-")
        ratio = r.get("ratio", {})
        print(f"{r['kernel']:<18} {r['elements']:>9} {r['interp'] * 1e3:>9.1f} {r['cpu'] * 1e3:>9.1f} {ti:>14} "
              f"{ratio.get('interp', float('nan')):>9.1f} {ratio.get('cpu', float('nan')):>8.1f}")


if __name__ == "__main__":
    interpret_child(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]))
