"""The documented limits of the AMD ISA emulator (../shared/tools/amdgpu-emu, its docstring),
by reason, and how a test tells that a launch met one: from the kernel's own instructions or
from the emulator's refusal, never from a list of kernel names.

``classify_error(exc, kernel, grid)`` names the limit an emu:* failure is, or None (a real
failure); ``before_run(module, kernel)`` names a limit visible in the PTX before running;
``explains_mismatch(...)`` names the one known-wrong emulator result (f32 division) when it
accounts for every differing element.
"""

from __future__ import annotations

import re

import numpy as np

# reason -> what the emulator does not do (shown in the end-of-run summary).
LIMITS = {
    "aperture": "generic (flat) pointers into LDS or private memory: the emulator has no apertures "
                "(src_shared_base/src_private_base); its own refusal",
    "mubuf_scratch": "private memory through MUBUF scratch (ptxvm's gfx90a default, no +enable-flat-scratch): "
                     "the emulator ignores the scratch descriptor; its own refusal",
    "s_memtime": "clock/clock64/globaltimer (s_memtime, s_memrealtime, s_sendmsg_rtn) do not compile in the "
                 "emulator, and a counter's value is not comparable with the interpreter's anyway",
    "s_trap": "trap/brkpt/assert (s_trap) do not compile in the emulator",
    "instruction": "an instruction the emulator's pseudocode compiler cannot build (v_exp_f16; on gfx90a "
                   "v_mad_f32/v_mac_f32, which the CDNA3 tables dropped)",
    "inter_block": "workgroups run one after another, so a kernel that waits for another block (a spin on "
                   "global memory or atomics) never finishes",
    "inter_wave": "a counted or named barrier (bar.sync/bar.arrive with a thread count, bar.red with one) whose "
                  "threads span several waves: ptxvm waits on LDS counters, and the emulator runs each wave until "
                  "s_barrier, so a wave waiting for another never finishes",
    "heap_state": "the kernel frees or reads blocks an earlier launch allocated: the interpreter's heap addresses "
                  "mean nothing to the code object, whose heap (its own, in the object) starts empty on the emulator",
    "heap_address": "the kernel writes the addresses malloc returned into its output: the interpreter's heap and "
                    "the code object's are at different addresses",
    "heap_limit": "the test bounds ptxvm's device memory (ptxvm.limits), which is where the interpreter's malloc "
                  "runs out; a code object's heap is its own 8 MiB",
    "f32_div_denormal": "the IEEE f32 division sequence (v_div_scale/v_div_fmas/v_div_fixup) returns 0 where "
                        "the quotient is a denormal (known wrong, not worked around)",
    "u24_multiply": "emulator bug: V_MUL_U32_U24 / V_MUL_HI_U32_U24 / V_MAD_U32_U24 multiply the whole 32-bit "
                    "operands; the ISA multiplies S0[23:0] * S1[23:0] (PTX mul24/mad24 .u32 on values above 2^24)",
    "cas64": "emulator bug: a 64-bit compare-and-swap (*_ATOMIC_CMPSWAP_X2 / _B64) never stores: the compare "
             "value DATA[127:64] is not read, so tmp == cmp fails and memory keeps its value",
    "bpermute_exec": "emulator bug: DS_BPERMUTE_B32 / DS_PERMUTE_B32 write the destination VGPR of inactive lanes "
                     "too (the ISA writes VGPR[i][VDST] only where EXEC[i]), and crash the emulator in some "
                     "kernels (a permute accesses no memory, so it cannot fault on a GPU)",
    "f64_atomic_return": "emulator bug: a returning GLOBAL_ATOMIC_ADD_F64 (CDNA) stores the sum but returns "
                         "garbage (an address-like value) instead of the old value (RETURN_DATA = tmp in the ISA)",
    "i32_clamp": "emulator bug: the clamp bit of the CDNA signed adds V_ADD_I32 / V_SUB_I32 / V_SUBREV_I32 (and "
                 "V_ADD_I16 / V_SUB_I16, RDNA V_ADD_NC_I16 / V_SUB_NC_I16) is ignored, so the sum wraps; with clamp "
                 "it saturates to the signed range (LLVM selects llvm.sadd.sat as v_add_i32 clamp: PTX add.sat.s32 / "
                 "sub.sat.s32 on gfx90a/gfx942). The emulator's integer clamp knows only the RDNA _NC_ names",
    "f32_div_tiny_operand": "emulator bug: the IEEE f32 division sequence (v_div_scale/v_div_fmas/v_div_fixup, "
                                "which LLVM also emits for div.full/div.approx/rcp.approx since ptxvm lowers them "
                                "correctly rounded) is wrong for a numerator below 2^-103 (exponent field <= 23, "
                                "denormals included: the quotient comes out 2^64 too small, 0 once that underflows; "
                                "v_div_scale scales the numerator without setting VCC, so v_div_fmas never undoes "
                                "it) and for a denormal divisor (inf); the kernel's denormal mode (3) preserves them",
    "ds_d16": "emulator bug: the LDS half-register loads (DS_LOAD_U8_D16 / _I8_D16 / _U16_D16 and _HI, CDNA "
              "DS_READ_*_D16) write the whole 32-bit VGPR; the ISA writes RETURN_DATA[15:0] (or [31:16]) and "
              "preserves the other half, where LLVM keeps a second 16-bit PTX register",
    "approx_range": "sin/cos.approx of an argument outside [-100 pi, 100 pi]: the PTX ISA (9.7.3.18/19) gives "
                    "no bound there, 'only best effort' (the comparison of a caller that bounds it anyway)",
    "not_translated": "the translator refuses the module (UnsupportedError: a device-side launch, a special "
                      "register AMD GPUs lack, ...): nothing to emulate (tests/amdgpu/test_amdgpu_fixtures.py lists them)",
    "module_state": "the module's variables were changed after loading (cudaMemcpyToSymbol or an earlier "
                    "launch); a code object on the emulator starts from its initialisers",
}

_CLOCKS = ("%clock", "%clock64", "%globaltimer", "%globaltimer_lo", "%globaltimer_hi")
_TRAPS = ("trap", "brkpt")
# Instructions through which a block can wait for another one.
_SPIN = ("atom", "red", "ld", "membar", "fence")


def _instructions(module, kernel_name: str):
    """Every instruction of the kernel and of the module's `.func`s (its possible callees)."""
    for name, f in module.ir.functions.items():
        if f.body is not None and (name == kernel_name or not f.is_kernel):
            yield from f.body.instructions()


def _names(op):
    """The symbol and register names an operand mentions (addresses, vectors, negations)."""
    name = getattr(op, "name", None)
    if isinstance(name, str):
        yield name
    for attr in ("base", "operand", "first", "second"):
        inner = getattr(op, attr, None)
        if inner is not None:
            yield from _names(inner)
    for inner in getattr(op, "elements", ()) + getattr(op, "extra", ()):
        yield from _names(inner)


def _reads(ins, names) -> bool:
    return any(n in names for op in ins.operands for n in _names(op))


def before_run(module, kernel_name: str) -> str | None:
    """A limit the PTX shows before running: a clock read (s_memtime)."""
    for ins in _instructions(module, kernel_name):
        if _reads(ins, _CLOCKS):
            return "s_memtime"
    return None


def _may_wait_on_other_blocks(module, kernel_name: str) -> bool:
    """Global atomics, or volatile / acquire / relaxed loads: how one block watches another."""
    for ins in _instructions(module, kernel_name):
        mods = set(ins.modifiers)
        if ins.opcode in ("atom", "red") and "shared" not in mods:
            return True
        if ins.opcode == "ld" and mods & {"volatile", "acquire", "relaxed"} and "shared" not in mods:
            return True
    return False


def _counted_barriers(module, kernel_name: str) -> bool:
    """A barrier with a thread count or an arrive: ptxvm's AMD lowering waits on LDS counters."""
    for ins in _instructions(module, kernel_name):
        if ins.opcode in ("bar", "barrier") and "warp" not in ins.modifiers:
            counted = len(ins.operands) > (3 if "red" in ins.modifiers else 1)
            if counted or "arrive" in ins.modifiers:
                return True
    return False


def _calls(module, kernel_name: str, callee: str) -> bool:
    return any(ins.opcode == "call" and callee in set(_names_of(ins)) for ins in _instructions(module, kernel_name))


def _names_of(ins):
    for op in ins.operands:
        yield from _names(op)


def heap_reason(module, kernel_name: str) -> str | None:
    """Why a heap kernel may differ on the emulator, from the PTX and the limits in force."""
    from ptxvm import limits
    if _calls(module, kernel_name, "free") and not _calls(module, kernel_name, "malloc"):
        return "heap_state"
    if _calls(module, kernel_name, "malloc") and limits.current() != limits.Limits():
        return "heap_limit"
    return None


def classify_error(exc: BaseException, module, kernel_name: str, grid: tuple[int, int, int]) -> str | None:
    """The documented limit an emu:* launch failure is, or None when it is a real failure."""
    from ptxvm.driver.executors.emu import EmulatorLimit
    from ptxvm.errors import KernelFault, UnsupportedError, WatchdogError
    if isinstance(exc, UnsupportedError):
        return "not_translated"
    if heap_reason(module, kernel_name) == "heap_state":
        return "heap_state"
    if isinstance(exc, KernelFault) and "crashed the emulator" in str(exc) and \
            re.search(r"last instruction started:.*\bds_b?permute_b32", str(exc)):
        return "bpermute_exec"
    blocks = grid[0] * grid[1] * grid[2]
    if isinstance(exc, EmulatorLimit):
        if exc.reason in ("aperture", "mubuf_scratch", "module_state"):
            return exc.reason
        if exc.reason == "instruction":
            ins = exc.instruction or ""
            if ins in ("s_memtime", "s_memrealtime") or ins.startswith("s_sendmsg_rtn"):
                return "s_memtime"
            return "s_trap" if ins == "s_trap" else "instruction"
        if exc.reason == "endless":
            if blocks > 1 and _may_wait_on_other_blocks(module, kernel_name):
                return "inter_block"
            return "inter_wave" if _counted_barriers(module, kernel_name) else None
    if isinstance(exc, WatchdogError) and blocks > 1 and _may_wait_on_other_blocks(module, kernel_name):
        return "inter_block"
    return None


def _has_ieee_f32_div(module, kernel_name: str) -> bool:
    for ins in _instructions(module, kernel_name):
        mods = set(ins.modifiers)
        if ins.opcode == "div" and "f32" in mods and "approx" not in mods and "full" not in mods:
            return True
        if ins.opcode == "rcp" and "f32" in mods and "approx" not in mods:
            return True
    return False


def _uses(module, kernel_name: str, test) -> bool:
    return any(test(ins.opcode, set(ins.modifiers)) for ins in _instructions(module, kernel_name))


def _may_drop_24_bit_masks(module, kernel_name: str) -> bool:
    """Whether LLVM may have selected a *_u32_u24 multiply for operands with bits above 23 that
    it knows the instruction ignores (the emulator bug's trigger): PTX mul24/mad24, or an `and`
    with a 24-bit mask. LLVM also selects them for operands known to be small (thread and
    block indices), where the bug cannot show: those alone explain nothing."""
    for ins in _instructions(module, kernel_name):
        if ins.opcode in ("mul24", "mad24"):
            return True
        if ins.opcode == "and":
            for op in ins.operands[1:]:
                v = getattr(op, "value", None)
                if isinstance(v, int) and 0 <= v < 1 << 24:
                    return True
    return False


def explains_mismatch(module, kernel_name: str, want: np.ndarray, got: np.ndarray, asm: str = "") -> str | None:
    """The known-wrong emulator result a mismatch is, or None, from the machine code ``asm`` (the
    code object's listing) and the PTX: 'u24_multiply' (the code has v_mul/v_mad *_u32_u24, which
    LLVM selects for a multiply of 24-bit-masked values, dropping the masks), 'bpermute_exec' (the
    code has ds_bpermute/ds_permute, which the emulator lets write inactive lanes), 'ds_d16' (an
    LDS load into half a VGPR, whose other half the emulator zeroes),
    'f64_atomic_return' (a returning global_atomic_add_f64), 'cas64' (a 64-bit
    compare-and-swap), 'f32_div_denormal' (the kernel divides in f32, div.rn / rcp.rn, and every
    differing f32 element is 0 where the interpreter has a denormal)."""
    heap = heap_reason(module, kernel_name)
    if heap:
        return heap
    if want.dtype.kind in "iu" and want.dtype.itemsize == 8 and _calls(module, kernel_name, "malloc"):
        return "heap_address"
    if re.search(r"\bv_(mul|mul_hi|mad)_u32_u24", asm) and _may_drop_24_bit_masks(module, kernel_name):
        return "u24_multiply"
    if re.search(r"\bds_b?permute_b32\b", asm):
        return "bpermute_exec"
    if re.search(r"\bds_(load|read)_[iu](8|16)_d16(_hi)?\b", asm):
        return "ds_d16"
    if re.search(r"\bv_(add|sub|subrev)_(i16|i32|nc_i16)(_e64)?\b[^\n]*\bclamp\b", asm):
        return "i32_clamp"
    if re.search(r"\bglobal_atomic_(add|min|max)_f64\b.*\bsc0\b", asm):
        return "f64_atomic_return"
    if re.search(r"_atomic_cmpswap_(x2|b64)\b", asm) or \
            _uses(module, kernel_name, lambda op, m: op == "atom" and "cas" in m and m & {"b64", "u64", "s64"}):
        return "cas64"
    if want.dtype != np.float32 or not _has_ieee_f32_div(module, kernel_name):
        return None
    w, g = want.reshape(-1), got.reshape(-1)
    bad = w.view(np.uint32) != g.view(np.uint32)
    tiny = np.float32(np.finfo(np.float32).tiny)
    if bad.any() and np.all((g[bad] == 0) & (np.abs(w[bad]) < tiny)):
        return "f32_div_denormal"
    return None


def has_approx(module, kernel_name: str) -> bool:
    """Whether the kernel has a `.approx` instruction (the only ones whose results may differ in ULPs)."""
    return any("approx" in ins.modifiers for ins in _instructions(module, kernel_name))


_APX_LINE = re.compile(r"apx record \d+ \((sin|cos), abs bound\).*source 0x([0-9a-f]{8})")


def approx_out_of_range(problems: list[str]) -> bool:
    """Whether every problem the fuzzer's comparison reports is a sin/cos.approx result for an
    argument outside [-100 pi, 100 pi], where the PTX ISA states no bound (§9.7.3.18/19: 2^-20.5
    on [-2pi, 2pi], 2^-14.7 on [-100pi, 100pi], best effort beyond). The comparison itself
    (ptxgen.compare, APPROX_BOUNDS) now leaves those unbounded; this stays for older callers."""
    import math
    import struct
    if not problems:
        return False
    for p in problems:
        m = _APX_LINE.search(p)
        if m is None or abs(struct.unpack("<f", bytes.fromhex(m.group(2))[::-1])[0]) <= 100 * math.pi:
            return False
    return True


# .approx records whose f32 result the AMD code computes with the IEEE division sequence
# (ptxvm lowers these correctly rounded, as LLVM's plain fdiv).
_DIV_SEQUENCE = ("div.full", "div.approx", "rcp")


def _f32(words: np.ndarray) -> np.ndarray:
    return (words & np.uint64(0xFFFFFFFF)).astype(np.uint32).view(np.float32)


def excuse_division_records(gk, ref: tuple, got: tuple) -> tuple[tuple, set[str]]:
    """``got`` with the emulator's known-wrong f32 division results in the .approx records put
    back to the interpreter's: where the numerator is nonzero and below 2^-103 or the divisor
    a nonzero denormal (f32_div_tiny_operand), or where the correct quotient is below the
    smallest normal and the emulator's is 0 or below it too (f32_div_denormal). Anything else
    stays for the comparison to judge.
    Returns the amended outputs and the reasons used."""
    reasons: set[str] = set()
    if gk.approx_arg is None or not any(k in _DIV_SEQUENCE for k in gk.approx_ops):
        return got, reasons
    T = gk.grid[0] * gk.grid[1] * gk.grid[2] * gk.block[0] * gk.block[1] * gk.block[2]
    r, g = ref[gk.approx_arg], np.array(got[gk.approx_arg], copy=True)
    tiny = np.float32(np.finfo(np.float32).tiny)
    for slot, key in enumerate(gk.approx_ops):
        if key not in _DIV_SEQUENCE:
            continue
        rr, gg = r[slot * 3 * T:(slot + 1) * 3 * T].reshape(3, T), g[slot * 3 * T:(slot + 1) * 3 * T].reshape(3, T)
        num, den = (None, _f32(rr[0])) if key == "rcp" else (_f32(rr[0]), _f32(rr[1]))
        denormal = (den != 0) & (np.abs(den) < tiny)
        if num is not None:
            denormal |= (num != 0) & (np.abs(num) < np.float32(2.0 ** -103))
        want, have = _f32(rr[2]), _f32(gg[2])
        with np.errstate(all="ignore"):
            tiny_quotient = (want != 0) & (np.abs(want) < tiny) & (np.abs(have) < tiny)
            fixed = denormal | tiny_quotient
        fixed &= rr[2] != gg[2]
        if (fixed & denormal).any():
            reasons.add("f32_div_tiny_operand")
        if (fixed & ~denormal).any():
            reasons.add("f32_div_denormal")
        gg[2] = np.where(fixed, rr[2], gg[2])
    out = list(got)
    out[gk.approx_arg] = g
    return tuple(out), reasons


def judge_on_emulator(gk, target: str, ref: tuple, module=None) -> str:
    """What generated kernel ``gk`` does on emu:``target`` against the interpreter's outputs
    ``ref``: 'agree', 'refused: <the translator's reason>', a documented limit's reason (a key of
    LIMITS), or 'FAIL <what>' (a disagreement or an unexplained error, to be attributed)."""
    import ptxvm
    from ptxvm.driver.executors import emu
    from ptxvm.errors import UnsupportedError
    from ptxvm.testing.ptxgen import run_on
    from ptxvm.testing.ptxgen.compare import compare_runs
    module = module if module is not None else ptxvm.Module(gk.ptx)
    try:
        got = run_on(gk, f"emu:{target}")
    except UnsupportedError as e:               # a form the translator refuses, said at compile time
        return "refused: " + str(e).splitlines()[0].split("error: ")[-1][:70]
    except ptxvm.PtxError as e:
        why = classify_error(e, module, gk.kernel, gk.grid)
        return why if why is not None else f"FAIL {type(e).__name__}: {str(e).splitlines()[0][:200]}"
    problems = compare_runs(gk, {"interp": ref, f"emu:{target}": got})
    if not problems:
        return "agree"
    if any(p.startswith("apx") for p in problems):
        excused, reasons = excuse_division_records(gk, ref, got)
        if reasons and not compare_runs(gk, {"interp": ref, f"emu:{target}": excused}):
            return "+".join(sorted(reasons))
    asm = emu.code_object(module, target).asm
    # The outputs that differ beyond what the comparison accepts (an .approx record within its
    # bound differs in bits but is no problem).
    apx = any(p.startswith("apx") for p in problems)
    why = {explains_mismatch(module, gk.kernel, ref[i], got[i], asm)
           for i in gk.outputs if not np.array_equal(ref[i], got[i]) and (i != gk.approx_arg or apx)}
    if len(why) == 1 and None not in why:
        return why.pop()
    if approx_out_of_range(problems):
        return "approx_range"
    return "FAIL disagree: " + " | ".join(problems)[:300]
