"""Texture fetch formulas over all lanes at once (CUDA C++ Programming Guide, appendix "Texture
Fetching"; PTX ISA 9.0 §9.7.10 texture instructions).

* Normalised coordinates are scaled by the size after wrap / mirror, which work on the normalised
  coordinate (wrap: u - floor(u); mirror: the same when floor(u) is even, else 1 - that).
  Unnormalised coordinates support clamp and border only: the driver API documents clamp as the
  only mode without normalised coordinates, so wrap and mirror act as clamp there.
* Point filtering reads T[floor(x)]; linear filtering reads T[i], T[i+1] with i = floor(x - 0.5)
  and weight alpha = frac(x - 0.5) held in 9-bit fixed point with 8 fraction bits (rounded to
  the nearest 1/256); 2D/3D multiply the per-axis weights, corners summed x fastest.
* Clamp clamps each texel index to [0, n-1]; border returns the border colour for every texel
  index outside it (a linear fetch blends it in per texel).
* Arithmetic is float32, as the hardware's texture unit computes; integer coordinates (``.s32``)
  are texel indices used as they are (addressing still applies).
Nothing reads outside the array: every index is clamped or masked before the gather.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, replace

import numpy as np

from .textures import AddressMode, CudaArray, FilterMode, ReadMode, TextureObject

F32 = np.float32


def texels_view(arr: CudaArray) -> np.ndarray:
    """The texels as (layers, depth, height, width, channels) (missing axes of size 1)."""
    ext = arr.extent
    w, h, d = (tuple(ext) + (1, 1))[:3]
    layers = arr.shape[0] if arr.layered or arr.cubemap else 1
    return arr.data.reshape(layers, d, h, w, arr.channels)


def _address(u: np.ndarray, mode: AddressMode, normalized: bool) -> np.ndarray:
    if not normalized:
        return u
    with np.errstate(invalid="ignore"):
        fl = np.floor(u)
        fr = (u - fl).astype(F32)
        if mode is AddressMode.WRAP:
            return fr
        if mode is AddressMode.MIRROR:
            odd = np.fmod(np.abs(fl), 2) == 1
            return np.where(odd, F32(1) - fr, fr).astype(F32)
    return u


def _indices(u: np.ndarray, n: int, mode: AddressMode, normalized: bool, linear: bool):
    """Per axis: the texel index pairs [(index, in-range mask)] and the linear weight alpha."""
    u = np.nan_to_num(u.astype(F32), nan=0.0)
    a = _address(u, mode, normalized)
    x = (a * F32(n)).astype(F32) if normalized else a
    if linear:
        xb = (x - F32(0.5)).astype(F32)
        i = np.floor(xb)
        alpha = (np.rint((xb - i) * F32(256)) / F32(256)).astype(F32)
        cands = (i, i + 1)
    else:
        alpha = None
        cands = (np.floor(x),)
    out = []
    for c in cands:
        c = np.clip(c, -2.0 ** 31, 2.0 ** 31).astype(np.int64)
        if mode is AddressMode.BORDER:
            out.append((np.clip(c, 0, n - 1), (c >= 0) & (c < n)))
        elif normalized and mode is AddressMode.WRAP and linear:
            out.append((np.mod(c, n), None))        # the footprint wraps round the edge
        elif normalized and mode is AddressMode.MIRROR and linear:
            m = np.mod(c, 2 * n)
            out.append((np.where(m >= n, 2 * n - 1 - m, m), None))
        else:
            out.append((np.clip(c, 0, n - 1), None))
    return out, alpha


def _int_indices(c: np.ndarray, n: int, mode: AddressMode):
    c = c.astype(np.int64)
    if mode is AddressMode.BORDER:
        return [(np.clip(c, 0, n - 1), (c >= 0) & (c < n))], None
    return [(np.clip(c, 0, n - 1), None)], None


def convert(raw: np.ndarray, arr_dtype: np.dtype, read: ReadMode, srgb: bool) -> np.ndarray:
    """Texels as the fetch returns them: float32 for float or normalised reads, else int64."""
    if arr_dtype.kind == "f":
        return raw.astype(F32)
    if read is ReadMode.ELEMENT_TYPE:
        return raw.astype(np.int64)
    bits = arr_dtype.itemsize * 8
    if arr_dtype.kind == "u":
        v = (raw.astype(F32) / F32((1 << bits) - 1)).astype(F32)
    else:
        v = np.maximum(raw.astype(F32) / F32((1 << (bits - 1)) - 1), F32(-1)).astype(F32)
    if srgb:
        # sRGB decode (IEC 61966-2-1) of the 8-bit r, g, b: each of the 256 codes' correctly
        # rounded float32 value (what a decode table holds), alpha stays linear.
        c = raw[..., :3].astype(np.float64) / 255.0
        lin = np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4).astype(F32)
        v = np.concatenate([lin, v[..., 3:]], axis=-1)
    return v


def footprint(tex: TextureObject, coords: list[np.ndarray], layer: np.ndarray | None,
              integer: bool, linear: bool):
    """Per axis (x first) the index candidates and weights of the fetch."""
    arr = tex.array
    axes = []
    for k, c in enumerate(coords):
        n = arr.extent[k]
        mode = tex.address[k]
        if integer:
            axes.append(_int_indices(c, n, mode))
        else:
            axes.append(_indices(c, n, mode, tex.normalized_coords, linear))
    return axes


def gather(tex: TextureObject, axes, layer: np.ndarray, combo) -> np.ndarray:
    """The converted texels at one corner ``combo`` (a candidate number per axis), border applied."""
    view = texels_view(tex.array)
    idx = [axes[k][0][combo[k]][0] for k in range(len(axes))]
    while len(idx) < 3:
        idx.append(np.zeros_like(idx[0]))
    t = convert(view[layer, idx[2], idx[1], idx[0]], tex.array.dtype, tex.read, tex.srgb)
    inside = None
    for k in range(len(axes)):
        m = axes[k][0][combo[k]][1]
        if m is not None:
            inside = m if inside is None else inside & m
    if inside is not None:
        border = np.array(tex.border[:tex.array.channels], dtype=t.dtype)
        t = np.where(inside[:, None], t, border[None, :])
    return t


def sample(tex: TextureObject, coords: list[np.ndarray], layer: np.ndarray, integer: bool) -> np.ndarray:
    """The fetch's four components per lane: (lanes, 4), float32 or int64 (missing channels 0)."""
    linear = tex.filter is FilterMode.LINEAR and not integer
    axes = footprint(tex, coords, layer, integer, linear)
    if not linear:
        t = gather(tex, axes, layer, (0,) * len(axes))
    else:
        t = None
        for combo in itertools.product((0, 1), repeat=len(axes)):
            combo = combo[::-1]                  # x varies fastest
            w = None
            for k, bit in enumerate(combo):
                a = axes[k][1]
                wk = a if bit else (F32(1) - a).astype(F32)
                w = wk if w is None else (w * wk).astype(F32)
            term = (w[:, None] * gather(tex, axes, layer, combo)).astype(F32)
            t = term if t is None else (t + term).astype(F32)
    out = np.zeros((t.shape[0], 4), dtype=t.dtype)
    out[:, :t.shape[1]] = t
    return out


def gather4(tex: TextureObject, coords: list[np.ndarray], layer: np.ndarray, component: int) -> np.ndarray:
    """tld4: ``component`` of the four texels of the bilinear footprint, in the order
    T[i, j+1], T[i+1, j+1], T[i+1, j], T[i, j] (x = i, y = j; PTX ISA §9.7.10.4)."""
    axes = footprint(tex, coords, layer, False, True)
    order = ((0, 1), (1, 1), (1, 0), (0, 0))
    ch = tex.array.channels
    cols = []
    for combo in order:
        t = gather(tex, axes, layer, combo)
        cols.append(t[:, component] if component < ch else np.zeros(t.shape[0], dtype=t.dtype))
    return np.stack(cols, axis=1)


@dataclass(frozen=True)
class Sampler:
    """What one fetch reads and how: a texture object's state with one array (a mip level, or a
    cubemap's faces sampled as normalised 2D textures clamped at the face edges)."""

    array: CudaArray
    address: tuple
    filter: FilterMode
    read: ReadMode
    srgb: bool
    border: tuple
    normalized_coords: bool

    @classmethod
    def of(cls, tex: TextureObject, level: int = 0) -> "Sampler":
        return cls(tex.levels[level], tex.address, tex.filter, tex.read, tex.srgb, tex.border,
                   tex.normalized_coords)

    def faces(self) -> "Sampler":
        return replace(self, normalized_coords=True, address=(AddressMode.CLAMP,) * 3)


# Mipmaps: ptxvm's documented choice where NVIDIA documents nothing (docs/textures.md,
# "Mipmaps"): lambda = log2 of the longest gradient in level-0 texels, + bias, clamped.

def lod_from_gradients(dpdx: list[np.ndarray], dpdy: list[np.ndarray], sizes) -> np.ndarray:
    """Per lane log2(max(|dPdx * size|, |dPdy * size|)) in float32 (-inf for zero gradients)."""
    def length(g):
        acc = np.zeros(g[0].shape, dtype=F32)
        for gk, n in zip(g, sizes):
            t = (gk.astype(F32) * F32(n)).astype(F32)
            acc = (acc + (t * t).astype(F32)).astype(F32)
        return np.sqrt(acc).astype(F32)
    rho = np.maximum(length(dpdx), length(dpdy))
    with np.errstate(divide="ignore"):
        return np.log2(rho.astype(np.float64)).astype(F32)


def mip_levels(tex: TextureObject, lod: np.ndarray):
    """(first level, second level, weight of the second) per lane; point filtering: weight None."""
    n = len(tex.levels)
    lam = np.nan_to_num(lod.astype(F32), nan=0.0, posinf=np.inf, neginf=-np.inf)
    lam = (lam + tex.lod_bias).astype(F32)
    lo, hi = tex.lod_range
    lam = np.minimum(np.maximum(lam, lo), hi).astype(F32)
    lam = np.minimum(np.maximum(lam, F32(0)), F32(n - 1)).astype(F32)
    if tex.mip_filter is FilterMode.POINT:
        d = np.where(lam <= 0.5, 0, np.ceil(lam.astype(np.float64) + 0.5) - 1).astype(np.int64)
        return np.minimum(d, n - 1), None, None
    d1 = np.floor(lam).astype(np.int64)
    return d1, np.minimum(d1 + 1, n - 1), (lam - d1.astype(F32)).astype(F32)


# Cubemap face selection (programming guide, "Cubemap Textures"): the major axis picks the face,
# (sc, tc) and |ma| give the face coordinates s = (sc/|ma| + 1)/2, t = (tc/|ma| + 1)/2.
def cube_face(x: np.ndarray, y: np.ndarray, z: np.ndarray):
    ax, ay, az = np.abs(x), np.abs(y), np.abs(z)
    use_x = (ax >= ay) & (ax >= az)
    use_y = ~use_x & (ay >= az)
    face = np.where(use_x, np.where(x >= 0, 0, 1), np.where(use_y, np.where(y >= 0, 2, 3),
                                                              np.where(z >= 0, 4, 5)))
    sc = np.select([face == 0, face == 1, face == 2, face == 3, face == 4], [-z, z, x, x, x], -x)
    tc = np.select([face == 0, face == 1, face == 2, face == 3, face == 4], [-y, -y, z, -z, -y], -y)
    ma = np.select([use_x, use_y], [ax, ay], az)
    with np.errstate(divide="ignore", invalid="ignore"):
        s = ((sc / ma + F32(1)) * F32(0.5)).astype(F32)
        t = ((tc / ma + F32(1)) * F32(0.5)).astype(F32)
    return face.astype(np.int64), s, t


__all__ = ["sample", "gather4", "cube_face", "texels_view", "convert", "Sampler", "lod_from_gradients",
           "mip_levels"]
