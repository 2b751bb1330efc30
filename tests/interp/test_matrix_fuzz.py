"""Fuzzing the tensor-core instructions (ptxvm.testing.ptxgen.tensor): random mma.sync forms,
ldmatrix and movmatrix on random fragments (float specials, NaN payloads, integer boundaries,
random bits). Every executor of the comparison must agree (the JIT's refusal of a form it
does not lower yet is allowed); integer, b1 and data-movement forms are also checked against
the independent model (tests/models/fragments.py) on the interpreter."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings

from ptxvm.testing.ptxgen import check_agreement, run_on
from ptxvm.testing.ptxgen.tensor import mma_forms, tensor_kernels

from models import fragments as M

COMBOS = {f.opcode(): f for f in mma_forms()}


def _lane_regs(words: np.ndarray, threads: int, n: int, wide: bool) -> np.ndarray:
    w = words[:threads * n].reshape(threads // 32, 32, n)
    return w if wide else w & np.uint64(0xFFFFFFFF)


def _mma_expect(form, a_in, threads):
    """D per lane for an integer/b1 form: the exact model of §9.7.14.5.14."""
    roles = (("a", form.atype), ("b", form.btype), ("c", form.ctype))
    counts = [M.mma_layout(form.shape, r, t).shape[1] // M.per_reg(t) for r, t in roles]
    regs = _lane_regs(a_in, threads, sum(counts), False)
    mats, k = [], 0
    for (role, t), n in zip(roles, counts):
        el = np.stack([M.unpack(w, t) for w in regs[..., k:k + n]])
        k += n
        coords = M.mma_layout(form.shape, role, t)
        mat = np.zeros((el.shape[0],) + M.dims(form.shape, role), dtype=np.int64)
        v = el.astype(np.int64)
        if t.startswith("s"):
            bits = M.BITS[t]
            v = np.where(v >= 1 << (bits - 1), v - (1 << bits), v)
        mat[:, coords[..., 0], coords[..., 1]] = v
        mats.append(mat)
    a, b, c = mats
    if form.atype == "b1":
        x, y = a[:, :, :, None], b[:, None, :, :]
        d = c + ((x ^ y) if "xor" in form.extra else (x & y)).sum(axis=2)
    else:
        d = c + np.einsum("wik,wkj->wij", a, b)
    if form.extra == ".satfinite":
        d = np.clip(d, -(1 << 31), (1 << 31) - 1)
    d = d & 0xFFFFFFFF
    coords = M.mma_layout(form.shape, "d", "s32")
    return d[:, coords[..., 0], coords[..., 1]].astype(np.uint64)


def _ldmatrix_expect(ptx, a_in, threads):
    tile_words = np.array([int(a_in[t]) & 0xFFFFFFFF for t in range(128)], dtype=np.uint32)
    tile = tile_words.view(np.uint16).reshape(32, 8)
    rows = (a_in[:threads * 2].reshape(-1, 2)[:, 0] & np.uint64(31)).astype(np.int64).reshape(-1, 32)
    if "movmatrix" in ptx:
        src = (a_in[:threads * 2].reshape(-1, 2)[:, 1] & np.uint64(0xFFFFFFFF)).reshape(-1, 32)
        at = M.ldmatrix_layout(False)
        out = []
        for w in range(src.shape[0]):
            mat = np.zeros((8, 8), np.uint64)
            mat[at[:, 0, 0], at[:, 0, 1]] = src[w] & np.uint64(0xFFFF)
            mat[at[:, 1, 0], at[:, 1, 1]] = src[w] >> np.uint64(16)
            t = mat.T
            out.append((t[at[:, 0, 0], at[:, 0, 1]] | (t[at[:, 1, 0], at[:, 1, 1]] << np.uint64(16)))[:, None])
        return np.stack(out)
    n = {"x1": 1, "x2": 2, "x4": 4}[ptx.split("m8n8.")[1].split(".")[0]]
    at = M.ldmatrix_layout(".trans" in ptx)
    out = np.zeros((rows.shape[0], 32, n), np.uint64)
    for w in range(rows.shape[0]):
        for i in range(n):
            mat = tile[rows[w, 8 * i:8 * i + 8]].astype(np.uint64)
            out[w, :, i] = mat[at[:, 0, 0], at[:, 0, 1]] | (mat[at[:, 1, 0], at[:, 1, 1]] << np.uint64(16))
    return out


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tensor_kernels())
def test_tensor_forms_on_random_fragments(gk):
    check_agreement(gk)
    if ".sp" in gk.ptx:          # mma.sp: agreement here, the model in test_matrix_sparse.py
        return
    a_in, out = run_on(gk, "interp")[:2]
    threads = gk.block[0]
    op = next(line.split()[0] for line in gk.ptx.splitlines() if "mma.sync" in line or "matrix.sync" in line)
    form = COMBOS.get(op)
    if form is not None and form.atype in ("s8", "u8", "s4", "u4", "b1"):
        got = out.reshape(threads // 32, 32, -1) & np.uint64(0xFFFFFFFF)
        np.testing.assert_array_equal(got, _mma_expect(form, a_in, threads))
    elif form is None:
        got = out.reshape(threads // 32, 32, -1)
        np.testing.assert_array_equal(got, _ldmatrix_expect(gk.ptx, a_in, threads))
