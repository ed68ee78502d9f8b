"""BLAS calls of loop programs (``backends/numba/blas.py``) against NumPy's ``@``: matrix-matrix,
matrix-vector and vector-matrix products of operands read in place (rows or columns
contiguous, any leading dimension) or copied (neither axis contiguous, negative strides), in
the four BLAS dtypes, and empty products. One compiled function per dtype and form: every
operand is passed as a layout-free array (Numba's ``A``), whatever its strides."""

from __future__ import annotations

import ctypes
import functools
import glob
import os

import numba
import numpy as np
import pytest

from gcompile.backends.numba import blas
from gcompile.backends.numba.blas import matmul_into

RNG = np.random.default_rng(3)


def _numba_type(dtype):
    return numba.from_dtype(np.dtype(dtype))


@functools.cache
def _compiled(dtype, a_ndim, b_ndim):
    """``matmul_into`` for one dtype and operand ranks, every operand typed ``A`` (compiled
    once per test run)."""
    item = _numba_type(dtype)
    a, b = (numba.types.Array(item, n, "A") for n in (a_ndim, b_ndim))
    out = numba.types.Array(item, max(a_ndim + b_ndim - 2, 1), "C")

    @numba.njit(numba.void(out, a, b))
    def run(out, a, b):
        matmul_into(out, a, b)

    return run


def _values(shape, dtype):
    values = RNG.uniform(-1, 1, shape)
    if np.dtype(dtype).kind == "c":
        values = values + 1j * RNG.uniform(-1, 1, shape)
    return values.astype(dtype)


def _matrices(dtype, rows, columns):
    """(rows x columns) operands: rows contiguous, columns contiguous, both strided, reversed."""
    big = _values((2 * rows + 3, 2 * columns + 3), dtype)
    transposed = _values((2 * columns + 3, 2 * rows + 3), dtype).T
    return {
        "rows contiguous": big[1 : rows + 1, 2 : columns + 2],
        "columns contiguous": transposed[2 : rows + 2, 1 : columns + 1],
        "neither contiguous": big[: 2 * rows : 2, : 2 * columns : 2],
        "reversed rows": big[rows - 1 :: -1, :columns] if rows else big[:0, :columns],
    }


def _vectors(dtype, size):
    big = _values(2 * size + 1, dtype)
    reversed_ = big[size - 1 :: -1] if size else big[:0]
    return {"contiguous": big[1 : size + 1], "strided": big[: 2 * size : 2], "reversed": reversed_}


def _agrees(actual, a, b):
    """Within the error bound of a k-term product summed in any order, for both results
    (Higham 3.5: ``k u |a| @ |b|`` each; complex products round up to four times)."""
    expected = a @ b
    assert actual.dtype == expected.dtype and actual.shape == expected.shape
    k = a.shape[-1]
    unit = np.finfo(actual.real.dtype).eps / 2
    bound = 2 * 4 * (k + 1) * unit * (np.abs(a).astype(np.float64) @ np.abs(b).astype(np.float64))
    assert np.all(np.abs(actual - expected) <= bound), np.max(np.abs(actual - expected))


# (dtype, forms): every form in double precision, one form each in single (the BLAS routine's
# letter is the only difference; each compiled form costs a Numba compile)
CASES = [
    (np.float64, ("matrix @ matrix", "matrix @ vector", "vector @ matrix")),
    (np.complex128, ("matrix @ matrix", "matrix @ vector", "vector @ matrix")),
    (np.float32, ("matrix @ matrix",)),
    (np.complex64, ("vector @ matrix",)),
]


@pytest.mark.parametrize("dtype, forms", CASES)
def test_products_read_operands_in_place_or_copied(dtype, forms):
    for m, k, n in ((5, 7, 4), (1, 6, 3), (4, 1, 1), (0, 3, 2), (3, 0, 2), (2, 3, 0)):
        for left in _matrices(dtype, m, k).values():
            for form in forms:
                _check_form(form, dtype, left, m, k, n)


def _check_form(form: str, dtype, left, m: int, k: int, n: int) -> None:
    """``form`` with ``left`` (m x k) on every operand of the other side, against NumPy."""
    if form == "matrix @ matrix":
        run, others, shape = _compiled(dtype, 2, 2), _matrices(dtype, k, n), (m, n)
    elif form == "matrix @ vector":
        run, others, shape = _compiled(dtype, 2, 1), _vectors(dtype, k), (m,)
    else:
        run, others, shape = _compiled(dtype, 1, 2), _vectors(dtype, m), (k,)
    for other in others.values():
        a, b = (other, left) if form == "vector @ matrix" else (left, other)
        out = np.full(shape, 7, dtype)
        run(out, a, b)
        _agrees(out, a, b)


def test_scipys_openblas_runs_one_thread_once_a_program_calls_it():
    """(Two threads of SciPy's OpenBLAS stalled a program of small products ~150x, at random.)"""
    assert blas.available() is None
    if blas.threads() is None:
        pytest.skip("SciPy's BLAS is not an OpenBLAS of its wheel here")
    import scipy

    folder = os.path.join(os.path.dirname(scipy.__file__), os.pardir, "scipy.libs")
    (path,) = glob.glob(os.path.join(folder, "libscipy_openblas*.so*"))
    assert ctypes.CDLL(path).scipy_openblas_get_num_threads() == 1
