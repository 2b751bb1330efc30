"""numba's kernel ABI: Python arguments -> numba types -> one value per PTX ``.param``.

numba passes an array as ``meminfo, parent, nitems, itemsize, data, shape[ndim],
strides[ndim]`` (strides in bytes), a complex as (real, imag), a tuple element by element, a
``float16`` as its bits and a record by pointer (numba-cuda's ``_Kernel._prepare_args``).

A numpy array of any layout (C, F, a strided or reversed view) is passed as the bytes it
spans: one contiguous ``uint8`` view of exactly that host memory, so ptxvm's launch copies it
in and the kernel's writes back (or, on the interpreter, works on it in place) without a
gather or a scatter, and the kernel indexes it with the view's own strides. When a stride is
negative the data pointer is inside the span, not at its start; the whole span then goes in
the ``parent`` slot (which kernels never read) so that ptxvm places both views in one device
buffer and ``data`` points at its offset.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from ..driver import DeviceArray
from ..errors import LaunchError
from ..ir.types import ScalarType


def typeof_arg(value, what: str):
    """numba's type of one kernel argument (ptxvm DeviceArrays included)."""
    from numba.core import types
    if isinstance(value, DeviceArray):
        from numba.cuda.np import numpy_support
        strides = device_strides(value)
        return types.Array(numpy_support.from_dtype(value.dtype), len(value.shape),
                           _layout(value.shape, strides, value.dtype.itemsize))
    from numba.cuda.typing.typeof import Purpose, typeof
    try:
        ty = typeof(value, Purpose.argument)
    except Exception as e:                            # numba: ValueError / NumbaValueError
        ty, why = None, f" ({e})"
    else:
        why = ""
    if ty is None or isinstance(ty, types.PyObject):
        raise LaunchError(f"{what} is a {type(value).__name__} ({_short(value)}), which numba's CUDA target "
                          f"cannot pass to a kernel{why}; pass a numpy array, a ptxvm.to_device array, "
                          "a number, a bool, a complex or a tuple of those")
    return ty


def _short(value) -> str:
    r = repr(value)
    return r if len(r) <= 60 else r[:57] + "..."


def device_strides(d: DeviceArray) -> tuple[int, ...]:
    strides = getattr(d, "strides", None)
    return tuple(strides) if strides is not None else c_strides(d.shape, d.dtype.itemsize)


def c_strides(shape: Sequence[int], itemsize: int) -> tuple[int, ...]:
    out, step = [], itemsize
    for n in reversed(shape):
        out.append(step)
        step *= max(int(n), 1)
    return tuple(reversed(out))


def _layout(shape, strides, itemsize: int) -> str:
    if tuple(strides) == c_strides(shape, itemsize):
        return "C"
    if tuple(strides) == tuple(reversed(c_strides(tuple(reversed(shape)), itemsize))):
        return "F"
    return "A"


class _Span:
    """``__array_interface__`` over host memory another array owns (kept alive as .base)."""

    def __init__(self, owner: np.ndarray, addr: int, nbytes: int) -> None:
        self.owner = owner
        self.__array_interface__ = {"data": (addr, not owner.flags.writeable), "shape": (nbytes,),
                                    "typestr": "|u1", "version": 3}


def host_array_slots(a: np.ndarray) -> list:
    """The 5 + 2*ndim values of one numpy array argument."""
    itemsize = a.dtype.itemsize
    addr = int(a.__array_interface__["data"][0])
    if a.size == 0:
        lo = hi = 0
    else:
        lo = sum((n - 1) * s for n, s in zip(a.shape, a.strides) if s < 0)
        hi = sum((n - 1) * s for n, s in zip(a.shape, a.strides) if s > 0) + itemsize
    span = np.asarray(_Span(a, addr + lo, hi - lo))
    data, parent = (span, 0) if lo == 0 else (span[-lo:], span)
    return [0, parent, a.size, itemsize, data, *a.shape, *a.strides]


def device_array_slots(d: DeviceArray) -> list:
    return [0, 0, d.size, d.dtype.itemsize, d, *d.shape, *device_strides(d)]


def flatten(ty, value, what: str, out: list, after: list[Callable[[], None]]) -> None:
    """Append the PTX-level values of one argument of numba type ``ty`` to ``out``;
    ``after`` gets what must run once the launch is over (copying a record back)."""
    from numba.core import types
    if isinstance(ty, types.Array):
        if isinstance(value, DeviceArray):
            out += device_array_slots(value)
        else:
            out += host_array_slots(np.asarray(value))
    elif isinstance(ty, types.BaseTuple):
        items = tuple(value)
        for i, (t, v) in enumerate(zip(ty, items)):
            flatten(t, v, f"{what}[{i}]", out, after)
    elif isinstance(ty, types.EnumMember):
        flatten(ty.dtype, value.value, what, out, after)
    elif ty == types.float16:
        out.append(int(np.float16(value).view(np.uint16)))
    elif isinstance(ty, types.Complex):
        v = complex(value)
        out += [v.real, v.imag]
    elif isinstance(ty, types.Float):
        out.append(float(value))
    elif isinstance(ty, (types.Boolean, types.Integer)):
        out.append(int(value))
    elif isinstance(ty, (types.NPDatetime, types.NPTimedelta)):
        out.append(int(np.asarray(value).view(np.int64)))
    elif isinstance(ty, types.Record):
        out.append(_record(value, after))
    elif isinstance(ty, types.CPointer):
        out.append(int(value))
    else:
        raise LaunchError(f"{what} has numba type {ty}, which ptxvm's numba front door cannot pass to a "
                          "kernel (arrays, numbers, bools, complex, float16, datetimes, records and tuples "
                          "of those are supported)")


def _record(value, after: list[Callable[[], None]]) -> np.ndarray:
    """A record goes by pointer: a one-element copy, its fields written back afterwards."""
    buf = np.array([value], dtype=value.dtype)

    def back() -> None:
        # A record taken from an array (recs[0]) is a view: its fields are set in the array.
        try:
            for name in value.dtype.names or ():
                value[name] = buf[0][name]
        except (TypeError, ValueError, IndexError):    # read-only: a copy the caller cannot see
            pass
    after.append(back)
    return buf


def fit_params(values: list, params, kernel_name: str) -> list:
    """Scalars made to fit their ``.param`` type: numba declares every integer ``.u<N>``, so a
    negative int32 goes as its two's complement bits."""
    if len(values) != len(params):
        raise LaunchError(f"ptxvm's numba ABI gives {len(values)} parameter values for `{kernel_name}`, "
                          f"whose PTX declares {len(params)}; this is a bug in ptxvm.numba: please report it")
    out = []
    for p, v in zip(params, values):
        if isinstance(v, (int, np.integer)) and not isinstance(v, bool) and not p.array:
            t = ScalarType(p.type)
            if t.kind in ("u", "b"):
                v = int(v) & ((1 << t.bits) - 1)
        out.append(v)
    return out
