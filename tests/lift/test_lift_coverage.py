"""Single source of truth: every opcode `isa/instructions.toml` marks supported has an
interpreter implementation and an LLVM lowering (DESIGN.md, "Single sources of truth")."""

from __future__ import annotations

import numpy as np
import pytest

import ptxvm
from ptxvm import isa
from ptxvm.interp.ops import load_all
from ptxvm.isa import Status
from ptxvm.lift.ops import LOWERINGS

# Table entries that are syntax, not instructions: `{ }` scopes and `@p` guards, lowered structurally.
SYNTAX = {"{}", "@"}


def _supported() -> list[str]:
    return sorted(k for k, spec in isa.TABLE().ops.items() if spec.status is Status.SUPPORTED and k not in SYNTAX)


@pytest.mark.parametrize("opcode", _supported())
def test_supported_opcode_is_executed_and_lowered(opcode: str) -> None:
    assert opcode in load_all(), f"{opcode}: supported in the table but the interpreter has no implementation"
    assert opcode in LOWERINGS, f"{opcode}: supported in the table but the lifter has no lowering"


HEAD = ".version 8.0\n.target sm_80\n.address_size 64\n"
SLCT_BRX = HEAD + """.visible .entry k(.param .u64 p){
.reg .b32 %r<6>; .reg .b64 %rd<4>; .reg .f32 %f<2>;
ld.param.u64 %rd1, [p];
mov.u32 %r1, %tid.x;
mul.wide.u32 %rd2, %r1, 4;
add.s64 %rd3, %rd1, %rd2;
ld.global.f32 %f1, [%rd3];
slct.ftz.u32.f32 %r2, 10, 20, %f1;
rem.u32 %r3, %r1, 3;
$T: .branchtargets $A, $B, $C;
brx.idx %r3, $T;
$A: add.u32 %r2, %r2, 100; bra $D;
$B: add.u32 %r2, %r2, 200; bra $D;
$C: add.u32 %r2, %r2, 300; bra $D;
$D: st.global.u32 [%rd3], %r2;
ret;
}
"""


def test_slct_and_brx_idx(executor: str) -> None:
    c = np.array([1.0, -1.0, 0.0, -0.0, np.nan, -1e-40, 1e-40, -5.0], np.float32)
    x = c.copy()
    ptxvm.Module(SLCT_BRX)["k"](1, c.size, (x,), device=executor)
    # slct: c >= 0 picks 10 (NaN fails the comparison; .ftz makes -1e-40 a -0, which is >= 0)
    picked = [10, 20, 10, 10, 20, 10, 10, 20]
    want = [p + 100 * (1 + i % 3) for i, p in enumerate(picked)]
    assert x.view(np.uint32).tolist() == want


def test_brx_idx_past_the_list_traps(executor: str) -> None:
    text = SLCT_BRX.replace("rem.u32 %r3, %r1, 3;", "mov.u32 %r3, %r1;")
    with pytest.raises(ptxvm.TrapError, match="brx.idx"):
        ptxvm.Module(text)["k"](1, 4, (np.zeros(4, np.float32),), device=executor)
