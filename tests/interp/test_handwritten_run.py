"""The executable hand-written PTX forms (tests/ptx/handwritten) run on every CPU executor
(the ``executor`` fixture: interp and cpu) with the results each file's header states, worked
out by hand from the PTX ISA sections it cites. Their ptxas verdicts and round-trips:
tests/frontend/test_handwritten_ptx.py."""

from __future__ import annotations

import warnings
from functools import cache
from pathlib import Path

import numpy as np
import pytest

import ptxvm

HERE = Path(__file__).resolve().parents[1] / "ptx" / "handwritten"
I32, U32 = np.int32, np.uint32


@cache
def _kernel(stem: str):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ptxvm.Module.from_file(HERE / f"{stem}.ptx")[stem]


def test_pctless_names(executor):
    x = np.array([5, 150, 100, 101] * 8, U32)
    out = np.zeros(32, U32)
    _kernel("pctless_names")(1, 32, (out, x), device=executor)
    t = np.arange(32, dtype=U32)
    np.testing.assert_array_equal(out, np.where(x > 100, 2 * x + t, x + 1000 + t))


def test_name_ranges(executor):
    out = np.zeros(2, U32)
    _kernel("name_ranges")(1, 1, (out, np.array([3, 4], U32)), device=executor)
    assert out.tolist() == [21, 7]


def test_pred_pairs(executor):
    out = np.zeros(64, U32)
    _kernel("pred_pairs")(1, 32, (out,), device=executor)
    assert out[:32].tolist() == [999] + list(range(31))          # lane 0 has no lane below it
    assert out[32:].tolist() == [0] * 16 + [1] * 16              # q = !(lane < 16)


def test_vector_braces(executor):
    out = np.zeros(4, U32)
    _kernel("vector_braces")(1, 1, (out, np.array([1, 2, 3, 4], U32)), device=executor)
    assert out[:2].tolist() == [4, 3]
    assert int(out[2:].view(np.uint64)[0]) == (2 << 32) | 1


def test_nested_shadow(executor):
    out = np.zeros(4, U32)
    _kernel("nested_shadow")(1, 1, (out,), device=executor)
    assert out.tolist() == [5, 7, 11, 12]


def test_vector_registers(executor):
    out = np.zeros(4, U32)
    _kernel("vector_registers")(1, 1, (out, np.array([1, 2, 3, 4], U32)), device=executor)
    assert out.tolist() == [3, 4, 3, 5]


def test_warp_sz(executor):
    out = np.zeros(128, U32)
    _kernel("warp_sz")(1, 64, (out,), device=executor)
    assert out[0::2].tolist() == [33] * 64
    assert out[1::2].tolist() == [t % 32 for t in range(64)]


def test_address_exprs(executor):
    out = np.zeros(6, U32)
    _kernel("address_exprs")(1, 1, (out,), device=executor)
    assert out[:2].tolist() == [30, 10]
    assert out[2:].view(np.uint64).tolist() == [4, 5]


def test_reg_params(executor):
    out = np.zeros(3, U32)
    _kernel("reg_params")(1, 1, (out, 0x0000000700000009), device=executor)
    assert out.tolist() == [9, 7, 21]


def test_wide_registers(executor):
    out = np.zeros(20, np.uint8)
    _kernel("wide_registers")(1, 1, (out, np.array([0x81, 2, 3, 4], np.uint8)), device=executor)
    assert out[:8].view(np.uint16).tolist() == [0x81, 2, 3, 4]     # zero-extended into .u16
    assert out[8:16].view(U32).tolist() == [0x81, 0xFFFFFF81]      # ld.u8 zero-, ld.s8 sign-extends
    assert out[16] == 0x81                                        # st.u8 keeps the low byte


def test_param_address(executor):
    out = np.zeros(1, U32)
    _kernel("param_address")(1, 1, (out, 1234), device=executor)
    assert out.tolist() == [1234]


def test_v8_vectors(executor):
    x = np.arange(1, 9, dtype=U32)
    out = np.zeros(8, U32)
    _kernel("v8_vectors")(1, 1, (out, x), device=executor)
    assert out.tolist() == list(range(8, 0, -1))
