"""CUDA's device runtime on AMD GPUs (a mixin of AmdgpuHooks): printf, malloc/free, the grid
workspace of cooperative launches, CG's reserved shared memory, and the refusal of device-side
kernel launches.

* `vprintf` writes records into the code object v5 printf buffer (``printf``);
* `malloc`/`free` allocate from a device heap inside the code object (``heap``);
* `%envreg1`:`%envreg2` (high:low) are the grid workspace cooperative groups' ``this_grid()``
  reads (``{u32 size; u32 barrier}``, CG's ``details::grid_workspace``).  On AMD it is
  ``hidden_multigrid_sync_arg``, which the HIP runtime sets for ``hipLaunchCooperativeKernel``
  and leaves 0 otherwise: it points at the runtime's ``mg_info`` (ROCm-Device-Libs
  ``ockl/src/cg.cl``), whose ``sgs.w0`` word (offset 32) is the grid barrier word ockl's own
  grid sync uses.  The workspace is placed 28 bytes in, so CG's barrier word is that word; a
  null argument stays null (CG then traps: "not a cooperative launch", as on NVIDIA GPUs);
* `%reserved_smem_offset_*`: a 288-byte LDS block of its own (CG may count on 288 bytes);
* device-side launches (CDP, `cudaLaunchDeviceV2` ...): refused, HIP has none.
"""

from __future__ import annotations

from llvmlite import ir

from ..ir import nodes as ptx
from ..lift.function import FunctionLowering
from ..machine import cdp
from . import heap, printf
from .llvm_ext import I8, I32, I64, LDS

MULTIGRID_SYNC_ARG = 88       # code object v5 implicit argument offsets (AMDGPUUsage)
WORKSPACE_IN_MG_INFO = 28     # mg_info.sgs.w0 (offset 32) minus CG's barrier offset (4)
RESERVED_SHARED_BYTES = 288   # cooperative_groups/details/memory.h: "at least 288 bytes"
_RESERVED = "__ptx_reserved_shared"

# Calls nvcc emits for device-side launches and the device runtime API (-rdc=true).
CDP_PREFIX = "__cudaCDP2"
CDP_CALLS = frozenset({"cudaLaunchDevice", "cudaLaunchDeviceV2", "cudaGetParameterBuffer",
                       "cudaGetParameterBufferV2", "cudaDeviceSynchronize", "cudaStreamCreateWithFlags",
                       "cudaGetLastError", "cudaPeekAtLastError", "cudaMalloc", "cudaFree", "cudaEventCreateWithFlags",
                       "cudaEventRecord", "cudaStreamDestroy", "cudaEventDestroy", "cudaGetDevice",
                       "cudaDeviceGetAttribute", "cudaFuncGetAttributes", "cudaOccupancyMaxActiveBlocksPerMultiprocessor"})


def is_device_runtime_call(name: str) -> bool:
    # machine.cdp's entry points too: the CDP1 names of the stream and event calls (cudaStreamWaitEvent, ...)
    return name.startswith(CDP_PREFIX) or name in CDP_CALLS or name in cdp.ENTRY_POINTS


class DeviceRuntimeHooks:
    """The CUDA device runtime's calls and registers, as far as AMD GPUs can provide them."""

    def refuse_device_launches(self, fl: FunctionLowering) -> None:
        """A call into CUDA's device runtime is refused at the call, before anything else of the
        function is lowered (the launch sequence also takes kernels' addresses)."""
        for ins in (fl.fn.body.instructions() if fl.fn.body is not None else ()):
            if ins.opcode != "call":
                continue
            callee = next((op for op in ins.operands if isinstance(op, ptx.Symbol)), None)
            if callee is not None and is_device_runtime_call(callee.name):
                raise fl.unsupported(ins, f"calls `{callee.name}`, CUDA's device runtime (dynamic parallelism): "
                                          "HIP has no device-side kernel launch, so AMD GPU code objects cannot "
                                          "launch kernels or call the device runtime API")

    def runtime_call(self, fl: FunctionLowering, ins: ptx.Instruction, name: str, rets, args) -> None:
        if name == "vprintf":
            printf.lower_vprintf(self, fl, ins, rets, args)
        elif name in ("malloc", "free"):
            heap.lower_call(self, fl, ins, name, rets, args)
        else:
            raise fl.unsupported(ins, f"calls `{name}`, which AMD GPU code objects do not provide")

    def runtime_register(self, name: str):
        """The reader of a device-runtime special register, or None."""
        if name in ("%envreg1", "%envreg2"):
            return _envreg
        if name.startswith("%reserved_smem_offset"):
            return _reserved_shared
        return None

    def grid_workspace(self, fl: FunctionLowering) -> ir.Value:
        """i64: the cooperative launch's grid workspace address (0 outside one)."""
        b = fl.b
        mg = self._implicit(fl, MULTIGRID_SYNC_ARG, I64)
        return b.select(b.icmp_unsigned("==", mg, I64(0)), I64(0), b.add(mg, I64(WORKSPACE_IN_MG_INFO)))


def _envreg(h, fl: FunctionLowering, comp: int, name: str, bits: int) -> ir.Value:
    b = fl.b
    ws = h.grid_workspace(fl)
    v = b.trunc(b.lshr(ws, I64(32)) if name == "%envreg1" else ws, I32)
    return v if bits <= 32 else b.zext(v, I64)


def _reserved_shared(h, fl: FunctionLowering, comp: int, name: str, bits: int) -> ir.Value:
    b = fl.b
    llmod = fl.ml.llmod
    gv = llmod.globals.get(_RESERVED)
    if gv is None:
        gv = ir.GlobalVariable(llmod, ir.ArrayType(I8, RESERVED_SHARED_BYTES), _RESERVED, addrspace=LDS)
        gv.linkage = "internal"
        gv.initializer = ir.Constant(gv.value_type, ir.Undefined)
        gv.align = 16
    begin = b.ptrtoint(gv, I32)
    if name == "%reserved_smem_offset_cap":
        v = I32(RESERVED_SHARED_BYTES)
    elif name == "%reserved_smem_offset_end":
        v = b.add(begin, I32(RESERVED_SHARED_BYTES))
    else:                         # _begin, _0, _1: the block's start
        v = begin
    return v if bits <= 32 else b.zext(v, I64)
