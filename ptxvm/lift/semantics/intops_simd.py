"""LLVM IR emitters for PTX byte/halfword SIMD integer instructions: ``dp4a``, ``dp2a``
(PTX ISA 9.7.1.23-24) and the SIMD video instruction ``vabsdiff4`` (9.7.18.2.3).

Only the video forms the interpreter executes are emitted (``vabsdiff4`` with or without the
``.add`` secondary operation); the others are refused with ``UnsupportedError``.
Signatures are listed in :mod:`ptxvm.lift.semantics.intops`.
"""

from __future__ import annotations

from llvmlite import ir

from ...errors import UnsupportedError
from .intops_common import I32, I64, const, intrinsic, width

Value = ir.Value


def _lane(b: ir.IRBuilder, v: Value, shift: int, bits: int, signed: bool) -> Value:
    """Bits ``shift .. shift+bits-1`` of the i32 ``v`` as an exact i32 (sign- or zero-extended)."""
    t = ir.IntType(bits)
    part = b.trunc(b.lshr(v, const(I32, shift)), t) if shift else b.trunc(v, t)
    return b.sext(part, I32) if signed else b.zext(part, I32)


def _check32(name: str, *vals: Value) -> None:
    if any(width(v) != 32 for v in vals):
        raise UnsupportedError(f"{name} operands are 32-bit (.u32/.s32/.b32)")


def dp4a(b: ir.IRBuilder, x: Value, y: Value, z: Value, *, a_signed: bool = False,
         b_signed: bool = False) -> Value:
    """``dp4a.atype.btype d, a, b, c``: ``z + sum_i x.byte[i] * y.byte[i]`` (bytes extended per
    their type), 32-bit wraparound.  Each product fits i32 exactly and the sum is taken
    modulo 2**32, which equals the ISA's exact sum truncated."""
    _check32("dp4a", x, y, z)
    acc = z
    for i in range(4):
        acc = b.add(acc, b.mul(_lane(b, x, 8 * i, 8, a_signed), _lane(b, y, 8 * i, 8, b_signed)))
    return acc


def dp2a(b: ir.IRBuilder, x: Value, y: Value, z: Value, *, a_signed: bool = False,
         b_signed: bool = False, mode: str = "lo") -> Value:
    """``dp2a.{lo,hi}.atype.btype d, a, b, c``: the two 16-bit halves of ``x`` times bytes 0,1
    (``.lo``) or 2,3 (``.hi``) of ``y``, plus ``z``; 32-bit wraparound."""
    _check32("dp2a", x, y, z)
    if mode not in ("lo", "hi"):
        raise UnsupportedError(f"dp2a: modifier {mode!r} is not supported (expected 'lo' or 'hi')")
    first = 0 if mode == "lo" else 2
    acc = z
    for i in range(2):
        acc = b.add(acc, b.mul(_lane(b, x, 16 * i, 16, a_signed),
                               _lane(b, y, 8 * (first + i), 8, b_signed)))
    return acc


def vabsdiff4(b: ir.IRBuilder, x: Value, y: Value, z: Value, *, a_signed: bool = False,
              b_signed: bool = False, d_signed: bool = False, sat: bool = False,
              secondary: str | None = None, mask: int = 0xF, asel: int = 0x3210,
              bsel: int = 0x7654) -> Value:
    """``vabsdiff4.dtype.atype.btype{.sat} d{.mask}, a{.asel}, b{.bsel}, c`` and the ``.add``
    form.  Four byte lanes; nibble i of ``asel``/``bsel`` (compile-time ints) indexes one of the
    8 bytes of ``{y, x}`` for lane i (defaults: the natural bytes of each operand); lane value
    ``|a_i - b_i|`` with per-type sign extension.  Without a secondary op, each lane enabled in
    ``mask`` is saturated to the 8-bit ``dtype`` range (``.sat``) or truncated to 8 bits, and
    the other lanes keep ``z``'s bytes.  ``secondary="add"``: ``z + sum of the enabled lanes``
    (32-bit; ``.sat`` clamps to the ``dtype`` range).  ``.min``/``.max`` are refused."""
    _check32("vabsdiff4", x, y, z)
    if secondary not in (None, "add"):
        raise UnsupportedError(f"vabsdiff4.{secondary} (the .min/.max secondary operations) "
                               "is not supported")
    src = b.or_(b.shl(b.zext(y, I64), const(I64, 32)), b.zext(x, I64))

    def pick(sel: int, i: int, signed: bool) -> Value:
        idx = (sel >> (4 * i)) & 7
        byte = b.trunc(b.lshr(src, const(I64, 8 * idx)), ir.IntType(8))
        return b.sext(byte, I32) if signed else b.zext(byte, I32)

    lanes = []
    for i in range(4):
        if (mask >> i) & 1:
            d = b.sub(pick(asel, i, a_signed), pick(bsel, i, b_signed))   # |d| <= 383
            neg = b.icmp_signed("<", d, const(I32, 0))
            lanes.append((i, b.select(neg, b.sub(const(I32, 0), d), d)))
    if secondary == "add":
        total = const(I32, 0)
        for _, v in lanes:
            total = b.add(total, v)                        # at most 4 * 383: exact
        if sat:       # c + total (total >= 0) clamped to the s32 or u32 range
            kind = "sadd" if d_signed else "uadd"
            return intrinsic(b, f"llvm.{kind}.sat.i32", I32, [z, total])
        return b.add(z, total)
    keep = 0
    for i in range(4):
        if not (mask >> i) & 1:
            keep |= 0xFF << (8 * i)
    out = b.and_(z, const(I32, keep))
    for i, v in lanes:
        if sat:   # lane values are >= 0 (up to 383 with mixed signedness): clamp from above
            top = 127 if d_signed else 255
            v = b.select(b.icmp_signed(">", v, const(I32, top)), const(I32, top), v)
        v = b.and_(v, const(I32, 0xFF))
        out = b.or_(out, b.shl(v, const(I32, 8 * i)) if i else v)
    return out
