"""The online-max loop (``loops/online.py``): logsumexp and log-softmax in one pass over
each row. Values against an exact (long double) reference within the error bound the module
documents, computed per row from the data; special values (rows of -inf, +inf, NaN, magnitudes
whose plain exps overflow or underflow) as NumPy gives them; one pass in the generated code;
results that do not depend on the number of threads."""

from __future__ import annotations

import math
import re

import numba
import numpy as np
import pytest

import gcompile
from gcompile.backends.numba import mathlib
from gcompile.loops import online
from gcompile.loops.blocks import BLOCK

LENGTHS = (1, 7, 8, 129, 1000, 16500)  # 16500: over 128 blocks, so block sums are grouped
EXACT = np.longdouble
U64 = 2.0**-53


def logsumexp(x):
    m = np.max(x, axis=-1, keepdims=True)
    return m + np.log(np.sum(np.exp(x - m), axis=-1, keepdims=True))


def logsumexp_rows(x):  # as bench/vector_math.py writes it: the max without keepdims, re-broadcast
    m = x.max(axis=1, keepdims=True)
    return np.log(np.sum(np.exp(x - m), axis=1)) + m[:, 0]


def log_softmax(x):
    shifted = x - x.max(axis=1, keepdims=True)
    return shifted - np.log(np.sum(np.exp(shifted), axis=1, keepdims=True))


def softmax(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def _compiled(fn, **options):
    # one serial kernel per dtype for every length (16500 * 10 elements would go parallel)
    return gcompile.compile(fn, fullgraph=True, options={"parallel_threshold": 10**9, **options})


def _rows(n: int, dtype) -> np.ndarray:
    """Rows of length ``n``: plain, special values, and magnitudes where exp(x) alone fails."""
    rng = np.random.default_rng(n)
    big = math.log(np.finfo(dtype).max) + 10  # exp(big) overflows, exp(-big) underflows
    x = rng.standard_normal((10, n)) * 5
    x[1] = -np.inf
    x[2, n // 2] = np.inf
    x[3, n // 3] = np.nan
    x[4, ::2] = -np.inf
    x[5] += big
    x[6] -= big
    x[7] = np.sort(x[7]) * 50  # the max keeps rising: many moves of the reference
    x[8] = np.where(rng.random(n) < 0.5, -1.0, 1.0) * float(np.finfo(dtype).max) / 2
    x[9] *= 1e-30
    return x.astype(dtype)


def _rescales(row: np.ndarray) -> int:
    """How often the online loop moves its reference max over ``row`` (module docstring)."""
    ref, moves = -np.inf, 0
    for start in range(0, row.size, BLOCK):
        top = row[start : start + BLOCK].max()
        if not (top <= ref + online.SLACK and ref > -np.inf) and np.isfinite(top):
            ref, moves = top, moves + 1
    return moves


def _exact_and_bound(row: np.ndarray) -> tuple:
    """``(M, log S, bound on the error of our log S)`` for a row with a finite max ``M``, where
    ``S = sum(exp(x - M))``: the bound is ``online``'s, from first-order error terms."""
    u = float(np.finfo(row.dtype).eps) / 2
    top = EXACT(row.max())
    shifted = row.astype(EXACT) - top
    terms = np.exp(shifted)
    total = terms.sum()
    spread = float(np.sum(terms * np.abs(np.where(np.isinf(shifted), 0, shifted))) / total)
    exp_ulps = mathlib.TEMPLATES["exp"].ulps[row.dtype == np.float64]
    depth = 27 + math.ceil(row.size / BLOCK)  # lane sums, block sums, groups of blocks
    relative = (
        u * (online.SLACK + spread)  # the rounding of x - ref
        + 2 * exp_ulps * u  # the exps
        + depth * U64  # positive terms summed in float64
        + 3 * U64 * (_rescales(row) + 1)  # the scalings
        + u  # the sum rounded to the dtype
    )
    log_total = np.log(total)
    bound = relative / (1 - relative) + 2 * u * abs(float(log_total))  # and the log's error
    return top, log_total, bound


def _check_rows(x: np.ndarray, got: np.ndarray, expected: np.ndarray, exact_row) -> None:
    """NaN where NumPy has NaN, the rest within the per-row bound of ``exact_row``."""
    assert got.dtype == expected.dtype and got.shape == expected.shape
    np.testing.assert_array_equal(np.isnan(got), np.isnan(expected))
    for i, row in enumerate(x):
        if not np.isfinite(row.max()):
            assert np.isnan(got[i]).all(), f"row {i}: NumPy's x - max has a NaN"
            continue
        reference, bound = exact_row(row)
        finite = np.isfinite(reference)
        np.testing.assert_array_equal(got[i][~finite], reference[~finite].astype(x.dtype))
        error = np.abs(got[i][finite].astype(EXACT) - reference[finite])
        assert (error <= bound[finite]).all(), (
            f"row {i}: error {float(error.max()):.3g} over the bound {float(bound.min()):.3g}"
        )


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_logsumexp_is_within_the_online_bound_and_nan_where_numpy(dtype):
    u = float(np.finfo(dtype).eps) / 2
    fn, rows_fn = _compiled(logsumexp), _compiled(logsumexp_rows)

    def exact_row(row):
        top, log_total, bound = _exact_and_bound(row)
        value = top + log_total
        return np.array([value]), np.array([bound + u * abs(float(value))])  # and the final add

    for n in LENGTHS:
        x = _rows(n, dtype)
        with np.errstate(invalid="ignore", over="ignore"):
            expected, expected_rows = logsumexp(x), logsumexp_rows(x)
        _check_rows(x, fn(x), expected, exact_row)
        _check_rows(x, rows_fn(x)[:, None], expected_rows[:, None], exact_row)
    assert "ref_" in fn.code and "ref_" in rows_fn.code  # (both ran the online loop)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_log_softmax_shares_the_online_loop(dtype):
    u = float(np.finfo(dtype).eps) / 2
    fn = _compiled(log_softmax)

    def exact_row(row):
        top, log_total, bound = _exact_and_bound(row)
        shifted = row.astype(EXACT) - top
        value = shifted - log_total
        # x - max rounded, then its difference with log S rounded
        return value, bound + u * np.abs(shifted) + u * np.abs(value)

    for n in (7, 1000):
        x = _rows(n, dtype)
        with np.errstate(invalid="ignore", over="ignore"):
            expected = log_softmax(x)
        _check_rows(x, fn(x), expected, exact_row)
    assert "_s.shifted_exp_f" in fn.code


def _row_passes(code: str) -> int:
    """Loops over a row's blocks in the generated kernel."""
    return len(re.findall(r"for b\d+ in range\(0, n\d+, \d+\)", code.split("def kernel")[1]))


def test_the_kernel_reads_each_row_once_with_vector_exps():
    x = np.random.default_rng(0).standard_normal((4, 300))
    fn = _compiled(logsumexp_rows)
    fn(x)
    assert _row_passes(fn.code) == 1
    assert "_m.exp_f64(" in fn.code and "_s.shifted_exp_f64(" in fn.code
    assert "_s.float_lane_max(" in fn.code and "_s.float_lane_sum(" in fn.code


def test_an_exp_used_beyond_the_sum_keeps_two_passes():
    # softmax divides by the sum: its exps must be taken against the row's final max
    x = np.random.default_rng(0).standard_normal((4, 300))
    fn = _compiled(softmax)
    np.testing.assert_allclose(fn(x), softmax(x), rtol=1e-15)
    assert "ref_" not in fn.code and _row_passes(fn.code) == 2


def test_results_do_not_depend_on_the_thread_count():
    x = _rows(3000, np.float64)
    fn = gcompile.compile(logsumexp, fullgraph=True, options={"parallel_threshold": 1})
    threads = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = fn(x)
        numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
        every = fn(x)
    finally:
        numba.set_num_threads(threads)
    assert "prange(" in fn.code and "ref_" in fn.code
    np.testing.assert_array_equal(one, every)
