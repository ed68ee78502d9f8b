"""Side by side (issue 12): gcompile against JAX jit, torch.compile and numba.njit, same source.

    python bench/peers.py            # full run
    python bench/peers.py --quick    # fewer rounds: a smoke run (the compiles dominate it)
    python -m bench.peers --quick --only softmax   # the same, from the repository root, one kernel

The report replaces the section between ``<!-- peers:start -->`` and ``<!-- peers:end -->`` of
bench/results.md (``bench/run.py`` and ``bench/vector_math.py`` own their sections), and is printed.

Every kernel is written once, as plain NumPy source (taken from bench/run.py, bench/vector_math.py and
examples/ where it lives there), and each compiler runs that source:

- gcompile: ``gcompile.compile(fn, fullgraph=True)``, its kernel cache in a fresh empty
  directory (``GCOMPILE_CACHE_DIR``), so first calls are cold.
- JAX: ``jax.jit`` of the source with its module's ``np`` bound to ``jax.numpy``
  (bench/vector_math.py's ``in_namespace``), x64 on, inputs copied to the device before timing. JAX
  arrays are immutable: the in-place stencil runs as its functional variant
  ``stencil_in_place_jax`` (``.at[].set``), jitted with its input buffer donated.
- torch.compile: ``torch.compile(fn, fullgraph=True)`` (the default inductor backend) called
  on the NumPy arrays themselves. TorchDynamo traces NumPy calls into torch operations on tensors
  viewing the arrays' memory (``torch._numpy``): no shim, and in-place updates land in the
  caller's array. ``fullgraph=True`` makes a graph break an error, reported as such.
- numba: ``numba.njit(parallel=True)`` of the source, the plain Python functions it calls
  jitted the same way.

Each variant's first call (compile + run) is timed and its result checked against NumPy's
(largest error over the largest magnitude); a variant that fails or disagrees is reported, not
dropped. Timings are medians of interleaved rounds (bench/run.py's ``interleaved``) in one
process; speed-ups are NumPy eager time over variant time from the same rounds.
"""

from __future__ import annotations

import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(_HERE))  # the repository root, for ``bench.*``

import argparse  # noqa: E402
import tempfile  # noqa: E402
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
    interleaved,
    layernorm,
    softmax,
    sum_axpy,
    write_section,
)
from bench.vector_math import (  # noqa: E402
    FULL,
    QUICK,
    Rounds,
    cpu_pressure,
    exp_sin,
    gelu_tanh,
    in_namespace,
    load_jax,
    logsumexp,
    max_rel_error,
)
from examples import black_scholes as black_scholes_example  # noqa: E402
from examples import haversine as haversine_example  # noqa: E402

ROOT = Path(_HERE)
COMPILERS = ("jax", "torch", "numba", "gcompile")
HEADINGS = {
    "jax": "JAX jit",
    "torch": "torch.compile",
    "numba": "numba.njit",
    "gcompile": "gcompile",
}

# -- kernels not found elsewhere in the repository -------------------------------------------------


def stencil_in_place(u):
    """The 5-point stencil written into the interior of ``u``."""
    u[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])


def stencil_in_place_jax(u):
    """JAX VARIANT of ``stencil_in_place``: JAX arrays are immutable, so ``.at[].set`` returns
    the updated array (jitted with ``u`` donated, so XLA may write into its buffer)."""
    return u.at[1:-1, 1:-1].set(0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:]))


def relu_linear(x, w, b):
    """A dense layer with ReLU: the matmul-epilogue kernel of issue 12."""
    return np.maximum(x @ w + b, 0.0)


# -- the table's rows ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Kernel:
    """A NumPy kernel and its inputs; ``in_place`` kernels write into ``args[0]``, return None."""

    name: str
    fn: Callable
    make: Callable  # rng -> args
    in_place: bool = False
    jax_fn: Callable | None = None  # JAX's functional variant of an in-place kernel


def _logits(rng, shape, dtype):
    """N(0, 3) logits of ``shape`` and ``dtype``."""
    return (3.0 * rng.standard_normal(shape)).astype(dtype)


def _layernorm_inputs(rng, rows, cols):
    x = rng.standard_normal((rows, cols), dtype=np.float32)
    gamma = rng.standard_normal(cols, dtype=np.float32)
    beta = rng.standard_normal(cols, dtype=np.float32)
    return x, gamma, beta


def _dense_inputs(rng, batch, features, units):
    x = rng.standard_normal((batch, features), dtype=np.float32)
    w = rng.standard_normal((features, units), dtype=np.float32) / np.float32(np.sqrt(features))
    b = rng.standard_normal(units, dtype=np.float32)
    return x, w, b


KERNELS = [
    Kernel("exp/sin chain f64 1e7", exp_sin, lambda r: (r.uniform(-10, 10, 10**7),)),
    Kernel(
        "Black–Scholes f64 4e6",
        black_scholes_example.black_scholes,
        lambda r: black_scholes_example.example_inputs(4 * 10**6),
    ),
    Kernel(
        "softmax rows f32 4096x4096", softmax, lambda r: (_logits(r, (4096, 4096), np.float32),)
    ),
    Kernel("layernorm rows f32 4096x4096", layernorm, lambda r: _layernorm_inputs(r, 4096, 4096)),
    Kernel(
        "logsumexp rows f64 4096x4096", logsumexp, lambda r: (_logits(r, (4096, 4096), np.float64),)
    ),
    Kernel(
        "haversine f64 1e7",
        haversine_example.haversine,
        lambda r: haversine_example.example_inputs(10**7),
    ),
    Kernel(
        "gelu (tanh) f32 1.6e7",
        gelu_tanh,
        lambda r: (r.uniform(-6, 6, 16 * 10**6).astype(np.float32),),
    ),
    Kernel("sum(a*b+c) f64 1e7", sum_axpy, lambda r: tuple(r.random(10**7) for _ in range(3))),
    Kernel(
        "5-pt stencil in place f64 4000x4000",
        stencil_in_place,
        lambda r: (r.random((4000, 4000)),),
        in_place=True,
        jax_fn=stencil_in_place_jax,
    ),
    Kernel(
        "relu(x@W+b) f32 2048x1024 @ 1024x1024",
        relu_linear,
        lambda r: _dense_inputs(r, 2048, 1024, 1024),
    ),
]


# -- the compilers: each builds, from a kernel and its NumPy inputs, a call on those inputs --------


def njit_source(fn: Callable, parallel: bool) -> Callable:
    """``numba.njit`` of ``fn``'s source, with the plain Python functions it calls jitted too
    (Numba cannot call an unjitted function)."""
    namespace = dict(fn.__globals__)
    for name in fn.__code__.co_names:
        if isinstance(namespace.get(name), types.FunctionType):
            namespace[name] = njit_source(namespace[name], parallel)
    rebound = types.FunctionType(fn.__code__, namespace, fn.__name__, fn.__defaults__)
    return numba.njit(parallel=parallel)(rebound)


def load_torch():
    """The ``torch`` module, or None when it is not installed."""
    try:
        import torch
    except ImportError:
        return None
    return torch


def build_gcompile(kernel: Kernel, args: tuple, _modules) -> Callable:
    """gcompile's call: refusals raise (``fullgraph=True``) rather than run eagerly."""
    return gcompile.compile(kernel.fn, fullgraph=True)


def build_numba(kernel: Kernel, args: tuple, _modules) -> Callable:
    """``numba.njit(parallel=True)`` of the source (see ``njit_source``)."""
    return njit_source(kernel.fn, parallel=True)


def build_torch(kernel: Kernel, args: tuple, torch) -> Callable:
    """``torch.compile`` of the source, to be called on the NumPy arrays: Dynamo traces the
    NumPy calls itself (see the module docstring); a graph break raises."""
    return torch.compile(kernel.fn, fullgraph=True)


def build_jax(kernel: Kernel, args: tuple, jax_modules) -> Callable:
    """A call running ``jax.jit`` of the source on device copies of ``args`` (made now), which
    blocks until the result is ready; an in-place kernel's call carries its array over."""
    jax, jnp = jax_modules
    fn = in_namespace(kernel.jax_fn or kernel.fn, jnp)
    device = [jnp.asarray(a) if isinstance(a, np.ndarray) else a for a in args]
    if kernel.in_place:
        jitted = jax.jit(fn, donate_argnums=0)

        def step(*_):
            device[0] = jax.block_until_ready(jitted(*device))
            return device[0]

        return step
    jitted = jax.jit(fn)
    return lambda *_: jax.block_until_ready(jitted(*device))


BUILDERS = {
    "jax": build_jax,
    "torch": build_torch,
    "numba": build_numba,
    "gcompile": build_gcompile,
}


# -- measurement -----------------------------------------------------------------------------------


@dataclass
class Outcome:
    """One compiler on one kernel: its warmed-up call (None if it has none), first-call
    seconds, and its agreement with NumPy (or why there is no call)."""

    call: Callable | None
    first_call: float | None
    agreement: str


def _fresh(args: tuple) -> tuple:
    """Copies of the array arguments (an in-place kernel must start from the same input)."""
    return tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args)


def _result(kernel: Kernel, returned, args: tuple):
    """What a call computed: its return value, or the array an in-place kernel wrote."""
    return args[0] if kernel.in_place and returned is None else returned


def _why(error: Exception) -> str:
    """The error's type, what went wrong and, for Numba, the source line: Numba's messages open
    with the pipeline stage that failed, name the cause on a nested ``TypingError:`` line, and
    point at the source line with a ``^`` below it."""
    lines = [line.strip() for line in str(error).split("\n")]
    nested = [line.removeprefix("TypingError: ") for line in lines if line.startswith("Typing")]
    telling = nested or [line for line in lines if line and not line.startswith("Failed in")]
    what = f": {telling[0][:100]}" if telling else ""
    pointers = [i for i, line in enumerate(lines) if line == "^" and i > 0]
    where = f", at `{lines[pointers[-1] - 1]}`" if pointers else ""
    return f"{type(error).__name__}{what}{where}"


def agreement(actual, expected) -> str:
    """Largest relative error against NumPy, flagged when above a dtype's tolerance, plus the
    result's dtype when it is not NumPy's."""
    expected_dtype = np.asarray(expected if not isinstance(expected, tuple) else expected[0]).dtype
    actual_dtype = np.asarray(actual if not isinstance(actual, tuple) else actual[0]).dtype
    error = max_rel_error(actual, expected)
    tolerance = 1e-4 if expected_dtype == np.float32 else 1e-9
    text = f"{error:.1e}" if error <= tolerance else f"**disagrees** ({error:.1e})"
    return text + (f" (dtype {actual_dtype})" if actual_dtype != expected_dtype else "")


def prepare(kernel: Kernel, compiler: str, modules, args: tuple, expected) -> Outcome:
    """Build ``compiler``'s call for ``kernel``, time its first call on copies of ``args``,
    check its result against NumPy's ``expected``."""
    if modules is None:
        return Outcome(None, None, "not installed")
    args = _fresh(args)
    try:
        call = BUILDERS[compiler](kernel, args, modules)
        start = time.perf_counter()
        returned = call(*args)
        first_call = time.perf_counter() - start
        text = agreement(_result(kernel, returned, args), expected)
    except Exception as error:  # each compiler's own refusal, typing or lowering error
        return Outcome(None, None, f"fails ({_why(error)})")
    return Outcome(call, first_call, text)


@dataclass
class Row:
    """One kernel: each compiler's outcome and the median seconds of every timed variant."""

    kernel: Kernel
    outcomes: dict
    times: dict = field(default_factory=dict)


def measure(kernel: Kernel, modules: dict, rounds: int) -> Row:
    """First calls and agreement of every compiler, then interleaved rounds of those that run."""
    args = kernel.make(np.random.default_rng(0))
    expected_args = _fresh(args)
    expected = _result(kernel, kernel.fn(*expected_args), expected_args)
    outcomes = {c: prepare(kernel, c, modules[c], args, expected) for c in COMPILERS}
    del expected, expected_args
    variants = {"numpy": kernel.fn}
    variants.update({c: o.call for c, o in outcomes.items() if o.call is not None})
    for call in variants.values():  # a warm call on the timing inputs (new arrays, same guards)
        call(*args)
    row = Row(kernel, outcomes, interleaved(variants, args, rounds))
    for outcome in outcomes.values():
        outcome.call = None  # let go of compiled state and device copies
    return row


def _start_up(x):
    return np.exp(x) * 2.0 + 1.0


START_UP = Kernel("start-up", _start_up, lambda r: (r.random(1000),))


def warm_up(modules: dict) -> dict:
    """Each compiler's first compile in the process (imports, code generators starting), on a
    tiny kernel, so that the first calls of the kernels after it are their own."""
    args = START_UP.make(np.random.default_rng(0))
    return {c: prepare(START_UP, c, modules[c], args, _start_up(*args)) for c in COMPILERS}


# -- report ----------------------------------------------------------------------------------------


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return lines + ["| " + " | ".join(cells) + " |" for cells in rows]


def _speedup(row: Row, compiler: str) -> str:
    """NumPy eager time over the compiler's, or why there is none."""
    outcome = row.outcomes[compiler]
    if compiler not in row.times:
        return "fails" if outcome.agreement.startswith("fails") else outcome.agreement
    cell = f"{row.times['numpy'] / row.times[compiler]:.2f}x"
    return cell + (" (**wrong**)" if "disagrees" in outcome.agreement else "")


def _first_call(outcome: Outcome) -> str:
    return f"{outcome.first_call:.2f}" if outcome.first_call is not None else "-"


def issue_checks(rows: list[Row]) -> list[str]:
    """The two figures issue 12 is checked by, when their rows ran."""
    lines = []
    for row in rows:
        t = row.times
        if row.kernel.fn is relu_linear and "gcompile" in t:
            ratio = t["numpy"] / t["gcompile"]
            lines.append(
                f"- matmul epilogue: gcompile at {ratio:.2f}x NumPy (goal >= 0.95x): "
                + ("met" if ratio >= 0.95 else "**not met**")
            )
        if row.kernel.fn is logsumexp and "gcompile" in t and "jax" in t:
            ratio = t["jax"] / t["gcompile"]
            lines.append(
                f"- logsumexp: gcompile at {ratio:.2f}x JAX's speed (goal >= 1x): "
                + ("met" if ratio >= 1.0 else "**not met**")
            )
    return lines


def _versions(modules: dict) -> str:
    jax_modules, torch = modules["jax"], modules["torch"]
    return ", ".join(
        [
            f"numpy {np.__version__}",
            f"numba {numba.__version__}",
            f"jax {jax_modules[0].__version__}" if jax_modules else "jax not installed",
            f"torch {torch.__version__}" if torch else "torch not installed",
        ]
    )


def _threads(modules: dict) -> str:
    torch = modules["torch"]
    blas_threads = os.environ.get("OPENBLAS_NUM_THREADS", "unset")
    return (
        f"Threads ({os.cpu_count()} cores): NumPy's ufuncs run on 1 thread, its matmul on "
        f"OpenBLAS's threads (OPENBLAS_NUM_THREADS={blas_threads}"
        f": all cores when unset); gcompile and numba.njit(parallel=True) on "
        f"{numba.get_num_threads()} Numba threads; torch.compile's C++/OpenMP kernels on "
        + (f"{torch.get_num_threads()} threads" if torch else "- (not installed)")
        + "; JAX on XLA's CPU runtime (its own thread pool over all cores; XLA decides which "
        "fusions run in parallel)."
    )


def report(rows: list[Row], start_up: dict, modules: dict, quick: bool, pressure: str) -> str:
    """The markdown section of bench/results.md."""
    names = [HEADINGS[c] for c in COMPILERS]
    speedups = [
        [r.kernel.name, _ms(r.times["numpy"])] + [_speedup(r, c) for c in COMPILERS] for r in rows
    ]
    firsts = [[r.kernel.name] + [_first_call(r.outcomes[c]) for c in COMPILERS] for r in rows]
    firsts.append(
        ["(start-up: the first compile in the process, `np.exp(x)*2+1` on 1000 f64)"]
        + [_first_call(start_up[c]) for c in COMPILERS]
    )
    agreements = [[r.kernel.name] + [r.outcomes[c].agreement for c in COMPILERS] for r in rows]
    lines = [
        "## Side by side (issue 12): `bench/peers.py`",
        "",
        f"Run {time.strftime('%Y-%m-%d %H:%M')}, {_versions(modules)}"
        + (" (--quick: fewer rounds, noisy)" if quick else "")
        + f". CPU pressure (tasks waiting for a core, last minute) at the end: {pressure}. "
        + _threads(modules),
        "",
        "Each kernel is one NumPy source run by every compiler: JAX with `np` bound to "
        "`jax.numpy`, jitted (x64 on; the in-place stencil as its functional `.at[].set` "
        "variant, input donated); `torch.compile(fn, fullgraph=True)` (inductor) on the NumPy "
        "arrays themselves, Dynamo tracing the NumPy calls, no shim; `numba.njit(parallel=True)` "
        "with the functions it calls jitted too; gcompile `fullgraph=True`. Speed-up = NumPy "
        "eager time / variant time, medians of interleaved rounds in one process.",
        "",
        *_table(["kernel", "NumPy eager ms", *names], speedups),
        "",
        *issue_checks(rows),
        "",
        "First call (compile + run), seconds. Caches start empty: gcompile's in a new "
        "`GCOMPILE_CACHE_DIR`, torch's in a new `TORCHINDUCTOR_CACHE_DIR`; JAX and numba.njit "
        "keep none on disk here. The last line is each compiler's first compile in the process "
        "(imports, code generators warming up); the kernels' rows come after it.",
        "",
        *_table(["kernel", *names], firsts),
        "",
        "Agreement with NumPy: largest absolute difference over the largest magnitude "
        "(flagged above 1e-4 for float32 results, 1e-9 for float64), with the result's dtype "
        "when it is not NumPy's.",
        "",
        *_table(["kernel", *names], agreements),
    ]
    return "\n".join(lines) + "\n"


def load_compilers(cache_dir: str) -> dict:
    """Each compiler's modules (None when not installed), caches pointed at ``cache_dir``."""
    os.environ["GCOMPILE_CACHE_DIR"] = os.path.join(cache_dir, "gcompile")
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(cache_dir, "torchinductor")
    return {"jax": load_jax(), "torch": load_torch(), "numba": numba, "gcompile": gcompile}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer rounds (a smoke run)")
    parser.add_argument("--only", default="", help="run the kernels whose name contains this")
    parser.add_argument("--output", default=str(ROOT / "results.md"))
    args = parser.parse_args()
    rounds: Rounds = QUICK if args.quick else FULL
    warnings.simplefilter("ignore")  # RuntimeWarning, GcompileWarning, JAX's donation notes
    with tempfile.TemporaryDirectory(prefix="peers-cache-") as cache_dir:
        modules = load_compilers(cache_dir)
        start_up = warm_up(modules)
        rows = []
        for kernel in (k for k in KERNELS if args.only in k.name):
            rows.append(measure(kernel, modules, rounds.program))
            times = ", ".join(f"{k} {_ms(v)} ms" for k, v in rows[-1].times.items())
            print(f"{kernel.name}: {times}", flush=True)
        text = report(rows, start_up, modules, args.quick, cpu_pressure())
    write_section(Path(args.output), "peers", text)
    print(text)


if __name__ == "__main__":
    main()
