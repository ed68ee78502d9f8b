"""Compiled functions over dask arrays on a ``dask.distributed`` cluster of 2 worker processes
(one cluster for the module): right answers, the threaded scheduler too, each worker compiling
each kernel once, and a computation surviving a worker killed in the middle of it."""

import time

import numpy as np
import pytest

import gcompile
from gcompile.dask import chunk_function

from .support import assert_same_value

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")


def stages(x, y):
    rows = x / np.sqrt((x * x).sum(axis=1, keepdims=True))
    heavy = np.exp(-rows * y) * np.sin(3.0 * rows) + np.log1p(rows * rows)
    smooth = heavy[1:-1, 1:-1] + 0.25 * (heavy[2:, 1:-1] + heavy[:-2, 1:-1] - heavy[1:-1, 2:])
    return smooth, smooth.sum(), heavy.max(axis=0)


compiled_stages = gcompile.compile(stages)


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    )
    with cluster, distributed.Client(cluster) as connected:
        yield connected


def inputs():
    values = np.random.default_rng(3).standard_normal((49, 31)) + 3.0  # one-row, -column edges
    return da.from_array(values, chunks=(16, 15)), np.linspace(0.5, 1.5, 31)


def check(results):
    x, y = inputs()
    for want, got in zip(stages(x.compute(), y), results, strict=True):
        assert_same_value(np.asarray(want), np.asarray(got), ulps=8, scale=np.float64)


def test_worker_processes_compute_the_eager_answer_compiling_each_kernel_once(client):
    check(client.compute(compiled_stages(*inputs()), sync=True))
    check(client.compute(compiled_stages(*inputs()), sync=True))  # again: nothing new to compile

    def traces():
        return sorted(f.stats["traces"] for f in chunk_function._COMPILED.values())

    per_worker = client.run(traces)
    assert len(per_worker) == 2 and all(t and max(t) == 1 for t in per_worker.values())


def test_threaded_scheduler():
    check(da.compute(*compiled_stages(*inputs()), scheduler="threads"))


def slowly(block):
    time.sleep(0.05)
    return block


def test_a_worker_killed_mid_computation_changes_nothing(client):
    x, y = inputs()
    results = compiled_stages(x.map_blocks(slowly, dtype=x.dtype), y)
    futures = client.compute(results)
    while not any(client.processing().values()):
        time.sleep(0.01)
    busy = next(w for w, tasks in client.processing().items() if tasks)
    client.restart_workers([busy])  # its process killed and started again; its tasks rerun
    check(client.gather(futures))
