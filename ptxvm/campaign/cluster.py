"""Campaigns on a Dask distributed cluster (``pip install 'ptxvm[cluster]'`` on every machine).

Why Dask and not Ray: both would do; Dask's ``distributed`` is a pure-Python wheel (Ray's
are hundreds of MB, for a fixed set of platforms, with a native raylet per node), starts
with two commands (``dask scheduler``, ``dask worker ADDRESS``), and its scheduler already
does what a campaign needs: the tasks of a worker that is lost are rescheduled on the
others, and a task that keeps killing its workers ends as ``KilledWorker`` instead of
looping. This module is the only one that imports Dask.

Kernels travel in batches (one task = ``batch`` kernel indices, the spec and
``case.run_batch``); results come back as each task finishes (``as_completed``) and are
handed to ``on_result`` at once, so the results folder fills while the campaign runs.
A task lost with its worker runs again elsewhere, so a kernel's result can arrive twice:
the results folder keeps the first (deduplicated by kernel id). A batch that ends as
``KilledWorker`` is split into one task per kernel; a kernel that kills its worker again
is reported as ``died``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence

from .case import CaseResult, died, run_batch
from .spec import CampaignError, Spec

DEFAULT_BATCH = 8


def _client(address: str):
    try:
        from distributed import Client, LocalCluster
    except ImportError as e:
        raise CampaignError("--cluster needs Dask distributed: pip install 'ptxvm[cluster]'") from e
    if address == "local" or address.startswith("local:"):
        n = int(address.split(":", 1)[1]) if ":" in address else None
        cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True, dashboard_address=None)
        return Client(cluster), cluster
    try:
        return Client(address, timeout="30s"), None
    except (OSError, TimeoutError) as e:
        raise CampaignError(f"--cluster {address}: cannot reach the Dask scheduler: {e}") from None


def run_cluster(address: str, spec: Spec, indices: Sequence[int], on_result: Callable[[CaseResult], None],
                *, batch: int = DEFAULT_BATCH) -> dict:
    """Run ``indices`` of ``spec`` on the cluster; returns a few facts about the run."""
    from distributed import as_completed
    from distributed.scheduler import KilledWorker
    client, cluster = _client(address)
    tag = hashlib.sha256(repr(sorted(spec.identity().items())).encode()).hexdigest()[:12]
    facts = {"workers": len(client.scheduler_info().get("workers", {})), "tasks": 0, "split": 0}
    try:
        chunks = [tuple(indices[k:k + batch]) for k in range(0, len(indices), batch)]
        futures = {}
        for c in chunks:
            f = client.submit(run_batch, spec, c, key=f"ptxvm-fuzz-{tag}-{c[0]}-{len(c)}", pure=False)
            futures[f] = c
        facts["tasks"] = len(futures)
        queue = as_completed(list(futures), with_results=True, raise_errors=False)
        for fut, value in queue:
            c = futures.pop(fut, None)
            if c is None:
                continue                   # already handled (a future reported twice)
            if isinstance(value, KilledWorker):
                if len(c) == 1:
                    on_result(died(spec, c[0], f"it killed {value.args[1] if len(value.args) > 1 else 'its'} "
                                                f"workers repeatedly (Dask KilledWorker)"))
                    continue
                facts["split"] += 1
                for i in c:
                    f = client.submit(run_batch, spec, (i,), key=f"ptxvm-fuzz-{tag}-{i}-alone", pure=False)
                    futures[f] = (i,)
                    queue.add(f)
                continue
            if isinstance(value, BaseException):
                raise CampaignError(f"a cluster task failed: {type(value).__name__}: {value}") from value
            for r in value:
                on_result(r)
            fut.release()
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
    return facts
