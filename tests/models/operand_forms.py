"""Issue 14's operand forms as small kernels with hand-worked results: vector registers, address
expressions as values, kernel `.param` addresses in registers, 32-bit address wrap-around and
loads/stores wider or narrower than their registers.

Every kernel is `k(.param .u64 out[, .param .u32 a, .param .u32 b])` on one u32 buffer: ``init``
is its contents before the launch, ``want`` maps a word index to the value the PTX ISA gives
there afterwards (worked by hand in the comments; words not listed must keep ``init``). Shared by
tests/interp/test_operand_forms.py, tests/jit/test_jit_operand_forms.py and
tests/amdgpu/test_amdgpu_operand_forms.py, so every executor is held to the same numbers.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

import ptxvm

WORDS = 64


@dataclass(frozen=True)
class Case:
    name: str
    ptx: str
    init: dict[int, int]
    want: dict[int, int]
    block: int = 1
    scalars: tuple[int, ...] = ()          # u32 parameters a, b after `out`
    sm: str = "sm_80"
    notes: str = field(default="", compare=False)

    def buffer(self) -> np.ndarray:
        buf = np.zeros(WORDS, np.uint32)
        for i, v in self.init.items():
            buf[i] = v
        return buf

    def expected(self) -> np.ndarray:
        buf = self.buffer()
        for i, v in self.want.items():
            buf[i] = v
        return buf


def kernel(body: str, *, decls: str = "", scalars: bool = False, sm: str = "sm_80") -> str:
    version = "8.8" if sm == "sm_100" else "8.0"
    params = ".param .u64 out" + (", .param .u32 a, .param .u32 b" if scalars else "")
    return (f".version {version}\n.target {sm}\n.address_size 64\n{decls}"
            f".visible .entry k({params})\n{{\n{body}\n  ret;\n}}\n")


CASES = [
    # §5.4.2: a vector register is its elements; .r .g .b .a name .x .y .z .w.
    Case("vector_elements", kernel("""
  .reg .v4 .u32 v; .reg .u32 t; .reg .u64 p;
  ld.param.u64 p, [out];
  ld.global.u32 v.x, [p];
  ld.global.u32 v.g, [p+4];
  ld.global.u32 v.b, [p+8];
  ld.global.u32 v.a, [p+12];
  sub.u32 t, v.w, v.x;
  add.u32 v.y, v.y, t;
  st.global.v4.u32 [p+16], v;
  st.global.v4.u32 [p+32], {v.a, v.z, v.g, v.r};
  st.global.u32 [p+48], t;"""),
         {0: 10, 1: 20, 2: 30, 3: 40},
         # t = 40 - 10 = 30; v.y = 20 + 30 = 50; the whole vector, then reversed.
         {4: 10, 5: 50, 6: 30, 7: 40, 8: 40, 9: 30, 10: 50, 11: 10, 12: 30}),
    # Whole vectors as ld/st operands, 64-bit and 16-bit elements (element i at byte i*size).
    Case("vector_whole_ld_st", kernel("""
  .reg .v2 .u64 q; .reg .v4 .u16 h; .reg .u64 p;
  ld.param.u64 p, [out];
  ld.global.v2.u64 q, [p];
  st.global.v2.u64 [p+16], {q.y, q.x};
  ld.global.v4.u16 h, [p+8];
  add.u16 h.x, h.x, h.w;
  st.global.v4.u16 [p+32], h;"""),
         {0: 0x11111111, 1: 0x22222222, 2: 0x00020001, 3: 0x00040003},
         # q = (0x2222222211111111, 0x0004000300020001) stored swapped; h = (1, 2, 3, 4), h.x = 1 + 4.
         {4: 0x00020001, 5: 0x00040003, 6: 0x11111111, 7: 0x22222222, 8: 0x00020005, 9: 0x00040003}),
    Case("vector_f32", kernel("""
  .reg .v2 .f32 f; .reg .u64 p;
  ld.param.u64 p, [out];
  ld.global.v2.f32 f, [p];
  add.f32 f.x, f.x, f.y;
  mul.f32 f.y, f.y, 0f40000000;
  st.global.v2.f32 [p+8], f;"""),
         {0: 0x3FC00000, 1: 0x40100000},            # 1.5, 2.25
         {2: 0x40700000, 3: 0x40900000}),           # 3.75, 4.5 (exact)
    # mov of a whole vector of the instruction's size (§9.7.9.10 mov's packing: element 0 lowest).
    Case("vector_mov_pack", kernel("""
  .reg .v2 .u32 w; .reg .v2 .u16 s; .reg .u64 %rd<3>; .reg .u32 %r1; .reg .u64 p;
  ld.param.u64 p, [out];
  ld.global.v2.u32 w, [p];
  mov.b64 %rd1, w;
  st.global.u64 [p+8], %rd1;
  ld.global.u64 %rd2, [p+16];
  mov.b64 w, %rd2;
  st.global.v2.u32 [p+24], {w.y, w.x};
  ld.global.v2.u16 s, [p+32];
  mov.b32 %r1, s;
  st.global.u32 [p+36], %r1;"""),
         {0: 0xA, 1: 0xB, 4: 0x33334444, 5: 0x55556666, 8: 0x00090008},
         # %rd1 = 0xB << 32 | 0xA, stored little-endian as it was; w from %rd2: x = low word.
         {2: 0xA, 3: 0xB, 6: 0x55556666, 7: 0x33334444, 9: 0x00090008}),
    # `v<2>` ranges of vectors; a nested scope's scalar shadows the outer vector `q0`.
    Case("vector_ranges_and_scopes", kernel("""
  .reg .v2 .u32 q<2>; .reg .u64 p;
  ld.param.u64 p, [out];
  ld.global.v2.u32 q0, [p];
  ld.global.v2.u32 q1, [p+8];
  add.u32 q1.x, q1.x, q0.y;
  {
    .reg .u32 q0;
    mov.u32 q0, 7;
    st.global.u32 [p+16], q0;
  }
  st.global.v2.u32 [p+24], q1;
  st.global.v2.u32 [p+32], q0;"""),
         {0: 1, 1: 2, 2: 3, 3: 4},
         {4: 7, 6: 5, 7: 4, 8: 1, 9: 2}),           # q1.x = 3 + 2
    # Elements live across a barrier (the host JIT saves registers at its stops).
    Case("vector_across_barrier", kernel("""
  .reg .v2 .u32 v; .reg .u64 p, %rd1; .reg .u32 t;
  ld.param.u64 p, [out];
  mov.u32 v.x, %tid.x;
  mul.lo.u32 v.y, v.x, 3;
  bar.sync 0;
  mul.wide.u32 %rd1, v.x, 8;
  add.u64 p, p, %rd1;
  st.global.v2.u32 [p], v;"""),
         {}, {**{2 * t: t for t in range(32)}, **{2 * t + 1: 3 * t for t in range(32)}}, block=32),
    # §6.4.1 address expressions as source values: the base's value plus the constant, in the
    # instruction's width (differences of addresses, so the numbers hold on every executor).
    Case("offset_values", kernel("""
  .reg .u64 %rd<9>; .reg .u32 %r<10>; .reg .u16 %h<3>; .reg .pred %p1;
  ld.param.u64 %rd1, [out];
  mov.u64 %rd2, arr+8;
  ld.global.u32 %r1, [%rd2];
  mov.u64 %rd3, arr;
  sub.u64 %rd4, %rd2, %rd3;
  st.global.u64 [%rd1], %rd4;
  st.global.u64 [%rd1+8], %rd4+1;
  add.u64 %rd5, %rd4+4, 1;
  cvt.u32.u64 %r2, %rd5;
  mov.u32 %r3, sh+4;
  mov.u32 %r4, sh;
  sub.u32 %r5, %r3, %r4;
  cvta.shared.u64 %rd6, sh+4;
  st.u32 [%rd6], %r1;
  ld.shared.u32 %r6, [sh+4];
  setp.eq.u32 %p1, %r6+1, 8;
  selp.u32 %r7, 1, 0, %p1;
  ld.global.u16 %h2, [%rd1+48];
  mov.u16 %h1, %h2+1;
  cvt.u32.u16 %r8, %h1;
  mov.u32 %r9, %r1+0xFFFFFFFF;
  cvta.global.u64 %rd7, arr+12;
  ld.u32 %r0, [%rd7];
  st.global.v4.u32 [%rd1+16], {%r1, %r2, %r5, %r6};
  st.global.v4.u32 [%rd1+32], {%r7, %r8, %r9, %r0};""",
                                    decls=".global .align 4 .u32 arr[4] = {5, 6, 7, 8};\n"
                                          ".shared .align 4 .u32 sh[4];\n"),
         {12: 0xFFFF},
         # arr+8 - arr = 8, +1 = 9, (8+4)+1 = 13; arr[2] = 7; sh+4 - sh = 4; sh[1] = 7 through
         # the generic address of sh+4; 7+1 == 8; 0xFFFF+1 wraps to 0 in 16 bits, 7+0xFFFFFFFF
         # to 6 in 32; arr[3] = 8 through cvta.global of arr+12.
         {0: 8, 1: 0, 2: 9, 3: 0, 4: 7, 5: 13, 6: 4, 7: 7, 8: 1, 9: 0, 10: 6, 11: 8}),
    # §5.1.6.1: `mov` of a kernel parameter gives its .param address; ld.param reads through it,
    # cvta.param makes it generic (once).
    Case("param_address", kernel("""
  .reg .u64 %rd<8>; .reg .u32 %r<8>;
  ld.param.u64 %rd1, [out];
  mov.b64 %rd2, a;
  ld.param.u32 %r1, [%rd2];
  ld.param.u32 %r2, [%rd2+4];
  cvta.param.u64 %rd3, %rd2;
  ld.u32 %r3, [%rd3+4];
  cvta.param.u64 %rd4, b;
  ld.u32 %r4, [%rd4];
  mov.u64 %rd5, b;
  sub.u64 %rd6, %rd5, %rd2;
  cvt.u32.u64 %r5, %rd6;
  st.global.v4.u32 [%rd1], {%r1, %r2, %r3, %r4};
  st.global.u32 [%rd1+16], %r5;""", scalars=True),
         {}, {0: 11, 1: 22, 2: 22, 3: 22, 4: 4}, scalars=(11, 22)),
    # The benchmark's sequence (issue 14): %r4 = sh - 68*tid + (72*tid - 68) lies 68 - 4*tid bytes
    # below sh, and [%r4+68] is sh[tid] again modulo 2^32.
    Case("wrap32_shared", kernel("""
  .reg .u64 %rd<4>; .reg .u32 %r<70>;
  ld.param.u64 %rd1, [out];
  mov.u32 %r2, %tid.x;
  mov.u32 %r42, sh;
  shl.b32 %r18, %r2, 2;
  mul.lo.s32 %r20, %r2, 72;
  sub.s32 %r19, %r20, 68;
  add.u32 %r30, %r42, %r18;
  mul.lo.u32 %r31, %r2, 10;
  st.shared.u32 [%r30], %r31;
  st.shared.u32 [%r30+128], %r2;
  bar.sync 0;
  neg.s32 %r49, %r2;
  mad.lo.s32 %r50, %r49, 68, %r42;
  add.s32 %r4, %r50, %r19;
  ld.shared.u32 %r62, [%r4+68];
  ld.shared.u32 %r63, [%r4+196];
  mul.wide.u32 %rd2, %r2, 8;
  add.u64 %rd3, %rd1, %rd2;
  st.global.v2.u32 [%rd3], {%r62, %r63};""", decls=".shared .align 4 .u32 sh[64];\n"),
         {}, {**{2 * t: 10 * t for t in range(16)}, **{2 * t + 1: t for t in range(16)}}, block=16),
    Case("wrap32_local", kernel("""
  .local .align 4 .b8 buf[16];
  .reg .u64 %rd1; .reg .u32 %r<6>;
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, buf;
  sub.u32 %r2, %r1, 8;
  mov.u32 %r5, 42;
  st.local.u32 [%r2+12], %r5;
  ld.local.u32 %r3, [%r1+4];
  add.u32 %r4, %r1, 3;
  st.local.u32 [%r4+-3], %r3;
  ld.local.u32 %r5, [%r1];
  st.global.v2.u32 [%rd1], {%r3, %r5};"""),
         {}, {0: 42, 1: 42}),                       # buf-8+12 = buf+4; buf+3-3 = buf
    # Registers wider than the memory type (§6.4.2): u8 into u16 zero-extends, s8 into s16
    # sign-extends; stores truncate. .v8 (PTX 8.8, sm_100, .global only).
    Case("wide_registers_v8", kernel("""
  .reg .u64 %rd1; .reg .u16 %h<6>; .reg .u32 %r<12>; .reg .s16 %s<3>;
  ld.param.u64 %rd1, [out];
  ld.global.v4.u8 {%h1, %h2, %h3, %h4}, [%rd1];
  ld.global.v2.s8 {%s1, %s2}, [%rd1+4];
  ld.global.v8.u32 {%r1, %r2, %r3, %r4, %r5, %r6, %r7, %r8}, [%rd1+32];
  add.u16 %h5, %h1, %h4;
  cvt.u32.u16 %r9, %h5;
  cvt.s32.s16 %r10, %s1;
  cvt.s32.s16 %r11, %s2;
  st.global.v8.u32 [%rd1+64], {%r8, %r7, %r6, %r5, %r4, %r3, %r2, %r1};
  st.global.v4.u32 [%rd1+96], {%r9, %r10, %r11, %r9};
  st.global.v2.u8 [%rd1+112], {%h2, %h3};
  st.global.v2.u8 [%rd1+114], {%r1, %r2};""", sm="sm_100"),
         {0: 0x84030201, 1: 0xFFFE, **{8 + i: 100 + i for i in range(8)}},
         # bytes 01 02 03 84: %h1 + %h4 = 0x85; bytes FE FF as s8: -2, -1; v8 reversed;
         # u8 stores keep the low bytes: 02 03 then 100, 101.
         {**{16 + i: 107 - i for i in range(8)}, 24: 0x85, 25: 0xFFFFFFFE, 26: 0xFFFFFFFF, 27: 0x85,
          28: 0x65640302}, sm="sm_100"),
]

SWAP = """.func (.reg .v2 .u32 o) swap(.reg .v2 .u32 a)
{
  mov.u32 o.x, a.y;
  mov.u32 o.y, a.x;
  ret;
}
"""
# The same with a barrier inside: the host JIT lowers it inline into the kernel's state machine.
SWAP_SYNC = SWAP.replace("swap(", "swap_sync(").replace("  ret;", "  bar.sync 0;\n  ret;")

CASES += [
    # `.reg .v2` formals and results of a non-ABI .func (§9.7.12.5 by value): the vector's bytes,
    # element i at i * size, from a vector register or a scalar register of the vector's size.
    Case("vector_call_swap", kernel("""
  .reg .v2 .u32 a, r; .reg .u64 p;
  ld.param.u64 p, [out];
  ld.global.v2.u32 a, [p];
  call (r), swap, (a);
  st.global.v2.u32 [p+8], r;""", decls=SWAP),
         {0: 1, 1: 2}, {2: 2, 3: 1}),
    Case("vector_call_scalar_sides", kernel("""
  .reg .v2 .u32 w; .reg .u64 %rd<4>;
  ld.param.u64 %rd1, [out];
  mov.b64 %rd2, 0x0000000700000005;
  call (w), swap, (%rd2);
  call (%rd3), swap, (w);
  st.global.v2.u32 [%rd1], w;
  st.global.u64 [%rd1+8], %rd3;""", decls=SWAP),
         # %rd2 as (x, y) = (5, 7) -> w = (7, 5) -> %rd3's bytes (5, 7) again: 0x0000000700000005.
         {}, {0: 7, 1: 5, 2: 5, 3: 7}),
    Case("vector_call_inlined", kernel("""
  .reg .v2 .u32 a, r; .reg .u64 p, %rd1;
  ld.param.u64 p, [out];
  mov.u32 a.x, %tid.x;
  add.u32 a.y, a.x, 100;
  call (r), swap_sync, (a);
  mul.wide.u32 %rd1, a.x, 8;
  add.u64 p, p, %rd1;
  st.global.v2.u32 [p], r;""", decls=SWAP_SYNC),
         {}, {**{2 * t: t + 100 for t in range(32)}, **{2 * t + 1: t for t in range(32)}}, block=32),
]

CASES += [
    # A generic `ld`/`st [var]` of a .shared or .local variable is through its generic address
    # (the one cvta gives): 9 stored and read back through each window.
    Case("generic_symbol_operands", kernel("""
  .shared .align 4 .u32 sh[4];
  .local .align 4 .u32 lo[4];
  .reg .u64 %rd1; .reg .u32 %r<4>;
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, 9;
  st.shared.u32 [sh+4], %r1;
  ld.u32 %r2, [sh+4];
  st.u32 [lo+8], %r1;
  ld.local.u32 %r3, [lo+8];
  st.global.v2.u32 [%rd1], {%r2, %r3};"""),
         {}, {0: 9, 1: 9}),
]

BY_NAME = {c.name: c for c in CASES}

# A .v4 .u32 vector packed into a .b128 register and unpacked into a .v2 .u64 one (element 0 in
# the low bits both ways): the words come back in order. The interpreter holds no .b128 register.
B128 = Case("vector_b128_pack", kernel("""
  .reg .v4 .u32 v; .reg .v2 .u64 w; .reg .b128 q; .reg .u64 p;
  ld.param.u64 p, [out];
  ld.global.v4.u32 v, [p];
  mov.b128 q, v;
  mov.b128 w, q;
  st.global.v2.u64 [p+16], w;""").replace(".version 8.0\n.target sm_80", ".version 8.3\n.target sm_90"),
            {0: 1, 1: 2, 2: 3, 3: 4}, {4: 1, 5: 2, 6: 3, 7: 4}, sm="sm_90")

# A 32-bit address that wraps to a place outside the window still faults, at the wrapped offset
# (2^32 - 132 here: %r4 = sh - 200, +68), not at 2^32 + that as a 64-bit sum would give.
WRAP_FAULT = kernel("""
  .reg .u32 %r<6>;
  mov.u32 %r1, sh;
  sub.u32 %r4, %r1, 200;
  ld.shared.u32 %r5, [%r4+68];""", decls=".shared .align 4 .u32 sh[64];\n")
WRAP_FAULT_OFFSET = 2**32 - 132

# A kernel parameter's .param address past the block: b is at offset 12 of a 16-byte block.
PARAM_FAULT = kernel("""
  .reg .u64 %rd2; .reg .u32 %r1;
  mov.b64 %rd2, b;
  ld.param.u32 %r1, [%rd2+4];""", scalars=True)
PARAM_FAULT_OFFSET = 16


def run(case: Case, device: str) -> np.ndarray:
    """The buffer after one launch of ``case`` on ``device``."""
    k = ptxvm.Module(case.ptx, f"{case.name}.ptx")["k"]
    buf = case.buffer()
    args = (buf, *(np.uint32(s) for s in case.scalars))
    k((1,), (case.block,), args, device=device)
    return buf
