"""An independent numpy model of wgmma.mma_async (PTX ISA 9.0 §9.7.15), written from the ISA's
text and not importing ptxvm: the matrix descriptor's bit fields, the canonical shared-memory
layouts built from 8 x 16-byte core matrices with the 32/64/128-byte swizzles, and the register
fragments of D and of A in registers.

A test places A (M x K) and B (K x N) into a shared-memory image with ``place`` (the inverse of
what the hardware reads), builds descriptors with ``descriptor`` and gives each thread its
fragment registers with ``d_positions``/``a_positions``.
"""

from __future__ import annotations

import numpy as np

K_OF = {"f16": 16, "bf16": 16, "tf32": 8, "e4m3": 32, "e5m2": 32, "s8": 32, "u8": 32, "b1": 256}
BITS = {"f16": 16, "bf16": 16, "tf32": 32, "e4m3": 8, "e5m2": 8, "s8": 8, "u8": 8, "b1": 1}
SWIZZLE_CODE = {0: 0, 128: 1, 64: 2, 32: 3}


def descriptor(start: int, lbo: int, sbo: int, swizzle: int) -> int:
    """§9.7.15.5.1.2 "Matrix Descriptor Format": 14-bit fields of address >> 4 at bits 0, 16
    and 32; the swizzle mode at bits 62-63 (1 = 128B, 2 = 64B, 3 = 32B); base offset 0."""
    field = lambda x: (x & 0x3FFFF) >> 4
    return field(start) | (field(lbo) << 16) | (field(sbo) << 32) | (SWIZZLE_CODE[swizzle] << 62)


def _chunk_bits(elem: str) -> int:
    return 128 // BITS[elem]           # elements in 16 bytes


def position_bits(i: int, k: int, elem: str, major: str, swizzle: int, lbo: int, sbo: int) -> int:
    """Bit offset (from the matrix start, before swizzling) of element (i, k): i along M or N,
    k along K, in the canonical layout (§9.7.15.5.1.2, "Shared Memory Matrix Layout").

    Core matrices are 8 rows of 16 bytes. K-major: a core matrix row is 16 bytes of K; the 8
    rows run along M/N; core matrices repeat along M/N every SBO bytes and along K every LBO
    bytes, except that in a swizzled layout the K core matrices are adjacent (one swizzle row
    of ``swizzle`` bytes holds several of them, rows ``swizzle`` bytes apart). MN-major: the
    roles of the axes swap; with a swizzle, the 16-byte pieces along M/N sit side by side in
    a ``swizzle``-byte row, whole rows-of-pieces repeat along M/N every LBO bytes, and groups
    of 8 K-rows every SBO bytes (no swizzle: M/N pieces every SBO, K groups every LBO)."""
    e = BITS[elem]
    per = _chunk_bits(elem)
    row_bytes = swizzle if swizzle else 16
    if major == "k":
        core_row, core_i = i % 8, i // 8
        piece, inside = k // per, k % per
        k_step = 16 if swizzle else lbo
        return 8 * (core_row * row_bytes + core_i * sbo + piece * k_step) + inside * e
    piece, inside = i // per, i % per
    krow, kgroup = k % 8, k // 8
    if not swizzle:
        return 8 * (piece * sbo + krow * 16 + kgroup * lbo) + inside * e
    pieces = swizzle // 16
    return 8 * ((piece % pieces) * 16 + (piece // pieces) * lbo + krow * row_bytes + kgroup * sbo) + inside * e


def swizzled(byte_addr: int, swizzle: int) -> int:
    """The 16-byte piece index inside a ``swizzle``-byte row (address bits 4..) is xor-ed with
    the row's index inside the repeating pattern (address bits 7..)."""
    if not swizzle:
        return byte_addr
    n = swizzle // 16
    piece = (byte_addr >> 4) % n
    row = (byte_addr >> 7) % n
    return byte_addr - piece * 16 + (piece ^ row) * 16


def place(image: np.ndarray, start: int, values: np.ndarray, elem: str, major: str, swizzle: int,
          lbo: int, sbo: int) -> None:
    """Write the element bit patterns ``values`` [rows(i), K] into the byte array ``image`` (the
    shared memory window, absolute addresses) where a wgmma reads them."""
    e = BITS[elem]
    rows, k = values.shape
    for i in range(rows):
        for kk in range(k):
            bit = position_bits(i, kk, elem, major, swizzle, lbo, sbo)
            byte = swizzled(start + bit // 8, swizzle)
            v = int(values[i, kk])
            if e >= 8:
                image[byte:byte + e // 8] = np.frombuffer(v.to_bytes(e // 8, "little"), dtype=np.uint8)
            else:
                sh = bit % 8
                image[byte] = (int(image[byte]) & ~(1 << sh)) | ((v & 1) << sh)


def d_positions(n: int) -> np.ndarray:
    """[128, N/2, 2] (row, col) of D element j of thread t (§9.7.15.5.1.1, the accumulator figure):
    warp t/32 owns rows 16 (t/32) ..; inside a warp, for each 8-column block, lane l holds rows
    l/4 and l/4 + 8 at columns 2 (l%4) and 2 (l%4) + 1, the pair of row l/4 first."""
    out = np.zeros((128, n // 2, 2), dtype=np.int64)
    for t in range(128):
        warp, lane = divmod(t, 32)
        group, quad = divmod(lane, 4)
        for j in range(n // 2):
            block, within = divmod(j, 4)
            out[t, j] = (16 * warp + group + (8 if within >= 2 else 0), 8 * block + 2 * quad + within % 2)
    return out


def a_positions(elem: str) -> np.ndarray:
    """[128, elements, 2] (row, col) of A element j of thread t when A is in registers: four
    32-bit registers per thread; registers 0 and 1 hold rows l/4 and l/4 + 8 of the first half
    of K, registers 2 and 3 the same rows of the second half; inside a register, the lane's
    group of 32/bits consecutive columns at (l%4) * 32/bits."""
    per = 32 // BITS[elem]
    half = K_OF[elem] // 2
    out = np.zeros((128, 4 * per, 2), dtype=np.int64)
    for t in range(128):
        warp, lane = divmod(t, 32)
        group, quad = divmod(lane, 4)
        for j in range(4 * per):
            reg, inside = divmod(j, per)
            out[t, j] = (16 * warp + group + 8 * (reg % 2), (reg // 2) * half + quad * per + inside)
    return out


def gather(matrix: np.ndarray, pos: np.ndarray) -> np.ndarray:
    return matrix[..., pos[..., 0], pos[..., 1]]


def pack(elements: np.ndarray, bits: int) -> np.ndarray:
    """[..., E] element bit patterns -> [..., E * bits / 32] uint32 registers, low element first."""
    per = 32 // bits
    e = elements.astype(np.uint64).reshape(elements.shape[:-1] + (-1, per))
    out = np.zeros(e.shape[:-1], dtype=np.uint64)
    for j in range(per):
        out |= (e[..., j] & np.uint64((1 << bits) - 1)) << np.uint64(j * bits)
    return out.astype(np.uint32)


def unpack(regs: np.ndarray, bits: int) -> np.ndarray:
    per = 32 // bits
    r = regs.astype(np.uint64)[..., None]
    el = (r >> (np.arange(per, dtype=np.uint64) * np.uint64(bits))) & np.uint64((1 << bits) - 1)
    return el.reshape(regs.shape[:-1] + (-1,))


def encode(values: np.ndarray, elem: str) -> np.ndarray:
    """Exact values -> element bit patterns (uint64)."""
    v = np.asarray(values)
    if elem == "f16":
        return v.astype(np.float16).view(np.uint16).astype(np.uint64)
    if elem == "bf16":
        return (v.astype(np.float32).view(np.uint32) >> 16).astype(np.uint64)
    if elem in ("tf32", "f32"):
        return v.astype(np.float32).view(np.uint32).astype(np.uint64)
    if elem in ("e4m3", "e5m2"):
        return np.vectorize(lambda x: _fp8(float(x), elem), otypes=[np.uint64])(v)
    if elem in ("s8", "u8"):
        return (v.astype(np.int64) & 0xFF).astype(np.uint64)
    if elem == "s32":
        return (v.astype(np.int64) & 0xFFFFFFFF).astype(np.uint64)
    if elem == "b1":
        return v.astype(np.uint64) & np.uint64(1)
    raise ValueError(elem)


def decode(bits: np.ndarray, elem: str) -> np.ndarray:
    b = bits.astype(np.uint64)
    if elem == "f16":
        return b.astype(np.uint16).view(np.float16).astype(np.float64)
    if elem == "f32":
        return b.astype(np.uint32).view(np.float32).astype(np.float64)
    if elem == "s32":
        v = b.astype(np.int64)
        return np.where(v >= 1 << 31, v - (1 << 32), v)
    raise ValueError(elem)


def _fp8(x: float, elem: str) -> int:
    """Small integers (and halves) as e4m3 (bias 7) or e5m2 (bias 15) bits, exactly."""
    mant, bias = (3, 7) if elem == "e4m3" else (2, 15)
    sign = 0x80 if x < 0 or (x == 0 and np.signbit(x)) else 0
    x = abs(x)
    if x == 0:
        return sign
    e = int(np.floor(np.log2(x)))
    m = x / 2.0 ** e - 1
    frac = round(m * (1 << mant))
    assert frac == m * (1 << mant) and e + bias > 0, (x, elem)
    return sign | ((e + bias) << mant) | frac


__all__ = ["K_OF", "BITS", "descriptor", "position_bits", "swizzled", "place", "d_positions", "a_positions",
           "gather", "pack", "unpack", "encode", "decode"]
