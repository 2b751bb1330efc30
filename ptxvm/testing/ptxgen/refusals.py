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
    if op == "cvt":
        if form in ("pack-x2-rs", "fp8-from-f32", "fp8-from-half", "half-from-fp8", "ue8m0-from-f32",
                    "bf16x2-from-ue8m0"):
            return f"cvt ({form}) is not executable yet"
    if op in ("ex2", "tanh") and t[0] in ("f16", "bf16", "f16x2", "bf16x2"):
        return f"{op}.approx on half types is not executable yet"
    if op == "lop3" and form == "boolop":
        return "lop3.BoolOp.b32 d|p: the interpreter cannot write the d|p pair"
    return None


def interp_known_wrong(v: Variant, combo: tuple[str, ...]) -> str | None:
    """Why the interpreter's result contradicts the ISA for this template, or None (none today:
    mixed-precision add/sub/fma.f32.{f16,bf16} and the .f32x2 forms were, until fixed)."""
    return None


def excluded(v: Variant, combo: tuple[str, ...], include_known_bugs: bool = False) -> str | None:
    return interp_refuses(v, combo) or (None if include_known_bugs else interp_known_wrong(v, combo))
