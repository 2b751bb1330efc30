"""Generate operand/declaration forms as small PTX modules and record ptxas's verdict on each.

    python tests/ptx/forms/record_ptxas.py [--ptxas /usr/local/bin/ptxas]

writes tests/data/ptxas_forms.json: for every case its name, PTX text and whether
`ptxas -arch=<its target>` accepted it (exit 0) or rejected it (with ptxas's first message).
tests/frontend/test_ptxas_oracle.py reads that file (no ptxas needed) and checks that ptxvm's
parse + verify accepts exactly the accepted ones. Where ptxvm still disagrees, the case is
listed under "disagreements" below with the reason; the test expects those to disagree
(strict), so fixing one means deleting its entry here and re-recording.

The forms are those of PTX ISA 9.0 chapters 4-6 and 10 that real code uses: identifiers
with and without `%`, `<N>` ranges, `d|p` pairs, guards, vector braces, addresses,
nested scopes, vector registers and their elements, WARP_SZ, constant expressions,
`sym+imm` / `reg+imm` values, `.reg` parameters, wide registers for narrow loads, .v8.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

OUT = Path(__file__).resolve().parents[2] / "data" / "ptxas_forms.json"

# name -> why ptxvm's verdict differs from ptxas's (kept until ptxvm agrees).
DISAGREEMENTS: dict[str, str] = {
    "const/float_sum": "floating-point constant expressions (`1.0+2.0`) are not folded by ptxvm",
    "vecreg/mov_v2": "isa/instructions.toml has no .v2/.v4 form of mov (PTX ISA §9.7.9.1 has mov.v2/.v4)",
}

HEAD = """.version {version}
.target {arch}
.address_size 64
.global .u32 arr[16];
"""

KERNEL = """.visible .entry k(.param .u64 out)
{{
\t.reg .u32 %r<8>;
\t.reg .u64 %rd<8>;
\t.reg .pred %p<4>;
\t.reg .f32 %f<4>;
\t.reg .u16 %h<4>;
\tld.param.u64 %rd1, [out];
{body}
\tret;
}}
"""


def module(body: str, *, version: str = "8.0", arch: str = "sm_80", prelude: str = "") -> str:
    lines = "\n".join("\t" + ln for ln in body.strip().split("\n"))
    return HEAD.format(version=version, arch=arch) + prelude + KERNEL.format(body=lines)


def _names() -> list[tuple[str, str]]:
    """(label, spelling) of register names: with and without `%`, with `$` and `_`."""
    return [("pct", "%x"), ("bare", "x"), ("dollar", "$x"), ("under", "_x1"), ("mixed", "x$y"),
            ("pctdollar", "%$x")]


def cases() -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []

    def add(name: str, text: str) -> None:
        out.append((name, text))

    # ---------------------------------------------------------------- names in every position
    for label, n in _names():
        p = n + "p"
        q = n + "q"
        d = f".reg .u32 {n};\n.reg .pred {p};\n.reg .u64 {q};"
        uses = {
            "dst": f"mov.u32 {n}, 1;",
            "src": f"add.u32 %r1, {n}, 1;",
            "dst_src": f"add.u32 {n}, {n}, {n};",
            "pair": f"shfl.sync.up.b32 {n}|{p}, %r1, 1, 0, -1;",
            "pair_pct_first": f"shfl.sync.up.b32 %r2|{p}, %r1, 1, 0, -1;",
            "guard": f"setp.ne.u32 {p}, %r1, 0;\n@{p} add.u32 %r1, %r1, 1;",
            "guard_not": f"setp.ne.u32 {p}, %r1, 0;\n@!{p} add.u32 %r1, %r1, 1;",
            "negated_src": f"setp.ne.u32 {p}, %r1, 0;\nselp.u32 %r2, 1, 0, {p};\nsetp.eq.and.u32 %p1, %r1, 0, !{p};",
            "vec_src": f"mov.b64 %rd2, {{{n}, %r1}};",
            "vec_dst": f"mov.b64 {{{n}, %r1}}, %rd2;",
            "ld_vec": f"ld.global.v2.u32 {{{n}, %r1}}, [%rd1];",
            "st_vec": f"st.global.v2.u32 [%rd1], {{%r1, {n}}};",
            "addr": f"mov.u64 {q}, %rd1;\nld.global.u32 %r1, [{q}];",
            "addr_off": f"mov.u64 {q}, %rd1;\nld.global.u32 %r1, [{q}+4];",
            "addr_negoff": f"mov.u64 {q}, %rd1;\nld.global.u32 %r1, [{q}+-4];",
            "st_addr": f"mov.u64 {q}, %rd1;\nst.global.u32 [{q}+8], {n};",
            "atom": f"mov.u64 {q}, %rd1;\natom.global.add.u32 {n}, [{q}], 1;",
            "cvt": f"cvt.u64.u32 {q}, {n};",
            "setp_dst": f"setp.lt.u32 {p}, {n}, 4;",
            "setp_pair": f"setp.lt.u32 {p}|%p1, {n}, 4;",
        }
        for use, body in uses.items():
            add(f"name/{label}/{use}", d + "\n" + body)
        add(f"name/{label}/undeclared", f"mov.u32 {n}, 1;")
        add(f"name/{label}/wrong_type_u16", f".reg .u16 {n};\nadd.u32 %r1, {n}, 1;")
        add(f"name/{label}/pred_as_value", f".reg .pred {p};\nadd.u32 %r1, {p}, 1;")
        add(f"name/{label}/twice_same_scope", f".reg .u32 {n};\n.reg .u32 {n};\nmov.u32 {n}, 1;")
        add(f"name/{label}/two_declarators", f".reg .u32 {n}, {n}2;\nadd.u32 {n}, {n}2, 1;")

    # ---------------------------------------------------------------- <N> ranges
    for label, n in _names():
        for i in (0, 3):
            add(f"range/{label}/use{i}", f".reg .u32 {n}<4>;\nmov.u32 {n}{i}, 1;\nadd.u32 %r1, {n}{i}, 2;")
        add(f"range/{label}/past_end", f".reg .u32 {n}<4>;\nmov.u32 {n}4, 1;")
        add(f"range/{label}/base_name", f".reg .u32 {n}<4>;\nmov.u32 {n}, 1;")
        add(f"range/{label}/ld", f".reg .u32 {n}<4>;\nld.global.u32 {n}0, [%rd1];")
        add(f"range/{label}/pred_range", f".reg .pred {n}<2>;\nsetp.eq.u32 {n}1, %r1, 0;\n@{n}1 bra L;\nL:")
        add(f"range/{label}/two_ranges", f".reg .u32 {n}<2>, {n}y<2>;\nadd.u32 {n}1, {n}y0, {n}y1;")
    add("range/zero_count_use", ".reg .u32 a<0>;\nmov.u32 a0, 1;")

    # ---------------------------------------------------------------- nested scopes
    cub = "{\n.reg .u32 r0;\n.reg .pred p;\nshfl.sync.up.b32 r0|p, %r1, 1, 0, -1;\n@p add.u32 r0, r0, %r1;\nmov.u32 %r2, r0;\n}"
    add("scope/cub_scan_step", cub)
    add("scope/cub_twice", cub + "\n" + cub)
    add("scope/use_after_close", "{\n.reg .u32 r0;\nmov.u32 r0, 1;\n}\nmov.u32 r0, 2;")
    add("scope/shadow_outer_bare", ".reg .u32 r0;\nmov.u32 r0, 1;\n{\n.reg .u32 r0;\nmov.u32 r0, 2;\n}\nadd.u32 %r1, r0, 1;")
    add("scope/shadow_pct", "{\n.reg .u32 %r1;\nmov.u32 %r1, 5;\n}")
    add("scope/shadow_type_change", ".reg .u32 t;\n{\n.reg .pred t;\nsetp.eq.u32 t, %r1, 0;\n}\nadd.u32 t, t, 1;")
    add("scope/inner_sees_outer", ".reg .u32 t;\n{\n{\nadd.u32 t, t, 1;\n}\n}")
    add("scope/shadow_global", "{\n.reg .u64 arr;\nmov.u64 arr, 0;\n}")
    add("scope/global_after_shadow", "{\n.reg .u64 arr;\nmov.u64 arr, 0;\n}\nmov.u64 %rd2, arr;")
    add("scope/deep3", "{\n.reg .u32 a;\n{\n.reg .u32 b;\n{\n.reg .u32 c;\nadd.u32 c, a, b;\n}\n}\n}")
    add("scope/sibling_isolated", "{\n.reg .u32 s1;\nmov.u32 s1, 1;\n}\n{\nmov.u32 s1, 2;\n}")
    add("scope/range_shadow", ".reg .u32 a<4>;\n{\n.reg .u32 a<2>;\nmov.u32 a3, 1;\n}")
    add("scope/range_inner_ok", ".reg .u32 a<4>;\n{\n.reg .u32 a<2>;\nmov.u32 a1, 1;\n}\nmov.u32 a3, 1;")
    add("scope/label_in_scope", "{\n.reg .pred p;\nsetp.eq.u32 p, %r1, 0;\n@p bra DONE;\nadd.u32 %r1, %r1, 1;\nDONE:\n}")
    add("scope/redeclare_in_inner", ".reg .u32 z;\n{\n.reg .u32 z;\n.reg .u32 z;\n}")

    # ---------------------------------------------------------------- WARP_SZ and constants
    warp = {
        "mov": "mov.u32 %r1, WARP_SZ;",
        "add": "add.u32 %r1, %r2, WARP_SZ;",
        "setp": "setp.eq.u32 %p1, %r1, WARP_SZ;",
        "mov_u64": "mov.u64 %rd2, WARP_SZ;",
        "mov_u16": "mov.u16 %h1, WARP_SZ;",
        "plus1": "mov.u32 %r1, WARP_SZ+1;",
        "minus1": "mov.u32 %r1, WARP_SZ-1;",
        "times2": "mov.u32 %r1, 2*WARP_SZ;",
        "paren": "mov.u32 %r1, (WARP_SZ);",
        "addr_off": "ld.global.u32 %r1, [%rd1+WARP_SZ];",
        "addr_sym_off": "ld.global.u32 %r1, [arr+WARP_SZ];",
        "st_value": "st.global.u32 [%rd1+4], WARP_SZ;",
        "f32": "mov.f32 %f1, WARP_SZ;",
        "dst": "mov.u32 WARP_SZ, %r1;",
        "pct": "mov.u32 %r1, %WARP_SZ;",
        "lower": "mov.u32 %r1, warp_sz;",
        "addr": "ld.global.u32 %r1, [WARP_SZ];",
        "shfl_c": "shfl.sync.bfly.b32 %r1, %r2, 1, WARP_SZ-1, -1;",
        "rem": "rem.u32 %r1, %r2, WARP_SZ;",
        "declare": ".reg .u32 WARP_SZ;",
    }
    for k, body in warp.items():
        add(f"warp_sz/{k}", body)
    consts = {
        "sum": "mov.u32 %r1, 1+2;", "diff": "mov.u32 %r1, 5-2;", "prod": "mov.u32 %r1, 3*4;",
        "chain": "mov.u32 %r1, 1+2+3;", "mixed_prec": "mov.u32 %r1, 1+2*3;",
        "neg_result": "mov.u32 %r1, 1-2;", "hex_sum": "mov.u32 %r1, 0x10+1;",
        "addr_chain": "ld.global.u32 %r1, [%rd1+4+4];", "addr_prod": "ld.global.u32 %r1, [%rd1+2*4];",
        "addr_sub": "ld.global.u32 %r1, [%rd1+8-4];",
        "trailing_plus": "mov.u32 %r1, 1+;", "double_plus": "mov.u32 %r1, 1++2;",
        "plus_reg": "mov.u32 %r1, 1+%r2;", "float_sum": "mov.f32 %f1, 1.0+2.0;",
    }
    for k, body in consts.items():
        add(f"const/{k}", body)

    # ---------------------------------------------------------------- sym+imm and reg+imm values
    exprs = {
        "mov_sym": "mov.u64 %rd2, arr;",
        "mov_sym_plus": "mov.u64 %rd2, arr+8;",
        "mov_sym_spaced": "mov.u64 %rd2, arr + 8;",
        "mov_sym_hex": "mov.u64 %rd2, arr+0x10;",
        "mov_sym_chain": "mov.u64 %rd2, arr+4+4;",
        "mov_sym_minus": "mov.u64 %rd2, arr-8;",
        "mov_imm_plus_sym": "mov.u64 %rd2, 4+arr;",
        "add_sym_plus": "add.u64 %rd2, %rd3, arr+8;",
        "st_sym_plus": "st.global.u64 [%rd1], arr+4;",
        "mov_param_plus": "mov.u64 %rd2, out+8;",
        "mov_reg_plus": "mov.u64 %rd2, %rd3+1;",
        "mov_reg_plus_neg": "mov.u32 %r1, %r2+-1;",
        "mov_reg_minus": "mov.u32 %r1, %r2-1;",
        "mov_reg_plus_reg": "mov.u32 %r1, %r2+%r3;",
        "st_reg_plus": "st.u64 [%rd1], %rd2 + 1;",
        "add_reg_plus": "add.u64 %rd2, %rd3+1, 3;",
        "setp_reg_plus": "setp.lt.u32 %p1, %r2+1, %r3;",
        "selp_reg_plus": "selp.u32 %r1, %r2+1, %r3, %p1;",
        "cvt_reg_plus": "cvt.u64.u32 %rd2, %r2+1;",
        "dst_reg_plus": "add.u32 %r1+1, %r2, %r3;",
        "guard_plus": "@%p1+1 add.u32 %r1, %r2, %r3;",
        "vec_elem_plus": "mov.b64 %rd2, {%r1+1, %r2};",
        "bare_reg_plus": ".reg .u64 q;\nmov.u64 q, %rd1;\nst.u64 [q], q + 1;",
        "reg_plus_warp": "mov.u32 %r1, %r2 + WARP_SZ;",
        "addr_sym_plus": "ld.global.u32 %r1, [arr+4];",
        "addr_sym_minus": "ld.global.u32 %r1, [arr-4];",
        "addr_reg_minus": "ld.global.u32 %r1, [%rd1-4];",
        "addr_reg_spaced_neg": "ld.global.u32 %r1, [%rd1 + -4];",
        "addr_sym_plus_reg": "ld.global.u32 %r1, [arr+%rd1];",
        "addr_imm_global": "ld.global.u32 %r1, [16];",
        "addr_imm_local": "ld.local.u32 %r1, [16];",
        "addr_sym_hex": "ld.global.u32 %r1, [arr+0x10];",
        "addr_reg_only_plus": "ld.global.u32 %r1, [%rd1+];",
    }
    for k, body in exprs.items():
        add(f"expr/{k}", body)

    # ---------------------------------------------------------------- address offsets (§6.4.1)
    # ptxas 13.0: `[base+k]` only, k any integer constant expression (so `[a+-4]`, `[a+(-4)]`,
    # `[a+- 4]`); `[a-4]` is a syntax error; `[imm]` only in .local. Per state space and base.
    bases = {"global": ("%rd1", "arr"), "shared": ("%rd1", "%r1"), "local": ("%rd1",),
             "param": ("out",), "generic": ("%rd1",)}
    offsets = {"plus": "+4", "plus_neg": "+-4", "minus": "-4", "minus_hex": "-0x10",
               "plus_neg_hex": "+-0x10", "plus_paren_neg": "+(-4)", "plus_space_neg": "+- 4",
               "plus_expr": "+(4-8)", "plus_shift": "+(1<<4)", "plus_not": "+~3",
               "plus_neg_mul": "+(-4)*2", "plus_big": "+4294967296", "plus_min32": "+-2147483648",
               "minus_spaced": " - 4", "minus_minus": "--4"}
    for space, names in bases.items():
        sp = "" if space == "generic" else f".{space}"
        for b in names:
            blabel = {"%rd1": "rd", "%r1": "r", "arr": "sym", "out": "param"}[b]
            for olabel, off in offsets.items():
                add(f"addr/{space}/{blabel}/{olabel}", f"ld{sp}.u32 %r2, [{b}{off}];")
        add(f"addr/{space}/imm", f"ld{sp}.u32 %r2, [0x100];")
        add(f"addr/{space}/imm_neg", f"ld{sp}.u32 %r2, [-4];")
    addr_more = {
        "st_global_minus": "st.global.u32 [%rd1-4], %r1;",
        "st_global_plus_neg": "st.global.u32 [%rd1+-4], %r1;",
        "st_global_imm": "st.global.u32 [0x100], %r1;",
        "st_local_imm": "st.local.u32 [0x100], %r1;",
        "st_shared_imm": "st.shared.u32 [0x100], %r1;",
        "atom_global_plus_neg": "atom.global.add.u32 %r1, [%rd1+-4], 1;",
        "atom_global_minus": "atom.global.add.u32 %r1, [%rd1-4], 1;",
        "atom_shared_imm": "atom.shared.add.u32 %r1, [0x100], 1;",
        "red_global_minus": "red.global.add.u32 [%rd1-4], 1;",
        "reg_first": "ld.global.u32 %r1, [4+%rd1];",
        "neg_reg_first": "ld.global.u32 %r1, [-4+%rd1];",
        "value_sym_minus": "mov.u64 %rd2, arr-4;",
        "value_sym_plus_neg": "mov.u64 %rd2, arr+-4;",
        "value_reg_minus": "mov.u64 %rd2, %rd1-4;",
        "value_reg_plus_neg": "mov.u64 %rd2, %rd1+-4;",
    }
    for k, body in addr_more.items():
        add(f"addr/{k}", body)
    consts = {
        "paren_diff": "mov.u32 %r1, 2+(3*4);",
        "shift": "mov.u32 %r1, 1<<4;",
        "shift_right": "mov.u32 %r1, 256>>4;",
        "neg_paren": "mov.u32 %r1, -(4);",
        "neg_spaced": "mov.u32 %r1, - 4;",
        "not": "mov.u32 %r1, ~0;",
        "div": "mov.u32 %r1, 7/2;",
        "and_xor": "mov.u32 %r1, 12&10^1;",
        "or_paren": "mov.u32 %r1, 2+(1|4);",
        "src_paren": "add.u32 %r1, %r2, 2+(1<<2);",
    }
    for k, body in consts.items():
        add(f"constexpr/{k}", body)

    # ---------------------------------------------------------------- vector registers
    vec = {
        "decl_v2": ".reg .v2 .u32 v;",
        "decl_v4": ".reg .v4 .u32 v;",
        "decl_v4_f32": ".reg .v4 .f32 v;",
        "decl_v2_f64": ".reg .v2 .f64 v;",
        "decl_v4_f64": ".reg .v4 .f64 v;",
        "decl_v8": ".reg .v8 .u32 v;",
        "decl_v4_pred": ".reg .v4 .pred v;",
        "decl_v4_pct": ".reg .v4 .u32 %v;",
        "decl_v4_u8": ".reg .v4 .u8 v;",
        "elem_x_src": ".reg .v4 .u32 v;\nmov.b32 %r1, v.x;",
        "elem_w_src": ".reg .v4 .u32 v;\nmov.b32 %r1, v.w;",
        "elem_a_src": ".reg .v4 .u32 v;\nmov.b32 %r1, v.a;",
        "elem_r_dst": ".reg .v4 .u32 v;\nmov.u32 v.r, %r1;",
        "elem_y_dst": ".reg .v2 .u32 v;\nmov.u32 v.y, 1;",
        "elem_pct": ".reg .v4 .u32 %v;\nadd.u32 %v.z, %v.x, %v.y;",
        "elem_bad_q": ".reg .v4 .u32 v;\nmov.b32 %r1, v.q;",
        "elem_scalar_x": ".reg .u32 s;\nmov.b32 %r1, s.x;",
        "whole_ld": ".reg .v4 .u32 v;\nld.global.v4.u32 v, [%rd1];",
        "whole_st": ".reg .v4 .u32 v;\nst.global.v4.u32 [%rd1], v;",
        "elems_ld": ".reg .v4 .u32 v;\nld.global.v4.u32 {v.x, v.y, v.z, v.w}, [%rd1];",
        "whole_mov_b32": ".reg .v4 .u32 v;\nmov.b32 %r1, v;",
        "whole_mov_b64": ".reg .v2 .u32 v;\nmov.b64 %rd2, v;",
        "mov_v2": ".reg .v2 .u32 v;\nmov.v2.u32 v, {%r1, %r2};",
        "whole_ld_v2_into_v4": ".reg .v4 .u32 v;\nld.global.v2.u32 v, [%rd1];",
        "elem_guard": ".reg .v2 .pred v;",
    }
    for k, body in vec.items():
        add(f"vecreg/{k}", body)

    # ---------------------------------------------------------------- registers wider than memory
    for reg in ("u16", "u32", "u64", "b16", "s32", "f32"):
        for mem in ("u8", "s8", "b8"):
            add(f"wide/ld_v4_{mem}_into_{reg}",
                f".reg .{reg} a, b, c, d;\nld.global.v4.{mem} {{a, b, c, d}}, [%rd1];")
        add(f"wide/st_v2_u8_from_{reg}", f".reg .{reg} a, b;\nst.global.v2.u8 [%rd1], {{a, b}};")
        add(f"wide/ld_u16_into_{reg}", f".reg .{reg} a;\nld.global.u16 a, [%rd1];")

    # ---------------------------------------------------------------- .v8 loads and stores
    regs8 = ", ".join(f"%r{i}" for i in range(8))
    for arch, ver in (("sm_80", "8.0"), ("sm_100", "8.8"), ("sm_100a", "8.8")):
        for space in ("global", "shared"):
            add(f"v8/{arch}/ld_{space}_u32",
                f"ld.{space}.v8.u32 {{{regs8}}}, [%rd1];" + f"@@{arch}@@{ver}")
            add(f"v8/{arch}/st_{space}_u32",
                f"st.{space}.v8.u32 [%rd1], {{{regs8}}};" + f"@@{arch}@@{ver}")
        add(f"v8/{arch}/ld_global_f32",
            "ld.global.v8.f32 {%f0, %f1, %f2, %f3, %f0, %f1, %f2, %f3}, [%rd1];" + f"@@{arch}@@{ver}")
        add(f"v8/{arch}/ld_global_u16", f"ld.global.v8.u16 {{{regs8}}}, [%rd1];" + f"@@{arch}@@{ver}")
        add(f"v8/{arch}/ld_global_seven", f"ld.global.v8.u32 {{%r0, %r1, %r2, %r3, %r4, %r5, %r6}}, [%rd1];"
            + f"@@{arch}@@{ver}")
    return out


FUNC_CASES = {
    # .func with .reg parameters and returns (non-ABI functions).
    "func/reg_param": ".func (.reg .u32 out) f(.reg .u32 in)\n{\n\tadd.u32 out, in, 1;\n\tret;\n}\n",
    "func/reg_param_pct": ".func (.reg .u32 %o) f(.reg .u32 %i)\n{\n\tadd.u32 %o, %i, 1;\n\tret;\n}\n",
    "func/reg_v2_param": ".func (.reg .v2 .u32 out) f(.reg .v2 .u32 in)\n{\n\tmov.u32 out.x, in.y;\n\tmov.u32 out.y, in.x;\n\tret;\n}\n",
    "func/reg_two_returns": ".func (.reg .u32 a, .reg .u32 b) f(.reg .u32 x)\n{\n\tmov.u32 a, x;\n\tadd.u32 b, x, 1;\n\tret;\n}\n",
    "func/reg_param_undeclared_use": ".func (.reg .u32 out) f(.reg .u32 in)\n{\n\tadd.u32 out, inn, 1;\n\tret;\n}\n",
    "func/reg_pred_param": ".func (.reg .u32 out) f(.reg .pred q)\n{\n\tselp.u32 out, 1, 0, q;\n\tret;\n}\n",
}
CALLS = {
    "func/reg_param": "call (%r2), f, (%r1);",
    "func/reg_param_pct": "call (%r2), f, (%r1);",
    "func/reg_v2_param": "",
    "func/reg_two_returns": "call (%r2, %r3), f, (%r1);",
    "func/reg_param_undeclared_use": "",
    "func/reg_pred_param": "setp.eq.u32 %p1, %r1, 0;\ncall (%r2), f, (%p1);",
}


# A bare variable or function name as a value (ptxvm/ir/symbol_values.py): ptxas takes one only
# in mov/cvta/mapa/getctarank, never as a float; `sym+imm` anywhere; no store into an input param;
# and an integer literal as a float operand.
SYMBOL_VALUES = {
    "mov": "mov.u64 %rd2, arr;", "mov_param": "mov.u64 %rd2, out;", "mov_u32_shared": "mov.u32 %r1, sh;",
    "mov_func": "mov.u64 %rd2, k;", "mov_b64_into_f64": "mov.b64 %fd1, arr;",
    "mov_f64": "mov.f64 %fd1, arr;", "mov_f64_param": "mov.f64 %fd1, out;", "mov_f32_shared": "mov.f32 %f1, sh;",
    "cvta": "cvta.global.u64 %rd2, arr;", "cvta_shared": "cvta.shared.u64 %rd2, sh;",
    "cvta_to": "cvta.to.global.u64 %rd2, arr;", "add": "add.u64 %rd2, arr, 8;", "add_second": "add.u64 %rd2, 8, arr;",
    "add_param": "add.u64 %rd2, out, 8;", "add_func": "add.u64 %rd2, k, 8;", "sub": "sub.u64 %rd2, arr, %rd1;",
    "mul": "mul.lo.u64 %rd2, arr, 2;", "mad": "mad.lo.u64 %rd2, %rd1, 4, arr;", "shl": "shl.b64 %rd2, arr, 2;",
    "setp": "setp.eq.u64 %p1, %rd1, arr;", "selp": "selp.b64 %rd2, arr, %rd1, %p1;", "cvt": "cvt.u64.u32 %rd2, sh;",
    "shfl": "shfl.sync.idx.b32 %r1, sh, 0, 31, -1;", "isspacep": "isspacep.global %p1, arr;",
    "st_value": "st.global.u64 [%rd1], arr;", "atom_value": "atom.global.add.u64 %rd2, [%rd1], arr;",
    "st_value_offset": "st.global.u64 [%rd1], arr+4;", "add_offset": "add.u64 %rd2, %rd1, arr+4;",
    "add_param_offset": "add.u64 %rd2, out+8, 0;", "cvta_offset": "cvta.global.u64 %rd2, arr+4;",
    "st_param_input": "st.param.u64 [out], %rd1;", "st_param_input_offset": "st.param.u32 [out+4], %r1;",
    "st_param_input_imm": "st.param.u64 [out], 5;", "st_param_through_reg": "mov.u64 %rd2, out;\nst.param.u64 [%rd2], %rd1;",
    "ld_param_through_reg": "mov.u64 %rd2, out;\nld.param.u64 %rd3, [%rd2];",
    # integer literals are no .f32/.f64 operands (hex and decimal floats are)
    "int_mov_f32": "mov.f32 %f1, 0;", "int_add_f32": "add.f32 %f1, %f2, 1;", "int_setp_f32": "setp.lt.f32 %p1, %f1, 0;",
    "int_mov_f64": "mov.f64 %fd1, -3;", "int_fma_f32": "fma.rn.f32 %f1, %f2, 2, %f3;", "int_max_f32": "max.f32 %f1, %f2, 0;",
    "int_selp_f32": "selp.f32 %f1, 1, %f2, %p1;", "int_mov_b32_into_f32": "mov.b32 %f1, 1;",
    "int_cvt_from_s32": "cvt.rn.f32.s32 %f1, 5;", "float_add_f32": "add.f32 %f1, %f2, 1.0;",
    "hex_float_mov_f32": "mov.f32 %f1, 0f3F800000;", "int_expr_mov_f32": "mov.f32 %f1, 2*3;",
}
SYMBOL_PRELUDE = ".reg .f64 %fd<2>;\n.shared .align 8 .u32 sh[4];\n"


def all_cases() -> list[dict]:
    out = [{"name": f"symval/{n}", "arch": "sm_80", "ptx": module(SYMBOL_PRELUDE + b)} for n, b in SYMBOL_VALUES.items()]
    for name, body in cases():
        arch, version = "sm_80", "8.0"
        if "@@" in body:
            body, arch, version = body.split("@@")
        out.append({"name": name, "arch": arch, "ptx": module(body, version=version, arch=arch)})
    for name, func in FUNC_CASES.items():
        out.append({"name": name, "arch": "sm_80",
                    "ptx": module(CALLS[name], prelude=func)})
    return out


def run_ptxas(ptxas: str, text: str, arch: str) -> tuple[bool, str]:
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "case.ptx"
        src.write_text(text)
        r = subprocess.run([ptxas, f"-arch={arch}", str(src), "-o", str(Path(tmp) / "case.cubin")],
                           capture_output=True, text=True, timeout=60)
    msg = (r.stderr or r.stdout).strip().split("\n")[0].replace(str(src), "case.ptx")
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
        ok, msg = run_ptxas(args.ptxas, case["ptx"], case["arch"])
        records.append({**case, "ptxas": "accept" if ok else "reject", "ptxas_message": "" if ok else msg})
    names = {c["name"] for c in records}
    stale = sorted(set(DISAGREEMENTS) - names)
    if stale:
        print("DISAGREEMENTS names no case:", ", ".join(stale), file=sys.stderr)
        return 1
    OUT.write_text(json.dumps({"ptxas": version, "cases": records, "disagreements": DISAGREEMENTS},
                              indent=1) + "\n")
    acc = sum(c["ptxas"] == "accept" for c in records)
    print(f"{len(records)} cases ({acc} accepted, {len(records) - acc} rejected by ptxas) -> {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
