"""Measure where a parallel kernel starts to beat a serial one (the default of
``GCOMPILE_PARALLEL_THRESHOLD``).

    python bench/threshold.py

For a cheap pointwise kernel (``a * 2.0 + 1.0``) and a cheap reduction
(``np.sum(a * a)``), float64, it times the serial and the ``prange`` kernel at
sizes from 2**10 to 2**22 (medians of interleaved runs) and prints the smallest
size from which the parallel kernel is faster at every larger size.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import gcompile  # noqa: E402


def pointwise(a):
    return a * 2.0 + 1.0


def reduction(a):
    return np.sum(a * a)


def median_seconds(fn, x, rounds: int = 31) -> float:
    inner = max(1, int(2e5 // x.size))
    samples = []
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(inner):
            fn(x)
        samples.append((time.perf_counter() - start) / inner)
    return statistics.median(samples)


def crossover(fn) -> tuple[int | None, list]:
    serial = gcompile.compile(fn, fullgraph=True, options={"parallel": False})
    parallel = gcompile.compile(fn, fullgraph=True, options={"parallel_threshold": 1})
    rows = []
    for power in range(10, 23):
        x = np.random.rand(2**power)
        serial(x), parallel(x)
        s, p = median_seconds(serial, x), median_seconds(parallel, x)
        rows.append((x.size, s, p))
    first = None
    for size, s, p in reversed(rows):
        if p >= s:
            break
        first = size
    return first, rows


def main() -> None:
    for fn in (pointwise, reduction):
        first, rows = crossover(fn)
        print(f"{fn.__name__}: parallel faster from {first} elements")
        for size, s, p in rows:
            print(
                f"  {size:>8}  serial {s * 1e6:9.1f} us  parallel {p * 1e6:9.1f} us  {s / p:5.2f}x"
            )


if __name__ == "__main__":
    main()
