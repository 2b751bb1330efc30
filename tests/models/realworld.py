"""numpy models of the real-world corpus kernels (tests/cuda/cub_*.cu, thrust_algos.cu,
cg_tiles.cu, warp_asm.cu, libcuxx.cu), written from what each library call is documented to
compute (CUB's and Thrust's reference, the cooperative groups section of the CUDA programming
guide, the PTX ISA for the inline asm), never from ptxvm's output.

Arrays are flat; ``width`` is the group a collective works over (a CTA's tile, a logical warp,
a cooperative-groups tile), groups being consecutive runs of ``width`` elements.
"""

from __future__ import annotations

import numpy as np

U32 = np.uint32


def rows(x: np.ndarray, width: int) -> np.ndarray:
    assert x.size % width == 0, (x.size, width)
    return x.reshape(-1, width)


# ---------------------------------------------------------------- reductions and scans

def group_sum(x: np.ndarray, width: int) -> np.ndarray:
    """Sum per group, wrapping like the kernel's own integer type."""
    return rows(x, width).sum(axis=1, dtype=x.dtype)


def group_reduce(x: np.ndarray, width: int, op: np.ufunc) -> np.ndarray:
    return op.reduce(rows(x, width), axis=1)


def inclusive_scan(x: np.ndarray, width: int, op: np.ufunc = np.add) -> np.ndarray:
    return op.accumulate(rows(x, width), axis=1, dtype=x.dtype).reshape(-1)


def exclusive_sum(x: np.ndarray, width: int) -> np.ndarray:
    """Exclusive prefix sums per group; the first element of each group gets 0 (the identity)."""
    r = rows(x, width)
    out = np.zeros_like(r)
    out[:, 1:] = np.cumsum(r, axis=1, dtype=x.dtype)[:, :-1]
    return out.reshape(-1)


def exclusive_scan_seed(x: np.ndarray, width: int, seed: int) -> np.ndarray:
    """ExclusiveScan(v, seed, plus): element j gets seed + x[0] + ... + x[j-1] of its group."""
    return (exclusive_sum(x, width) + x.dtype.type(seed)).astype(x.dtype)


def head_segmented_sums(x: np.ndarray, heads: np.ndarray, width: int) -> np.ndarray:
    """CUB WarpReduce::HeadSegmentedSum: segments start at a nonzero flag or at lane 0; each
    segment's sum at its head lane, 0 at the other lanes (the kernel writes 0 there)."""
    out = np.zeros_like(x)
    for g in range(x.size // width):
        lo = g * width
        starts = [j for j in range(width) if j == 0 or heads[lo + j]]
        for s, e in zip(starts, starts[1:] + [width]):
            out[lo + s] = x[lo + s:lo + e].sum(dtype=x.dtype)
    return out


# ---------------------------------------------------------------- data movement

def blocked_to_striped(tile: np.ndarray, threads: int, items: int) -> np.ndarray:
    """A tile in blocked order (thread t holds t * items + k) written out striped
    (position k * threads + t holds thread t's item k)."""
    return tile.reshape(threads, items).T.reshape(-1)


def striped_to_blocked(tile: np.ndarray, threads: int, items: int) -> np.ndarray:
    """The inverse: the value at striped position k * threads + t goes to t * items + k."""
    return tile.reshape(items, threads).T.reshape(-1)


def shift_left_in_groups(x: np.ndarray, width: int) -> np.ndarray:
    """out[j] = x[j + 1] within each group; the group's last element keeps its own value."""
    r = rows(x, width).copy()
    r[:, :-1] = rows(x, width)[:, 1:]
    return r.reshape(-1)


def flag_heads(x: np.ndarray, width: int) -> np.ndarray:
    """BlockDiscontinuity::FlagHeads with not_equal_to: 1 where x[j] != x[j - 1]; the first
    element of each tile is always a head."""
    r = rows(x, width)
    f = np.ones_like(r)
    f[:, 1:] = r[:, 1:] != r[:, :-1]
    return f.reshape(-1).astype(np.int32)


def subtract_left(x: np.ndarray, width: int) -> np.ndarray:
    """BlockAdjacentDifference::SubtractLeft: x[j] - x[j - 1]; the tile's first element as is."""
    r = rows(x, width)
    d = r.copy()
    d[:, 1:] = r[:, 1:] - r[:, :-1]
    return d.reshape(-1)


# ---------------------------------------------------------------- sorting and histograms

def sort_groups(x: np.ndarray, width: int, descending: bool = False) -> np.ndarray:
    s = np.sort(rows(x, width), axis=1, kind="stable")
    return (s[:, ::-1] if descending else s).reshape(-1)


def stable_argsort_groups(x: np.ndarray, width: int) -> np.ndarray:
    return np.argsort(rows(x, width), axis=1, kind="stable").reshape(-1).astype(np.int32)


def sort_by_bits(x: np.ndarray, width: int, begin: int, end: int) -> np.ndarray:
    """A radix sort on bits [begin, end) only: stable, ordered by that bit field."""
    r = rows(x, width)
    field = (r >> U32(begin)) & U32((1 << (end - begin)) - 1)
    order = np.argsort(field, axis=1, kind="stable")
    return np.take_along_axis(r, order, axis=1).reshape(-1)


def histograms(samples: np.ndarray, width: int, bins: int = 256) -> np.ndarray:
    return np.stack([np.bincount(r, minlength=bins) for r in rows(samples, width)]).astype(U32).reshape(-1)


# ---------------------------------------------------------------- warp and tile collectives

def tile_ballot(pred: np.ndarray, width: int) -> np.ndarray:
    """thread_block_tile<width>::ballot: the tile's predicate bits, tile rank r at bit r, the
    same value in every lane of the tile."""
    r = rows(pred.astype(np.uint64), width)
    bits = (r << np.arange(width, dtype=np.uint64)).sum(axis=1).astype(U32)
    return np.repeat(bits, width)


def tile_match_any(x: np.ndarray, width: int) -> np.ndarray:
    """thread_block_tile<width>::match_any: per lane, the tile ranks holding an equal value."""
    out = np.zeros(x.size, dtype=U32)
    for g in range(x.size // width):
        t = x[g * width:(g + 1) * width]
        for j in range(width):
            out[g * width + j] = sum(1 << k for k in range(width) if t[k] == t[j])
    return out


def shfl_xor_in_tiles(x: np.ndarray, width: int, mask: int) -> np.ndarray:
    idx = np.arange(x.size)
    return x[(idx & ~(width - 1)) | ((idx % width) ^ mask)]


def shfl_idx_in_tiles(x: np.ndarray, width: int, lane: int) -> np.ndarray:
    idx = np.arange(x.size)
    return x[(idx & ~(width - 1)) + lane]


def labeled_partition(x: np.ndarray, labels: np.ndarray, width: int = 32):
    """cg::labeled_partition(warp, label): per thread, (sum over the lanes of its warp with the
    same label, its rank among them in lane order, how many they are)."""
    sums, ranks, sizes = (np.zeros(x.size, dtype=np.int32) for _ in range(3))
    for g in range(x.size // width):
        lo = g * width
        for j in range(width):
            same = [k for k in range(width) if labels[lo + k] == labels[lo + j]]
            sums[lo + j] = x[[lo + k for k in same]].sum(dtype=np.int32)
            ranks[lo + j] = same.index(j)
            sizes[lo + j] = len(same)
    return sums, ranks, sizes


def active_ranks(active: np.ndarray, width: int = 32):
    """coalesced_threads() in a branch taken by the lanes where ``active``: each active lane's
    rank among the active lanes of its warp (-1 elsewhere) and, per warp, their number."""
    r = rows(active, width)
    ranks = np.where(r, np.cumsum(r, axis=1) - 1, -1).astype(np.int32).reshape(-1)
    return ranks, r.sum(axis=1).astype(np.int32)


# ---------------------------------------------------------------- inline asm and libcu++

def bytes_sum(x: np.ndarray) -> np.ndarray:
    return sum((x >> U32(s)) & U32(0xFF) for s in (0, 8, 16, 24)).astype(U32)


def byte_reverse(x: np.ndarray) -> np.ndarray:
    """prmt.b32 d, a, 0, 0x0123: result byte i is source byte (3 - i) of a (PTX ISA §9.7.9.7)."""
    return x.byteswap()


def popcount(x: np.ndarray) -> np.ndarray:
    return np.array([bin(int(v)).count("1") for v in x], dtype=U32)


def countl_zero(x: np.ndarray) -> np.ndarray:
    return np.array([32 - int(v).bit_length() for v in x], dtype=U32)


def countr_zero(x: np.ndarray) -> np.ndarray:
    return np.array([32 if v == 0 else (int(v) & -int(v)).bit_length() - 1 for v in x], dtype=U32)


def rotl(x: np.ndarray, s: int) -> np.ndarray:
    return ((x << U32(s)) | (x >> U32(32 - s))).astype(U32)


def bit_width(x: np.ndarray) -> np.ndarray:
    return np.array([int(v).bit_length() for v in x], dtype=U32)


def bit_floor(x: np.ndarray) -> np.ndarray:
    return np.array([0 if v == 0 else 1 << (int(v).bit_length() - 1) for v in x], dtype=U32)


def iterate_3x_plus_1(times: int) -> int:
    """What a CAS loop applying c = 3c + 1 (mod 2^32) once per thread leaves, from 0."""
    c = 0
    for _ in range(times):
        c = (3 * c + 1) & 0xFFFFFFFF
    return c
