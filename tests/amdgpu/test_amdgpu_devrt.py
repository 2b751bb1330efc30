"""CUDA's device runtime on AMD targets: printf, malloc/free, counted and named barriers, the
grid workspace of cooperative launches, CG's reserved shared memory, the refusal of device-side
launches (issue 14, item 3).

Translation and metadata for all six targets (the note is read here, its printf strings parsed by
``models.amd_printf``, written from the documented format); execution on the AMD ISA emulator for
gfx90a, gfx942 and gfx1100 against numpy models and the interpreter (skipped without the tool;
one small launch by default, the rest ``-m slow``).  Kernels: tests/amdgpu/data/devrt.cu (PTX
from make_devrt.py), counted_barriers.ptx (hand-written).
"""

from __future__ import annotations

import io
import json
import warnings
from functools import cache
from importlib.util import find_spec
from pathlib import Path

import numpy as np
import pytest
from models import amd_printf

import ptxvm
from ptxvm.amdgpu import available
from ptxvm.driver.executors import emu

pytestmark = pytest.mark.lld
DATA = Path(__file__).resolve().parent / "data"
DEVRT, BARRIERS, CDP = DATA / "devrt.sm80.ptx", DATA / "counted_barriers.ptx", DATA / "cdp.sm80.ptx"
COOP_G = Path(__file__).resolve().parents[1] / "fixtures" / "nvcc" / "sm80-G" / "coop_groups.ptx"
TARGETS = tuple(available())
EMU_TARGETS = ("gfx90a", "gfx942", "gfx1100")
MISSING = emu.why_unavailable() or next(
    (f"{p} is not installed" for p in ("llvmlite", "ziglang") if find_spec(p) is None), None)
needs_emulator = pytest.mark.skipif(MISSING is not None, reason=f"emu executors unavailable: {MISSING}")

PRINTF = "_Z12printf_kindsjxfdPKc"
PRINTF_TEXT = "thread %d block %u: i=%d l=%lld u=%u x=%x f=%f d=%.3e c=%c s=%s %%\n"
# CUDA's vprintf sizes for those conversions (int 4, long long 8, double 8); %s: 128 bytes inline.
PRINTF_SIZES = [4, 4, 4, 8, 4, 4, 8, 8, 4, 128]


@cache
def translated(path: Path, target: str):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ptxvm.compile(path.read_text(), target=target, filename=path.name)


def hidden(meta: dict, kind: str) -> int | None:
    """The offset of hidden argument ``kind`` from the start of the implicit-argument block."""
    args = meta["args"]
    base = next((a["offset"] for a in args if a["kind"] == "hidden_block_count_x"), None)
    if base is None:
        return None
    return next((a["offset"] - base for a in args if a["kind"] == kind), None)


# ------------------------------------------------------------------ translation and metadata

@pytest.mark.parametrize("target", TARGETS)
def test_the_device_runtime_kernels_translate_for_every_target(target):
    assert set(translated(DEVRT, target).kernels) == {
        "_Z11heap_roundsPiS_i", "_Z9heap_nullPy", "_Z10heap_reusePii", PRINTF, "_Z8grid_sumPiS_"}
    assert set(translated(BARRIERS, target).kernels) == {
        "whole_block_count", "two_groups", "producer_consumer", "counted_reduce", "warp_groups"}
    # cooperative groups compiled with -G read %reserved_smem_offset_1: their own 288 LDS bytes
    coop = translated(COOP_G, target)
    assert coop.metadata["_Z10tile32_sumPKfPf"]["lds_bytes"] >= 288


def test_printf_formats_are_in_the_metadata_with_their_argument_sizes():
    obj = translated(DEVRT, "gfx942")
    table = amd_printf.entries(obj.note)
    by_text = {fmt: (ident, sizes) for ident, (sizes, fmt) in table.items()}
    assert by_text[PRINTF_TEXT][1] == PRINTF_SIZES
    assert by_text["no arguments\n"][1] == []
    assert sorted(table) == list(range(1, len(table) + 1))       # ids 1..n, each format once
    assert json.loads(obj.metadata_json())["printf"] == obj.note["amdhsa.printf"]
    # code object v5: the printf buffer is the implicit argument at offset 72
    assert hidden(obj.metadata[PRINTF], "hidden_printf_buffer") == 72


def test_a_colon_in_a_printf_format_is_written_as_octal():
    text = "a:b\n"
    data = ", ".join(str(b) for b in text.encode() + b"\0")
    src = f""".version 8.0
.target sm_80
.address_size 64
.extern .func (.param .b32 func_retval0) vprintf(.param .b64 f, .param .b64 a);
.global .align 1 .b8 $str[{len(text) + 1}] = {{{data}}};
.visible .entry k()
{{
    .reg .b64 %rd<3>;
    mov.u64 %rd1, $str;
    cvta.global.u64 %rd2, %rd1;
    {{
    .param .b64 param0;
    .param .b64 param1;
    .param .b32 retval0;
    st.param.b64 [param0], %rd2;
    st.param.b64 [param1], 0;
    call.uni (retval0), vprintf, (param0, param1);
    }}
    ret;
}}
"""
    obj = ptxvm.compile(src, target="gfx1100")
    assert obj.note["amdhsa.printf"] == ["1:0:a\\72b\\n"]
    assert amd_printf.entries(obj.note)[1] == ([], text)


def test_the_grid_workspace_is_the_multigrid_sync_argument():
    obj = translated(DEVRT, "gfx90a")
    assert hidden(obj.metadata["_Z8grid_sumPiS_"], "hidden_multigrid_sync_arg") == 88
    # kernels that read no %envreg do not get it
    assert hidden(obj.metadata["_Z9heap_nullPy"], "hidden_multigrid_sync_arg") is None


def test_the_heap_lives_in_the_code_object_and_needs_no_hidden_argument():
    obj = translated(DEVRT, "gfx90a")
    for name in ("_Z11heap_roundsPiS_i", "_Z9heap_nullPy", "_Z10heap_reusePii"):
        kinds = {a["kind"] for a in obj.metadata[name]["args"]}
        assert not kinds & {"hidden_heap_v1", "hidden_hostcall_buffer", "hidden_multigrid_sync_arg"}, name


@pytest.mark.parametrize("target", ("gfx90a", "gfx1100"))
def test_counted_barriers_are_lds_counters_and_whole_block_ones_s_barrier(target):
    obj = translated(BARRIERS, target)
    asm = obj.asm

    def body(kernel):
        start = asm.index(f"{kernel}:")
        return asm[start:asm.index(".Lfunc_end", start)]

    assert "s_barrier" in body("whole_block_count")
    for k in ("two_groups", "producer_consumer", "counted_reduce", "warp_groups"):
        assert "ds_add_rtn_u32" in body(k) and "s_sleep" in body(k), k
    assert "s_sleep" in body("whole_block_count")            # `bar.sync 0, %r2` may be a subset too


def test_device_side_launches_are_refused_naming_the_call():
    with pytest.raises(ptxvm.UnsupportedError) as info:
        translated(CDP, "gfx942")
    err = str(info.value)
    assert "`__cudaCDP2GetParameterBufferV2`" in err and "HIP has no device-side kernel launch" in err
    lines = CDP.read_text().splitlines()
    line = next(i for i, s in enumerate(lines, 1) if "call.uni" in s)
    assert f"cdp.sm80.ptx:{line}:" in err


def test_other_environment_registers_stay_refused():
    src = """.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 o)
{
    .reg .b32 %r<2>;
    .reg .b64 %rd<2>;
    mov.u32 %r1, %envreg0;
    ld.param.u64 %rd1, [o];
    st.global.u32 [%rd1], %r1;
    ret;
}
"""
    with pytest.raises(ptxvm.UnsupportedError, match=r"special register `%envreg0`"):
        ptxvm.compile(src, target="gfx90a")


# ------------------------------------------------------------------ execution on the emulator

def printf_model(blocks: int, threads: int) -> list[str]:
    """What printf_kinds(42, 1 << 40, 1.5f, -3.25e10, 0) prints (devrt.cu), line by line."""
    out = []
    for b in range(blocks):
        for t in range(threads):
            out.append(f"thread {t} block {b}: i=42 l={1 << 40} u=42 x=2a f=1.500000 d=-3.250e+10 "
                       f"c={chr(65 + t)} s=text %\n")
            if t == 1:
                out.append("no arguments\n")
    return sorted(out)


PRINTF_ARGS = (np.uint32(42), np.int64(1 << 40), np.float32(1.5), np.float64(-3.25e10), np.uint64(0))


def launch(path: Path, kernel: str, device: str, grid: int, block: int, args, **kw):
    """(args after the launch, printed lines); a documented emulator limit skips."""
    out = io.StringIO()
    mod = ptxvm.Module.from_file(path)
    try:
        mod.get_function(kernel)((grid,), (block,), args, device=device, trace_out=out, **kw)
    except emu.EmulatorLimit as e:
        if e.reason in ("mubuf_scratch", "endless"):
            pytest.skip(f"emulator limit {e.reason}: {str(e)[:160]}")
        raise
    return args, out.getvalue().splitlines(keepends=True)


@needs_emulator
def test_printf_prints_on_the_emulator_what_the_interpreter_prints():
    _, want = launch(DEVRT, PRINTF, "interp", 2, 3, PRINTF_ARGS)
    _, got = launch(DEVRT, PRINTF, "emu:gfx942", 2, 3, PRINTF_ARGS)
    assert sorted(want) == printf_model(2, 3)
    assert sorted(got) == sorted(want)


@pytest.mark.slow
@needs_emulator
@pytest.mark.parametrize("target", EMU_TARGETS)
def test_the_printf_buffer_decodes_to_the_interpreters_lines(target):
    """The raw buffer the kernel wrote, decoded by the test's own decoder (not ptxvm's)."""
    obj = translated(DEVRT, target)
    tool = emu._tool()
    co, extra = emu.runtime_arguments(tool, obj, PRINTF, 2, False)
    buffers = dict(extra)
    try:
        tool.run_kernel(co, PRINTF, (2, 1, 1), (3, 1, 1), [*PRINTF_ARGS, *(a for _, a in extra)])
    except tool.EmuError as e:
        if e.stage == "unsupported":
            pytest.skip(f"emulator limit: {str(e)[:160]}")
        raise
    lines = amd_printf.decode(bytes(buffers["hidden_printf_buffer"]), obj.note)
    _, interp = launch(DEVRT, PRINTF, "interp", 2, 3, PRINTF_ARGS)
    assert sorted(lines) == sorted(interp) == printf_model(2, 3)


@pytest.mark.slow
@needs_emulator
@pytest.mark.parametrize("target", EMU_TARGETS)
def test_malloc_and_free_on_the_emulator(target):
    dev = f"emu:{target}"
    n = 5
    (out, ok, _), _ = launch(DEVRT, "_Z11heap_roundsPiS_i", dev, 2, 64,
                             [np.zeros(128, np.int32), np.zeros(128, np.int32), np.int32(n)])
    t = np.arange(128)
    model = np.array([sum(10 * i + j + r for r in range(2) for j in range(n + i % 3)) for i in t])
    assert np.array_equal(out, model) and np.all(ok == 1)
    (ref, ref_ok, _), _ = launch(DEVRT, "_Z11heap_roundsPiS_i", "interp", 2, 64,
                                 [np.zeros(128, np.int32), np.zeros(128, np.int32), np.int32(n)])
    assert np.array_equal(ref, out) and np.array_equal(ref_ok, ok)
    (null,), _ = launch(DEVRT, "_Z9heap_nullPy", dev, 1, 32, [np.full(32, 7, np.uint64)])
    assert np.all(null == 0)                    # malloc(0) and an impossible size give NULL
    # 32 threads x 40 rounds x 64 KiB = 80 MiB through an 8 MiB heap: only with reuse
    (done, _), _ = launch(DEVRT, "_Z10heap_reusePii", dev, 1, 32, [np.zeros(32, np.int32), np.int32(40)])
    assert np.all(done == 40)
    (ref, _), _ = launch(DEVRT, "_Z10heap_reusePii", "interp", 1, 32, [np.zeros(32, np.int32), np.int32(40)])
    assert np.array_equal(ref, done)


BARRIER_MODELS = {
    "whole_block_count": (64, 64, lambda: (63 - np.arange(64)) * 3 + 1),
    "warp_groups": (64, 64, lambda: (np.arange(64) ^ 16) * 7 + 5),
    "two_groups": (128, 128, lambda: (np.arange(128) ^ 32) * 7 + 5),
    "producer_consumer": (128, 64, lambda: np.arange(64) * 11 + 2),
}


@pytest.mark.slow
@needs_emulator
@pytest.mark.parametrize("target", EMU_TARGETS)
@pytest.mark.parametrize("kernel", sorted(BARRIER_MODELS))
def test_counted_barriers_on_the_emulator(target, kernel):
    """Groups inside one wave run anywhere; groups spanning waves (wave32 gfx1100) wait on another
    wave, which the emulator never runs while one spins (skipped as 'endless')."""
    block, size, model = BARRIER_MODELS[kernel]
    (out,), _ = launch(BARRIERS, kernel, f"emu:{target}", 1, block, [np.zeros(size, np.uint32)])
    assert np.array_equal(out, model())
    (ref,), _ = launch(BARRIERS, kernel, "interp", 1, block, [np.zeros(size, np.uint32)])
    assert np.array_equal(ref, model())


@pytest.mark.slow
@needs_emulator
@pytest.mark.parametrize("target", EMU_TARGETS)
def test_counted_bar_red_on_the_emulator(target):
    inp = np.random.default_rng(14).integers(0, 4, 128).astype(np.uint32)
    (_, out), _ = launch(BARRIERS, "counted_reduce", f"emu:{target}", 1, 128, [inp.copy(), np.zeros(512, np.uint32)])
    want = np.zeros((128, 4), np.uint32)
    for g in (slice(0, 64), slice(64, 128)):
        odd, two = inp[g] & 1 != 0, inp[g] & 2 != 0
        want[g] = [odd.sum(), odd.all(), odd.any(), two.sum()]
    assert np.array_equal(out.reshape(128, 4), want)


@pytest.mark.slow
@needs_emulator
@pytest.mark.parametrize("target", EMU_TARGETS)
def test_grid_sync_in_a_cooperative_launch_on_the_emulator(target):
    a = np.arange(64, dtype=np.int32)
    (a2, out), _ = launch(DEVRT, "_Z8grid_sumPiS_", f"emu:{target}", 1, 64, [a.copy(), np.zeros(1, np.int32)],
                          cooperative=True)
    assert np.array_equal(a2, a + 1) and out[0] == (a + 1).sum()


@needs_emulator
def test_a_cooperative_grid_of_several_blocks_is_an_emulator_limit():
    with pytest.raises(emu.EmulatorLimit, match="cannot be resident at once on the emulator") as info:
        ptxvm.Module.from_file(DEVRT).get_function("_Z8grid_sumPiS_")(
            (2,), (64,), [np.zeros(128, np.int32), np.zeros(1, np.int32)], device="emu:gfx942", cooperative=True)
    assert info.value.reason == "endless"
