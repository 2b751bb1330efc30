"""The one exception hierarchy of ptxvm.

Every error a user can meet is a ``PtxError``. Errors tied to a place in a PTX
file carry ``filename``, ``line`` and ``column`` (1-based) and render the source
line with a caret under the offending column, the way compilers do.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """One problem found in a source file."""

    message: str
    filename: str | None = None
    line: int | None = None
    column: int | None = None
    source_line: str | None = None
    severity: str = "error"
    category: str = "semantic"   # "syntax" (not PTX text) or "semantic" (PTX that breaks a rule)

    def location(self) -> str:
        parts = [self.filename or "<string>"]
        if self.line is not None:
            parts.append(str(self.line))
            if self.column is not None:
                parts.append(str(self.column))
        return ":".join(parts)

    def render(self) -> str:
        if self.filename is None and self.line is None:
            return f"{self.severity}: {self.message}"
        text = f"{self.location()}: {self.severity}: {self.message}"
        if self.source_line is not None and self.column is not None:
            src = self.source_line.rstrip("\r\n").expandtabs(1)
            caret = " " * max(self.column - 1, 0) + "^"
            text += f"\n    {src}\n    {caret}"
        return text

    def as_json(self) -> dict:
        return {
            "severity": self.severity,
            "message": self.message,
            "filename": self.filename,
            "line": self.line,
            "column": self.column,
            "category": self.category,
        }


class PtxError(Exception):
    """Base class of every error ptxvm raises on purpose."""

    def __init__(self, message: str, *, filename: str | None = None,
                 line: int | None = None, column: int | None = None,
                 source_line: str | None = None,
                 diagnostics: tuple[Diagnostic, ...] = ()) -> None:
        self.message = message
        self.filename = filename
        self.line = line
        self.column = column
        self.source_line = source_line
        first = Diagnostic(message, filename, line, column, source_line)
        self.diagnostics: tuple[Diagnostic, ...] = diagnostics or (first,)
        super().__init__(self._render())

    def _render(self) -> str:
        if len(self.diagnostics) == 1:
            return self.diagnostics[0].render()
        body = "\n".join(d.render() for d in self.diagnostics)
        return f"{len(self.diagnostics)} errors:\n{body}"

    @classmethod
    def from_diagnostics(cls, diagnostics: list[Diagnostic] | tuple[Diagnostic, ...]) -> "PtxError":
        first = diagnostics[0]
        return cls(first.message, filename=first.filename, line=first.line,
                   column=first.column, source_line=first.source_line,
                   diagnostics=tuple(diagnostics))


class PtxSyntaxError(PtxError):
    """The text is not PTX: a token or construct the grammar does not allow."""


class PtxSemanticError(PtxError):
    """Well-formed PTX that breaks a rule: unknown modifier, undeclared register, type mismatch."""


class PtxEncodingError(PtxError):
    """The file is not UTF-8/ASCII text."""


class IsaTableError(PtxError):
    """isa/*.toml is inconsistent (a bug in ptxvm's data, not in the user's PTX)."""


class UnsupportedError(PtxError):
    """A construct ptxvm parses but cannot execute or translate."""


class PtxVersionWarning(UserWarning):
    """The module declares a PTX ISA version newer than the one ptxvm was written for."""


class LaunchError(PtxError):
    """A kernel launch was asked for with wrong arguments, geometry or options."""


class ResourceError(PtxError):
    """A request beyond one of ptxvm's documented limits (``ptxvm.limits``): a declaration,
    register file, grid, argument or allocation too large. Raised before anything is allocated;
    the message says what was asked, the limit, and how to raise it."""


class KernelFault(PtxError):
    """A kernel did something that faults on a GPU: bad address, trap, deadlock, endless loop.

    ``kernel``, ``block`` and ``thread`` (3-tuples) name the first faulting thread;
    ``address``/``space``/``allocation`` are set for memory faults; ``memory`` keeps
    the device memory inspectable after the fault.
    """

    def __init__(self, message: str, *, kernel: str | None = None, block: tuple | None = None,
                 thread: tuple | None = None, instruction: str | None = None,
                 address: int | None = None, space: str | None = None, allocation: str | None = None,
                 filename: str | None = None, line: int | None = None, column: int | None = None,
                 source_line: str | None = None, source: str | None = None) -> None:
        self.kernel, self.block, self.thread = kernel, block, thread
        self.instruction, self.address, self.space, self.allocation = instruction, address, space, allocation
        self.source = source          # the CUDA source location from .loc, when known
        self.memory = None            # set by the executor
        super().__init__(message, filename=filename, line=line, column=column, source_line=source_line)


class DeadlockError(KernelFault):
    """No thread can run and no barrier can complete."""


class WatchdogError(KernelFault):
    """The launch exceeded its step budget (an endless loop, or a budget set too low)."""


class TrapError(KernelFault):
    """`trap`, `brkpt` or a failed device-side assert."""


class CodegenError(PtxError):
    """LLVM rejected or crashed on the code ptxvm generated (verifier failure, fatal error).

    This is a bug in ptxvm's lowering, not in the user's PTX; the message carries LLVM's own text.
    """
