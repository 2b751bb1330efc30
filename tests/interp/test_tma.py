"""cp.async.bulk.tensor (PTX ISA 9.0 §9.7.9.25.5.2), tile mode, on the interpreter and the host JIT,
against tests/models/tensormap.py (an independent numpy model of the box copy)."""
import shutil
import subprocess

import numpy as np
import pytest

import ptxvm
from ptxvm.errors import PtxError
from tests.models.tensormap import load_box

EXECUTORS = ["interp", "cpu"]


def _kernel(rank: int, nbytes: int, store: bool, symbol_map: bool = False) -> str:
    """Thread 0 copies one box: a load waits on the mbarrier then writes the tile's bytes to `out`;
    a store first fills the tile from `buf`, then writes the box back through the map."""
    coords = ", ".join(f"%r{10 + k}" for k in range(rank))
    loads = "\n".join(f"    ld.param.s32 %r{10 + k}, [c{k}];" for k in range(rank))
    params = ", ".join(f".param .s32 c{k}" for k in range(rank))
    tmap = "tmap" if symbol_map else "%rd2"
    copy = ("    ld.shared.u8 %r5, [%r7];\n    st.global.u8 [%rd5], %r5;" if not store else
            "    ld.global.u8 %r5, [%rd5];\n    st.shared.u8 [%r7], %r5;")
    byte_loop = f"""    mov.u32 %r6, 0;
COPY:
    add.u32 %r7, %r3, %r6;
    cvt.u64.u32 %rd4, %r6;
    add.u64 %rd5, %rd3, %rd4;
{copy}
    add.u32 %r6, %r6, 1;
    setp.lt.u32 %p3, %r6, {nbytes};
    @%p3 bra COPY;"""
    if store:
        body = f"""{byte_loop}
    fence.proxy.async.shared::cta;
    cp.async.bulk.tensor.{rank}d.global.shared::cta.tile.bulk_group [{tmap}, {{{coords}}}], [%r3];
    cp.async.bulk.commit_group;
    cp.async.bulk.wait_group.read 0;"""
    else:
        body = f"""    mov.u32 %r2, bar;
    mbarrier.init.shared::cta.b64 [%r2], 1;
    mbarrier.arrive.expect_tx.release.cta.shared::cta.b64 %rd6, [%r2], {nbytes};
    cp.async.bulk.tensor.{rank}d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%r3], [{tmap}, {{{coords}}}], [%r2];
    mov.u32 %r4, 0;
WAIT:
    mbarrier.try_wait.parity.shared::cta.b64 %p2, [%r2], %r4;
    @!%p2 bra WAIT;
{byte_loop}"""
    return f""".version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .align 64 .b8 tmap[128], .param .u64 buf, {params})
{{
    .reg .pred %p<4>;
    .reg .b32 %r<20>;
    .reg .b64 %rd<8>;
    .shared .align 1024 .b8 tile[{nbytes}];
    .shared .align 8 .b64 bar;
    mov.u64 %rd1, tmap;
    cvta.param.u64 %rd2, %rd1;
    ld.param.u64 %rd3, [buf];
    mov.u32 %r3, tile;
{loads}
{body}
    ret;
}}
"""


def _swizzled(k: int, span: int) -> int:
    """Where the swizzle (§5.5.6) puts byte k of a box: shared memory in 128-byte lines of eight
    16-byte chunks; the chunk index is xored with the line index modulo span/16 (the pattern
    repeats every span/16 lines: 256 bytes for 32B, 512 for 64B, 1024 for 128B)."""
    line, chunk = k // 128, (k // 16) % 8
    return line * 128 + (chunk ^ (line % (span // 16))) * 16 + k % 16


def _run(src, tmap, buf, coords, device):
    k = ptxvm.Module(src)["k"]
    k((1,), (1,), (tmap, buf, *[np.int32(c) for c in coords]), device=device)


# (dtype, logical shape [d_{r-1} .. d_0], box dim 0 first, element strides, coordinates)
CASES = [
    ("float32", (40,), (16,), (1,), (-4,)),
    ("float32", (10, 37), (8, 4), (1, 1), (33, 8)),
    ("uint16", (6, 5, 24), (8, 4, 2), (1, 2, 1), (20, -1, 5)),
    ("float64", (3, 4, 5, 6), (2, 3, 2, 2), (1, 1, 2, 1), (5, -2, 3, 1)),
    ("uint8", (2, 3, 4, 5, 32), (16, 2, 3, 2, 2), (2, 1, 1, 1, 1), (20, 4, 2, 2, 1)),
]


def _tensor(dtype, shape, pad: int = 16):
    """A tensor of ``shape`` whose rows (dimension 0) are padded to a 16-byte multiple plus ``pad``."""
    itemsize = np.dtype(dtype).itemsize
    row = -(-shape[-1] * itemsize // 16) * 16 + pad
    full = np.zeros(shape[:-1] + (row // itemsize,), dtype)
    rng = np.random.default_rng(len(shape))
    vals = rng.integers(1, 120, size=full.shape)
    full[...] = vals.astype(dtype)
    return full, full[..., :shape[-1]]


def _strides(full):
    return tuple(full.strides[::-1][1:])


@pytest.mark.parametrize("device", EXECUTORS)
@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{len(c[1])}d-{c[0]}")
def test_load_box_with_out_of_bounds_fill(device, case):
    dtype, shape, box, estr, coords = case
    full, logical = _tensor(dtype, shape)
    d = ptxvm.to_device(full)
    tmap = ptxvm.TensorMap.tiled(dtype, len(shape), d.ptr, shape[::-1], _strides(full), box, estr)
    want = load_box(logical, coords, box, estr)
    out = np.zeros(want.nbytes, np.uint8)
    _run(_kernel(len(shape), want.nbytes, store=False), tmap, out, coords, device)
    np.testing.assert_array_equal(out.view(dtype).reshape(want.shape), want)


@pytest.mark.parametrize("device", EXECUTORS)
def test_load_nan_fill_and_map_as_param_symbol(device):
    full, logical = _tensor("float32", (9, 12))
    d = ptxvm.to_device(full)
    tmap = ptxvm.TensorMap.tiled("float32", 2, d.ptr, (12, 9), _strides(full), (8, 4), (1, 1),
                                 oob_fill="nan_request_zero_fma")
    want = load_box(logical, (6, 7), (8, 4), (1, 1), fill=np.float32(np.nan))
    out = np.zeros(want.nbytes, np.uint8)
    _run(_kernel(2, want.nbytes, store=False, symbol_map=True), tmap, out, (6, 7), device)
    got = out.view(np.uint32).reshape(want.shape)
    np.testing.assert_array_equal(got, np.where(np.isnan(want), np.uint32(0x7FFFFFFF), want.view(np.uint32)))


@pytest.mark.parametrize("device", EXECUTORS)
@pytest.mark.parametrize("span,swz", [(32, "32b"), (64, "64b"), (128, "128b")])
def test_load_swizzle(device, span, swz):
    full, logical = _tensor("uint8", (32, span), pad=0)
    d = ptxvm.to_device(full)
    tmap = ptxvm.TensorMap.tiled("uint8", 2, d.ptr, (span, 32), _strides(full), (span, 32), (1, 1), swizzle=swz)
    plain = load_box(logical, (0, 0), (span, 32), (1, 1)).reshape(-1)
    want = np.zeros_like(plain)
    for k in range(plain.size):
        want[_swizzled(k, span)] = plain[k]
    out = np.zeros(plain.size, np.uint8)
    _run(_kernel(2, plain.size, store=False), tmap, out, (0, 0), device)
    np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("device", EXECUTORS)
@pytest.mark.parametrize("case", CASES[1:3], ids=lambda c: f"{len(c[1])}d-{c[0]}")
def test_store_box_skips_out_of_bounds(device, case):
    dtype, shape, box, estr, coords = case
    full, logical = _tensor(dtype, shape)
    full[...] = 0
    d = ptxvm.to_device(full)
    tmap = ptxvm.TensorMap.tiled(dtype, len(shape), d.ptr, shape[::-1], _strides(full), box, estr)
    count = [-(-b // e) for b, e in zip(box, estr)][::-1]
    tile = (np.arange(int(np.prod(count))) + 1).astype(dtype).reshape(count)
    want = np.zeros_like(full)
    axes = [np.arange(coords[k], coords[k] + box[k], estr[k]) for k in range(len(shape))][::-1]
    for idx in np.ndindex(*tile.shape):
        pos = tuple(int(axes[k][idx[k]]) for k in range(len(shape)))
        if all(0 <= p < s for p, s in zip(pos, shape)):
            want[pos] = tile[idx]
    _run(_kernel(len(shape), tile.nbytes, store=True), tmap, tile.reshape(-1).view(np.uint8).copy(), coords, device)
    np.testing.assert_array_equal(d.copy_to_host(), want)


@pytest.mark.parametrize("device", EXECUTORS)
def test_garbage_map_is_a_clear_error(device):
    out = np.zeros(128, np.uint8)
    with pytest.raises(PtxError, match="tensor map"):
        _run(_kernel(2, 128, store=False), np.arange(128, dtype=np.uint8), out, (0, 0), device)


@pytest.mark.parametrize("device", EXECUTORS)
def test_rank_mismatch_is_a_clear_error(device):
    d = ptxvm.to_device(np.zeros(64, np.float32))
    tmap = ptxvm.TensorMap.tiled("float32", 1, d.ptr, (64,), (), (16,), (1,))
    with pytest.raises(PtxError, match="rank|tensor map"):
        _run(_kernel(2, 64, store=False), tmap, np.zeros(64, np.uint8), (0, 0), device)


def test_box_beyond_limits_is_refused_on_the_host():
    with pytest.raises(ValueError, match="box_dims"):
        ptxvm.TensorMap.tiled("float32", 2, 0x1000, (64, 64), (256,), (512, 4), (1, 1))


@pytest.mark.parametrize("device", EXECUTORS)
def test_im2col_is_refused_by_name(device):
    src = _kernel(3, 64, store=False).replace(".3d.shared::cluster.global.tile.", ".3d.shared::cluster.global.im2col.")
    src = src.replace("[%r2];\n    mov.u32 %r4", "[%r2], {%rs1};\n    mov.u32 %r4").replace(
        ".reg .b64 %rd<8>;", ".reg .b64 %rd<8>;\n    .reg .b16 %rs<2>;")
    with pytest.raises(PtxError, match="im2col"):
        _run(src, np.zeros(128, np.uint8), np.zeros(64, np.uint8), (0, 0, 0), device)


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="ptxas not installed")
@pytest.mark.parametrize("store", [False, True])
@pytest.mark.parametrize("rank", [1, 3, 5])
def test_ptxas_accepts_the_kernels(tmp_path, rank, store):
    p = tmp_path / "k.ptx"
    p.write_text(_kernel(rank, 256, store))
    r = subprocess.run(["ptxas", "-arch=sm_90", str(p), "-o", str(tmp_path / "k.cubin")], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("device", EXECUTORS)
def test_map_in_global_memory(device):
    """The map may live in .global memory (§9.7.9.25.5.2: a generic address of a map in .param,
    .const or .global): its 128 bytes in a device buffer, the kernel given that buffer's address."""
    full, logical = _tensor("float32", (10, 37))
    d = ptxvm.to_device(full)
    tmap = ptxvm.TensorMap.tiled("float32", 2, d.ptr, (37, 10), _strides(full), (8, 4), (1, 1))
    want = load_box(logical, (33, 8), (8, 4), (1, 1))
    out = np.zeros(want.nbytes, np.uint8)
    src = _kernel(2, want.nbytes, store=False).replace(".param .align 64 .b8 tmap[128]", ".param .u64 tmap").replace(
        "    mov.u64 %rd1, tmap;\n    cvta.param.u64 %rd2, %rd1;", "    ld.param.u64 %rd2, [tmap];")
    _run(src, np.frombuffer(tmap.encode(), np.uint8).copy(), out, (33, 8), device)
    np.testing.assert_array_equal(out.view(np.float32).reshape(want.shape), want)


def test_map_address_fault_is_the_same_on_both_executors():
    """A map operand 4 bytes past the parameter: misaligned, reported alike by both executors."""
    src = _kernel(2, 64, store=False).replace("cvta.param.u64 %rd2, %rd1;",
                                              "cvta.param.u64 %rd2, %rd1;\n    add.u64 %rd2, %rd2, 4;")
    texts = []
    for device in EXECUTORS:
        with pytest.raises(ptxvm.KernelFault) as e:
            _run(src, np.zeros(128, np.uint8), np.zeros(64, np.uint8), (0, 0), device)
        texts.append(str(e.value).splitlines()[0])
    assert texts[0] == texts[1] and "misaligned" in texts[0]
