"""Surface instructions over lane arrays (PTX ISA 9.0 §9.7.11): suld.b, sust.b/.p, sured.b on a
CudaArray, shared by the executors that run them on the host (see ``texops``).

The x coordinate is a byte offset in the row (sust.p: an element index), y/z/layer are element
indices. Out of range
(any byte of the access outside the row, a row, slice or layer beyond the array):
``.trap`` faults for the thread, ``.clamp`` moves the access to the nearest position inside,
``.zero`` reads zeros and drops the store (§9.7.11.1).
"""

from __future__ import annotations

import numpy as np

from .texfetch import texels_view
from .texops import RED_TYPES, UINT, Plan, TextureError, objects
from .textures import CudaArray, SurfaceObject

_RED = {"add": np.add, "min": np.minimum, "max": np.maximum, "and": np.bitwise_and, "or": np.bitwise_or}


def _rows(arr: CudaArray) -> np.ndarray:
    """The texels as bytes: (layers, depth, height, bytes a row)."""
    v = texels_view(arr)
    v = v.reshape(v.shape[0], v.shape[1], v.shape[2], -1)
    return v if v.dtype == np.uint8 else v.view(np.uint8)


def _place(p: Plan, arr: CudaArray, sel: np.ndarray, layer, coords):
    """(rows, (layer, z, y, x) per selected lane, the mask of accesses that read or write);
    sust.p's x counts elements (samples), the others' bytes."""
    rows = _rows(arr)
    L, D, H, R = rows.shape
    nbytes = arr.element_bytes if p.formatted else p.nbytes
    c = [np.ascontiguousarray(a)[sel].view(np.int32).astype(np.int64) for a in coords]
    x = c[0] * nbytes if p.formatted else c[0]
    y = c[1] if len(c) > 1 else np.zeros_like(x)
    z = c[2] if len(c) > 2 else np.zeros_like(x)
    lay = np.ascontiguousarray(layer)[sel].view(np.uint32).astype(np.int64) if layer is not None \
        else np.zeros_like(x)
    inside = (x >= 0) & (x + nbytes <= R) & (y >= 0) & (y < H) & (z >= 0) & (z < D) & (lay < L)
    if p.mode == "trap" and not inside.all():
        k = int(np.nonzero(~inside)[0][0])
        raise TextureError(int(np.nonzero(sel)[0][k]),
                           f"`{p.full_opcode}` accesses bytes {int(x[k])}..{int(x[k]) + nbytes - 1}"
                           f" of row {int(y[k])}, slice {int(z[k])}, layer {int(lay[k])} of "
                           f"{arr!r} ({R} bytes a row): out of range (.trap)")
    x, y = np.clip(x, 0, R - nbytes), np.clip(y, 0, H - 1)
    z, lay = np.clip(z, 0, D - 1), np.clip(lay, 0, L - 1)
    return rows, (lay, z, y, x), (inside if p.mode == "zero" else np.ones_like(inside))


def _plans(p: Plan, handles, layer, coords, where):
    """Every selected lane's place, for every surface the lanes name, before anything is written
    (a .trap access of one thread leaves the arrays untouched)."""
    return [(sel,) + _place(p, surf.array, sel, layer, coords) + (surf.array,)
            for surf, sel in objects(handles, SurfaceObject, where)]


def formatted_bytes(arr: CudaArray, values) -> np.ndarray:
    """sust.p's sources as one element of ``arr`` per lane: (lanes, element bytes). A float
    array takes the .f32 values rounded to its type; an integer one takes .s32/.u32 values
    saturated to its range (ptxvm's choice: the ISA names the source types only). Components the
    source lacks are written as 0 (the ISA: unpredictable); sources beyond the array's channels
    are ignored."""
    dt = arr.dtype
    n = np.asarray(values[0]).shape[0]
    out = np.zeros((n, arr.channels), dtype=dt)
    for ch, v in enumerate(values[:arr.channels]):
        bits = np.ascontiguousarray(np.asarray(v).astype(np.uint32))
        if dt.kind == "f":
            with np.errstate(over="ignore"):          # beyond float16's range: inf, as a cast rounds
                out[:, ch] = bits.view(np.float32).astype(dt)
        else:
            src = bits.view(np.int32 if dt.kind == "i" else np.uint32).astype(np.int64)
            info = np.iinfo(dt)
            out[:, ch] = np.clip(src, info.min, info.max).astype(dt)
    return np.ascontiguousarray(out).view(np.uint8).reshape(n, arr.element_bytes)


def _bytes_at(rows, at, nbytes: int):
    lay, z, y, x = at
    return lay[:, None], z[:, None], y[:, None], x[:, None] + np.arange(nbytes)[None, :]


def suld(p: Plan, handles: np.ndarray, layer, coords, where) -> np.ndarray:
    """(lanes, vec) of the element type's unsigned integers."""
    out = np.zeros((handles.size, p.nbytes), dtype=np.uint8)
    for sel, rows, at, ok, _ in _plans(p, handles, layer, coords, where):
        out[sel] = np.where(ok[:, None], rows[_bytes_at(rows, at, p.nbytes)], 0)
    return out.view(UINT[p.dtype.bits]).reshape(handles.size, p.vec)


def sust(p: Plan, handles: np.ndarray, layer, coords, values, where) -> None:
    """``values``: per vector element, the lanes' bits (any integer dtype of the element's width)."""
    ut = UINT[p.dtype.bits]
    vals = np.stack([np.asarray(v).astype(ut) for v in values], axis=1)
    data = np.ascontiguousarray(vals).view(np.uint8).reshape(handles.size, p.nbytes)
    for sel, rows, at, ok, arr in _plans(p, handles, layer, coords, where):
        arr_bytes, nbytes = data[sel], p.nbytes
        if p.formatted:
            arr_bytes, nbytes = formatted_bytes(arr, [v[sel] for v in values]), arr.element_bytes
        rows[_bytes_at(rows, tuple(a[ok] for a in at), nbytes)] = arr_bytes[ok]


def sured(p: Plan, handles: np.ndarray, layer, coords, value, where) -> None:
    """An atomic read-modify-write of one element per thread (threads on the same element all
    apply, in any order: the operations commute)."""
    nt = RED_TYPES[p.dtype.value]
    nbytes = p.nbytes
    v = np.ascontiguousarray(value)
    vals = v.view(nt) if v.dtype.itemsize == nbytes else v.astype(nt)
    fn = _RED[p.red]
    for sel, rows, (lay, z, y, x), ok, _ in _plans(p, handles, layer, coords, where):
        for val, l_, z_, y_, x_, k in zip(vals[sel], lay, z, y, x, ok):
            if k:
                cell = rows[l_, z_, y_, x_:x_ + nbytes].view(nt)
                cell[0] = fn(cell[0], val)


__all__ = ["suld", "sust", "sured"]
