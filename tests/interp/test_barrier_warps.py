"""Warps at barriers and warp instructions, as the fuzzer's partial-mask warp operations found them.

A counted barrier counts a warp once all its non-exited threads wait there (PTX ISA 9.0
§9.7.13.1: `bar.sync` makes the executing thread wait for the rest of its warp, then marks the
warp's arrival; counts are in whole warps).

Found by the fuzzer (partial-mask warp operations): lane 0 of each warp is held at a warp
operation of its own while lanes 1..31 reach `bar.sync 0, 64`; the JIT counted both warps as
arrived and released the barrier before lane 0 of the next warp had stored its value. Expected
values come from the kernel's definition: every thread reads its neighbour's slot after the
barrier, out[t] = 3 * ((t + 1) % 64) + 1.
"""

from __future__ import annotations

import numpy as np
import pytest

import ptxvm

PTX = """.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 out)
{
  .shared .align 4 .b32 sh[64];
  .reg .b32 %r<8>;
  .reg .b64 %rd<6>;
  .reg .pred %p<2>;
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %tid.x;
  mad.lo.u32 %r2, %r1, 3, 1;
  mov.u32 %r3, %laneid;
  setp.ne.u32 %p1, %r3, 0;
  @%p1 bra STORE;
  vote.sync.ballot.b32 %r4, %p1, 1;
  add.u32 %r2, %r2, %r4;
STORE:
  mov.u32 %r5, sh;
  shl.b32 %r6, %r1, 2;
  add.u32 %r5, %r5, %r6;
  st.shared.u32 [%r5], %r2;
  bar.sync 0, 64;
  add.u32 %r6, %r1, 1;
  and.b32 %r6, %r6, 63;
  shl.b32 %r6, %r6, 2;
  mov.u32 %r5, sh;
  add.u32 %r5, %r5, %r6;
  ld.shared.u32 %r7, [%r5];
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r7;
  ret;
}
"""


def test_counted_barrier_waits_for_the_whole_warp(executor) -> None:
    out = np.zeros(64, np.uint32)
    ptxvm.Module(PTX)["k"](1, 64, [out], device=executor)
    t = np.arange(64)
    np.testing.assert_array_equal(out, (3 * ((t + 1) % 64) + 1).astype(np.uint32))


LOCKSTEP = """.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 out, .param .u64 flags)
{
  .shared .align 4 .b32 sh[32];
  .reg .b32 %r<8>;
  .reg .b64 %rd<6>;
  .reg .pred %p<4>;
  ld.param.u64 %rd1, [out];
  ld.param.u64 %rd4, [flags];
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd5, %rd4, %rd2;
  ld.global.u32 %r6, [%rd5];
  setp.ne.u32 %p0, %r6, 0;
  add.u32 %r0, %r1, 1;
  mov.u32 %r7, 2;
LOOP:
  setp.ge.u32 %p1, %r1, 19;
  @%p1 bra PART;
  redux.sync.add.u32 %r0, %r0, 524287;
PART:
  @%p0 bra SKIP;
  ld.volatile.shared.u32 %r2, [sh];
SKIP:
  sub.u32 %r7, %r7, 1;
  setp.ne.u32 %p2, %r7, 0;
  @%p2 bra.uni LOOP;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r0;
  ret;
}
"""


def test_partial_redux_waits_for_lanes_held_at_a_volatile_access(executor) -> None:
    """Fuzzer finding: lanes 0..18 reduce twice in a loop; between the reductions some lanes
    take a divergent path through a volatile shared load (a lockstep point on the JIT) while
    the others go round the loop to the second reduction. The second reduction must still
    combine all 19 lanes: lanes 0..18 hold S = 1 + ... + 19 after the first and 19 * S after
    the second; lanes 19..31 keep t + 1."""
    flags = np.array([t % 3 == 0 for t in range(32)], np.uint32)
    out = np.zeros(32, np.uint32)
    ptxvm.Module(LOCKSTEP)["k"](1, 32, [out, flags], device=executor)
    first = sum(t + 1 for t in range(19))                  # every lane of the first redux gets it
    want = [(19 * first) % 2**32 if t < 19 else t + 1 for t in range(32)]
    assert out.tolist() == want


AHEAD = """.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 out)
{
  .reg .b32 %r<8>;
  .reg .b64 %rd<4>;
  .reg .pred %p<4>;
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %laneid;
  mov.u32 %r0, 0;
  mov.u32 %r7, 2;
LOOP:
  setp.ge.u32 %p1, %r1, 2;
  @%p1 bra PART1;
  activemask.b32 %r0;
PART1:
  setp.ge.u32 %p2, %r1, 1;
  @%p2 bra PART2;
  vote.sync.any.pred %p3, %p2, 1;
  MASKED
PART2:
  sub.u32 %r7, %r7, 1;
  setp.ne.u32 %p0, %r7, 0;
  @%p0 bra.uni LOOP;
  mov.u32 %r2, %tid.x;
  mul.wide.u32 %rd2, %r2, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r0;
  ret;
}
"""


@pytest.mark.parametrize("second", ["activemask", "redux"])
def test_lanes_run_ahead_wait_for_the_membermask(executor, second) -> None:
    """Fuzzer finding: lane 0 stops at a vote of its own (membermask 1) while lane 1 goes round
    the loop to the next `activemask` / `redux.sync` with membermask 3. Lane 0 must take part in
    that one too: the vote (its membermask complete) runs first, then both lanes meet. The
    interpreter's order (lowest PC first) gives activemask 0b11 in lanes 0 and 1, and redux
    over lanes 0 and 1 of their lane ids plus one: 1 + 2."""
    body = AHEAD
    if second == "redux":
        body = body.replace("activemask.b32 %r0;", "add.u32 %r6, %r1, 1;\n  redux.sync.add.u32 %r0, %r6, 3;")
    body = body.replace("  MASKED\n", "")
    out = np.zeros(32, np.uint32)
    ptxvm.Module(body)["k"](1, 32, [out], device=executor)
    assert out.tolist()[:2] == [3, 3] and not out[2:].any()


# Found by the fuzzer's `.func` calls: odd lanes call `f`, even lanes branch around the call;
# both meet again before `activemask`. The interpreter ran the lowest PC first, and `f`'s code
# came after the kernel's in its op list, so the even lanes ran past the join and executed
# `activemask` alone (0x55555555) while the odd lanes were still inside `f`. A thread inside a
# call now stands at its call site for that ordering; every lane sees the whole warp.
CALL_THEN_ACTIVEMASK = """.version 8.0
.target sm_80
.address_size 64
{func_first}
.visible .entry k(.param .u64 out)
{{
  .reg .b32 %r<6>;
  .reg .b64 %rd<4>;
  .reg .pred %p<2>;
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %laneid;
  and.b32 %r2, %r1, 1;
  setp.eq.u32 %p1, %r2, 0;
  @%p1 bra JOIN;
  {{
    .param .b32 a;
    .param .b32 r;
    st.param.b32 [a], %r1;
    call.uni (r), f, (a);
    ld.param.b32 %r3, [r];
  }}
JOIN:
  activemask.b32 %r4;
  mov.u32 %r5, %tid.x;
  mul.wide.u32 %rd2, %r5, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r4;
  ret;
}}
{func_last}"""
FUNC = """.func (.param .b32 r) f(.param .b32 a)
{
  .reg .b32 %q<3>;
  ld.param.b32 %q1, [a];
  mul.lo.u32 %q2, %q1, 3;
  add.u32 %q2, %q2, 7;
  st.param.b32 [r], %q2;
  ret;
}"""


@pytest.mark.parametrize("func_first", [True, False])
def test_lanes_that_branch_around_a_call_wait_for_it_before_a_warp_instruction(executor, func_first) -> None:
    text = CALL_THEN_ACTIVEMASK.format(func_first=FUNC if func_first else
                                       ".func (.param .b32 r) f(.param .b32 a);",
                                       func_last="" if func_first else FUNC)
    out = np.zeros(64, np.uint32)
    ptxvm.Module(text, "call_join.ptx")["k"](1, 64, (out,), device=executor)
    assert [hex(v) for v in out] == ["0xffffffff"] * 64
