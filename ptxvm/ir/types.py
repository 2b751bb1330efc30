"""PTX fundamental types and state spaces (PTX ISA 9.0 §5.1, §5.2)."""

from __future__ import annotations

from enum import Enum


class StateSpace(str, Enum):
    REG = "reg"
    SREG = "sreg"
    CONST = "const"
    GLOBAL = "global"
    LOCAL = "local"
    PARAM = "param"
    SHARED = "shared"
    TEX = "tex"
    GENERIC = "generic"

    @property
    def directive(self) -> str:
        return "." + self.value


class ScalarType(str, Enum):
    """Every fundamental type name PTX uses in declarations and instruction types."""

    B8 = "b8"; B16 = "b16"; B32 = "b32"; B64 = "b64"; B128 = "b128"
    U8 = "u8"; U16 = "u16"; U32 = "u32"; U64 = "u64"
    S8 = "s8"; S16 = "s16"; S32 = "s32"; S64 = "s64"
    F16 = "f16"; F16X2 = "f16x2"; BF16 = "bf16"; BF16X2 = "bf16x2"
    F32 = "f32"; F64 = "f64"; TF32 = "tf32"
    E4M3 = "e4m3"; E5M2 = "e5m2"; E4M3X2 = "e4m3x2"; E5M2X2 = "e5m2x2"
    E2M3X2 = "e2m3x2"; E3M2X2 = "e3m2x2"; E2M1X2 = "e2m1x2"; UE8M0X2 = "ue8m0x2"
    U16X2 = "u16x2"; S16X2 = "s16x2"; F32X2 = "f32x2"
    PRED = "pred"
    TEXREF = "texref"; SAMPLERREF = "samplerref"; SURFREF = "surfref"

    @property
    def kind(self) -> str:
        """One of 'b', 'u', 's', 'f', 'pred', 'opaque'."""
        return _KIND[self]

    @property
    def bits(self) -> int:
        return _BITS[self]

    @property
    def directive(self) -> str:
        return "." + self.value


_BITS: dict[ScalarType, int] = {}
_KIND: dict[ScalarType, str] = {}
for _t in ScalarType:
    name = _t.value
    if name == "pred":
        _BITS[_t], _KIND[_t] = 1, "pred"
    elif name.endswith("ref"):
        _BITS[_t], _KIND[_t] = 64, "opaque"
    elif name in ("f16x2", "bf16x2", "u16x2", "s16x2"):
        _BITS[_t], _KIND[_t] = 32, "f" if "f" in name else name[0]
    elif name == "f32x2":
        _BITS[_t], _KIND[_t] = 64, "f"
    elif name in ("e4m3", "e5m2"):
        _BITS[_t], _KIND[_t] = 8, "f"
    elif name.endswith("x2") and name[0] in "eu":
        _BITS[_t], _KIND[_t] = (16 if name != "e2m1x2" else 8), "f"
    elif name == "tf32":
        _BITS[_t], _KIND[_t] = 32, "f"
    elif name == "bf16":
        _BITS[_t], _KIND[_t] = 16, "f"
    else:
        _BITS[_t], _KIND[_t] = int(name[1:]), name[0]

TYPE_NAMES = frozenset(t.value for t in ScalarType)
SPACE_NAMES = frozenset(s.value for s in StateSpace)
