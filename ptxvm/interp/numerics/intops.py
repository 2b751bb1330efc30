"""Bit-exact PTX integer semantics as vectorised numpy functions.

Every function executes one PTX integer instruction for a whole batch of
threads.  Operands are raw register bits: unsigned numpy arrays (``uint8``,
``uint16``, ``uint32``, ``uint64``; other integer dtypes and Python ints are
accepted and reinterpreted modulo the operand width) together with the PTX
type name (``"s32"``, ``"u64"``, ``"b16"`` ...).  Results are unsigned arrays of
the result's width, predicates are ``bool`` arrays and carry flags ``uint8``
arrays of 0/1.  Scalars broadcast; the result is always at least 1-D.  No
function loops over elements in Python (a few loops run over *bit positions*
or LUT entries, a fixed small number of whole-array steps).

References are to the NVIDIA PTX ISA 9.0, chapter 9.7 ("Instructions"):
9.7.1 integer arithmetic, 9.7.2 extended-precision arithmetic, 9.7.6
comparison and selection, 9.7.8 logic and shift, 9.7.9.7 ``prmt``, 9.7.9.21
``cvt``, 9.7.18.2.3 SIMD video instructions (``vabsdiff4``).

Implementation-defined choices (the ISA leaves these open)
----------------------------------------------------------
* ``div``/``rem`` by zero (9.7.1.8/9.7.1.9 leave the result unspecified and
  machine-specific): every lane gets **all ones** of the
  type width (``0xFFFFFFFF`` for ``.u32`` *and* ``.s32``), for ``div`` and for
  ``rem``.  This is what NVIDIA GPUs return: the ptxas division sequences end
  with ``@!P LOP3.LUT d, RZ, b, RZ, 0x33`` (``d = ~b`` when ``b == 0``), and
  N. Juffa (NVIDIA) states on Stack Overflow q. 12960005 "the integer division
  operators on NVIDIA GPUs return a result with all bits set to 1 ... The same
  applies to a modulo operator where the divisor is zero".
* ``div.s`` of ``INT_MIN / -1`` wraps to ``INT_MIN``; ``rem.s`` gives 0
  (two's-complement wraparound of the exact quotient, as hardware computes it).
* ``mul24``/``mad24`` ``.s32`` use the low 24 bits of each operand
  sign-extended from bit 23 (9.7.1.6: "product of two 24-bit integer values").
* ``fns`` with ``base > 31`` (undefined per 9.7.1.17): such lanes return
  ``0xFFFFFFFF`` (no bit found).
* ``vabsdiff4``: ``.sat`` and the ``.add`` accumulate are exclusive (9.7.18.2.3: saturation
  cannot be used with the secondary accumulate operation); asking for both raises.
"""

from __future__ import annotations

# The semantics live in intops_common, intops_arith and intops_bits; this module is their one name.

from .intops_common import type_info, to_unsigned, to_signed  # noqa: F401
from .intops_arith import (add, sub, add_cc, addc, sub_cc, subc, mul, mad, mad_cc, madc, mul24, mad24, sad,
                           div, rem, abs_, neg, min_, max_)  # noqa: F401
from .intops_bits import (popc, clz, bfind, fns, brev, bfe, bfi, szext, bmsk, dp4a, dp2a, and_, or_, xor,
                          not_, cnot, lop3, shl, shr, shf, prmt, selp, setp_int, cvt_int, vabsdiff4, _bitlen)  # noqa: F401

__all__ = [
    "type_info", "to_unsigned", "to_signed",
    "add", "sub", "add_cc", "addc", "sub_cc", "subc",
    "mul", "mad", "mad_cc", "madc", "mul24", "mad24", "sad",
    "div", "rem", "abs_", "neg", "min_", "max_",
    "popc", "clz", "bfind", "fns", "brev", "bfe", "bfi", "szext", "bmsk",
    "dp4a", "dp2a", "and_", "or_", "xor", "not_", "cnot", "lop3",
    "shl", "shr", "shf", "prmt", "selp", "setp_int", "cvt_int", "vabsdiff4",
]
