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
