"""Per-call cost of small compiled functions: eager NumPy, gcompile and ``numba.njit`` on the
same source, in microseconds per call (best of several rounds), in one run.

    python bench/per_call.py [--rounds 7] [--number 20000]

Each function runs on arrays of 100 elements, where the call's overhead is most of its time.
"""

from __future__ import annotations

import argparse
import timeit

import numba
import numpy as np

import gcompile


def identity(a):
    return a


def three_steps(a, b):
    return np.sqrt(a * a + b * b) + 1.0


def periodic_laplacian(u, dx):
    lap = np.empty_like(u)
    lap[1:-1] = u[:-2] - 2.0 * u[1:-1] + u[2:]
    lap[0] = u[-1] - 2.0 * u[0] + u[1]
    lap[-1] = u[-2] - 2.0 * u[-1] + u[0]
    return lap / (dx * dx)


def forward_substitution(L, b):
    x = np.zeros_like(b)
    for i in range(b.shape[0]):
        x[i] = (b[i] - L[i, :i] @ x[:i]) / L[i, i]
    return x


def _cases():
    rng = np.random.default_rng(0)
    u, v = rng.random(100), rng.random(100)
    lower = np.tril(rng.random((100, 100))) + 100 * np.eye(100)
    return [
        ("identity", identity, (u,)),
        ("three elementwise steps", three_steps, (u, v)),
        ("periodic Laplacian", periodic_laplacian, (u, 0.1)),
        ("forward substitution (a loop)", forward_substitution, (lower, v)),
    ]


def _per_call(fn, args, rounds: int, number: int) -> float:
    fn(*args)
    return min(timeit.repeat(lambda: fn(*args), number=number, repeat=rounds)) / number * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--number", type=int, default=20000)
    options = parser.parse_args()
    print(f"{'function':32s} {'eager':>8s} {'gcompile':>9s} {'njit':>8s}   (us per call)")
    for name, fn, args in _cases():
        compiled = gcompile.compile(fn)
        times = []
        for candidate in (fn, compiled, numba.njit(fn)):
            try:
                times.append(_per_call(candidate, args, options.rounds, options.number))
            except Exception:  # numba.njit may not compile the source
                times.append(float("nan"))
        eager, ours, njit = times
        print(f"{name:32s} {eager:8.2f} {ours:9.2f} {njit:8.2f}")


if __name__ == "__main__":
    main()
