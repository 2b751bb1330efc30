"""Operand and declaration forms of issue 14 item 1: IR shape, round trip, runs on both executors.

Expected values are numpy models written from the PTX ISA's definitions (shfl.sync.up: lane i
reads lane i-k, keeping its own value when i-k is below the warp; WARP_SZ is 32).
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

import ptxvm
from ptxvm.frontend.parser import parse
from ptxvm.frontend.printer import format_module
from ptxvm.ir.nodes import Immediate, Offset, Pair, Register, Symbol

FORMS = Path(__file__).parents[1] / "ptx" / "forms"
HAVE_JIT = importlib.util.find_spec("llvmlite") is not None
EXECUTORS = ["interp"] + (["cpu"] if HAVE_JIT else [])
HEAD = ".version 8.0\n.target sm_80\n.address_size 64\n"


def _ins(text: str):
    m = parse(HEAD + ".visible .entry k(.param .u64 out)\n{\n.reg .u32 %r<4>;\n.reg .u64 %rd<4>;\n"
              + text + "\nret;\n}\n")
    return [i for i in m.kernels["k"].body.instructions()]


def test_bare_registers_pairs_and_guards_are_registers() -> None:
    ins = _ins("{\n.reg .u32 r0;\n.reg .pred p;\nshfl.sync.up.b32 r0|p, %r1, 1, 0, -1;\n"
               "@p add.u32 r0, r0, %r1;\n}")
    assert ins[0].operands[0] == Pair(Register("r0"), Register("p"))
    assert ins[1].guard.register == Register("p") and ins[1].operands[:2] == (Register("r0"), Register("r0"))


def test_range_members_bind_and_shadowing_follows_scopes() -> None:
    ins = _ins(".reg .u32 a<4>;\nmov.u32 a3, 1;\n{\n.reg .u32 a1;\nmov.u32 a1, 2;\n}\n"
               "mov.u32 a1, 3;")
    assert [i.operands[0] for i in ins[:3]] == [Register("a3"), Register("a1"), Register("a1")]


def test_a_name_declared_in_a_closed_scope_is_not_a_register_after_it() -> None:
    with pytest.raises(ptxvm.PtxError) as e:
        _ins("{\n.reg .u32 t;\nmov.u32 t, 1;\n}\nmov.u32 %r1, t;")
    assert "`t` is not declared" in str(e.value) and "<string>:12:14:" in str(e.value)


def test_warp_sz_and_constant_expressions_are_folded() -> None:
    ins = _ins("mov.u32 %r1, WARP_SZ;\nmov.u32 %r1, WARP_SZ-1;\nmov.u32 %r1, 2*WARP_SZ+1;\n"
               "ld.u32 %r1, [%rd1+4*2];\nld.u32 %r1, [%rd1+8-4];")
    assert [i.operands[1] for i in ins[:3]] == [Immediate(32), Immediate(31), Immediate(65)]
    assert ins[3].operands[1].offset == 8 and ins[4].operands[1].offset == 4


def test_offset_values() -> None:
    m = parse((FORMS / "offset_values.ptx").read_text())
    ins = list(m.kernels["offs"].body.instructions())
    assert ins[0].operands[1] == Offset(Symbol("arr"), 8)
    assert ins[2].operands[1] == Offset(Register("r"), 1)
    assert ins[3].operands[1] == Offset(Register("%rd1"), 16)


def test_vector_register_elements_normalise_rgba() -> None:
    m = parse((FORMS / "vector_regs.ptx").read_text())
    ins = list(m.kernels["vec"].body.instructions())
    add = next(i for i in ins if i.opcode == "add")
    assert add.operands == (Register("v", "x"), Register("v", "w"), Register("t"))


def _oracle_accepted() -> list[str]:
    data = json.loads((Path(__file__).parents[1] / "data" / "ptxas_forms.json").read_text())
    return [c["ptx"] for c in data["cases"]
            if c["ptxas"] == "accept" and c["name"] not in data["disagreements"]]


def test_round_trip_of_every_new_form() -> None:
    texts = _oracle_accepted() + [p.read_text() for p in sorted(FORMS.glob("*.ptx"))]
    assert len(texts) > 250
    for text in texts:
        m = parse(text)
        again = parse(format_module(m))
        assert again == m, format_module(m)


@pytest.mark.parametrize("device", EXECUTORS)
def test_cub_inline_scan_runs(device: str) -> None:
    k = ptxvm.Module((FORMS / "cub_scan.ptx").read_text(), "cub_scan.ptx")["scan"]
    x = np.arange(1, 65, dtype=np.uint32) * 3
    out = np.zeros(64, dtype=np.uint32)
    k(1, 64, (x, out), device=device)
    want = np.concatenate([np.cumsum(x[:32]), np.cumsum(x[32:])]).astype(np.uint32)
    np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("device", EXECUTORS)
def test_bare_names_kernel_runs(device: str) -> None:
    k = ptxvm.Module((FORMS / "bare_names.ptx").read_text(), "bare_names.ptx")["forms"]
    buf = (np.arange(16, dtype=np.uint32) * 7 + 5)
    want = buf.copy()
    for i in range(2):
        want[4 * i + 2] = 2 * buf[4 * i] + 96
        want[4 * i + 3] = 33 * buf[4 * i + 1]
    k(1, 4, (buf,), device=device)
    np.testing.assert_array_equal(buf, want)


@pytest.mark.parametrize("device", EXECUTORS)
def test_wide_register_loads_run(device: str) -> None:
    k = ptxvm.Module((FORMS / "wide_loads.ptx").read_text(), "wide_loads.ptx")["widen"]
    buf = np.array([200, 77, 3, 100, 0, 0, 0, 0], dtype=np.uint8)
    want = buf.copy()
    want[4] = (200 + 100) & 0xFF            # a = x0 + x3 in a .u16, stored as .u8
    want[5] = 77
    want[6:8] = np.array([77 + 1000], dtype="<u2").view(np.uint8)
    k(1, 1, (buf,), device=device)
    np.testing.assert_array_equal(buf, want)


@pytest.mark.parametrize("device", EXECUTORS)
def test_vector_registers_kernel_runs(device: str) -> None:
    # v = (1, 2, 3, 4); t = v.w = 4; v.r (= v.x) = v.a + t = 8; the whole vector stored back.
    k = ptxvm.Module((FORMS / "vector_regs.ptx").read_text(), "vector_regs.ptx")["vec"]
    buf = np.array([1, 2, 3, 4], dtype=np.uint32)
    k(1, 1, (buf,), device=device)
    assert buf.tolist() == [8, 2, 3, 4]


@pytest.mark.parametrize("device", EXECUTORS)
def test_offset_values_kernel_runs(device: str) -> None:
    # `st.u64 [r], r + 1`: the buffer's own address plus 1; `%rd1+0x10` with %rd1 = arr+8.
    m = ptxvm.Module((FORMS / "offset_values.ptx").read_text(), "offset_values.ptx")
    buf = ptxvm.to_device(np.zeros(2, dtype=np.uint64))
    m["offs"](1, 1, (buf,), device=device)
    assert buf.copy_to_host().tolist() == [buf.ptr + 1, m.get_global("arr").ptr + 24]
