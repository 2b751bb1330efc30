"""Differential testing: compare(), write attribution, goldens, assert_executors_agree, the CLI."""

from __future__ import annotations

import json
import math
import struct
import xml.etree.ElementTree as ET
import zipfile
from dataclasses import replace

import numpy as np
import pytest
from models.fixtures import FIXTURES

from ptxvm import LaunchError
from ptxvm.cli import main
from ptxvm.driver.api import available_devices
from ptxvm.testing import (
    CompareError,
    GoldenError,
    Writer,
    assert_executors_agree,
    compare,
    gpu,
    load_golden,
    make_launch,
    record,
    run_golden,
    save_golden,
)
from ptxvm.testing.golden import write_owners

ELEMENTWISE = FIXTURES / "nvcc" / "sm80" / "elementwise.ptx"
N = 1000
VADD_ARGS = ["--kernel", "vector_add", "--grid", "4", "--block", "256", "--arg", "f32[1000]=random(seed=1)",
             "--arg", "f32[1000]=arange", "--arg", "f32[1000]=zeros", "--arg", "1000"]

HEAD = ".version 8.0\n.target sm_80\n.address_size 64\n"

# Every thread stores its global linear id to out[id % m]: several writers per element,
# and the value left in memory names the last one.
SCATTER = HEAD + """.visible .entry scatter(.param .u64 out, .param .u32 m)
{
.reg .b32 %r<8>;
.reg .b64 %rd<4>;
ld.param.u64 %rd1, [out];
ld.param.u32 %r1, [m];
mov.u32 %r2, %ctaid.x;
mov.u32 %r3, %ntid.x;
mov.u32 %r4, %tid.x;
mad.lo.s32 %r5, %r2, %r3, %r4;
rem.u32 %r6, %r5, %r1;
mul.wide.u32 %rd2, %r6, 4;
add.s64 %rd3, %rd1, %rd2;
st.global.u32 [%rd3], %r5;
ret;
}
"""

# 2-D geometry: out[linear id] = ctaid.x<<24 | ctaid.y<<16 | tid.x<<8 | tid.y.
COORDS = HEAD + """.visible .entry coords(.param .u64 out)
{
.reg .b32 %r<20>;
.reg .b64 %rd<4>;
ld.param.u64 %rd1, [out];
mov.u32 %r1, %ctaid.x;
mov.u32 %r2, %ctaid.y;
mov.u32 %r3, %nctaid.x;
mov.u32 %r4, %tid.x;
mov.u32 %r5, %tid.y;
mov.u32 %r6, %ntid.x;
mov.u32 %r7, %ntid.y;
mad.lo.s32 %r8, %r2, %r3, %r1;
mul.lo.s32 %r9, %r6, %r7;
mad.lo.s32 %r10, %r5, %r6, %r4;
mad.lo.s32 %r11, %r8, %r9, %r10;
shl.b32 %r12, %r1, 24;
shl.b32 %r13, %r2, 16;
shl.b32 %r14, %r4, 8;
or.b32 %r15, %r12, %r13;
or.b32 %r16, %r15, %r14;
or.b32 %r17, %r16, %r5;
mul.wide.u32 %rd2, %r11, 4;
add.s64 %rd3, %rd1, %rd2;
st.global.u32 [%rd3], %r17;
ret;
}
"""

# Atomics: every thread exchanges its id into out[0]; a CAS expecting 0 into out[1]
# succeeds for one thread only.
ATOMICS = HEAD + """.visible .entry atomics(.param .u64 out)
{
.reg .b32 %r<8>;
.reg .b64 %rd<4>;
ld.param.u64 %rd1, [out];
mov.u32 %r2, %ctaid.x;
mov.u32 %r3, %ntid.x;
mov.u32 %r4, %tid.x;
mad.lo.s32 %r5, %r2, %r3, %r4;
add.u32 %r6, %r5, 1;
atom.global.exch.b32 %r1, [%rd1], %r5;
atom.global.cas.b32 %r7, [%rd1+4], 0, %r6;
ret;
}
"""

# Each thread stores the wall clock: two runs never agree.
CLOCK = HEAD + """.visible .entry clock(.param .u64 out)
{
.reg .b32 %r<2>;
.reg .b64 %rd<6>;
ld.param.u64 %rd1, [out];
mov.u32 %r1, %tid.x;
mov.u64 %rd2, %globaltimer;
mul.wide.u32 %rd3, %r1, 8;
add.s64 %rd4, %rd1, %rd3;
st.global.u64 [%rd4], %rd2;
ret;
}
"""


def _vadd_launch():
    a = np.random.default_rng(1).random(N).astype(np.float32)
    return make_launch(ELEMENTWISE, "vector_add", 4, 256, (a, np.arange(N, dtype=np.float32),
                                                          np.zeros(N, np.float32), N))


@pytest.fixture(scope="module")
def vadd_golden(tmp_path_factory):
    path = tmp_path_factory.mktemp("golden") / "vadd.npz"
    save_golden(record(_vadd_launch(), "interp"), path)
    return path


def _steps(x, k: int, dtype):
    """x moved k representable values up (np.nextafter): an independent ULP ruler."""
    x = dtype(x)
    for _ in range(k):
        x = np.nextafter(x, dtype(np.inf))
    return x


# ------------------------------------------------------------------ compare()

def test_compare_equal_arrays():
    a = np.array([1.5, -0.0, np.inf, np.nan], np.float32)
    c = compare(a, a.copy())
    assert c.equal and c.ok and c.mismatches == 0 and c.max_ulp == 0 and c.first_index is None
    assert c.status() == "equal" and c.describe_first() == "-"


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_compare_ulp_distances_follow_nextafter(dtype):
    x = np.array([1.0, 3.0, -2.5, 1e-3], dtype)
    y = x.copy()
    y[1] = _steps(y[1], 1, dtype)
    y[3] = _steps(y[3], 7, dtype)
    c = compare(x, y)
    assert not c.equal and c.mismatches == 2 and c.failures == 2 and c.max_ulp == 7
    assert c.first_index == 1 and c.first_ulp == 1 and c.first_expected == 3.0
    assert compare(x, y, ulp=7).ok and not compare(x, y, ulp=6).ok
    assert compare(x, y, ulp=6).first_index == 3      # the first element outside the tolerance


def test_compare_ulp_across_zero_and_extremes():
    tiny = np.float32(np.finfo(np.float32).smallest_subnormal)
    c = compare(np.array([-tiny]), np.array([tiny]))
    assert c.max_ulp == 2      # -tiny -> -0 == +0 -> +tiny: two steps of nextafter
    big = np.finfo(np.float64).max
    bits = struct.unpack("<q", struct.pack("<d", big))[0]
    assert compare(np.array([big]), np.array([-big])).max_ulp == 2 * bits


def test_compare_one_ulp_values_and_bits():
    x = np.array([2.0], np.float32)
    y = np.array([_steps(2.0, 1, np.float32)])
    c = compare(x, y)
    assert (c.first_expected_bits, c.first_actual_bits) == ("0x40000000", "0x40000001")
    assert c.first_actual == float(y[0]) and "1 ULP" in c.describe_first()


def test_compare_nan_payloads_differ_bitwise():
    x = np.array([0x7FC00000, 0x3F800000], np.uint32).view(np.float32)
    y = np.array([0x7FC00001, 0x3F800000], np.uint32).view(np.float32)
    c = compare(x, y)
    assert not c.equal and c.mismatches == 1 and not c.ok and c.first_index == 0
    assert c.first_actual_bits == "0x7fc00001" and c.max_ulp == 0    # both NaN: same value, other payload
    nan_vs_num = compare(np.array([np.nan], np.float64), np.array([1.0]), ulp=1000)
    assert nan_vs_num.max_ulp == math.inf and not nan_vs_num.ok


def test_compare_negative_zero_is_not_positive_zero():
    c = compare(np.array([0.0, 1.0]), np.array([-0.0, 1.0]))
    assert not c.equal and c.first_index == 0 and c.first_actual_bits == "0x8000000000000000"
    assert c.max_ulp == 0 and not c.ok        # bitwise by default
    assert compare(np.array([0.0]), np.array([-0.0]), ulp=1).ok


def test_compare_int_buffers():
    x = np.arange(12, dtype=np.int32).reshape(3, 4)
    y = x.copy()
    y[2, 1] = -7
    c = compare(x, y, ulp=100)      # a tolerance means nothing for integers
    assert c.max_ulp is None and c.mismatches == 1 and not c.ok
    assert c.first_index == 9 and c.first_index_nd == (2, 1) and (c.first_expected, c.first_actual) == (9, -7)
    assert c.first_actual_bits == "0xfffffff9"


def test_compare_rejects_different_dtype_or_shape():
    with pytest.raises(CompareError, match="dtype and shape must match"):
        compare(np.zeros(4, np.float32), np.zeros(4, np.float64))
    with pytest.raises(CompareError):
        compare(np.zeros(4), np.zeros(5))


def test_writer_from_tid():
    w = Writer.from_tid(2 * 8 + 5, (2, 2, 1), (4, 2, 1))
    assert (w.block, w.thread) == ((0, 1, 0), (1, 1, 0))
    assert Writer.from_tid(-1, (1,), (1,)).describe().startswith("no thread")


# ------------------------------------------------------------------ write attribution

def test_write_owners_name_the_last_writer():
    out = np.zeros(5, np.uint32)
    launch = make_launch(SCATTER, "scatter", 3, 64, (out, 5))
    owners = write_owners(launch)[0].reshape(5, 4)
    final = np.zeros(5, np.uint32)
    from ptxvm import Module
    Module(SCATTER)["scatter"](3, 64, (final, 5))
    # The value each element holds is the id of the thread that stored it last.
    assert (owners == final.astype(np.int64)[:, None]).all()
    assert final.max() > 180      # the last CTAs did write


def test_writer_attribution_2d_geometry():
    grid, block = (3, 2), (4, 3)
    launch = make_launch(COORDS, "coords", grid, block, (np.zeros(72, np.uint32),))
    golden = record(launch)
    out = golden.outputs[0].copy()
    out[41] ^= 1
    comps = run_golden(replace(golden, outputs=(out,)))
    c = comps[0]
    v = int(golden.outputs[0][41])
    assert c.first_index == 41 and c.writer is not None
    assert c.writer.block == (v >> 24, (v >> 16) & 0xFF, 0) and c.writer.thread == ((v >> 8) & 0xFF, v & 0xFF, 0)


def test_write_owners_atomics_and_failed_cas():
    launch = make_launch(ATOMICS, "atomics", 2, 96, (np.zeros(2, np.uint32),))
    owners = write_owners(launch)[0]
    final = record(launch).outputs[0]
    assert (owners[:4] == int(final[0])).all()     # exch: the last exchanger owns the word
    assert final[1] == 1 and (owners[4:] == 0).all()   # cas 0 -> 1 succeeded for thread 0 only


def test_vector_add_golden_mismatch_names_index_values_thread(vadd_golden, tmp_path, capsys):
    g = load_golden(vadd_golden)
    out = g.outputs[2].copy()
    out[517] = np.nextafter(out[517], np.float32(0))
    bad = tmp_path / "bad.npz"
    save_golden(replace(g, outputs=(g.outputs[0], g.outputs[1], out, None)), bad)
    assert main(["difftest", "--golden", str(bad), "-e", "interp"]) == 1
    text = capsys.readouterr().out
    want = g.outputs[2][517]
    assert "MISMATCH  1/1000" in text
    assert f"[517] expected {float(out[517])!r}" in text and f"got {float(want)!r}" in text
    assert "1 ULP; written by block (2, 0, 0), thread (5, 0, 0)" in text    # 517 = 2 * 256 + 5
    assert main(["difftest", "--golden", str(bad), "-e", "interp", "--ulp", "1"]) == 0
    capsys.readouterr()
    assert main(["difftest", "--golden", str(bad), "-e", "interp", "--ulp", "arg0=1"]) == 1      # another buffer's tolerance


# ------------------------------------------------------------------ goldens

def test_golden_round_trip(vadd_golden):
    g = load_golden(vadd_golden)
    L = g.launch
    assert L.kernel == "_Z10vector_addPKfS0_Pfi" and L.grid == (4, 1, 1) and L.block == (256, 1, 1)
    assert L.ptx == ELEMENTWISE.read_text() and L.shared_mem == 0
    assert [a.kind for a in L.args] == ["array", "array", "array", "scalar"]
    assert L.args[3].value.dtype == np.uint32 and L.args[3].value[()] == N
    a = np.random.default_rng(1).random(N).astype(np.float32)
    assert np.array_equal(L.args[0].value, a) and not L.args[2].value.any()
    assert np.array_equal(g.outputs[2], a + np.arange(N, dtype=np.float32)) and g.outputs[3] is None
    assert {"tool", "tool_version", "executor", "device", "date", "host"} <= set(g.provenance)
    assert g.provenance["tool"] == "ptxvm" and g.provenance["executor"] == "interp"
    assert all(c.equal for c in run_golden(g, "interp").values())


def test_make_launch_checks_and_copies():
    a = np.ones(4, np.float32)
    launch = make_launch(ELEMENTWISE, "vector_add", 1, 4, (a, a, a, 4))
    launch.args[0].value[0] = 7
    assert a[0] == 1
    with pytest.raises(LaunchError, match="does not fit .u32"):
        make_launch(ELEMENTWISE, "vector_add", 1, 4, (a, a, a, 2 ** 40))
    with pytest.raises(LaunchError, match="takes 4 arguments"):
        make_launch(ELEMENTWISE, "vector_add", 1, 4, (a,))


def _doctor(src, dst, edit) -> None:
    with np.load(src) as z:
        entries = {k: z[k] for k in z.files}
    edit(entries)
    with open(dst, "wb") as f:
        np.savez(f, **entries)


def _meta(entries, **changes):
    meta = json.loads(str(entries["meta"][()]))
    meta.update(changes)
    entries["meta"] = np.array(json.dumps(meta))


@pytest.mark.parametrize("edit, message", [
    (lambda e: e.pop("meta"), "missing entry `meta`"),
    (lambda e: e.pop("out2"), "missing entry `out2`"),
    (lambda e: e.__setitem__("out2", np.zeros(3, np.float32)), "`out2` is float32[3] but `meta` says float32[1000]"),
    (lambda e: e.__setitem__("meta", np.array("{not json")), "`meta` is not JSON"),
    (lambda e: _meta(e, format="other"), "does not say format 'ptxvm-golden'"),
    (lambda e: _meta(e, version=99), "golden format version 99"),
    (lambda e: _meta(e, grid=[0]), "`grid` must be a list of 1 to 3 positive integers"),
    (lambda e: _meta(e, args=[{"kind": "pointer"}]), "args[0] must have a kind"),
])
def test_malformed_golden_errors(vadd_golden, tmp_path, edit, message):
    bad = tmp_path / "bad.npz"
    _doctor(vadd_golden, bad, edit)
    with pytest.raises(GoldenError) as info:
        load_golden(bad)
    assert message in str(info.value) and str(bad) in str(info.value)


def test_not_a_golden_file(tmp_path, capsys):
    text = tmp_path / "t.npz"
    text.write_text("hello")
    npy = tmp_path / "a.npz"
    with open(npy, "wb") as f:
        np.save(f, np.zeros(3))
    for path, message in ((text, "not a zip archive"), (npy, "a single .npy array"),
                          (tmp_path / "none.npz", "no such golden file")):
        with pytest.raises(GoldenError, match=message):
            load_golden(path)
    assert main(["difftest", "--golden", str(text)]) == 1
    err = capsys.readouterr().err
    assert "not a golden file" in err and "Traceback" not in err
    broken = tmp_path / "broken.npz"
    with zipfile.ZipFile(broken, "w") as z:
        z.writestr("meta.npy", b"garbage")
    with pytest.raises(GoldenError, match="malformed golden file"):
        load_golden(broken)


# ------------------------------------------------------------------ assert_executors_agree

def test_assert_executors_agree_interp_with_itself():
    a = np.random.default_rng(3).random(100).astype(np.float32)
    out = np.zeros(100, np.float32)
    case = assert_executors_agree(ELEMENTWISE, "vector_add", 1, 128, (a, a, out, 100),
                                  executors=("interp", "interp"))
    assert case.ok and len(case.results) == 3 and not out.any()     # runs work on copies
    from ptxvm import Module
    y = np.ones(100, np.float32)
    assert assert_executors_agree(Module.from_file(ELEMENTWISE), "saxpy", 1, 128, (100, 2.0, a, y),
                                  executors=("interp", "interp")).ok


def test_assert_executors_agree_reports_differences():
    with pytest.raises(AssertionError) as info:
        assert_executors_agree(CLOCK, "clock", 1, 8, (np.zeros(8, np.uint64),), executors=("interp", "interp"))
    text = str(info.value)
    assert "executors disagree" in text and "MISMATCH" in text and "written by block (0, 0, 0), thread (0, 0, 0)" in text


def test_assert_executors_agree_missing_executor():
    args = (np.zeros(4, np.uint32), 4)
    with pytest.raises(LaunchError, match="executor `nosuch` is not available"):
        assert_executors_agree(SCATTER, "scatter", 1, 4, args, executors=("interp", "nosuch"))
    with pytest.raises(pytest.skip.Exception):
        assert_executors_agree(SCATTER, "scatter", 1, 4, args, executors=("interp", "nosuch"), missing="skip")
    if "cpu" not in available_devices():      # the default pair is interp and the host JIT
        with pytest.raises(LaunchError, match="executor `cpu` is not available"):
            assert_executors_agree(SCATTER, "scatter", 1, 4, args)


# ------------------------------------------------------------------ CLI

def test_cli_record_then_difftest(tmp_path, capsys):
    g = tmp_path / "v.npz"
    assert main(["record", str(ELEMENTWISE), *VADD_ARGS, "-o", str(g)]) == 0
    assert "recorded _Z10vector_addPKfS0_Pfi" in capsys.readouterr().out
    a = np.random.default_rng(1).random(N).astype(np.float32)
    assert np.array_equal(load_golden(g).outputs[2], a + np.arange(N, dtype=np.float32))
    assert main(["difftest", "--golden", str(g), "-e", "interp"]) == 0
    text = capsys.readouterr().out
    assert "arg2 (param_2)  interp    equal" in text and "difftest: all agree" in text
    # The PTX file against the golden's inputs and outputs.
    assert main(["difftest", str(ELEMENTWISE), "--golden", str(g), "-e", "interp", "-q"]) == 0


def test_cli_difftest_executors_json_and_junit(tmp_path, capsys):
    junit = tmp_path / "out.xml"
    rc = main(["difftest", str(ELEMENTWISE), *VADD_ARGS, "--executors", "interp,interp", "--json",
               "--junit", str(junit)])
    assert rc == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["ok"] and doc["buffers"] == 3 and doc["differ"] == 0
    buf = doc["cases"][0]["buffers"][2]
    assert buf["buffer"] == "arg2 (param_2)" and buf["executor"] == "interp" and buf["equal"] and buf["max_ulp"] == 0
    root = ET.parse(junit).getroot()
    assert root.tag == "testsuites" and root.get("tests") == "3" and root.get("failures") == "0"
    assert len(root.findall("./testsuite/testcase")) == 3


def test_cli_golden_folder_json_junit_progress(vadd_golden, tmp_path, capsys):
    folder = tmp_path / "goldens"
    folder.mkdir()
    g = load_golden(vadd_golden)
    save_golden(g, folder / "a_good.npz")
    out = g.outputs[2].copy()
    out[3] = -out[3]
    save_golden(replace(g, outputs=(g.outputs[0], g.outputs[1], out, None)), folder / "b_bad.npz")
    (folder / "c_junk.npz").write_text("junk")
    junit = tmp_path / "j.xml"
    assert main(["difftest", "--golden", str(folder), "-e", "interp", "--json", "--junit", str(junit)]) == 1
    captured = capsys.readouterr()
    assert "difftest [1/3] a_good.npz" in captured.err and "difftest [3/3] c_junk.npz" in captured.err
    doc = json.loads(captured.out)
    assert [c["name"] for c in doc["cases"]] == ["a_good.npz", "b_bad.npz", "c_junk.npz"]
    assert [c["ok"] for c in doc["cases"]] == [True, False, False]
    first = doc["cases"][1]["buffers"][2]["first_mismatch"]
    assert first["index"] == 3 and first["writer"] == {"tid": 3, "block": [0, 0, 0], "thread": [3, 0, 0]}
    assert first["expected"] == float(out[3]) and first["actual"] == float(g.outputs[2][3])
    assert "not a golden file" in doc["cases"][2]["errors"][0]["message"]
    root = ET.parse(junit).getroot()
    cases = root.findall("./testsuite/testcase")
    assert len(cases) == 7 and root.get("failures") == "1" and root.get("errors") == "1"
    failed = [c for c in cases if c.find("failure") is not None]
    assert [(c.get("classname"), c.get("name")) for c in failed] == [("b_bad.npz", "arg2 (param_2) on interp")]
    assert "written by block (0, 0, 0), thread (3, 0, 0)" in failed[0].find("failure").text


@pytest.mark.parametrize("argv, message", [
    (["difftest"], "give a FILE.ptx with its launch, or --golden"),
    (["difftest", str(ELEMENTWISE), *VADD_ARGS, "--executors", "interp"], "comparing needs two executors"),
    (["difftest", str(ELEMENTWISE), *VADD_ARGS, "--executors", "interp,nosuch"], "executor `nosuch` is not available"),
    (["difftest", str(ELEMENTWISE), *VADD_ARGS, "-e", "interp,interp", "--ulp", "x=-1"], "--ulp 'x=-1'"),
    (["difftest", str(ELEMENTWISE), "-k", "vector_add", "-a", "q32[4]=zeros", "-e", "interp,interp"],
     "unknown element type `q32`"),
    (["difftest", str(ELEMENTWISE), "-e", "interp,interp"], "has 8 kernels; choose one with --kernel"),
    (["difftest", "--golden", "g.npz", "--arg", "1"], "the launch (grid, block, arguments) comes from the golden"),
    (["record", str(ELEMENTWISE), *VADD_ARGS], "required: -o/--output"),
])
def test_cli_usage_errors_exit_2(argv, message, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_cli_help_has_examples(capsys):
    for cmd in ("difftest", "record"):
        assert main([cmd, "--help"]) == 0
        text = capsys.readouterr().out
        assert "examples:" in text and f"ptxvm {cmd} " in text and "f32[1024]=random(seed=1)" in text


# ------------------------------------------------------------------ real GPUs

@pytest.mark.skipif(gpu.backend() is not None, reason="an NVIDIA GPU is present")
def test_cuda_executor_without_gpu_is_a_clear_error(tmp_path, capsys):
    assert main(["record", str(ELEMENTWISE), *VADD_ARGS, "--executor", "cuda", "-o", str(tmp_path / "g.npz")]) == 2
    assert "no NVIDIA GPU/CuPy available" in capsys.readouterr().err
    with pytest.raises(LaunchError, match="no NVIDIA GPU/CuPy available"):
        record(_vadd_launch(), "cuda")


@pytest.mark.skipif(gpu.backend() is None, reason="needs an NVIDIA GPU with CuPy or cuda-python")
def test_record_on_gpu_matches_interpreter(tmp_path):
    g = record(_vadd_launch(), "cuda")
    assert g.provenance["tool"] in ("cupy", "cuda-python") and g.provenance["executor"] == "cuda"
    save_golden(g, tmp_path / "gpu.npz")
    assert all(c.ok for c in run_golden(load_golden(tmp_path / "gpu.npz"), "interp").values())
