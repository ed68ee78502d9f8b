"""A pipeline over an array larger than one worker's memory, on a dask cluster.

Each row of a large matrix of measurements is standardised (mean 0, standard deviation 1), a
transcendental-heavy response is computed from it, smoothed by a five-point stencil, and the
whole result reduced to one energy figure. The same NumPy functions run on NumPy arrays, on dask
arrays (dask runs them on NumPy chunks) and, compiled by gcompile, on dask arrays: then each
fused kernel is one task per chunk, the tasks run compiled code on the workers, and dask's
scheduler does the distribution.

The array is made chunk by chunk with ``dask.array.random`` on the workers, so it is never whole
in one place. Run it on a laptop (a LocalCluster of 2 worker processes):

    python examples/dask_pipeline.py                                    # 160 MB, quick
    python examples/dask_pipeline.py --rows 200000 --cols 5000 --chunk-rows 1000 --memory-limit 2GB
    # 8 GB, 4 times a worker's memory limit: 48 s compiled, 131 s by dask on NumPy chunks, the
    # same energy to the last digit (2 cores beside other work); 150000 x 2000 with
    # --chunk-rows 1250 --memory-limit 1GB (2.4 GB) took 7.6 s compiled, 36.5 s by dask

(``pip install -e ".[dask]"`` for dask and distributed.)
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import gcompile


def normalise(x):
    """Each row standardised: mean 0, standard deviation 1."""
    mean = x.mean(axis=1, keepdims=True)
    centred = x - mean
    return centred / np.sqrt((centred * centred).mean(axis=1, keepdims=True))


def response(z):
    """A transcendental-heavy formula of the standardised values."""
    return np.exp(-0.5 * z * z) * np.cos(3.0 * z) + np.log1p(np.abs(z)) * np.tanh(0.5 * z)


def smooth(f):
    """A five-point stencil (the interior: one row and column fewer on each side)."""
    centre = f[1:-1, 1:-1]
    return centre + 0.2 * (f[:-2, 1:-1] + f[2:, 1:-1] + f[1:-1, :-2] + f[1:-1, 2:] - 4.0 * centre)


def energy(s):
    """The global reduction: the mean square."""
    return (s * s).mean()


def pipeline(x):
    """All four stages: one figure from the matrix."""
    return energy(smooth(response(normalise(x))))


STAGES = (normalise, response, smooth, energy)


def example_inputs(rows: int = 400, cols: int = 300):
    """A NumPy matrix of measurements, for the eager-vs-compiled checks."""
    return np.random.default_rng(0).standard_normal((rows, cols)) * 2.0 + 1.0


def random_matrix(rows: int, cols: int, chunk_rows: int):
    """The matrix as dask makes it: chunk by chunk (rows in blocks, each row whole)."""
    import dask.array as da

    generator = da.random.default_rng(0)
    return generator.standard_normal((rows, cols), chunks=(chunk_rows, cols)) * 2.0 + 1.0


def run(rows: int, cols: int, chunk_rows: int) -> tuple[float, float]:
    """The energy of a random matrix by dask on NumPy chunks, and compiled (on the scheduler in
    use: a cluster's client, or dask's default)."""
    x = random_matrix(rows, cols, chunk_rows)
    plain = float(pipeline(x).compute())
    compiled = float(gcompile.compile(pipeline)(x).compute())
    return plain, compiled


def main(argv: list[str] | None = None) -> None:
    """Run the pipeline on a LocalCluster of 2 worker processes, timing both ways."""
    from dask.distributed import Client, LocalCluster

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=20_000)
    parser.add_argument("--cols", type=int, default=1_000)
    parser.add_argument("--chunk-rows", type=int, default=2_500)
    parser.add_argument("--memory-limit", default="2GB", help="per worker")
    args = parser.parse_args(argv)
    size = args.rows * args.cols * 8 / 1e9
    cluster = LocalCluster(
        n_workers=2, threads_per_worker=1, memory_limit=args.memory_limit, dashboard_address=None
    )
    with cluster, Client(cluster):
        print(f"{args.rows} x {args.cols} float64 ({size:.2f} GB), workers {args.memory_limit}")
        compiled = gcompile.compile(pipeline)
        x = random_matrix(args.rows, args.cols, args.chunk_rows)
        for name, fn in (("dask on NumPy chunks", pipeline), ("gcompile", compiled)):
            start = time.perf_counter()
            value = float(fn(x).compute())
            print(f"{name:>22}: energy {value:.12g} in {time.perf_counter() - start:.2f} s")
        print(gcompile.explain(compiled, x).chunk_plan)


if __name__ == "__main__":
    main()
