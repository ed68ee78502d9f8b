"""BLAS calls of loop programs (``backends/numba/blas.py``) against NumPy's ``@``: matrix-matrix,
matrix-vector and vector-matrix products of operands read in place (rows or columns
contiguous, any leading dimension) or copied (neither axis contiguous, negative strides), in
the four BLAS dtypes, and empty products. One compiled function per dtype and form: every
operand is passed as a layout-free array (Numba's ``A``), whatever its strides."""

from __future__ import annotations

import numba
import numpy as np
import pytest

from gcompile.backends.numba.blas import matmul_into

RNG = np.random.default_rng(3)
DTYPES = [np.float64, np.float32, np.complex128, np.complex64]


def _numba_type(dtype):
    return numba.from_dtype(np.dtype(dtype))


def _compiled(dtype, a_ndim, b_ndim):
    """``matmul_into`` for one dtype and operand ranks, every operand typed ``A``."""
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


@pytest.mark.parametrize("dtype", DTYPES)
def test_products_read_operands_in_place_or_copied(dtype):
    matrix_matrix, matrix_vector, vector_matrix = (
        _compiled(dtype, 2, 2),
        _compiled(dtype, 2, 1),
        _compiled(dtype, 1, 2),
    )
    for m, k, n in ((5, 7, 4), (1, 6, 3), (4, 1, 1), (0, 3, 2), (3, 0, 2), (2, 3, 0)):
        for left in _matrices(dtype, m, k).values():
            for right in _matrices(dtype, k, n).values():
                out = np.full((m, n), 7, dtype)
                matrix_matrix(out, left, right)
                _agrees(out, left, right)
            for vector in _vectors(dtype, k).values():
                out = np.full(m, 7, dtype)
                matrix_vector(out, left, vector)
                _agrees(out, left, vector)
            for vector in _vectors(dtype, m).values():
                out = np.full(k, 7, dtype)
                vector_matrix(out, vector, left)
                _agrees(out, vector, left)
