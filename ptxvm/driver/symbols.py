"""``Module.get_global``: a module-scope variable's memory as a DeviceArray."""

from __future__ import annotations

import numpy as np

from ..errors import LaunchError
from ..ir.types import ScalarType, StateSpace
from .arrays import Device, DeviceArray

# The numpy dtype a variable's PTX type reads as (bit types as unsigned integers).
_KINDS = {"s": "i", "u": "u", "b": "u", "f": "f"}


def ptx_dtype(t: ScalarType) -> np.dtype | None:
    kind = _KINDS.get(t.value[0])
    if kind is None or t.value in ("bf16",) or t.bits not in (8, 16, 32, 64):
        return None
    return np.dtype(f"{kind}{t.bits // 8}")


def global_array(module, name: str, dtype, device: Device) -> DeviceArray:
    decl = module.ir.globals.get(name)
    spaces = (StateSpace.GLOBAL, StateSpace.CONST)
    if decl is None or decl.space not in spaces:
        known = [n for n, d in module.ir.globals.items() if d.space in spaces]
        where = module.filename or "this module"
        raise LaunchError(f"no .global or .const variable `{name}` in {where} "
                          f"(variables: {', '.join(known) or 'none'})")
    image = device.image(module)
    alloc = device.memory.find(image.addresses[name])
    size = alloc.size if decl.size_bytes() is None else decl.size_bytes()
    if dtype is not None:
        dt = np.dtype(dtype)
        return DeviceArray(alloc, (size // dt.itemsize,), dt, device=device)
    dt = ptx_dtype(decl.type) or np.dtype(np.uint8)
    lanes = decl.vector or 1
    if dt.itemsize * lanes != decl.element_bytes():      # .pred and odd types: the raw bytes
        return DeviceArray(alloc, (size,), np.uint8, device=device)
    shape = tuple(d for d in decl.array if d is not None) if decl.size_bytes() is not None else (size // dt.itemsize,)
    shape = shape + ((lanes,) if lanes > 1 else ())      # a scalar variable: a 0-d array
    return DeviceArray(alloc, shape, dt, device=device)
