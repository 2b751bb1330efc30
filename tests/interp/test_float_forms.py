"""f32 min/max with .abs / .xorsign.abs / three sources, and cvt.{rn,rz}{.satfinite}{.relu}.tf32.f32,
on both executors against an independent bit-level model written from the PTX ISA text.

min/max (PTX ISA 9.0 §9.7.3.11-12, Semantics):
    if (.xorsign && !isPresent(c)) xorsign = getSignBit(a) ^ getSignBit(b);
    if (.abs) { a = |a|; b = |b|; if (isPresent(c)) c = |c|; }
    d = two_inputs_min(d, a, b); if (isPresent(c)) d = two_inputs_min(d, d, c);
    if (.xorsign && !isPresent(c) && !isNaN(d)) setSignBit(d, xorsign);
  two_inputs: with .NaN any NaN input gives NaN, without it a NaN input is ignored (both NaN: NaN);
  -0.0 < +0.0; .ftz flushes subnormal inputs to sign-preserving zero.  NaN results are the f32
  canonical NaN 0x7FFFFFFF.

cvt to tf32 (§9.7.9.21; §5.2.5.1 for the format): the .b32 result is an f32 bit pattern with the low
13 bits zero (sign, exponent, 10 fraction bits); .rn ties to even, .rz truncates; .satfinite: a
magnitude above MAX_NORM (0x7F7FE000), infinities included, gives MAX_NORM with the sign kept;
.relu: a negative result gives +0.0 (-0.0 too, as for f16/bf16 destinations); a NaN gives
0x7FFFFFFF, the f32 canonical NaN, as cvt.rna does (the ISA leaves the tf32 register layout
implementation defined, §5.2.5.1; one NaN for every tf32 form is the project's choice).

The model below works on Python ints and struct-decoded floats only (no ptxvm code).
"""

from __future__ import annotations

import itertools
import struct

import numpy as np
import pytest

import ptxvm

CANON = 0x7FFFFFFF
SIGN = 0x80000000


def _f(bits: int) -> float:
    return struct.unpack("<f", struct.pack("<I", bits))[0]


def _bits(x: float) -> int:
    return struct.unpack("<I", struct.pack("<f", x))[0]


def _isnan(bits: int) -> bool:
    return (bits & 0x7FFFFFFF) > 0x7F800000


# --------------------------------------------------------------------------- kernel harness

def _kernel(bodies: list[str], sm: int = 100) -> str:
    """One thread per input triple (a, b, c) in %r0..%r2; instruction k leaves its result in
    %r9, stored at out[tid * K + k]."""
    k = len(bodies)
    parts = []
    for i, body in enumerate(bodies):
        parts.append(f"  {body}\n  st.global.b32 [%a7+{4 * i}], %r9;")
    ver = "8.8" if sm >= 100 else "8.0"
    return f""".version {ver}
.target sm_{sm}
.address_size 64
.visible .entry k(.param .u64 pa, .param .u64 pb, .param .u64 pc, .param .u64 po)
{{
  .reg .b64 %a<8>;
  .reg .b32 %r<10>;
  .reg .b32 %t;
  ld.param.u64 %a0, [pa];
  ld.param.u64 %a1, [pb];
  ld.param.u64 %a2, [pc];
  ld.param.u64 %a3, [po];
  mov.u32 %t, %tid.x;
  mul.wide.u32 %a4, %t, 4;
  add.s64 %a5, %a0, %a4;
  ld.global.b32 %r0, [%a5];
  add.s64 %a5, %a1, %a4;
  ld.global.b32 %r1, [%a5];
  add.s64 %a5, %a2, %a4;
  ld.global.b32 %r2, [%a5];
  mul.wide.u32 %a6, %t, {4 * k};
  add.s64 %a7, %a3, %a6;
{chr(10).join(parts)}
  ret;
}}"""


def _run(bodies: list[str], triples: list[tuple[int, int, int]], device: str) -> list[list[int]]:
    """Results [thread][instruction] as ints."""
    n = len(triples)
    a, b, c = (np.array([t[i] for t in triples], np.uint32) for i in range(3))
    out = np.zeros(n * len(bodies), np.uint32)
    fn = ptxvm.Module(_kernel(bodies))["k"]
    # one block of at most 1024 threads per launch
    step = 1024
    for lo in range(0, n, step):
        hi = min(n, lo + step)
        o = np.zeros((hi - lo) * len(bodies), np.uint32)
        fn(1, hi - lo, [a[lo:hi].copy(), b[lo:hi].copy(), c[lo:hi].copy(), o], device=device)
        out[lo * len(bodies):hi * len(bodies)] = o
    return out.reshape(n, len(bodies)).tolist()


# --------------------------------------------------------------------------- min/max model

def _flush(bits: int) -> int:
    """Subnormal -> zero of the same sign (.ftz)."""
    if (bits >> 23) & 0xFF == 0 and bits & 0x7FFFFF:
        return bits & SIGN
    return bits


def _two(x: int, y: int, nan: bool, want_min: bool) -> int:
    if _isnan(x) and _isnan(y):
        return CANON
    if _isnan(x) or _isnan(y):
        if nan:
            return CANON
        return y if _isnan(x) else x
    # order by value, -0.0 below +0.0
    kx = (_f(x), 0 if x & SIGN else 1)
    ky = (_f(y), 0 if y & SIGN else 1)
    if want_min:
        return x if kx <= ky else y
    return x if kx >= ky else y


def model_minmax(op: str, a: int, b: int, c: int | None = None, *, ftz=False, nan=False, abs_=False,
                 xorsign=False) -> int:
    xs = [a, b] + ([c] if c is not None else [])
    if ftz:
        xs = [_flush(x) for x in xs]
    sign = (xs[0] ^ xs[1]) & SIGN
    if abs_:
        xs = [x & 0x7FFFFFFF for x in xs]
    d = _two(xs[0], xs[1], nan, op == "min")
    if c is not None:
        d = _two(d, xs[2], nan, op == "min")
    if _isnan(d):
        return CANON
    if xorsign:
        d = (d & 0x7FFFFFFF) | sign
    return d


VALS = [
    0x00000000, 0x80000000,              # +-0
    _bits(1.0), _bits(-1.0), _bits(2.0), _bits(-2.0), _bits(1.5), _bits(-0.5),
    0x7F800000, 0xFF800000,              # +-inf
    0x7FC00000, 0xFFC00001, 0x7F800001,  # NaNs: quiet, negative with payload, signalling
    0x00000001, 0x80000001, 0x007FFFFF,  # subnormals
    0x7F7FFFFF, 0x00800000,              # MAX_NORM, smallest normal
]


def _two_input_forms():
    forms = []
    for op, ftz, nan, xs in itertools.product(("min", "max"), (False, True), (False, True), (False, True)):
        mods = (".ftz" if ftz else "") + (".NaN" if nan else "") + (".xorsign.abs" if xs else "")
        forms.append((f"{op}{mods}.f32 %r9, %r0, %r1;",
                      dict(op=op, ftz=ftz, nan=nan, abs_=xs, xorsign=xs)))
    return forms


def _three_input_forms():
    forms = []
    for op, ftz, nan, ab in itertools.product(("min", "max"), (False, True), (False, True), (False, True)):
        mods = (".ftz" if ftz else "") + (".NaN" if nan else "") + (".abs" if ab else "")
        forms.append((f"{op}{mods}.f32 %r9, %r0, %r1, %r2;", dict(op=op, ftz=ftz, nan=nan, abs_=ab)))
    return forms


def test_minmax_two_inputs_match_model(executor) -> None:
    forms = _two_input_forms()
    triples = [(x, y, 0) for x in VALS for y in VALS]
    got = _run([f[0] for f in forms], triples, executor)
    for (x, y, _), row in zip(triples, got):
        for (body, kw), r in zip(forms, row):
            kw = dict(kw)
            want = model_minmax(kw.pop("op"), x, y, **kw)
            assert r == want, (body, hex(x), hex(y), hex(r), hex(want))


SMALL = [0x00000000, 0x80000000, _bits(1.0), _bits(-1.0), _bits(-3.0), 0x7F800000, 0xFF800000,
         0x7FC00000, 0xFFC00001, 0x80000001]


def test_minmax_three_inputs_match_model(executor) -> None:
    forms = _three_input_forms()
    triples = list(itertools.product(SMALL, SMALL, SMALL))
    got = _run([f[0] for f in forms], triples, executor)
    for (x, y, z), row in zip(triples, got):
        for (body, kw), r in zip(forms, row):
            kw = dict(kw)
            want = model_minmax(kw.pop("op"), x, y, z, **kw)
            assert r == want, (body, hex(x), hex(y), hex(z), hex(r), hex(want))


M2, P2, P3, M3, M1, P1 = _bits(-2.0), _bits(2.0), _bits(3.0), _bits(-3.0), _bits(-1.0), _bits(1.0)
QNAN, NQNAN = 0x7FC00000, 0xFFC00000

# hand-worked from the ISA text: (instruction, a, b, c, expected)
HAND = [
    ("min.xorsign.abs.f32 %r9, %r0, %r1;", M2, P3, 0, M2),           # min(2,3)=2, sign 1^0
    ("max.xorsign.abs.f32 %r9, %r0, %r1;", M2, M3, 0, P3),           # max(2,3)=3, sign 1^1
    ("max.xorsign.abs.f32 %r9, %r0, %r1;", P2, M3, 0, M3),           # max(2,3)=3, sign 0^1
    ("min.xorsign.abs.f32 %r9, %r0, %r1;", NQNAN, P1, 0, M1),        # NaN ignored; NaN's sign counts
    ("min.xorsign.abs.f32 %r9, %r0, %r1;", QNAN, M1, 0, M1),
    ("min.NaN.xorsign.abs.f32 %r9, %r0, %r1;", QNAN, M1, 0, CANON),  # NaN result: no sign applied
    ("max.xorsign.abs.f32 %r9, %r0, %r1;", NQNAN, QNAN, 0, CANON),
    ("min.xorsign.abs.f32 %r9, %r0, %r1;", 0x80000000, 0x00000000, 0, 0x80000000),  # +0, sign 1
    ("max.xorsign.abs.f32 %r9, %r0, %r1;", 0x80000000, 0x80000000, 0, 0x00000000),  # +0, sign 0
    ("min.xorsign.abs.f32 %r9, %r0, %r1;", 0x80000001, P1, 0, 0x80000001),          # subnormal kept
    ("min.ftz.xorsign.abs.f32 %r9, %r0, %r1;", 0x80000001, P1, 0, 0x80000000),      # flushed to -0
    ("max.ftz.xorsign.abs.f32 %r9, %r0, %r1;", 0x007FFFFF, 0x80000000, 0, 0x80000000),
    ("max.xorsign.abs.f32 %r9, %r0, %r1;", 0xFF800000, P1, 0, 0xFF800000),          # |-inf|, sign 1
    ("min.f32 %r9, %r0, %r1, %r2;", M1, P2, M3, M3),
    ("min.abs.f32 %r9, %r0, %r1, %r2;", M1, P2, M3, P1),
    ("max.abs.f32 %r9, %r0, %r1, %r2;", M1, P2, M3, P3),
    ("min.f32 %r9, %r0, %r1, %r2;", 0x00000000, 0x80000000, 0x00000000, 0x80000000),  # -0 < +0
    ("max.f32 %r9, %r0, %r1, %r2;", 0x80000000, 0x00000000, 0x80000000, 0x00000000),
    ("min.abs.f32 %r9, %r0, %r1, %r2;", 0x80000000, P1, P2, 0x00000000),              # |-0| = +0
    ("max.f32 %r9, %r0, %r1, %r2;", QNAN, QNAN, M3, M3),               # d = NaN, then NaN ignored
    ("max.NaN.f32 %r9, %r0, %r1, %r2;", P1, P2, QNAN, CANON),
    ("min.NaN.abs.f32 %r9, %r0, %r1, %r2;", NQNAN, P2, P3, CANON),
    ("max.abs.f32 %r9, %r0, %r1, %r2;", NQNAN, QNAN, NQNAN, CANON),
    ("min.ftz.f32 %r9, %r0, %r1, %r2;", 0x80000001, 0x00000001, P1, 0x80000000),
    ("min.f32 %r9, %r0, %r1, %r2;", 0x80000001, 0x00000001, P1, 0x80000001),
    ("max.ftz.abs.f32 %r9, %r0, %r1, %r2;", 0x80000001, 0x00000000, 0x80000000, 0x00000000),
]


def test_minmax_hand_worked(executor) -> None:
    for body, a, b, c, want in HAND:
        (row,) = _run([body], [(a, b, c)], executor)
        assert row[0] == want, (body, hex(a), hex(b), hex(c), hex(row[0]), hex(want))
        # the model agrees with the hand-worked value
        op = body.split(".")[0]
        mods = body.split()[0].split(".")
        three = body.count(",") == 3
        m = model_minmax(op, a, b, c if three else None, ftz="ftz" in mods, nan="NaN" in mods,
                         abs_="abs" in mods, xorsign="xorsign" in mods)
        assert m == want, (body, hex(m), hex(want))


# --------------------------------------------------------------------------- cvt tf32 model

TF32_NAN = 0x7FFFFFFF
TF32_MAX = 0x7F7FE000


def model_tf32(x: int, rnd: str, relu=False, satfinite=False) -> int:
    if _isnan(x):
        return TF32_NAN
    sign, mag = x & SIGN, x & 0x7FFFFFFF
    keep, low = mag & ~0x1FFF, mag & 0x1FFF
    if rnd == "rn" and (low > 0x1000 or (low == 0x1000 and (keep >> 13) & 1)):
        keep += 0x2000                       # may carry into the exponent, up to infinity
    if satfinite and mag > TF32_MAX:         # |input| > MAX_NORM (infinity too)
        keep = TF32_MAX
    d = sign | keep
    if relu and sign:
        d = 0
    return d


TF32_VALS = [
    0x00000000, 0x80000000, _bits(1.0), _bits(-1.0),
    0x3F801000, 0x3F803000, 0x3F800FFF, 0x3F801001, 0xBF801000, 0xBF803000,   # ties / near ties
    0x7F7FE000, 0x7F7FEFFF, 0x7F7FF000, 0x7F7FFFFF, 0xFF7FF000, 0xFF7FFFFF,   # around MAX_NORM
    0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00001, 0x7F800001, 0x7FFFFFFF,   # inf, NaN
    0x00000001, 0x00001000, 0x00003000, 0x00001001, 0x807FFFFF, 0x007FF000,   # subnormals
    _bits(3.14159265), _bits(-1e-30), _bits(65504.0), _bits(1e30),
]


def _tf32_forms():
    forms = []
    for rnd, sf, relu in itertools.product(("rn", "rz"), (False, True), (False, True)):
        mods = (".satfinite" if sf else "") + (".relu" if relu else "")
        forms.append((f"cvt.{rnd}{mods}.tf32.f32 %r9, %r0;", dict(rnd=rnd, satfinite=sf, relu=relu)))
    return forms


def test_cvt_tf32_rn_rz_match_model(executor) -> None:
    import random
    rng = random.Random(11)
    xs = TF32_VALS + [rng.getrandbits(32) for _ in range(300)]
    forms = _tf32_forms()
    got = _run([f[0] for f in forms], [(x, 0, 0) for x in xs], executor)
    for x, row in zip(xs, got):
        for (body, kw), r in zip(forms, row):
            want = model_tf32(x, **kw)
            assert r == want, (body, hex(x), hex(r), hex(want))
            assert r & 0x1FFF == 0 or r == TF32_NAN, (body, hex(x), hex(r))   # the tf32 layout


TF32_HAND = [
    ("cvt.rn.tf32.f32 %r9, %r0;", 0x3F801000, 0x3F800000),            # tie, even stays
    ("cvt.rn.tf32.f32 %r9, %r0;", 0x3F803000, 0x3F804000),            # tie, odd rounds up
    ("cvt.rn.tf32.f32 %r9, %r0;", 0xBF803000, 0xBF804000),
    ("cvt.rz.tf32.f32 %r9, %r0;", 0x3F803FFF, 0x3F802000),
    ("cvt.rn.tf32.f32 %r9, %r0;", 0x7F7FF000, 0x7F800000),            # tie above MAX_NORM -> inf
    ("cvt.rn.satfinite.tf32.f32 %r9, %r0;", 0x7F7FF000, TF32_MAX),
    ("cvt.rz.satfinite.tf32.f32 %r9, %r0;", 0xFF800000, 0xFF7FE000),
    ("cvt.rz.tf32.f32 %r9, %r0;", 0xFF800000, 0xFF800000),
    ("cvt.rn.relu.tf32.f32 %r9, %r0;", _bits(-1.0), 0x00000000),
    ("cvt.rn.relu.tf32.f32 %r9, %r0;", 0x80000000, 0x00000000),
    ("cvt.rz.satfinite.relu.tf32.f32 %r9, %r0;", 0xFF800000, 0x00000000),
    ("cvt.rn.relu.tf32.f32 %r9, %r0;", 0xFFC00001, TF32_NAN),
    ("cvt.rz.satfinite.tf32.f32 %r9, %r0;", 0x7F800001, TF32_NAN),
    ("cvt.rn.tf32.f32 %r9, %r0;", 0x00001000, 0x00000000),            # subnormal tie to even (0)
    ("cvt.rn.tf32.f32 %r9, %r0;", 0x00003000, 0x00004000),
    ("cvt.rn.tf32.f32 %r9, %r0;", 0x007FF000, 0x00800000),            # carries into the exponent
]


def test_cvt_tf32_hand_worked(executor) -> None:
    got = _run([h[0] for h in TF32_HAND], [(h[1], 0, 0) for h in TF32_HAND], executor)
    for k, (body, x, want) in enumerate(TF32_HAND):
        r = got[k][k]
        assert r == want, (body, hex(x), hex(r), hex(want))
        mods = body.split()[0].split(".")
        assert model_tf32(x, mods[1], relu="relu" in mods, satfinite="satfinite" in mods) == want, body
