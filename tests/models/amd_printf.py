"""An independent decoder of AMD's buffered printf, written from the documented format (LLVM's
AMDGPUPrintfRuntimeBinding pass and ROCm-Device-Libs' ``__printf_alloc``), not from ptxvm:

* buffer: ``u32 used`` (record bytes after the header), ``u32 size``, then the records;
* record: ``u32`` printf id, then each argument in the byte count its metadata entry gives;
* ``amdhsa.printf`` entry: ``"<id>:<n>:<size 1>:...:<size n>:<format>"``, the format with C
  escapes (``\\n`` ...) and ``\\72`` for ``:``.

Values are formatted with Python's ``%`` operator from the conversion and the argument's size.
"""

from __future__ import annotations

import re
import struct

_CONV = re.compile(r"%[-+ #0]*\d*(?:\.\d+)?(?:hh|h|ll|l|z|j|t)?[diouxXeEfgGcsp%]")


def unescape(text: str) -> str:
    out, i = [], 0
    table = {"n": "\n", "t": "\t", "a": "\a", "b": "\b", "f": "\f", "r": "\r", "v": "\v", "\\": "\\"}
    while i < len(text):
        if text[i] == "\\" and text[i + 1:i + 3] == "72":
            out.append(":")
            i += 3
        elif text[i] == "\\" and text[i + 1:i + 2] in table:
            out.append(table[text[i + 1]])
            i += 2
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def entries(note: dict) -> dict[int, tuple[list[int], str]]:
    out = {}
    for e in note.get("amdhsa.printf", []):
        fields = e.split(":")
        ident, n = int(fields[0]), int(fields[1])
        out[ident] = ([int(x) for x in fields[2:2 + n]], unescape(":".join(fields[2 + n:])))
    return out


def one(conv: str, raw: bytes) -> str:
    kind = conv[-1]
    plain = re.sub(r"(hh|h|ll|l|z|j|t)(?=[a-zA-Z]$)", "", conv)
    if kind == "s":
        return plain % raw.split(b"\0")[0].decode()
    if kind in "eEfgG":
        return plain % struct.unpack("<d" if len(raw) == 8 else "<f", raw)[0]
    if kind == "c":
        return plain % chr(raw[0])
    value = int.from_bytes(raw, "little", signed=kind in "di")
    return plain.replace("u", "d").replace("i", "d") % value


def decode(buffer: bytes, note: dict) -> list[str]:
    table = entries(note)
    used = struct.unpack_from("<I", buffer, 0)[0]
    at, end, lines = 8, 8 + used, []
    while at < end:
        sizes, fmt = table[struct.unpack_from("<I", buffer, at)[0]]
        at += 4
        raws = []
        for n in sizes:
            raws.append(buffer[at:at + n])
            at += n
        values = iter(raws)
        lines.append(_CONV.sub(lambda m: "%" if m.group(0) == "%%" else one(m.group(0), next(values)), fmt))
    return lines
