"""Bad tensor-core input is a clear, located error naming the instruction (never a traceback from
inside ptxvm): fragments of the wrong register count or type, combinations the ISA does not
define, an unaligned or non-shared ldmatrix row address, and warp-collective instructions that
not all 32 lanes of a warp execute together (undefined behaviour, PTX ISA §9.7.14)."""

from __future__ import annotations

import numpy as np
import pytest

import ptxvm

from models.matrix_harness import HEADER, register_kernel

# The load-time errors are the same on both executors; the JIT's run-time traps have their own
# wording (one message for the rules a compiled warp checks together, reports.matrix_trap).
EXECUTORS = ("interp", "cpu")
JIT_TRAP = "is warp-collective .*not all 32 lanes of the warp executed it together"


def _fault(executor: str, interp_message: str) -> str:
    return interp_message if executor == "interp" else JIT_TRAP

MMA = "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"
IO = [("a", 4, "b32"), ("b", 2, "b32"), ("c", 4, "f32")]


def _arrays(threads=32, n=(4, 2, 4, 4)):
    return tuple(np.zeros(threads * k, np.uint32) for k in n)


def _launch(text, args, executor, threads=32):
    ptxvm.Module(text)["k"](1, threads, args, device=executor)


def _located(e: ptxvm.PtxError, opcode: str) -> None:
    assert e.line and e.column, str(e)
    assert opcode in str(e), str(e)


@pytest.mark.parametrize("executor", EXECUTORS)
def test_wrong_register_count_is_a_located_error(executor):
    text = register_kernel(f"{MMA} {{%d0, %d1, %d2, %d3}}, {{%a0, %a1, %a2}}, {{%b0, %b1}}, {{%c0, %c1, %c2, %c3}};",
                           [("a", 3, "b32"), ("b", 2, "b32"), ("c", 4, "f32")], [("d", 4, "f32")])
    with pytest.raises(ptxvm.PtxSemanticError, match="takes 4 registers for the A fragment, not 3") as e:
        _launch(text, _arrays(n=(3, 2, 4, 4)), executor)
    _located(e.value, "mma.sync")


@pytest.mark.parametrize("executor", EXECUTORS)
def test_wrong_register_type_is_a_located_error(executor):
    text = register_kernel(f"{MMA} {{%d0, %d1, %d2, %d3}}, {{%a0, %a1, %a2, %a3}}, {{%b0, %b1}}, {{%c0, %c1, %c2, %c3}};",
                           IO, [("d", 4, "f64")])
    with pytest.raises(ptxvm.PtxSemanticError, match="32-bit registers for the D fragment") as e:
        _launch(text, _arrays()[:3] + (np.zeros(128, np.uint64),), executor)
    _located(e.value, "mma.sync")


@pytest.mark.parametrize("executor", EXECUTORS)
@pytest.mark.parametrize("op,why", [
    ("mma.sync.aligned.m16n8k16.row.col.f32.s8.s8.f32", "does not take"),
    ("mma.sync.aligned.m16n8k16.col.row.f32.f16.f16.f32", "takes the layouts .row.col only"),
    ("mma.sync.aligned.m16n8k256.row.col.s32.b1.b1.s32", "needs .xor.popc or .and.popc"),
])
def test_combinations_the_isa_does_not_define(executor, op, why):
    text = register_kernel(f"{op} {{%d0, %d1, %d2, %d3}}, {{%a0, %a1, %a2, %a3}}, {{%b0, %b1}}, {{%c0, %c1, %c2, %c3}};",
                           IO, [("d", 4, "f32")])
    with pytest.raises(ptxvm.PtxError, match=why) as e:
        _launch(text, _arrays(), executor)
    _located(e.value, "mma.sync")


def _mma_text(guard: str = "") -> str:
    return register_kernel("setp.lt.u32 %p, %gid, 16;\n" + guard +
                           f"{MMA} {{%d0, %d1, %d2, %d3}}, {{%a0, %a1, %a2, %a3}}, {{%b0, %b1}}, {{%c0, %c1, %c2, %c3}};",
                           IO, [("d", 4, "f32")], decls="  .reg .pred %p;")


@pytest.mark.parametrize("executor", EXECUTORS)
def test_a_guarded_mma_that_half_the_warp_skips_faults(executor):
    with pytest.raises(ptxvm.KernelFault, match=_fault(executor, "only 16 of the 32 lanes")) as e:
        _launch(_mma_text("@%p "), _arrays(), executor)
    _located(e.value, "mma.sync")


@pytest.mark.parametrize("executor", EXECUTORS)
def test_a_partial_last_warp_faults(executor):
    with pytest.raises(ptxvm.KernelFault, match=_fault(executor, "only 16 of the 32 lanes")):
        _launch(_mma_text(), _arrays(48), executor, threads=48)


def _ldmatrix_text(offset_expr: str, generic: bool) -> str:
    sp = "" if generic else ".shared"
    return "\n".join([HEADER, ".visible .entry k(.param .u64 pout)", "{", ".shared .align 16 .b8 tile[512];",
                      "  .reg .b32 %r0, %t; .reg .b64 %a, %s, %g;", "  mov.u32 %t, %tid.x;",
                      f"  mul.wide.u32 %a, %t, {offset_expr};",
                      "  mov.u64 %s, tile;" if not generic else "  ld.param.u64 %s, [pout];",
                      "  add.s64 %a, %a, %s;",
                      f"  ldmatrix.sync.aligned.m8n8.x1{sp}.b16 {{%r0}}, [%a];", "  ret;", "}"]) + "\n"


@pytest.mark.parametrize("executor", EXECUTORS)
def test_unaligned_ldmatrix_row_address_faults(executor):
    with pytest.raises(ptxvm.KernelFault, match=_fault(executor, "is not 16-byte aligned")) as e:
        _launch(_ldmatrix_text("24", False), (np.zeros(4, np.uint8),), executor)
    _located(e.value, "ldmatrix")
    assert "thread (1, 0, 0)" in str(e.value)          # the first lane whose row address is bad


@pytest.mark.parametrize("executor", EXECUTORS)
def test_ldmatrix_generic_address_outside_shared_faults(executor):
    with pytest.raises(ptxvm.KernelFault, match=_fault(executor, "not in the .shared window")):
        _launch(_ldmatrix_text("16", True), (np.zeros(512, np.uint8),), executor)


@pytest.mark.parametrize("executor", EXECUTORS)
def test_wmma_load_with_a_per_lane_address_faults(executor):
    text = "\n".join([HEADER, ".visible .entry k(.param .u64 p)", "{", "  .reg .b32 %a<8>, %t; .reg .b64 %x, %o;",
                      "  ld.param.u64 %x, [p];", "  mov.u32 %t, %tid.x;", "  mul.wide.u32 %o, %t, 32;",
                      "  add.s64 %x, %x, %o;",
                      "  wmma.load.a.sync.aligned.row.m16n16k16.global.f16 {%a0, %a1, %a2, %a3, %a4, %a5, %a6, %a7}, [%x];",
                      "  ret;", "}"]) + "\n"
    with pytest.raises(ptxvm.KernelFault, match=_fault(executor, "lane 1's address differs from lane 0's")):
        _launch(text, (np.zeros(2048, np.uint8),), executor)


@pytest.mark.parametrize("executor", EXECUTORS)
def test_float_satfinite_is_refused_by_name(executor):
    op = "mma.sync.aligned.m16n8k16.row.col.satfinite.f32.f16.f16.f32"
    text = register_kernel(f"{op} {{%d0, %d1, %d2, %d3}}, {{%a0, %a1, %a2, %a3}}, {{%b0, %b1}}, {{%c0, %c1, %c2, %c3}};",
                           IO, [("d", 4, "f32")])
    with pytest.raises(ptxvm.UnsupportedError, match="satfinite") as e:
        _launch(text, _arrays(), executor)
    _located(e.value, "mma.sync")
