"""Every construct real toolchains emit, in one hand-written file that ptxas accepts."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

import ptxvm
from ptxvm.frontend.printer import format_module
from ptxvm.ir import nodes as ir
from ptxvm.ir.types import ScalarType, StateSpace

SINK = Path(__file__).parents[1] / "ptx" / "syntax_kitchen_sink.ptx"


@pytest.fixture(scope="module")
def module() -> ir.Module:
    return ptxvm.parse(SINK.read_text(), filename=str(SINK))


def _instr(module: ir.Module, full: str) -> ir.Instruction:
    k = module.kernels["kitchen_sink"]
    return next(i for i in k.body.instructions() if i.full_opcode == full)


def test_header(module: ir.Module) -> None:
    assert module.version == "9.0"
    assert module.target == ("sm_80", "debug")
    assert module.address_size == 64
    assert module.sm == 80


def test_functions_and_linkage(module: ir.Module) -> None:
    f = module.functions
    assert f["vprintf"].body is None and f["vprintf"].linkage is ir.Linkage.EXTERN
    assert [r.name for r in f["vprintf"].returns] == ["func_retval0"]
    assert f["_Z4twicei"].linkage is ir.Linkage.WEAK
    assert f["_Z4noopv"].noreturn
    assert f["regabi"].params[0].space is StateSpace.REG
    assert set(module.kernels) == {"kitchen_sink", "empty"}
    k = module.kernels["kitchen_sink"]
    assert k.directive("maxntid").values == (256, 1, 1)
    assert k.directive("minnctapersm").values == (2,)


def test_params(module: ir.Module) -> None:
    p0, p1, p2 = module.kernels["kitchen_sink"].params
    assert (p0.type, p0.ptr_space, p0.ptr_align) == (ScalarType.U64, StateSpace.GLOBAL, 1)
    assert (p1.type, p1.align, p1.array) == (ScalarType.B8, 8, (16,))
    assert p2.type is ScalarType.U32


def test_globals_and_initialisers(module: ir.Module) -> None:
    g = module.globals
    assert g["$str"].init == ir.InitList(tuple(ir.Immediate(c) for c in b"hello\0"))
    vt = g["vtable"].init.elements
    assert vt[2] == ir.SymbolRef("_Z4twicei")
    assert vt[3] == ir.SymbolRef("$str", 2, generic=True)
    coeffs = g["coeffs"]
    assert coeffs.array == (2, 2)
    assert coeffs.init.elements[0].elements[0] == ir.Immediate(0x3F800000, ir.ImmKind.F32)
    assert coeffs.init.elements[1].elements[1] == ir.Immediate(-0.25, ir.ImmKind.FLOAT)
    assert g["one"].init == ir.Immediate(0x3FF0000000000000, ir.ImmKind.F64)
    assert g["shared_counter"].linkage is ir.Linkage.COMMON
    assert g["dyn_smem"].linkage is ir.Linkage.EXTERN and g["dyn_smem"].array == (None,)
    assert g["dyn_smem"].size_bytes() is None
    assert g["managed_var"].attributes == (".attribute(.managed)",)
    assert g["vec_global"].vector == 4 and g["vec_global"].size_bytes() == 16


def test_body_declarations(module: ir.Module) -> None:
    body = module.kernels["kitchen_sink"].body
    decls = {s.name: s for s in body.statements if isinstance(s, ir.VarDecl)}
    assert decls["%r"].count == 20 and list(decls["%r"].register_names())[:2] == ["%r0", "%r1"]
    assert decls["__local_depot0"].space is StateSpace.LOCAL
    assert decls["_ZZ12kitchen_sinkE4tile"].space is StateSpace.SHARED
    protos = [s for s in body.statements if isinstance(s, ir.CallPrototype)]
    assert protos[0].name == "prototype_0" and protos[0].params[0].name == "_"
    tables = [s for s in body.statements if isinstance(s, ir.BranchTargets)]
    assert tables[0].targets == ("$L__BB0_1", "$L__BB0_2")


def test_operand_forms(module: ir.Module) -> None:
    ld = _instr(module, "ld.global.v4.f32")
    assert ld.operands[0] == ir.Vector(tuple(ir.Register(f"%f{i}") for i in range(1, 5)))
    assert ld.operands[1] == ir.Address(ir.Register("%rd5"), 16)
    assert _instr(module, "ld.global.nc.f32").operands[1] == ir.Address(ir.Register("%rd5"), -4)
    assert _instr(module, "st.shared.u32").operands[0] == ir.Address(ir.Symbol("_ZZ12kitchen_sinkE4tile"), 8)
    assert _instr(module, "setp.gtu.f32").operands[0] == ir.Pair(ir.Register("%p2"), ir.Register("%p3"))
    setp = _instr(module, "setp.lt.and.s32")
    assert sorted(v for _, v in setp.mods) == ["and", "lt"] and setp.types == (ScalarType.S32,)
    assert setp.operands[3] == ir.Register("%p2")
    shfl = _instr(module, "shfl.sync.down.b32")
    assert shfl.operands[0] == ir.Pair(ir.Register("%r8"), ir.Register("%p1"))
    assert shfl.operands[-1] == ir.Immediate(-1)
    assert _instr(module, "mov.u32").operands[1] == ir.Register("%tid", "x")
    bra = _instr(module, "bra")
    assert bra.guard == ir.Guard(ir.Register("%p1"), negated=True)
    assert _instr(module, "mov.b32").operands[1] in (ir.Immediate(0x7FFFFFFF), ir.Immediate(-1))
    call = next(i for i in module.kernels["kitchen_sink"].body.instructions()
                if i.opcode == "call" and isinstance(i.operands[1], ir.Register))
    assert call.operands[-1] == ir.Symbol("prototype_0")
    assert call.operands[0] == ir.ParenList((ir.Symbol("retval0"),))


def test_debug_and_location_directives(module: ir.Module) -> None:
    files = [i for i in module.items if isinstance(i, ir.FileDirective)]
    assert files[0] == ir.FileDirective(1, "/src/kernel.cu", (1700000000, 1234))
    locs = [s for s in module.kernels["kitchen_sink"].body.walk() if isinstance(s, ir.Loc)]
    assert locs[-1].extra == "function_name $L__info_string0, inlined_at 1 20 3"
    assert any(isinstance(i, ir.Section) and i.name == ".debug_str" for i in module.items)
    pragmas = [s for s in module.kernels["kitchen_sink"].body.walk() if isinstance(s, ir.Pragma)]
    assert pragmas[0].text == "nounroll"


def test_round_trip(module: ir.Module) -> None:
    assert ptxvm.parse(format_module(module)) == module


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="ptxas is not installed")
def test_ptxas_accepts_source_and_printed(module: ir.Module, tmp_path: Path) -> None:
    printed = tmp_path / "printed.ptx"
    printed.write_text(format_module(module))
    for path in (SINK, printed):
        proc = subprocess.run(["ptxas", "-arch=sm_80", str(path), "-o", str(tmp_path / "o.cubin")],
                              capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
