"""Boolean masks (``frontend/masks.py``): ``x[m] = ...`` and reductions of ``x[m]`` compile at
the array's own shape and agree with NumPy; uses that need the gathered length are refused,
naming the line."""

import warnings

import numpy as np
import pytest

import gcompile
from gcompile.ir import ops

from .support import check

RNG = np.random.default_rng(23)


def dyadic(shape, dtype=np.float64, low=0):
    """Values of few bits (k / 16): their sums are exact in any order, so a sum over the whole
    array with zeros where the mask is False equals NumPy's sum of the gathered values."""
    return (RNG.integers(low, 48, shape) / 16).astype(dtype)


def reciprocal_powers(x):
    x = x.copy()
    x[x > 0] = x[x > 0] ** -1.5
    return x


def floor_small(s):
    s[s <= 0.1] = 1
    return s


def masked_statistics(data, low):
    m = data > low
    return data[m].mean(), data[m].sum(), data[m].max(), np.min(data[m]), np.any(data[m] > 0.9)


def mixed_masks(a, b):
    m = (a > 0.5) & (b < 0.5)
    a = a.copy()
    a[m] += 2 * b[m]
    a[~m] = np.where(b[~m] > 0.25, -b[~m], 0.5)
    return a, np.sum(np.abs(a[m]) * b[m]), np.prod(np.where(b[m] > 0.5, 2.0, 0.5))


def rows_under_mask(grid, keep):
    grid = grid.copy()
    grid[keep] = grid[keep] * 2 - 1  # a 1-d mask of a 2-d array: whole rows
    return grid, grid[keep].sum(axis=0), grid[keep].max()


def masked_in_loop(x, steps):
    total = 0.0
    for _ in range(steps):
        x[x > 1.0] -= 1.0
        total = total + x[x < 0.5].sum() + x[x < 0.75].max()
    return x, total


def test_masked_assignment_and_reductions_agree_with_numpy():
    x = dyadic(301, np.float64, low=-48)
    check(reciprocal_powers, x)
    check(reciprocal_powers, x[::2])  # (not contiguous)
    check(reciprocal_powers, x.astype(np.float32))
    check(floor_small, RNG.random(64).astype(np.float32))
    for dtype in (np.float64, np.float32):
        check(masked_statistics, dyadic(200, dtype), 0.3)
    check(mixed_masks, dyadic(90), dyadic(90))


def test_integer_and_boolean_masked_values():
    ints = RNG.integers(-50, 50, 120).astype(np.int32)
    check(masked_statistics, ints, 10)
    check(floor_small, RNG.integers(0, 3, 40).astype(np.uint8))
    check(mixed_masks, dyadic(33), RNG.integers(0, 2, 33).astype(np.int64))


def test_a_mask_of_the_leading_axes_takes_whole_rows():
    grid = dyadic((12, 5))
    check(rows_under_mask, grid, RNG.random(12) > 0.4)
    check(rows_under_mask, grid, np.arange(12) % 2 == 0)


def test_masks_in_a_loop_stay_a_rolled_loop():
    check(masked_in_loop, dyadic(50), 4)
    graph = gcompile.trace(masked_in_loop, dyadic(50), 4)
    assert graph.notes.loops == [] or all(note.rolled for note in graph.notes.loops)
    assert any(node.target is ops.WHERE for node in graph.nodes) or any(
        node.op == "call" and hasattr(node.target, "regions") for node in graph.nodes
    )


@pytest.mark.parametrize("backend", ["interpreter", "numba"])
def test_max_of_no_element_raises_numpys_error(backend):
    fn = gcompile.compile(masked_statistics, backend=backend, fullgraph=True)
    data = RNG.random(40)
    assert fn(data, 0.5)[2] == masked_statistics(data, 0.5)[2]
    with pytest.raises(ValueError, match="zero-size array to reduction operation maximum"):
        fn(data, 2.0)
    looped = gcompile.compile(masked_in_loop, backend=backend, fullgraph=True)
    with pytest.raises(ValueError, match="zero-size array to reduction operation maximum"):
        looped(np.full(8, 0.875), 3)


def test_mean_of_no_element_is_nan():
    fn = gcompile.compile(lambda x: x[x > 5].mean(), fullgraph=True)
    with np.errstate(invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # (NumPy's "Mean of empty slice")
        assert np.isnan(fn(RNG.random(30)))


def test_the_gathered_graph_has_no_data_dependent_shape():
    graph = gcompile.trace(reciprocal_powers, RNG.random(20))
    assert any(node.target is ops.WHERE for node in graph.nodes)
    assert all(node.meta is None or node.meta.ndim <= 1 for node in graph.nodes)


def _python_int_out_of_range(x):
    x[x > 0] = 300
    return x


def _values_of_mask_length(x, y):
    x[x > 0] = y[:3]
    return x


def _mask_changed_in_between(x):
    picked = x[x > 0]
    x[0] = 5.0
    x[x > 0] = picked
    return x


@pytest.mark.parametrize(
    "fn, match",
    [
        (_values_of_mask_length, "values of the mask.s length"),
        (_mask_changed_in_between, "cannot prove the two masks equal"),
    ],
)
def test_uses_that_need_the_gathered_length_are_refused(fn, match):
    x = RNG.standard_normal(10)
    with pytest.raises(gcompile.UnsupportedError, match=match):
        gcompile.trace(fn, x, RNG.random(10)) if fn is _values_of_mask_length else gcompile.trace(
            fn, x
        )


def test_bad_masks_and_values_raise_numpys_errors():
    with pytest.raises(IndexError, match="boolean index did not match"):
        gcompile.trace(lambda x, m: x[m].sum(), RNG.random(6), np.ones(5, bool))
    with pytest.raises(OverflowError):
        gcompile.trace(_python_int_out_of_range, np.zeros(4, np.uint8))


def escape_times(c, iterations):
    z = c.copy()
    escape = np.full(c.shape, iterations, dtype=np.int64)
    for i in range(iterations):
        z = z * z + c
        diverged = z.real * z.real + z.imag * z.imag > 4.0
        escape[diverged & (escape == iterations)] = i  # (the loop index, under a mask)
        z[diverged] = 2.0
    return escape


def test_a_loop_assigning_its_index_under_a_mask_stays_rolled():
    y, x = np.mgrid[-1.4:1.4:9j, -2.0:0.8:11j]
    check(escape_times, x + 1j * y, 30)
    graph = gcompile.trace(escape_times, x + 1j * y, 30)
    assert [note.rolled for note in graph.notes.loops] == [True]


def paired_masked_updates(S, T, Z, steps):
    """Masked writes in one tuple assignment (Rosetta Code's Mandelbrot), at the top level and
    in a loop body: each value as gathered before either write, also when the other write
    changed its array (the swap)."""
    M = Z < 0.5
    S[M], T[M] = S[M] + 1, T[M] + 1
    Z[M], T[M] = T[M], Z[M]
    for _ in range(steps):
        M = Z < S
        S[M], T[M] = S[M] + T[M], T[M] * 0.5
        Z[M], T[M] = T[M], Z[M]
    return S, T, Z


def test_masked_writes_of_one_tuple_assignment_read_the_values_as_gathered():
    check(paired_masked_updates, dyadic(40), dyadic(40), dyadic(40), 5)


def test_a_mask_of_two_axes_and_a_trailing_slice_raises_numpys_index_error():
    """``a[m, :]`` with ``m`` of ``a``'s two axes indexes three: NumPy's IndexError (only an
    integer index array's trailing slices may be dropped)."""
    a = np.arange(6.0).reshape(2, 3)
    for fn in (lambda a: a[a > 2, :], lambda a: a.__setitem__((a > 2, slice(None)), 0.0)):
        with pytest.raises(IndexError, match="too many indices"):
            fn(a.copy())
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", gcompile.GcompileWarning)  # (refused: eager raises)
            with pytest.raises(IndexError, match="too many indices"):
                gcompile.compile(fn)(a.copy())


def class_statistics(X, labels, data, k):
    """A mask beside ints and slices (sweep H's k-means and NaN filling): ``X[m, :]`` is
    ``X[:, :][m]``, ``data[m, i] = v`` writes ``data[:, i]`` where ``m``."""
    C = np.zeros((k, X.shape[1]))
    for j in range(k):
        C[j] = X[labels == j, :].mean(axis=0)
    for i in range(data.shape[1]):
        data[np.isnan(data[:, i]), i] = np.nanmean(data[:, i])
    m = X[:, 0] > 0.5
    return C, X[m, 0].sum(), X[m, 1:].max(axis=0), X[1, m[:3]].sum(), data


def test_a_mask_beside_ints_and_slices_is_a_mask_of_the_view():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # (the mean of no element: NaN)
        X, data = dyadic((40, 3)), dyadic((40, 4))  # (class 4 has no member: NaN means)
        data[RNG.random((40, 4)) < 0.25] = np.nan
        check(class_statistics, X, RNG.integers(0, 4, 40), data, 5)
    compiled = gcompile.compile(lambda a, m: a[m, 1:].sum(), fullgraph=True)
    for fn in (compiled, lambda a, m: a[m, 1:].sum()):  # (a mask of another length)
        with pytest.raises(IndexError, match="boolean index did not match"):
            fn(np.ones((4, 3)), np.ones(3, bool))


def counted(a, b):
    """``np.count_nonzero`` of values (NaN counts), of a mask, along axes, and in a loop."""
    along = np.count_nonzero(a, axis=0) + np.count_nonzero(b > 0.5, axis=1, keepdims=True)
    return np.count_nonzero(a), np.count_nonzero(a > 0.25), along


def erode(src):
    """Sweep L's erosion: windows at the border clipped (empty where ``y - 1`` is -1), so
    ``np.count_nonzero`` runs on sizes that vary in the loop and on empty windows."""
    h, w = src.shape
    dst = src.copy()
    for y in range(0, h):
        for x in range(0, w):
            roi = src[y - 1 : y + 2, x - 1 : x + 2]
            if roi.size - np.count_nonzero(roi) > 0:
                dst[y][x] = 0
    return dst


def test_count_nonzero_is_a_sum_of_a_mask_with_numpys_types():
    a = dyadic((7, 5), low=-8) * (RNG.random((7, 5)) > 0.3)
    a[2, 3] = np.nan
    for values in (
        a,
        a.astype(np.float32),
        a > 0,
        (np.nan_to_num(a) * 4).astype(np.int16),
        a + 1j * a,
    ):
        check(counted, values, RNG.random((7, 5)))
    check(counted, np.zeros((0, 5)), np.zeros((0, 5)))


def test_counts_in_windows_clipped_at_the_border_stay_rolled_loops():
    src = ((RNG.random((12, 9)) > 0.2) * 255).astype(np.uint8)
    check(erode, src)
    graph = gcompile.trace(erode, src)
    assert all(note.rolled for note in graph.notes.loops)


def split_gain(x, y):
    """Sweep I's decision-tree split: gathers first used inside an `or` in a loop body."""
    best = 0.0
    for t in x:
        left = y[x <= t]
        right = y[x > t]
        if len(left) == 0 or len(right) == 0:
            continue
        best = max(best, left.max() - right.min())
    return best


def test_a_gather_first_used_in_a_branch_of_a_loop_body_is_made_in_the_body():
    x = np.round(RNG.random(30) * 5, 1)
    check(split_gain, x, RNG.random(30))
