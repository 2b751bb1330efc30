"""Small hand-written PTX modules several test files launch or refuse (VADD, BAD, PARTIAL)."""

from __future__ import annotations

VADD = """\
//
// Hand-written vector add: c[i] = 2 * a[i] + b[i]
//
.version 8.0
.target sm_80
.address_size 64

.visible .entry vadd(
\t.param .u64 vadd_param_a,
\t.param .u64 vadd_param_b,
\t.param .u64 vadd_param_c,
\t.param .u32 vadd_param_n
)
{
\t.reg .pred \t%p<2>;
\t.reg .b32 \t%r<8>;
\t.reg .f32 \t%f<4>;
\t.reg .b64 \t%rd<11>;

\tld.param.u64 \t%rd1, [vadd_param_a];
\tld.param.u64 \t%rd2, [vadd_param_b];
\tld.param.u64 \t%rd3, [vadd_param_c];
\tld.param.u32 \t%r2, [vadd_param_n];
\tmov.u32 \t%r3, %ctaid.x;
\tmov.u32 \t%r4, %ntid.x;
\tmov.u32 \t%r5, %tid.x;
\tmad.lo.s32 \t%r1, %r3, %r4, %r5;
\tsetp.ge.s32 \t%p1, %r1, %r2;
\t@%p1 bra \t$L__BB0_2;
\tcvta.to.global.u64 \t%rd4, %rd1;
\tcvta.to.global.u64 \t%rd5, %rd2;
\tcvta.to.global.u64 \t%rd6, %rd3;
\tcvt.s64.s32 \t%rd7, %r1;
\tshl.b64 \t%rd8, %rd7, 2;
\tadd.s64 \t%rd9, %rd4, %rd8;
\tld.global.f32 \t%f1, [%rd9];
\tmul.f32 \t%f2, %f1, 0f40000000;
\tadd.s64 \t%rd10, %rd5, %rd8;
\tld.global.f32 \t%f3, [%rd10];
\tadd.f32 \t%f2, %f2, %f3;
\tadd.s64 \t%rd9, %rd6, %rd8;
\tst.global.f32 \t[%rd9], %f2;
$L__BB0_2:
\tret;
}
"""


# Two errors: an undeclared register (line 27) and an unknown instruction (line 40).
BAD = VADD.replace("%r4, %r5;", "%r4, %r9;").replace("\tadd.f32 ", "\taddx.f32 ")


HEAD = ".version 8.0\n.target sm_80\n.address_size 64\n"


# Thread t copies 16 bytes from in + 16 t with src-size t % 17 (0..16) (or with ignore-src = t odd),
# then stores the 16 shared bytes to out + 16 t.
PARTIAL = HEAD + """
.visible .entry k(.param .u64 pin, .param .u64 pout, .param .u32 mode)
{
  .reg .pred %p<3>;
  .reg .b32 %r<12>;
  .reg .b64 %rd<8>;
  .shared .align 16 .b8 buf[2048];
  mov.u32 %r1, %tid.x;
  ld.param.u64 %rd1, [pin];
  ld.param.u64 %rd2, [pout];
  ld.param.u32 %r9, [mode];
  mul.wide.u32 %rd3, %r1, 16;
  add.s64 %rd4, %rd1, %rd3;
  shl.b32 %r2, %r1, 4;
  mov.u32 %r3, buf;
  add.s32 %r4, %r3, %r2;
  rem.u32 %r5, %r1, 17;
  and.b32 %r6, %r1, 1;
  setp.eq.u32 %p1, %r6, 1;
  setp.eq.u32 %p2, %r9, 0;
  @%p2 cp.async.cg.shared.global [%r4], [%rd4], 16, %r5;
  @!%p2 cp.async.ca.shared.global [%r4], [%rd4], 16, %p1;
  cp.async.commit_group;
  cp.async.wait_all;
  ld.shared.v4.u32 {%r7, %r8, %r10, %r11}, [%r4];
  add.s64 %rd5, %rd2, %rd3;
  st.global.v4.u32 [%rd5], {%r7, %r8, %r10, %r11};
  ret;
}
"""
