"""`ptxvm translate`: PTX files -> AMD GPU code objects (.hsaco), one per file and target."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from .errors import PtxError

EPILOG = """\
outputs (in OUTDIR, for each FILE.ptx and each target):
  FILE.<arch>.hsaco    the code object: every kernel of the file (load with hipModuleLoadData)
  FILE.<arch>.ll       --emit-llvm: the LLVM IR before optimisation
  FILE.<arch>.s        --emit-asm: the target assembly
  FILE.<arch>.json     --metadata: per kernel, arguments (offset, size, kind), kernarg size,
                       LDS/scratch bytes, register counts, wavefront size (see docs/hip-loading.md)

targets: {targets} (or "all"); files under isa/targets/ describe them.

examples:
  ptxvm translate tests/fixtures/nvcc/sm80/elementwise.ptx --arch gfx90a -o out/
  ptxvm translate k.ptx --arch gfx90a,gfx1030 -o out/ --emit-asm --metadata --stats
  ptxvm translate kernels/*.ptx --arch all -o build/hsaco --keep-going

A file that cannot be translated (an instruction the target does not support, with its
line) is reported and, with --keep-going, the others still are; the exit status is 1 if
any translation failed. The code objects are verified structurally (ELF header, metadata
note, kernel descriptors, argument layout); nothing here runs them on a GPU.
"""


def add_parser(sub, fmt) -> None:
    from .amdgpu.targets import available
    p = sub.add_parser("translate", formatter_class=fmt, help="translate PTX to AMD GPU code objects (.hsaco)",
                       description="Translate every kernel of each PTX file into one AMD GPU code object "
                                   "per target (code object v5, loadable with hipModuleLoadData).",
                       epilog=EPILOG.format(targets=", ".join(available())))
    p.add_argument("files", nargs="+", metavar="FILE.ptx")
    p.add_argument("--arch", "-a", required=True, metavar="GFX[,GFX...]",
                   help="target(s), comma-separated, e.g. gfx90a,gfx1030, or all")
    p.add_argument("-o", "--output-dir", default=".", metavar="OUTDIR", help="where to write (default: .)")
    p.add_argument("--emit-llvm", action="store_true", help="also write the LLVM IR (.ll)")
    p.add_argument("--emit-asm", action="store_true", help="also write the assembly (.s)")
    p.add_argument("--metadata", action="store_true", help="also write the kernel metadata (.json)")
    p.add_argument("--stats", action="store_true",
                   help="print per kernel: instructions, VGPRs/SGPRs/AGPRs, LDS, scratch, waves per SIMD")
    p.add_argument("--keep-going", "-k", action="store_true", help="translate the other files after a failure")
    p.add_argument("--json", action="store_true", help="print a JSON summary instead of text")
    p.add_argument("-q", "--quiet", action="store_true", help="print nothing but errors")
    p.set_defaults(func=cmd_translate)


def _usage(msg: str) -> Exception:
    from .cli import _UsageError  # exit status 2, like argparse's own usage errors
    return _UsageError(msg)


def _targets(spec: str) -> list[str]:
    from .amdgpu.targets import available
    known = available()
    names = known if spec.strip() == "all" else [s.strip() for s in spec.split(",") if s.strip()]
    bad = [n for n in names if n not in known]
    if bad or not names:
        raise _usage(f"unknown --arch {', '.join(bad) or repr(spec)}; known targets: "
                                  f"{', '.join(known)} (or all)")
    return list(dict.fromkeys(names))


def _stats_table(path: str, arch: str, stats: dict) -> str:
    header = (f"  {'kernel':<44} {'instrs':>7} {'VGPR':>5} {'SGPR':>5} {'AGPR':>5} {'LDS':>7} {'scratch':>7} "
              f"{'waves/SIMD':>10}")
    rows = [f"{path} [{arch}]", header]
    for name, s in stats.items():
        shown = name if len(name) <= 44 else name[:41] + "..."
        rows.append(f"  {shown:<44} {s['instructions']:>7} {s['vgprs']:>5} {s['sgprs']:>5} {s['agprs']:>5} "
                    f"{s['lds_bytes']:>7} {s['scratch_bytes']:>7} {s['waves_per_simd']:>4} of {s['max_waves_per_simd']:<3}")
    return "\n".join(rows)


def cmd_translate(args) -> int:
    from . import load
    from .amdgpu import compile as compile_ptx

    arches = _targets(args.arch)
    files = [Path(f) for f in args.files]
    stems: dict[str, Path] = {}
    for f in files:
        if stems.setdefault(f.stem, f) != f:
            raise _usage(f"{stems[f.stem]} and {f} would write the same outputs ({f.stem}.*)")
    out = Path(args.output_dir)
    out.mkdir(parents=True, exist_ok=True)
    jobs = [(f, a) for f in files for a in arches]
    progress = len(jobs) > 1 and not args.quiet and not args.json
    summary, failed = [], 0
    for n, (f, arch) in enumerate(jobs, 1):
        t0 = time.perf_counter()
        if progress:
            print(f"[{n}/{len(jobs)}] {f} -> {arch} ...", end="", file=sys.stderr, flush=True)
        entry = {"file": str(f), "arch": arch}
        try:
            obj = compile_ptx(load(f), target=arch)
        except (PtxError, OSError) as exc:
            failed += 1
            if progress:
                print(" failed", file=sys.stderr)
            text = str(exc) if isinstance(exc, PtxError) else f"{f}: error: {exc.strerror or exc}"
            print(text, file=sys.stderr)
            summary.append({**entry, "ok": False, "error": text})
            if not args.keep_going:
                break
            continue
        base = f"{f.stem}.{arch}"
        written = [obj.save(out / f"{base}.hsaco")]
        for wanted, suffix, text in ((args.emit_llvm, "ll", obj.llvm_ir), (args.emit_asm, "s", obj.asm),
                                     (args.metadata, "json", obj.metadata_json() + "\n")):
            if wanted:
                written.append(out / f"{base}.{suffix}")
                written[-1].write_text(text)
        dt = time.perf_counter() - t0
        if progress:
            print(f" ok ({dt:.1f} s)", file=sys.stderr)
        stats = obj.stats()
        summary.append({**entry, "ok": True, "outputs": [str(p) for p in written], "seconds": round(dt, 3),
                        "kernels": stats})
        if not args.quiet and not args.json:
            print(f"{written[0]}: {len(obj.kernels)} kernel{'s' if len(obj.kernels) != 1 else ''}, "
                  f"{len(obj.hsaco)} bytes")
            if args.stats:
                print(_stats_table(str(f), arch, stats))
    if args.json:
        print(json.dumps({"results": summary, "failed": failed}, indent=2))
    elif failed and not args.quiet and len(jobs) > 1:
        print(f"{failed} of {len(jobs)} translations failed", file=sys.stderr)
    return 1 if failed else 0
