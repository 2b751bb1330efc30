"""`emu:<target>`: a kernel translated to an AMD code object and run on an AMD ISA emulator.

A test tool, not a runtime: the emulator is tinygrad's Python AMD ISA emulator behind
``../shared/tools/amdgpu-emu/emu_amdgpu.py`` (next to the repository, or ``$PTXVM_EMU_TOOL``),
which needs ``clang``. With both present, ``emu:gfx90a``, ``emu:gfx908``, ``emu:gfx942`` and
``emu:gfx1100`` run a launch as a GPU would: ``ptxvm.compile`` for the target, the kernarg
segment packed from the code object's metadata (``ptxvm.driver.kernarg``, as ``hip`` does),
the kernel run in the tool's child process, the arrays' device copies copied back. Without
them the executors stay registered and say what is missing. They are opt-in (run only when
named): an emulated launch takes seconds to minutes.

Device runtime: the kernel's printf buffer (``hidden_printf_buffer``, 1 MiB) is allocated and its
records printed to ``trace_out`` (stdout by default) after the launch, as a HIP runtime prints them; a
cooperative launch gets a zeroed grid-sync argument (``hidden_multigrid_sync_arg``), an ordinary one a
null pointer; the malloc heap is the code object's own. Cooperative grids of more than one block
cannot be resident on the emulator and are refused (``EmulatorLimit`` 'endless').

Module variables: each launch starts from the code object's initialisers. A kernel that names a
variable the driver's device holds changed (written from the host, or by a launch on a host
executor) is refused (``EmulatorLimit`` 'module_state'), and what a kernel writes to module
variables is not kept for the next launch.

Failures become ptxvm errors: an emulator limit (no apertures, an instruction it cannot
run, ...) is :class:`EmulatorLimit` with a ``reason`` key; a crash, an out-of-bounds write,
an endless wave or a timeout is a :class:`~ptxvm.errors.KernelFault` (``WatchdogError`` for
the last two).
"""

from __future__ import annotations

import os
import re
import shutil
import sys
import threading
from pathlib import Path
from typing import Any

from ...errors import KernelFault, LaunchError, WatchdogError
from . import Capabilities, Executor, LaunchRequest, Unavailable, register

TARGETS = ("gfx90a", "gfx908", "gfx942", "gfx1100")
_CLANGS = ["clang"] + [f"clang-{v}" for v in range(22, 13, -1)]     # the tool's own search order
_TOOL_FILE = "emu_amdgpu.py"
_LOCK = threading.Lock()
_TOOL: Any = None


class EmulatorLimit(LaunchError):
    """The emulator cannot run this kernel (not a fault of the kernel or of ptxvm).
    ``reason``: 'aperture' | 'mubuf_scratch' | 'instruction' | 'endless' | 'module_state'; ``instruction`` for
    'instruction': the mnemonic the emulator could not compile or decode."""

    def __init__(self, message: str, reason: str, instruction: str | None = None) -> None:
        self.reason, self.instruction = reason, instruction
        super().__init__(message)


def tool_dir() -> Path | None:
    """Where the emulator tool is: ``$PTXVM_EMU_TOOL``, else ``shared/tools/amdgpu-emu`` beside
    the repository (CI's layout) or inside it; None when absent."""
    env = os.environ.get("PTXVM_EMU_TOOL")
    root = Path(__file__).resolve().parents[3]
    candidates = [Path(env)] if env else [root.parent / "shared/tools/amdgpu-emu", root / "shared/tools/amdgpu-emu"]
    return next((c for c in candidates if (c / _TOOL_FILE).is_file()), None)


def clang() -> str | None:
    """The clang the tool will use (``$EMU_CLANG`` or the first of clang, clang-22 .. clang-14)."""
    names = [os.environ["EMU_CLANG"]] if os.environ.get("EMU_CLANG") else _CLANGS
    return next((p for p in map(shutil.which, names) if p), None)


def why_unavailable() -> str | None:
    if tool_dir() is None:
        if os.environ.get("PTXVM_EMU_TOOL"):
            return f"the AMD ISA emulator tool is not at $PTXVM_EMU_TOOL ({os.environ['PTXVM_EMU_TOOL']})"
        return ("the AMD ISA emulator tool (../shared/tools/amdgpu-emu beside the repository, or $PTXVM_EMU_TOOL) "
                "is not here")
    if clang() is None:
        return "clang is not on PATH (the emulator compiles ISA pseudocode with it): apt-get install clang-19"
    return None


def _tool() -> Any:
    """The tool's module, imported and set up once."""
    global _TOOL
    with _LOCK:
        if _TOOL is None:
            reason = why_unavailable()
            if reason:
                raise Unavailable(f"emu executors are unavailable here: {reason}")
            d = str(tool_dir())
            if d not in sys.path:
                sys.path.insert(0, d)
            import emu_amdgpu
            try:
                emu_amdgpu.setup()
            except emu_amdgpu.EmuError as e:
                raise Unavailable(f"the AMD ISA emulator could not be set up: {e}") from None
            _TOOL = emu_amdgpu
        return _TOOL


def code_object(module, target: str):
    """The driver module's code object for ``target``, the one its emu launches run (translated
    once per module)."""
    key = ("emu", target)
    obj = module._programs.get(key)
    if obj is None:
        import ptxvm
        obj = module._programs[key] = ptxvm.compile(module.ir, target=target)
    return obj


def _names(op):
    """Symbol names an operand mentions (directly, as an address base, in a vector or list)."""
    name = getattr(op, "name", None)
    if isinstance(name, str):
        yield name
    for attr in ("base", "operand", "first", "second"):
        inner = getattr(op, attr, None)
        if inner is not None:
            yield from _names(inner)
    for inner in tuple(getattr(op, "elements", ())) + tuple(getattr(op, "extra", ())):
        yield from _names(inner)


def _stale_variables(kernel) -> list[str]:
    """Module variables the kernel (or a `.func`) names whose bytes in the driver's device differ
    from their initialisers (cudaMemcpyToSymbol-style writes, an earlier host launch): a code
    object on the emulator starts from its initialisers, so running it would silently differ."""
    from ..arrays import Device, default_device
    module = kernel.module
    dev = default_device()
    if module not in dev.images:
        return []
    named = {n for name, f in module.ir.functions.items() if f.body is not None
             and (name == kernel.name or not f.is_kernel) for ins in f.body.instructions()
             for op in ins.operands for n in _names(op)}
    now = dev.images[module]
    wanted = [n for n in now.addresses if n in named]
    if not wanted:
        return []
    fresh_dev = Device()
    fresh = fresh_dev.image(module)
    return [n for n in wanted if not _same(dev.memory.find(now.addresses[n]).data,
                                             fresh_dev.memory.find(fresh.addresses[n]).data)]


def _same(a, b) -> bool:
    import numpy as np
    return bool(np.array_equal(a, b))


def _launcher(target: str):
    name = f"emu:{target}"

    def launch(request: LaunchRequest):
        from .. import api, kernarg
        kernel = request.kernel
        stale = _stale_variables(kernel)
        if stale:
            raise EmulatorLimit(f"kernel `{kernel.name}` on {name} reads module variable(s) "
                                f"{', '.join(f'`{v}`' for v in stale)}, changed since the module was loaded "
                                "(written from the host or by a launch on another executor); the emulator runs the "
                                "code object from its initialisers and cannot be given them", "module_state")
        blocks = request.grid[0] * request.grid[1] * request.grid[2]
        if request.cooperative and blocks > 1:
            raise EmulatorLimit(f"kernel `{kernel.name}` on {name}: a cooperative grid of {blocks} blocks cannot be "
                                "resident at once on the emulator (it runs workgroups one after another, so a grid "
                                "barrier never completes); cooperative launches of one block run", "endless")
        tool = _tool()
        obj = code_object(kernel.module, target)
        ka = kernarg.pack(obj.metadata[kernel.name], kernel.params, request.args, request.grid, request.block,
                          request.shared_mem, device=name)
        stats = api.LaunchStats()
        kernel.stats = stats
        timeout = float(os.environ.get("PTXVM_EMU_TIMEOUT", os.environ.get("EMU_TIMEOUT", "900")))
        co, extra = runtime_arguments(tool, obj, kernel.name, blocks, request.cooperative)
        try:
            tool.run_kernel(co, kernel.name, request.grid, request.block, list(ka.values) + [a for _, a in extra],
                            dynamic_lds=request.shared_mem, timeout=timeout)
        except tool.EmuError as e:
            raise _error(e, name, kernel.name) from None
        _print(obj, dict(extra), request.trace_out)
        return stats

    return launch


PRINTF_BUFFER_BYTES = 1 << 20     # the printf buffer the emulated runtime hands the kernel


def runtime_arguments(tool, obj, kernel: str, blocks: int, cooperative: bool):
    """The code object, parsed for the tool, with the hidden arguments a HIP runtime fills for
    ptxvm's device runtime turned into buffers the tool passes (it leaves hidden kinds zero):
    the printf buffer (header: used 0, size), and for a cooperative launch the grid sync
    argument (a zeroed ``mg_info`` with its ``num_wg``); outside one that argument stays 0."""
    import copy
    import dataclasses

    import numpy as np
    co = tool.parse_code_object(obj.hsaco)
    info = co.kernels[kernel]
    meta = copy.deepcopy(info.meta)
    extra: list[tuple[str, Any]] = []
    for a in meta.get(".args", []):
        kind = a.get(".value_kind")
        if kind == "hidden_printf_buffer":
            buf = np.zeros(PRINTF_BUFFER_BYTES, dtype=np.uint8)
            buf[4:8] = np.array([PRINTF_BUFFER_BYTES], dtype=np.uint32).view(np.uint8)
            extra.append((kind, buf))
        elif kind == "hidden_multigrid_sync_arg":
            mg = np.zeros(64, dtype=np.uint8)
            mg[40:44] = np.array([blocks], dtype=np.uint32).view(np.uint8)
            extra.append((kind, mg if cooperative else None))
        else:
            continue
        a[".value_kind"] = "global_buffer"
    co.kernels[kernel] = dataclasses.replace(info, meta=meta)
    return co, extra


def _print(obj, extra: dict, out) -> None:
    """Print the printf buffer's records, as a HIP runtime does after the kernel."""
    buf = extra.get("hidden_printf_buffer")
    if buf is None:
        return
    from ...amdgpu.printf_decode import decode
    lines = decode(bytes(buf), obj.note.get("amdhsa.printf", []))
    stream = out if out is not None else sys.stdout
    for line in lines:
        stream.write(line)


_INSTR = re.compile(r"\b(s_memtime|s_memrealtime|s_sendmsg_rtn_b(?:32|64)|s_trap|v_exp_f16|v_mad_f32|v_mac_f32|"
                    r"[sv]_[a-z0-9_]+)\b")


def _error(e: Any, device: str, kernel: str) -> Exception:
    """The tool's EmuError as the ptxvm error a user of a GPU would get for the same thing."""
    stage, text = getattr(e, "stage", "emulator"), str(e)
    first = text.splitlines()[0] if text else stage
    where = f"kernel `{kernel}` on {device}"
    if stage == "unsupported":
        reason = "aperture" if "src_shared_base" in text or "apertures" in text else "mubuf_scratch"
        return EmulatorLimit(f"{where} cannot be emulated: {first}", reason)
    if stage == "args":
        if "read-only" in text:
            return LaunchError(f"the kernel wrote to read-only numpy argument(s) on {device} ({first}); pass "
                               "writable arrays to receive the writes")
        return LaunchError(f"{where}: {first}")
    if stage in ("load", "setup"):
        return LaunchError(f"{where}: the emulator refused the code object: {first}")
    if stage == "timeout":
        return WatchdogError(f"{where} ran past the emulator's time limit ({first}); set PTXVM_EMU_TIMEOUT "
                             "(seconds) to wait longer", kernel=kernel)
    if stage == "oob":
        return KernelFault(f"{where} wrote out of bounds of its buffers: {first}", kernel=kernel)
    if stage == "crash":
        return KernelFault(f"{where} crashed the emulator (a bad memory access, or an emulator bug): {first}",
                           kernel=kernel)
    if "infinite loop" in text:
        return EmulatorLimit(f"{where}: a wave ran 1M instructions without reaching a barrier; workgroups run "
                             f"one after another on the emulator, so a wait on another block never ends ({first})",
                             "endless")
    m = _INSTR.search(text)
    if m and any(w in text for w in ("compile", "decode", "not supported", "Unknown", "unknown", "Error")):
        return EmulatorLimit(f"{where} cannot be emulated: the emulator cannot run `{m.group(1)}` ({first})",
                             "instruction", m.group(1))
    return KernelFault(f"{where} failed in the emulator: {first}", kernel=kernel)


def _register(target: str) -> Executor:
    return register(Executor(
        f"emu:{target}", f"the AMD ISA emulator running the {target} code object (a test tool; slow)",
        # Workgroups run one after another, in order: deterministic. No steps or traces; printf
        # through the code object's printf buffer, malloc from its heap, cooperative grids of one block.
        Capabilities(host_cpu=False, packages=("llvmlite", "ziglang"),
                     needs_why="translates the kernel to an AMD code object (LLVM, ld.lld)",
                     deterministic=True, warp=True, opt_in=True, printf=True, heap=True, cooperative=True),
        _launcher(target), why_unavailable))


EXECUTORS = tuple(_register(t) for t in TARGETS)
