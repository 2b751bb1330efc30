"""The ``ptxvm`` command line: ``ptxvm check|fmt|isa ...``.

Every failure becomes a message and an exit code, never a Python traceback:

* 0  success
* 1  the input has errors (bad PTX, unreadable file, non-canonical for ``fmt --check``)
* 2  usage error (argparse, a bad launch option or argument) or an internal error in ptxvm
     (a bug: please report it)
* 130 interrupted (Ctrl-C)

Set ``PTXVM_DEBUG=1`` to see the traceback of an internal error.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import traceback
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from ..errors import Diagnostic, IsaTableError, PtxEncodingError, PtxError

EXIT_OK, EXIT_FAIL, EXIT_INTERNAL, EXIT_INTERRUPTED = 0, 1, 2, 130
TOP_OPCODES = 8


# ------------------------------------------------------------------ helpers

def _out() -> TextIO:
    return sys.stdout


def _err() -> TextIO:
    return sys.stderr


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _fmt_bytes(n: int) -> str:
    return f"{n} B" if n < 1024 else f"{n} B ({n / 1024:.1f} KiB)"


def _read_error(path: str, exc: OSError) -> str:
    reason = exc.strerror or str(exc)
    if isinstance(exc, IsADirectoryError):
        reason = "is a directory"
    return f"cannot read {path}: {reason}"


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """Python warnings (e.g. from the parser) shown as compiler-style lines."""
    text = str(message)
    from ..frontend.cache import warning_diagnostic
    d = warning_diagnostic(text, None)
    print(d.render() if d.filename else f"ptxvm: warning: {text}", file=file or _err())


# ------------------------------------------------------------------ check

def _describe_module(module) -> str:
    bits = []
    if module.version:
        bits.append(f"PTX {module.version}")
    if module.target:
        bits.append("target " + ", ".join(module.target))
    if module.address_size:
        bits.append(f"{module.address_size}-bit")
    n_funcs = sum(1 for f in module.functions.values() if not f.is_kernel and f.body is not None)
    bits.append(_plural(len(module.kernels), "kernel"))
    if n_funcs:
        bits.append(_plural(n_funcs, "function"))
    return ", ".join(bits)


def _short_param(kernel: str, text: str) -> str:
    """nvcc names parameters `<kernel>_param_N`; show `param_N`."""
    return text.replace(f" {kernel}_param_", " param_", 1)


def _kernel_heading(name: str) -> str:
    """``vector_add(float const*, ...) [_Z10vector_addPKfS0_Pfi]``: the C++ name, and the PTX one."""
    from ..demangle import demangle
    full = demangle(name)
    return f"{full} [{name}]" if full else name


def _render_kernel(k) -> list[str]:
    lines = [f"  kernel {_kernel_heading(k.name)}" + (f" (line {k.line})" if k.line else "")]
    if k.params:
        lines.append(f"    params:       {', '.join(_short_param(k.name, p.describe()) for p in k.params)}"
                     f"  [{_fmt_bytes(k.param_bytes)}]")
    else:
        lines.append("    params:       none")
    shared = f"shared {_fmt_bytes(k.shared_bytes)}"
    if k.shared_vars:
        shared += f" ({_plural(len(k.shared_vars), 'var')})"
    if k.dynamic_shared:
        shared += f" + dynamic ({', '.join(k.dynamic_shared)})"
    lines.append(f"    memory:       {shared}; local {_fmt_bytes(k.local_bytes)}; "
                 f"const {_fmt_bytes(k.const_bytes)}"
                 + (f" ({', '.join(k.const_vars)})" if k.const_vars else ""))
    regs = ", ".join(f"{t} {n}" for t, n in k.registers)
    lines.append(f"    registers:    {k.register_total} declared" + (f" ({regs})" if regs else ""))
    top = ", ".join(f"{op} {n}" for op, n in k.opcodes[:TOP_OPCODES])
    more = len(k.opcodes) - TOP_OPCODES
    lines.append(f"    instructions: {k.instruction_count}" + (f" ({top}" + (f", +{more} more" if more > 0 else "") + ")"
                                                             if top else ""))
    if k.directives:
        lines.append("    directives:   " + ", ".join(f".{n} {', '.join(map(str, v))}" for n, v in k.directives))
    if k.calls_functions:
        calls = list(k.calls) + ([_plural(k.indirect_calls, "indirect call")] if k.indirect_calls else [])
        lines.append("    calls:        " + ", ".join(calls))
    return lines


def _error_json(message: str) -> dict:
    return Diagnostic(message).as_json()


def _kernel_json(k) -> dict:
    from ..demangle import base_name, demangle
    return {**k.as_json(), "demangled": demangle(k.name), "short_name": base_name(k.name)}


def _check_one(path: str, args) -> tuple[bool, dict | None, list[str]]:
    """Returns (ok, json record, human-readable lines)."""
    from ..frontend.cache import check_file
    from ..passes.summary import summarize_module
    try:
        result = check_file(path, use_cache=False if args.no_cache else None)
    except OSError as exc:
        msg = _read_error(path, exc)
        return False, {"file": path, "ok": False, "errors": [_error_json(msg)], "warnings": [],
                       "kernels": []}, [f"{path}: error: {msg}"]
    except PtxError as exc:       # not UTF-8; no PTX in a fatbin; CUDA source that does not compile
        if isinstance(exc, IsaTableError):
            raise                     # ptxvm itself is broken: not this file's error
        diags = list(exc.diagnostics)
        from ..frontend.cache import CheckResult
        result = CheckResult(None, diags)
    errors = result.errors
    warns = list(result.warnings) + [d for d in result.diagnostics if d.severity != "error"]
    lines = [w.render() for w in warns]
    ok = result.module is not None and not errors
    kernels = summarize_module(result.module) if ok else ()
    record = {
        "file": path, "ok": ok,
        "errors": [d.as_json() for d in errors],
        "warnings": [d.as_json() for d in warns],
        "kernels": [_kernel_json(k) for k in kernels],
        "cached": result.cached,
    }
    if ok:
        m = result.module
        record.update(ptx_version=m.version, target=list(m.target), address_size=m.address_size)
        if not args.quiet:
            lines.append(f"{path}: ok: {_describe_module(m)}")
            for k in kernels:
                lines.extend(_render_kernel(k))
    else:
        lines.extend(d.render() for d in errors)
        lines.append(f"{path}: {_plural(len(errors), 'error')}")
    return ok, record, lines


def cmd_check(args) -> int:
    out = _out()
    n_bad = 0
    for path in args.files:
        ok, record, lines = _check_one(path, args)
        n_bad += not ok
        if args.json:
            out.write(json.dumps(record) + "\n")
        else:
            for line in lines:
                print(line, file=out)
        out.flush()
    if not args.json and not args.quiet and len(args.files) > 1:
        print(f"checked {_plural(len(args.files), 'file')}: {len(args.files) - n_bad} ok, "
              f"{n_bad} with errors", file=out)
    return EXIT_FAIL if n_bad else EXIT_OK


# ------------------------------------------------------------------ fmt

def _first_difference(a: str, b: str) -> int:
    la, lb = a.splitlines(), b.splitlines()
    for i, (x, y) in enumerate(zip(la, lb), 1):
        if x != y:
            return i
    return min(len(la), len(lb)) + 1


def cmd_fmt(args) -> int:
    from ..frontend.cache import check_file
    from ..frontend.printer import format_module
    if args.output and len(args.files) > 1:
        raise _UsageError("-o/--output takes one input file")
    status = EXIT_OK
    for path in args.files:
        try:
            raw = Path(path).read_bytes()
            result = check_file(path, verify=False, use_cache=False if args.no_cache else None)
        except OSError as exc:
            print(f"ptxvm: error: {_read_error(path, exc)}", file=_err())
            status = EXIT_FAIL
            continue
        for w in result.warnings:
            print(w.render(), file=_err())
        if not result.ok:
            for d in result.errors:
                print(d.render(), file=_err())
            print(f"{path}: {_plural(len(result.errors), 'error')}; not formatted", file=_err())
            status = EXIT_FAIL
            continue
        text = format_module(result.module)
        if args.check:
            current = raw.decode("utf-8", "replace")     # a fatbin's PTX is never its bytes
            if current != text:
                print(f"{path}: not canonical (first difference at line "
                      f"{_first_difference(current, text)}); run `ptxvm fmt {path} -o {path}`", file=_err())
                status = EXIT_FAIL
            elif not args.quiet:
                print(f"{path}: canonical", file=_out())
            continue
        if args.output and args.output != "-":
            try:
                tmp = Path(args.output + ".ptxvm-tmp")
                tmp.write_text(text, encoding="utf-8")
                os.replace(tmp, args.output)
            except OSError as exc:
                print(f"ptxvm: error: cannot write {args.output}: {exc.strerror or exc}", file=_err())
                status = EXIT_FAIL
        else:
            _out().write(text)
    return status


# ------------------------------------------------------------------ isa

def _coverage(args) -> int:
    from ..frontend.parser import parse_unverified
    from ..ir.nodes import Instruction
    from ..isa import TABLE
    ops = TABLE().ops
    counts: dict[str, dict] = {}
    status = EXIT_OK
    for path in args.coverage:
        try:
            data = Path(path).read_bytes()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                module, diags = parse_unverified(data, path)
        except OSError as exc:
            print(f"ptxvm: error: {_read_error(path, exc)}", file=_err())
            status = EXIT_FAIL
            continue
        except PtxEncodingError as exc:
            print(str(exc), file=_err())
            status = EXIT_FAIL
            continue
        if module is None:
            for d in diags:
                print(d.render(), file=_err())
            print(f"{path}: does not parse; skipped", file=_err())
            status = EXIT_FAIL
            continue
        for fn in module.functions.values():
            if fn.body is None:
                continue
            for s in fn.body.walk():
                if type(s) is not Instruction:
                    continue
                spec = ops.get(s.opcode) if s.form else None
                key = s.opcode if spec is not None else s.full_opcode
                entry = counts.setdefault(key, {
                    "opcode": key, "status": spec.status.value if spec else "unknown",
                    "section": spec.section if spec else "", "count": 0, "files": []})
                entry["count"] += 1
                if path not in entry["files"]:
                    entry["files"].append(path)
    rows = sorted(counts.values(), key=lambda e: (e["status"], e["opcode"]))
    totals = {s: sum(1 for e in rows if e["status"] == s) for s in ("supported", "parsed-only",
                                                                     "unsupported", "unknown")}
    if args.status:
        rows = [e for e in rows if e["status"] == args.status]
    out = _out()
    if args.json:
        json.dump({"files": args.coverage, "opcodes": rows, "distinct": len(counts), "counts": totals},
                  out, indent=2)
        out.write("\n")
        return status
    if rows:
        w = max(len(e["opcode"]) for e in rows)
        print(f"{'opcode':<{w}}  {'status':<11}  {'uses':>6}  files", file=out)
        for e in rows:
            print(f"{e['opcode']:<{w}}  {e['status']:<11}  {e['count']:>6}  {len(e['files'])}", file=out)
    print(f"{len(counts)} distinct opcodes in {_plural(len(args.coverage), 'file')}: "
          + ", ".join(f"{n} {s}" for s, n in totals.items()), file=out)
    return status


def cmd_isa(args) -> int:
    if args.coverage:
        return _coverage(args)
    if args.status == "unknown":    # the table holds no unknown opcodes: it would print 0 rows
        raise _UsageError("--status unknown lists the opcodes of --coverage files that the table lacks; "
                          "give --coverage FILE...")
    from ..isa import TABLE
    table = TABLE()
    specs = sorted(table.ops.values(), key=lambda s: s.name)
    counts: dict[str, int] = {}
    for s in specs:
        counts[s.status.value] = counts.get(s.status.value, 0) + 1
    if args.status:
        specs = [s for s in specs if s.status.value == args.status]
    out = _out()
    if args.json:
        json.dump({"opcodes": [{"opcode": s.name, "status": s.status.value, "section": s.section,
                                "title": s.title, "forms": len(s.forms), "sm": s.sm, "ptx": s.ptx}
                               for s in specs],
                   "total": len(table.ops), "counts": counts}, out, indent=2)
        out.write("\n")
        return EXIT_OK
    if specs:
        w = max(6, max(len(s.name) for s in specs))
        ws = max(7, max(len(s.section) for s in specs))
        print(f"{'opcode':<{w}}  {'status':<11}  {'section':<{ws}}  forms  title", file=out)
        for s in specs:
            print(f"{s.name:<{w}}  {s.status.value:<11}  {s.section:<{ws}}  {len(s.forms):>5}  {s.title}", file=out)
    print(f"{len(table.ops)} opcodes: " + ", ".join(f"{n} {st}" for st, n in sorted(counts.items()))
          + (f" (showing {len(specs)} {args.status})" if args.status else ""), file=out)
    return EXIT_OK


# ------------------------------------------------------------------ argparse

class _UsageError(Exception):
    pass


EPILOG = """\
examples:
  ptxvm check tests/fixtures/nvcc/sm80/elementwise.ptx        parse + verify, a summary per kernel
  ptxvm check --json tests/fixtures/numba/*.ptx                one JSON object per file, one per line
  ptxvm fmt tests/fixtures/nvcc/sm80/elementwise.ptx -o canon.ptx   write the canonical form
  ptxvm fmt --check canon.ptx                                  exit 1 unless already canonical
  ptxvm isa --status parsed-only                               instructions ptxvm parses but cannot run
  ptxvm isa --coverage tests/fixtures/nvcc/sm80/atomics.ptx    which opcodes of a file are supported
  ptxvm run tests/fixtures/nvcc/sm80/elementwise.ptx --kernel saxpy --grid 4 --block 256 \\
      --arg 1000 --arg 2.5 --arg 'f32[1000]=random(seed=1)' --arg 'f32[1000]=zeros'
  ptxvm info                                                   versions, executors, limits (for bug reports)

short options mean the same in every command: -k --kernel, -g --grid, -b --block, -a --arg,
-d --device, -e --executor(s), -o --output, -q --quiet

environment:
  PTXVM_CACHE_DIR   where parsed modules are cached (default: the user cache dir)
  PTXVM_NO_CACHE=1  never use the cache
  PTXVM_DEBUG=1     show Python tracebacks of internal errors
  PTXVM_LIMIT_<NAME>  change a resource limit, e.g. PTXVM_LIMIT_DEVICE_MEMORY=64G (see `ptxvm info`)

exit status: 0 ok, 1 errors in the input, 2 usage or internal error, 130 interrupted
"""


class _VersionAction(argparse.Action):
    """--version: built lazily (the versions need metadata look-ups and two short subprocesses)."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, help=None):
        super().__init__(option_strings=option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        from .info import version_text
        print(version_text(), file=_out())
        parser.exit()


# size: argparse's parser table, one declaration per option and subcommand, read top to bottom.
def build_parser() -> argparse.ArgumentParser:
    fmt = argparse.RawDescriptionHelpFormatter
    ap = argparse.ArgumentParser(
        prog="ptxvm", formatter_class=fmt, epilog=EPILOG,
        description="ptxvm: parse, check, run and translate NVIDIA PTX without an NVIDIA GPU.")
    ap.add_argument("--version", action=_VersionAction,
                    help="show ptxvm's version and its dependencies' (Python, numpy, lark, LLVM, lld), "
                         "the PTX ISA version it reads and the AMD targets, then exit")
    sub = ap.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser(
        "check", formatter_class=fmt, help="parse and verify PTX files, summarise their kernels",
        description="Parse and verify each FILE. Prints every error (file:line:col, source line, "
                    "caret) or, for a good file, a summary per kernel: parameters, shared/local/const "
                    "memory, registers and the most used instructions.",
        epilog="""\
examples:
  ptxvm check tests/fixtures/nvcc/sm80/elementwise.ptx
  ptxvm check -q tests/fixtures/nvcc/sm80/*.ptx && echo all good
  ptxvm check --json tests/fixtures/nvcc/sm80/reductions.ptx | python3 -c 'import json, sys; print([k["shared_bytes"] for k in json.load(sys.stdin)["kernels"]])'

JSON (one object per file and line): file, ok, errors[{line, column, message, ...}],
warnings[...], kernels[{name, params, shared_bytes, local_bytes, const_bytes,
registers, instruction_count, opcodes, demangled, short_name, ...}]
""")
    p.add_argument("files", nargs="+", metavar="FILE")
    p.add_argument("--json", action="store_true", help="print one JSON object per file (JSON lines)")
    p.add_argument("--no-cache", action="store_true", help="parse even if a cached result exists")
    p.add_argument("-q", "--quiet", action="store_true", help="print only problems")
    p.set_defaults(func=cmd_check)

    p = sub.add_parser(
        "fmt", formatter_class=fmt, help="print PTX in canonical form",
        description="Print each FILE in ptxvm's canonical PTX form (parse, then print the IR).",
        epilog="""\
examples:
  ptxvm fmt tests/fixtures/triton/add_kernel.ptx                canonical text to stdout
  ptxvm fmt tests/fixtures/triton/add_kernel.ptx -o add.ptx     write a file (atomically; may be the input)
  ptxvm fmt --check add.ptx                                     exit 1 if the file is not canonical
""")
    p.add_argument("files", nargs="+", metavar="FILE")
    p.add_argument("-o", "--output", metavar="OUT", help="write here instead of stdout ('-' = stdout)")
    p.add_argument("--check", action="store_true", help="only check: exit 1 if not already canonical")
    p.add_argument("--no-cache", action="store_true", help="parse even if a cached result exists")
    p.add_argument("-q", "--quiet", action="store_true", help="print only problems")
    p.set_defaults(func=cmd_fmt)

    p = sub.add_parser(
        "isa", formatter_class=fmt, help="list the instruction table and its coverage",
        description="List the PTX instructions ptxvm knows (isa/instructions.toml): status, PTX ISA "
                    "section, title and number of forms. With --coverage, report which opcodes "
                    "the given PTX files use and how far ptxvm supports each.",
        epilog="""\
statuses: supported (runs on the interpreter and the host JIT, and translates to AMD GPUs),
parsed-only (parsed and verified; running or translating it is refused with a clear error
naming the instruction), unsupported (recognised, rejected when parsed); --coverage adds
unknown (not in the table).

examples:
  ptxvm isa                                                     the whole table
  ptxvm isa --status parsed-only                                what ptxvm cannot run yet
  ptxvm isa --json > table.json                                 the table as JSON
  ptxvm isa --coverage tests/fixtures/nvcc/sm80/*.ptx           the opcodes these files use, by status
""")
    p.add_argument("--status", choices=("supported", "parsed-only", "unsupported", "unknown"),
                   help="show only opcodes with this status")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument("--coverage", nargs="+", metavar="FILE", help="report the opcodes these PTX files use")
    p.set_defaults(func=cmd_isa)

    from .run import add_parser as add_run
    add_run(sub, fmt)
    from .difftest import add_parsers as add_difftest
    add_difftest(sub, fmt)
    from .translate import add_parser as add_translate
    add_translate(sub, fmt)
    from .info import add_parser as add_info
    add_info(sub, fmt)
    from .cache import add_parser as add_cache
    add_cache(sub, fmt)
    from .fuzz import add_parser as add_fuzz
    add_fuzz(sub, fmt)
    return ap


def _run(argv: Sequence[str] | None) -> int:
    ap = build_parser()
    try:
        args = ap.parse_args(argv)
    except SystemExit as e:   # --help, --version, usage errors
        return e.code if isinstance(e.code, int) else (0 if e.code is None else EXIT_INTERNAL)
    if not getattr(args, "command", None):
        ap.print_help(_err())
        return EXIT_INTERNAL
    try:
        return args.func(args)
    except _UsageError as e:
        print(f"ptxvm {args.command}: error: {e}", file=_err())
        return EXIT_INTERNAL
    except PtxError as e:
        if not getattr(e, "usage", False):
            raise
        # A mistake in the command line (an --arg, --grid, --kernel...): a usage error, exit 2.
        print(f"ptxvm {args.command}: error: {e.message}", file=_err())
        return EXIT_INTERNAL


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``ptxvm`` script and of ``python -m ptxvm``; returns the exit status."""
    try:
        with warnings.catch_warnings():
            warnings.showwarning = _show_warning
            return _run(argv)
    except KeyboardInterrupt:
        print("ptxvm: interrupted", file=_err())
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # The reader went away (`ptxvm isa | head`): stop quietly.
        try:
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - keeps the interpreter's final flush quiet
        except OSError:
            pass
        return 141
    except PtxError as e:
        text = str(e)
        # An error with no place in a file says who is speaking, as argparse's do.
        print(f"ptxvm: {text}" if text.startswith("error: ") else text, file=_err())
        return EXIT_FAIL
    except ModuleNotFoundError as e:
        if e.name not in _OPTIONAL_PACKAGES:
            return _internal(e)
        print(f"ptxvm: error: this needs the Python package `{e.name}`, which is not installed: "
              f"{_OPTIONAL_PACKAGES[e.name]}", file=_err())
        return EXIT_FAIL
    except OSError as e:
        name = f" {e.filename}" if getattr(e, "filename", None) else ""
        print(f"ptxvm: error:{name}: {e.strerror or e}" if name else f"ptxvm: error: {e}", file=_err())
        return EXIT_FAIL
    except Exception as e:  # noqa: BLE001 - the last line of defence: no traceback for users
        return _internal(e)


# Packages only some commands need, and how to get them.
_OPTIONAL_PACKAGES = {"llvmlite": "pip install llvmlite (the host JIT, --device cpu, and translate use it)",
                      "ziglang": "pip install 'ptxvm[amdgpu]' (ld.lld links AMD GPU code objects)",
                      "hypothesis": "pip install 'ptxvm[cluster]' (`ptxvm fuzz` draws kernels with hypothesis)",
                      "distributed": "pip install 'ptxvm[cluster]' (`--cluster` runs on Dask distributed)",
                      "dask": "pip install 'ptxvm[cluster]' (`--cluster` runs on Dask distributed)"}


def _internal(e: BaseException) -> int:
    if os.environ.get("PTXVM_DEBUG", "").strip() not in ("", "0"):
        traceback.print_exception(e)
    print(f"ptxvm: internal error: {type(e).__name__}: {e} (please report this with the input file)\n"
          "ptxvm: and the output of `ptxvm info`", file=_err())
    return EXIT_INTERNAL


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
