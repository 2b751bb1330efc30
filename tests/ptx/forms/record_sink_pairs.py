"""The sink `_` as one half of a `d|p` destination pair, and ptxas's verdict on each form.

    python tests/ptx/forms/record_sink_pairs.py [--ptxas /usr/local/bin/ptxas]

writes tests/data/ptxas_sink_pairs.json (same layout as record_ptxas.py's file; read by
tests/frontend/test_sink_pairs.py, no ptxas needed there). What ptxas 13.0 showed: `_|p`
is taken by setp and lop3.BoolOp (p a predicate), refused by shfl ("Result discard mode
is not allowed") and by instructions without a pair; `d|_` is taken after any destination
(even add/mov) except where the predicate is required (lop3.BoolOp); `_|_` is a syntax error.
Not catalogued: `@%p1 setp.eq.u32 _|%p0, ...` makes ptxas 13.0 crash (SIGSEGV).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from record_ptxas import module, run_ptxas  # noqa: E402

OUT = Path(__file__).resolve().parents[2] / "data" / "ptxas_sink_pairs.json"

LOP = "lop3.and.b32 {d}, %r1, %r2, %r3, 0xF8, %p1;"
SHFL = "shfl.sync.up.b32 {d}, %r1, 1, 0, -1;"
SETP = "setp.eq.u32 {d}, %r1, %r2;"
SETP_AND = "setp.lt.and.s32 {d}, %r1, %r2, %p1;"

FORMS: dict[str, str] = {
    "lop3/sink_pred": LOP.format(d="_|%p0"),
    "lop3/sink_pred_or_not": "lop3.or.b32 _|%p0, %r1, %r2, %r3, 0x80, !%p1;",
    "lop3/sink_pred_spaced": LOP.format(d="_ | %p0"),
    "lop3/sink_bare_pred": ".reg .pred q;\n" + LOP.format(d="_|q"),
    "lop3/reg_sink": LOP.format(d="%r4|_"),
    "lop3/sink_sink": LOP.format(d="_|_"),
    "lop3/sink_u32": LOP.format(d="_|%r4"),
    "lop3/sink_not_pred": LOP.format(d="_|!%p0"),
    "lop3/plain_sink_pred": "lop3.b32 _|%p0, %r1, %r2, %r3, 0xF8;",
    "lop3/plain_sink": "lop3.b32 _, %r1, %r2, %r3, 0xF8;",
    "shfl/sink_pred": SHFL.format(d="_|%p0"),
    "shfl/idx_sink_pred": "shfl.sync.idx.b32 _|%p0, %r1, 1, 31, -1;",
    "shfl/reg_sink": SHFL.format(d="%r4|_"),
    "shfl/bare_reg_sink": ".reg .u32 r0;\n" + SHFL.format(d="r0|_"),
    "shfl/sink_sink": SHFL.format(d="_|_"),
    "shfl/pred_sink": SHFL.format(d="%p0|_"),
    "setp/sink_pred": SETP.format(d="_|%p0"),
    "setp/pred_sink": SETP.format(d="%p0|_"),
    "setp/sink_sink": SETP.format(d="_|_"),
    "setp/sink_bare_pred": ".reg .pred q;\n" + SETP.format(d="_|q"),
    "setp/sink_spaced": SETP.format(d="_ | %p0"),
    "setp/pred_sink_spaced": SETP.format(d="%p0 | _"),
    "setp/and_sink_pred": SETP_AND.format(d="_|%p0"),
    "setp/and_pred_sink": SETP_AND.format(d="%p0|_"),
    "setp/f32_sink_pred": "setp.lt.f32 _|%p0, %f1, %f2;",
    "setp/sink_u32": SETP.format(d="_|%r4"),
    "setp/u32_sink": SETP.format(d="%r4|_"),
    "setp/sink_imm": SETP.format(d="_|1"),
    "setp/sink_warp_sz": SETP.format(d="_|WARP_SZ"),
    "setp/sink_pair_in_braces": SETP.format(d="{_|%p0}"),
    "set/sink_u32": "set.eq.u32.u32 _|%r4, %r1, %r2;",
    "add/reg_sink": "add.u32 %r4|_, %r1, %r2;",
    "add/reg_pred": "add.u32 %r4|%p0, %r1, %r2;",
    "mov/reg_sink": "mov.u32 %r4|_, %r1;",
    "mov/sink_pred": "mov.u32 _|%p0, %r1;",
}

DISAGREEMENTS: dict[str, str] = {}


def all_cases() -> list[dict]:
    return [{"name": f"sinkpair/{k}", "arch": "sm_80", "ptx": module(v, version="8.5")}
            for k, v in FORMS.items()]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ptxas", default="/usr/local/bin/ptxas")
    args = ap.parse_args()
    version = subprocess.run([args.ptxas, "--version"], capture_output=True, text=True).stdout.strip().split("\n")[-1]
    records = []
    for case in all_cases():
        ok, msg = run_ptxas(args.ptxas, case["ptx"], case["arch"])
        records.append({**case, "ptxas": "accept" if ok else "reject", "ptxas_message": "" if ok else msg})
    OUT.write_text(json.dumps({"ptxas": version, "cases": records, "disagreements": DISAGREEMENTS},
                              indent=1) + "\n")
    acc = sum(c["ptxas"] == "accept" for c in records)
    print(f"{len(records)} cases ({acc} accepted, {len(records) - acc} rejected by ptxas) -> {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
