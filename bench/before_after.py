"""Before and after a change, in one run: gcompile's speed-up over NumPy on the bench's kernels
for two source trees, measured alternately in new processes.

    python bench/before_after.py /path/to/old/tree /path/to/new/tree --rounds 3
    python bench/before_after.py OLD NEW --quick            # smaller arrays, one round
    python bench/before_after.py OLD NEW --cases stencil    # the cases whose name has "stencil"

Each round runs every case once per tree, the two trees alternating (old, new, then new, old),
each in a new process whose kernel cache is a new empty directory, so its first call is a cold
compile. Inside a process, NumPy eager and gcompile run interleaved (``bench.run.interleaved``)
and the ratio of their medians is that process's speed-up: ratios taken in one process, the only
figures comparable on a shared machine. The report gives per case and tree the median speed-up
over the rounds, the median first call, and new/old.

The cases are the issue's list (arith chain, ``sum(a*b+c)``, layernorm, softmax, the 5-point
stencil, GELU, Black–Scholes, haversine) and two stencils writing into an array: ``b[1:-1, 1:-1]
= stencil(a)`` and the same in place in ``u``, each also against a hand-written ``numba``
``prange`` loop (``x hand`` = hand time / gcompile time, same process).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent


def jacobi(a, b):
    b[1:-1, 1:-1] = 0.25 * (a[:-2, 1:-1] + a[2:, 1:-1] + a[1:-1, :-2] + a[1:-1, 2:])


def stencil_in_place(u):
    u[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])


def _hand_loops():
    """``numba.njit(parallel=True)`` loops written by hand for the two writing stencils."""
    import numba

    @numba.njit(parallel=True)
    def hand_jacobi(a, b):
        n, m = a.shape
        for i in numba.prange(1, n - 1):
            for j in range(1, m - 1):
                b[i, j] = 0.25 * (a[i - 1, j] + a[i + 1, j] + a[i, j - 1] + a[i, j + 1])

    @numba.njit(parallel=True)
    def hand_in_place(u):
        n, m = u.shape
        out = np.empty((n - 2, m - 2))
        for i in numba.prange(1, n - 1):
            for j in range(1, m - 1):
                out[i - 1, j - 1] = 0.25 * (u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1])
        u[1:-1, 1:-1] = out

    return hand_jacobi, hand_in_place


def cases(scale: float) -> list:
    """``(name, fn, make_args, hand loop or None)`` per case; ``scale`` shrinks the arrays."""
    from bench.run import chain, layernorm, softmax, stencil, sum_axpy
    from bench.vector_math import gelu_tanh
    from examples import black_scholes, haversine

    n = int(1e7 * scale)
    side = int(2048 * scale**0.5)
    grid = int(4000 * scale**0.5)
    hand_jacobi, hand_in_place = _hand_loops()
    f32 = np.float32
    return [
        ("arith chain f64", chain, lambda r: (r.random(n),), None),
        ("sum(a*b+c) f64", sum_axpy, lambda r: tuple(r.random(n) for _ in range(3)), None),
        (
            f"layernorm f32 {side}x{side}",
            layernorm,
            lambda r: (r.random((side, side), f32), r.random(side, f32), r.random(side, f32)),
            None,
        ),
        (f"softmax f32 {side}x{side}", softmax, lambda r: (r.random((side, side), f32),), None),
        (f"5-pt stencil f64 {grid}x{grid}", stencil, lambda r: (r.random((grid, grid)),), None),
        ("gelu (tanh) f32", gelu_tanh, lambda r: (r.uniform(-6, 6, n).astype(f32),), None),
        (
            "Black–Scholes f64",
            black_scholes.black_scholes,
            lambda r: black_scholes.example_inputs(n // 2),
            None,
        ),
        ("haversine f64", haversine.haversine, lambda r: haversine.example_inputs(n), None),
        (
            f"b[1:-1,1:-1] = stencil(a) f64 {grid}x{grid}",
            jacobi,
            lambda r: (r.random((grid, grid)), np.zeros((grid, grid))),
            hand_jacobi,
        ),
        (
            f"u[1:-1,1:-1] = stencil(u) f64 {grid}x{grid}",
            stencil_in_place,
            lambda r: (r.random((grid, grid)),),
            hand_in_place,
        ),
    ]


def worker(tree: str, scale: float, rounds: int, only: list) -> dict:
    """This process's figures for the tree whose ``gcompile`` is imported (the cases whose
    name contains one of ``only``, or all)."""
    import gcompile
    from bench.run import interleaved

    results = {}
    for name, fn, make, hand in cases(scale):
        if only and not any(part in name for part in only):
            continue
        args = make(np.random.default_rng(0))
        compiled = gcompile.compile(fn, fullgraph=True)
        start = time.perf_counter()
        compiled(*args)
        first = time.perf_counter() - start
        variants = {"numpy": fn, "gcompile": compiled}
        if hand is not None:
            hand(*args)
            variants["hand"] = hand
        times = interleaved(variants, args, rounds)
        results[name] = {
            "x numpy": times["numpy"] / times["gcompile"],
            "x hand": times["hand"] / times["gcompile"] if hand is not None else None,
            "first call s": first,
            "gcompile ms": times["gcompile"] * 1e3,
            "traces": compiled.stats["traces"],
        }
    return {"tree": tree, "gcompile": gcompile.__file__, "results": results}


def run_worker(tree: str, scale: float, rounds: int, only: list) -> dict:
    """One new process measuring ``tree`` with an empty kernel cache."""
    with tempfile.TemporaryDirectory(prefix="gc-before-after-") as cache:
        env = {**os.environ, "GCOMPILE_CACHE_DIR": cache, "PYTHONPATH": f"{tree}:{HERE.parent}"}
        command = [sys.executable, str(Path(__file__)), "--worker", tree]
        command += ["--scale", str(scale), "--inner-rounds", str(rounds), "--cases", *only]
        out = subprocess.run(command, env=env, check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def report(old: str, new: str, runs: dict) -> str:
    lines = [
        f"before: {old}  after: {new}  ({len(runs[old])} rounds, medians; new processes, cold "
        "kernel cache)",
        "",
        "| case | x NumPy before | x NumPy after | after/before | x hand after "
        "| first call before s | first call after s |",
        "|---|---|---|---|---|---|---|",
    ]
    for name in runs[old][0]["results"]:
        before, after = _median(runs[old], name, "x numpy"), _median(runs[new], name, "x numpy")
        hand = _median(runs[new], name, "x hand")
        hand_text = f"{hand:.2f}" if hand is not None else "-"
        firsts = (_median(runs[tree], name, "first call s") for tree in (old, new))
        lines.append(
            f"| {name} | {before:.2f}x | {after:.2f}x | {after / before:.2f} | {hand_text} | "
            + " | ".join(f"{first:.2f}" for first in firsts)
            + " |"
        )
    return "\n".join(lines)


def _median(runs: list, name: str, key: str):
    values = [run["results"][name][key] for run in runs]
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trees", nargs="*", help="the old tree and the new one")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--cases", nargs="*", default=[], help="parts of case names to run")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--scale", type=float, default=1.0, help=argparse.SUPPRESS)
    parser.add_argument("--inner-rounds", type=int, default=15, help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.worker:
        print(
            json.dumps(worker(options.worker, options.scale, options.inner_rounds, options.cases))
        )
        return
    old, new = (str(Path(t).resolve()) for t in options.trees)
    scale, rounds = (0.1, 1) if options.quick else (1.0, options.rounds)
    runs: dict = {old: [], new: []}
    for r in range(rounds):
        for tree in (old, new) if r % 2 == 0 else (new, old):
            runs[tree].append(run_worker(tree, scale, 7 if options.quick else 15, options.cases))
            print(f"round {r + 1}: {Path(tree).name} done", file=sys.stderr)
    print(report(old, new, runs))


if __name__ == "__main__":
    main()
