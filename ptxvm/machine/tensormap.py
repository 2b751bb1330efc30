"""Tensor maps for cp.async.bulk.tensor (PTX ISA 9.0 §5.5 "Tensors"), tile mode, as pure functions.

The real CUtensorMap is a 128-byte, 64-byte aligned object whose contents the driver defines and
does not document. ptxvm uses its own documented 128-byte encoding instead (little endian):

    bytes  0..7    magic b"PTXVMTM1" (a wrong map object is refused by this, not misread)
    byte   8       dtype code (DTYPES below)       byte 9   rank (1..5)
    byte  10       interleave (0 none, 1 16B, 2 32B)
    byte  11       swizzle (0 none, 1 32B, 2 64B, 3 128B)
    byte  12       l2 promotion (0..3, a hint; ignored)
    byte  13       oob fill (0 zeros, 1 NaN-request-zero-FMA)
    bytes 16..23   global address
    bytes 24..43   global dims, 5 x u32 (dimension 0 innermost)
    bytes 48..79   global strides in bytes of dimensions 1..4, 4 x u64
    bytes 80..84   box dims, 5 x u8 stored minus one (1..256)
    bytes 88..92   element strides, 5 x u8 (1..8)

``TensorMap.tiled`` mirrors cuTensorMapEncodeTiled's arguments and its CUDA_ERROR_INVALID_VALUE
checks, raising ValueError naming the argument. ``box_layout`` computes, for a box at tensor
coordinates, which global byte offset (or out-of-bounds fill) lands at which shared byte offset.
im2col mode is not modelled (callers refuse it at the instruction).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from itertools import product

MAGIC = b"PTXVMTM1"
SIZE = 128
# cuTensorMapEncodeTiled's CUtensorMapDataType names -> (code, element size in bytes)
DTYPES: dict[str, tuple[int, int]] = {
    "uint8": (0, 1), "uint16": (1, 2), "uint32": (2, 4), "int32": (3, 4), "uint64": (4, 8),
    "int64": (5, 8), "float16": (6, 2), "float32": (7, 4), "float64": (8, 8), "bfloat16": (9, 2),
    "float32_ftz": (10, 4), "tfloat32": (11, 4), "tfloat32_ftz": (12, 4),
}
FLOAT_DTYPES = {"float16", "float32", "float64", "bfloat16", "float32_ftz", "tfloat32", "tfloat32_ftz"}
INTERLEAVES = {"none": 0, "16b": 1, "32b": 2}
SWIZZLES = {"none": 0, "32b": 1, "64b": 2, "128b": 3}
SWIZZLE_SPAN = {0: 0, 1: 32, 2: 64, 3: 128}
L2_PROMOTIONS = {"none": 0, "64b": 1, "128b": 2, "256b": 3}
OOB_FILLS = {"none": 0, "nan_request_zero_fma": 1}


def _pick(table: dict[str, int], name: str, value: str) -> int:
    if value not in table:
        raise ValueError(f"TensorMap.tiled: {name}={value!r} is not one of {sorted(table)}")
    return table[value]


@dataclass(frozen=True)
class TensorMap:
    dtype: str
    rank: int
    global_address: int
    global_dims: tuple[int, ...]
    global_strides: tuple[int, ...]     # bytes, dimensions 1..rank-1 (dimension 0 is dense)
    box_dims: tuple[int, ...]
    element_strides: tuple[int, ...]
    interleave: int = 0
    swizzle: int = 0
    l2_promotion: int = 0
    oob_fill: int = 0

    @property
    def element_size(self) -> int:
        return DTYPES[self.dtype][1]

    @classmethod
    def tiled(cls, dtype: str, rank: int, global_address: int, global_dims, global_strides, box_dims,
              element_strides, interleave: str = "none", swizzle: str = "none", l2_promotion: str = "none",
              oob_fill: str = "none") -> "TensorMap":
        """cuTensorMapEncodeTiled's arguments, validated the way the driver documents."""
        if dtype not in DTYPES:
            raise ValueError(f"TensorMap.tiled: dtype={dtype!r} is not one of {sorted(DTYPES)}")
        inter, swz = _pick(INTERLEAVES, "interleave", interleave), _pick(SWIZZLES, "swizzle", swizzle)
        l2, oob = _pick(L2_PROMOTIONS, "l2_promotion", l2_promotion), _pick(OOB_FILLS, "oob_fill", oob_fill)
        if not 1 <= rank <= 5 or (inter and rank < 3):
            raise ValueError(f"TensorMap.tiled: rank={rank} must be 1..5 (3..5 with interleave)")
        dims, strides = tuple(int(d) for d in global_dims), tuple(int(s) for s in global_strides)
        box, estr = tuple(int(b) for b in box_dims), tuple(int(e) for e in element_strides)
        esize = DTYPES[dtype][1]
        if global_address % (32 if inter == 2 else 16):
            raise ValueError("TensorMap.tiled: global_address must be 16-byte aligned (32 with interleave 32B)")
        if len(dims) != rank or any(not 0 < d <= 1 << 32 for d in dims):
            raise ValueError(f"TensorMap.tiled: global_dims needs {rank} entries in 1..2^32")
        if len(strides) != rank - 1 or any(s % 16 or not 0 < s < 1 << 40 for s in strides):
            raise ValueError(f"TensorMap.tiled: global_strides needs {rank - 1} multiples of 16 below 2^40")
        if len(box) != rank or any(not 0 < b <= 256 for b in box):
            raise ValueError(f"TensorMap.tiled: box_dims needs {rank} entries in 1..256")
        if inter == 0 and box[0] * esize % 16:
            raise ValueError("TensorMap.tiled: box_dims[0] * element size must be a multiple of 16 bytes")
        if len(estr) != rank or any(not 0 < e <= 8 for e in estr):
            raise ValueError(f"TensorMap.tiled: element_strides needs {rank} entries in 1..8")
        if inter == 0 and swz and box[0] * esize > SWIZZLE_SPAN[swz]:
            raise ValueError("TensorMap.tiled: box_dims[0] * element size must not exceed the swizzle span")
        if oob and dtype not in FLOAT_DTYPES:
            raise ValueError("TensorMap.tiled: oob_fill nan_request_zero_fma needs a floating-point dtype")
        return cls(dtype, rank, int(global_address), dims, strides, box, estr, inter, swz, l2, oob)

    def encode(self) -> bytes:
        pad = lambda t, n: tuple(t) + (0,) * (n - len(t))   # noqa: E731
        head = MAGIC + bytes([DTYPES[self.dtype][0], self.rank, self.interleave, self.swizzle,
                              self.l2_promotion, self.oob_fill, 0, 0])
        body = struct.pack("<Q5I4x4Q", self.global_address, *pad(self.global_dims, 5), *pad(self.global_strides, 4))
        tail = bytes(pad([b - 1 for b in self.box_dims], 5)) + b"\0\0\0" + bytes(pad(self.element_strides, 5))
        out = head + body + tail
        return out + bytes(SIZE - len(out))

    @classmethod
    def decode(cls, raw: bytes, where: str = "tensor map") -> "TensorMap":
        """The inverse of encode; a wrong object (bad magic, sizes) is a ValueError naming ``where``."""
        raw = bytes(raw)
        if len(raw) < SIZE or raw[:8] != MAGIC:
            raise ValueError(f"{where}: not a ptxvm tensor map (build it with ptxvm.TensorMap.tiled)")
        names = {code: name for name, (code, _) in DTYPES.items()}
        rank = raw[9]
        if raw[8] not in names or not 1 <= rank <= 5:
            raise ValueError(f"{where}: corrupt tensor map (dtype code {raw[8]}, rank {rank})")
        addr, *rest = struct.unpack_from("<Q5I4x4Q", raw, 16)
        dims, strides = tuple(rest[:rank]), tuple(rest[5:5 + rank - 1])
        box = tuple(b + 1 for b in raw[80:80 + rank])
        estr = tuple(raw[88:88 + rank])
        if raw[10] > 2 or raw[11] > 3 or raw[13] > 1 or any(not 1 <= e <= 8 for e in estr):
            raise ValueError(f"{where}: corrupt tensor map (interleave {raw[10]}, swizzle {raw[11]}, "
                             f"oob fill {raw[13]}, element strides {list(estr)})")
        if raw[13] and names[raw[8]] not in FLOAT_DTYPES:
            raise ValueError(f"{where}: corrupt tensor map (a NaN fill for the integer dtype {names[raw[8]]})")
        return cls(names[raw[8]], rank, addr, dims, strides, box, tuple(raw[88:88 + rank]),
                   raw[10], raw[11], raw[12], raw[13])


def swizzle_offset(offset: int, swizzle: int) -> int:
    """The tensor swizzle patterns (§5.5.6): the 16-byte chunk index within a span-sized row is
    XORed with the row index modulo span/16, rows being span bytes (32B: 2 chunks, 64B: 4, 128B: 8)."""
    if swizzle == 0:
        return offset
    bits = {1: 0x10, 2: 0x30, 3: 0x70}[swizzle]
    return offset ^ ((offset >> 3) & bits)


def box_layout(tmap: TensorMap, coords: tuple[int, ...], base: int = 0) -> list[tuple[int, int | None]]:
    """For the box at ``coords`` (dimension 0 first), a list of (shared byte offset, global byte
    offset from global_address or None for an out-of-bounds element), one entry per element, in
    shared order. The box is traversed with the element strides: ceil(box/stride) elements per
    dimension, packed densely in shared memory, then swizzled. The swizzle acts on shared address
    bits (as wgmma's reads of the same tile do), so ``base`` is the box's shared address and the
    offsets are relative to it; with a base aligned to the pattern (1024 bytes) it does not matter."""
    if len(coords) != tmap.rank:
        raise ValueError(f"tensor copy: {len(coords)} coordinates for a rank-{tmap.rank} tensor map")
    esize = tmap.element_size
    counts = [-(-b // e) for b, e in zip(tmap.box_dims, tmap.element_strides)]
    pitches = (esize,) + tmap.global_strides
    out: list[tuple[int, int | None]] = []
    index = 0
    for idx in product(*(range(n) for n in reversed(counts))):
        pos = [c + i * e for c, i, e in zip(coords, reversed(idx), tmap.element_strides)]
        inside = all(0 <= p < d for p, d in zip(pos, tmap.global_dims))
        glob = sum(p * s for p, s in zip(pos, pitches)) if inside else None
        out.append((swizzle_offset(base + index * esize, tmap.swizzle) - base, glob))
        index += 1
    return out


def box_bytes(tmap: TensorMap) -> int:
    """Bytes a box occupies in shared memory (what complete_tx counts)."""
    n = 1
    for b, e in zip(tmap.box_dims, tmap.element_strides):
        n *= -(-b // e)
    return n * tmap.element_size


def oob_fill_bytes(tmap: TensorMap) -> bytes:
    """What an out-of-bounds element reads as: zeros, or a NaN for nan_request_zero_fma (§5.5.5)."""
    if tmap.oob_fill == 0:
        return bytes(tmap.element_size)
    nan = {2: b"\xff\x7f", 4: b"\xff\xff\xff\x7f", 8: b"\xff" * 7 + b"\x7f"}
    return nan[tmap.element_size]


# cp.reduce.async.bulk.tensor (§9.7.9.25.5.3): the element type is the map's dtype. ptxvm executes
# the integer maps: the bitwise ops and .add (wraparound, the same bits signed or unsigned) on
# 32/64-bit integers, .min/.max compared as the dtype's signedness, and .inc/.dec on uint32 only
# (as atom/red define them: .u32 only). Floating-point and 8/16-bit maps trap at the instruction.
REDUCE_DTYPES: dict[str, frozenset[str]] = {
    **{op: frozenset({"uint32", "int32", "uint64", "int64"}) for op in ("and", "or", "xor", "add", "min", "max")},
    "inc": frozenset({"uint32"}), "dec": frozenset({"uint32"}),
}
SIGNED_DTYPES = frozenset({"int32", "int64"})
