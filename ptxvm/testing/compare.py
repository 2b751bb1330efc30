"""Compare two output buffers bit by bit, with ULP distances for floats.

``compare(expected, actual, ulp=0)`` returns a frozen ``Comparison``:

* ``equal`` is bitwise equality of every element: NaN payloads count and -0.0
  differs from +0.0, because an executor that gets either wrong is wrong.
* ``max_ulp`` (f16/f32/f64 only) is the largest distance in units in the last
  place, counted on the ordered-integer representation of the values (the
  number of representable floats between them). It measures *values*: -0.0 and
  +0.0 are 0 ULP apart, two NaNs are 0 ULP apart whatever their payloads, and a
  NaN against a number is infinitely far.
* With ``ulp=0`` (the default) an element passes only when it is bitwise equal;
  with ``ulp=N`` (for ``.approx`` math) when it is within N ULP.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from ..errors import PtxError

_ORDERED = {2: np.int16, 4: np.int32, 8: np.int64}


class CompareError(PtxError):
    """The two buffers cannot be compared element by element (dtype or shape differ)."""


@dataclass(frozen=True)
class Writer:
    """The thread that last stored to an element (``tid`` -1: no thread wrote it)."""

    tid: int
    block: tuple[int, int, int] = (0, 0, 0)
    thread: tuple[int, int, int] = (0, 0, 0)

    @classmethod
    def from_tid(cls, tid: int, grid: tuple[int, ...], block: tuple[int, ...]) -> Writer:
        if tid < 0:
            return cls(-1)
        g, b = (tuple(grid) + (1, 1))[:3], (tuple(block) + (1, 1))[:3]
        tpb = b[0] * b[1] * b[2]
        cta, t = divmod(int(tid), tpb)
        return cls(int(tid), (cta % g[0], cta // g[0] % g[1], cta // (g[0] * g[1])),
                   (t % b[0], t // b[0] % b[1], t // (b[0] * b[1])))

    def describe(self) -> str:
        if self.tid < 0:
            return "no thread wrote it (on the interpreter)"
        return f"block {self.block}, thread {self.thread}"

    def as_json(self) -> dict:
        return {"tid": self.tid, "block": list(self.block) if self.tid >= 0 else None,
                "thread": list(self.thread) if self.tid >= 0 else None}


@dataclass(frozen=True)
class Comparison:
    dtype: str
    shape: tuple[int, ...]
    equal: bool                          # bitwise, every element
    mismatches: int                      # elements not bitwise equal
    failures: int                        # elements outside the tolerance (== mismatches when ulp=0)
    max_ulp: int | float | None          # floats only; math.inf when a NaN meets a number
    ulp_tolerance: int = 0
    first_index: int | None = None       # flat index: first failure, else first (tolerated) mismatch
    first_expected: object = None        # Python values of that element
    first_actual: object = None
    first_expected_bits: str | None = None
    first_actual_bits: str | None = None
    first_ulp: int | float | None = None
    writer: Writer | None = None         # who wrote first_index on the interpreter, when asked

    @property
    def ok(self) -> bool:
        return self.failures == 0

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def first_index_nd(self) -> tuple[int, ...] | None:
        if self.first_index is None:
            return None
        return tuple(int(i) for i in np.unravel_index(self.first_index, self.shape)) if self.shape else ()

    def with_writer(self, writer: Writer | None) -> Comparison:
        return replace(self, writer=writer)

    def status(self) -> str:
        if self.equal:
            return "equal"
        return "within tolerance" if self.ok else "MISMATCH"

    def describe_first(self) -> str:
        """``[17] expected 3.5 (0x40600000), got 3.25 (0x40500000), 131072 ULP; written by ...``"""
        if self.first_index is None:
            return "-"
        nd = self.first_index_nd
        where = f"[{self.first_index}]" + (f" (index {nd})" if len(self.shape) > 1 else "")
        text = (f"{where} expected {_show(self.first_expected)} ({self.first_expected_bits}), "
                f"got {_show(self.first_actual)} ({self.first_actual_bits})")
        if self.first_ulp is not None:
            text += f", {_show_ulp(self.first_ulp)} ULP"
        if self.writer is not None:
            text += f"; written by {self.writer.describe()}"
        return text

    def as_json(self) -> dict:
        out = {"dtype": self.dtype, "shape": list(self.shape), "equal": self.equal, "ok": self.ok,
               "mismatches": self.mismatches, "failures": self.failures,
               "max_ulp": _json_number(self.max_ulp), "ulp_tolerance": self.ulp_tolerance,
               "first_mismatch": None}
        if self.first_index is not None:
            out["first_mismatch"] = {
                "index": self.first_index, "index_nd": list(self.first_index_nd),
                "expected": _json_number(self.first_expected), "actual": _json_number(self.first_actual),
                "expected_bits": self.first_expected_bits, "actual_bits": self.first_actual_bits,
                "ulp": _json_number(self.first_ulp),
                "writer": self.writer.as_json() if self.writer is not None else None}
        return out


def _show(v) -> str:
    return repr(v) if isinstance(v, float) else str(v)


def _show_ulp(u) -> str:
    return "inf" if u == math.inf else str(u)


def _json_number(v):
    """JSON has no NaN/inf: those become the strings "nan", "inf", "-inf"."""
    if isinstance(v, float) and not math.isfinite(v):
        return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf")
    return v


def is_float(dtype: np.dtype) -> bool:
    return dtype.kind == "f" and dtype.itemsize in _ORDERED


def ordered(a: np.ndarray) -> np.ndarray:
    """Floats -> signed integers in the same order as the values (-0 and +0 both map to 0).

    Positive floats keep their bit pattern; a negative float with magnitude bits m
    becomes -m, so adjacent floats differ by exactly 1 across the whole range.
    """
    it = _ORDERED[a.dtype.itemsize]
    bits = np.ascontiguousarray(a).view(it)
    mag = bits & it(np.iinfo(it).max)
    return np.where(bits < 0, -mag, mag)


def ulp_distance(expected: np.ndarray, actual: np.ndarray) -> np.ndarray:
    """Per element |ordered(x) - ordered(y)|, exact, as uint64 (NaNs are the caller's business)."""
    oe = ordered(expected).astype(np.int64)
    oa = ordered(actual).astype(np.int64)
    # uint64 wraparound keeps the difference exact even across the whole f64 range.
    d = oe.astype(np.uint64) - oa.astype(np.uint64)
    return np.where(oe >= oa, d, np.uint64(0) - d)


def compare(expected: np.ndarray, actual: np.ndarray, *, ulp: int = 0) -> Comparison:
    expected, actual = np.asarray(expected), np.asarray(actual)
    if expected.dtype != actual.dtype or expected.shape != actual.shape:
        raise CompareError(f"cannot compare {actual.dtype}{list(actual.shape)} with "
                           f"{expected.dtype}{list(expected.shape)}: dtype and shape must match")
    if ulp < 0:
        raise CompareError(f"ulp tolerance must be >= 0, got {ulp}")
    dt = expected.dtype
    e = np.ascontiguousarray(expected).reshape(-1)
    a = np.ascontiguousarray(actual).reshape(-1)
    k = dt.itemsize
    # Bitwise: compare the raw bytes of every element.
    differ = (e.view(np.uint8).reshape(-1, k) != a.view(np.uint8).reshape(-1, k)).any(axis=1) \
        if e.size else np.zeros(0, dtype=bool)
    mismatches = int(differ.sum())
    dist: np.ndarray | None = None          # uint64 ULP distances (floats only)
    infinite = np.zeros(e.shape, dtype=bool)  # NaN against a number
    max_ulp: int | float | None = None
    if is_float(dt):
        max_ulp = 0
        if mismatches:
            ne, na = np.isnan(e), np.isnan(a)
            infinite = ne != na
            dist = np.where(ne & na, np.uint64(0), ulp_distance(e, a))
            max_ulp = math.inf if (infinite & differ).any() else int(dist[differ].max())
    failing = differ & (infinite | (dist > np.uint64(ulp))) if ulp and dist is not None else differ
    failures = int(failing.sum())
    first = int(np.argmax(failing)) if failures else int(np.argmax(differ)) if mismatches else None
    fields: dict = {}
    if first is not None:
        fields = {"first_index": first, "first_expected": e[first].item(), "first_actual": a[first].item(),
                  "first_expected_bits": _bits(e[first:first + 1]), "first_actual_bits": _bits(a[first:first + 1])}
        if dist is not None:
            fields["first_ulp"] = math.inf if infinite[first] else int(dist[first])
    return Comparison(str(dt), tuple(expected.shape), mismatches == 0, mismatches, failures, max_ulp, ulp,
                      **fields)


def _bits(one: np.ndarray) -> str:
    """One element's bytes as a hex number (little-endian storage, most significant digit first)."""
    raw = one.view(np.uint8).tobytes()
    return "0x" + raw[::-1].hex()
