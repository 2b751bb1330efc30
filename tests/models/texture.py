"""Independent model of CUDA texture fetching, one sample at a time in plain Python with numpy
float32 scalars, written from the CUDA C++ Programming Guide's appendix "Texture Fetching"
(nearest-point and linear filtering, the addressing modes) and PTX ISA 9.0 §9.7.10 (tld4 order).
It shares no code with ptxvm.

texels: numpy array (d, h, w, channels) of the element type (axes absent for fewer dimensions
are size 1); coords: (x,) / (x, y) / (x, y, z) as Python floats (or ints for integer fetches).
"""

from __future__ import annotations

import math

import numpy as np

f32 = np.float32


def wrap_mirror(u: float, mode: str) -> float:
    """Normalised coordinate after wrap or mirror (guide: x - floor(x); mirrored when floor is odd)."""
    u = f32(u)
    fl = math.floor(float(u))
    frac = f32(u - f32(fl))
    if mode == "wrap":
        return frac
    if mode == "mirror":
        return f32(1) - frac if fl % 2 else frac
    return u


def texel_index(i: int, n: int, mode: str, normalized: bool, linear: bool):
    """The texel index actually read for index i on an axis of n texels; None = border."""
    if mode == "border":
        return i if 0 <= i < n else None
    if normalized and linear and mode == "wrap":
        return i % n
    if normalized and linear and mode == "mirror":
        m = i % (2 * n)
        return 2 * n - 1 - m if m >= n else m
    return min(max(i, 0), n - 1)


def as_read(value, dtype: np.dtype, read: str):
    if dtype.kind == "f":
        return f32(value)
    if read == "element":
        return int(value)
    bits = dtype.itemsize * 8
    if dtype.kind == "u":
        return f32(f32(int(value)) / f32(2 ** bits - 1))
    return max(f32(f32(int(value)) / f32(2 ** (bits - 1) - 1)), f32(-1))


def _axis(c, n: int, mode: str, normalized: bool, linear: bool, integer: bool):
    """[(index or None, weight)] for one axis."""
    if integer:
        return [(texel_index(int(c), n, mode, False, False), None)]
    u = wrap_mirror(c, mode) if normalized else f32(c)
    x = f32(u * f32(n)) if normalized else u
    if not linear:
        return [(texel_index(math.floor(float(x)), n, mode, normalized, False), None)]
    xb = f32(x - f32(0.5))
    i = math.floor(float(xb))
    alpha = f32(round(float(f32(f32(xb - f32(i)) * f32(256)))) / 256.0)   # 8 fraction bits, nearest
    return [(texel_index(i, n, mode, normalized, True), f32(f32(1) - alpha)),
            (texel_index(i + 1, n, mode, normalized, True), alpha)]


def fetch(texels: np.ndarray, coords, *, modes, filter_mode="point", normalized=False, read="element",
          border=(0, 0, 0, 0), integer=False):
    """One fetch: a list of 4 components (channels missing from the texels are 0)."""
    d, h, w, ch = texels.shape
    sizes = (w, h, d)
    linear = filter_mode == "linear" and not integer
    axes = [_axis(c, sizes[k], modes[k], normalized, linear, integer) for k, c in enumerate(coords)]
    while len(axes) < 3:
        axes.append([(0, None)])
    total = None
    # Corners x fastest, as the guide writes the sum: T[i,j], T[i+1,j], T[i,j+1], T[i+1,j+1].
    for kz in axes[2]:
        for ky in axes[1]:
            for kx in axes[0]:
                idx = (kx[0], ky[0], kz[0])
                if None in idx:
                    t = [border[c] for c in range(ch)]
                    t = [f32(v) if (texels.dtype.kind == "f" or read != "element") else int(v) for v in t]
                else:
                    t = [as_read(texels[idx[2], idx[1], idx[0], c], texels.dtype, read) for c in range(ch)]
                if not linear:
                    total = t
                    continue
                wgt = None
                for k in (kx, ky, kz):
                    if k[1] is not None:
                        wgt = k[1] if wgt is None else f32(wgt * k[1])
                term = [f32(wgt * v) for v in t]
                total = term if total is None else [f32(a + b) for a, b in zip(total, term)]
    return list(total) + [0] * (4 - ch)


def gather4(texels: np.ndarray, coords, component: int, *, modes, normalized=False, read="element",
            border=(0, 0, 0, 0)):
    """tld4: ``component`` of T[i, j+1], T[i+1, j+1], T[i+1, j], T[i, j] (the bilinear footprint)."""
    d, h, w, ch = texels.shape
    ax = _axis(coords[0], w, modes[0], normalized, True, False)
    ay = _axis(coords[1], h, modes[1], normalized, True, False)
    out = []
    for xi, yi in ((0, 1), (1, 1), (1, 0), (0, 0)):
        i, j = ax[xi][0], ay[yi][0]
        if component >= ch:
            out.append(0)
        elif i is None or j is None:
            out.append(border[component])
        else:
            out.append(as_read(texels[0, j, i, component], texels.dtype, read))
    return out


def cube_direction(x: float, y: float, z: float):
    """(face, s, t) for a cubemap direction (guide, table "Cubemap Fetch")."""
    ax, ay, az = abs(x), abs(y), abs(z)
    if ax >= ay and ax >= az:
        face, sc, tc, ma = (0, -z, -y, ax) if x >= 0 else (1, z, -y, ax)
    elif ay >= az:
        face, sc, tc, ma = (2, x, z, ay) if y >= 0 else (3, x, -z, ay)
    else:
        face, sc, tc, ma = (4, x, -y, az) if z >= 0 else (5, -x, -y, az)
    s = f32(f32(f32(f32(sc) / f32(ma)) + f32(1)) * f32(0.5))
    t = f32(f32(f32(f32(tc) / f32(ma)) + f32(1)) * f32(0.5))
    return face, s, t


# ---------------------------------------------------------------- mipmaps (tex.level / tex.grad)
# Written from the CUDA programming guide (tex2DLod, tex2DGrad, cudaTextureDesc's mipmap fields)
# and the textbook LOD of OpenGL 4.6 §8.14 (NVIDIA does not document its own): lambda = log2 of
# the longest gradient scaled to level-0 texels, plus the bias, clamped to the sampler's range and
# to the levels there are; point mip filtering takes the nearest level (.5 rounds down), linear
# blends floor(lambda) and the next level by frac(lambda), all in float32.

def lod_from_gradients(dpdx, dpdy, sizes) -> float:
    """log2(max(|dPdx * size|, |dPdy * size|)), -inf for zero gradients."""
    def length(g):
        acc = f32(0)
        for gk, n in zip(g, sizes):
            t = f32(f32(gk) * f32(n))
            acc = f32(acc + f32(t * t))
        return f32(math.sqrt(float(acc)))
    rho = max(length(dpdx), length(dpdy))
    return -math.inf if rho == 0 else float(f32(math.log2(float(rho))))


def mip_levels_used(lod: float, levels: int, mip_filter: str, bias=0.0, lo=0.0, hi=None):
    """[(level, weight)]: one level (point) or two blended ones (linear)."""
    hi = f32(levels - 1 if hi is None else hi)
    lam = f32(f32(0.0 if math.isnan(lod) else lod) + f32(bias))
    lam = min(max(lam, f32(lo)), hi)
    lam = min(max(lam, f32(0)), f32(levels - 1))
    if mip_filter == "point":
        d = 0 if lam <= 0.5 else math.ceil(float(lam) + 0.5) - 1
        return [(min(d, levels - 1), None)]
    d1 = math.floor(float(lam))
    frac = f32(lam - f32(d1))
    return [(d1, f32(f32(1) - frac)), (min(d1 + 1, levels - 1), frac)]


def fetch_mip(level_texels: list, coords, lod: float, *, mip_filter="point", bias=0.0, lo=0.0, hi=None,
              **kw):
    """One fetch from a mip chain (normalised coordinates): ``level_texels[i]`` as ``fetch`` takes."""
    used = mip_levels_used(lod, len(level_texels), mip_filter, bias, lo, hi)
    if len(used) == 1:
        return fetch(level_texels[used[0][0]], coords, normalized=True, **kw)
    total = None
    for lvl, w in used:
        t = fetch(level_texels[lvl], coords, normalized=True, **kw)
        term = [f32(w * f32(v)) for v in t]
        total = term if total is None else [f32(a + b) for a, b in zip(total, term)]
    return total
