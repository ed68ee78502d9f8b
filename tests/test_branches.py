"""Branches on traced values: ``cond`` nodes, traced by ``frontend.branches.ControlTracer``.

These call the handler protocol as the capture front-end's ``runtime.cond`` does, with the two
branches as functions of the carried values.
"""

import warnings
from dataclasses import dataclass

import numpy as np
import pytest

import gcompile
from bench.data_programs import crc16
from gcompile.capture import runtime
from gcompile.ir.control import Cond, WhileLoop
from gcompile.ir.subgraph import loop_of, walk

from .support import check

RNG = np.random.default_rng(3)


@dataclass(frozen=True)
class _Info:
    carried: tuple
    filename: str = __file__
    line: int = 0
    effects: tuple = ()


def _cond(test, then, orelse, carried, info):
    handler = runtime.current_handler()
    if handler is not None:
        result = handler.capture_cond(test, then, orelse, carried, info)
        if result is not NotImplemented:
            return result
    return then(*carried) if test else orelse(*carried)


def _while(test, body, carried, info):
    handler = runtime.current_handler()
    if handler is not None:
        result = handler.capture_while(test, body, carried, info)
        if result is not NotImplemented:
            return result
    while test(*carried):
        carried = body(*carried)
    return carried


def count_and_clip(x, t):
    n, total = 0.0, 0.0
    for i in range(2):  # (two trips, unrolled: each holds one branch)

        def then(n, total, i=i):
            x[i] = t
            return n + 1.0, total + x[i]

        def orelse(n, total, i=i):
            return n, total

        n, total = _cond(x[i] > t, then, orelse, (n, total), _Info(("n", "total")))
    return n, total


def test_a_branch_on_a_traced_value_is_a_cond_node_and_compiles():
    fn = gcompile.compile(count_and_clip, fullgraph=True)
    for x in [RNG.random(5), np.array([0.9, 0.1, 0.5]), np.array([0.1, 0.9, 0.2])]:
        mine, theirs = x.copy(), x.copy()
        assert fn(mine, 0.5) == count_and_clip(theirs, 0.5)
        np.testing.assert_array_equal(mine, theirs)
    graph = fn.entries[-1].graph
    conds = [n for n in graph.nodes if isinstance(n.target, Cond)]
    assert len(conds) == 2 and all(c.target.in_place for c in conds)
    assert "if greater_1:" in fn.code
    notes = [note.text() for note in graph.notes.loops]
    assert any("branch kept as %cond_1, setting n, total" in text for text in notes)


def sqrt_by_newton(u, tol):
    def test(err, count, x):
        return err > tol

    def body(err, count, x):
        new = 0.5 * (x + u / x)
        return np.abs(new - x).max(), count + 1, new

    info = _Info(("err", "count", "x"))
    err, count, x = _while(test, body, (1.0, 0, u.copy()), info)
    return x, count


def collatz_steps(n0):
    def test(n, steps):
        return n != 1

    def body(n, steps):
        return np.where(n % 2 == 0, n // 2, 3 * n + 1)[()], steps + 1

    return _while(test, body, (n0 + 0, 0), _Info(("n", "steps")))[1]


def test_a_while_loop_on_traced_values_is_one_node_and_compiles():
    for u in [RNG.random(40) + 1.0, np.full(3, 4.0)]:
        check(sqrt_by_newton, u, 1e-12)
    fn = gcompile.compile(collatz_steps, fullgraph=True)
    for n in [27, 97, 1]:
        assert fn(np.int64(n)) == collatz_steps(np.int64(n))
    graph = fn.entries[-1].graph
    (loop,) = [n for n in graph.nodes if isinstance(n.target, WhileLoop)]
    assert [r.role for r in loop.target.regions] == ["body", "test"]
    assert "while True:" in fn.code and "if not not_equal_1:" in fn.code


# -- as users write them: `if` and `while` statements, converted by the capture front-end -----


def clipped_running_max(x, cap):
    best = x[0]
    at = 0
    for i in range(1, x.shape[0]):
        if x[i] > best:
            best = x[i]
            at = i
        elif x[i] < -cap:
            x[i] = -cap  # a write in one branch only
    return best, at


def newton_kepler(mean_anomaly, eccentricity, tol):
    out = np.empty(mean_anomaly.shape[0])
    for i in range(mean_anomaly.shape[0]):
        m, e = mean_anomaly[i], eccentricity[i]
        anomaly, step = m, 1.0
        while abs(step) > tol:
            step = (anomaly - e * np.sin(anomaly) - m) / (1.0 - e * np.cos(anomaly))
            anomaly = anomaly - step
        out[i] = anomaly
    return out


def test_if_and_while_statements_compile_and_stay_rolled():
    check(crc16, RNG.integers(0, 256, 64))
    check(clipped_running_max, RNG.normal(size=50), 1.0)
    check(newton_kepler, RNG.random(20) * 6.0, RNG.random(20) * 0.9, 1e-12)
    graph = gcompile.trace(newton_kepler, RNG.random(20), RNG.random(20) * 0.9, 1e-12)
    names = {v.node.target.name for v in walk(graph) if v.node.op == "call"}
    assert {"for_range", "while_loop"} <= names
    fn = gcompile.compile(crc16, fullgraph=True)
    data = RNG.integers(0, 256, 300)
    assert fn(data) == crc16(data) and "if " in fn.code


def relax_to_convergence(u, start):
    change = start  # (a constant: the first test is decided in Python, the rest on data)
    steps = 0
    while change > 1e-3:
        previous = u.copy()
        u[1:-1] = 0.5 * (previous[2:] + previous[:-2])
        change = (np.sum(u) - np.sum(previous)) / np.sum(u)
        steps += 1
    return steps


def halve_through_an_alias(a):
    x = a  # (a's memory on the first trip: the write to a is seen through x)
    err = 1
    while err > 1e-3:
        b = x * 0.5
        a[:] = b
        err = np.abs(b).sum()
        x = x * 0.25
    return x, err


def scale_read_on_the_first_trip(x):
    scale = 1  # (a Python int the body reads: x * 1 keeps x's dtype, x * 0.5 does not)
    err = 1
    while err > 1e-2:
        x = x * scale
        scale = scale * 0.5
        err = np.abs(x).max()
    return x, scale, err


def written_then_rebound(a):
    err = 1.0
    while err > 1e-3:
        a[0] = 0.0  # (a is written in place and rebound: the loop declines, after its first trip)
        a = a * 0.5
        err = np.abs(a).max()
    return a, err


def test_a_while_loop_declined_after_its_first_trip_runs_in_python_with_eagers_answer():
    a = RNG.random(8)
    expected_a, expected = a.copy(), written_then_rebound(a.copy())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", gcompile.GcompileWarning)
        result = gcompile.compile(written_then_rebound)(a)
    np.testing.assert_array_equal(result[0], expected[0])
    assert result[1] == expected[1]
    written_then_rebound(expected_a)
    np.testing.assert_array_equal(a, expected_a)


def test_a_while_loop_whose_first_test_is_on_constants_is_one_loop_from_its_first_trip():
    u = RNG.random(40)
    check(relax_to_convergence, u, 1)
    check(relax_to_convergence, u, 0)  # (no trip)
    graph = gcompile.trace(relax_to_convergence, u.copy(), 1)
    names = [v.node.target.name for v in walk(graph) if v.node.op == "call"]
    assert names.count("while_loop") == 1
    top = [node.target.name for node in graph.nodes if node.op == "call"]
    assert "sum" not in top  # (the first trip is the loop's, not traced in line before it)
    # the first trip stays in Python where the loop's types or memory would compute it
    # otherwise: x is a's memory there; the body reads scale, an int there
    check(halve_through_an_alias, RNG.random(8))
    check(scale_read_on_the_first_trip, RNG.random(6) + 1)
    for fn in (halve_through_an_alias, scale_read_on_the_first_trip):
        graph = gcompile.trace(fn, RNG.random(8) + 1)
        assert "absolute" in [node.target.name for node in graph.nodes if node.op == "call"]


def clamped_extremes(x, v):
    pair = max([x[0], x[1], 0.25]) - min((v[0], v[1]))  # (of a list or tuple: the same)
    return max(x.max(), 0.0) + min(abs(x.min()), 10.0) + max(v.sum(), 3) - min(2, v[0], v[1]) + pair


def max_drawdown(vals):
    """Sweep H's drawdown: ints that the floats of the data replace, carried by the loop."""
    mdd, cur_max = 0, 0
    for level in vals:
        cur_max = max(cur_max, level)
        mdd = max((cur_max - level) / cur_max, mdd)
    return -mdd


def test_max_and_min_of_traced_scalars_and_python_numbers_are_selects():
    check(clamped_extremes, RNG.random(5) - 0.7, np.array([1, 5, 2]))
    check(clamped_extremes, np.array([np.nan, 1.0]), np.array([-4, -9]))
    check(clamped_extremes, np.full(4, 20.0), np.array([7, 0]))
    for vals in (RNG.random(50) + 0.5, np.array([2.0, 1.0, 3.0, 0.5]), np.array([0.0, -1.0])):
        check(max_drawdown, vals)  # (it unrolled: the int carried was traced beside floats)
    graph = gcompile.trace(max_drawdown, RNG.random(50))
    assert [loop_of(node) is not None for node in graph.nodes].count(True) == 1


def row_scales(a, v):
    """Scaled partial pivoting's row scales (``max(np.abs(a[i, :]))``): Python's max and min
    over a vector, a NaN kept only when it comes first."""
    s = np.zeros(a.shape[0])
    for i in range(a.shape[0]):
        s[i] = max(np.abs(a[i, :]))
    return s, min(v), max(v * 2)


def test_max_and_min_over_a_vector_are_loops_with_pythons_answer():
    for v in (np.array([np.nan, 1.0, 3.0]), np.array([1.0, np.nan, -3.0]), np.array([2.0])):
        check(row_scales, RNG.random((4, 3)) - 0.5, v)
    check(row_scales, np.array([[1.0, np.nan], [np.nan, 2.0]]), np.array([5, 3, 9], np.int16))
    with pytest.raises(ValueError, match="empty"):
        gcompile.compile(row_scales, backend="interpreter")(np.ones((2, 2)), np.zeros(0))


def test_a_name_bound_in_one_branch_only_is_unbound_after_it_as_in_python():
    def last_positive(x):
        for i in range(x.shape[0]):
            if x[i] > 0:
                seen = x[i]
        return seen

    compiled = gcompile.compile(last_positive, fullgraph=True)  # (a flag beside it: unbound.py)
    assert compiled(np.array([1.0, -2.0, 3.0, -4.0])) == 3.0
    for x in (-np.ones(5), np.zeros(2), np.array([np.nan, -1.0])):
        with pytest.raises(UnboundLocalError, match="local variable 'seen'"):
            compiled(x)
    assert compiled(np.array([-1.0, 2.0])) == 2.0 and compiled.stats["traces"] == 1


def signed(x):
    out = np.empty_like(x)
    for i in range(x.shape[0]):
        if x[i] > 0:
            s = 1.0
        elif x[i] < 0:
            s = -1.0
        out[i] = s * x[i]  # (a zero or NaN keeps the sign before it; a first one raises)
    return out


def doubled_or_negated(a):
    t = a.sum()
    if t > 0:
        r = t * 2
    elif t < 0:
        r = -t
    return r


def test_names_bound_on_some_paths_stay_in_the_graph_and_raise_where_python_does():
    x = np.array([0.5, 0.0, -2.0, np.nan, 3.0])
    check(signed, x)
    check(doubled_or_negated, x[:3])
    cases = ((signed, x[::-1].copy(), x[1:]), (signed, x, np.full(3, np.nan)))
    for fn, bound, unbound in (*cases, (doubled_or_negated, x[:3], x[:2] * 0)):
        compiled = gcompile.compile(fn, fullgraph=True)
        assert compiled(bound) is not None
        with pytest.raises(UnboundLocalError, match="cannot access local variable '[sr]'"):
            compiled(unbound)
        assert compiled.stats["traces"] == 1


def settles_after_a_break(X):
    c = X[:3]
    for _ in range(3):
        if c.sum() > 100:
            break
        c = np.ones((3, 2)) * 50
    return c


def test_branches_giving_shapes_equal_at_these_sizes_only_are_guarded_equal():
    """(f64[min(s0,3),s1] and f64[3,2]: the cond's node crashed, "a gcompile bug"; then the
    loop ran in Python. The sizes are guarded equal, the second branch's value reshaped.)"""
    compiled = gcompile.compile(settles_after_a_break)
    for X in (np.ones((6, 2)), np.full((5, 2), 40.0), np.ones((2, 2))):  # (2 rows: 2 != 3)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = compiled(X)
        assert np.array_equal(result, settles_after_a_break(X))
        assert [str(w.message) for w in caught] == [] or X.shape[0] < 3
    graph = gcompile.trace(settles_after_a_break, np.ones((6, 2)))
    assert [n.target.name for n in graph.nodes if n.op == "call"].count("for_range") == 1


def sqrt_while(a, tol=1e-10):
    x = a  # (the carried value starts as the very value the test reads)
    while abs(x * x - a) > tol:
        x = 0.5 * (x + a / x)
    return x


def test_a_while_test_reads_a_value_the_loop_also_carries_from():
    for a in (4.0, 2.0, 10.0):
        check(sqrt_while, a)


def rescaled(x):
    if x.max() > 1:  # (no loop in the function: it is converted for its `if`)
        x = x / x.max()
    return x


def early_return(x, y):
    if x.sum() > 0 and not y.sum() < 0:
        return x + y
    return x - y


def chosen(x):
    return x * 2 if x.sum() > 0 else -x


def first_small(x, i):
    n = x.shape[0]
    while i < n and x[i] > 0.1:  # (x[i] is read only while i < n, as in Python)
        i += 1
    return i


def test_ifs_conditional_expressions_and_boolean_operators_on_traced_values_compile():
    for sign in (1.0, -1.0):
        check(rescaled, sign * RNG.random(6) * 3)
        check(early_return, sign * RNG.random(6), RNG.random(6) - 0.2)
        check(chosen, sign * RNG.random(6))
    for x in (np.array([0.5, 0.6, 0.7]), np.array([0.5, 0.05, 0.7])):
        check(first_small, x, 0)
    for fn, args in ((early_return, (RNG.random(4), RNG.random(4))), (chosen, (RNG.random(4),))):
        graph = gcompile.trace(fn, *args)
        assert any(isinstance(v.node.target, Cond) for v in walk(graph) if v.node.op == "call")


def _sign_or_none(x):
    if x > 0:
        return 1.0
    elif x < 0:
        return -1.0  # (falls off the end where x is 0 or NaN: None)


def signs_of(a):
    out = np.empty_like(a)
    for i in range(a.shape[0]):
        out[i] = _sign_or_none(a[i])  # (None into a float array: NaN)
    return out


def test_a_helper_returning_none_on_a_path_compiles_and_reruns_eagerly_where_taken():
    """(Sweep H's game of life: `if`/`elif` returns without an `else` broke the graph.)"""
    check(signs_of, RNG.random(5) - 0.5)
    compiled = gcompile.compile(signs_of, fullgraph=True)
    for a in (np.array([1.0, -2.0, 3.0]), np.array([1.0, 0.0, np.nan])):
        np.testing.assert_array_equal(compiled(a), signs_of(a))
    assert compiled.stats["traces"] == 1


def _plug(x):
    return 1.0 if 0.3 < x < 0.6 else 0.0  # (Langtangen's initial condition: a chain)


def plugged(u, xs):
    for i in range(xs.shape[0]):
        u[i] = _plug(xs[i]) + (xs[i] <= 0.5 < u[i] + 1)
    return u


def test_a_chained_comparison_of_traced_values_is_compiled():
    """(Sweep I's heat equation: the chain's `and` asked bool() of the first comparison.)"""
    check(plugged, np.zeros(11), np.linspace(0, 1, 11))


def newton_counted(x, kmax):
    k = 0
    while k < kmax:  # (a test on Python ints: its first trips run in Python)
        x = 0.5 * (x + 2.0 / x)
        k += 1
    return x, k


def relaxed_in_time(u, T=0.5, dt=0.01):
    t = 0.0
    while t < T:  # (Python floats: T and dt are static)
        u = u + dt * (np.roll(u, 1) - u)
        t += dt
    return u, t


def test_a_while_loop_on_python_counters_is_one_loop_after_its_first_trips():
    """(Unrolled, a counter to 5000 refused the function as too large, eager after 0.2 s.)"""
    for kmax in (0, 2, 300):  # (no trip; the trips Python runs only; a loop after them)
        check(newton_counted, np.array([3.0, 0.5]), kmax)
    check(relaxed_in_time, RNG.random(6))
    for fn, args in ((newton_counted, (np.ones(2), 300)), (relaxed_in_time, (RNG.random(6),))):
        graph = gcompile.trace(fn, *args)
        kinds = [type(v.node.target) for v in walk(graph) if v.node.op == "call"]
        assert kinds.count(WhileLoop) == 1


def pivoted_elimination(A, b):
    """Partial pivoting as course code writes it: rows swapped under an `if` on the data, the
    row read at the pivot's position written into another row (a region read at a data
    position, consumed by the write itself)."""
    A, b = A.copy(), b.copy()
    n = b.size
    for j in range(n - 1):
        k = np.argmax(np.abs(A[j:, j])) + j
        if k != j:
            A[j, :], A[k, :] = A[k, :], A[j, :].copy()
            b[j], b[k] = b[k], b[j]
        for i in range(j + 1, n):
            coeff = A[i, j] / A[j, j]
            A[i, j:] -= coeff * A[j, j:]
            b[i] -= coeff * b[j]
    return A, b


def test_rows_swapped_under_a_branch_on_the_pivot_stay_one_loop():
    for A in (RNG.normal(size=(6, 6)), np.eye(5) * 4.0 + 0.5):
        check(pivoted_elimination, A, RNG.normal(size=A.shape[0]))
    graph = gcompile.trace(pivoted_elimination, np.eye(4), np.ones(4))
    assert all(note.rolled for note in graph.notes.loops)
    # the branch's outputs (the arrays it writes) come in one order on every trace: they came in
    # the order of their nodes' addresses, and so did the kernel's text (a cache miss)
    texts = {str(gcompile.trace(pivoted_elimination, np.eye(4), np.ones(4))) for _ in range(10)}
    assert texts == {str(graph)}


def _nearest(x, data):
    return data[int(np.floor(x + 0.5))]


def _linear(x, data):
    left = int(np.floor(x))
    return data[left] + (data[min(left + 1, data.shape[0] - 1)] - data[left]) * (x - left)


def resample(data, step, method):
    """Sweep L's resampler: the helper a loop calls chosen in an `if` before it, so carried as
    perhaps unbound; and a branch on the data in the loop reading it."""
    if method == "nearest":
        at = _nearest
    elif method == "linear":
        at = _linear
    out = np.zeros(data.shape[0] // 2)
    for k in range(out.shape[0]):
        y = at(k * step, data)
        if y > 0:
            y = at(k * step, data) * 2.0
        out[k] = y
    return out


def test_a_helper_bound_before_a_loop_is_passed_in_not_carried_and_the_loop_stays_rolled():
    data = RNG.random(40) - 0.3
    compiled = gcompile.compile(resample, fullgraph=True)
    for method in ("nearest", "linear"):
        for step in (0.7, 1.5):
            np.testing.assert_array_max_ulp(
                compiled(data, step, method), resample(data, step, method), 1
            )
        graph = gcompile.trace(resample, data, 0.7, method)
        assert [loop_of(node) is not None for node in graph.nodes].count(True) == 1
    with pytest.raises(UnboundLocalError, match="'at'"), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (the trace meets it: the call runs as eager, raising)
        gcompile.compile(resample)(data, 0.7, "cubic")


def rebinding(data):
    f = np.sum
    total = 0.0
    for k in range(data.shape[0]):
        total += f(data[: k + 1])
        f = np.max  # (another object in its place: the loop runs in Python, unrolled)
    return total


def test_a_loop_rebinding_a_passed_in_function_still_runs_as_python_does():
    check(rebinding, RNG.random(6))
