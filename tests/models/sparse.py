"""An independent numpy model of mma.sp (PTX ISA 9.0 §9.7.14.6), not importing
ptxvm.machine.fragments: for each form, which (row, chunk, slot) of the 2:4 (tf32: 1:2) sparse A
each stored element a_i of a lane is (§9.7.14.6.2's row/firstcol formulas), where the metadata
field of each (row, chunk) lies for a selector (the ISA's selector rules of §9.7.14.6.1; the
bit positions of its metadata figures as NVIDIA's CuTe sparse MMA traits spell them out:
cute/atom/mma_traits_sm80_sparse.hpp ELayout), and the B fragments the dense section does not
cover (§9.7.14.6.2 Figures 121, 124, 132-135)."""

from __future__ import annotations

# (shape, atype) -> chunk width (A elements per chunk)
CHUNK = {("m16n8k16", "f16"): 4, ("m16n8k32", "f16"): 4, ("m16n8k16", "bf16"): 4, ("m16n8k32", "bf16"): 4,
         ("m16n8k8", "tf32"): 2, ("m16n8k16", "tf32"): 2, ("m16n8k32", "s8"): 4, ("m16n8k64", "s8"): 4,
         ("m16n8k64", "e4m3"): 4}
SELECTORS = {("m16n8k16", "f16"): (0, 1, 2, 3), ("m16n8k32", "f16"): (0, 1), ("m16n8k16", "bf16"): (0, 1, 2, 3),
             ("m16n8k32", "bf16"): (0, 1), ("m16n8k8", "tf32"): (0, 1, 2, 3), ("m16n8k16", "tf32"): (0, 1),
             ("m16n8k32", "s8"): (0, 1), ("m16n8k64", "s8"): (0,), ("m16n8k64", "e4m3"): (0,)}


def family(atype: str) -> str:
    return {"u8": "s8", "e5m2": "e4m3"}.get(atype, atype)


def a_stored(shape: str, atype: str, lane: int, i: int) -> tuple[int, int, int]:
    """(row, chunk, slot) of stored element a_i of ``lane``; chunk c covers columns
    [c * width, (c + 1) * width) of the full A, slot: which of its stored elements."""
    g, t = lane >> 2, lane % 4
    key = (shape, family(atype))
    if key in (("m16n8k16", "f16"), ("m16n8k16", "bf16")):      # a0,a1 row g; a2,a3 g+8; firstcol 4t
        return g + 8 * (i >= 2), t, i % 2
    if key in (("m16n8k32", "f16"), ("m16n8k32", "bf16")):      # rows g: i<2, 4<=i<6; firstcol 4t (+16 i>=4)
        return g + 8 * (i % 4 >= 2), t + 4 * (i >= 4), i % 2
    if key == ("m16n8k8", "tf32"):                                # a0 g, a1 g+8; firstcol 2t
        return g + 8 * i, t, 0
    if key == ("m16n8k16", "tf32"):                               # a0,a2 g; a1,a3 g+8; firstcol 2t (+8 i>=2)
        return g + 8 * (i % 2), t + 4 * (i >= 2), 0
    if key == ("m16n8k32", "s8"):                                 # i<4 row g; firstcol 8t, 8 columns
        return g + 8 * (i >= 4), 2 * t + (i % 4) // 2, i % 2
    if key in (("m16n8k64", "s8"), ("m16n8k64", "e4m3")):         # rows g: i<4, 8<=i<12; firstcol 8t (+32)
        return g + 8 * ((i // 4) % 2), 2 * t + (i % 4) // 2 + 8 * (i >= 8), i % 2
    raise KeyError(key)


def a_count(shape: str, atype: str) -> int:
    """Stored A elements per lane."""
    k = int(shape.split("k")[1])
    return 16 * k // 2 // 32


def meta_field(shape: str, atype: str, sel: int, row: int, chunk: int) -> tuple[int, int]:
    """(lane, lowest bit) of the 4-bit metadata field of chunk ``chunk`` of A's row ``row``."""
    g, low = row % 8, row >= 8
    key = (shape, family(atype))
    if key in (("m16n8k16", "f16"), ("m16n8k16", "bf16"), ("m16n8k8", "tf32")):
        return 4 * g + sel, 4 * chunk + 16 * low                 # one thread: rows g | g + 8 in its halves
    if key in (("m16n8k32", "f16"), ("m16n8k32", "bf16"), ("m16n8k16", "tf32")):
        return 4 * g + 2 * sel + chunk // 4, 4 * (chunk % 4) + 16 * low   # a pair: columns 0-15 | 16-31
    if key == ("m16n8k32", "s8"):
        return 4 * g + 2 * sel + low, 4 * chunk                  # a pair: row g | row g + 8
    if key in (("m16n8k64", "s8"), ("m16n8k64", "e4m3")):
        return 4 * g + low + 2 * (chunk // 8), 4 * (chunk % 8)   # all four: rows x column halves
    raise KeyError(key)


def b_layout(shape: str, btype: str, lane: int, i: int) -> tuple[int, int] | None:
    """(k, n) of b_i for the sparse shapes the dense section does not have; None: the dense
    mma layout of the same shape applies (models.fragments.mma_layout)."""
    g, t = lane >> 2, lane % 4
    if shape == "m16n8k32" and btype in ("f16", "bf16"):          # 4 registers of 2
        return 2 * t + i % 2 + 8 * (i // 2), g
    if shape == "m16n8k16" and btype == "tf32":                   # 4 registers of 1
        return t + 4 * i, g
    if shape == "m16n8k64":                                       # 4 registers of 4 (8-bit)
        return 4 * t + i % 4 + 16 * (i // 4), g
    return None
