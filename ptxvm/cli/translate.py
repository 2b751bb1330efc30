"""`ptxvm translate`: PTX files -> AMD GPU code objects (.hsaco), one per file and target."""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from ..errors import PtxError

EPILOG = """\
outputs (-o OUT):
  one FILE and one target: OUT is the code object itself (as with nvcc, ptxas, llc), unless
  it is a directory or ends with "/"; the --emit-*/--metadata outputs go beside it with their
  own suffix (OUT.ll, OUT.s, OUT.json, e.g. k.hsaco -> k.ll)
  otherwise OUT is a directory (default: .), created if needed, holding for each FILE.ptx and
  each target:
    FILE.<arch>.hsaco  the code object: every kernel of the file (load with hipModuleLoadData)
    FILE.<arch>.ll     --emit-llvm: the LLVM IR before optimisation
    FILE.<arch>.s      --emit-asm: the target assembly
    FILE.<arch>.json   --metadata: per kernel, arguments (offset, size, kind), kernarg size,
                       LDS/scratch bytes, register counts, wavefront size (see docs/hip-loading.md)
  --bundle: one clang offload bundle per FILE (FILE.hipfb, or OUT itself for one FILE) holding
  every target's code object, as `hipcc --genco` writes it; hipModuleLoadData picks the
  device's entry

targets: {targets} (or "all"); files under isa/targets/ describe them. --offload-arch is
the same option (clang's name for it) and may be repeated.

examples:
  ptxvm translate k.ptx --arch gfx90a -o k.hsaco                 one code object, named k.hsaco
  ptxvm translate k.ptx --offload-arch gfx1030 -o k.co --emit-asm  k.co and k.s
  ptxvm translate tests/fixtures/nvcc/sm80/elementwise.ptx --arch gfx90a -o out/
  ptxvm translate k.ptx --arch gfx90a,gfx1030 -o out/ --emit-asm --metadata --stats
  ptxvm translate kernels/*.ptx --arch all -o build/hsaco --keep-going
  ptxvm translate k.ptx --arch gfx90a,gfx942,gfx1100 --bundle -o k.hipfb   one fat file

A file that cannot be translated (an instruction the target does not support, with its
line) is reported and, with --keep-going, the others still are; the exit status is 1 if
any translation failed, 2 for a usage error. The code objects are verified structurally
(ELF header, metadata note, kernel descriptors, argument layout); nothing here runs them on
a GPU.

Linking code objects needs ld.lld from the ziglang package: pip install 'ptxvm[amdgpu]'.
Without it, --emit-llvm and --emit-asm still write their outputs; the code objects are
reported as not written (exit status 1).
"""


def add_parser(sub, fmt) -> None:
    from ..amdgpu.targets import available
    p = sub.add_parser("translate", formatter_class=fmt, help="translate PTX to AMD GPU code objects (.hsaco)",
                       description="Translate every kernel of each PTX file into one AMD GPU code object "
                                   "per target (code object v5, loadable with hipModuleLoadData).",
                       epilog=EPILOG.format(targets=", ".join(available())))
    p.add_argument("files", nargs="+", metavar="FILE.ptx")
    p.add_argument("--arch", "--offload-arch", required=True, action="append", metavar="GFX[,GFX...]",
                   help="target(s), comma-separated or repeated, e.g. gfx90a,gfx1030, or all")
    p.add_argument("-o", "--output", "--output-dir", dest="output", default=None, metavar="OUT",
                   help="the code object's file for one FILE and one target, else a directory (default: .)")
    p.add_argument("--emit-llvm", action="store_true", help="also write the LLVM IR (.ll)")
    p.add_argument("--emit-asm", action="store_true", help="also write the assembly (.s)")
    p.add_argument("--metadata", action="store_true", help="also write the kernel metadata (.json)")
    p.add_argument("--stats", action="store_true",
                   help="print per kernel: instructions, VGPRs/SGPRs/AGPRs, LDS, scratch, waves per SIMD")
    p.add_argument("--bundle", action="store_true",
                   help="write one clang offload bundle (.hipfb) per file holding every target's code object")
    p.add_argument("--keep-going", action="store_true", help="translate the other files after a failure")
    p.add_argument("--jobs", "-j", type=_jobs, default=None, metavar="J",
                   help="translate on J worker processes (0: the CPUs this process may use); a translation "
                        "whose worker dies is reported as failed. Default: the CPUs with --keep-going, else 1 "
                        "(stopping at the first failure means translating in order)")
    p.add_argument("--json", action="store_true", help="print a JSON summary instead of text")
    p.add_argument("-q", "--quiet", action="store_true", help="print nothing but errors")
    p.set_defaults(func=cmd_translate)


def _jobs(text: str) -> int:
    """--jobs J: J >= 1, or 0 for every CPU this process may use."""
    import argparse
    try:
        n = int(text)
    except ValueError:
        n = -1
    if n < 0:
        raise argparse.ArgumentTypeError(f"expected an integer >= 0, got {text!r}")
    from ..campaign.pool import default_jobs
    return n or default_jobs()


def _usage(msg: str) -> Exception:
    from . import _UsageError  # exit status 2, like argparse's own usage errors
    return _UsageError(msg)


def _targets(specs: list[str] | str) -> list[str]:
    from ..amdgpu.targets import available
    known = available()
    spec = ",".join([specs] if isinstance(specs, str) else specs)
    names: list[str] = []
    for s in (s.strip() for s in spec.split(",")):
        if s == "all":
            names.extend(known)
        elif s:
            names.append(s)
    bad = [n for n in names if n not in known]
    if bad or not names:
        raise _usage(f"unknown --arch {', '.join(bad) or repr(spec)}; known targets: "
                                  f"{', '.join(known)} (or all)")
    return list(dict.fromkeys(names))


SIDE_SUFFIXES = {"llvm": ".ll", "asm": ".s", "metadata": ".json"}


class _Outputs:
    """Where each (file, target)'s outputs go: ``-o`` is the code object's path for one file
    and one target (its side outputs beside it), else a directory."""

    def __init__(self, spec: str | None, files: list[Path], arches: list[str], bundle: bool = False) -> None:
        out = Path(spec if spec is not None else ".")
        as_dir = spec is None or spec.endswith(("/", os.sep)) or out.is_dir()
        count = len(files) * (1 if bundle else len(arches))
        self.single_file = count == 1 and not as_dir
        self.path, self.bundled = out, bundle
        if self.single_file:
            if out.suffix in SIDE_SUFFIXES.values():
                raise _usage(f"-o {spec}: a code object named like a {out.suffix} output would be overwritten "
                             f"by it; name it e.g. {out.with_suffix('.hsaco')}")
            return
        if not as_dir and (out.exists() or out.suffix in (".hsaco", ".hipfb")):
            raise _usage(f"-o {spec} names a file, but {len(files)} input{'s' if len(files) != 1 else ''} for "
                         f"{len(arches)} target{'s' if len(arches) != 1 else ''} make {count} code objects: "
                         f"give a directory (-o DIR/)")
        stems: dict[str, Path] = {}
        for f in files:
            if stems.setdefault(f.stem, f) != f:
                raise _usage(f"{stems[f.stem]} and {f} would write the same outputs ({f.stem}.*)")

    def prepare(self) -> None:
        try:
            (self.path.parent if self.single_file else self.path).mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise _usage(f"cannot create the output directory for -o {self.path}: {exc.strerror or exc}") from None

    def hsaco(self, f: Path, arch: str) -> Path:
        return self.path if self.single_file else self.path / f"{f.stem}.{arch}.hsaco"

    def bundle(self, f: Path) -> Path:
        return self.path if self.single_file else self.path / f"{f.stem}.hipfb"

    def side(self, f: Path, arch: str, kind: str) -> Path:
        suffix = SIDE_SUFFIXES[kind]
        if self.single_file and self.bundled:         # several targets beside one bundle: k.gfx90a.ll
            return self.path.parent / f"{self.path.stem}.{arch}{suffix}"
        return self.path.with_suffix(suffix) if self.single_file else self.path / f"{f.stem}.{arch}{suffix}"


def _stats_table(path: str, arch: str, stats: dict) -> str:
    header = (f"  {'kernel':<44} {'instrs':>7} {'VGPR':>5} {'SGPR':>5} {'AGPR':>5} {'LDS':>7} {'scratch':>7} "
              f"{'waves/SIMD':>10}")
    rows = [f"{path} [{arch}]", header]
    for name, s in stats.items():
        shown = name if len(name) <= 44 else name[:41] + "..."
        rows.append(f"  {shown:<44} {s['instructions']:>7} {s['vgprs']:>5} {s['sgprs']:>5} {s['agprs']:>5} "
                    f"{s['lds_bytes']:>7} {s['scratch_bytes']:>7} {s['waves_per_simd']:>4} of {s['max_waves_per_simd']:<3}")
    return "\n".join(rows)


def _translate_one(args, f: Path, arch: str, outs: _Outputs, can_link: bool) -> tuple[list[Path], object | None]:
    """Write one file's outputs for one target; returns (written paths, CodeObject or None
    when it could not be linked). Raises PtxError/OSError."""
    from .. import load
    from ..amdgpu.codegen import compile_unlinked, link_unlinked
    u = compile_unlinked(load(f), target=arch)
    written: list[Path] = []
    if can_link:
        obj = link_unlinked(u)
        if not outs.bundled:                      # bundled objects are written together, per file
            written.append(obj.save(outs.hsaco(f, arch)))
    for wanted, kind, text in ((args.emit_llvm, "llvm", lambda: u.llvm_ir), (args.emit_asm, "asm", u.asm)):
        if wanted:
            written.append(outs.side(f, arch, kind))
            written[-1].write_text(text())
    if not can_link:
        return written, None
    if args.metadata:
        written.append(outs.side(f, arch, "metadata"))
        written[-1].write_text(obj.metadata_json() + "\n")
    return written, obj


@dataclass(frozen=True)
class _Done:
    """One (file, target) translated, as a worker of --jobs hands it back (no LLVM objects)."""

    written: tuple[Path, ...] = ()
    hsaco: bytes = b""
    kernels: int = 0
    stats: dict | None = None
    error: str | None = None
    seconds: float = 0.0


def translate_job(job: tuple[Path, str], *, args, outs: _Outputs, can_link: bool) -> _Done:
    """Translate one file for one target (here or in a worker process of --jobs)."""
    from ..amdgpu.link import MISSING_LINKER
    f, arch = job
    t0 = time.perf_counter()
    try:
        written, obj = _translate_one(args, f, arch, outs, can_link)
        if obj is None:                       # --emit-* written, no linker for the code object
            raise PtxError(f"{outs.hsaco(f, arch)} not written: {MISSING_LINKER}")
    except (PtxError, OSError) as exc:
        text = str(exc) if isinstance(exc, PtxError) else f"{f}: error: {exc.strerror or exc}"
        return _Done(error=text, seconds=time.perf_counter() - t0)
    # Instruction counts need the assembly listing (a second code generation): only when it is
    # made anyway.
    stats = obj.stats(instructions=args.stats or args.emit_asm) if args.json or args.stats else None
    return _Done(tuple(written), obj.hsaco, len(obj.kernels), stats, None, time.perf_counter() - t0)


def _results(args, jobs: list, run) -> Iterator[tuple[tuple[Path, str], _Done]]:
    """Each job's _Done, here one after the other, or on --jobs worker processes as they finish
    (a translation whose worker dies, an LLVM abort say, is a failed one; the others go on)."""
    from ..campaign.pool import default_jobs
    wanted = args.jobs if args.jobs is not None else default_jobs() if args.keep_going else 1
    n = min(wanted, len(jobs))
    if n <= 1:
        for job in jobs:
            yield job, run(job)
        return
    from ..campaign.pool import imap_isolated
    for job, done in imap_isolated(run, jobs, n):
        if not isinstance(done, _Done):
            done = _Done(error=f"{job[0]}: error: translating for {job[1]}: {done.why}")
        yield job, done


def cmd_translate(args) -> int:
    from ..amdgpu.link import MISSING_LINKER, linker_available

    arches = _targets(args.arch)
    files = [Path(f) for f in args.files]
    outs = _Outputs(args.output, files, arches, bundle=args.bundle)
    can_link = linker_available()
    if not can_link and not (args.emit_llvm or args.emit_asm):
        print(f"error: {MISSING_LINKER}", file=sys.stderr)     # nothing this run could write
        return 1
    outs.prepare()
    jobs = [(f, a) for f in files for a in arches]
    progress = len(jobs) > 1 and not args.quiet and not args.json
    summary, failed = [], 0
    bundles: dict[Path, dict[str, bytes]] = {}
    run = partial(translate_job, args=args, outs=outs, can_link=can_link)
    for n, ((f, arch), done) in enumerate(_results(args, jobs, run), 1):
        if progress:
            print(f"[{n}/{len(jobs)}] {f} -> {arch} ...", end="", file=sys.stderr, flush=True)
        entry = {"file": str(f), "arch": arch}
        if done.error is not None:
            failed += 1
            if progress:
                print(" failed", file=sys.stderr)
            print(done.error, file=sys.stderr)
            summary.append({**entry, "ok": False, "error": done.error})
            if not args.keep_going:
                break
            continue
        if progress:
            print(f" ok ({done.seconds:.1f} s)", file=sys.stderr)
        written = list(done.written)
        if args.bundle:
            bundles.setdefault(f, {})[arch] = done.hsaco
            if len(bundles[f]) == len(arches):        # in --arch order, however the jobs finished
                bundles[f] = {a: bundles[f][a] for a in arches}
                written.insert(0, _write_bundle(outs.bundle(f), bundles[f]))
        result = {**entry, "ok": True, "outputs": [str(p) for p in written], "seconds": round(done.seconds, 3)}
        if done.stats is not None:
            result["kernels"] = done.stats
        summary.append(result)
        if not args.quiet and not args.json:
            _report(args, f, arch, done, result, written, bundles.get(f), len(arches))
    if args.json:
        order = {(str(f), a): k for k, (f, a) in enumerate(jobs)}          # workers finish in any order
        summary.sort(key=lambda r: order[r["file"], r["arch"]])
        print(json.dumps({"results": summary, "failed": failed}, indent=2))
    elif failed and not args.quiet and len(jobs) > 1:
        print(f"{failed} of {len(jobs)} translations failed", file=sys.stderr)
    return 1 if failed else 0


def _write_bundle(path: Path, objects: dict[str, bytes]) -> Path:
    from ..amdgpu.bundle import write_bundle
    path.write_bytes(write_bundle(objects))
    return path


def _report(args, f: Path, arch: str, obj, result: dict, written: list[Path], bundled: dict | None,
            n_arches: int) -> None:
    """One line per code object written (per bundle, once all its targets are in it)."""
    kernels = f"{obj.kernels} kernel{'s' if obj.kernels != 1 else ''}"
    if bundled is None:
        print(f"{written[0]}: {kernels}, {len(obj.hsaco)} bytes")
    elif len(bundled) == n_arches:
        print(f"{written[0]}: {kernels}, {n_arches} target{'s' if n_arches != 1 else ''} "
              f"({', '.join(bundled)}), {written[0].stat().st_size} bytes")
    if args.stats:
        print(_stats_table(str(f), arch, result["kernels"]))
