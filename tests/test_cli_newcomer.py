"""The command line a newcomer meets (issue 12): demangled kernel names and the `--kernel`
short form, usage errors with exit code 2, consistent short flags, --version / info, --json,
every --help example runs.

Expected demangled names come from GNU c++filt (recorded in tests/data/demangle_cxxfilt.tsv),
expected limits and messages from ptxvm.limits' documented text and the PTX types' ranges.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ptxvm.demangle import base_name, demangle, kernel_matches, short_param

DATA = Path(__file__).parent / "data" / "demangle_cxxfilt.tsv"


def _cxxfilt_rows() -> list[tuple[str, str, str]]:
    rows = []
    for line in DATA.read_text().splitlines():
        if line and not line.startswith("#"):
            kind, mangled, out = line.split("\t")
            rows.append((kind, mangled, out))
    return rows


def test_demangle_matches_cxxfilt():
    rows = _cxxfilt_rows()
    assert len(rows) > 700
    wrong, undecoded = [], []
    for kind, mangled, out in rows:
        expected = None if out == mangled else out       # c++filt could not decode it either
        got = demangle(mangled)
        if got is not None and got != expected:
            wrong.append((mangled, got, expected))
        if got is None and expected is not None and kind in ("entry", "extra"):
            undecoded.append(mangled)
    assert not wrong, wrong[:5]
    assert not undecoded, undecoded[:5]
    # Every kernel name of the fixtures, and most other names, are decoded.
    names = [r for r in rows if r[0] == "name"]
    decoded = sum(demangle(m) is not None for _, m, _ in names)
    assert decoded >= 0.97 * len(names), (decoded, len(names))


def test_demangle_refuses_what_it_cannot_decode():
    for text in ("vector_add", "_Z", "_Z3fo", "_Z10vector_addPKfS9_Pfi", "_Z3foov.part.0", "_ZN3foo", "_Z1fIT_Ev"):
        assert demangle(text) is None, text


def test_short_forms():
    assert base_name("_Z10vector_addPKfS0_Pfi") == "vector_add"
    assert base_name("_ZN2ns6kernelIiEEvPKT_PS1_i") == "kernel"
    assert base_name("add_kernel") == "add_kernel"
    numba = ("_ZN13numba_kernels10vector_addB2v7B92cw51cXTLSUwv1sDUaKthoaNgoKmjgOR3W3CwAkMXLaJtQYkOIgxJU0"
             "gCqOkEJoHkbttqdVhoqlspQGNFHSgJ5BnXagIAE5ArrayIfLi1E1A7mutable7alignedE")
    assert base_name(numba) == "vector_add"
    names = ["_Z10vector_addPKfS0_Pfi", "_Z6kernelIfLi256EEvPT_i", "_Z6kernelIiLi128EEvPT_i", "add_kernel"]
    assert kernel_matches(names, "vector_add") == ["_Z10vector_addPKfS0_Pfi"]
    assert kernel_matches(names, "vector_add(float const*, float const*, float*, int)") == [names[0]]
    assert kernel_matches(names, "kernel") == names[1:3]
    assert kernel_matches(names, "kernel<int, 128>") == [names[2]]
    assert kernel_matches(names, "add_kernel") == ["add_kernel"]
    assert kernel_matches(names, "nope") == []
    assert short_param("_Z10vector_addPKfS0_Pfi", "_Z10vector_addPKfS0_Pfi_param_3") == "param_3"
    assert short_param("_Z10vector_addPKfS0_Pfi", "a") == "a"
