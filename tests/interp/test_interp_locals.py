"""`.local` memory per call frame: every activation of a `.func` (recursion included) has its own
copy of the function's `.local` variables (PTX ISA 9.0 §5.1.5: local memory is private to a
thread and, in functions, allocated per call; nvcc's ABI keeps it on a per-thread stack).

Each recursive function stores into its local array, recurses, and reads the array back after the
call returns: shared storage across recursion levels would return the innermost level's values.
Expected values come from Python models of the recursions on Python ints (mod 2^32 / 2^64).
"""

from __future__ import annotations

import numpy as np
import pytest

import ptxvm

HEAD = ".version 8.0\n.target sm_80\n.address_size 64\n"
M32, M64 = (1 << 32) - 1, (1 << 64) - 1

# rec(n, x): buf[i] = x*(i+1) + n for i < 4 (plain `.local` array, `[buf+k]` addressing, one
# element read back through a generic pointer); r = n ? rec(n-1, 3x+1) : 0; returns
# r*31 + buf[0] + 2*buf[1] + 3*buf[2] + 4*buf[3].
REC = """
.func (.param .b32 rec_ret) rec(.param .b32 rec_n, .param .b32 rec_x)
{
  .local .align 4 .b8 buf[16];
  .reg .b32 %a<16>;
  .reg .b64 %g<4>;
  .reg .pred %q;
  ld.param.b32 %a1, [rec_n];
  ld.param.b32 %a2, [rec_x];
  add.u32 %a3, %a2, %a1;
  st.local.u32 [buf], %a3;
  mad.lo.u32 %a3, %a2, 2, %a1;
  st.local.u32 [buf+4], %a3;
  mad.lo.u32 %a3, %a2, 3, %a1;
  st.local.u32 [buf+8], %a3;
  mad.lo.u32 %a3, %a2, 4, %a1;
  st.local.u32 [buf+12], %a3;
  mov.u32 %a9, 0;
  setp.eq.u32 %q, %a1, 0;
  @%q bra BASE;
  sub.u32 %a4, %a1, 1;
  mad.lo.u32 %a5, %a2, 3, 1;
  {
    .param .b32 p0;
    .param .b32 p1;
    .param .b32 r0;
    st.param.b32 [p0], %a4;
    st.param.b32 [p1], %a5;
    call.uni (r0), rec, (p0, p1);
    ld.param.b32 %a9, [r0];
  }
BASE:
  mul.lo.u32 %a10, %a9, 31;
  ld.local.u32 %a11, [buf];
  add.u32 %a10, %a10, %a11;
  ld.local.u32 %a11, [buf+4];
  mad.lo.u32 %a10, %a11, 2, %a10;
  mov.u64 %g1, buf;
  cvta.local.u64 %g2, %g1;
  ld.u32 %a11, [%g2+8];
  mad.lo.u32 %a10, %a11, 3, %a10;
  ld.local.u32 %a11, [buf+12];
  mad.lo.u32 %a10, %a11, 4, %a10;
  st.param.b32 [rec_ret], %a10;
  ret;
}
"""


def model_rec(n: int, x: int) -> int:
    buf = [(x * (i + 1) + n) & M32 for i in range(4)]
    r = model_rec(n - 1, (3 * x + 1) & M32) if n else 0
    return (r * 31 + buf[0] + 2 * buf[1] + 3 * buf[2] + 4 * buf[3]) & M32


# The kernel has a `.local` array of its own, named like the function's, which must survive the
# calls: out[t] = rec(t % 9, t) + kbuf, where kbuf = t*t was stored before the call.
REC_KERNEL = HEAD + REC + """
.visible .entry k(.param .u64 pout)
{
  .local .align 4 .b8 buf[16];
  .reg .b32 %r<12>;
  .reg .b64 %rd<6>;
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %ctaid.x;
  mad.lo.u32 %r1, %r2, %ntid.x, %r1;
  mul.lo.u32 %r3, %r1, %r1;
  st.local.u32 [buf+4], %r3;
  rem.u32 %r4, %r1, 9;
  {
    .param .b32 p0;
    .param .b32 p1;
    .param .b32 r0;
    st.param.b32 [p0], %r4;
    st.param.b32 [p1], %r1;
    call.uni (r0), rec, (p0, p1);
    ld.param.b32 %r5, [r0];
  }
  ld.local.u32 %r6, [buf+4];
  add.u32 %r5, %r5, %r6;
  ld.param.u64 %rd1, [pout];
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r5;
  ret;
}
"""


def test_plain_local_array_is_private_to_each_recursion_level():
    n = 96
    out = np.zeros(n, np.uint32)
    ptxvm.Module(REC_KERNEL, "rec.ptx")["k"](2, 48, (out,))
    want = [(model_rec(t % 9, t) + t * t) & M32 for t in range(n)]
    assert [int(v) for v in out] == want


# nvcc -G style: a `__local_depot` frame addressed through %SPL (local) and %SP (generic). The
# callee also writes through a generic pointer into its caller's frame (slot 16), which must
# land in the caller's activation, not its own.
#   dep(n, parent): slot0 (u32, generic) = n; slot8 (u64, local) = n*n; *parent = n + 100;
#   r = n ? dep(n-1, &slot16) : 0; returns r*3 + slot0 + slot8 + slot16 (u64), slot16 read
#   after the call (the child's n + 100), 0 when there was no call.
DEPOT = """
.func (.param .b64 dep_ret) dep(.param .b32 dep_n, .param .b64 dep_parent)
{
  .local .align 8 .b8 __local_depot1[24];
  .reg .b64 %SP;
  .reg .b64 %SPL;
  .reg .b32 %r<10>;
  .reg .b64 %rd<16>;
  .reg .pred %p<3>;
  mov.u64 %SPL, __local_depot1;
  cvta.local.u64 %SP, %SPL;
  ld.param.u32 %r1, [dep_n];
  ld.param.u64 %rd9, [dep_parent];
  add.u64 %rd1, %SP, 0;
  add.u64 %rd2, %SPL, 8;
  add.u64 %rd3, %SP, 16;
  st.u32 [%rd1], %r1;
  mul.wide.u32 %rd4, %r1, %r1;
  st.local.u64 [%rd2], %rd4;
  mov.u32 %r2, 0;
  st.u32 [%rd3], %r2;
  add.u32 %r3, %r1, 100;
  st.u32 [%rd9], %r3;
  mov.u64 %rd5, 0;
  setp.eq.u32 %p1, %r1, 0;
  @%p1 bra DONE;
  sub.u32 %r4, %r1, 1;
  {
    .param .b32 q0;
    .param .b64 q1;
    .param .b64 s0;
    st.param.b32 [q0], %r4;
    st.param.b64 [q1], %rd3;
    call.uni (s0), dep, (q0, q1);
    ld.param.b64 %rd5, [s0];
  }
DONE:
  ld.u32 %r5, [%rd1];
  ld.local.u64 %rd6, [%rd2];
  ld.u32 %r6, [%rd3];
  mul.lo.u64 %rd7, %rd5, 3;
  cvt.u64.u32 %rd8, %r5;
  add.u64 %rd7, %rd7, %rd8;
  add.u64 %rd7, %rd7, %rd6;
  cvt.u64.u32 %rd8, %r6;
  add.u64 %rd7, %rd7, %rd8;
  st.param.b64 [dep_ret], %rd7;
  ret;
}
"""


def model_dep(n: int) -> tuple[int, int]:
    """(return value, what dep(n) writes into its parent's slot)."""
    slot16 = 0
    r = 0
    if n:
        r, slot16 = model_dep(n - 1)
    return (r * 3 + n + n * n + slot16) & M64, n + 100


DEPOT_KERNEL = HEAD + DEPOT + """
.visible .entry k(.param .u64 pout, .param .u64 pslot)
{
  .reg .b32 %r<8>;
  .reg .b64 %rd<10>;
  mov.u32 %r1, %tid.x;
  rem.u32 %r2, %r1, 13;
  ld.param.u64 %rd1, [pout];
  ld.param.u64 %rd2, [pslot];
  mul.wide.u32 %rd3, %r1, 8;
  add.s64 %rd4, %rd2, %rd3;
  {
    .param .b32 q0;
    .param .b64 q1;
    .param .b64 s0;
    st.param.b32 [q0], %r2;
    st.param.b64 [q1], %rd4;
    call.uni (s0), dep, (q0, q1);
    ld.param.b64 %rd5, [s0];
  }
  add.s64 %rd6, %rd1, %rd3;
  st.global.u64 [%rd6], %rd5;
  ret;
}
"""


def test_nvcc_debug_local_depot_frames_and_pointers_into_the_callers_frame():
    n = 64
    out, slot = np.zeros(n, np.uint64), np.zeros(n, np.uint64)
    ptxvm.Module(DEPOT_KERNEL, "depot.ptx")["k"](1, n, (out, slot))
    want = [model_dep(t % 13) for t in range(n)]
    assert [int(v) for v in out] == [w[0] for w in want]
    assert [int(v) for v in slot] == [w[1] for w in want]


def test_endless_recursion_overflows_the_stack_with_a_fault():
    text = HEAD + """
.func down(.param .b32 d_n)
{
  .local .align 16 .b8 big[65536];
  .reg .b32 %a<4>;
  ld.param.b32 %a1, [d_n];
  st.local.u32 [big+65532], %a1;
  add.u32 %a2, %a1, 1;
  {
    .param .b32 p0;
    st.param.b32 [p0], %a2;
    call.uni down, (p0);
  }
  ret;
}
.visible .entry k()
{
  .reg .b32 %r<2>;
  mov.u32 %r1, 0;
  {
    .param .b32 p0;
    st.param.b32 [p0], %r1;
    call.uni down, (p0);
  }
  ret;
}
"""
    with pytest.raises(ptxvm.KernelFault) as e:
        ptxvm.Module(text, "deep.ptx")["k"](1, 32, ())
    # One activation of `down` costs 64 (call) + 65,536 (`big`) + 4 (`d_n`) + 4 (`p0`) + 4 x 8
    # (%a0..%a3) = 65,640 bytes of limits.stack_per_thread (512 KiB): the 8th call needs 525,120.
    assert e.value.message.startswith(
        "stack overflow: the call frames need 525,120 bytes per thread, more than ptxvm's limit of "
        "524,288 bytes (512 KiB) (stack_per_thread; endless recursion?")
    assert "in kernel `k`, block (0, 0, 0), thread (0, 0, 0)" in e.value.message
    assert type(e.value) is ptxvm.KernelFault
    assert e.value.instruction == "call.uni down, (p0);"
