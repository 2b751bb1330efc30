"""`ptxvm run`: launch a kernel from the command line on the interpreter."""

from __future__ import annotations

import re
import time

import numpy as np

from .errors import LaunchError

EPILOG = """\
arguments (--arg, one per kernel parameter, in order):
  f32[1024]=random(seed=1)   a new array: random values in [0, 1) (ints: [0, 100))
  i32[256]=zeros             zeros; also ones, arange, full(7)
  data.npy                   an array from a file;  data.npz:name  one entry of an .npz
  42   -3   1.5   0x10       a scalar, converted to the parameter's PTX type (range-checked)
  element types: f16 f32 f64 i8 i16 i32 i64 u8 u16 u32 u64

examples:
  ptxvm run tests/fixtures/nvcc/sm80/elementwise.ptx --kernel _Z10vector_addPKfS0_Pfi \\
      --grid 4 --block 256 --arg 'f32[1000]=random(seed=1)' --arg 'f32[1000]=arange' \\
      --arg 'f32[1000]=zeros' --arg 1000 -o out.npz
  ptxvm run k.ptx --grid 8,8 --block 16,16 --arg a.npy --arg 'f32[4096]=zeros' --arg 64
  ptxvm run k.ptx --device cpu ...        # the same launch, compiled by LLVM for this machine

Arrays are passed by reference; after the launch every array argument is printed
(first elements) and, with -o, saved to an .npz as arg0, arg1, ... (and by parameter name).
"""

_DTYPES = {"f16": np.float16, "f32": np.float32, "f64": np.float64, "i8": np.int8, "i16": np.int16,
           "i32": np.int32, "i64": np.int64, "u8": np.uint8, "u16": np.uint16, "u32": np.uint32,
           "u64": np.uint64}
_GEN = re.compile(r"^(?P<t>[a-z]\d+)\[(?P<n>[\d,\s]+)\]=(?P<how>\w+)(?:\((?P<a>[^)]*)\))?$")


class ArgError(LaunchError):
    pass


def add_parser(sub, fmt) -> None:
    p = sub.add_parser("run", formatter_class=fmt, help="run a kernel on the CPU (interpreter or JIT)",
                       description="Launch a kernel of a PTX file on ptxvm's interpreter (the reference) "
                                   "or its LLVM host JIT, and show (or save) its array arguments afterwards.",
                       epilog=EPILOG)
    p.add_argument("file", metavar="FILE.ptx")
    p.add_argument("--kernel", "-k", help="kernel name (optional when the file has one kernel)")
    p.add_argument("--grid", "-g", default="1", help="X[,Y[,Z]] blocks (default 1)")
    p.add_argument("--block", "-b", default="1", help="X[,Y[,Z]] threads per block (default 1)")
    p.add_argument("--arg", "-a", action="append", default=[], metavar="SPEC", help="one per parameter")
    p.add_argument("--shared", type=int, default=0, metavar="N", help="dynamic shared memory bytes")
    p.add_argument("--device", "-d", choices=("interp", "cpu"), default=None,
                   help="executor: the numpy interpreter (reference, default) or the LLVM host JIT")
    p.add_argument("--max-steps", type=int, default=None, metavar="N", help="watchdog step budget")
    p.add_argument("--trace", action="append", default=[], metavar="BLOCK:THREAD",
                   help="trace the instructions one thread executes, e.g. 0:5 or 1,0:3,2 (repeatable)")
    p.add_argument("-o", "--output", metavar="OUT.npz", help="save the array arguments after the launch")
    p.add_argument("-q", "--quiet", action="store_true", help="print nothing but errors")
    p.set_defaults(func=cmd_run)


def parse_dims(text: str, what: str) -> tuple[int, ...]:
    try:
        dims = tuple(int(x) for x in text.split(","))
    except ValueError:
        raise ArgError(f"--{what} must be X[,Y[,Z]] positive integers, got {text!r}") from None
    if not 1 <= len(dims) <= 3 or min(dims) < 1:
        raise ArgError(f"--{what} must be X[,Y[,Z]] positive integers, got {text!r}")
    return dims


def parse_arg(spec: str, index: int):
    """An argument spec -> numpy array or Python scalar."""
    s = spec.strip()
    m = _GEN.match(s)
    if m:
        t, how, a = m["t"], m["how"], (m["a"] or "").strip()
        if t not in _DTYPES:
            raise ArgError(f"--arg #{index + 1} {spec!r}: unknown element type `{t}`; use one of "
                           + " ".join(_DTYPES))
        shape = tuple(int(x) for x in m["n"].split(","))
        dt = np.dtype(_DTYPES[t])
        if how == "zeros":
            return np.zeros(shape, dt)
        if how == "ones":
            return np.ones(shape, dt)
        if how == "arange":
            return np.arange(int(np.prod(shape))).astype(dt).reshape(shape)
        if how == "full":
            try:
                return np.full(shape, float(a) if dt.kind == "f" else int(a, 0), dt)
            except ValueError:
                raise ArgError(f"--arg #{index + 1} {spec!r}: full(...) needs a number") from None
        if how == "random":
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
        raise ArgError(f"--arg #{index + 1} {spec!r}: unknown generator `{how}`; use zeros, ones, arange, "
                       "full(v) or random(seed=N)")
    if s.endswith(".npy") or ".npz" in s:
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
    try:
        return int(s, 0)
    except ValueError:
        pass
    try:
        return float(s)
    except ValueError:
        raise ArgError(f"--arg #{index + 1} {spec!r}: not a number, an array spec like f32[16]=zeros, "
                       "or an .npy/.npz file") from None


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


def _preview(a: np.ndarray) -> str:
    flat = a.reshape(-1)
    head = np.array2string(flat[:8], separator=", ", threshold=8, precision=6, max_line_width=400)
    return f"{a.dtype}{list(a.shape)} {head[:-1]}{', ...]' if flat.size > 8 else ']'}"


def cmd_run(args) -> int:
    from .driver import Module
    mod = Module.from_file(args.file)
    names = list(mod.kernels)
    if args.kernel is None:
        if len(names) != 1:
            raise ArgError(f"{args.file} has {len(names)} kernels; choose one with --kernel: " + ", ".join(names))
        args.kernel = names[0]
    k = mod.get_function(args.kernel)
    values = [parse_arg(s, i) for i, s in enumerate(args.arg)]
    grid, block = parse_dims(args.grid, "grid"), parse_dims(args.block, "block")
    trace = [_trace_spec(spec) for spec in args.trace]
    t = time.perf_counter()
    stats = k(grid, block, values, shared_mem=args.shared, max_steps=args.max_steps, trace=trace,
              device=args.device)
    dt = time.perf_counter() - t
    arrays = {f"arg{i}": v for i, v in enumerate(values) if isinstance(v, np.ndarray)}
    if not args.quiet:
        print(f"{k.name}<<<{grid}, {block}>>>: {stats.instructions:,} thread-instructions in {dt:.3f} s "
              f"({stats.steps:,} steps, {stats.divergent_steps:,} divergent, {stats.batches} batch"
              f"{'es' if stats.batches != 1 else ''})")
        for i, v in enumerate(values):
            if isinstance(v, np.ndarray):
                print(f"  arg{i} {k.params[i].name}: {_preview(v)}")
    if args.output:
        named = {**arrays, **{k.params[int(n[3:])].name: v for n, v in arrays.items()}}
        np.savez(args.output, **named)
        if not args.quiet:
            print(f"saved {len(arrays)} arrays to {args.output}")
    return 0
