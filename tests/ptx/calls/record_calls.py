"""Generate `call` forms outside (and inside) the PTX ABI and record ptxas's verdict on each.

    python tests/ptx/calls/record_calls.py [--ptxas /usr/local/bin/ptxas]

writes tests/data/nonabi_calls.json: every case's name, PTX text and whether
`ptxas -arch=sm_80` accepted it (exit 0) or rejected it (with its first message; a crash counts
as a rejection). tests/ir/test_nonabi_call_forms.py reads that file (no ptxas needed) and checks
that ptxvm's parse + verify accepts exactly the accepted ones, and that the kernels of
tests/models/nonabi_calls.py (the ``kernel/...`` cases) are accepted. Where ptxvm still
disagrees, the case is listed in DISAGREEMENTS with the reason, expected to disagree (strict).

The families: ``form/`` (registers, immediates, `.param` variables, `_`, symbols as arguments
and results; vector formals; recursion; indirect calls), ``kind/`` (every pairing of
.u32/.s32/.b32/.f32 arguments in `.reg` and `.param` with formals of those types in either
space), ``imm/`` (integer, decimal, 0f and 0d immediates for integer, bit and float formals),
``abi/`` (ptxas's ABI-compilation rules: .pred/8/16-bit formals, several results, what a module
without the ABI may not do) and ``kernel/``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

TESTS = Path(__file__).resolve().parents[2]
OUT = TESTS / "data" / "nonabi_calls.json"

DISAGREEMENTS: dict[str, str] = {
    "form/reg_extern": "ptxas links the module alone and refuses the unresolved `.extern .func`; ptxvm loads it "
                       "and refuses the call when it runs",
    "abi/decl_only_nonabi": "ptxas links the module alone and refuses the unresolved `.func` declaration; ptxvm "
                            "loads it and refuses the call when it runs",
    "form/v2_u64arg": "ptxas 13 crashes (SIGSEGV, counted as a rejection) on this module; it accepts the same call "
                      "without the template's earlier `mov.u32 %r2, 0;` (sizes match: 8 bytes), so ptxvm accepts it",
    "abi/formal_bf16": "ptxas's parser refuses `.bf16` in a parameter list; ptxvm's declaration grammar takes it",
    "abi/ret_bf16": "ptxas's parser refuses `.bf16` in a parameter list; ptxvm's declaration grammar takes it",
    "abi/pformal_bf16": "ptxas's parser refuses `.bf16` in a parameter list; ptxvm's declaration grammar takes it",
    "abi/uncalled_formal_bf16": "ptxas's parser refuses `.bf16` in a parameter list; ptxvm's declaration grammar "
                                "takes it",
}

HEAD = ".version 8.0\n.target sm_80\n.address_size 64\n"
KERNEL = """.visible .entry k(.param .u64 out)
{
\t.reg .u32 %r<8>;
\t.reg .u64 %rd<8>;
\t.reg .pred %p<4>;
\t.reg .f32 %f<4>;
\t.reg .u16 %h<4>;
\tld.param.u64 %rd1, [out];
\tld.global.u32 %r1, [%rd1];
\tmov.u32 %r2, 0;
\tBODY
\tst.global.u32 [%rd1], %r2;
\tret;
}
"""


def module(func: str, body: str) -> str:
    return HEAD + func + KERNEL.replace("BODY", body)


def _fn(sig: str, body: str) -> str:
    return f".func {sig}\n{{\n" + "".join(f"\t{ln}\n" for ln in body.split("\n")) + "}\n"


RF = _fn("(.reg .u32 o) f(.reg .u32 a)", "add.u32 o, a, 1;\nret;")
PF = _fn("(.param .b32 o) f(.param .b32 a)", ".reg .u32 t;\nld.param.u32 t, [a];\nadd.u32 t, t, 1;\n"
         "st.param.u32 [o], t;\nret;")
V2 = _fn("(.reg .v2 .u32 out) f(.reg .v2 .u32 in)", "mov.u32 out.x, in.y;\nmov.u32 out.y, in.x;\nret;")
TWO = _fn("(.reg .u32 a, .reg .u32 b) f(.reg .u32 x)", "mov.u32 a, x;\nadd.u32 b, x, 1;\nret;")
G2 = _fn("(.reg .u32 o, .reg .u32 o2) g(.reg .u32 a)", "mov.u32 o, 1;\nmov.u32 o2, 1;\nret;")
FACT = _fn("(.reg .u32 o) fact(.reg .u32 n)", ".reg .pred p;\n.reg .u32 m, t;\nsetp.le.u32 p, n, 1;\n@p bra BASE;\n"
           "sub.u32 m, n, 1;\ncall (t), fact, (m);\nmul.lo.u32 o, n, t;\nret;\nBASE:\nmov.u32 o, 1;\nret;")


def forms() -> dict[str, tuple[str, str]]:
    u64f = _fn("(.reg .u64 o) f(.reg .u64 a)", "add.u64 o, a, 1;\nret;")
    return {
        "reg_reg": (RF, "call (%r2), f, (%r1);"),
        "reg_imm": (RF, "call (%r2), f, (7);"),
        "reg_neg_imm": (RF, "call (%r2), f, (-1);"),
        "reg_paramarg": (RF, "{ .param .b32 pa; .param .b32 pr; st.param.b32 [pa], %r1; call (pr), f, (pa); "
                             "ld.param.b32 %r2, [pr]; }"),
        "reg_paramarg_regret": (RF, "{ .param .b32 pa; st.param.b32 [pa], %r1; call (%r2), f, (pa); }"),
        "param_regarg": (PF, "{ .param .b32 pr; call (pr), f, (%r1); ld.param.b32 %r2, [pr]; }"),
        "param_regret": (PF, "{ .param .b32 pa; st.param.b32 [pa], %r1; call (%r2), f, (pa); }"),
        "param_reg_both": (PF, "call (%r2), f, (%r1);"),
        "param_imm": (PF, "call (%r2), f, (5);"),
        "same_reg": (RF, "call (%r1), f, (%r1); mov.u32 %r2, %r1;"),
        "reg_f32arg": (RF, "mov.b32 %f1, %r1; call (%r2), f, (%f1);"),
        "reg_u16arg": (RF, "cvt.u16.u32 %h1, %r1; call (%r2), f, (%h1);"),
        "reg_u64arg": (RF, "cvt.u64.u32 %rd2, %r1; call (%r2), f, (%rd2);"),
        "reg_u64ret": (RF, "call (%rd2), f, (%r1); cvt.u32.u64 %r2, %rd2;"),
        "two_returns": (TWO, "call (%r2, %r3), f, (%r1); add.u32 %r2, %r2, %r3;"),
        "two_returns_mixed": (_fn("(.reg .u32 a, .param .b32 b) f(.reg .u32 x)", "mov.u32 a, x;\n"
                                  "st.param.u32 [b], x;\nret;"), "call (%r2, %r3), f, (%r1);"),
        "two_returns_params": (_fn("(.param .b32 a, .param .b32 b) f(.reg .u32 x)", "st.param.u32 [a], x;\n"
                                   "st.param.u32 [b], x;\nret;"), "call (%r2, %r3), f, (%r1);"),
        "v2": (V2, "{ .reg .v2 .u32 v, w; mov.u32 v.x, %r1; mov.u32 v.y, 3; call (w), f, (v); "
                   "add.u32 %r2, w.x, w.y; }"),
        "v2_braces": (V2, "call ({%r2, %r3}), f, ({%r1, %r1});"),
        "v2_paramarg": (V2, "{ .param .align 8 .b8 pa[8]; .reg .v2 .u32 w; st.param.v2.u32 [pa], {%r1, %r3}; "
                            "call (w), f, (pa); mov.u32 %r2, w.x; }"),
        "v2_u64arg": (V2, "{ .reg .v2 .u32 w; cvt.u64.u32 %rd2, %r1; call (w), f, (%rd2); mov.u32 %r2, w.x; }"),
        "arg_vec_elem": (RF, "{ .reg .v2 .u32 v; mov.u32 v.x, %r1; call (%r2), f, (v.x); }"),
        "ret_vec_elem": (RF, "{ .reg .v2 .u32 v; call (v.y), f, (%r1); mov.u32 %r2, v.y; }"),
        "recursion": (FACT, "call (%r2), fact, (%r1);"),
        "indirect_proto": (RF, "{ .reg .u64 fp; mov.u64 fp, f; proto: .callprototype (.reg .u32 _) _ (.reg .u32 _); "
                               "call (%r2), fp, (%r1), proto; }"),
        "indirect_proto_param": (RF, "{ .reg .u64 fp; mov.u64 fp, f; proto: .callprototype (.param .b32 _) _ "
                                     "(.param .b32 _); call (%r2), fp, (%r1), proto; }"),
        "indirect_targets": (RF, "{ .reg .u64 fp; mov.u64 fp, f; tl: .calltargets f; call (%r2), fp, (%r1), tl; }"),
        "no_result": (_fn("g(.reg .u32 a, .reg .u64 p)", "st.global.u32 [p], a;\nret;"),
                      "call g, (%r1, %rd1); ld.global.u32 %r2, [%rd1];"),
        "result_imm": (RF, "call (5), f, (%r1);"),
        "arg_global": (".global .u32 G;\n" + u64f, "call (%rd2), f, (G); cvt.u32.u64 %r2, %rd2;"),
        "arg_function": (u64f, "call (%rd2), f, (f);"),
        "arg_kernel_param": (u64f, "call (%rd2), f, (out);"),
        "arg_kernel_param_p": (_fn("(.reg .u64 o) f(.param .b64 a)", "ld.param.u64 o, [a];\nret;"),
                               "call (%rd2), f, (out);"),
        "result_kernel_param": (_fn("(.reg .u64 o) f(.param .b64 a)", "ld.param.u64 o, [a];\nret;"),
                                "call (out), f, (%rd1);"),
        "arg_sink": (RF, "call (%r2), f, (_);"),
        "result_sink": (RF, "call (_), f, (%r1);"),
        "guarded": (RF, "setp.eq.u32 %p1, %r1, 0;\n\t@%p1 call (%r2), f, (%r1);"),
        "uni": (RF, "call.uni (%r2), f, (%r1);"),
        "array_param_reg_arg": (_fn("(.reg .u32 o) f(.param .align 4 .b8 a[8])", "ld.param.u32 o, [a+4];\nret;"),
                                "{ .param .align 4 .b8 pa[8]; st.param.u32 [pa+4], %r1; call (%r2), f, (pa); }"),
        "reg_extern": (".extern .func (.reg .u32 o) ext(.reg .u32 a);\n", "call (%r2), ext, (%r1);"),
        "reg_visible": (".visible " + RF, "call (%r2), f, (%r1);"),
        "param_formal_as_reg": (_fn("(.param .b32 o) f(.param .b32 a)", "add.u32 o, a, 1;\nret;"),
                                "call (%r2), f, (%r1);"),
        "own_param_formal_passed": (RF + _fn("(.reg .u32 o) h(.param .b32 a)", "call (o), f, (a);\nret;"),
                                    "call (%r2), h, (%r1);"),
        "own_reg_formal_passed": (RF + _fn("(.reg .u32 o) h(.reg .u32 a)", "call (o), f, (a);\nret;"),
                                  "call (%r2), h, (%r1);"),
    }


def kinds() -> dict[str, tuple[str, str]]:
    out = {}
    for ft in ("u32", "s32", "b32", "f32"):
        for sp in ("reg", "param"):
            func = _fn(f"(.reg .u32 o) f(.reg .{ft} a)", "mov.b32 o, a;\nret;") if sp == "reg" else \
                _fn(f"(.reg .u32 o) f(.param .{ft} a)", "ld.param.b32 o, [a];\nret;")
            for at in ("u32", "s32", "b32", "f32"):
                out[f"{sp}{ft}_reg{at}"] = (func, f"{{ .reg .{at} x; mov.b32 x, %r1; call (%r2), f, (x); }}")
                out[f"{sp}{ft}_param{at}"] = (func, f"{{ .param .{at} x; st.param.b32 [x], %r1; call (%r2), f, (x); }}")
    return out


IMMS = ("1", "-1", "1.0", "0f3F800000", "0d3FF0000000000000", "0x7fffffff", "4294967296")


def immediates() -> dict[str, tuple[str, str]]:
    out = {}
    for ft in ("u32", "s32", "b32", "f32", "u64", "b64", "f64", "b16"):
        for sp in ("reg", "param"):
            func = _fn(f"(.reg .u32 o) f(.{sp} .{ft} a)", "mov.u32 o, 1;\nret;")
            for imm in IMMS:
                out[f"{sp}{ft}_{imm}"] = (func, f"call (%r2), f, ({imm});")
    return out


def abi() -> dict[str, tuple[str, str]]:
    out = {}
    for t in ("b16", "s16", "u16", "f16", "bf16", "b8", "s8", "u8", "pred"):
        out[f"formal_{t}"] = (_fn(f"(.reg .u32 o) f(.reg .{t} a)", "mov.u32 o, 1;\nret;"),
                              f"{{ .reg .{t} x; call (%r2), f, (x); }}")
        out[f"ret_{t}"] = (_fn(f"(.reg .{t} o) f(.reg .u32 a)", "ret;"), f"{{ .reg .{t} x; call (x), f, (%r1); }}")
        out[f"pformal_{t}"] = (_fn(f"(.reg .u32 o) f(.param .{t} a)", "mov.u32 o, 1;\nret;"),
                               f"{{ .reg .{t} x; call (%r2), f, (x); }}")
        out[f"uncalled_formal_{t}"] = (_fn(f"(.reg .u32 o) f(.reg .{t} a)", "mov.u32 o, 1;\nret;"), "mov.u32 %r2, 1;")
    for t in ("pred", "u16", "u8", "b8", "f16", "v4 .u8", "v2 .u16", "v4 .u32", "v2 .f64"):
        tag = t.replace(" .", "_")
        out[f"nonabi_formal_{tag}"] = (_fn(f"(.reg .u32 o, .reg .u32 o2) f(.reg .{t} a)",
                                           "mov.u32 o, 1;\nmov.u32 o2, 1;\nret;"),
                                       f"{{ .reg .{t} x; call (%r2, %r3), f, (x); }}")
        out[f"abi_ret_{tag}"] = (_fn(f"(.reg .{t} o) f(.reg .u32 a)", "ret;"), f"{{ .reg .{t} x; call (x), f, (%r1); }}")
    u16 = _fn("(.reg .u32 o) f(.reg .u16 a)", "mov.u32 o, 1;\nret;")
    out["nonabi_other_function"] = (G2 + u16, "{ .reg .u16 x; call (%r2), f, (x); call (%r3, %r4), g, (%r1); }")
    out["nonabi_uncalled_function"] = (G2 + u16, "{ .reg .u16 x; call (%r2), f, (x); }")
    out["decl_only_nonabi"] = (".func (.reg .u32 o, .reg .u32 o2) g(.reg .u32 a);\n" + u16,
                               "{ .reg .u16 x; call (%r2), f, (x); }")
    out["no_result_u16"] = (_fn("f(.reg .u16 a)", "ret;"), "{ .reg .u16 x; call f, (x); }")
    out["nonabi_recursion"] = (_fn("(.reg .u32 o, .reg .u32 o2) g(.reg .u32 a)",
                                   ".reg .pred p;\nsetp.eq.u32 p, a, 0;\nmov.u32 o, 1;\nmov.u32 o2, 1;\n@p ret;\n"
                                   "{ .reg .u32 t; sub.u32 t, a, 1; call (o, o2), g, (t); add.u32 o, o, 1; }\nret;"),
                               "call (%r2, %r3), g, (%r1);")
    out["nonabi_indirect_proto"] = (G2, "{ .reg .u64 fp; mov.u64 fp, g; pr: .callprototype (.reg .u32 _, .reg .u32 _) "
                                        "_ (.reg .u32 _); call (%r2, %r3), fp, (%r1), pr; }")
    out["nonabi_indirect_targets"] = (G2, "{ .reg .u64 fp; mov.u64 fp, g; tl: .calltargets g; "
                                          "call (%r2, %r3), fp, (%r1), tl; }")
    out["nonabi_printf"] = (G2 + ".extern .func (.param .b32 r) vprintf(.param .b64 f, .param .b64 a);\n",
                            "{ .param .b64 a0; .param .b64 a1; .param .b32 r; st.param.b64 [a0], 0; "
                            "st.param.b64 [a1], 0; call (r), vprintf, (a0, a1); call (%r2, %r3), g, (%r1); }")
    out["nonabi_mutual_recursion"] = (
        ".func (.reg .u32 o, .reg .u32 o2) h(.reg .u32 a);\n"
        + _fn("(.reg .u32 o, .reg .u32 o2) g(.reg .u32 a)", "call (o, o2), h, (a);\nret;")
        + _fn("(.reg .u32 o, .reg .u32 o2) h(.reg .u32 a)", ".reg .pred p;\nsetp.eq.u32 p, a, 0;\nmov.u32 o, 1;\n"
              "mov.u32 o2, 1;\n@p ret;\n{ .reg .u32 t; sub.u32 t, a, 1; call (o, o2), g, (t); }\nret;"),
        "call (%r2, %r3), g, (%r1);")
    return out


def all_cases() -> list[dict]:
    sys.path.insert(0, str(TESTS))
    from models.nonabi_calls import CASES
    out = []
    for family, table in (("form", forms()), ("kind", kinds()), ("imm", immediates()), ("abi", abi())):
        out += [{"name": f"{family}/{n}", "ptx": module(func, body)} for n, (func, body) in table.items()]
    out += [{"name": f"kernel/{c.name}", "ptx": c.ptx} for c in CASES]
    return out


def run_ptxas(ptxas: str, text: str) -> tuple[bool, str]:
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "case.ptx"
        src.write_text(text)
        r = subprocess.run([ptxas, "-arch=sm_80", str(src), "-o", str(Path(tmp) / "case.cubin")],
                           capture_output=True, text=True, timeout=60)
    lines = [ln for ln in (r.stderr or r.stdout).strip().split("\n") if "warning" not in ln] or [""]
    msg = lines[0].replace(str(src), "case.ptx")
    if r.returncode < 0 or 128 < r.returncode < 255:   # killed by a signal (ptxas errors exit 255)
        msg = f"ptxas crashed (exit {r.returncode}); counted as a rejection"
    return r.returncode == 0, msg


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ptxas", default="/usr/local/bin/ptxas")
    args = ap.parse_args()
    version = subprocess.run([args.ptxas, "--version"], capture_output=True, text=True).stdout.strip().split("\n")[-1]
    records = []
    for case in all_cases():
        ok, msg = run_ptxas(args.ptxas, case["ptx"])
        records.append({**case, "ptxas": "accept" if ok else "reject", "ptxas_message": "" if ok else msg})
    stale = sorted(set(DISAGREEMENTS) - {c["name"] for c in records})
    if stale:
        print("DISAGREEMENTS names no case:", ", ".join(stale), file=sys.stderr)
        return 1
    OUT.write_text(json.dumps({"ptxas": version, "arch": "sm_80", "cases": records,
                               "disagreements": DISAGREEMENTS}, indent=1) + "\n")
    acc = sum(c["ptxas"] == "accept" for c in records)
    print(f"{len(records)} cases ({acc} accepted, {len(records) - acc} rejected by ptxas) -> {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
