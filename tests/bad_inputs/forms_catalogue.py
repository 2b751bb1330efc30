"""Malformed variants of the operand and declaration forms of issue 14 (item 1), with the exact
located diagnostics ptxvm must give; run by tests/frontend/test_bad_inputs_forms.py the way
tests/frontend/test_bad_inputs.py runs catalogue.py. Layout of kernel(body): the body starts on line 10."""

from __future__ import annotations

from ptxvm import PtxSemanticError, PtxSyntaxError

from .catalogue import HEADER, Case, kernel

R8 = ", ".join(f"%r{i % 4}" for i in range(8))
V88 = (".version 8.8\n.target sm_100\n.address_size 64\n.visible .entry k(.param .u64 k_p0)\n{\n"
       ".reg .b32 %r<4>;\n.reg .f32 %f<4>;\n.reg .pred %p<2>;\n.reg .b64 %rd<4>;\n")
NOT_DECLARED = "is not declared (no label, variable, function or prototype has this name)"

CASES = [
    Case('pair_bare_missing_pred', kernel(".reg .u32 r0;\nshfl.sync.up.b32 r0|, %r1, 1, 0, -1;"), PtxSyntaxError,
         ((11, 21, 'expected a predicate register after `|`, found `,`'),)),
    Case('pair_with_constant', kernel("shfl.sync.up.b32 %r1|WARP_SZ, %r2, 1, 0, -1;"), PtxSyntaxError,
         ((10, 22, 'expected a predicate register after `|`, found `WARP_SZ`'),)),
    Case('range_past_end_bare', kernel(".reg .u32 a<4>;\nmov.u32 a4, 1;"), PtxSemanticError,
         ((11, 9, '`a4`' + ' ' + NOT_DECLARED),)),
    Case('bare_register_after_its_scope', kernel("{\n.reg .u32 t;\nmov.u32 t, 1;\n}\nmov.u32 t, 2;"), PtxSemanticError,
         ((14, 9, '`t`' + ' ' + NOT_DECLARED),)),
    Case('warp_sz_declared', kernel(".reg .u32 WARP_SZ;"), PtxSemanticError,
         ((10, 11, '`WARP_SZ` is a predefined constant (PTX ISA §4.5) and cannot be declared'),)),
    Case('warp_sz_destination', kernel("mov.u32 WARP_SZ, %r1;"), PtxSemanticError,
         ((10, 1, 'destination of `mov.u32` cannot be the constant `32`'),)),
    Case('offset_missing_constant', kernel("mov.u64 %rd1, %rd2+;"), PtxSyntaxError,
         ((10, 20, 'expected an integer constant after `%rd2+`, found `;`'),)),
    Case('offset_register_plus_register', kernel("mov.u32 %r1, %r2+%r3;"), PtxSyntaxError,
         ((10, 18, 'expected an integer constant after `%r2+`, found `%r3`'),)),
    Case('offset_destination', kernel("add.u32 %r1+1, %r2, %r3;"), PtxSemanticError,
         ((10, 9, 'operand `%r1+1` of `add.u32` cannot be an expression `+`; only a source value can be'),)),
    Case('offset_in_vector', kernel("mov.b64 %rd1, {%r1+1, %r2};"), PtxSyntaxError,
         ((10, 16, '`%r1+1`: an expression `+` cannot be an element of a `{}` list'),)),
    Case('constant_trailing_star', kernel("mov.u32 %r1, 2*;"), PtxSyntaxError,
         ((10, 16, 'expected an integer constant after `*`, found `;`'),)),
    Case('vector_decl_v8', kernel(".reg .v8 .u32 v;"), PtxSemanticError,
         ((10, 15, '`v`: vector declarations take .v2 or .v4, not .v8'),)),
    Case('vector_decl_pred', kernel(".reg .v4 .pred v;"), PtxSemanticError,
         ((10, 16, '`v`: .pred variables are scalar; a vector of predicates cannot be declared'),)),
    Case('vector_decl_too_wide', kernel(".reg .v4 .f64 v;"), PtxSemanticError,
         ((10, 15, '`v`: .v4 .f64 is 256 bits; a vector holds at most 128 bits'),)),
    Case('vector_selector_past_width', kernel(".reg .v2 .u32 v;\nmov.b32 %r1, v.z;"), PtxSemanticError,
         ((11, 14, 'register `v` is not a vector with a `.z` element'),)),
    Case('selector_on_scalar', kernel(".reg .u32 s;\nmov.b32 %r1, s.x;"), PtxSemanticError,
         ((11, 14, 'register `s` is not a vector with a `.x` element'),)),
    Case('vector_whole_in_add', kernel(".reg .v2 .u32 v;\nadd.u32 %r1, v, 1;"), PtxSemanticError,
         ((11, 14, 'vector register `v` (.v2 .u32) cannot be used whole by `add.u32`; name an element such as `v.x`'),)),
    Case('vector_width_mismatch', kernel(".reg .v4 .u32 v;\nld.global.v2.u32 v, [%rd1];"), PtxSemanticError,
         ((11, 18, '`ld.global.v2.u32` needs a 2-element vector, `v` is .v4 .u32'),)),
    Case('vector_element_type', kernel(".reg .v4 .u16 v;\nld.global.v4.u32 v, [%rd1];"), PtxSemanticError,
         ((11, 18, '`v` is .v4 .u16, but `ld.global.v4.u32` needs .u32 (32-bit) elements'),)),
    Case('v8_before_ptx_8_8', kernel(f"ld.global.v8.u32 {{{R8}}}, [%rd1];"), PtxSemanticError,
         ((10, 1, '`ld.global.v8.u32`: .v8 loads and stores need PTX ISA 8.8 or later, this module is .version 8.0'),)),
    Case('v8_shared', V88 + f"ld.shared.v8.u32 {{{R8}}}, [%rd1];\n}}\n", PtxSemanticError,
         ((10, 1, '`ld.shared.v8.u32`: .v8 loads and stores need the .global state space'),)),
    Case('v8_seven_elements', V88 + "ld.global.v8.u32 {%r0, %r1, %r2, %r3, %r0, %r1, %r2}, [%rd1];\n}\n", PtxSemanticError,
         ((10, 18, '`ld.global.v8.u32` needs a 8-element vector destination, found 7 elements'),)),
    Case('reg_param_undeclared_use', HEADER + ".func (.reg .u32 out) f(.reg .u32 in)\n{\nadd.u32 out, inn, 1;\nret;\n}\n", PtxSemanticError,
         ((6, 14, '`inn`' + ' ' + NOT_DECLARED),)),
]
