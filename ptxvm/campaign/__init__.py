"""Differential-testing campaigns: many generated kernels, sharded, in parallel, on a cluster.

``spec`` (what a campaign is), ``draw`` (kernel i from (seed, i)), ``case`` (run and judge one
kernel), ``shrink`` and ``goldens`` (a failure made small and saved), ``results`` (the results
folder: records, goldens, resume, summaries), ``pool`` (worker processes on this machine that
survive a dying kernel), ``cluster`` (Dask distributed), ``runner`` (ties them together).
"""
