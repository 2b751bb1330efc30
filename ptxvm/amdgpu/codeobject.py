"""The result of translating a PTX module: one AMD GPU code object and what describes it."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .targets import Target

# Field names of the metadata note (AMDGPUUsage, code object v5) -> ours.
_FIELDS = {".kernarg_segment_size": "kernarg_size", ".group_segment_fixed_size": "lds_bytes",
           ".private_segment_fixed_size": "scratch_bytes", ".vgpr_count": "vgpr_count",
           ".sgpr_count": "sgpr_count", ".agpr_count": "agpr_count", ".wavefront_size": "wavefront_size",
           ".max_flat_workgroup_size": "max_workgroup_size", ".kernarg_segment_align": "kernarg_align",
           ".vgpr_spill_count": "vgpr_spills", ".sgpr_spill_count": "sgpr_spills",
           ".uses_dynamic_stack": "dynamic_stack"}
_ARG_FIELDS = {".name": "name", ".offset": "offset", ".size": "size", ".value_kind": "kind",
               ".address_space": "address_space"}


def kernel_metadata(note_kernel: dict, ptx_param_names: list[str]) -> dict[str, Any]:
    """One kernel's entry, in plain names (JSON-ready)."""
    out: dict[str, Any] = {"name": note_kernel.get(".name"), "symbol": note_kernel.get(".symbol")}
    for src, dst in _FIELDS.items():
        if src in note_kernel:
            v = note_kernel[src]
            out[dst] = bool(v) if isinstance(v, bool) else v
    args = []
    names = iter(ptx_param_names)
    for a in note_kernel.get(".args", []):
        arg = {dst: a[src] for src, dst in _ARG_FIELDS.items() if src in a}
        if not str(arg.get("kind", "")).startswith("hidden_"):
            arg["name"] = next(names, arg.get("name"))
        args.append(arg)
    out["args"] = args
    return out


def _is_instruction(s: str) -> bool:
    """Whether a stripped listing line is a machine instruction (not a directive, comment or label)."""
    return bool(s) and not s.startswith((".", ";", "//")) and not s.endswith(":") and ("a" <= s[0] <= "z" or s[0] == "_")


def instruction_counts(asm: str) -> dict[str, int]:
    """Machine instructions per function in LLVM's assembly listing, in one pass over it
    (a function runs from its label, ``name:`` or ``"name":``, to ``.Lfunc_end``/``.size``).
    Counting per kernel with a scan from the top made ``--stats`` quadratic: 15+ minutes for
    20,000 kernels."""
    counts: dict[str, int] = {}
    current: str | None = None
    n = 0
    for line in asm.splitlines():
        s = line.strip()
        if current is None:
            if s.endswith(":") and line[:1] not in (" ", "\t") and not s.startswith("."):
                current, n = s[:-1], 0
                if len(current) >= 2 and current[0] == current[-1] == '"':
                    current = current[1:-1]
            continue
        if s.startswith((".Lfunc_end", ".size")):
            counts.setdefault(current, n)        # the first definition wins, as a lookup would find
            current = None
        elif _is_instruction(s):
            n += 1
    if current is not None:
        counts.setdefault(current, n)
    return counts


def count_instructions(asm: str, kernel: str) -> int:
    """Machine instructions in ``kernel``'s body in LLVM's assembly listing."""
    return instruction_counts(asm).get(kernel, 0)


class CodeObject:
    """An AMD GPU code object (``.hsaco``) holding every kernel of a PTX module.

    ``metadata`` maps each kernel's PTX name to its arguments (offset, size, kind; PTX
    parameter names), kernarg size, LDS and scratch bytes, register counts, wavefront size
    and maximum workgroup size, read from the object's own metadata note.

    ``asm`` is LLVM's assembly listing of the same code. It may be given as a function that
    makes it: ``compile`` defers that second code generation to the first use of ``asm``
    (or ``stats()``), since most translations only want the object.
    """

    def __init__(self, target: Target, hsaco: bytes, asm: str | Callable[[], str], llvm_ir: str,
                 metadata: dict[str, dict[str, Any]], note: dict[str, Any]) -> None:
        self.target = target
        self.hsaco = hsaco
        self._asm = asm
        self.llvm_ir = llvm_ir
        self.metadata = metadata
        self.note = note                  # the raw decoded NT_AMDGPU_METADATA note

    @property
    def asm(self) -> str:
        if not isinstance(self._asm, str):
            self._asm = self._asm()
        return self._asm

    def __getstate__(self) -> dict[str, Any]:
        self.asm                                    # a pickled copy carries the listing itself  # noqa: B018
        return self.__dict__

    @property
    def kernels(self) -> list[str]:
        return list(self.metadata)

    def save(self, path: str | Path) -> Path:
        p = Path(path)
        p.write_bytes(self.hsaco)
        return p

    def stats(self, instructions: bool = True) -> dict[str, dict[str, Any]]:
        """Per kernel: instruction count, registers, LDS/scratch and register-limited occupancy.
        ``instructions=False``: leave the count out (it needs the assembly listing, a second
        code generation; the rest comes from the metadata note)."""
        occ = self.target.occupancy
        counts = instruction_counts(self.asm) if instructions else {}
        out = {}
        for name, m in self.metadata.items():
            v, s, a = (int(m.get(k, 0)) for k in ("vgpr_count", "sgpr_count", "agpr_count"))
            entry: dict[str, Any] = {"instructions": counts.get(name, 0)} if instructions else {}
            out[name] = {**entry, "vgprs": v, "sgprs": s, "agprs": a,
                         "lds_bytes": m.get("lds_bytes", 0), "scratch_bytes": m.get("scratch_bytes", 0),
                         "waves_per_simd": occ.waves(v, a, s), "max_waves_per_simd": occ.max_waves_per_simd}
        return out

    def metadata_json(self) -> str:
        out = {"target": self.target.name, "amdhsa.target": self.note.get("amdhsa.target"),
               "code_object_version": self.target.code_object_version, "kernels": self.metadata}
        if self.note.get("amdhsa.printf"):
            out["printf"] = self.note["amdhsa.printf"]      # the formats a printf buffer's ids name
        return json.dumps(out, indent=2, sort_keys=False)

    def __repr__(self) -> str:
        return f"<CodeObject {self.target.name}: {len(self.hsaco)} bytes, kernels {', '.join(self.kernels)}>"
