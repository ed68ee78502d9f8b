"""``return`` inside loops (``capture/loop_returns.py``) and values a loop's first trip binds
(``frontend/loops.LoopTracer._peeled``): the loops stay rolled, the function compiles whole,
and every path returns what eager returns."""

import warnings

import numpy as np
import pytest

import gcompile
from gcompile.capture import convert
from gcompile.ir.subgraph import loop_of

from .support import check

RNG = np.random.default_rng(41)


def first_above(x, t):
    for i in range(x.shape[0]):
        if x[i] > t:
            return i
    return -1


def newton_sqrt(a, tol):
    x = a
    for it in range(60):
        fx = x * x - a * 2.0
        if abs(fx) < tol:
            return x, it
        x = x - fx / (2.0 * x)
    return x, -1


def first_pair(a, t):
    """Two return sites in a nested loop, its variable read after both loops."""
    n = a.shape[0]
    for i in range(n):
        for j in range(i + 1, n):
            s = a[i, j] + a[j, i]
            if s > t:
                return s, i, j
            if s < -t:
                return -s, j, i
    return a[0, 0] * 0.0, n, n  # (a NumPy float as the others: a branch merges types)


def last_index_read(x):
    for i in range(x.shape[0]):
        x[i] = x[i] * 2.0
    return i  # (bound by the loop's first trip)


def newton_while(x, tol):
    """A while loop to convergence returning from inside, and after it."""
    k = 0
    while k < 50:
        fx = x * x - 2.0
        if abs(fx) < tol:
            return x, k
        x = x - fx / (2.0 * x)
        k += 1
    return x, -1


def first_negative(v):
    i = 0
    while i < v.shape[0]:
        for j in range(v.shape[1]):
            if v[i, j] < 0:
                return i, j
        i += 1
    return -1, -1


def _loop_nodes(graph):
    return [n for n in graph.nodes if loop_of(n) is not None]


@pytest.mark.parametrize("t", [0.5, 0.99, 2.0, -1.0])
def test_a_search_loop_returns_as_eager_does(t):
    x = RNG.random(300)
    check(first_above, x, t)
    graph = gcompile.trace(first_above, x, t)
    assert all(note.rolled for note in graph.notes.loops)


def test_a_loop_to_convergence_returns_a_tuple():
    for a, tol in ((3.0, 1e-12), (50.0, 1e-300)):  # (converges; never does: the last return)
        check(newton_sqrt, np.float64(a), tol)


def test_returns_from_a_nested_loop_and_from_two_sites():
    a = RNG.random((6, 6)) - 0.5
    for t in (0.9, 0.5, 5.0, 0.1):
        check(first_pair, a, t)
    graph = gcompile.trace(first_pair, a, 1.0)
    # (the outer loop's first trip, its inner loop in it, traced before it: two loops)
    assert len(_loop_nodes(graph)) == 2 and all(note.rolled for note in graph.notes.loops)


def test_a_loop_variable_read_after_the_loop():
    check(last_index_read, RNG.random(7))


def grown(values, n):
    out = np.array([], dtype=int)
    for i in range(n):
        out = np.append(out, values[i] * 2)  # (a new shape each trip: the loop is unrolled)
    return out


def test_a_loop_declined_after_its_first_trip_leaves_no_constant_behind():
    with warnings.catch_warnings():
        warnings.simplefilter("error", gcompile.GcompileWarning)
        result = gcompile.compile(grown)(np.arange(1, 7), 4)
    np.testing.assert_array_equal(result, grown(np.arange(1, 7), 4))


def power_iteration(a, b, iterations, tol):
    """A ``while`` loop with a ``break`` (a flag in its test) whose result is bound in it,
    and norms (NumPy's own computation, not a library call in the loop)."""
    converged = False
    i = 0
    prev = 0.0
    nextb = a.dot(b)
    while not converged and i < iterations:
        i += 1
        b = nextb / np.linalg.norm(nextb)
        nextb = a.dot(b)
        eig = b @ nextb / np.linalg.norm(b) ** 2
        if np.abs(eig - prev) < tol:
            break
        prev = eig
    return eig, i


def norms(x, z):
    return np.linalg.norm(x), np.linalg.norm(x.T), np.linalg.norm(z), np.linalg.norm(x, axis=0)


def test_a_while_loop_that_breaks_compiles_with_norms_in_it():
    m = RNG.random((30, 30))
    for tol in (1e-12, 1e-3, 0.0):
        check(power_iteration, m + m.T, np.ones(30), 40, tol)
    graph = gcompile.trace(power_iteration, m + m.T, np.ones(30), 40, 1e-3)
    assert all(note.rolled for note in graph.notes.loops)
    assert not any(n.op == "call" and n.target.name == "extern" for n in graph.nodes)
    check(norms, RNG.random((5, 4)), (RNG.random(7) + 1j * RNG.random(7)).astype(np.complex64))
    check(norms, RNG.random((3, 3)), np.arange(6))


def broadcast_and_rows(a, b):
    """``c`` broadcast along the reduced axis of ``sum(a * c, axis=1)`` and read per row by
    ``c * d``: one kernel cannot hold both (it read c[i] for c[j], a wrong answer)."""
    c = b * 0.1
    d = np.sum(a * c, axis=1)
    return d, c * d, a.dot(c) @ c


def test_a_value_broadcast_along_a_reduced_axis_and_read_per_row():
    check(broadcast_and_rows, RNG.random((5, 5)), RNG.random(5))


def python_or_numpy(x, t):
    if x[0] > t:
        return 1, 2  # (Python ints here, NumPy floats below: the types are kept)
    return x[0], x[1]


def test_branches_returning_python_and_numpy_scalars_keep_their_types():
    fn = gcompile.compile(python_or_numpy)
    x = np.array([0.5, 0.7])
    for t in (0.1, 0.6):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", gcompile.GcompileWarning)
            expected, actual = python_or_numpy(x, t), fn(x, t)
        assert actual == expected and [type(v) for v in actual] == [type(v) for v in expected]


def test_returns_inside_while_loops_keep_them_loops():
    for x, tol in ((1.0, 1e-14), (3.0, 0.0), (1.0, 1.0)):  # (converges; never; at once)
        check(newton_while, x, tol)
    v = RNG.random((5, 4))
    for flip in ((3, 2), (0, 0), (4, 3), None):
        w = v.copy()
        if flip is not None:
            w[flip] = -1.0
        check(first_negative, w)
    for fn, args in ((newton_while, (1.0, 1e-14)), (first_negative, (v,))):
        graph = gcompile.trace(fn, *args)
        assert _loop_nodes(graph) and all(note.rolled for note in graph.notes.loops)


def first_flagged(x, out):
    for i in range(x.shape[0]):
        out[i] = 1.0
        if x[i] > 0.5:
            return i  # (past the loop: None)


def test_a_loop_return_past_which_the_function_ends_returns_none_as_eager():
    """(Its final `if` is the loop return's own: no `return None` made for it, which would
    rerun the call eagerly beside the argument it writes: sweep I's sandpile ran eagerly.)"""
    compiled = gcompile.compile(first_flagged)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", gcompile.GcompileWarning)
        for x in (np.array([0.1, 0.7, 0.9]), np.zeros(4)):
            out, expected_out = np.zeros(x.shape[0]), np.zeros(x.shape[0])
            assert compiled(x, out) == first_flagged(x, expected_out)
            np.testing.assert_array_equal(out, expected_out)
    assert "__gc_result = None" not in convert(first_flagged).source


def errors_read_back(x0, tol):
    """A loop that appends to a list and reads it: declined, it runs in Python."""
    x = x0.copy()
    errors = []
    for k in range(50):
        x = 0.5 * x0
        errors.append(np.max(np.abs(x - x0)))
        if errors[k] < tol:
            break
        x0 = x.copy()
    return x


def test_a_refused_break_on_data_names_the_if_that_breaks():
    """The flag a ``break`` on data sets is tested at the next trip's start: a refusal there
    names the ``if`` holding the ``break`` (it named the body's last statement)."""
    compiled = gcompile.compile(errors_read_back, fullgraph=True)
    with pytest.raises(gcompile.UnsupportedError, match=r"in `if errors\[k\] < tol:`"):
        compiled(np.ones(3), 1e-3)
