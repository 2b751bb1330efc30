"""AMD GPU code objects from hand-written PTX (tests/golden/amdgpu/probe.ptx): structure,
metadata, and the assembly each translation feature must produce.

No AMD GPU is needed or used: the code objects are verified structurally and by reading
LLVM's assembly listing, not run.  Each target's probe object is compiled once per session.
"""

from __future__ import annotations

import json
import os
import re
from functools import cache
from pathlib import Path

import pytest

import ptxvm
from ptxvm.amdgpu import CodeObject, available, load_target
from ptxvm.amdgpu.elf import EM_AMDGPU, ET_DYN, read_elf

# Links code objects: needs ld.lld from the ziglang wheel (the `amdgpu` extra).
pytestmark = pytest.mark.lld

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "amdgpu"
PROBE = GOLDEN / "probe.ptx"
DEFAULT_TARGETS = ("gfx90a", "gfx1030")     # wave64 CDNA and wave32 RDNA, checked in detail
PROBE_KERNELS = ["vadd", "reverse_block", "warp_sum", "ballot", "float_atomics", "int_atomics", "spin",
                 "local_array", "dynamic_shared", "indirect", "identity"]


@cache
def probe(target: str) -> CodeObject:
    return ptxvm.compile(PROBE.read_text(), target=target, filename=str(PROBE))


def body(obj: CodeObject, kernel: str) -> str:
    """The assembly of one kernel (its label to its end-of-function label)."""
    start = obj.asm.index(f"\n{kernel}:\n")
    return obj.asm[start:obj.asm.index(".Lfunc_end", start)]


def mnemonics(text: str) -> list[str]:
    return [ln.split()[0] for ln in text.splitlines()[1:] if ln.strip() and not ln.lstrip().startswith((".", ";"))
            and not ln.rstrip().endswith(":")]


# ---------------------------------------------------------------------- every target

@pytest.mark.parametrize("target", available())
def test_probe_object_is_well_formed(target):
    obj, tgt = probe(target), load_target(target)
    elf = read_elf(obj.hsaco)
    assert (elf.machine, elf.type, elf.osabi, elf.abi_version) == (EM_AMDGPU, ET_DYN, 64, 3)   # code object v5
    assert elf.flags & 0xFF == tgt.elf_mach
    assert obj.note["amdhsa.version"] == [1, 2]
    assert obj.note["amdhsa.target"].startswith(f"amdgcn-amd-amdhsa--{target}")
    assert obj.kernels == PROBE_KERNELS
    for name in PROBE_KERNELS:
        kd = elf.symbol(f"{name}.kd")
        assert kd is not None and kd.size == 64
        m = obj.metadata[name]
        assert m["wavefront_size"] == tgt.wave_size
        assert m["symbol"] == f"{name}.kd"
    args = [(a["name"], a["offset"], a["size"], a["kind"]) for a in obj.metadata["vadd"]["args"][:4]]
    assert args == [("a", 0, 8, "by_value"), ("b", 8, 8, "by_value"), ("c", 16, 8, "by_value"),
                    ("n", 24, 4, "by_value")]


@pytest.mark.parametrize("target", available())
def test_native_atomics_match_the_target_file(target):
    """Each atomic a target file calls native is one instruction there; the rest are CAS loops."""
    obj, tgt = probe(target), load_target(target)
    ops = mnemonics(body(obj, "float_atomics"))
    native = {"global.add.f32": "global_atomic_add_f32", "global.add.f64": "global_atomic_add_f64",
              "shared.add.f32": "ds_add_rtn_f32", "shared.add.f64": "ds_add_rtn_f64"}
    for entry, mnemonic in native.items():
        if entry in tgt.native_atomics:
            assert mnemonic in ops, entry
        else:
            assert mnemonic not in ops, entry
    n_cas = sum(op.startswith(("global_atomic_cmpswap", "ds_cmpst", "ds_cmpstore")) for op in ops)
    assert n_cas == len(native) - len(tgt.native_atomics & set(native))


# ---------------------------------------------------------------------- gfx90a / gfx1030

@pytest.mark.parametrize("target", DEFAULT_TARGETS)
def test_global_accesses_use_global_instructions(target):
    ops = mnemonics(body(probe(target), "vadd"))
    assert ops.count("global_load_dword") == 2 and ops.count("global_store_dword") == 1
    assert not [op for op in ops if op.startswith("flat_")]


@pytest.mark.parametrize("target", DEFAULT_TARGETS)
def test_flat_only_for_generic_addresses(target):
    """Only `dynamic_shared` addresses memory generically (`ld.u32` after `cvta.shared`)."""
    obj = probe(target)
    flat = {k for k in PROBE_KERNELS if any(op.startswith("flat_") for op in mnemonics(body(obj, k)))}
    assert flat == {"dynamic_shared"}


@pytest.mark.parametrize("target", DEFAULT_TARGETS)
def test_bar_sync_is_s_barrier_with_lds(target):
    obj = probe(target)
    ops = mnemonics(body(obj, "reverse_block"))
    assert "s_barrier" in ops and "ds_write_b32" in ops and "ds_read_b32" in ops
    assert ops.index("ds_write_b32") < ops.index("s_barrier") < ops.index("ds_read_b32")
    assert obj.metadata["reverse_block"]["lds_bytes"] == 1024


def test_shuffle_on_wave64_stays_in_the_half_wave():
    text = body(probe("gfx90a"), "warp_sum")
    assert mnemonics(text).count("ds_bpermute_b32") == 2
    assert "v_mbcnt_hi_u32_b32" in text                  # the lane in the 64-lane wave ...
    assert re.search(r"v_and_b32_e32 v\d+, 32, v\d+", text)  # ... and its PTX warp's base lane


def test_shuffle_on_wave32_is_one_warp():
    text = body(probe("gfx1030"), "warp_sum")
    assert mnemonics(text).count("ds_bpermute_b32") == 2
    assert "v_mbcnt_hi_u32_b32" not in text


@pytest.mark.parametrize("target", DEFAULT_TARGETS)
def test_ballot_reads_exec_without_permutes(target):
    text = body(probe(target), "ballot")
    assert "ds_bpermute" not in text
    assert ("exec" if target == "gfx90a" else "exec_lo") in text


@pytest.mark.parametrize("target", DEFAULT_TARGETS)
def test_float_atomics_are_not_merged_across_the_wave(target):
    """LLVM's atomic optimizer would add ``x * popcount`` once: not PTX's rounding."""
    text = body(probe(target), "float_atomics")
    assert "s_bcnt1" not in text and "readlane" not in text


def test_float_atomic_add_is_native_on_gfx90a_and_a_cas_loop_on_gfx1030():
    assert "global_atomic_add_f32" in mnemonics(body(probe("gfx90a"), "float_atomics"))
    ops = mnemonics(body(probe("gfx1030"), "float_atomics"))
    assert "global_atomic_add_f32" not in ops and "global_atomic_cmpswap" in ops


def test_atomics_carry_ptx_scope_and_ordering():
    ir = probe("gfx90a").llvm_ir
    cta = re.search(r'atomicrmw add [^\n]*syncscope\("workgroup"\) monotonic[^\n]*', ir)
    assert cta and "!amdgpu.no.fine.grained.memory" in cta.group(0)
    assert re.search(r'atomicrmw max [^\n]*syncscope\("workgroup"\) monotonic', ir)      # shared memory
    fadd = re.search(r'atomicrmw fadd float[^\n]*syncscope\("agent"\) monotonic[^\n]*', ir)
    assert fadd and "!amdgpu.ignore.denormal.mode" in fadd.group(0)
    assert "seq_cst" not in "\n".join(ln for ln in ir.splitlines() if "atomicrmw" in ln)


def test_ordered_memory_and_fences():
    ir = probe("gfx90a").llvm_ir
    assert re.search(r"load volatile i32, i32 addrspace\(1\)\*", ir)
    assert re.search(r'load atomic i32, i32 addrspace\(1\)\* [^\n]* syncscope\("agent"\) acquire, align 4', ir)
    assert re.search(r'store atomic i32 [^\n]* syncscope\("agent"\) release, align 4', ir)
    assert 'fence syncscope("agent") seq_cst' in ir and 'fence syncscope("workgroup") seq_cst' in ir
    # The spin-wait's load stays inside the loop, on global memory, bypassing the cache.
    text = body(probe("gfx90a"), "spin")
    loop = re.search(r"(\.LBB\d+_\d+):\n((?:\t[^\n]*\n)*?)\ts_cbranch_\w+ \1\n", text)
    assert loop and re.search(r"global_load_dword [^\n]* glc", loop.group(2))
    assert "buffer_wbinvl1_vol" in text                  # acquire at agent scope invalidates L1


@pytest.mark.parametrize("target", DEFAULT_TARGETS)
def test_local_arrays_live_in_scratch(target):
    obj = probe(target)
    ops = mnemonics(body(obj, "local_array"))
    assert any(op.startswith(("buffer_store", "scratch_store")) for op in ops)
    assert any(op.startswith(("buffer_load", "scratch_load")) for op in ops)
    assert obj.metadata["local_array"]["scratch_bytes"] >= 64


def test_dynamic_shared_memory():
    obj = probe("gfx90a")
    assert obj.metadata["dynamic_shared"]["lds_bytes"] == 0
    kinds = [a["kind"] for a in obj.metadata["dynamic_shared"]["args"]]
    assert "hidden_dynamic_lds_size" in kinds                 # %dynamic_smem_size
    assert "@\"__ptx_dynamic_shared\" = external addrspace(3) global [0 x i8], align 16" in obj.llvm_ir


def test_identity_from_implicit_arguments_and_barrier_reduction():
    obj = probe("gfx90a")
    kinds = [a["kind"] for a in obj.metadata["identity"]["args"]]
    assert {"hidden_block_count_x", "hidden_group_size_x", "hidden_group_size_y"} <= set(kinds)
    ops = mnemonics(body(obj, "identity"))
    assert ops.count("s_barrier") == 3                       # bar.red.popc: clear, count, read
    assert obj.metadata["identity"]["lds_bytes"] == 4


@pytest.mark.parametrize("target", DEFAULT_TARGETS)
def test_relocated_table_indirect_call_and_one_trap(target):
    obj = probe(target)
    elf = read_elf(obj.hsaco)
    rela = next(s for s in elf.sections if s.name == ".rela.dyn")
    assert rela.size >= 2 * 24                               # table's two addresses are relocated
    for sym in ("table", "counter", "coeffs"):               # module variables, visible to the host
        assert elf.symbol(sym) is not None
    assert mnemonics(body(obj, "indirect")).count("s_trap") == 1


def test_kernel_attributes_from_directives():
    src = PROBE.read_text().replace(".visible .entry vadd(.param .u64 a, .param .u64 b, .param .u64 c, "
                                    ".param .u32 n)\n{", ".visible .entry vadd(.param .u64 a, .param .u64 b, "
                                    ".param .u64 c, .param .u32 n)\n.maxntid 128, 1, 1\n{")
    src = src.replace(".visible .entry warp_sum(.param .u64 p)\n{", ".visible .entry warp_sum(.param .u64 p)\n"
                                                                  ".reqntid 32, 2, 1\n{")
    assert ".maxntid 128" in src and ".reqntid 32, 2" in src
    obj = ptxvm.compile(src, target="gfx1030", filename="probe_directives.ptx")
    assert obj.metadata["vadd"]["max_workgroup_size"] == 128
    assert obj.metadata["warp_sum"]["max_workgroup_size"] == 64
    assert '"amdgpu-flat-work-group-size"="64,64"' in obj.llvm_ir
    assert obj.metadata["reverse_block"]["max_workgroup_size"] == 1024


# ---------------------------------------------------------------------- golden metadata

@pytest.mark.parametrize("target", DEFAULT_TARGETS)
def test_metadata_golden(target):
    """Register counts, LDS, scratch and argument layouts, as LLVM 22 produces them.
    PTXVM_UPDATE_GOLDEN=1 rewrites the files (review the diff: a change in register counts
    is a change in generated code)."""
    text = probe(target).metadata_json() + "\n"
    path = GOLDEN / f"probe.{target}.json"
    if os.environ.get("PTXVM_UPDATE_GOLDEN") == "1":
        path.write_text(text)
    assert json.loads(text) == json.loads(path.read_text())


def test_save_and_repr(tmp_path):
    obj = probe("gfx90a")
    out = obj.save(tmp_path / "probe.hsaco")
    assert out.read_bytes() == obj.hsaco
    assert "gfx90a" in repr(obj) and "vadd" in repr(obj)
    stats = obj.stats()
    assert set(stats) == set(PROBE_KERNELS)
    assert stats["vadd"]["instructions"] == len(mnemonics(body(obj, "vadd")))
    assert 1 <= stats["vadd"]["waves_per_simd"] <= stats["vadd"]["max_waves_per_simd"] == 8


# ---------------------------------------------------------------------- NaN canonicalisation

NAN_CHAIN = """
.version 7.0
.target sm_80
.address_size 64
.visible .entry {name}(.param .u64 p)
{{
  .reg .f32 %f<8>;
  .reg .b32 %r<2>;
  .reg .b64 %rd<2>;
  ld.param.u64 %rd1, [p];
  ld.global.f32 %f1, [%rd1];
  ld.global.f32 %f2, [%rd1+4];
  add.f32 %f3, %f1, %f2;
  fma.rn.f32 %f4, %f3, %f2, %f1;
  mul.f32 %f5, %f4, %f3;
  {extra}
  st.global.f32 [%rd1+8], %f5;
  ret;
}}
"""


@pytest.mark.parametrize("target", DEFAULT_TARGETS)
def test_nan_canonicalisation_only_where_the_bits_are_seen(target):
    """An f32 result read only by canonicalising arithmetic (add, fma, mul) never shows its NaN
    bits: only the stored result is made 0x7fffffff.  A register whose bits are read (mov.b32)
    keeps its own canonicalisation."""
    def selects(extra: str) -> int:
        src = NAN_CHAIN.format(name="chain", extra=extra)
        return mnemonics(body(ptxvm.compile(src, target=target), "chain")).count("v_cndmask_b32_e32")
    assert selects("") == 1
    assert selects("mov.b32 %r1, %f3;\n  st.global.u32 [%rd1+12], %r1;") == 2


def test_code_object_pickles_with_its_listing():
    """The assembly listing is made on first use; a pickled code object carries it."""
    import pickle
    obj = ptxvm.compile(PROBE.read_text(), target="gfx1030", filename=str(PROBE))
    copy = pickle.loads(pickle.dumps(obj))
    assert copy.asm == obj.asm and copy.hsaco == obj.hsaco and copy.metadata == obj.metadata


@pytest.mark.parametrize("target", ["gfx90a", "gfx1030"])
def test_cp_async_is_a_global_load_and_an_lds_store(target):
    """cp.async done at once (see ptxvm/lift/ops/async_copy.py): the 16-byte copy of
    __pipeline_memcpy_async is one dwordx4 global load and one b128 LDS store, no flat access."""
    path = Path(__file__).resolve().parents[1] / "fixtures" / "nvcc" / "sm80" / "async_copy.ptx"
    obj = ptxvm.compile(path.read_text(), target=target)
    kernel = next(k for k in obj.kernels if "pipeline_primitives_reverse" in k)
    ops = mnemonics(body(obj, kernel))
    assert ops.count("global_load_dwordx4") == 1 and ops.count("ds_write_b128") == 1
    assert not [m for m in ops if m.startswith("flat_")]


@pytest.mark.parametrize("target", ["gfx90a", "gfx1030"])
def test_cp_async_zero_fill_needs_no_scratch(target):
    """The partial copy gathers its bytes in a register, not a stack buffer (scratch on AMD)."""
    from models.ptx_samples import PARTIAL
    obj = ptxvm.compile(PARTIAL, target=target)
    assert obj.metadata["k"]["scratch_bytes"] == 0
    assert "ds_write_b128" in mnemonics(body(obj, "k"))
