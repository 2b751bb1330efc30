"""A minimal ELF64 reader: the header, sections, notes and dynamic symbols of a code object.

Only what ``check`` needs to verify an AMDGPU code object; malformed files raise
``ElfError`` rather than ``struct.error`` or ``IndexError``.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

EM_AMDGPU = 224
ET_DYN = 3
ELFOSABI_AMDGPU_HSA = 64
SHT_NOTE, SHT_DYNSYM = 7, 11
STT_OBJECT, STT_FUNC = 1, 2


class ElfError(ValueError):
    pass


@dataclass(frozen=True)
class Section:
    name: str
    type: int
    offset: int
    size: int
    link: int
    entsize: int


@dataclass(frozen=True)
class Note:
    owner: str
    type: int
    desc: bytes


@dataclass(frozen=True)
class Symbol:
    name: str
    value: int
    size: int
    type: int          # STT_*
    bind: int          # STB_*
    shndx: int


@dataclass(frozen=True)
class ElfFile:
    osabi: int
    abi_version: int
    type: int
    machine: int
    flags: int
    sections: tuple[Section, ...]
    notes: tuple[Note, ...]
    dynsym: tuple[Symbol, ...]

    def symbol(self, name: str) -> Symbol | None:
        return next((s for s in self.dynsym if s.name == name), None)


def _unpack(fmt: str, data: bytes, offset: int) -> tuple:
    try:
        return struct.unpack_from(fmt, data, offset)
    except struct.error:
        raise ElfError(f"truncated ELF file (reading {struct.calcsize(fmt)} bytes at {offset})") from None


def _cstr(data: bytes, offset: int) -> str:
    end = data.find(b"\0", offset)
    if offset >= len(data) or end < 0:
        raise ElfError(f"string table reference {offset} out of range")
    return data[offset:end].decode("utf-8", "replace")


def _notes(blob: bytes) -> list[Note]:
    out, at = [], 0
    while at + 12 <= len(blob):
        namesz, descsz, ntype = _unpack("<III", blob, at)
        at += 12
        name = blob[at:at + namesz].rstrip(b"\0").decode("utf-8", "replace")
        at += (namesz + 3) & ~3
        desc = blob[at:at + descsz]
        if len(desc) != descsz:
            raise ElfError("truncated ELF note")
        at += (descsz + 3) & ~3
        out.append(Note(name, ntype, bytes(desc)))
    return out


def read_elf(data: bytes) -> ElfFile:
    if len(data) < 64 or data[:4] != b"\x7fELF":
        raise ElfError("not an ELF file")
    if data[4] != 2 or data[5] != 1:
        raise ElfError("not a 64-bit little-endian ELF file")
    osabi, abi_version = data[7], data[8]
    e_type, machine, _version, _entry, _phoff, shoff, flags, _ehsize, _phentsize, _phnum, shentsize, shnum, \
        shstrndx = _unpack("<HHIQQQIHHHHHH", data, 16)
    if shnum and shentsize != 64:
        raise ElfError(f"unexpected section header size {shentsize}")
    raw = [_unpack("<IIQQQQIIQQ", data, shoff + i * 64) for i in range(shnum)]
    if shnum and not 0 <= shstrndx < shnum:
        raise ElfError("section name table index out of range")

    def contents(h: tuple) -> bytes:
        off, size = h[4], h[5]
        if off + size > len(data):
            raise ElfError("section extends past the end of the file")
        return data[off:off + size]

    names = contents(raw[shstrndx]) if shnum else b""
    sections = tuple(Section(_cstr(names, h[0]), h[1], h[4], h[5], h[6], h[9]) for h in raw)
    notes: list[Note] = []
    dynsym: list[Symbol] = []
    for h, sec in zip(raw, sections):
        if sec.type == SHT_NOTE:
            notes += _notes(contents(h))
        elif sec.type == SHT_DYNSYM:
            if not 0 <= sec.link < shnum:
                raise ElfError("symbol table names a missing string table")
            strtab, body = contents(raw[sec.link]), contents(h)
            for at in range(0, len(body) - 23, 24):
                name, info, _other, shndx, value, size = _unpack("<IBBHQQ", body, at)
                dynsym.append(Symbol(_cstr(strtab, name), value, size, info & 0xF, info >> 4, shndx))
    return ElfFile(osabi, abi_version, e_type, machine, flags, sections, tuple(notes), tuple(dynsym))
