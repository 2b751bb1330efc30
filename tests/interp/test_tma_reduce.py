"""cp.reduce.async.bulk.tensor (PTX ISA 9.0 §9.7.9.25.5.3), tile mode, shared::cta -> global with
bulk-group completion, on the interpreter and the host JIT, against a numpy model written here
from the ISA text: each in-bounds box element e of the tensor becomes ``T[e] = T[e] redOp tile[e]``
(atom's semantics for inc/dec), elements outside the tensor are not written."""
import numpy as np
import pytest

import ptxvm
from ptxvm.errors import PtxError
from tests.interp.test_tma import _kernel, _run, _strides, _tensor

EXECUTORS = ["interp", "cpu"]
DT = {"uint32": np.uint32, "int32": np.int32, "uint64": np.uint64, "int64": np.int64}


def _reduce_kernel(rank: int, nbytes: int, op: str) -> str:
    src = _kernel(rank, nbytes, store=True)
    old = f"cp.async.bulk.tensor.{rank}d.global.shared::cta.tile.bulk_group"
    assert old in src
    return src.replace(old, f"cp.reduce.async.bulk.tensor.{rank}d.global.shared::cta.{op}.tile.bulk_group")


def _model(op: str, a: int, b: int, bits: int, signed: bool) -> int:
    """One element, from the ISA's operation descriptions, on Python integers."""
    mask = (1 << bits) - 1
    ua, ub = a & mask, b & mask
    sa = ua - (1 << bits) if signed and ua >> (bits - 1) else ua
    sb = ub - (1 << bits) if signed and ub >> (bits - 1) else ub
    r = {"and": ua & ub, "or": ua | ub, "xor": ua ^ ub, "add": ua + ub,
         "min": min(sa, sb), "max": max(sa, sb),
         "inc": 0 if ua >= ub else ua + 1,
         "dec": ub if ua == 0 or ua > ub else ua - 1}[op]
    return r & mask


# (dtype, logical shape [d_{r-1} .. d_0], box dim 0 first, element strides, coordinates)
CASES = [
    ("uint32", (40,), (16,), (1,), (30,)),
    ("int32", (10, 37), (8, 4), (1, 1), (33, 8)),
    ("uint64", (6, 5, 6), (2, 4, 2), (1, 2, 1), (5, -1, 5)),
    ("int64", (3, 4, 5, 6), (2, 3, 2, 2), (1, 1, 2, 1), (5, -2, 3, 1)),
    ("uint32", (2, 3, 4, 5, 8), (4, 2, 3, 2, 2), (2, 1, 1, 1, 1), (6, 4, 2, 2, 1)),
]
OPS = {"uint32": ["add", "min", "max", "inc", "dec", "and", "or", "xor"],
       "int32": ["add", "min", "max", "xor"], "uint64": ["add", "max", "and"], "int64": ["min", "max", "or"]}


def _check(device, case, op):
    dtype, shape, box, estr, coords = case
    bits = np.dtype(dtype).itemsize * 8
    signed = dtype.startswith("int")
    full, _ = _tensor(dtype, shape)
    rng = np.random.default_rng(hash((op, dtype, len(shape))) % 2**32)
    # values spanning sign and wraparound (large, negative, small, equal) so every comparison matters
    full[...] = rng.integers(-2**(bits - 1) if signed else 0, 2**(bits - 1) if signed else 2**bits - 1,
                             size=full.shape, dtype=np.int64 if signed else np.uint64).astype(dtype)
    if op in ("inc", "dec"):
        full[...] = rng.integers(0, 12, size=full.shape).astype(dtype)
    d = ptxvm.to_device(full)
    tmap = ptxvm.TensorMap.tiled(dtype, len(shape), d.ptr, shape[::-1], _strides(full), box, estr)
    count = [-(-b // e) for b, e in zip(box, estr)][::-1]
    n = int(np.prod(count))
    if op in ("inc", "dec"):
        tile = rng.integers(0, 12, size=n).astype(dtype).reshape(count)
    else:
        tile = full.reshape(-1)[rng.integers(0, full.size, size=n)].reshape(count)   # some equal pairs
        tile ^= rng.integers(0, 4, size=n).astype(dtype).reshape(count)
    want = full.copy()
    axes = [np.arange(coords[k], coords[k] + box[k], estr[k]) for k in range(len(shape))][::-1]
    written = 0
    for idx in np.ndindex(*tile.shape):
        pos = tuple(int(axes[k][idx[k]]) for k in range(len(shape)))
        if all(0 <= p < s for p, s in zip(pos, shape)):
            r = _model(op, int(want[pos]), int(tile[idx]), bits, signed)
            want[pos] = np.array(r, dtype=np.uint64 if bits == 64 else np.uint32).view(dtype)
            written += 1
    assert 0 < written < n                       # the box overhangs the tensor on purpose
    _run(_reduce_kernel(len(shape), tile.nbytes, op), tmap, tile.reshape(-1).view(np.uint8).copy(), coords, device)
    np.testing.assert_array_equal(d.copy_to_host(), want)


@pytest.mark.parametrize("device", EXECUTORS)
@pytest.mark.parametrize("op", OPS["uint32"])
def test_reduce_uint32_every_op(device, op):
    _check(device, CASES[0], op)


@pytest.mark.parametrize("device", EXECUTORS)
@pytest.mark.parametrize("case,op", [(c, o) for c in CASES[1:] for o in OPS[c[0]][:2]],
                         ids=lambda v: v if isinstance(v, str) else f"{len(v[1])}d-{v[0]}")
def test_reduce_ranks_and_types(device, case, op):
    _check(device, case, op)


@pytest.mark.parametrize("device", EXECUTORS)
def test_float_map_traps_naming_the_instruction(device):
    d = ptxvm.to_device(np.zeros(64, np.float32))
    tmap = ptxvm.TensorMap.tiled("float32", 1, d.ptr, (64,), (), (16,), (1,))
    with pytest.raises(PtxError, match="cp.reduce.async.bulk"):
        _run(_reduce_kernel(1, 64, "add"), tmap, np.zeros(64, np.uint8), (0,), device)


@pytest.mark.parametrize("device", EXECUTORS)
def test_inc_on_int32_map_traps(device):
    d = ptxvm.to_device(np.zeros(64, np.int32))
    tmap = ptxvm.TensorMap.tiled("int32", 1, d.ptr, (64,), (), (16,), (1,))
    with pytest.raises(PtxError, match="cp.reduce.async.bulk"):
        _run(_reduce_kernel(1, 64, "inc"), tmap, np.zeros(64, np.uint8), (0,), device)


@pytest.mark.parametrize("target", ["gfx90a", "gfx1100"])
def test_amd_refuses_by_name(target):
    with pytest.raises(PtxError, match=r"cp\.reduce\.async\.bulk\.tensor.*host JIT only") as e:
        ptxvm.compile(_reduce_kernel(2, 64, "add"), target=target)
    assert ":" in str(e.value).splitlines()[0] or getattr(e.value, "line", None)
