"""Kernel ``i`` of a campaign, drawn from ``(seed, i)`` alone.

The generator is a set of hypothesis strategies (``ptxvm.testing.ptxgen``). A
hypothesis *test* chooses its examples from a run's history (and, since 6.1xx,
from constants in the modules loaded in the process), so N machines running one
would not split a campaign, and one machine could not redraw kernel 1234 alone.
Here every kernel is one hypothesis draw from a random source seeded by a hash
of ``(seed, index, attempt)``, through a provider that only uses hypothesis's
fixed global constants: the same kernel in any process, on any machine, in
any order. Only this module touches hypothesis's internals (tested with
hypothesis 6.170); the draw is checked by tests/campaign (shard determinism).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, fields, is_dataclass
from functools import cache
from random import Random

from ..testing.ptxgen import BLOCKS, GRIDS, GeneratedKernel, build_kernel
from ..testing.ptxgen.program import Layout
from .spec import CampaignError, Features, Spec

MAX_ATTEMPTS = 2000        # redraws to satisfy --features +X/-Y before giving up


@dataclass(frozen=True, eq=False)
class Drawn:
    """A drawn kernel with what it was made of: the shrinker rebuilds variants from these."""

    chunks: tuple
    layout: Layout
    data_seed: int
    attempt: int

    def kernel(self) -> GeneratedKernel:
        return build_kernel(self.chunks, self.layout, self.data_seed)


def _random(seed: int, index: int, attempt: int) -> Random:
    digest = hashlib.sha256(f"ptxvm-fuzz:{seed}:{index}:{attempt}".encode()).digest()
    return Random(int.from_bytes(digest[:16], "little"))


@cache
def _machinery():
    """hypothesis's ConjectureData, BuildContext and a provider without local constants."""
    import hypothesis
    try:
        from hypothesis.control import BuildContext
        from hypothesis.internal.conjecture.choice import choice_permitted
        from hypothesis.internal.conjecture.data import ConjectureData
        from hypothesis.internal.conjecture.providers import GLOBAL_CONSTANTS, HypothesisProvider
    except ImportError as e:
        raise CampaignError(f"ptxvm fuzz draws kernels through hypothesis's internals as of hypothesis 6.170; "
                            f"hypothesis {hypothesis.__version__} lacks them ({e}): pip install "
                            "'hypothesis>=6.170'") from None

    permitted: dict = {}

    class FixedConstants(HypothesisProvider):
        """Draws hypothesis's fixed edge constants (2**31, NaN, ...) now and then, never the
        constants it collects from loaded modules (those differ between processes)."""

        def _maybe_draw_constant(self, choice_type, constraints, *, p: float = 0.05):
            if self._random.random() > p:
                return None
            key = (choice_type, repr(sorted(constraints.items(), key=lambda kv: kv[0])))
            if key not in permitted:
                permitted[key] = tuple(c for c in GLOBAL_CONSTANTS.set_for_type(choice_type)
                                       if choice_permitted(c, constraints))
            pool = permitted[key]
            return self._random.choice(pool) if pool else None

    return ConjectureData, BuildContext, FixedConstants


@cache
def _strategy(features: Features, max_instructions: int):
    from hypothesis import strategies as st

    from ..testing.ptxgen.strategies import program
    return st.tuples(st.sampled_from(GRIDS), st.sampled_from(BLOCKS),
                     program(max_instructions, features.known_bugs, features.calls), st.integers(0, 2**32 - 1))


def _draw_once(spec: Spec, index: int, attempt: int) -> Drawn:
    ConjectureData, BuildContext, provider = _machinery()
    data = ConjectureData(random=_random(spec.seed, index, attempt), provider=provider)
    with BuildContext(data, is_final=False, wrapped_test=None):
        grid, block, chunks, data_seed = data.draw(_strategy(spec.features, spec.max_instructions))
    return Drawn(tuple(chunks), Layout(grid, block), data_seed, attempt)


def draw(spec: Spec, index: int) -> Drawn:
    """Kernel ``index`` of the campaign: the first draw of ``(seed, index, attempt)``,
    attempt = 0, 1, ..., that has every required and no forbidden feature."""
    from hypothesis.errors import StopTest
    f = spec.features
    for attempt in range(MAX_ATTEMPTS):
        try:
            d = _draw_once(spec, index, attempt)
        except StopTest:            # the draw ran past hypothesis's size bound: draw again
            continue
        if not (f.require or f.forbid):
            return d
        have = features_of(d.chunks)
        if all(x in have for x in f.require) and not any(x in have for x in f.forbid):
            return d
    raise CampaignError(f"--features {f.text()}: no kernel of {MAX_ATTEMPTS} draws has these features "
                        "(is a required opcode or chunk kind spelled as the generator writes it?)")


def features_of(chunks) -> set[str]:
    """Chunk kinds (class names, lower case) and opcodes (first dotted part) in ``chunks``,
    nested bodies included. An ``approx`` chunk's instruction counts as its opcode, not as an
    ``inst``; a ``partialwarp``'s warp operation counts as a ``warp`` too."""
    from ..testing.ptxgen.isa import Variant
    from ..testing.ptxgen.program import Imm
    out: set[str] = set()

    def walk(c, inner: bool = False) -> None:
        if isinstance(c, tuple):
            for x in c:
                walk(x)
            return
        if not is_dataclass(c) or isinstance(c, (Variant, Imm)):
            return
        kind = type(c).__name__.lower()
        if not inner:
            out.add(kind)
        variant = getattr(c, "variant", None)
        if isinstance(variant, Variant):
            out.add(variant.opcode.split(".")[0])
        op = getattr(c, "op", None)
        if isinstance(op, str) and kind in ("warp", "barrier", "special") and op[:1].isalpha():
            out.add(op.split(".")[0])          # special registers (%laneid...) are not opcodes
        for fld in fields(c):
            v = getattr(c, fld.name)
            if isinstance(v, tuple) or is_dataclass(v):
                walk(v, inner=kind == "approx")
    walk(chunks)
    return out
