"""Sort the verdicts of `ptxvm fuzz --executors interp,emu:<target>` campaigns by cause.

    python tests/emu_classify.py RESULTS_DIR [RESULTS_DIR ...] [--json OUT.json]

`ptxvm fuzz` judges bit for bit (``.approx`` within the PTX ISA's bounds) and knows nothing of
the emulator's documented bugs and limits, which live with the tests (emu_limits.py). This
script redraws every kernel that did not agree (kernel ``i`` depends on the campaign's seed and
``i`` alone), runs it on the interpreter and the emulator again and names what it is with
``emu_limits.judge_on_emulator``: agree (e.g. after a fix), a translator refusal, a documented
emulator limit or bug by reason, or FAIL (a disagreement to attribute). It prints the counts
(agree / limit by reason / refused / FAIL) per target and one line per kernel that is not agree.
Shards of one campaign may be given together: their records add up.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import emu_limits  # noqa: E402


def classify_folder(folder: Path) -> tuple[str, Counter, list[tuple[str, str, str]]]:
    """(target, counts, [(kernel id, campaign verdict, outcome now)]) of one results folder."""
    from ptxvm.campaign.draw import draw
    from ptxvm.campaign.spec import Spec
    spec = Spec.from_json(json.dumps(json.loads((folder / "campaign.json").read_text())["spec"]))
    emus = [e for e in spec.executors[1:] if e.startswith("emu:")]
    if spec.executors[0] != "interp" or len(emus) != 1:
        raise SystemExit(f"{folder}: expected a campaign of interp and one emu:<target>, not {spec.executors}")
    target = emus[0].split(":", 1)[1]
    counts: Counter = Counter()
    lines = []
    seen: set[str] = set()
    for raw in (folder / "results.jsonl").read_text().splitlines():
        rec = json.loads(raw)
        if rec["id"] in seen:
            continue
        seen.add(rec["id"])
        if rec["verdict"] == "agree":
            counts["agree"] += 1
            continue
        if rec["verdict"] == "refused" and "generic (flat) pointers into LDS or private" in rec["detail"]:
            counts["aperture"] += 1                   # the emulator's own refusal: no need to rerun
            lines.append((rec["id"], rec["verdict"], "aperture"))
            continue
        now = _judge(draw(spec, rec["index"]).kernel(), target)
        # The shrunk kernel (the campaign's golden) isolates one cause: the code-based rules
        # (an instruction in the listing) name it more precisely than on the whole kernel,
        # whose listing may hold several suspects. Both must be explained.
        golden = folder / "failures" / f"{rec['id']}.npz"
        if golden.exists() and not now.startswith(("FAIL", "refused")):
            small = _judge(_shrunk(golden), target)
            if small.startswith("FAIL"):
                now = f"{small} (shrunk; drawn: {now})"
            elif small != "agree" and small != now:
                now = f"{small} (drawn: {now})"
        key = "FAIL" if now.startswith("FAIL") else "refused" if now.startswith("refused") else now.split(" ")[0]
        counts[key] += 1
        lines.append((rec["id"], rec["verdict"], now))
    return target, counts, lines


def _judge(gk, target: str) -> str:
    from ptxvm.testing.ptxgen import run_on
    try:
        ref = run_on(gk, "interp")
    except Exception as e:  # noqa: BLE001 - the reference failing is a finding, reported
        return f"FAIL interp raised {type(e).__name__}: {str(e).splitlines()[0][:150]}"
    return emu_limits.judge_on_emulator(gk, target, ref)


def _shrunk(golden: Path):
    """The shrunk kernel of a campaign golden, with the drawn kernel's data (its data seed)."""
    import numpy as np

    from ptxvm.testing.ptxgen import kernel_from_ptx
    with np.load(golden, allow_pickle=False) as z:
        meta = json.loads(str(z["meta"]))
        ptx = str(z["ptx"])
    prov = meta["provenance"]
    return kernel_from_ptx(ptx, tuple(meta["grid"]), tuple(meta["block"]), seed=int(prov["campaign_data_seed"]),
                           approx_ops=tuple(json.loads(prov["campaign_approx_ops"])))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folders", nargs="+", type=Path)
    ap.add_argument("--json", type=Path, help="also write the counts and lines here")
    args = ap.parse_args(argv)
    totals: dict[str, Counter] = {}
    report: dict[str, list] = {}
    for folder in args.folders:
        target, counts, lines = classify_folder(folder)
        totals.setdefault(target, Counter()).update(counts)
        report.setdefault(target, []).extend(lines)
        for kid, was, now in lines:
            print(f"  emu:{target} {kid:>8} {was:<9} -> {now}")
    failed = 0
    for target, c in totals.items():
        limits = {k: v for k, v in c.items() if k not in ("agree", "refused", "FAIL")}
        print(f"emu:{target}: {sum(c.values())} kernels: agree {c['agree']}, limits {sum(limits.values())} "
              f"({', '.join(f'{k} {v}' for k, v in sorted(limits.items())) or 'none'}), refused {c['refused']}, "
              f"FAIL {c['FAIL']}")
        failed += c["FAIL"]
    if args.json:
        args.json.write_text(json.dumps({"counts": {t: dict(c) for t, c in totals.items()},
                                         "kernels": report}, indent=1))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
