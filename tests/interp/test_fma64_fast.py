"""fma.rn.f64's unscaled fast path (interp/numerics/arith.py ``_ffma64_rn``) against the exact
model (a*b + c in Fractions, rounded to nearest even: tests/models/numerics.py): the lanes it
vouches for must be exact, including ties and cancellations, and every other lane must reach
the exact path through ``ffma``."""

from __future__ import annotations

import numpy as np

from ptxvm.interp import numerics as N
from ptxvm.interp.numerics.arith import _ffma64_rn
from tests.models.numerics import f64_bits, m_fma


def _expect(a, b, c) -> list[int]:
    return [f64_bits(m_fma(float(x), float(y), float(z), "f64", "rn")) for x, y, z in zip(a, b, c)]


def _bits(r) -> list[int]:
    return N.as_bits(np.asarray(r, dtype=np.float64)).tolist()


def _random_operands(rng, n):
    ea, eb = rng.integers(-450, 450, n), rng.integers(-450, 450, n)
    a = np.ldexp(rng.uniform(-2, 2, n), ea)
    b = np.ldexp(rng.uniform(-2, 2, n), eb)
    c = np.ldexp(rng.uniform(-2, 2, n), ea + eb + rng.integers(-60, 60, n))
    cancel = rng.random(n) < 0.3        # c close to -a*b: the bits below the product decide
    c[cancel] = -(a[cancel] * b[cancel]) + np.ldexp(rng.uniform(-1, 1, cancel.sum()),
                                                    (ea + eb)[cancel] - rng.integers(40, 70, cancel.sum()))
    return a, b, c


def _ties(rng, n):
    """a*b + c exactly halfway between two doubles: (1 + m1 u)(1 + m2 u) + (u/2 - m1 m2 u^2),
    u = 2^-52, is 1 + (m1 + m2) u + u/2; scaled by powers of two and signs."""
    m1, m2 = rng.integers(1, 1 << 20, n), rng.integers(1, 1 << 20, n)
    u = 2.0 ** -52
    a = 1 + m1 * u
    b = 1 + m2 * u
    c = np.ldexp(1.0, -53) - np.ldexp((m1 * m2).astype(np.float64), -104)
    e1, e2 = rng.integers(-300, 300, n), rng.integers(-300, 300, n)
    s1, s2 = rng.choice([-1.0, 1.0], n), rng.choice([-1.0, 1.0], n)
    return np.ldexp(a, e1) * s1, np.ldexp(b, e2) * s2, np.ldexp(c, e1 + e2) * s1 * s2


def test_fast_path_is_exact_on_random_and_cancelling_operands():
    rng = np.random.default_rng(7)
    a, b, c = _random_operands(rng, 4000)
    with np.errstate(all="ignore"):
        r, ok = _ffma64_rn(a, b, c)
    assert ok.mean() > 0.95                      # the fast path is the common case
    want = _expect(a, b, c)
    got = _bits(r)
    bad = [i for i in np.flatnonzero(ok) if got[i] != want[i]]
    assert not bad, f"fast path wrong at {[(a[i], b[i], c[i]) for i in bad[:3]]}"
    assert _bits(N.ffma(a, b, c, "rn")) == want


def test_fast_path_breaks_ties_to_even():
    rng = np.random.default_rng(11)
    a, b, c = _ties(rng, 2000)
    with np.errstate(all="ignore"):
        r, ok = _ffma64_rn(a, b, c)
    assert ok.all()
    assert _bits(r) == _expect(a, b, c)


def test_lanes_outside_the_fast_range_go_to_the_exact_path():
    tiny, huge = 2.0 ** -1070, 2.0 ** 1020
    a = np.array([0.0, -0.0, 1.5, tiny, 3.0, 2.0 ** -530, 1.0, np.inf, np.nan, 1e300, 1.0])
    b = np.array([5.0, 2.0, -0.0, 7.0, huge, 2.0 ** -530, 1.0, 1.0, 1.0, 1e10, 2.0 ** -1000])
    c = np.array([-0.0, 0.0, -0.0, 1e-320, 1.0, 2.0 ** -1070, -1.0, 1.0, 1.0, 1.0, 2.0 ** -1060])
    with np.errstate(all="ignore"):
        r, ok = _ffma64_rn(a, b, c)
    assert not ok.any()
    assert _bits(N.ffma(a, b, c, "rn")) == _expect(a, b, c)
