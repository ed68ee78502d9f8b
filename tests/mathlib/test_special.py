"""Accuracy sweeps and special values of the erf and expit expansions (mathlib/special.py)."""

from __future__ import annotations

import re

import llvmlite.binding as llvm
import numpy as np
import pytest

from tests.mathlib.sweep import bound, check_template, elementwise_loop, expansion, with_neighbours

# These tests read machine code and NaN signs: compiled at the users' LLVM level (conftest.py).
pytestmark = pytest.mark.optimized

DTYPES = [np.float32, np.float64]
VECTOR_FMA = re.compile(r"\bvfn?m(?:add|sub)\w*p[sd]\s+[^\n]*%[yz]mm")
TWO_OVER_SQRT_PI = np.longdouble("1.1283791670955125738961589031215452")


def _erf_taylor_coefficients(count):
    """(-1)**n / (n! (2n + 1)) in long double, for n < count."""
    coefficients = []
    factorial = np.longdouble(1)
    for n in range(count):
        factorial *= max(n, 1)
        coefficients.append(np.longdouble((-1) ** n) / (factorial * (2 * n + 1)))
    return coefficients


ERF_TAYLOR = _erf_taylor_coefficients(40)


def erf_reference(x):
    """erf in long double, to about 0.03 ulp of float64 (checked against mpmath at 40 digits).

    Below 2 the Taylor series (at most 4 bits lost to cancellation, 40 terms); from 2 on
    ``1 - erfc``: SciPy's float64 erfc is then below 0.005, so its error is far below an ulp of
    erf. Below 2**-32 two terms suffice, below 1 22; the slow long double loop runs only where
    it must.
    """
    special_functions = pytest.importorskip("scipy.special")
    x = np.asarray(x, np.longdouble)
    a = np.abs(x)
    result = np.empty_like(a)
    for low, high, terms in ((0.0, 2.0**-32, 2), (2.0**-32, 1.0, 22), (1.0, 2.0, 40)):
        inside = (a >= low) & (a < high)
        part = a[inside]
        square = part * part
        series = np.full_like(part, ERF_TAYLOR[terms - 1])
        for coefficient in ERF_TAYLOR[terms - 2 :: -1]:
            series = series * square + coefficient
        result[inside] = part * series * TWO_OVER_SQRT_PI
    beyond = ~(a < 2)  # NaN included
    tail = special_functions.erfc(a[beyond].astype(np.float64))
    result[beyond] = 1 - tail.astype(np.longdouble)
    return np.copysign(result, x)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", DTYPES)
def test_erf_sweep(dtype):
    scipy_special = pytest.importorskip("scipy.special")

    def domain(rng, n):
        third = n // 3
        return np.concatenate(
            [
                rng.uniform(-6.5, 6.5, third),
                rng.uniform(-2, 2, third),  # the two forms meet at |x| = 1
                rng.choice([-1.0, 1.0], n - 2 * third) * 10.0 ** rng.uniform(-30, 0, n - 2 * third),
            ]
        )

    # 1 (polynomial / erfc form), the clamps 6 (float64) and 4 (float32) and where erf reaches 1
    extra = with_neighbours([1.0, -1.0, 6.0, 5.93, 4.0, 3.92, 0.5, 1e-20, -1e-20], dtype)
    worst = check_template(
        expansion("erf", dtype),
        dtype,
        scipy_special.erf,
        bound("erf", dtype),
        domain,
        reference=erf_reference,
        extra=extra,
    )
    assert worst <= bound("erf", dtype)


def expit_reference(x):
    return 1 / (1 + np.exp(-x))


@pytest.mark.slow
@pytest.mark.parametrize("dtype", DTYPES)
def test_expit_sweep(dtype):
    scipy_special = pytest.importorskip("scipy.special")

    def domain(rng, n):
        half = n // 2
        low = -750 if dtype == np.float64 else -110  # into exp's subnormal range and below
        return np.concatenate([rng.uniform(-40, 40, half), rng.uniform(low, 40, n - half)])

    # where exp(x) becomes subnormal and where expit rounds to 1. Not below -709.78 (float32
    # -88.72): SciPy's 1 / (1 + exp(-x)) returns 0 there once exp(-x) overflows, where the true
    # result (and ours) is subnormal; the domain's inputs there are checked against the reference.
    if dtype == np.float64:
        thresholds = [-708.4, -709.7, 36.8, 37.5]
    else:
        thresholds = [-87.3, -88.7, 16.6, 17.4]
    extra = with_neighbours([0.0, 1.0, -1.0, *thresholds], dtype)
    worst = check_template(
        expansion("expit", dtype),
        dtype,
        scipy_special.expit,
        bound("expit", dtype),
        domain,
        reference=expit_reference,
        extra=extra,
    )
    assert worst <= bound("expit", dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_erf_loop_vectorises(dtype):
    if "avx2" not in llvm.get_host_cpu_features().flatten():
        pytest.skip("no AVX2 on this host: the loop vectorises only with vector FMA")
    loop = elementwise_loop(expansion("erf", dtype), 1)
    x = np.ones(16, dtype)
    loop(np.empty_like(x), x)
    asm = loop.inspect_asm(loop.signatures[0])
    assert len(VECTOR_FMA.findall(asm)) >= 20
    if dtype == np.float32:
        assert "cvtss2sd" not in asm and "cvtps2pd" not in asm, "float32 erf widened to float64"
