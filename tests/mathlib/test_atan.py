"""Accuracy sweeps and special values of the inverse tangent expansions (mathlib/atan.py)."""

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


def signed_decades(rng, n, low, high):
    return rng.choice([-1.0, 1.0], n) * 10.0 ** rng.uniform(low, high, n)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", DTYPES)
def test_arctan_sweep(dtype):
    decade = float(np.log10(np.finfo(dtype).max))

    def domain(rng, n):
        third = n // 3
        return np.concatenate(
            [
                rng.uniform(-3, 3, third),  # both folds: |x| = 1/2, 1 and 2
                np.tan(rng.uniform(-np.pi / 2, np.pi / 2, third)),  # uniform in the angle
                signed_decades(rng, n - 2 * third, -decade, decade),
            ]
        )

    # the fold boundaries (|x| = 1/2 and 2 swap |x| against 1 and fold at ratio 1/2) and 1
    extra = with_neighbours([0.5, -0.5, 2.0, -2.0, 1.0, -1.0, 1e-20, 1e20], dtype)
    worst = check_template(
        expansion("arctan", dtype), dtype, np.arctan, bound("arctan", dtype), domain, extra=extra
    )
    assert worst <= bound("arctan", dtype)


def arctan2_operands(dtype):
    """Second operands (x of arctan2(y, x)) at all angles to the first, plus unrelated values."""

    def second(rng, y):
        n = y.size
        with np.errstate(all="ignore"):
            wide = y.astype(np.float64)
            at_angle = np.abs(wide) / np.tan(rng.uniform(-np.pi, np.pi, n))
            near_fold = wide * rng.choice([0.5, -0.5, 2.0, -2.0], n) * rng.uniform(0.99, 1.01, n)
            decade = float(np.log10(np.finfo(dtype).max))
            unrelated = signed_decades(rng, n, -decade, decade)
            pick = rng.integers(0, 3, n)
            x = np.where(pick == 0, at_angle, np.where(pick == 1, near_fold, unrelated))
            return x.astype(dtype)

    return second


@pytest.mark.slow
@pytest.mark.parametrize("dtype", DTYPES)
def test_arctan2_sweep(dtype):
    def domain(rng, n):
        return rng.uniform(-10, 10, n) * 10.0 ** rng.uniform(-3, 3, n)

    # magnitudes either side of the 1/4 scaling (2**1000, float32 2**120), crossed with the
    # specials. Powers of two only: the crossed pairs are compared with NumPy's own result, and
    # NumPy's float32 arctan2 is itself up to 1.9 ulp off at pairs such as (0.5, 3).
    scaled = 2.0**1000 if dtype == np.float64 else 2.0**120
    extra = [0.25, -0.25, 8.0, scaled, -scaled, 4 * scaled]
    worst = check_template(
        expansion("arctan2", dtype),
        dtype,
        np.arctan2,
        bound("arctan2", dtype),
        domain,
        extra=extra,
        second=arctan2_operands(dtype),
    )
    assert worst <= bound("arctan2", dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_arctan2_loop_vectorises(dtype):
    if "avx2" not in llvm.get_host_cpu_features().flatten():
        pytest.skip("no AVX2 on this host: the loop vectorises only with vector FMA")
    loop = elementwise_loop(expansion("arctan2", dtype), 2)
    x = np.ones(16, dtype)
    loop(np.empty_like(x), x, x)
    asm = loop.inspect_asm(loop.signatures[0])
    assert len(VECTOR_FMA.findall(asm)) >= 5
    if dtype == np.float32:
        assert "cvtss2sd" not in asm and "cvtps2pd" not in asm, "float32 arctan2 widened to float64"


@pytest.mark.slow
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("ufunc", ["arcsin", "arccos"])
def test_arcsin_arccos_sweep(ufunc, dtype):
    smallest = 16 if dtype == np.float64 else 7

    def domain(rng, n):
        quarter = n // 4
        near_one = 1.0 - 10.0 ** rng.uniform(-smallest, 0, quarter)  # both ends of [-1, 1]
        return np.concatenate(
            [
                rng.uniform(-1, 1, quarter),
                near_one,
                -near_one,
                signed_decades(rng, n - 3 * quarter, -30, 0),
            ]
        )

    extra = [1.0, -1.0, 0.5, -0.5, 1.5, -1.5, 2.0, -2.0]
    worst = check_template(
        expansion(ufunc, dtype), dtype, getattr(np, ufunc), bound(ufunc, dtype), domain, extra=extra
    )
    assert worst <= bound(ufunc, dtype)
