"""Structural verification of a linked code object against what was asked for.

LLVM can produce a code object that is valid ELF yet useless (``+wavefrontsize32`` on a
wave64-only target gives an empty kernel list; a wrong code-object version does not load
on the intended runtime).  Every object ``ptxvm.compile`` returns has passed these checks;
a failure is a ``CodegenError`` listing every problem found.
"""

from __future__ import annotations

from typing import Any

from ..errors import CodegenError
from .elf import (
    ELFOSABI_AMDGPU_HSA,
    EM_AMDGPU,
    ET_DYN,
    STT_FUNC,
    STT_OBJECT,
    ElfError,
    read_elf,
)
from .layout import KernelParams
from .msgpack import MsgpackError, unpackb
from .targets import Target

NT_AMDGPU_METADATA = 32
EF_AMDGPU_MACH = 0xFF
KERNEL_DESCRIPTOR_BYTES = 64


def check_code_object(data: bytes, target: Target, kernels: dict[str, KernelParams]) -> dict[str, Any]:
    """Verify ``data`` and return its decoded metadata note (``amdhsa.*`` map)."""
    problems: list[str] = []
    try:
        elf = read_elf(data)
    except ElfError as exc:
        raise CodegenError(f"the linked code object is not valid ELF: {exc}") from None
    expect = [("ELF machine", elf.machine, EM_AMDGPU), ("ELF type", elf.type, ET_DYN),
              ("OS ABI", elf.osabi, ELFOSABI_AMDGPU_HSA), ("ABI version", elf.abi_version, target.abi_version),
              ("e_flags machine", elf.flags & EF_AMDGPU_MACH, target.elf_mach)]
    problems += [f"{what} is {got:#x}, expected {want:#x}" for what, got, want in expect if got != want]
    notes = [n for n in elf.notes if n.owner == "AMDGPU" and n.type == NT_AMDGPU_METADATA]
    if len(notes) != 1:
        raise CodegenError(_report(problems + [f"{len(notes)} AMDGPU metadata notes, expected 1"]))
    try:
        meta = unpackb(notes[0].desc)
    except MsgpackError as exc:
        raise CodegenError(_report(problems + [f"metadata note does not decode: {exc}"])) from None
    if not isinstance(meta, dict):
        raise CodegenError(_report(problems + ["metadata note is not a map"]))
    version = meta.get("amdhsa.version")
    if version != [1, target.code_object_version - 3]:
        problems.append(f"amdhsa.version is {version}, expected code object v{target.code_object_version}")
    prefix = f"{target.triple}--{target.cpu}"
    tgt = str(meta.get("amdhsa.target", ""))
    if tgt != prefix and not tgt.startswith(prefix + ":"):
        problems.append(f"amdhsa.target is {tgt!r}, expected {prefix!r}")
    listed = {k.get(".name"): k for k in meta.get("amdhsa.kernels", []) if isinstance(k, dict)}
    missing, extra = sorted(set(kernels) - set(listed)), sorted(set(listed) - set(kernels))
    if missing:
        problems.append(f"kernels missing from the metadata: {', '.join(missing)}")
    if extra:
        problems.append(f"unexpected kernels in the metadata: {', '.join(map(str, extra))}")
    for name, params in kernels.items():
        k = listed.get(name)
        if k is not None:
            problems += _check_kernel(elf, target, name, k, params)
    if problems:
        raise CodegenError(_report(problems))
    return meta


def _check_kernel(elf, target: Target, name: str, k: dict, params: KernelParams) -> list[str]:
    out = []
    sym = k.get(".symbol")
    if sym != f"{name}.kd":
        out.append(f"{name}: descriptor symbol is {sym!r}, expected {name + '.kd'!r}")
    kd = elf.symbol(f"{name}.kd")
    if kd is None or kd.type != STT_OBJECT or kd.size != KERNEL_DESCRIPTOR_BYTES:
        out.append(f"{name}: no {KERNEL_DESCRIPTOR_BYTES}-byte kernel descriptor `{name}.kd` in .dynsym")
    code = elf.symbol(name)
    if code is None or code.type != STT_FUNC:
        out.append(f"{name}: no code symbol in .dynsym")
    if k.get(".wavefront_size") != target.wave_size:
        out.append(f"{name}: wavefront size {k.get('.wavefront_size')}, expected {target.wave_size}")
    explicit = [a for a in k.get(".args", []) if not str(a.get(".value_kind", "")).startswith("hidden_")]
    if len(explicit) != len(params.decls):
        out.append(f"{name}: {len(explicit)} explicit kernel arguments, PTX declares {len(params.decls)}")
    for a, d in zip(explicit, params.decls):
        want = (params.offsets[d.name], max(d.size_bytes() or 0, 1))
        got = (a.get(".offset"), a.get(".size"))
        if got != want:
            out.append(f"{name}: argument `{d.name}` at offset {got[0]} size {got[1]}, PTX has "
                       f"offset {want[0]} size {want[1]}")
    if int(k.get(".kernarg_segment_size", 0)) < params.size:
        out.append(f"{name}: kernarg segment of {k.get('.kernarg_segment_size')} bytes cannot hold "
                   f"{params.size} bytes of parameters")
    lds = int(k.get(".group_segment_fixed_size", 0))
    if lds > target.lds_bytes:
        out.append(f"{name}: {lds} bytes of static shared memory exceed the {target.lds_bytes} bytes of "
                   f"LDS a {target.name} workgroup has")
    return out


def _report(problems: list[str]) -> str:
    return "the code object failed verification:\n  " + "\n  ".join(problems)
