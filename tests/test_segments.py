"""Slices with bounds read from the data (``frontend/segments.py``): ``x[lo:hi]`` of a traced
``lo``/``hi`` is the loop reading it. Reductions, products, gathers and elementwise math on it
compile and agree with NumPy at every kind of bound (negative, past the end, crossed), with
NumPy's errors; uses that need its length are refused, naming the line."""

import warnings

import numpy as np
import pytest

import gcompile
from gcompile.ir.control import WhileLoop

from .support import check

RNG = np.random.default_rng(31)


def csr_product(indptr, indices, data, x):
    """The CSR product as npbench writes it (slices of the row, a gather, ``@``)."""
    y = np.empty(indptr.size - 1, data.dtype)
    for i in range(indptr.size - 1):
        cols = indices[indptr[i] : indptr[i + 1]]
        vals = data[indptr[i] : indptr[i + 1]]
        y[i] = vals @ x[cols]
    return y


def row_statistics(indptr, data, scale):
    n = indptr.shape[0] - 1
    sums, means = np.zeros(n), np.zeros(n)
    counts = np.zeros(n, np.int64)
    for i in range(n):
        row = data[indptr[i] : indptr[i + 1]]
        sums[i] = np.sum(row * scale + 1.0)
        means[i] = row.mean()
        counts[i] = np.count_nonzero(row > 0.5)
    return sums, means, counts


def bounded(x, lo, hi):
    """Every reduction of one segment, at bounds the test varies."""
    s = x[lo:hi]
    return (
        s.sum(),
        np.prod(s),
        (s > 0).any(),
        np.all(s > -40),
        s.size,
        np.dot(s, s),
        x[lo:].sum(),
        x[:hi].mean(),
        np.where(s > 2, s, -s).astype(np.float32).sum(),
    )


def extremes(x, lo, hi):
    return x[lo:hi].max(), np.min(x[lo:hi] - 1)


def paired(x, y, a, b, c, d):
    return (x[a:b] * y[c:d]).sum()


def product(x, y, a, b, c, d):
    return x[a:b] @ y[c:d]


def gathered(x, idx, lo, hi):
    return x[idx[lo:hi]].sum()


def _points(n):
    """Bounds of every kind for an array of ``n``: inside, negative, past the end, crossed."""
    return [(2, 7), (0, n), (-5, -1), (-100, 3), (4, 100), (6, 2), (n, n + 3), (3, 4)]


def test_the_csr_product_is_one_program_and_agrees():
    for rows, cols, density in ((40, 50, 0.1), (7, 3, 0.5), (30, 30, 0.0)):
        dense = RNG.random((rows, cols)) * (RNG.random((rows, cols)) < density)
        indptr = np.concatenate([[0], np.cumsum((dense != 0).sum(axis=1))]).astype(np.uint32)
        indices = np.nonzero(dense)[1].astype(np.uint32)
        x = RNG.random(cols)
        # (NumPy's @ of a row is BLAS's dot, whose order of adding depends on the machine's
        # kernel; of at most `cols` positive terms, any order is within 2 * cols ulp)
        check(csr_product, indptr, indices, dense[dense != 0], x, ulps=2 * cols)
    graph = gcompile.trace(csr_product, indptr, indices, dense[dense != 0], x)
    bodies = [n.target for n in graph.nodes if hasattr(n.target, "regions")]
    inner = [n.target for b in bodies for r in b.regions for n in r.graph.nodes]
    assert any(isinstance(t, WhileLoop) for t in inner)


def test_row_reductions_agree_with_empty_rows():
    indptr = np.array([0, 3, 3, 7, 8, 12], np.int64)  # (row 1 empty: its mean is nan)
    data = RNG.random(12)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        check(row_statistics, indptr, data, 2.0)
        # (float32 rows add up in double: a few float32 ulp from NumPy's float32 total)
        args = (indptr.astype(np.int32), data.astype(np.float32), 0.5)
        expected = row_statistics(*args)
        for backend in ("interpreter", "numba"):
            actual = gcompile.compile(row_statistics, backend=backend, fullgraph=True)(*args)
            for e, a in zip(expected, actual):
                assert a.dtype == e.dtype
                np.testing.assert_allclose(a, e, rtol=4 * np.finfo(np.float32).eps)


@pytest.mark.parametrize("dtype", [np.float64, np.int32, np.uint8])
def test_every_kind_of_bound_agrees(dtype):
    x = (RNG.integers(1, 4, 12) * RNG.choice([-1, 1], 12)).astype(dtype)
    fn = gcompile.compile(bounded, fullgraph=True)
    for lo, hi in _points(x.size):
        lo_, hi_ = np.int64(lo), np.int64(hi)
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            expected, actual = bounded(x, lo_, hi_), fn(x, lo_, hi_)
        for e, a in zip(expected, actual):
            assert np.asarray(a).dtype == np.asarray(e).dtype, (lo, hi)
            np.testing.assert_array_equal(a, e, err_msg=f"bounds {lo}:{hi}")
    assert fn.stats["traces"] == 1 and fn.stats["fallbacks"] == 0
    check(bounded, x, np.int64(-7), np.int64(9))  # (the interpreter too)


def test_max_and_min_of_no_element_raise_numpys_error():
    fn = gcompile.compile(extremes, fullgraph=True)
    x = RNG.random(9)
    for lo, hi in ((1, 5), (-3, 9), (0, 1)):
        assert fn(x, np.int64(lo), np.int64(hi)) == extremes(x, np.int64(lo), np.int64(hi))
    for lo, hi in ((5, 1), (9, 12)):
        with pytest.raises(ValueError, match="zero-size array to reduction operation maximum"):
            fn(x, np.int64(lo), np.int64(hi))


def test_segments_of_other_lengths_broadcast_as_numpy_does():
    x, y = RNG.random(10), RNG.random(8)
    fn = gcompile.compile(paired, fullgraph=True)
    for bounds in ((1, 4, 5, 8), (2, 3, 0, 6), (0, 5, 7, 8), (3, 3, 2, 3), (0, 8, 0, 20)):
        args = (x, y, *map(np.int64, bounds))
        np.testing.assert_allclose(fn(*args), paired(*args), rtol=1e-15)
    with pytest.raises(ValueError, match="operands could not be broadcast together"):
        fn(x, y, *map(np.int64, (0, 3, 0, 2)))
    dot = gcompile.compile(product, fullgraph=True)
    args = (x, y, *map(np.int64, (1, 4, 5, 8)))
    np.testing.assert_allclose(dot(*args), product(*args), rtol=1e-15)
    with pytest.raises(ValueError, match="not aligned"):
        dot(x, y, *map(np.int64, (2, 3, 0, 6)))  # (a product does not broadcast)


def test_a_gather_by_a_segment_raises_numpys_index_error():
    x, idx = RNG.random(6), np.array([0, 5, 2, 9, 1])
    fn = gcompile.compile(gathered, fullgraph=True)
    assert fn(x, idx, np.int64(0), np.int64(3)) == gathered(x, idx, np.int64(0), np.int64(3))
    with pytest.raises(IndexError):
        fn(x, idx, np.int64(1), np.int64(5))


def _written_in_between(x, lo, hi):
    s = x[lo:hi]
    x[0] = 100.0
    return s.sum()


def _length_needed(x, lo, hi):
    return np.zeros(len(x[lo:hi]))


def _returned(x, lo, hi):
    return x[lo:hi] * 2


def _two_d(x, lo, hi):
    return np.stack([x, x])[lo:hi].sum()


def _reduced_in_a_nested_loop(x, lo, hi):
    s = x[lo:hi]
    total = 0.0
    for k in range(3):
        total += s.sum() * k
    return total


@pytest.mark.parametrize(
    "fn, match",
    [
        (_written_in_between, "after a write made since"),
        (_length_needed, r"len\(\) of a slice x\[lo:hi\] with bounds read from the data"),
        (_returned, r"returning a slice x\[lo:hi\]"),
        (_two_d, r"\.sum of a slice with bounds read from the data"),
    ],
)
def test_uses_that_need_the_length_are_refused(fn, match):
    with pytest.raises(gcompile.UnsupportedError, match=match):
        gcompile.trace(fn, RNG.random(10), np.int64(2), np.int64(6))


def _heads(x, m, t):
    """Slices the data bound, returned (the view taken on return, of an argument too)."""
    k = np.searchsorted(np.cumsum(x), t)
    c = np.argmax(m.sum(axis=0) > t)
    return x[:k], x[k:], x[-k:-1], m[:, :c], m[1:k, c:], m[k:k]


def test_slices_the_data_bound_are_returned_as_numpys_views():
    x, m = RNG.random(12), RNG.random((6, 5))
    compiled = gcompile.compile(_heads, fullgraph=True)
    for t in (0.0, 2.5, 1e9, -1.0):  # (bounds at 0, inside, past the end)
        expected = _heads(x, m, t)
        got = compiled(x, m, t)
        for e, g in zip(expected, got):
            assert g.dtype == e.dtype and g.shape == e.shape and np.array_equal(g, e), (t, e, g)
            assert np.shares_memory(g, x) or np.shares_memory(g, m) or g.size == 0
    check(_heads, x, m, 2.5)


def test_a_segment_reduced_in_a_loop_inside_agrees():
    """(The loop body may not reduce the segment its enclosing graph made: that loop runs in
    Python, each trip's reduction traced at the top.)"""
    check(_reduced_in_a_nested_loop, RNG.random(10), np.int64(2), np.int64(6))


def _combined_after_a_write(x, y, lo, hi):
    t = y[lo:hi] * 2
    y[0] = 1000.0
    return (x[lo:hi] * t).sum()  # (t's values are y's before the write)


def _added_in_place(x, lo, hi):
    s = x[lo:hi]
    s += 1  # (NumPy writes x through its view)
    return x


def _gathered_then_written(x, idx, out, lo, hi):
    g = x[idx[lo:hi]]
    out[0] = 5.0  # (NumPy raises an out-of-range gather before this write)
    return g.sum()


@pytest.mark.parametrize(
    "fn, args, match",
    [
        (_combined_after_a_write, (RNG.random(8), RNG.random(8)), "after a write made since"),
        (_added_in_place, (RNG.random(8),), "an in-place operator"),
        (_gathered_then_written, (RNG.random(8), np.arange(8), np.zeros(2)), "after a gather"),
        (lambda x, lo, hi: np.sum(x[lo:hi], initial=5.0), (RNG.random(8),), "initial="),
        (lambda x, lo, hi: np.where(x[lo:hi] > 0), (RNG.random(8),), "np.where of"),
        (lambda x, lo, hi: np.divmod(x[lo:hi], 2)[0].sum(), (RNG.random(8),), "several results"),
        (lambda x, lo, hi: np.add(x[lo:hi], 1, where=True).sum(), (RNG.random(8),), "where="),
    ],
)
def test_uses_it_cannot_tell_from_numpys_are_refused_cleanly(fn, args, match):
    with pytest.raises(gcompile.UnsupportedError, match=match):
        gcompile.trace(fn, *args, np.int64(1), np.int64(5))


def _wide_sums(h, s, lo, hi, n):
    return h[lo:hi].sum(), h[lo:hi] @ h[lo:hi], s[lo:hi] * n, (s[lo:hi] * n).sum()


def test_half_floats_add_up_in_float32_and_sizes_and_huge_unsigned_bounds_work():
    h = np.ones(4096, np.float16)  # (a float16 running total stops at 2048)
    s = RNG.random(10)
    sums = lambda h, s, lo, hi: _wide_sums(h, s, lo, hi, s.shape[0])[::3]  # noqa: E731
    fn = gcompile.compile(sums, backend="interpreter")  # (Numba has no float16 arithmetic)
    total, scaled = fn(h, s, np.int64(0), np.int64(4096))
    assert total == np.float16(4096) and total.dtype == np.float16
    assert scaled == pytest.approx((s * 10).sum(), rel=1e-14)
    bounded = gcompile.compile(lambda x, lo, hi: x[lo:hi].sum(), fullgraph=True)
    x = np.arange(10.0)
    for lo, hi in ((2, 2**64 - 1), (2**63 + 5, 2**64 - 1), (3, 2**63)):
        lo_, hi_ = np.uint64(lo), np.uint64(hi)
        assert bounded(x, lo_, hi_) == x[lo_:hi_].sum()
