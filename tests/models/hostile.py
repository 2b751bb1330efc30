"""Hostile-kernel harness shared by test_hostile and test_jit_safety: kernel builders (entry, recursion), and run_cases, which runs cases on one executor in a child process (run as a script: the child) and reports each outcome and where it was reported (where)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HEAD = ".version 8.0\n.target sm_80\n.address_size 64\n"


REGS = ".reg .pred %p<4>;\n.reg .b32 %r<16>;\n.reg .b64 %rd<16>;\n"


OUT = ".param .u64 pout"


LOAD_OUT = "ld.param.u64 %rd1, [pout];\ncvta.to.global.u64 %rd1, %rd1;\n"


def entry(body: str, params: str = OUT, decls: str = "", before: str = "") -> str:
    return HEAD + before + f".visible .entry k({params})\n{{\n" + REGS + decls + body + "\nret;\n}\n"


# A recursive `.func` with a by-value array parameter of ``size`` bytes, called ``depth`` deep.
def recursion(size: int, depth: int) -> str:
    return entry(
        f"mov.u32 %r1, {depth};\n{{\n.param .b32 rr;\n.param .b32 dd;\n.param .b8 nn[{size}];\n"
        "st.param.b32 [dd], %r1;\ncall (rr), f, (dd, nn);\nld.param.b32 %r3, [rr];\n}",
        before=f".func (.param .b32 r) f(.param .b32 d, .param .b8 n[{size}])\n{{\n{REGS}"
               "ld.param.b32 %r1, [d];\nsetp.eq.u32 %p1, %r1, 0;\n@%p1 bra DONE;\nsub.u32 %r2, %r1, 1;\n"
               f"{{\n.param .b32 rr;\n.param .b32 dd;\n.param .b8 nn[{size}];\nst.param.b32 [dd], %r2;\n"
               "call (rr), f, (dd, nn);\nld.param.b32 %r3, [rr];\n}\nDONE:\nst.param.b32 [r], %r1;\nret;\n}\n")


def child(device: str, cases_file: str) -> None:
    """Run the cases of ``cases_file`` (JSON: name -> case) on ``device``, one JSON line each: the
    outcome and where it was reported."""
    import numpy as np

    import ptxvm

    for name, (text, grid, block, spec, dyn) in json.loads(Path(cases_file).read_text()).items():
        args = tuple(np.zeros(6, np.uint32) if a == "out" else a for a in spec)
        rec: dict = {"case": name}
        try:
            k = ptxvm.Module(text, f"{name}.ptx")["k"]
            k(grid, block, args, device=device, shared_mem=dyn)
            rec["outcome"] = "ok"
        except ptxvm.PtxError as e:
            rec.update(outcome=type(e).__name__, line=getattr(e, "line", None),
                       kernel=getattr(e, "kernel", None), block=getattr(e, "block", None),
                       thread=getattr(e, "thread", None), space=getattr(e, "space", None),
                       address=getattr(e, "address", None), message=str(e).splitlines()[0][:300])
        except Exception as e:  # noqa: BLE001 - the parent reports it as a wrong outcome
            rec.update(outcome=f"raw {type(e).__name__}", message=str(e)[:300])
        print(json.dumps(rec), flush=True)


def run_cases(device: str, cases: dict[str, tuple], timeout: float = 600) -> dict[str, dict]:
    """The outcomes of ``cases`` on ``device`` from a child process (which must exit normally)."""
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2]))
    names = sorted(cases)
    with tempfile.TemporaryDirectory() as tmp:
        f = Path(tmp) / "cases.json"
        f.write_text(json.dumps({n: cases[n] for n in names}))
        p = subprocess.run([sys.executable, __file__, "--child", device, str(f)], capture_output=True, text=True,
                           timeout=timeout, env=env)
    assert p.returncode == 0, f"the {device} child died ({p.returncode}):\n{p.stdout[-2000:]}\n{p.stderr[-3000:]}"
    got = {r["case"]: r for r in map(json.loads, p.stdout.splitlines())}
    assert set(got) == set(names), p.stderr[-3000:]
    return got


KEYS = ("outcome", "kernel", "block", "thread", "line", "space")


def where(r: dict) -> dict:
    """What both executors must agree on: the error, where, and (outside global memory, whose
    allocations lie elsewhere in each child) the address."""
    out = {k: r.get(k) for k in KEYS}
    if r.get("space") not in ("global", "const"):
        out["address"] = r.get("address")
    return out


if __name__ == "__main__" and len(sys.argv) == 4 and sys.argv[1] == "--child":
    child(sys.argv[2], sys.argv[3])
