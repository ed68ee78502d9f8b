"""Python's ``math`` functions of traced scalars (``frontend/math_calls.py``): compiled, in
loops too, with Python's results (a float, an int from ``floor``, a bool) and Python's errors
where ``math`` raises and NumPy would return a special value."""

from __future__ import annotations

import math
import warnings
from math import exp

import numpy as np
import pytest

import gcompile

from .support import assert_same_value


def every_function(x):
    """Each ``math`` function taken, of the elements of ``x`` (three values in (0, 1))."""
    a, b, c = x[0], x[1], x[2]
    growth = math.exp(a) + math.expm1(b) + math.sinh(c) + math.cosh(a) + exp(c)
    logs = math.log(a) + math.log2(b) + math.log10(c) + math.log1p(a) + math.sqrt(b)
    angles = math.sin(a) + math.cos(b) + math.tan(c) + math.asin(a) + math.acos(b)
    inverse = math.atan(c) + math.tanh(a) + math.asinh(b) + math.acosh(1.0 + c)
    rest = math.atanh(a) + math.fabs(-b) + math.degrees(c) + math.radians(a)
    pairs = math.atan2(a, b) + math.copysign(c, -1.0)
    rounded = math.floor(10.0 * a) + math.ceil(10.0 * b) + math.trunc(-10.0 * c)
    tests = math.isnan(a) or math.isinf(b) or not math.isfinite(c)
    return growth + logs + angles + inverse + rest + pairs, rounded, tests


def summed_in_a_loop(x):
    total = 0.0
    for i in range(x.shape[0]):
        total += math.exp(-x[i]) * math.sqrt(math.fabs(x[i]))
    return total


def scaled(x):
    return x * math.cos(x[0])  # a Python float: the array's float32 stays


@pytest.fixture(scope="module")
def compiled():
    return {
        f: gcompile.compile(f, fullgraph=True) for f in (every_function, summed_in_a_loop, scaled)
    }


def test_math_functions_compile_with_pythons_results(compiled):
    rng = np.random.default_rng(5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing left to the interpreter or eager
        for x in (rng.uniform(0.05, 0.95, 3), np.array([0.5, 0.25, 0.125])):
            got, want = compiled[every_function](x), every_function(x)
            assert type(got[1]) is int and got[1] == want[1] and got[2] == want[2]
            assert_same_value(want[0], got[0], ulps=4)
        x = rng.standard_normal(40)
        assert_same_value(summed_in_a_loop(x), compiled[summed_in_a_loop](x), ulps=4)
        y = rng.random(9).astype(np.float32)
        assert_same_value(scaled(y), compiled[scaled](y), ulps=1)
    loops = compiled[summed_in_a_loop].entries[-1].graph.notes.loops
    assert loops and all(note.rolled for note in loops)


def domain(x):
    return math.sqrt(x[0]) + math.log(x[1]) + math.acos(x[2]) + math.exp(x[3]) + math.floor(x[4])


compiled_domain = {
    backend: gcompile.compile(domain, backend=backend, fullgraph=True)
    for backend in ("interpreter", "numba")
}


@pytest.mark.parametrize(
    "values",
    [
        [-1.0, 1.0, 0.5, 1.0, 2.5],  # sqrt of a negative: ValueError
        [1.0, 0.0, 0.5, 1.0, 2.5],  # log of 0
        [1.0, 1.0, 1.5, 1.0, 2.5],  # acos past 1
        [1.0, 1.0, 0.5, 800.0, 2.5],  # exp past float64: OverflowError
        [1.0, 1.0, 0.5, 1.0, np.nan],  # floor of NaN: ValueError
        [1.0, 1.0, 0.5, 1.0, np.inf],  # floor of inf: OverflowError
        [np.nan, 1.0, np.nan, np.inf, 2.5],  # NaN and inf where math lets them through
    ],
)
@pytest.mark.parametrize("backend", ["interpreter", "numba"])
@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # (NumPy's, in the interpreter's log(0))
def test_errors_are_pythons(values, backend):
    fn = compiled_domain[backend]
    x = np.array(values)
    try:
        want = domain(x)
    except (ValueError, OverflowError) as error:
        with pytest.raises(type(error), match=str(error)[:12]):
            fn(x)
    else:
        assert_same_value(want, fn(x))
    assert fn.stats["traces"] == 1


def rms_of_steps(E, h):
    def rms(e):  # (a helper defined inside, as Runge-Kutta-Fehlberg code writes it)
        return math.sqrt(np.sum(e**2) / len(e))

    return rms(E) * h


def test_math_functions_in_a_helper_defined_inside_compile():
    compiled = gcompile.compile(rms_of_steps, fullgraph=True)
    E = np.array([1.0, 2.0, 3.0])
    assert_same_value(compiled(E, 0.5), rms_of_steps(E, 0.5))


def _decorated(function):
    return function


def rms_by_a_decorated_helper(E):
    @_decorated  # (``@numba.njit`` compiles its body itself: its calls stay as written)
    def rms(e):
        return math.sqrt(max(float(np.sum(e**2)), 0.0) / len(e))

    def plain(e):
        return math.sqrt(len(e))

    return rms(E) + plain(E)


def test_calls_in_a_decorated_nested_def_stay_as_written():
    from gcompile.capture import convert

    source = convert(rms_by_a_decorated_helper).source
    decorated, plain = source.split("def plain")
    assert "math.sqrt(max(" in decorated and "__gc_call(math.sqrt" in plain
