"""Loops in the other forms people write: ``np.array([f(i) for i in range(...)])`` and its kin as
one loop writing the rows of a new array (``capture/comprehensions.py``,
``frontend/comprehensions.py``); ``enumerate`` and ``zip`` of arrays, with unpacked targets
(``capture/iterables.py``); ``np.vectorize(f)`` of arrays (``frontend/vectorized.py``). They
stay rolled and agree with NumPy."""

import itertools
from itertools import repeat

import numpy as np

import gcompile
from gcompile.capture import convert, convert_or_reason
from gcompile.ir import ops
from gcompile.ir.subgraph import loop_of

from .support import check

RNG = np.random.default_rng(5)


def scaled(x):
    return np.array([x[i] * i for i in range(x.shape[0])])


def projected(x, w):
    rows = np.asarray([np.tanh(x[i] @ w) for i in range(1, x.shape[0])], dtype=np.float32)
    return rows.sum(axis=0)


def columns_squared(x):
    return np.stack([x[:, j] ** 2 for j in range(x.shape[1])])


def mixed_first_element(x):
    return np.array([x[i] if i > 0 else 0 for i in range(x.shape[0])])  # an int, then floats


def filtered(x):
    return np.array([x[i] for i in range(x.shape[0]) if i % 2 == 0])


def test_array_comprehensions_are_one_loop_and_agree_with_numpy():
    check(scaled, RNG.random(40))
    check(projected, RNG.random((20, 4)), RNG.random((4, 3)))
    check(columns_squared, RNG.random((5, 30)))
    for fn, args in ((scaled, (RNG.random(40),)), (columns_squared, (RNG.random((5, 30)),))):
        graph = gcompile.trace(fn, *args)
        assert sum(loop_of(node) is not None for node in graph.nodes) == 1
        assert len(graph.nodes) < 10  # (not one node per element)


def nearest_labels(points, labels, queries):
    """k-nearest-neighbour votes, one per row of ``queries`` (Kang48's KNN.py)."""
    return np.array(
        [
            np.bincount(labels[np.argsort(np.sum((points - q) ** 2, axis=1))[:3]]).argmax()
            for q in queries
        ]
    )


def row_features(x, w, columns):
    return (
        np.array([np.tanh(row * w).sum() for row in x]),
        np.stack([row[::-1] * 2 for row in x]),
        np.asarray([column.max() for column in x.T], dtype=np.float32),
        np.array([value * 2 for value in columns]),  # (a list: run as written)
    )


def test_array_comprehensions_over_an_arrays_rows_are_one_loop():
    points = RNG.standard_normal((60, 3))
    labels = (points[:, 0] > 0).astype(np.int64)
    check(nearest_labels, points, labels, RNG.standard_normal((20, 3)))
    graph = gcompile.trace(nearest_labels, points, labels, RNG.standard_normal((20, 3)))
    assert sum(loop_of(node) is not None for node in graph.nodes) == 1
    for x, columns in ((RNG.random((7, 4)), [1.0, 2.5]), (RNG.random((1, 4)), [])):
        check(row_features, x, 0.5, columns)  # (np.stack of no rows raises: none here)
    assert "array_of_each" in convert(row_features).source


def distances_and_copies(X, C, codes):
    """Rows that are lists (sweep G's k-means distances), and ``np.array(tuple(x))``."""
    squared = np.array([[np.sum((x - c) ** 2) for c in C] for x in X])
    pairs = np.array([(x[0] + x[1], x.max()) for x in X])
    return squared, pairs, np.array(tuple(codes)) * 2, np.asarray(list(codes[::2]))


def test_rows_that_are_lists_and_arrays_of_an_arrays_items_compile_once_for_any_length():
    """(Unrolled, 300 rows compiled for minutes; the tuple's items were a node each.)"""
    C = RNG.standard_normal((4, 2))
    for rows in (3, 40):
        X, codes = RNG.standard_normal((rows, 2)), RNG.integers(0, 9, rows)
        check(distances_and_copies, X, C, codes)
    graph = gcompile.trace(distances_and_copies, X, C, codes)
    assert sum(loop_of(node) is not None for node in graph.nodes) == 2
    assert not any(node.target is ops.STACK for node in graph.nodes if node.op == "call")


def rows_then_written(x):
    rows = list(x)
    x[0] = 99.0  # (the rows were taken before: their values, not x's new ones)
    return np.array(rows), np.array(tuple(x))


def test_an_arrays_rows_taken_before_a_write_keep_their_values():
    check(rows_then_written, RNG.random(4))


def rows_by_index(a, ids):
    return np.array([a[i] for i in ids]), np.array([a[i, 0] * 2 for i in ids])


def test_rows_gathered_by_an_index_array_are_one_loop():
    """(Sweep H's k-means: its first row, traced and rolled back, was left among the regions
    read at data positions, and the write of the next trip crashed on it.)"""
    check(rows_by_index, RNG.random((6, 2)), np.array([0, 2, 4, -1]))


def test_comprehensions_the_loop_cannot_take_run_as_written():
    check(mixed_first_element, RNG.random(6))  # (NumPy promotes the int to float)
    check(filtered, RNG.random(7))
    assert "array_of" in convert(scaled).source
    assert convert_or_reason(filtered)[0] is None  # (a filtered comprehension stays a list)


def doolittle(a):
    """Textbook LU (Doolittle) and a Gauss-Seidel sweep: ``sum`` of a generator expression
    and of a list comprehension over a range that the loop index bounds."""
    n = a.shape[0]
    lower, upper = np.zeros((n, n)), np.zeros((n, n))
    for k in range(n):
        lower[k, k] = 1.0
        for j in range(k, n):
            upper[k, j] = a[k, j] - sum(lower[k, s] * upper[s, j] for s in range(k))
        for i in range(k + 1, n):
            lower[i, k] = (a[i, k] - sum([lower[i, s] * upper[s, k] for s in range(0, k)])) / upper[
                k, k
            ]
    x = np.zeros(n)
    for i in range(n):
        x[i] = (1.0 - sum(a[i, j] * x[j] for j in range(i))) / a[i, i]
    order = np.abs(a[:, 0]).argsort()[::-1]  # (a pivot order; np.identity of a size traced)
    return lower, upper, x, sum((a[0, j] for j in range(2)), 10), np.identity(n)[order]


def test_sums_of_comprehensions_are_one_loop_adding_in_pythons_order():
    for n in (2, 3, 8):
        check(doolittle, RNG.random((n, n)) + n * np.eye(n))
    graph = gcompile.trace(doolittle, RNG.random((8, 8)))
    assert all(note.rolled for note in graph.notes.loops)
    assert "sum_of" in convert(doolittle).source


def row_products(x, w):
    out = np.zeros(x.shape[0])
    for i, row in enumerate(x):
        out[i] = row @ w
    return out


def zipped_dot(a, b):
    s = 0.0
    for u, v in zip(a, b):
        s = s + u * v
    return s


def weighted_pairs(a):
    total = 0.0
    for k, (u, v) in enumerate(zip(a, a[::-1]), 1):
        total = total + k * u - v
    return total


def over_python_pairs(pairs, x):
    for a, b in pairs:  # (a list: the loop runs in Python, unpacking as Python does)
        x = x * a + b
    return x


def test_enumerate_and_zip_of_arrays_stay_rolled_and_agree_with_numpy():
    check(row_products, RNG.random((20, 3)), RNG.random(3))
    check(zipped_dot, RNG.random(30), RNG.random(30))
    check(weighted_pairs, RNG.random(12))
    check(over_python_pairs, [(1.0, 2.0), (0.5, 1.0)], RNG.random(4))
    for fn, args in (
        (row_products, (RNG.random((20, 3)), RNG.random(3))),
        (weighted_pairs, (RNG.random(12),)),
    ):
        graph = gcompile.trace(fn, *args)
        assert [note.rolled for note in graph.notes.loops] == [True]


def find_or_default(x, target):
    pos = -1
    for i in range(x.shape[0]):
        if x[i] == target:
            pos = i
            break
    else:
        pos = -2
    return pos


def rows_without_negatives(a):
    count, total = 0, 0.0
    for i in range(a.shape[0]):
        for j in range(a.shape[1]):
            if a[i, j] < 0:
                break
        else:
            count += 1
    for v in a[0]:
        total += v
    else:
        total *= 2  # (no break: the else always runs)
    return count, total


def test_loops_with_else_stay_rolled_and_run_it_unless_they_broke():
    check(find_or_default, np.arange(10.0), 3.0)
    check(find_or_default, np.arange(10.0), 30.0)
    check(rows_without_negatives, np.array([[1.0, 2], [-1, 3], [4, 5]]))
    graph = gcompile.trace(rows_without_negatives, RNG.random((4, 3)) - 0.2)
    assert all(note.rolled for note in graph.notes.loops), graph.notes.loops


def columns_into_new_arrays(a, k):
    out = np.ndarray((a.shape[0], 3), dtype=a.dtype)  # (as np.empty: written before read)
    doubled = np.ndarray(a.shape)
    for j in range(3):
        out[:, j] = a * j + k
    doubled[:] = a * 2
    return out, doubled


def test_arrays_made_by_the_ndarray_constructor_take_traced_values():
    check(columns_into_new_arrays, np.arange(5.0), 2.0)
    check(columns_into_new_arrays, np.arange(4, dtype=np.int32), 3)


def repeated_smoothing(x, n):
    for _ in itertools.repeat(None, n):
        x = 0.5 * (x + np.roll(x, 1))
    for step in repeat(0.25, 3):  # (the name imported: the same iterator)
        x = x + step
    return x


def test_a_counted_itertools_repeat_is_one_loop():
    check(repeated_smoothing, RNG.random(20), 40)
    check(repeated_smoothing, RNG.random(20), 0)
    graph = gcompile.trace(repeated_smoothing, RNG.random(20), 40)
    assert [note.rolled for note in graph.notes.loops] == [True, True]


def first_negative(x):
    found = -1
    for i in range(x.shape[0]):
        if x[i] < 0:
            found = i
            break
    return found


def sum_skipping(x):
    s = 0.0
    for v in x:
        if v == 0:
            continue
        if v > 10:
            break
        s += 1.0 / v
    return s


def test_loops_that_break_or_continue_on_data_stay_rolled_and_agree_with_numpy():
    x = RNG.random(20)
    check(first_negative, x)
    x[7] = -1.0
    check(first_negative, x)
    y = RNG.random(20) + 0.5
    check(sum_skipping, y)
    y[3], y[12] = 0.0, 11.0
    check(sum_skipping, y)
    for fn in (first_negative, sum_skipping):
        graph = gcompile.trace(fn, y)
        assert all(note.rolled for note in graph.notes.loops), graph.notes.loops
        assert sum(loop_of(node) is not None for node in graph.nodes) == 1
        (loop,) = [loop_of(node) for node in graph.nodes if loop_of(node) is not None]
        assert loop.exit is not None  # (both break: the flag the program leaves its loop on)
    compiled = gcompile.compile(first_negative, fullgraph=True)
    assert compiled(x) == 7  # (the program leaves its loop at the break's trip)
    assert "if __gc_break_0:\n            break" in compiled.code


def romberg(a, b, tol):
    """Kiusalaas's Romberg: helpers defined inside, their loops sized by the caller's index."""

    def trapezoid(lo, hi, old, k):
        if k == 1:
            return (np.cos(lo) + np.cos(hi)) * (hi - lo) / 2.0
        n = 2 ** (k - 2)  # (a trip count the loop index decides)
        h = (hi - lo) / n
        total = 0.0
        for i in range(n):
            total = total + np.cos(lo + h * (i + 0.5))
        return (old + h * total) / 2.0

    def richardson(r, k):
        for j in range(k - 1, 0, -1):
            const = 4.0 ** (k - j)
            r[j] = (const * r[j + 1] - r[j]) / (const - 1.0)
        return r

    r = np.zeros(10)
    r[1] = trapezoid(a, b, 0.0, 1)
    for k in range(2, 9):
        r[k] = trapezoid(a, b, r[k - 1], k)
        r = richardson(r, k)
        if abs(r[1] - r[2]) < tol:
            break
    return r


def test_loops_of_helpers_defined_inside_the_function_stay_rolled():
    check(romberg, 0.0, 3.0, 1e-9)
    graph = gcompile.trace(romberg, 0.0, 3.0, 1e-9)
    assert graph.notes.loops and all(note.rolled for note in graph.notes.loops), graph.notes.loops
    assert "__gc_call(richardson, r, k)" in convert(romberg).source


def sum_or_start(x, n):
    """An empty range gives the start itself, a Python number, as in Python; an element that
    changes a list runs as written."""
    seen = []
    logged = sum(seen.append(i) or x[i] for i in range(n))
    return sum(x[i] for i in range(n)), sum((x[i] for i in range(n)), 0.5), logged, seen


def test_a_sum_of_nothing_is_the_start_itself():
    x = RNG.random(5)
    for n in (0, 3):
        check(sum_or_start, x, n)


def welford(rows):
    """Running mean and variance (Welford), as research code writes it: the carried mean and
    sum start as the number 0 and become arrays on the first trip."""
    k = 0
    M = 0
    S = 0
    for x in rows:
        k += 1
        following = M + (x - M) / k
        S = S + (x - M) * (x - following)
        M = following
    return S / (k - 1), M


def back_substitution(U, b):
    """TheAlgorithms' Gauss elimination (sweep I): the sum becomes an array of one element
    after the inner loop's first trip, and the inner loop runs on every row but the last."""
    rows = U.shape[0]
    x = np.zeros((rows, 1))
    for row in reversed(range(rows)):
        total = 0
        for col in range(row + 1, rows):
            total += U[row, col] * x[col]
        x[row] = (b[row] - total) / U[row, row]
    return x


def test_a_carried_number_becoming_an_array_peels_the_first_trip():
    check(welford, RNG.standard_normal((50, 3)))
    graph = gcompile.trace(welford, np.ones((4, 2)))
    notes = graph.notes.loops
    assert [n.rolled for n in notes] == [True, True] and "first trip" in notes[0].reason
    # (an inner loop whose trips the outer index decides: the outer range split where it runs;
    # it was unrolled, 40 rows compiling for 8 s)
    U, b = np.triu(RNG.random((12, 12))) + 4 * np.eye(12), RNG.random((12, 1))
    check(back_substitution, U, b)
    graph = gcompile.trace(back_substitution, U, b)
    assert all(note.rolled for note in graph.notes.loops)
    assert any("range split" in note.reason for note in graph.notes.loops)


def romberg_table(Q):
    """motisoltani's Romberg: the inner loop's index, read after the outer loop, is bound from
    the outer loop's second trip on (its first runs the inner loop no times)."""
    for i in range(Q.shape[0]):
        Q[i, 0] = 1.0 / (i + 1.0)
        for k in range(0, i):
            Q[i, k + 1] = Q[i, k] + (Q[i, k] - Q[i - 1, k]) / (4.0 ** (k + 1) - 1.0)
    return Q[i, k + 1], k


def test_values_the_first_trip_leaves_unbound_peel_the_second_too():
    check(romberg_table, np.zeros((7, 7)))
    notes = gcompile.trace(romberg_table, np.zeros((7, 7))).notes.loops
    assert all(note.rolled for note in notes) and "first 2 trips" in notes[-3].reason, notes


def hough_votes(xs, ys, cos_t, sin_t, acc):
    """A Hough transform's votes, indexed by ``int()`` of the loop index as public code does."""
    for i in range(xs.shape[0]):
        for t in range(cos_t.shape[0]):
            rho = round(xs[i] * cos_t[t] + ys[i] * sin_t[t]) + 12
            acc[int(rho), int(t)] += 1
    return acc


def test_int_of_a_loop_index_is_the_index_and_the_loop_stays_rolled():
    thetas = np.deg2rad(np.arange(-90.0, 90.0, 10.0))
    xs, ys = np.arange(6), np.arange(6)[::-1].copy()
    args = (xs, ys, np.cos(thetas), np.sin(thetas), np.zeros((25, thetas.size), np.int64))
    check(hough_votes, *args)
    assert all(note.rolled for note in gcompile.trace(hough_votes, *args).notes.loops)


def index_fractions(x):
    out = np.empty_like(x)
    for i in range(x.shape[0]):
        out[i] = x[i] * (float(i) / x.shape[0])
    return out


def test_float_of_a_loop_index_is_computed_and_the_loop_stays_rolled():
    check(index_fractions, RNG.random(7))
    assert all(note.rolled for note in gcompile.trace(index_fractions, RNG.random(7)).notes.loops)


def _lerp_at(x, values):
    below = int(np.floor(x))  # (int() of a traced value: the helper must run converted)
    return values[below] + (x - below) * (values[below + 1] - values[below])


def resampled_through_an_alias(values, positions):
    at = _lerp_at  # (a local name for the helper, as a method switch makes one)
    out = np.empty(positions.shape[0])
    for i in range(positions.shape[0]):
        out[i] = at(positions[i], values)
    return out


def resampled_by(interpolate, values, positions):
    return np.array([interpolate(p, values) for p in positions])  # (a callable argument)


def test_helpers_called_through_local_names_and_arguments_run_converted_in_rolled_loops():
    values, positions = RNG.random(30), np.linspace(0.0, 28.5, 57)
    check(resampled_through_an_alias, values, positions)
    check(resampled_by, _lerp_at, values, positions)
    for fn, args in ((resampled_through_an_alias, ()), (resampled_by, (_lerp_at,))):
        graph = gcompile.trace(fn, *args, values, positions)
        assert sum(loop_of(node) is not None for node in graph.nodes) == 1


def _piecewise(c):
    return c * 2.0 if c < 1 else c + 1.0


def _excess(x, y):
    if x > y:
        return x - y
    return y - y  # (a zero of the same type: 0.0 beside ints would decide the dtype per element)


def _tiny_step(v):
    return (v + 1e-9) - v  # (in double precision, as NumPy gives a Python float)


_PIECEWISE = np.vectorize(_piecewise)


def vectorized(a, b):
    """np.vectorize made inside and outside the function, of one and two arguments (broadcast,
    a number among them), with ``otypes``, of a builtin."""
    return (
        _PIECEWISE(np.cumsum(a, axis=0)),
        np.vectorize(_excess)(a, b),
        np.vectorize(_excess, otypes=[np.float32])(a, 0.5),
        np.vectorize(abs)(a - 1),
        np.vectorize(_tiny_step, otypes=[np.float64])(a.astype(np.float32)),
    )


def test_vectorized_functions_are_one_loop_over_the_elements_and_agree_with_numpy():
    """(numpy-tutorials' air quality index: np.vectorize broke the graph at every line.)"""
    compiled = gcompile.compile(vectorized, fullgraph=True)
    for a, b in (
        (RNG.random((6, 4)) * 2, RNG.random(4)),
        (np.arange(12).reshape(3, 4), np.arange(4)),
    ):
        for got, expected in zip(compiled(a, b), vectorized(a, b)):
            np.testing.assert_array_equal(got, expected, strict=True)
    graph = gcompile.trace(vectorized, RNG.random((6, 4)), RNG.random(4))
    loops = [note for note in graph.notes.loops if note.kind == "loop"]  # (and the branches)
    assert len(loops) == 5 and all(note.rolled for note in graph.notes.loops)
