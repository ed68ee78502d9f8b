"""Accuracy sweeps and special values of the exp, exp2 and expm1 expansions (mathlib/exp.py)."""

from __future__ import annotations

import re

import llvmlite.binding as llvm
import numpy as np
import pytest

from gcompile.backends.numba.mathlib import exp
from tests.mathlib.sweep import (
    apply,
    bound,
    check_template,
    elementwise_loop,
    expansion,
    special_values,
    wider,
    with_neighbours,
)

# These tests read machine code and NaN signs: compiled at the users' LLVM level (conftest.py).
pytestmark = pytest.mark.optimized

TEMPLATES = {template.ufunc: template for template in exp.TEMPLATES}
DTYPES = [np.float32, np.float64]
VECTOR_FMA = re.compile(r"\bvfn?m(?:add|sub)\w*p[sd]\s+[^\n]*%[yz]mm")

# float64 / float32 thresholds (NumPy's): the last finite result, the last non-zero one, the
# first subnormal one
OVERFLOW = {np.float64: 709.782712893384, np.float32: 88.72283}
UNDERFLOW = {np.float64: -745.1332191019411, np.float32: -103.97208}
SUBNORMAL = {np.float64: -708.3964185322641, np.float32: -87.33655}


def correctly_rounded(ufunc):
    """``ufunc`` in the wider type, rounded: NumPy's specials without NumPy's rounding errors.

    NumPy's own float32 exp and expm1 are a unit in the last place off at 1.0, 2.0 and -2**-24,
    points the sweep's special-value check compares with ``bound`` (< 1); they are compared with
    the correctly rounded result instead, and ``test_specials_match_numpy`` checks NumPy's own
    non-finite and zero results exactly.
    """

    def rounded(x):
        return ufunc(wider(x)).astype(x.dtype)

    return rounded


def exp_domain(low, high, dtype):
    """Uniform over [low, high] (the whole finite-result range), near 0, and tiny magnitudes."""
    tiny = np.log10(np.finfo(dtype).smallest_subnormal)

    def domain(rng, n):
        third = n // 3
        return np.concatenate(
            [
                rng.uniform(low, high, third),
                rng.uniform(-2, 2, third),
                rng.choice([-1.0, 1.0], n - 2 * third)
                * 10.0 ** rng.uniform(tiny, 0, n - 2 * third),
            ]
        )

    return domain


def sweep(ufunc, dtype, domain, extra):
    numpy_function = getattr(np, ufunc)
    return check_template(
        expansion(ufunc, dtype),
        dtype,
        correctly_rounded(numpy_function),
        bound(ufunc, dtype),
        domain,
        reference=numpy_function,
        extra=extra,
    )


@pytest.mark.slow
@pytest.mark.parametrize("dtype", DTYPES)
def test_exp_sweep(dtype):
    extra = with_neighbours(
        [OVERFLOW[dtype], UNDERFLOW[dtype], SUBNORMAL[dtype], np.log(2) / 2], dtype
    )
    domain = exp_domain(UNDERFLOW[dtype] - 1, OVERFLOW[dtype] + 1, dtype)
    worst = sweep("exp", dtype, domain, extra)
    assert worst <= bound("exp", dtype)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", DTYPES)
def test_exp2_sweep(dtype):
    info = np.finfo(dtype)
    lowest = float(np.log2(info.smallest_subnormal))  # -1074 / -149
    # integers are exact; 2**-1075 (a tie) rounds to 0. float32 stops at -149: NumPy's exp2 flushes
    # (-149.5, -149] to 0 where the correctly rounded result is the smallest subnormal
    extra = with_neighbours([info.maxexp, info.minexp, lowest, 0.5, -0.5, 3.0, -3.0], dtype)
    extra = np.concatenate([extra, np.asarray([lowest - 1, lowest - 2, 1e4, -1e4], dtype)])
    domain = exp_domain(lowest - 2, info.maxexp + 1, dtype)
    worst = sweep("exp2", dtype, domain, extra)
    assert worst <= bound("exp2", dtype)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", DTYPES)
def test_expm1_sweep(dtype):
    # -1 is reached (rounded) near -37.4 / -17.3; tiny arguments return themselves
    eps = np.finfo(dtype).eps
    extra = with_neighbours(
        [OVERFLOW[dtype], -37.5, -17.3, -40.0, -20.0, eps / 2, -eps / 2, 1e-30, 0.35, -0.35],
        dtype,
    )
    domain = exp_domain(-50, OVERFLOW[dtype] + 1, dtype)
    worst = sweep("expm1", dtype, domain, extra)
    assert worst <= bound("expm1", dtype)


@pytest.mark.parametrize("ufunc", sorted(TEMPLATES))
@pytest.mark.parametrize("dtype", DTYPES)
def test_specials_match_numpy(ufunc, dtype):
    """Where NumPy's own result is NaN, infinite or zero, the expansion's is the same."""
    info = np.finfo(dtype)
    lowest = float(np.log2(info.smallest_subnormal))
    # not the neighbours of exp2's lowest - 1: NumPy's float32 exp2 flushes (-150, -149.5] to 0
    x = np.concatenate(
        [
            special_values(dtype),
            with_neighbours([OVERFLOW[dtype], UNDERFLOW[dtype], info.maxexp, lowest - 2], dtype),
            np.asarray([lowest - 1, -1e4, -40.0, -20.0, 1e4], dtype),
        ]
    )
    got = apply(expansion(ufunc, dtype), x)
    with np.errstate(all="ignore"):
        want = getattr(np, ufunc)(x)
    special = ~np.isfinite(want) | (want == 0)
    assert np.array_equal(got[special], want[special], equal_nan=True)
    assert np.array_equal(np.signbit(got[special]), np.signbit(want[special]))


def test_expm1_keeps_tiny_arguments():
    for dtype in DTYPES:
        tiny = np.asarray([-0.0, 1e-30, -1e-30, np.finfo(dtype).smallest_subnormal], dtype)
        out = np.empty_like(tiny)
        elementwise_loop(expansion("expm1", dtype), 1)(out, tiny)
        assert np.array_equal(out, tiny) and np.signbit(out[0])


@pytest.mark.parametrize("dtype", DTYPES)
def test_exp_vectorises(dtype):
    if "avx2" not in llvm.get_host_cpu_features().flatten():
        pytest.skip("host has no AVX2: LLVM keeps the loop scalar")
    loop = elementwise_loop(expansion("expm1", dtype), 1)
    x = np.linspace(-3, 3, 64).astype(dtype)
    loop(np.empty_like(x), x)
    asm = "".join(loop.inspect_asm().values())
    assert len(VECTOR_FMA.findall(asm)) >= 10
    assert "cvtss2sd" not in asm and "cvtsd2ss" not in asm  # float32 stays float32
