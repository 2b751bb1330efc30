"""Atomics of many lanes on few addresses on the interpreter (interp/atomic_order.py: scans and
folds instead of a round per lane) against a sequential model written from the ISA (PTX ISA
§9.7.13.5 atom: each thread's operation reads the old value and writes op(old, b), one after
another; the interpreter's order is the threads' linear order), old values and final memory
bit for bit. Each case also runs with the scans disabled (every address by rounds), the
interpreter's plain definition, which must give the same bits."""

from __future__ import annotations

import numpy as np
import pytest

import ptxvm
from ptxvm.interp import atomic_order

HEAD = ".version 7.8\n.target sm_80\n.address_size 64\n"

# thread g: d = atom.OP.TYPE [mem + (g / SPREAD % K) * size], vals[g] (cas: cmps[g], vals[g]); outs[g] = d
KERNEL = HEAD + """.visible .entry k(.param .u64 mem, .param .u64 vals, .param .u64 cmps, .param .u64 outs,
                              .param .u32 nk, .param .u32 spread)
{{
    .reg .b32 %r<8>;
    .reg .b64 %rd<12>;
    .reg .{reg} %v<4>;
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, %ctaid.x;
    mov.u32 %r3, %ntid.x;
    mad.lo.u32 %r1, %r2, %r3, %r1;
    ld.param.u32 %r4, [nk];
    ld.param.u32 %r5, [spread];
    div.u32 %r6, %r1, %r5;
    rem.u32 %r6, %r6, %r4;
    ld.param.u64 %rd1, [mem];
    ld.param.u64 %rd2, [vals];
    ld.param.u64 %rd3, [cmps];
    ld.param.u64 %rd4, [outs];
    mul.wide.u32 %rd5, %r6, {size};
    add.u64 %rd5, %rd1, %rd5;
    mul.wide.u32 %rd6, %r1, {size};
    add.u64 %rd7, %rd2, %rd6;
    add.u64 %rd8, %rd3, %rd6;
    add.u64 %rd9, %rd4, %rd6;
    ld.global.{ty} %v1, [%rd7];
    ld.global.{ty} %v2, [%rd8];
    {atom}
    st.global.{ty} [%rd9], %v3;
    ret;
}}
"""

_REG = {"u32": "b32", "s32": "b32", "b32": "b32", "u64": "b64", "s64": "b64", "b64": "b64", "f32": "f32", "f64": "f64"}
_NP = {"u32": np.uint32, "s32": np.int32, "b32": np.uint32, "u64": np.uint64, "s64": np.int64, "b64": np.uint64,
       "f32": np.float32, "f64": np.float64}


CANONICAL_NAN32 = np.array([0x7FFFFFFF], np.uint32).view(np.float32)[0]


def _model_step(op: str, ty: str, cur, v, c):
    """One thread's operation (ISA §9.7.13.5), in the type's own arithmetic."""
    t = _NP[ty]
    if op == "add":
        if ty == "f32":
            r = np.float32(cur) + np.float32(v)
            return CANONICAL_NAN32 if np.isnan(r) else r     # every f32 NaN result (§9.7.3)
        return t(cur) + t(v) if ty == "f64" else t((int(cur) + int(v)) % (1 << (8 * t().itemsize)) if ty[0] != "s"
                                                  else np.array(int(cur) + int(v)).astype(np.int64).astype(t))
    if op == "min":
        return min(cur, v)
    if op == "max":
        return max(cur, v)
    if op == "and":
        return t(int(cur) & int(v))
    if op == "or":
        return t(int(cur) | int(v))
    if op == "xor":
        return t(int(cur) ^ int(v))
    if op == "exch":
        return v
    if op == "cas":
        return v if cur == c else cur
    if op == "inc":
        return t(0) if cur >= v else t(int(cur) + 1)
    if op == "dec":
        return v if cur == 0 or cur > v else t(int(cur) - 1)
    raise AssertionError(op)


def _model(op, ty, mem, vals, cmps, nk, spread):
    mem = mem.copy()
    outs = np.empty_like(vals)
    with np.errstate(all="ignore"):
        for g in range(vals.size):
            k = (g // spread) % nk
            outs[g] = mem[k]
            mem[k] = _model_step(op, ty, mem[k], vals[g], cmps[g])
    return mem, outs


def _values(op, ty, rng, n):
    t = _NP[ty]
    if ty[0] == "f":
        v = (rng.standard_normal(n) * np.exp2(rng.integers(-30, 30, n))).astype(t)
        return v, np.zeros(n, t), np.zeros(8, t)
    info = np.iinfo(t)
    if op in ("inc", "dec"):
        v = np.full(n, 37, t)
        v[rng.random(n) < 0.1] = 5                     # a bound that differs between lanes
        return v, np.zeros(n, t), rng.integers(0, 50, 8).astype(t)
    if op == "cas":
        # compare values that match the memory now and then: successes along the way
        v = rng.integers(0, 6, n).astype(t)
        return v, rng.integers(0, 6, n).astype(t), rng.integers(0, 6, 8).astype(t)
    lo, hi = (info.min, info.max) if op != "add" else (info.min // 4, info.max // 4)
    v = rng.integers(lo, hi, n, dtype=t, endpoint=True)
    return v, np.zeros(n, t), rng.integers(lo, hi, 8, dtype=t, endpoint=True)


def _run(op, ty, nk, spread, seed=0, nan_at=None):
    rng = np.random.default_rng(seed)
    n = 16 * 128
    vals, cmps, mem = _values(op, ty, rng, n)
    if nan_at is not None:
        vals[nan_at] = np.nan
    size = np.dtype(_NP[ty]).itemsize
    atom = (f"atom.global.cas.{ty} %v3, [%rd5], %v2, %v1;" if op == "cas" else
            f"atom.global.{op}.{ty} %v3, [%rd5], %v1;")
    k = ptxvm.Module(KERNEL.format(reg=_REG[ty], ty=ty, size=size, atom=atom))["k"]
    want_mem, want_out = _model(op, ty, mem, vals, cmps, nk, spread)
    results = []
    for scans in (True, False):
        m, out = mem.copy(), np.zeros_like(vals)
        saved = atomic_order.ROUNDS_WORTH
        atomic_order.ROUNDS_WORTH = saved if scans else 1 << 30
        try:
            k(16, 128, (m, vals, cmps, out, np.uint32(nk), np.uint32(spread)), device="interp")
        finally:
            atomic_order.ROUNDS_WORTH = saved
        results.append((m, out))
    bits = lambda a: a.view(f"u{a.dtype.itemsize}").tolist()
    for m, out in results:
        assert bits(m[:nk]) == bits(want_mem[:nk].astype(_NP[ty]))
        assert bits(out) == bits(want_out.astype(_NP[ty]))


INT_CASES = [("add", ty) for ty in ("u32", "s32", "u64")] + \
            [(op, ty) for op in ("min", "max") for ty in ("u32", "s32", "u64", "s64")] + \
            [(op, ty) for op in ("and", "or", "xor", "exch") for ty in ("b32", "b64")] + \
            [("cas", "b32"), ("cas", "b64"), ("inc", "u32"), ("dec", "u32")]


@pytest.mark.parametrize("op,ty", INT_CASES)
@pytest.mark.parametrize("nk,spread", [(1, 1), (3, 1), (5, 64)])
def test_integer_atomics_many_lanes_per_address(op, ty, nk, spread):
    _run(op, ty, nk, spread)


@pytest.mark.parametrize("ty", ["f32", "f64"])
@pytest.mark.parametrize("nk,spread", [(1, 1), (3, 1), (7, 200)])
def test_float_add_keeps_the_lane_order_of_roundings(ty, nk, spread):
    _run("add", ty, nk, spread, seed=3)


def test_float_add_meeting_a_nan_follows_the_nan_policy():
    _run("add", "f32", 2, 1, seed=5, nan_at=700)
