"""Vectorised math benchmarks (issue 6): gcompile's inlined expansions against NumPy, SciPy, JAX.

    python bench/vector_math.py            # full run (under ~10 minutes)
    python bench/vector_math.py --quick    # fewer rounds (about 2 minutes)
    python -m bench.vector_math --quick    # the same, from the repository root

The report replaces the section between ``<!-- math:start -->`` and ``<!-- math:end -->`` of
bench/results.md (``bench/run.py`` owns the ``run`` section), and is printed.

1. Per function and dtype: ns per element of ``gcompile.compile(lambda x: np.<fn>(x))`` against
   the NumPy (or ``scipy.special``) ufunc, at 10**7 elements and at an L3-sized 2**20, with
   gcompile's kernels on 1 thread and on all threads (``numba.set_num_threads``), plus a
   streaming copy of the same compulsory bytes (all threads), all timed in the same rounds.
   Also: whether the kernel inlined the expansion (``_m.<fn>_f..`` in ``fn.code``) or called
   libm, and the largest ulp distance of gcompile's result from NumPy's on that input.
2. Program cases (GELU, softmax, logsumexp, ...) against NumPy eager and, when installed
   (``pip install -e .[bench]``), ``jax.jit`` of the same source run on ``jax.numpy``.

Every comparison is a ratio of medians from interleaved rounds in one process (bench/run.py's
``interleaved``): absolute times drift on a shared machine, ratios within a run much less.
"""

from __future__ import annotations

import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(_HERE))  # the repository root, for ``bench.run``

import argparse  # noqa: E402
import importlib  # noqa: E402
import re  # noqa: E402
import time  # noqa: E402
import types  # noqa: E402
import warnings  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Callable  # noqa: E402

import numba  # noqa: E402
import numpy as np  # noqa: E402

import gcompile  # noqa: E402
from bench.run import (  # noqa: E402
    _ms,
    bandwidth,
    compulsory_bytes,
    copy_yardstick,
    interleaved,
    softmax,
    write_section,
)
from examples import black_scholes as black_scholes_example  # noqa: E402
from examples import haversine as haversine_example  # noqa: E402

ROOT = Path(_HERE)
ALL_THREADS = numba.config.NUMBA_NUM_THREADS
SIZES = {"10^7": 10**7, "2^20 (L3)": 2**20}


@dataclass(frozen=True)
class Rounds:
    """Interleaved rounds per measurement (more for the short calls on small inputs)."""

    large: int
    small: int
    program: int


QUICK, FULL = Rounds(large=3, small=5, program=3), Rounds(large=7, small=21, program=7)

# -- per-function measurements -------------------------------------------------------------------


def uniform(lo: float, hi: float) -> Callable:
    """A sampler of U(lo, hi) float64 values."""
    return lambda rng, n: rng.uniform(lo, hi, n)


def log_uniform(lo_exp: float, hi_exp: float) -> Callable:
    """A sampler of 10**U(lo_exp, hi_exp) float64 values."""
    return lambda rng, n: 10.0 ** rng.uniform(lo_exp, hi_exp, n)


@dataclass(frozen=True)
class MathFunction:
    """A ufunc of issue 6 and the typical inputs it is benchmarked on (drawn in float64)."""

    name: str
    sample: Callable
    arity: int = 1
    module: str = "numpy"


FUNCTIONS = [
    MathFunction("exp", uniform(-20, 20)),
    MathFunction("exp2", uniform(-20, 20)),
    MathFunction("expm1", uniform(-20, 20)),
    MathFunction("log", log_uniform(-3, 3)),
    MathFunction("log2", log_uniform(-3, 3)),
    MathFunction("log10", log_uniform(-3, 3)),
    MathFunction("log1p", log_uniform(-3, 3)),
    MathFunction("tanh", uniform(-10, 10)),
    MathFunction("sinh", uniform(-10, 10)),
    MathFunction("cosh", uniform(-10, 10)),
    MathFunction("sin", uniform(-100, 100)),
    MathFunction("cos", uniform(-100, 100)),
    MathFunction("tan", uniform(-100, 100)),
    MathFunction("arctan", uniform(-10, 10)),
    MathFunction("arctan2", uniform(-10, 10), arity=2),
    MathFunction("logaddexp", uniform(-20, 20), arity=2),
    MathFunction("erf", uniform(-5, 5), module="scipy.special"),
    MathFunction("expit", uniform(-20, 20), module="scipy.special"),
    MathFunction("logit", uniform(0, 1), module="scipy.special"),
]


def resolve(function: MathFunction) -> Callable | None:
    """The ufunc itself, or None when its module (SciPy) is not installed."""
    try:
        return getattr(importlib.import_module(function.module), function.name)
    except ImportError:
        return None


def compile_ufunc(ufunc: Callable, arity: int) -> gcompile.CompiledFunction:
    """``gcompile.compile`` of ``lambda x: ufunc(x)`` (two parameters for a binary ufunc)."""
    source = (lambda x: ufunc(x)) if arity == 1 else (lambda x, y: ufunc(x, y))
    return gcompile.compile(source)


def refusal(code: str) -> str:
    """Why gcompile runs a function eagerly (from its ``fn.code``), or "" when it compiled it."""
    prefix = "# runs eagerly: "
    return code.removeprefix(prefix).split("\n")[0] if code.startswith(prefix) else ""


def kernel_path(code: str, name: str) -> str:
    """How the compiled code computes ``name``: the inlined expansion, libm, or NumPy (eager)."""
    if refusal(code):
        return "eager (refused)"
    if f"_m.{name}_f" in code:
        return "expansion"
    others = sorted(set(re.findall(r"_m\.(\w+?)_f(?:32|64)\(", code)))
    return f"via {', '.join(others)}" if others else "libm"


def max_ulp(actual: np.ndarray, expected: np.ndarray) -> float:
    """Largest distance of ``actual`` from ``expected`` in ulps of ``expected``'s dtype."""
    a, e = actual.astype(np.float64), expected.astype(np.float64)
    same = (a == e) | (np.isnan(a) & np.isnan(e))
    spacing = np.spacing(np.abs(expected)).astype(np.float64)
    with np.errstate(invalid="ignore"):
        ulps = np.where(same, 0.0, np.abs(a - e) / spacing)
    return float(np.nan_to_num(ulps, nan=np.inf).max())


def threaded(fn: Callable, threads: int) -> Callable:
    """``fn`` called with Numba's parallel regions limited to ``threads`` threads."""

    def call(*args):
        numba.set_num_threads(threads)
        return fn(*args)

    return call


@dataclass
class FunctionRow:
    """One function and dtype: kernel path, accuracy, and median seconds per size and variant."""

    name: str
    dtype: str
    path: str
    ulp: float
    refusal: str  # why gcompile ran the call eagerly, if it did
    times: dict = field(default_factory=dict)  # size label -> variant -> seconds


def measure_function(
    function: MathFunction, ufunc: Callable, dtype, rounds: Rounds, rng
) -> FunctionRow:
    """Time NumPy, gcompile on 1 and on all threads, and a copy, at each of ``SIZES``."""
    compiled = compile_ufunc(ufunc, function.arity)
    n_max = max(SIZES.values())
    inputs = tuple(function.sample(rng, n_max).astype(dtype) for _ in range(function.arity))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", gcompile.GcompileWarning)
        actual = compiled(*inputs)
    row = FunctionRow(
        function.name,
        np.dtype(dtype).name,
        kernel_path(compiled.code, function.name),
        max_ulp(actual, ufunc(*inputs)),
        refusal(compiled.code),
    )
    del actual
    for label, n in SIZES.items():
        args = tuple(x[:n].copy() for x in inputs)
        copy = copy_yardstick((function.arity + 1) * n * np.dtype(dtype).itemsize)
        variants = {
            "numpy": ufunc,
            "gcompile 1T": threaded(compiled, 1),
            f"gcompile {ALL_THREADS}T": threaded(compiled, ALL_THREADS),
            "copy": threaded(copy, ALL_THREADS),
        }
        for variant in variants.values():  # warm-up: a new size may compile
            variant(*args)
        count = rounds.large if n >= 10**7 else rounds.small
        row.times[label] = interleaved(variants, args, count)
    numba.set_num_threads(ALL_THREADS)
    return row


def measure_functions(rounds: Rounds) -> tuple[list[FunctionRow], list[str]]:
    """All rows of FUNCTIONS x (float32, float64), and notes on functions skipped or refused."""
    rows, notes = [], []
    rng = np.random.default_rng(0)
    start = time.perf_counter()
    for function in FUNCTIONS:
        ufunc = resolve(function)
        if ufunc is None:
            notes.append(f"{function.name}: skipped ({function.module} is not installed)")
            continue
        for dtype in (np.float32, np.float64):
            row = measure_function(function, ufunc, dtype, rounds, rng)
            rows.append(row)
            elapsed = time.perf_counter() - start
            print(f"[{elapsed:4.0f} s] {row.name} {row.dtype}: {row.path}", flush=True)
        if row.refusal:
            notes.append(f"{function.name}: gcompile runs it eagerly: {row.refusal}")
    return rows, notes


# -- program cases: plain NumPy functions, as users write them -----------------------------------


def gelu_tanh(x):
    return 0.5 * x * (1 + np.tanh(0.7978845608 * (x + 0.044715 * x**3)))


def logsumexp(x):
    m = x.max(axis=1, keepdims=True)
    return np.log(np.sum(np.exp(x - m), axis=1)) + m[:, 0]


def log_softmax(x):
    shifted = x - x.max(axis=1, keepdims=True)
    return shifted - np.log(np.sum(np.exp(shifted), axis=1, keepdims=True))


def exp_sin(x):
    return np.exp(-x * x) * np.sin(x) + 0.5 * x


def _rows_f32(rng):
    """A 2048x2048 float32 array of logits (N(0, 3))."""
    return (3.0 * rng.standard_normal((2048, 2048))).astype(np.float32)


@dataclass(frozen=True)
class ProgramCase:
    """A NumPy program, its inputs, and the speed-up over NumPy eager the issue asks (or None)."""

    name: str
    fn: Callable
    make: Callable
    goal: float | None


PROGRAMS = [
    ProgramCase(
        "gelu_tanh, f32 1.6e7",
        gelu_tanh,
        lambda r: (r.uniform(-6, 6, 16 * 10**6).astype(np.float32),),
        10.0,
    ),
    ProgramCase("softmax rows, f32 2048x2048", softmax, lambda r: (_rows_f32(r),), 2.0),
    ProgramCase("logsumexp rows, f32 2048x2048", logsumexp, lambda r: (_rows_f32(r),), 2.5),
    ProgramCase(
        "`exp(-x*x)*sin(x) + 0.5*x`, f64 1e7",
        exp_sin,
        lambda r: (r.uniform(-10, 10, 10**7),),
        2.0,
    ),
    ProgramCase(
        "haversine, f64 1e7",
        haversine_example.haversine,
        lambda r: haversine_example.example_inputs(10**7),
        2.0,
    ),
    ProgramCase("log_softmax rows, f32 2048x2048", log_softmax, lambda r: (_rows_f32(r),), None),
    ProgramCase(
        "black_scholes, f64 1e7",
        black_scholes_example.black_scholes,
        lambda r: black_scholes_example.example_inputs(10**7),
        None,
    ),
]


def load_jax():
    """``(jax, jax.numpy)`` with 64-bit types on, or None when JAX is not installed.

    With x64 on, float64 cases stay float64 and float32 ones float32 (Python scalars are
    weakly typed in JAX as in NumPy 2).
    """
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        return None
    jax.config.update("jax_enable_x64", True)
    return jax, jnp


def in_namespace(fn: Callable, xp) -> Callable:
    """``fn`` with its module's ``np`` bound to ``xp``, as are the module functions it calls."""
    namespace = dict(fn.__globals__, np=xp)
    for name, value in fn.__globals__.items():
        if isinstance(value, types.FunctionType) and value.__globals__ is fn.__globals__:
            namespace[name] = types.FunctionType(
                value.__code__, namespace, value.__name__, value.__defaults__
            )
    return types.FunctionType(fn.__code__, namespace, fn.__name__, fn.__defaults__)


def _outputs(result) -> tuple:
    """A result as a tuple of NumPy arrays."""
    return tuple(np.asarray(r) for r in (result if isinstance(result, tuple) else (result,)))


def max_rel_error(actual, expected) -> float:
    """Largest absolute difference over the largest magnitude, worst output of a tuple."""
    errors = []
    for a, e in zip(_outputs(actual), _outputs(expected)):
        e64 = e.astype(np.float64)
        errors.append(np.max(np.abs(a.astype(np.float64) - e64)) / np.max(np.abs(e64)))
    return float(max(errors))


def jax_variant(fn: Callable, args: tuple, expected, jax_modules) -> tuple[Callable | None, str]:
    """A warmed-up ``jax.jit`` call of ``fn`` on device copies of ``args``, and its agreement
    with NumPy's ``expected`` result (or why there is none)."""
    if jax_modules is None:
        return None, "not installed"
    jax, jnp = jax_modules
    jitted = jax.jit(in_namespace(fn, jnp))
    device_args = tuple(jnp.asarray(a) if isinstance(a, np.ndarray) else a for a in args)

    def call(*_):
        return jax.block_until_ready(jitted(*device_args))

    result = call()
    dtypes = [r.dtype for r in _outputs(result)], [e.dtype for e in _outputs(expected)]
    note = f"JAX {max_rel_error(result, expected):.1e}"
    if dtypes[0] != dtypes[1]:
        note += f" (JAX dtype {dtypes[0][0]})"
    return call, note


@dataclass
class ProgramRow:
    """One program case: median seconds per variant, and the agreement with NumPy."""

    case: ProgramCase
    times: dict
    agree: str
    jax_note: str


def measure_program(case: ProgramCase, rounds: Rounds, jax_modules) -> ProgramRow:
    """NumPy eager, gcompile, JAX (if installed) and a copy of the compulsory bytes, interleaved."""
    args = case.make(np.random.default_rng(1))
    compiled = gcompile.compile(case.fn, fullgraph=True)
    expected = case.fn(*args)
    agree = f"{max_rel_error(compiled(*args), expected):.1e}"
    variants = {"numpy": case.fn, "gcompile": compiled}
    jax_call, jax_note = jax_variant(case.fn, args, expected, jax_modules)
    if jax_call is not None:
        variants["jax"] = jax_call
        agree += f"; {jax_note}"
    variants["copy"] = copy_yardstick(compulsory_bytes(lambda *_: expected, args))
    return ProgramRow(case, interleaved(variants, args, rounds.program), agree, jax_note)


# -- report ------------------------------------------------------------------------------------------


def _ns(seconds: float, n: int) -> str:
    return f"{seconds / n * 1e9:.2f}"


def function_table(rows: list[FunctionRow]) -> list[str]:
    """Markdown rows: ns per element, and NumPy time / gcompile time in brackets."""
    header = ["function", "dtype", "kernel", "max ulp vs NumPy"]
    for label in SIZES:
        header += [f"{label}: NumPy", "gcompile 1T", f"gcompile {ALL_THREADS}T", "copy"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for row in rows:
        cells = [row.name, row.dtype, row.path, f"{row.ulp:.3g}"]
        for label, n in SIZES.items():
            t = row.times[label]
            cells.append(_ns(t["numpy"], n))
            for threads in (1, ALL_THREADS):
                mine = t[f"gcompile {threads}T"]
                cells.append(f"{_ns(mine, n)} ({t['numpy'] / mine:.2f}x)")
            cells.append(_ns(t["copy"], n))
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def program_table(rows: list[ProgramRow]) -> list[str]:
    """Markdown rows: milliseconds, ratios, goal and agreement of each program case."""
    lines = [
        "| case | NumPy ms | gcompile ms | JAX ms | copy (bw) ms | x eager | x JAX | goal | met? "
        "| agreement (max rel. error vs NumPy) |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        t, goal = row.times, row.case.goal
        speedup = t["numpy"] / t["gcompile"]
        cells = [
            row.case.name,
            _ms(t["numpy"]),
            _ms(t["gcompile"]),
            _ms(t["jax"]) if "jax" in t else row.jax_note,
            _ms(t["copy"]),
            f"{speedup:.2f}x",
            f"{t['jax'] / t['gcompile']:.2f}x" if "jax" in t else "n/a",
            f">= {goal:g}x eager" if goal else "-",
            ("yes" if speedup >= goal else "**no**") if goal else "-",
            row.agree,
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def cpu_pressure() -> str:
    """Linux's CPU pressure (share of the last minute some task waited for a core), if known."""
    try:
        fields = Path("/proc/pressure/cpu").read_text().split("\n")[0].split()
    except OSError:
        return "unknown"
    return dict(f.split("=") for f in fields[1:])["avg60"] + "%"


def _versions(jax_modules) -> str:
    """The library versions a run used."""
    try:
        import scipy

        scipy_version = f"scipy {scipy.__version__}"
    except ImportError:
        scipy_version = "scipy not installed"
    jax_version = f"jax {jax_modules[0].__version__}" if jax_modules else "jax not installed"
    return f"numba {numba.__version__}, numpy {np.__version__}, {scipy_version}, {jax_version}"


def report(functions, notes, programs, bw: float, jax_modules, quick: bool, pressure: str) -> str:
    """The markdown section of bench/results.md."""
    lines = [
        "## Vectorised math (issue 6): `bench/vector_math.py`",
        "",
        f"Run {time.strftime('%Y-%m-%d %H:%M')} on {os.cpu_count()} cores, "
        f"{_versions(jax_modules)}" + (" (--quick: fewer rounds)" if quick else "") + ". "
        f"Streaming-copy bandwidth: {bw / 1e9:.1f} GB/s; CPU pressure (tasks waiting for a "
        f"core, last minute) at the end: {pressure}. Medians of interleaved rounds in one "
        "process; ratios are taken within the same rounds. On a loaded machine calls of a few "
        "milliseconds (the 2^20 columns) are stretched by preemption more than proportionally: "
        "trust those ratios only from a run with low CPU pressure.",
        "",
        "### Functions: ns per element",
        "",
        "`gcompile.compile(lambda x: np.<fn>(x))` (erf, expit, logit: `scipy.special`) against "
        "the ufunc itself. `(Nx)` = NumPy time / gcompile time; `1T` = `numba.set_num_threads(1)`; "
        "`copy` = a streaming copy of the same compulsory bytes on all threads. `kernel`: "
        "`expansion` when the kernel inlines `_m.<fn>_f..`, `libm` when it calls the scalar "
        "function, `via f` when it calls only other expansions, `eager` when gcompile refused "
        "the call. Inputs: exp, exp2, expm1, expit, "
        "logaddexp U(-20, 20); log* 10**U(-3, 3); tanh, sinh, cosh, arctan, arctan2 U(-10, 10); "
        "sin, cos, tan U(-100, 100); erf U(-5, 5); logit U(0, 1). Ulps are counted from "
        "NumPy's result, not the exact one: where a result cancels to near 0 (logaddexp of two "
        "inputs just below 0) NumPy itself is hundreds of ulps from exact, and so is this column.",
        "",
        *function_table(functions),
    ]
    if notes:
        lines += ["", *(f"- {note}" for note in notes)]
    lines += [
        "",
        "### Programs",
        "",
        "gcompile (`fullgraph=True`, all threads) against NumPy eager and `jax.jit` of the same "
        "source on `jax.numpy` (x64 on; device arrays made before timing; `block_until_ready`). "
        "`x JAX` = JAX time / gcompile time; `copy (bw)` = streaming copy of the compulsory "
        "bytes (inputs read once, outputs written once).",
        "",
        *program_table(programs),
    ]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer rounds (about 2 minutes)")
    parser.add_argument("--output", default=str(ROOT / "results.md"))
    args = parser.parse_args()
    rounds = QUICK if args.quick else FULL
    warnings.simplefilter("ignore", RuntimeWarning)
    jax_modules = load_jax()
    bw = bandwidth(rounds.program)
    functions, notes = measure_functions(rounds)
    programs = []
    for case in PROGRAMS:
        programs.append(measure_program(case, rounds, jax_modules))
        times = ", ".join(f"{k} {_ms(v)} ms" for k, v in programs[-1].times.items())
        print(f"{case.name}: {times}", flush=True)
    text = report(functions, notes, programs, bw, jax_modules, args.quick, cpu_pressure())
    write_section(Path(args.output), "math", text)
    print(text)


if __name__ == "__main__":
    main()
