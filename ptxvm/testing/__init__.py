"""Differential testing: run one launch on several executors or against recorded goldens.

    from ptxvm.testing import assert_executors_agree
    assert_executors_agree(ptx, "vector_add", 4, 256, (a, b, out, np.int32(n)))

``compare`` (bitwise + ULP), ``make_launch``/``record``/``save_golden``/
``load_golden``/``run_golden`` (golden files), ``difftest`` (a report across
executors) and the CLI ``ptxvm difftest`` / ``ptxvm record`` build on each other.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from .compare import CompareError, Comparison, Writer, compare
from .golden import (
    ExecutorUnavailable,
    Golden,
    GoldenError,
    Launch,
    check_executor,
    execute,
    load_golden,
    make_launch,
    record,
    run_golden,
    save_golden,
)
from .report import CaseReport, DiffReport, difftest


def cpu_executors() -> tuple[str, ...]:
    """Every registered executor that runs on this CPU, the reference (interp) first, from the
    executor registry (installed or not: a missing one is reported, not silently left out)."""
    from ..driver import executors as registry
    return tuple(n for n in registry.names() if registry.get(n).capabilities.host_cpu)


def assert_executors_agree(module_or_ptx, kernel: str, grid, block, args: Sequence, *,
                           executors: Sequence[str] | None = None, shared_mem: int = 0,
                           ulp: int | Mapping[str, int] = 0, missing: str = "error") -> CaseReport:
    """Run the launch on each executor, each on fresh copies of the inputs, and raise
    AssertionError with the report on any difference (compared with the first executor).

    ``executors``: default every registered CPU executor (``cpu_executors()``: interp, cpu, ...).
    Executors this build lacks: LaunchError with ``missing="error"``, ``pytest.skip``
    with ``missing="skip"`` (the test is skipped when fewer than two remain).
    """
    if missing not in ("error", "skip"):
        raise ValueError(f"missing must be 'error' or 'skip', got {missing!r}")
    if executors is None:
        executors = cpu_executors()
    usable, absent = [], ""
    for ex in executors:
        try:
            check_executor(ex)
            usable.append(ex)
        except ExecutorUnavailable as e:
            if missing == "error":
                raise
            absent = str(e)
    if len(usable) < 2:
        if missing == "skip" and len(usable) < len(executors):
            import pytest
            pytest.skip(f"fewer than two executors available: {absent}")
        raise ValueError(f"assert_executors_agree needs at least two executors, got {list(executors)}")
    launch = make_launch(module_or_ptx, kernel, grid, block, args, shared_mem=shared_mem)
    case = difftest(launch, usable, ulp=ulp)
    if not case.ok:
        raise AssertionError("executors disagree:\n" + DiffReport((case,)).render())
    return case


__all__ = ["CaseReport", "CompareError", "Comparison", "DiffReport", "ExecutorUnavailable", "Golden", "GoldenError",
           "Launch", "Writer", "assert_executors_agree", "compare", "cpu_executors", "difftest", "execute", "load_golden",
           "make_launch", "record", "run_golden", "save_golden"]
