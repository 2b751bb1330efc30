"""Device streams and events of dynamic parallelism (CDP2, issue 14) on the host JIT:
tests/cuda/cdp_streams.cu compiled by nvcc 13 with -rdc=true, every variant, against numpy models
of the source; a handle the launch never made is refused at the call."""

from __future__ import annotations

import numpy as np
import pytest

import ptxvm
from models import cdp_streams
from models.fixture_kernels import VARIANTS

DEVICE = "cpu"
# -G code takes seconds per kernel to compile for the host: in the slow suite.
JIT_VARIANTS = [v if v != "sm80-G" else pytest.param(v, marks=pytest.mark.slow) for v in VARIANTS]


@pytest.mark.parametrize("variant", JIT_VARIANTS)
def test_streams_events_and_their_error_codes_match_the_models(variant):
    for case, got, want in cdp_streams.run_cdp_streams_cases(DEVICE, variant):
        np.testing.assert_array_equal(got, want, err_msg=case)


def test_a_stream_handle_never_made_stops_the_calling_thread():
    with pytest.raises(ptxvm.TrapError) as e:
        ptxvm.Module(cdp_streams.UNKNOWN_STREAM_PTX)["destroys"]((1,), (1,), (np.zeros(1, np.int32),), device=DEVICE)
    assert e.value.message.split("\n")[0] == cdp_streams.UNKNOWN_STREAM_WHY
