"""The LLVM worker process: parses, verifies, optimises and compiles LLVM IR.

LLVM reports fatal errors (``Cannot select``, failed assertions) by aborting the
process, which no Python code can catch. ptxvm therefore runs every LLVM
optimisation and code generation in this separate process, started by
``ptxvm.backend.toolchain`` as ``python -m ptxvm.backend.llvm_worker``; if it dies, the
parent turns its stderr into a ``CodegenError`` and starts a fresh one.

Protocol (also used by the parent, hence the helpers live here): each message is
an 8-byte little-endian length followed by that many bytes of pickle. The
parent writes requests on our stdin, we answer on our stdout, one answer per
request, in order. Pickle is safe here: both ends are ptxvm, over private pipes.
Our fd 1 is moved aside for the protocol and pointed at stderr, so nothing
LLVM or Python prints can corrupt the stream. Requests:

* ``{"op": "compile", "id", "ir", "triple", "cpu", "features", "opt", "emit",
  "reloc", "codemodel"}`` -> ``{"ok": True, "obj", "asm", "ll", "seconds", "phases"}`` (seconds
  spent in parse, verify, opt, codegen) or
  ``{"ok": False, "kind": "parse"|"verify"|"target"|"internal", "message"}``;
  With ``"keep": True`` the optimised module (before code generation) is also kept, under the
  request's id, for one later ``emit_kept`` (the reply then says ``"kept": id``); only the
  last ``KEEP_MODULES`` (and at most ``KEEP_IR_BYTES`` of IR text but the newest) are kept;
* ``{"op": "emit_kept", "token", "kind"}`` -> ``{"ok": True, "asm"|"obj"|"ll": ...}`` from the
  module kept by compile request ``token`` (exactly what that request would have emitted), or
  ``{"ok": False, "kind": "gone"}`` when it is no longer kept (the caller compiles again);
* ``{"op": "ping"}`` -> ``{"ok": True, "pid"}``;
* ``{"op": "sleep", "seconds"}`` (lets tests exercise the parent's timeout).
"""

from __future__ import annotations

import os
import pickle
import signal
import struct
import sys
import time
import traceback
from typing import Any, BinaryIO

_LENGTH = struct.Struct("<Q")


# ------------------------------------------------------------------ framing (both sides)

def write_message(stream: BinaryIO, message: Any) -> None:
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(_LENGTH.pack(len(data)))
    stream.write(data)
    stream.flush()


def _read_exact(stream: BinaryIO, n: int) -> bytes:
    chunks: list[bytes] = []
    while n:
        chunk = stream.read(n)
        if not chunk:
            break
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def read_message(stream: BinaryIO) -> Any:
    """The next message; ``EOFError`` when the other side closed the pipe (even mid-message)."""
    head = _read_exact(stream, _LENGTH.size)
    if len(head) < _LENGTH.size:
        raise EOFError("pipe closed")
    (size,) = _LENGTH.unpack(head)
    data = _read_exact(stream, size)
    if len(data) < size:
        raise EOFError("pipe closed mid-message")
    return pickle.loads(data)


# ------------------------------------------------------------------ compilation (worker side)

EMIT_KINDS = ("ll", "asm", "obj")
KEEP_MODULES = 4
KEEP_IR_BYTES = 32 << 20           # bound on the kept modules' IR text (the newest is always kept)

# LLVM command-line options of the worker (process-wide, so the same for every request; they are
# part of this file, hence of the compile cache's key).
# * No "scalar IR passes" in AMDGPU code generation (SeparateConstOffsetFromGEP, straight-line
#   strength reduction, nary reassociation and the GVN/EarlyCSE run after them): they look for
#   getelementptr chains, and the lifter addresses memory by integer arithmetic and inttoptr. On
#   ptxvm's IR they cost 14 % of code generation (CPU seconds over 24 fixture modules for gfx90a
#   and gfx1030: 6.41 -> 5.54) for no gain: 53,188 -> 52,972 instructions in all (per module
#   -4.6 % .. +0.75 %), bench_translate's code-quality table unchanged but for histogram (gfx90a
#   90 -> 82 instructions, 10 -> 8 VGPRs). Affects amdgcn only (not the host JIT's code generation).
LLVM_OPTIONS = ("-amdgpu-scalar-ir-passes=0",)

_kept: dict[Any, tuple[Any, Any, int]] = {}   # compile request id -> (optimised module, machine, IR bytes)

_machines: dict[tuple, Any] = {}
_PROBE_IR = "define void @ptxvm_probe() {\n  ret void\n}\n"


def _captured_stderr(fn: Any) -> str:
    """Run ``fn()`` with fd 2 sent to a temporary file; return what was written there."""
    import tempfile
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as tmp:
        os.dup2(tmp.fileno(), 2)
        try:
            fn()
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        tmp.seek(0)
        return tmp.read().decode("utf-8", "replace")


def _target_machine(llvm: Any, triple: str, cpu: str, features: str, opt: int, reloc: str, codemodel: str) -> Any:
    key = (triple, cpu, features, opt, reloc, codemodel)
    tm = _machines.get(key)
    if tm is None:
        target = llvm.Target.from_triple(triple)
        made: list[Any] = []

        def make_and_probe() -> None:
            made.append(target.create_target_machine(cpu=cpu, features=features, opt=opt, reloc=reloc,
                                                     codemodel=codemodel))
            made[0].emit_assembly(llvm.parse_assembly(_PROBE_IR))

        # LLVM only warns about an unknown cpu or feature (and then may abort deep in codegen, as
        # amdgcn does): compile an empty function once and refuse the target if it complained.
        text = _captured_stderr(make_and_probe)
        tm = made[0]
        bad = [line.strip() for line in text.splitlines() if "not a recognized" in line]
        if bad:
            raise RuntimeError("; ".join(dict.fromkeys(bad)))
        _machines[key] = tm
    return tm


def _error(kind: str, message: str) -> dict:
    return {"ok": False, "kind": kind, "message": message.strip()}


def compile_request(llvm: Any, req: dict) -> dict:
    start = time.perf_counter()
    try:
        # A context of its own: types, constants and metadata of a module parsed into LLVM's
        # global context stay there for good (the worker grew by ~0.7 MB per fuzz kernel).
        module = llvm.parse_assembly(req["ir"], context=llvm.create_context())
    except RuntimeError as exc:
        return _error("parse", str(exc).removeprefix("LLVM IR parsing error").strip())
    phases = {"parse": time.perf_counter() - start}
    try:
        module.verify()
    except RuntimeError as exc:
        return _error("verify", str(exc))
    phases["verify"] = time.perf_counter() - start - phases["parse"]
    opt = req["opt"]
    try:
        tm = _target_machine(llvm, req["triple"], req["cpu"], req["features"], opt, req["reloc"], req["codemodel"])
    except RuntimeError as exc:
        return _error("target", f"{req['triple']!r} cpu {req['cpu']!r} features {req['features']!r}: {exc}")
    # The optimiser needs the target's data layout; IR without one gets the target's.
    if not module.triple:
        module.triple = req["triple"]
    if not module.data_layout:
        module.data_layout = str(tm.target_data)

    pto = llvm.create_pipeline_tuning_options(speed_level=opt)
    # As clang does: loop and SLP vectorisers from -O2 up (llvmlite leaves SLP off).
    pto.loop_vectorization = opt >= 2
    pto.slp_vectorization = opt >= 2
    # AMD GPUs: no loop unrolling. The PTX comes from nvcc, whose NVVM already unrolled what it
    # judged worth it; what is left are the lifter's 32-lane loops of warp ops (match, redux, a
    # non-ballot vote) that LLVM unrolled into 32 ds_bpermute steps each: 2-7x the optimise and
    # codegen time of such modules, and twice their instructions (bench_translate --profile).
    pto.loop_unrolling = not req["triple"].startswith("amdgcn")
    pb = llvm.create_pass_builder(tm, pto)
    mark = time.perf_counter()
    pb.getModulePassManager().run(module, pb)
    phases["opt"] = time.perf_counter() - mark

    emit = req["emit"]
    out: dict[str, Any] = {"ok": True, "obj": None, "asm": None, "ll": None}
    if req.get("keep"):
        _kept[req.get("id")] = (module, tm, len(req["ir"]))   # as optimised (codegen uses clones)
        while len(_kept) > 1 and (len(_kept) > KEEP_MODULES or sum(k[2] for k in _kept.values()) > KEEP_IR_BYTES):
            del _kept[next(iter(_kept))]
        out["kept"] = req.get("id")
    mark = time.perf_counter()
    out.update(_emit(tm, module, emit))
    phases["codegen"] = time.perf_counter() - mark
    out["seconds"] = time.perf_counter() - start
    out["phases"] = phases
    return out


def _emit(tm: Any, module: Any, emit: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if "ll" in emit:
        out["ll"] = str(module)
    for kind in ("asm", "obj"):
        if kind in emit:
            # Code generation mutates the module (AMDGPU structurizes control flow in place and
            # a second emission from it aborts), and a clone's use lists are not in the same
            # order as the original's, which changes register allocation and scheduling: every
            # output is made from a fresh clone, so the assembly (made now or later from a kept
            # module) and the object describe the same code.
            source = module.clone()
            out[kind] = tm.emit_assembly(source) if kind == "asm" else bytes(tm.emit_object(source))
    return out


def emit_kept(req: dict) -> dict:
    kept = _kept.pop(req["token"], None)
    if kept is None:
        return _error("gone", f"no module kept for request {req['token']!r}")
    module, tm, _ = kept
    return {"ok": True, **_emit(tm, module, (req["kind"],))}


def _handle(llvm: Any, req: dict) -> dict:
    op = req.get("op")
    if op == "compile":
        return compile_request(llvm, req)
    if op == "emit_kept":
        return emit_kept(req)
    if op == "ping":
        return {"ok": True, "pid": os.getpid()}
    if op == "sleep":
        time.sleep(float(req["seconds"]))
        return {"ok": True}
    return _error("internal", f"unknown request {op!r}")


def main() -> int:
    # The protocol gets a private copy of fd 1; fd 1 itself now writes to stderr.
    proto_out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    proto_in = sys.stdin.buffer
    # Ctrl-C in the user's terminal reaches us too; the parent decides what to stop.
    signal.signal(signal.SIGINT, signal.SIG_IGN)

    import llvmlite.binding as llvm
    llvm.initialize_all_targets()
    llvm.initialize_all_asmprinters()
    for option in LLVM_OPTIONS:
        llvm.set_option("ptxvm", option)

    while True:
        try:
            req = read_message(proto_in)
        except EOFError:
            return 0   # the parent closed our stdin (exit, or it died): nothing left to do
        try:
            resp = _handle(llvm, req)
        except Exception:  # noqa: BLE001 - report, keep serving
            resp = _error("internal", traceback.format_exc())
        resp["id"] = req.get("id")
        write_message(proto_out, resp)


if __name__ == "__main__":
    sys.exit(main())
