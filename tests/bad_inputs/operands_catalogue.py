"""Malformed uses of issue 14's operand semantics (vector registers used whole or by element,
address expressions as values), with the exact located diagnostics ptxvm gives; run by
tests/frontend/test_bad_inputs_operands.py. ptxas 13 refuses each, except where ``notes`` says
otherwise. Layout of kernel(body): the body starts on line 10."""

from __future__ import annotations

from ptxvm import PtxSemanticError

from .catalogue import HEADER, Case, kernel

ADDR_EXPR = "is an address expression, an integer, but"
# a bare variable name as a value outside mov/cvta/mapa/getctarank (ptxvm/ir/symbol_values.py)
BARE = ("names a variable: only `mov`, `cvta` (not `cvta.to`), `mapa` and `getctarank` take a bare "
        "name as a value (ptxas: 'must be register'); load its address into a register with `mov` first")
READ_ONLY = "input parameters are read-only (ptxas: 'Illegal to write to function input parameter')"

CASES = [
    Case("vector_swizzle", kernel(".reg .v4 .u32 v;\nmov.u32 %r1, v.xy;"), PtxSemanticError,
         ((11, 14, "register `v` is not a vector with a `.xy` element"),),
         notes="ptxas: Unimplemented feature: vector swizzle"),
    Case("vector_swizzle_destination", kernel(".reg .v4 .u32 v;\nmov.u32 v.xyzw, %r1;"), PtxSemanticError,
         ((11, 9, "register `v` is not a vector with a `.xyzw` element"),)),
    Case("vector_whole_mov_smaller", kernel(".reg .v2 .u32 w;\nmov.b32 %r1, w;"), PtxSemanticError,
         ((11, 14, "vector register `w` (.v2 .u32) cannot be used whole by `mov.b32`; name an element such as `w.x`"),)),
    Case("vector_whole_mov_typed", kernel(".reg .v2 .u32 w;\nmov.u64 %rd1, w;"), PtxSemanticError,
         ((11, 15, "vector register `w` (.v2 .u32) cannot be used whole by `mov.u64`; name an element such as `w.x`"),)),
    Case("vector_whole_mov_wider", kernel(".reg .v2 .u16 w;\nmov.b64 %rd1, w;"), PtxSemanticError,
         ((11, 15, "vector register `w` (.v2 .u16) cannot be used whole by `mov.b64`; name an element such as `w.x`"),)),
    Case("vector_element_for_vector", kernel(".reg .v2 .u32 w;\nst.global.v2.u32 [%rd1], w.x;"), PtxSemanticError,
         ((11, 26, "`st.global.v2.u32` needs a 2-element vector source, found `w.x`"),)),
    Case("vector_whole_arithmetic_destination", kernel(".reg .v2 .u32 w;\nadd.u32 w, %r1, 1;"), PtxSemanticError,
         ((11, 9, "vector register `w` (.v2 .u32) cannot be used whole by `add.u32`; name an element such as `w.x`"),)),
    Case("offset_of_float_register", kernel("mov.f32 %f1, %f2+1;"), PtxSemanticError,
         ((10, 14, f"`%f2+1` {ADDR_EXPR} `mov.f32` needs a .f32 (32-bit) operand here"),),
         notes="ptxas accepts it in some kernels and crashes (SIGSEGV) in others: no defined value"),
    Case("offset_in_float_compare", kernel("setp.eq.f32 %p1, %f2+1, %f1;"), PtxSemanticError,
         ((10, 18, f"`%f2+1` {ADDR_EXPR} `setp.eq.f32` needs a .f32 (32-bit) operand here"),),
         notes="ptxas crashes (SIGSEGV) on it when the result is used"),
    Case("offset_of_predicate", kernel("and.pred %p1, %p0+1, %p1;"), PtxSemanticError,
         ((10, 15, f"`%p0+1` {ADDR_EXPR} `and.pred` needs a .pred operand here"),),
         notes="ptxas accepts it when the result is dead and runs out of memory when it is used"),
    Case("offset_of_symbol_into_float", kernel("mov.f32 %f1, k_p0+8;"), PtxSemanticError,
         ((10, 14, f"`k_p0+8` {ADDR_EXPR} `mov.f32` needs a .f32 (32-bit) operand here"),)),
    Case("variable_in_add", kernel("add.u64 %rd1, k_p0, 8;"), PtxSemanticError,
         ((10, 15, f"operand `k_p0` of `add.u64` {BARE}"),)),
    Case("variable_in_setp", kernel("setp.eq.u64 %p1, %rd1, k_p0;"), PtxSemanticError,
         ((10, 24, f"operand `k_p0` of `setp.eq.u64` {BARE}"),)),
    Case("variable_stored_as_value", kernel("st.global.u64 [%rd1], k_p0;"), PtxSemanticError,
         ((10, 23, f"operand `k_p0` of `st.global.u64` {BARE}"),)),
    Case("variable_in_cvta_to", kernel("cvta.to.global.u64 %rd1, k_p0;"), PtxSemanticError,
         ((10, 26, f"operand `k_p0` of `cvta.to.global.u64` {BARE}"),)),
    Case("param_address_into_float", kernel("mov.f32 %f1, k_p0;"), PtxSemanticError,
         ((10, 14, "`k_p0` is the address of a variable, an integer, but `mov.f32` needs a .f32 (32-bit) "
                   "operand here"),)),
    Case("store_into_kernel_param", kernel("st.param.u64 [k_p0], %rd1;"), PtxSemanticError,
         ((10, 15, f"`st.param.u64` writes `k_p0`, an input parameter of kernel `k`: {READ_ONLY}"),)),
    Case("store_into_kernel_param_offset", kernel("st.param.u32 [k_p0+4], %r1;"), PtxSemanticError,
         ((10, 15, f"`st.param.u32` writes `k_p0`, an input parameter of kernel `k`: {READ_ONLY}"),)),
    Case("store_into_func_input", HEADER + ".func f(.param .b32 a)\n{\nst.param.b32 [a], 1;\nret;\n}\n",
         PtxSemanticError, ((6, 15, f"`st.param.b32` writes `a`, an input parameter of function `f`: {READ_ONLY}"),)),
    Case("integer_for_f32", kernel("add.f32 %f1, %f2, 1;"), PtxSemanticError,
         ((10, 19, "`1` is an integer constant, but `add.f32` needs a .f32 operand here: write a floating-point "
                   "constant (`1.0` or `0f3F800000`)"),)),
    Case("warp_sz_for_f32", kernel("mov.f32 %f1, WARP_SZ;"), PtxSemanticError,
         ((10, 1, "`32` is an integer constant, but `mov.f32` needs a .f32 operand here: write a floating-point "
                  "constant (`32.0` or `0f42000000`)"),)),
]
