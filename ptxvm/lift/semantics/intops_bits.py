"""LLVM IR emitters for PTX bit instructions (PTX ISA 9.7.1.14-9.7.1.22, 9.7.8, 9.7.9.7): popc,
clz, bfind, brev, fns, bfe, bfi, szext, bmsk, logic, lop3, shl/shr, shf, prmt.

Signatures are listed in :mod:`ptxvm.lift.semantics.intops`.  Every variable shift is clamped before it
reaches LLVM (an oversized LLVM shift is poison), so out-of-range amounts give PTX's answers.
"""

from __future__ import annotations

from llvmlite import ir

from ...errors import UnsupportedError
from .intops_common import (I32, I64, amount, check_mode, const, intrinsic, lowmask, lshr_sat, ones,
                            resize, shl_sat, umin_const, width)

Value = ir.Value


# ------------------------------------------------------------------ counting (9.7.1.14-9.7.1.18)

def popc(b: ir.IRBuilder, x: Value) -> Value:
    """``popc.{b32,b64}``: number of set bits, as i32."""
    return resize(b, b.ctpop(x), I32)


def clz(b: ir.IRBuilder, x: Value) -> Value:
    """``clz.{b32,b64}``: leading zeros (the width for 0), as i32."""
    return resize(b, b.ctlz(x, ir.Constant(ir.IntType(1), 0)), I32)


def bfind(b: ir.IRBuilder, x: Value, *, signed: bool = False, shiftamt: bool = False) -> Value:
    """``bfind{.shiftamt}.type``: bit position of the most significant non-sign bit (for a
    negative signed input, of the most significant 0), i32; 0xFFFFFFFF when there is none.
    ``.shiftamt`` returns ``width - 1 - position`` instead (still 0xFFFFFFFF for none)."""
    n = width(x)
    if signed:
        x = b.xor(x, b.ashr(x, const(x.type, n - 1)))      # invert negative values
    lz = resize(b, b.ctlz(x, ir.Constant(ir.IntType(1), 0)), I32)   # n for 0
    none = b.icmp_unsigned("==", lz, const(I32, n))
    if shiftamt:
        return b.select(none, ones(I32), lz)
    return b.sub(const(I32, n - 1), lz)                  # n - 1 - n = -1 when none


def brev(b: ir.IRBuilder, x: Value) -> Value:
    """``brev.{b32,b64}``: bit reversal."""
    return b.bitreverse(x)


def _nth_set_bit(b: ir.IRBuilder, v: Value, k: Value) -> Value:
    """Position of the ``k``-th (1-based) lowest set bit of the i32 ``v``, by a binary search on
    popcounts of halves (five steps, no branches); meaningless unless ``1 <= k <= popc(v)``."""
    pos = const(I32, 0)
    for w in (16, 8, 4, 2, 1):
        c = b.ctpop(b.and_(v, const(I32, (1 << w) - 1)))
        go = b.icmp_unsigned(">", k, c)                   # the bit lies above the low w bits
        k = b.select(go, b.sub(k, c), k)
        pos = b.select(go, b.add(pos, const(I32, w)), pos)
        v = b.select(go, b.lshr(v, const(I32, w)), v)
    return pos


def fns(b: ir.IRBuilder, mask: Value, base: Value, offset: Value) -> Value:
    """``fns.b32 d, mask, base, offset``: position of the ``|offset|``-th set bit of ``mask``
    counting from bit ``base`` (included) upwards (``offset > 0``) or downwards (``< 0``);
    ``offset == 0`` returns ``base`` if that bit is set.  0xFFFFFFFF if not found, and for
    ``base > 31`` (undefined in the ISA; the interpreter's choice)."""
    valid = b.icmp_unsigned("<=", base, const(I32, 31))
    bc = b.and_(base, const(I32, 31))                      # == base wherever valid
    down_dir = b.icmp_signed("<", offset, const(I32, 0))
    cnt = b.select(down_dir, b.sub(const(I32, 0), offset), offset)   # |offset| (2**31 stays huge)
    up = b.and_(mask, b.shl(ones(I32), bc))                # bits >= base
    # bits <= base; 2 << 31 wraps to 0 and 0 - 1 is all ones, which is what bc == 31 needs
    down = b.and_(mask, b.sub(b.shl(const(I32, 2), bc), const(I32, 1)))
    v = b.select(down_dir, b.bitreverse(down), up)         # downward search = upward on reversed
    found = b.icmp_unsigned("<=", cnt, resize(b, b.ctpop(v), I32))
    p = _nth_set_bit(b, v, cnt)
    p = b.select(down_dir, b.sub(const(I32, 31), p), p)
    r = b.select(found, p, ones(I32))
    bit_set = b.icmp_unsigned("!=", b.and_(b.lshr(mask, bc), const(I32, 1)), const(I32, 0))
    r0 = b.select(bit_set, bc, ones(I32))
    r = b.select(b.icmp_unsigned("==", offset, const(I32, 0)), r0, r)
    return b.select(valid, r, ones(I32))


# ------------------------------------------------------------------ bit fields (9.7.1.19-9.7.1.22)

def _field_geometry(b: ir.IRBuilder, pos: Value, length: Value, n: int) -> tuple[Value, Value, Value]:
    """``(p, l, take)`` as i32: ``p = pos & 0xff``, ``l = len & 0xff``, and ``take`` the number of
    field bits that exist below the msb, ``min(l, max(n - p, 0))``."""
    p = b.and_(resize(b, pos, I32), const(I32, 0xFF))
    ln = b.and_(resize(b, length, I32), const(I32, 0xFF))
    room = b.sub(const(I32, n), umin_const(b, p, n))       # n - min(p, n) >= 0
    take = b.select(b.icmp_unsigned("<", ln, room), ln, room)
    return p, ln, take


def bfe(b: ir.IRBuilder, x: Value, pos: Value, length: Value, *, signed: bool = False) -> Value:
    """``bfe.type d, a, b, c``: extract ``len = c & 0xff`` bits of ``x`` from ``pos = b & 0xff``.
    Bits past the msb are not taken; the rest of the result is 0 (unsigned, or ``len == 0``) or
    the sign bit ``x[min(pos + len - 1, msb)]`` (signed).  ``pos``/``length`` are i32."""
    n = width(x)
    ty = x.type
    p, ln, take = _field_geometry(b, pos, length, n)
    m = lowmask(b, take, ty)
    field = b.and_(lshr_sat(b, x, p), m)
    if not signed:
        return field
    sidx = umin_const(b, b.sub(b.add(p, ln), const(I32, 1)), n - 1)   # len == 0 handled below
    sbit = b.trunc(b.lshr(x, amount(b, sidx, ty)), ir.IntType(1))
    fill = b.and_(sbit, b.icmp_unsigned("!=", ln, const(I32, 0)))
    return b.select(fill, b.or_(field, b.not_(m)), field)


def bfi(b: ir.IRBuilder, field: Value, base: Value, pos: Value, length: Value) -> Value:
    """``bfi.type f, a, b, c, d``: insert the low ``len = d & 0xff`` bits of ``field`` (PTX's
    ``a``) into ``base`` (``b``) at ``pos = c & 0xff``, clipped at the msb; ``pos`` past the msb
    or ``len == 0`` returns ``base``.  ``pos``/``length`` are i32."""
    n = width(base)
    ty = base.type
    p, _, take = _field_geometry(b, pos, length, n)
    m = shl_sat(b, lowmask(b, take, ty), p)               # take == 0 whenever p >= n
    ins = b.and_(shl_sat(b, field, p), m)
    return b.or_(b.and_(base, b.not_(m)), ins)


def szext(b: ir.IRBuilder, x: Value, n: Value, *, signed: bool = False, mode: str = "wrap") -> Value:
    """``szext.{clamp,wrap}.{u32,s32} d, a, b``: sign- (``signed``) or zero-extend the low
    ``N`` bits of ``x``; ``.wrap``: ``N = n & 31`` (N = 0 gives 0); ``.clamp``: ``n >= 32``
    returns ``x`` unchanged."""
    check_mode("szext", mode, ("clamp", "wrap"))
    if width(x) != 32:
        raise UnsupportedError("szext is defined for .u32/.s32 only")
    k = b.and_(n, const(I32, 31))
    hi = b.shl(ones(I32), k)                               # the bits that get replaced
    r = b.and_(x, b.not_(hi))
    if signed:
        top = b.lshr(x, b.and_(b.sub(k, const(I32, 1)), const(I32, 31)))
        neg = b.and_(b.trunc(top, ir.IntType(1)), b.icmp_unsigned("!=", k, const(I32, 0)))
        r = b.select(neg, b.or_(r, hi), r)
    if mode == "clamp":
        r = b.select(b.icmp_unsigned(">=", n, const(I32, 32)), x, r)
    return r


def bmsk(b: ir.IRBuilder, pos: Value, size: Value, *, mode: str = "wrap") -> Value:
    """``bmsk.{clamp,wrap}.b32 d, a, b``: a mask of ``size`` ones starting at bit ``pos``
    (the ISA's pseudo-code: ``.wrap`` reads both modulo 32; ``.clamp`` gives 0 for
    ``pos >= 32`` and runs to the top for ``size >= 32``)."""
    check_mode("bmsk", mode, ("clamp", "wrap"))
    a1 = b.and_(pos, const(I32, 31))
    b1 = b.and_(size, const(I32, 31))
    lo = b.shl(ones(I32), a1)                              # bits >= pos
    s = b.add(a1, b1)
    kill = b.icmp_unsigned(">=", s, const(I32, 32))        # the mask reaches the top
    if mode == "clamp":
        pos_big = b.icmp_unsigned(">=", pos, const(I32, 32))
        lo = b.select(pos_big, const(I32, 0), lo)
        kill = b.or_(kill, b.or_(pos_big, b.icmp_unsigned(">=", size, const(I32, 32))))
    hi = b.select(b.icmp_unsigned("==", b1, const(I32, 0)), ones(I32),
                  b.shl(ones(I32), b.and_(s, const(I32, 31))))   # bits >= pos + size
    hi = b.select(kill, const(I32, 0), hi)
    return b.and_(lo, b.not_(hi))


# ------------------------------------------------------------------ logic and shifts (9.7.8)

def and_(b: ir.IRBuilder, x: Value, y: Value) -> Value:
    """``and.{pred,b16,b32,b64}``."""
    return b.and_(x, y)


def or_(b: ir.IRBuilder, x: Value, y: Value) -> Value:
    """``or.type``."""
    return b.or_(x, y)


def xor(b: ir.IRBuilder, x: Value, y: Value) -> Value:
    """``xor.type``."""
    return b.xor(x, y)


def not_(b: ir.IRBuilder, x: Value) -> Value:
    """``not.type``: one's complement (logical not for i1 predicates)."""
    return b.not_(x)


def cnot(b: ir.IRBuilder, x: Value) -> Value:
    """``cnot.type``: 1 if ``x == 0`` else 0, in ``x``'s width."""
    return b.zext(b.icmp_unsigned("==", x, const(x.type, 0)), x.type) if width(x) > 1 else b.not_(x)


def lop3(b: ir.IRBuilder, x: Value, y: Value, z: Value, lut: int) -> Value:
    """``lop3.b32 d, a, b, c, immLut``: bit i of the result is bit ``(a_i<<2)|(b_i<<1)|c_i`` of
    ``lut`` (so ``lut = F(0xF0, 0xCC, 0xAA)``).  ``lut`` must be a compile-time int."""
    if isinstance(lut, bool) or not isinstance(lut, int):
        raise UnsupportedError("lop3 needs a constant (immediate) lookup table")
    terms = []
    for i in range(8):
        if (lut >> i) & 1:        # one minterm per set LUT bit; LLVM folds the sum of products
            a = x if i & 4 else b.not_(x)
            c = y if i & 2 else b.not_(y)
            d = z if i & 1 else b.not_(z)
            terms.append(b.and_(b.and_(a, c), d))
    if not terms:
        return const(x.type, 0)
    r = terms[0]
    for t in terms[1:]:
        r = b.or_(r, t)
    return r


def shl(b: ir.IRBuilder, x: Value, amount_: Value) -> Value:
    """``shl.{b16,b32,b64}``: ``amount_`` is an unsigned i32; amounts >= width give 0."""
    return shl_sat(b, x, amount_)


def shr(b: ir.IRBuilder, x: Value, amount_: Value, *, signed: bool = False) -> Value:
    """``shr.type``: logical (``.b``/``.u``) or arithmetic (``.s``) right shift by the unsigned i32
    ``amount_``; amounts >= width are clamped to the width (0, or all sign bits)."""
    if not signed:
        return lshr_sat(b, x, amount_)
    n = width(x)
    return b.ashr(x, amount(b, umin_const(b, amount_, n - 1), x.type))


def shf(b: ir.IRBuilder, lo: Value, hi: Value, n: Value, *, direction: str, mode: str) -> Value:
    """``shf.{l,r}.{clamp,wrap}.b32 d, a, b, c``: funnel shift of the 64-bit ``{hi, lo}`` (PTX
    ``{b, a}``) by ``c`` (i32): ``.clamp`` uses ``min(c, 32)``, ``.wrap`` ``c & 31``; ``.l``
    returns the upper 32 bits of ``{hi,lo} << c``, ``.r`` the lower 32 of ``{hi,lo} >> c``."""
    check_mode("shf", direction, ("l", "r"))
    check_mode("shf", mode, ("clamp", "wrap"))
    k = b.and_(n, const(I32, 31))
    name = "llvm.fshl.i32" if direction == "l" else "llvm.fshr.i32"
    r = intrinsic(b, name, I32, [hi, lo, k])   # funnel intrinsics shift modulo 32 by definition
    if mode == "clamp":
        r = b.select(b.icmp_unsigned(">=", n, const(I32, 32)), lo if direction == "l" else hi, r)
    return r


# prmt modes (PTX ISA 9.7.9.7): for each value of c[1:0], the source byte index of result bytes
# 3..2..1..0, written here as the 16-bit selector the default mode would use (one nibble per
# result byte, high nibble = byte 3), straight from the ISA's table.
_PRMT_TABLE = {
    "f4e": (0x3210, 0x4321, 0x5432, 0x6543),
    "b4e": (0x5670, 0x6701, 0x7012, 0x0123),
    "rc8": (0x0000, 0x1111, 0x2222, 0x3333),
    "ecl": (0x3210, 0x3211, 0x3222, 0x3333),
    "ecr": (0x0000, 0x1110, 0x2210, 0x3210),
    "rc16": (0x1010, 0x3232, 0x1010, 0x3232),
}


def prmt(b: ir.IRBuilder, x: Value, y: Value, sel: Value, *, mode: str | None = None) -> Value:
    """``prmt.b32{.mode} d, a, b, c``: bytes of ``{y, x}`` (``y`` = PTX ``b`` = bytes 7..4).
    Default mode: nibble i of ``sel`` picks result byte i (3 low bits: source byte; msb: replicate
    that byte's sign bit).  Modes ``f4e b4e rc8 ecl ecr rc16`` use ``sel & 3`` and the ISA's
    table (no sign replication); they are lowered to the default mode with a selector looked up
    from a constant."""
    if mode is not None:
        mode = mode.lstrip(".")
        check_mode("prmt", mode, tuple(_PRMT_TABLE))
        packed = sum(s << (16 * i) for i, s in enumerate(_PRMT_TABLE[mode]))
        shift = b.zext(b.shl(b.and_(sel, const(I32, 3)), const(I32, 4)), I64)
        sel = b.trunc(b.lshr(const(I64, packed), shift), I32)
    src = b.or_(b.shl(b.zext(y, I64), const(I64, 32)), b.zext(x, I64))
    i8 = ir.IntType(8)
    out = None
    for i in range(4):
        ctl = b.lshr(sel, const(I32, 4 * i))
        idx = b.zext(b.shl(b.and_(ctl, const(I32, 7)), const(I32, 3)), I64)   # 8 * byte index
        byte = b.trunc(b.lshr(src, idx), i8)
        sign = b.ashr(byte, const(i8, 7))
        use_sign = b.icmp_unsigned("!=", b.and_(ctl, const(I32, 8)), const(I32, 0))
        v = b.shl(b.zext(b.select(use_sign, sign, byte), I32), const(I32, 8 * i))
        out = v if out is None else b.or_(out, v)
    return out
