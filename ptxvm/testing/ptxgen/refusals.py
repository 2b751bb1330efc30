"""Templates the generator leaves out today, each with the reason.

``isa/instructions.toml`` marks these forms ``supported``, but the interpreter
(the reference executor) either refuses them (``UnsupportedError``), crashes on
them, or computes a result that contradicts the PTX ISA.  A differential fuzzer
cannot use a reference that is known to be wrong, so they are excluded by
default; ``tests/test_fuzz.py`` keeps one strict-xfail reproduction per entry,
which starts passing (and fails the suite) once the interpreter is fixed, so the
entry gets removed here and the fuzzer covers the form again.
"""

from __future__ import annotations

from .isa import Variant

# Whole templates (not arithmetic variants) the interpreter refuses (none today;
# "switch", brx.idx, was until the interpreter implemented it).
REFUSED_TEMPLATES: dict[str, str] = {}


def interp_refuses(v: Variant, combo: tuple[str, ...]) -> str | None:
    """Why the interpreter refuses or crashes on this template, or None."""
    op, form, t = v.opcode, v.form, v.types
    if op == "cvt" and form == "pack-x2-rs" and t[0] == "f16x2":
        # The narrow float forms and cvt.rs.bf16x2.f32 execute; .rs to f16x2 (and the x4 .rs forms,
        # which take a vector source the generator does not draw) are refused by design.
        return "cvt.rs.f16x2.f32 is refused: the ISA leaves the random bits' alignment below f16's normal range open"
    if op in ("ex2", "tanh") and t[0] in ("f16", "bf16", "f16x2", "bf16x2"):
        return f"{op}.approx on half types is not executable yet"
    return None


def interp_known_wrong(v: Variant, combo: tuple[str, ...]) -> str | None:
    """Why the interpreter's result contradicts the ISA for this template, or None (none today:
    mixed-precision add/sub/fma.f32.{f16,bf16} and the .f32x2 forms were, until fixed)."""
    return None


def excluded(v: Variant, combo: tuple[str, ...], include_known_bugs: bool = False) -> str | None:
    return interp_refuses(v, combo) or (None if include_known_bugs else interp_known_wrong(v, combo))
