"""Benchmark harness: gcompile against NumPy eager, Numba on the same source, and memory bandwidth.

    python bench/run.py            # full run, writes its section of bench/results.md
    python bench/run.py --quick    # smaller repeat counts, about a minute

Every case runs its variants interleaved in one process (round after round, the
order rotating), and reports medians and ratios taken in the same run: absolute
times drift on this shared machine, ratios within a run do not. The bandwidth
column is the time the case's compulsory bytes (inputs read once, outputs
written once) take in a streaming copy (prange, all threads) of that many bytes,
timed in the same rounds as the variants.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numba
import numpy as np

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT.parent))

import gcompile  # noqa: E402

# -- the cases: plain NumPy functions, as users write them ---------------------------------------


def chain(a):
    return a * a * 0.5 + a * 3.0 + 1.0


def long_chain(a, b):
    return ((a * b + 2.0) * a - b * 0.5) / (a + 1.5) + b * b * 0.25 - a * 3.0


def sum_axpy(a, b, c):
    return np.sum(a * b + c)


def layernorm(x, gamma, beta):
    mean = x.mean(axis=-1, keepdims=True)
    centered = x - mean
    var = (centered * centered).mean(axis=-1, keepdims=True)
    return centered / np.sqrt(var + 1e-5) * gamma + beta


def softmax(x):
    e = np.exp(x - np.max(x, axis=-1, keepdims=True))
    return e / np.sum(e, axis=-1, keepdims=True)


def stencil(u):
    return 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:]) - u[1:-1, 1:-1]


def dense_relu(x, w, b):
    return np.maximum(x @ w + b, 0)


def ten_ops(a, b):
    """The compile-time case: ten elementwise ops."""
    c = a * b + 1.0
    d = np.sqrt(np.abs(c)) - a
    e = np.maximum(d, 0.0) * b
    return np.where(e > 0.5, e, -c) + 2.0


@dataclass
class Case:
    name: str
    fn: Callable
    make: Callable[[np.random.Generator], tuple]
    goal: str  # the ratio the issue asks for


def _f64(rng, *shape):
    return rng.random(shape)


def _f32(rng, *shape):
    return rng.random(shape, dtype=np.float32)


def cases(scale: float) -> list[Case]:
    n = int(1e7 * scale)
    side = int(2048 * scale**0.5)
    grid = int(4000 * scale**0.5)
    return [
        Case(
            "chain `a*a*0.5 + a*3.0 + 1.0`, f64",
            chain,
            lambda r: (_f64(r, n),),
            ">= 4x eager, <= 1.5x bandwidth",
        ),
        Case(
            "long chain (10 ops, 2 inputs), f64",
            long_chain,
            lambda r: (_f64(r, n), _f64(r, n)),
            ">= 4x eager, <= 1.5x bandwidth",
        ),
        Case(
            "`np.sum(a*b + c)`, f64",
            sum_axpy,
            lambda r: (_f64(r, n), _f64(r, n), _f64(r, n)),
            ">= 3x eager",
        ),
        Case(
            f"layernorm rows, f32 {side}x{side}",
            layernorm,
            lambda r: (_f32(r, side, side), _f32(r, side), _f32(r, side)),
            ">= 2x eager",
        ),
        Case(
            f"softmax rows, f32 {side}x{side}",
            softmax,
            lambda r: (_f32(r, side, side),),
            ">= 1x eager",
        ),
        Case(
            f"5-point stencil, f64 {grid}x{grid}",
            stencil,
            lambda r: (_f64(r, grid, grid),),
            ">= 3x eager",
        ),
        Case(
            f"`relu(x @ W + b)`, f32 {side}x{side // 2} @ {side // 2}x{side // 2}",
            dense_relu,
            lambda r: (_f32(r, side, side // 2), _f32(r, side // 2, side // 2), _f32(r, side // 2)),
            ">= 0.95x eager",
        ),
    ]


# -- measurement -------------------------------------------------------------------------------------


def _timed(fn: Callable, args: tuple) -> float:
    start = time.perf_counter()
    fn(*args)
    return time.perf_counter() - start


def interleaved(variants: dict[str, Callable], args: tuple, rounds: int) -> dict[str, float]:
    """Median seconds per variant; rounds alternate the variants (rotating who goes first)."""
    times: dict[str, list] = {name: [] for name in variants}
    names = list(variants)
    for r in range(rounds):
        for name in names[r % len(names) :] + names[: r % len(names)]:
            times[name].append(_timed(variants[name], args))
    return {name: statistics.median(t) for name, t in times.items()}


@numba.njit(parallel=True, nogil=True)
def _copy(dst, src):
    for i in numba.prange(src.size):
        dst[i] = src[i]


def bandwidth(rounds: int) -> float:
    """Bytes per second of a streaming copy on all threads (read + write counted)."""
    src = np.ones(int(5e7))
    dst = np.empty_like(src)
    _copy(dst, src)
    seconds = statistics.median(_timed(_copy, (dst, src)) for _ in range(rounds))
    return 2 * src.nbytes / seconds


def copy_yardstick(nbytes: int) -> Callable:
    """A warmed-up streaming copy (prange) moving ``nbytes``, half read and half written."""
    half = nbytes // 2 // 8
    src, dst = np.ones(half), np.empty(half)
    _copy(dst, src)
    return lambda *_: _copy(dst, src)


def compulsory_bytes(fn: Callable, args: tuple) -> int:
    """Inputs read once plus outputs written once."""
    out = fn(*args)
    outs = out if isinstance(out, tuple) else (out,)
    return sum(np.asarray(a).nbytes for a in args) + sum(np.asarray(o).nbytes for o in outs)


def numba_variant(fn: Callable, parallel: bool, args: tuple):
    """``numba.njit`` on the NumPy source itself, or the reason it cannot compile it."""
    jitted = numba.njit(parallel=parallel)(fn)
    try:
        result = jitted(*args)
    except Exception as error:  # Numba's typing errors
        return None, f"fails ({type(error).__name__})"
    expected = fn(*args)
    if np.asarray(result).dtype != np.asarray(expected).dtype:
        return jitted, f"dtype {np.asarray(result).dtype} (NumPy: {np.asarray(expected).dtype})"
    return jitted, ""


@dataclass
class Row:
    case: Case
    times: dict = field(default_factory=dict)
    notes: dict = field(default_factory=dict)
    bandwidth_time: float = 0.0
    agree: str = ""


def run_case(case: Case, rounds: int) -> Row:
    rng = np.random.default_rng(0)
    args = case.make(rng)
    row = Row(case)
    compiled = gcompile.compile(case.fn, fullgraph=True)
    expected, actual = case.fn(*args), compiled(*args)
    error = np.max(np.abs(np.asarray(actual, np.float64) - np.asarray(expected, np.float64)))
    scale = np.max(np.abs(np.asarray(expected, np.float64)))
    row.agree = f"max rel. error {error / scale:.1e}"
    del actual  # (a held result keeps its buffer from being reused)
    variants = {"numpy": case.fn, "gcompile": compiled}
    for label, parallel in (("numba", False), ("numba parallel", True)):
        jitted, note = numba_variant(case.fn, parallel, args)
        row.notes[label] = note
        if jitted is not None:
            variants[label] = jitted
    # The bandwidth yardstick runs interleaved with the variants: a streaming copy moving the
    # case's compulsory bytes (half read, half written), so it sees the same machine state.
    variants["bandwidth"] = copy_yardstick(compulsory_bytes(case.fn, args))
    row.times = interleaved(variants, args, rounds)
    row.bandwidth_time = row.times.pop("bandwidth")
    return row


# -- compile time and call overhead -------------------------------------------------------------------------

_COLD = textwrap.dedent(
    """
    import sys, time, numpy as np
    sys.path.insert(0, {root!r})
    import gcompile
    from bench.run import ten_ops
    fn = gcompile.compile(ten_ops, fullgraph=True)
    a, b = np.random.rand(1000), np.random.rand(1000)
    start = time.perf_counter(); fn(a, b); first = time.perf_counter() - start
    a, b = np.random.rand(1234), np.random.rand(1234)
    start = time.perf_counter(); fn(a, b); resized = time.perf_counter() - start
    print(first, resized, fn.stats["kernel_compiles"], fn.stats["disk_cache_hits"])
    """
)


def compile_times() -> dict:
    """First call in a cold process, in a new process with the disk cache, and at a new size."""
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "GCOMPILE_CACHE_DIR": cache}
        script = _COLD.format(root=str(ROOT.parent))
        runs = []
        for _ in range(2):
            out = subprocess.run(
                [sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True
            ).stdout.split()
            runs.append([float(x) for x in out])
    return {
        "first call, cold": runs[0][0],
        "first call, new process, disk cache": runs[1][0],
        "new size, same structure": runs[0][1],
        "compiles (cold, disk)": (int(runs[0][2]), int(runs[1][2])),
        "disk cache hits (cold, disk)": (int(runs[0][3]), int(runs[1][3])),
    }


def call_overhead(rounds: int) -> dict:
    """Seconds of a compiled call on 8 elements, and of its kernel called directly."""
    fn = gcompile.compile(chain, fullgraph=True)
    x = np.random.rand(8)
    fn(x)
    program = fn.entries[0].run.program
    ((code, loaded),) = program.kernels
    out = np.empty(8)
    kernel_args = []
    for argument in code.arguments:
        kind = argument[0]
        kernel_args.append(out if kind == "output" else argument[1] if kind == "int" else x)
    kernel = loaded.function
    per_call = {}
    for label, call, args in (
        ("gcompile call", fn, (x,)),
        ("kernel alone", kernel, tuple(kernel_args)),
    ):
        call(*args)
        samples = []
        for _ in range(rounds):
            start = time.perf_counter()
            for _ in range(1000):
                call(*args)
            samples.append((time.perf_counter() - start) / 1000)
        per_call[label] = statistics.median(samples)
    return per_call


# -- report -----------------------------------------------------------------------------------------------


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.2f}"


def write_section(path: Path, name: str, text: str) -> None:
    """Put ``text`` between ``<!-- name:start -->`` and ``<!-- name:end -->`` in ``path``.

    The rest of the file is left alone, so each benchmark script owns one section of
    ``bench/results.md``; a missing section is appended.
    """
    start, end = f"<!-- {name}:start -->", f"<!-- {name}:end -->"
    block = f"{start}\n{text.rstrip()}\n{end}"
    old = path.read_text() if path.exists() else ""
    if start in old and end in old[old.index(start) :]:
        head, rest = old.split(start, 1)
        path.write_text(head + block + rest.split(end, 1)[1])
    else:
        path.write_text(old.rstrip() + ("\n\n" if old.strip() else "") + block + "\n")


def report(rows: list[Row], bw: float, compile_info: dict, overhead: dict, quick: bool) -> str:
    lines = [
        "# gcompile benchmarks",
        "",
        f"Run {time.strftime('%Y-%m-%d %H:%M')} on {os.cpu_count()} cores, numba "
        f"{numba.__version__} ({numba.get_num_threads()} threads), numpy {np.__version__}"
        + (" (--quick: fewer rounds)" if quick else "")
        + f". Streaming-copy bandwidth: {bw / 1e9:.1f} GB/s.",
        "",
        "Medians of interleaved runs in one process, milliseconds; `x eager` = NumPy time / "
        "variant time; `x bw` = gcompile time / time of a streaming copy of the case's "
        "compulsory bytes (inputs read once, outputs written once), timed in the same rounds.",
        "",
        "| case | NumPy | numba | numba parallel | gcompile | copy (bw) | x eager | vs numba (best) | x bw | goal | agreement |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        t = row.times
        best_numba = min((t[k] for k in ("numba", "numba parallel") if k in t), default=None)
        cells = [
            row.case.name,
            _ms(t["numpy"]),
            _ms(t["numba"]) if "numba" in t else row.notes["numba"],
            _ms(t["numba parallel"]) if "numba parallel" in t else row.notes["numba parallel"],
            _ms(t["gcompile"]),
            _ms(row.bandwidth_time),
            f"{t['numpy'] / t['gcompile']:.2f}x",
            f"{best_numba / t['gcompile']:.2f}x" if best_numba else "n/a",
            f"{t['gcompile'] / row.bandwidth_time:.2f}",
            row.case.goal,
            row.agree,
        ]
        lines.append("| " + " | ".join(cells) + " |")
    lines += [
        "",
        "## Compile time (`ten_ops`, ten elementwise ops; separate processes)",
        "",
        "| measurement | value |",
        "|---|---|",
    ]
    for key, value in compile_info.items():
        shown = f"{value * 1e3:.0f} ms" if isinstance(value, float) else str(value)
        lines.append(f"| {key} | {shown} |")
    lines += [
        "",
        "## Call overhead (8 float64 elements, `chain`)",
        "",
        "| measurement | value |",
        "|---|---|",
    ]
    for key, value in overhead.items():
        lines.append(f"| {key} | {value * 1e6:.2f} us |")
    extra = overhead["gcompile call"] - overhead["kernel alone"]
    lines.append(f"| overhead above the kernel | {extra * 1e6:.2f} us (goal <= 10 us) |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--quick", action="store_true", help="smaller repeat counts (about a minute)"
    )
    parser.add_argument("--output", default=str(ROOT / "results.md"))
    args = parser.parse_args()
    rounds = 5 if args.quick else 15
    warnings.simplefilter("ignore", RuntimeWarning)
    bw = bandwidth(rounds)
    rows = []
    for case in cases(1.0):
        rows.append(run_case(case, rounds))
        print(
            f"{case.name}: " + ", ".join(f"{k} {_ms(v)} ms" for k, v in rows[-1].times.items()),
            flush=True,
        )
    compile_info = compile_times()
    overhead = call_overhead(rounds)
    text = report(rows, bw, compile_info, overhead, args.quick)
    write_section(Path(args.output), "run", text)
    print(text)


if __name__ == "__main__":
    main()
