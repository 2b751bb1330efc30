"""The kernarg packing shared by the emu:* and hip executors (ptxvm/driver/kernarg.py), against
metadata, with the expected bytes written out by hand from the code object v5 ABI
(AMDGPUUsage, "Code Object V5 Metadata": the hidden arguments follow the explicit ones at the
next 8-byte boundary; from there block_count_x/y/z u32 at +0/+4/+8, group_size_x/y/z u16 at
+12/+14/+16, remainder_x/y/z u16 at +18/+20/+22, global_offset_x/y/z u64 at +40/+48/+56,
grid_dims u16 at +64, hostcall_buffer at +80, heap_v1 at +96, dynamic_lds_size u32 at +120,
queue_ptr at +200; 256 bytes in all). No GPU, no emulator needed (one cross-check with the
emulator tool's own packing skips without it)."""

from __future__ import annotations

import numpy as np
import pytest

from ptxvm.driver import kernarg
from ptxvm.driver.api import Param
from ptxvm.errors import LaunchError

# kernel k(.u64 p, .f32 x, .align 8 .b8 s[12], .u16 h, .u64 q): explicit args at 0, 8, 16, 28, 32
# (each at its alignment), 40 bytes; the hidden block from 40.
PARAMS = (Param("p", "u64", 8, 8), Param("x", "f32", 4, 4), Param("s", "b8", 12, 8, (12,)),
          Param("h", "u16", 2, 2), Param("q", "u64", 8, 8))
H = 40
META = {"name": "k", "kernarg_size": H + 256, "args": [
    {"name": "p", "offset": 0, "size": 8, "kind": "by_value"},
    {"name": "x", "offset": 8, "size": 4, "kind": "by_value"},
    {"name": "s", "offset": 16, "size": 12, "kind": "by_value"},
    {"name": "h", "offset": 28, "size": 2, "kind": "by_value"},
    {"name": "q", "offset": 32, "size": 8, "kind": "by_value"},
    *({"offset": H + o, "size": s, "kind": k} for o, s, k in [
        (0, 4, "hidden_block_count_x"), (4, 4, "hidden_block_count_y"), (8, 4, "hidden_block_count_z"),
        (12, 2, "hidden_group_size_x"), (14, 2, "hidden_group_size_y"), (16, 2, "hidden_group_size_z"),
        (18, 2, "hidden_remainder_x"), (20, 2, "hidden_remainder_y"), (22, 2, "hidden_remainder_z"),
        (40, 8, "hidden_global_offset_x"), (48, 8, "hidden_global_offset_y"), (56, 8, "hidden_global_offset_z"),
        (64, 2, "hidden_grid_dims"), (80, 8, "hidden_hostcall_buffer"), (96, 8, "hidden_heap_v1"),
        (120, 4, "hidden_dynamic_lds_size"), (200, 8, "hidden_queue_ptr")])]}


def _expected() -> bytearray:
    """grid (3, 2, 1), block (64, 2, 1), 384 bytes of dynamic LDS, x = 1.5, s = 00..0b, h = 0xbeef."""
    e = bytearray(H + 256)
    e[8:12] = bytes.fromhex("0000c03f")                 # 1.5f: sign 0, exponent 127, mantissa 0x400000
    e[16:28] = bytes(range(12))
    e[28:30] = bytes.fromhex("efbe")
    e[H + 0:H + 12] = bytes.fromhex("03000000" "02000000" "01000000")
    e[H + 12:H + 18] = bytes.fromhex("4000" "0200" "0100")
    e[H + 64:H + 66] = bytes.fromhex("0200")              # the y axis has 2 x 2 threads: 2 dimensions
    e[H + 120:H + 124] = bytes.fromhex("80010000")        # 384
    return e


def test_all_argument_kinds_and_hidden_arguments_by_hand():
    a = np.zeros(64, np.float32)
    b = np.zeros(8, np.int32)
    ka = kernarg.pack(META, PARAMS, (a, 1.5, bytes(range(12)), np.uint16(0xBEEF), b), (3, 2, 1), (64, 2, 1), 384)
    assert ka.data == bytes(_expected())
    assert ka.explicit_size == 40
    assert len(ka.buffers) == 2 and {id(m[1]) for buf in ka.buffers for m in buf.members} == {id(a), id(b)}
    filled = ka.fill([0x7F00_0000_1000 if buf.members[0][1] is a else 0x7F00_0000_2000 for buf in ka.buffers])
    assert filled[0:8] == bytes.fromhex("00100000007f0000")     # little-endian 0x7f0000001000
    assert filled[32:40] == bytes.fromhex("00200000007f0000")
    assert filled[8:32] == bytes(_expected())[8:32] and filled[40:] == bytes(_expected())[40:]
    assert set(ka.runtime_filled) == {"hidden_hostcall_buffer", "hidden_heap_v1", "hidden_queue_ptr"}
    assert isinstance(ka.values[0], np.ndarray) and ka.values[1] == bytes.fromhex("0000c03f")


def test_overlapping_arrays_share_one_buffer_at_their_offsets():
    a = np.zeros(64, np.float32)
    ka = kernarg.pack(META, PARAMS, (a, 0.0, bytes(12), 0, a[4:]), (1, 1, 1), (1, 1, 1))
    assert len(ka.buffers) == 1 and ka.buffers[0].nbytes == 256
    filled = ka.fill([0x1000])
    assert filled[0:8] == bytes.fromhex("0010000000000000")
    assert filled[32:40] == bytes.fromhex("1010000000000000")    # 4 floats = 16 bytes further
    assert filled[H + 64:H + 66] == bytes.fromhex("0100")          # a 1x1x1 launch has 1 dimension


@pytest.mark.parametrize("grid, block, dims", [((1, 1, 1), (1, 1, 1), 1), ((1, 1, 2), (1, 1, 1), 3),
                                               ((1, 1, 1), (1, 2, 1), 2), ((5, 1, 1), (1, 1, 1), 1)])
def test_grid_dims(grid, block, dims):
    assert kernarg.grid_dims(grid, block) == dims


@pytest.mark.parametrize("args, says", [
    ((np.zeros(4, np.float32), np.zeros(2, np.float32), bytes(12), 0, None), "64-bit pointer"),
    ((np.zeros(4, np.float32), 1.5, bytes(12), 70000, np.zeros(1)), "does not fit .u16"),
    ((np.zeros(4, np.float32), 1.5, bytes(11), 1, np.zeros(1)), "12-byte by-value"),
    ((np.zeros(4, np.float32), "1.5", bytes(12), 1, np.zeros(1)), "(a float)"),
    ((np.zeros((4, 4), np.float32)[:, 1], 1.5, bytes(12), 1, np.zeros(1)), "C-contiguous"),
    ((np.zeros(4, object), 1.5, bytes(12), 1, np.zeros(1)), "Python objects"),
])
def test_bad_arguments_name_the_parameter(args, says):
    with pytest.raises(LaunchError, match=r"argument `\w`") as e:
        kernarg.pack(META, PARAMS, args, (1, 1, 1), (1, 1, 1))
    assert says in str(e.value)


def test_device_array_is_refused_with_the_way_out():
    import ptxvm
    d = ptxvm.to_device(np.zeros(4, np.float32))
    with pytest.raises(LaunchError, match=r"`p`.*DeviceArray.*emu:gfx942.*copy_to_host"):
        kernarg.pack(META, PARAMS, (d, 1.5, bytes(12), 1, np.zeros(1)), (1, 1, 1), (1, 1, 1), device="emu:gfx942")


def test_metadata_that_disagrees_is_refused():
    short = dict(META, args=META["args"][1:])
    with pytest.raises(LaunchError, match="4 explicit arguments, the PTX declares 5"):
        kernarg.pack(short, PARAMS, (np.zeros(1),) * 5, (1, 1, 1), (1, 1, 1))
    odd = dict(META, args=[dict(a, size=2) if a.get("kind") == "hidden_block_count_x" else a for a in META["args"]])
    with pytest.raises(LaunchError, match="hidden_block_count_x.*2 bytes.*v5 gives it 4"):
        kernarg.pack(odd, PARAMS, (np.zeros(1), 1.5, bytes(12), 1, np.zeros(1)), (1, 1, 1), (1, 1, 1))


# ------------------------------------------------------------------ real code objects

PTX = """
.version 7.0
.target sm_80
.address_size 64
.extern .shared .align 4 .b8 dyn[];
.visible .entry k(.param .u64 p, .param .u32 n)
{
  .reg .b64 %rd<4>; .reg .b32 %r<8>;
  ld.param.u64 %rd1, [p];
  ld.param.u32 %r7, [n];
  mov.u32 %r1, %ntid.x; mov.u32 %r2, %ctaid.x; mov.u32 %r3, %tid.x; mov.u32 %r5, %nctaid.x;
  mad.lo.s32 %r4, %r1, %r2, %r3;
  add.u32 %r4, %r4, %r5;
  add.u32 %r4, %r4, %r7;
  st.shared.u32 [dyn], %r4;
  cvta.to.global.u64 %rd2, %rd1;
  mul.wide.u32 %rd3, %r4, 4;
  add.u64 %rd2, %rd2, %rd3;
  st.global.u32 [%rd2], %r4;
  ret;
}
"""


@pytest.fixture(scope="module")
def code_object():
    pytest.importorskip("llvmlite")
    pytest.importorskip("ziglang")
    import ptxvm
    return ptxvm.compile(PTX, target="gfx942")


def test_a_translated_kernels_hidden_arguments_land_where_v5_puts_them(code_object):
    """Explicit args p (8 bytes at 0) and n (4 at 8): the hidden block starts at 16."""
    ka = kernarg.pack(code_object.metadata["k"], (Param("p", "u64", 8, 8), Param("n", "u32", 4, 4)),
                      (np.zeros(4096, np.uint32), np.uint32(0xA1B2C3D4)), (7, 1, 1), (96, 1, 1), 20)
    d = ka.data
    assert d[8:12] == bytes.fromhex("d4c3b2a1")
    assert d[16:20] == bytes.fromhex("07000000") and d[28:30] == bytes.fromhex("6000")
    assert d[16 + 120:16 + 124] == bytes.fromhex("14000000")
    assert ka.explicit_size == 12 and len(d) == code_object.metadata["k"]["kernarg_size"]


def test_the_emulator_tool_packs_the_same_bytes(code_object):
    """Cross-check with the emulator tool's own kernarg (its private _prepare: a test tool):
    every byte equal except the pointer slots and queue_ptr, which hold addresses."""
    from ptxvm.driver.executors import emu
    if emu.why_unavailable():
        pytest.skip(emu.why_unavailable())
    tool = emu._tool()
    out = np.zeros(4096, np.uint32)
    params = (Param("p", "u64", 8, 8), Param("n", "u32", 4, 4))
    for grid, block, dyn in [((7, 1, 1), (96, 1, 1), 20), ((2, 3, 4), (8, 4, 2), 0)]:
        ka = kernarg.pack(code_object.metadata["k"], params, (out, np.uint32(5)), grid, block, dyn)
        plan, spec, _ = tool._prepare(tool.parse_code_object(code_object.hsaco), "k", grid, block, list(ka.values),
                                      dyn, None, None)
        theirs = dict(plan.init)[spec["kernarg_off"]][:len(ka.data)]
        addresses = {o for o, _, _ in ka.pointers} | {int(a["offset"]) for a in code_object.metadata["k"]["args"]
                                                     if a["kind"] == "hidden_queue_ptr"}
        mask = [not any(o <= i < o + 8 for o in addresses) for i in range(len(ka.data))]
        assert [x for x, m in zip(ka.data, mask) if m] == [x for x, m in zip(theirs, mask) if m]
