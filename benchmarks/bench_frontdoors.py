#!/usr/bin/env python3
"""Front doors benchmark: numba ``@cuda.jit`` kernels on ptxvm's interpreter and JIT against numba's
own CUDA simulator (``NUMBA_ENABLE_CUDASIM=1``), in the same run.

For each kernel of tests/python_kernels/numba_doc/kernels.py (numba-documentation style: grid-stride
loops, shared-memory matmul, atomics, warp shuffles and votes, 2-D/3-D/F-order/strided arrays,
device functions, local arrays, ...) at 2^14 threads it times one launch, numpy arguments in and
out, as a numba user runs it:
  * ``ptxvm.numba.jit`` on ``device="interp"`` and on ``device="cpu"`` (the LLVM JIT), in the steady
    state (the first launch, which compiles through numba's compile_ptx and ptxvm, is not timed;
    the best of ``--repeat``, each on fresh copies of the arguments);
  * the same kernel under numba's CUDA simulator, in a subprocess with NUMBA_ENABLE_CUDASIM=1 (so
    ``numba.cuda.jit`` is the simulator's), once, with ``--sim-timeout`` seconds per kernel (a
    kernel past it is reported as ``> timeout``, the ratio as a lower bound);
and reports the times and the ratios simulator/interp and simulator/JIT (goal: >= 1,000x on every
kernel the simulator can run). Every result, ptxvm's and the simulator's, is checked against the
kernel's numpy model. Kernels the simulator cannot run (warp shuffles and votes: it has no *_sync
warp intrinsics) are marked so and still timed on ptxvm.

    python benchmarks/bench_frontdoors.py                 # 2^14 threads (several minutes: the simulator)
    python benchmarks/bench_frontdoors.py --quick         # 2^10 threads
    python benchmarks/bench_frontdoors.py --cases vadd shared_matmul --json
Needs ``pip install 'ptxvm[numba]'``; the JIT needs llvmlite.

With Triton installed (``pip install 'ptxvm[triton]'``), the Triton kernels of
tests/triton/kernels.py follow (benchmarks/frontdoor_triton.py): ptxvm.triton on the interpreter
and the JIT against Triton's own interpreter (TRITON_INTERPRET=1, which needs torch tensors);
``--no-triton`` to leave them out, ``--triton-only`` for them alone.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
KERNELS = ROOT / "tests" / "python_kernels"


def _cases(names: list[str] | None):
    sys.path.insert(0, str(KERNELS))
    from numba_doc.kernels import CASES
    chosen = [c for c in CASES if not names or c.name in names]
    unknown = set(names or ()) - {c.name for c in CASES}
    if unknown:
        raise SystemExit(f"unknown case(s) {', '.join(sorted(unknown))}; known: {', '.join(c.name for c in CASES)}")
    return chosen


def _matches(got, want, rtol: float) -> bool:
    if isinstance(want, np.ndarray):
        return got.shape == want.shape and (np.allclose(got, want, rtol=rtol, atol=0) if rtol
                                            else np.array_equal(got, want))
    if isinstance(want, tuple):
        return all(_matches(g, w, rtol) for g, w in zip(got, want))
    return got == want


def _run(case, launch, n: int, repeat: int) -> tuple[float, bool]:
    """Best time of ``repeat`` launches on fresh copies; whether the last matched the model."""
    args = case.make(np.random.default_rng(0), n)
    want = case.model(copy.deepcopy(args))
    best, ok = float("inf"), False
    for _ in range(repeat):
        a = copy.deepcopy(args)
        t0 = time.perf_counter()
        launch(case, a)
        best = min(best, time.perf_counter() - t0)
        ok = all(_matches(g, w, case.rtol) for g, w in zip(a, want))
    return best, ok


def _ptxvm_launch(executor: str):
    def launch(case, a):
        case.kernel.with_device(executor)[case.config(a)](*a)
    return launch


def _sim_launch(case, a):
    case.kernel[case.config(a)](*a)


def simulator_child(name: str, n: int) -> None:
    """In the NUMBA_ENABLE_CUDASIM=1 subprocess: the case's kernel built by the simulator's jit."""
    from numba import cuda
    import ptxvm.numba
    ptxvm.numba.jit = cuda.jit           # kernels.py decorates with ptxvm.numba.jit: make it numba's
    (case,) = _cases([name])
    try:
        t, ok = _run(case, _sim_launch, n, 1)
        print(json.dumps({"time": t, "ok": ok}))
    except Exception as e:               # what the simulator cannot run is reported, not fatal
        print(json.dumps({"error": f"{type(e).__name__}: {str(e).splitlines()[0][:160] if str(e) else ''}"}))


def _simulator(name: str, n: int, timeout: float) -> dict:
    env = {**os.environ, "NUMBA_ENABLE_CUDASIM": "1",
           "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    try:
        r = subprocess.run([sys.executable, __file__, "--_simulator", name, str(n)], capture_output=True,
                           text=True, env=env, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"timeout": timeout}
    lines = [ln for ln in r.stdout.splitlines() if ln.startswith("{")]
    return json.loads(lines[-1]) if lines else {"error": (r.stderr.strip().splitlines() or ["no output"])[-1][:160]}


def bench_numba(args) -> list[dict]:
    from ptxvm.driver.api import available_devices
    rows = []
    n = 1 << (10 if args.quick else 14)
    devices = [d for d in ("interp", "cpu") if d in available_devices()]
    for case in _cases(args.cases):
        row = {"kernel": case.name, "threads": n}
        for dev in devices:
            _run(case, _ptxvm_launch(dev), n, 1)                # compiles (numba + ptxvm): not timed
            row[dev], row[f"{dev}_ok"] = _run(case, _ptxvm_launch(dev), n, args.repeat)
        if case.simulator and not args.no_simulator:
            sim = _simulator(case.name, n, args.sim_timeout)
            row["simulator"] = sim.get("time")
            row["simulator_ok"] = sim.get("ok")
            row["simulator_note"] = sim.get("error") or (f"> {sim['timeout']:.0f} s" if "timeout" in sim else "")
            floor = sim.get("time") or sim.get("timeout")
            for dev in devices:
                if floor and "error" not in sim:
                    row[f"sim/{dev}"] = floor / row[dev]
        else:
            row["simulator_note"] = "simulator has no *_sync warp intrinsics" if not case.simulator else "skipped"
        rows.append(row)
        if not args.json:
            _print_row(row, devices)
    return rows


def _print_row(row: dict, devices: list[str]) -> None:
    def ms(v):
        return f"{v * 1e3:10.2f}" if isinstance(v, float) else f"{'-':>10}"
    ratios = "  ".join(f"sim/{d} {'>' if 's' in row.get('simulator_note', '')[:1] else ''}"
                       f"{row[f'sim/{d}']:>9,.0f}x" if f"sim/{d}" in row else f"sim/{d} {'-':>10}" for d in devices)
    ok = all(row.get(f"{d}_ok", True) for d in devices) and row.get("simulator_ok") in (None, True)
    print(f"{row['kernel']:24s} " + " ".join(f"{d} {ms(row.get(d))} ms" for d in devices)
          + f"  sim {ms(row.get('simulator'))} ms  {ratios}  {'ok' if ok else 'MISMATCH'} {row.get('simulator_note', '')}",
          flush=True)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--_simulator"]:
        simulator_child(argv[1], int(argv[2]))
        return 0
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="2^10 threads instead of 2^14")
    ap.add_argument("--cases", nargs="*", help="kernel names (default: all)")
    ap.add_argument("--repeat", type=int, default=3, help="ptxvm launches per executor, best kept")
    ap.add_argument("--sim-timeout", type=float, default=300.0, help="seconds per kernel on the simulator")
    ap.add_argument("--no-simulator", action="store_true", help="ptxvm only")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--no-triton", action="store_true", help="leave the Triton kernels out")
    ap.add_argument("--triton-only", action="store_true", help="only the Triton kernels")
    args = ap.parse_args(argv)
    os.environ.pop("NUMBA_ENABLE_CUDASIM", None)
    rows = [] if args.triton_only else bench_numba(args)
    triton_rows = []
    if not args.no_triton:
        sys.path.insert(0, str(ROOT / "benchmarks"))
        import frontdoor_triton
        triton_rows = frontdoor_triton.bench(1 << (10 if args.quick else 14), args.repeat, args.sim_timeout,
                                             interpreter=not args.no_simulator)
        if triton_rows and not args.json:
            frontdoor_triton.print_rows(triton_rows)
    if args.json:
        print(json.dumps({"numba": rows, "triton": triton_rows}, indent=1))
    bad = [r["kernel"] for r in rows + triton_rows if not all(r.get(k, True) for k in ("interp_ok", "cpu_ok"))
           or r.get("simulator_ok") is False or r.get("interpreter_ok") is False]
    if bad:
        print(f"MISMATCH against the numpy models: {', '.join(bad)}", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
