"""The executor registry: every place that runs a kernel resolves its executor here.

An executor is a name, a :class:`Capabilities` record (what is true of it today) and one
``launch(request) -> LaunchStats`` callable, the same signature for all. ``Kernel.__call__``
(``device=``), ``ptxvm run --device``, ``ptxvm difftest --executors``, ``ptxvm record
--device`` and ``ptxvm info`` all look executors up here; none branches on a name.

Adding an executor is adding a module to this package that calls :func:`register` when
imported (``interp.py``, ``cpu.py``); a program or a test may also call :func:`register`
itself. Names are lower-case words with an optional ``:variant`` (``hip``, ``emu:gfx942``),
so one module can register a family of executors, one per target.

Importing this package imports no executor's machinery (no numpy, no llvmlite): the built-in
modules declare their capabilities and load their implementation on the first launch. An
executor whose Python packages are missing stays registered but is not *available*; asking
for it raises :class:`MissingPackage`, which names the package and how to install it.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from collections.abc import Callable
from dataclasses import dataclass
from importlib.util import find_spec
from typing import TYPE_CHECKING, Any

from ...errors import LaunchError

if TYPE_CHECKING:
    from ..api import Kernel

NAME = re.compile(r"[a-z][a-z0-9_]*(:[a-z0-9_.+-]+)?")


@dataclass(frozen=True)
class Capabilities:
    """What an executor does, as far as a caller needs to know before launching on it."""

    host_cpu: bool                       # runs on this machine's CPU (no accelerator needed)
    packages: tuple[str, ...] = ()       # optional Python packages it needs (import names)
    needs_why: str = ""                  # what it uses them for: "compiles the kernel with LLVM"
    reference: bool = False              # the executable definition of PTX semantics (DESIGN.md)
    deterministic: bool = True           # the same launch gives the same bits every run
    measures_steps: bool = False         # LaunchStats.steps / divergent_steps are counted
    trace: bool = False                  # per-thread instruction traces (trace=, --trace)
    printf: bool = False                 # device printf (vprintf) and __assertfail
    heap: bool = False                   # device malloc / free
    warp: bool = False                   # warp-synchronous instructions (shfl, vote, match, redux)
    cooperative: bool = False            # cooperative launches (grid-wide sync): LaunchRequest.cooperative
    opt_in: bool = False                 # runs only when named (a test tool): not in defaults()


@dataclass(frozen=True, eq=False)
class LaunchRequest:
    """One launch, already checked by ``Kernel.__call__`` (options, geometry, argument count
    and the capabilities it asks for), as every executor's ``launch`` receives it."""

    kernel: Kernel                        # the driver's kernel: .module (IR, filename), .ir, .params
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    args: tuple[Any, ...]                 # as the caller gave them: numpy arrays, DeviceArrays, scalars
    shared_mem: int                       # dynamic shared memory bytes
    max_steps: int | None                 # watchdog budget per thread; None: the default
    trace: frozenset[int] | None = None   # global linear thread ids to trace (capability `trace`)
    trace_out: Any = None                 # where traces (and the interpreter's printf) go
    # A cooperative launch (cudaLaunchCooperativeKernel): every CTA resident at once, the grid
    # workspace cooperative groups' this_grid() reads through %envreg1/%envreg2 (capability `cooperative`).
    cooperative: bool = False


@dataclass(frozen=True)
class Executor:
    name: str
    summary: str                          # one line for `--help` and `ptxvm info`
    capabilities: Capabilities
    launch: Callable[[LaunchRequest], Any]    # -> LaunchStats; raises PtxError subclasses only
    # Why it cannot run here although its packages are installed (a tool, library or device it
    # needs is absent), one line, or None; asked when it is looked up, never at import.
    unavailable: Callable[[], str | None] | None = None


class UnknownExecutor(LaunchError):
    """A name no executor is registered under."""


class Unavailable(LaunchError):
    """A registered executor that cannot run here: what it needs beyond Python packages is absent."""


class MissingPackage(LaunchError):
    """An optional Python package an executor (or a command) needs is not installed."""

    def __init__(self, package: str, why: str) -> None:
        super().__init__(f"{why}, which needs the Python package `{package}`; it is not installed: "
                         f"pip install {package}")


_REGISTRY: dict[str, Executor] = {}
_builtins_loaded = False


def register(executor: Executor, *, replace: bool = False) -> Executor:
    """Make ``executor`` reachable by its name everywhere; a taken name needs ``replace=True``."""
    if not NAME.fullmatch(executor.name):
        raise ValueError(f"executor name {executor.name!r} must match {NAME.pattern} (e.g. `hip`, `emu:gfx942`)")
    if executor.name in _REGISTRY and not replace and _REGISTRY[executor.name] is not executor:
        raise ValueError(f"an executor named `{executor.name}` is already registered")
    _REGISTRY[executor.name] = executor
    return executor


def unregister(name: str) -> None:
    """Remove a registered executor (tests that registered one clean up with this)."""
    _REGISTRY.pop(name, None)


def _load_builtins() -> None:
    """Import every public module of this package once; each registers its executor(s)."""
    global _builtins_loaded
    if _builtins_loaded:
        return
    _builtins_loaded = True
    for info in pkgutil.iter_modules(__path__):
        if not info.name.startswith("_"):
            importlib.import_module(f"{__name__}.{info.name}")


def _ordered() -> list[Executor]:
    # The reference executor first: it is the default and difftest's default reference.
    _load_builtins()
    return sorted(_REGISTRY.values(), key=lambda e: not e.capabilities.reference)


def names() -> tuple[str, ...]:
    """Every registered executor, the reference first (available here or not)."""
    return tuple(e.name for e in _ordered())


def missing_package(executor: Executor) -> str | None:
    """The first package ``executor`` needs that cannot be imported here, or None. Looks the
    package up without importing it (``ptxvm info`` must not load llvmlite)."""
    for package in executor.capabilities.packages:
        try:
            if find_spec(package) is None:
                return package
        except (ImportError, ValueError):
            return package
    return None


def why_unavailable(executor: Executor) -> str | None:
    """One line on why ``executor`` cannot run here (a missing package, tool or device), or None."""
    package = missing_package(executor)
    if package is not None:
        return f"{package} is not installed"
    return executor.unavailable() if executor.unavailable is not None else None


def available() -> tuple[str, ...]:
    """The registered executors this installation can run (packages importable, nothing else missing)."""
    return tuple(e.name for e in _ordered() if why_unavailable(e) is None)


def defaults() -> tuple[str, ...]:
    """What runs when no executor is named (difftest's default set): ``available()`` less the
    opt-in ones (test tools such as emu:*), which run only when named."""
    return tuple(n for n in available() if not get(n).capabilities.opt_in)


def get(name: str, what: str = "device") -> Executor:
    """The executor registered as ``name``; UnknownExecutor listing the registered ones
    (``what`` is the word the caller used for it: device, executor)."""
    _load_builtins()
    executor = _REGISTRY.get(name) if isinstance(name, str) else None
    if executor is None:
        raise UnknownExecutor(f"{what} `{name}` is not available; this build has: {', '.join(names())}")
    return executor


def require(name: str, asked_as: str | None = None) -> Executor:
    """``get(name)``, and MissingPackage unless its packages are installed. ``asked_as`` is how
    the caller named it in the message (``--device cpu``); default ``device `cpu```."""
    executor = get(name)
    package = missing_package(executor)
    if package is not None:
        why = executor.capabilities.needs_why or "runs kernels"
        raise MissingPackage(package, f"{asked_as or f'device `{name}`'} {why}")
    reason = executor.unavailable() if executor.unavailable is not None else None
    if reason is not None:
        raise Unavailable(f"{asked_as or f'device `{name}`'} is unavailable here: {reason}")
    return executor


def with_capability(flag: str) -> tuple[str, ...]:
    """Names of the registered executors whose capability ``flag`` is true."""
    return tuple(e.name for e in _ordered() if getattr(e.capabilities, flag))
