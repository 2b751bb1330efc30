"""Issue 14's operand forms on the AMD targets: every kernel of tests/models/operand_forms.py
translates for gfx90a, gfx1030 and gfx1100; on the ISA emulator (slow, skipped without it) the
translated kernels give the hand-worked results the CPU executors give."""

from __future__ import annotations

import numpy as np
import pytest

import ptxvm
from ptxvm.driver.executors import emu

from models import operand_forms as F

TARGETS = ["gfx90a", "gfx1030", "gfx1100"]
MISSING = emu.why_unavailable()


@pytest.mark.lld
@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("case", [*F.CASES, F.B128], ids=[c.name for c in (*F.CASES, F.B128)])
def test_operand_form_translates(case: F.Case, target: str) -> None:
    obj = ptxvm.compile(case.ptx, target=target)
    assert obj.kernels == ["k"]


# gfx1100 is the emulator's RDNA target, gfx90a its CDNA one (gfx1030 has no tables).
@pytest.mark.slow
@pytest.mark.lld
@pytest.mark.skipif(MISSING is not None, reason=f"emu executors unavailable: {MISSING}")
@pytest.mark.parametrize("target", ["gfx90a", "gfx1100"])
@pytest.mark.parametrize("case", [*F.CASES, F.B128], ids=[c.name for c in (*F.CASES, F.B128)])
def test_operand_form_on_the_emulator(case: F.Case, target: str) -> None:
    try:
        got = F.run(case, f"emu:{target}")
    except emu.EmulatorLimit as e:
        if e.reason not in ("mubuf_scratch", "aperture"):    # gfx90a's .local, generic LDS pointers:
            raise                                             # documented emulator limits
        pytest.skip(f"emulator limit {e.reason}: {str(e)[:160]}")
    np.testing.assert_array_equal(got, case.expected())
