"""Integer-bit building blocks shared by the ``cvt`` and half-precision emitters.

Every rounding in :mod:`ptxvm.lift.semantics.cvt` and :mod:`ptxvm.lift.semantics.half` goes through
:func:`round_pack`, which rounds an exact value ``(-1)^neg * m * 2^e`` (``m`` an
``i64`` magnitude, ``e`` an ``i64`` exponent) to a binary format with integer
operations only.  No floating-point instruction is involved, so the result does
not depend on the FPU rounding mode or denormal mode of the target (the same IR
is compiled for the host and for AMD GPUs, whose f32 denormal handling differs).

Formats are described by :class:`Fmt` (precision ``p`` including the hidden bit,
exponent width ``ebits``); values travel as integers of the format's width.

Helpers (all emit branch-free code at the builder's position):

* ``decode(b, bits, fmt) -> Decoded``: sign, integer significand, exponent, NaN/inf
  flags of a float bit pattern (subnormals included).
* ``round_pack(b, neg, m, e, fmt, rnd, satfinite=, ftz=)``: IEEE 754 rounding of the
  exact value in mode ``rn rna rz rm rp``, gradual underflow, overflow to inf or to
  the largest finite value as the mode (or ``satfinite``) demands.
* ``rint_bits(b, bits, fmt, irnd)``: round to an integral value in the same format
  (``rni`` ties to even, ``rzi``, ``rmi``, ``rpi``), signed zeros kept.
* ``flush_subnormal(b, bits, fmt)``: ``.ftz`` on an operand (sign-preserving zero).
* ``saturate(b, bits, fmt, is_nan)``: ``.sat``, clamp to [+0.0, 1.0], NaN and -0 to +0.
* ``apply_relu(b, bits, fmt, is_nan)``: negative non-NaN values (and -0) to +0.

Exception: on AMD GPUs (``native_f16``: IEEE binary16 arithmetic in hardware) the plain
forms are exact LLVM operations instead: ``add sub mul fma .rn.f16{x2}`` without ``.ftz
.sat .relu`` as ``half`` arithmetic; ``cvt`` f16->f32/f64, f32->f64 (``fpext``), f32->f16 and
f64->f32 ``.rn`` (``fptrunc``), int->f32/f64 ``.rn`` (``[su]itofp``), ``.rni .rzi .rmi
.rpi`` to the same type (``roundeven trunc floor ceil``) and float->int
(those, then ``fpto[su]i.sat``: clamped, NaN -> 0).  LLVM IR defines them as correctly
rounded to nearest even with subnormals (AMD kernels keep the default denormal modes, no
flushing), which is what PTX asks; only a NaN result's bits are left to the target, so it
is replaced by the canonical NaN on the bits (``canonical_nan``).  The host keeps the
integer code (no f16 arithmetic there: LLVM would call compiler-rt).
"""

from __future__ import annotations

from dataclasses import dataclass

from llvmlite import ir

from ...isa import modifier_group

I1 = ir.IntType(1)
I64 = ir.IntType(64)
RNDS = (*modifier_group("rnd"), *modifier_group("rna"))     # from isa/instructions.toml
IRNDS = modifier_group("irnd")


@dataclass(frozen=True)
class Fmt:
    """A binary floating-point storage format."""

    name: str
    p: int        # significand bits, hidden bit included
    ebits: int    # exponent field width

    @property
    def nbits(self) -> int:
        return self.ebits + self.p

    @property
    def bias(self) -> int:
        return (1 << (self.ebits - 1)) - 1

    @property
    def qmin(self) -> int:
        """Exponent of the least significant bit of subnormals (value of 1 ulp at the bottom)."""
        return 1 - self.bias - (self.p - 1)

    @property
    def inf_bits(self) -> int:
        return ((1 << self.ebits) - 1) << (self.p - 1)

    @property
    def max_bits(self) -> int:
        return self.inf_bits - 1

    @property
    def one_bits(self) -> int:
        return self.bias << (self.p - 1)

    @property
    def sign_bit(self) -> int:
        return 1 << (self.nbits - 1)

    @property
    def ty(self) -> ir.IntType:
        return ir.IntType(self.nbits)


F16 = Fmt("f16", 11, 5)
BF16 = Fmt("bf16", 8, 8)
F32 = Fmt("f32", 24, 8)
F64 = Fmt("f64", 53, 11)
FMTS = {"f16": F16, "bf16": BF16, "f32": F32, "f64": F64}


def c64(v: int) -> ir.Constant:
    return ir.Constant(I64, v & ((1 << 64) - 1))


def const(ty: ir.IntType, v: int) -> ir.Constant:
    return ir.Constant(ty, v & ((1 << ty.width) - 1))


def umin(b: ir.IRBuilder, x, y):
    return b.select(b.icmp_unsigned("<", x, y), x, y)


def smax(b: ir.IRBuilder, x, y):
    return b.select(b.icmp_signed(">", x, y), x, y)


def smin(b: ir.IRBuilder, x, y):
    return b.select(b.icmp_signed("<", x, y), x, y)


HALF = ir.HalfType()


def native_f16(b: ir.IRBuilder) -> bool:
    """Whether the module being built targets an AMD GPU (native IEEE f16 arithmetic; the
    exact native forms above are used there)."""
    return str(getattr(b.module, "triple", "") or "").startswith("amdgcn")


def canonical_nan(b: ir.IRBuilder, r, bits_type: ir.IntType, canon: int):
    """The bits of float value ``r``, or ``canon`` when ``r`` is a NaN (a float compare and an
    integer select: LLVM may not fold it, NaN bits being unspecified)."""
    return b.select(b.fcmp_unordered("uno", r, r), ir.Constant(bits_type, canon), b.bitcast(r, bits_type))


def to_bits(b: ir.IRBuilder, x, fmt: Fmt):
    """An f32/f64 LLVM float value -> its integer bits (i16 halves pass through)."""
    if isinstance(x.type, (ir.FloatType, ir.DoubleType)):
        return b.bitcast(x, fmt.ty)
    return x


def from_bits(b: ir.IRBuilder, bits, fmt: Fmt):
    """Integer bits -> the emitter convention's value type (float/double for f32/f64)."""
    if fmt is F32:
        return b.bitcast(bits, ir.FloatType())
    if fmt is F64:
        return b.bitcast(bits, ir.DoubleType())
    return bits


@dataclass
class Decoded:
    neg: ir.Value      # i1 sign bit
    m: ir.Value        # i64 integer significand (hidden bit included for normals)
    e: ir.Value        # i64 exponent: |value| = m * 2^e for finite values
    is_nan: ir.Value   # i1
    is_inf: ir.Value   # i1
    mag: ir.Value      # i64 bits without the sign


def decode(b: ir.IRBuilder, bits, fmt: Fmt) -> Decoded:
    x = b.zext(bits, I64) if fmt.nbits < 64 else bits
    neg = b.trunc(b.lshr(x, c64(fmt.nbits - 1)), I1)
    mag = b.and_(x, c64(fmt.sign_bit - 1))
    ef = b.lshr(mag, c64(fmt.p - 1))
    frac = b.and_(x, c64((1 << (fmt.p - 1)) - 1))
    sub = b.icmp_unsigned("==", ef, c64(0))
    m = b.select(sub, frac, b.or_(frac, c64(1 << (fmt.p - 1))))
    # normal: e = ef - bias - (p - 1) = ef + qmin - 1; subnormal: e = qmin
    e = b.select(sub, c64(fmt.qmin), b.add(ef, c64(fmt.qmin - 1)))
    is_nan = b.icmp_unsigned(">", mag, c64(fmt.inf_bits))
    is_inf = b.icmp_unsigned("==", mag, c64(fmt.inf_bits))
    return Decoded(neg, m, e, is_nan, is_inf, mag)


def round_pack(b: ir.IRBuilder, neg, m, e, fmt: Fmt, rnd: str = "rn", *,
               satfinite: bool = False, ftz: bool = False):
    """Bits of ``(-1)^neg * m * 2^e`` rounded to ``fmt`` (``m``, ``e``: i64; ``m`` unsigned).

    The quantum ``q`` of the result is ``max(E - (p-1), qmin)`` with ``E`` the exponent of
    the leading bit of ``m * 2^e``; the ``s = q - e`` low bits of ``m`` are dropped and
    decide the rounding.  The biased result is ``((q - qmin) << (p-1)) + k``: the hidden bit
    of a normal ``k`` carries into the exponent field, and so does a rounding carry, which
    also covers the subnormal -> normal and normal -> overflow transitions.
    ``ftz`` flushes a subnormal *result* (after rounding) to a signed zero."""
    if rnd not in RNDS:
        raise ValueError(f"bad rounding mode {rnd!r}")
    p = fmt.p
    lead = b.sub(c64(63), b.ctlz(m, ir.Constant(I1, 0)))        # E - e; -1 when m == 0
    q = smax(b, b.add(b.add(e, lead), c64(-(p - 1))), c64(fmt.qmin))
    s = b.sub(q, e)
    kk = shift_round(b, neg, m, s, rnd)
    mag = b.add(b.shl(b.sub(q, c64(fmt.qmin)), c64(p - 1)), kk)
    mag = b.select(b.icmp_unsigned("==", m, c64(0)), c64(0), mag)
    if ftz:
        mag = b.select(b.icmp_unsigned("<", mag, c64(1 << (p - 1))), c64(0), mag)
    if satfinite or rnd == "rz":
        big = c64(fmt.max_bits)
    elif rnd in ("rn", "rna"):
        big = c64(fmt.inf_bits)
    elif rnd == "rm":
        big = b.select(neg, c64(fmt.inf_bits), c64(fmt.max_bits))
    else:
        big = b.select(neg, c64(fmt.max_bits), c64(fmt.inf_bits))
    mag = b.select(b.icmp_unsigned(">=", mag, c64(fmt.inf_bits)), big, mag)
    out = b.or_(mag, b.shl(b.zext(neg, I64), c64(fmt.nbits - 1)))
    return b.trunc(out, fmt.ty) if fmt.nbits < 64 else out


def shift_round(b: ir.IRBuilder, neg, m, s, rnd: str):
    """``m * 2^-s`` rounded to an integer in mode ``rnd`` (i64 in, i64 out, ``m`` unsigned).

    ``s <= 0`` shifts left (the caller guarantees the result fits; counts beyond 63 are
    clamped).  ``s > 0`` drops the ``s`` low bits: ``r`` is the dropped part, ``half`` its
    midpoint weight; for ``s > 64`` every bit of ``m`` is below the midpoint.  All shift
    counts stay inside [0, 63] (LLVM gives poison beyond), ``s == 64`` is two shifts."""
    left = b.select(b.icmp_signed("<", s, c64(0)), umin(b, b.sub(c64(0), s), c64(63)), c64(0))
    k_exact = b.shl(m, left)
    sc1 = b.sub(smin(b, smax(b, s, c64(1)), c64(64)), c64(1))      # clamp(s, 1, 64) - 1
    k = b.lshr(b.lshr(m, sc1), c64(1))
    low = b.xor(b.shl(b.shl(c64(-1), sc1), c64(1)), c64(-1))
    r = b.and_(m, low)
    half = b.shl(c64(1), sc1)
    within = b.icmp_signed("<=", s, c64(64))
    gt = b.and_(within, b.icmp_unsigned(">", r, half))
    eq = b.and_(within, b.icmp_unsigned("==", r, half))
    nz = b.icmp_unsigned("!=", r, c64(0))
    if rnd == "rn":
        up = b.or_(gt, b.and_(eq, b.trunc(k, I1)))
    elif rnd == "rna":
        up = b.or_(gt, eq)
    elif rnd == "rz":
        up = ir.Constant(I1, 0)
    elif rnd == "rm":
        up = b.and_(neg, nz)
    elif rnd == "rp":
        up = b.and_(b.not_(neg), nz)
    else:
        raise ValueError(f"bad rounding mode {rnd!r}")
    return b.select(b.icmp_signed("<=", s, c64(0)), k_exact, b.add(k, b.zext(up, I64)))


def rint_bits(b: ir.IRBuilder, bits, fmt: Fmt, irnd: str):
    """Round a float (bits) to an integral value of the same format.

    Values with no fraction bits (|x| >= 2^(p-1), inf, NaN) are returned unchanged; the
    caller applies its NaN policy.  Otherwise the fraction bits are cleared and, when the
    mode rounds the magnitude up, one unit of the integer position is added to the
    magnitude bits (a carry into the exponent field is the correct result).  |x| < 1
    gives a signed zero or a signed one."""
    if irnd not in IRNDS:
        raise ValueError(f"bad integer rounding {irnd!r}")
    ty = fmt.ty
    sign = b.and_(bits, const(ty, fmt.sign_bit))
    mag = b.and_(bits, const(ty, fmt.sign_bit - 1))
    neg = b.icmp_unsigned("!=", sign, const(ty, 0))
    ef = b.lshr(mag, const(ty, fmt.p - 1))
    # number of fraction bits: (p-1) - (ef - bias), in [1, p-1] on the general path
    fb = b.sub(const(ty, fmt.p - 1 + fmt.bias), ef)
    one = const(ty, fmt.one_bits)
    # |x| < 1 (ef < bias): result 0 or 1 by the mode
    small = b.icmp_unsigned("<", ef, const(ty, fmt.bias))
    nonzero = b.icmp_unsigned("!=", mag, const(ty, 0))
    if irnd == "rni":
        small_up = b.icmp_unsigned(">", mag, const(ty, (fmt.bias - 1) << (fmt.p - 1)))  # > 0.5
    elif irnd == "rzi":
        small_up = ir.Constant(I1, 0)
    elif irnd == "rmi":
        small_up = b.and_(neg, nonzero)
    else:
        small_up = b.and_(b.not_(neg), nonzero)
    small_res = b.or_(sign, b.select(small_up, one, const(ty, 0)))
    # general path: 1 <= |x| < 2^(p-1)
    integral = b.icmp_unsigned(">=", ef, const(ty, fmt.bias + fmt.p - 1))
    fbc = b.select(b.or_(small, integral), const(ty, 1), fb)           # keep shifts in range
    unit = b.shl(const(ty, 1), fbc)
    fmask = b.sub(unit, const(ty, 1))
    frac = b.and_(mag, fmask)
    half = b.lshr(unit, const(ty, 1))
    trunc = b.and_(mag, b.not_(fmask))
    fnz = b.icmp_unsigned("!=", frac, const(ty, 0))
    if irnd == "rni":
        odd = b.icmp_unsigned("!=", b.and_(trunc, unit), const(ty, 0))
        up = b.or_(b.icmp_unsigned(">", frac, half),
                   b.and_(b.icmp_unsigned("==", frac, half), odd))
    elif irnd == "rzi":
        up = ir.Constant(I1, 0)
    elif irnd == "rmi":
        up = b.and_(neg, fnz)
    else:
        up = b.and_(b.not_(neg), fnz)
    gen = b.or_(sign, b.add(trunc, b.select(up, unit, const(ty, 0))))
    out = b.select(small, small_res, gen)
    return b.select(integral, bits, out)


def flush_subnormal(b: ir.IRBuilder, bits, fmt: Fmt):
    """``.ftz`` on an operand: a subnormal becomes a zero of the same sign."""
    ty = fmt.ty
    expf = b.and_(bits, const(ty, fmt.inf_bits))
    sub = b.icmp_unsigned("==", expf, const(ty, 0))
    return b.select(sub, b.and_(bits, const(ty, fmt.sign_bit)), bits)


def is_nan_bits(b: ir.IRBuilder, bits, fmt: Fmt):
    ty = fmt.ty
    return b.icmp_unsigned(">", b.and_(bits, const(ty, fmt.sign_bit - 1)), const(ty, fmt.inf_bits))


def saturate(b: ir.IRBuilder, bits, fmt: Fmt, is_nan=None):
    """``.sat`` on a float result: NaN, negatives and -0 -> +0.0; above 1.0 -> 1.0."""
    ty = fmt.ty
    if is_nan is None:
        is_nan = is_nan_bits(b, bits, fmt)
    neg = b.icmp_unsigned("!=", b.and_(bits, const(ty, fmt.sign_bit)), const(ty, 0))
    one = const(ty, fmt.one_bits)
    r = b.select(b.icmp_unsigned(">", bits, one), one, bits)    # positive: bits order = value order
    return b.select(b.or_(is_nan, neg), const(ty, 0), r)


def apply_relu(b: ir.IRBuilder, bits, fmt: Fmt, is_nan=None):
    """``.relu``: negative results and -0 -> +0.0; NaN stays NaN."""
    ty = fmt.ty
    if is_nan is None:
        is_nan = is_nan_bits(b, bits, fmt)
    neg = b.icmp_unsigned("!=", b.and_(bits, const(ty, fmt.sign_bit)), const(ty, 0))
    return b.select(b.and_(neg, b.not_(is_nan)), const(ty, 0), bits)
