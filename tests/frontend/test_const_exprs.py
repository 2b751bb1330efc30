"""Integer constant expressions (PTX ISA §4.6.2) fold to the value C gives them, in operands
and in address offsets (`[a+(-4)]`, `[a+- 4]`, `[a+(1<<4)]`, all taken by ptxas 13.0; see
tests/data/ptxas_forms.json addr/* and constexpr/*). Expected values are C's, by hand."""

from __future__ import annotations

import pytest

from ptxvm.errors import PtxSyntaxError
from ptxvm.frontend.parser import parse
from ptxvm.ir.nodes import Address, Immediate, Offset

HEAD = ".version 8.5\n.target sm_80\n.address_size 64\n.global .u32 arr[16];\n"


def _operands(body: str):
    m = parse(HEAD + ".visible .entry k()\n{\n.reg .u32 %r<4>;\n.reg .u64 %rd<4>;\n" + body + "\nret;\n}\n",
              "c.ptx")
    return next(m.functions["k"].body.instructions()).operands


@pytest.mark.parametrize("expr, value", [
    ("2+(3*4)", 14), ("1<<4", 16), ("256>>4", 16), ("-(4)", -4), ("- 4", -4), ("~0", -1),
    ("7/2", 3), ("-7/2", -3), ("7/-2", -3), ("12&10^1", 9), ("2+(1|4)", 7), ("2*3-4", 2),
    ("2-4*3", -10), ("1-1<<2", 0), ("(1+2)*(3+4)", 21), ("(!0)+(!5)", 1), ("WARP_SZ*2", 64),
    ("0x10-1", 15), ("1<<63", -(1 << 63)),
])
def test_operand_value(expr: str, value: int) -> None:
    (_, src) = _operands(f"mov.u64 %rd1, {expr};")
    assert src == Immediate(value) or (isinstance(src, Immediate) and src.value == value)


@pytest.mark.parametrize("off, value", [
    ("+-4", -4), ("+(-4)", -4), ("+- 4", -4), ("+(4-8)", -4), ("+(1<<4)", 16), ("+~3", -4),
    ("+(-4)*2", -8), ("+-0x10", -16), ("+4294967296", 1 << 32),
])
def test_address_offset(off: str, value: int) -> None:
    (_, addr) = _operands(f"ld.global.u32 %r1, [%rd1{off}];")
    assert isinstance(addr, Address) and addr.offset == value
    (_, addr) = _operands(f"ld.global.u32 %r1, [arr{off}];")
    assert isinstance(addr, Address) and addr.offset == value


def test_value_offset() -> None:
    (_, v) = _operands("mov.u64 %rd1, arr+(-4)*2;")
    assert isinstance(v, Offset) and v.offset == -8


@pytest.mark.parametrize("bad", ["[%rd1-4]", "[arr-4]", "[%rd1 - 4]", "[%rd1--4]"])
def test_minus_after_base_refused(bad: str) -> None:
    with pytest.raises(PtxSyntaxError) as info:
        _operands(f"ld.global.u32 %r1, {bad};")
    assert info.value.diagnostics[0].line == 9


def test_division_by_zero_located() -> None:
    with pytest.raises(PtxSyntaxError, match="division by zero"):
        _operands("mov.u32 %r1, 4/0;")
