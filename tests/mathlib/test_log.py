"""Accuracy sweeps and special values of the logarithm expansions (mathlib/log.py)."""

from __future__ import annotations

import re

import llvmlite.binding as llvm
import numpy as np
import pytest

from tests.mathlib.sweep import (
    apply,
    bound,
    check_template,
    elementwise_loop,
    expansion,
    wider,
    with_neighbours,
)

# These tests read machine code and NaN signs: compiled at the users' LLVM level (conftest.py).
pytestmark = pytest.mark.optimized

DTYPES = [np.float32, np.float64]
VECTOR_FMA = re.compile(r"\bvfn?m(?:add|sub)\w*p[sd]\s+[^\n]*%[yz]mm")
LN2 = float(np.log(2.0))
# check_template's bound also applies to the distance from NumPy's own results on the special
# values, and NumPy is less accurate than these expansions (float32 log up to 3.3 ulp, and
# logaddexp where it cancels), so the sweep runs with this bound and each test then asserts the
# template's own bound on the worst error against the wider reference.
NUMPY_DISTANCE = 4.0


def decades(dtype):
    """log10 of the smallest subnormal and of the largest finite value of ``dtype``."""
    info = np.finfo(dtype)
    return float(np.log10(info.smallest_subnormal)), float(np.log10(info.max))


def positive(dtype):
    """Magnitudes over every binade (subnormals included), and around 1."""
    low, high = decades(dtype)

    def draw(rng, n):
        half = n // 2
        return np.concatenate([10.0 ** rng.uniform(low, high, half), rng.uniform(0.5, 2, n - half)])

    return draw


@pytest.mark.slow
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("ufunc", ["log", "log2", "log10"])
def test_log_sweep(ufunc, dtype):
    # 1 and the reduction's boundaries sqrt(2)/2 and sqrt(2), with their neighbours
    extra = with_neighbours([1.0, 2.0, 0.5, np.sqrt(2.0), np.sqrt(0.5), 10.0, 1e-10], dtype)
    worst = check_template(
        expansion(ufunc, dtype),
        dtype,
        getattr(np, ufunc),
        NUMPY_DISTANCE,
        positive(dtype),
        extra=extra,
    )
    assert worst <= bound(ufunc, dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_log2_of_powers_of_two_is_exact(dtype):
    info = np.finfo(dtype)
    exponents = np.arange(info.minexp - info.nmant, info.maxexp)
    powers = np.ldexp(np.ones(exponents.size, dtype), exponents)
    np.testing.assert_array_equal(apply(expansion("log2", dtype), powers), exponents.astype(dtype))


@pytest.mark.slow
@pytest.mark.parametrize("dtype", DTYPES)
def test_log1p_sweep(dtype):
    low, high = decades(dtype)

    def domain(rng, n):
        quarter = n // 4
        return np.concatenate(
            [
                10.0 ** rng.uniform(low, high, quarter),
                -(10.0 ** rng.uniform(low, 0, quarter)),  # (-1, 0)
                -1 + 10.0 ** rng.uniform(-16, 0, quarter),  # just above -1
                rng.uniform(-0.5, 1, n - 3 * quarter),
            ]
        )

    tiny = 2.0**-54 if dtype == np.float64 else 2.0**-25  # below it log1p returns x
    extra = with_neighbours([-1.0, -0.5, tiny, -tiny, np.sqrt(2.0) - 1, 1e-10, -1e-10], dtype)
    worst = check_template(
        expansion("log1p", dtype), dtype, np.log1p, NUMPY_DISTANCE, domain, extra=extra
    )
    assert worst <= bound("log1p", dtype)


def logit_reference(x):
    """logit in the wider type: 2 atanh(2x - 1) near 1/2 (2x - 1 is exact), else log - log1p."""
    centred = 2 * x - 1
    return np.where(abs(centred) < 0.5, 2 * np.arctanh(centred), np.log(x) - np.log1p(-x))


@pytest.mark.slow
@pytest.mark.parametrize("dtype", DTYPES)
def test_logit_sweep(dtype):
    special = pytest.importorskip("scipy.special")
    low, _ = decades(dtype)

    def domain(rng, n):
        quarter = n // 4
        return np.concatenate(
            [
                rng.uniform(0, 1, quarter),
                10.0 ** rng.uniform(low, 0, quarter),  # towards 0
                1 - 10.0 ** rng.uniform(-17, 0, quarter),  # towards 1
                0.5 + rng.uniform(-0.1, 0.1, n - 3 * quarter),  # the two forms meet at 0.5 +- 0.086
            ]
        )

    # 0.5 +- 0.08575: where the polynomial in 2x - 1 hands over to the log of the ratio
    extra = with_neighbours([0.5, 0.25, 0.75, 0.41425, 0.58575, 1e-10], dtype)
    extra = np.concatenate([extra, np.asarray([-0.5, 1.5], dtype)])
    worst = check_template(
        expansion("logit", dtype),
        dtype,
        special.logit,
        NUMPY_DISTANCE,
        domain,
        reference=logit_reference,
        extra=extra,
    )
    assert worst <= bound("logit", dtype)


def logaddexp_operands(dtype):
    """Second operands near and far from the first, none where the result cancels.

    Where ``max(x, y)`` lies in (-2 ln 2, 0), ``y`` is replaced by ``|y|``: there the result
    ``max + log1p(exp(-|x - y|))`` can cancel to near 0, which NumPy's algorithm (and ours)
    computes only to about 1 ulp of ``max(|x|, |y|)`` (``test_logaddexp_cancellation``).
    """

    def second(rng, x):
        with np.errstate(all="ignore"):
            y = np.where(
                rng.random(x.size) < 0.5,
                x + rng.uniform(-40, 40, x.size).astype(dtype),
                rng.uniform(-50, 50, x.size).astype(dtype),
            )
            larger = np.maximum(x, y)
            return np.where((larger > -2 * LN2) & (larger < 0), abs(y), y)

    return second


@pytest.mark.slow
@pytest.mark.parametrize("dtype", DTYPES)
def test_logaddexp_sweep(dtype):
    low, high = decades(dtype)

    def domain(rng, n):
        half = n // 2
        signs = rng.choice([-1.0, 1.0], n - half)
        return np.concatenate(
            [rng.uniform(-50, 50, half), signs * 10.0 ** rng.uniform(low, high, n - half)]
        )

    worst = check_template(
        expansion("logaddexp", dtype),
        dtype,
        np.logaddexp,
        NUMPY_DISTANCE,
        domain,
        extra=[40.0, -40.0, 1e-20],
        second=logaddexp_operands(dtype),
    )
    assert worst <= bound("logaddexp", dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_logaddexp_cancellation(dtype):
    """Where the result cancels, the error stays within 1.5 ulp of ``max(|x|, |y|, |result|)``.

    Measured 1.12 / 1.22 (float32 / float64); NumPy's own: 2.2 / 1.76 on these pairs.
    """
    rng = np.random.default_rng(2)
    n = 200_000
    larger = rng.uniform(-2 * LN2, 0, n).astype(dtype)
    smaller = (larger - 10.0 ** rng.uniform(-10, 1.7, n)).astype(dtype)
    got = apply(expansion("logaddexp", dtype), larger, smaller)
    want = np.logaddexp(wider(larger), wider(smaller))
    scale = np.spacing(np.maximum(abs(smaller), abs(want.astype(dtype))))
    error = np.abs(got - want) / scale
    assert error.max() <= 1.5, error.max()


@pytest.mark.parametrize("dtype", DTYPES)
def test_log_loop_vectorises(dtype):
    if "avx2" not in llvm.get_host_cpu_features().flatten():
        pytest.skip("no AVX2 on this host: the loop vectorises only with vector FMA")
    loop = elementwise_loop(expansion("log", dtype), 1)
    x = np.ones(16, dtype)
    loop(np.empty_like(x), x)
    asm = loop.inspect_asm(loop.signatures[0])
    assert len(VECTOR_FMA.findall(asm)) >= 3
    if dtype == np.float32:
        assert "cvtss2sd" not in asm and "cvtps2pd" not in asm, "float32 log widened to float64"
