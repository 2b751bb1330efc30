"""``Kernel.attributes``: what ``cudaFuncGetAttributes`` (CuPy's ``RawKernel.attributes``)
reports, computed from the PTX, with CuPy's key names.

``num_regs`` counts the kernel's PTX virtual registers (its ``.reg`` declarations): ptxas
would allocate fewer hardware registers, which only a GPU's compiler can tell.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from .. import limits
from ..passes.summary import summarize_function

MAX_THREADS_PER_BLOCK = 1024


@dataclass(frozen=True)
class KernelAttributes:
    shared_size_bytes: int               # static `.shared` memory the kernel (and its callees) declare
    const_size_bytes: int                # `.const` memory it uses
    local_size_bytes: int                # its `.local` frame
    max_threads_per_block: int           # 1024, or what .maxntid/.reqntid allow
    num_regs: int                        # PTX virtual registers (see the module docstring)
    ptx_version: int                     # e.g. 90 for `.version 9.0`, as CUDA reports it
    max_dynamic_shared_size_bytes: int   # ptxvm.limits' shared memory per block, less the static part
    param_size_bytes: int

    def as_dict(self) -> dict[str, int]:
        return asdict(self)


def kernel_attributes(kernel) -> KernelAttributes:
    module, f = kernel.module.ir, kernel.ir
    s = summarize_function(module, f)
    most = MAX_THREADS_PER_BLOCK
    for name in ("maxntid", "reqntid"):
        d = f.directive(name)
        if d is not None:
            n = 1
            for v in d.values:
                n *= v or 1
            most = min(most, n)
    major, _, minor = module.version.partition(".")
    shared_cap = limits.current().shared_per_block
    return KernelAttributes(
        shared_size_bytes=s.shared_bytes, const_size_bytes=s.const_bytes, local_size_bytes=s.local_bytes,
        max_threads_per_block=most, num_regs=s.register_total,
        ptx_version=int(major) * 10 + int(minor or 0),
        max_dynamic_shared_size_bytes=max(shared_cap - s.shared_bytes, 0), param_size_bytes=s.param_bytes)
