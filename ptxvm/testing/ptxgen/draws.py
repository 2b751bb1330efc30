"""Shared hypothesis building blocks of the generator's strategies."""

from __future__ import annotations

from functools import cache

from hypothesis import strategies as st

from .program import POOL

# Strategies are built once and reused: hypothesis validates each new strategy
# object, which costs more than the draw itself.
pick = cache(st.sampled_from)
ints = cache(st.integers)
BOOL = st.booleans()
WIDE = st.integers(0, 2**62)
# One value per generated program (st.shared draws it once per example).
SEED = st.shared(st.integers(0, 2**64 - 1), key="ptxvm.testing.ptxgen.seed")
MIX, MIX2 = 0x9E3779B97F4A7C15, 0xBF58476D1CE4E5B9


def spread(draw) -> int:
    """A well-mixed 64-bit choice value, 0 when shrunk.

    Hypothesis's integers repeat a few hundred favourite values (0, 2**62, values
    of earlier examples), which would starve the rare entries of long lists;
    mixing each draw with the program's seed makes choices close to uniform
    while every draw still shrinks (and draw and seed 0 give index 0)."""
    h = ((draw(WIDE) ^ (draw(SEED) * MIX)) % 2**64) * MIX2 % 2**64
    return h ^ (h >> 31)


def any_of(draw, seq):
    """An element of ``seq``, close to uniformly; shrinks to the first one."""
    return seq[spread(draw) % len(seq)]


@cache
def maybe(s: st.SearchStrategy) -> st.SearchStrategy:
    return st.none() | s


@cache
def reg(cls: str) -> st.SearchStrategy[int]:
    return st.integers(0, POOL[cls] - 1)
