"""Content-hash cache of parsed and verified modules.

The second load of an unchanged file skips the parser: the module is stored
under ``PTXVM_CACHE_DIR`` (default: ``platformdirs.user_cache_dir("ptxvm")``)
keyed by the SHA-256 of

* the file's bytes, the filename it was loaded under (it lives on in every
  source span and message) and the ``verify`` flag, and
* a *toolchain fingerprint*: the ptxvm version, the Python version, and the
  contents of ``grammar/*.lark``, ``isa/*.toml`` and the frontend/IR sources,
  so that any change to the grammar, the instruction table or the IR layout
  invalidates every entry.

``PTXVM_NO_CACHE=1`` (or ``use_cache=False``) disables it. Entries are stored by
``ptxvm.diskcache``: sealed with an HMAC under a per-user secret kept outside the cache
directory and checked before anything is unpickled, written atomically, and kept
within the directory's size cap (``PTXVM_CACHE_MAX``, least recently used out
first). An entry that fails its seal (a flipped bit, a truncation, a copy under
another key, a file written by anyone without the secret) or fails to decode is a
miss: it is removed and rewritten, never fatal and never a wrong module. Files
with errors are not cached: their errors are reported on every load.

Encoding: the IR is made of frozen slotted dataclasses, whose default pickling
goes through a Python ``__setstate__`` loop per object. Entries are instead
pickled with (a) equal operand objects (registers, immediates, symbols,
addresses...) shared, and (b) every node rebuilt by a generated constructor that
fills the slots directly. That keeps loading a large module ~20-40x faster than
parsing it. The unpickler resolves only those constructors and the IR's classes:
should the secret leak, a forged entry still cannot name any other callable.
"""

from __future__ import annotations

import dataclasses
import gc
import hashlib
import io
import os
import pickle
import re
import sys
import warnings
from enum import Enum
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from ..errors import Diagnostic, PtxSemanticError, PtxSyntaxError
from ..ir import nodes
from ..ir.nodes import Module
from ..resources import data_dir
from ..diskcache import (CacheWarning, cache_clear, cache_dir, cache_enabled, cache_info, read_sealed,
                          remove, write_sealed)

FORMAT = 3          # 3: warnings keep their class; 2: entries are sealed (ptxvm.diskcache), unpickled with only the IR's own globals
_MAGIC = b"PTXVMC%d\n" % FORMAT
_KIND = "modules"
_PACKAGE = Path(__file__).resolve().parent.parent


# ------------------------------------------------------------------ keys

@cache
def toolchain_fingerprint() -> str:
    """Hash of everything besides the input that decides what the parser produces."""
    from .. import __version__
    h = hashlib.sha256()
    h.update(f"ptxvm {__version__} format {FORMAT} py {sys.version_info[:2]}\n".encode())
    files: list[Path] = []
    for folder, pattern in ((data_dir("grammar"), "*.lark"), (data_dir("isa"), "**/*.toml"),
                            (_PACKAGE / "frontend", "*.py"), (_PACKAGE / "ir", "*.py")):
        files.extend(sorted(folder.glob(pattern)))
    files.append(_PACKAGE / "isa.py")
    for path in files:
        try:
            data = path.read_bytes()
        except OSError:
            data = b"<missing>"
        h.update(path.name.encode() + b"\0" + hashlib.sha256(data).digest())
    return h.hexdigest()


def entry_key(data: bytes, filename: str | None, verify: bool) -> str:
    h = hashlib.sha256()
    h.update(toolchain_fingerprint().encode())
    h.update(b"\0verify=%d\0" % bool(verify))
    h.update((filename or "").encode("utf-8", "surrogateescape") + b"\0")
    h.update(data)
    return h.hexdigest()


def entry_path(key: str) -> Path:
    return cache_dir() / _KIND / key[:2] / f"{key}.bin"


# ------------------------------------------------------------------ encoding

def _same(obj):
    """Pickle reducer target for a duplicate that stands for an already-written object."""
    return obj


_MAKERS: dict[type, tuple[object, tuple[str, ...]]] = {}
_SPAN_MAKERS: dict[type, tuple[object, tuple[str, ...]]] = {}
_SPAN_FIELDS = tuple(f.name for f in dataclasses.fields(nodes.Span))
if _SPAN_FIELDS == ("filename", "line", "column", "end_line", "end_column"):
    _span_setters = {f"_sp_{k}": getattr(nodes.Span, n).__set__
                     for k, n in zip(("f", "l", "c", "el", "ec"), _SPAN_FIELDS)}


def _make_constructor(cls: type) -> None:
    """Define ``_mk_<Class>(field, ...)``: builds the node by filling its slots directly."""
    names = tuple(f.name for f in dataclasses.fields(cls))
    if not names or hasattr(cls, "__post_init__"):
        return
    try:
        setters = {f"_s_{n}": getattr(cls, n).__set__ for n in names}
    except AttributeError:   # not slotted
        return
    fname = f"_mk_{cls.__name__}"
    src = (f"def {fname}({', '.join(names)}):\n    o = _new(_cls)\n"
           + "".join(f"    _s_{n}(o, {n})\n" for n in names) + "    return o\n")
    namespace = {"_new": object.__new__, "_cls": cls, **setters}
    exec(src, namespace)  # noqa: S102 - generated from dataclass field names only
    fn = namespace[fname]
    fn.__module__ = __name__
    fn.__qualname__ = fname
    globals()[fname] = fn
    _MAKERS[cls] = (fn, names)
    if "span" in names and "_span_setters" in globals():
        # Variant that builds the node's Span inline (saves one call and one pickled object per node).
        rest = tuple(n for n in names if n != "span")
        sname = f"_mks_{cls.__name__}"
        src = (f"def {sname}({', '.join(rest)}, _file, _line, _col, _eline, _ecol):\n"
               f"    sp = _new(_Span)\n    _sp_f(sp, _file)\n    _sp_l(sp, _line)\n    _sp_c(sp, _col)\n"
               f"    _sp_el(sp, _eline)\n    _sp_ec(sp, _ecol)\n    o = _new(_cls)\n"
               + "".join(f"    _s_{n}(o, {n})\n" for n in rest) + "    _s_span(o, sp)\n    return o\n")
        namespace = {"_new": object.__new__, "_cls": cls, "_Span": nodes.Span, **setters, **_span_setters}
        exec(src, namespace)  # noqa: S102
        sfn = namespace[sname]
        sfn.__module__ = __name__
        sfn.__qualname__ = sname
        globals()[sname] = sfn
        _SPAN_MAKERS[cls] = (sfn, rest)


for _obj in list(vars(nodes).values()):
    if isinstance(_obj, type) and dataclasses.is_dataclass(_obj) and _obj.__module__ == nodes.__name__:
        _make_constructor(_obj)
del _obj

# Operand-like nodes carry no source span, so equal ones can be shared safely.
_SHAREABLE = tuple(c for c in (nodes.Register, nodes.Immediate, nodes.Symbol, nodes.Negated,
                               nodes.Sink, nodes.Vector, nodes.Pair, nodes.Address,
                               nodes.ParenList, nodes.Guard, nodes.SymbolRef, nodes.InitList,
                               nodes.PerfDirective)
                   if not any(f.name == "span" for f in dataclasses.fields(c)))


def _share_duplicates(root) -> dict[int, object]:
    """Map id(duplicate) -> first equal object, for span-less operand nodes.

    Equality keys are built from children's canonical identities, floats by
    ``repr`` (so ``-0.0`` and ``0.0`` stay distinct); other values by type+value.
    """
    canon: dict[tuple, object] = {}
    alias: dict[int, object] = {}
    fields_of = {c: _MAKERS[c][1] if c in _MAKERS else tuple(f.name for f in dataclasses.fields(c))
                 for c in _SHAREABLE}
    shareable = set(_SHAREABLE)
    tuple_type = tuple

    def key_of(v):
        t = type(v)
        if t is float:
            return (t, repr(v))
        if t in shareable:
            return id(alias.get(id(v), v))
        if t is tuple_type:
            return (t, *map(key_of, v))
        return (t, v)

    def visit(o):
        t = type(o)
        if t is tuple_type:
            for x in o:
                visit(x)
            return
        if t in shareable:
            names = fields_of[t]
            for n in names:
                visit(getattr(o, n))
            key = (t, *[key_of(getattr(o, n)) for n in names])
            first = canon.setdefault(key, o)
            if first is not o:
                alias[id(o)] = first
            return
        if t in _MAKERS:
            for n in _MAKERS[t][1]:
                v = getattr(o, n)
                if type(v) in _VISIT_TYPES or type(v) is tuple_type:
                    visit(v)

    visit(root)
    return alias


_VISIT_TYPES = frozenset(_MAKERS)


_Span, _NO_SPAN = nodes.Span, nodes.NO_SPAN


def _signature(v: tuple, depth: int = 0):
    """The exact types inside a tuple of strings / ints / enum members (nested once), else None.

    Sharing keys on (value, signature): ``("b32",)`` and ``(ScalarType.B32,)`` or
    ``(1,)`` and ``(True,)`` compare equal but must not stand for each other.
    """
    sig = []
    for x in v:
        t = type(x)
        if t is str or t is int or t is bool or x is None or isinstance(x, Enum):
            sig.append(t)
        elif t is tuple and depth == 0:
            inner = _signature(x, 1)
            if inner is None:
                return None
            sig.append(inner)
        else:
            return None
    return tuple(sig)


class _Pickler(pickle.Pickler):
    def __init__(self, file, alias: dict[int, object]) -> None:
        super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
        self._alias = alias
        self._shared: dict = {}
        self._tuples: dict = {}

    def reducer_override(self, obj):
        first = self._alias.get(id(obj))
        if first is not None:
            return _same, (first,)
        cls = type(obj)
        maker = _MAKERS.get(cls)
        if maker is None:
            return NotImplemented
        fn, names = maker
        tail = ()
        if cls in _SPAN_MAKERS:
            sp = obj.span
            if type(sp) is _Span and sp is not _NO_SPAN:
                fn, names = _SPAN_MAKERS[cls]
                tail = (self._shared.setdefault(sp.filename, sp.filename) if sp.filename else None,
                        sp.line, sp.column, sp.end_line, sp.end_column)
        args = []
        shared = self._shared
        alias = self._alias
        for n in names:
            v = getattr(obj, n)
            t = type(v)
            if t is str:
                v = shared.setdefault(v, v)   # equal strings written once
            elif t is tuple and v:
                sig = _signature(v)
                if sig is not None:   # modifier / type tuples: equal ones written once
                    v = self._tuples.setdefault((v, sig), v)
                elif any(id(x) in alias for x in v):
                    v = tuple([alias.get(id(x), x) for x in v])
            else:
                v = alias.get(id(v), v)
            args.append(v)
        return fn, (*args, *tail)


def encode_entry(payload: tuple, module: Module) -> bytes:
    buf = io.BytesIO()
    buf.write(_MAGIC)
    _Pickler(buf, _share_duplicates(module)).dump((payload, module))
    return buf.getvalue()


_ALLOWED_MODULES = frozenset({nodes.__name__, nodes.Module.__module__, "ptxvm.ir.types"})


class _Unpickler(pickle.Unpickler):
    """Resolves only what ``_Pickler`` writes: this module's node makers and the IR's own
    classes and enums. Entries are sealed first; this is the second wall, should the secret leak."""

    def find_class(self, module: str, name: str):
        if module == __name__ and (name == "_same" or name.startswith(("_mk_", "_mks_"))):
            obj = globals().get(name)
        elif module in _ALLOWED_MODULES and not name.startswith("_"):
            obj = getattr(sys.modules.get(module), name, None)
            if not (isinstance(obj, type) and obj.__module__ in _ALLOWED_MODULES):
                obj = None
        else:
            obj = None
        if obj is None:
            raise pickle.UnpicklingError(f"cache entry refers to {module}.{name}")
        return obj


def decode_entry(blob: bytes) -> tuple[tuple, Module]:
    """The (payload, module) of ``encode_entry``'s bytes (not sealed: see ``_read_entry``)."""
    return _decode(bytes(blob) if not isinstance(blob, bytes) else blob, 0)


def _decode(blob: bytes, start: int) -> tuple[tuple, Module]:
    if not blob.startswith(_MAGIC, start):
        raise ValueError("not a ptxvm cache entry")
    # The module's tens of thousands of objects (none cyclic) are made with the collector off,
    # then moved to the oldest generation unscanned: left young, the next collections would
    # traverse every one (more time than the unpickling) only to find them alive, as they
    # always are. gc.freeze() + unfreeze() moves them, but it moves every young object, and
    # resets the count that schedules full collections: with one hit per kernel, full
    # collections stopped and a fuzz campaign's cyclic lifter garbage grew by GBs. So the
    # young generations are collected first (ordinary accounting), and the count is restored
    # after by young collections of the then empty generations. Not done when the collector
    # is off or the application uses gc.freeze itself (unfreeze would undo its freeze).
    enabled = gc.isenabled()
    promote = enabled and gc.get_freeze_count() == 0
    if promote:
        gc.collect(1)
    gc.disable()
    try:
        stream = io.BytesIO(blob)         # shares the bytes object: no copy
        stream.seek(start + len(_MAGIC))
        payload, module = _Unpickler(stream).load()
        if promote:
            due = min(gc.get_count()[2], gc.get_threshold()[2] + 1)
            gc.freeze()
            gc.unfreeze()
            for _ in range(due):
                gc.collect(1)
    finally:
        if enabled:
            gc.enable()
    if not isinstance(module, Module) or not isinstance(payload, tuple):
        raise ValueError("malformed ptxvm cache entry")
    return payload, module


# ------------------------------------------------------------------ loading

@dataclass
class CheckResult:
    """What loading one source gave: the module (None on errors) and every message."""

    module: Module | None
    diagnostics: list[Diagnostic] = field(default_factory=list)   # errors and verifier warnings
    warnings: list[Diagnostic] = field(default_factory=list)      # Python warnings, as diagnostics
    cached: bool = False

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity == "error"]

    @property
    def ok(self) -> bool:
        return self.module is not None and not self.errors


_WARN_LOC = re.compile(r"^(?P<file>.+?):(?P<line>\d+): (?P<msg>.*)$", re.S)


def warning_diagnostic(message: str, filename: str | None, category: type[Warning] = UserWarning) -> Diagnostic:
    """A Python warning's text (``file:line: message``) as a diagnostic; its ``category`` keeps
    the warning class's name, so a cache hit warns with the class a fresh parse used."""
    m = _WARN_LOC.match(message)
    if m:
        return Diagnostic(m["msg"], m["file"], int(m["line"]), None, None, "warning", category.__name__)
    return Diagnostic(message, filename, None, None, None, "warning", category.__name__)


def _warning_class(name: str) -> type[Warning]:
    from .. import errors
    cls = getattr(errors, name, None)
    return cls if isinstance(cls, type) and issubclass(cls, Warning) else UserWarning


def _parse_capturing(data: bytes | str, filename: str | None, verify: bool) -> CheckResult:
    from .parser import check_text
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        module, diagnostics = check_text(data, filename, verify=verify)
    warns = [warning_diagnostic(str(w.message), filename, w.category) for w in caught]
    errors = [d for d in diagnostics if d.severity == "error"]
    return CheckResult(None if errors else module, list(diagnostics), warns)


def _read_entry(path: Path, key: str) -> CheckResult | None:
    """The hit stored at ``path``, or None. The seal is checked before anything is unpickled;
    an entry that fails it, or (sealed by us, so a bug) fails to decode, is removed."""
    payload = read_sealed(path, _KIND, key)
    if payload is None:
        return None
    try:
        blob = payload.obj                # the file's bytes: the payload starts after the seal
        assert isinstance(blob, bytes)
        (stored_key, diags, warns), module = _decode(blob, len(blob) - payload.nbytes)
        if stored_key != key:
            raise ValueError("entry made for another key")
        return CheckResult(module, [Diagnostic(*d) for d in diags],
                           [Diagnostic(*w) for w in warns], cached=True)
    except Exception:  # noqa: BLE001 - a damaged entry is a miss, whatever the damage
        remove(path)
        return None


def _fields(d: Diagnostic) -> tuple:
    return (d.message, d.filename, d.line, d.column, d.source_line, d.severity, d.category)


def _write_entry(path: Path, key: str, result: CheckResult) -> bool:
    assert result.module is not None
    try:
        blob = encode_entry((key, [_fields(d) for d in result.diagnostics],
                             [_fields(w) for w in result.warnings]), result.module)
    except Exception:  # noqa: BLE001 - an unpicklable module is simply not cached
        return False
    return write_sealed(path, _KIND, key, blob)


def check_bytes(data: bytes | str, filename: str | None = None, *, verify: bool = True,
                use_cache: bool | None = None) -> CheckResult:
    """Parse (and verify) through the cache, collecting every diagnostic; never raises on bad PTX.

    Raises only ``PtxEncodingError`` (not UTF-8) and ``IsaTableError`` (broken table).
    """
    if not cache_enabled(use_cache):
        return _parse_capturing(data, filename, verify)
    raw = data.encode("utf-8") if isinstance(data, str) else data
    key = entry_key(raw, filename, verify)
    path = entry_path(key)
    hit = _read_entry(path, key)
    if hit is not None:
        return hit
    result = _parse_capturing(data, filename, verify)
    if result.ok:
        _write_entry(path, key, result)
    return result


def check_file(path: str | os.PathLike, *, verify: bool = True, use_cache: bool | None = None) -> CheckResult:
    """``check_bytes`` of a file's PTX (``sources.read_ptx``: PTX, .cu, what nvcc writes);
    ``OSError`` when it cannot be read, ``PtxError`` when it holds no PTX."""
    from .sources import read_ptx
    data, name = read_ptx(path)
    return check_bytes(data, name, verify=verify, use_cache=use_cache)


def _finish(result: CheckResult) -> Module:
    for w in result.warnings:
        loc = f"{w.filename}:{w.line}: " if w.filename and w.line else ""
        warnings.warn(loc + w.message, _warning_class(w.category), stacklevel=3)
    errors = result.errors
    if errors:
        from .parser import _is_syntax
        cls = PtxSyntaxError if result.module is None and _is_syntax(errors) else PtxSemanticError
        raise cls.from_diagnostics(errors)
    assert result.module is not None
    return result.module


def load_text(text: str | bytes, filename: str | None = None, *, verify: bool = True,
              use_cache: bool | None = None) -> Module:
    """Like ``ptxvm.parse`` but through the cache: raises ``PtxError`` listing every error."""
    return _finish(check_bytes(text, filename, verify=verify, use_cache=use_cache))


def load_file(path: str | os.PathLike, *, verify: bool = True, use_cache: bool | None = None) -> Module:
    """Parse and verify a PTX file, through the cache unless disabled."""
    return _finish(check_file(path, verify=verify, use_cache=use_cache))


def clear(directory: Path | None = None) -> int:
    """Delete every cache entry (of every kind); returns how many were removed."""
    return cache_clear(directory)


__all__ = ["CacheWarning", "CheckResult", "cache_clear", "cache_dir", "cache_enabled", "cache_info",
           "check_bytes", "check_file", "clear",
           "decode_entry", "encode_entry", "entry_key", "load_file", "load_text",
           "toolchain_fingerprint"]
