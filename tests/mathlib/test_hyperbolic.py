"""Accuracy sweeps and special values of the tanh, sinh and cosh expansions (hyperbolic.py)."""

from __future__ import annotations

import re

import llvmlite.binding as llvm
import numpy as np
import pytest

from gcompile.backends.numba.mathlib import hyperbolic
from tests.mathlib.sweep import (
    apply,
    bound,
    check_template,
    elementwise_loop,
    expansion,
    special_values,
    wider,
)

# These tests read machine code and NaN signs: compiled at the users' LLVM level (conftest.py).
pytestmark = pytest.mark.optimized

TEMPLATES = {template.ufunc: template for template in hyperbolic.TEMPLATES}
DTYPES = [np.float32, np.float64]
VECTOR_FMA = re.compile(r"\bvfn?m(?:add|sub)\w*p[sd]\s+[^\n]*%[yz]mm")

# NumPy's last finite sinh and cosh (e**x / 2 overflows there, e**x earlier)
OVERFLOW = {np.float64: 710.4758600739439, np.float32: 89.415985}
# where tanh rounds to 1, and where the expansion stops computing e**(2|x|)
TANH_ONE = {np.float64: 19.06, np.float32: 9.01}
TANH_CAP = {np.float64: float(hyperbolic.TANH_CAP_F64), np.float32: float(hyperbolic.TANH_CAP_F32)}


def correctly_rounded(ufunc):
    """``ufunc`` in the wider type, rounded: NumPy's specials, without NumPy's float32 errors.

    The sweep's special-value check allows ``bound`` ulp from this function's result; NumPy's
    own float32 tanh is off by more than that at some points. ``test_specials_match_numpy``
    checks NumPy's own non-finite and zero results exactly.
    """

    def rounded(x):
        return ufunc(wider(x)).astype(x.dtype)

    return rounded


def with_neighbours(values, dtype):
    points = np.asarray(values, dtype)
    points = np.concatenate([points, -points])
    return np.concatenate([points, np.nextafter(points, -np.inf), np.nextafter(points, np.inf)])


def domain_up_to(limit, dtype):
    """Uniform in [-limit, limit], in [-2, 2] (both branches), and signed tiny magnitudes."""
    tiny = np.log10(np.finfo(dtype).smallest_subnormal)

    def domain(rng, n):
        third = n // 3
        return np.concatenate(
            [
                rng.uniform(-limit, limit, third),
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
def test_tanh_sweep(dtype):
    small = float(hyperbolic.TANH_SMALL_F64)  # the branch boundary, 0.55 in both dtypes
    extra = with_neighbours([small, TANH_ONE[dtype], TANH_CAP[dtype], 1e-30], dtype)
    worst = sweep("tanh", dtype, domain_up_to(25, dtype), extra)
    assert worst <= bound("tanh", dtype)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", DTYPES)
def test_sinh_sweep(dtype):
    small = float(hyperbolic.SINH_SMALL_F64)
    extra = with_neighbours([small, OVERFLOW[dtype], 1e-30], dtype)
    worst = sweep("sinh", dtype, domain_up_to(OVERFLOW[dtype] + 1, dtype), extra)
    assert worst <= bound("sinh", dtype)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", DTYPES)
def test_cosh_sweep(dtype):
    extra = with_neighbours([OVERFLOW[dtype], 1e-30], dtype)
    worst = sweep("cosh", dtype, domain_up_to(OVERFLOW[dtype] + 1, dtype), extra)
    assert worst <= bound("cosh", dtype)


@pytest.mark.parametrize("ufunc", sorted(TEMPLATES))
@pytest.mark.parametrize("dtype", DTYPES)
def test_specials_match_numpy(ufunc, dtype):
    """Where NumPy's own result is NaN, infinite, zero or +-1, the expansion's is the same."""
    x = np.concatenate(
        [special_values(dtype), with_neighbours([OVERFLOW[dtype], TANH_ONE[dtype] * 2], dtype)]
    )
    got = apply(expansion(ufunc, dtype), x)
    with np.errstate(all="ignore"):
        want = getattr(np, ufunc)(x)
    special = ~np.isfinite(want) | (want == 0) | (np.abs(want) == 1)
    assert np.array_equal(got[special], want[special], equal_nan=True)
    assert np.array_equal(np.signbit(got[special]), np.signbit(want[special]))


@pytest.mark.parametrize("dtype", DTYPES)
def test_tanh_vectorises(dtype):
    if "avx2" not in llvm.get_host_cpu_features().flatten():
        pytest.skip("host has no AVX2: LLVM keeps the loop scalar")
    loop = elementwise_loop(expansion("tanh", dtype), 1)
    x = np.linspace(-3, 3, 64).astype(dtype)
    loop(np.empty_like(x), x)
    asm = "".join(loop.inspect_asm().values())
    assert len(VECTOR_FMA.findall(asm)) >= 10
    assert "cvtss2sd" not in asm and "cvtsd2ss" not in asm  # float32 stays float32
