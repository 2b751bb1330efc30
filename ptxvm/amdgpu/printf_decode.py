"""Host side of AMD's buffered printf: the records of a printf buffer as the lines they print.

What a HIP runtime does after a kernel that has ``hidden_printf_buffer`` (see ``printf``):
read the header's byte count, walk the records (a u32 printf id, then each argument in the
size ``amdhsa.printf`` gives it) and format each with its format string.  Used by the ``emu``
executor; a host holding the buffer of a real GPU can call ``decode`` the same way.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Sequence

_SPEC = re.compile(r"%([-+ #0]*)(\d+)?(?:\.(\d+))?(hh|h|ll|l|z|j|t|L)?([diouxXeEfFgGaAcsp%])")
_UNESCAPE = {"n": "\n", "a": "\a", "b": "\b", "f": "\f", "r": "\r", "v": "\v", "72": ":"}


def parse_metadata(entries: Sequence[str]) -> dict[int, tuple[list[int], str]]:
    """``amdhsa.printf`` strings -> {id: (argument sizes, format)}."""
    out = {}
    for e in entries:
        ident, count, rest = e.split(":", 2)
        parts = rest.split(":", int(count))
        sizes, fmt = [int(x) for x in parts[:int(count)]], parts[int(count)]
        out[int(ident)] = (sizes, re.sub(r"\\(72|[nabfrv])", lambda m: _UNESCAPE[m.group(1)], fmt))
    return out


def decode(buffer: bytes, entries: Sequence[str]) -> list[str]:
    """The printed text of every record in ``buffer`` (header included), in buffer order."""
    formats = parse_metadata(entries)
    used = struct.unpack_from("<I", buffer, 0)[0]
    pos, end = 8, min(8 + used, len(buffer))
    lines = []
    while pos + 4 <= end:
        ident = struct.unpack_from("<I", buffer, pos)[0]
        if ident not in formats:
            raise ValueError(f"printf buffer: record at byte {pos} has id {ident}, which amdhsa.printf does not list")
        sizes, fmt = formats[ident]
        pos += 4
        raw = []
        for n in sizes:
            raw.append(buffer[pos:pos + n])
            pos += n
        lines.append(format_record(fmt, raw))
    return lines


def format_record(fmt: str, raw: list[bytes]) -> str:
    out, pos, args = [], 0, iter(raw)
    for m in _SPEC.finditer(fmt):
        out.append(fmt[pos:m.start()])
        pos = m.end()
        flags, width, prec, length, conv = m.groups()
        if conv == "%":
            out.append("%")
            continue
        b = next(args, b"")
        spec = "%" + (flags or "") + (width or "") + ("." + prec if prec else "")
        out.append(_convert(spec, conv, length, b))
    out.append(fmt[pos:])
    return "".join(out)


def _convert(spec: str, conv: str, length: str | None, b: bytes) -> str:
    if conv == "s":
        return (spec + "s") % b.split(b"\0", 1)[0].decode("utf-8", "replace")
    if conv in "eEfFgGaA":
        v = struct.unpack("<d", b)[0] if len(b) == 8 else struct.unpack("<f", b)[0]
        return float.hex(v) if conv in "aA" else (spec + conv) % v
    if conv == "p":
        return "0x%x" % int.from_bytes(b, "little")
    if conv == "c":
        return (spec + "c") % chr(b[0])
    signed = conv in "di"
    n = {"hh": 1, "h": 2}.get(length or "", len(b))
    v = int.from_bytes(b[:n], "little", signed=signed)
    return (spec + ("d" if conv in "iu" else conv)) % v
