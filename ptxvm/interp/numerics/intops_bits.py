"""Integer bit semantics (PTX ISA §9.7.1, §9.7.7, §9.7.9): bit counting and fields, dot products,
logic and shifts, prmt, selection and comparison, integer cvt, vabsdiff4."""

from __future__ import annotations

import numpy as np

from .intops_common import _M32, _SDT, _U64, _UDT, _clamp_to, _val, _wrap, to_signed, to_unsigned, type_info


def _bitlen(x):
    """Number of significant bits of a uint64 array (0 for 0), int64."""
    x = to_unsigned(x, 64).copy()
    n = np.zeros(x.shape, np.int64)
    for s in (32, 16, 8, 4, 2, 1):
        m = x >= (_U64(1) << _U64(s))
        n += m * s
        x = np.where(m, x >> _U64(s), x)
    return n + (x != 0)


def _popcount64(x):
    x = to_unsigned(x, 64)
    x = x - ((x >> 1) & 0x5555555555555555)
    x = (x & 0x3333333333333333) + ((x >> 2) & 0x3333333333333333)
    x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0F
    return (x * _U64(0x0101010101010101)) >> 56


def popc(a, t: str) -> np.ndarray:
    """``popc.{b32,b64} d, a`` (9.7.1.14): number of set bits, ``.u32`` result."""
    bits, _ = type_info(t)
    return _popcount64(to_unsigned(a, bits)).astype(np.uint32)


def clz(a, t: str) -> np.ndarray:
    """``clz.{b32,b64} d, a`` (9.7.1.15): leading zeros (width for 0), ``.u32``."""
    bits, _ = type_info(t)
    return (bits - _bitlen(to_unsigned(a, bits))).astype(np.uint32)


def bfind(a, t: str, shiftamt: bool = False) -> np.ndarray:
    """``bfind{.shiftamt}.type d, a`` (9.7.1.16; u32 u64 s32 s64): position of
    the most significant non-sign bit (negative signed inputs are inverted
    first); ``0xFFFFFFFF`` when there is none (also with ``.shiftamt``, which
    otherwise returns ``msb - pos``)."""
    bits, signed = type_info(t)
    u = to_unsigned(a, bits)
    if signed:
        u = np.where(u >> (bits - 1) == 1, ~u, u)
    pos = _bitlen(u) - 1
    if shiftamt:
        pos = np.where(pos >= 0, (bits - 1) - pos, -1)
    return _wrap(pos, 32)


def fns(mask, base, offset) -> np.ndarray:
    """``fns.b32 d, mask, base, offset`` (9.7.1.17): position of the
    ``|offset|``-th set bit of ``mask`` counting from bit ``base`` upwards
    (``offset > 0``) or downwards (``offset < 0``), ``base`` itself included;
    ``offset == 0`` returns ``base`` if that bit is set.  ``0xFFFFFFFF`` if not
    found.  ``base`` > 31 is undefined in the ISA; such lanes return
    ``0xFFFFFFFF`` here."""
    m = to_unsigned(mask, 32).astype(np.int64)
    base = to_unsigned(base, 32).astype(np.int64)
    off = to_signed(offset, 32).astype(np.int64)
    m, base, off = np.broadcast_arrays(m, base, off)
    valid = base <= 31
    bc = np.minimum(base, 31)
    # Positions >= base (upward) / <= base (downward) as masks.
    up = (m >> bc) << bc
    down = m & ((np.int64(2) << bc) - 1)
    cnt = np.abs(off)
    res = np.full(m.shape, -1, np.int64)
    # Upward: the cnt-th lowest set bit of `up`.  Downward: the cnt-th highest
    # set bit of `down`.  Strip bits one at a time (at most 32 steps).
    x_up = up.copy()
    x_dn = down.copy()
    for k in range(1, 33):
        low = x_up & -x_up
        hit = (off > 0) & (cnt == k) & (low != 0)
        res = np.where(hit, _bitlen(low.astype(np.uint64)) - 1, res)
        x_up = x_up & ~low
        hb = _bitlen(x_dn.astype(np.uint64)) - 1
        hit = (off < 0) & (cnt == k) & (hb >= 0)
        res = np.where(hit, hb, res)
        x_dn = np.where(hb >= 0, x_dn & ~(np.int64(1) << np.maximum(hb, 0)), x_dn)
    zero_hit = (off == 0) & (((m >> bc) & 1) == 1)
    res = np.where(zero_hit, bc, res)
    res = np.where(valid, res, -1)
    return _wrap(res, 32)


def brev(a, t: str) -> np.ndarray:
    """``brev.{b32,b64} d, a`` (9.7.1.18): bit reversal."""
    bits, _ = type_info(t)
    x = to_unsigned(a, bits).astype(np.uint64)
    for s, m in ((1, 0x5555555555555555), (2, 0x3333333333333333),
                 (4, 0x0F0F0F0F0F0F0F0F), (8, 0x00FF00FF00FF00FF),
                 (16, 0x0000FFFF0000FFFF), (32, 0x00000000FFFFFFFF)):
        x = ((x >> _U64(s)) & _U64(m)) | ((x & _U64(m)) << _U64(s))
    return _wrap(x >> _U64(64 - bits), bits)


def _bit(x, i, bits):
    """Bit ``i`` (int64 array, 0 <= i < bits) of unsigned x as uint64 0/1."""
    return (x.astype(np.uint64) >> i.astype(np.uint64)) & _U64(1)


def _lowmask(n):
    """uint64 mask of the low ``n`` bits, 0 <= n <= 64 (int64 array)."""
    n = np.asarray(n, np.int64)
    full = n >= 64
    nn = np.where(full, 0, n).astype(np.uint64)
    return np.where(full, ~_U64(0), (_U64(1) << nn) - _U64(1))


def bfe(a, pos, length, t: str) -> np.ndarray:
    """``bfe.type d, a, b, c`` (9.7.1.19; u32 u64 s32 s64).  ``pos = b & 0xff``,
    ``len = c & 0xff``; bits ``a[pos+i]`` for ``i < len`` and ``pos+i <= msb``;
    the rest is filled with the sign bit ``a[min(pos+len-1, msb)]`` for signed
    types (0 for unsigned or ``len == 0``)."""
    bits, signed = type_info(t)
    x = to_unsigned(a, bits).astype(np.uint64)
    p = (to_unsigned(pos, 32) & 0xFF).astype(np.int64)
    n = (to_unsigned(length, 32) & 0xFF).astype(np.int64)
    x, p, n = np.broadcast_arrays(x, p, n)
    msb = bits - 1
    avail = np.clip(bits - p, 0, bits)            # bits available above pos
    take = np.minimum(n, avail)
    field = np.where(p >= bits, _U64(0), x >> np.minimum(p, 63).astype(np.uint64)) & _lowmask(take)
    if signed:
        sidx = np.minimum(p + n - 1, msb)
        sbit = np.where(n == 0, _U64(0), _bit(x, np.maximum(sidx, 0), bits))
        fill = ~_lowmask(take)
        field = np.where(sbit == 1, field | fill, field)
    return _wrap(field, bits)


def bfi(a, b, pos, length, t: str) -> np.ndarray:
    """``bfi.type f, a, b, c, d`` (9.7.1.20; b32 b64): insert the low bits of
    ``a`` into ``b`` at ``pos = c & 0xff`` for ``len = d & 0xff`` bits, clipped
    at the msb (``pos`` beyond the msb or ``len == 0`` returns ``b``)."""
    bits, _ = type_info(t)
    x = to_unsigned(a, bits).astype(np.uint64)
    y = to_unsigned(b, bits).astype(np.uint64)
    p = (to_unsigned(pos, 32) & 0xFF).astype(np.int64)
    n = (to_unsigned(length, 32) & 0xFF).astype(np.int64)
    x, y, p, n = np.broadcast_arrays(x, y, p, n)
    take = np.minimum(n, np.clip(bits - p, 0, bits))
    pc = np.minimum(p, 63).astype(np.uint64)
    m = np.where(take == 0, _U64(0), _lowmask(take) << pc)
    r = (y & ~m) | ((x << pc) & m)
    return _wrap(r, bits)


def szext(a, b, t: str, mode: str) -> np.ndarray:
    """``szext.{clamp,wrap}.{u32,s32} d, a, b`` (9.7.1.21): sign-/zero-extend
    the low ``N`` bits of ``a``.  ``.wrap``: ``N = b & 31`` (N = 0 gives 0);
    ``.clamp``: ``b >= 32`` returns ``a`` unchanged."""
    bits, signed = type_info(t)
    if bits != 32:
        raise ValueError("szext is defined for .u32/.s32")
    x = to_unsigned(a, 32).astype(np.uint64)
    bb = to_unsigned(b, 32).astype(np.int64)
    x, bb = np.broadcast_arrays(x, bb)
    b1 = bb & 31
    too_large = (bb >= 32) if mode == "clamp" else np.zeros(bb.shape, bool)
    if mode not in ("clamp", "wrap"):
        raise ValueError("szext mode must be clamp or wrap")
    mask = np.where(too_large, _U64(0), (_U64(_M32) << b1.astype(np.uint64)) & _U64(_M32))
    if signed:
        sbit = (~too_large) & (b1 != 0) & (_bit(x, (b1 - 1) & 31, 32) == 1)
    else:
        sbit = np.zeros(x.shape, bool)
    r = (x & ~mask) | np.where(sbit, mask, _U64(0))
    return _wrap(r, 32)


def bmsk(a, b, mode: str) -> np.ndarray:
    """``bmsk.{clamp,wrap}.b32 d, a, b`` (9.7.1.22): mask of ``b`` ones starting
    at bit ``a`` (ISA pseudo-code followed literally: ``.wrap`` uses ``a & 31``
    and ``b & 31``; ``.clamp`` gives 0 for ``a >= 32``, and treats ``b >= 32``
    as "to the top")."""
    if mode not in ("clamp", "wrap"):
        raise ValueError("bmsk mode must be clamp or wrap")
    aa = to_unsigned(a, 32).astype(np.int64)
    bb = to_unsigned(b, 32).astype(np.int64)
    aa, bb = np.broadcast_arrays(aa, bb)
    a1 = aa & 31
    b1 = bb & 31
    full = _U64(_M32)
    mask0 = (full << a1.astype(np.uint64)) & full
    s = a1 + b1
    mask1 = (full << np.minimum(s, 63).astype(np.uint64)) & full
    pos_ovf = np.zeros(aa.shape, bool)
    wid_ovf = np.zeros(aa.shape, bool)
    if mode == "clamp":
        pos_ovf = aa >= 32
        wid_ovf = bb >= 32
        mask0 = np.where(pos_ovf, _U64(0), mask0)
    mask1 = np.where((s >= 32) | pos_ovf | wid_ovf, _U64(0),
                     np.where(b1 == 0, full, mask1))
    return _wrap(mask0 & ~mask1 & full, 32)


def _lanes(x, n, width, signed):
    """Split a 32-bit operand into ``n`` int64 lanes of ``width`` bits."""
    u = to_unsigned(x, 32).astype(np.int64)
    out = []
    for i in range(n):
        v = (u >> (i * width)) & ((1 << width) - 1)
        if signed:
            v = np.where(v >= 1 << (width - 1), v - (1 << width), v)
        out.append(v)
    return out


def _is_signed32(t):
    bits, signed = type_info(t)
    if bits != 32:
        raise ValueError("dp4a/dp2a operand types are .u32/.s32")
    return signed


def dp4a(a, b, c, atype: str, btype: str) -> np.ndarray:
    """``dp4a.atype.btype d, a, b, c`` (9.7.1.23): ``d = c + sum_i a.byte[i] *
    b.byte[i]`` (bytes sign- or zero-extended per type), 32-bit wraparound."""
    va = _lanes(a, 4, 8, _is_signed32(atype))
    vb = _lanes(b, 4, 8, _is_signed32(btype))
    acc = to_unsigned(c, 32).astype(np.int64)
    for x, y in zip(va, vb):
        acc = acc + x * y
    return _wrap(acc, 32)


def dp2a(a, b, c, atype: str, btype: str, mode: str = "lo") -> np.ndarray:
    """``dp2a.{lo,hi}.atype.btype d, a, b, c`` (9.7.1.24): two 16-bit lanes of
    ``a`` times bytes 0,1 (``.lo``) or 2,3 (``.hi``) of ``b``, plus ``c``."""
    va = _lanes(a, 2, 16, _is_signed32(atype))
    vb = _lanes(b, 4, 8, _is_signed32(btype))
    sel = {"lo": 0, "hi": 2}[mode]
    acc = to_unsigned(c, 32).astype(np.int64)
    for i in range(2):
        acc = acc + va[i] * vb[sel + i]
    return _wrap(acc, 32)


def _logic_bits(t):
    if t.lstrip(".") == "pred":
        return None
    return type_info(t)[0]


def and_(a, b, t: str = "b32"):
    """``and.type d, a, b`` (9.7.8.1); ``t == "pred"`` works on bool arrays."""
    bits = _logic_bits(t)
    if bits is None:
        return np.atleast_1d(np.asarray(a, bool)) & np.asarray(b, bool)
    return to_unsigned(a, bits) & to_unsigned(b, bits)


def or_(a, b, t: str = "b32"):
    """``or.type d, a, b`` (9.7.8.2)."""
    bits = _logic_bits(t)
    if bits is None:
        return np.atleast_1d(np.asarray(a, bool)) | np.asarray(b, bool)
    return to_unsigned(a, bits) | to_unsigned(b, bits)


def xor(a, b, t: str = "b32"):
    """``xor.type d, a, b`` (9.7.8.3)."""
    bits = _logic_bits(t)
    if bits is None:
        return np.atleast_1d(np.asarray(a, bool)) ^ np.asarray(b, bool)
    return to_unsigned(a, bits) ^ to_unsigned(b, bits)


def not_(a, t: str = "b32"):
    """``not.type d, a`` (9.7.8.4): one's complement (logical not for pred)."""
    bits = _logic_bits(t)
    if bits is None:
        return ~np.atleast_1d(np.asarray(a, bool))
    return ~to_unsigned(a, bits)


def cnot(a, t: str = "b32"):
    """``cnot.type d, a`` (9.7.8.5): ``d = (a == 0) ? 1 : 0``."""
    bits, _ = type_info(t)
    return (to_unsigned(a, bits) == 0).astype(_UDT[bits])


def lop3(a, b, c, lut: int, t: str = "b32"):
    """``lop3.b32 d, a, b, c, immLut`` (9.7.8.6): arbitrary 3-input logic.  Bit
    ``i`` of the result is ``immLut`` bit ``(a_i << 2) | (b_i << 1) | c_i``
    (so ``immLut = F(0xF0, 0xCC, 0xAA)``).  For the predicate form
    ``lop3.BoolOp.b32 d|p, ...`` compute ``p`` from ``d != 0`` yourself."""
    bits, _ = type_info(t)
    x, y, z = to_unsigned(a, bits), to_unsigned(b, bits), to_unsigned(c, bits)
    x, y, z = np.broadcast_arrays(x, y, z)
    r = np.zeros(x.shape, _UDT[bits])
    for i in range(8):
        if (int(lut) >> i) & 1:
            r |= (x if i & 4 else ~x) & (y if i & 2 else ~y) & (z if i & 1 else ~z)
    return r


def shl(a, b, t: str):
    """``shl.type d, a, b`` (9.7.8.8; b16 b32 b64): shift amount ``b`` is an
    unsigned 32-bit value; amounts >= width give 0."""
    bits, _ = type_info(t)
    x = to_unsigned(a, bits).astype(np.uint64)
    n = to_unsigned(b, 32).astype(np.uint64)
    r = np.where(n >= bits, _U64(0), x << np.minimum(n, _U64(63)))
    return _wrap(r, bits)


def shr(a, b, t: str):
    """``shr.type d, a, b`` (9.7.8.9): logical for ``.b``/``.u`` types,
    arithmetic (sign fill) for ``.s`` types; amounts >= width are clamped to
    the width (0, or all sign bits)."""
    bits, signed = type_info(t)
    n = to_unsigned(b, 32).astype(np.int64)
    if signed:
        v = to_signed(a, bits).astype(np.int64)
        return _wrap(v >> np.minimum(n, 63), bits)
    x = to_unsigned(a, bits).astype(np.uint64)
    r = np.where(n >= bits, _U64(0), x >> np.minimum(n, 63).astype(np.uint64))
    return _wrap(r, bits)


def shf(a, b, c, direction: str, mode: str):
    """``shf.{l,r}.{clamp,wrap}.b32 d, a, b, c`` (9.7.8.7): funnel shift of the
    64-bit value ``{b, a}`` (``b`` high) by ``n = min(c, 32)`` (``.clamp``) or
    ``c & 31`` (``.wrap``); ``.l`` returns the upper 32 bits of ``{b,a} << n``,
    ``.r`` the lower 32 bits of ``{b,a} >> n``."""
    x = (to_unsigned(b, 32).astype(np.uint64) << _U64(32)) | to_unsigned(a, 32).astype(np.uint64)
    cc = to_unsigned(c, 32).astype(np.uint64)
    if mode == "clamp":
        n = np.minimum(cc, _U64(32))
    elif mode == "wrap":
        n = cc & _U64(31)
    else:
        raise ValueError("shf mode must be clamp or wrap")
    if direction == "l":
        return _wrap((x << n) >> _U64(32), 32)
    if direction == "r":
        return _wrap(x >> n, 32)
    raise ValueError("shf direction must be l or r")


# prmt modes (9.7.9.7, table of the .mode forms): selector c[1:0] -> source byte index for
# result bytes 0..3.
_PRMT_MODES = {
    "f4e": ((0, 1, 2, 3), (1, 2, 3, 4), (2, 3, 4, 5), (3, 4, 5, 6)),
    "b4e": ((0, 7, 6, 5), (1, 0, 7, 6), (2, 1, 0, 7), (3, 2, 1, 0)),
    "rc8": ((0, 0, 0, 0), (1, 1, 1, 1), (2, 2, 2, 2), (3, 3, 3, 3)),
    "ecl": ((0, 1, 2, 3), (1, 1, 2, 3), (2, 2, 2, 3), (3, 3, 3, 3)),
    "ecr": ((0, 0, 0, 0), (0, 1, 1, 1), (0, 1, 2, 2), (0, 1, 2, 3)),
    "rc16": ((0, 1, 0, 1), (2, 3, 2, 3), (0, 1, 0, 1), (2, 3, 2, 3)),
}


def prmt(a, b, c, mode: str | None = None):
    """``prmt.b32{.mode} d, a, b, c`` (9.7.9.7).  Source bytes are
    ``{b, a}`` = bytes 7..4 of ``b``, 3..0 of ``a``.  Default mode: nibble
    ``i`` of ``c`` selects result byte ``i``; its low 3 bits pick the source
    byte and its msb replicates that byte's sign bit over the result byte.
    The modes ``f4e b4e rc8 ecl ecr rc16`` use ``c[1:0]`` with the ISA's
    table (result bytes 3..0): f4e ``[3210] [4321] [5432] [6543]``, b4e
    ``[5670] [6701] [7012] [0123]``, rc8 ``[0000] [1111] [2222] [3333]``, ecl
    ``[3210] [3211] [3222] [3333]``, ecr ``[0000] [1110] [2210] [3210]``,
    rc16 ``[1010] [3232] [1010] [3232]``; no sign replication in modes."""
    src = (to_unsigned(b, 32).astype(np.uint64) << _U64(32)) | to_unsigned(a, 32).astype(np.uint64)
    cc = to_unsigned(c, 32).astype(np.int64)
    src, cc = np.broadcast_arrays(src, cc)
    out = np.zeros(src.shape, np.uint64)
    if mode is None or mode == "":
        for i in range(4):
            ctl = (cc >> (4 * i)) & 0xF
            byte = (src >> (8 * (ctl & 7)).astype(np.uint64)) & _U64(0xFF)
            sign = np.where((byte >> _U64(7)) == 1, _U64(0xFF), _U64(0))
            byte = np.where((ctl & 8) != 0, sign, byte)
            out |= byte << _U64(8 * i)
        return _wrap(out, 32)
    try:
        table = np.array(_PRMT_MODES[mode.lstrip(".")], np.int64)
    except KeyError:
        raise ValueError(f"bad prmt mode {mode!r}") from None
    sel = cc & 3
    for i in range(4):
        idx = table[sel, i]
        byte = (src >> (8 * idx).astype(np.uint64)) & _U64(0xFF)
        out |= byte << _U64(8 * i)
    return _wrap(out, 32)


def selp(a, b, p, t: str):
    """``selp.type d, a, b, c`` (9.7.6.3): ``d = c ? a : b`` on raw bits."""
    tt = t.lstrip(".")
    bits = {"f16": 16, "bf16": 16, "f32": 32, "f64": 64}.get(tt) or type_info(tt)[0]
    return np.where(np.asarray(p, bool), to_unsigned(a, bits), to_unsigned(b, bits))


_CMPS = ("eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi", "hs")


def setp_int(cmp: str, a, b, t: str) -> np.ndarray:
    """Integer comparison of ``setp``/``set`` (9.7.6.1/9.7.6.2).  ``lt le gt
    ge`` compare in the type's signedness (unsigned for ``.b``/``.u``);
    ``lo ls hi hs`` always compare unsigned.  Returns a bool array;
    combine with ``.and/.or/.xor`` and the complement yourself."""
    bits, signed = type_info(t)
    cmp = cmp.lstrip(".")
    if cmp not in _CMPS:
        raise ValueError(f"bad integer comparison {cmp!r}")
    if cmp in ("lo", "ls", "hi", "hs"):
        x, y = to_unsigned(a, bits), to_unsigned(b, bits)
        cmp = {"lo": "lt", "ls": "le", "hi": "gt", "hs": "ge"}[cmp]
    elif signed:
        x, y = to_signed(a, bits), to_signed(b, bits)
    else:
        x, y = to_unsigned(a, bits), to_unsigned(b, bits)
    return {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
            "gt": np.greater, "ge": np.greater_equal}[cmp](x, y)


def cvt_int(a, dtype: str, atype: str, sat: bool = False, dst_bits: int | None = None):
    """``cvt{.sat}.dtype.atype d, a`` between integer types (9.7.9.21).

    The source value is ``a`` read as ``atype`` (sign-extended for signed,
    zero-extended otherwise); without ``.sat`` it is truncated to ``dtype``'s
    width, with ``.sat`` it is clamped to ``dtype``'s range.  The result has
    ``dtype``'s width, or ``dst_bits`` when given (the destination register's
    width): then it is sign-extended for signed ``dtype`` and zero-extended
    otherwise (PTX ISA 6.4, operand size rules for destinations)."""
    dbits, dsigned = type_info(dtype)
    abits, asigned = type_info(atype)
    if abits == 64:
        v = to_signed(a, 64) if asigned else to_unsigned(a, 64)
    else:
        v = _val(a, atype)
    if sat:
        dlo = -(1 << (dbits - 1)) if dsigned else 0
        dhi = (1 << (dbits - 1)) - 1 if dsigned else (1 << dbits) - 1
        if v.dtype == np.uint64:          # u64 source: only the upper bound matters
            v = np.minimum(v, _U64(dhi))
        else:                             # int64 holds every other source exactly
            v = np.clip(v, max(dlo, -(1 << 63)), min(dhi, (1 << 63) - 1))
    r = _wrap(v, dbits)
    if dst_bits is not None and dst_bits != dbits:
        if dst_bits < dbits:
            return _wrap(r, dst_bits)
        if dsigned:
            return _wrap(r.view(_SDT[dbits]).astype(np.int64), dst_bits)
        return r.astype(_UDT[dst_bits])
    return r


def vabsdiff4(a, b, c, atype: str = "u32", btype: str = "u32", dtype: str = "u32",
              sat: bool = False, add: bool = False, mask: int = 0xF,
              asel: int = 0x3210, bsel: int = 0x7654):
    """``vabsdiff4.dtype.atype.btype{.sat} d{.mask}, a{.asel}, b{.bsel}, c``
    and the ``.add`` reduction form (9.7.18.2.3, SIMD video instructions).

    Four byte lanes; nibble ``i`` of ``asel``/``bsel`` indexes one of the 8
    bytes of ``{b, a}`` for lane ``i`` (defaults ``b3210`` for a and
    ``b7654`` for b, i.e. the natural bytes of each operand).  Each lane
    computes ``|a_i - b_i|`` with per-type sign extension.  Without ``.add``:
    the lane result is saturated to the 8-bit ``dtype`` range if ``.sat``
    (else truncated to 8 bits) and written to the byte lanes enabled by
    ``mask``; disabled lanes take the bytes of ``c``.  With ``.add``: ``d = c
    + sum of the lanes enabled by mask``, wrapped to 32 bits.  The ISA forbids
    ``.sat`` with ``.add``: that combination raises ``ValueError``."""
    if sat and add:
        raise ValueError("vabsdiff4: .sat cannot be used with the .add accumulate (PTX ISA 9.7.18.2.3)")
    sa = _is_signed32(atype)
    sb = _is_signed32(btype)
    sd = _is_signed32(dtype)
    src = (to_unsigned(b, 32).astype(np.uint64) << _U64(32)) | to_unsigned(a, 32).astype(np.uint64)

    def lane(sel, i, signed):
        idx = (sel >> (4 * i)) & 7
        v = ((src >> _U64(8 * idx)) & _U64(0xFF)).astype(np.int64)
        if signed:
            v = np.where(v >= 128, v - 256, v)
        return v

    cu = to_unsigned(c, 32).astype(np.int64)
    if add:
        acc = (to_signed(c, 32).astype(np.int64) if sd else cu)
        for i in range(4):
            if (mask >> i) & 1:
                acc = acc + np.abs(lane(asel, i, sa) - lane(bsel, i, sb))
        return _wrap(acc, 32)
    out = np.zeros(np.broadcast(src, cu).shape, np.int64)
    for i in range(4):
        if (mask >> i) & 1:
            r = np.abs(lane(asel, i, sa) - lane(bsel, i, sb))
            if sat:
                r = _clamp_to(r, 8, sd)
            out = out | ((r & 0xFF) << (8 * i))
        else:
            out = out | (cu & (0xFF << (8 * i)))
    return _wrap(out, 32)
