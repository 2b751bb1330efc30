"""The shared-load grouping the host JIT checks with one compare (passes/shared_loads.py): groups
of plain ld.shared through one base register, cut by labels, nested blocks, non-pure
instructions and writes of the base. Expected groups by hand from the PTX below."""

from __future__ import annotations

import ptxvm
from ptxvm.passes.shared_loads import shared_load_groups

PTX = """.version 8.0
.target sm_80
.address_size 64
.visible .entry k (.param .u64 p)
{
  .reg .b32 %r<12>;
  .reg .f32 %f<4>;
  .shared .align 16 .b8 buf[256];
  mov.u32 %r1, buf;
  ld.shared.u32 %r2, [%r1];          // A0
  add.s32 %r3, %r2, 1;               // pure: the group goes on
  ld.shared.u32 %r4, [%r1+4];        // A1
  ld.shared.v2.f32 {%f1, %f2}, [%r1+8];   // A2 (8 bytes)
  st.shared.u32 [%r1+16], %r3;       // not pure: closes A
  ld.shared.u32 %r5, [%r1+32];       // B0
  ld.shared.u32 %r6, [%r1+36];       // B1
  add.s32 %r1, %r1, 64;              // writes the base: closes B
  ld.shared.u32 %r7, [%r1];          // C0 (new value of %r1)
  ld.volatile.shared.u32 %r8, [%r1+4];    // volatile: not a member (and not pure: closes C)
  ld.shared.u32 %r9, [%r1+8];        // alone: no group
$L:
  ld.shared.u32 %r10, [%r1+200];     // D0
  ld.shared.u32 %r11, [%r1+252];     // D1: ends at 256 bytes, inside the window
  ret;
}
"""


def _groups(shared_bytes: int) -> list[list[str]]:
    module = ptxvm.parse(PTX)
    found = shared_load_groups(module.kernels["k"].body, shared_bytes)
    out, seen = [], set()
    for members, _index in found.values():
        if id(members) not in seen:
            seen.add(id(members))
            out.append([f"{m[1].name}+{m[2]}:{m[3]}" for m in members])
    return sorted(out)


def test_groups_by_hand() -> None:
    assert _groups(256) == [["%r1+0:4", "%r1+4:4", "%r1+8:8"], ["%r1+200:4", "%r1+252:4"],
                            ["%r1+32:4", "%r1+36:4"]]


def test_a_group_past_the_window_is_not_formed() -> None:
    # D ends at byte 256: with a 255-byte window it is left to the loads' own checks.
    assert ["%r1+200:4", "%r1+252:4"] not in _groups(255)
