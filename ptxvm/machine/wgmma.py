"""Warpgroup matrix multiply-accumulate (PTX ISA 9.0 §9.7.15): what every executor shares.

* **Shapes and types** (§9.7.15.5.2): m64nNk16 (.f16, .bf16), k8 (.tf32), k32 (.e4m3/.e5m2,
  .s8/.u8), k256 (.b1); N is any multiple of 8 up to 256 for floating types, and one of 8, 16,
  24, 32, 48, 64, ..., 256 (multiples of 16 above 32) for the integer and .b1 ones.
  ``combination`` checks a written form; ``k_of`` gives K for an A/B type.
* **The matrix descriptor** (§9.7.15.5.1.2.x, "Matrix Descriptor Format"): a 64-bit value;
  bits 0-13 the start address, 16-29 the leading dimension byte offset (LBO), 32-45 the stride
  dimension byte offset (SBO), each stored as ``(x & 0x3FFFF) >> 4``; bits 49-51 the base offset;
  bits 62-63 the swizzle mode (0 none, 1 128-byte, 2 64-byte, 3 32-byte). ``decode``.
* **Canonical shared-memory layouts** (§9.7.15.5.1.2, "Shared Memory Matrix Layout"): a matrix
  is made of *core matrices* of 8 rows of 16 bytes. For an operand seen as (i, k), i along M
  (A) or N (B), k along K, with T = 128 / element-bits elements per 16 bytes and W = the
  swizzle width / 16 (1 without swizzling):

  ====================  =====================================================================
  K-major, no swizzle   i % 8 -> 16 B, i // 8 -> SBO; k % T -> element, k // T -> LBO
  K-major, swizzled     i % 8 -> 16W B, i // 8 -> SBO; k % T -> element, k // T -> 16 B
  MN-major, no swizzle  i % T -> element, i // T -> SBO; k % 8 -> 16 B, k // 8 -> LBO
  MN-major, swizzled    i % T -> element, (i // T) % W -> 16 B, i // (T W) -> LBO;
                        k % 8 -> 16W B, k // 8 -> SBO
  ====================  =====================================================================

  The swizzle then exchanges 16-byte chunks inside each 16W-byte row of the repeating pattern:
  address bits [4, 4 + log2 W) are xor-ed with bits [7, 7 + log2 W) of the shared address
  (the pattern repeats every 256/512/1024 bytes). ``LAYOUTS`` holds each row of the table as
  data (``Term``); the interpreter applies it with numpy and the lifter in LLVM IR, so the rule
  is written once.
* **Register fragments** (§9.7.15.5.1.1): warp w of the warpgroup holds rows 16w .. 16w + 15
  of D and of an A in registers. D element e of a lane (N/2 per lane, two per 32-bit register
  for .f16, one otherwise): row 16w + l/4 + 8 ((e/2) % 2), column 8 (e/4) + 2 (l%4) + e%2. A
  (four 32-bit registers of P = 32/element-bits elements): element e in register r = e / P:
  row 16w + l/4 + 8 (r % 2), column (r / 2) 4P + (l%4) P + e % P. ``d_coords``/``a_coords``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

import numpy as np

from ..ir import nodes as ir
from .fragments import Fragment

WARPGROUP = 128
M = 64

# A/B element type -> (K of one instruction, element bits)
AB_TYPES: dict[str, tuple[int, int]] = {
    "f16": (16, 16), "bf16": (16, 16), "tf32": (8, 32), "e4m3": (32, 8), "e5m2": (32, 8),
    "s8": (32, 8), "u8": (32, 8), "b1": (256, 1),
}
# A/B type family -> D types it allows (§9.7.15.5.2's table)
_D_TYPES = {"f16": ("f16", "f32"), "bf16": ("f32",), "tf32": ("f32",), "fp8": ("f16", "f32"),
            "int": ("s32",), "b1": ("s32",)}
INT_N = (8, 16, 24) + tuple(range(32, 257, 16))
SWIZZLE_MODES = {0: 0, 1: 128, 2: 64, 3: 32}         # descriptor bits 62-63 -> swizzle bytes
# The sign bit of a floating A/B element: imm-scale-a/b = -1 negates the operand (flips it).
SIGN_BIT = {"f16": 15, "bf16": 15, "tf32": 31, "e4m3": 7, "e5m2": 7}


class WgmmaError(ValueError):
    """A form or descriptor the PTX ISA does not define (callers make it a located error)."""


def _family(t: str) -> str:
    return {"e4m3": "fp8", "e5m2": "fp8", "s8": "int", "u8": "int"}.get(t, t)


def shape_n(shape: str, atype: str) -> int:
    """N of ``m64nNkK``, checked against the A type's K and the allowed N."""
    m = re.fullmatch(r"m64n(\d+)k(\d+)", shape or "")
    if m is None:
        raise WgmmaError(f"`.{shape}` is not a wgmma shape (m64nNkK)")
    n, k = int(m.group(1)), int(m.group(2))
    want_k = AB_TYPES[atype][0]
    if k != want_k:
        raise WgmmaError(f"`.{atype}` operands take K = {want_k} (`.m64n{n}k{want_k}`), not `.{shape}`")
    allowed = INT_N if _family(atype) in ("int", "b1") else range(8, 257, 8)
    if n not in allowed:
        raise WgmmaError(f"`.{shape}`: N = {n} is not allowed with `.{atype}` (PTX ISA §9.7.15.5.2)")
    return n


def combination(dtype: str, atype: str, btype: str) -> None:
    """WgmmaError unless §9.7.15.5.2 lists this d/a/b combination."""
    for t in (atype, btype):
        if t not in AB_TYPES:
            raise WgmmaError(f"`.{t}` is not a wgmma A/B type")
    fa, fb = _family(atype), _family(btype)
    if fa != fb or (fa in ("f16", "bf16", "tf32") and atype != btype):
        raise WgmmaError(f"takes A and B of one kind, not `.{atype}` and `.{btype}`")
    if dtype not in _D_TYPES[fa]:
        raise WgmmaError(f"with `.{atype}` operands D is {' or '.join('.' + d for d in _D_TYPES[fa])}, "
                         f"not `.{dtype}`")


def transposable(atype: str) -> bool:
    """imm-trans-a/b exist only for .f16/.bf16 (other types are K-major only)."""
    return atype in ("f16", "bf16")


@dataclass(frozen=True)
class Form:
    """A checked wgmma.mma_async: types, N, K, which operands are where."""
    dtype: str
    atype: str
    btype: str
    n: int
    k: int
    a_in_regs: bool
    scale_a: int
    scale_b: int
    trans_a: bool
    trans_b: bool
    satfinite: bool
    bitop: str | None


def _imm(ins: ir.Instruction, op: ir.Operand, what: str, allowed: tuple[int, ...]) -> int:
    if not isinstance(op, ir.Immediate) or int(op.value) not in allowed:
        raise WgmmaError(f"needs {what} as an integer constant {' or '.join(map(str, allowed))}, "
                         f"not `{op}` (PTX ISA §9.7.15.5.2)")
    return int(op.value)


def parse(ins: ir.Instruction) -> Form:
    """The instruction's form; WgmmaError naming what the ISA does not allow."""
    if ins.form == "b1":
        dtype, atype, btype = ins.types[0].value, "b1", "b1"
        if ins.mod("mma_bitop") != "and":
            raise WgmmaError("with .b1 operands takes .and.popc only (PTX ISA §9.7.15.5.2)")
    else:
        if len(ins.types) != 3:
            raise WgmmaError("needs the types .dtype.atype.btype (PTX ISA §9.7.15.5.2)")
        dtype, atype, btype = (t.value for t in ins.types)
    combination(dtype, atype, btype)
    n = shape_n(ins.mod("wgmma_shape"), atype)
    sat = ins.mod("satfinite") is not None
    if sat and atype not in ("s8", "u8"):
        raise WgmmaError("allows .satfinite with integer operands only (PTX ISA §9.7.15.5.2)")
    ops = ins.operands
    a_in_regs = isinstance(ops[1], ir.Vector)
    trans_ok = transposable(atype)
    floating = atype not in ("s8", "u8", "b1")
    imms = (2 if floating else 0) + (0 if not trans_ok else (1 if a_in_regs else 2))
    if len(ops) != 4 + imms:
        what = "d, a, b-desc, scale-d" + (", imm-scale-a, imm-scale-b" if floating else "") + \
            ((", imm-trans-b" if a_in_regs else ", imm-trans-a, imm-trans-b") if trans_ok else "")
        raise WgmmaError(f"takes {4 + imms} operands here ({what}), not {len(ops)} (PTX ISA §9.7.15.5.2)")
    rest = list(ops[4:])
    sa = _imm(ins, rest.pop(0), "imm-scale-a", (-1, 1)) if floating else 1
    sb = _imm(ins, rest.pop(0), "imm-scale-b", (-1, 1)) if floating else 1
    ta = bool(_imm(ins, rest.pop(0), "imm-trans-a", (0, 1))) if trans_ok and not a_in_regs else False
    tb = bool(_imm(ins, rest.pop(0), "imm-trans-b", (0, 1))) if trans_ok else False
    return Form(dtype, atype, btype, n, AB_TYPES[atype][0], a_in_regs, sa, sb, ta, tb, sat,
                ins.mod("mma_bitop"))


# ------------------------------------------------------------------ descriptors

@dataclass(frozen=True)
class Descriptor:
    start: int          # byte address in .shared
    lbo: int            # leading dimension byte offset
    sbo: int            # stride dimension byte offset
    base_offset: int
    swizzle: int        # 0 (none), 32, 64 or 128 bytes


def decode(desc: int) -> Descriptor:
    d = int(desc) & (2**64 - 1)
    return Descriptor(start=(d & 0x3FFF) << 4, lbo=((d >> 16) & 0x3FFF) << 4, sbo=((d >> 32) & 0x3FFF) << 4,
                      base_offset=(d >> 49) & 7, swizzle=SWIZZLE_MODES[(d >> 62) & 3])


def decode_fields(desc: np.ndarray) -> dict[str, np.ndarray]:
    """``decode`` over an array of descriptors (uint64)."""
    d = desc.astype(np.uint64)
    f = lambda shift, mask: (d >> np.uint64(shift)) & np.uint64(mask)
    swz = np.array([0, 128, 64, 32], dtype=np.uint64)[f(62, 3).astype(np.int64)]
    return {"start": f(0, 0x3FFF) << np.uint64(4), "lbo": f(16, 0x3FFF) << np.uint64(4),
            "sbo": f(32, 0x3FFF) << np.uint64(4), "base_offset": f(49, 7), "swizzle": swz}


def encode(start: int, lbo: int, sbo: int, swizzle: int = 0, base_offset: int = 0) -> int:
    """The descriptor of these fields (the inverse of ``decode``; tests and tools use it)."""
    mode = {0: 0, 128: 1, 64: 2, 32: 3}[swizzle]
    enc = lambda x: (x & 0x3FFFF) >> 4
    return enc(start) | enc(lbo) << 16 | enc(sbo) << 32 | (base_offset & 7) << 49 | mode << 62


@dataclass(frozen=True)
class Term:
    """One digit of an (i, k) position: ``((x // div) % mod) * scale`` bits, where x is i
    (``axis`` "i") or k, and scale is ``bits`` or (``unit`` "lbo"/"sbo") 8 x that offset."""
    axis: str
    div: int
    mod: int | None     # None: unbounded
    bits: int = 0
    unit: str = ""      # "" | "lbo" | "sbo"


def layout(major: str, swizzle: int, elem_bits: int) -> tuple[Term, ...]:
    """The canonical layout's terms (module docstring's table); ``major`` "k" or "mn"."""
    t = 128 // elem_bits
    w = max(swizzle // 16, 1)
    if major == "k":
        if swizzle == 0:
            return (Term("i", 1, 8, 128), Term("i", 8, None, unit="sbo"),
                    Term("k", 1, t, elem_bits), Term("k", t, None, unit="lbo"))
        return (Term("i", 1, 8, 128 * w), Term("i", 8, None, unit="sbo"),
                Term("k", 1, t, elem_bits), Term("k", t, None, 128))
    if swizzle == 0:
        return (Term("i", 1, t, elem_bits), Term("i", t, None, unit="sbo"),
                Term("k", 1, 8, 128), Term("k", 8, None, unit="lbo"))
    return (Term("i", 1, t, elem_bits), Term("i", t, w, 128), Term("i", t * w, None, unit="lbo"),
            Term("k", 1, 8, 128 * w), Term("k", 8, None, unit="sbo"))


def swizzle_address(addr: np.ndarray, swizzle: int) -> np.ndarray:
    """Byte addresses with bits [4, 4+b) xor-ed with bits [7, 7+b), b = log2(swizzle / 16)."""
    a = np.asarray(addr, dtype=np.uint64)
    if not swizzle:
        return a
    mask = np.uint64(swizzle // 16 - 1)
    return a ^ (((a >> np.uint64(7)) & mask) << np.uint64(4))


def bit_offsets(terms: tuple[Term, ...], i: np.ndarray, k: np.ndarray, lbo, sbo) -> np.ndarray:
    """Bit offsets from the start address of positions (i, k) (before the swizzle)."""
    out = np.zeros(np.broadcast(i, k, lbo, sbo).shape, dtype=np.uint64)
    for t in terms:
        x = (i if t.axis == "i" else k).astype(np.uint64) // np.uint64(t.div)
        if t.mod is not None:
            x = x % np.uint64(t.mod)
        scale = np.uint64(t.bits) if not t.unit else np.asarray(lbo if t.unit == "lbo" else sbo,
                                                               dtype=np.uint64) * np.uint64(8)
        out = out + x * scale
    return out


def element_addresses(start, lbo, sbo, swizzle, major: str, elem_bits: int, i: np.ndarray,
                      k: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(byte address, bit offset in the byte) in .shared of operand positions (i, k), for a
    descriptor's fields (scalars or arrays broadcasting with i and k)."""
    sw = int(np.max(swizzle)) if np.ndim(swizzle) else int(swizzle)
    if np.ndim(swizzle) and np.any(np.asarray(swizzle) != sw):
        raise WgmmaError("descriptors of one instruction with different swizzle modes")
    bits = bit_offsets(layout(major, sw, elem_bits), i, k, lbo, sbo)
    byte = np.asarray(start, dtype=np.uint64) + (bits >> np.uint64(3))
    return swizzle_address(byte, sw), bits & np.uint64(7)


# ------------------------------------------------------------------ register fragments

def d_coords(n: int) -> np.ndarray:
    """int32 [128, N/2, 2]: (row, col) of each thread's D element (module docstring)."""
    t = np.arange(WARPGROUP)[:, None]
    e = np.arange(n // 2)[None, :]
    lane = t % 32
    row = 16 * (t // 32) + lane // 4 + 8 * ((e // 2) % 2)
    col = 8 * (e // 4) + 2 * (lane % 4) + e % 2
    return np.stack(np.broadcast_arrays(row, col), axis=-1).astype(np.int32)


def a_coords(atype: str) -> np.ndarray:
    """int32 [128, 4P, 2]: (row, col) of each thread's A element when A is in registers."""
    k, bits = AB_TYPES[atype]
    per = 32 // bits
    t = np.arange(WARPGROUP)[:, None]
    e = np.arange(4 * per)[None, :]
    lane = t % 32
    r = e // per
    row = 16 * (t // 32) + lane // 4 + 8 * (r % 2)
    col = (r // 2) * 4 * per + (lane % 4) * per + e % per
    return np.stack(np.broadcast_arrays(row, col), axis=-1).astype(np.int32)


@cache
def a_warp_fragment(atype: str) -> Fragment:
    """A in registers as one warp sees it: its 16 rows (rows 16w.. of A) as a Fragment with the
    warp-level layout, for executors that exchange registers within a warp only."""
    k, bits = AB_TYPES[atype]
    coords = a_coords(atype)[:32].copy()
    coords.setflags(write=False)
    per = 32 // bits
    return Fragment("wgmma", f"m64n8k{k}", "a", atype, 16, k, 4, 32, bits, per, 1, True, coords)


def d_regs(dtype: str, n: int) -> int:
    """Registers of the D vector: N/4 for .f16 (two per register), N/2 otherwise."""
    return n // 4 if dtype == "f16" else n // 2


__all__ = ["Form", "parse", "WARPGROUP", "M", "AB_TYPES", "SIGN_BIT", "SWIZZLE_MODES", "INT_N", "WgmmaError", "shape_n", "combination", "transposable",
           "Descriptor", "decode", "decode_fields", "encode", "Term", "layout", "swizzle_address", "bit_offsets",
           "element_addresses", "d_coords", "a_coords", "a_warp_fragment", "d_regs"]
