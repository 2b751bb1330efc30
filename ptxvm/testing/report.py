"""Differential test runs and their reports: text table, JSON, JUnit XML.

``difftest(launch, executors, golden=...)`` runs one launch on every executor
and compares each array argument with the reference: the golden's recorded
outputs when there is a golden, else the first executor's. A run that fails
(fault, unavailable GPU) is reported as an error of that executor, not raised.
"""

from __future__ import annotations

import json
import time
import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..errors import KernelFault, PtxError
from .compare import Comparison
from .golden import Golden, Launch, attribute, compare_outputs, run, write_owners


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 'es' if word.endswith('h') else 's'}"


@dataclass(frozen=True)
class BufferResult:
    index: int                  # argument index
    buffer: str                 # "arg2 (param_2)"
    candidate: str              # the executor compared with the reference
    comparison: Comparison

    @property
    def ok(self) -> bool:
        return self.comparison.ok

    def as_json(self) -> dict:
        return {"buffer": self.buffer, "index": self.index, "executor": self.candidate, **self.comparison.as_json()}


@dataclass(frozen=True)
class CaseReport:
    name: str                               # golden file name, or FILE:kernel
    launch: str                             # kernel<<<grid, block>>>
    reference: str                          # "interp", or "golden (tool version, device, date)"
    results: tuple[BufferResult, ...]
    errors: tuple[tuple[str, str], ...] = ()  # (executor, message) of runs that failed
    seconds: float = 0.0
    faults: tuple[str, ...] = ()            # executors of `errors` whose run faulted (KernelFault)

    @property
    def ok(self) -> bool:
        return not self.errors and all(r.ok for r in self.results)

    def as_json(self) -> dict:
        return {"name": self.name, "launch": self.launch, "reference": self.reference, "ok": self.ok,
                "seconds": round(self.seconds, 4), "buffers": [r.as_json() for r in self.results],
                "errors": [{"executor": e, "message": m, "kind": "fault" if e in self.faults else "error"}
                           for e, m in self.errors]}


def golden_reference(g: Golden) -> str:
    p = g.provenance
    bits = [f"{p.get('tool', '?')} {p.get('tool_version', '')}".strip(), p.get("device", ""), p.get("date", "")]
    return "golden (" + ", ".join(b for b in bits if b) + ")"


def difftest(launch: Launch, executors: Sequence[str], *, golden: Golden | None = None,
             ulp: int | Mapping[str, int] = 0, writers: bool = True, name: str | None = None,
             max_steps: int | None = None) -> CaseReport:
    """Run ``launch`` on every executor and compare every array argument with the reference."""
    t0 = time.perf_counter()
    errors: list[tuple[str, str]] = []
    candidates = list(executors)
    if golden is not None:
        reference, ref_name = list(golden.outputs), golden_reference(golden)
    else:
        if len(candidates) < 2:
            raise PtxError("difftest needs two executors, or one and a golden")
        ref_name = candidates.pop(0)
        try:
            reference = run(launch, ref_name, max_steps=max_steps)[0]
        except PtxError as e:
            return CaseReport(name or launch.kernel, launch.describe(), ref_name, (), ((ref_name, str(e)),),
                              time.perf_counter() - t0, _faulted(ref_name, e))
    found: list[tuple[str, dict[int, Comparison]]] = []
    faults: list[str] = []
    for ex in candidates:
        try:
            outputs = run(launch, ex, max_steps=max_steps)[0]
        except PtxError as e:
            errors.append((ex, str(e)))
            faults.extend(_faulted(ex, e))
            continue
        found.append((ex, compare_outputs(launch, reference, outputs, ulp=ulp, writers=False)))
    if writers and any(c.first_index is not None for _, cs in found for c in cs.values()):
        try:
            owners = write_owners(launch, max_steps)      # one tracked re-run serves every executor
            found = [(ex, attribute(launch, cs, owners)) for ex, cs in found]
        except PtxError:
            pass
    results = tuple(BufferResult(i, launch.label(i), ex, c) for ex, cs in found for i, c in cs.items())
    return CaseReport(name or launch.kernel, launch.describe(), ref_name, results, tuple(errors),
                      time.perf_counter() - t0, tuple(faults))


def _faulted(executor: str, e: PtxError) -> tuple[str, ...]:
    return (executor,) if isinstance(e, KernelFault) else ()


@dataclass(frozen=True)
class DiffReport:
    cases: tuple[CaseReport, ...]

    @property
    def ok(self) -> bool:
        return all(c.ok for c in self.cases)

    @property
    def counts(self) -> dict[str, int]:
        res = [r for c in self.cases for r in c.results]
        return {"cases": len(self.cases), "buffers": len(res), "agree": sum(r.ok for r in res),
                "differ": sum(not r.ok for r in res), "errors": sum(len(c.errors) for c in self.cases)}

    def as_json(self) -> dict:
        return {"ok": self.ok, **self.counts, "cases": [c.as_json() for c in self.cases]}

    def to_json(self) -> str:
        return json.dumps(self.as_json(), indent=2)

    def render(self, failures_only: bool = False) -> str:
        lines: list[str] = []
        for c in self.cases:
            if failures_only and c.ok:
                continue
            shown = [r for r in c.results if not (failures_only and r.ok)]
            lines.append(f"{c.name}: {c.launch}  reference: {c.reference}" if c.results or not c.errors
                         else f"{c.name}:")
            if shown:
                rows = [("buffer", "executor", "result", "mismatches", "max ULP")]
                for r in shown:
                    cmp = r.comparison
                    mu = "-" if cmp.max_ulp is None else str(cmp.max_ulp)
                    rows.append((r.buffer, r.candidate, cmp.status(), f"{cmp.mismatches}/{cmp.size}", mu))
                widths = [max(len(row[k]) for row in rows) for k in range(5)]
                for n, row in enumerate(rows):
                    lines.append("  " + "  ".join(v.ljust(w) for v, w in zip(row, widths)).rstrip())
                    r = shown[n - 1] if n else None
                    if r is not None and r.comparison.first_index is not None:
                        lines.append(f"      first mismatch: {r.comparison.describe_first()}")
            for ex, msg in c.errors:
                first, *rest = msg.splitlines() or [""]
                # The message is already `file:line:col: error: ...`: say "error" once, with the label.
                label = "FAULT" if ex in c.faults else "ERROR"
                lines.append(f"  {label} on {ex}: {first.replace(': error: ', ': ', 1)}")
                lines.extend(f"      {x}" for x in rest)
        n = self.counts
        verdict = self._verdict()
        lines.append(f"difftest: {verdict}: {_plural(n['cases'], 'launch')}, "
                     f"{_plural(n['buffers'], 'buffer comparison')}, {n['differ']} differ, "
                     f"{_plural(n['errors'], 'error')}")
        return "\n".join(lines)

    def _verdict(self) -> str:
        """"all agree", or what went wrong: MISMATCH (outputs differ), FAULT (a run faulted), ERROR."""
        if self.ok:
            return "all agree"
        faulted = sum(len(c.faults) for c in self.cases)
        parts = [w for w, n in (("MISMATCH", self.counts["differ"]), ("FAULT", faulted),
                                ("ERROR", self.counts["errors"] - faulted)) if n]
        return " + ".join(parts) or "MISMATCH"

    def to_junit(self) -> str:
        """One testcase per (case, buffer, executor); a failed run is one testcase with an <error>."""
        suites = ET.Element("testsuites", name="ptxvm difftest")
        suite = ET.SubElement(suites, "testsuite", name="ptxvm difftest")
        tests = failures = errors = 0
        total = 0.0
        for c in self.cases:
            total += c.seconds
            for r in c.results:
                tests += 1
                tc = ET.SubElement(suite, "testcase", classname=c.name, name=f"{r.buffer} on {r.candidate}",
                                   time="0")
                if not r.ok:
                    failures += 1
                    cmp = r.comparison
                    f = ET.SubElement(tc, "failure", type="mismatch",
                                      message=f"{cmp.failures} of {cmp.size} elements differ from {c.reference}")
                    f.text = f"{c.launch}\nmax ULP: {cmp.max_ulp}\nfirst mismatch: {cmp.describe_first()}"
            for ex, msg in c.errors:
                tests += 1
                errors += 1
                what = "golden file" if ex == "golden" else f"launch on {ex}"
                tc = ET.SubElement(suite, "testcase", classname=c.name, name=what, time="0")
                e = ET.SubElement(tc, "error", type="launch", message=msg.splitlines()[0] if msg else "")
                e.text = msg
        for el in (suites, suite):
            el.set("tests", str(tests))
            el.set("failures", str(failures))
            el.set("errors", str(errors))
            el.set("time", f"{total:.3f}")
        suite.set("skipped", "0")
        ET.indent(suites)
        return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suites, encoding="unicode") + "\n"
