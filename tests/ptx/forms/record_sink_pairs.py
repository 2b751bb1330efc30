"""The sink `_`: one half of a `d|p` pair, a whole destination, a vector element, a source;
and ptxas's verdict on each form.

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

# A whole `_` destination, `_` in vector destinations, and `_` as a source (all on sm_90, PTX
# 8.6, where elect.sync and the mbarrier forms exist). ptxas 13.0 discards the result of atom,
# setp, lop3 and mbarrier.arrive[_drop] only ("Result discard mode is not allowed" elsewhere).
SINGLE: dict[str, str] = {
    "add_cc": "add.cc.u32 _, %r1, %r2;",
    "addc_cc": "addc.cc.u32 _, %r1, %r2;",
    "addc": "addc.u32 _, %r1, %r2;",
    "sub_cc": "sub.cc.u32 _, %r1, %r2;",
    "subc": "subc.u32 _, %r1, %r2;",
    "mad_lo_cc": "mad.lo.cc.u32 _, %r1, %r2, %r3;",
    "add": "add.u32 _, %r1, %r2;",
    "mov": "mov.u32 _, %r1;",
    "mov_pred": "mov.pred _, %p1;",
    "not_pred": "not.pred _, %p1;",
    "ld_global": "ld.global.u32 _, [%rd1];",
    "ld_shared": "ld.shared.u32 _, [%rd1];",
    "ld_nc": "ld.global.nc.u32 _, [%rd1];",
    "ldu": "ldu.global.u32 _, [%rd1];",
    "setp": "setp.eq.u32 _, %r1, %r2;",
    "setp_and": "setp.eq.and.u32 _, %r1, %r2, %p1;",
    "set": "set.eq.u32.u32 _, %r1, %r2;",
    "testp": "testp.finite.f32 _, %f1;",
    "shfl_up": "shfl.sync.up.b32 _, %r1, 1, 0, -1;",
    "shfl_bfly": "shfl.sync.bfly.b32 _, %r1, 1, 31, -1;",
    "vote_ballot": "vote.sync.ballot.b32 _, %p1, -1;",
    "vote_all": "vote.sync.all.pred _, %p1, -1;",
    "match": "match.any.sync.b32 _, %r1, -1;",
    "redux": "redux.sync.add.u32 _, %r1, -1;",
    "activemask": "activemask.b32 _;",
    "cvt": "cvt.u64.u32 _, %r1;",
    "cvta": "cvta.to.global.u64 _, %rd1;",
    "isspacep": "isspacep.global _, %rd1;",
    "mul_lo": "mul.lo.u32 _, %r1, %r2;",
    "mul_wide": "mul.wide.u32 _, %r1, %r2;",
    "and": "and.b32 _, %r1, %r2;",
    "selp": "selp.u32 _, %r1, %r2, %p1;",
    "popc": "popc.b32 _, %r1;",
    "fns": "fns.b32 _, %r1, %r2, 1;",
    "bfind": "bfind.u32 _, %r1;",
    "prmt": "prmt.b32 _, %r1, %r2, %r3;",
    "lop3_plain": "lop3.b32 _, %r1, %r2, %r3, 0xF8;",
    "atom_add": "atom.global.add.u32 _, [%rd1], 1;",
    "atom_add_shared": "atom.shared.add.u32 _, [%rd1], 1;",
    "atom_add_generic_u64": "atom.add.u64 _, [%rd1], 1;",
    "atom_exch": "atom.global.exch.b32 _, [%rd1], 1;",
    "atom_add_f32": "atom.global.add.f32 _, [%rd1], %f1;",
    "atom_inc": "atom.global.inc.u32 _, [%rd1], 1;",
    "atom_cas": "atom.global.cas.b32 _, [%rd1], 1, 2;",
    "atom_cas_b64": "atom.global.cas.b64 _, [%rd1], %rd2, %rd3;",
    "atom_v2_f32_elem": "atom.global.v2.f32.add {_, %f1}, [%rd1], {%f1, %f2};",
    "mbarrier_arrive": "mbarrier.arrive.shared.b64 _, [%rd1];",
    "mbarrier_arrive_cta": "mbarrier.arrive.shared::cta.b64 _, [%rd1];",
    "mbarrier_arrive_drop": "mbarrier.arrive_drop.shared.b64 _, [%rd1];",
    "mbarrier_arrive_expect_tx": "mbarrier.arrive.expect_tx.shared::cta.b64 _, [%rd1], 16;",
    "mbarrier_test_wait": "mbarrier.test_wait.shared.b64 _, [%rd1], %rd2;",
    "mbarrier_try_wait": "mbarrier.try_wait.shared::cta.b64 _, [%rd1], %rd2;",
    "mbarrier_pending_count": "mbarrier.pending_count.b64 _, %rd2;",
    "elect": "elect.sync _, -1;",
    "elect_sink_pred": "elect.sync _|%p0, -1;",
    "elect_reg_sink": "elect.sync %r1|_, -1;",
    "elect_reg_only": "elect.sync %r1, -1;",
    "elect_pair": "elect.sync %r1|%p0, -1;",
    "vec_ld_second": "ld.global.v2.u32 {%r1, _}, [%rd1];",
    "vec_ld_first": "ld.global.v2.u32 {_, %r1}, [%rd1];",
    "vec_ld_v4_two": "ld.global.v4.u32 {_, %r1, _, %r2}, [%rd1];",
    "vec_ld_all": "ld.global.v2.u32 {_, _}, [%rd1];",
    "vec_mov_hi": "mov.b64 {%r1, _}, %rd1;",
    "vec_mov_lo": "mov.b64 {_, %r1}, %rd1;",
    "vec_mov_b32_halves": "mov.b32 {%h1, _}, %r1;",
    "vec_mov_all": "mov.b64 {_, _}, %rd1;",
    "src_mov": "mov.u32 %r1, _;",
    "src_add_first": "add.u32 %r1, _, %r2;",
    "src_add_last": "add.u32 %r1, %r2, _;",
    "src_st": "st.global.u32 [%rd1], _;",
    "src_red": "red.global.add.u32 [%rd1], _;",
    "src_atom": "atom.global.add.u32 _, [%rd1], _;",
    "src_atom_cas": "atom.global.cas.b32 %r1, [%rd1], _, 2;",
    "src_vec_st": "st.global.v2.u32 [%rd1], {%r1, _};",
    "src_vec_mov": "mov.u32 %r1, {_};",
    "src_vec_st_one": "st.global.u32 [%rd1], {_};",
    "src_pair": "add.u32 %r1, %r2, _|%p0;",
    "src_addr": "ld.global.u32 %r1, [_];",
    "bra": "bra _;",
}

DISAGREEMENTS: dict[str, str] = {}


def all_cases() -> list[dict]:
    return [{"name": f"sinkpair/{k}", "arch": "sm_80", "ptx": module(v, version="8.5")}
            for k, v in FORMS.items()] + \
        [{"name": f"sink/{k}", "arch": "sm_90", "ptx": module(v, version="8.6", arch="sm_90")}
         for k, v in SINGLE.items()]


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
