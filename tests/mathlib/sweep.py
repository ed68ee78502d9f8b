"""The accuracy sweep every mathlib template is tested with (issue 6, point 5).

``check_template`` runs a template over at least 10**6 inputs of one dtype: 40% random bit
patterns (every finite and non-finite value, both signs), 60% drawn from the function's domain,
and the special values. Errors are measured in ulp of the correctly rounded result against a
wider reference (NumPy in long double for float64, in float64 for float32, unless the test gives
its own). Special values must give NumPy's kind of result: the same NaN, infinity and signed
zero, or a finite number of the same sign.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Callable

import numpy as np
from numba import njit

from gcompile.backends.numba import mathlib

N_INPUTS = 1_000_000


def special_values(dtype) -> np.ndarray:
    """+-0, the smallest subnormal and normal, +-1, a large value, the largest, +-inf, NaN."""
    info = np.finfo(dtype)
    tiny_sub = np.nextafter(dtype(0), dtype(1))
    base = [0.0, tiny_sub, info.tiny, info.tiny * 0.75, 1.0, 0.5, 2.0, 1e30, info.max, np.inf]
    values = np.array(base, dtype)
    return np.concatenate([values, -values, np.array([np.nan], dtype)])


def inputs(dtype, domain: Callable, extra=(), n: int = N_INPUTS, seed: int = 0) -> np.ndarray:
    """``n`` inputs: 40% random bit patterns, 60% ``domain(rng, size)``, then the specials."""
    rng = np.random.default_rng(seed)
    bits_type = np.uint64 if np.dtype(dtype).itemsize == 8 else np.uint32
    count = (n * 2) // 5
    random_bits = rng.integers(0, np.iinfo(bits_type).max, count, dtype=bits_type, endpoint=True)
    drawn = np.asarray(domain(rng, n - count), dtype=np.float64)
    return np.concatenate(
        [
            random_bits.view(dtype),
            drawn.astype(dtype),
            np.asarray(extra, dtype),
            special_values(dtype),
        ]
    )


def ulp_error(actual: np.ndarray, reference: np.ndarray, dtype) -> np.ndarray:
    """|actual - reference| in ulp of ``reference`` rounded to ``dtype``; inf on a NaN mismatch.

    Results that agree exactly (or are both NaN) count 0; an infinite result where the rounded
    reference is finite, or the reverse, counts inf.
    """
    with np.errstate(all="ignore"):
        rounded = reference.astype(dtype)
        wide = actual.astype(reference.dtype)
        spacing = np.spacing(np.abs(rounded)).astype(reference.dtype)
        distance = np.abs(wide - reference) / spacing
    same = (actual == rounded) | (np.isnan(actual) & np.isnan(rounded))
    distance = np.where(np.isnan(actual) != np.isnan(rounded), np.inf, distance)
    distance = np.where(np.isinf(actual) != np.isinf(rounded), np.inf, distance)
    return np.where(same, 0.0, np.nan_to_num(distance, nan=np.inf)).astype(np.float64)


@lru_cache(maxsize=None)
def elementwise_loop(function, arity: int):
    """A compiled loop applying ``function`` to 1-D arrays element by element (cached per function)."""
    if arity == 1:

        def loop(out, x):
            for i in range(x.size):
                out[i] = function(x[i])

    else:

        def loop(out, x, y):
            for i in range(x.size):
                out[i] = function(x[i], y[i])

    return njit(error_model="numpy")(loop)


def apply(function, *args: np.ndarray) -> np.ndarray:
    """``function`` of the template applied elementwise through a compiled loop."""
    out = np.empty_like(args[0])
    elementwise_loop(function, len(args))(out, *args)
    return out


def wider(x: np.ndarray) -> np.ndarray:
    """``x`` in the reference type: long double for float64, float64 for float32."""
    return x.astype(np.longdouble if x.dtype == np.float64 else np.float64)


def same_special_results(actual: np.ndarray, expected: np.ndarray) -> np.ndarray:
    """Per element, NumPy's kind of result: NaN, the same infinity, the same signed zero, or a
    finite non-zero number of the same sign (how close it is, the sweep measures against the
    wider reference: NumPy's own last bit is not the standard)."""
    nan = np.isnan(actual) & np.isnan(expected)
    same_sign = np.signbit(actual) == np.signbit(expected)
    exact = (actual == expected) & same_sign & (~np.isfinite(expected) | (expected == 0))
    finite = np.isfinite(actual) & np.isfinite(expected) & (actual != 0) & (expected != 0)
    return nan | exact | (finite & same_sign)


def check_template(
    function,
    dtype,
    numpy_function,
    bound: float,
    domain: Callable,
    reference: Callable | None = None,
    extra=(),
    second: Callable | None = None,
) -> float:
    """Sweep ``function`` (a mathlib expansion for ``dtype``) and return its worst ulp error.

    Asserts the worst error over the sweep is within ``bound`` and that on the special values
    (and ``extra``) the result is of NumPy's kind (``same_special_results``): ``numpy_function``
    on the same ``dtype`` input.
    ``reference`` (default ``numpy_function``) is evaluated on the widened inputs. For a binary
    function, ``second(rng, x)`` draws the second operand for inputs ``x`` (specials are then
    crossed with each other).
    """
    reference = reference or numpy_function
    x = inputs(dtype, domain, extra)
    operands = (
        [x] if second is None else [x, np.asarray(second(np.random.default_rng(1), x), dtype)]
    )
    got = apply(function, *operands)
    with np.errstate(all="ignore"):
        want = np.asarray(reference(*[wider(v) for v in operands]))
    errors = ulp_error(got, want, dtype)
    worst = int(np.argmax(errors))
    assert errors[worst] <= bound, (
        f"{errors[worst]:.2f} ulp at {[v[worst] for v in operands]}: got {got[worst]!r}, "
        f"reference {want[worst]!r}"
    )
    specials = np.concatenate([special_values(dtype), np.asarray(extra, dtype)])
    if second is None:
        special_operands = [specials]
    else:
        a, b = np.meshgrid(specials, specials)
        special_operands = [a.ravel(), b.ravel()]
    got = apply(function, *special_operands)
    with np.errstate(all="ignore"):
        want = np.asarray(numpy_function(*special_operands), dtype)
    ok = same_special_results(got, want)
    bad = [tuple(v[i] for v in special_operands) + (got[i], want[i]) for i in np.flatnonzero(~ok)]
    assert not bad, f"special values differ from NumPy (inputs, got, NumPy): {bad[:8]}"
    return float(errors[worst])


def expansion(ufunc: str, dtype):
    """The mathlib expansion of ``ufunc`` for ``dtype``."""
    return getattr(mathlib, mathlib.TEMPLATES[ufunc].function(dtype))


def bound(ufunc: str, dtype) -> float:
    """The documented worst error of ``ufunc``'s expansion for ``dtype``, in ulp."""
    return mathlib.TEMPLATES[ufunc].ulps[np.dtype(dtype) == np.float64]


def with_neighbours(values, dtype) -> np.ndarray:
    """``values`` in ``dtype`` and the floats just below and above each."""
    points = np.asarray(values, dtype)
    return np.concatenate([points, np.nextafter(points, -np.inf), np.nextafter(points, np.inf)])
