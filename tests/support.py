"""Shared test helpers: run a function eagerly and compiled, and compare everything the caller can see."""

from __future__ import annotations

import contextlib
import re
import textwrap
import warnings
from typing import Any, Callable

import numpy as np

import gcompile
from gcompile.backends import interpreter
from gcompile.guards import ArgumentBinder
from gcompile.ir.pytree import flatten, unflatten
from gcompile.tools.compare import copy_inputs, ulp_distance
from tests import error_bounds

BACKENDS = ("interpreter", "numba")
# Numba calls libm where NumPy has its own SIMD loops (exp, sin, ...), and sums in a different
# order: float results of the Numba backend may differ from eager NumPy by a few ulp (a mean of
# 40 logarithms, each one ulp off, came out 6 ulp off). Where a program cancels, no fixed count
# holds (NumPy's own exp differs by an ulp between CPUs with and without AVX-512, and a sum that
# cancels 100-fold turns that into 12 ulp): there ``error_bounds`` derives the allowance.
NUMBA_ULPS = 8
# Kernels the Numba backend leaves to the interpreter, with a warning (rules.py documents them):
# float16 (Numba has no float16 arithmetic), the complex operations listed there, and rounding of
# integers to negative decimals.
INTERPRETED = re.compile(
    r"runs in the interpreter: (float16 |no template for \w+ on \(?complex|"
    r"no template for round on \((u?int\d+|bool)\))"
)


def copy_args(args: tuple, kwargs: dict) -> tuple[tuple, dict]:
    """Copies of a call's arguments that keep layouts and read-only flags (see ``copy_inputs``)."""
    return copy_inputs(args), copy_inputs(kwargs)


def assert_same_value(
    expected: Any,
    actual: Any,
    ulps: float = 0,
    where: str = "result",
    scale: Any = None,
    bound: Any = None,
) -> None:
    """Same type, dtype, shape; equal values (NaN == NaN), floats within ``ulps``.

    With ``scale`` (a float dtype), a float element may instead be within ``ulps`` units of
    that dtype at the magnitude of the whole result: where a program cancels (``x - mean``,
    a put price of 1e-13 from terms of 1), a last-bit difference in an input of the
    subtraction is many ulps of the tiny difference, and no order of evaluation avoids it.

    ``bound`` (shaped like ``expected``, see ``error_bounds``): how far any valid evaluation of
    each element may be from the exact value; a float element may instead be within twice
    that of ``expected`` (both are such evaluations). ``nan`` where no bound is known.
    """
    if isinstance(expected, (tuple, list)):
        assert type(actual) is type(expected), (
            f"{where}: {type(actual).__name__} != {type(expected).__name__}"
        )
        assert len(actual) == len(expected), f"{where}: {len(actual)} != {len(expected)} items"
        for i, (e, a) in enumerate(zip(expected, actual)):
            assert_same_value(e, a, ulps, f"{where}[{i}]", scale, _part(bound, i))
        return
    if isinstance(expected, dict):
        assert isinstance(actual, dict) and list(actual) == list(expected), f"{where}: keys differ"
        for k in expected:
            assert_same_value(
                expected[k], actual[k], ulps, f"{where}[{k!r}]", scale, _part(bound, k)
            )
        return
    assert type(actual) is type(expected), (
        f"{where}: type {type(actual).__name__} != {type(expected).__name__}"
    )
    if (
        expected is None
        or isinstance(expected, (str, bool, int, float, complex))
        and not isinstance(expected, np.generic)
    ):
        if isinstance(expected, float) and np.isnan(expected):
            assert np.isnan(actual), f"{where}: {actual} != nan"
        else:
            assert actual == expected, f"{where}: {actual!r} != {expected!r}"
        return
    e, a = np.asarray(expected), np.asarray(actual)
    assert a.dtype == e.dtype, f"{where}: dtype {a.dtype} != {e.dtype}"
    assert a.shape == e.shape, f"{where}: shape {a.shape} != {e.shape}"
    if ulps and e.dtype.kind in "fc" and e.size:
        distance = ulp_distance(e, a)
        if scale is not None:
            both = np.isfinite(e) & np.isfinite(a)
            magnitude = float(np.max(np.abs(e[both]), initial=0.0))
            unit = float(np.spacing(np.dtype(scale).type(magnitude)))
            with np.errstate(all="ignore"):
                scaled = np.abs(a.astype(np.complex128) - e.astype(np.complex128)) / unit
            distance = np.where(both, np.minimum(distance, scaled), distance)
        if bound is not None:
            limit = 2 * np.asarray(bound, np.float64)
            with np.errstate(all="ignore"):
                gap = np.abs(a.astype(np.complex128) - e.astype(np.complex128))
                # no bound (nan) or an infinite one: the ulp rules alone
                within = np.isfinite(limit) & np.isfinite(gap) & (gap <= limit)
            distance = np.where(within, 0.0, distance)
        worst = float(np.max(distance))
        assert worst <= ulps, (
            f"{where}: {worst} ulp apart (allowed {ulps})\nexpected {e}\nactual   {a}"
        )
    else:
        np.testing.assert_array_equal(a, e, err_msg=where, strict=True)


def check(
    fn: Callable,
    *args: Any,
    backends: tuple = BACKENDS,
    ulps: float = 0,
    on_graph: Callable | None = None,
    **kwargs: Any,
) -> Any:
    """Run ``fn`` eagerly, through the interpreter on its traced graph, and compiled on each backend.

    Compares results (type, dtype, shape, values) and every argument afterwards
    (mutations). Returns the eager result. Compilation uses ``fullgraph=True``:
    a refusal fails the test. Numba floats may differ by ``NUMBA_ULPS``, and where the program
    cancels by twice the forward error bound of ``error_bounds`` (any order of summation).
    ``on_graph(graph, expected)``, if given, further checks the traced graph against the eager
    result (without a trace of its own).
    """
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
        eager_args, eager_kwargs = copy_args(args, kwargs)
        expected = fn(*eager_args, **eager_kwargs)
        graph = gcompile.trace(fn, *args, **kwargs)
        graph.verify()
        if on_graph is not None:
            on_graph(graph, expected)
        for backend in backends:
            run_args, run_kwargs = copy_args(args, kwargs)
            compiled = gcompile.compile(fn, backend=backend, fullgraph=True)
            actual = call_compiled(compiled, *run_args, **run_kwargs)
            compared = (expected, actual, eager_args, run_args, eager_kwargs, run_kwargs)
            if backend != "numba":
                _assert_agrees(compared, ulps, backend, None, (None, None, None))
                continue
            scale = narrowest_float(args, kwargs, expected)
            try:  # the fixed ulp rule first: deriving the error bounds traces every trip
                _assert_agrees(compared, max(ulps, NUMBA_ULPS), backend, scale, (None, None, None))
            except AssertionError:
                bounds = error_bounds.bounds(fn, args, kwargs, graph)
                _assert_agrees(compared, max(ulps, NUMBA_ULPS), backend, scale, bounds)
        return expected


def _assert_agrees(compared: tuple, ulps: float, backend: str, scale: Any, bound: tuple) -> None:
    """``check``'s comparison of one backend's result and arguments after the call with eager's:
    ``compared`` is (expected, actual, eager args, run args, eager kwargs, run kwargs)."""
    expected, actual, eager_args, run_args, eager_kwargs, run_kwargs = compared
    assert_same_value(expected, actual, ulps, f"{backend} result", scale, bound[0])
    assert_same_value(
        eager_args, run_args, ulps, f"{backend} arguments after the call", scale, bound[1]
    )
    assert_same_value(
        eager_kwargs,
        run_kwargs,
        ulps,
        f"{backend} keyword arguments after the call",
        scale,
        bound[2],
    )


def _part(bound: Any, key: Any) -> Any:
    """Item ``key`` of a structure of bounds (None when there is no bound)."""
    if isinstance(bound, (tuple, list, dict)):
        return bound[key]
    return None


def narrowest_float(*values: Any) -> np.dtype:
    """The least precise float dtype among the arrays and scalars in ``values`` (float64 if none)."""
    leaves, _ = flatten(list(values))
    widths = [
        np.finfo(np.asarray(v).dtype).bits
        for _, v in leaves
        if isinstance(v, (np.ndarray, np.generic)) and np.asarray(v).dtype.kind in "fc"
    ]
    return np.dtype(np.float32 if widths and min(widths) <= 32 else np.float64)


def call_compiled(compiled: Callable, *args: Any, **kwargs: Any) -> Any:
    """Call a compiled function; a gcompile warning must name a documented interpreter gap."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", gcompile.GcompileWarning)
        result = compiled(*args, **kwargs)
    for warning in caught:
        if issubclass(warning.category, gcompile.GcompileWarning):
            assert INTERPRETED.search(str(warning.message)), str(warning.message)
        else:
            warnings.warn_explicit(
                warning.message, warning.category, warning.filename, warning.lineno
            )
    return result


def tolerance(backend: str) -> float:
    """Ulps allowed between eager NumPy and ``backend`` for float results (ints must be equal)."""
    return NUMBA_ULPS if backend == "numba" else 0


def run_interpreter(graph, *inputs):
    """Run a traced graph directly with the reference interpreter."""
    return interpreter.run(graph, list(inputs))


@contextlib.contextmanager
def quiet():
    """Silence NumPy's floating-point warnings, as edge values trigger them in eager mode too."""
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
        yield


def golden(text: str) -> str:
    """An inline golden text without its indentation and surrounding blank lines."""
    return textwrap.dedent(text).strip("\n")


def graph_inputs(fn: Callable, args: tuple) -> list:
    """The values of ``fn``'s graph inputs for a call with ``args`` (in placeholder order)."""
    return ArgumentBinder(fn).bind(args, {}).inputs()


def run_eager(fn: Callable, args: tuple) -> tuple[Any, tuple]:
    """``(result, arguments afterwards)`` of calling ``fn`` on copies of ``args``."""
    args = copy_inputs(args)
    with quiet():
        result = fn(*args)
    return result, args


def run_graph(graph, fn: Callable, args: tuple) -> tuple[Any, tuple]:
    """``(result, arguments afterwards)`` of running ``graph`` with the interpreter on copies."""
    args = copy_inputs(args)
    with quiet():
        outputs = interpreter.run(graph, graph_inputs(fn, args))
    return unflatten(graph.out_spec, outputs), args


def supports(ufunc: np.ufunc, *dtypes) -> bool:
    """Whether NumPy has a loop of ``ufunc`` for these operand dtypes."""
    try:
        with np.errstate(all="ignore"):
            ufunc(*(np.ones(1, d) for d in dtypes))
        return True
    except (TypeError, ValueError):
        return False
