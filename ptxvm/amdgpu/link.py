"""Link a relocatable AMDGPU object into a code object with ``ld.lld`` from the ziglang wheel.

``python -m ziglang ld.lld -shared`` is LLVM's own linker (LLD 22 with llvmlite 0.50),
installed from PyPI as a dependency, so no ROCm installation is needed.  Linked objects are
cached by the object's SHA-256 next to the LLVM results (the link costs a process start).
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from ..errors import CodegenError

LINK_FLAGS = ("-shared", "--no-undefined")
_TIMEOUT = 120.0


def _cache_path(obj: bytes) -> Path:
    from ..frontend.cache import cache_dir
    key = hashlib.sha256(b"ld.lld " + " ".join(LINK_FLAGS).encode() + b"\0" + obj).hexdigest()
    return cache_dir() / "hsaco" / key[:2] / f"{key}.hsaco"


def link(obj: bytes, *, use_cache: bool | None = None) -> bytes:
    """The shared-object code object for relocatable ``obj`` (raises CodegenError)."""
    from ..frontend.cache import cache_enabled
    caching = cache_enabled(use_cache)
    path = _cache_path(obj) if caching else None
    if path is not None and path.is_file():
        return path.read_bytes()
    with tempfile.TemporaryDirectory(prefix="ptxvm-lld-") as tmp:
        src, dst = Path(tmp) / "kernels.o", Path(tmp) / "kernels.hsaco"
        src.write_bytes(obj)
        cmd = [sys.executable, "-m", "ziglang", "ld.lld", *LINK_FLAGS, str(src), "-o", str(dst)]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=_TIMEOUT, check=False)
        except subprocess.TimeoutExpired:
            raise CodegenError(f"ld.lld did not finish within {_TIMEOUT:g} s") from None
        if proc.returncode != 0:
            text = (proc.stderr or proc.stdout).strip()
            if "No module named ziglang" in text:
                raise CodegenError("linking AMD GPU code objects needs ld.lld from the `ziglang` "
                                   "package: pip install ziglang")
            raise CodegenError(f"ld.lld failed (exit status {proc.returncode}):\n{text}")
        data = dst.read_bytes()
    if path is not None:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, partial = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(partial, path)
        except OSError:
            pass            # a read-only cache must not fail a compile
    return data
