"""Values whose length the data decide (an unbacked size ``u0``): ``np.nonzero`` and its
spellings, ``np.unique``, ``np.bincount``, ``np.extract``/``np.compress`` and a boolean-mask
gather ``x[m]`` used as an array. Each compiles (``fullgraph=True``: no graph break) and agrees
with NumPy in values, dtype and shape on both backends, including when nothing is picked; a
question on such a length that no interval answers is refused, naming the length's origin."""

import warnings

import numpy as np
import pytest

import gcompile
from gcompile.errors import UnsupportedError

RNG = np.random.default_rng(20)
BACKENDS = ["interpreter", "numba"]


def positions_and_gathers(x, y):
    idx = np.flatnonzero(x > 0)
    (rows,) = np.nonzero(x > 0.5)
    picked = x[x > 0]  # (one mask's gathers share their length: math between them)
    scaled = picked * y[x > 0] + len(idx)
    last = idx[-1] if idx.size > 0 else np.int64(-1)  # (a branch on the length: a cond)
    return idx, x[idx] * 2, rows, np.where(y > 0)[0], picked, scaled, last


def gathered_rows(X, w):
    rows = X[X[:, 0] > 0]  # (a mask of the leading axis: np.compress)
    flat = X[X > 0.5]  # (a mask of every axis: np.extract)
    cube = X.reshape(2, -1, X.shape[1])[X.reshape(2, -1, X.shape[1])[..., 0] > 0]
    ordered = np.sort(rows[:, 1])
    copy = rows.copy()
    copy[:, 0] = w  # (a write into the gathered copy: not into X)
    return rows.shape[0], ordered, flat, cube, copy, np.argwhere(X > 0.9), X


def distinct_counts(labels, w):
    values, first, inverse, counts = np.unique(
        labels, return_index=True, return_inverse=True, return_counts=True
    )
    sums = np.bincount(labels, weights=w, minlength=3)
    return values, first, inverse, counts, sums, np.bincount(labels) * 2, np.unique(w > 0.5)


def per_row_positions(A, cols):
    out = np.zeros(A.shape[0])
    for i in range(A.shape[0]):  # (a length the data decide on every trip: the loop stays one)
        nz = np.flatnonzero(A[i] > 0.5)
        out[i] = A[i, nz].sum() + len(nz)
    values = np.unique(np.round(A[:, cols], 1))  # (an integer array beside a slice: np.take)
    steps = np.zeros(len(values))
    for i in range(1, len(values)):
        steps[i] = values[i] - values[i - 1]
    if out.sum() > 0:  # (a gather inside a branch)
        picked = out[out > 1.0]
        total = picked.sum() * len(picked)
    else:
        total = out[0] * 0.0
    return out, steps, total, A[1, cols], A[..., None][-1, cols, :]


def review_cases(x, labels, A):
    """The first review's wrong answers and crashes (each line one), as regressions."""
    counts = np.zeros(3)
    for c in range(3):  # (a few trips: unrolled, each trip its own length)
        g = x[labels == c]
        counts[c] = g.sum() + 100 * len(g)
    m = x > 0
    g = x[m]  # (NumPy's copy is made here: the writes after it do not reach it)
    total = g.sum()
    x[m] = 0.0
    kinds = np.zeros(A.shape[0])
    for i in range(A.shape[0]):
        u, c = np.unique(A[i], return_counts=True)  # (several results in a loop program)
        kinds[i] = u.size + c.max()
    return counts, g, total, g.size, x, kinds, np.bincount(labels).argmax()


def reductions_of_no_element(x):
    rows = x[x[:, 0] > 5]
    return rows.max(axis=1), np.sort(x[x > 0.5]).max()


def trimmed(x):
    kept = np.sort(x[np.abs(x) < 2.0])  # (a slice of a length the data decide: its bounds'
    quarter = kept.shape[0] // 4  # signs hold for every length, u0 - u0 // 4 >= 0)
    return kept[quarter : kept.shape[0] - quarter], kept[:quarter]


def index_array_writes(A, x, idx, i, p):
    A[[i, p]] = A[[p, i]]  # (a row swap: the values read before any write)
    x[idx] = x[0] * 2  # (a repeated index keeps its last value)
    x[idx[:2]] += 1.0
    counts = np.zeros(x.shape[0], np.int64)
    counts[np.arange(x.shape[0])[x > 0]] = 1  # (positions gathered by a mask)
    A[idx[:2] % A.shape[0], idx[:2] % A.shape[1]] = -1.0
    for k in range(A.shape[0] - 1):  # (Gaussian elimination with partial pivoting)
        q = k + np.argmax(np.abs(A[k:, k]))
        A[[k, q], :] = A[[q, k], :]  # (trailing full slices: the same swap)
        for r in range(k + 1, A.shape[0]):
            A[r, k:] -= A[r, k] / A[k, k] * A[k, k:]
    return A, x, counts


def second_review_cases(x, X, m):
    """The second review's wrong answers and crashes (each line one), as regressions."""
    s = 0.0
    for _ in range(3):  # (x[m] in a body, then a write: the gather is NumPy's copy)
        y = x[m]
        x[0] = -50.0
        s += y.sum()
    picked = x[m]
    out = np.zeros(2)
    for i in range(2):  # (a gather made before the loop, written after its use in the body)
        out[i] = (picked * 2).sum()
        x[:] = 0.25
    rows = []
    for i in range(X.shape[0]):  # (each trip's length its own: extract of empty rows too)
        rows.append(np.extract(X[i] > 0, X[i]))
    joined = np.hstack(rows)
    return s, out, x, joined, np.vstack([X, X[:1]], dtype=np.float32)


def positions_per_axis(X, r, c):
    (i, j), pairs = (X > 0.5).nonzero(), np.argwhere(X > 0.5)
    return X[r, c] * 2, X[np.nonzero(X > 0.5)], X[i, j] - X[pairs[:, 0], pairs[:, 1]], r, c


def _same(got, expected):
    if isinstance(expected, tuple):
        assert isinstance(got, tuple) and len(got) == len(expected)
        for g, e in zip(got, expected):
            _same(g, e)
        return
    assert type(got) is type(expected) or np.asarray(got).dtype == np.asarray(expected).dtype
    got, expected = np.asarray(got), np.asarray(expected)
    assert got.shape == expected.shape and got.dtype == expected.dtype
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("backend", BACKENDS)
def test_positions_and_gathers_agree_including_none_picked(backend):
    compiled = gcompile.compile(positions_and_gathers, backend=backend, fullgraph=True)
    for x in (RNG.standard_normal(40), -np.ones(7), np.linspace(0.1, 2.0, 9)):
        y = RNG.standard_normal(x.shape[0])
        _same(compiled(x, y), positions_and_gathers(x, y))


@pytest.mark.parametrize("backend", BACKENDS)
def test_gathered_rows_are_arrays_and_writes_stay_in_the_copy(backend):
    compiled = gcompile.compile(gathered_rows, backend=backend, fullgraph=True)
    for X in (RNG.standard_normal((12, 3)), -np.ones((4, 3)), RNG.standard_normal((6, 3))[::-1]):
        w = float(RNG.standard_normal())
        got, expected = compiled(X.copy(), w), gathered_rows(X.copy(), w)
        _same(got, expected)


@pytest.mark.parametrize("backend", BACKENDS)
def test_unique_and_bincount_agree(backend):
    compiled = gcompile.compile(distinct_counts, backend=backend, fullgraph=True)
    for labels in (RNG.integers(0, 6, 30), np.zeros(5, np.int64), np.array([7, 1, 7, 2])):
        w = RNG.random(labels.shape[0])
        _same(compiled(labels, w), distinct_counts(labels, w))


@pytest.mark.parametrize("backend", BACKENDS)
def test_lengths_the_data_decide_in_loops_and_branches(backend):
    compiled = gcompile.compile(per_row_positions, backend=backend, fullgraph=True)
    cols = np.array([2, 0, -1])
    for A in (RNG.random((6, 5)), np.zeros((3, 4)), RNG.random((4, 3))):
        _same(compiled(A, cols), per_row_positions(A, cols))
    with pytest.raises(IndexError, match="out of bounds"):
        compiled(RNG.random((3, 4)), np.array([4]))


@pytest.mark.parametrize("backend", BACKENDS)
def test_reviewed_lengths_writes_and_empty_reductions(backend):
    compiled = gcompile.compile(review_cases, backend=backend, fullgraph=True)
    for n in (12, 5):
        x = RNG.integers(-8, 8, n) / 4  # (quarters: sums exact in any order)
        labels = RNG.integers(0, 3, n)
        A = RNG.integers(0, 4, (3, 6))
        _same(compiled(x.copy(), labels, A), review_cases(x.copy(), labels, A))
    empty = gcompile.compile(reductions_of_no_element, backend=backend, fullgraph=True)
    x = RNG.random((4, 2))
    _same(empty(x), reductions_of_no_element(x))
    with pytest.raises(ValueError, match="zero-size array to reduction operation maximum"):
        empty(x - 1.0)  # (no element above 0.5: NumPy's error, not the kernel's start value)


@pytest.mark.parametrize("backend", BACKENDS)
def test_slices_of_a_length_the_data_decide(backend):
    compiled = gcompile.compile(trimmed, backend=backend, fullgraph=True)
    for x in (RNG.standard_normal(30), np.full(3, 5.0), np.array([0.5, 1.0, -1.5])):
        _same(compiled(x), trimmed(x))


@pytest.mark.parametrize("backend", BACKENDS)
def test_writes_at_index_arrays(backend):
    compiled = gcompile.compile(index_array_writes, backend=backend, fullgraph=True)
    for n, idx in ((5, np.array([3, 1, 3, -1])), (4, np.array([0, 0]))):
        A, x = RNG.integers(1, 9, (n, n)) / 4, RNG.integers(-8, 8, 6) / 4
        got = compiled(A.copy(), x.copy(), idx, 1, n - 1)
        expected = index_array_writes(A.copy(), x.copy(), idx, 1, n - 1)
        _same(got, expected)  # (each element rounded as eager rounds it: no reordering)
    with pytest.raises(IndexError, match="out of bounds"):
        compiled(np.ones((3, 3)), np.ones(6), np.array([6]), 0, 1)


@pytest.mark.parametrize("backend", BACKENDS)
def test_second_review_gathers_in_loops_and_joins(backend):
    compiled = gcompile.compile(second_review_cases, backend=backend)
    for X in (RNG.integers(-4, 4, (3, 4)) / 4, np.zeros((2, 0))):
        x, m = RNG.integers(-4, 8, 6) / 4, RNG.random(6) > 0.4
        _same(compiled(x.copy(), X, m), second_review_cases(x.copy(), X, m))
    with pytest.raises(TypeError, match="according to the rule 'no'"):
        gcompile.compile(lambda a, b: np.vstack([a, b], casting="no"))(np.ones(2, int), np.ones(2))


@pytest.mark.parametrize("backend", BACKENDS)
def test_gathers_at_one_index_array_per_axis(backend):
    compiled = gcompile.compile(positions_per_axis, backend=backend, fullgraph=True)
    r, c = np.array([0, 2, -1]), np.array([2, -3, 1])
    for X in (RNG.random((3, 4)), np.zeros((3, 5))[:, ::2]):
        _same(compiled(X, r.copy(), c.copy()), positions_per_axis(X, r, c))  # (r, c untouched)
    with pytest.raises(IndexError, match="out of bounds for axis 1"):
        compiled(RNG.random((3, 4)), np.array([0]), np.array([4]))


def _branch_on_a_gather(x):
    y = x[x > 2]
    return y.max() if y.size else -1  # (uint8 or int: the branch declines, rolled back)


def test_a_declined_branch_keeps_the_nodes_recorded_before_it():
    compiled = gcompile.compile(_branch_on_a_gather, backend="interpreter")
    x = np.arange(5, dtype=np.uint8)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert compiled(x) == 4 and type(compiled(x)) is type(_branch_on_a_gather(x))
    assert not any("gcompile bug" in str(w.message) for w in caught)


def _first_position(x):
    return np.flatnonzero(x > 2.0)[0]


def _lengths_that_must_agree(x):
    return x[:3] + x[x > 0]  # (broadcasting needs u0 == 3: no guard can stand for it)


def test_errors_and_refusals_name_the_length():
    for backend in BACKENDS:
        first = gcompile.compile(_first_position, backend=backend, fullgraph=True)
        assert first(np.array([0.0, 3.0, 5.0])) == 1
        with pytest.raises(IndexError, match="out of bounds"):
            first(np.zeros(4))
    with pytest.raises(UnsupportedError, match="u0 is the length of np.extract"):
        gcompile.compile(_lengths_that_must_agree, fullgraph=True)(RNG.standard_normal(6))


def test_text_form_and_explain_show_the_length_and_its_origin():
    x, y = RNG.standard_normal(10), RNG.standard_normal(10)
    assert "i64[u0]" in str(gcompile.trace(positions_and_gathers, x, y))
    report = str(gcompile.explain(positions_and_gathers, x, y))
    assert "u0  length the data decide, of np.flatnonzero at" in report
    assert "in [0, s0]" in report


def time_grid(t_end, h):
    """A step count computed from float arguments (an ODE solver's), used as sizes."""
    n = int(np.ceil(t_end / h))
    t = np.linspace(0.0, n * h, n + 1)
    y = np.zeros((n + 1, 2))
    for i in range(n):
        y[i + 1] = y[i] + h * np.array([1.0, np.sin(t[i])])
    left = np.linspace(-1.0, t_end, n, endpoint=False)
    ramps = np.arange(n) * h, np.arange(-2, n), np.arange(n, 1, -2), np.arange(1, n + 3, 3)
    eyes = np.eye(n, n + 2, k=1), np.identity(n + 1, dtype=np.int8)
    return t, y + t[:, None], left, ramps, eyes, np.full(n, 2.5), np.ones(n, np.int32).sum()


def heat_steps(alpha, length, t_max):
    """Slices of a length the data decide, alike (``u[1:-1]``, ``u[:-2]``, ``u[2:]``: each
    ``max(u0 - 2, 0)`` long), in a loop of a count the data decide."""
    nx, nt = int(length / 0.01), int(t_max / 0.0005)
    temp = np.zeros(nx)
    temp[:1] = 1.0
    for _ in range(nt):
        temp[1:-1] += alpha * (temp[0:-2] - 2 * temp[1:-1] + temp[2:])
    return temp


def grids_in_a_loop(x, h):
    total = 0.0
    for k in range(x.shape[0]):
        n = int(np.ceil(x[k] / h))
        total += np.sin(np.linspace(0.0, x[k], n + 1)).sum() + np.zeros(n).size
        g = np.zeros(n + 1) + x[k]  # (a kernel's output of the trip's length: made in the trip)
        total += g[0] + g.sum()
    return total


def _same(got, want) -> bool:
    if isinstance(want, tuple):
        return isinstance(got, tuple) and len(got) == len(want) and all(map(_same, got, want))
    if type(got) is not type(want):
        return False
    got, want = np.asarray(got), np.asarray(want)
    same_values = np.array_equal(got, want, equal_nan=want.dtype.kind in "fc")
    return got.dtype == want.dtype and got.shape == want.shape and same_values


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_traced_integer_used_as_a_size_is_a_length_the_data_decide(backend):
    """``np.zeros(n + 1)``, ``np.linspace(a, b, n + 1)``, ``np.arange(n)``, ``np.eye(n)`` and
    ``range(n)`` of a count computed from float arguments: one trace serves every count (0 and
    1 included), equal counts share their length, and a negative one raises NumPy's error."""
    grid = gcompile.compile(time_grid, backend=backend, fullgraph=True)
    for t_end, h in ((1.0, 0.25), (0.3, 0.25), (0.0, 0.1), (0.05, 0.1), (2.7, 0.25), (1.5, 1.0)):
        assert _same(grid(t_end, h), time_grid(t_end, h)), (t_end, h)
    looped = gcompile.compile(grids_in_a_loop, backend=backend, fullgraph=True)
    for x in (np.array([0.5, 1.0, 0.0, 2.3]), np.array([0.01, 0.3])):  # (sums: any order's)
        np.testing.assert_allclose(looped(x, 0.1), grids_in_a_loop(x, 0.1), rtol=1e-9)
    heat = gcompile.compile(heat_steps, backend=backend, fullgraph=True)
    for length in (1.0, 0.0, 0.01, 0.02, 0.03, 0.5):  # (0, 1, 2 and 3 cells: empty interiors)
        np.testing.assert_allclose(heat(0.2, length, 0.1), heat_steps(0.2, length, 0.1))
    assert grid.stats["traces"] == looped.stats["traces"] == heat.stats["traces"] == 1
    for fn, compiled, args in (
        (time_grid, grid, (-1.0, 0.25)),
        (grids_in_a_loop, looped, (-x, 0.1)),
    ):
        with pytest.raises(ValueError) as eager:
            fn(*args)
        with pytest.raises(ValueError) as got:
            compiled(*args)
        assert "negative" in str(eager.value) and "negative" in str(got.value)


def simpson(a, b, n):
    """A size argument in np.arange (djeada's Simpson rule): a size, not a data length."""
    h = (b - a) / n
    y = np.exp(-((a + h * np.arange(n + 1)) ** 2))
    return (y[0] + y[-1] + 4 * np.sum(y[1:-1:2]) + 2 * np.sum(y[2:-2:2])) * h / 3


def test_np_arange_of_a_size_argument_stays_a_size():
    graph = gcompile.trace(simpson, -3.0, 3.0, 200)
    assert not graph.shape_env.data_sizes
    fn = gcompile.compile(simpson, fullgraph=True)
    for n in (200, 2000, 10):
        np.testing.assert_allclose(fn(-3.0, 3.0, n), simpson(-3.0, 3.0, n), rtol=1e-10)  # (sums)


def integrated_then_squeezed(y0, t_end, h):
    """A step count from float arguments (an RK4 driver's), then a question on it: is the
    history one row (``squeeze``)? The floats are made static and the call traced again."""
    steps = int(np.ceil(t_end / h))
    y = np.zeros((steps + 1, y0.size))
    y[0] = y0
    for i in range(steps):
        y[i + 1] = y[i] * (1.0 - h)
    return y.squeeze()


def test_a_question_on_a_length_the_scalar_arguments_decide_specialises_them():
    compiled = gcompile.compile(integrated_then_squeezed, fullgraph=True)
    for y0, t_end, h in [(np.ones(1), 2.0, 0.5), (np.ones(3), 2.0, 0.25), (np.ones(1), 0.0, 0.5)]:
        result, expected = compiled(y0, t_end, h), integrated_then_squeezed(y0, t_end, h)
        assert result.shape == expected.shape and np.array_equal(result, expected)
    assert compiled.stats["fallbacks"] == 0 and compiled.stats["traces"] == 3
