"""mma.sync (PTX ISA 9.0 §9.7.14.5.14) on every executor of EXECUTORS: for every shape x type
combination, lanes hold fragments laid out as the ISA's formulas say (tests/models/fragments.py,
independent of ptxvm.machine.fragments), and D must be A @ B + C exactly (inputs whose products
and sums are exact in the accumulator type, so every summation order agrees)."""

from __future__ import annotations

import numpy as np
import pytest

from models import fragments as M
from models.matrix_harness import (EXECUTORS, exact_values, lanes_of, np_regs, reg_type, register_kernel,
                                   run, vec)

WARPS = 2


def _opcode(shape, at, bt, ct, dt, bitop, sat):
    sat_ = ".satfinite" if sat else ""
    if at == "b1":
        return f"mma.sync.aligned.{shape}.row.col.s32.b1.b1.s32.{bitop}.popc"
    return f"mma.sync.aligned.{shape}.row.col{sat_}.{dt}.{at}.{bt}.{ct}"


def _case(shape, at, bt, ct, dt, rng, bitop="xor", sat=False, values=None):
    """(kernel text, input register arrays, expected D elements [W, 32, n], D register type)."""
    coords = {r: M.mma_layout(shape, r, e) for r, e in (("a", at), ("b", bt), ("c", ct), ("d", dt))}
    (m, k), (_, n) = M.dims(shape, "a"), M.dims(shape, "b")
    a = values[0] if values else exact_values(rng, at, (WARPS, m, k))
    b = values[1] if values else exact_values(rng, bt, (WARPS, k, n))
    c = values[2] if values else exact_values(rng, ct, (WARPS, m, n))
    if at == "b1":
        x = a[..., :, :, None].astype(np.int64), b[..., None, :, :].astype(np.int64)
        d = c + ((x[0] ^ x[1]) if bitop == "xor" else (x[0] & x[1])).sum(axis=-2)
    else:
        d = np.einsum("wik,wkj->wij", a, b) + c
    if sat:
        d = np.clip(d, -(1 << 31), (1 << 31) - 1)
    elif dt == "s32":
        d = (d.astype(np.int64) + (1 << 31)) % (1 << 32) - (1 << 31)
    regs = {}
    for role, elem, mat in (("a", at, a), ("b", bt, b), ("c", ct, c)):
        el = M.encode(lanes_of(mat, coords[role]), elem)
        regs[role] = np.stack([M.pack(w, elem) for w in el])
    counts = {r: regs[r].shape[-1] for r in regs}
    counts["d"] = coords["d"].shape[1] // M.per_reg(dt)
    rts = {"a": reg_type(at, "a"), "b": reg_type(bt, "b"), "c": reg_type(ct, "c"), "d": reg_type(dt, "d")}
    op = _opcode(shape, at, bt, ct, dt, bitop, sat)
    body = f"{op} {vec('d', counts['d'])}, {vec('a', counts['a'])}, {vec('b', counts['b'])}, {vec('c', counts['c'])};"
    text = register_kernel(body, [(r, counts[r], rts[r]) for r in "abc"], [("d", counts["d"], rts["d"])])
    arrays = [np_regs(regs[r], rts[r]) for r in "abc"]
    arrays.append(np.zeros((WARPS, 32, counts["d"]), dtype=np.uint64 if dt == "f64" else np.uint32))
    expect = lanes_of(d, coords["d"])
    return text, arrays, expect, dt


def _check(arrays, expect, dt):
    got = np.stack([M.unpack(w, dt) for w in arrays[-1]])
    if dt in ("f16", "f32", "f64"):
        np.testing.assert_array_equal(M.decode(got, dt), expect)
    else:
        np.testing.assert_array_equal(M.decode(got, "s32"), expect)


@pytest.mark.parametrize("executor", EXECUTORS)
@pytest.mark.parametrize("shape,at,bt,ct,dt,sm", M.MMA_CASES, ids=lambda v: str(v))
def test_mma_every_shape_and_type(executor, shape, at, bt, ct, dt, sm):
    rng = np.random.default_rng(hash((shape, at, bt, ct, dt)) & 0xFFFF)
    text, arrays, expect, dt = _case(shape, at, bt, ct, dt, rng)
    run(text, arrays, 32 * WARPS, executor)
    _check(arrays, expect, dt)


@pytest.mark.parametrize("executor", EXECUTORS)
@pytest.mark.parametrize("shape", ["m8n8k128", "m16n8k256"])
def test_mma_b1_and_popc(executor, shape):
    text, arrays, expect, dt = _case(shape, "b1", "b1", "s32", "s32", np.random.default_rng(7), bitop="and")
    run(text, arrays, 32 * WARPS, executor)
    _check(arrays, expect, dt)


@pytest.mark.parametrize("executor", EXECUTORS)
@pytest.mark.parametrize("sat", [True, False])
def test_mma_s8_satfinite_clamps_and_plain_wraps(executor, sat):
    """.satfinite clamps the exact sum to the s32 range (§9.7.14.5.14); without it the sum wraps."""
    a = np.full((WARPS, 16, 32), 127)
    b = np.full((WARPS, 32, 8), 127)
    c = np.full((WARPS, 16, 8), 2**31 - 1000)
    c[1] = -(2**31) + 1000
    a[1] = -128
    text, arrays, expect, dt = _case("m16n8k32", "s8", "s8", "s32", "s32", None, sat=sat, values=(a, b, c))
    run(text, arrays, 32 * WARPS, executor)
    _check(arrays, expect, dt)
    # the inputs do overflow: the exact sums are 2**31 - 1000 + 516128 and -2**31 + 1000 - 524288
    assert (expect[0] == 2**31 - 1).all() == sat and (expect[1] == -(2**31)).all() == sat


@pytest.mark.parametrize("executor", EXECUTORS)
def test_mma_f32_sum_is_rounded_per_step_in_k_order(executor):
    """The ISA leaves the order and rounding of a tensor-core sum unspecified (§9.7.14.5.14);
    ptxvm's documented rule (isa/instructions.toml, mma notes): D = C, then one f32 rounding per
    k in order. C = 2**24 and sixteen products of 1: every step 2**24 + 1 rounds back to 2**24
    (ties to even), so D is 2**24, where the exact sum 2**24 + 16 is representable."""
    a = np.ones((WARPS, 16, 16))
    b = np.ones((WARPS, 16, 8))
    c = np.full((WARPS, 16, 8), 2.0**24)
    text, arrays, expect, dt = _case("m16n8k16", "f16", "f16", "f32", "f32", None, values=(a, b, c))
    run(text, arrays, 32 * WARPS, executor)
    got = M.decode(np.stack([M.unpack(w, dt) for w in arrays[-1]]), "f32")
    assert (got == 2.0**24).all()
    assert (expect == 2.0**24 + 16).all()            # what an exact (or pairwise) sum would give


@pytest.mark.parametrize("executor", EXECUTORS)
def test_mma_f16_accumulator_rounds_per_step(executor):
    """The same unspecified sum with an f16 accumulator (ptxvm's rule: one f16 rounding per k):
    C = 2048, where the f16 spacing is 2, and sixteen products of 1: each step 2049 ties back to
    2048, where the exact 2064 is an f16."""
    a, b = np.ones((WARPS, 16, 16)), np.ones((WARPS, 16, 8))
    c = np.full((WARPS, 16, 8), 2048.0)
    text, arrays, expect, dt = _case("m16n8k16", "f16", "f16", "f16", "f16", None, values=(a, b, c))
    run(text, arrays, 32 * WARPS, executor)
    got = M.decode(np.stack([M.unpack(w, dt) for w in arrays[-1]]), "f16")
    assert (got == 2048.0).all() and (expect == 2064.0).all()


@pytest.mark.parametrize("executor", EXECUTORS)
@pytest.mark.parametrize("rnd,ulps", [("rn", 0), ("rz", 0), ("rm", 0), ("rp", 4)])
def test_mma_f64_rounding_modifier_applies_to_every_step(executor, rnd, ulps):
    """m8n8k4 .f64 with .rnd: D = C, then four fmas rounded with .rnd (ptxvm's rule). C = 1 and
    products 2**-60: .rp rounds each step up to the next double, four ulps in all (one rounding
    of the exact sum would give one); .rn, .rz and .rm stay at 1."""
    a = np.full((WARPS, 8, 4), 2.0**-30)
    b = np.full((WARPS, 4, 8), 2.0**-30)
    c = np.ones((WARPS, 8, 8))
    text, arrays, _, dt = _case("m8n8k4", "f64", "f64", "f64", "f64", None, values=(a, b, c))
    text = text.replace("m8n8k4.row.col.f64", f"m8n8k4.row.col.{rnd}.f64")
    run(text, arrays, 32 * WARPS, executor)
    got = arrays[-1].view(np.float64)
    assert (got == 1.0 + ulps * 2.0**-52).all()
