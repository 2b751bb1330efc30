"""Catalogue of malformed PTX inputs, each with the exact diagnostics ptxvm must give.

Every case is a small PTX text (mostly a kernel skeleton with a few body lines),
the exception class ``ptxvm.parse`` must raise (``None``: the text is valid and
must parse), and the full list of ``(line, column, message)`` diagnostics, in
order. A message is either the exact string or a ``Like(regex)`` where the exact
wording is not settled yet but the substance is (used for known-bad messages
whose fix is pending).

Cases whose expectation ptxvm does not meet yet carry ``xfail_diags`` /
``xfail_class`` with the reason; tests/test_bad_inputs.py marks them
``xfail(strict=True)`` so the suite turns red the moment they start to pass and
the marker can go.

Layout of ``kernel(body)``: lines 1-3 are the module header, line 4 the
``.entry`` line, line 5 ``{``, lines 6-9 the register declarations, and the
body starts on line 10.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ptxvm import PtxEncodingError, PtxSemanticError, PtxSyntaxError

HEADER = ".version 8.0\n.target sm_80\n.address_size 64\n"
ENTRY = ".visible .entry k(.param .u64 k_p0)\n"
REGS = ".reg .b32 %r<4>;\n.reg .f32 %f<4>;\n.reg .pred %p<2>;\n.reg .b64 %rd<4>;\n"
BODY_LINE = 10


def kernel(body: str, *, close: bool = True) -> str:
    """A valid kernel skeleton around ``body`` (which starts on line 10)."""
    return HEADER + ENTRY + "{\n" + REGS + body + ("\n}\n" if close else "")


class Like:
    """A message pattern (``re.search``) for messages whose wording is not fixed."""

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern

    def matches(self, message: str) -> bool:
        return re.search(self.pattern, message) is not None

    def __repr__(self) -> str:
        return f"Like({self.pattern!r})"


@dataclass(frozen=True)
class Case:
    name: str
    text: str | bytes
    error: type | None                       # expected exception class; None: must parse
    diags: tuple = ()                        # ((line, column, message | Like), ...)
    warning: str | None = None               # a substring of an expected warning (valid cases)
    xfail_diags: str | None = None           # reason the diagnostics are not met yet
    xfail_class: str | None = None           # reason the exception class is not met yet
    notes: str = field(default="", compare=False)


# Long "expected ..." tails of grammar errors, spelled once.
EXP_BODY = ("expected one of `.align`, `.attribute(...)`, a label, `{`, a linkage directive, "
            "`.ptr`, `}`, a state space (e.g. .reg), ...")
EXP_TOP = ("expected one of `.align`, `.attribute(...)`, `.file`, `.entry` or `.func`, a linkage "
           "directive, `.ptr`, a `.section` block, a state space (e.g. .reg), ...")
EXP_TOP_OR_END = ("expected one of end of file, `.align`, `.attribute(...)`, `.file`, `.entry` or "
                  "`.func`, a linkage directive, `.ptr`, a `.section` block, ...")
EXP_INIT = "expected one of a decimal float, a float literal, a double literal, an integer, `{`, a name"

BUG_OPERAND_SYNTAX_CLASS = (
    "operand-level syntax errors (operands.py) raise PtxSemanticError; they are syntax errors "
    "(PtxSyntaxError), like the grammar's")
BUG_LALR_PAREN = ("a declaration inside a body lists `)` among the expected tokens (LALR state shared "
                  "with parameter lists); `)` cannot follow a body declaration")
BUG_DECL_COLUMN = ("since 5c4dc8e (one-name body declarations join RUN items) a body declaration's "
                   "span is the start of the statement (`.reg`, column 1), not the declared name as "
                   "before and as for module-level declarations")
UNDETECTED = "not detected at all yet (see xfail_diags)"
BUG_DOUBLE_UNDECLARED_LABEL = (
    "an undeclared branch target is reported twice (`X` is not declared + branch target `X` "
    "is not a label)")

L = BODY_LINE
K_END = L + 2   # line of the closing `}` for a one-line body

CASES: list[Case] = [
    # ------------------------------------------------------------------ truncations
    Case("truncated_mid_instruction", kernel("add.s32 %r1, %r2", close=False), PtxSyntaxError,
         ((L, 17, Like(r"^unexpected end of file.*`;`")),),
         xfail_diags="the file cut inside an instruction gives a confusing `unexpected `add`; "
                     "expected one of .align ...` at the instruction start, plus the EOF error; "
                     "one diagnostic at the end of file that names the missing `;` is wanted"),
    Case("truncated_mid_declaration", kernel(".reg .b32 %x", close=False), PtxSyntaxError,
         ((L, 13, "unexpected end of file; expected one of `,`, `=`, `[`, `;`"),),
         xfail_diags=BUG_LALR_PAREN),
    Case("truncated_register_range", kernel(".reg .b32 %x<4", close=False), PtxSyntaxError,
         ((L, 13, "unexpected character `<`; expected one of `,`, `=`, `[`, `;`"),
          (L, 15, "unexpected end of file; " + EXP_BODY)),
         xfail_diags=BUG_LALR_PAREN),
    Case("truncated_after_address_size", ".version 8.0\n.target sm_80\n.address_size", PtxSyntaxError,
         ((3, 14, "unexpected end of file; expected an integer"),)),
    Case("truncated_in_param_list", HEADER + ".visible .entry k(.param .u64", PtxSyntaxError,
         ((4, 30, "unexpected end of file; expected one of `.align`, `.attribute(...)`, a name, "
                  "a register range `%r<N>`, `.ptr`, a register, a state space (e.g. .reg), "
                  "a type (e.g. .b32), ..."),)),
    Case("missing_closing_brace", kernel("ret;", close=False) + "\n", PtxSyntaxError,
         ((L + 1, 1, "unexpected end of file; " + EXP_BODY),)),
    Case("unterminated_nested_block", kernel("{\nret;", close=False) + "\n}\n", PtxSyntaxError,
         ((L + 3, 1, "unexpected end of file; " + EXP_BODY),)),
    Case("extra_closing_brace", kernel("ret;") + "}\n", PtxSyntaxError,
         ((K_END, 1, "unexpected `}`; " + EXP_TOP_OR_END),)),
    Case("stray_braces_after_function", kernel("ret;") + "}\n{\n", PtxSyntaxError,
         ((K_END, 1, "unexpected `}`; " + EXP_TOP_OR_END),
          (K_END + 1, 1, "unexpected `{`; " + EXP_TOP_OR_END))),
    Case("missing_semicolon", kernel("add.s32 %r1, %r2, %r3\nret;"), PtxSyntaxError,
         ((L + 1, 1, "expected `,` or `;` after operand, found `ret`; "
                     "is a `;` missing at the end of the previous line?"),),
         xfail_class=BUG_OPERAND_SYNTAX_CLASS),

    # ------------------------------------------------------------------ opcodes and modifiers
    Case("unknown_opcode", kernel("ad.s32 %r1, %r2, %r3;"), PtxSemanticError,
         ((L, 1, Like(r"^unknown instruction `ad`; did you mean `add`")),),
         xfail_diags="`ad` suggests `sad` or `mad` or `and` but not `add` (difflib ties broken "
                     "alphabetically; a prefix match should rank first)"),
    Case("unknown_opcode_ld", kernel("lod.global.f32 %f1, [%rd1];"), PtxSemanticError,
         ((L, 1, "unknown instruction `lod`; did you mean `ld` or `ldu` or `tld4`?"),)),
    Case("unknown_modifier", kernel("add.rnx.f32 %f1, %f2, %f3;"), PtxSemanticError,
         ((L, 5, "unknown modifier `.rnx` for `add.f32`; expected one of .rm .rn .rp .rz"),)),
    Case("unknown_modifier_f16", kernel("add.rnx.f16 %r1, %r2, %r3;"), PtxSemanticError,
         ((L, 5, "unknown modifier `.rnx` for `add.f16`; expected one of .rn"),),
         xfail_diags="isa.decode suggests the values of the first modifier group (sorted by group "
                     "name, over all forms) with a close match, not those of the forms that fit the "
                     "written type: add.f16 allows only .rn but .rm .rn .rp .rz is suggested (and "
                     "add.rnx.s32 suggests rounding modes although integer add takes none)"),
    Case("rounding_on_integer_add", kernel("add.rn.s32 %r1, %r2, %r3;"), PtxSemanticError,
         ((L, 5, "modifier `.rn` is not allowed in `add.rn.s32`"),)),
    Case("sat_on_u32", kernel("add.sat.u32 %r1, %r2, %r3;"), PtxSemanticError,
         ((L, 5, "modifier `.sat` is not allowed in `add.sat.u32`"),)),
    Case("two_rounding_modes", kernel("add.rn.rz.f32 %f1, %f2, %f3;"), PtxSemanticError,
         ((L, 8, "conflicting modifiers `.rn` and `.rz` in `add.rn.rz.f32`"),)),
    Case("missing_type", kernel("add %r1, %r2, %r3;"), PtxSemanticError,
         ((L, 1, Like(r"^`add` needs a type; expected one of .*\.s32.*\.f32|"
                      r"^`add` needs a type; expected one of .*\.f32.*\.s32")),),
         xfail_diags="`add` without a type lists only the int form's types "
                     "(.s16 .s16x2 .s32 ... .u64), as if add.f32/add.f64 did not exist"),
    Case("missing_required_modifier", kernel("mul.s32 %r1, %r2, %r3;"), PtxSemanticError,
         ((L, 5, "`mul.s32` needs a `hilo` modifier: one of .hi .lo"),)),
    Case("setp_without_comparison", kernel("setp.s32 %p1, %r1, %r2;"), PtxSemanticError,
         ((L, 6, "`setp.s32` needs a `cmp_int` modifier: one of .eq .ge .gt .hi .hs .le .lo .ls .lt .ne"),)),

    # ------------------------------------------------------------------ operand counts and kinds
    Case("too_few_operands", kernel("add.s32 %r1, %r2;"), PtxSemanticError,
         ((L, 1, "`add.s32` takes 3 operands, found 2"),)),
    Case("too_many_operands", kernel("add.s32 %r1, %r2, %r3, %r0;"), PtxSemanticError,
         ((L, 1, "`add.s32` takes 3 operands, found 4"),)),
    Case("operand_on_ret", kernel("ret %r1;"), PtxSemanticError,
         ((L, 1, "`ret` takes no operands, found 1"),),
         xfail_class=UNDETECTED, xfail_diags="verify._shape skips the count check when a form lists no operands, "
                     "so `ret %r1;` / `exit 5;` are accepted"),
    Case("immediate_destination", kernel("add.s32 1, %r1, %r2;"), PtxSemanticError,
         ((L, 1, "destination of `add.s32` cannot be the constant `1`"),)),
    Case("address_as_source", kernel("add.s32 %r1, %r2, [%rd1];"), PtxSemanticError,
         ((L, 1, "operand `[%rd1]` of `add.s32` cannot be an address"),)),
    Case("address_as_mov_destination", kernel("mov.u32 [%rd1], %r1;"), PtxSemanticError,
         ((L, 1, "operand `[%rd1]` of `mov.u32` cannot be an address"),)),
    Case("ld_without_brackets", kernel("ld.global.f32 %f1, %rd1;"), PtxSemanticError,
         ((L, 1, "operand `%rd1` of `ld.global.f32` must be an address `[...]`"),)),
    Case("ld_v4_scalar_destination", kernel("ld.global.v4.f32 %f1, [%rd1];"), PtxSemanticError,
         ((L, 1, "`ld.global.v4.f32` needs a 4-element vector destination, found `%f1`"),)),
    Case("ld_v4_two_element_destination", kernel("ld.global.v4.f32 {%f1, %f2}, [%rd1];"), PtxSemanticError,
         ((L, 1, "`ld.global.v4.f32` needs a 4-element vector destination, found 2 elements"),)),
    Case("st_v2_scalar_source", kernel("st.global.v2.f32 [%rd1], %f1;"), PtxSemanticError,
         ((L, 1, "`st.global.v2.f32` needs a 2-element vector source, found `%f1`"),)),
    Case("pair_destination_not_allowed", kernel("add.cc.u32 %r1|%p1, %r2, %r3;"), PtxSemanticError,
         ((L, 1, "`add.cc.u32` has no `|p` predicate destination"),)),
    Case("bra_to_register", kernel("bra %r1;"), PtxSemanticError,
         ((L, 1, "operand `%r1` of `bra` must be a label"),),
         xfail_class=UNDETECTED, xfail_diags="verify._check_role accepts a Register for a LABEL role; `bra` takes a label "
                     "only (indirect branches are brx.idx)"),
    Case("empty_operand", kernel("add.s32 %r1, , %r3;"), PtxSyntaxError,
         ((L, 14, "expected an operand, found `,`"),), xfail_class=BUG_OPERAND_SYNTAX_CLASS),
    Case("missing_comma", kernel("add.s32 %r1 %r2, %r3;"), PtxSyntaxError,
         ((L, 13, "expected `,` or `;` after operand, found `%r2`"),), xfail_class=BUG_OPERAND_SYNTAX_CLASS),
    Case("address_offset_missing", kernel("ld.global.f32 %f1, [%rd1+];"), PtxSyntaxError,
         ((L, 26, "expected an integer offset after `+`, found `]`"),), xfail_class=BUG_OPERAND_SYNTAX_CLASS),
    Case("address_unclosed", kernel("ld.global.f32 %f1, [%rd1;"), PtxSyntaxError,
         ((L, 25, "expected `]`, found `;`"),), xfail_class=BUG_OPERAND_SYNTAX_CLASS),
    Case("empty_vector", kernel("mov.u32 %r1, {};"), PtxSyntaxError,
         ((L, 15, "empty `{}` vector"),), xfail_class=BUG_OPERAND_SYNTAX_CLASS),
    Case("vector_trailing_comma", kernel("ld.global.v4.f32 {%f0, %f1, %f2,}, [%rd1];"), PtxSyntaxError,
         ((L, 33, "expected an operand, found `}`"),), xfail_class=BUG_OPERAND_SYNTAX_CLASS),
    Case("double_semicolon", kernel("ret;;"), PtxSyntaxError,
         ((L, 5, "unexpected `;`; " + EXP_BODY),)),

    Case("nested_vector_operand", kernel("mov.b64 %rd1, {%r1, {%r2}};"), PtxSyntaxError,
         ((L, 21, Like(r"vector")),),
         xfail_class=UNDETECTED,
         xfail_diags="vector operands nest without limit (`{%r1, {%r2}}` is accepted; 600 levels "
                     "raise RecursionError); PTX vector elements are scalars"),
    Case("immediate_in_vector_destination", kernel("ld.global.v2.f32 {%f1, 1}, [%rd1];"), PtxSemanticError,
         ((L, 1, Like(r"constant `1`")),),
         xfail_class=UNDETECTED,
         xfail_diags="elements of a vector destination are not checked: immediates (and addresses) "
                     "are accepted"),
    Case("pair_as_source", kernel("mov.u32 %r1, %r2|%p1;"), PtxSemanticError,
         ((L, 1, Like(r"%r2\|%p1")),),
         xfail_class=UNDETECTED, xfail_diags="a `%r|%p` pair is accepted as a source operand"),
    Case("negated_destination", kernel("setp.eq.s32 !%p1, %r1, %r2;"), PtxSemanticError,
         ((L, 1, Like(r"!%p1")),),
         xfail_class=UNDETECTED, xfail_diags="a negated predicate `!%p1` is accepted as a destination"),
    Case("call_to_kernel", kernel("call k;"), PtxSemanticError,
         ((L, 1, Like(r"`k`.*\.entry|\.entry.*`k`")),),
         xfail_class=UNDETECTED, xfail_diags="`call` of an .entry function (or of a label) is accepted"),
    Case("negative_array_dimension", kernel(".local .u32 a[-1];"), PtxSemanticError,
         ((L, 13, Like(r"-1")),),
         xfail_class=UNDETECTED, xfail_diags="a negative array dimension is accepted"),

    # ------------------------------------------------------------------ register types
    Case("pred_register_in_f32_add", kernel("add.f32 %f1, %p1, %f2;"), PtxSemanticError,
         ((L, 1, "`%p1` is .pred, but `add.f32` needs a .f32 (32-bit) operand here"),)),
    Case("f32_register_in_u32_add", kernel("add.u32 %r1, %f1, %r2;"), PtxSemanticError,
         ((L, 1, "`%f1` is .f32, but `add.u32` needs a .u32 (32-bit) operand here"),)),
    Case("b64_register_in_s32_add", kernel("add.s32 %r1, %r2, %rd1;"), PtxSemanticError,
         ((L, 1, "`%rd1` is .b64, but `add.s32` needs a .s32 (32-bit) operand here"),)),
    Case("undeclared_register", kernel("add.s32 %r7, %r2, %r3;"), PtxSemanticError,
         ((L, 1, "register `%r7` used but not declared"),)),
    Case("register_out_of_scope", kernel("{\n.reg .b32 %t;\nmov.u32 %t, 1;\n}\nmov.u32 %t, 2;"),
         PtxSemanticError, ((L + 4, 1, "register `%t` used but not declared"),)),
    Case("special_register_bad_component", kernel("mov.u32 %r1, %tid.q;"), PtxSemanticError,
         ((L, 14, "special register `%tid` has no component `.q`"),),
         xfail_diags="`%tid.q` stops the operand tokenizer at `.`: 'expected `,` or `;` after "
                     "operand, found `.`' at column 18; the verifier already has the right message"),
    Case("guard_not_predicate", kernel("@%r1 add.s32 %r1, %r2, %r3;"), PtxSemanticError,
         ((L, 6, "guard `@%r1` must be a .pred register, `%r1` is .b32"),)),

    # ------------------------------------------------------------------ labels and declarations
    Case("undeclared_branch_target", kernel("bra NOPE;"), PtxSemanticError,
         ((L, 1, "branch target `NOPE` is not a label of `k`"),),
         xfail_diags=BUG_DOUBLE_UNDECLARED_LABEL),
    Case("duplicate_label", kernel("L1:\nL1:\nret;"), PtxSemanticError,
         ((L + 1, 1, "duplicate label `L1` (first defined at line 10)"),)),
    Case("duplicate_register_range", kernel(".reg .b32 %r<4>;"), PtxSemanticError,
         ((L, 11, "`%r` is declared twice in this scope (first at line 6)"),),
         xfail_diags=BUG_DECL_COLUMN),
    Case("duplicate_register", kernel(".reg .b32 %x;\n.reg .b32 %x;"), PtxSemanticError,
         ((L + 1, 11, "`%x` is declared twice in this scope (first at line 10)"),),
         xfail_diags=BUG_DECL_COLUMN),
    Case("duplicate_global", HEADER + ".global .u32 g;\n.global .u32 g;\n", PtxSemanticError,
         ((5, 14, "`g` is declared twice (first at line 4)"),)),
    Case("duplicate_function", HEADER + ".visible .entry k()\n{\nret;\n}\n" * 2, PtxSemanticError,
         ((8, 10, "function `k` is defined twice (first at line 4)"),)),
    Case("duplicate_parameter", HEADER + ".visible .entry k(.param .u64 a, .param .u64 a)\n{\nret;\n}\n",
         PtxSemanticError, ((4, 46, "parameter `a` is declared twice"),)),
    Case("declaration_without_type", kernel(".reg %x;"), PtxSemanticError,
         ((L, 1, "declaration needs a type (for example .b32 or .f32)"),)),
    Case("declaration_without_space", kernel(".b32 %x;"), PtxSemanticError,
         ((L, 1, "declaration needs a state space (.reg, .global, .shared, .local, .const, .param)"),)),
    Case("undeclared_symbol", kernel("ld.param.u64 %rd1, [nope];"), PtxSemanticError,
         ((L, 1, "`nope` is not declared (no label, variable, function or prototype has this name)"),)),

    # ------------------------------------------------------------------ initialisers
    Case("initialiser_trailing_comma", HEADER + ".global .u32 g[2] = {1, 2,};\n", PtxSyntaxError,
         ((4, 27, Like(r"^unexpected `\}`")),),
         xfail_diags="error recovery cascades: besides the `}` at 4:27 it reports `;` at 4:28 and "
                     "a bogus `unexpected end of file` at 5:1"),
    Case("initialiser_unterminated", HEADER + ".global .u32 g[2] = {\n", PtxSyntaxError,
         ((5, 1, "unexpected end of file; " + EXP_INIT),)),
    Case("initialiser_on_register", kernel(".reg .b32 %x = 1;"), PtxSemanticError,
         ((L, 11, "`%x`: only .global and .const variables can have initialisers"),)),
    Case("initialiser_on_extern", HEADER + ".extern .global .u32 g = 1;\n", PtxSemanticError,
         ((4, 22, "`.extern` variable `g` cannot have an initialiser"),)),

    # ------------------------------------------------------------------ lexical problems
    Case("garbage_hash", kernel("ret; #"), PtxSyntaxError,
         ((L, 6, "unexpected character `#`; " + EXP_BODY),)),
    Case("control_byte", HEADER + "\x01\n", PtxSyntaxError,
         ((4, 1, "unexpected character '\\x01'; " + EXP_TOP),)),
    Case("nul_byte", kernel("ret;\x00"), PtxSyntaxError,
         ((L, 5, "NUL byte in file: this is not PTX text"),)),
    Case("non_utf8", (kernel("ret; // caf\xe9")).encode("latin-1"), PtxEncodingError,
         ((L, 12, "file is not UTF-8 text: byte 0xe9 cannot be decoded"),)),
    Case("bad_octal_in_initialiser", HEADER + ".global .u32 g = 08;\n", PtxSyntaxError,
         ((4, 18, "invalid integer literal `08`"),),
         xfail_class="a malformed literal is a lexical (syntax) error; it raises PtxSemanticError"),
    Case("bad_octal_operand", kernel("add.s32 %r1, %r2, 08;"), PtxSyntaxError,
         ((L, 19, "invalid integer literal `08`"),),
         xfail_diags="operands say `invalid number `08``, initialisers `invalid integer literal "
                     "`08``; one wording please",
         xfail_class=BUG_OPERAND_SYNTAX_CLASS),
    Case("integer_literal_too_large", kernel("mov.u32 %r1, 0xFFFFFFFFFFFFFFFFFFFF;"), PtxSyntaxError,
         ((L, 14, Like(r"0xFFFFFFFFFFFFFFFFFFFF.*(64 bits|out of range|too large)|"
                       r"(64 bits|out of range|too large).*0xFFFFFFFFFFFFFFFFFFFF")),),
         xfail_class=UNDETECTED, xfail_diags="integer literals wider than 64 bits are accepted silently"),
    Case("short_hex_float", kernel("mov.f32 %f1, 0f3F80;"), PtxSyntaxError,
         ((L, 14, Like(r"0f3F80")),),
         xfail_class=BUG_OPERAND_SYNTAX_CLASS, xfail_diags="`0f3F80` gives 'expected an operand, found `0`' (the token is not shown "
                     "whole, nor that 0f needs exactly 8 hex digits)"),

    # ------------------------------------------------------------------ module structure
    Case("empty_file", "", PtxSemanticError,
         ((1, 1, "missing `.version` directive at the start of the module"),),
         xfail_class=UNDETECTED, xfail_diags="an empty file is accepted: `_assemble` asks for .version only when the "
                     "module has items; a PTX module must start with .version"),
    Case("only_comments", "  \n// just a comment\n/* and another */\n", PtxSemanticError,
         ((1, 1, "missing `.version` directive at the start of the module"),),
         xfail_class=UNDETECTED, xfail_diags="a file of only whitespace/comments is accepted (no .version)"),
    Case("missing_version", ".target sm_80\n.address_size 64\n.visible .entry k()\n{\nret;\n}\n",
         PtxSemanticError, ((1, 1, "missing `.version` directive at the start of the module"),)),
    Case("bad_version_number", ".version 8\n.target sm_80\n", PtxSyntaxError,
         ((1, 10, "unexpected `8`; expected a version number like 9.0"),)),
    Case("duplicate_version", ".version 8.0\n.version 8.0\n.target sm_80\n.address_size 64\n",
         PtxSemanticError, ((2, 1, Like(r"`\.version`.*(twice|duplicate|more than once)|"
                                        r"(twice|duplicate|more than once).*`\.version`")),),
         xfail_class=UNDETECTED, xfail_diags="a second .version directive is accepted silently"),
    Case("address_size_48", ".version 8.0\n.target sm_80\n.address_size 48\n", PtxSemanticError,
         ((3, 15, "`.address_size 48` is invalid; expected 32 or 64"),)),
    Case("entry_with_return_params", HEADER + ".visible .entry (.param .u32 r) k2()\n{\nret;\n}\n",
         PtxSemanticError, ((4, 10, "kernel `k2` (.entry) cannot have return parameters"),)),
    Case("loc_without_numbers", HEADER + '.file 1 "a.cu"\n.visible .entry k()\n{\n.loc 1\nret;\n}\n',
         PtxSemanticError,
         ((7, 1, "malformed `.loc` directive; expected `.loc file line column[, ...]`"),)),
    Case("loc_bare", HEADER + ".visible .entry k()\n{\n.loc\nret;\n}\n", PtxSemanticError,
         ((6, 1, "malformed `.loc` directive; expected `.loc file line column[, ...]`"),),
         xfail_class="follows from the wrong diagnostic (a grammar error now)",
         xfail_diags="a bare `.loc` (no space after it) gives 'unexpected character `.`' "
                     "(RUN_ITEM needs `.loc[ \\t]`)"),
    Case("unknown_directive", HEADER + ".foo 3;\n", PtxSyntaxError,
         ((4, 1, Like(r"unknown directive `\.foo`")),),
         xfail_diags="an unknown directive gives 'unexpected character `.`'; naming `.foo` "
                     "is what a user needs"),
    Case("unknown_directive_in_body", kernel(".foo;"), PtxSyntaxError,
         ((L, 1, Like(r"unknown directive `\.foo`")),),
         xfail_diags="an unknown directive gives 'unexpected character `.`'"),
    Case("unknown_type_in_declaration", kernel(".reg .b77 %x;"), PtxSemanticError,
         ((L, 6, Like(r"^unknown type `\.b77` in declaration; expected one of \.b8 .*\.b32 .*\.f32 ")),)),

    # ------------------------------------------------------------------ several errors in one file
    Case("multiple_semantic_errors",
         kernel("add.s32 %r1, %r2, %r3;\nfoo.s32 %r1;\nadd.s32 %r9, %r1, %r1;\nmul.s32 %r1, %r1, %r1;"
                "\nadd.f32 %f1, %p1, %f2;"),
         PtxSemanticError,
         ((L + 1, 1, "unknown instruction `foo`; did you mean `or`?"),
          (L + 2, 1, "register `%r9` used but not declared"),
          (L + 3, 5, "`mul.s32` needs a `hilo` modifier: one of .hi .lo"),
          (L + 4, 1, "`%p1` is .pred, but `add.f32` needs a .f32 (32-bit) operand here"))),
    Case("multiple_syntax_errors", kernel("#\nret;\n$$ x"), PtxSyntaxError,
         ((L, 1, "unexpected character `#`; " + EXP_BODY),
          (L + 2, 1, "unexpected `$$`; " + EXP_BODY))),
    Case("multiple_declaration_errors",
         HEADER + ".global .u32 g;\n.global .u32 g;\n.visible .entry k()\n{\n.reg .b32 %x = 1;\n"
                  "L:\nL:\nret;\n}\n",
         PtxSemanticError,
         ((5, 14, "`g` is declared twice (first at line 4)"),
          (8, 11, "`%x`: only .global and .const variables can have initialisers"),
          (10, 1, "duplicate label `L` (first defined at line 9)"))),

    # ------------------------------------------------------------------ valid but unusual
    Case("newer_version_warns", ".version 9.9\n.target sm_80\n.address_size 64\n", None,
         warning="PTX ISA 9.9 is newer than"),
    Case("negative_offset", kernel("ld.global.f32 %f1, [%rd1+-4];\nld.global.f32 %f1, [%rd1-8];"), None),
    Case("pair_destination", kernel("shfl.sync.down.b32 %r1|%p1, %r2, 1, 31, -1;"), None),
    Case("sink_operand", kernel("mov.b64 {%r1, _}, %rd1;"), None),
    Case("hex_float_literals", kernel("mov.f32 %f1, 0f3F800000;\nmov.f64 %rd1, 0d3FF0000000000000;"), None),
    Case("pragma", HEADER + '.pragma "nounroll";\n.visible .entry k()\n{\n.pragma "nounroll";\nret;\n}\n', None),
    Case("nested_scopes", kernel("{\n{\n.reg .b32 %t;\nmov.u32 %t, 1;\n}\n.reg .b32 %t;\nmov.u32 %t, 2;\n}"), None),
    Case("callprototype_indirect_call",
         HEADER + ".func (.param .b32 r) f(.param .b32 a)\n{\nret;\n}\n.visible .entry k()\n{\n"
                  ".reg .b64 %rd<2>;\n{\n.param .b32 a0;\n.param .b32 r0;\n"
                  "proto : .callprototype (.param .b32 _) _ (.param .b32 _);\nmov.u64 %rd1, f;\n"
                  "call (r0), %rd1, (a0), proto;\ncall (r0), f, (a0);\n}\nret;\n}\n", None),
    Case("crlf_and_comments", kernel("add.s32 %r1, %r2, %r3; // c\r\n/* multi\r\nline */ret;\r").replace("\n", "\r\n"),
         None),
    Case("dollar_labels_and_multiline_operands",
         kernel("bra.uni $L__BB0_1;\n$L__BB0_1:\nadd.s32 %r1,\n  %r2,\n  %r3;"), None),
]
