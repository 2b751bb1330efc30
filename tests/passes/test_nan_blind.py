"""The NaN-blind registers pass: one rule (passes/nan_blind.py) for where an f32 result's NaN
canonicalisation cannot be observed, used by the host JIT and the AMD targets. The golden summary
(tests/golden/passes/nan_blind.txt) was written by hand from the comments of the PTX beside it;
the per-opcode facts are the PTX ISA's (§9.7.3: f32 arithmetic returns the canonical NaN)."""

from __future__ import annotations

from pathlib import Path

import ptxvm
from ptxvm.isa import OpClass, modifier_group, nan_blind_sources, opcodes_in, typeset
from ptxvm.passes import NanBlindPass, NanBlindRegisters, run_pipeline

GOLDEN = Path(__file__).resolve().parent.parent / "golden" / "passes"


def test_summary_matches_the_hand_written_golden() -> None:
    module = ptxvm.load(GOLDEN / "nan_blind.ptx", cache=False)
    text = run_pipeline(module, [NanBlindPass()])["nan-blind"].describe()
    assert text == (GOLDEN / "nan_blind.txt").read_text()


def test_queries_on_the_golden_module() -> None:
    module = ptxvm.load(GOLDEN / "nan_blind.ptx", cache=False)
    analysis = run_pipeline(module, [NanBlindPass()])["nan-blind"]
    assert isinstance(analysis, NanBlindRegisters)
    assert analysis.of("h") == {"%f1", "%f2", "%f3"}
    assert analysis.of("no_such_function") == frozenset()


def test_the_class_and_its_sources_come_from_the_table() -> None:
    assert opcodes_in(OpClass.NAN_BLIND) == {"add", "sub", "mul", "fma", "mad", "div", "setp"}
    # add d, a, b / fma d, a, b, c / setp p|q, a, b, c:pred (c is a predicate, not an f32)
    assert nan_blind_sources("add") == (1, 2)
    assert nan_blind_sources("fma") == (1, 2, 3)
    assert nan_blind_sources("setp") == (1, 2)
    assert nan_blind_sources("sqrt") == ()


def test_pure_class_and_groups_from_the_table() -> None:
    # The host JIT's former code set of side-effect-free instructions, now a table class.
    assert opcodes_in(OpClass.PURE) == set(
        "add sub mul mad mul24 mad24 fma and or xor not cnot shl shr mov cvt cvta setp selp set slct "
        "neg abs min max popc clz brev bfe bfi prmt sad copysign testp lop3 shf cvt.pack".split())
    assert modifier_group("rnd") == ("rn", "rz", "rm", "rp")
    assert modifier_group("irnd") == ("rni", "rzi", "rmi", "rpi")
    assert typeset("half") == ("f16", "f16x2", "bf16", "bf16x2")
