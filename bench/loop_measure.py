"""Fresh inputs, agreement and timing for bench/loop_bench.py and its gcompile subprocess.

Many loop programs update their inputs in place and are not idempotent (a factorisation of a
factorisation), so every call gets inputs of its own: a pool of copies, one per timed call,
is made before the timed region and each call takes the next one. Only taking it from the
pool (a closure call and ``next``, well under a microsecond) is timed with the program.
"""

from __future__ import annotations

import math
import statistics
import time
from dataclasses import dataclass
from typing import Callable

import numpy as np

TOLERANCE = 1e-6  # largest relative difference from NumPy eager for a float64 result
SEED = 0


@dataclass(frozen=True)
class Rounds:
    """How many timed calls per variant: enough for ``budget`` seconds of NumPy eager (the
    minimum total time), within [floor, ceiling]."""

    budget: float
    floor: int
    ceiling: int

    def for_time(self, numpy_seconds: float) -> int:
        """The rounds for a program whose NumPy eager call takes ``numpy_seconds``."""
        wanted = int(self.budget / max(numpy_seconds, 1e-6))
        return max(self.floor, min(self.ceiling, wanted))


FULL, QUICK = Rounds(4.0, 5, 41), Rounds(1.0, 3, 9)


def fresh(args: tuple) -> tuple:
    """Copies of the array arguments (the programs may update them in place)."""
    return tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args)


def observed(returned, args: tuple) -> list[np.ndarray]:
    """What a call produced: its returned arrays, then every array argument after the call."""
    values = returned if isinstance(returned, tuple) else (returned,)
    outputs = [np.asarray(v) for v in values if v is not None]
    return outputs + [a for a in args if isinstance(a, np.ndarray)]


def relative_error(actual: list[np.ndarray], expected: list[np.ndarray]) -> float:
    """Largest absolute difference over the largest magnitude, worst array (inf on a shape
    or count mismatch, or a NaN)."""
    if len(actual) != len(expected):
        return math.inf
    worst = 0.0
    for a, e in zip(actual, expected):
        if a.shape != e.shape:
            return math.inf
        if e.size == 0:
            continue
        scale = float(np.max(np.abs(e))) or 1.0
        wide = np.result_type(a.dtype, np.float64)  # (complex stays complex)
        difference = float(np.max(np.abs(a.astype(wide) - e))) / scale
        worst = max(worst, difference if not math.isnan(difference) else math.inf)
    return worst


def reference(function: Callable, args: tuple) -> tuple[list[np.ndarray], float]:
    """NumPy eager's results (returned arrays and updated arguments) and its seconds."""
    copies = fresh(args)
    start = time.perf_counter()
    returned = function(*copies)
    seconds = time.perf_counter() - start
    return observed(returned, copies), seconds


def first_run(call: Callable, args: tuple, expected: list[np.ndarray]) -> tuple[float, float]:
    """Seconds of ``call`` on fresh copies of ``args``, and its error against ``expected``."""
    copies = fresh(args)
    start = time.perf_counter()
    returned = call(*copies)
    seconds = time.perf_counter() - start
    return seconds, relative_error(observed(returned, copies), expected)


def _pooled(call: Callable, args: tuple, count: int) -> Callable:
    """A call of ``call`` on the next of ``count`` copies of ``args``, all made now."""
    pool = iter([fresh(args) for _ in range(count)])
    return lambda: call(*next(pool))


def timed_rounds(calls: dict[str, Callable], args: tuple, rounds: int) -> dict[str, float]:
    """Median seconds per call of each variant over ``rounds`` interleaved rounds (the order
    rotating each round), every call on inputs of its own made before any timing. The
    callers have run each variant once already (the warm-up)."""
    pools = {name: _pooled(call, args, rounds) for name, call in calls.items()}
    names = list(pools)
    times: dict[str, list[float]] = {name: [] for name in names}
    for r in range(rounds):
        for name in names[r % len(names) :] + names[: r % len(names)]:
            start = time.perf_counter()
            pools[name]()
            times[name].append(time.perf_counter() - start)
    return {name: statistics.median(t) for name, t in times.items()}


def first_line(error: BaseException | str) -> str:
    """The first non-empty line of an error, with its type when it is an exception."""
    text = str(error)
    line = next((s.strip() for s in text.splitlines() if s.strip()), "")
    prefix = f"{type(error).__name__}: " if isinstance(error, BaseException) else ""
    return (prefix + line)[:140]
