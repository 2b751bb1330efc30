"""Reference models of PTX integer and bit instructions (bfe, bfi, prmt, ..., PTX ISA 9.7.1), from the ISA text."""

from __future__ import annotations


def info(t):
    return int(t[1:]), t[0] == "s"


def val(v, t):
    w, s = info(t)
    return sx(v, w) if s else v & ((1 << w) - 1)


def model_div(x, y, t):
    w, _ = info(t)
    a, b = val(x, t), val(y, t)
    if b == 0:
        return (1 << w) - 1, (1 << w) - 1      # documented choice: all ones
    q = abs(a) // abs(b)
    if (a < 0) != (b < 0):
        q = -q
    return q, a - b * q


def model_fns(mask, base, offset):
    offset = sx(offset, 32)
    if base > 31:
        return 0xFFFFFFFF
    if offset == 0:
        return base if (mask >> base) & 1 else 0xFFFFFFFF
    pos, count, inc = base, abs(offset) - 1, 1 if offset > 0 else -1
    while 0 <= pos < 32:
        if (mask >> pos) & 1:
            if count == 0:
                return pos
            count -= 1
        pos += inc
    return 0xFFFFFFFF


def model_bfe(a, pos, ln, t):
    w, s = info(t)
    msb = w - 1
    pos &= 0xFF
    ln &= 0xFF
    sbit = 0 if (not s or ln == 0) else (a >> min(pos + ln - 1, msb)) & 1
    d = 0
    for i in range(w):
        bit = (a >> (pos + i)) & 1 if (i < ln and pos + i <= msb) else sbit
        d |= bit << i
    return d


def model_bfi(a, b, pos, ln, w):
    pos &= 0xFF
    ln &= 0xFF
    f = b
    i = 0
    while i < ln and pos + i <= w - 1:
        f = (f & ~(1 << (pos + i))) | (((a >> i) & 1) << (pos + i))
        i += 1
    return f


def model_szext(a, b, t, mode):
    b1 = b & 0x1F
    too_large = b >= 32 and mode == "clamp"
    mask = 0 if too_large else (0xFFFFFFFF << b1) & 0xFFFFFFFF
    sign_pos = (b1 - 1) & 0x1F
    sign_bit = False if (b1 == 0 or too_large or t != "s32") else (a >> sign_pos) & 1
    return (a & ~mask & 0xFFFFFFFF) | (mask if sign_bit else 0)


def model_bmsk(a, b, mode):
    a1 = a & 0x1F
    mask0 = (0xFFFFFFFF << a1) & 0xFFFFFFFF
    b1 = b & 0x1F
    s = a1 + b1
    mask1 = (0xFFFFFFFF << s) & 0xFFFFFFFF
    pos_ovf = wid_ovf = False
    if mode == "clamp":
        if a >= 32:
            pos_ovf = True
            mask0 = 0
        if b >= 32:
            wid_ovf = True
    if s >= 32 or pos_ovf or wid_ovf:
        mask1 = 0
    elif b1 == 0:
        mask1 = 0xFFFFFFFF
    return mask0 & ~mask1 & 0xFFFFFFFF


def model_prmt(a, b, c, mode):
    src = (b << 32) | a
    byte = [(src >> (8 * i)) & 0xFF for i in range(8)]
    out = 0
    for i in range(4):
        if mode is None:
            ctl = (c >> (4 * i)) & 0xF
            v = byte[ctl & 7]
            if ctl & 8:
                v = 0xFF if v & 0x80 else 0
        else:
            s = c & 3
            idx = {"f4e": s + i, "b4e": (s - i) % 8, "rc8": s, "ecl": max(i, s),
                   "ecr": min(i, s), "rc16": (s & 1) * 2 + (i & 1)}[mode]
            v = byte[idx]
        out |= v << (8 * i)
    return out


def type_bits(t: str) -> int:
    """Width in bits of PTX type t (pred: 1)."""
    return 1 if t == "pred" else int("".join(c for c in t if c.isdigit()))


def mask(w):
    return (1 << w) - 1


def sx(v, w):
    v &= mask(w)
    return v - (1 << w) if v >> (w - 1) else v


def tv(v, t):
    """Raw bits as the value of integer type t."""
    w = type_bits(t)
    return sx(v, w) if t[0] == "s" else v & mask(w)


def trunc_div(a, b):
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def m_int_binary(op, t, a, b):
    w = type_bits(t)
    x, y = tv(a, t), tv(b, t)
    if op == "add":
        r = x + y
    elif op == "sub":
        r = x - y
    elif op == "mul.lo":
        r = x * y
    elif op == "mul.hi":
        r = (x * y) >> w
    elif op == "div":
        if y == 0:
            return mask(w)                      # intops' documented choice: all ones
        r = trunc_div(x, y)
    elif op == "rem":
        if y == 0:
            return mask(w)
        r = x - trunc_div(x, y) * y
    elif op == "min":
        r = min(x, y)
    elif op == "max":
        r = max(x, y)
    elif op == "and":
        r = a & b
    elif op == "or":
        r = a | b
    elif op == "xor":
        r = a ^ b
    elif op in ("add.sat", "sub.sat"):
        r = x + y if op == "add.sat" else x - y
        r = max(-(1 << (w - 1)), min((1 << (w - 1)) - 1, r))
    else:
        raise AssertionError(op)
    return r & mask(w)


def m_shift(op, t, a, s):
    w = type_bits(t)
    s &= mask(32)
    if op == "shl":
        return (a << s) & mask(w) if s < w else 0
    if t[0] == "s":
        return (sx(a, w) >> min(s, w - 1)) & mask(w)
    return (a & mask(w)) >> s if s < w else 0


def m_mad(mode, t, a, b, c, sat=False):
    w = type_bits(t)
    x, y = tv(a, t), tv(b, t)
    p = x * y
    if mode == "lo":
        return (p + tv(c, t)) & mask(w)
    if mode == "hi":
        r = (p >> w) + tv(c, t)
        if sat:
            r = max(-(1 << (w - 1)), min((1 << (w - 1)) - 1, r))
        return r & mask(w)
    wt = t[0] + str(2 * w)
    return (p + tv(c, wt)) & mask(2 * w)


def m_unary(op, t, a):
    w = type_bits(t)
    if op == "neg":
        return (-tv(a, t)) & mask(w)
    if op == "abs":
        return abs(tv(a, t)) & mask(w)
    if op == "not":
        return (~a) & mask(w) if t != "pred" else 1 - a
    if op == "cnot":
        return 1 if a & mask(w) == 0 else 0
    if op == "popc":
        return bin(a & mask(w)).count("1")
    if op == "clz":
        return w - (a & mask(w)).bit_length()
    if op == "brev":
        return int(format(a & mask(w), f"0{w}b")[::-1], 2)
    if op.startswith("bfind"):
        v = a & mask(w)
        if t[0] == "s" and v >> (w - 1):
            v = ~v & mask(w)                     # first bit that differs from the sign
        if v == 0:
            return 0xFFFFFFFF
        pos = v.bit_length() - 1
        return (w - 1 - pos) if op.endswith("shiftamt") else pos
    raise AssertionError(op)


def m_shf(a, b, n, left, clamp):
    n = min(n, 32) if clamp else n & 31
    v = (b << 32) | a
    return ((v << n) >> 32) & mask(32) if left else (v >> n) & mask(32)


def m_lop3(a, b, c, lut, w):
    r = 0
    for i in range(w):
        idx = (((a >> i) & 1) << 2) | (((b >> i) & 1) << 1) | ((c >> i) & 1)
        r |= ((lut >> idx) & 1) << i
    return r
