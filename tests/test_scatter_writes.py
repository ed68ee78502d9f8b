"""Writes at positions read from the data (``put``): ``h[b[i]] += 1``, ``L[j + 1] = L[j]`` with
``j`` carried through a while loop, ``out[idx[i], :] = x[i]``, in straight-line code and in
loops kept rolled, with NumPy's casts, broadcasts and IndexError."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import gcompile
from bench.data_programs import insertion_sort  # (the textbook while loop shifting elements)

from .support import check

RNG = np.random.default_rng(7)


def histogram(b, h):
    for i in range(b.shape[0]):
        h[b[i]] += 1
    return h


def buckets(x, idx, out):
    for i in range(x.shape[0]):
        out[idx[i], 1:] = x[i]
        out[idx[i], 0] += 1
    return out


def pairs(A, r, c, w):
    for i in range(r.shape[0]):
        A[r[i], c[i]] += w[i]
    return A.sum()


def straight_line(x, k, v):
    row = x[1]  # a view: the write reaches x
    row[k[0]] = v[0]  # (an int array takes the float value truncated, as NumPy does)
    x[k[1]] = 5.0
    return row.copy(), x


def _rolled(fn, *args) -> bool:
    return all(note.rolled for note in gcompile.trace(fn, *args).notes.loops)


@pytest.mark.parametrize("dtype", [np.int64, np.float64, np.int32])
def test_histogram(dtype):
    b = RNG.integers(-4, 10, 50)
    check(histogram, b, np.zeros(10, dtype))
    check(histogram, b.astype(np.int32), np.ones(10, dtype))
    assert _rolled(histogram, b, np.zeros(10, dtype))


def test_histogram_index_out_of_range_raises_as_numpy():
    b = np.array([1, 2, 10, 0])
    with pytest.raises(IndexError):
        histogram(b, np.zeros(10))
    for backend in ("interpreter", "numba"):
        compiled = gcompile.compile(histogram, backend=backend, fullgraph=True)
        with pytest.raises(IndexError), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compiled(np.array([1, -11, 0]), np.zeros(10))


def test_insertion_sort_in_place():
    for values in (RNG.random(30), np.arange(12.0)[::-1].copy(), np.array([2.0, 1.0])):
        check(insertion_sort, values)
    assert _rolled(insertion_sort, RNG.random(30))


def test_region_beside_a_data_position():
    x = RNG.random(20)
    check(buckets, x, RNG.integers(-5, 5, 20), np.zeros((5, 3)))
    check(buckets, x, RNG.integers(0, 5, 20), np.zeros((5, 4), np.float32))


def test_position_pairs():
    r, c = RNG.integers(-3, 3, 40), RNG.integers(0, 4, 40)
    check(pairs, np.zeros((3, 4)), r, c, RNG.random(40))
    check(pairs, np.zeros((3, 4), np.int64), r, c, RNG.random(40) * 10)


def test_straight_line_through_a_view_and_casts():
    k = np.array([2, -1])
    check(straight_line, RNG.random((3, 4)), k, np.array([7.5]))
    check(straight_line, np.zeros((3, 4), np.int64), k, np.array([-7.9]))
    check(straight_line, np.zeros((3, 4), np.float32), np.array([-4, 0]), np.array([2.5]))


def test_read_only_arguments_refused_and_regions_written_through_as_numpy_does():
    x, k = np.zeros(4), np.array([1])
    x.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        gcompile.trace(histogram, k, x)

    def into_region(A, k):
        row = A[k[0]]  # (NumPy's view: the write is into A, as the graph's)
        row[k[0]] = 1.0
        return A

    check(into_region, np.zeros((3, 3)), k)


def ufunc_at_scatters(x, edges, a, idx, r, c, w):
    """np.add.at and kin (unbuffered: repeated indices accumulate), into 1-d and 2-d arrays."""
    counts = np.zeros(edges.shape[0] - 1, dtype=np.int64)
    np.add.at(counts, np.searchsorted(edges, x) - 1, 1)
    np.add.at(a, idx, x[: idx.shape[0]])
    np.maximum.at(a, idx[:2], 0.5)
    np.negative.at(a, idx[:1])
    grid = np.zeros((4, 4))
    np.add.at(grid, (r, c), w)
    return counts, a, grid


def test_ufunc_at_is_one_loop_of_element_writes():
    edges = np.linspace(0.0, 1.0, 6)
    idx = np.array([1, 3, 1, -1, 5, 1])
    r, c = np.array([0, 1, 1, 3]), np.array([2, 2, 2, 0])
    for x in (RNG.random(8), RNG.random(30)):
        check(ufunc_at_scatters, x, edges, np.zeros(7), idx, r, c, RNG.random(4))
    with pytest.raises(IndexError):
        gcompile.compile(ufunc_at_scatters, backend="interpreter")(
            RNG.random(8), edges, np.zeros(7), np.array([9]), r, c, RNG.random(4)
        )


def region_then_write(A, k):
    """A row read at a data position (NumPy's view), its array then written, the row read:
    refused in a loop body as in straight-line code (the graph's copy would be stale)."""
    s = 0.0
    for i in range(k.shape[0]):
        row = A[k[i]]
        A[k[i], 0] += 1
        s += row[0]
    return s


def test_a_region_read_after_its_array_is_written_in_a_loop_is_refused():
    with pytest.raises(gcompile.UnsupportedError, match="after its array was written"):
        gcompile.compile(region_then_write, fullgraph=True)(
            np.arange(12.0).reshape(4, 3), np.array([1, 2, 1])
        )
    A, k = np.arange(12.0).reshape(4, 3), np.array([1, 2, 1])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", gcompile.GcompileWarning)  # (a graph break)
        assert gcompile.compile(region_then_write)(A.copy(), k) == region_then_write(A.copy(), k)


def escape_times(Z, Xi, Yi, N):
    """npbench's mandelbrot2: the positions a mask gathers from two index arrays written."""
    for i in range(3):
        Z = Z * Z + 0.5
        escaped = np.abs(Z) > 2.0
        N[Xi[escaped], Yi[escaped]] = i + 1
    return N


def gathered_into_positions(x, idx, out):
    m = x > 0.5
    out[idx[m]] = x[m]  # (as many values as positions: one length)
    return out


def test_writes_at_positions_a_mask_gathers():
    rng = np.random.default_rng(11)  # (lengths the data decide: no unrolled trace to bound)
    Xi, Yi = np.mgrid[0:4, 0:4]
    for backend in ("interpreter", "numba"):
        escapes = gcompile.compile(escape_times, backend=backend, fullgraph=True)
        gathers = gcompile.compile(gathered_into_positions, backend=backend, fullgraph=True)
        for Z in (np.linspace(0.0, 1.6, 16), rng.random(16)):
            args = (Z, Xi.ravel(), Yi.ravel())
            expected = escape_times(*args, np.zeros((4, 4), np.int64))
            np.testing.assert_array_equal(escapes(*args, np.zeros((4, 4), np.int64)), expected)
        for n in (8, 9, 1):
            x, idx = rng.random(n), rng.permutation(n)
            expected = gathered_into_positions(x, idx, np.zeros(n))
            np.testing.assert_array_equal(gathers(x, idx, np.zeros(n)), expected)


def marked_with(Xi, Yi, N, counts, idx, k):
    picked = Xi > 1
    N[Xi[picked], Yi[picked]] = k + 1  # (k: an int of the call, the same for every write)
    np.add.at(counts, idx, k)
    counts[idx] += k
    return N, counts


def written_at(a, idx, k):
    a[idx] = k
    return a


def test_an_int_argument_that_varies_between_calls_is_written_at_positions():
    """Once ``k`` took two values it is traced (not a constant of the trace): the writes take
    it as a traced value, with no graph break."""
    Xi, Yi = (a.ravel() for a in np.mgrid[0:4, 0:3])
    idx = np.array([0, 2, 2, 5])
    compiled = gcompile.compile(marked_with, fullgraph=True)
    for k in range(4):
        got = compiled(Xi, Yi, np.zeros((4, 3), np.int64), np.ones(6, np.int64), idx, k)
        expected = marked_with(Xi, Yi, np.zeros((4, 3), np.int64), np.ones(6, np.int64), idx, k)
        for a, b in zip(got, expected):
            assert a.dtype == b.dtype and np.array_equal(a, b)
        assert expected[1][2] == 1 + 3 * k  # (np.add.at adds at a repeated index twice)
    narrow = gcompile.compile(written_at)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", gcompile.GcompileWarning)  # (into int8: eager runs it)
        for k in (5, 100):
            assert narrow(np.zeros(4, np.int8), idx[:2], k).tolist() == [k, 0, k, 0]
        with pytest.raises(OverflowError, match="out of bounds for int8"):
            narrow(np.zeros(4, np.int8), idx[:2], 300)
