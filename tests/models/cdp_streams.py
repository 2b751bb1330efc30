"""tests/cuda/cdp_streams.cu (device streams and events, CDP2) as the interpreter and JIT tests
launch it, and numpy models of what each kernel computes, written from the CUDA source and the
CUDA runtime's documented results (not from ptxvm's output)."""

from __future__ import annotations

import numpy as np

from models.fixture_kernels import kernel

# cudaError_t values, from CUDA 13's driver_types.h
CUDA_SUCCESS, INVALID_VALUE, INVALID_RESOURCE_HANDLE = 0, 1, 400

# A stream or event handle this host launch never made: the device runtime refuses it at the call.
UNKNOWN_STREAM_PTX = """
.version 7.0
.target sm_80
.address_size 64
.extern .func (.param .b32 func_retval0) __cudaCDP2StreamDestroy
(
    .param .b64 __cudaCDP2StreamDestroy_param_0
)
;
.visible .entry destroys(.param .u64 out)
{
    .reg .b32 %r<2>;
    .reg .b64 %rd<2>;
    {
    .param .b64 param0;
    st.param.b64 [param0+0], 4660;
    .param .b32 retval0;
    call.uni (retval0), __cudaCDP2StreamDestroy, (param0);
    ld.param.b32 %r1, [retval0+0];
    }
    ld.param.u64 %rd1, [out];
    st.global.u32 [%rd1], %r1;
    ret;
}
"""
UNKNOWN_STREAM_WHY = ("cudaStreamDestroy was given stream 0x1234, which is no stream of cudaStreamCreateWithFlags "
                      "nor the NULL stream, cudaStreamTailLaunch or cudaStreamFireAndForget")


def streams_events_model(n: int, size: int) -> np.ndarray:
    """fill (out[i] = 10 + i) in s1, then add_one (out[i] += 1) in s2 after the event: out[i] = 11 + i
    for i < n; the rest of the buffer untouched (-1)."""
    out = np.full(size, -1, np.int32)
    out[:n] = 11 + np.arange(n)
    return out


def run_cdp_streams_cases(device: str, variant: str) -> list[tuple[str, object, object]]:
    """(case, got, expected) for every parent kernel of cdp_streams.cu."""
    cases = []
    n, size = 100, 128                     # (n + 63) / 64 = 2 child blocks of 64, 28 threads past n
    out, err = np.full(size, -1, np.int32), np.full(1, -1, np.int32)
    kernel("cdp_streams", "streams_events", variant)((2,), (32,), (out, np.int32(n), err), device=device)
    cases += [("streams_events out", out, streams_events_model(n, size)),
              ("streams_events cudaGetLastError", err, [CUDA_SUCCESS])]
    # every thread: the create fails (no cudaStreamNonBlocking), cudaGetLastError returns that error
    # and resets the thread's last error, so cudaPeekAtLastError then sees cudaSuccess
    err = np.full(3, -1, np.int32)
    kernel("cdp_streams", "blocking_stream", variant)((2,), (64,), (err,), device=device)
    cases.append(("blocking_stream", err, [INVALID_VALUE, INVALID_VALUE, CUDA_SUCCESS]))
    # the launch into the destroyed stream does not run; its error is the thread's last error
    out, err = np.full(32, -1, np.int32), np.full(1, -1, np.int32)
    kernel("cdp_streams", "destroyed_stream", variant)((1,), (1,), (out, np.int32(32), err), device=device)
    cases += [("destroyed_stream out", out, np.full(32, -1, np.int32)),
              ("destroyed_stream cudaGetLastError", err, [INVALID_RESOURCE_HANDLE])]
    return cases
