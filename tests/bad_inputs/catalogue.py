"""Catalogue of malformed PTX inputs, each with the exact diagnostics ptxvm must give.

Every case is a small PTX text (mostly a kernel skeleton with a few body lines),
the exception class ``ptxvm.parse`` must raise (``None``: the text is valid and
must parse), and the full list of ``(line, column, message)`` diagnostics, in
order. A message is either the exact string or a ``Like(regex)`` where the exact
wording is not settled yet but the substance is (used for known-bad messages
whose fix is pending).

Cases whose expectation ptxvm does not meet yet carry ``xfail_diags`` /
``xfail_class`` with the reason; tests/frontend/test_bad_inputs.py marks them
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
EXP_TOP = ("expected one of `.align`, `.attribute(...)`, `.file`, `.entry` or `.func`, a linkage "
           "directive, `.ptr`, a `.section` block, a state space (e.g. .reg), ...")
EXP_TOP_OR_END = ("expected one of end of file, `.align`, `.attribute(...)`, `.file`, `.entry` or "
                  "`.func`, a linkage directive, `.ptr`, a `.section` block, ...")

BUG_LALR_PAREN = ("a declaration inside a body lists `)` among the expected tokens (LALR state shared "
                  "with parameter lists); `)` cannot follow a body declaration")
BUG_BRACE_UNNAMED = (
    "`{` has vanished from every 'expected one of ...' list: the block's `{` became the terminal "
    "BLOCK_OPEN (grammar/ptx.lark), which also absorbs the initialiser list's \"{\" literal, and "
    "BLOCK_OPEN has no entry in parser._TERMINAL_NAMES, so _describe_expected drops it. In a body the "
    "list now reads '`.align`, `.attribute(...)`, a label, a linkage directive, `.ptr`, `}`, a state "
    "space (e.g. .reg), a type (e.g. .b32), ...' (no `{`); in an initialiser the (complete) list "
    "omits `{`. Cases whose point is elsewhere match the list loosely (double_semicolon, "
    "multiple_syntax_errors)")
L = BODY_LINE
K_END = L + 2   # line of the closing `}` for a one-line body

CASES: list[Case] = [
    # ------------------------------------------------------------------ truncations
    Case("truncated_mid_instruction", kernel("add.s32 %r1, %r2", close=False), PtxSyntaxError,
         ((L, 17, "expected `;` at the end of `add.s32`"),)),
    Case("truncated_mid_declaration", kernel(".reg .b32 %x", close=False), PtxSyntaxError,
         ((L, 13, "expected `;` at the end of the statement"),
          (L, 13, "unexpected end of file: missing `}` for the block opened at line 5")),
         notes="both errors are real; the same truncation of an instruction names only the `;`"),
    Case("truncated_register_range", kernel(".reg .b32 %x<4", close=False), PtxSyntaxError,
         ((L, 13, "unexpected character `<`; expected one of `,`, `=`, `[`, `;`"),
          (L, 15, "unexpected end of file: missing `}` for the block opened at line 5")),
         xfail_diags=BUG_LALR_PAREN),
    Case("truncated_after_address_size", ".version 8.0\n.target sm_80\n.address_size", PtxSyntaxError,
         ((3, 14, "unexpected end of file; expected an integer"),)),
    Case("truncated_in_param_list", HEADER + ".visible .entry k(.param .u64", PtxSyntaxError,
         ((4, 30, "unexpected end of file; expected one of `.align`, `.attribute(...)`, a name, "
                  "a register range `%r<N>`, `.ptr`, a register, a state space (e.g. .reg), "
                  "a type (e.g. .b32), ..."),)),
    Case("missing_closing_brace", kernel("ret;", close=False) + "\n", PtxSyntaxError,
         ((L + 1, 1, "unexpected end of file: missing `}` for the block opened at line 5"),)),
    # The `{` on line 10 is closed by the `}` on line 12; it is the body's `{` that stays open.
    Case("unterminated_nested_block", kernel("{\nret;", close=False) + "\n}\n", PtxSyntaxError,
         ((L + 3, 1, "unexpected end of file: missing `}` for the block opened at line 5"),)),
    Case("extra_closing_brace", kernel("ret;") + "}\n", PtxSyntaxError,
         ((K_END, 1, "unexpected `}`; " + EXP_TOP_OR_END),)),
    Case("stray_braces_after_function", kernel("ret;") + "}\n{\n", PtxSyntaxError,
         ((K_END, 1, "unexpected `}`; " + EXP_TOP_OR_END),
          (K_END + 1, 1, "unexpected `{`; " + EXP_TOP_OR_END))),
    # A missing `;` is reported just after the last character of the statement that lacks it.
    Case("missing_semicolon", kernel("add.s32 %r1, %r2, %r3\nret;"), PtxSyntaxError,
         ((L, 22, "expected `;` at the end of `add.s32`"),)),
    Case("missing_semicolon_before_label", kernel("add.s32 %r1, %r2, %r3\nL1:\nret;"), PtxSyntaxError,
         ((L, 22, "expected `;` at the end of `add.s32`"),)),
    Case("missing_semicolon_before_brace", kernel("add.s32 %r1, %r2, %r3"), PtxSyntaxError,
         ((L, 22, "expected `;` at the end of `add.s32`"),)),
    Case("missing_semicolon_in_nested_block", kernel("{\nadd.s32 %r1, %r2, %r3\n}\nret;"), PtxSyntaxError,
         ((L + 1, 22, "expected `;` at the end of `add.s32`"),)),
    Case("missing_semicolon_multiline_operands", kernel("add.s32 %r1,\n  %r2,\n  %r3\nret;"),
         PtxSyntaxError, ((L + 2, 6, "expected `;` at the end of `add.s32`"),)),
    Case("missing_semicolon_trailing_blanks", kernel("add.s32 %r1, %r2, %r3   \nret;"), PtxSyntaxError,
         ((L, 22, "expected `;` at the end of `add.s32`"),)),
    Case("missing_semicolon_before_comment", kernel("add.s32 %r1, %r2, %r3 // c\nret;"), PtxSyntaxError,
         ((L, 22, "expected `;` at the end of `add.s32`"),)),
    Case("unterminated_ret_at_eof", kernel("ret", close=False), PtxSyntaxError,
         ((L, 4, "expected `;` at the end of `ret`"),)),
    Case("declaration_missing_semicolon", kernel(".reg .b32 %x\nret;"), PtxSyntaxError,
         ((L, 13, "expected `;` at the end of the statement"),)),
    Case("declaration_missing_semicolon_before_brace", kernel(".reg .b32 %x"), PtxSyntaxError,
         ((L, 13, "expected `;` at the end of the statement"),)),
    Case("global_missing_semicolon", HEADER + ".global .u32 g[2] = {1, 2}\n", PtxSyntaxError,
         ((4, 27, "expected `;` at the end of the statement"),)),
    Case("nesting_too_deep", kernel("{\n" * 200 + "ret;\n" + "}\n" * 200), PtxSyntaxError,
         ((L + 199, 1, "`{ }` scopes in `k` nest 201 deep; ptxvm allows at most 200"),)),

    # ------------------------------------------------------------------ opcodes and modifiers
    Case("unknown_opcode", kernel("ad.s32 %r1, %r2, %r3;"), PtxSemanticError,
         ((L, 1, "unknown instruction `ad`; did you mean `add` or `and` or `mad`?"),)),
    Case("unknown_opcode_ld", kernel("lod.global.f32 %f1, [%rd1];"), PtxSemanticError,
         ((L, 1, "unknown instruction `lod`; did you mean `ld` or `ldu`?"),)),
    Case("unknown_modifier", kernel("add.rnx.f32 %f1, %f2, %f3;"), PtxSemanticError,
         ((L, 5, "unknown modifier `.rnx` for `add.f32`; expected one of .rm .rn .rp .rz"),)),
    Case("unknown_modifier_f16", kernel("add.rnx.f16 %r1, %r2, %r3;"), PtxSemanticError,
         ((L, 5, "unknown modifier `.rnx` for `add.f16`; expected one of .rn"),)),
    Case("unknown_modifier_int", kernel("add.rnx.s32 %r1, %r2, %r3;"), PtxSemanticError,
         ((L, 5, "unknown modifier `.rnx` for `add.s32`; it accepts .cc .sat"),)),
    Case("unknown_modifier_ld_cache", kernel("ld.global.cax.f32 %f1, [%rd1];"), PtxSemanticError,
         ((L, 11, "unknown modifier `.cax` for `ld.global.f32`; expected one of .ca .cg .cs .cv .lu"),)),
    Case("rounding_on_integer_add", kernel("add.rn.s32 %r1, %r2, %r3;"), PtxSemanticError,
         ((L, 5, "modifier `.rn` is not allowed in `add.rn.s32`"),)),
    Case("sat_on_u32", kernel("add.sat.u32 %r1, %r2, %r3;"), PtxSemanticError,
         ((L, 5, "modifier `.sat` is not allowed in `add.sat.u32`"),)),
    Case("two_rounding_modes", kernel("add.rn.rz.f32 %f1, %f2, %f3;"), PtxSemanticError,
         ((L, 8, "conflicting modifiers `.rn` and `.rz` in `add.rn.rz.f32`"),)),
    Case("missing_type", kernel("add %r1, %r2, %r3;"), PtxSemanticError,
         ((L, 1, "`add` needs a type; expected one of .bf16 .bf16x2 .f16 .f16x2 .f32 .f32x2 .f64 "
                 ".s16 .s16x2 .s32 .s64 .u16 .u16x2 .u32 .u64"),)),
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
         ((L, 1, "`ret` takes no operands, found 1"),)),
    Case("operand_on_exit", kernel("exit 5;"), PtxSemanticError,
         ((L, 1, "`exit` takes no operands, found 1"),)),
    Case("immediate_destination", kernel("add.s32 1, %r1, %r2;"), PtxSemanticError,
         ((L, 9, "destination of `add.s32` cannot be the constant `1`"),)),
    Case("address_as_source", kernel("add.s32 %r1, %r2, [%rd1];"), PtxSemanticError,
         ((L, 19, "operand `[%rd1]` of `add.s32` cannot be an address"),)),
    Case("address_as_mov_destination", kernel("mov.u32 [%rd1], %r1;"), PtxSemanticError,
         ((L, 9, "operand `[%rd1]` of `mov.u32` cannot be an address"),)),
    Case("ld_without_brackets", kernel("ld.global.f32 %f1, %rd1;"), PtxSemanticError,
         ((L, 20, "operand `%rd1` of `ld.global.f32` must be an address `[...]`"),)),
    Case("ld_v4_scalar_destination", kernel("ld.global.v4.f32 %f1, [%rd1];"), PtxSemanticError,
         ((L, 18, "`ld.global.v4.f32` needs a 4-element vector destination, found `%f1`"),)),
    Case("ld_v4_two_element_destination", kernel("ld.global.v4.f32 {%f1, %f2}, [%rd1];"), PtxSemanticError,
         ((L, 18, "`ld.global.v4.f32` needs a 4-element vector destination, found 2 elements"),)),
    Case("st_v2_scalar_source", kernel("st.global.v2.f32 [%rd1], %f1;"), PtxSemanticError,
         ((L, 26, "`st.global.v2.f32` needs a 2-element vector source, found `%f1`"),)),
    Case("pair_destination_not_allowed", kernel("add.cc.u32 %r1|%p1, %r2, %r3;"), PtxSemanticError,
         ((L, 12, "`add.cc.u32` has no `|p` predicate destination"),)),
    Case("bra_to_register", kernel("bra %r1;"), PtxSemanticError,
         ((L, 5, "branch target of `bra` must be a label, found `%r1`"),)),
    Case("empty_operand", kernel("add.s32 %r1, , %r3;"), PtxSyntaxError,
         ((L, 14, "expected an operand, found `,`"),)),
    Case("missing_comma", kernel("add.s32 %r1 %r2, %r3;"), PtxSyntaxError,
         ((L, 13, "expected `,` or `;` after operand, found `%r2`"),)),
    Case("address_offset_missing", kernel("ld.global.f32 %f1, [%rd1+];"), PtxSyntaxError,
         ((L, 26, "expected an integer offset after `+`, found `]`"),)),
    Case("address_unclosed", kernel("ld.global.f32 %f1, [%rd1;"), PtxSyntaxError,
         ((L, 25, "expected `]`, found `;`"),)),
    Case("empty_vector", kernel("mov.u32 %r1, {};"), PtxSyntaxError,
         ((L, 15, "empty `{}` vector"),)),
    Case("vector_trailing_comma", kernel("ld.global.v4.f32 {%f0, %f1, %f2,}, [%rd1];"), PtxSyntaxError,
         ((L, 33, "expected an operand, found `}`"),)),
    Case("double_semicolon", kernel("ret;;"), PtxSyntaxError,
         ((L, 5, Like(r"^unexpected `;`; expected one of `\.align`, ")),)),

    Case("nested_vector_operand", kernel("mov.b64 %rd1, {%r1, {%r2}};"), PtxSyntaxError,
         ((L, 21, "`{` cannot appear inside a `{}` list; elements are registers, constants, names or `_`"),)),
    Case("address_in_vector", kernel("ld.global.v2.f32 {%f1, [%rd1]}, [%rd1];"), PtxSyntaxError,
         ((L, 24, "`[` cannot appear inside a `{}` list; elements are registers, constants, names or `_`"),)),
    Case("nested_call_parens", kernel("call ((%r2));"), PtxSyntaxError,
         ((L, 7, "`(` cannot appear inside a `()` list; elements are registers, constants, names or `_`"),)),
    Case("immediate_in_vector_destination", kernel("ld.global.v2.f32 {%f1, 1}, [%rd1];"), PtxSemanticError,
         ((L, 24, "vector destination element `1` of `ld.global.v2.f32` must be a register or `_`"),)),
    Case("immediate_in_packed_mov_destination", kernel("mov.b64 {%r1, 5}, %rd1;"), PtxSemanticError,
         ((L, 15, "vector destination element `5` of `mov.b64` must be a register or `_`"),)),
    Case("pair_as_source", kernel("mov.u32 %r1, %r2|%p1;"), PtxSemanticError,
         ((L, 14, "`mov.u32` has no `|p` predicate destination"),)),
    Case("pair_as_shfl_source", kernel("shfl.sync.down.b32 %r1, %r2|%p1, 1, 31, -1;"), PtxSemanticError,
         ((L, 25, "`%r2|%p1`: a `|` predicate pair can only be the destination of "
                  "`shfl.sync.down.b32`"),)),
    Case("negated_destination", kernel("setp.eq.s32 !%p1, %r1, %r2;"), PtxSemanticError,
         ((L, 13, "destination `!%p1` of `setp.eq.s32` cannot be negated"),)),
    Case("negated_non_predicate", kernel("add.s32 %r1, !%r2, %r3;"), PtxSemanticError,
         ((L, 14, "`!` negates predicates only; `%r2` is .b32"),)),
    Case("call_to_kernel", kernel("call k;"), PtxSemanticError,
         ((L, 6, "`k` is a kernel (.entry); kernels cannot be called"),)),
    Case("call_to_label", kernel("L1:\ncall L1;"), PtxSemanticError,
         ((L + 1, 6, "`L1` is a label, not a function"),)),
    Case("call_to_kernel_with_return_list", kernel("call (k_p0), k;"), PtxSemanticError,
         ((L, 14, "`k` is a kernel (.entry); kernels cannot be called"),)),
    Case("negative_array_dimension", kernel(".local .u32 a[-1];"), PtxSemanticError,
         ((L, 15, "array dimension must be positive, found -1"),)),

    # ------------------------------------------------------------------ register types
    Case("pred_register_in_f32_add", kernel("add.f32 %f1, %p1, %f2;"), PtxSemanticError,
         ((L, 14, "`%p1` is .pred, but `add.f32` needs a .f32 (32-bit) operand here"),)),
    Case("f32_register_in_u32_add", kernel("add.u32 %r1, %f1, %r2;"), PtxSemanticError,
         ((L, 14, "`%f1` is .f32, but `add.u32` needs a .u32 (32-bit) operand here"),)),
    Case("b64_register_in_s32_add", kernel("add.s32 %r1, %r2, %rd1;"), PtxSemanticError,
         ((L, 19, "`%rd1` is .b64, but `add.s32` needs a .s32 (32-bit) operand here"),)),
    Case("undeclared_register", kernel("add.s32 %r7, %r2, %r3;"), PtxSemanticError,
         ((L, 9, "register `%r7` used but not declared"),)),
    Case("register_out_of_scope", kernel("{\n.reg .b32 %t;\nmov.u32 %t, 1;\n}\nmov.u32 %t, 2;"),
         PtxSemanticError, ((L + 4, 9, "register `%t` used but not declared"),)),
    Case("special_register_bad_component", kernel("mov.u32 %r1, %tid.q;"), PtxSemanticError,
         ((L, 14, "special register `%tid` has no component `.q`"),)),
    Case("special_register_component_w", kernel("mov.u32 %r1, %tid.w;"), PtxSemanticError,
         ((L, 14, "special register `%tid` has no component `.w`"),)),
    Case("component_of_scalar_register", kernel("mov.u32 %r1, %r2.x;"), PtxSemanticError,
         ((L, 14, "register `%r2` is not a vector with a `.x` element"),)),
    Case("guard_not_predicate", kernel("@%r1 add.s32 %r1, %r2, %r3;"), PtxSemanticError,
         ((L, 6, "guard `@%r1` must be a .pred register, `%r1` is .b32"),)),

    # ------------------------------------------------------------------ labels and declarations
    Case("undeclared_branch_target", kernel("bra NOPE;"), PtxSemanticError,
         ((L, 5, "branch target `NOPE` is not a label of `k`"),)),
    Case("branch_to_function", HEADER + ".func f()\n{\nret;\n}\n" + ENTRY + "{\nbra f;\n}\n",
         PtxSemanticError, ((10, 5, "branch target `f` is not a label of `k`"),)),
    Case("duplicate_label", kernel("L1:\nL1:\nret;"), PtxSemanticError,
         ((L + 1, 1, "duplicate label `L1` (first defined at line 10)"),)),
    Case("duplicate_register_range", kernel(".reg .b32 %r<4>;"), PtxSemanticError,
         ((L, 11, "`%r` is declared twice in this scope (first at line 6)"),)),
    Case("duplicate_register", kernel(".reg .b32 %x;\n.reg .b32 %x;"), PtxSemanticError,
         ((L + 1, 11, "`%x` is declared twice in this scope (first at line 10)"),)),
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
         ((L, 21, "`nope` is not declared (no label, variable, function or prototype has this name)"),)),

    # ------------------------------------------------------------------ initialisers
    Case("initialiser_trailing_comma", HEADER + ".global .u32 g[2] = {1, 2,};\n", PtxSyntaxError,
         ((4, 27, Like(r"^unexpected `\}`; expected one of .*`\{`")),)),
    Case("initialiser_2d_trailing_comma", HEADER + ".global .u32 g[2][2] = {{1, 2},};\n", PtxSyntaxError,
         ((4, 32, Like(r"^unexpected `\}`; expected one of .*`\{`")),),
         xfail_diags="a spurious second error 'expected `;` at the end of the statement' (4:33) follows, "
                     "although that is where the `;` is; and the first one does not list `{`, which is "
                     "exactly what may follow `{1, 2},` here. " + BUG_BRACE_UNNAMED),
    Case("initialiser_unterminated", HEADER + ".global .u32 g[2] = {\n", PtxSyntaxError,
         ((5, 1, "unexpected end of file: missing `}` for the initialiser list opened at line 4"),)),
    Case("initialiser_too_many_elements", HEADER + ".global .u32 g[2] = {1, 2, 3};\n", PtxSemanticError,
         ((4, 14, "initialiser of `g`: 3 elements for a dimension of 2"),)),
    Case("initialiser_nested_too_deep", HEADER + ".global .u32 g[1] = {{1}};\n", PtxSemanticError,
         ((4, 14, "initialiser of `g`: too many levels of `{ }` for the declared dimensions"),)),
    Case("initialiser_2d_on_1d_array", HEADER + ".global .u32 g[2] = {{1, 2}, {3, 4}};\n", PtxSemanticError,
         ((4, 14, "initialiser of `g`: too many levels of `{ }` for the declared dimensions"),)),
    Case("initialiser_braces_on_scalar", HEADER + ".global .u32 s = {1};\n", PtxSemanticError,
         ((4, 14, "initialiser of `s`: a scalar variable takes a single value, not `{ }`"),)),
    Case("initialiser_on_register", kernel(".reg .b32 %x = 1;"), PtxSemanticError,
         ((L, 11, "`%x`: only .global and .const variables can have initialisers"),)),
    Case("initialiser_on_extern", HEADER + ".extern .global .u32 g = 1;\n", PtxSemanticError,
         ((4, 22, "`.extern` variable `g` cannot have an initialiser"),)),

    # ------------------------------------------------------------------ lexical problems
    Case("garbage_hash", kernel("ret; #"), PtxSyntaxError,
         ((L, 6, Like(r"^unexpected character `#`; expected one of `\.align`, .*`\{`")),)),
    Case("control_byte", HEADER + "\x01\n", PtxSyntaxError,
         ((4, 1, "unexpected character '\\x01'; " + EXP_TOP),)),
    Case("nul_byte", kernel("ret;\x00"), PtxSyntaxError,
         ((L, 5, "NUL byte in file: this is not PTX text"),)),
    Case("non_utf8", (kernel("ret; // caf\xe9")).encode("latin-1"), PtxEncodingError,
         ((L, 12, "file is not UTF-8 text: byte 0xe9 cannot be decoded"),)),
    Case("bad_octal_in_initialiser", HEADER + ".global .u32 g = 08;\n", PtxSyntaxError,
         ((4, 18, "invalid integer literal `08`"),)),
    Case("bad_octal_operand", kernel("add.s32 %r1, %r2, 08;"), PtxSyntaxError,
         ((L, 19, "invalid integer literal `08`"),)),
    Case("integer_literal_too_large", kernel("mov.u32 %r1, 0xFFFFFFFFFFFFFFFFFFFF;"), PtxSyntaxError,
         ((L, 14, "integer constant `0xFFFFFFFFFFFFFFFFFFFF` does not fit in 64 bits"),)),
    Case("decimal_literal_too_large", kernel("mov.u64 %rd1, 18446744073709551616;"), PtxSyntaxError,
         ((L, 15, "integer constant `18446744073709551616` does not fit in 64 bits"),)),
    Case("initialiser_literal_too_large", HEADER + ".global .u64 g = 18446744073709551616;\n",
         PtxSyntaxError, ((4, 18, "integer constant `18446744073709551616` does not fit in 64 bits"),)),
    Case("short_hex_float", kernel("mov.f32 %f1, 0f3F80;"), PtxSyntaxError,
         ((L, 14, "`0f3F80`: a `0f` floating-point literal needs exactly 8 hex digits"),)),
    Case("short_hex_double", kernel("mov.f64 %rd1, 0d3FF0;"), PtxSyntaxError,
         ((L, 15, "`0d3FF0`: a `0d` floating-point literal needs exactly 16 hex digits"),)),

    # ------------------------------------------------------------------ module structure
    Case("empty_file", "", PtxSyntaxError,
         ((1, 1, "missing `.version` directive at the start of the module: this is not a PTX module"),)),
    Case("only_comments", "  \n// just a comment\n/* and another */\n", PtxSyntaxError,
         ((1, 1, "missing `.version` directive at the start of the module: this is not a PTX module"),)),
    Case("missing_version", ".target sm_80\n.address_size 64\n.visible .entry k()\n{\nret;\n}\n",
         PtxSyntaxError,
         ((1, 1, "missing `.version` directive at the start of the module: this is not a PTX module"),)),
    Case("version_not_first", ".target sm_80\n.version 8.0\n.address_size 64\n", PtxSyntaxError,
         ((2, 1, "`.version` must be the first directive of the module"),)),
    Case("bad_version_number", ".version 8\n.target sm_80\n", PtxSyntaxError,
         ((1, 10, "`.version 8` is malformed; expected MAJOR.MINOR, such as 9.0"),)),
    Case("duplicate_version", ".version 8.0\n.version 8.0\n.target sm_80\n.address_size 64\n",
         PtxSyntaxError, ((2, 1, "second `.version` directive (the first is at line 1)"),)),
    Case("duplicate_target", HEADER + ".target sm_90\n", PtxSyntaxError,
         ((4, 1, "second `.target` directive (the first is at line 2)"),)),
    Case("address_size_48", ".version 8.0\n.target sm_80\n.address_size 48\n", PtxSemanticError,
         ((3, 15, "`.address_size 48` is invalid; expected 32 or 64"),)),
    Case("entry_with_return_params", HEADER + ".visible .entry (.param .u32 r) k2()\n{\nret;\n}\n",
         PtxSemanticError, ((4, 10, "kernel `k2` (.entry) cannot have return parameters"),)),
    Case("loc_without_numbers", HEADER + '.file 1 "a.cu"\n.visible .entry k()\n{\n.loc 1\nret;\n}\n',
         PtxSyntaxError,
         ((7, 1, "malformed `.loc` directive; expected `.loc file line column[, ...]`"),)),
    Case("loc_bare", HEADER + ".visible .entry k()\n{\n.loc\nret;\n}\n", PtxSyntaxError,
         ((6, 1, "malformed `.loc` directive; expected `.loc file line column[, ...]`"),)),
    Case("loc_bare_after_statement", kernel(".loc\nret;"), PtxSyntaxError,
         ((L, 1, "malformed `.loc` directive; expected `.loc file line column[, ...]`"),)),
    Case("loc_bare_in_top_level", HEADER + ".loc\n", PtxSyntaxError,
         ((4, 1, "malformed `.loc` directive; expected `.loc file line column[, ...]`"),)),
    Case("unknown_directive", HEADER + ".foo 3;\n", PtxSyntaxError,
         ((4, 1, "unknown directive `.foo`"),)),
    Case("unknown_directive_in_body", kernel(".foo;"), PtxSyntaxError,
         ((L, 1, "unknown directive `.foo`"),)),
    Case("unknown_type_in_declaration", kernel(".reg .b77 %x;"), PtxSemanticError,
         ((L, 6, Like(r"^unknown type `\.b77` in declaration; expected one of \.b8 .*\.b32 .*\.f32 ")),)),

    # ------------------------------------------------------------------ several errors in one file
    Case("multiple_semantic_errors",
         kernel("add.s32 %r1, %r2, %r3;\nfoo.s32 %r1;\nadd.s32 %r9, %r1, %r1;\nmul.s32 %r1, %r1, %r1;"
                "\nadd.f32 %f1, %p1, %f2;"),
         PtxSemanticError,
         ((L + 1, 1, "unknown instruction `foo`"),
          (L + 2, 9, "register `%r9` used but not declared"),
          (L + 3, 5, "`mul.s32` needs a `hilo` modifier: one of .hi .lo"),
          (L + 4, 14, "`%p1` is .pred, but `add.f32` needs a .f32 (32-bit) operand here"))),
    Case("multiple_syntax_errors", kernel("#\nret;\n$$ x"), PtxSyntaxError,
         ((L, 1, Like(r"^unexpected character `#`; expected one of `\.align`, ")),
          (L + 2, 1, Like(r"^unexpected `\$\$`; expected one of `\.align`, ")))),
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
    Case("negative_offset", kernel("ld.global.f32 %f1, [%rd1+-4];"), None),
    Case("negative_offset_minus", kernel("ld.global.f32 %f1, [%rd1+-4];\nld.global.f32 %f1, [%rd1-8];"),
         PtxSyntaxError, ((L + 1, 25, "address offsets are added (ptxas refuses `-` after the base inside "
                                   "`[ ]`): write `[%rd1+-8]`"),),
         notes="ptxas 13.0: \"Parsing error near '-'\" (tests/data/ptxas_forms.json addr/*/minus)"),
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
    Case("nesting_at_limit", kernel("{\n" * 199 + "ret;\n" + "}\n" * 199), None),
    Case("largest_64_bit_literals", kernel("mov.u64 %rd1, 0xFFFFFFFFFFFFFFFF;\n"
                                           "mov.u64 %rd1, 18446744073709551615;"), None),
    Case("special_register_components", kernel("mov.u32 %r1, %tid.x;\nmov.u32 %r1, %ctaid.z;"), None),
]
