"""AMD GPU targets as data: ``isa/targets/<name>.toml`` loaded into frozen dataclasses.

Everything that differs between gfx targets (cpu name, wave size, LDS size, the ELF
machine number, which atomics the hardware has, occupancy limits) lives in those files,
so code never branches on a target's name.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import cache

from ..errors import PtxError
from ..resources import data_dir

# ELF e_ident[EI_ABIVERSION] of an HSA code object, by code-object version.
ABI_VERSION = {4: 2, 5: 3, 6: 4}


@dataclass(frozen=True)
class Occupancy:
    """Register-file limits per SIMD, used to estimate waves per SIMD for ``--stats``."""

    max_waves_per_simd: int
    vgprs_per_simd_lane: int
    vgpr_granule: int
    unified_agprs: bool
    sgprs_per_simd: int          # 0: SGPRs do not limit occupancy on this target
    sgpr_granule: int

    def waves(self, vgprs: int, agprs: int, sgprs: int) -> int:
        """Waves per SIMD that the register counts allow (LDS not counted)."""
        regs = vgprs
        if self.unified_agprs and agprs:
            # VGPRs and AGPRs share one file: AGPRs start at a multiple of 4 after the VGPRs.
            regs = (vgprs + 3) // 4 * 4 + agprs
        regs = max(1, _round_up(regs, self.vgpr_granule))
        limit = min(self.max_waves_per_simd, self.vgprs_per_simd_lane // regs)
        if self.sgprs_per_simd and sgprs:
            limit = min(limit, self.sgprs_per_simd // max(1, _round_up(sgprs, self.sgpr_granule)))
        return max(limit, 0)


@dataclass(frozen=True)
class Target:
    name: str
    description: str
    triple: str
    cpu: str
    features: str
    wave_size: int
    lds_bytes: int
    code_object_version: int
    elf_mach: int
    cycle_counter_bits: int
    steady_counter_hz: int
    occupancy: Occupancy
    native_atomics: frozenset[str]
    # Matrix instructions (isa/matrix_units.toml) mma/wmma lower to, in order of preference;
    # () keeps the generic lowering (dataclasses.replace(target, matrix_units=()) selects it).
    matrix_units: tuple[str, ...] = ()

    @property
    def abi_version(self) -> int:
        return ABI_VERSION[self.code_object_version]

    @property
    def llvm_features(self) -> str:
        """Target-machine features: the file's plus the wave size, stated explicitly."""
        wave = f"+wavefrontsize{self.wave_size}"
        return ",".join(f for f in (self.features, wave) if f)

    def has_native_atomic(self, space: str, op: str, type_name: str) -> bool:
        return f"{space}.{op}.{type_name}" in self.native_atomics


def _round_up(n: int, granule: int) -> int:
    return (n + granule - 1) // granule * granule if granule > 0 else n


class UnknownTargetError(PtxError):
    """A target name with no ``isa/targets/<name>.toml``."""


def available() -> list[str]:
    """Names of every target file, sorted."""
    return sorted(p.stem for p in (data_dir("isa") / "targets").glob("*.toml"))


@cache
def load_target(name: str) -> Target:
    path = data_dir("isa") / "targets" / f"{name}.toml"
    if not path.is_file():
        raise UnknownTargetError(f"unknown AMD GPU target {name!r}; known: {', '.join(available())}")
    raw = tomllib.loads(path.read_text(encoding="utf-8"))
    try:
        occ = raw["occupancy"]
        target = Target(
            name=raw["name"], description=raw.get("description", ""), triple=raw["triple"],
            cpu=raw["cpu"], features=raw.get("features", ""), wave_size=int(raw["wave_size"]),
            lds_bytes=int(raw["lds_bytes"]), code_object_version=int(raw["code_object_version"]),
            elf_mach=int(raw["elf_mach"]), cycle_counter_bits=int(raw["cycle_counter_bits"]),
            steady_counter_hz=int(raw["steady_counter_hz"]),
            occupancy=Occupancy(int(occ["max_waves_per_simd"]), int(occ["vgprs_per_simd_lane"]),
                                int(occ["vgpr_granule"]), bool(occ["unified_agprs"]),
                                int(occ["sgprs_per_simd"]), int(occ["sgpr_granule"])),
            native_atomics=frozenset(raw.get("atomics", {}).get("native", ())),
            matrix_units=tuple(raw.get("matrix", {}).get("units", ())))
    except (KeyError, TypeError, ValueError) as exc:
        raise UnknownTargetError(f"{path}: malformed target file ({exc!r})") from None
    if target.name != name:
        raise UnknownTargetError(f"{path}: declares name {target.name!r}, expected {name!r}")
    if target.wave_size not in (32, 64) or target.code_object_version not in ABI_VERSION:
        raise UnknownTargetError(f"{path}: wave_size must be 32 or 64 and code_object_version 4, 5 or 6")
    return target
