#!/usr/bin/env python3
"""Which driver the host JIT gives each kernel of the test corpus (tests/fixtures/**/*.ptx):

  * ``simd``: the warp-as-SIMD path (jit.simd) takes it: a warp's 32 lanes run as vector lanes;
  * ``compact``: the kernel never stops, so its threads run start to end in one record per host
    thread (jit.compact), the fast path for memory-bound kernels;
  * ``per-thread``: a record per thread, resumed at each stop (jit.driver), with the stops that
    need it (barrier, warp exchange, printf, yield, ...) or the executor callback (textures,
    malloc/free in a `.func`) as the reason;
  * ``refused``: the host JIT does not lower the kernel (the lifter's located error, first line).

Only the lifter runs (no LLVM), so the whole corpus takes a minute or so.

    python benchmarks/jit_modes.py                # counts, then one line per kernel not compact
    python benchmarks/jit_modes.py --json         # one object: counts and every kernel's verdict
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import ptxvm  # noqa: E402
from ptxvm.driver.api import default_device  # noqa: E402
from ptxvm.jit import layout as L  # noqa: E402
from ptxvm.jit.host import HostHooks  # noqa: E402
from ptxvm.jit.loader import host_target  # noqa: E402
from ptxvm.lift.module import lift_kernel  # noqa: E402
from ptxvm.machine.symbols import layout  # noqa: E402

STATE_NAMES = {v: k.lower() for k, v in vars(L.State).items() if k.isupper()}


def verdict(module: ptxvm.Module, name: str) -> tuple[str, str]:
    """(mode, reason) of one kernel."""
    k = module[name]
    hooks = HostHooks(triple=host_target()[0])
    try:
        lay = layout(module.ir, k.ir, default_device().image(module), 0)
        lift_kernel(module.ir, k.ir.name, hooks, lay)
    except Exception as e:  # noqa: BLE001 - a census: every refusal is a verdict, not a crash
        return "refused", f"{type(e).__name__}: {str(e).splitlines()[0][:160]}"
    from ptxvm.jit.simd.accept import refusal      # the warp-as-SIMD path comes first (jit.simd)
    why_not = refusal(k.ir, lay)
    if why_not is None:
        return "simd", ""
    if hooks.compact:
        return "compact", f"simd: {why_not}"
    why = sorted(STATE_NAMES.get(s, str(s)) for s in hooks.stop_states)
    if hooks.host_calls:
        why.append("executor callback")
    return "per-thread", ", ".join(why) + f"; simd: {why_not}"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", action="store_true")
    ap.add_argument("files", nargs="*", type=Path, help="PTX files (default: tests/fixtures/**/*.ptx)")
    args = ap.parse_args(argv)
    files = args.files or sorted((ROOT / "tests" / "fixtures").rglob("*.ptx"))
    rows = []
    for f in files:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                module = ptxvm.Module.from_file(f)
        except Exception as e:  # noqa: BLE001
            rows.append({"file": str(f.relative_to(ROOT)), "kernel": "*", "mode": "unparsed", "reason": str(e)[:160]})
            continue
        for name in module.kernels:
            mode, reason = verdict(module, name)
            rows.append({"file": str(f.relative_to(ROOT)) if f.is_relative_to(ROOT) else str(f), "kernel": name,
                         "mode": mode, "reason": reason})
    counts = Counter(r["mode"] for r in rows)
    reasons = Counter(r["reason"] for r in rows if r["mode"] == "per-thread")
    simd_refusals = Counter(r["reason"].split("; simd: ")[-1].split("`: ")[-1] for r in rows
                            if "simd: " in r["reason"])
    if args.json:
        print(json.dumps({"counts": counts, "per_thread_reasons": reasons, "simd_refusals": simd_refusals,
                          "kernels": rows}, indent=1))
        return 0
    print(f"{len(rows)} kernels in {len(files)} files: " + ", ".join(f"{m} {n}" for m, n in counts.most_common()))
    for why, n in reasons.most_common():
        print(f"  per-thread, {n:4d}: {why}")
    for why, n in simd_refusals.most_common(15):
        print(f"  not simd, {n:4d}: {why}")
    for r in rows:
        if r["mode"] in ("refused", "unparsed"):
            print(f"  {r['mode']}: {r['file']} {r['kernel']}: {r['reason']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
