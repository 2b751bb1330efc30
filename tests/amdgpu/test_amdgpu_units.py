"""Units of the AMDGPU translator that need no compile: target files, the MessagePack reader,
the ELF reader, occupancy arithmetic, the data layout."""

from __future__ import annotations

import math
import struct

import pytest

from ptxvm.amdgpu import available, load_target
from ptxvm.amdgpu.elf import ElfError, read_elf
from ptxvm.amdgpu.lowering import data_layout
from ptxvm.amdgpu.msgpack import MsgpackError, unpackb
from ptxvm.amdgpu.targets import Occupancy, UnknownTargetError

ALL = ["gfx1030", "gfx1100", "gfx906", "gfx908", "gfx90a", "gfx942"]


def test_every_target_file_loads():
    assert available() == ALL
    for name in ALL:
        t = load_target(name)
        assert t.name == t.cpu == name and t.triple == "amdgcn-amd-amdhsa"
        assert t.code_object_version == 5 and t.abi_version == 3
        assert t.wave_size == (32 if name.startswith("gfx1") else 64)
        assert t.llvm_features.endswith(f"+wavefrontsize{t.wave_size}")
        assert t.lds_bytes == 65536
        assert all(e.count(".") == 2 for e in t.native_atomics)


def test_target_facts_differ_where_the_hardware_does():
    assert load_target("gfx90a").has_native_atomic("global", "add", "f32")
    assert not load_target("gfx1030").has_native_atomic("global", "add", "f32")
    assert load_target("gfx1100").cycle_counter_bits == 20
    assert {load_target(n).elf_mach for n in ALL} == {0x36, 0x41, 0x2F, 0x30, 0x3F, 0x4C}


def test_unknown_target_names_the_known_ones():
    with pytest.raises(UnknownTargetError) as info:
        load_target("gfx803")
    assert "gfx90a" in str(info.value) and "gfx1030" in str(info.value)


@pytest.mark.parametrize("name", ["gfx90a", "gfx1030"])
def test_data_layout_puts_the_stack_in_private_memory(name):
    t = load_target(name)
    dl = data_layout(t.triple, t.cpu, t.llvm_features)
    assert "-A5" in dl and "p5:32:32" in dl and "p3:32:32" in dl


@pytest.mark.parametrize("vgprs, agprs, sgprs, expected", [
    (8, 0, 16, 8),           # register-light: the hardware's maximum
    (64, 0, 16, 8),          # 512 / 64 = 8
    (65, 0, 16, 7),          # rounded to 72: 512 // 72 = 7
    (128, 0, 16, 4),
    (256, 0, 16, 2),
    (128, 128, 16, 2),       # unified file: 128 + 128 = 256 registers
    (512, 0, 16, 1),
])
def test_occupancy_on_gfx90a(vgprs, agprs, sgprs, expected):
    assert load_target("gfx90a").occupancy.waves(vgprs, agprs, sgprs) == expected


def test_occupancy_sgpr_limit_on_gcn_and_none_on_rdna():
    occ = Occupancy(10, 256, 4, False, 800, 16)
    assert occ.waves(4, 0, 96) == 8           # 800 // 96 = 8
    rdna = load_target("gfx1030").occupancy
    assert rdna.waves(4, 0, 106) == rdna.max_waves_per_simd
    assert rdna.waves(256, 0, 10) == 4        # 1024 // 256


# ---------------------------------------------------------------------- MessagePack

@pytest.mark.parametrize("data, value", [
    (b"\x00", 0), (b"\x7f", 127), (b"\xff", -1), (b"\xe0", -32),
    (b"\xcc\xc8", 200), (b"\xcd\x01\x00", 256), (b"\xce\x00\x01\x00\x00", 65536),
    (b"\xcf" + (2**40).to_bytes(8, "big"), 2**40),
    (b"\xd0\x80", -128), (b"\xd1\x80\x00", -32768), (b"\xd2\xff\xff\xff\xfe", -2),
    (b"\xd3" + (-2**40).to_bytes(8, "big", signed=True), -2**40),
    (b"\xc0", None), (b"\xc2", False), (b"\xc3", True),
    (b"\xca" + struct.pack(">f", 1.5), 1.5), (b"\xcb" + struct.pack(">d", -0.25), -0.25),
    (b"\xa3abc", "abc"), (b"\xd9\x03xyz", "xyz"), (b"\xda\x00\x01z", "z"), (b"\xdb\x00\x00\x00\x00", ""),
    (b"\xc4\x02\x01\x02", b"\x01\x02"), (b"\xc5\x00\x00", b""), (b"\xc6\x00\x00\x00\x01\xff", b"\xff"),
    (b"\x92\x01\xa1a", [1, "a"]), (b"\xdc\x00\x01\xc0", [None]), (b"\xdd\x00\x00\x00\x00", []),
    (b"\x82\xa1a\x01\xa1b\x90", {"a": 1, "b": []}), (b"\xde\x00\x01\x01\x02", {1: 2}),
    (b"\xdf\x00\x00\x00\x00", {}),
])
def test_msgpack_values(data, value):
    got = unpackb(data)
    assert got == value and type(got) is type(value)
    if isinstance(value, float):
        assert math.copysign(1, got) == math.copysign(1, value)


@pytest.mark.parametrize("data, message", [
    (b"", "truncated"), (b"\xa3ab", "truncated"), (b"\x92\x01", "truncated"), (b"\x01\x02", "after"),
    (b"\xc1", "unsupported"), (b"\xd4\x01\x02", "unsupported"), (b"\x81\x90\x01", "key"),
    (b"\xa2\xff\xfe", "UTF-8"), (b"\x91" * 100 + b"\xc0", "deeply"),
])
def test_msgpack_errors(data, message):
    with pytest.raises(MsgpackError, match=message):
        unpackb(data)


# ---------------------------------------------------------------------- ELF reader

def _elf_header(shoff: int = 0, shnum: int = 0, shstrndx: int = 0) -> bytes:
    ident = b"\x7fELF" + bytes([2, 1, 1, 64, 3]) + bytes(7)
    return ident + struct.pack("<HHIQQQIHHHHHH", 3, 224, 1, 0, 0, shoff, 0x3F, 64, 56, 0, 64, shnum, shstrndx)


def test_elf_header_only():
    elf = read_elf(_elf_header())
    assert (elf.machine, elf.type, elf.osabi, elf.abi_version, elf.flags) == (224, 3, 64, 3, 0x3F)
    assert elf.sections == () and elf.notes == () and elf.dynsym == ()


@pytest.mark.parametrize("data, message", [
    (b"\x7fELF", "not an ELF"), (b"MZ" + bytes(100), "not an ELF"),
    (b"\x7fELF" + bytes([1, 1]) + bytes(58), "64-bit little-endian"),
    (_elf_header(shoff=64, shnum=1), "truncated"),
    (_elf_header(shoff=64, shnum=1, shstrndx=5) + bytes(64), "out of range"),
])
def test_elf_errors(data, message):
    with pytest.raises(ElfError, match=message):
        read_elf(data)


# ---------------------------------------------------------------------- native f16 emitters

def _host_has_f16c() -> bool:
    try:
        with open("/proc/cpuinfo") as f:
            return " f16c" in f.read()
    except OSError:
        return False


@pytest.mark.skipif(not _host_has_f16c(), reason="evaluates LLVM half arithmetic on the host's F16C")
def test_native_f16_emitters_agree_with_the_integer_emitters():
    """On AMD GPUs the plain f16 forms are LLVM ``half`` operations (cvt_bits.native_f16).  Both
    versions are compiled for the host and compared bit for bit on random and special operands
    (subnormals, infinities, NaNs; packed halves).  The host evaluates ``half`` add/sub/mul in f32
    and rounds once more to f16, which is exact for these operations (24 >= 2 * 11 + 2 bits)."""
    import ctypes
    import random

    import llvmlite.binding as llvm
    from llvmlite import ir

    from ptxvm.lift.semantics import cvt, half

    i16, i32, i64, f32 = ir.IntType(16), ir.IntType(32), ir.IntType(64), ir.FloatType()
    cases = {
        "add": (2, lambda b, x, y: half.hadd(b, x, y, type="f16"), i16, i16),
        "sub": (2, lambda b, x, y: half.hsub(b, x, y, type="f16"), i16, i16),
        "mul": (2, lambda b, x, y: half.hmul(b, x, y, type="f16"), i16, i16),
        "mul2": (2, lambda b, x, y: half.hmul(b, x, y, type="f16x2"), i32, i32),
        "f2h": (1, lambda b, x: b.zext(cvt.cvt(b, b.bitcast(x, f32), dst="f16", src="f32", rnd="rn"), i32), i32, i32),
        "h2f": (1, lambda b, x: b.bitcast(cvt.cvt(b, x, dst="f32", src="f16"), i32), i16, i32),
        "h2d": (1, lambda b, x: b.bitcast(cvt.cvt(b, x, dst="f64", src="f16"), i64), i16, i64),
    }
    f64 = ir.DoubleType()
    for irnd in ("rni", "rzi", "rmi", "rpi"):
        for d in ("s32", "u32", "s64", "u16", "s8"):
            w = int(d[1:])
            cases[f"{irnd}_{d}_f32"] = (1, lambda b, x, irnd=irnd, d=d, w=w: b.zext(cvt.cvt(
                b, b.bitcast(x, f32), dst=d, src="f32", rnd=irnd), i64) if w < 64 else cvt.cvt(
                b, b.bitcast(x, f32), dst=d, src="f32", rnd=irnd), i32, i64)
            cases[f"{irnd}_{d}_f64"] = (1, lambda b, x, irnd=irnd, d=d, w=w: b.zext(cvt.cvt(
                b, b.bitcast(x, f64), dst=d, src="f64", rnd=irnd), i64) if w < 64 else cvt.cvt(
                b, b.bitcast(x, f64), dst=d, src="f64", rnd=irnd), i64, i64)
        cases[f"{irnd}_f32_f32"] = (1, lambda b, x, irnd=irnd: b.bitcast(cvt.cvt(
            b, b.bitcast(x, f32), dst="f32", src="f32", rnd=irnd), i32), i32, i32)
        cases[f"{irnd}_f64_f64"] = (1, lambda b, x, irnd=irnd: b.bitcast(cvt.cvt(
            b, b.bitcast(x, f64), dst="f64", src="f64", rnd=irnd), i64), i64, i64)
        cases[f"{irnd}_s32_f16"] = (1, lambda b, x, irnd=irnd: b.zext(cvt.cvt(
            b, x, dst="s32", src="f16", rnd=irnd), i64), i16, i64)
    cases["ftz_rzi_s32_f32"] = (1, lambda b, x: b.zext(cvt.cvt(b, b.bitcast(x, f32), dst="s32", src="f32",
                                                              rnd="rzi", ftz=True), i64), i32, i64)
    cases["f2d"] = (1, lambda b, x: b.bitcast(cvt.cvt(b, b.bitcast(x, f32), dst="f64", src="f32"), i64), i32, i64)
    cases["d2f"] = (1, lambda b, x: b.bitcast(cvt.cvt(b, b.bitcast(x, f64), dst="f32", src="f64", rnd="rn"),
                                              i32), i64, i32)
    for src in ("s32", "u32", "s64", "u64", "s16"):
        it = ir.IntType(int(src[1:]))
        cases[f"i2f_{src}"] = (1, lambda b, x, src=src: b.bitcast(cvt.cvt(b, x, dst="f32", src=src, rnd="rn"), i32),
                               it, i32)
        cases[f"i2d_{src}"] = (1, lambda b, x, src=src: b.bitcast(cvt.cvt(b, x, dst="f64", src=src, rnd="rn"), i64),
                               it, i64)
    module = None
    for name, (n, body, arg, ret) in cases.items():
        texts = {}
        for native in (True, False):
            m = ir.Module()
            m.triple = "amdgcn-amd-amdhsa" if native else ""     # what the emitters look at
            fn = ir.Function(m, ir.FunctionType(ret, [arg] * n), f"{name}_{native}")
            b = ir.IRBuilder(fn.append_basic_block())
            b.ret(body(b, *fn.args))
            m.triple = ""
            texts[native] = str(m).replace(f"{name}_{native}", name)
            parsed = llvm.parse_assembly(str(m))
            if module is None:
                module = parsed
            else:
                module.link_in(parsed)
        assert texts[True] != texts[False], f"{name}: no native form on AMD GPUs"
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    tm = llvm.Target.from_default_triple().create_target_machine(
        cpu=llvm.get_host_cpu_name(), features=llvm.get_host_cpu_features().flatten(), opt=2)
    ee = llvm.create_mcjit_compiler(module, tm)
    ee.finalize_object()
    ctype = {16: ctypes.c_uint16, 32: ctypes.c_uint32, 64: ctypes.c_uint64}
    rng = random.Random(5)
    special = [0x7C00, 0xFC00, 0x7E00, 0x7C01, 0xFE12, 0, 0x8000, 1, 0x8001, 0x3FF, 0x7BFF, 0x3C00]

    def h() -> int:
        return rng.choice(special) if rng.random() < 0.1 else rng.getrandbits(16)

    def float_bits(width: int) -> int:
        fmt, ity = ("<f", "<I") if width == 32 else ("<d", "<Q")
        k = rng.random()
        if k < 0.1:
            return rng.choice([0, 1 << (width - 1), 1, (1 << (width - 1)) | 1]) if k < 0.05 else \
                struct.unpack(ity, struct.pack(fmt, rng.choice([float("inf"), float("-inf"), float("nan"),
                                                                 0.5, -0.5, 1.5, 2.5, -2.5, 2.0**31, -2.0**31,
                                                                 2.0**32, 2.0**63, -2.0**63, 2.0**64, 127.5,
                                                                 -128.5, 65535.5])))[0]
        if k < 0.6:
            x = rng.uniform(-1, 1) * 2.0 ** rng.randint(-30, 70)
            return struct.unpack(ity, struct.pack(fmt, x))[0]
        return rng.getrandbits(width)

    for name, (n, _body, arg, ret) in cases.items():
        native, integer = (ctypes.CFUNCTYPE(ctype[ret.width], *[ctype[arg.width]] * n)(
            ee.get_function_address(f"{name}_{v}")) for v in (True, False))
        for _ in range(20_000 if len(name) < 5 else 3_000):
            if name.startswith(("i2f", "i2d")):
                args = [rng.getrandbits(arg.width) if rng.random() < 0.5 else rng.getrandbits(rng.randint(1, 30))]
            elif name.endswith(("f32", "f64")) or name in ("f2d", "d2f"):
                args = [float_bits(arg.width)]
            elif arg.width == 16:
                args = [h() for _ in range(n)]
            elif name == "f2h":
                x = rng.uniform(-7e4, 7e4) * rng.choice([1, 1e-4, 1e-7, 1e-9])
                args = [struct.unpack("<I", struct.pack("<f", x))[0] if rng.random() < 0.7 else rng.getrandbits(32)]
            else:
                args = [h() | h() << 16 for _ in range(n)]
            assert native(*args) == integer(*args), (name, [hex(a) for a in args])


# ---------------------------------------------------------------------- by-value kernel parameters

BY_VALUE_PTX = """
.version 7.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 out, .param .u32 n, .param .f32 alpha, .param .u64 taken, .param .u64 halves,
                  .param .align 8 .b8 blob[16], .param .u32 twice)
{
  .reg .b32 %r<8>;
  .reg .f32 %f<4>;
  .reg .b64 %rd<8>;
  ld.param.u64 %rd1, [out];
  ld.param.u32 %r1, [n];
  ld.param.f32 %f1, [alpha];
  mov.u64 %rd2, taken;
  ld.u64 %rd3, [%rd2];
  ld.param.u32 %r2, [halves+4];
  ld.param.u32 %r3, [blob+8];
  ld.param.u32 %r4, [twice];
  ld.param.u32 %r5, [twice];
  add.s32 %r6, %r1, %r2;
  add.s32 %r6, %r6, %r3;
  add.s32 %r6, %r6, %r4;
  add.s32 %r6, %r6, %r5;
  cvt.u32.u64 %r7, %rd3;
  add.s32 %r6, %r6, %r7;
  st.global.u32 [%rd1], %r6;
  st.global.f32 [%rd1+4], %f1;
  ret;
}
"""


@pytest.mark.lld
def test_by_value_parameters_are_the_whole_reads_only():
    """Scalars read whole with ld.param (even twice) are passed by value; a parameter whose
    address is taken, one read in part, and an aggregate stay byref.  The code object's
    argument layout is the same either way (compile checks it against the PTX)."""
    import ptxvm
    from ptxvm.amdgpu.memory import by_value_params

    module = ptxvm.parse(BY_VALUE_PTX)
    assert by_value_params(module.kernels["k"]) == {"out", "n", "alpha", "twice"}
    for target in ("gfx90a", "gfx1030"):
        obj = ptxvm.compile(BY_VALUE_PTX, target)
        assert 'define amdgpu_kernel void @"k"(i64 %"out", i32 %"n", i32 %"alpha", [8 x i8] addrspace(4)* byref' \
            in obj.llvm_ir
        args = [(a["name"], a["offset"], a["size"]) for a in obj.metadata["k"]["args"][:7]]
        assert args == [("out", 0, 8), ("n", 8, 4), ("alpha", 12, 4), ("taken", 16, 8), ("halves", 24, 8),
                        ("blob", 32, 16), ("twice", 48, 4)]


@pytest.mark.lld
def test_brx_idx_translates_its_out_of_range_index_is_a_trap() -> None:
    # The lifter traps on an index past the `.branchtargets` list; AMD took every trap kind
    # but "trap" for `brkpt` and refused every brx.idx kernel (found by the emulator fuzz run).
    import ptxvm
    src = """.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 p)
{
    .reg .b32 %r<3>;
    .reg .b64 %rd<2>;
    ld.param.u64 %rd1, [p];
    mov.u32 %r1, %tid.x;               // any index: past 1 the dispatch traps
    ts: .branchtargets L0, L1;
    brx.idx %r1, ts;
L0: mov.u32 %r2, 10;
    bra DONE;
L1: mov.u32 %r2, 20;
DONE:
    st.global.u32 [%rd1], %r2;
    ret;
}
"""
    obj = ptxvm.compile(src, target="gfx90a")
    assert obj.hsaco[:4] == b"\x7fELF" and "s_trap" in obj.asm
    with pytest.raises(ptxvm.UnsupportedError, match="debugger breakpoint"):
        ptxvm.compile(src.replace("brx.idx %r1, ts;", "brkpt;\n    brx.idx %r1, ts;"), target="gfx90a")
