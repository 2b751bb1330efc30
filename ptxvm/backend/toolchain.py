"""Compile LLVM IR to object code / assembly in an isolated worker process, with caching.

    res = compile_ir(ir_text, triple="amdgcn-amd-amdhsa", cpu="gfx90a", emit=("obj", "asm"))
    res.obj, res.asm

Why a subprocess: LLVM reports fatal errors (``Cannot select``, assertion
failures) by aborting the process. A Python caller must get a ``CodegenError``
instead, so parsing, verification, the O-level pipeline and code generation run
in one persistent worker (``python -m ptxvm.backend.llvm_worker``), started on first
use, shared by all threads (requests are serialised by a lock) and restarted
after it dies. When it dies during a request, the error carries what LLVM wrote
on stderr for that request and the exit status or signal.

An output that may not be wanted at all (the AMDGPU translator's assembly listing, a second
full code generation) can be deferred: ``compile_ir(..., later=("asm",))`` keeps the optimised
module in the worker and ``emit_later(res, "asm")`` generates it from there on demand (or, if
the worker no longer has it, compiles the IR again: LLVM is deterministic, the text is the same).

Results are cached by content: a small in-memory LRU, then files under
``<ptxvm cache dir>/llvm`` keyed by the SHA-256 of the IR, every option, the
llvmlite and ptxvm versions and the worker's own source. ``PTXVM_NO_CACHE=1``
(or ``use_cache=False``) bypasses both. Entries are written atomically and a
damaged entry is a miss that gets rewritten.
"""

from __future__ import annotations

import atexit
import hashlib
import json
import os
import signal
import struct
import subprocess
import sys
import tempfile
import threading
from collections import OrderedDict
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, BinaryIO

from ..errors import CodegenError
from . import llvm_worker
from .llvm_worker import EMIT_KINDS, read_message, write_message

DEFAULT_TIMEOUT = 300.0
RELOC_MODELS = ("default", "static", "pic", "dynamicnopic")
CODE_MODELS = ("default", "jitdefault", "small", "kernel", "medium", "large")
_STDERR_KEEP = 16_000          # characters of LLVM's stderr kept in an error message
# The worker is replaced after this many compiles: every run of llvmlite's new pass manager
# leaves about 0.5 MB behind in the process, and later compiles get slower (measured with
# llvmlite 0.50: +30 % after 400 compiles); a fresh worker costs well under a second.
RECYCLE_COMPILES = 400
_MEMORY_ENTRIES = 128
_MEMORY_BYTES = 64 << 20


@dataclass(frozen=True)
class CompileResult:
    """What one compilation produced. ``seconds`` is the worker's time for the original compile
    (also for cached results); ``origin`` says where this result came from; ``log`` is any
    non-fatal text LLVM printed (e.g. "'gfx9999' is not a recognized processor")."""

    obj: bytes | None
    asm: str | None
    optimized_ir: str | None
    seconds: float
    origin: str = "worker"        # "worker" | "memory" | "disk"
    log: str = ""
    later: _Later | None = None   # how to make the outputs deferred with ``later=`` (emit_later)
    phases: tuple[tuple[str, float], ...] = ()   # the worker's seconds per step (parse, verify, opt, codegen)

    def _size(self) -> int:
        return sum(len(x) for x in (self.obj, self.asm, self.optimized_ir) if x is not None)


@dataclass(frozen=True, eq=False)
class _Later:
    """Where a compile's optimised module was kept (the worker's generation and request id)
    and the request itself, to compile again when the worker no longer has it."""

    kinds: tuple[str, ...]
    generation: int | None
    token: int | None
    request: dict
    timeout: float
    use_cache: bool | None


# ------------------------------------------------------------------ the worker process

_FATAL_SIGNALS = {getattr(signal, name) for name in ("SIGABRT", "SIGSEGV", "SIGBUS", "SIGILL", "SIGFPE")
                  if hasattr(signal, name)}


def _describe_status(returncode: int | None) -> str:
    if returncode is None:
        return "worker did not exit"
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        return f"worker killed by {name} (signal {-returncode})"
    return f"worker exited with status {returncode}"


class _Crash(Exception):
    """The worker died during a request (internal: becomes CodegenError or a retry)."""

    def __init__(self, returncode: int | None, stderr: str, timed_out: bool) -> None:
        super().__init__(returncode)
        self.returncode, self.stderr, self.timed_out = returncode, stderr, timed_out


class _Worker:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._proc: subprocess.Popen | None = None
        self._stderr: BinaryIO | None = None      # our read handle on the worker's stderr file
        self._killed_by_timer: subprocess.Popen | None = None
        self._seq = 0
        self._compiles = 0                        # compile requests served by the current worker
        self.starts = 0
        self.requests = 0

    # -- lifecycle (callers hold the lock)

    def _start(self) -> None:
        fd, path = tempfile.mkstemp(prefix="ptxvm-llvm-", suffix=".log")
        os.close(fd)
        # O_APPEND: the worker always writes at the end while we read from our own offset.
        err_w = open(path, "ab")            # noqa: SIM115 - handed to the child, closed below
        self._stderr = open(path, "rb")     # noqa: SIM115 - lives as long as this worker
        try:
            os.unlink(path)      # POSIX: the open handles keep it alive
        except OSError:
            pass
        env = dict(os.environ)
        # The worker must import this very ptxvm, installed or not.
        pkg_root = str(Path(__file__).resolve().parents[2])
        env["PYTHONPATH"] = os.pathsep.join(p for p in (pkg_root, env.get("PYTHONPATH", "")) if p)
        try:
            self._proc = subprocess.Popen(
                [sys.executable, "-m", "ptxvm.backend.llvm_worker"],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err_w, env=env, close_fds=True)
        except OSError as exc:
            raise CodegenError(f"cannot start the LLVM worker ({sys.executable!r}): {exc}") from exc
        finally:
            err_w.close()
        self.starts += 1

    def _discard(self) -> None:
        """Forget the current worker, killing it if it still runs."""
        proc, self._proc = self._proc, None
        if proc is not None:
            for stream in (proc.stdin, proc.stdout):
                try:
                    stream.close()
                except OSError:
                    pass
            if proc.poll() is None:
                proc.kill()
            proc.wait()
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None

    def after_fork_in_child(self) -> None:
        """A forked child must not use (or hold open) the parent's worker: drop our copies."""
        self._lock = threading.Lock()     # another thread may have held it at fork time
        proc, self._proc = self._proc, None
        for stream in (proc.stdin, proc.stdout, self._stderr) if proc is not None else ():
            try:
                stream.close()   # our copy of the pipe kept open would delay the worker's EOF
            except OSError:
                pass
        self._stderr = None

    def _retire(self, proc: subprocess.Popen) -> None:
        """Let the worker finish (EOF on its stdin) and forget it; the next request starts
        another. What it kept for a later listing is gone with it (emit_later compiles again)."""
        try:
            proc.stdin.close()
            proc.wait(5.0)
        except (OSError, subprocess.TimeoutExpired):
            pass
        self._discard()

    def _ensure(self) -> subprocess.Popen:
        if self._proc is not None and self._proc.poll() is not None:
            self._discard()   # died while idle: start afresh, silently
        if self._proc is None:
            self._start()
            self._compiles = 0
        assert self._proc is not None
        return self._proc

    def _stderr_size(self) -> int:
        assert self._stderr is not None
        return os.fstat(self._stderr.fileno()).st_size

    def _stderr_since(self, offset: int) -> str:
        assert self._stderr is not None
        end = self._stderr_size()
        start = max(offset, end - 4 * _STDERR_KEEP)
        self._stderr.seek(start)
        text = self._stderr.read(end - start).decode("utf-8", "replace")
        if start > offset:
            text = "[...]\n" + text
        return text.strip()

    def _on_timeout(self, proc: subprocess.Popen) -> None:
        self._killed_by_timer = proc
        try:
            proc.kill()
        except OSError:
            pass

    # -- requests

    def _exchange(self, message: dict, timeout: float, generation: int | None = None) -> tuple[dict, str]:
        if generation is not None and (generation != self.starts or self._proc is None
                                       or self._proc.poll() is not None):
            return {"ok": False, "kind": "gone", "message": "not the worker that kept the module"}, ""
        proc = self._ensure()
        offset = self._stderr_size()
        self._seq += 1
        message = {**message, "id": self._seq}
        self.requests += 1
        timer = threading.Timer(timeout, self._on_timeout, args=(proc,))
        timer.daemon = True
        timer.start()
        try:
            try:
                write_message(proc.stdin, message)
                reply = read_message(proc.stdout)
            except (EOFError, BrokenPipeError, ConnectionResetError):
                returncode = proc.wait()
                crash = _Crash(returncode, self._stderr_since(offset), self._killed_by_timer is proc)
                self._discard()
                raise crash from None
            except BaseException:
                # Interrupted (Ctrl-C) or anything unexpected: the stream may be mid-message.
                self._discard()
                raise
        finally:
            timer.cancel()
        if not isinstance(reply, dict) or reply.get("id") != self._seq:
            self._discard()
            raise CodegenError("LLVM worker protocol error: reply does not match the request")
        reply["generation"] = self.starts
        log = self._stderr_since(offset)
        if message.get("op") == "compile":
            self._compiles += 1
            if self._compiles >= RECYCLE_COMPILES:
                self._retire(proc)
        return reply, log

    def request(self, message: dict, timeout: float, generation: int | None = None) -> tuple[dict, str]:
        """``generation``: only if the worker is still the one started then (else a "gone" reply)."""
        with self._lock:
            try:
                return self._exchange(message, timeout, generation)
            except _Crash as crash:
                killed_from_outside = (crash.returncode is not None and crash.returncode < 0
                                       and -crash.returncode not in _FATAL_SIGNALS and not crash.timed_out)
                if not killed_from_outside:
                    raise
            # Killed by someone else (SIGKILL/SIGTERM: OOM killer, a stray kill) possibly before it
            # even read the request: one fresh try, whose failure is then reported.
            return self._exchange(message, timeout, generation)

    def pid(self) -> int | None:
        proc = self._proc
        return proc.pid if proc is not None else None

    def start(self) -> None:
        with self._lock:
            self._ensure()

    def shutdown(self, timeout: float = 5.0) -> None:
        if not self._lock.acquire(timeout=timeout):
            # A thread is still inside a compile (e.g. a daemon thread at exit): stop the worker.
            proc = self._proc
            if proc is not None and proc.poll() is None:
                proc.kill()
            return
        try:
            proc = self._proc
            if proc is None:
                return
            try:
                proc.stdin.close()    # EOF on its stdin: the worker exits on its own
                proc.wait(timeout)
            except (OSError, subprocess.TimeoutExpired):
                pass
            self._discard()
        finally:
            self._lock.release()


_WORKER = _Worker()
atexit.register(_WORKER.shutdown)
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_WORKER.after_fork_in_child)


def start_worker() -> None:
    """Start the worker now without waiting for it (hides its start-up behind other work)."""
    _WORKER.start()


def ping(timeout: float = 60.0) -> int:
    """Round trip to the worker (starting it if needed); returns its process id."""
    reply, _ = _request({"op": "ping"}, timeout)
    return int(reply["pid"])


def shutdown_worker() -> None:
    """Stop the worker (it is started again by the next request)."""
    _WORKER.shutdown()


def worker_stats() -> dict[str, Any]:
    """``starts`` / ``requests`` counted in this process, and the running worker's ``pid``."""
    return {"starts": _WORKER.starts, "requests": _WORKER.requests, "pid": _WORKER.pid()}


def _request(message: dict, timeout: float, generation: int | None = None) -> tuple[dict, str]:
    try:
        return _WORKER.request(message, timeout, generation)
    except _Crash as crash:
        raise _crash_error(crash, message, timeout) from None


def _crash_error(crash: _Crash, message: dict, timeout: float) -> CodegenError:
    what = f"for {message.get('triple')}" + (f" (cpu {message['cpu']})" if message.get("cpu") else "")
    if crash.timed_out:
        text = f"LLVM code generation {what} timed out after {timeout:g} s; the worker was killed"
    else:
        text = f"LLVM crashed while compiling {what}: {_describe_status(crash.returncode)}"
    stderr = crash.stderr[-_STDERR_KEEP:]
    if stderr:
        text += "\n" + stderr
    err = CodegenError(text)
    err.stderr, err.returncode, err.timed_out = crash.stderr, crash.returncode, crash.timed_out
    return err


# ------------------------------------------------------------------ caches

_FORMAT = 1
_MAGIC = b"PTXVM-LLVM %d\n" % _FORMAT
_HEADER_LEN = struct.Struct("<I")


@cache
def _fingerprint() -> bytes:
    import llvmlite

    from .. import __version__
    worker_src = Path(llvm_worker.__file__).read_bytes()
    text = f"format {_FORMAT} ptxvm {__version__} llvmlite {llvmlite.__version__} worker "
    return text.encode() + hashlib.sha256(worker_src).digest()


def cache_key(llvm_ir: str, triple: str, cpu: str, features: str, opt: int, emit: tuple[str, ...],
              reloc: str, codemodel: str) -> str:
    h = hashlib.sha256(_fingerprint())
    for part in (triple, cpu, features, str(opt), ",".join(emit), reloc, codemodel):
        h.update(b"\0" + part.encode())
    h.update(b"\0")
    h.update(llvm_ir.encode("utf-8", "surrogatepass"))
    return h.hexdigest()


def _entry_path(key: str) -> Path:
    # Imported late (here and in compile_ir): the module pulls in the whole frontend.
    from ..diskcache import cache_dir
    return cache_dir() / "llvm" / key[:2] / f"{key}.bin"


def _encode_entry(key: str, res: CompileResult) -> bytes:
    parts = [(name, value.encode() if isinstance(value, str) else value)
             for name, value in (("obj", res.obj), ("asm", res.asm), ("ll", res.optimized_ir)) if value is not None]
    payload = b"".join(data for _, data in parts)
    header = json.dumps({"key": key, "seconds": res.seconds, "log": res.log,
                         "parts": [[name, len(data)] for name, data in parts],
                         "sha256": hashlib.sha256(payload).hexdigest()}).encode()
    return _MAGIC + _HEADER_LEN.pack(len(header)) + header + payload


def _decode_entry(blob: bytes, key: str) -> CompileResult:
    if not blob.startswith(_MAGIC):
        raise ValueError("not a ptxvm LLVM cache entry")
    pos = len(_MAGIC)
    (hlen,) = _HEADER_LEN.unpack_from(blob, pos)
    pos += _HEADER_LEN.size
    header = json.loads(blob[pos:pos + hlen])
    payload = blob[pos + hlen:]
    if header["key"] != key or hashlib.sha256(payload).hexdigest() != header["sha256"]:
        raise ValueError("cache entry does not match")
    values: dict[str, Any] = {}
    at = 0
    for name, size in header["parts"]:
        data = payload[at:at + size]
        at += size
        values[name] = data if name == "obj" else data.decode()
    return CompileResult(values.get("obj"), values.get("asm"), values.get("ll"), float(header["seconds"]),
                         "disk", str(header["log"]))


def _read_disk(key: str) -> CompileResult | None:
    # The object code is loaded and run: only an entry sealed with this user's secret is read
    # (a flipped bit, a copy, a file written by anyone else is a miss and removed).
    from ..diskcache import read_sealed, remove
    path = _entry_path(key)
    payload = read_sealed(path, "llvm", key)
    if payload is None:
        return None
    try:
        return _decode_entry(bytes(payload), key)
    except Exception:  # noqa: BLE001 - sealed by us yet undecodable: a miss, rewritten later
        remove(path)
        return None


def _write_disk(key: str, res: CompileResult) -> None:
    from ..diskcache import write_sealed
    write_sealed(_entry_path(key), "llvm", key, _encode_entry(key, res))   # atomic, within the cap; never raises OSError


class _Memory:
    """LRU of recent results, bounded by entry count and total bytes."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._items: OrderedDict[str, CompileResult] = OrderedDict()
        self._bytes = 0

    def get(self, key: str) -> CompileResult | None:
        with self._lock:
            res = self._items.get(key)
            if res is not None:
                self._items.move_to_end(key)
            return res

    def put(self, key: str, res: CompileResult) -> None:
        with self._lock:
            old = self._items.pop(key, None)
            if old is not None:
                self._bytes -= old._size()
            self._items[key] = res
            self._bytes += res._size()
            while len(self._items) > _MEMORY_ENTRIES or (self._bytes > _MEMORY_BYTES and len(self._items) > 1):
                _, dropped = self._items.popitem(last=False)
                self._bytes -= dropped._size()

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self._bytes = 0


_MEMORY = _Memory()


def clear_memory_cache() -> None:
    _MEMORY.clear()


# ------------------------------------------------------------------ the entry point

def compile_ir(llvm_ir: str, *, triple: str, cpu: str = "", features: str = "", opt: int = 3,
               emit: tuple[str, ...] = ("obj",), reloc: str = "pic", codemodel: str = "jitdefault",
               timeout: float | None = None, use_cache: bool | None = None,
               later: tuple[str, ...] = ()) -> CompileResult:
    """Parse, verify, optimise (new pass manager, ``O<opt>``) and compile ``llvm_ir``.

    ``emit`` names the outputs: ``"obj"`` (relocatable object bytes), ``"asm"`` (assembly
    text), ``"ll"`` (the optimised IR). IR without a triple / data layout gets the target's.
    Raises ``CodegenError`` carrying LLVM's message when the IR does not parse or verify, or
    when LLVM crashes or exceeds ``timeout`` seconds (default 300); the worker is then
    restarted for the next call.

    ``later`` names outputs not made now that ``emit_later(res, kind)`` may ask for afterwards
    (made from the optimised module the worker keeps, as if they had been in ``emit``).
    """
    emit_set = set(emit)
    if not emit_set or not emit_set <= set(EMIT_KINDS):
        raise ValueError(f"emit must name some of {EMIT_KINDS}, got {emit!r}")
    if not set(later) <= set(EMIT_KINDS):
        raise ValueError(f"later must name some of {EMIT_KINDS}, got {later!r}")
    if opt not in (0, 1, 2, 3):
        raise ValueError(f"opt must be 0..3, got {opt!r}")
    if reloc not in RELOC_MODELS:
        raise ValueError(f"reloc must be one of {RELOC_MODELS}, got {reloc!r}")
    if codemodel not in CODE_MODELS:
        raise ValueError(f"codemodel must be one of {CODE_MODELS}, got {codemodel!r}")
    emit_norm = tuple(k for k in EMIT_KINDS if k in emit_set)
    from ..diskcache import cache_enabled
    caching = cache_enabled(use_cache)
    # (hashing a large module costs milliseconds: only when a cache is used)
    key = cache_key(llvm_ir, triple, cpu, features, opt, emit_norm, reloc, codemodel) if caching else ""
    timeout = DEFAULT_TIMEOUT if timeout is None else float(timeout)
    request = {"op": "compile", "ir": llvm_ir, "triple": triple, "cpu": cpu, "features": features,
               "opt": opt, "emit": emit_norm, "reloc": reloc, "codemodel": codemodel}
    later_kinds = tuple(k for k in EMIT_KINDS if k in set(later) - emit_set)
    if caching:
        hit = _MEMORY.get(key)
        if hit is None:
            hit = _read_disk(key)
            if hit is not None:
                _MEMORY.put(key, _replace_origin(hit, "memory"))
        elif hit.origin != "memory":
            hit = _replace_origin(hit, "memory")
        if hit is not None:
            # Nothing kept in the worker: a deferred output compiles again (and is cached too).
            return _replace_origin(hit, hit.origin, _Later(later_kinds, None, None, request, timeout, use_cache)
                                   if later_kinds else None)

    reply, log = _request({**request, "keep": bool(later_kinds)}, timeout)
    if not reply["ok"]:
        raise _reply_error(reply, log)
    res = CompileResult(reply["obj"], reply["asm"], reply["ll"], float(reply["seconds"]), "worker", log,
                        phases=tuple(reply.get("phases", {}).items()))
    if caching:
        _write_disk(key, res)
        _MEMORY.put(key, _replace_origin(res, "memory"))
    if later_kinds:
        res = _replace_origin(res, "worker", _Later(later_kinds, reply.get("generation"), reply.get("kept"),
                                                    request, timeout, use_cache))
    return res


def emit_later(res: CompileResult, kind: str) -> str | bytes:
    """Output ``kind`` deferred by ``compile_ir(..., later=(kind,))``: generated from the
    optimised module the worker kept (once), else by compiling the IR again."""
    later = res.later
    if later is None or kind not in later.kinds:
        raise ValueError(f"{kind!r} was not deferred by this compile (later={later.kinds if later else ()})")
    if later.token is not None:
        reply, log = _request({"op": "emit_kept", "token": later.token, "kind": kind,
                               "triple": later.request["triple"], "cpu": later.request["cpu"]},
                              later.timeout, later.generation)
        if reply["ok"]:
            return reply[kind]
        if reply.get("kind") != "gone":
            raise _reply_error(reply, log)
    r = later.request
    again = compile_ir(r["ir"], triple=r["triple"], cpu=r["cpu"], features=r["features"], opt=r["opt"],
                       emit=(kind,), reloc=r["reloc"], codemodel=r["codemodel"], timeout=later.timeout,
                       use_cache=later.use_cache)
    value = {"obj": again.obj, "asm": again.asm, "ll": again.optimized_ir}[kind]
    assert value is not None
    return value


def _replace_origin(res: CompileResult, origin: str, later: _Later | None = None) -> CompileResult:
    return CompileResult(res.obj, res.asm, res.optimized_ir, res.seconds, origin, res.log, later, res.phases)


_KIND_TEXT = {"parse": "LLVM could not parse the IR", "verify": "the LLVM IR failed verification",
              "target": "LLVM does not support this target", "internal": "the LLVM worker failed"}


def _reply_error(reply: dict, log: str) -> CodegenError:
    kind = reply.get("kind", "internal")
    text = f"{_KIND_TEXT.get(kind, kind)}:\n{reply.get('message', '')}"
    if log:
        text += f"\n{log[-_STDERR_KEEP:]}"
    err = CodegenError(text)
    err.llvm_kind, err.stderr = kind, log
    return err
