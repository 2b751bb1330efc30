"""Mutation testing of the parser and verifier on real PTX.

Valid fixture files (a fixed selection across nvcc plain / -lineinfo / -G,
numba and Triton, each cut to its first ~300 lines at a function boundary) are
mutated with a seeded RNG: tokens deleted, duplicated or swapped; single
characters deleted, inserted or replaced (including control, non-ASCII and
invalid UTF-8 bytes); the text truncated; lines swapped, deleted or duplicated;
identifiers replaced. Each mutant must either parse, or raise a ``PtxError``
whose every diagnostic has an int line and column >= 1 within the file — never
another exception, and never take longer than ``TIME_LIMIT`` seconds.

A failure prints the fixture, seed, operations and mutant text. To reproduce:

    PYTHONPATH=. python tests/test_mutations.py FIXTURE SEED     # prints the mutant
"""

from __future__ import annotations

import random
import re
import signal
import sys
import threading
import time
import warnings
from contextlib import contextmanager
from pathlib import Path

import pytest

import ptxvm
from ptxvm import PtxError

FIXTURES = Path(__file__).resolve().parent / "fixtures"
# One per family; fixed so that seeds stay reproducible.
SELECTION = (
    "numba/vector_add.ptx",
    "numba/warp_sum_shfl.ptx",
    "numba/atomics.ptx",
    "nvcc/sm80/printf_assert.ptx",
    "nvcc/sm80/warp_vote.ptx",
    "nvcc/sm90/tensor_core.ptx",
    "nvcc/sm80/calls.ptx",
    "nvcc/sm80-lineinfo/printf_assert.ptx",
    "nvcc/sm80-lineinfo/async_copy.ptx",
    "nvcc/sm80-G/printf_assert.ptx",
    "nvcc/sm80-G/grids.ptx",
    "triton/add_kernel.ptx",
    "triton/softmax_kernel.ptx",
)
MAX_LINES = 300
# A hang guard, not a speed goal (those live in benchmarks/): one parse takes milliseconds, but a
# loaded 2-core CI worker with a large heap has paused one for 5.3 s (a collector pass).
TIME_LIMIT = 30.0
DEFAULT_MUTANTS = 300
SLOW_MUTANTS = 5000


# ---------------------------------------------------------------------------- inputs

def cut_at_function_boundary(text: str, limit: int = MAX_LINES) -> str:
    """The text up to the last top-level `}` at or before line ``limit`` (or the first one)."""
    lines = text.split("\n")
    depth, ends = 0, []
    for i, line in enumerate(lines):
        code = line.split("//", 1)[0]
        if code.lstrip().startswith(".section"):
            continue           # debug sections: braces balanced on their own lines below
        for ch in code:
            if ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
                if depth == 0:
                    ends.append(i)
        if depth == 0 and ends and ends[-1] >= limit:
            break
    if not ends or len(lines) <= limit:
        return text
    fitting = [e for e in ends if e < limit] or ends[:1]
    return "\n".join(lines[: fitting[-1] + 1]) + "\n"


_SOURCES: dict[str, str] = {}


def source(name: str) -> str:
    if name not in _SOURCES:
        _SOURCES[name] = cut_at_function_boundary((FIXTURES / name).read_text(encoding="utf-8"))
    return _SOURCES[name]


# ---------------------------------------------------------------------------- mutations

_TOKEN = re.compile(r"\s+|%?[A-Za-z_$][\w$]*|\d+|.", re.S)
_IDENT = re.compile(r"%?[A-Za-z_$][\w$]*")
# Characters worth inserting: PTX punctuation, lookalikes, control and non-ASCII.
_INSERTS = (
    list(";,{}[]()<>|!@%.:+-=_#\"'\\/*0123456789xfdeEabcrp \t\n\r")
    + ["\x00", "\x01", "\x0b", "\x0c", "\x1b", "\x7f", "\x85", "\xa0", "é", "ß", "\u2028", "\u200b",
       "\ufeff", "；", "𝑥", "\ud7ff", "\U0001f600"]
)
_BAD_BYTES = [b"\xff", b"\xfe", b"\xc3", b"\x80", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xe2\x82"]
_WORDS = ["add", "ld", "st", "mov", "bra", "ret", "call", ".reg", ".entry", ".func", ".param", ".global",
          "%r1", "%rd1", "%p1", "%tid", "%tid.x", ".b32", ".f32", ".pred", ".v4", ".version", ".loc", "_",
          "$L__BB0_1", "0f3F800000", "0d3FF0000000000000", "-1", "08", "0x", "{", "}", "::"]


def _tokens(text: str) -> list[str]:
    return _TOKEN.findall(text)


def _solid(toks: list[str]) -> list[int]:
    return [i for i, t in enumerate(toks) if not t.isspace()]


def mutate(text: str, rng: random.Random) -> tuple[str | bytes, list[str]]:
    """Apply 1-3 random mutations; return the mutant and a description of each operation."""
    ops: list[str] = []
    out: str | bytes = text
    for _ in range(rng.choice((1, 1, 1, 2, 3))):
        if isinstance(out, bytes):
            break
        op = rng.choice(("del_tok", "dup_tok", "swap_tok", "del_char", "ins_char", "repl_char",
                         "truncate", "swap_lines", "del_line", "dup_line", "repl_ident", "ins_word",
                         "bad_bytes"))
        out, what = _apply(op, out, rng)
        ops.append(what)
    return out, ops


def _apply(op: str, text: str, rng: random.Random) -> tuple[str | bytes, str]:
    n = len(text)
    if op in ("del_tok", "dup_tok", "swap_tok"):
        toks = _tokens(text)
        solid = _solid(toks)
        if len(solid) < 2:
            return text, f"{op}: nothing to do"
        k = rng.randrange(len(solid) - 1)
        i, j = solid[k], solid[k + 1]
        where = len("".join(toks[:i]))
        desc = f"{op} at offset {where}: {toks[i]!r}"
        if op == "del_tok":
            toks[i] = ""
        elif op == "dup_tok":
            toks[i] = toks[i] + " " + toks[i]
        else:
            toks[i], toks[j] = toks[j], toks[i]
            desc += f" <-> {toks[i]!r}"
        return "".join(toks), desc
    if op == "del_char":
        if not n:
            return text, "del_char: empty"
        i = rng.randrange(n)
        return text[:i] + text[i + 1:], f"del_char at offset {i}: {text[i]!r}"
    if op == "ins_char":
        i = rng.randrange(n + 1)
        c = rng.choice(_INSERTS)
        return text[:i] + c + text[i:], f"ins_char at offset {i}: {c!r}"
    if op == "repl_char":
        if not n:
            return text, "repl_char: empty"
        i = rng.randrange(n)
        c = rng.choice(_INSERTS)
        return text[:i] + c + text[i + 1:], f"repl_char at offset {i}: {text[i]!r} -> {c!r}"
    if op == "truncate":
        i = rng.randrange(n + 1)
        return text[:i], f"truncate at offset {i} of {n}"
    if op == "ins_word":
        toks = _tokens(text)
        i = rng.randrange(len(toks) + 1)
        w = rng.choice(_WORDS)
        sep = rng.choice(("", " "))
        return "".join(toks[:i]) + sep + w + sep + "".join(toks[i:]), f"ins_word {w!r} before token {i}"
    if op == "bad_bytes":
        data = text.encode("utf-8")
        i = rng.randrange(len(data) + 1)
        b = rng.choice(_BAD_BYTES)
        return data[:i] + b + data[i:], f"bad_bytes {b!r} at byte {i}"
    lines = text.split("\n")
    if op in ("swap_lines", "del_line", "dup_line"):
        a = rng.randrange(len(lines))
        if op == "swap_lines":
            b = rng.randrange(len(lines))
            lines[a], lines[b] = lines[b], lines[a]
            return "\n".join(lines), f"swap_lines {a + 1} <-> {b + 1}"
        if op == "del_line":
            return "\n".join(lines[:a] + lines[a + 1:]), f"del_line {a + 1}: {lines[a]!r}"
        return "\n".join(lines[:a + 1] + lines[a:]), f"dup_line {a + 1}: {lines[a]!r}"
    assert op == "repl_ident"
    idents = list(_IDENT.finditer(text))
    if not idents:
        return text, "repl_ident: none"
    m = rng.choice(idents)
    pool = sorted({x.group() for x in idents})
    new = rng.choice((rng.choice(pool), rng.choice(pool), m.group() + rng.choice("0129x_$"),
                      m.group()[:-1], rng.choice(_WORDS)))
    return text[:m.start()] + new + text[m.end():], f"repl_ident at offset {m.start()}: {m.group()!r} -> {new!r}"


# ---------------------------------------------------------------------------- checking

class _Timeout(BaseException):
    """BaseException so that no `except Exception` in the code under test swallows it."""


@contextmanager
def time_limit(seconds: float):
    """Interrupt the block after ``seconds`` (SIGALRM where available, in the main thread)."""
    use_signal = hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
    if use_signal:
        def on_alarm(signum, frame):
            raise _Timeout
        old = signal.signal(signal.SIGALRM, on_alarm)
        signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        if use_signal:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, old)


def _show(mutant: str | bytes, limit: int = 20000) -> str:
    text = mutant if isinstance(mutant, str) else repr(mutant)[2:-1].replace("\\n", "\n")
    numbered = "\n".join(f"{i + 1:4}| {line!r}" for i, line in enumerate(text.split("\n")))
    return numbered if len(numbered) < limit else numbered[:limit] + "\n... (cut)"


def check_mutant(name: str, seed: int) -> tuple[str, bool]:
    """Build and parse mutant ``seed`` of fixture ``name``; return (ops, parsed) or fail."""
    rng = random.Random(seed)
    mutant, ops = mutate(source(name), rng)
    header = f"fixture={name} seed={seed} ops={ops}"
    n_lines = (mutant.count(b"\n") if isinstance(mutant, bytes) else mutant.count("\n")) + 1
    lines = None if isinstance(mutant, bytes) else mutant.split("\n")
    start = time.perf_counter()
    error: PtxError | None = None
    try:
        with time_limit(TIME_LIMIT), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                ptxvm.parse(mutant, filename="mutant.ptx")
            except PtxError as e:
                error = e
    except _Timeout:
        pytest.fail(f"parse took over {TIME_LIMIT}s (hang?)\n{header}\n{_show(mutant)}")
    except Exception as e:  # noqa: BLE001 - the point of the test
        import traceback
        pytest.fail(f"{type(e).__name__} (not a PtxError): {e}\n{header}\n"
                    f"{''.join(traceback.format_exception(e))}\n{_show(mutant)}")
    elapsed = time.perf_counter() - start
    assert elapsed <= TIME_LIMIT, f"parse took {elapsed:.1f}s\n{header}\n{_show(mutant)}"
    if error is None:
        return header, True
    rendered = str(error)   # rendering must not fail either
    assert rendered
    for d in error.diagnostics:
        ok = (isinstance(d.line, int) and isinstance(d.column, int) and d.line >= 1 and d.column >= 1
              and d.line <= n_lines + 1)
        if ok and lines is not None and d.line <= len(lines):
            ok = d.column <= len(lines[d.line - 1]) + 1
        assert ok, (f"bad location {d.line}:{d.column} for {d.message!r} ({type(error).__name__})\n"
                    f"{header}\n{rendered}\n{_show(mutant)}")
    assert (error.line, error.column) == (error.diagnostics[0].line, error.diagnostics[0].column)
    return header, False


def _run(count: int, base_seed: int) -> tuple[int, int]:
    parsed = 0
    for i in range(count):
        name = SELECTION[i % len(SELECTION)]
        _, ok = check_mutant(name, base_seed + i)
        parsed += ok
    return count, parsed


# ---------------------------------------------------------------------------- tests

@pytest.mark.parametrize("name", SELECTION)
def test_selected_fixtures_are_valid(name: str):
    """The unmutated inputs parse: otherwise mutants would test nothing new."""
    text = source(name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ptxvm.parse(text, filename=name)


def test_mutants_default():
    start = time.perf_counter()
    count, parsed = _run(DEFAULT_MUTANTS, base_seed=1_000_000)
    elapsed = time.perf_counter() - start
    print(f"{count} mutants ({parsed} still parse) in {elapsed:.1f}s")
    # Most mutations must be caught, or the mutator is too gentle to be worth running.
    assert parsed < count * 0.6


@pytest.mark.slow
def test_mutants_slow():
    start = time.perf_counter()
    count, parsed = _run(SLOW_MUTANTS, base_seed=2_000_000)
    print(f"{count} mutants ({parsed} still parse) in {time.perf_counter() - start:.1f}s")


def test_time_limit_interrupts():
    """The per-mutant limit really interrupts a runaway parse (where SIGALRM exists)."""
    if not hasattr(signal, "setitimer"):
        pytest.skip("no SIGALRM here")
    with pytest.raises(_Timeout):
        with time_limit(0.05):
            while True:
                pass


def _main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__)
        return 2
    name, seed = argv[0], int(argv[1])
    mutant, ops = mutate(source(name), random.Random(seed))
    print(f"# ops: {ops}", file=sys.stderr)
    if isinstance(mutant, bytes):
        sys.stdout.buffer.write(mutant)
    else:
        sys.stdout.write(mutant)
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
