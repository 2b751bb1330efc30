"""Absurd sizes are refused before anything is allocated (issue 12): declarations at load,
geometry and shared memory at launch, each a ResourceError/LaunchError naming what was asked,
the limit and where. Limits are ptxvm.limits' documented defaults; CUDA's grid limits are the
CUDA programming guide's (2^31-1 blocks in x, 65535 in y and z)."""

from __future__ import annotations

import time

import numpy as np
import pytest

import ptxvm
from ptxvm import limits
from ptxvm.driver.api import default_device
from ptxvm.ir.resources import check_resources

HEAD = ".version 7.0\n.target sm_70\n.address_size 64\n"   # 3 lines: declarations below are on line 4
KERNEL = ".visible .entry k(.param .u64 p)\n{\n    ret;\n}\n"


def _hint(name: str) -> str:
    return f"({name}; raise it with PTXVM_LIMIT_{name.upper()}=... or ptxvm.limits.configure({name}=...))"


@pytest.fixture(autouse=True)
def _default_limits():
    limits.reset()
    yield
    limits.reset()


DECLARATIONS = [
    (".global .b8 g[1099511627776];\n" + KERNEL, 4, 13,
     "`.global` variable `g` needs 1,099,511,627,776 bytes (1 TiB), more than ptxvm's limit of "
     "8,589,934,592 bytes (8 GiB) " + _hint("allocation")),
    (".global .u32 a[4000000000000] = {1,2};\n" + KERNEL, 4, 14,
     "`.global` variable `a` needs 16,000,000,000,000 bytes (14.6 TiB), more than ptxvm's limit of "
     "8,589,934,592 bytes (8 GiB) " + _hint("allocation")),
    (".const .b8 c[9000000000];\n" + KERNEL, 4, 12,
     "`.const` variable `c` needs 9,000,000,000 bytes (8.38 GiB), more than ptxvm's limit of "
     "8,589,934,592 bytes (8 GiB) " + _hint("allocation")),
    (".visible .entry k(.param .u64 p)\n{\n    .local .b8 l[9223372036854775807];\n    ret;\n}\n", 6, 16,
     "`.local` variable `l` needs 9,223,372,036,854,775,807 bytes (8.39e+06 TiB), more than ptxvm's "
     "limit of 16,777,216 bytes (16 MiB) " + _hint("local_per_thread")),
    (".visible .entry k(.param .u64 p)\n{\n    .shared .b8 s[4611686018427387904];\n    ret;\n}\n", 6, 17,
     "`.shared` variable `s` needs 4,611,686,018,427,387,904 bytes (4.19e+06 TiB), more than ptxvm's "
     "limit of 1,073,741,824 bytes (1 GiB) " + _hint("shared_per_block")),
    (".visible .entry k(.param .u64 p)\n{\n    .reg .b32 %r<100000000>;\n    ret;\n}\n", 6, 15,
     "the register file of kernel `k` (`.reg` count) needs 100,000,000, more than ptxvm's limit of "
     "1,048,576 " + _hint("registers_per_function")),
    # Each declaration fits; together they do not (the frame is what a thread holds).
    (".visible .entry k(.param .u64 p)\n{\n    .local .b8 a[10000000];\n    .local .b8 b[10000000];\n"
     "    ret;\n}\n", 7, 16,
     "the `.local` frame of kernel `k` needs 20,000,000 bytes (19.1 MiB), more than ptxvm's limit of "
     "16,777,216 bytes (16 MiB) " + _hint("local_per_thread")),
    (".shared .b8 s1[600000000];\n.visible .entry k(.param .u64 p)\n{\n    .shared .b8 s2[600000000];\n"
     "    ret;\n}\n", 7, 17,
     "the static `.shared` memory of kernel `k` needs 1,200,000,000 bytes (1.12 GiB), more than ptxvm's "
     "limit of 1,073,741,824 bytes (1 GiB) " + _hint("shared_per_block")),
    (".visible .func f()\n{\n    .local .b8 big[1000000];\n    ret;\n}\n" + KERNEL, 6, 16,
     "`.local` variable `big` needs 1,000,000 bytes (977 KiB), more than ptxvm's limit of "
     "524,288 bytes (512 KiB) " + _hint("stack_per_thread")),
]


@pytest.mark.parametrize("body,line,column,message", DECLARATIONS)
def test_absurd_declaration_is_refused_at_load(body, line, column, message):
    t0 = time.perf_counter()
    with pytest.raises(ptxvm.ResourceError) as e:
        ptxvm.Module(HEAD + body, "big.ptx")
    assert time.perf_counter() - t0 < 5            # counted, never materialised
    err = e.value
    assert (err.message, err.filename, err.line, err.column) == (message, "big.ptx", line, column)
    assert str(err).startswith(f"big.ptx:{line}:{column}: error: ")


def test_limits_are_the_current_ones():
    body = HEAD + ".visible .entry k(.param .u64 p)\n{\n    .reg .b32 %r<2000>;\n    ret;\n}\n"
    ptxvm.Module(body)                                   # 2,000 registers: within the default
    limits.configure(registers_per_function=1000)
    with pytest.raises(ptxvm.ResourceError, match="needs 2,000, more than ptxvm's limit of 1,000"):
        ptxvm.Module(body)
    module = ptxvm.parse(body)
    check_resources(module, limits=limits.Limits())      # an explicit set wins


def test_module_globals_together_beyond_device_memory():
    limits.configure(device_memory=3 << 20, allocation=2 << 20)
    body = HEAD + ".global .b8 a[2000000];\n.global .b8 b[2000000];\n" + KERNEL
    with pytest.raises(ptxvm.ResourceError) as e:
        ptxvm.Module(body, "two.ptx")
    assert e.value.line == 5
    assert e.value.message.startswith("the module's `.global`/`.const` memory needs 4,000,000 bytes (3.81 MiB), "
                                      "more than ptxvm's limit of 3,145,728 bytes (3 MiB)")


def test_device_memory_limit_on_allocation():
    mem = default_device().memory
    limits.configure(device_memory=mem.live_bytes() + (1 << 20))
    with pytest.raises(ptxvm.ResourceError, match=r"allocation `device array uint8\[2097152\]` with .* of "
                                                  r"device memory in use needs .*" + r"\(device_memory;"):
        ptxvm.to_device(np.zeros(2 << 20, np.uint8))
    limits.reset()
    assert ptxvm.to_device(np.zeros(2 << 20, np.uint8)).nbytes == 2 << 20    # nothing was reserved


# ------------------------------------------------------------------------------ launches

@pytest.fixture(scope="module")
def kernel():
    return ptxvm.Module(HEAD + KERNEL)["k"]


@pytest.mark.parametrize("grid,message", [
    (1 << 40, "grid (1099511627776, 1, 1) has 1,099,511,627,776 in x; CUDA's limit is 2,147,483,647 "
              "(x, y, z at most 2,147,483,647, 65,535, 65,535)"),
    ((1, 65536), "grid (1, 65536, 1) has 65,536 in y; CUDA's limit is 65,535 "
                 "(x, y, z at most 2,147,483,647, 65,535, 65,535)"),
])
def test_grid_beyond_cuda_limits(kernel, executor, grid, message):
    with pytest.raises(ptxvm.LaunchError) as e:
        kernel(grid, 1, (0,), device=executor)
    assert e.value.message == message


def test_block_z_beyond_cuda_limit(kernel):
    with pytest.raises(ptxvm.LaunchError, match=r"block \(1, 1, 65\) has 65 in z; CUDA's limit is 64"):
        kernel(1, (1, 1, 65), (0,))


def test_grid_beyond_threads_per_grid(kernel, executor):
    t0 = time.perf_counter()
    with pytest.raises(ptxvm.ResourceError) as e:
        kernel(((1 << 31) - 1, 65535), 1024, (0,), device=executor)
    assert time.perf_counter() - t0 < 5               # refused, not started
    assert e.value.message == (
        "grid (2147483647, 65535, 1) of blocks (1024, 1, 1) (140,735,340,806,145 blocks of 1024 threads) "
        "needs 144,112,988,985,492,480, more than ptxvm's limit of 4,294,967,296 " + _hint("threads_per_grid"))


def test_dynamic_shared_beyond_limit(kernel, executor):
    with pytest.raises(ptxvm.ResourceError) as e:
        kernel(1, 1, (0,), shared_mem=100000000000, device=executor)
    assert e.value.message == (
        "the launch's dynamic shared memory (shared_mem) needs 100,000,000,000 bytes (93.1 GiB), more than "
        "ptxvm's limit of 1,073,741,824 bytes (1 GiB) " + _hint("shared_per_block"))


def test_static_plus_dynamic_shared_beyond_limit(executor):
    k = ptxvm.Module(HEAD + ".visible .entry k(.param .u64 p)\n{\n    .shared .b8 s[1000];\n    ret;\n}\n")["k"]
    limits.configure(shared_per_block=4096)
    k(1, 1, (0,), shared_mem=3000, device=executor)            # 1000 + 3000 fits
    with pytest.raises(ptxvm.ResourceError, match=r"kernel `k`'s shared memory \(1,\d+ static \+ 3,500 dynamic "
                                                  r"bytes\) needs 4,\d+ bytes"):
        k(1, 1, (0,), shared_mem=3500, device=executor)


def test_one_block_beyond_batch_memory(executor):
    # 1024 threads x 16 MiB of .local (each within local_per_thread) = 16 GiB for one CTA.
    k = ptxvm.Module(HEAD + ".visible .entry k(.param .u64 p)\n{\n    .local .b8 l[16777216];\n    ret;\n}\n")["k"]
    with pytest.raises(ptxvm.ResourceError) as e:
        k(1, 1024, (0,), device=executor)
    assert e.value.message.startswith(
        "one block of 1024 threads of kernel `k` (16,777,216 bytes of .local per thread, 0 of .shared) needs "
        "17,179,869,184 bytes (16 GiB), more than ptxvm's limit of 2,147,483,648 bytes (2 GiB) (batch_memory;")


def test_unsized_initialised_array_takes_the_initialiser_size(executor):
    # PTX ISA §5.4.4: with an initialiser the array size may be omitted; 8 elements here.
    k = ptxvm.Module(HEAD + ".global .u32 a[] = {1, 2, 3, 4, 5, 6, 7, 8};\n"
                     ".visible .entry k(.param .u64 p)\n{\n    .reg .b64 %rd<3>;\n    .reg .b32 %r<2>;\n"
                     "    ld.param.u64 %rd1, [p];\n    mov.u64 %rd2, a;\n    ld.global.u32 %r1, [%rd2+28];\n"
                     "    st.global.u32 [%rd1], %r1;\n    ret;\n}\n")["k"]
    out = np.zeros(1, np.uint32)
    k(1, 1, (out,), device=executor)
    assert out.tolist() == [8]


def test_translate_refuses_absurd_declarations_before_lifting():
    pytest.importorskip("llvmlite")
    from ptxvm.amdgpu.codegen import compile_unlinked
    body = HEAD + ".visible .entry k(.param .u64 p)\n{\n    .reg .b32 %r<100000000>;\n    ret;\n}\n"
    t0 = time.perf_counter()
    with pytest.raises(ptxvm.ResourceError, match=r"register file of kernel `k` \(`.reg` count\) needs 100,000,000"):
        compile_unlinked(body, "gfx90a", filename="big.ptx")
    assert time.perf_counter() - t0 < 5


def test_the_watchdog_budget_is_a_limit_like_the_others(monkeypatch) -> None:
    # steps_per_thread is the default max_steps of every launch (PTXVM_LIMIT_STEPS_PER_THREAD).
    import numpy as np
    from ptxvm import limits
    k = ptxvm.Module(".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k() {\n"
                     "L: bra L;\n}\n", "spin.ptx")["k"]
    monkeypatch.setenv("PTXVM_LIMIT_STEPS_PER_THREAD", "1000")
    limits.reset()
    try:
        assert limits.current().steps_per_thread == 1000
        with pytest.raises(ptxvm.WatchdogError, match="budget of 1,000 steps"):
            k((1,), (1,), ())
    finally:
        monkeypatch.delenv("PTXVM_LIMIT_STEPS_PER_THREAD")
        limits.reset()
    assert limits.current().steps_per_thread == 500_000
