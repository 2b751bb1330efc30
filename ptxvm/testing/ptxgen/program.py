"""Program representation of the fuzzer and its rendering to PTX text.

A generated kernel is a list of *chunks* (plain frozen data, drawn by
``strategies``); each renders to a few PTX lines.  Keeping the program
as data until the end lets hypothesis shrink by deleting chunks, and makes
every shrunk program valid too: all pool registers are initialised by the
prologue, labels are made at render time, and each chunk carries its own
address arithmetic.

Memory layout (all ``uint64`` words, ``T`` = threads in the launch, ``g`` = a
thread's global linear id, ``NT`` = threads per CTA, ``t`` = id inside its CTA):

* ``in``   read-only; word ``k*T + g`` initialises pool register ``k``; gathers
  read any word (index masked to the power-of-two length).
* ``out``  word ``k*T + g``: pool register ``k`` at exit; then the thread's
  shared-memory slot (``SMEM_WORDS`` words per thread) and the CTA's shared
  counters (``SMEM_COUNTERS`` per CTA).
* ``mem``  global scratch: ``OWN_WORDS`` words owned by each thread (plain and
  atomic accesses, deterministic), then ``GLOBAL_COUNTERS`` contended counters.
* ``apx``  one record per ``.approx`` chunk and thread: source bits a, b, result.

Races are impossible by construction: a thread writes only its own slots; it
reads another thread's shared slot only between the two barriers of an
exchange chunk; contended counters take commutative atomics only and their
returned values go to sink registers nobody reads.
"""

from __future__ import annotations

from dataclasses import dataclass

from .isa import Variant

POOL = {"h": 4, "r": 6, "d": 4, "p": 4}        # pool registers per class
REG_DECL = {"h": "b16", "r": "b32", "d": "b64", "p": "pred"}
CLASS_BITS = {"h": 16, "r": 32, "d": 64}
SCRATCH = {"h": "%t16", "r": "%t32", "d": "%t64"}
SINK = {"h": "%s16", "r": "%s32", "d": "%s64"}
OWN_WORDS = 4             # words of global scratch per thread (32 bytes: v4.b32 / v2.b64 aligned)
SMEM_WORDS = 2            # words of shared memory per thread
# Contended counters: each has one fixed (op, type), so the updates of all threads
# commute and the final value does not depend on their order.  Float adds only ever
# add small integers (exact in any order).
GLOBAL_COUNTER_OPS = (("add", "u32"), ("add", "u64"), ("min", "s32"), ("max", "u64"), ("or", "b32"),
                      ("xor", "b64"), ("add", "f32"), ("inc", "u32"), ("and", "b32"), ("dec", "u32"),
                      ("max", "s64"), ("min", "u32"), ("add", "f64"), ("add", "s32"))
SHARED_COUNTER_OPS = (("add", "u32"), ("max", "s32"), ("xor", "b32"), ("add", "f32"), ("min", "u64"),
                      ("inc", "u32"), ("or", "b64"), ("add", "u64"))
GLOBAL_COUNTERS = len(GLOBAL_COUNTER_OPS)
SMEM_COUNTERS = len(SHARED_COUNTER_OPS)
INC_LIMIT = 37            # the `b` of every contended inc/dec (the same for all threads)
MAX_LOOP_DEPTH = 3


def call_frame() -> tuple[list[tuple[str, int, int]], int]:
    """(class, index, byte offset) of every pool register in a Call's parameter array, and its
    size: 64-bit registers first, so every offset is aligned to its width."""
    out, off = [], 0
    for cls, width in (("d", 8), ("r", 4), ("p", 4), ("h", 2)):
        for i in range(POOL[cls]):
            out.append((cls, i, off))
            off += width
    return out, (off + 7) // 8 * 8


def pool_order() -> list[tuple[str, int]]:
    """Pool registers in ``in``/``out`` word order."""
    return [(c, i) for c in ("h", "r", "d", "p") for i in range(POOL[c])]


def reg(cls: str, i: int) -> str:
    return f"%{cls}{i}"


# ----------------------------------------------------------------------------- chunks

@dataclass(frozen=True)
class Imm:
    """An immediate operand: raw bits of ``type`` (two's complement for integers)."""
    value: int


@dataclass(frozen=True)
class Inst:
    """One arithmetic template instance."""
    variant: Variant
    combo: tuple[str, ...]
    args: tuple[int | Imm, ...]          # per operand: pool index or immediate
    negs: tuple[bool, ...] = ()          # per operand: `!` on predicate sources (setp/set c)
    pair: int | None = None              # second predicate destination `%r|%p`
    guard: tuple[int, bool] | None = None


@dataclass(frozen=True)
class Approx:
    """An inexact instruction; its sources and result go to the ``apx`` record."""
    inst: Inst


@dataclass(frozen=True)
class Carry:
    """An extended-precision chain: add.cc / addc.cc* / addc (or sub, mad)."""
    kind: str                            # "add", "sub", "mad"
    type: str                            # u32 s32 u64 s64
    steps: tuple[tuple[int, ...], ...]   # per step: (dst, a, b[, c]) pool indices


@dataclass(frozen=True)
class If:
    pred: int
    neg: bool
    then: tuple
    orelse: tuple | None = None
    uniform: bool = False                # condition uniform per CTA (bra.uni)
    ucmp: int = 0                        # uniform condition: linear CTA id == ucmp


@dataclass(frozen=True)
class Loop:
    trips: int                           # > 0: constant trip count; < 0: 1 + (kernel parameter & 3)
    body: tuple                          # (both uniform); 0: 1 + (%r[src] & 3), per thread
    src: int = 0


@dataclass(frozen=True)
class Switch:
    src: int                             # brx.idx on %r[src] & 3
    cases: tuple


@dataclass(frozen=True)
class Call:
    """A call of a `.func` that runs ``body`` (plain instructions and carry chains) on its own
    copy of the pool: every pool register goes in through one `.param` byte array and comes
    back through the return array (predicates as u32). Kernels draw it with ``calls=True``."""
    body: tuple


@dataclass(frozen=True)
class Mem:
    """ld/st on own global or shared slots, gathers from ``in``, generic addressing."""
    op: str                              # "ld_own" "st_own" "ld_sown" "st_sown" "gather" "generic"
    type: str
    regs: tuple[int, ...]                # pool indices (several for vector accesses)
    offset: int = 0                      # byte offset inside the slot
    vec: int = 1
    cop: str = ""                        # cache operator / qualifier (e.g. "nc", "volatile", "cg")
    src: int = 0                         # gather index register


@dataclass(frozen=True)
class Exchange:
    """Shared-memory exchange between threads of a CTA: st own, barrier, ld partner, barrier."""
    type: str
    src: int
    dst: int
    partner: str                         # "xor" or "add"
    k: int
    barrier: str = "bar.sync 0"


@dataclass(frozen=True)
class Atomic:
    where: str                           # "own" (global own slot), "gctr", "sctr" (contended counters)
    op: str                              # add, min, max, and, or, xor, inc, dec, exch, cas
    type: str
    regs: tuple[int, ...]                # own: dst, value[, compare]; counters: value
    counter: int = 0                     # own: byte offset in the slot; counters: which counter
    red: bool = False                    # `red` instead of `atom`
    sem: str = ""                        # "", "relaxed.gpu", ...


@dataclass(frozen=True)
class Warp:
    op: str                              # shfl vote match redux activemask barwarp
    mode: str
    type: str
    regs: tuple[int, ...]
    imm: tuple[int, ...] = ()
    negs: tuple[bool, ...] = ()


@dataclass(frozen=True)
class PartialWarp:
    """A warp operation executed by lanes ``0 .. lanes-1`` of every warp only (the others branch
    around it), with exactly those lanes as its membermask: warp operations in divergent code.
    ``lanes`` is clamped at render time to the population of a CTA's last warp."""
    lanes: int
    warp: Warp


@dataclass(frozen=True)
class Barrier:
    op: str                              # "bar.sync" "barrier.sync" "barrier.sync.aligned" "bar.red.popc" ...
    regs: tuple[int, ...] = ()
    neg: bool = False


@dataclass(frozen=True)
class Special:
    """Read a special register, or a memory fence / nanosleep."""
    op: str
    dst: int = 0


# ----------------------------------------------------------------------------- layout

@dataclass(frozen=True)
class Layout:
    grid: tuple[int, int, int]
    block: tuple[int, int, int]

    @property
    def nt(self) -> int:
        return self.block[0] * self.block[1] * self.block[2]

    @property
    def ncta(self) -> int:
        return self.grid[0] * self.grid[1] * self.grid[2]

    @property
    def threads(self) -> int:
        return self.nt * self.ncta

    @property
    def nregs(self) -> int:
        return sum(POOL.values())

    @property
    def in_words(self) -> int:
        n = self.nregs * self.threads
        return 1 << (n - 1).bit_length()

    @property
    def out_words(self) -> int:
        return (self.nregs + SMEM_WORDS) * self.threads + SMEM_COUNTERS * self.ncta

    @property
    def mem_words(self) -> int:
        return OWN_WORDS * self.threads + GLOBAL_COUNTERS
