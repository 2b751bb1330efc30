"""The one loader of every input file: PTX text, CUDA C++ source, or what nvcc writes.

``read_ptx(path)`` gives the PTX of a file and the name its diagnostics carry:

* ``.cu`` / ``.cuh``: compiled with NVRTC (or nvcc), name ``k.cu[compute_80.ptx]``;
* an ELF or fatbin (``.cubin``, ``.fatbin``, an executable, a shared library): the PTX embedded
  in it (``elf_ptx``), name ``k.fatbin[compute_80.ptx]``; SASS only is a ``NoPtxError``;
* anything else: the file's bytes, under its own name (PTX text, checked by the parser).

``Module.from_file``, ``ptxvm.load`` and the CLI's commands read files through it.
"""

from __future__ import annotations

import os
from pathlib import Path

CUDA_SUFFIXES = (".cu", ".cuh")


def read_ptx(path: str | os.PathLike) -> tuple[bytes, str]:
    """(PTX bytes, display name) of a file; ``OSError`` when it cannot be read, ``PtxError`` when
    it holds no PTX ptxvm can get at (SASS only, CUDA source that does not compile)."""
    p = Path(path)
    name = os.fspath(path)
    data = p.read_bytes()
    if p.suffix.lower() in CUDA_SUFFIXES:
        from .nvrtc import compile_cuda
        compiled = compile_cuda(data.decode("utf-8", "replace"), filename=name)
        return compiled.ptx.encode("utf-8"), f"{name}[{compiled.arch}.ptx]"
    from .elf_ptx import extract_ptx, is_binary
    if is_binary(data):
        entry = extract_ptx(data, name)
        return entry.text, f"{name}[{entry.label}]"
    return data, name
