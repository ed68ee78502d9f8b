"""Lists grown in rolled loops (``capture/accumulations.py``, ``frontend/list_rows.py``):
``ys = [y0]; for ...: ys.append(y)`` then ``np.array(ys)`` keeps the loop rolled, and every
use eager mode would see differently (a later write into an appended array, a read of the
list in the loop, the list returned) runs the loop in Python instead: same answers."""

import warnings

import numpy as np
import pytest

import gcompile
from gcompile.capture.accumulations import mark_accumulations

from .support import check

RNG = np.random.default_rng(17)


def _field(y, p):
    return np.array([p[0] * (y[1] - y[0]), y[0] * (p[1] - y[2]) - y[1], y[0] * y[1] - p[2] * y[2]])


def runge_kutta(ts, y0, p):
    """A public RK4 integrator's shape (haos_TS): the state appended every step."""
    ys = [y0]
    for t in range(len(ts) - 1):
        dt = ts[t + 1] - ts[t]
        k1 = _field(y0, p)
        k2 = _field(y0 + dt / 2 * k1, p)
        k3 = _field(y0 + dt / 2 * k2, p)
        k4 = _field(y0 + dt * k3, p)
        y0 = y0 + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        ys.append(y0)
    return np.array(ys)


def two_per_trip(x, n):
    """Scalars, two appends a trip (rows interleaved), the list's length, a dtype asked for."""
    out = []
    s = 0.0
    for i in range(n):
        s = s + x[i] * 2
        out.append(s)
        out.append(x[i])
    return np.asarray(out, dtype=np.float32), len(out), np.mean(out)


def from_empty_ints(x, n):
    """An empty list of ints, maybe no trip at all (NumPy's float64 empty array)."""
    hits = list()
    for i in range(n):
        hits.append(x[i] * 3)
    return np.array(hits)


def split_range(x):
    """A question on the index splits the range: a block of rows per piece, an item between."""
    rows = [x[0] * 0]
    for i in range(x.shape[0]):
        rows.append(x[i] if i == 0 else x[i] - x[i - 1])
    rows.append(x[-1])
    return np.array(rows)


def per_outer_trip(a):
    """A list made in the outer loop's body, grown by the inner loop, read in the outer."""
    total = a[0] * 0
    for i in range(a.shape[0]):
        parts = []
        for j in range(a.shape[1]):
            parts.append(a[i, j] * j)
        total = total + np.array(parts)
    return total


def joined(a, n):
    """Every join NumPy offers of a list of rows, of items of each rank."""
    rows, scalars, blocks = [], [], []
    for i in range(n):
        rows.append(a[i] * 2.0)
        scalars.append(a[i, 0] - 1.0)
        blocks.append(a[i : i + 2] + i)
    return (
        np.stack(rows, axis=1),
        np.vstack(rows),
        np.hstack(rows),
        np.concatenate(rows),
        np.column_stack(rows),
        np.vstack(scalars),
        np.hstack(scalars),
        np.column_stack(scalars),
        np.concatenate(blocks, axis=-1),
        np.vstack(blocks, dtype=np.float32),
        np.hstack(blocks),
        np.concatenate(blocks, axis=None),
    )


def appended_then_written(x, n):
    """The appended array is written afterwards: eager's list sees the writes."""
    ys = []
    y = x.copy()
    for _ in range(n):
        y *= 2.0
        ys.append(y)
    return np.array(ys)


def written_after_the_loop(x, n):
    ys = []
    y = x
    for _ in range(n):
        y = y + 1.0
        ys.append(y)
    y[0] = -5.0  # (the last item is this array)
    return np.array(ys)


def reads_its_list(x, n):
    ys = [x]
    for _ in range(n):
        ys.append(ys[-1] * 0.5 + 1.0)
    return np.array(ys)


def returns_the_list(x, n):
    ys = []
    for i in range(n):
        ys.append(x * i)
    return ys


def _rolled(fn, *args):
    graph = gcompile.trace(fn, *args)
    return all(note.rolled for note in graph.notes.loops)


def test_an_integrator_appending_its_state_stays_rolled():
    p = np.array([10.0, 28.0, 8 / 3])
    for n in (2, 3, 60):
        check(runge_kutta, np.linspace(0.0, 0.5, n), np.array([1.0, 1.0, 1.0]), p)
    assert _rolled(runge_kutta, np.linspace(0.0, 0.5, 60), np.ones(3), p)


def test_scalars_appended_twice_a_trip_with_len_and_numpy_functions():
    x = RNG.random(12)
    for n in (0, 1, 7, 12):
        check(two_per_trip, x, n)
    assert _rolled(two_per_trip, x, 7)


def test_an_empty_list_and_no_trips():
    x = np.arange(10, dtype=np.int32)
    for n in (0, 1, 5):
        check(from_empty_ints, x, n)


def test_a_split_range_and_items_around_the_rows():
    for size in (2, 3, 9):
        check(split_range, RNG.random(size))
    assert _rolled(split_range, RNG.random(9))


def test_stacks_and_concatenations_of_the_rows():
    a = RNG.random((7, 3))
    for n in (1, 2, 5):
        check(joined, a, n)
    assert _rolled(joined, a, 5)


def test_a_list_made_in_an_outer_body():
    check(per_outer_trip, RNG.random((4, 5)))
    assert _rolled(per_outer_trip, RNG.random((4, 5)))


@pytest.mark.parametrize("fn", [appended_then_written, written_after_the_loop, reads_its_list])
def test_uses_eager_would_see_differently_run_the_loop_in_python(fn):
    x = RNG.random(3)
    for n in (0, 1, 4):
        check(fn, x, n)
    assert not _rolled(fn, x, 4)


def _marked(source: str) -> set:
    import ast

    function = ast.parse(source).body[0]
    return mark_accumulations(function, "rt")


def test_which_lists_are_marked():
    assert _marked("def f(x):\n ys = []\n for i in x:\n  ys.append(i)\n return ys") == {"ys"}
    # (rebound to a NumPy function's result after it: never a list)
    source = (
        "def f(x):\n for j in x:\n  ys = []\n  for i in x:\n   ys.append(i)\n  ys = np.array(ys)"
    )
    assert _marked(source) == {"ys"}
    # rebound otherwise, a parameter, used by a nested function, or appended outside loops
    for source in (
        "def f(x):\n ys = []\n ys = g()\n for i in x:\n  ys.append(i)",
        "def f(ys):\n for i in range(3):\n  ys.append(i)",
        "def f(x):\n ys = []\n h = lambda: ys\n for i in x:\n  ys.append(i)",
        "def f(x):\n ys = []\n ys.append(x)\n return ys",
        "def f(x):\n ys = []\n for ys in x:\n  ys.append(1)",
    ):
        assert _marked(source) == set(), source


def counts_its_trips(x, n):
    """The loop index appended (a Python int each trip), a size and a traced count."""
    trips, sizes = [], []
    total = 0
    for k in range(n):
        total = total + (x[k] > 0.5)
        trips.append(k)
        sizes.append(total)
    return np.array(trips), np.array(sizes), len(trips) + len(sizes)


def test_loop_indices_and_counts_appended():
    x = RNG.random(9)
    for n in (1, 4, 9):
        check(counts_its_trips, x, n)
    assert _rolled(counts_its_trips, x, 9)


def outer_arrays_appended(x, n):
    """Arrays made before the loop appended on every trip, one written in the loop and the
    argument's view written after it: eager's list holds those very arrays."""
    a, views = x.copy(), []
    same = []
    for _ in range(n):
        same.append(a)
        a[0] += 1.0
        views.append(x[1:3])
    x[1] = 99.0
    return np.array(same), np.array(views)


def handed_out_then_grown(x, n):
    """The first conversion's result (the rows themselves) written, then the list grown and
    converted again; Python numbers beside the rows; a list concatenated from the left."""
    ys, zs = [0.0], []
    for i in range(n):
        ys.append(x[i] * 2.0)
        zs.append(x[i] * 3.0)
    first = np.asarray(zs)
    first += 100.0
    zs.append(-1.0)
    return first, np.array(zs), np.array(ys), len([x[0]] + zs)


def two_shapes_a_trip(x, n):
    ys = []
    for i in range(n):
        ys.append(x[i : i + 1])
        ys.append(x[i : i + 2] * 2.0)
    return np.hstack(ys)


def split_then_declined(x):
    """A question on the index splits the range; a later piece declines (the loop runs in
    Python): the rows the first piece added are taken back."""
    ys = []
    for i in range(len(x)):
        if i == len(x) - 1:
            ys.append(x[i] * 100)
        else:
            ys.append(x[i] - x[i + 1])
    return np.array(ys)


def stack_of_none(x):
    ys = []
    for i in range(len(x) - 2):
        ys.append(x[i : i + 2] * 2.0)
    return np.stack(ys)


def test_arrays_eager_would_see_written_and_lists_read_in_c():
    x = RNG.random(6)
    for fn, args in (
        (outer_arrays_appended, (x, 3)),
        (handed_out_then_grown, (x, 3)),
        (two_shapes_a_trip, (x, 4)),
        (split_then_declined, (x,)),
    ):
        check(fn, *args)
    check(stack_of_none, x)
    with pytest.raises(ValueError, match="need at least one array"):
        gcompile.compile(stack_of_none, backend="interpreter")(x[:2])


def rows_of_regions(A, k):
    """Rows read at data positions (views of A in eager mode) appended, A written after."""
    rows = []
    for i in range(k.shape[0]):
        rows.append(A[k[i]])
    A[k[0], 0] += 100.0
    return np.stack(rows)


def test_rows_read_at_data_positions_see_later_writes():
    A, k = np.arange(12.0).reshape(4, 3), np.array([1, 2, 1])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", gcompile.GcompileWarning)  # (the loop runs in Python)
        got = gcompile.compile(rows_of_regions, backend="interpreter")(A.copy(), k)
    np.testing.assert_array_equal(got, rows_of_regions(A.copy(), k))


def returns_histories(x, n):
    """A gradient descent's cost history (NumPy scalars), Python floats and rows, returned as
    lists: each the rows of one buffer, made a list again on each call."""
    costs, floats, rows = [], [], []
    for _ in range(n):
        x = x * 0.5
        costs.append(np.sum(x))
        floats.append(float(x[0]))
        rows.append(x)
    return x, costs, {"floats": floats, "rows": rows}


def test_a_list_grown_in_a_loop_and_returned_stays_rolled():
    x = RNG.random(3)
    for n in (0, 1, 4):
        check(returns_the_list, x, n)
        check(returns_histories, x, n)
    assert _rolled(returns_the_list, x, 4) and _rolled(returns_histories, x, 4)


def descent_printing(X, y, b, n):
    """A gradient descent (the TEGME1 course's form): an intercept that is a 0-d array on the
    first trip and a NumPy scalar after it, its costs returned, printed every few trips."""
    w, b = np.zeros(X.shape[1]), np.copy(b)
    costs = []
    for i in range(n):
        err = X @ w + b - y
        w = w - 0.1 * (X.T @ err) / X.shape[0]
        b = b - 0.1 * np.sum(err) / X.shape[0]
        cost = np.dot(err, err) / (2 * X.shape[0])
        costs.append(cost)
        if i % 4 == 0 or i == n - 1:  # (no piece of the range answers: asked on each trip)
            print(f"Iteration {i:4}: Cost {cost:7.2f}")
    return w, b, costs


def printing_its_list(x, n):
    ys = []
    for i in range(n):
        x = x * 0.5
        ys.append(x.sum())
        if i % 4 == 0:
            print(ys[-1])  # (a body reading the list it appends to: the loop runs in Python)
    return x, ys


def test_a_loop_whose_carried_0d_array_becomes_a_scalar_and_asks_its_index_stays_rolled(capsys):
    X, y = RNG.random((9, 3)), RNG.random(9)
    check(descent_printing, X, y, 0.0, 10, backends=("numba",))
    printed = capsys.readouterr().out
    assert printed.count("Iteration") == 2 * 4 and "Iteration    9" in printed  # (eager, Numba)
    notes = gcompile.trace(descent_printing, X, y, 0.0, 10).notes.loops
    assert all(note.rolled for note in notes)
    assert any("first trip traced before it" in note.reason for note in notes)
    assert any("asked on each trip" in note.reason for note in notes)
    compiled = gcompile.compile(printing_its_list)
    assert compiled(X[0], 6)[1] == printing_its_list(X[0], 6)[1]
    assert compiled.stats["fallbacks"] == 0 and capsys.readouterr().out.count("\n") == 4


def products_from_a_0d_array(x):
    b = np.array(1.0)  # (a 0-d array on the first trip, a NumPy scalar after it)
    history = []
    for i in range(x.shape[0]):
        history.append(b)
        b = b * x[i]
    return history


def test_a_first_trip_item_the_rows_cannot_give_back_runs_the_loop_in_python():
    x = np.arange(1.0, 5.0)
    compiled = gcompile.compile(products_from_a_0d_array)
    result, expected = compiled(x), products_from_a_0d_array(x)
    assert [type(v) for v in result] == [type(v) for v in expected] and result == expected
    assert compiled.stats["fallbacks"] == 0


def kmeans_steps(a, centers, iters):
    """GuanchengZhou's k-means: the list of new centers made in the while loop's body, grown in
    a loop inside it, then rebound to its array."""
    moved, it = True, 0
    while moved and it < iters:
        it += 1
        labels = np.argmin(((a[:, None, :] - centers) ** 2).sum(axis=2), axis=1)
        new = []
        for i in range(centers.shape[0]):
            new.append(np.mean(a[labels == i], axis=0))
        new = np.array(new)
        moved = not (new == centers).all()
        centers = new
    return centers, it


def test_a_list_made_in_a_while_body_and_rebound_to_its_array_stays_rolled():
    a = RNG.random((60, 2))
    check(kmeans_steps, a, a[:3].copy(), 20)  # (each center a point: no cluster is empty)
    graph = gcompile.trace(kmeans_steps, a, a[:3].copy(), 20)
    assert graph.notes.loops and all(note.rolled for note in graph.notes.loops), graph.notes.loops
