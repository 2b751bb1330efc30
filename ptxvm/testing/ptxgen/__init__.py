"""Random PTX programs for differential fuzzing of ptxvm's executors.

    from hypothesis import given
    from ptxvm.testing.ptxgen import kernels, check_agreement

    @given(kernels())
    def test_executors_agree(gk):
        check_agreement(gk)          # interp vs cpu (the host JIT), when available

:func:`kernels` is a hypothesis strategy of :class:`GeneratedKernel`: a PTX
module that is valid by construction (declared and initialised registers, the
instruction forms ``isa/instructions.toml`` marks supported with the ISA's
combination rules applied, bounded loops, in-bounds aligned addresses,
barriers and warp-synchronous instructions only in CTA-uniform code, no data
races), plus its launch and input arrays.  :func:`check_agreement` runs it on
every available executor and demands bit-identical outputs, except the
``.approx`` records, compared within the PTX ISA's error bounds.

A failure message ends with the numbered program and a ``kernel_from_ptx(...)``
call (launch and data seed) that rebuilds the kernel, so a reported program can
be edited or reduced by hand and rerun on the same data.

The pieces: ``isa`` and ``isa_rules`` (templates from the table
and the ISA's combination rules), ``strategies``/``strategies_mem``/
``draws`` (hypothesis draws), ``program`` (program data, memory
layout), ``render``/``kernel`` (PTX text), ``values``
(input bit patterns), ``refusals`` (forms left out, with reasons),
``compare`` (the comparison and its report).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from hypothesis import strategies as st

from .compare import compare_runs, listing
from .kernel import KERNEL, render_kernel
from .program import GLOBAL_COUNTER_OPS, OWN_WORDS, Layout, pool_order
from .strategies import program
from .values import small_float_bits, words

GRIDS = ((1, 1, 1), (2, 1, 1), (1, 2, 1))
BLOCKS = ((32, 1, 1), (64, 1, 1), (16, 4, 1))
ARG_NAMES = ("in", "out", "mem", "apx", "k")


@dataclass(frozen=True, eq=False)
class GeneratedKernel:
    ptx: str
    kernel: str
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    args: tuple                          # in, out, mem, apx (numpy arrays), k (a .u32 scalar)
    outputs: tuple[int, ...]             # indices of args whose final contents are compared
    approx: bool                         # some outputs hold .approx results (compared within bounds)
    approx_ops: tuple[str, ...] = ()     # per record slot of the apx array: the bound's key
    approx_arg: int | None = None        # index of the apx array in args
    seed: int = 0                        # the input data's seed (see kernel_from_ptx)

    @property
    def layout(self) -> Layout:
        return Layout(self.grid, self.block)

    def listing(self) -> str:
        return listing(self.ptx)

    def _repr_pretty_(self, p, cycle: bool) -> None:
        # hypothesis prints falsifying examples through this (IPython's protocol).
        p.text(repr(self))

    def __repr__(self) -> str:
        n = self.ptx.count("\n")
        return (f"GeneratedKernel({self.kernel}, grid={self.grid}, block={self.block}, {n} lines, "
                f"approx={list(self.approx_ops)})\n{self.listing()}")


def build_kernel(chunks, layout: Layout, seed: int) -> GeneratedKernel:
    """Render ``chunks`` and make the launch's input arrays from ``seed``."""
    ptx, approx_ops, _sm = render_kernel(chunks, layout)
    return kernel_from_ptx(ptx, layout.grid, layout.block, seed, approx_ops)


def kernel_from_ptx(ptx: str, grid: tuple[int, int, int], block: tuple[int, int, int], seed: int,
                    approx_ops: tuple[str, ...] = ()) -> GeneratedKernel:
    """A generated kernel from its text, launch and data seed (as a failure report
    prints them): the arrays depend on nothing else, so edited or reduced versions
    of a failing program run on the same data."""
    layout = Layout(tuple(grid), tuple(block))
    rng = np.random.default_rng(seed)
    T = layout.threads
    a_in = words(rng, layout.in_words)
    # Predicate registers load a word and test it against zero: mostly 0/1 so both
    # outcomes are common (and divergence within a warp is the rule).
    for k, (cls, _) in enumerate(pool_order()):
        if cls == "p":
            a_in[k * T:(k + 1) * T] = rng.integers(0, 2, T).astype(np.uint64)
    mem = words(rng, layout.mem_words)
    base = OWN_WORDS * T
    for k, (op, t) in enumerate(GLOBAL_COUNTER_OPS):
        if t in ("f32", "f64"):
            mem[base + k] = small_float_bits(rng, 1, t)[0]
    out = np.zeros(layout.out_words, dtype=np.uint64)
    apx = np.zeros(max(1, len(approx_ops)) * 3 * T, dtype=np.uint64)
    k = int(rng.integers(0, 8))                      # the scalar parameter p_k (uniform trip counts)
    return GeneratedKernel(ptx, KERNEL, layout.grid, layout.block, (a_in, out, mem, apx, k),
                           (1, 2, 3) if approx_ops else (1, 2), bool(approx_ops), approx_ops, 3, seed)


@st.composite
def kernels(draw, max_instructions: int = 40, grids=GRIDS, blocks=BLOCKS,
            include_known_bugs: bool = False, calls: bool = False) -> GeneratedKernel:
    """Hypothesis strategy of valid, terminating, race-free generated kernels.

    ``max_instructions`` bounds the body (the prologue loading registers and the
    epilogue storing them come on top).  ``include_known_bugs`` also draws the
    forms the interpreter is known to compute wrongly (``refusals``);
    ``calls`` also draws calls of generated `.func`s (off by default, so the
    default draws, and the 5,000-kernel campaign's, stay what they were)."""
    layout = Layout(draw(st.sampled_from(grids)), draw(st.sampled_from(blocks)))
    chunks = draw(program(max_instructions, include_known_bugs, calls))
    return build_kernel(chunks, layout, draw(st.integers(0, 2**32 - 1)))


def run_on(gk: GeneratedKernel, device: str) -> tuple:
    """Launch on one executor with fresh copies of the inputs; returns the final arrays."""
    from ...driver.api import Module
    args = tuple(np.array(a, copy=True) if isinstance(a, np.ndarray) else a for a in gk.args)
    Module(gk.ptx).get_function(gk.kernel)(gk.grid, gk.block, args, device=device)
    return args


@dataclass
class Agreement:
    """What :func:`check_agreement` saw: final arrays per executor that ran, and the
    executors (other than the reference) that refused the kernel, with the reason."""
    runs: dict[str, tuple]
    refused: dict[str, str]


def check_agreement(gk: GeneratedKernel, executors=("interp", "cpu"), *, allow_refusal: bool = True) -> Agreement:
    """Run ``gk`` on each available executor and assert identical outputs.

    Executors missing from ``available_devices()`` are skipped.  The first one
    that runs is the reference: any exception it raises fails.  Any other
    executor must run the kernel too, except that with ``allow_refusal`` an
    ``UnsupportedError`` (a form it does not implement yet, said at compile
    time) leaves it out of the comparison and is returned in ``refused``.
    Failures and mismatches become an AssertionError that prints the numbered
    PTX, the launch and (for mismatches) the first differing element of each
    output."""
    from ...driver.api import available_devices
    from ...errors import UnsupportedError
    runs: dict[str, tuple] = {}
    refused: dict[str, str] = {}
    for ex in executors:
        if ex not in available_devices():
            continue
        try:
            runs[ex] = run_on(gk, ex)
        except UnsupportedError as e:
            if not runs or not allow_refusal:
                raise AssertionError(_failure(gk, f"executor `{ex}` refused the kernel: {e}")) from e
            refused[ex] = str(e)
        except Exception as e:
            raise AssertionError(_failure(gk, f"executor `{ex}` raised {type(e).__name__}: {e}")) from e
    problems = compare_runs(gk, runs)
    if problems:
        raise AssertionError(_failure(gk, f"executors {list(runs)} disagree on a generated kernel\n" +
                                      "\n".join(problems)))
    return Agreement(runs, refused)


def _failure(gk: GeneratedKernel, what: str) -> str:
    return (f"{what}\n\nlaunch: grid={gk.grid} block={gk.block} args={ARG_NAMES}; to rerun: "
            f"kernel_from_ptx(ptx, {gk.grid}, {gk.block}, seed={gk.seed}, approx_ops={gk.approx_ops})\n"
            f"{gk.listing()}")


# Tensor-core kernels (mma.sync, ldmatrix, movmatrix on random fragments): a strategy of their own,
# off the default draws of ``kernels`` until every executor runs those forms.
from .tensor import tensor_kernels  # noqa: E402

__all__ = ["ARG_NAMES", "Agreement", "GeneratedKernel", "build_kernel", "check_agreement", "kernel_from_ptx", "kernels",
           "run_on", "tensor_kernels"]
