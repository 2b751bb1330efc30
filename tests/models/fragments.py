"""An independent numpy model of the PTX ISA 9.0 tensor-core fragment layouts (§9.7.14.5.x
"Matrix Fragments for mma.m*n*k*", §9.7.14.5.15 ldmatrix), written from the ISA's per-shape
formulas (row/col of element a_i, b_i, c_i of a lane, with groupID = laneid >> 2 and
threadID_in_group = laneid % 4). It does not import ptxvm.machine.fragments: the tests compare
the implementation against this, shape by shape.

Also: element encoders for exact small values, register packing, the mma combinations of
§9.7.14.5.14, and the wmma register counts of §9.7.14.4.1.
"""

from __future__ import annotations

import math

import numpy as np

BITS = {"f16": 16, "bf16": 16, "tf32": 32, "f32": 32, "f64": 64, "s32": 32, "s8": 8, "u8": 8,
        "s4": 4, "u4": 4, "b1": 1, "e4m3": 8, "e5m2": 8}


def per_reg(elem: str) -> int:
    return 1 if elem == "f64" else 32 // BITS[elem]


def dims(shape: str, role: str) -> tuple[int, int]:
    m, rest = shape[1:].split("n")
    n, k = rest.split("k")
    m, n, k = int(m), int(n), int(k)
    return {"a": (m, k), "b": (k, n), "c": (m, n), "d": (m, n)}[role]


# ---------------------------------------------------------------- per-shape ISA formulas

def _a(shape: str, elem: str, lane: int, i: int) -> tuple[int, int]:
    g, t = lane >> 2, lane % 4
    if shape == "m8n8k4" and elem == "f64":
        return g, t
    if shape == "m16n8k4":                                 # tf32 and f64: a0, a1
        return (g if i == 0 else g + 8), t
    if shape == "m16n8k8" and elem in ("tf32", "f64"):     # a0..a3
        return (g if i in (0, 2) else g + 8), (t if i < 2 else t + 4)
    if shape == "m16n8k8":                                 # f16/bf16 a0..a3
        return (g if i < 2 else g + 8), t * 2 + (i & 1)
    if shape == "m16n8k16" and elem == "f64":              # a0..a7
        return (g if i % 2 == 0 else g + 8), t + 4 * (i // 2)
    if shape == "m16n8k16" and elem in ("f16", "bf16"):    # a0..a7
        return (g if i in (0, 1, 4, 5) else g + 8), t * 2 + (i & 1) + (8 if i >= 4 else 0)
    if shape == "m16n8k16":                                # s8/u8/e4m3/e5m2 a0..a7
        return (g if i < 4 else g + 8), t * 4 + (i & 3)
    if shape == "m8n8k16":
        return g, t * 4 + i
    if shape == "m16n8k32" and elem in ("s4", "u4"):       # a0..a15
        return (g if i < 8 else g + 8), t * 8 + (i & 7)
    if shape == "m16n8k32":                                # 8-bit a0..a15
        return (g if i < 4 or 8 <= i < 12 else g + 8), t * 4 + (i & 3) + (16 if i >= 8 else 0)
    if shape == "m8n8k32":
        return g, t * 8 + i
    if shape == "m16n8k64":                                # a0..a31
        return (g if i < 8 or 16 <= i < 24 else g + 8), t * 8 + (i & 7) + (32 if i >= 16 else 0)
    if shape == "m8n8k128":
        return g, t * 32 + i
    if shape == "m16n8k128":                               # a0..a63
        return (g if i < 32 else g + 8), t * 32 + (i & 31)
    if shape == "m16n8k256":                               # a0..a127
        return (g if i < 32 or 64 <= i < 96 else g + 8), t * 32 + (i & 31) + (128 if i >= 64 else 0)
    raise KeyError((shape, elem))


def _b(shape: str, elem: str, lane: int, i: int) -> tuple[int, int]:
    g, t = lane >> 2, lane % 4
    if shape in ("m8n8k4", "m16n8k4"):
        return t, g
    if shape == "m16n8k8" and elem in ("tf32", "f64"):
        return (t if i == 0 else t + 4), g
    if shape == "m16n8k8":
        return t * 2 + i, g
    if shape == "m16n8k16" and elem == "f64":
        return t + 4 * i, g
    if shape == "m16n8k16" and elem in ("f16", "bf16"):
        return t * 2 + (i & 1) + (8 if i >= 2 else 0), g
    if shape in ("m16n8k16", "m8n8k16"):
        return t * 4 + i, g
    if shape == "m16n8k32" and elem in ("s4", "u4"):
        return t * 8 + i, g
    if shape == "m16n8k32":
        return t * 4 + (i & 3) + (16 if i >= 4 else 0), g
    if shape == "m8n8k32":
        return t * 8 + i, g
    if shape == "m16n8k64":
        return t * 8 + (i & 7) + (32 if i >= 8 else 0), g
    if shape in ("m8n8k128", "m16n8k128"):
        return t * 32 + i, g
    if shape == "m16n8k256":
        return t * 32 + (i & 31) + (128 if i >= 32 else 0), g
    raise KeyError((shape, elem))


def _c(shape: str, lane: int, i: int) -> tuple[int, int]:
    g, t = lane >> 2, lane % 4
    return (g if i < 2 else g + 8), t * 2 + (i & 1)


def mma_layout(shape: str, role: str, elem: str) -> np.ndarray:
    """[32, elements per lane, 2]: (row, col) of element i of each lane."""
    rows, cols = dims(shape, role)
    n = rows * cols // 32
    fn = {"a": lambda l, i: _a(shape, elem, l, i), "b": lambda l, i: _b(shape, elem, l, i),
          "c": lambda l, i: _c(shape, l, i), "d": lambda l, i: _c(shape, l, i)}[role]
    return np.array([[fn(lane, i) for i in range(n)] for lane in range(32)], dtype=np.int64)


# mma.sync combinations (§9.7.14.5.14) the tests run: (shape, atype, btype, ctype, dtype, sm)
# (D and C of one type but for m8n8k4 .f16: ptxas 13 refuses the mixed pairs, tests/data/ptxas_mma_dc.json)
MMA_CASES = [
    ("m8n8k4", "f64", "f64", "f64", "f64", 80),
    ("m16n8k4", "tf32", "tf32", "f32", "f32", 80),
    ("m16n8k8", "tf32", "tf32", "f32", "f32", 80),
    ("m16n8k4", "f64", "f64", "f64", "f64", 90),
    ("m16n8k8", "f64", "f64", "f64", "f64", 90),
    ("m16n8k16", "f64", "f64", "f64", "f64", 90),
    ("m16n8k8", "f16", "f16", "f32", "f32", 80),
    ("m16n8k8", "f16", "f16", "f16", "f16", 80),
    ("m16n8k8", "bf16", "bf16", "f32", "f32", 80),
    ("m16n8k16", "f16", "f16", "f32", "f32", 80),
    ("m16n8k16", "f16", "f16", "f16", "f16", 80),
    ("m16n8k16", "bf16", "bf16", "f32", "f32", 80),
    ("m8n8k16", "s8", "s8", "s32", "s32", 80),
    ("m8n8k16", "u8", "s8", "s32", "s32", 80),
    ("m16n8k16", "s8", "u8", "s32", "s32", 80),
    ("m16n8k16", "u8", "u8", "s32", "s32", 80),
    ("m16n8k32", "s8", "s8", "s32", "s32", 80),
    ("m16n8k32", "u8", "s8", "s32", "s32", 80),
    ("m8n8k32", "s4", "s4", "s32", "s32", 80),
    ("m8n8k32", "u4", "u4", "s32", "s32", 80),
    ("m16n8k32", "s4", "u4", "s32", "s32", 80),
    ("m16n8k64", "s4", "s4", "s32", "s32", 80),
    ("m16n8k64", "u4", "u4", "s32", "s32", 80),
    ("m8n8k128", "b1", "b1", "s32", "s32", 80),
    ("m16n8k128", "b1", "b1", "s32", "s32", 80),
    ("m16n8k256", "b1", "b1", "s32", "s32", 80),
    ("m16n8k32", "e4m3", "e4m3", "f32", "f32", 89),
    ("m16n8k32", "e5m2", "e4m3", "f32", "f32", 89),
    ("m16n8k32", "e4m3", "e5m2", "f16", "f16", 89),
    ("m16n8k16", "e4m3", "e4m3", "f32", "f32", 89),
]

# wmma register counts (§9.7.14.4.1): (shape, elem) -> (a, b); accumulators -> c
WMMA_AB = {
    ("m16n16k16", "f16"): (8, 8), ("m32n8k16", "f16"): (8, 8), ("m8n32k16", "f16"): (8, 8),
    ("m16n16k16", "bf16"): (4, 4), ("m32n8k16", "bf16"): (8, 2), ("m8n32k16", "bf16"): (2, 8),
    ("m16n16k16", "s8"): (2, 2), ("m32n8k16", "s8"): (4, 1), ("m8n32k16", "s8"): (1, 4),
    ("m16n16k16", "u8"): (2, 2), ("m32n8k16", "u8"): (4, 1), ("m8n32k16", "u8"): (1, 4),
    ("m16n16k8", "tf32"): (4, 4), ("m8n8k4", "f64"): (1, 1),
    ("m8n8k32", "s4"): (1, 1), ("m8n8k32", "u4"): (1, 1), ("m8n8k128", "b1"): (1, 1),
}
WMMA_C = {("m8n8k4", "f64"): 2, ("m8n8k32", "s32"): 2, ("m8n8k128", "s32"): 2}


def wmma_c_regs(shape: str, elem: str) -> int:
    return WMMA_C.get((shape, elem), 4 if elem == "f16" else 8)


# ---------------------------------------------------------------- element encodings

def _minifloat(v: float, ebits: int, mbits: int) -> int:
    """Bits of an exactly representable value in a 1.ebits.mbits format (bias 2**(e-1) - 1)."""
    if v == 0:
        return 0
    bias = (1 << (ebits - 1)) - 1
    sign = (1 << (ebits + mbits)) if v < 0 else 0
    a = abs(v)
    e = max(math.floor(math.log2(a)), 1 - bias)
    m = a / 2.0 ** e * (1 << mbits)
    field = e + bias if a >= 2.0 ** (1 - bias) else 0
    m = m - (1 << mbits) if field else m
    assert m == int(m) and 0 <= m < (1 << mbits), (v, ebits, mbits)
    return sign | (field << mbits) | int(m)


def encode(values: np.ndarray, elem: str) -> np.ndarray:
    """Exact element values -> uint64 bit patterns of ``elem``."""
    v = np.asarray(values)
    if elem == "f16":
        return v.astype(np.float16).view(np.uint16).astype(np.uint64)
    if elem == "bf16":
        f = v.astype(np.float32)
        assert np.array_equal(f.view(np.uint32) & 0xFFFF, np.zeros(f.shape, np.uint32))
        return (f.view(np.uint32) >> 16).astype(np.uint64)
    if elem in ("f32", "tf32"):
        return v.astype(np.float32).view(np.uint32).astype(np.uint64)
    if elem == "f64":
        return v.astype(np.float64).view(np.uint64)
    if elem in ("e4m3", "e5m2"):
        eb, mb = (4, 3) if elem == "e4m3" else (5, 2)
        return np.vectorize(lambda x: _minifloat(float(x), eb, mb), otypes=[np.uint64])(v)
    bits = BITS[elem]
    return (v.astype(np.int64) & ((1 << bits) - 1)).astype(np.uint64)


def decode(bits: np.ndarray, elem: str) -> np.ndarray:
    bits = np.asarray(bits, dtype=np.uint64)
    if elem == "f16":
        return bits.astype(np.uint16).view(np.float16).astype(np.float64)
    if elem == "f32":
        return bits.astype(np.uint32).view(np.float32).astype(np.float64)
    if elem == "f64":
        return bits.view(np.float64)
    if elem == "s32":
        return bits.astype(np.uint32).view(np.int32).astype(np.int64)
    raise KeyError(elem)


def pack(elements: np.ndarray, elem: str) -> np.ndarray:
    """[32, n] element bits -> [32, registers] register values (low element first)."""
    p, bits = per_reg(elem), BITS[elem]
    e = elements.reshape(32, -1, p).astype(np.uint64)
    out = np.zeros(e.shape[:2], dtype=np.uint64)
    for j in range(p):
        out |= e[..., j] << np.uint64(j * bits)
    return out


def unpack(regs: np.ndarray, elem: str) -> np.ndarray:
    p, bits = per_reg(elem), BITS[elem]
    mask = np.uint64((1 << bits) - 1) if bits < 64 else np.uint64(2**64 - 1)
    r = regs.astype(np.uint64)[..., None] >> (np.arange(p, dtype=np.uint64) * np.uint64(bits))
    return (r & mask).reshape(regs.shape[0], -1)


def ldmatrix_layout(trans: bool) -> np.ndarray:
    """[32, 2] (row, col) in an 8x8 matrix of lane l's two 16-bit elements of its register for
    that matrix (§9.7.14.5.15: row l / 4, elements 2 (l % 4) and 2 (l % 4) + 1; .trans reads
    the matrix column by column)."""
    out = np.array([[(lane // 4, (lane % 4) * 2 + j) for j in range(2)] for lane in range(32)])
    return out[..., ::-1].copy() if trans else out


def wmma_layout(rows: int, cols: int, per_lane: int) -> np.ndarray:
    """ptxvm's wmma fragment layout (the ISA leaves it unspecified, §9.7.14.4.1; every executor
    must use the same): lane l's elements are those of the row-major matrix numbered
    l * E .. l * E + E - 1, E = rows * cols / 32, repeated when a fragment holds more (f16 A/B)."""
    once = rows * cols // 32
    q = np.array([[lane * once + e % once for e in range(per_lane)] for lane in range(32)])
    return np.stack([q // cols, q % cols], axis=-1)
