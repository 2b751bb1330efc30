"""Link a relocatable AMDGPU object into a code object with ``ld.lld`` from the ziglang wheel.

``zig ld.lld -shared`` is LLVM's own linker (LLD 22 with llvmlite 0.50), installed from PyPI
(the ``ziglang`` wheel, ~400 MB) with the optional extra ``ptxvm[amdgpu]``, so no ROCm
installation is needed and users who only run kernels do without it.  The ``zig``
executable inside the package is run directly: ``python -m ziglang`` would only ``exec`` it
after a Python start-up (about 40 ms of the 45 ms a link took).  Linked objects are cached by
the object's SHA-256 next to the LLVM results.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import tempfile
from functools import cache
from importlib.util import find_spec
from pathlib import Path

from ..errors import CodegenError, PtxError

LINK_FLAGS = ("-shared", "--no-undefined")
_TIMEOUT = 120.0


MISSING_LINKER = ("linking AMD code objects needs ld.lld from the ziglang package: "
                  "pip install 'ptxvm[amdgpu]'")


class LinkerMissingError(PtxError):
    """The optional linker (the ``ziglang`` wheel, extra ``ptxvm[amdgpu]``) is not installed."""

    def __init__(self) -> None:
        super().__init__(MISSING_LINKER)


def linker_available() -> bool:
    """Whether ld.lld can be run (the ziglang package is installed), without importing it."""
    try:
        return find_spec("ziglang") is not None
    except (ImportError, ValueError):
        return False


@cache
def _zig() -> list[str]:
    """The command that runs the ziglang wheel's ``zig`` executable (found without importing
    the package; ``python -m ziglang`` when the executable is not where the wheel puts it)."""
    if not linker_available():
        raise LinkerMissingError()
    spec = find_spec("ziglang")
    if spec is not None and spec.origin:
        exe = Path(spec.origin).parent / ("zig.exe" if os.name == "nt" else "zig")
        if exe.is_file() and os.access(exe, os.X_OK):
            return [str(exe)]
    return [sys.executable, "-m", "ziglang"]


def _cache_key(obj: bytes) -> str:
    return hashlib.sha256(b"ld.lld " + " ".join(LINK_FLAGS).encode() + b"\0" + obj).hexdigest()


def _cache_path(key: str) -> Path:
    from ..diskcache import cache_dir
    return cache_dir() / "hsaco" / key[:2] / f"{key}.hsaco"


def link(obj: bytes, *, use_cache: bool | None = None) -> bytes:
    """The shared-object code object for relocatable ``obj`` (raises CodegenError, or
    LinkerMissingError without the ziglang package)."""
    from ..diskcache import cache_enabled, read_sealed, write_sealed
    caching = cache_enabled(use_cache)
    key = _cache_key(obj) if caching else ""
    path = _cache_path(key) if caching else None
    if path is not None:
        # Only an entry sealed with this user's secret: anyone else's file is a miss, removed.
        hit = read_sealed(path, "hsaco", key)
        if hit is not None:
            return bytes(hit)
    with tempfile.TemporaryDirectory(prefix="ptxvm-lld-") as tmp:
        src, dst = Path(tmp) / "kernels.o", Path(tmp) / "kernels.hsaco"
        src.write_bytes(obj)
        cmd = [*_zig(), "ld.lld", *LINK_FLAGS, str(src), "-o", str(dst)]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=_TIMEOUT, check=False)
        except subprocess.TimeoutExpired:
            raise CodegenError(f"ld.lld did not finish within {_TIMEOUT:g} s") from None
        except OSError as exc:
            raise CodegenError(f"cannot run ld.lld ({cmd[0]}): {exc}") from None
        if proc.returncode != 0:
            text = (proc.stderr or proc.stdout).strip()
            if "No module named ziglang" in text:
                raise LinkerMissingError()
            raise CodegenError(f"ld.lld failed (exit status {proc.returncode}):\n{text}")
        data = dst.read_bytes()
    if path is not None:
        write_sealed(path, "hsaco", key, data)    # atomic, within the cap; a read-only cache is fine
    return data
