"""Kernels that call `.func`s outside the PTX calling convention ("non-ABI" calls), with
their expected outputs computed here by numpy, independently of ptxvm.

Every module below is accepted by ``ptxas -arch=sm_80`` (CUDA 13): tests/ptx/calls/record_calls.py
records that verdict as the ``kernel/<name>`` cases of tests/data/nonabi_calls.json. Each kernel
runs one CTA of ``THREADS`` threads; thread t reads ``inp[t]`` (u32) and writes ``NOUT[name]``
u32 words at ``out[t * nout ...]``. The reading of the semantics that each expected value
encodes (PTX ISA 9.0 §9.7.12.5 call: "Arguments may be registers, immediate constants, or
variables in .param space. Arguments are pass-by-value") is stated per case.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

THREADS = 64

HEAD = ".version 8.0\n.target sm_80\n.address_size 64\n\n"

KERNEL = """
.visible .entry k(.param .u64 inp, .param .u64 out)
{{
\t.reg .u32 %r<16>;
\t.reg .u64 %rd<16>;
\t.reg .pred %p<8>;
\t.reg .f32 %f<8>;
\t.reg .f64 %fd<8>;
\t.reg .u16 %h<8>;
\tld.param.u64 %rd1, [inp];
\tld.param.u64 %rd2, [out];
\tmov.u32 %r0, %tid.x;
\tmul.wide.u32 %rd3, %r0, 4;
\tadd.u64 %rd4, %rd1, %rd3;
\tmul.wide.u32 %rd5, %r0, {stride};
\tadd.u64 %rd6, %rd2, %rd5;
\tld.global.u32 %r1, [%rd4];
{body}
\tret;
}}
"""


@dataclass(frozen=True)
class Case:
    name: str
    ptx: str
    nout: int
    expected: Callable[[np.ndarray], np.ndarray]     # inp (u32[THREADS]) -> out (u32[THREADS, nout])
    doc: str


def module(funcs: str, body: str, nout: int) -> str:
    lines = "\n".join("\t" + ln.strip() for ln in body.strip().splitlines())
    return HEAD + funcs.strip() + "\n" + KERNEL.format(stride=4 * nout, body=lines)


def inputs(seed: int = 14) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 2**32, THREADS, dtype=np.uint64).astype(np.uint32)


def _cols(*cols) -> np.ndarray:
    return np.stack([np.asarray(c).astype(np.uint64).astype(np.uint32) for c in cols], axis=1)


def _u64_words(v: int) -> tuple[int, int]:
    return v & 0xFFFF_FFFF, v >> 32


TID = np.arange(THREADS, dtype=np.uint64)

# ------------------------------------------------------------------------------ the cases

REG_ARGS = Case(
    "reg_args", module("""
.func (.reg .u32 o) f(.reg .u32 a, .reg .u32 b)
{
\tmad.lo.u32 o, a, 3, b;
\tret;
}
""", """
call (%r2), f, (%r1, %r0);
st.global.u32 [%rd6], %r2;
call (%r1), f, (%r1, 1);
st.global.u32 [%rd6+4], %r1;
""", 2),
    2, lambda x: _cols((x.astype(np.uint64) * 3 + TID) % 2**32, (x.astype(np.uint64) * 3 + 1) % 2**32),
    "register and immediate arguments, a register result; `call (%r1), f, (%r1, 1)` reads the "
    "argument before the result is written (pass-by-value)")

MIXED_SPACES = Case(
    "mixed_spaces", module("""
.func (.reg .u32 o) g(.reg .u32 a)
{
\txor.b32 o, a, 0x5a5a5a5a;
\tret;
}
.func (.param .b32 o) h(.param .b32 a)
{
\t.reg .u32 t;
\tld.param.u32 t, [a];
\tsub.u32 t, t, 7;
\tst.param.u32 [o], t;
\tret;
}
""", """
{
.param .b32 pa;
.param .b32 pr;
st.param.b32 [pa], %r1;
call (pr), g, (pa);
ld.param.b32 %r2, [pr];
}
call (%r3), h, (%r1);
call (%r4), h, (1000);
st.global.u32 [%rd6], %r2;
st.global.u32 [%rd6+4], %r3;
st.global.u32 [%rd6+8], %r4;
""", 3),
    3, lambda x: _cols(x ^ np.uint32(0x5A5A5A5A), (x.astype(np.int64) - 7) % 2**32, np.full(THREADS, 993)),
    "a `.param` argument for a `.reg` formal and a `.param` result for a `.reg` return pass the "
    "variable's 4 bytes; a register or an immediate for a `.param` formal fills the formal's "
    "bytes, read back with ld.param, and a register result takes the `.param` return's bytes")

# The bits of each immediate: measured on ptxas 13 (see ptxvm/ir/call_args.py's docstring).
_IMM_WORDS = [5, 0xFFFF_FFF9, *_u64_words(0xFFFF_FFFF_FFFF_FFFE), 0x3FC0_0000, 0,
              *_u64_words(0x0000_0000_3F80_0001), *_u64_words(0x3FF0_0000_0000_0000),
              int(np.float32(0.1).view(np.uint32)), 1234567]
IMMEDIATES = Case(
    "immediates", module("""
.func st8(.reg .u64 p, .reg .u32 a, .reg .s32 b, .reg .u64 c, .reg .f32 d, .reg .b32 e, .reg .f64 f,
          .reg .b64 g, .reg .f32 h)
{
\tst.global.u32 [p], a;
\tst.global.s32 [p+4], b;
\tst.global.u64 [p+8], c;
\tst.global.f32 [p+16], d;
\tst.global.b32 [p+20], e;
\tst.global.f64 [p+24], f;
\tst.global.b64 [p+32], g;
\tst.global.f32 [p+40], h;
\tret;
}
.func (.reg .u32 o) pf(.param .b32 a)
{
\tld.param.u32 o, [a];
\tret;
}
""", """
call st8, (%rd6, 4294967301, -7, -2, 0d3FF8000000000000, 1.0, 0f3F800001, 1.0, 0.1);
call (%r2), pf, (1234567);
st.global.u32 [%rd6+44], %r2;
""", 12),
    12, lambda x: np.tile(np.array(_IMM_WORDS, dtype=np.uint32), (THREADS, 1)),
    "immediates pass the bits ptxas gives them: an integer modulo 2^bits, 0d/decimal rounded "
    "for .f32, a double's low 32 bits for .b32, 0f zero-extended (not converted) for .f64, a "
    "double's pattern for .b64")

TWO_RESULTS = Case(
    "two_results", module("""
.func (.reg .u32 q, .reg .u32 r) divmod(.reg .u32 a, .reg .u32 b)
{
\tdiv.u32 q, a, b;
\trem.u32 r, a, b;
\tret;
}
.func (.reg .u32 o, .reg .u32 o2) pick(.reg .pred p, .reg .u16 h)
{
\tselp.u32 o, 1, 2, p;
\tcvt.u32.u16 o2, h;
\tret;
}
""", """
add.u32 %r3, %r0, 1;
call (%r4, %r5), divmod, (%r1, %r3);
setp.lt.u32 %p1, %r0, 32;
cvt.u16.u32 %h1, %r1;
call (%r6, %r7), pick, (%p1, %h1);
st.global.u32 [%rd6], %r4;
st.global.u32 [%rd6+4], %r5;
st.global.u32 [%rd6+8], %r6;
st.global.u32 [%rd6+12], %r7;
""", 4),
    4, lambda x: _cols(x // (TID + 1).astype(np.uint32), x % (TID + 1).astype(np.uint32),
                       np.where(TID < 32, 1, 2), x & np.uint32(0xFFFF)),
    "several `.reg` results (ptxas: 'multiple return values found, disabling ABI'); without the "
    "ABI `.pred` and `.u16` formals are allowed and pass the predicate and the 16 bits")


def _fib(n: int) -> int:
    a, b = 0, 1
    for _ in range(n):
        a, b = b, a + b
    return a


RECURSION = Case(
    "recursion", module("""
.func (.reg .u32 o) fib(.reg .u32 n)
{
\t.reg .pred p;
\t.reg .u32 a, b, m;
\tsetp.lt.u32 p, n, 2;
\t@p bra BASE;
\tsub.u32 m, n, 1;
\tcall (a), fib, (m);
\tsub.u32 m, n, 2;
\tcall (b), fib, (m);
\tadd.u32 o, a, b;
\tret;
BASE:
\tmov.u32 o, n;
\tret;
}
.func (.reg .u32 o) dbl(.reg .u32 a)
{
\tshl.b32 o, a, 1;
\tret;
}
.func (.reg .u32 o) twice(.reg .u32 a)
{
\tadd.u32 a, a, 10;
\tcall (o), dbl, (a);
\tret;
}
""", """
rem.u32 %r2, %r1, 12;
call (%r3), fib, (%r2);
call (%r4), twice, (%r1);
st.global.u32 [%rd6], %r3;
st.global.u32 [%rd6+4], %r4;
""", 2),
    2, lambda x: _cols([_fib(int(v) % 12) for v in x], (x.astype(np.uint64) + 10) * 2 % 2**32),
    "a register-passing function that recurses (ABI compilation: one result), with lanes at "
    "different depths; a formal changed in the callee and passed on passes its new value")

INDIRECT = Case(
    "indirect", module("""
.func (.reg .u32 o) f_inc(.reg .u32 a)
{
\tadd.u32 o, a, 1;
\tret;
}
.func (.reg .u32 o) f_dbl(.reg .u32 a)
{
\tshl.b32 o, a, 1;
\tret;
}
""", """
and.b32 %r2, %r0, 1;
setp.eq.u32 %p1, %r2, 0;
mov.u64 %rd7, f_inc;
@!%p1 mov.u64 %rd7, f_dbl;
{
proto: .callprototype (.reg .u32 _) _ (.reg .u32 _);
call (%r3), %rd7, (%r1), proto;
}
{
tl: .calltargets f_inc, f_dbl;
call (%r4), %rd7, (%r1), tl;
}
st.global.u32 [%rd6], %r3;
st.global.u32 [%rd6+4], %r4;
""", 2),
    2, lambda x: _cols(*[np.where(TID % 2 == 0, x.astype(np.uint64) + 1, x.astype(np.uint64) * 2) % 2**32] * 2),
    "indirect calls of register-passing functions through a `.callprototype` and a "
    "`.calltargets` list, even lanes calling one function and odd lanes the other")

FLOATS = Case(
    "floats", module("""
.func (.reg .f32 o) axpy(.reg .f32 a, .reg .f32 x, .reg .f32 y)
{
\tfma.rn.f32 o, a, x, y;
\tret;
}
.func (.reg .f64 o) sq(.reg .f64 x)
{
\tmul.rn.f64 o, x, x;
\tret;
}
""", """
cvt.rn.f32.u32 %f1, %r1;
call (%f2), axpy, (0f3F000000, %f1, 3.0);
mov.b32 %r2, %f2;
cvt.rn.f64.u32 %fd1, %r0;
call (%fd2), sq, (%fd1);
cvt.rzi.u32.f64 %r3, %fd2;
st.global.u32 [%rd6], %r2;
st.global.u32 [%rd6+4], %r3;
""", 2),
    2, lambda x: _cols((x.astype(np.float32) * np.float32(0.5) + np.float32(3.0)).view(np.uint32), TID * TID),
    "float registers and float immediates (0f raw, decimal rounded to f32) for float formals; "
    "0.5 * x is exact, so fma's one rounding is numpy's float32 add")

SINK_AND_GUARD = Case(
    "sink_and_guard", module("""
.func (.reg .u32 o) side(.reg .u32 a, .reg .u64 p)
{
\tst.global.u32 [p], a;
\tadd.u32 o, a, 1;
\tret;
}
.func (.reg .u32 o) inc(.reg .u32 a)
{
\tadd.u32 o, a, 1;
\tret;
}
""", """
call (_), side, (%r1, %rd6);
mov.u32 %r2, 99;
setp.lt.u32 %p1, %r0, 20;
@%p1 call (%r2), inc, (%r1);
st.global.u32 [%rd6+4], %r2;
""", 2),
    2, lambda x: _cols(x, np.where(TID < 20, x.astype(np.uint64) + 1, 99) % 2**32),
    "a `_` result discards the value (the callee still runs); a guarded call leaves the result "
    "register of the lanes that skip it unchanged")

INLINED = Case(
    "inlined", module("""
.func (.reg .u32 o) wsum(.reg .u32 v)
{
\t.reg .u32 t;
\tshfl.sync.bfly.b32 t, v, 16, 31, -1;
\tadd.u32 v, v, t;
\tshfl.sync.bfly.b32 t, v, 8, 31, -1;
\tadd.u32 v, v, t;
\tshfl.sync.bfly.b32 t, v, 4, 31, -1;
\tadd.u32 v, v, t;
\tshfl.sync.bfly.b32 t, v, 2, 31, -1;
\tadd.u32 v, v, t;
\tshfl.sync.bfly.b32 t, v, 1, 31, -1;
\tadd.u32 o, v, t;
\tret;
}
.func (.reg .u32 lo, .reg .u32 hi) wminmax(.reg .u32 v)
{
\t.reg .u32 t, u;
\tmov.u32 u, v;
\tshfl.sync.bfly.b32 t, v, 16, 31, -1;
\tmin.u32 v, v, t;
\tshfl.sync.bfly.b32 t, v, 8, 31, -1;
\tmin.u32 v, v, t;
\tshfl.sync.bfly.b32 t, v, 4, 31, -1;
\tmin.u32 v, v, t;
\tshfl.sync.bfly.b32 t, v, 2, 31, -1;
\tmin.u32 v, v, t;
\tshfl.sync.bfly.b32 t, v, 1, 31, -1;
\tmin.u32 lo, v, t;
\tshfl.sync.bfly.b32 t, u, 16, 31, -1;
\tmax.u32 u, u, t;
\tshfl.sync.bfly.b32 t, u, 8, 31, -1;
\tmax.u32 u, u, t;
\tshfl.sync.bfly.b32 t, u, 4, 31, -1;
\tmax.u32 u, u, t;
\tshfl.sync.bfly.b32 t, u, 2, 31, -1;
\tmax.u32 u, u, t;
\tshfl.sync.bfly.b32 t, u, 1, 31, -1;
\tmax.u32 hi, u, t;
\tret;
}
""", """
call (%r2), wsum, (%r1);
call (%r3, %r4), wminmax, (%r1);
st.global.u32 [%rd6], %r2;
st.global.u32 [%rd6+4], %r3;
st.global.u32 [%rd6+8], %r4;
""", 3),
    3, lambda x: _cols(np.repeat(x.reshape(-1, 32).astype(np.uint64).sum(axis=1) % 2**32, 32),
                       np.repeat(x.reshape(-1, 32).min(axis=1), 32), np.repeat(x.reshape(-1, 32).max(axis=1), 32)),
    "functions that exchange values within the warp (the host JIT and the AMD targets lower "
    "them inline) with `.reg` formals, one and two results: per warp the sum, min and max")

CASES = [REG_ARGS, MIXED_SPACES, IMMEDIATES, TWO_RESULTS, RECURSION, INDIRECT, FLOATS, SINK_AND_GUARD, INLINED]
BY_NAME = {c.name: c for c in CASES}


def run(case: Case, device: str, inp: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(ptxvm's output, the expected output) of ``case`` on ``device`` (an executor name)."""
    import ptxvm
    x = inputs() if inp is None else inp
    out = np.zeros(THREADS * case.nout, dtype=np.uint32)
    ptxvm.Module(case.ptx, f"{case.name}.ptx")["k"](1, THREADS, (x.copy(), out), device=device)
    return out.reshape(THREADS, case.nout), case.expected(x)

