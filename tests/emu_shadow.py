"""A pytest plugin that repeats every interpreter launch on the AMD ISA emulator.

    EMU_SHADOW_TARGETS=gfx90a,gfx942,gfx1100 EMU_SHADOW_REPORT=out.json \\
        python -m pytest -p emu_shadow tests/interp/test_interp_kernels.py tests/interp/test_interp_cases.py

Each launch on ``interp`` runs as usual (the test's own assertions check it against its
model); then the same kernel runs on ``emu:<target>`` with copies of the inputs the
interpreter got, and every array argument must end bit for bit equal to the interpreter's
(kernels with ``.approx`` instructions: within the PTX ISA's error bounds, ``APPROX_ULP``).
A launch that meets a documented emulator limit (``emu_limits``) is skipped by its reason.
At the end the counts, skip reasons and disagreements are printed and written to the report.
Used by ``test_emu_executor.py::test_fixture_kernels_agree_with_the_interpreter`` (slow).
"""

from __future__ import annotations

import io
import json
import os
import time
from collections import Counter
from dataclasses import replace

import emu_limits
import numpy as np
import pytest

TARGETS = [t for t in os.environ.get("EMU_SHADOW_TARGETS", "gfx942").split(",") if t]
MAX_THREADS = int(os.environ.get("EMU_SHADOW_MAX_THREADS", "0"))       # 0: no cap
# Kernels with `.approx` instructions may differ from the interpreter within the PTX ISA's
# error bounds (§9.7.3: sin/cos.approx.f32 absolute 2^-20.9, ex2/lg2/div.approx 2 ulp, rcp/
# rsqrt 1 ulp), each executor's error adding up, and a quotient of approximations (tan =
# sin/cos) amplifying them: accepted within 4 ulp, or 2^-19.9 absolute, or 2^-14 relative.
# Their exact bounds are checked per executor by the fixture tests' own models.
APPROX_ULP = 4
APPROX_ABS = 2.0 ** -19.9
APPROX_REL = 2.0 ** -14

RESULTS: list[dict] = []


def _copy_args(args: tuple) -> list:
    """Deep copies of the arguments, views of one array staying views of one copy."""
    roots: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    out = []
    for a in args:
        if not isinstance(a, np.ndarray):
            out.append(a)
            continue
        root = a
        while isinstance(root.base, np.ndarray):
            root = root.base
        if id(root) not in roots:
            roots[id(root)] = (root, root.copy())
        r, rc = roots[id(root)]
        off = a.__array_interface__["data"][0] - r.__array_interface__["data"][0]
        if r.flags.c_contiguous and a.flags.c_contiguous and 0 <= off <= r.nbytes - a.nbytes:
            view = np.ndarray(a.shape, a.dtype, buffer=rc.reshape(-1).view(np.uint8), offset=off, strides=a.strides)
            view.flags.writeable = a.flags.writeable
            out.append(view)
        else:
            out.append(a.copy())
    return out


def _ulp(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    bits = {4: np.int32, 8: np.int64, 2: np.int16}[a.dtype.itemsize]
    ia, ib = a.view(bits).astype(np.int64), b.view(bits).astype(np.int64)
    lo = np.iinfo(bits).min
    ia = np.where(ia < 0, lo - ia, ia)
    ib = np.where(ib < 0, lo - ib, ib)
    return np.abs(ia - ib)


def _compare(module, kernel: str, want: list, got: list, params, asm: str) -> tuple[str, str | None]:
    """('ok' | 'skip' | 'fail', detail)."""
    approx = emu_limits.has_approx(module, kernel)
    for i, (w, g) in enumerate(zip(want, got)):
        if not isinstance(w, np.ndarray):
            continue
        if np.array_equal(w.reshape(-1).view(np.uint8), g.reshape(-1).view(np.uint8)):
            continue
        if approx and w.dtype.kind == "f":
            wf, gf = w.reshape(-1), g.reshape(-1)
            same = (wf.view(np.uint8).reshape(len(wf), -1) == gf.view(np.uint8).reshape(len(gf), -1)).all(1)
            both_nan = np.isnan(wf) & np.isnan(gf)
            err = np.abs(wf.astype(np.float64) - gf)
            close = (_ulp(wf, gf) <= APPROX_ULP) | (err <= APPROX_ABS) | (err <= APPROX_REL * np.abs(wf))
            if np.all(same | both_nan | close):
                continue                     # within the .approx bounds: agreement, not an explained skip
        reason = emu_limits.explains_mismatch(module, kernel, w, g, asm)
        if reason:
            return "skip", reason
        if approx and w.dtype.kind == "f":
            outside = np.flatnonzero(~(same | both_nan | close))
            j = int(outside[0])
            return "fail", (f"argument {i} ({params[i].name}, {w.dtype}{list(w.shape)}, .approx kernel): element {j} "
                            f"beyond the approx bound: interp {wf[j]!r} emu {gf[j]!r} ({outside.size} elements)")
        flat_w, flat_g = w.reshape(-1), g.reshape(-1)
        per_elem = flat_w.view(np.uint8).reshape(flat_w.size, -1) != flat_g.view(np.uint8).reshape(flat_g.size, -1)
        bad = np.flatnonzero(per_elem.any(1))
        first, n_bad = int(bad[0]), int(bad.size)
        return "fail", (f"argument {i} ({params[i].name}, {w.dtype}{list(w.shape)}): first mismatch at element "
                        f"{first}: interp {flat_w[first]!r} emu {flat_g[first]!r} ({n_bad} of {flat_w.size} "
                        "elements differ)")
    return "ok", None


def _differs(want: list, got: list) -> bool:
    def raw(a: np.ndarray) -> np.ndarray:
        return a.reshape(-1).view(np.uint8)
    return any(isinstance(w, np.ndarray) and not np.array_equal(raw(w), raw(g)) for w, g in zip(want, got))


def _asm(module, target: str) -> str:
    """The assembly listing of the code object the launch ran (a second code generation)."""
    from ptxvm.driver.executors import emu
    return emu.code_object(module, target).asm


def _shadow(request, interp_launch):
    """The emulated launches first (they see the module's variables as the interpreter will),
    then the interpreter's (the test checks it), then the comparison."""
    from ptxvm.driver import executors
    kernel = request.kernel
    nthreads = int(np.prod(request.grid) * np.prod(request.block))
    base = {"test": os.environ.get("PYTEST_CURRENT_TEST", "?").split(" ")[0], "kernel": kernel.name,
            "file": kernel.module.filename, "grid": request.grid, "block": request.block}
    pending, first = [], len(RESULTS)
    for target in TARGETS:
        rec = dict(base, target=target)
        reason = emu_limits.before_run(kernel.module, kernel.name)
        if reason is None and MAX_THREADS and nthreads > MAX_THREADS:
            reason = "size_cap"
        if reason:
            RESULTS.append(dict(rec, outcome="skip", reason=reason))
            continue
        got = _copy_args(request.args)
        # The emulated launch's printf goes to a sink: the test reads the interpreter's output.
        sub = executors.LaunchRequest(kernel, request.grid, request.block, tuple(got), request.shared_mem, None,
                                      trace_out=io.StringIO(), cooperative=request.cooperative)
        t0 = time.time()
        try:
            executors.get(f"emu:{target}").launch(sub)
        except Exception as e:  # noqa: BLE001 - every failure is recorded, classified below
            why = emu_limits.classify_error(e, kernel.module, kernel.name, request.grid)
            RESULTS.append(dict(rec, outcome="skip" if why else "fail", reason=why,
                                detail=f"{type(e).__name__}: {str(e).splitlines()[0][:300]}",
                                seconds=round(time.time() - t0, 2)))
            continue
        pending.append((rec, target, got, round(time.time() - t0, 2)))
    try:
        stats = interp_launch(request)      # the real launch: the test checks it
    except BaseException:
        del RESULTS[first:]                 # a launch meant to fault (the test expects it) is not compared
        raise
    want = list(request.args)
    for rec, target, got, seconds in pending:
        asm = _asm(kernel.module, target) if _differs(want, got) else ""
        outcome, detail = _compare(kernel.module, kernel.name, want, got, kernel.params, asm)
        RESULTS.append(dict(rec, outcome=outcome, reason=detail if outcome == "skip" else None,
                            detail=detail if outcome == "fail" else None, seconds=seconds))
    return stats


def pytest_configure(config) -> None:
    from ptxvm.driver import executors
    interp = executors.get("interp")
    executors.register(replace(interp, launch=lambda r: _shadow(r, interp.launch)), replace=True)


def summary() -> dict:
    by = Counter((r["target"], r["outcome"]) for r in RESULTS)
    reasons = Counter((r["target"], r["reason"]) for r in RESULTS if r["outcome"] == "skip")
    return {"targets": TARGETS,
            "counts": {t: {o: by[(t, o)] for o in ("ok", "skip", "fail")} for t in TARGETS},
            "skips": {t: {k: n for (tt, k), n in sorted(reasons.items()) if tt == t} for t in TARGETS},
            "failures": [r for r in RESULTS if r["outcome"] == "fail"],
            "results": RESULTS}


def pytest_terminal_summary(terminalreporter) -> None:
    s = summary()
    w = terminalreporter.write_line
    w("emulator shadow run: launches per target (ok / skip / fail)")
    for t in TARGETS:
        c = s["counts"][t]
        w(f"  emu:{t}: {c['ok']} ok, {c['skip']} skipped, {c['fail']} failed; skipped by reason: "
          + (", ".join(f"{k} {n}" for k, n in s["skips"][t].items()) or "none"))
    for k in sorted({r["reason"] for r in RESULTS if r["outcome"] == "skip"}):
        w(f"  {k}: {emu_limits.LIMITS.get(k, 'launch larger than EMU_SHADOW_MAX_THREADS')}")
    for r in s["failures"]:
        w(f"  FAIL emu:{r['target']} {r['kernel']} grid {r['grid']} block {r['block']} ({r['test']}): {r['detail']}")
    path = os.environ.get("EMU_SHADOW_REPORT")
    if path:
        with open(path, "w") as f:
            json.dump(s, f, indent=1, default=str)


@pytest.fixture
def emu_shadow_results() -> list[dict]:
    return RESULTS
