"""What a campaign is: its seed, size, executors, generator features and shard.

A campaign is a pure function of its :class:`Spec`: kernel ``i`` is drawn from
``(seed, i)`` alone (``draw.py``), so a shard (``--shard i/N``: the indices
``k`` with ``k % N == i``) holds exactly its part of the unsharded campaign, and
two machines given the same spec produce the same kernels.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field

from ..errors import PtxError

# Chunk kinds of the generator (ptxvm.testing.ptxgen.program), by the class name of the chunk.
CHUNK_KINDS = ("inst", "approx", "carry", "mem", "atomic", "special", "if", "loop", "switch", "exchange",
               "warp", "partialwarp", "barrier", "call")
# Generator switches (arguments of ptxgen's program strategy).
SWITCHES = ("calls", "known-bugs")


class CampaignError(PtxError):
    """A campaign cannot start or continue: a bad --shard, --features, or a results folder
    that belongs to another campaign."""

    usage = True


@dataclass(frozen=True)
class Features:
    """What the generator draws: its switches, and chunk kinds or opcodes every kernel must
    contain (``+cvt``) or must not contain (``-warp``), obtained by redrawing (see draw.py)."""

    calls: bool = False
    known_bugs: bool = False
    require: tuple[str, ...] = ()
    forbid: tuple[str, ...] = ()

    def text(self) -> str:
        parts = [n for n, on in (("calls", self.calls), ("known-bugs", self.known_bugs)) if on]
        return ",".join(parts + [f"+{x}" for x in self.require] + [f"-{x}" for x in self.forbid]) or "default"


def parse_features(text: str | None) -> Features:
    """``calls,known-bugs,+cvt,-warp`` (chunk kinds: CHUNK_KINDS; anything else after +/- is an
    opcode, the first dotted part of an instruction: cvt, shfl, atom...)."""
    if not text or text.strip() == "default":
        return Features()
    on: set[str] = set()
    require: list[str] = []
    forbid: list[str] = []
    for raw in text.split(","):
        item = raw.strip()
        if not item:
            continue
        if item[0] in "+-":
            name = item[1:].strip().lower()
            if not re.fullmatch(r"[a-z][a-z0-9_]*", name):
                raise CampaignError(f"--features {item!r}: expected +NAME or -NAME with a chunk kind "
                                    f"({', '.join(CHUNK_KINDS)}) or an opcode (cvt, shfl, ...)")
            (require if item[0] == "+" else forbid).append(name)
        elif item in SWITCHES:
            on.add(item)
        else:
            raise CampaignError(f"--features {item!r}: not a feature; use {', '.join(SWITCHES)}, "
                                "+KIND/-KIND or +OPCODE/-OPCODE (e.g. calls,+cvt,-warp)")
    both = set(require) & set(forbid)
    if both:
        raise CampaignError(f"--features: {', '.join(sorted(both))} both required and forbidden")
    return Features("calls" in on, "known-bugs" in on, tuple(require), tuple(forbid))


@dataclass(frozen=True)
class Shard:
    index: int = 0
    count: int = 1

    def text(self) -> str:
        return f"{self.index}/{self.count}"

    def indices(self, total: int) -> range:
        return range(self.index, total, self.count)


def parse_shard(text: str | None) -> Shard:
    m = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", text or "0/1")
    if not m or int(m[2]) < 1 or int(m[1]) >= int(m[2]):
        raise CampaignError(f"--shard {text!r}: expected I/N with 0 <= I < N (e.g. 0/4 ... 3/4)")
    return Shard(int(m[1]), int(m[2]))


@dataclass(frozen=True)
class Spec:
    seed: int
    count: int
    executors: tuple[str, ...] = ("interp", "cpu")
    features: Features = field(default_factory=Features)
    max_instructions: int = 40
    shard: Shard = field(default_factory=Shard)
    shrink_probes: int = 150            # executions the shrinker may spend per failing kernel
    plugins: tuple[str, ...] = ()       # modules (or .py files) imported first: they may register executors

    def kernel_id(self, index: int) -> str:
        return f"{self.seed}-{index}"

    def indices(self) -> range:
        return self.shard.indices(self.count)

    def identity(self) -> dict:
        """What makes two runs the same campaign (a results folder may only be resumed by it):
        not its count (a resumed campaign may grow) nor its shrinking budget."""
        return {"seed": self.seed, "executors": list(self.executors), "features": self.features.text(),
                "max_instructions": self.max_instructions, "shard": self.shard.text()}

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> Spec:
        d = json.loads(text)
        f = d.pop("features")
        s = d.pop("shard")
        return cls(features=Features(f["calls"], f["known_bugs"], tuple(f["require"]), tuple(f["forbid"])),
                   shard=Shard(**s), executors=tuple(d.pop("executors")), plugins=tuple(d.pop("plugins")), **d)
