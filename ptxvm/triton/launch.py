"""Launching a compiled Triton kernel on a ptxvm executor.

Triton passes the launcher every argument of the Python signature; the PTX kernel takes the
non-constexpr ones (tuples flattened) followed by two pointers, the global and the profile
scratch, which Triton's ABI adds to every kernel. A pointer argument is a ptxvm DeviceArray
(a numpy array is copied to device memory for the launch and back after it); scalars are converted to the
signature's type.
"""

from __future__ import annotations

import numpy as np

from . import TritonError

# Triton's scalar signature types -> numpy.
SCALARS = {"i1": np.bool_, "i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64,
           "u1": np.bool_, "u8": np.uint8, "u16": np.uint16, "u32": np.uint32, "u64": np.uint64,
           "fp16": np.float16, "fp32": np.float32, "fp64": np.float64, "bf16": None}


def _flat(signature, values):
    """(type, value) pairs of the kernel's PTX parameters, in order: constexprs dropped, tuples
    flattened as Triton's launcher does."""
    for ty, v in zip(signature, values):
        if isinstance(ty, tuple):
            yield from _flat(ty, v)
        elif ty != "constexpr":
            yield ty, v


def _value(ty: str, v, name: str, moved: dict):
    from ..driver import DeviceArray
    if isinstance(v, np.ndarray) and v.ndim > 0:
        v = _to_device(v, moved, name)
    if ty.startswith("tensordesc"):
        raise TritonError(f"argument `{name}` is a tensor descriptor ({ty}): device-side TMA descriptors "
                          "need NVIDIA's tensor-memory hardware, which ptxvm does not model")
    if ty.startswith("*"):
        if v is None:
            return np.uint64(0)
        if isinstance(v, DeviceArray):
            return v
        raise TritonError(f"argument `{name}` ({ty}) must be an array, got {type(v).__name__}")
    t = SCALARS.get(ty)
    if t is None:
        raise TritonError(f"argument `{name}` has Triton type {ty}, which ptxvm's Triton launcher does not pass")
    return t(v)


class PtxvmLauncher:
    """``CompiledKernel.run``: what Triton calls with the grid and the arguments."""

    def __init__(self, src, metadata) -> None:
        self.signature = tuple(src.signature.values())
        self.names = tuple(src.signature)
        self.num_warps = metadata.num_warps
        self.num_ctas = getattr(metadata, "num_ctas", 1)
        self.shared = metadata.shared
        self.scratch = ((metadata.global_scratch_size, metadata.global_scratch_align),
                        (metadata.profile_scratch_size, metadata.profile_scratch_align))
        if self.num_ctas != 1:
            raise TritonError(f"num_ctas={self.num_ctas}: thread-block clusters are not run by ptxvm; use num_ctas=1")
        if getattr(metadata, "launch_cooperative_grid", False):
            raise TritonError("launch_cooperative_grid: Triton's cooperative launch is not run by ptxvm's Triton driver")

    def __call__(self, gridX, gridY, gridZ, stream, function, kernel_metadata, launch_metadata,
                 enter_hook, exit_hook, *args) -> None:
        import ptxvm
        from triton.runtime import driver as rt_driver
        names = [n for n, t in zip(self.names, self.signature) if t != "constexpr"]
        flat = list(_flat(self.signature, args))
        moved: dict[int, tuple[np.ndarray, object]] = {}
        values = [_value(ty, v, names[i] if i < len(names) else f"#{i}", moved) for i, (ty, v) in enumerate(flat)]
        grid = (gridX, gridY, gridZ)
        programs = gridX * gridY * gridZ
        for size, _align in self.scratch:    # per program, as Triton's own launcher sizes them
            values.append(ptxvm.zeros(programs * size, np.uint8) if size > 0 else np.uint64(0))
        if enter_hook is not None:
            enter_hook(launch_metadata)
        device = getattr(rt_driver.active, "device_name", None)
        try:
            function(grid, (32 * self.num_warps, 1, 1), tuple(values), shared_mem=self.shared, device=device)
        finally:                                # the kernel's writes, also those before a fault
            for host, dev in moved.values():
                if host.flags.writeable:
                    np.copyto(host, dev.copy_to_host())
        if exit_hook is not None:
            exit_hook(launch_metadata)


def specialize_numpy(native):
    """Wrap Triton's argument specialisation so a numpy array specialises as a pointer of its
    dtype, aligned: the launcher gives each array a fresh device copy, whose base is aligned."""

    def specialize(backend, arg, *rest):
        if isinstance(arg, np.ndarray) and arg.ndim > 0:
            arg = _PointerLike(arg.dtype)
        return native(backend, arg, *rest)
    specialize.__wrapped__ = native
    return specialize


class _PointerLike:
    """What Triton's specialisation reads of a tensor: its dtype and an (aligned) address."""

    def __init__(self, dtype: np.dtype) -> None:
        self.dtype = dtype

    def data_ptr(self) -> int:
        return 256


def _to_device(a: np.ndarray, moved: dict, name: str):
    import ptxvm
    if id(a) in moved:
        return moved[id(a)][1]
    for host, _ in moved.values():
        if np.shares_memory(host, a):
            raise TritonError(f"argument `{name}` overlaps another numpy argument without being the same array; "
                              "pass the same array object, or ptxvm.to_device arrays whose views share memory")
    if not (a.flags.c_contiguous or a.flags.f_contiguous):
        raise TritonError(f"argument `{name}` is a strided numpy view: a Triton kernel addresses it through its "
                          "pointer and the strides you pass, so pass the array it is a view of "
                          "(or np.ascontiguousarray(a))")
    dev = ptxvm.to_device(a)            # C or Fortran order, as it is
    moved[id(a)] = (a, dev)
    return dev
