"""CUDA C++ source -> PTX, with NVRTC (no GPU needed) or, without it, nvcc.

NVRTC is found, in order, in ``$PTXVM_NVRTC`` (a path to libnvrtc.so), the ``nvidia-cuda-nvrtc``
wheel (``pip install 'ptxvm[cuda]'``: ``site-packages/nvidia/cu13/lib`` or, for CUDA 12's wheel,
``nvidia/cuda_nvrtc/lib``), ``$CUDA_HOME``/``$CUDA_PATH``, and the system's library path. It is
called through ctypes: the C API is small and stable, and nothing else needs installing.

A compile error is a ``CudaCompileError`` whose diagnostics carry NVRTC's file, line, source
line and caret, so it renders like every other ptxvm error.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from ..errors import Diagnostic, PtxError

DEFAULT_ARCH = "compute_80"
NEXT_ARCH = "compute_90"     # tried when the source does not compile for DEFAULT_ARCH
_ARCH_OPTIONS = ("-arch", "--gpu-architecture", "-gpu-architecture")


class CudaCompileError(PtxError):
    """CUDA C++ source that NVRTC (or nvcc) refused; ``diagnostics`` hold its located errors."""


class NoCudaCompiler(PtxError):
    """Neither NVRTC nor nvcc is installed here."""


NO_COMPILER = ("compiling CUDA C++ needs NVRTC: pip install 'ptxvm[cuda]' (the nvidia-cuda-nvrtc wheel), "
               "or set PTXVM_NVRTC to a libnvrtc.so, or put nvcc on PATH")


@dataclass(frozen=True)
class CompiledCuda:
    ptx: str
    arch: str
    lowered: dict[str, str] = field(default_factory=dict)   # name expression -> PTX (mangled) name
    compiler: str = "nvrtc"


def compile_cuda(code: str, *, filename: str = "kernel.cu", options: tuple[str, ...] = (),
                 name_expressions: tuple[str, ...] = (), compiler: str = "auto") -> CompiledCuda:
    """PTX of a CUDA C++ translation unit. Without an ``-arch`` option it is compiled for
    compute_80 and, when that fails, for the architecture the error names or compute_90 (a
    cluster kernel): the arch follows the features the source uses.
    ``compiler``: "auto" (NVRTC, else nvcc), "nvrtc" or "nvcc"."""
    options = tuple(options)
    if compiler not in ("auto", "nvrtc", "nvcc"):
        raise PtxError(f"unknown CUDA compiler {compiler!r}: use 'nvrtc' or 'nvcc'")
    if compiler != "auto":
        return _compile_with(compiler, code, filename, _with_arch(options), tuple(name_expressions))
    try:
        return _compile_for_arch(code, filename, options, name_expressions)
    except CudaCompileError as exc:
        # A whole CUDA program (main, cudaMalloc) is host code NVRTC cannot take; nvcc can.
        nvcc = shutil.which("nvcc")
        if HOST_CODE not in str(exc) or nvcc is None:
            raise
        return _nvcc_compile(nvcc, code, filename, _with_arch(options), name_expressions)


def _with_arch(options: tuple[str, ...]) -> tuple[str, ...]:
    return options if any(_arch_option(o) for o in options) else (f"--gpu-architecture={DEFAULT_ARCH}",) + options


def _compile_for_arch(code: str, filename: str, options: tuple[str, ...], name_expressions: tuple[str, ...]):
    if any(_arch_option(o) for o in options):
        return _compile(code, filename, options, name_expressions)
    try:
        return _compile(code, filename, (f"--gpu-architecture={DEFAULT_ARCH}",) + options, name_expressions)
    except CudaCompileError as exc:
        # NVRTC rarely names the arch a feature needs ("__cluster_dims__ is not supported for
        # this GPU architecture"): try the one named, else compute_90, and report the first
        # errors when that fails too. Host code fails the same on every arch: no retry.
        if HOST_CODE in str(exc):
            raise
        wanted = _arch_asked_for(str(exc)) or NEXT_ARCH
        try:
            return _compile(code, filename, (f"--gpu-architecture={wanted}",) + options, name_expressions)
        except CudaCompileError:
            raise exc from None


def _compile_with(compiler: str, code: str, filename: str, options: tuple[str, ...],
                  names: tuple[str, ...]) -> CompiledCuda:
    if compiler == "nvcc":
        nvcc = shutil.which("nvcc")
        if nvcc is None:
            raise NoCudaCompiler("backend 'nvcc' asked for, and nvcc is not on PATH")
        return _nvcc_compile(nvcc, code, filename, options, names)
    lib = nvrtc_library()
    if lib is None:
        raise NoCudaCompiler(NO_COMPILER)
    return _nvrtc_compile(lib, code, filename, options + _include_options(), names)


def _include_options() -> tuple[str, ...]:
    # NVRTC knows only its built-in headers; the toolkit's (cooperative_groups.h, cuda_fp16.h
    # of older versions) are found where a CUDA install or wheel put them, after the user's.
    return tuple(f"--include-path={d}" for d in cuda_include_dirs())


def _arch_option(opt: str) -> bool:
    return opt.split("=", 1)[0] in _ARCH_OPTIONS or opt in _ARCH_OPTIONS


def _arch_asked_for(log: str) -> str | None:
    """The newest compute_XX/sm_XX above the default that an error message names, if any."""
    found = [(int(n), suffix) for n, suffix in re.findall(r"\b(?:sm|compute)_(\d{2,3})([af]?)\b", log)]
    found = [f for f in found if f[0] > int(DEFAULT_ARCH.split("_")[1])]
    if not found:
        return None
    n, suffix = max(found)
    return f"compute_{n}{suffix}"


def _compile(code: str, filename: str, options: tuple[str, ...], names: tuple[str, ...]) -> CompiledCuda:
    lib = nvrtc_library()
    if lib is not None:
        return _nvrtc_compile(lib, code, filename, options + _include_options(), names)
    nvcc = shutil.which("nvcc")
    if nvcc is not None:
        return _nvcc_compile(nvcc, code, filename, options, names)
    raise NoCudaCompiler(NO_COMPILER)


def _arch_of(options: tuple[str, ...]) -> str:
    for i, o in enumerate(options):
        if "=" in o and o.split("=", 1)[0] in _ARCH_OPTIONS:
            return o.split("=", 1)[1]
        if o in _ARCH_OPTIONS and i + 1 < len(options):
            return options[i + 1]
    return DEFAULT_ARCH


# ------------------------------------------------------------------ NVRTC through ctypes

def _candidates() -> list[str]:
    out = []
    if os.environ.get("PTXVM_NVRTC"):
        out.append(os.environ["PTXVM_NVRTC"])
    for base in map(Path, sys.path):
        for sub in ("nvidia/cu13/lib", "nvidia/cuda_nvrtc/lib", "nvidia/cu12/lib"):
            d = base / sub
            if d.is_dir():
                out += sorted(str(p) for p in d.glob("libnvrtc.so*") if "builtins" not in p.name)
    for var in ("CUDA_HOME", "CUDA_PATH"):
        if os.environ.get(var):
            out += sorted(str(p) for p in Path(os.environ[var], "lib64").glob("libnvrtc.so*"))
    found = ctypes.util.find_library("nvrtc")
    if found:
        out.append(found)
    return out


@cache
def cuda_include_dirs() -> tuple[str, ...]:
    """CUDA header folders here: the nvidia-* wheels' include/ and a toolkit's (cuda.h beside)."""
    dirs = [base / sub / "include" for base in map(Path, sys.path)
            for sub in ("nvidia/cu13", "nvidia/cuda_runtime", "nvidia/cu12")]
    dirs += [Path(os.environ[v], "include") for v in ("CUDA_HOME", "CUDA_PATH") if os.environ.get(v)]
    dirs.append(Path("/usr/local/cuda/include"))
    seen: list[str] = []
    for d in dirs:
        if (d / "cuda_runtime.h").is_file() or (d / "cooperative_groups.h").is_file():
            # CUDA 13 keeps libcu++ (cuda/std/...), which its headers include, in include/cccl.
            seen += [str(x) for x in (d, d / "cccl") if x.is_dir() and str(x) not in seen]
    return tuple(seen)


@cache
def nvrtc_library():
    """The loaded NVRTC library (ctypes) with its functions typed, or None."""
    for path in _candidates():
        try:
            lib = ctypes.CDLL(path)
            lib.nvrtcVersion
        except (OSError, AttributeError):
            continue
        return _typed(lib)
    return None


def nvrtc_version() -> tuple[int, int] | None:
    lib = nvrtc_library()
    if lib is None:
        return None
    major, minor = ctypes.c_int(), ctypes.c_int()
    lib.nvrtcVersion(ctypes.byref(major), ctypes.byref(minor))
    return major.value, minor.value


def _typed(lib):
    P, S, C = ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p
    sig = {
        "nvrtcCreateProgram": (ctypes.POINTER(P), C, C, ctypes.c_int, ctypes.POINTER(C), ctypes.POINTER(C)),
        "nvrtcDestroyProgram": (ctypes.POINTER(P),),
        "nvrtcCompileProgram": (P, ctypes.c_int, ctypes.POINTER(C)),
        "nvrtcAddNameExpression": (P, C),
        "nvrtcGetLoweredName": (P, C, ctypes.POINTER(C)),
        "nvrtcGetProgramLogSize": (P, ctypes.POINTER(S)),
        "nvrtcGetProgramLog": (P, C),
        "nvrtcGetPTXSize": (P, ctypes.POINTER(S)),
        "nvrtcGetPTX": (P, C),
    }
    for name, args in sig.items():
        fn = getattr(lib, name)
        fn.argtypes, fn.restype = args, ctypes.c_int
    lib.nvrtcGetErrorString.argtypes, lib.nvrtcGetErrorString.restype = (ctypes.c_int,), C
    return lib


def _nvrtc_compile(lib, code: str, filename: str, options: tuple[str, ...], names: tuple[str, ...]) -> CompiledCuda:
    prog = ctypes.c_void_p()
    _check(lib, lib.nvrtcCreateProgram(ctypes.byref(prog), code.encode(), filename.encode(), 0, None, None),
           "nvrtcCreateProgram")
    try:
        for n in names:
            _check(lib, lib.nvrtcAddNameExpression(prog, n.encode()), f"nvrtcAddNameExpression({n!r})")
        opts = (ctypes.c_char_p * max(len(options), 1))(*[o.encode() for o in options])
        status = lib.nvrtcCompileProgram(prog, len(options), opts)
        log = _read(lib.nvrtcGetProgramLogSize, lib.nvrtcGetProgramLog, prog)
        if status != 0:
            raise compile_error(log, filename, code, lib.nvrtcGetErrorString(status).decode())
        ptx = _read(lib.nvrtcGetPTXSize, lib.nvrtcGetPTX, prog)
        lowered = {}
        for n in names:
            out = ctypes.c_char_p()
            _check(lib, lib.nvrtcGetLoweredName(prog, n.encode(), ctypes.byref(out)), f"nvrtcGetLoweredName({n!r})")
            lowered[n] = out.value.decode()
        return CompiledCuda(ptx, _arch_of(options), lowered)
    finally:
        lib.nvrtcDestroyProgram(ctypes.byref(prog))


def _read(size_fn, get_fn, prog) -> str:
    size = ctypes.c_size_t()
    size_fn(prog, ctypes.byref(size))
    buf = ctypes.create_string_buffer(size.value)
    get_fn(prog, buf)
    return buf.value.decode("utf-8", "replace")


def _check(lib, status: int, what: str) -> None:
    if status != 0:
        raise CudaCompileError(f"NVRTC {what} failed: {lib.nvrtcGetErrorString(status).decode()}")


# ------------------------------------------------------------------ nvcc fallback

def _nvcc_compile(nvcc: str, code: str, filename: str, options: tuple[str, ...], names: tuple[str, ...]) -> CompiledCuda:
    """nvcc -ptx on a temporary copy. nvcc has no name expressions: the kernels are found by
    their demangled names instead (templates must be instantiated in the source)."""
    with tempfile.TemporaryDirectory(prefix="ptxvm-nvcc-") as tmp:
        src = Path(tmp, Path(filename).name if filename.endswith(".cu") else "kernel.cu")
        src.write_text(code, encoding="utf-8")
        out = Path(tmp, "out.ptx")
        cmd = [nvcc, "-ptx", *options, str(src), "-o", str(out)]
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=tmp)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise CudaCompileError(f"{filename}: nvcc did not run: {exc}") from None
        if r.returncode != 0:
            log = (r.stderr + r.stdout).replace(str(src), filename)
            raise compile_error(log, filename, code, f"nvcc exited with {r.returncode}")
        return CompiledCuda(out.read_text(encoding="utf-8"), _arch_of(options), {}, compiler="nvcc")


# ------------------------------------------------------------------ logs -> diagnostics

# NVRTC and nvcc (cudafe) write `file(line): error: message`, then the source line and a caret.
_LOG_LINE = re.compile(r"^(?P<file>.*?)\((?P<line>\d+)\): (?P<sev>error|warning|catastrophic error)"
                       r"(?: #\w+(?:-D)?)?: (?P<msg>.*)$")


HOST_CODE = "is host code, which NVRTC does not compile"


def compile_error(log: str, filename: str, code: str, status: str) -> CudaCompileError:
    """A CudaCompileError listing each located error of a compiler log (or the whole log)."""
    lines = log.splitlines()
    src_lines = code.split("\n")
    diags: list[Diagnostic] = []
    for i, text in enumerate(lines):
        m = _LOG_LINE.match(text)
        if not m or m["sev"] == "warning":
            continue
        line = int(m["line"])
        msg = m["msg"].strip()
        if "host functions are not allowed in JIT mode" in msg:
            msg = (f"this function {HOST_CODE} (it has no __global__/__device__): put the kernels in a "
                   f"file of their own, or install nvcc, which ptxvm then uses for such files")
        source = src_lines[line - 1] if m["file"] == filename and 0 < line <= len(src_lines) else None
        column = _caret_column(lines, i, source) if source is not None else None
        diags.append(Diagnostic(msg, m["file"], line, column, source, category="syntax"))
    if not diags:
        summary = log.strip() or status
        return CudaCompileError(f"{filename}: error: CUDA compilation failed ({status}): {summary}")
    return CudaCompileError.from_diagnostics(diags)


def _caret_column(lines: list[str], i: int, source: str) -> int | None:
    """The 1-based column of the ``^`` the compiler prints under the source line it quotes
    (indented by a prefix, tabs copied: the caret's index less the prefix is the column)."""
    if i + 2 >= len(lines) or lines[i + 2].strip() != "^":
        return None
    quoted = lines[i + 1]
    prefix = len(quoted) - len(source.rstrip("\r")) if quoted.endswith(source.rstrip("\r")) else 2
    return min(max(lines[i + 2].index("^") - prefix + 1, 1), len(source) + 1)
