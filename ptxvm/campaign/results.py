"""A campaign's results folder, written as results arrive:

    campaign.json        the spec and its identity (a folder is resumed only by the same campaign,
                         drawn by the same ptxvm and hypothesis versions)
    results.jsonl        one JSON object per kernel (case.CaseResult.record()), appended and flushed
    failures/ID.npz      the shrunk golden of every kernel that did not agree
    failures/ID.ptx      its PTX text (the minimal program)

Every kernel is recorded at most once: a result whose kernel id is already in the
folder (a retried cluster task, a resumed campaign) is dropped and counted. A line cut
short by a killed campaign is ignored when resuming, so that kernel runs again.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path
from xml.sax.saxutils import escape, quoteattr

from .case import FAILURES, CaseResult
from .spec import CampaignError, Spec

RESULTS, CAMPAIGN, FAILURE_DIR = "results.jsonl", "campaign.json", "failures"


def identity(spec: Spec) -> dict:
    """What a folder may only be resumed with: the spec's identity and the generator's versions
    (another ptxvm or hypothesis may draw other kernels for the same (seed, index))."""
    import hypothesis

    from .. import __version__
    return {**spec.identity(), "generator": f"ptxvm {__version__}, hypothesis {hypothesis.__version__}"}


class Results:
    def __init__(self, folder: Path, spec: Spec, *, resume: bool) -> None:
        self.folder, self.spec = Path(folder), spec
        self.records: dict[str, dict] = {}
        self.duplicates = 0
        self.folder.mkdir(parents=True, exist_ok=True)
        self._open(resume)
        self._file = open(self.folder / RESULTS, "a", encoding="utf-8")  # noqa: SIM115 - open for the run

    def _open(self, resume: bool) -> None:
        meta, lines = self.folder / CAMPAIGN, self.folder / RESULTS
        if meta.exists() or lines.exists():
            if not resume:
                raise CampaignError(f"{self.folder} already holds a campaign's results: pass --resume to "
                                    "continue it, or choose another --results folder")
            try:
                old = json.loads(meta.read_text(encoding="utf-8"))["identity"]
            except (OSError, ValueError, KeyError, TypeError) as e:
                raise CampaignError(f"{meta}: not a campaign description ({e})") from None
            now = identity(self.spec)
            if old != now:
                diff = {k: (old.get(k), v) for k, v in now.items() if old.get(k) != v}
                raise CampaignError(f"{self.folder} holds another campaign; --resume needs the same options "
                                    "and generator: " + ", ".join(f"{k} was {a!r}, now {b!r}"
                                                                  for k, (a, b) in diff.items()))
            self._load(lines)
        meta.write_text(json.dumps({"identity": identity(self.spec), "spec": json.loads(self.spec.to_json())},
                                   indent=1, sort_keys=True) + "\n", encoding="utf-8")

    def _load(self, path: Path) -> None:
        if not path.exists():
            return
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                rec = json.loads(line)
            except ValueError:
                continue                        # cut short when the campaign was killed
            if isinstance(rec, dict) and isinstance(rec.get("id"), str):
                self.records.setdefault(rec["id"], rec)
        # A cut line has no newline: the next record must start on a line of its own.
        with open(path, "rb+") as f:
            f.seek(0, os.SEEK_END)
            if f.tell():
                f.seek(-1, os.SEEK_END)
                if f.read(1) != b"\n":
                    f.write(b"\n")

    def pending(self) -> list[int]:
        """Indices of this shard not recorded yet, in order."""
        return [i for i in self.spec.indices() if self.spec.kernel_id(i) not in self.records]

    def add(self, r: CaseResult) -> bool:
        """Record a result (and write its golden); False if its kernel was recorded already."""
        if r.id in self.records:
            self.duplicates += 1
            return False
        rec = r.record()
        if r.golden is not None or r.ptx_min is not None:
            fail = self.folder / FAILURE_DIR
            fail.mkdir(exist_ok=True)
            if r.golden is not None:
                (fail / f"{r.id}.npz").write_bytes(r.golden)
                rec["golden"] = f"{FAILURE_DIR}/{r.id}.npz"
            if r.ptx_min is not None:
                (fail / f"{r.id}.ptx").write_text(r.ptx_min, encoding="utf-8")
                rec["ptx"] = f"{FAILURE_DIR}/{r.id}.ptx"
        self.records[r.id] = rec
        self._file.write(json.dumps(rec, sort_keys=True) + "\n")
        self._file.flush()
        return True

    def close(self) -> None:
        self._file.close()

    # ------------------------------------------------------------ summaries

    def counts(self) -> Counter:
        return Counter(r["verdict"] for r in self.records.values())

    def failures(self) -> list[dict]:
        return sorted((r for r in self.records.values() if r["verdict"] != "agree"), key=lambda r: r["index"])

    def rerun_command(self, rec: dict) -> str:
        ex = rec.get("executor") or ",".join(self.spec.executors[1:])
        return f"ptxvm difftest --golden {self.folder / rec['golden']} --executors {ex}" if rec.get("golden") else ""

    def summary(self, seconds: float, ran: int) -> dict:
        counts = self.counts()
        return {
            "results": str(self.folder), "seed": self.spec.seed, "count": self.spec.count,
            "shard": self.spec.shard.text(), "executors": list(self.spec.executors),
            "features": self.spec.features.text(), "recorded": len(self.records), "ran": ran,
            "verdicts": dict(sorted(counts.items())), "duplicates_dropped": self.duplicates,
            "seconds": round(seconds, 3), "kernels_per_second": round(ran / seconds, 3) if seconds > 0 else None,
            "ok": not any(counts[v] for v in FAILURES),
            "failures": [{"id": r["id"], "verdict": r["verdict"], "executor": r.get("executor"),
                          "detail": r.get("detail", ""), "golden": r.get("golden"), "ptx": r.get("ptx"),
                          "rerun": self.rerun_command(r)} for r in self.failures()],
        }

    def junit(self) -> str:
        """One test case per kernel recorded; failures carry the detail and the rerun command."""
        recs = sorted(self.records.values(), key=lambda r: r["index"])
        bad = sum(r["verdict"] in FAILURES for r in recs)
        skipped = sum(r["verdict"] == "refused" for r in recs)
        out = ['<?xml version="1.0" encoding="UTF-8"?>',
               f'<testsuite name="ptxvm fuzz seed {self.spec.seed}" tests="{len(recs)}" failures="{bad}" '
               f'skipped="{skipped}" time="{sum(r.get("seconds", 0) for r in recs):.3f}">']
        for r in recs:
            head = f'  <testcase classname="ptxvm.fuzz" name={quoteattr(r["id"])} time="{r.get("seconds", 0):.3f}"'
            text = escape(f"{r.get('executor')}: {r.get('detail', '')}\n{self.rerun_command(r)}")
            if r["verdict"] in FAILURES:
                out.append(f'{head}><failure message={quoteattr(r["verdict"])}>{text}</failure></testcase>')
            elif r["verdict"] == "refused":
                out.append(f'{head}><skipped message="refused">{text}</skipped></testcase>')
            else:
                out.append(f"{head}/>")
        out.append("</testsuite>")
        return "\n".join(out) + "\n"
