"""The bits an immediate call argument passes for a formal parameter.

PTX ISA 9.0 §9.7.12.5 (``call``): "Arguments may be registers, immediate constants, or
variables in .param space. Arguments are pass-by-value." The ISA does not say which bits an
immediate becomes for a formal of a given type, so ptxas is the oracle: each rule below was
measured with CUDA 13's ``ptxas -arch=sm_80`` on ``call (r), f, (IMM);`` where ``f`` returns
its argument, reading the constant ptxas materialises in the SASS (nvdisasm):

* an integer immediate for a ``.b``/``.u``/``.s`` formal: the value modulo 2^bits
  (``4294967301`` for ``.u32`` passes 5, ``-2`` for ``.u64`` passes 0xffff_ffff_ffff_fffe);
* ``0f`` (32-bit pattern) for a 32-bit formal: the pattern; for a 64-bit formal (``.f64``
  and ``.b64`` alike) the pattern zero-extended, *not* converted (``0f3F800001`` passes
  0x0000_0000_3f80_0001);
* ``0d`` (64-bit pattern) or a decimal literal (a double) for ``.f32``: the value rounded
  to the nearest float (``0d3FF0000000000000`` passes 0x3f80_0000); for ``.b32``: the low 32
  bits of the double's pattern (``1.0`` passes 0, ``0d3FF0000000000001`` passes 1); for a
  64-bit formal: the double's pattern.

ptxas refuses integer immediates for float formals and float immediates for ``.u``/``.s``
formals (the call check, ``calls_check``, reports those). Float immediates for 8- and
16-bit formals it accepts but passes 0 whatever the value (``1.0``, ``0f3F800001`` and
``0d3FF0000000000007`` for ``.b16`` or ``.f16`` all pass 0), which reads as no rule at all:
``immediate_argument_bits`` refuses them (ValueError) rather than guess.
"""

from __future__ import annotations

import struct

from .nodes import Immediate, ImmKind
from .types import ScalarType


def _double_bits(imm: Immediate) -> int:
    if imm.kind is ImmKind.F64:
        return int(imm.value)
    return struct.unpack("<Q", struct.pack("<d", float(imm.value)))[0]


def _to_f32_bits(imm: Immediate) -> int:
    v = struct.unpack("<d", struct.pack("<Q", _double_bits(imm)))[0]
    try:
        return struct.unpack("<I", struct.pack("<f", v))[0]   # round to nearest even
    except OverflowError:                                      # rounds past FLT_MAX: infinity
        return 0xFF80_0000 if v < 0 else 0x7F80_0000


def immediate_argument_bits(imm: Immediate, t: ScalarType) -> int:
    """The raw bits (an unsigned int of ``t``'s width) the immediate ``imm`` passes for a
    formal of type ``t``; ValueError(reason) where ptxas gives no usable rule."""
    bits = t.bits
    mask = (1 << bits) - 1
    if imm.kind is ImmKind.INT:
        if t.kind == "f" or t is ScalarType.PRED:
            raise ValueError(f"an integer immediate cannot be passed for a .{t.value} parameter")
        return int(imm.value) & mask
    if t.kind in ("s", "u") or t is ScalarType.PRED:
        raise ValueError(f"a floating-point immediate cannot be passed for a .{t.value} parameter")
    if bits < 32:
        raise ValueError(f"a floating-point immediate for a .{t.value} parameter: ptxas accepts it but "
                         "passes 0 whatever its value, so ptxvm does not run it")
    if imm.kind is ImmKind.F32:
        return int(imm.value) & mask               # 32 bits: the pattern; 64 bits: zero-extended
    if bits == 32 and t is ScalarType.F32:
        return _to_f32_bits(imm)
    return _double_bits(imm) & mask
