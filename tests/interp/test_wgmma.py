"""wgmma.mma_async (PTX ISA 9.0 §9.7.15) on the interpreter and the host JIT: A and B placed in
shared memory by the independent model (tests/models/wgmma.py: canonical layouts, swizzles,
descriptors) or A in registers, D in the accumulator fragment layout; D must be A @ B (+ D)
exactly (small integer inputs: every product and sum is exact, so every order agrees)."""

from __future__ import annotations

import os
import shutil
import subprocess

import numpy as np
import pytest

import ptxvm
from models import wgmma as G

EXECUTORS = ("interp", "cpu")
HEADER = ".version 8.4\n.target sm_90a\n.address_size 64\n"


def _imm_list(at: str, a_regs: bool, sa: int, sb: int, ta: int, tb: int) -> str:
    if at in ("s8", "u8", "b1"):
        return ""
    out = f", {sa}, {sb}"
    if at in ("f16", "bf16"):
        out += f", {tb}" if a_regs else f", {ta}, {tb}"
    return out


def _opcode(n: int, dt: str, at: str, bt: str, sat: bool) -> str:
    k = G.K_OF[at]
    if at == "b1":
        return f"wgmma.mma_async.sync.aligned.m64n{n}k{k}.s32.b1.b1.and.popc"
    return f"wgmma.mma_async.sync.aligned.m64n{n}k{k}{'.satfinite' if sat else ''}.{dt}.{at}.{bt}"


def kernel(n: int, dt: str, at: str, bt: str, shared: int, a_regs: bool, imms: str, sat: bool = False,
           target: str = "sm_90a", scale: str = "%q") -> str:
    dregs = n // 4 if dt == "f16" else n // 2
    dv = "{" + ", ".join(f"%d{i}" for i in range(dregs)) + "}"
    av = "{%a0, %a1, %a2, %a3}" if a_regs else "%da"
    lines = [HEADER.replace("sm_90a", target),
             ".visible .entry k(.param .u64 p_smem, .param .u32 p_bytes, .param .u64 p_desc, .param .u64 p_a,"
             " .param .u64 p_d, .param .u32 p_scale)", "{",
             f"  .shared .align 1024 .b8 smem[{shared}];",
             "  .reg .b32 %t, %i, %v, %n, %wg, %sc, %step;",
             "  .reg .b64 %base, %adr, %off, %da, %db, %sb, %sx;",
             f"  .reg .b32 %a<4>;\n  .reg .b32 %d<{dregs}>;\n  .reg .pred %p, %q;",
             "  mov.u32 %t, %tid.x;",
             "  ld.param.u64 %base, [p_smem];", "  ld.param.u32 %n, [p_bytes];",
             "  mov.u64 %sb, smem;", "  mul.lo.u32 %i, %t, 4;", "  mov.u32 %step, %ntid.x;", "  shl.b32 %step, %step, 2;",
             "COPY:", "  setp.ge.u32 %p, %i, %n;", "  @%p bra COPIED;",
             "  cvt.u64.u32 %off, %i;", "  add.s64 %adr, %base, %off;", "  ld.global.u32 %v, [%adr];",
             "  add.s64 %sx, %sb, %off;", "  st.shared.u32 [%sx], %v;", "  add.u32 %i, %i, %step;", "  bra COPY;",
             "COPIED:", "  bar.sync 0;",
             "  shr.u32 %wg, %t, 7;", "  ld.param.u64 %base, [p_desc];", "  mul.wide.u32 %off, %wg, 16;",
             "  add.s64 %adr, %base, %off;", "  ld.global.u64 %da, [%adr];", "  ld.global.u64 %db, [%adr+8];",
             "  shr.u64 %sx, %sb, 4;", "  and.b64 %sx, %sx, 16383;", "  add.s64 %da, %da, %sx;", "  add.s64 %db, %db, %sx;",
             "  ld.param.u64 %base, [p_a];", "  mul.wide.u32 %off, %t, 16;", "  add.s64 %adr, %base, %off;"]
    lines += [f"  ld.global.u32 %a{i}, [%adr+{4 * i}];" for i in range(4)]
    lines += ["  ld.param.u64 %base, [p_d];", f"  mul.wide.u32 %off, %t, {4 * dregs};", "  add.s64 %adr, %base, %off;"]
    lines += [f"  ld.global.u32 %d{i}, [%adr+{4 * i}];" for i in range(dregs)]
    lines += ["  ld.param.u32 %sc, [p_scale];", "  setp.ne.u32 %q, %sc, 0;",
              "  wgmma.fence.sync.aligned;",
              f"  {_opcode(n, dt, at, bt, sat)} {dv}, {av}, %db, {scale}{imms};",
              "  wgmma.commit_group.sync.aligned;", "  wgmma.wait_group.sync.aligned 0;"]
    lines += [f"  st.global.u32 [%adr+{4 * i}], %d{i};" for i in range(dregs)]
    lines += ["  ret;", "}"]
    return "\n".join(lines) + "\n"


def layout_params(rows: int, elem: str, major: str, swizzle: int) -> tuple[int, int, int]:
    """(LBO, SBO, bytes) of a compact canonical layout of a rows x K operand."""
    per = 128 // G.BITS[elem]
    w = max(swizzle // 16, 1)
    if major == "k":
        groups = -(-rows // 8)
        if swizzle == 0:
            return 128, 256, 256 * groups          # the two K core matrices side by side
        return 16, 128 * w, 128 * w * groups
    if swizzle == 0:
        pieces = -(-rows // per)
        return 128 * pieces, 128, 128 * pieces * 2
    atoms = -(-rows // (per * w))
    return 128 * w, 128 * w * atoms, 128 * w * atoms * 2


def exact(rng, elem: str, shape) -> np.ndarray:
    lo, hi = {"s8": (-128, 127), "u8": (0, 255), "b1": (0, 1), "s32": (-100000, 100000)}.get(elem, (-3, 3))
    return rng.integers(lo, hi + 1, shape).astype(np.float64 if elem not in ("s8", "u8", "b1", "s32") else np.int64)


def case(rng, *, n, dt, at, bt=None, swz_a=0, swz_b=0, ta=0, tb=0, a_regs=False, sa=1, sb=1, scale_d=1,
         sat=False, groups=1, values=None, scale_imm=False):
    """(kernel text, launch arrays, expected D registers [128 G, regs])."""
    bt = bt or at
    k = G.K_OF[at]
    a = exact(rng, at, (groups, 64, k)) if values is None else values[0]
    b = exact(rng, bt, (groups, k, n)) if values is None else values[1]
    cd = "s32" if dt == "s32" else dt
    c = exact(rng, cd, (groups, 64, n)) if values is None else values[2]
    ma, mb = ("mn" if ta else "k"), ("mn" if tb else "k")
    la, sa_, size_a = layout_params(64, at, ma, swz_a)
    lb, sb_, size_b = layout_params(n, bt, mb, swz_b)
    size_a, size_b = -(-size_a // 1024) * 1024, -(-size_b // 1024) * 1024
    per_group = size_a + size_b
    image = np.zeros(per_group * groups, dtype=np.uint8)
    descs = []
    for g in range(groups):
        start_a, start_b = g * per_group, g * per_group + size_a
        if not a_regs:
            G.place(image, start_a, G.encode(a[g], at), at, ma, swz_a, la, sa_)
        G.place(image, start_b, G.encode(b[g].T, bt), bt, mb, swz_b, lb, sb_)
        descs += [G.descriptor(start_a, la, sa_, swz_a), G.descriptor(start_b, lb, sb_, swz_b)]
    av, bv = a * sa, b * sb
    if at == "b1":
        prod = np.einsum("gik,gkj->gij", av, bv)          # popc(a and b) over bits: the sum of a*b
    else:
        prod = np.einsum("gik,gkj->gij", av, bv)
    d = prod + (c if scale_d else 0)
    if sat:
        d = np.clip(d, -(1 << 31), (1 << 31) - 1)
    dbits = 16 if dt == "f16" else 32
    dpos = G.d_positions(n)
    d_in = G.pack(G.encode(G.gather(c, dpos), cd), dbits).reshape(groups * 128, -1)
    want = G.pack(G.encode(G.gather(d, dpos), cd), dbits).reshape(groups * 128, -1)
    if a_regs:
        a_in = G.pack(G.encode(G.gather(a, G.a_positions(at)), at), G.BITS[at]).reshape(groups * 128, 4)
    else:
        a_in = np.zeros((groups * 128, 4), dtype=np.uint32)
    text = kernel(n, dt, at, bt, len(image), a_regs, _imm_list(at, a_regs, sa, sb, ta, tb), sat,
                  scale=str(scale_d) if scale_imm else "%q")
    arrays = [image.view(np.uint32).copy(), np.uint32(len(image)), np.array(descs, dtype=np.uint64), a_in,
              d_in.copy(), np.uint32(scale_d)]
    return text, arrays, want


def launch(text: str, arrays: list, threads: int, executor: str) -> None:
    ptxvm.Module(text)["k"](1, threads, tuple(arrays), device=executor)


CASES = {
    "f16_f32_none_n8": dict(n=8, dt="f32", at="f16"),
    "f16_f32_sw128_trans_n64": dict(n=64, dt="f32", at="f16", swz_a=128, swz_b=128, ta=1, tb=1),
    "bf16_sw64_transa_n16": dict(n=16, dt="f32", at="bf16", swz_a=64, swz_b=32, ta=1),
    "f16_f16_sw32_transb_n24": dict(n=24, dt="f16", at="f16", swz_a=32, swz_b=64, tb=1),
    "f16_none_trans_n40": dict(n=40, dt="f32", at="f16", ta=1, tb=1),
    "tf32_sw128_n32": dict(n=32, dt="f32", at="tf32", swz_a=128, swz_b=128),
    "tf32_regs_negated_n16": dict(n=16, dt="f32", at="tf32", a_regs=True, sa=-1, swz_b=64),
    "s8u8_none_n48_sat": dict(n=48, dt="s32", at="s8", bt="u8", sat=True),
    "u8_regs_sw32_n16": dict(n=16, dt="s32", at="u8", a_regs=True, swz_b=32),
    "e4m3e5m2_f32_sw64_n16": dict(n=16, dt="f32", at="e4m3", bt="e5m2", swz_a=64, swz_b=64, sb=-1),
    "e5m2_f16_regs_n8": dict(n=8, dt="f16", at="e5m2", a_regs=True),
    "b1_sw128_n16": dict(n=16, dt="s32", at="b1", swz_a=128, swz_b=128),
    "b1_regs_n8": dict(n=8, dt="s32", at="b1", a_regs=True),
    "f16_regs_transb_n256_scaled": dict(n=256, dt="f32", at="f16", a_regs=True, tb=1, swz_b=128, sa=-1, sb=-1),
    "bf16_scale_d0_n8": dict(n=8, dt="f32", at="bf16", scale_d=0, swz_a=32, swz_b=32),
    "s8_scale_d_immediate0_n16": dict(n=16, dt="s32", at="s8", scale_d=0, scale_imm=True, swz_b=128),
    "f16_scale_d_immediate1_n8": dict(n=8, dt="f16", at="f16", scale_imm=True, swz_a=64, ta=1),
}


# The host JIT's compile time grows with N (N/2 accumulator registers live across the warp
# exchange): these take 7-20 s on cpu, so they run with -m slow there.
SLOW_ON_CPU = {"f16_regs_transb_n256_scaled", "f16_f32_sw128_trans_n64"}


@pytest.mark.parametrize("name, executor", [
    pytest.param(n, e, marks=[pytest.mark.slow] if e == "cpu" and n in SLOW_ON_CPU else [])
    for n in CASES for e in EXECUTORS])
def test_wgmma_matches_the_model(name, executor):
    rng = np.random.default_rng(abs(hash(name)) % 2**32)
    text, arrays, want = case(rng, **CASES[name])
    launch(text, arrays, 128, executor)
    np.testing.assert_array_equal(arrays[4], want)


@pytest.mark.parametrize("executor", EXECUTORS)
def test_two_warpgroups_read_their_own_descriptors(executor):
    rng = np.random.default_rng(7)
    text, arrays, want = case(rng, n=16, dt="f32", at="f16", swz_a=128, swz_b=64, tb=1, groups=2)
    launch(text, arrays, 256, executor)
    np.testing.assert_array_equal(arrays[4], want)


def test_a_partial_warpgroup_is_a_located_fault():
    rng = np.random.default_rng(1)
    text, arrays, _ = case(rng, n=8, dt="f32", at="f16")
    with pytest.raises(ptxvm.KernelFault, match=r"warpgroup.*96 of the 128"):
        launch(text, arrays, 96, "interp")


def test_wgmma_outside_sm90a_is_a_located_error():
    text = kernel(8, "f32", "f16", "f16", 4096, False, ", 1, 1, 0, 0", target="sm_90")
    with pytest.raises(ptxvm.PtxSemanticError, match=r"needs `.target sm_90a`") as e:
        ptxvm.Module(text)
    assert e.value.line is not None


@pytest.mark.parametrize("imms, why", [(", 1, 1, 2, 0", "imm-trans-a"), (", 0, 1, 0, 0", "imm-scale-a"),
                                       (", 1, 1, 0", "takes 8 operands")])
def test_bad_immediates_are_located_errors(imms, why):
    text = kernel(8, "f32", "f16", "f16", 4096, False, imms)
    with pytest.raises(ptxvm.PtxSemanticError, match=why):
        launch(text, [np.zeros(1024, np.uint32), np.uint32(0), np.zeros(2, np.uint64), np.zeros((128, 4), np.uint32),
                      np.zeros((128, 4), np.uint32), np.uint32(1)], 128, "interp")


def test_a_nonzero_base_offset_is_refused_by_name():
    rng = np.random.default_rng(3)
    text, arrays, _ = case(rng, n=8, dt="f32", at="f16", swz_a=128, swz_b=128)
    arrays[2] = arrays[2] | np.uint64(1 << 49)
    with pytest.raises(ptxvm.KernelFault, match="base offset"):
        launch(text, arrays, 128, "interp")


@pytest.mark.parametrize("executor", EXECUTORS)
def test_a_descriptor_past_the_shared_window_faults(executor):
    rng = np.random.default_rng(4)
    text, arrays, _ = case(rng, n=8, dt="f32", at="f16")
    arrays[2][1] = np.uint64(G.descriptor(1 << 17, 128, 256, 0))      # B at 128 KiB: no such shared byte
    with pytest.raises(ptxvm.KernelFault):
        launch(text, arrays, 128, executor)


def test_the_jit_refuses_a_cta_without_the_whole_warpgroup():
    """The host JIT checks the thread's own warp and that the CTA holds all 128 threads of its
    warpgroup (it cannot see the other warps execute: the interpreter checks that)."""
    rng = np.random.default_rng(1)
    text, arrays, _ = case(rng, n=8, dt="f32", at="f16")
    with pytest.raises(ptxvm.KernelFault, match="wgmma"):
        launch(text, arrays, 96, "cpu")


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="ptxas is not installed")
def test_ptxas_accepts_every_test_kernel(tmp_path):
    """The forms these tests run are PTX as ptxas 13 -arch=sm_90a takes it (and the bad
    immediates the error tests use are refused by it too)."""
    def verdict(text):
        p = tmp_path / "k.ptx"
        p.write_text(text)
        return subprocess.run(["ptxas", "-arch=sm_90a", str(p), "-o", os.devnull], capture_output=True).returncode
    for name, kw in CASES.items():
        assert verdict(case(np.random.default_rng(0), **kw)[0]) == 0, name
    for imms in (", 1, 1, 2, 0", ", 0, 1, 0, 0", ", 1, 1, 0"):
        assert verdict(kernel(8, "f32", "f16", "f16", 4096, False, imms)) != 0, imms
