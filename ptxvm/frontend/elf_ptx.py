"""The PTX inside what nvcc writes: fatbins, cubins, and executables or shared libraries that
embed a fatbin.

Format facts (CUDA 13's nvcc and fatbinary, checked on their output; the layout is the one
cuobjdump and the CUDA driver read, undocumented by NVIDIA):

* A fatbin starts with a 16-byte header: magic ``0xBA55ED50`` (u32), version (u16), header size
  (u16), size of the entries that follow (u64). Several fatbins may follow one another (an
  executable's ``.nv_fatbin`` section holds one per translation unit, 8-byte aligned).
* Each entry: kind (u16: 1 PTX, 2 ELF/SASS), version (u16), header size (u32), payload size (u64,
  padded), compressed size (u32), ... , PTX ISA minor/major (u16, u16, at +24), the sm/compute
  number (u32, +28), flags (u64, +40: 0x2000 LZ4-compressed, 0x8000 zstd-compressed), the
  uncompressed size (u64, +56). The payload follows the entry header.
* A PTX payload is NUL-padded text; a compressed one is an LZ4 block (``--compress-mode=speed``)
  or a zstd frame (nvcc 13's default).
* A cubin (``nvcc -cubin``) is an ELF of machine ``EM_CUDA`` (190) and holds SASS only.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import struct
from dataclasses import dataclass

from ..errors import PtxError

FATBIN_MAGIC = 0xBA55ED50
ELF_MAGIC = b"\x7fELF"
EM_CUDA = 190
KIND_PTX, KIND_SASS = 1, 2
FLAG_LZ4, FLAG_ZSTD = 0x2000, 0x8000
MAX_RATIO = 1024    # a larger uncompressed size than this times the compressed one is damage
# Sections of a host ELF that hold fatbins: whole-program and relocatable (-rdc) device code.
FATBIN_SECTIONS = (".nv_fatbin", "__nv_relfatbin")


class NoPtxError(PtxError):
    """A file nvcc wrote that holds no PTX ptxvm could run (SASS only, or no device code)."""


@dataclass(frozen=True)
class PtxEntry:
    """One PTX entry of a fatbin: ``text`` is the PTX (decompressed), for ``compute_<arch>``."""
    arch: int
    version: tuple[int, int]
    text: bytes
    unit: int            # which fatbin of the file (translation unit) it came from

    @property
    def label(self) -> str:
        return f"compute_{self.arch}.ptx"


def is_binary(data: bytes) -> bool:
    """Whether ``data`` is an ELF or a fatbin (the inputs this module reads)."""
    return data[:4] == ELF_MAGIC or (len(data) >= 4 and struct.unpack_from("<I", data)[0] == FATBIN_MAGIC)


def extract_ptx(data: bytes, filename: str) -> PtxEntry:
    """The PTX ptxvm runs from an ELF or fatbin: of each translation unit's PTX entries the newest
    (highest compute_XX, then PTX ISA version), as the CUDA driver prefers the newest PTX a GPU
    can take. Raises ``NoPtxError`` (SASS only, no device code) or ``PtxError`` (malformed, or
    PTX of several translation units, which make several modules)."""
    entries, sass = ptx_entries(data, filename)
    if not entries:
        raise NoPtxError(_no_ptx_message(filename, sass), filename=filename)
    units = sorted({e.unit for e in entries})
    if len(units) > 1:
        raise PtxError(f"holds the PTX of {len(units)} translation units, which are separate "
                       f"modules; ptxvm loads one: take one with ptxvm.frontend.elf_ptx.ptx_entries(data, "
                       f"name) and ptxvm.Module(entry.text), or build each .cu with nvcc -ptx", filename=filename)
    return max(entries, key=lambda e: (e.arch, e.version))


def ptx_entries(data: bytes, filename: str) -> tuple[list[PtxEntry], list[int]]:
    """Every PTX entry of the file, and the sm numbers of its SASS entries."""
    if data[:4] == ELF_MAGIC:
        return _from_elf(data, filename)
    entries, sass, _ = _from_fatbins(data, filename, 0)
    return entries, sass


def _no_ptx_message(filename: str, sass: list[int]) -> str:
    if not sass:
        return "holds no CUDA device code (no fatbin or PTX inside)"
    sm = max(sass)
    archs = ", ".join(f"sm_{a}" for a in sorted(set(sass)))
    what = "cubin" if filename.endswith(".cubin") else "file"
    return (f"this {what} has no PTX, only SASS for {archs}, and ptxvm runs PTX; rebuild with "
            f"-gencode arch=compute_{sm},code=compute_{sm} (beside code=sm_{sm}), or nvcc -ptx")


# ------------------------------------------------------------------ ELF

def _from_elf(data: bytes, filename: str) -> tuple[list[PtxEntry], list[int]]:
    if data[4] != 2 or data[5] != 1:
        raise PtxError(f"a 32-bit or big-endian ELF; ptxvm reads 64-bit little-endian ELF files", filename=filename)
    machine, = struct.unpack_from("<H", data, 0x12)
    if machine == EM_CUDA:                 # a cubin: SASS only
        return [], [_cubin_sm(data)]
    entries: list[PtxEntry] = []
    sass: list[int] = []
    unit = 0
    for name, body in _sections(data, filename):
        if name in FATBIN_SECTIONS:
            e, s, unit = _from_fatbins(body, filename, unit)
            entries += e
            sass += s
    return entries, sass


def _cubin_sm(data: bytes) -> int:
    flags, = struct.unpack_from("<I", data, 0x30)
    # ELF ABI version 8 and later (CUDA 12.8+) keep the sm in bits 8-15, earlier ones in 0-7.
    return (flags >> 8) & 0xFF if data[8] >= 8 else flags & 0xFF


def _sections(data: bytes, filename: str):
    """(name, contents) of every section of a 64-bit little-endian ELF."""
    try:
        shoff, = struct.unpack_from("<Q", data, 0x28)
        shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
        headers = [struct.unpack_from("<IIQQQQ", data, shoff + i * shentsize) for i in range(shnum)]
        strtab = headers[shstrndx]
        names = data[strtab[4]:strtab[4] + strtab[5]]
    except (struct.error, IndexError):
        raise PtxError(f"a truncated or malformed ELF file (its section table is cut off)", filename=filename) from None
    for name_off, sh_type, _flags, _addr, offset, size in headers:
        if sh_type == 8:                   # SHT_NOBITS: no contents in the file
            continue
        end = names.find(b"\0", name_off)
        yield names[name_off:end].decode("latin-1"), data[offset:offset + size]


# ------------------------------------------------------------------ fatbin

def _from_fatbins(data: bytes, filename: str, unit: int) -> tuple[list[PtxEntry], list[int], int]:
    """The entries of one or more consecutive fatbins (each one translation unit, numbered from
    ``unit``), and the number of the next unit."""
    entries: list[PtxEntry] = []
    sass: list[int] = []
    off = 0
    while off + 16 <= len(data):
        magic, _version, header_size, size = struct.unpack_from("<IHHQ", data, off)
        if magic != FATBIN_MAGIC:
            if off == 0:
                raise PtxError(f"not a fatbin (no fatbin header at its start)", filename=filename)
            off += 8                       # padding between fatbins
            continue
        body = data[off + header_size:off + header_size + size]
        if len(body) != size:
            raise PtxError(f"a truncated fatbin ({len(body)} of {size} bytes of entries)", filename=filename)
        e, s = _entries(body, filename, unit)
        entries += e
        sass += s
        unit += 1
        off = (off + header_size + size + 7) & ~7
    return entries, sass, unit


def _entries(body: bytes, filename: str, unit: int) -> tuple[list[PtxEntry], list[int]]:
    entries: list[PtxEntry] = []
    sass: list[int] = []
    off = 0
    while off + 64 <= len(body):
        kind, _ver, header_size, payload_size, compressed_size = struct.unpack_from("<HHIQI", body, off)
        minor, major, arch = struct.unpack_from("<HHI", body, off + 24)
        flags, = struct.unpack_from("<Q", body, off + 40)
        full_size, = struct.unpack_from("<Q", body, off + 56)
        if header_size < 64 or off + header_size + payload_size > len(body):
            raise PtxError(f"a malformed fatbin entry at byte {off} (size past the end)", filename=filename)
        payload = body[off + header_size:off + header_size + payload_size]
        if kind == KIND_PTX:
            text = _decompress(payload, flags, compressed_size, full_size, filename)
            entries.append(PtxEntry(arch, (major, minor), text.rstrip(b"\0"), unit))
        elif kind == KIND_SASS:
            sass.append(arch)
        off += header_size + payload_size
    return entries, sass


def _decompress(payload: bytes, flags: int, compressed_size: int, full_size: int, filename: str) -> bytes:
    src = payload[:compressed_size] if compressed_size else payload
    if flags & (FLAG_LZ4 | FLAG_ZSTD) and full_size > min(MAX_RATIO * len(src) + 4096, 1 << 32):
        raise PtxError(f"a corrupt compressed PTX entry: its header says {full_size} bytes from "
                       f"{len(src)} compressed", filename=filename)
    try:
        if flags & FLAG_LZ4:
            out = lz4_block_decompress(src, full_size)
        elif flags & FLAG_ZSTD:
            out = zstd_decompress(src, full_size)
        else:
            return payload
    except PtxError as exc:
        raise PtxError(exc.message, filename=filename) from None
    if len(out) != full_size:
        raise PtxError(f"a compressed PTX entry decompressed to {len(out)} bytes, "
                       f"its header says {full_size}", filename=filename)
    return out


def lz4_block_decompress(src: bytes, size: int) -> bytes:
    """An LZ4 block (the format fatbinary's --compress-mode=speed writes): literals and matches."""
    out = bytearray()
    i, n = 0, len(src)
    try:
        while i < n:
            token = src[i]
            i += 1
            lit, i = _lz4_length(src, i, token >> 4)
            out += src[i:i + lit]
            i += lit
            if i >= n or len(out) >= size:         # the last sequence has literals only
                break
            dist = src[i] | src[i + 1] << 8
            i += 2
            if dist == 0 or dist > len(out):
                raise ValueError(f"match distance {dist} at {len(out)}")
            length, i = _lz4_length(src, i, token & 0xF)
            length += 4
            start = len(out) - dist
            if dist >= length:
                out += out[start:start + length]
            else:                                   # overlapping match: repeat the pattern
                for k in range(length):
                    out.append(out[start + k])
    except (IndexError, ValueError) as exc:
        raise PtxError(f"a corrupt LZ4-compressed PTX entry ({exc})") from None
    return bytes(out)


def _lz4_length(src: bytes, i: int, length: int) -> tuple[int, int]:
    if length == 15:
        while True:
            b = src[i]
            i += 1
            length += b
            if b != 255:
                break
    return length, i


def zstd_decompress(src: bytes, size: int) -> bytes:
    """A zstd frame, through whichever zstd is here: Python 3.14's compression.zstd, the
    ``zstandard`` package (ptxvm[cuda] installs it), or the system's libzstd."""
    for decode in (_zstd_stdlib, _zstd_package):
        try:
            return decode(src, size)
        except ImportError:
            continue
        except Exception as exc:  # noqa: BLE001 - each decoder has its own error class
            raise PtxError(f"a corrupt zstd-compressed PTX entry ({exc})") from None
    lib = _libzstd()
    if lib is None:
        raise PtxError("this fatbin's PTX is zstd-compressed (nvcc's default) and no zstd decoder is "
                       "installed: pip install 'ptxvm[cuda]' (or zstandard), or rebuild with nvcc "
                       "--compress-mode=none")
    dst = ctypes.create_string_buffer(size)
    n = lib.ZSTD_decompress(dst, size, src, len(src))
    if lib.ZSTD_isError(n):
        raise PtxError(f"a corrupt zstd-compressed PTX entry ({lib.ZSTD_getErrorName(n).decode()})")
    return dst.raw[:n]


def _zstd_stdlib(src: bytes, size: int) -> bytes:
    from compression import zstd  # type: ignore[import-not-found]  # Python 3.14+
    return zstd.decompress(src)


def _zstd_package(src: bytes, size: int) -> bytes:
    import zstandard  # type: ignore[import-not-found]
    return zstandard.ZstdDecompressor().decompress(src, max_output_size=size)


def _libzstd():
    name = ctypes.util.find_library("zstd") or "libzstd.so.1"
    try:
        lib = ctypes.CDLL(name)
    except OSError:
        return None
    lib.ZSTD_decompress.restype = ctypes.c_size_t
    lib.ZSTD_decompress.argtypes = (ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p, ctypes.c_size_t)
    lib.ZSTD_isError.restype = ctypes.c_uint
    lib.ZSTD_isError.argtypes = (ctypes.c_size_t,)
    lib.ZSTD_getErrorName.restype = ctypes.c_char_p
    lib.ZSTD_getErrorName.argtypes = (ctypes.c_size_t,)
    return lib
