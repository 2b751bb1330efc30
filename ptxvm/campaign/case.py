"""One kernel of a campaign: draw it, run it on every executor, judge, shrink, package.

Verdicts, in the order they are looked for:

* ``error``     the reference (the first executor) raised: the generator made a kernel the
                reference cannot run, or the reference is wrong
* ``crash``     another executor raised something other than a refusal
* ``refused``   another executor raised UnsupportedError (a form it does not lower yet) or
                EmulatorLimit (a launch the AMD emulator cannot run)
* ``mismatch``  the outputs differ (bit for bit; ``.approx`` records within the ISA's bounds)
* ``agree``
* ``died``      the process running the kernel died (set by the pool or the cluster, not here)

Everything but ``agree`` is shrunk (``shrink.py``) and packaged as a golden (``golden.py``).
The functions here are what worker processes and cluster workers run: they take and return
plain picklable data.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import sys
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..testing.ptxgen import GeneratedKernel, run_on
from ..testing.ptxgen.compare import compare_runs
from .draw import Drawn, draw
from .spec import Spec

FAILURES = ("error", "crash", "died", "mismatch")     # verdicts that fail a campaign
VERDICTS = ("agree", "refused") + FAILURES


@dataclass(frozen=True)
class Outcome:
    """What running one kernel on the executors showed."""

    verdict: str
    executor: str | None                 # the executor the verdict is about (None: agree)
    detail: str                          # one line: the first problem, the exception
    runs: dict = field(default_factory=dict)          # executor -> final argument tuple
    errors: dict = field(default_factory=dict)        # executor -> "Type: message"

    @property
    def signature(self) -> tuple[str, str | None, str]:
        """What a shrunk variant must keep to count as the same failure."""
        kind = self.detail.split(":", 1)[0] if self.verdict in ("error", "crash") else ""
        return self.verdict, self.executor, kind


@dataclass(frozen=True)
class CaseResult:
    """One kernel's result, as results.jsonl records it (``golden``/``ptx_min`` go to files)."""

    id: str
    index: int
    ptx_hash: str                        # sha256 of the drawn kernel's PTX (first 16 hex digits)
    verdict: str
    executor: str | None = None
    detail: str = ""
    seconds: float = 0.0
    lines: int = 0                       # PTX lines of the drawn kernel
    shrunk_lines: int | None = None      # ... of the shrunk one (failures only)
    probes: int = 0                      # executions the shrinker spent
    golden: bytes | None = None          # the shrunk failure as a golden .npz
    ptx_min: str | None = None           # its PTX text
    worker: str = ""                     # host:pid that ran it

    def record(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if k not in ("golden", "ptx_min")}


def ptx_hash(ptx: str) -> str:
    return hashlib.sha256(ptx.encode()).hexdigest()[:16]


def judge(gk: GeneratedKernel, executors: tuple[str, ...]) -> Outcome:
    """Run ``gk`` on each executor (fresh inputs each) and say what happened."""
    from ..driver.executors.emu import EmulatorLimit
    from ..errors import UnsupportedError
    # A form an executor does not lower yet, or a launch the AMD emulator cannot run: refusals.
    refusal = (UnsupportedError, EmulatorLimit)
    runs: dict[str, tuple] = {}
    errors: dict[str, str] = {}
    refused: dict[str, str] = {}
    for ex in executors:
        try:
            runs[ex] = run_on(gk, ex)
        except refusal as e:
            refused[ex] = errors[ex] = f"{type(e).__name__}: {_line(e)}"
        except Exception as e:  # noqa: BLE001 - any executor failure is a finding, reported
            errors[ex] = f"{type(e).__name__}: {_line(e)}"
    ref = executors[0]
    if ref in errors:
        return Outcome("error", ref, errors[ref], runs, errors)
    crashed = [ex for ex in executors if ex in errors and ex not in refused]
    if crashed:
        return Outcome("crash", crashed[0], errors[crashed[0]], runs, errors)
    for ex in runs:
        problems = compare_runs(gk, {ref: runs[ref], ex: runs[ex]}) if ex != ref else []
        if problems:
            more = f" (+{len(problems) - 1} more)" if len(problems) > 1 else ""
            return Outcome("mismatch", ex, problems[0] + more, runs, errors)
    if refused:
        ex = next(iter(refused))
        return Outcome("refused", ex, refused[ex], runs, errors)
    return Outcome("agree", None, "", runs, errors)


def _line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return text[0][:300] if text else ""


_LOADED: set[str] = set()


def load_plugins(plugins: tuple[str, ...]) -> None:
    """Import each module name or ``.py`` path once per process (they may register executors)."""
    for p in plugins:
        if p in _LOADED:
            continue
        if p.endswith(".py"):
            path = Path(p).resolve()
            spec = importlib.util.spec_from_file_location(f"ptxvm_plugin_{path.stem}", path)
            if spec is None or spec.loader is None:
                raise ImportError(f"cannot load plugin {p}")
            module = importlib.util.module_from_spec(spec)
            sys.modules[spec.name] = module
            spec.loader.exec_module(module)
        else:
            importlib.import_module(p)
        _LOADED.add(p)


def run_case(spec: Spec, index: int) -> CaseResult:
    """Draw, run and judge kernel ``index``; shrink and package it unless the executors agree."""
    import os
    import platform
    load_plugins(spec.plugins)
    t0 = time.perf_counter()
    drawn = draw(spec, index)
    gk = drawn.kernel()
    outcome = judge(gk, spec.executors)
    result = CaseResult(spec.kernel_id(index), index, ptx_hash(gk.ptx), outcome.verdict, outcome.executor,
                        outcome.detail, 0.0, gk.ptx.count("\n"), worker=f"{platform.node()}:{os.getpid()}")
    if outcome.verdict != "agree":
        result = package(spec, drawn, outcome, result)
    return replace(result, seconds=round(time.perf_counter() - t0, 4))


def run_batch(spec: Spec, indices: tuple[int, ...]) -> list[CaseResult]:
    """Several kernels in one task (what a cluster worker runs)."""
    return [run_case(spec, i) for i in indices]


def package(spec: Spec, drawn: Drawn, outcome: Outcome, result: CaseResult) -> CaseResult:
    """Shrink the failure and attach its golden and minimal PTX."""
    from .goldens import golden_bytes
    from .shrink import shrink
    small, small_outcome, probes = shrink(drawn, outcome, spec.executors, spec.shrink_probes)
    gk = small.kernel()
    data = golden_bytes(gk, small_outcome, spec, result.id)
    return replace(result, shrunk_lines=gk.ptx.count("\n"), probes=probes, golden=data, ptx_min=gk.ptx,
                   detail=small_outcome.detail or result.detail)


def died(spec: Spec, index: int, why: str) -> CaseResult:
    """The result of a kernel whose process died (drawn again here for its hash: drawing is safe)."""
    from .goldens import golden_bytes
    gk = draw(spec, index).kernel()
    rid = spec.kernel_id(index)
    return CaseResult(rid, index, ptx_hash(gk.ptx), "died", None, why, 0.0, gk.ptx.count("\n"),
                      golden=golden_bytes(gk, Outcome("died", None, why), spec, rid), ptx_min=gk.ptx)
