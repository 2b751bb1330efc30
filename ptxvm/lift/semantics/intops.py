"""LLVM IR emitters for PTX integer and bit instructions (PTX ISA 9.7.1, 9.7.2, 9.7.8, 9.7.9.7,
9.7.18.2.3).

Conventions (see :mod:`ptxvm.lift`): ``b`` is an ``llvmlite.ir.IRBuilder``; operands are LLVM
``iN`` values of the PTX type's width, signedness is the ``signed`` keyword (``.sN`` types:
True; ``.uN``/``.bN``: False), predicates and carry flags are ``i1``.  Every emitter appends
branch-free code at the builder's position and returns the result; none can trap or produce
poison for any input (shift amounts are clamped, division is guarded).  Semantics are bit for
bit the interpreter's (``ptxvm.interp.numerics.intops``).  A modifier or type outside the PTX ISA's
forms raises ``ptxvm.UnsupportedError`` naming the instruction.

Arithmetic (``intops_arith``)::

    iadd(b, x, y, *, sat=False, signed=False, x2=False)   # add{.sat}.type; x2=True: .u16x2/.s16x2
    isub(b, x, y, *, sat=False, signed=False, x2=False)   # sub, likewise (.sat needs signed)
    add_cc(b, x, y, carry_in=None) -> (d, cf)   # add.cc (carry_in None), addc{.cc} (carry_in i1)
    sub_cc(b, x, y, carry_in=None) -> (d, cf)  # sub.cc / subc{.cc}: d = x + ~y + CF, cf = carry (no borrow)
    mul(b, x, y, *, mode="lo", signed=False)    # mode "lo" | "hi" | "wide" (wide: i2N result)
    mad(b, x, y, z, *, mode="lo", signed=False, sat=False)   # z is i2N for "wide";
                                                # sat only as mad.hi.sat.s32
    mad_cc(b, x, y, z, carry_in=None, *, mode="lo", signed=False) -> (d, cf)  # mad.cc / madc{.cc}
    mul24(b, x, y, *, mode="lo", signed=False)  # .u32/.s32; "lo" bits 31..0, "hi" bits 47..16
    mad24(b, x, y, z, *, mode="lo", signed=False, sat=False)  # sat only as mad24.hi.sat.s32
    sad(b, x, y, z, *, signed=False)            # z + |x - y|
    div(b, x, y, *, signed=False)               # /0 -> all ones; INT_MIN / -1 -> INT_MIN
    rem(b, x, y, *, signed=False)               # /0 -> all ones; INT_MIN rem -1 -> 0
    iabs(b, x)                                  # abs.sN (abs(INT_MIN) = INT_MIN)
    ineg(b, x)                                  # neg.sN
    imin(b, x, y, *, signed=False, relu=False, x2=False)     # min{.relu}.type
    imax(b, x, y, *, signed=False, relu=False, x2=False)     # max{.relu}.type

Bits, logic, shifts (``intops_bits``); ``pos``/``length``/amounts are i32, read unsigned::

    popc(b, x) -> i32          clz(b, x) -> i32          brev(b, x)
    bfind(b, x, *, signed=False, shiftamt=False) -> i32  # 0xFFFFFFFF when no bit found
    fns(b, mask, base, offset) -> i32                    # all i32; offset signed
    bfe(b, x, pos, length, *, signed=False)
    bfi(b, field, base, pos, length)                     # PTX bfi f, a=field, b=base, c=pos, d=len
    szext(b, x, n, *, signed=False, mode="wrap")         # mode "clamp" | "wrap"; .u32/.s32
    bmsk(b, pos, size, *, mode="wrap") -> i32            # bmsk.mode.b32 d, a=pos, b=size
    and_(b, x, y)   or_(b, x, y)   xor(b, x, y)   not_(b, x)   cnot(b, x)   # any width, i1 too
    lop3(b, x, y, z, lut: int)                           # lut: the immediate, a Python int
    shl(b, x, amount)                                    # amount >= width -> 0
    shr(b, x, amount, *, signed=False)                   # >= width -> 0 / all sign bits
    shf(b, lo, hi, n, *, direction, mode)                # shf.{l,r}.{clamp,wrap}.b32 d, a=lo, b=hi, c=n
    prmt(b, x, y, sel, *, mode=None)                     # mode None | "f4e" "b4e" "rc8" "ecl" "ecr" "rc16"

SIMD (``intops_simd``); all operands i32::

    dp4a(b, x, y, z, *, a_signed=False, b_signed=False)
    dp2a(b, x, y, z, *, a_signed=False, b_signed=False, mode="lo")     # mode "lo" | "hi"
    vabsdiff4(b, x, y, z, *, a_signed=False, b_signed=False, d_signed=False, sat=False,
              secondary=None, mask=0xF, asel=0x3210, bsel=0x7654)      # secondary None | "add"

Not here: the scalar and 2-way video instructions (``vadd vsub vabsdiff vmin vmax vshl vshr
vmad vset``, ``*2``, the other ``*4``) and ``vabsdiff4.min/.max``: the interpreter, the
reference, does not execute them yet (``isa/instructions.toml`` marks them parsed-only), so
there is nothing to be bit-identical to; the lifter should refuse them with UnsupportedError.
"""

from __future__ import annotations

from .intops_arith import (add_cc, div, iabs, iadd, imax, imin, ineg, isub, mad, mad24, mad_cc, mul,
                           mul24, rem, sad, sub_cc)
from .intops_bits import (and_, bfe, bfi, bfind, bmsk, brev, clz, cnot, fns, lop3, not_, or_, popc,
                          prmt, shf, shl, shr, szext, xor)
from .intops_simd import dp2a, dp4a, vabsdiff4

__all__ = [
    "iadd", "isub", "add_cc", "sub_cc", "mul", "mad", "mad_cc", "mul24", "mad24", "sad", "div", "rem",
    "iabs", "ineg", "imin", "imax",
    "popc", "clz", "bfind", "brev", "fns", "bfe", "bfi", "szext", "bmsk",
    "and_", "or_", "xor", "not_", "cnot", "lop3", "shl", "shr", "shf", "prmt",
    "dp4a", "dp2a", "vabsdiff4",
]
