"""Lazy mode against eager NumPy on a notebook-style loop (issue 23's target: at least 3x from
the second iteration).

    python bench/lazy_bench.py [--size 1000000] [--iterations 10]

Each iteration runs the same ten elementwise lines, one statement each, as a user would type
them in a notebook cell inside a loop, on lazy values (``gcompile.lazy``), then needs the
result (``np.asarray``). The first iteration records, compiles and runs; the others find the
compiled program by the recorded structure. Reported: the first iteration, the median of the
others, eager NumPy's median on the same lines, and their ratio; the results agree.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import gcompile


def ten_lines(x, scale):
    """Ten elementwise lines of a feature transform, each a statement of its own."""
    y = x * scale
    y = y + 1.0
    y = np.sqrt(np.abs(y))
    y = np.log1p(y)
    y = y * y - 0.5
    y = np.tanh(y)
    y = y * 3.0 + x
    y = np.exp(-np.abs(y))
    y = np.maximum(y, 0.01)
    return y / (1.0 + y)


def timed(function, iterations: int) -> list:
    times = []
    for _ in range(iterations):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return times


def main(argv: list[str] | None = None) -> None:
    """Print the lazy-mode and eager timings of ``ten_lines`` in one run."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=1_000_000)
    parser.add_argument("--iterations", type=int, default=10)
    options = parser.parse_args(argv)
    data = np.random.default_rng(0).standard_normal(options.size)

    def lazy():
        return np.asarray(ten_lines(gcompile.lazy(data), 0.75))

    lazy_times = timed(lazy, options.iterations)
    eager_times = timed(lambda: ten_lines(data, 0.75), options.iterations)
    assert np.allclose(lazy(), ten_lines(data, 0.75), rtol=1e-13, atol=0)
    later, eager = statistics.median(lazy_times[1:]), statistics.median(eager_times)
    print(f"{options.size} float64, ten elementwise lines, {options.iterations} iterations")
    print(f"  lazy: first iteration {lazy_times[0] * 1e3:.1f} ms, then {later * 1e3:.2f} ms")
    print(
        f"  eager NumPy: {eager * 1e3:.2f} ms; lazy from the second iteration: {eager / later:.1f}x"
    )


if __name__ == "__main__":
    main()
