"""Clang offload bundles (``.hipfb``): several targets' code objects in one file.

The layout is clang-offload-bundler's binary format, the one ``hipcc --genco
--offload-arch=A --offload-arch=B`` writes and ``hipModuleLoadData`` accepts, picking the
entry whose target ID matches the device::

    "__CLANG_OFFLOAD_BUNDLE__"                 24 bytes, the magic
    number of entries                           u64 little-endian
    per entry: offset, size, ID length          3 x u64
               ID                               ID-length bytes, no terminator
    the entries' bytes, each at its offset

IDs are ``<kind>-<triple>-<target id>``: an empty host entry ``host-x86_64-unknown-linux-gnu-``
first (HIP's loaders expect it), then ``hipv4-amdgcn-amd-amdhsa--gfx90a`` per code object
(code object v4+ is offload kind ``hipv4``; the empty environment gives the ``--``).
Entries are aligned to 4096 bytes as hipcc asks the bundler to (``-bundle-align=4096``).
"""

from __future__ import annotations

import struct
from collections.abc import Mapping

from ..errors import PtxError

MAGIC = b"__CLANG_OFFLOAD_BUNDLE__"
HOST_ID = "host-x86_64-unknown-linux-gnu-"
DEVICE_PREFIX = "hipv4-amdgcn-amd-amdhsa--"
ALIGN = 4096


class BundleError(PtxError):
    """A file that is not a well-formed clang offload bundle."""


def entry_id(target_id: str) -> str:
    """The bundle entry ID of a code object for ``target_id`` (``gfx90a``, ``gfx90a:xnack-``)."""
    return DEVICE_PREFIX + target_id


def write_bundle(objects: Mapping[str, bytes], *, align: int = ALIGN) -> bytes:
    """One bundle holding ``objects`` (target ID -> code object), after an empty host entry."""
    entries = [(HOST_ID, b"")] + [(entry_id(t), bytes(o)) for t, o in objects.items()]
    header = len(MAGIC) + 8 + sum(24 + len(i.encode()) for i, _ in entries)
    offsets, end = [], header
    for _, data in entries:
        end = -(-end // align) * align
        offsets.append(end)
        end += len(data)
    out = bytearray(MAGIC + struct.pack("<Q", len(entries)))
    for (ident, data), off in zip(entries, offsets):
        raw = ident.encode()
        out += struct.pack("<QQQ", off, len(data), len(raw)) + raw
    for (_, data), off in zip(entries, offsets):
        out += bytes(off - len(out)) + data
    return bytes(out)


def read_bundle(data: bytes) -> dict[str, bytes]:
    """The entries of a bundle, by entry ID (the host entry included)."""
    if not data.startswith(MAGIC):
        raise BundleError("not a clang offload bundle (no __CLANG_OFFLOAD_BUNDLE__ magic)")
    try:
        (count,) = struct.unpack_from("<Q", data, len(MAGIC))
        pos, entries = len(MAGIC) + 8, {}
        for _ in range(count):
            off, size, n = struct.unpack_from("<QQQ", data, pos)
            ident = data[pos + 24:pos + 24 + n].decode("ascii")
            if len(ident) != n or off + size > len(data):
                raise BundleError(f"bundle entry {ident or '?'!r} runs past the end of the file")
            entries[ident] = bytes(data[off:off + size])
            pos += 24 + n
    except (struct.error, UnicodeDecodeError) as exc:
        raise BundleError(f"truncated or corrupt clang offload bundle ({exc})") from None
    return entries


def code_objects(data: bytes) -> dict[str, bytes]:
    """The device code objects of a bundle, by target ID (``gfx90a``)."""
    return {i[len(DEVICE_PREFIX):]: o for i, o in read_bundle(data).items() if i.startswith(DEVICE_PREFIX)}


class CodeObjectBundle:
    """Several targets' code objects of one PTX module, as ``ptxvm.compile(ptx, target=[...])``
    returns them: ``bundle["gfx942"]`` is that target's ``CodeObject``, ``data`` the offload
    bundle's bytes, ``save(path)`` writes it (a ``.hipfb`` for ``hipModuleLoadData``)."""

    def __init__(self, objects: Mapping[str, object]) -> None:
        self.objects = dict(objects)

    @property
    def targets(self) -> list[str]:
        return list(self.objects)

    @property
    def data(self) -> bytes:
        return write_bundle({t: o.hsaco for t, o in self.objects.items()})

    def __getitem__(self, target: str):
        try:
            return self.objects[target]
        except KeyError:
            raise KeyError(f"this bundle has no {target!r} code object; it holds {', '.join(self.objects)}") from None

    def save(self, path) -> "Path":
        from pathlib import Path
        p = Path(path)
        p.write_bytes(self.data)
        return p

    def __repr__(self) -> str:
        return f"<CodeObjectBundle {', '.join(self.objects)}>"
