"""Target hooks for AMD GPUs (amdgcn-amd-amdhsa): the kernel ABI, thread identity, control.

A lowered kernel is ``define amdgpu_kernel void @<ptx name>(ptr addrspace(4) byref(...))``:
one ``byref`` argument per PTX `.param`, each a pointer straight into the kernarg segment
with the parameter's alignment, so the segment's layout is PTX's and the metadata note
lists the arguments at PTX's offsets.  Thread identity comes from the workitem/workgroup
id intrinsics and the code-object-v5 implicit arguments; barriers are ``s_barrier`` with
workgroup fences; `.func`s stay functions (``inline_synchronising`` off: real GPUs have
real barriers, no resumable state machine); memory, warps and atomics are in the mixins.
"""

from __future__ import annotations

from llvmlite import ir

from ..ir import nodes as ptx
from ..lift.function import FunctionLowering
from ..lift.hooks import TargetHooks
from . import fixups
from .atomics import AtomicHooks
from .barriers import BarrierHooks
from .devrt import DeviceRuntimeHooks
from .layout import ModuleLayout
from .matrix import MatrixHooks
from .llvm_ext import (
    CONSTANT,
    I8,
    I16,
    I32,
    I64,
    VOID,
    call,
    ptr,
    set_string_attributes,
)
from .memory import AmdFunctionState, MemoryHooks, amd_state, by_value_params
from .targets import Target
from .texture import TextureHooks
from .warp import WarpHooks

_COMPONENT = {"x": 0, "y": 1, "z": 2}
# Code object v5 implicit kernel arguments (offsets from llvm.amdgcn.implicitarg.ptr).
_BLOCK_COUNT, _GROUP_SIZE, _DYNAMIC_LDS = 0, 12, 120
DEFAULT_MAX_THREADS = 1024        # CUDA's limit on threads per block
_EXITED, _TRAPPED = 1, 2          # what a lowered `.func` returns besides 0 (carry on)


class AmdgpuHooks(DeviceRuntimeHooks, BarrierHooks, MemoryHooks, WarpHooks, AtomicHooks, MatrixHooks,
                  TargetHooks):
    inline_synchronising = False
    texture = TextureHooks.texture        # tex, tld4, txq, suld, sust, sured, suq (amdgpu.texture)

    def __init__(self, target: Target, layout: ModuleLayout, data_layout: str) -> None:
        self.target, self.layout = target, layout
        self.name = target.name
        self.triple, self.data_layout = target.triple, data_layout
        self.wave_size = target.wave_size
        self.kernel: ptx.Function | None = None      # the kernel being lowered (set by codegen)
        self.accesses = {}
        self.by_value: set[str] = set()
        self.by_value_reads = {}
        self._arrive_cache: frozenset[int] | None | bool = False     # BarrierHooks._arrive_ids
        self.printf_formats: list[str] = []                          # amdhsa.printf entries, by id - 1
        self.printf_ids: dict[str, tuple[int, object]] = {}          # format variable -> (id, Format)

    # ------------------------------------------------------------------ ABI
    def kernel_signature(self) -> ir.FunctionType:
        assert self.kernel is not None
        self.by_value = by_value_params(self.kernel)
        args = [ir.IntType(8 * d.size_bytes()) if d.name in self.by_value
                else ptr(CONSTANT, ir.ArrayType(I8, max(d.size_bytes() or 0, 1))) for d in self.kernel.params]
        return ir.FunctionType(VOID, args)

    def function_prefix_args(self) -> list[ir.Type]:
        return []

    def function_prefix_values(self, fl: FunctionLowering) -> list[ir.Value]:
        return []

    def new_function_state(self, fl: FunctionLowering) -> AmdFunctionState:
        return AmdFunctionState()

    def begin_function(self, fl: FunctionLowering) -> None:
        if fl.is_kernel:
            fn, k = fl.llfn, fl.fn
            fn.calling_convention = "amdgpu_kernel"
            for arg, d in zip(fn.args, k.params):
                if d.name not in self.by_value:
                    arg.add_attribute("byref")
                    arg.attributes.align = d.align or d.element_bytes()
                arg.name = d.name
            low, high = workgroup_sizes(k)
            set_string_attributes(fn, {"amdgpu-flat-work-group-size": f"{low},{high}",
                                       "uniform-work-group-size": "true"})
        self.make_frame(fl)
        self.refuse_device_launches(fl)
        if fl.is_kernel and self.uses_counters(fl.fn, fl.ml.ptx_functions):
            self.init_counters(fl)

    def finish_function(self, fl: FunctionLowering) -> None:
        fixups.run(self, fl)
        trap = amd_state(fl).trap
        if trap is not None:
            # The trap block goes last.  On gfx11 LLVM 22 expands llvm.trap into new blocks (the
            # simulated trap: s_trap, a doorbell message, a halt loop) and leaves the pseudos of
            # the blocks after the trap's unexpanded (a uniform 64-bit add's S_ADD_U64_PSEUDO):
            # "Unsupported instruction" at emission.  With the trap last none follow it (reduced
            # with llvm-reduce; tests/amdgpu/test_trap_block_last.py).
            fl.llfn.blocks.remove(trap)
            fl.llfn.blocks.append(trap)

    def after_call(self, fl: FunctionLowering, status: ir.Value) -> None:
        """A callee returns 0 to carry on, ``_EXITED`` after `exit` (end this thread too) or
        ``_TRAPPED`` after a trap (trap here: only kernels hold the trap itself)."""
        b = fl.b
        cont = fl.new_block("after_call")
        if not fl.is_kernel:
            stop = fl.new_block("callee_stopped")
            b.cbranch(b.icmp_unsigned("!=", status, I32(0)), stop, cont)
            b.position_at_end(stop)
            b.ret(status)
        else:
            exited = fl.new_block("callee_exited")
            sw = b.switch(status, self._trap_block(fl))
            sw.add_case(I32(0), cont)
            sw.add_case(I32(_EXITED), exited)
            b.position_at_end(exited)
            b.ret_void()
        b.position_at_end(cont)

    # ------------------------------------------------------------------ control
    def exit_thread(self, fl: FunctionLowering, ins) -> None:
        fl.b.ret_void()

    def exit_from_function(self, fl: FunctionLowering, ins) -> None:
        fl.b.ret(I32(_EXITED))

    def trap(self, fl: FunctionLowering, ins: ptx.Instruction, kind: str) -> None:
        # `trap`, and the traps the lifter places itself (a `brx.idx` index past its list, cp.async's
        # undefined sizes) abort the dispatch; only `brkpt` needs a debugger.
        if kind == "brkpt":
            raise fl.unsupported(ins, "is a debugger breakpoint, which needs a debugger on AMD GPUs")
        self._trap(fl)

    def _trap(self, fl: FunctionLowering) -> None:
        """Abort the dispatch.  Each kernel holds one ``llvm.trap`` (``s_trap 2``: the queue
        reports an error to the host) that every trap site branches to; a `.func` returns
        ``_TRAPPED`` and its caller traps.  One trap per function, the function's last block
        (``finish_function``), also avoids an LLVM 22 gfx11 failure: LLVM leaves the pseudos of
        the blocks after a trap unexpanded (a second ``llvm.trap`` among them)."""
        if fl.is_kernel:
            fl.b.branch(self._trap_block(fl))
        else:
            fl.b.ret(I32(_TRAPPED))

    def _trap_block(self, fl: FunctionLowering) -> ir.Block:
        st = amd_state(fl)
        blk = st.trap
        if blk is None:
            blk = st.trap = fl.new_block("trap")
            b = ir.IRBuilder(blk)
            call(b, "llvm.trap", VOID, [])
            b.unreachable()
        return blk

    def bad_call(self, fl, ins, target) -> None:
        self._trap(fl)

    def builtin_call(self, fl, ins, name, rets, args) -> None:
        if name == "__assertfail":
            # The message stays on the device: the kernel aborts with a trap, as a failed
            # assert() does in HIP without device-side printf.
            self._trap(fl)
            fl.b.position_at_end(fl.new_block("after_assert"))
            return
        self.runtime_call(fl, ins, name, rets, args)

    def yield_thread(self, fl, ins) -> None:
        call(fl.b, "llvm.amdgcn.s.sleep", VOID, [I32(1)])

    # ------------------------------------------------------------------ identity
    def _implicit(self, fl: FunctionLowering, offset: int, ty: ir.Type) -> ir.Value:
        b = fl.b
        base = call(b, "llvm.amdgcn.implicitarg.ptr", ptr(CONSTANT), [])
        p = b.bitcast(b.gep(base, [I64(offset)]) if offset else base, ptr(CONSTANT, ty))
        v = b.load(p)
        v.align = ty.width // 8
        v.set_metadata("invariant.load", fl.ml.llmod.add_metadata([]))
        return v

    def tid(self, fl: FunctionLowering, comp: int) -> ir.Value:
        return call(fl.b, f"llvm.amdgcn.workitem.id.{'xyz'[comp]}", I32, [])

    def ntid(self, fl: FunctionLowering, comp: int) -> ir.Value:
        return fl.b.zext(self._implicit(fl, _GROUP_SIZE + 2 * comp, I16), I32)

    def linear_tid(self, fl: FunctionLowering) -> ir.Value:
        b = fl.b
        x, y, z = (self.tid(fl, c) for c in range(3))
        nx, ny = self.ntid(fl, 0), self.ntid(fl, 1)
        return b.add(x, b.mul(nx, b.add(y, b.mul(ny, z))))

    def lane_id(self, fl: FunctionLowering) -> ir.Value:
        return self.lane_in_warp(fl)        # the wave's own lane count (half-waves on wave64)

    def special_register(self, fl, name, component, bits, ins):
        """Primitive special registers (the warp registers are derived in ``lift.sregs``)."""
        read = _SREGS.get(name) or self.runtime_register(name)
        if read is None:
            raise fl.unsupported(ins, f"reads special register `{name}`, which AMD GPUs do not provide")
        return read(self, fl, _COMPONENT.get(component or "x", 0), name, bits)

    def _clock(self, fl: FunctionLowering) -> ir.Value:
        # Where the shader cycle counter is too narrow to serve as %clock64, the steady
        # (real-time) counter stands in: monotone and 64-bit, in other units.
        if self.target.cycle_counter_bits >= 64:
            return call(fl.b, "llvm.readcyclecounter", I64, [])
        return call(fl.b, "llvm.readsteadycounter", I64, [])


def workgroup_sizes(kernel: ptx.Function) -> tuple[int, int]:
    """(min, max) threads per block: `.reqntid` fixes both, `.maxntid` bounds the maximum,
    CUDA's limit of 1024 otherwise (LLVM sizes registers and LDS per wave from the maximum)."""
    for name in ("reqntid", "maxntid"):
        d = kernel.directive(name)
        if d is not None and d.values:
            n = 1
            for v in d.values:
                n *= max(int(v), 1)
            n = min(n, DEFAULT_MAX_THREADS)
            return (n if name == "reqntid" else 1), n
    return 1, DEFAULT_MAX_THREADS


# ---------------------------------------------------------------------- primitive special registers
# Each: (hooks, fl, component 0-2, name, bits) -> the value (i32, or i64 for 64-bit reads).

def _tid(h: AmdgpuHooks, fl: FunctionLowering, comp: int, name: str, bits: int) -> ir.Value:
    return h.tid(fl, comp)


def _ntid(h: AmdgpuHooks, fl: FunctionLowering, comp: int, name: str, bits: int) -> ir.Value:
    return h.ntid(fl, comp)


def _ctaid(h: AmdgpuHooks, fl: FunctionLowering, comp: int, name: str, bits: int) -> ir.Value:
    return call(fl.b, f"llvm.amdgcn.workgroup.id.{'xyz'[comp]}", I32, [])


def _nctaid(h: AmdgpuHooks, fl: FunctionLowering, comp: int, name: str, bits: int) -> ir.Value:
    return h._implicit(fl, _BLOCK_COUNT + 4 * comp, I32)


def _clock(h: AmdgpuHooks, fl: FunctionLowering, comp: int, name: str, bits: int) -> ir.Value:
    b = fl.b
    v = h._clock(fl)
    v = b.lshr(v, I64(32)) if name == "%clock_hi" else v
    return v if bits == 64 else b.trunc(v, I32)


def _globaltimer(h: AmdgpuHooks, fl: FunctionLowering, comp: int, name: str, bits: int) -> ir.Value:
    b = fl.b
    ticks = call(b, "llvm.readsteadycounter", I64, [])
    ns = b.mul(ticks, I64(1_000_000_000 // h.target.steady_counter_hz))
    v = b.lshr(ns, I64(32)) if name.endswith("_hi") else ns
    return v if bits == 64 else b.trunc(v, I32)


def _zero(h: AmdgpuHooks, fl: FunctionLowering, comp: int, name: str, bits: int) -> ir.Value:
    return I32(0) if bits <= 32 else I64(0)


def _nsmid(h: AmdgpuHooks, fl: FunctionLowering, comp: int, name: str, bits: int) -> ir.Value:
    return I32(1)


def _dynamic_smem(h: AmdgpuHooks, fl: FunctionLowering, comp: int, name: str, bits: int) -> ir.Value:
    return h._implicit(fl, _DYNAMIC_LDS, I32)


def _total_smem(h: AmdgpuHooks, fl: FunctionLowering, comp: int, name: str, bits: int) -> ir.Value:
    static = call(fl.b, "llvm.amdgcn.groupstaticsize", I32, [])
    return fl.b.add(static, h._implicit(fl, _DYNAMIC_LDS, I32))


_SREGS = {
    "%tid": _tid, "%ntid": _ntid, "%ctaid": _ctaid, "%nctaid": _nctaid,
    **dict.fromkeys(("%clock", "%clock64", "%clock_hi"), _clock),
    **dict.fromkeys(("%globaltimer", "%globaltimer_lo", "%globaltimer_hi"), _globaltimer),
    "%smid": _zero, "%gridid": _zero, "%nsmid": _nsmid,
    "%dynamic_smem_size": _dynamic_smem, "%total_smem_size": _total_smem, "%aggr_smem_size": _total_smem,
}
