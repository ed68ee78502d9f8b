"""Accuracy sweeps, range limits and special values of sin, cos and tan (mathlib/trig.py)."""

from __future__ import annotations

import math
import re
from fractions import Fraction
from functools import lru_cache

import llvmlite.binding as llvm
import numpy as np
import pytest
from numba import njit

from gcompile.backends.numba.mathlib import trig
from tests.mathlib.sweep import (
    apply,
    bound,
    check_template,
    elementwise_loop,
    expansion,
    ulp_error,
    wider,
)

# These tests read machine code and NaN signs: compiled at the users' LLVM level (conftest.py).
pytestmark = pytest.mark.optimized

TEMPLATES = {template.ufunc: template for template in trig.TEMPLATES}
DTYPES = [np.float32, np.float64]
UFUNCS = ["sin", "cos", "tan"]
VECTOR_FMA = re.compile(r"\bvfn?m(?:add|sub)\w*p[sd]\s+[^\n]*%[yz]mm")
# check_template also bounds the distance from NumPy's own results on the special values, and
# NumPy's float32 sin and cos are up to 1.5 ulp off (libm's sinf, used beyond the range limit,
# is not), so the sweep runs with this bound and each test then asserts the template's bound on
# the worst error against the wider reference.
NUMPY_DISTANCE = 4.0
PI = Fraction(
    "3.14159265358979323846264338327950288419716939937510582097494459230781640628620899862803"
)


def limit(ufunc, dtype):
    return TEMPLATES[ufunc].limit(dtype)


@lru_cache(maxsize=None)
def with_libm_beyond_limit(ufunc, dtype):
    """What a generated loop computes: the expansion up to the range limit, libm beyond it."""
    fast = expansion(ufunc, dtype)
    libm = getattr(math, ufunc)
    largest = limit(ufunc, dtype)

    @njit(error_model="numpy")
    def function(x):
        return fast(x) if abs(x) <= largest else libm(x)

    return function


def with_neighbours(values, dtype, steps=3):
    """``values`` and the ``steps`` values of ``dtype`` on either side of each."""
    points = [np.asarray(values, dtype)]
    up = down = points[0]
    for _ in range(steps):
        up = np.nextafter(up, dtype(np.inf))
        down = np.nextafter(down, dtype(-np.inf))
        points += [up, down]
    return np.concatenate(points)


@lru_cache(maxsize=None)
def nearest_to_multiples_of_half_pi(dtype, largest) -> np.ndarray:
    """Values of ``dtype`` in [1, largest] that lie closest to multiples of pi/2.

    Below ``2**(e + 1)`` the values are multiples ``m ulp`` of ``ulp = 2**(e - p + 1)`` with
    ``m < 2**p``; ``m ulp * 2/pi`` comes closest to an integer for ``m`` a denominator of a
    convergent of ``ulp * 2/pi`` (the best approximations). The last few per binade.
    """
    precision = np.finfo(dtype).nmant + 1
    found = []
    for exponent in range(math.ceil(math.log2(largest))):
        ulp = Fraction(2) ** (exponent - precision + 1)
        rest = ulp * 2 / PI
        before, denominator = 1, 0
        denominators = []
        while True:
            term = math.floor(rest)
            before, denominator = denominator, term * denominator + before
            if denominator >= 2**precision:
                break
            denominators.append(denominator)
            rest = 1 / (rest - term)
        found += [float(m * ulp) for m in denominators[-6:]]
    values = np.unique(np.array(found, dtype))
    return values[(values >= 1) & (values <= largest)]


def domain(largest):
    """U(-100, 100), multiples of pi/2 +- 1e-6, 10**U(-20, 0), U(-largest, largest), and near
    +-largest."""

    def draw(rng, n):
        part = n // 5
        sign = rng.choice([-1.0, 1.0], n)
        values = np.concatenate(
            [
                rng.uniform(-100, 100, part),
                rng.integers(-(10**4), 10**4, part) * (np.pi / 2) + rng.uniform(-1e-6, 1e-6, part),
                10.0 ** rng.uniform(-20, 0, part),
                rng.uniform(0, largest, part),
                rng.uniform(largest / 2, largest, n - 4 * part),
            ]
        )
        return sign * values

    return draw


def hard_points(dtype, largest):
    """Multiples of pi/2 rounded, the values closest to them and ``largest``: +- 3 ulp, both
    signs, up to ``largest``."""
    rng = np.random.default_rng(2)
    multiples = np.concatenate(
        [np.arange(1, 200), rng.integers(1, int(largest / (np.pi / 2)), 2000)]
    ) * (np.pi / 2)
    points = with_neighbours(
        np.concatenate([multiples, nearest_to_multiples_of_half_pi(dtype, largest), [largest]]),
        dtype,
    )
    points = points[np.abs(points) <= largest]
    return np.concatenate([points, -points])


@pytest.mark.slow
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("ufunc", UFUNCS)
def test_sweep(ufunc, dtype):
    # the hard points go with the domain, not the special values: NumPy's float64 sin is several
    # ulp off on some of them (7 at 1126833495400.4492, where sin is 3e-17)
    hard = hard_points(dtype, limit(ufunc, dtype))
    draw = domain(limit(ufunc, dtype))
    worst = check_template(
        with_libm_beyond_limit(ufunc, dtype),
        dtype,
        getattr(np, ufunc),
        NUMPY_DISTANCE,
        lambda rng, n: np.concatenate([hard, draw(rng, n - hard.size)]),
    )
    assert worst <= bound(ufunc, dtype)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("ufunc", UFUNCS)
def test_fast_path_up_to_the_range_limit(ufunc, dtype):
    """The expansion alone, over 10**6 inputs in [-limit, limit], meets the bound."""
    largest = limit(ufunc, dtype)
    draw = domain(largest)
    x = np.concatenate(
        [draw(np.random.default_rng(3), 10**6).astype(dtype), hard_points(dtype, largest)]
    )
    assert np.abs(x).max() <= largest
    fast = expansion(ufunc, dtype)
    got = apply(fast, x)
    with np.errstate(all="ignore"):
        errors = ulp_error(got, getattr(np, ufunc)(wider(x)), dtype)
    worst = int(np.argmax(errors))
    assert errors[worst] <= bound(ufunc, dtype), f"{errors[worst]:.2f} ulp at {x[worst]!r}"
    # odd (sin, tan) or even (cos) bit for bit
    mirrored = apply(fast, -x)
    np.testing.assert_array_equal(mirrored, got if ufunc == "cos" else -got)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("ufunc", UFUNCS)
def test_fast_path_special_values(ufunc, dtype):
    """NaN and +-inf give NaN and +-0 NumPy's result without the fallback; huge x do not raise."""
    fast = expansion(ufunc, dtype)
    special = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0], dtype)
    got = apply(fast, special)
    with np.errstate(invalid="ignore"):
        want = getattr(np, ufunc)(special)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(np.signbit(got[3:]), np.signbit(want[3:]))
    info = np.finfo(dtype)
    beyond = np.array([4 * limit(ufunc, dtype), 1e30, info.max, -info.max], dtype)
    assert apply(fast, beyond).dtype == dtype


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("ufunc", ["sin", "tan"])
def test_loop_vectorises(ufunc, dtype):
    if "avx2" not in llvm.get_host_cpu_features().flatten():
        pytest.skip("no AVX2 on this host: the loop vectorises only with vector FMA")
    loop = elementwise_loop(expansion(ufunc, dtype), 1)
    loop(np.empty(4, dtype), np.ones(4, dtype))
    asm = loop.inspect_asm(loop.signatures[0])
    assert len(VECTOR_FMA.findall(asm)) >= 10
    if dtype == np.float32:
        assert "cvtss2sd" not in asm and "cvtps2pd" not in asm, "float32 widened to float64"
