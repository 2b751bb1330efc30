"""Launch records and golden files: one launch, run on any executor, saved with its outputs.

A ``Launch`` is everything needed to repeat a kernel launch anywhere: the PTX
text, the kernel's PTX name, grid, block, dynamic shared memory and every
argument (arrays, scalars already typed as their ``.param``, by-value bytes).
A ``Golden`` adds the outputs of one run (the final contents of every array
argument) and where they came from. A golden file is one ``.npz``:

    meta        JSON: format "ptxvm-golden", version, kernel, grid, block,
                shared_mem, filename, args [{kind, name, dtype, shape}], provenance
    ptx         the PTX text
    arg0 ...    the arguments before the launch (scalars as 0-d arrays)
    out0 ...    the final contents of each array argument

Executors: the names the executor registry ``ptxvm.driver.executors`` lists (the
interpreter, the host JIT with llvmlite, any registered one) run through
``Kernel(..., device=name)``; ``cuda`` runs on a real NVIDIA GPU (``ptxvm.testing.gpu``).
"""

from __future__ import annotations

import datetime
import json
import os
import platform
import zipfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .. import __version__
from ..errors import LaunchError, PtxError
from ..ir.types import ScalarType
from .compare import Comparison, Writer, compare

FORMAT, VERSION = "ptxvm-golden", 1
GPU_EXECUTORS = ("cuda",)
_KINDS = ("array", "scalar", "bytes")
_INT_DTYPE = {"u": "uint", "b": "uint", "s": "int"}


class GoldenError(PtxError):
    """A golden file is missing, unreadable or malformed."""


class ExecutorUnavailable(LaunchError):
    """The executor is not part of this build, or its hardware is absent."""


@dataclass(frozen=True, eq=False)
class Arg:
    kind: str              # "array" (by pointer: an output), "scalar", "bytes" (by-value .b8 array)
    value: np.ndarray      # scalars: 0-d, typed as their .param; bytes: uint8
    name: str = ""         # the parameter's name


@dataclass(frozen=True, eq=False)
class Launch:
    ptx: str
    kernel: str                          # PTX name (mangled for C++)
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    args: tuple[Arg, ...]
    shared_mem: int = 0
    filename: str | None = None
    cooperative: bool = False            # cudaLaunchCooperativeKernel: every block resident at once

    def label(self, i: int) -> str:
        """``arg2 (param_2)``: nvcc's `<kernel>_param_N` names shortened."""
        name = self.args[i].name.replace(f"{self.kernel}_param_", "param_", 1)
        return f"arg{i} ({name})" if name else f"arg{i}"

    @property
    def arrays(self) -> list[int]:
        return [i for i, a in enumerate(self.args) if a.kind == "array"]

    def describe(self) -> str:
        return f"{self.kernel}<<<{self.grid}, {self.block}" + (f", {self.shared_mem}" if self.shared_mem else "") \
            + ">>>" + (" (cooperative)" if self.cooperative else "")

    def module(self):
        """A fresh driver Module: module globals start from their initial values every run."""
        from ..driver import Module
        return Module(self.ptx, self.filename)


@dataclass(frozen=True, eq=False)
class Golden:
    launch: Launch
    outputs: tuple[np.ndarray | None, ...]          # per argument; None for non-arrays
    provenance: Mapping[str, str] = field(default_factory=dict)
    path: str | None = None

    @property
    def name(self) -> str:
        return Path(self.path).name if self.path else self.launch.kernel


# ------------------------------------------------------------------ launches

def _source(source) -> tuple[str, str | None]:
    """(PTX text, filename) from PTX text, a path or a ptxvm.Module."""
    from ..driver import Module
    if isinstance(source, Module):
        from .. import format_ptx
        return format_ptx(source.ir), source.filename
    if isinstance(source, os.PathLike) or (isinstance(source, str) and "\n" not in source
                                           and source.endswith(".ptx")):
        p = Path(source)
        return p.read_bytes().decode("utf-8", errors="replace"), str(p)
    if isinstance(source, bytes):
        return source.decode("utf-8", errors="replace"), None
    if isinstance(source, str):
        return source, None
    raise LaunchError(f"expected PTX text, a .ptx path or a ptxvm.Module, got {type(source).__name__}")


def _dims(v, what: str) -> tuple[int, int, int]:
    t = (int(v),) if isinstance(v, (int, np.integer)) else tuple(int(x) for x in v)
    if not 1 <= len(t) <= 3 or min(t) < 1:
        raise LaunchError(f"{what} must have 1 to 3 positive dimensions, got {v!r}")
    return (t + (1, 1))[:3]


def scalar_dtype(ptx_type: str) -> np.dtype:
    """The numpy type of a scalar ``.param`` (bit types as unsigned integers)."""
    t = ScalarType(ptx_type)
    if t.kind == "f" and t.bits in (16, 32, 64):
        return np.dtype(f"float{t.bits}")
    if t.bits in (8, 16, 32, 64):
        return np.dtype(f"{_INT_DTYPE.get(t.kind, 'uint')}{t.bits}")
    raise LaunchError(f"parameters of type .{ptx_type} cannot be recorded")


def _typed_scalar(p, v) -> np.ndarray:
    dt = scalar_dtype(p.type)
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, float, np.integer, np.floating)):
        raise LaunchError(f"argument `{p.name}` is .{p.type}; got {type(v).__name__} {v!r}")
    if dt.kind == "f":
        return np.array(v, dtype=dt)
    if isinstance(v, (float, np.floating)):
        raise LaunchError(f"argument `{p.name}` is .{p.type} (an integer); got {type(v).__name__} {v!r}")
    v, bits = int(v), dt.itemsize * 8
    lo = -(1 << (bits - 1)) if ScalarType(p.type).kind in ("s", "b") else 0
    hi = (1 << (bits - 1)) - 1 if dt.kind == "i" else (1 << bits) - 1
    if not lo <= v <= hi:
        raise LaunchError(f"argument `{p.name}` = {v} does not fit .{p.type} [{lo}, {hi}]")
    return np.array(v & ((1 << bits) - 1) if dt.kind == "u" else v, dtype=dt)


def make_launch(source, kernel: str, grid, block, args: Sequence, *, shared_mem: int = 0,
                cooperative: bool = False) -> Launch:
    """Check and record a launch; arrays are copied (the caller's stay untouched by runs)."""
    text, filename = _source(source)
    from ..driver import Module
    k = Module(text, filename).get_function(kernel)
    args = tuple(args)
    if len(args) != len(k.params):
        sig = ", ".join(map(str, k.params))
        raise LaunchError(f"kernel `{k.name}` takes {len(k.params)} arguments ({sig}), got {len(args)}")
    if int(shared_mem) < 0:
        raise LaunchError(f"shared_mem must be >= 0, got {shared_mem}")
    out = []
    for p, v in zip(k.params, args):
        if p.array:
            raw = bytes(v) if isinstance(v, (bytes, bytearray, memoryview)) else \
                np.ascontiguousarray(v).tobytes() if isinstance(v, (np.ndarray, np.void)) else b""
            if len(raw) != p.size:
                raise LaunchError(f"argument `{p.name}` is a {p.size}-byte by-value parameter; pass {p.size} bytes")
            out.append(Arg("bytes", np.frombuffer(raw, dtype=np.uint8).copy(), p.name))
        elif isinstance(v, np.ndarray):
            if ScalarType(p.type).bits != 64:
                raise LaunchError(f"argument `{p.name}` is .{p.type}; a numpy array can only be passed to "
                                  "a 64-bit pointer parameter")
            if v.dtype.kind not in "biuf":
                raise LaunchError(f"argument `{p.name}`: arrays of {v.dtype} cannot be recorded")
            out.append(Arg("array", np.array(v, copy=True, order="C"), p.name))
        else:
            out.append(Arg("scalar", _typed_scalar(p, v), p.name))
    return Launch(text, k.name, _dims(grid, "grid"), _dims(block, "block"), tuple(out), int(shared_mem), filename,
                  bool(cooperative))


def _host_args(launch: Launch) -> list:
    """Fresh copies of the inputs, as the driver takes them."""
    return [a.value.copy() if a.kind == "array" else a.value.tobytes() if a.kind == "bytes" else a.value[()]
            for a in launch.args]


def executors() -> tuple[str, ...]:
    """Every executor name this build knows (available or not)."""
    from ..driver import executors as registry
    return registry.names() + GPU_EXECUTORS


def check_executor(name: str) -> None:
    """Raise ExecutorUnavailable unless ``name`` can run here (GPUs are probed on first use)."""
    from ..driver import executors as registry
    if name not in executors():
        raise ExecutorUnavailable(f"executor `{name}` is not available in this build; it has "
                                  + ", ".join(registry.names())
                                  + " (and `cuda` where an NVIDIA GPU with CuPy or cuda-python exists)")
    if name in GPU_EXECUTORS:
        from .gpu import NO_GPU, backend
        if backend() is None:
            raise ExecutorUnavailable(NO_GPU)
        return
    try:
        registry.require(name)
    except registry.MissingPackage as e:
        raise ExecutorUnavailable(f"executor `{name}` is not available: {e.message}") from None


def run(launch: Launch, executor: str, *, max_steps: int | None = None
        ) -> tuple[list[np.ndarray | None], dict[str, str]]:
    """Run on one executor: (outputs per argument, provenance)."""
    if executor not in executors():
        check_executor(executor)
    if executor in GPU_EXECUTORS:
        if launch.cooperative:
            raise LaunchError(f"executor `{executor}`: cooperative launches are not supported on it yet")
        from .gpu import run_on_gpu
        return run_on_gpu(launch)
    host = _host_args(launch)
    launch.module().get_function(launch.kernel)(launch.grid, launch.block, host, shared_mem=launch.shared_mem,
                                                device=executor, max_steps=max_steps,
                                                cooperative=launch.cooperative)
    outputs = [h if a.kind == "array" else None for a, h in zip(launch.args, host)]
    return outputs, executor_provenance(executor)


def executor_provenance(executor: str) -> dict[str, str]:
    """Provenance of a run on a ptxvm executor; on ``hip`` the GPU's name, arch and ROCm version."""
    if executor != "hip":
        return provenance("ptxvm", __version__, executor, f"ptxvm {executor} on {platform.machine()}")
    from ..driver.executors.hip import device_info
    info = device_info()
    device = f"{info['gpu']} ({info['gcn_arch']}), ROCm {info['rocm']}, through ptxvm hip"
    return {**provenance("ptxvm", __version__, executor, device), **info}


def execute(launch: Launch, executor: str, *, max_steps: int | None = None) -> list[np.ndarray | None]:
    return run(launch, executor, max_steps=max_steps)[0]


def provenance(tool: str, version: str, executor: str, device: str) -> dict[str, str]:
    return {"tool": tool, "tool_version": str(version), "executor": executor, "device": device,
            "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
            "host": platform.node()}


def record(launch: Launch, executor: str = "interp") -> Golden:
    outputs, prov = run(launch, executor)
    return Golden(launch, tuple(outputs), prov)


# ------------------------------------------------------------------ writer attribution

def write_owners(launch: Launch, max_steps: int | None = None) -> dict[int, np.ndarray]:
    """Re-run on the interpreter recording, per byte of every array argument, the global
    linear thread id of its last writer (-1: never written)."""
    from ..driver.api import default_device, to_device
    from ..machine.memory import WriteTracker
    dev = default_device()
    host = _host_args(launch)
    arrays = {i: to_device(host[i], dev) for i in launch.arrays}
    allocs = {i: dev.memory.find(d.ptr) for i, d in arrays.items()}
    tracker = WriteTracker(list(allocs.values()))
    dev.memory.writes = tracker
    try:
        args = [arrays.get(i, h) for i, h in enumerate(host)]
        launch.module().get_function(launch.kernel)(launch.grid, launch.block, args, shared_mem=launch.shared_mem,
                                                    device="interp", max_steps=max_steps,
                                                    cooperative=launch.cooperative)
        return {i: tracker.owner(a).copy() for i, a in allocs.items()}
    finally:
        dev.memory.writes = None
        for a in allocs.values():
            dev.memory.free(a)


def _first_wrong_byte(c: Comparison, itemsize: int) -> int:
    """Offset in the element of the lowest differing byte (the one whose writer matters)."""
    x = int(c.first_expected_bits or "0", 16) ^ int(c.first_actual_bits or "0", 16)
    return ((x & -x).bit_length() - 1) // 8 if x else itemsize - 1


def attribute(launch: Launch, comparisons: Mapping[int, Comparison],
              owners: Mapping[int, np.ndarray] | None = None) -> dict[int, Comparison]:
    """Name the thread that wrote each comparison's first mismatching element (on the
    interpreter; ``owners`` from ``write_owners`` when already at hand). Comparisons
    without a mismatch, or when the re-run fails, stay as they were."""
    wanted = {i: c for i, c in comparisons.items() if c.first_index is not None}
    if not wanted:
        return dict(comparisons)
    if owners is None:
        try:
            owners = write_owners(launch)
        except PtxError:
            return dict(comparisons)
    out = dict(comparisons)
    for i, c in wanted.items():
        k = launch.args[i].value.dtype.itemsize
        tid = int(owners[i][c.first_index * k + _first_wrong_byte(c, k)])
        out[i] = c.with_writer(Writer.from_tid(tid, launch.grid, launch.block))
    return out


def tolerance(ulp: int | Mapping[str, int], launch: Launch, i: int) -> int:
    """``ulp`` as one number, or per buffer keyed by ``argN`` or parameter name (full or ``param_N``)."""
    if not isinstance(ulp, Mapping):
        return int(ulp)
    name = launch.args[i].name
    for key in (f"arg{i}", name, name.replace(f"{launch.kernel}_param_", "param_", 1)):
        if key in ulp:
            return int(ulp[key])
    return int(ulp.get("*", 0))


def compare_outputs(launch: Launch, expected: Sequence, actual: Sequence, *, ulp: int | Mapping[str, int] = 0,
                    writers: bool = True) -> dict[int, Comparison]:
    """Per array argument: expected vs actual (and the writer of the first mismatch)."""
    out = {i: compare(expected[i], actual[i], ulp=tolerance(ulp, launch, i)) for i in launch.arrays}
    return attribute(launch, out) if writers else out


def run_golden(golden: Golden, device: str = "interp", *, ulp: int | Mapping[str, int] = 0,
               writers: bool = True) -> dict[int, Comparison]:
    """Run the golden's launch on ``device``; compare every array argument with the recording."""
    return compare_outputs(golden.launch, golden.outputs, execute(golden.launch, device), ulp=ulp, writers=writers)


# ------------------------------------------------------------------ files

def save_golden(golden: Golden, path) -> Path:
    L = golden.launch
    meta = {"format": FORMAT, "version": VERSION, "kernel": L.kernel, "grid": list(L.grid),
            "block": list(L.block), "shared_mem": L.shared_mem, "filename": L.filename,
            "args": [{"kind": a.kind, "name": a.name, "dtype": a.value.dtype.str, "shape": list(a.value.shape)}
                     for a in L.args],
            "provenance": dict(golden.provenance)}
    if L.cooperative:          # written only when set: other goldens stay byte-for-byte as before
        meta["cooperative"] = True
    entries = {"meta": np.array(json.dumps(meta)), "ptx": np.array(L.ptx)}
    for i, a in enumerate(L.args):
        entries[f"arg{i}"] = a.value
        if a.kind == "array":
            entries[f"out{i}"] = np.asarray(golden.outputs[i])
    p = Path(path)
    with open(p, "wb") as f:               # an open file: numpy would otherwise append .npz
        np.savez_compressed(f, **entries)
    return p


def _bad(path, why: str) -> GoldenError:
    return GoldenError(f"{path}: malformed golden file: {why}")


def _dims_from(meta: dict, key: str, path) -> tuple[int, int, int]:
    v = meta.get(key)
    if not isinstance(v, list) or not 1 <= len(v) <= 3 or not all(isinstance(x, int) and x >= 1 for x in v):
        raise _bad(path, f"`{key}` must be a list of 1 to 3 positive integers, got {v!r}")
    return tuple((v + [1, 1])[:3])


def load_golden(path) -> Golden:
    """Read and validate a golden file; every defect is a GoldenError naming the file."""
    try:
        with open(path, "rb") as f:
            magic = f.read(6)
        if magic.startswith(b"\x93NUMPY"):
            raise GoldenError(f"{path}: not a golden file: a single .npy array, not an .npz")
        if not magic.startswith(b"PK"):
            raise GoldenError(f"{path}: not a golden file (an .npz written by `ptxvm record`): "
                              "not a zip archive")
        z = np.load(path, allow_pickle=False)
    except FileNotFoundError:
        raise GoldenError(f"{path}: no such golden file") from None
    except IsADirectoryError:
        raise GoldenError(f"{path}: is a directory, not a golden file") from None
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as e:
        raise GoldenError(f"{path}: not a golden file (an .npz written by `ptxvm record`): {e}") from None
    with z:
        try:
            entries = {k: z[k] for k in z.files}
        except (OSError, ValueError, zipfile.BadZipFile, EOFError) as e:
            raise _bad(path, f"an entry cannot be read: {e}") from None
    for key in ("meta", "ptx"):
        if key not in entries:
            raise _bad(path, f"missing entry `{key}`")
    try:
        meta = json.loads(str(entries["meta"][()]))
    except (ValueError, TypeError) as e:
        raise _bad(path, f"`meta` is not JSON: {e}") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise _bad(path, f"`meta` does not say format {FORMAT!r}")
    if meta.get("version") != VERSION:
        raise GoldenError(f"{path}: golden format version {meta.get('version')!r}; this ptxvm reads version "
                          f"{VERSION}")
    kernel, shared = meta.get("kernel"), meta.get("shared_mem", 0)
    if not isinstance(kernel, str) or not kernel:
        raise _bad(path, "`kernel` must be a kernel name")
    if not isinstance(shared, int) or shared < 0:
        raise _bad(path, f"`shared_mem` must be an integer >= 0, got {shared!r}")
    grid, block = _dims_from(meta, "grid", path), _dims_from(meta, "block", path)
    specs = meta.get("args")
    if not isinstance(specs, list):
        raise _bad(path, "`args` must be a list")
    args, outputs = [], []
    for i, s in enumerate(specs):
        if not isinstance(s, dict) or s.get("kind") not in _KINDS:
            raise _bad(path, f"args[{i}] must have a kind among {', '.join(_KINDS)}")
        value = _entry(entries, f"arg{i}", s, path)
        if s["kind"] == "scalar" and value.shape != ():
            raise _bad(path, f"scalar arg{i} must be 0-d, has shape {list(value.shape)}")
        args.append(Arg(s["kind"], value, str(s.get("name", ""))))
        outputs.append(_entry(entries, f"out{i}", s, path) if s["kind"] == "array" else None)
    prov = meta.get("provenance", {})
    if not isinstance(prov, dict):
        raise _bad(path, "`provenance` must be an object")
    coop = meta.get("cooperative", False)
    if not isinstance(coop, bool):
        raise _bad(path, f"`cooperative` must be true or false, got {coop!r}")
    launch = Launch(str(entries["ptx"][()]), kernel, grid, block, tuple(args), shared,
                    meta.get("filename") if isinstance(meta.get("filename"), str) else None, coop)
    return Golden(launch, tuple(outputs), {str(k): str(v) for k, v in prov.items()}, str(path))


def _entry(entries: dict, key: str, spec: dict, path) -> np.ndarray:
    if key not in entries:
        raise _bad(path, f"missing entry `{key}`")
    v = entries[key]
    try:
        if not isinstance(spec.get("dtype"), str):
            raise TypeError
        want = np.dtype(spec["dtype"])
    except TypeError:
        raise _bad(path, f"`{key}` has an unknown dtype {spec.get('dtype')!r}") from None
    if v.dtype != want or list(v.shape) != spec.get("shape"):
        raise _bad(path, f"`{key}` is {v.dtype}{list(v.shape)} but `meta` says "
                         f"{want}{spec.get('shape')}")
    if v.dtype.kind not in "biuf":
        raise _bad(path, f"`{key}` has dtype {v.dtype}; goldens hold numbers only")
    return v


def golden_files(path) -> list[Path]:
    """A golden file, or every ``*.npz`` in a folder (sorted)."""
    p = Path(path)
    if p.is_dir():
        found = sorted(p.glob("*.npz"))
        if not found:
            raise GoldenError(f"{p}: no golden files (*.npz) in this folder")
        return found
    return [p]
