"""Shrink a failing generated kernel to a small one that fails the same way.

The generator's programs are data (``ptxgen.program``): a tuple of chunks, some with nested
bodies. Every deletion of a chunk, and every replacement of a compound chunk (if, loop,
switch, call) by the chunks of one of its bodies, is again a valid program (registers are
initialised by the prologue, labels made at render time, barriers only ever move to code
every thread of the CTA runs). Candidates are tried largest cut first (halves, quarters,
..., single chunks), then compound chunks are opened, then the launch is made smaller; a
candidate is kept when its failure has the same signature (verdict, executor, exception
type). Hypothesis's own shrinker is not used: it needs the test's choice sequence and
engine, and a campaign's kernels are replayed from their (seed, index), not from a test run.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import replace

from ..testing.ptxgen.program import Call, If, Layout, Loop, Switch
from .draw import Drawn

SMALL_LAYOUTS = (Layout((1, 1, 1), (32, 1, 1)),)


class _Budget:
    def __init__(self, probes: int) -> None:
        self.left, self.spent = probes, 0

    def take(self) -> bool:
        if self.left <= 0:
            return False
        self.left -= 1
        self.spent += 1
        return True


def shrink(drawn: Drawn, outcome, executors: tuple[str, ...], probes: int, judge: Callable | None = None):
    """(smallest failing variant, its outcome, executions spent). ``judge(candidate: Drawn) ->
    Outcome`` runs a candidate (default: here, with case.judge on ``executors``)."""
    if judge is None:
        from .case import judge as run_here
        judge = lambda candidate: run_here(candidate.kernel(), executors)   # noqa: E731
    budget = _Budget(probes)
    best, best_outcome = drawn, outcome
    want = outcome.signature

    def fails(candidate: Drawn):
        if not budget.take():
            return None
        try:
            got = judge(candidate)
        except Exception:  # noqa: BLE001 - a variant the renderer rejects is simply not kept
            return None
        return got if got.signature == want else None

    progress = True
    while progress and budget.left > 0:
        progress = False
        for chunks in _candidates(best.chunks):
            cand = replace(best, chunks=chunks)
            got = fails(cand)
            if got is not None:
                best, best_outcome, progress = cand, got, True
                break
            if budget.left <= 0:
                break
    for layout in SMALL_LAYOUTS:
        if layout.threads < best.layout.threads and budget.left > 0:
            cand = replace(best, layout=layout)
            got = fails(cand)
            if got is not None:
                best, best_outcome = cand, got
    return best, best_outcome, budget.spent


def _candidates(chunks: tuple) -> Iterator[tuple]:
    """Smaller programs: cut windows of halving width, then open or shrink compound chunks."""
    n = len(chunks)
    width = max(1, n // 2)
    while n:
        for start in range(0, n, width):
            yield chunks[:start] + chunks[start + width:]
        if width == 1:
            break
        width //= 2
    for i, c in enumerate(chunks):
        for inner in _bodies(c):
            yield chunks[:i] + inner + chunks[i + 1:]
        for smaller in _shrunk_inside(c):
            yield chunks[:i] + (smaller,) + chunks[i + 1:]


def _bodies(c) -> tuple[tuple, ...]:
    if isinstance(c, If):
        return (c.then,) + ((c.orelse,) if c.orelse else ())
    if isinstance(c, (Loop, Call)):
        return (c.body,)
    if isinstance(c, Switch):
        return c.cases
    return ()


def _shrunk_inside(c) -> Iterator:
    """The compound chunk with one of its bodies made smaller (bodies keep at least one chunk)."""
    if isinstance(c, If):
        if c.orelse is not None:
            yield replace(c, orelse=None)
        for body in _smaller_bodies(c.then):
            yield replace(c, then=body)
    elif isinstance(c, (Loop, Call)):
        for body in _smaller_bodies(c.body):
            yield replace(c, body=body)
    elif isinstance(c, Switch):
        for k, case in enumerate(c.cases):
            for body in _smaller_bodies(case):
                yield replace(c, cases=c.cases[:k] + (body,) + c.cases[k + 1:])


def _smaller_bodies(body: tuple) -> Iterator[tuple]:
    for cand in _candidates(body):
        if cand:
            yield cand
