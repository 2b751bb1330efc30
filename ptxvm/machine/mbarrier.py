"""The mbarrier object's 64-bit encoding (PTX ISA 9.0 §9.7.13.15), shared by every executor.

The ISA makes the object opaque: a `.b64` in shared memory whose contents only the mbarrier
instructions interpret. ptxvm chooses one encoding, used by the interpreter (these functions,
on Python ints) and mirrored bit for bit by the lifter (``ptxvm/lift/ops/mbarrier.py``, LLVM
atomics on the same word), so a kernel reads the same bits on every executor:

    bits  0..19  pending arrival count of the current phase
    bits 20..39  expected arrival count (what a new phase starts with; arrive_drop lowers it)
    bits 40..60  tx-count, 21-bit two's complement (§9.7.13.15.2: -(2^20-1) .. 2^20-1)
    bit  61      0
    bit  62      initialised (mbarrier.init sets it, mbarrier.inval clears the word)
    bit  63      phase parity of the current phase

A phase completes when its pending count and its tx-count are both zero (§9.7.13.15.2); the
object then moves to the next phase at once: parity flips, pending = expected, tx-count = 0.

The ``state`` token that mbarrier.arrive returns (§9.7.13.15.13) is also opaque; here it is

    bits  0..19  the pending count right after this arrival (0: it completed the phase)
    bit  62      1 (a token)
    bit  63      the parity of the phase the arrival counted in

so ``test_wait``/``try_wait`` with a token compare its bit 63 with the object's current parity
(the ISA allows only the current or the immediately preceding phase's token, so parity is
enough), and ``mbarrier.pending_count`` reads bits 0..19.
"""

from __future__ import annotations

from dataclasses import dataclass

from . import reports

COUNT_BITS = 20
COUNT_MAX = (1 << COUNT_BITS) - 1          # §9.7.13.15.9: count in 1 .. 2^20-1
TX_BITS = 21
TX_MAX = (1 << 20) - 1                      # §9.7.13.15.2: tx-count range
PENDING_SHIFT, EXPECTED_SHIFT, TX_SHIFT = 0, 20, 40
VALID_BIT, PHASE_BIT = 62, 63
FIELD = COUNT_MAX
TX_FIELD = (1 << TX_BITS) - 1
MASK64 = (1 << 64) - 1
SIZE = 8                                    # bytes; the object is 8-byte aligned (§9.7.13.15.1)


class MbarrierError(Exception):
    """A use the ISA leaves undefined (ptxvm reports it: a trap naming the instruction)."""


@dataclass(frozen=True, slots=True)
class Fields:
    pending: int
    expected: int
    tx: int                                 # signed
    valid: bool
    phase: int                              # 0 or 1


def unpack(word: int) -> Fields:
    tx = (word >> TX_SHIFT) & TX_FIELD
    if tx >= 1 << (TX_BITS - 1):
        tx -= 1 << TX_BITS
    return Fields((word >> PENDING_SHIFT) & FIELD, (word >> EXPECTED_SHIFT) & FIELD, tx,
                  bool((word >> VALID_BIT) & 1), (word >> PHASE_BIT) & 1)


def pack(f: Fields) -> int:
    return ((f.pending & FIELD) << PENDING_SHIFT | (f.expected & FIELD) << EXPECTED_SHIFT
            | (f.tx & TX_FIELD) << TX_SHIFT | int(f.valid) << VALID_BIT | (f.phase & 1) << PHASE_BIT)


def init(count: int) -> int:
    """mbarrier.init: phase 0, pending = expected = count, tx-count 0 (§9.7.13.15.9)."""
    if not 1 <= count <= COUNT_MAX:
        raise MbarrierError(f"mbarrier.init count {count} is outside 1..{COUNT_MAX} (PTX ISA 9.7.13.15.9)")
    return pack(Fields(count, count, 0, True, 0))


def _settle(f: Fields) -> Fields:
    """Move to the next phase when the current one is complete."""
    if f.pending == 0 and f.tx == 0:
        return Fields(f.expected, f.expected, 0, True, f.phase ^ 1)
    return f


def _valid(word: int, what: str) -> Fields:
    f = unpack(word)
    if not f.valid:
        raise MbarrierError(f"{what} on an mbarrier object that is not initialised (mbarrier.init; "
                            "PTX ISA 9.7.13.15: undefined)")
    return f


def _tx(tx: int) -> int:
    if not -TX_MAX <= tx <= TX_MAX:
        raise MbarrierError(f"mbarrier tx-count {tx} is outside -{TX_MAX}..{TX_MAX} (PTX ISA 9.7.13.15.2)")
    return tx


def arrive(word: int, count: int = 1, *, drop: bool = False, expect_tx: int = 0,
           what: str = "mbarrier.arrive") -> tuple[int, int]:
    """An arrive-on operation (§9.7.13.15.13/.14): optionally raise the tx-count first
    (``.expect_tx``), drop ``count`` from the expected count (``arrive_drop``), lower the
    pending count by ``count``. Returns (new word, state token)."""
    f = _valid(word, what)
    if not 1 <= count <= COUNT_MAX:
        raise MbarrierError(f"{what} count {count} is outside 1..{COUNT_MAX} (PTX ISA 9.7.13.15.13)")
    if count > f.pending:
        raise MbarrierError(f"{what} arrives {count} times on an mbarrier with {f.pending} pending "
                            "arrivals (PTX ISA 9.7.13.15.13: undefined)")
    if drop and count > f.expected:
        raise MbarrierError(f"{what} drops {count} from an expected count of {f.expected}")
    phase = f.phase
    g = Fields(f.pending - count, f.expected - count if drop else f.expected, _tx(f.tx + expect_tx), True, phase)
    token = g.pending | 1 << VALID_BIT | phase << PHASE_BIT
    return pack(_settle(g)), token


def expect_tx(word: int, n: int, what: str = "mbarrier.expect_tx") -> int:
    """Raise the tx-count by ``n`` (§9.7.13.15.11)."""
    f = _valid(word, what)
    return pack(Fields(f.pending, f.expected, _tx(f.tx + n), True, f.phase))


def complete_tx(word: int, n: int, what: str = "mbarrier.complete_tx") -> int:
    """Lower the tx-count by ``n`` (§9.7.13.15.12; also what an async copy's completion does);
    completes the phase when nothing is pending any more."""
    f = _valid(word, what)
    return pack(_settle(Fields(f.pending, f.expected, _tx(f.tx - n), True, f.phase)))


def phase_complete(word: int, parity: int, what: str = "mbarrier.test_wait") -> bool:
    """test_wait/try_wait: whether the phase of parity ``parity`` has completed, i.e. the
    object's current phase has the other parity (§9.7.13.15.16)."""
    f = _valid(word, what)
    return f.phase != (parity & 1)


def token_parity(state: int) -> int:
    return (state >> PHASE_BIT) & 1


def pending_count(state: int) -> int:
    """mbarrier.pending_count (§9.7.13.15.17): the token's pending count."""
    return (state >> PENDING_SHIFT) & FIELD


def describe(word: int) -> str:
    """The object's fields in words (for deadlock reports)."""
    f = unpack(word)
    if not f.valid:
        return "not initialised"
    return (f"phase {f.phase} (parity), {f.pending} of {f.expected} arrivals pending, tx-count {f.tx}")


@dataclass(frozen=True, slots=True)
class Spinner:
    """Threads of one block spinning at one wait on one object (``word`` None: not known)."""

    offset: int | None              # the object's shared-window offset
    word: int | None
    threads: tuple[tuple[int, int, int], ...]     # the first few
    more: bool
    line: int | None
    instruction: str


@dataclass(frozen=True, slots=True)
class StalledBlock:
    block: tuple[int, int, int]
    spinning: int                   # threads spinning at mbarrier waits
    live: int
    at_barriers: int                # threads waiting at bar.sync & co
    spinners: tuple[Spinner, ...]


def stall_message(blocks: list[StalledBlock]) -> str:
    """The deadlock report of spinning mbarrier waiters, in the shape of reports.deadlock_message."""
    lines = []
    for sb in blocks[:8]:
        lines.append(f"  block {sb.block}: {sb.spinning} of {sb.live} non-exited threads spin on mbarrier phases "
                     f"that never complete, {sb.at_barriers} wait at barriers")
        for sp in sb.spinners[:4]:
            if sp.offset is not None:
                state = describe(sp.word) if sp.word is not None else "fields unknown"
                lines.append(f"    mbarrier at shared offset 0x{sp.offset:x}: {state}")
            lines.append(f"      waiting: threads {list(sp.threads)}{' ...' if sp.more else ''} at line "
                         f"{sp.line}: `{sp.instruction}`")
    return reports.DEADLOCK + "\n" + "\n".join(lines[:reports.MAX_DEADLOCK_LINES])


# Which ops complete a phase only by other threads' work: their waiters can be blocked forever.
WAIT_OPCODES = frozenset({"mbarrier.test_wait", "mbarrier.test_wait.parity",
                          "mbarrier.try_wait", "mbarrier.try_wait.parity"})
