"""`ptxvm fuzz`: a differential-testing campaign of generated kernels (ptxvm.campaign).

Exit codes: 0 every kernel agreed (or was refused by a non-reference executor), 1 a
mismatch, crash, error or dead worker, 2 usage errors.
"""

from __future__ import annotations

import json
from pathlib import Path

EPILOG = """\
A campaign is a pure function of --seed, --executors, --features and --max-instructions:
kernel i is drawn from (seed, i) alone, so `--shard I/N` runs exactly the kernels k of the
campaign with k % N == I, on any machine, and the N shards together are the whole campaign.

Every kernel that does not agree (a mismatch, a crash or error of an executor, a refusal,
a worker process that died) is shrunk to a small kernel failing the same way and saved in
RESULTS/failures/ as a golden (ID.npz: the PTX, inputs, launch, the reference's outputs
and every executor's, provenance) and as ID.ptx; `ptxvm difftest --golden ID.npz
--executors NAME` replays it. RESULTS/results.jsonl has one line per kernel, written as
results arrive; --resume continues a campaign from it.

features (comma-separated): calls (draw calls of generated .funcs), known-bugs (also the
forms the interpreter is known to get wrong), +NAME / -NAME (every kernel has / has no
chunk kind or opcode NAME: inst approx carry mem atomic special if loop switch exchange
warp partialwarp barrier call, or an opcode such as cvt, shfl, vote, bar; warp operations
by the generator's names: shfl vote match redux activemask barwarp)

examples:
  ptxvm fuzz --count 200 --seed 1 --results fz                  all local CPUs
  ptxvm fuzz --count 10000 --seed 7 --shard 2/4 --results fz-2  one shard of four
  ptxvm fuzz --count 400 --seed 1 --features calls,+cvt --jobs 2 --json
  ptxvm fuzz --count 100000 --seed 3 --cluster tcp://scheduler:8786 --results big
  ptxvm fuzz --count 200 --seed 1 --results fz --resume --junit fz.xml
"""


def _usage(msg: str) -> Exception:
    from . import _UsageError
    return _UsageError(msg)


def _nonneg(text: str) -> int:
    import argparse
    try:
        v = int(text)
    except ValueError:
        v = -1
    if v < 0:
        raise argparse.ArgumentTypeError(f"expected an integer >= 0, got {text!r}")
    return v


def _positive(text: str) -> int:
    import argparse
    v = _nonneg(text)
    if v < 1:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {text!r}")
    return v


def add_parser(sub, fmt) -> None:
    p = sub.add_parser("fuzz", formatter_class=fmt, help="differential fuzzing campaign of generated kernels",
                       description="Generate valid random PTX kernels, run each on several executors, and "
                                   "save every disagreement as a shrunk golden file.", epilog=EPILOG)
    p.add_argument("--count", "-n", type=_positive, default=100, metavar="N", help="kernels in the campaign (100)")
    p.add_argument("--seed", "-s", type=_nonneg, default=0, metavar="S", help="the campaign's seed (0)")
    p.add_argument("--executors", "-e", default="interp,cpu", metavar="A,B,...",
                   help="executors to compare, the first is the reference (interp,cpu; e.g. interp,cpu,emu:gfx942)")
    p.add_argument("--features", "-f", default=None, metavar="LIST", help="what to draw (see below)")
    p.add_argument("--max-instructions", type=_positive, default=40, metavar="N",
                   help="size bound of a kernel's body (40, as the test suite's campaign)")
    p.add_argument("--shard", default="0/1", metavar="I/N", help="run only kernels k with k %% N == I")
    p.add_argument("--results", default="fuzz-results", metavar="DIR",
                   help="results folder (fuzz-results): results.jsonl, failures/")
    p.add_argument("--resume", action="store_true", help="continue the campaign already in DIR")
    p.add_argument("--jobs", "-j", type=_positive, default=None, metavar="J",
                   help="worker processes (default: the CPUs this process may use)")
    p.add_argument("--cluster", metavar="ADDRESS",
                   help="run on a Dask scheduler (tcp://host:8786; `local[:N]` starts one here); "
                        "needs pip install 'ptxvm[cluster]' here and on the workers")
    p.add_argument("--batch", type=_positive, default=None, metavar="K", help="kernels per cluster task (8)")
    p.add_argument("--shrink-probes", type=_nonneg, default=150, metavar="N",
                   help="executions spent shrinking each failure (150; 0: save it as drawn)")
    p.add_argument("--plugin", action="append", default=[], metavar="MODULE|FILE.py",
                   help="import this first, here and in every worker (e.g. to register an executor)")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.add_argument("--junit", metavar="OUT.xml", help="also write a JUnit XML report (one case per kernel)")
    p.add_argument("--no-progress", action="store_true", help="no progress line, even on a terminal")
    p.add_argument("-q", "--quiet", action="store_true", help="print only failures and the summary line")
    p.set_defaults(func=cmd_fuzz)


def _executors(text: str) -> tuple[str, ...]:
    from ..driver import executors as registry
    names = tuple(x.strip() for x in text.split(",") if x.strip())
    if not names:
        raise _usage("--executors names no executor")
    if len(set(names)) != len(names):
        raise _usage(f"--executors {text!r} names an executor twice")
    for n in names:
        if n not in registry.names():
            raise _usage(f"--executors: `{n}` is not an executor of this build; it has {', '.join(registry.names())}")
        registry.require(n, f"--executors {n}")
    return names


def cmd_fuzz(args) -> int:
    from ..campaign.case import load_plugins
    from ..campaign.pool import default_jobs
    from ..campaign.runner import exit_status, run_campaign
    from ..campaign.spec import Spec, parse_features, parse_shard
    try:
        load_plugins(tuple(args.plugin))
    except (ImportError, OSError, SyntaxError) as e:
        raise _usage(f"--plugin: {type(e).__name__}: {e}") from None
    if args.cluster and args.jobs:
        raise _usage("--jobs is for this machine; with --cluster the cluster's workers run the kernels")
    spec = Spec(seed=args.seed, count=args.count, executors=_executors(args.executors),
                features=parse_features(args.features), max_instructions=args.max_instructions,
                shard=parse_shard(args.shard), shrink_probes=args.shrink_probes,
                plugins=tuple(str(Path(p).resolve()) if p.endswith(".py") else p for p in args.plugin))
    summary = run_campaign(spec, Path(args.results), jobs=args.jobs or default_jobs(), cluster=args.cluster,
                           resume=args.resume, progress=False if args.no_progress or args.json else None,
                           batch=args.batch)
    if args.junit:
        from ..campaign.results import Results
        r = Results(Path(args.results), spec, resume=True)
        r.close()
        Path(args.junit).write_text(r.junit(), encoding="utf-8")
    print(json.dumps(summary, indent=2) if args.json else render(summary, args.quiet))
    return exit_status(summary)


def render(s: dict, quiet: bool = False) -> str:
    verdicts = ", ".join(f"{k} {v}" for k, v in s["verdicts"].items()) or "nothing to run"
    where = f"cluster {s['cluster']} ({s.get('workers', '?')} workers)" if s.get("cluster") else f"{s['jobs']} jobs"
    rate = f"{s['kernels_per_second']:.2f} kernels/s" if s.get("kernels_per_second") else "-"
    lines = [f"fuzz: seed {s['seed']}, shard {s['shard']}, {s['recorded']} of {s['count']} kernels recorded "
             f"({s['ran']} now, {s['seconds']:.1f} s, {rate}, {where}), executors {','.join(s['executors'])}, "
             f"features {s['features']}: {verdicts}"]
    if s.get("duplicates_dropped"):
        lines.append(f"  {s['duplicates_dropped']} duplicate results dropped (retried tasks)")
    for f in s["failures"]:
        if quiet and f["verdict"] == "refused":
            continue
        lines.append(f"  {f['verdict']:8} {f['id']:>12}  {f['executor'] or '-'}: {f['detail'][:160]}")
        if f.get("rerun"):
            lines.append(f"           {f['rerun']}")
    lines.append(f"results: {s['results']}")
    return "\n".join(lines)
