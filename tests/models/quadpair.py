"""An independent numpy model of `mma.m8n8k4` with `.f16` (PTX ISA 9.0 §9.7.14.5.1, sm_70),
written from the ISA's formulas, not from ptxvm.machine.fragments: a warp computes four
separate 8x8x4 products, MMA computation q by the lanes 4q..4q+3 (low group) and 16+4q..16+4q+3
(high group). ``layout(role, elem, layout)`` gives, per lane and element, (q, row, col) in the
8x4 (A), 4x8 (B) or 8x8 (C/D) matrix of computation q."""

from __future__ import annotations

import numpy as np


def _a(lane: int, i: int, layout: str) -> tuple[int, int]:
    if layout == "row":      # row = %laneid % 4 (+4 from lane 16 on), col = i
        return (lane % 4 if lane < 16 else lane % 4 + 4), i
    return (i % 4 if lane < 16 else i % 4 + 4), lane % 4      # col-major A


def _b(lane: int, i: int, layout: str) -> tuple[int, int]:
    if layout == "row":      # row = %laneid % 4, col = i (+4 from lane 16 on)
        return lane % 4, (i if lane < 16 else i + 4)
    return i, (lane % 4 if lane < 16 else lane % 4 + 4)      # col-major B


def _c(lane: int, i: int, elem: str) -> tuple[int, int]:
    if elem == "f16":        # row = %laneid % 4 (+4), col = i
        return (lane % 4 if lane < 16 else lane % 4 + 4), i
    x = (lane & 0b1) + (i & 0b10)                           # .f32: Figures 51-52
    return (x if lane < 16 else x + 4), (i & 0b100) + (lane & 0b10) + (i & 0b1)


def computation(lane: int) -> int:
    """Which of the four MMA computations lane ``lane`` takes part in (the ISA's table)."""
    return (lane % 16) // 4


def layout(role: str, elem: str, lay: str = "row") -> np.ndarray:
    """[32, n, 3]: (computation, row, col) of element i of each lane."""
    n = 8 if role in ("c", "d") else 4
    out = np.zeros((32, n, 3), dtype=np.int64)
    for lane in range(32):
        for i in range(n):
            rc = _a(lane, i, lay) if role == "a" else _b(lane, i, lay) if role == "b" else _c(lane, i, elem)
            out[lane, i] = (computation(lane), *rc)
    return out


def lanes_of(mats: np.ndarray, coords: np.ndarray) -> np.ndarray:
    """[W, 4, rows, cols] matrices of the four computations -> [W, 32, n] each lane's elements."""
    return mats[:, coords[..., 0], coords[..., 1], coords[..., 2]]
