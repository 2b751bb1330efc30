"""`ptxvm run`: launch a kernel from the command line on the interpreter or the host JIT.

Every mistake in the launch (a bad `--arg`, `--grid`, `--shared`, `--kernel`, a value a
parameter cannot hold, a size past `ptxvm.limits`) is an `ArgError`: a usage error, exit 2,
found before anything is allocated or launched.
"""

from __future__ import annotations

import json
import re
import time
from typing import Any

from ..demangle import base_name, demangle, display_name, kernel_matches, short_param
from ..errors import LaunchError, PtxError

EPILOG = """\
arguments (--arg, one per kernel parameter, in order):
  f32[1024]=random(seed=1)   a new array: random values in [0, 1) (ints: [0, 100))
  i32[256]=zeros             zeros; also ones, arange, full(7)
  data.npy                   an array from a file;  data.npz:name  one entry of an .npz
  42   -3   1.5   0x10       a scalar, converted to the parameter's PTX type (range-checked)
  element types: f16 f32 f64 i8 i16 i32 i64 u8 u16 u32 u64
  tex2d:f32[64,64]=random(seed=1),filter=linear,address=clamp   a texture object (also tex1d, tex3d,
                             tex2dlayered, texcube; surf2d:u8[16,16]=zeros,channels=4 a surface;
                             options: see ptxvm/cli/texarg.py)

examples:
  ptxvm run tests/fixtures/nvcc/sm80/elementwise.ptx --kernel vector_add \\
      --grid 4 --block 256 --arg 'f32[1000]=random(seed=1)' --arg 'f32[1000]=arange' \\
      --arg 'f32[1000]=zeros' --arg 1000 -o out.npz
  ptxvm run tests/fixtures/nvcc/sm80/elementwise.ptx -k vector_add -g 4 -b 256 \\
      -a out.npz:arg2 -a out.npz:arg1 -a 'f32[1000]=zeros' -a 1000     feed a saved output back in
  ptxvm run tests/fixtures/nvcc/sm80/grids.ptx -k matrix_add_2d --grid 4,4 --block 16,16 \\
      -a 'f32[4096]=ones' -a 'f32[4096]=arange' -a 'f32[4096]=zeros' -a 64 -a 64
  ptxvm run tests/fixtures/nvcc/sm80/elementwise.ptx -k saxpy -g 4 -b 256 -a 1000 -a 2.5 \\
      -a 'f32[1000]=ones' -a 'f32[1000]=ones' --device cpu     the same launch, compiled by LLVM for this CPU
  ptxvm run tests/fixtures/nvcc/sm80/elementwise.ptx -k saxpy -a 4 -a 2 -a 'f32[4]=arange' \\
      -a 'f32[4]=ones' --json     the launch, its statistics and the arrays after it, as JSON

--kernel takes the PTX name (_Z10vector_addPKfS0_Pfi), the C++ name (vector_add, or the
whole signature `vector_add(float const*, float const*, float*, int)`) or, for templates
and namespaces, ns::kernel<int>; an ambiguous name lists the candidates.
A mistake in the launch (a value its parameter cannot hold, a size past ptxvm's limits,
a bad --grid) is a usage error: exit status 2, before anything runs.

Arrays are passed by reference; after the launch every array argument is printed
(first elements) and, with -o, saved to an .npz as arg0, arg1, ... (and by parameter name).
"""

_DTYPES = {"f16": "float16", "f32": "float32", "f64": "float64", "i8": "int8", "i16": "int16",
           "i32": "int32", "i64": "int64", "u8": "uint8", "u16": "uint16", "u32": "uint32", "u64": "uint64"}
_GEN = re.compile(r"^(?P<t>[a-z]\d+)\[(?P<n>[^\]]*)\]=(?P<how>\w+)(?:\((?P<a>[^)]*)\))?$")
JSON_VALUES = 1024          # --json prints at most this many elements of each array


class ArgError(LaunchError):
    """A mistake in the launch the command line describes: a usage error (exit 2)."""

    usage = True


def positive_int(text: str) -> int:
    """argparse type of --max-steps: a budget of 0 or less is a mistake, not "the default"."""
    import argparse
    try:
        n = int(text, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {n} (leave it out for the default budget)")
    return n


def add_parser(sub, fmt) -> None:
    p = sub.add_parser("run", formatter_class=fmt, help="run a kernel on the CPU (interpreter or JIT)",
                       description="Launch a kernel of a PTX file on ptxvm's interpreter (the reference) "
                                   "or its LLVM host JIT, and show (or save) its array arguments afterwards.",
                       epilog=EPILOG)
    p.add_argument("file", metavar="FILE.ptx")
    add_launch_options(p, defaults=True)
    p.add_argument("--device", "-d", default=None, metavar="NAME", help=device_help())
    p.add_argument("--max-steps", type=positive_int, default=None, metavar="N",
                   help="watchdog step budget, at least 1 (default: the executor's)")
    p.add_argument("--trace", action="append", default=[], metavar="BLOCK:THREAD",
                   help="trace the instructions one thread executes, e.g. 0:5 or 1,0:3,2 (repeatable)")
    p.add_argument("--cooperative", action="store_true",
                   help="a cooperative launch (cudaLaunchCooperativeKernel): every block resident at once, "
                        "so cooperative groups' this_grid().sync() works")
    p.add_argument("-o", "--output", metavar="OUT.npz", help="save the array arguments after the launch")
    p.add_argument("--json", action="store_true",
                   help="print one JSON object: the launch, its statistics and the arrays after it (or the error)")
    p.add_argument("-q", "--quiet", action="store_true", help="print nothing but errors")
    p.set_defaults(func=cmd_run)


def device_help(extra: str = "", default: str = "{ref}, or $PTXVM_DEVICE") -> str:
    """--device's help: every registered executor (the registry is light: no numpy, no llvmlite)."""
    from ..driver import executors
    listed = "; ".join(f"{e.name} = {e.summary}" for e in map(executors.get, executors.names()))
    return f"executor: {listed}{extra} (default: {default.format(ref=executors.names()[0])})"


def resolve_device(name: str, flag: str = "--device"):
    """The registered executor ``name`` (ArgError listing them if none) with its packages
    installed (MissingPackage naming the package otherwise)."""
    from ..driver import executors
    try:
        executors.get(name)
    except executors.UnknownExecutor:
        raise ArgError(f"{flag} `{name}`: no such executor; registered: {', '.join(executors.names())}") from None
    return executors.require(name, f"{flag} {name}")


def add_launch_options(p, *, defaults: bool) -> None:
    """--kernel, --grid, --block, --arg, --shared: the same flags on run, difftest and record."""
    p.add_argument("--kernel", "-k", metavar="NAME",
                   help="kernel: its PTX name or C++ name (vector_add, ns::f<int>); optional when the file has one")
    p.add_argument("--grid", "-g", default="1" if defaults else None, help="X[,Y[,Z]] blocks (default 1)")
    p.add_argument("--block", "-b", default="1" if defaults else None, help="X[,Y[,Z]] threads per block (default 1)")
    p.add_argument("--arg", "-a", action="append", default=[], metavar="SPEC", help="one per parameter")
    p.add_argument("--shared", type=int, default=0 if defaults else None, metavar="N",
                   help="dynamic shared memory bytes")


# ------------------------------------------------------------------ kernels

def kernel_choices(names: list[str]) -> str:
    """``vector_add (_Z10vector_addPKfS0_Pfi), add_kernel``: what a person can type, and the PTX name."""
    return ", ".join(f"{base_name(n)} ({n})" if demangle(n) else n for n in names)


def resolve_kernel(names: list[str], wanted: str | None, file: str) -> str:
    """The PTX name of the kernel --kernel denotes (exact, demangled or short); ArgError otherwise."""
    if wanted is None:
        if len(names) == 1:
            return names[0]
        raise ArgError(f"{file} has {len(names)} kernels; choose one with --kernel: {kernel_choices(names)}"
                       if names else f"{file} has no kernels (no `.entry`)")
    hits = kernel_matches(names, wanted)
    if len(hits) == 1:
        return hits[0]
    if not hits:
        raise ArgError(f"{file} has no kernel named `{wanted}`; its kernels: {kernel_choices(names) or 'none'}")
    shown = "; ".join(f"{display_name(n)} ({n})" for n in hits)
    raise ArgError(f"--kernel `{wanted}` is ambiguous in {file}: it matches {len(hits)} kernels: {shown}; "
                   "give the full C++ signature or the PTX name")


def kernel_label(name: str) -> str:
    """``vector_add(float const*, ...) [_Z10vector_addPKfS0_Pfi]`` for a mangled name, else the name."""
    full = demangle(name)
    return f"{full} [{name}]" if full else name


# ------------------------------------------------------------------ geometry and arguments

def parse_dims(text: str, what: str) -> tuple[int, ...]:
    try:
        dims = tuple(int(x) for x in text.split(","))
    except ValueError:
        raise ArgError(f"--{what} must be X[,Y[,Z]] positive integers, got {text!r}") from None
    if not 1 <= len(dims) <= 3 or min(dims) < 1:
        raise ArgError(f"--{what} must be X[,Y[,Z]] positive integers, got {text!r}")
    return dims


def check_shared(n: int | None) -> int:
    """--shared N: at least 0 and within ptxvm.limits' shared_per_block (checked before allocating)."""
    from ..errors import ResourceError
    from ..limits import current
    n = n or 0
    if n < 0:
        raise ArgError(f"--shared must be 0 or more bytes, got {n}")
    try:
        current().check("shared_per_block", n, f"--shared {n}")
    except ResourceError as e:
        raise ArgError(e.message) from None
    return n


def _shape(spec: str, index: int, text: str) -> tuple[int, ...]:
    try:
        shape = tuple(int(x) for x in text.split(","))
    except ValueError:
        raise ArgError(f"--arg #{index + 1} {spec!r}: the shape must be N or N,M,... non-negative integers") from None
    if not shape or min(shape) < 0:
        raise ArgError(f"--arg #{index + 1} {spec!r}: the shape must be N or N,M,... non-negative integers")
    return shape


def _check_size(spec: str, index: int, shape: tuple[int, ...], itemsize: int) -> None:
    """An array larger than one allocation may be is refused before numpy tries to make it."""
    from ..errors import ResourceError
    from ..limits import current
    n = 1
    for d in shape:
        n *= d
    try:
        current().check("allocation", n * itemsize, f"--arg #{index + 1} {spec!r}")
    except ResourceError as e:
        raise ArgError(e.message) from None


def _element_range(dt) -> tuple[float, float]:
    import numpy as np
    info = np.finfo(dt) if dt.kind == "f" else np.iinfo(dt)
    return info.min, info.max


def _fits_float(v: float, dt) -> bool:
    """Whether a finite ``v`` rounds to a finite value of ``dt`` (inf/nan asked for are kept)."""
    import math

    import numpy as np
    if not math.isfinite(v):
        return True
    with np.errstate(over="ignore"):
        return bool(np.isfinite(np.array(v, np.float64).astype(dt)))


def _fill_value(spec: str, index: int, a: str, dt):
    try:
        v = float(a) if dt.kind == "f" else int(a, 0)
    except ValueError:
        raise ArgError(f"--arg #{index + 1} {spec!r}: full(...) needs a number") from None
    lo, hi = _element_range(dt)
    if (dt.kind == "f" and not _fits_float(v, dt)) or (dt.kind != "f" and not lo <= v <= hi):
        raise ArgError(f"--arg #{index + 1} {spec!r}: {a} does not fit {dt.name} (range {lo} to {hi})")
    return v


def parse_arg(spec: str, index: int):
    """An argument spec -> numpy array or Python scalar."""
    import numpy as np
    s = spec.strip()
    from . import texarg
    if texarg.is_spec(s):            # tex2d:f32[64,64]=random(seed=1),filter=linear,...
        return texarg.parse(spec, index)
    m = _GEN.match(s)
    if m:
        t, how, a = m["t"], m["how"], (m["a"] or "").strip()
        if t not in _DTYPES:
            raise ArgError(f"--arg #{index + 1} {spec!r}: unknown element type `{t}`; use one of "
                           + " ".join(_DTYPES))
        shape = _shape(spec, index, m["n"])
        dt = np.dtype(_DTYPES[t])
        if how not in ("zeros", "ones", "arange", "full", "random"):
            raise ArgError(f"--arg #{index + 1} {spec!r}: unknown generator `{how}`; use zeros, ones, arange, "
                           "full(v) or random(seed=N)")
        _check_size(spec, index, shape, dt.itemsize)
        return _generate(spec, index, how, a, shape, dt)
    if s.endswith(".npy") or ".npz" in s:
        return _load_array(spec, index, s)
    try:
        return int(s, 0)
    except ValueError:
        pass
    try:
        return float(s)
    except ValueError:
        raise ArgError(f"--arg #{index + 1} {spec!r}: not a number, an array spec like f32[16]=zeros, "
                       "or an .npy/.npz file") from None


def _generate(spec: str, index: int, how: str, a: str, shape: tuple[int, ...], dt):
    import numpy as np
    if how == "zeros":
        return np.zeros(shape, dt)
    if how == "ones":
        return np.ones(shape, dt)
    if how == "arange":
        n = int(np.prod(shape))
        hi = _element_range(dt)[1]
        if n and n - 1 > hi:
            raise ArgError(f"--arg #{index + 1} {spec!r}: arange counts up to {n - 1}, more than {dt.name} "
                           f"holds (largest {hi})")
        return np.arange(n).astype(dt).reshape(shape)
    if how == "full":
        return np.full(shape, _fill_value(spec, index, a, dt), dt)
    seed = 0
    if a:
        mm = re.fullmatch(r"seed\s*=\s*(\d+)", a)
        if not mm:
            raise ArgError(f"--arg #{index + 1} {spec!r}: random takes seed=N")
        seed = int(mm[1])
    rng = np.random.default_rng(seed)
    if dt.kind == "f":
        return rng.random(shape).astype(dt)
    return rng.integers(0, 100, shape).astype(dt)


def _load_array(spec: str, index: int, s: str):
    import numpy as np
    path, _, key = s.partition(".npz:")
    if key:
        path += ".npz"
    try:
        if path.endswith(".npz"):
            with np.load(path) as z:
                if not key:
                    raise ArgError(f"--arg #{index + 1} {spec!r}: name the entry: {path}:NAME "
                                   f"(entries: {', '.join(z.files)})")
                if key not in z.files:
                    raise ArgError(f"--arg #{index + 1}: {path} has no entry `{key}` "
                                   f"(entries: {', '.join(z.files)})")
                return np.ascontiguousarray(z[key])
        return np.ascontiguousarray(np.load(path))
    except (OSError, ValueError) as e:
        raise ArgError(f"--arg #{index + 1}: cannot read {path}: {e}") from None


def check_args(kernel: str, params, values: list, specs: list[str]) -> None:
    """Each value fits its parameter (count, pointer-ness, the PTX type's range): ArgError otherwise."""
    if len(values) != len(params):
        sig = ", ".join(f"{short_param(kernel, p.name)}: .{p.type}" for p in params) or "none"
        raise ArgError(f"kernel `{base_name(kernel)}` takes {len(params)} argument{'s' if len(params) != 1 else ''} "
                       f"({sig}), got {len(values)} --arg")
    for i, (p, v, spec) in enumerate(zip(params, values, specs)):
        at = f"--arg #{i + 1} {spec!r} (`{short_param(kernel, p.name)}`, .{p.type}{''.join(f'[{d}]' for d in p.array)})"
        _check_value(at, p, v)


def _check_value(at: str, p, v) -> None:
    import numpy as np

    from ..ir.types import ScalarType
    t = ScalarType(p.type)
    if hasattr(v, "handle"):         # a texture/surface object (cli.texarg): a 64-bit handle
        if t.bits != 64 or p.array:
            raise ArgError(f"{at}: a texture or surface object is a 64-bit handle parameter")
        return
    if p.array:
        if not isinstance(v, np.ndarray) or v.nbytes != p.size:
            raise ArgError(f"{at}: a by-value array parameter of {p.size} bytes; pass an .npy/.npz array "
                           f"of exactly {p.size} bytes")
        return
    if isinstance(v, np.ndarray):
        if t.bits != 64:
            raise ArgError(f"{at}: an array is passed as a pointer, which needs a 64-bit parameter")
        return
    if t.kind == "f":
        if not _fits_float(float(v), np.dtype({16: "float16", 32: "float32", 64: "float64"}[t.bits])):
            lim = {16: "65504", 32: "3.4028235e+38", 64: "1.7976931348623157e+308"}[t.bits]
            raise ArgError(f"{at}: out of range for .{p.type} (largest finite magnitude {lim})")
        return
    if isinstance(v, float):
        raise ArgError(f"{at}: an integer parameter takes an integer")
    lo, hi = {"u": (0, (1 << t.bits) - 1), "s": (-(1 << (t.bits - 1)), (1 << (t.bits - 1)) - 1)}.get(
        t.kind, (-(1 << (t.bits - 1)), (1 << t.bits) - 1))
    if not lo <= v <= hi:
        raise ArgError(f"{at}: does not fit .{p.type} (range {lo} to {hi})")


def _trace_spec(spec: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
    blk, sep, thr = spec.partition(":")
    try:
        if sep:
            return parse_dims_index(blk), parse_dims_index(thr)
    except ValueError:
        pass
    raise ArgError(f"--trace {spec!r}: expected BLOCK:THREAD such as 0:5 or 1,0:3,2")


def parse_dims_index(text: str) -> tuple[int, ...]:
    dims = tuple(int(x) for x in text.split(","))
    if not 1 <= len(dims) <= 3 or min(dims) < 0:
        raise ValueError(text)
    return dims


# ------------------------------------------------------------------ output

def _preview(a) -> str:
    import numpy as np
    flat = a.reshape(-1)
    head = np.array2string(flat[:8], separator=", ", threshold=8, precision=6, max_line_width=400)
    return f"{a.dtype}{list(a.shape)} {head[:-1]}{', ...]' if flat.size > 8 else ']'}"


def _json_number(x):
    """JSON has no NaN or infinities: spell them as strings."""
    import math
    if isinstance(x, float) and not math.isfinite(x):
        return "nan" if math.isnan(x) else ("inf" if x > 0 else "-inf")
    return x


def array_json(a) -> dict[str, Any]:
    flat = a.reshape(-1)
    return {"kind": "array", "dtype": str(a.dtype), "shape": list(a.shape),
            "values": [_json_number(x) for x in flat[:JSON_VALUES].tolist()],
            "truncated": bool(flat.size > JSON_VALUES)}


def error_json(e: BaseException) -> dict[str, Any]:
    """An error as --json prints it: its class, message, and where (file, line, kernel, thread)."""
    rec: dict[str, Any] = {"type": type(e).__name__, "message": getattr(e, "message", str(e)),
                           "usage": bool(getattr(e, "usage", False))}
    for key in ("filename", "line", "column", "kernel", "block", "thread", "instruction", "address", "space"):
        val = getattr(e, key, None)
        if val is not None:
            rec[key] = list(val) if isinstance(val, tuple) else val
    return rec


def run_json(func, args) -> int:
    """Run a command whose output is one JSON object; its errors become that object too."""
    from . import _UsageError
    try:
        return func(args)
    except (PtxError, _UsageError) as e:
        usage = isinstance(e, _UsageError) or getattr(e, "usage", False)
        rec = error_json(e)
        rec["usage"] = bool(usage)
        print(json.dumps({"ok": False, "error": rec}, indent=2))
        return 2 if usage else 1
    except OSError as e:        # the PTX file or an --arg file cannot be read
        rec = {"type": type(e).__name__, "message": f"{e.filename}: {e.strerror or e}" if e.filename else str(e),
               "usage": False}
        print(json.dumps({"ok": False, "error": rec}, indent=2))
        return 1


# ------------------------------------------------------------------ the command

def cmd_run(args) -> int:
    return run_json(_run, args) if args.json else _run(args)


def _run(args) -> int:
    import numpy as np

    from ..driver import Module
    from ..driver.api import default_launch_device
    device = args.device or default_launch_device()
    measures_steps = resolve_device(device).capabilities.measures_steps
    mod = Module.from_file(args.file)
    name = resolve_kernel(list(mod.kernels), args.kernel, args.file)
    k = mod.get_function(name)
    values = [parse_arg(s, i) for i, s in enumerate(args.arg)]
    grid, block = parse_dims(args.grid, "grid"), parse_dims(args.block, "block")
    shared = check_shared(args.shared)
    check_args(name, k.params, values, args.arg)
    trace = [_trace_spec(spec) for spec in args.trace]
    t = time.perf_counter()
    stats = k(grid, block, values, shared_mem=shared, max_steps=args.max_steps, trace=trace, device=device,
              cooperative=args.cooperative)
    dt = time.perf_counter() - t
    from .texarg import host_view
    values = [host_view(v) if hasattr(v, "handle") else v for v in values]   # texels after the launch
    arrays = {f"arg{i}": v for i, v in enumerate(values) if isinstance(v, np.ndarray)}
    if args.json:
        _print_json(args, name, k, (grid, block, shared, device, measures_steps), stats, dt, values)
    elif not args.quiet:
        # Steps (one instruction for a group of threads) exist only where the executor counts
        # them (the interpreter); the JIT runs threads one by one and has none to count.
        steps = (f"{stats.steps:,} steps, {stats.divergent_steps:,} divergent" if measures_steps
                 else "steps n/a")
        print(f"{kernel_label(name)}\n{base_name(name)}<<<{grid}, {block}>>>: {stats.instructions:,} "
              f"thread-instructions in {dt:.3f} s ({steps}, "
              f"{stats.batches} batch{'es' if stats.batches != 1 else ''})")
        if stats.host_driver:
            print(f"host JIT: {stats.host_driver}; {stats.host_threads} host thread(s)")
        for i, v in enumerate(values):
            if isinstance(v, np.ndarray):
                print(f"  arg{i} {short_param(name, k.params[i].name)}: {_preview(v)}")
    if args.output:
        named = {**arrays, **{k.params[int(n[3:])].name: v for n, v in arrays.items()}}
        np.savez(args.output, **named)
        if not args.quiet and not args.json:
            print(f"saved {len(arrays)} arrays to {args.output}")
    return 0


def _print_json(args, name, k, launch, stats, dt, values) -> None:
    import numpy as np
    grid, block, shared, device, measures_steps = launch
    out_args = []
    for i, (p, v) in enumerate(zip(k.params, values)):
        rec = {"index": i, "param": short_param(name, p.name), "type": p.type}
        rec.update(array_json(v) if isinstance(v, np.ndarray) else {"kind": "scalar", "value": _json_number(v)})
        out_args.append(rec)
    doc = {"ok": True, "file": args.file, "kernel": name, "demangled": demangle(name), "device": device,
           "grid": list(grid), "block": list(block), "shared": shared,
           "stats": {"instructions": stats.instructions,
                     "steps": stats.steps if measures_steps else None,
                     "divergent_steps": stats.divergent_steps if measures_steps else None,
                     "batches": stats.batches, "seconds": round(dt, 6),
                     "host_driver": stats.host_driver or None, "host_threads": stats.host_threads or None},
           "args": out_args, "output": args.output}
    print(json.dumps(doc, indent=2))
