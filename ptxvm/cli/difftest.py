"""`ptxvm difftest` and `ptxvm record`: compare executors, record and replay goldens.

Exit codes: 0 all agree, 1 a mismatch (or a launch that failed / bad PTX),
2 usage errors (bad options, argument specs, executors this build lacks).
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from functools import partial
from pathlib import Path

from .run import EPILOG as RUN_EPILOG
from .run import (ArgError, add_launch_options, check_args, check_shared, device_help, kernel_label,
                  parse_arg, parse_dims, positive_int, resolve_kernel, run_json)

_ARGS_HELP = RUN_EPILOG.split("\nexamples:")[0]

DIFFTEST_EPILOG = _ARGS_HELP + """
examples:
  ptxvm difftest tests/fixtures/nvcc/sm80/elementwise.ptx --kernel vector_add --grid 4 --block 256 \\
      --arg 'f32[1000]=random(seed=1)' --arg 'f32[1000]=arange' --arg 'f32[1000]=zeros' --arg 1000 \\
      --executors interp,cpu
  ptxvm difftest --golden vadd.npz                  replay a recording on every executor of this build
  ptxvm difftest --golden . --junit out.xml         every *.npz in a folder, JUnit XML for CI
  ptxvm difftest tests/fixtures/nvcc/sm80-lineinfo/elementwise.ptx --golden vadd.npz
                                                    new PTX against an old recording's inputs/outputs
  ptxvm difftest --golden vadd.npz --ulp 2          tolerate 2 ULP (for .approx math); --ulp arg2=4 per buffer

Each array argument is compared bit for bit (NaN payloads and the sign of zero count)
with the reference: the golden's outputs, or the first executor's. The report names,
per buffer, the mismatch count, the largest ULP distance (floats) and the first
mismatching element with both values and the thread that wrote it (found by re-running
on the interpreter with write tracking). Exit status: 0 all agree, 1 mismatch, 2 usage.
"""

RECORD_EPILOG = _ARGS_HELP + """
examples:
  ptxvm record tests/fixtures/nvcc/sm80/elementwise.ptx --kernel vector_add --grid 4 --block 256 \\
      --arg 'f32[1000]=random(seed=1)' --arg 'f32[1000]=arange' --arg 'f32[1000]=zeros' --arg 1000 \\
      -o vadd.npz
  ptxvm record tests/fixtures/nvcc/sm80/elementwise.ptx -k saxpy -g 8 -b 128 -a 1024 -a 2.5 \\
      -a 'f32[1024]=random(seed=2)' -a 'f32[1024]=zeros' -d cpu -o saxpy.npz

A golden is one .npz: the PTX text, kernel, grid, block, shared memory, every argument
and the final contents of every array argument, with provenance (tool, version,
executor/device, date, host). `--device cuda` records on an NVIDIA GPU through CuPy or
cuda-python; `ptxvm difftest --golden FILE` replays it.
"""


def _usage(msg: str) -> Exception:
    from . import _UsageError
    return _UsageError(msg)


def _launch_options(p, *, file_required: bool) -> None:
    p.add_argument("file", metavar="FILE.ptx", nargs=None if file_required else "?",
                   help="the PTX file" + ("" if file_required else " (with --golden: replaces the golden's PTX)"))
    add_launch_options(p, defaults=False)
    p.add_argument("--cooperative", action="store_true", default=None,
                   help="a cooperative launch (cudaLaunchCooperativeKernel), as `ptxvm run --cooperative`: "
                        "every block resident at once, so this_grid().sync() works (recorded in the golden)")


def add_parsers(sub, fmt) -> None:
    p = sub.add_parser("difftest", formatter_class=fmt, help="run a launch on several executors or against goldens",
                       description="Run one kernel launch on several executors (or replay recorded goldens) "
                                   "and compare every array argument bit for bit.", epilog=DIFFTEST_EPILOG)
    _launch_options(p, file_required=False)
    p.add_argument("--executors", "-e", metavar="A,B,...",
                   help="the --device names to run (default: every one this installation can run but test "
                        "tools such as emu:*); without --golden the first is the reference")
    p.add_argument("--golden", metavar="G.npz|DIR", help="compare with a recording (or every *.npz in DIR)")
    p.add_argument("--ulp", action="append", default=[], metavar="N|BUF=N",
                   help="ULP tolerance for float buffers: for all, or per buffer (argN or parameter name)")
    p.add_argument("--no-writers", action="store_true", help="do not re-run to find the writing thread")
    p.add_argument("--max-steps", type=positive_int, default=None, metavar="N",
                   help="watchdog step budget, at least 1 (default: the executor's)")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument("--junit", metavar="OUT.xml", help="also write a JUnit XML report")
    p.add_argument("-q", "--quiet", action="store_true", help="print only failures and the summary line")
    p.add_argument("--jobs", "-j", type=positive_int, default=None, metavar="J",
                   help="with --golden DIR: worker processes (default: the CPUs this process may use); a "
                        "golden whose worker dies is reported and the others go on")
    p.set_defaults(func=cmd_difftest)

    p = sub.add_parser("record", formatter_class=fmt, help="run a launch and save a golden file",
                       description="Run one kernel launch on an executor (the interpreter, the host JIT, or a "
                                   "real NVIDIA GPU) and save inputs and outputs as a golden .npz.",
                       epilog=RECORD_EPILOG)
    _launch_options(p, file_required=True)
    p.add_argument("--device", "-d", default=None, metavar="NAME",
                   help=device_help("; cuda = an NVIDIA GPU through CuPy or cuda-python", "{ref}"))
    # The spelling before --device everywhere: still accepted, not advertised.
    p.add_argument("--executor", "-e", dest="device", default=argparse.SUPPRESS, help=argparse.SUPPRESS)
    p.add_argument("-o", "--output", required=True, metavar="OUT.npz", help="the golden file to write")
    p.add_argument("--json", action="store_true",
                   help="print one JSON object: the launch recorded, its provenance and the golden's path (or the error)")
    p.add_argument("-q", "--quiet", action="store_true", help="print nothing but errors")
    p.set_defaults(func=cmd_record)


# ------------------------------------------------------------------ helpers

def _launch_from_args(args):
    """A Launch from FILE, --kernel, --grid, --block, --arg, --shared (specs are usage errors)."""
    from ..driver import Module
    from ..testing.golden import make_launch
    mod = Module.from_file(args.file)
    try:
        name = resolve_kernel(list(mod.kernels), args.kernel, args.file)
        values = [parse_arg(s, i) for i, s in enumerate(args.arg)]
        grid, block = parse_dims(args.grid or "1", "grid"), parse_dims(args.block or "1", "block")
        shared = check_shared(args.shared)
        check_args(name, mod.get_function(name).params, values, args.arg)
    except ArgError as e:
        raise _usage(e.message) from None
    # From the path, not `mod`: the golden keeps the file's own text (and its line numbers).
    return make_launch(Path(args.file), name, grid, block, values, shared_mem=shared,
                       cooperative=bool(args.cooperative))


def _executors(text: str | None, flag: str = "--executors") -> list[str]:
    """The executors ``text`` names (default: every one this installation can run). A name
    nobody registered is a usage error; a registered one whose package is missing is
    MissingPackage (exit 1); `cuda` is probed for a GPU."""
    from ..driver import executors as registry
    from ..testing.golden import ExecutorUnavailable, check_executor
    names = [x.strip() for x in text.split(",") if x.strip()] if text else list(registry.defaults())
    for n in names:
        if n in registry.names():
            registry.require(n, f"{flag} {n}")
            continue
        try:
            check_executor(n)
        except ExecutorUnavailable as e:
            raise _usage(e.message) from None
    return names


def _ulp(specs: list[str]):
    table: dict[str, int] = {}
    for s in specs:
        key, eq, val = s.rpartition("=")
        try:
            n = int(val)
        except ValueError:
            n = -1
        if n < 0:
            raise _usage(f"--ulp {s!r}: expected N or BUFFER=N with N >= 0 (e.g. 2, arg2=4, param_1=1)")
        table[key if eq else "*"] = n
    if set(table) <= {"*"}:
        return table.get("*", 0)
    return table


# ------------------------------------------------------------------ commands

def cmd_difftest(args) -> int:
    from ..campaign.pool import default_jobs
    from ..testing.golden import golden_files
    from ..testing.report import CaseReport, DiffReport, difftest
    ulp = _ulp(args.ulp)
    executors = _executors(args.executors)
    common = {"ulp": ulp, "writers": not args.no_writers, "max_steps": args.max_steps}
    cases: list[CaseReport] = []
    if args.golden:
        if args.arg or args.grid or args.block or args.shared is not None or args.cooperative:
            raise _usage("with --golden the launch (grid, block, arguments) comes from the golden; "
                         "drop --grid/--block/--arg/--shared/--cooperative")
        if not executors:
            raise _usage("no executors to run")
        files = golden_files(args.golden)
        many = Path(args.golden).is_dir()
        tty = sys.stderr.isatty()
        jobs = min(args.jobs or default_jobs(), len(files))
        case = partial(golden_case, file=args.file, kernel=args.kernel, executors=tuple(executors),
                       common=common, many=many)
        if many and jobs > 1:
            cases = _parallel(case, files, jobs, tty)
        else:
            for n, path in enumerate(files, 1):
                if many:
                    print(f"difftest [{n}/{len(files)}] {path.name}", file=sys.stderr,
                          end="\r" if tty else "\n", flush=True)
                cases.append(case(path))
        if many and tty:
            print(" " * 60, file=sys.stderr, end="\r")
    else:
        if not args.file:
            raise _usage("give a FILE.ptx with its launch, or --golden G.npz|DIR")
        if len(executors) < 2:
            raise _usage(f"comparing needs two executors (e.g. --executors interp,cpu) or --golden; "
                         f"got {', '.join(executors) or 'none'}")
        launch = _launch_from_args(args)
        cases.append(difftest(launch, executors, name=args.file, **common))
    report = DiffReport(tuple(cases))
    if args.junit:
        Path(args.junit).write_text(report.to_junit())
    if args.json:
        print(report.to_json())
    elif args.quiet:
        print(report.render(failures_only=True))
    else:
        print(report.render())
    return 0 if report.ok else 1


def golden_case(path: Path, *, file: str | None, kernel: str | None, executors: tuple[str, ...], common: dict,
                many: bool):
    """One golden replayed (in this process or a worker of --jobs): its CaseReport."""
    from ..testing.golden import GoldenError, load_golden, make_launch
    from ..testing.report import CaseReport, difftest
    try:
        g = load_golden(path)
    except GoldenError as e:
        if not many:
            raise
        return CaseReport(path.name, "-", "golden", (), (("golden", e.message),))
    launch = g.launch
    if file:       # new PTX, old recording: same kernel (or --kernel), inputs and outputs
        fresh = make_launch(Path(file), _kernel_of(file, kernel or launch.kernel), launch.grid, launch.block,
                            [a.value if a.kind == "array" else a.value.tobytes() if a.kind == "bytes"
                             else a.value[()] for a in launch.args], shared_mem=launch.shared_mem,
                            cooperative=launch.cooperative)
        launch, g = fresh, replace(g, launch=fresh)
    return difftest(launch, executors, golden=g, name=path.name, **common)


def _parallel(case, files: list[Path], jobs: int, tty: bool) -> list:
    """Goldens on ``jobs`` worker processes; a golden whose worker dies (or raises) is an error
    case of its own and the others go on. Cases come back in file order."""
    from ..campaign.pool import Died, imap_isolated
    from ..testing.report import CaseReport
    done: dict[Path, object] = {}
    shown = 0
    for path, value in imap_isolated(case, files, jobs):
        if not hasattr(value, "ok"):
            what = "worker" if isinstance(value, Died) else "ptxvm"
            value = CaseReport(path.name, "-", "golden", (), ((what, value.why),))
        done[path] = value
        while shown < len(files) and files[shown] in done:      # progress in file order, as serially
            shown += 1
            print(f"difftest [{shown}/{len(files)}] {files[shown - 1].name}", file=sys.stderr,
                  end="\r" if tty else "\n", flush=True)
    return [done[p] for p in files]


def _kernel_of(file: str, wanted: str) -> str:
    """The PTX name in ``file`` of a golden's (or --kernel's) kernel: exact, demangled or short."""
    from ..driver import Module
    try:
        return resolve_kernel(list(Module.from_file(file).kernels), wanted, file)
    except ArgError as e:
        raise _usage(e.message) from None


def cmd_record(args) -> int:
    return run_json(_record, args) if args.json else _record(args)


def _record(args) -> int:
    from ..testing.golden import record, save_golden
    from ..driver import executors as registry
    # Default: the reference executor (a recording is a reference), whatever $PTXVM_DEVICE says.
    executor = _executors(args.device or registry.names()[0], "--device")
    if len(executor) != 1:
        raise _usage(f"--device takes one name: {', '.join(registry.names())} or cuda")
    launch = _launch_from_args(args)
    g = record(launch, executor[0])
    out = save_golden(g, args.output)
    p = g.provenance
    if args.json:
        print(json.dumps({"ok": True, "golden": str(out), "kernel": launch.kernel, "launch": launch.describe(),
                          "grid": list(launch.grid), "block": list(launch.block), "shared": launch.shared_mem,
                          "cooperative": launch.cooperative,
                          "args": len(launch.args), "arrays": len(launch.arrays),
                          "provenance": {k: v for k, v in p.items() if isinstance(v, (str, int, float, bool))}},
                         indent=2))
    elif not args.quiet:
        print(f"recorded {launch.describe()} on {p['executor']} ({p['device']}, {p['tool']} {p['tool_version']}): "
              f"{len(launch.args)} arguments, {len(launch.arrays)} output arrays -> {out}")
        if kernel_label(launch.kernel) != launch.kernel:
            print(f"  kernel {kernel_label(launch.kernel)}")
    return 0
