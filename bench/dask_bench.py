"""gcompile over dask (issue 22): each stage of examples/dask_pipeline.py run by dask on NumPy
chunks (the uncompiled function on dask arrays) and compiled, in one run on the same cluster.

    python bench/dask_bench.py                       # 20000 x 2000 float64 (320 MB)
    python bench/dask_bench.py --rows 4000 --rounds 1  # a smoke run

A LocalCluster of 2 worker processes (1 thread each). Each stage's input is made and persisted on
the workers first; a stage is timed as ``persist`` of its result until the workers hold it (no
transfer to the client), best of ``--rounds`` after one warm-up call each (the workers compile
the kernels then, or load them from the disk cache). Task-graph sizes are
``len(result.__dask_graph__())`` of the stage alone (its input's one layer included). The
report replaces the ``<!-- dask:start -->``..``<!-- dask:end -->`` section of bench/results.md.
"""

from __future__ import annotations

import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(_HERE))  # the repository root, for ``bench.*``
sys.path.insert(0, os.path.join(os.path.dirname(_HERE), "examples"))

import argparse  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import dask_pipeline as example  # noqa: E402
import numpy as np  # noqa: E402

import gcompile  # noqa: E402
from bench.run import write_section  # noqa: E402


def timed(client, fn, arg, rounds: int) -> tuple[float, int, object]:
    """Best seconds of persisting ``fn(arg)`` on the workers, its graph size, and its value.

    The same graph has the same keys: each round's result is released before the next, so
    that every round computes (the warm-up compiles on the workers)."""
    from dask.core import flatten
    from dask.distributed import wait

    size = len(fn(arg).__dask_graph__())
    best = float("inf")
    for round_ in range(rounds + 1):
        start = time.perf_counter()
        held = client.persist(fn(arg))
        wait(held)
        if round_:
            best = min(best, time.perf_counter() - start)
        if round_ < rounds:
            keys = list(flatten(held.__dask_keys__()))
            del held  # the scheduler forgets the keys: the next round computes them again
            while client.run_on_scheduler(_holds, keys=keys):
                time.sleep(0.01)
    return best, size, held


def _holds(dask_scheduler=None, keys=()) -> bool:
    """Whether the scheduler still knows any of ``keys``."""
    return any(key in dask_scheduler.tasks for key in keys)


def stage_inputs(client, x):
    """Each stage's input, computed once and held by the workers under keys of their own (a
    stage's result must not be one the workers already hold)."""
    import dask.array as da
    from dask.distributed import wait

    inputs = []
    value = x
    for k, stage in enumerate((None, *example.STAGES[:-1])):
        value = value if stage is None else stage(inputs[-1])
        inputs.append(client.persist(da.map_blocks(np.copy, value, name=f"bench-input-{k}")))
        wait(inputs[-1])
    return inputs


def agree(client, plain, compiled) -> str:
    """Largest difference of the two results over the largest magnitude."""
    a, b = (np.asarray(client.compute(v, sync=True)) for v in (plain, compiled))
    return f"{np.max(np.abs(a - b)) / max(np.max(np.abs(a)), 1e-300):.1e}"


def measure(client, rows: int, cols: int, chunk_rows: int, rounds: int) -> list[tuple]:
    """Per stage (and the whole pipeline): the times (dask's, compiled, compiled with serial
    kernels), both graph sizes, the agreement."""
    x = example.random_matrix(rows, cols, chunk_rows)
    inputs = stage_inputs(client, x)
    cases = [(s.__name__, s, inp) for s, inp in zip(example.STAGES, inputs)]
    cases.append(("pipeline (all four)", example.pipeline, inputs[0]))
    rows_out = []
    for name, fn, inp in cases:
        plain_s, plain_n, plain_v = timed(client, fn, inp, rounds)
        comp_s, comp_n, comp_v = timed(client, gcompile.compile(fn), inp, rounds)
        serial = gcompile.compile(fn, options={"parallel": False})
        serial_s = timed(client, serial, inp, rounds)[0]
        diff = agree(client, plain_v, comp_v)
        rows_out.append((name, plain_s, comp_s, serial_s, plain_n, comp_n, diff))
    return rows_out


def report(results: list[tuple], rows: int, cols: int, chunk_rows: int, rounds: int) -> str:
    """The markdown section."""
    lines = [
        "## gcompile over dask (issue 22): `bench/dask_bench.py`",
        "",
        f"Run {time.strftime('%Y-%m-%d %H:%M')} on {os.cpu_count()} cores: a LocalCluster of 2 "
        f"worker processes (1 thread each), a {rows} x {cols} float64 matrix "
        f"({rows * cols * 8 / 1e6:.0f} MB) in chunks of {chunk_rows} whole rows; best of "
        f"{rounds} after a warm-up; each stage persisted on the workers from a persisted input.",
        "",
        "`serial` compiles with `options={'parallel': False}`: one thread per task, as NumPy's "
        "chunks run (the default lets a large chunk's kernel use Numba's threads).",
        "",
        "| stage | dask on NumPy chunks | gcompile | speed-up | gcompile, serial | speed-up "
        "| tasks (dask) | tasks (gcompile) | max rel. difference |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name, plain_s, comp_s, serial_s, plain_n, comp_n, diff in results:
        lines.append(
            f"| {name} | {plain_s * 1e3:.0f} ms | {comp_s * 1e3:.0f} ms | "
            f"{plain_s / comp_s:.2f}x | {serial_s * 1e3:.0f} ms | {plain_s / serial_s:.2f}x | "
            f"{plain_n} | {comp_n} | {diff} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    """Run the stages on a fresh LocalCluster and write the report."""
    from dask.distributed import Client, LocalCluster

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=20_000)
    parser.add_argument("--cols", type=int, default=2_000)
    parser.add_argument("--chunk-rows", type=int, default=2_500)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args(argv)
    cluster = LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=None)
    with cluster, Client(cluster) as client:
        results = measure(client, args.rows, args.cols, args.chunk_rows, args.rounds)
    text = report(results, args.rows, args.cols, args.chunk_rows, args.rounds)
    print(text)
    if not args.no_write:
        write_section(Path(_HERE) / "results.md", "dask", text)


if __name__ == "__main__":
    main()
