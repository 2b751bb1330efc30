"""A campaign's failure as a golden file (``ptxvm.testing.golden``'s format, version 1).

The golden's outputs are the reference executor's (the first of ``--executors``), so
``ptxvm difftest --golden F.npz --executors OTHER`` replays the launch on the executor
that disagreed and reports the same mismatch (or raises the same error). Where the
reference itself failed, the outputs are the first executor's that ran, or the inputs
unchanged when none did (provenance ``outputs`` says which). Each executor's final
arrays also travel in the file as ``exec.<name>.out<i>`` entries (the golden reader
ignores entries it does not know), and the campaign's facts as ``campaign_*`` keys of
the provenance.
"""

from __future__ import annotations

import io
import json
import tempfile
import zipfile
from pathlib import Path

import numpy as np

from .. import __version__
from ..testing.golden import Golden, make_launch, provenance, save_golden
from ..testing.ptxgen import GeneratedKernel


def golden_bytes(gk: GeneratedKernel, outcome, spec, kernel_id: str) -> bytes:
    """The .npz bytes of ``gk``'s launch with the reference's outputs and every executor's."""
    launch = make_launch(gk.ptx, gk.kernel, gk.grid, gk.block, list(gk.args))
    ref = spec.executors[0]
    source = ref if ref in outcome.runs else next(iter(outcome.runs), None)
    final = outcome.runs[source] if source else gk.args
    outputs = tuple(np.asarray(final[i]) if a.kind == "array" else None for i, a in enumerate(launch.args))
    prov = provenance("ptxvm", __version__, source or "none", f"ptxvm fuzz, reference {ref}")
    prov.update({
        "outputs": f"executor {source}" if source else "none ran: the arguments before the launch",
        "campaign_kernel": kernel_id, "campaign_seed": str(spec.seed), "campaign_verdict": outcome.verdict,
        "campaign_executor": outcome.executor or "", "campaign_detail": outcome.detail,
        "campaign_executors": ",".join(spec.executors), "campaign_features": spec.features.text(),
        "campaign_approx_ops": json.dumps(list(gk.approx_ops)), "campaign_data_seed": str(gk.seed),
        "campaign_errors": json.dumps(outcome.errors),
    })
    with tempfile.TemporaryDirectory(prefix="ptxvm-golden-") as tmp:
        path = Path(tmp) / "g.npz"
        save_golden(Golden(launch, outputs, prov), path)
        with zipfile.ZipFile(path, "a", compression=zipfile.ZIP_DEFLATED) as z:
            for ex, args in outcome.runs.items():
                for i, a in enumerate(launch.args):
                    if a.kind == "array":
                        buf = io.BytesIO()
                        np.lib.format.write_array(buf, np.asarray(args[i]), allow_pickle=False)
                        z.writestr(f"exec.{ex}.out{i}.npy", buf.getvalue())
        return path.read_bytes()


def executor_outputs(path) -> dict[str, dict[int, np.ndarray]]:
    """The ``exec.<name>.out<i>`` entries of a campaign golden: executor -> argument -> array."""
    out: dict[str, dict[int, np.ndarray]] = {}
    with np.load(path, allow_pickle=False) as z:
        for key in z.files:
            if key.startswith("exec.") and ".out" in key:
                name, _, i = key[len("exec."):].rpartition(".out")
                out.setdefault(name, {})[int(i)] = z[key]
    return out
