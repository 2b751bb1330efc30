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

import numpy as np

__all__ = [
    "type_info", "to_unsigned", "to_signed",
    "add", "sub", "add_cc", "addc", "sub_cc", "subc",
    "mul", "mad", "mad_cc", "madc", "mul24", "mad24", "sad",
    "div", "rem", "abs_", "neg", "min_", "max_",
    "popc", "clz", "bfind", "fns", "brev", "bfe", "bfi", "szext", "bmsk",
    "dp4a", "dp2a", "and_", "or_", "xor", "not_", "cnot", "lop3",
    "shl", "shr", "shf", "prmt", "selp", "setp_int", "cvt_int", "vabsdiff4",
]

_UDT = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}
_SDT = {8: np.int8, 16: np.int16, 32: np.int32, 64: np.int64}
_U64 = np.uint64
_M32 = 0xFFFFFFFF

_TYPES = {}
for _w in (8, 16, 32, 64):
    _TYPES[f"u{_w}"] = (_w, False)
    _TYPES[f"b{_w}"] = (_w, False)
    _TYPES[f"s{_w}"] = (_w, True)


def type_info(t: str) -> tuple[int, bool]:
    """``(bit width, signed)`` of an integer PTX type name (``"s32"`` ...)."""
    try:
        return _TYPES[t.lstrip(".")]
    except KeyError:
        raise ValueError(f"not a PTX integer type: {t!r}") from None


def to_unsigned(x, bits: int) -> np.ndarray:
    """Reinterpret ``x`` (array of any integer/bool dtype, or Python int)
    modulo ``2**bits`` as an unsigned array of that width (at least 1-D).
    A float array of exactly ``bits`` width is reinterpreted bit for bit."""
    udt = _UDT[bits]
    if isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_)):
        return np.array([int(x) & ((1 << bits) - 1)], dtype=udt)
    a = np.atleast_1d(np.asarray(x))
    if a.dtype == udt:
        return a
    if a.dtype.kind in "iub":
        return a.astype(udt)
    if a.dtype.kind == "f" and a.dtype.itemsize * 8 == bits:
        return a.view(udt)          # float registers: reinterpret the raw bits
    raise TypeError(f"integer operand (or {bits}-bit float bits) expected, got dtype {a.dtype}")


def to_signed(x, bits: int) -> np.ndarray:
    """Two's-complement view of ``x`` as a signed array of width ``bits``."""
    return to_unsigned(x, bits).view(_SDT[bits])


def _val(x, t):
    """Operand value as int64 (<= 32-bit types) or as int64/uint64 (64-bit)."""
    bits, signed = type_info(t)
    if bits == 64:
        return to_signed(x, 64) if signed else to_unsigned(x, 64)
    v = to_signed(x, bits) if signed else to_unsigned(x, bits)
    return v.astype(np.int64)


def _wrap(v, bits):
    """Reduce an integer array modulo ``2**bits`` into the unsigned dtype."""
    return np.asarray(v).astype(_UDT[bits])


def _clamp_to(v, bits, signed):
    """Clamp an int64 array to the range of a ``bits``-wide integer type."""
    lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
    return np.clip(v, lo, min(hi, (1 << 63) - 1))


def _packed(t):
    return t.lstrip(".") in ("u16x2", "s16x2")


def _split16x2(x):
    x = to_unsigned(x, 32)
    return (x & 0xFFFF).astype(np.uint16), (x >> 16).astype(np.uint16)


def _join16x2(lo, hi):
    return lo.astype(np.uint32) | (hi.astype(np.uint32) << 16)


def _per_half(fn, a, b, t, **kw):
    et = "u16" if t.lstrip(".") == "u16x2" else "s16"
    alo, ahi = _split16x2(a)
    blo, bhi = _split16x2(b)
    return _join16x2(fn(alo, blo, et, **kw), fn(ahi, bhi, et, **kw))


# ---------------------------------------------------------------------------
# add / sub  (9.7.1.1, 9.7.1.2) and extended precision (9.7.2)
# ---------------------------------------------------------------------------

def add(a, b, t: str, sat: bool = False) -> np.ndarray:
    """``add{.sat}.type d, a, b`` (9.7.1.1).  Wraparound; ``.sat`` only for
    ``.s32`` clamps to ``[INT_MIN, INT_MAX]``.  ``.u16x2``/``.s16x2`` add per
    half."""
    if _packed(t):
        return _per_half(add, a, b, t)
    bits, signed = type_info(t)
    if sat:
        if t.lstrip(".") != "s32":
            raise ValueError("add.sat is only defined for .s32")
        return _wrap(_clamp_to(_val(a, t) + _val(b, t), 32, True), 32)
    return to_unsigned(a, bits) + to_unsigned(b, bits)


def sub(a, b, t: str, sat: bool = False) -> np.ndarray:
    """``sub{.sat}.type d, a, b`` (9.7.1.2).  Wraparound; ``.sat`` only for
    ``.s32``.  Packed ``.u16x2``/``.s16x2`` per half."""
    if _packed(t):
        return _per_half(sub, a, b, t)
    bits, signed = type_info(t)
    if sat:
        if t.lstrip(".") != "s32":
            raise ValueError("sub.sat is only defined for .s32")
        return _wrap(_clamp_to(_val(a, t) - _val(b, t), 32, True), 32)
    return to_unsigned(a, bits) - to_unsigned(b, bits)


def _carry_add(x, y, cin, bits):
    """Unsigned ``x + y + cin`` modulo 2**bits and the carry out (uint8)."""
    x = to_unsigned(x, bits)
    y = to_unsigned(y, bits)
    cin = to_unsigned(cin, bits) & 1
    s1 = x + y
    c1 = s1 < x
    s2 = s1 + cin
    c2 = s2 < s1
    return s2, (c1 | c2).astype(np.uint8)


def add_cc(a, b, t: str):
    """``add.cc.type d, a, b`` (9.7.2.1): returns ``(d, CC.CF)``, the carry out
    of the unsigned addition (for ``.s32``/``.s64`` too: CC.CF is the carry of
    the bit pattern sum)."""
    bits, _ = type_info(t)
    return _carry_add(a, b, 0, bits)


def addc(a, b, cf, t: str):
    """``addc{.cc}.type d, a, b`` (9.7.2.2): ``d = a + b + CC.CF``; returns
    ``(d, carry_out)`` (ignore the carry unless ``.cc``)."""
    bits, _ = type_info(t)
    return _carry_add(a, b, cf, bits)


def _sub_with_carry(x, y, cin, bits):
    """``x + ~y + cin``, the way the hardware subtracts: returns ``(d, carry_out)``. The carry
    out is 1 when there is *no* borrow (``x >= y + (1 - cin)``), as on ARM and PowerPC."""
    x = to_unsigned(x, bits)
    y = to_unsigned(y, bits)
    cin = to_unsigned(cin, bits) & 1
    d = x - y - (1 - cin)
    carry = (x > y) | ((x == y) & (cin == 1))
    return d, carry.astype(np.uint8)


# PTX ISA 9.7.2.3/9.7.2.4 write subc as ``d = a - (b + CC.CF)`` and call the flag the borrow, but
# do not fix its polarity; NVIDIA GPUs compute ``a + ~b + 1`` (sub.cc) and ``a + ~b + CC.CF``
# (subc) and keep the carry out of that addition, so a borrow leaves CF = 0 and an ``addc``
# after ``sub.cc`` reads the inverted borrow (measured on hardware, issue 14; ZLUDA #197 found
# the same). sub/subc chains compute the same differences either way.
def sub_cc(a, b, t: str):
    """``sub.cc.type d, a, b``: returns ``(d, CC.CF)``, CF = 1 when ``a >= b`` unsigned."""
    bits, _ = type_info(t)
    return _sub_with_carry(a, b, 1, bits)


def subc(a, b, cf, t: str):
    """``subc{.cc}.type d, a, b``: ``d = a + ~b + CC.CF`` (``a - b`` when CF = 1, ``a - b - 1``
    after a borrow); returns ``(d, carry_out)``."""
    bits, _ = type_info(t)
    return _sub_with_carry(a, b, cf, bits)


# ---------------------------------------------------------------------------
# multiplication (9.7.1.3 mul, 9.7.1.4 mad, 9.7.1.5/6 mul24/mad24, 9.7.2.5/6)
# ---------------------------------------------------------------------------

def _mul_u64_full(a, b):
    """Exact 128-bit product of two uint64 arrays as ``(hi, lo)`` uint64."""
    a = to_unsigned(a, 64)
    b = to_unsigned(b, 64)
    a0, a1 = a & _M32, a >> 32
    b0, b1 = b & _M32, b >> 32
    p00 = a0 * b0
    p01 = a0 * b1
    p10 = a1 * b0
    p11 = a1 * b1
    mid = (p00 >> 32) + (p01 & _M32) + (p10 & _M32)
    hi = p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32)
    lo = (mid << 32) | (p00 & _M32)
    return hi, lo


def _mul_full(a, b, t):
    """Exact 2n-bit product of two n-bit operands as ``(hi, lo)`` n-bit
    unsigned arrays (two's complement for signed types)."""
    bits, signed = type_info(t)
    if bits == 64:
        ua, ub = to_unsigned(a, 64), to_unsigned(b, 64)
        hi, lo = _mul_u64_full(ua, ub)
        if signed:
            hi = hi - np.where(ua >> 63 == 1, ub, _U64(0)) - np.where(ub >> 63 == 1, ua, _U64(0))
        return hi, lo
    if signed:
        p = (_val(a, t) * _val(b, t)).view(np.uint64)   # |p| < 2**62: exact
    else:
        p = to_unsigned(a, bits).astype(np.uint64) * to_unsigned(b, bits).astype(np.uint64)
    return _wrap(p >> bits, bits), _wrap(p, bits)


def mul(a, b, t: str, mode: str = "lo") -> np.ndarray:
    """``mul.{lo,hi,wide}.type d, a, b`` (9.7.1.3).  ``.hi`` is the exact upper
    half of the 2n-bit product (also for 64-bit types, computed from 32-bit
    partial products, never via floats); ``.wide`` (16/32-bit types only)
    returns the 2n-bit product."""
    bits, _ = type_info(t)
    hi, lo = _mul_full(a, b, t)
    if mode == "lo":
        return lo
    if mode == "hi":
        return hi
    if mode == "wide":
        if bits > 32:
            raise ValueError("mul.wide is defined for 16- and 32-bit types only")
        w = 2 * bits
        return (hi.astype(_UDT[w]) << bits) | lo.astype(_UDT[w])
    raise ValueError(f"bad mul mode {mode!r}")


def mad(a, b, c, t: str, mode: str = "lo", sat: bool = False) -> np.ndarray:
    """``mad.{lo,hi,wide}{.sat}.type d, a, b, c`` (9.7.1.4).  ``d = part(a*b) +
    c`` with wraparound (``c`` is 2n bits wide for ``.wide``).  ``.sat`` exists
    only as ``mad.hi.sat.s32``: the exact sum ``(a*b)<63..32> + c`` clamped to
    ``[INT_MIN, INT_MAX]``."""
    bits, signed = type_info(t)
    if sat:
        if not (mode == "hi" and t.lstrip(".") == "s32"):
            raise ValueError("mad .sat is only defined as mad.hi.sat.s32")
        hi = mul(a, b, t, "hi").view(np.int32).astype(np.int64)
        return _wrap(_clamp_to(hi + _val(c, "s32"), 32, True), 32)
    p = mul(a, b, t, mode)
    w = 2 * bits if mode == "wide" else bits
    return p + to_unsigned(c, w)


def mad_cc(a, b, c, t: str, mode: str = "lo"):
    """``mad{.hi,.lo}.cc.type d, a, b, c`` (9.7.2.5; .u32 .s32 .u64 .s64):
    returns ``(d, carry_out of the addition)``."""
    return madc(a, b, c, 0, t, mode)


def madc(a, b, c, cf, t: str, mode: str = "lo"):
    """``madc{.hi,.lo}{.cc}.type d, a, b, c`` (9.7.2.6): ``d = part(a*b) + c +
    CC.CF``; returns ``(d, carry_out)``."""
    bits, _ = type_info(t)
    if mode not in ("lo", "hi"):
        raise ValueError("madc mode must be lo or hi")
    return _carry_add(mul(a, b, t, mode), c, cf, bits)


def _sext24(x, signed):
    v = to_unsigned(x, 32).astype(np.int64) & 0xFFFFFF
    if signed:
        v = np.where(v >= 1 << 23, v - (1 << 24), v)
    return v


def mul24(a, b, t: str, mode: str = "lo") -> np.ndarray:
    """``mul24.{lo,hi}.{u32,s32} d, a, b`` (9.7.1.5): 48-bit product of the low
    24 bits of ``a`` and ``b`` (sign-extended from bit 23 for ``.s32``);
    ``.lo`` returns bits 31..0, ``.hi`` bits 47..16."""
    bits, signed = type_info(t)
    if bits != 32:
        raise ValueError("mul24 is defined for .u32/.s32")
    p = _sext24(a, signed) * _sext24(b, signed)   # |p| < 2**48
    if mode == "lo":
        return _wrap(p, 32)
    if mode == "hi":
        return _wrap(p >> 16, 32)
    raise ValueError(f"bad mul24 mode {mode!r}")


def mad24(a, b, c, t: str, mode: str = "lo", sat: bool = False) -> np.ndarray:
    """``mad24.{lo,hi}{.sat}.{u32,s32} d, a, b, c`` (9.7.1.6): ``mul24`` part
    plus ``c``; ``.sat`` (``mad24.hi.sat.s32`` only) clamps the exact sum."""
    bits, signed = type_info(t)
    p = mul24(a, b, t, mode)
    if sat:
        if not (mode == "hi" and t.lstrip(".") == "s32"):
            raise ValueError("mad24 .sat is only defined as mad24.hi.sat.s32")
        s = p.view(np.int32).astype(np.int64) + _val(c, "s32")
        return _wrap(_clamp_to(s, 32, True), 32)
    return p + to_unsigned(c, 32)


def sad(a, b, c, t: str) -> np.ndarray:
    """``sad.type d, a, b, c`` (9.7.1.7): ``d = c + ((a < b) ? b - a : a - b)``
    with the comparison in the type's signedness, wraparound."""
    bits, _ = type_info(t)
    ua, ub = to_unsigned(a, bits), to_unsigned(b, bits)
    lt = _lt(a, b, t)
    return to_unsigned(c, bits) + np.where(lt, ub - ua, ua - ub)


# ---------------------------------------------------------------------------
# div / rem (9.7.1.8, 9.7.1.9)
# ---------------------------------------------------------------------------

def _magnitude(x, t):
    """(|x| as uint64, negative flag) of an operand of type ``t``."""
    bits, signed = type_info(t)
    if not signed:
        u = to_unsigned(x, bits).astype(np.uint64)
        return u, np.zeros(u.shape, bool)
    s = to_signed(x, bits).astype(np.int64)
    neg = s < 0
    u = s.view(np.uint64)
    return np.where(neg, _U64(0) - u, u), neg


def div(a, b, t: str) -> np.ndarray:
    """``div.type d, a, b`` (9.7.1.8), quotient truncated toward zero.

    Division by zero ("unspecified, machine-specific" per the ISA) gives all
    ones (what NVIDIA GPUs return, see the module docstring); signed
    ``INT_MIN / -1`` wraps to ``INT_MIN``."""
    bits, _ = type_info(t)
    ma, na = _magnitude(a, t)
    mb, nb = _magnitude(b, t)
    zero = mb == 0
    q = ma // np.where(zero, _U64(1), mb)
    q = np.where(na != nb, _U64(0) - q, q)
    q = np.where(zero, ~_U64(0), q)
    return _wrap(q, bits)


def rem(a, b, t: str) -> np.ndarray:
    """``rem.type d, a, b`` (9.7.1.9): remainder of the truncating division,
    sign of the dividend.  By zero: all ones (module docstring);
    ``INT_MIN rem -1 = 0``."""
    bits, _ = type_info(t)
    ma, na = _magnitude(a, t)
    mb, _ = _magnitude(b, t)
    zero = mb == 0
    r = ma % np.where(zero, _U64(1), mb)
    r = np.where(na, _U64(0) - r, r)
    r = np.where(zero, ~_U64(0), r)
    return _wrap(r, bits)


# ---------------------------------------------------------------------------
# abs / neg / min / max (9.7.1.10 - 9.7.1.13)
# ---------------------------------------------------------------------------

def abs_(a, t: str) -> np.ndarray:
    """``abs.type d, a`` (9.7.1.10; .s16 .s32 .s64).  ``abs(INT_MIN) = INT_MIN``
    (wraparound)."""
    bits, _ = type_info(t)
    u = to_unsigned(a, bits)
    return np.where(u >> (bits - 1) == 1, _UDT[bits](0) - u, u)


def neg(a, t: str) -> np.ndarray:
    """``neg.type d, a`` (9.7.1.11): two's complement negation, wraparound
    (``-INT_MIN = INT_MIN``)."""
    bits, _ = type_info(t)
    return _UDT[bits](0) - to_unsigned(a, bits)


def _lt(a, b, t):
    bits, signed = type_info(t)
    if signed:
        return to_signed(a, bits) < to_signed(b, bits)
    return to_unsigned(a, bits) < to_unsigned(b, bits)


def _minmax(a, b, t, relu, want_min):
    if _packed(t):
        return _per_half(lambda x, y, et: _minmax(x, y, et, relu, want_min), a, b, t)
    bits, signed = type_info(t)
    ua, ub = to_unsigned(a, bits), to_unsigned(b, bits)
    lt = _lt(a, b, t)
    r = np.where(lt if want_min else ~lt, ua, ub)
    if relu:
        if not signed:
            raise ValueError(".relu needs a signed type (.s32, .s16x2)")
        r = np.where(r >> (bits - 1) == 1, _UDT[bits](0), r)
    return r


def min_(a, b, t: str, relu: bool = False) -> np.ndarray:
    """``min{.relu}.type d, a, b`` (9.7.1.12).  Types u16..s64 and packed
    ``.u16x2``/``.s16x2`` (per half); ``.relu`` (``.s32``/``.s16x2``) clamps a
    negative result to 0."""
    return _minmax(a, b, t, relu, True)


def max_(a, b, t: str, relu: bool = False) -> np.ndarray:
    """``max{.relu}.type d, a, b`` (9.7.1.13), see :func:`min_`."""
    return _minmax(a, b, t, relu, False)


# ---------------------------------------------------------------------------
# bit counting / manipulation (9.7.1.14 - 9.7.1.23)
# ---------------------------------------------------------------------------

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


# ---------------------------------------------------------------------------
# dot products (9.7.1.23 dp4a, 9.7.1.24 dp2a)
# ---------------------------------------------------------------------------

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


# ---------------------------------------------------------------------------
# logic and shift (9.7.8)
# ---------------------------------------------------------------------------

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


# ---------------------------------------------------------------------------
# comparison and selection (9.7.6)
# ---------------------------------------------------------------------------

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
