"""mathlib: the branch-free exp against NumPy over 10**6 inputs, special values, vectorisation."""

from __future__ import annotations

import re

import numpy as np
import pytest
from llvmlite import binding
from numba import njit

import gcompile
from gcompile.backends.numba import mathlib

SPECIALS = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 5e-324, -5e-324, 1e-300, -1e-300]
THRESHOLDS_64 = [
    709.782712893384,
    709.7827128933841,
    -745.1332191019411,
    -745.1332191019412,
    -708.3964185322641,
    710.0,
    -746.0,
    1000.0,
    -1000.0,
]
THRESHOLDS_32 = [88.72283, 88.72284, -103.97208, -103.97209, -87.33655, 89.0, -104.0]


@njit(error_model="numpy")
def _exp64(out, x):
    for i in range(x.size):
        out[i] = mathlib.exp64(x[i])


@njit(error_model="numpy")
def _exp32(out, x):
    for i in range(x.size):
        out[i] = mathlib.exp32(x[i])


def _inputs(dtype, thresholds):
    """Random bit patterns over every finite value, the function's domain, and special values."""
    rng = np.random.default_rng(0)
    width = np.dtype(dtype).itemsize * 8
    ints = np.uint64 if width == 64 else np.uint32
    bits = rng.integers(0, np.iinfo(ints).max, 500_000, dtype=ints).view(dtype)
    domain = rng.uniform(-750 if width == 64 else -105, 715 if width == 64 else 90, 500_000)
    return np.concatenate([bits, domain.astype(dtype), np.array(SPECIALS + thresholds, dtype)])


def _ulps(actual, reference, dtype):
    with np.errstate(all="ignore"):  # a float64 reference beyond float32's range rounds to inf
        rounded = reference.astype(dtype)
        distance = np.abs(actual.astype(np.float64) - reference) / np.spacing(np.abs(rounded))
    same = (actual == rounded) | (np.isnan(actual) & np.isnan(rounded))
    return np.where(same, 0.0, distance)


def test_exp_float64_is_within_one_ulp_of_numpy_and_special_values_match():
    x = _inputs(np.float64, THRESHOLDS_64)
    out = np.empty_like(x)
    _exp64(out, x)
    with np.errstate(all="ignore"):
        expected = np.exp(x)
    assert float(np.max(_ulps(out, expected, np.float64))) <= 1.0  # documented bound
    special = np.array(SPECIALS + THRESHOLDS_64)
    got = np.empty_like(special)
    _exp64(got, special)
    with np.errstate(all="ignore"):
        want = np.exp(special)
    exact = (got == want) | (np.isnan(got) & np.isnan(want))
    assert np.all(exact | (_ulps(got, want, np.float64) <= 1.0)), list(zip(special, got, want))
    assert np.all(np.isinf(got) == np.isinf(want)) and np.all((got == 0) == (want == 0))


def test_exp_float32_rounds_once_from_float64():
    x = _inputs(np.float32, THRESHOLDS_32)
    out = np.empty_like(x)
    _exp32(out, x)
    with np.errstate(all="ignore"):
        reference = np.exp(x.astype(np.float64))
    assert float(np.max(_ulps(out, reference, np.float32))) <= 0.6
    with np.errstate(all="ignore"):
        numpy = np.exp(x)
    assert np.array_equal(np.isinf(out), np.isinf(numpy)) and np.array_equal(out == 0, numpy == 0)


def test_kernels_use_it_where_the_loop_can_vectorise():
    x = np.linspace(-3, 3, 64)
    pointwise = gcompile.compile(lambda a: np.exp(-a * a) * 0.5 + a, fullgraph=True)
    np.testing.assert_allclose(pointwise(x), np.exp(-x * x) * 0.5 + x, rtol=1e-15)
    assert "_m.exp_f64(" in pointwise.code
    summing = gcompile.compile(lambda a: np.sum(np.exp(a)), fullgraph=True)
    assert summing(x) == pytest.approx(np.sum(np.exp(x)), rel=1e-14)
    assert "math.exp(" in summing.code and "_m.exp" not in summing.code


@pytest.mark.skipif(
    "avx2" not in binding.get_host_cpu_features().flatten(), reason="the CPU has no AVX2"
)
def test_a_loop_calling_exp_is_vectorised():
    asm = next(iter(_exp64.inspect_asm().values()))
    vector_ops = re.findall(r"\bv(?:mul|add|sub|fmadd\w*)pd\s+%[yz]mm", asm)
    assert len(vector_ops) >= 10, "the exp loop did not vectorise"
