"""Content-hash cache of whole translations: PTX text + target -> the linked code object.

The LLVM and link caches (``backend.toolchain``, ``amdgpu.link``) are keyed by what the lifter
produced, so a re-translation of an unchanged file still parsed and lifted it: most of what
is left of a warm ``ptxvm.compile`` (math_precise.ptx: 0.43 of 0.45 CPU seconds). This cache
is keyed by the SHA-256 of

* the PTX bytes, the filename they were read under, the target's name and the O level, and
* a fingerprint of the translator: ptxvm's and llvmlite's versions, the Python version and the
  size and modification time of every ``*.py`` of the package and every file of ``grammar/``,
  ``isa/`` and ``runtime/`` (any edit to any stage is a miss, never a stale object),

and holds the code object, its metadata, its metadata note and the LLVM IR (zlib). A hit skips
parse, lift, LLVM, link and check; the assembly listing, when asked for, is made by translating
again (as it is deferred on a miss too). Entries are sealed and stored by ``ptxvm.diskcache``
(under its ``hsaco`` folder, next to the linked objects); ``PTXVM_NO_CACHE=1`` or
``use_cache=False`` turns it off with the other caches. A damaged or undecodable entry is a miss.
"""

from __future__ import annotations

import hashlib
import json
import struct
import sys
import zlib
from functools import cache
from pathlib import Path
from typing import Any

FORMAT = 1
_MAGIC = b"PTXVM-OBJ %d\n" % FORMAT
_LEN = struct.Struct("<I")
_KIND = "hsaco"
_PACKAGE = Path(__file__).resolve().parent.parent


@cache
def fingerprint() -> bytes:
    """Hash of everything besides the input that decides the code object (computed once per
    process: a stat of about 280 files)."""
    import llvmlite

    from .. import __version__
    from ..resources import data_dir
    h = hashlib.sha256(f"ptxvm {__version__} objcache {FORMAT} llvmlite {llvmlite.__version__} "
                       f"py {sys.version_info[:2]}\n".encode())
    files = sorted(_PACKAGE.rglob("*.py"))
    for name in ("grammar", "isa", "runtime"):
        try:
            files += sorted(p for p in data_dir(name).rglob("*") if p.is_file())
        except FileNotFoundError:
            h.update(f"no {name}\0".encode())
    for path in files:
        # Size and modification time, not contents: a stat per file (reading and hashing them
        # all cost 66 ms of CPU, a fifth of translating a small file); an edit changes both.
        try:
            st = path.stat()
            stamp = f"{st.st_size} {st.st_mtime_ns}"
        except OSError:
            stamp = "<unreadable>"
        h.update(f"{path.relative_to(path.parents[1])}\0{stamp}\0".encode("utf-8", "surrogateescape"))
    return h.digest()


def key(text: bytes, filename: str | None, target: str, opt: int) -> str:
    h = hashlib.sha256(fingerprint())
    h.update(f"\0{target}\0{opt}\0".encode())
    h.update((filename or "").encode("utf-8", "surrogateescape") + b"\0")
    h.update(text)
    return h.hexdigest()


def _path(k: str) -> Path:
    from ..diskcache import cache_dir
    return cache_dir() / _KIND / k[:2] / f"{k}.hsaco"


def encode(hsaco: bytes, llvm_ir: str, metadata: dict, note: dict) -> bytes:
    """Raises TypeError/ValueError when the metadata is not plain JSON (then nothing is cached)."""
    ir = zlib.compress(llvm_ir.encode("utf-8", "surrogatepass"), 1)
    header = json.dumps({"metadata": metadata, "note": note, "hsaco": len(hsaco), "ir": len(ir)},
                        allow_nan=False).encode()
    return _MAGIC + _LEN.pack(len(header)) + header + hsaco + ir


def decode(blob: bytes) -> tuple[bytes, str, dict, dict]:
    if not blob.startswith(_MAGIC):
        raise ValueError("not a ptxvm code-object cache entry")
    at = len(_MAGIC)
    (n,) = _LEN.unpack_from(blob, at)
    at += _LEN.size
    header = json.loads(blob[at:at + n])
    at += n
    hsaco = bytes(blob[at:at + header["hsaco"]])
    ir = bytes(blob[at + header["hsaco"]:at + header["hsaco"] + header["ir"]])
    if len(hsaco) != header["hsaco"] or len(ir) != header["ir"]:
        raise ValueError("truncated code-object cache entry")
    return hsaco, zlib.decompress(ir).decode("utf-8", "surrogatepass"), header["metadata"], header["note"]


def get(k: str) -> tuple[bytes, str, dict, dict] | None:
    from ..diskcache import read_sealed, remove
    payload = read_sealed(_path(k), _KIND, k)
    if payload is None:
        return None
    try:
        return decode(bytes(payload))
    except Exception:  # noqa: BLE001 - sealed by us yet undecodable: a miss, rewritten later
        remove(_path(k))
        return None


def put(k: str, hsaco: bytes, llvm_ir: str, metadata: dict[str, Any], note: dict[str, Any]) -> bool:
    from ..diskcache import write_sealed
    try:
        blob = encode(hsaco, llvm_ir, metadata, note)
        # JSON must give back what we have (a tuple would come back as a list): else no entry.
        same = json.loads(json.dumps([metadata, note])) == [metadata, note]
    except (TypeError, ValueError):
        return False            # e.g. bytes in the note: not cached, translated every time
    return same and write_sealed(_path(k), _KIND, k, blob)
