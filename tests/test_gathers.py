"""Elements read at positions that come from the data (``x[idx[i]]``, ``A[perm[i], j]``): one
``element`` node each, in loops that stay rolled, with NumPy's IndexError out of range."""

import numpy as np
import pytest

import gcompile
from gcompile.ir import ops
from gcompile.ir.subgraph import loop_of, walk

from .support import check

RNG = np.random.default_rng(11)


def gather_sum(x, idx):
    total = 0.0
    for i in range(idx.shape[0]):
        total += x[idx[i]]
    return total


def permute_rows(A, perm):
    out = np.empty_like(A)
    for i in range(perm.shape[0]):
        for j in range(A.shape[1]):
            out[i, j] = A[perm[i], j]
    return out


def test_gathers_in_rolled_loops_agree_with_numpy():
    x = RNG.random(30)
    check(gather_sum, x, RNG.integers(-30, 30, 40))
    check(permute_rows, RNG.random((6, 5)), RNG.permutation(6).astype(np.int32))
    graph = gcompile.trace(gather_sum, x, RNG.integers(0, 30, 40))
    members = list(walk(graph))
    assert any(loop_of(v.node) for v in members)
    assert sum(v.node.target is ops.ELEMENT for v in members) == 1


@pytest.mark.parametrize("backend", ["interpreter", "numba"])
def test_a_position_out_of_range_raises_index_error(backend):
    fn = gcompile.compile(gather_sum, backend=backend, fullgraph=True)
    x = RNG.random(10)
    assert fn(x, np.array([9, -10] * 20)) == gather_sum(x, np.array([9, -10] * 20))
    for bad in ([3, 10] * 20, [-11] * 40):
        with pytest.raises(IndexError, match="out of bounds for axis 0"):
            fn(x, np.array(bad))


def test_a_slice_beside_a_data_position_is_refused():
    def row(A, k):
        return A[k[0], :] * 2.0

    with pytest.raises(gcompile.UnsupportedError, match="traced integer"):
        gcompile.compile(row, fullgraph=True)(np.ones((3, 4)), np.array([1]))


def csr_matvec(indptr, indices, data, x):
    y = np.zeros(indptr.shape[0] - 1)
    for i in range(indptr.shape[0] - 1):
        total = 0.0
        for k in range(indptr[i], indptr[i + 1]):  # bounds read from the data
            total += data[k] * x[indices[k]]
        y[i] = total
    return y


def test_a_loop_over_bounds_read_from_the_data_is_a_while_loop():
    dense = RNG.random((7, 9)) * (RNG.random((7, 9)) < 0.4)
    rows, cols = np.nonzero(dense)
    indptr = np.searchsorted(rows, np.arange(8))
    check(csr_matvec, indptr, cols, dense[rows, cols], RNG.random(9))
    graph = gcompile.trace(csr_matvec, indptr, cols, dense[rows, cols], RNG.random(9))
    assert any(v.node.target.name == "while_loop" for v in walk(graph) if v.node.op == "call")


def integer_array_gathers(x, idx, grid):
    return x[idx] * 2 + 1, grid[idx].sum(axis=1), x[[0, 2, -1]], np.take(grid, idx[:2] % 4, axis=1)


def gathers_in_a_loop(x, idx, steps):
    for _ in range(steps):
        x = 0.5 * (x + x[idx])
    return x


def test_integer_array_gathers_are_library_calls_that_agree_with_numpy():
    x, grid = RNG.random(12), RNG.random((12, 4))
    for idx in (np.array([1, -2, 3, 11]), RNG.integers(-12, 12, (2, 3)).astype(np.int32)):
        check(integer_array_gathers, x, idx.ravel(), grid)
    check(gathers_in_a_loop, x, RNG.permutation(12), 5)
    graph = gcompile.trace(integer_array_gathers, x, np.array([1, 2]), grid)
    assert sum(node.target is ops.EXTERN for node in graph.nodes) == 4


def test_an_integer_array_gather_out_of_range_raises_numpys_error():
    fn = gcompile.compile(integer_array_gathers, fullgraph=True)
    x, grid = RNG.random(12), RNG.random((12, 4))
    fn(x, np.array([0, 1]), grid)
    with pytest.raises(IndexError, match="index 12 is out of bounds for axis 0 with size 12"):
        fn(x, np.array([0, 12]), grid)


def binned_sum(x, positions):
    total = 0.0
    for i in range(positions.shape[0]):
        total += x[int(positions[i] * 4)]  # (int() of data: a Python int, truncated)
    return total


def test_int_of_data_indexes_and_raises_pythons_errors():
    x = RNG.random(8)
    check(binned_sum, x, RNG.random(30) * 1.9)
    fn = gcompile.compile(binned_sum, fullgraph=True)
    with pytest.raises(ValueError, match="cannot convert float NaN to integer"):
        fn(x, np.array([0.5, np.nan, 0.1]))
    with pytest.raises(OverflowError, match="cannot convert float infinity"):
        fn(x, np.array([0.5, np.inf, 0.1]))
