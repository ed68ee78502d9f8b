"""Graph breaks: a statement the tracer refuses runs in Python between compiled regions
(``capture/breaks.py``, ``graph_breaks.py``), with the answers eager NumPy gives."""

from __future__ import annotations

import ast
import inspect
import sys
import textwrap
import warnings

import numpy as np
import pytest

import gcompile

RNG = np.random.default_rng(5)


def _ranked(v):
    """A helper the tracer cannot follow: it reads the data."""
    return sorted(v.tolist())


def top_three(x, w):
    y = np.sin(x) * w
    z = np.asarray(_ranked(y)[-3:])
    t = (z**2).sum() + y * 2
    u = np.asarray(_ranked(t)[:2])  # (a second break, in the region after the first)
    return t - u.sum()


def through_a_view(x):
    head = x[1:]  # a view crossing the break stays a view of x
    order = np.asarray(_ranked(head))
    head[0] = order[-1]
    x *= 2.0
    return order


def loop_calling_the_helper(x, n):
    acc = np.zeros_like(x)
    for i in range(n):  # (the break is inside: the whole loop runs in Python)
        acc += np.asarray(_ranked(x * i))
    return np.tanh(acc) * 2


def loop_with_regions(x, n):
    acc = np.zeros_like(x)
    for i in range(n):
        y = np.sin(x * i) + acc * 0.5
        ranks = np.asarray(_ranked(y))  # (the loop runs in Python, its body's regions compiled)
        acc = acc + np.sqrt(ranks) * 2
    return np.tanh(acc)


def halve_then_rank(x, tol):
    while True:
        x = x / 2
        size = np.abs(x).max()
        if size <= tol:
            break
    ranks = np.asarray(_ranked(x))  # (size is bound after the loop: at its only way out)
    return ranks * size


def checked_then_ranked(a, x):
    if a.shape[0] != a.shape[1]:
        return None  # (an early return before the break: the driver returns it)
    y = a @ x
    ranks = np.asarray(_ranked(y))
    return ranks * 2


def worklist(x):
    stack = (0,)
    seen = 0
    while stack:
        i, stack = stack[-1], stack[:-1]  # (the regions of a trip take the tuple: a new structure)
        y = np.abs(x[i]) * 2.0
        if y > 0.5 and i < x.shape[0] - 1:
            stack = stack + (i + 1,)
            if i % 3 == 0:  # (the tuple grows: its length, part of the structure, changes)
                stack = (x.shape[0] - 1,) + stack
        seen += 1
    return seen


def _line_of(fn, text: str) -> int:
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


def _body_region(compiled, part: str):
    """The region of ``compiled``'s one split whose name holds ``part`` (``"__body_before"``)."""
    (split,) = compiled.breaks.splits.values()
    return next(region for name, _, region in split.regions if part in name)


def _compiled_quietly(fn, *args):
    compiled = gcompile.compile(fn)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", gcompile.GcompileWarning)
        result = compiled(*args)
    return compiled, result, [str(w.message) for w in caught]


def test_a_refused_statement_runs_in_python_between_compiled_regions():
    x = RNG.random(40)
    compiled, result, messages = _compiled_quietly(top_three, x, 0.5)
    np.testing.assert_array_equal(result, top_three(x, 0.5))
    line = _line_of(top_three, "z = np.asarray")
    assert len(messages) == 2 and "graph of top_three__after" in messages[1]  # (the second)
    assert f"breaks the graph of top_three: lines {line}-{line}" in messages[0]
    text, judged, broken = compiled.breaks.text()
    assert f"top_three__before_{line} (lines {line - 1}-{line - 1})" in text
    # (its region before is one step on 40 elements: Python runs it from the next call)
    assert f"top_three__before_{line} runs in Python from call 2: 1 step on at most 40" in judged
    assert f"top_three__after_{line} runs in Python from call 1: its break" in broken
    regions = [r for s in compiled.breaks.splits.values() for _, _, r in s.regions]
    assert all(region.stats["fallbacks"] == 0 for region in regions)  # (none ran eagerly)
    before, after = regions
    assert before.stats["traces"] == 1 and before.entries[0].run is not None
    second = _line_of(top_three, "u = np.asarray")
    assert f"lines {second}-{second} run in Python" in after.breaks.text()[0]
    np.testing.assert_array_equal(compiled(x, 0.5), top_three(x, 0.5))
    assert compiled.stats["graph_breaks"] == 2 and compiled.stats["fallbacks"] == 0
    assert "== graph breaks" in str(gcompile.explain(top_three, x, 0.5))


def test_definite_assignment_after_a_while_true_loop_counts_only_its_own_breaks():
    from gcompile.capture.liveness import _Definite

    def bound_after(source: str) -> frozenset:
        (loop,) = ast.parse(textwrap.dedent(source)).body
        return _Definite().block([loop], frozenset())

    assert bound_after(
        """
        while True:
            y = 1
            if y:
                break
            z = 2
            break
        """
    ) == {"y"}
    for unsure in (
        # a break in the else of a loop inside leaves the while loop before y is bound
        "while True:\n for i in range(3):\n  pass\n else:\n  break\n y = 1\n break",
        # a finally deleting y after the break
        "while True:\n try:\n  y = 1\n  break\n finally:\n  del y",
    ):
        assert "y" not in bound_after(unsure)


def test_a_name_bound_before_every_break_of_a_while_true_loop_crosses_a_graph_break():
    x = RNG.random(6) + 1
    compiled, result, messages = _compiled_quietly(halve_then_rank, x, 1e-3)
    np.testing.assert_array_equal(result, halve_then_rank(x, 1e-3))
    line = _line_of(halve_then_rank, "ranks = np.asarray")
    assert f"breaks the graph of halve_then_rank: lines {line}-{line}" in messages[0]


def test_a_return_before_the_refused_statement_returns_from_the_driver():
    x = RNG.random(4)
    compiled, result, messages = _compiled_quietly(checked_then_ranked, RNG.random((4, 4)), x)
    line = _line_of(checked_then_ranked, "ranks = np.asarray")
    assert f"breaks the graph of checked_then_ranked: lines {line}-{line}" in messages[0]
    for a in (RNG.random((4, 4)), RNG.random((3, 4)), RNG.random((4, 4))):
        expected = checked_then_ranked(a, x)
        got = compiled(a, x)
        assert got is None if expected is None else np.array_equal(got, expected)


def test_regions_of_every_trip_whose_arguments_change_structure_go_to_python_early():
    x = np.linspace(0.3, 1.0, 300)
    compiled, result, _ = _compiled_quietly(worklist, x)
    assert result == worklist(x)
    splits = compiled.breaks.splits.values()
    trips = [r for s in splits for _, _, r in s.regions if r.trips and r.trips.every_trip]
    # (an int the regions take that changes, the count `seen`, is a value after its second
    # value: a later call of the same structure hits its entry)
    assert trips and all(len(r.entries) <= 9 and r.stats["calls"] <= 10 for r in trips)
    assert all("more than 8 structures" in r.trips.demoted for r in trips)


def test_values_cross_a_break_as_they_are_views_and_written_arguments_included():
    x = RNG.random(9)
    expected_x = x.copy()
    expected = through_a_view(expected_x)
    compiled, result, _ = _compiled_quietly(through_a_view, x)
    np.testing.assert_array_equal(result, expected)
    np.testing.assert_array_equal(x, expected_x)


def test_a_break_inside_a_loop_runs_that_loop_in_python_and_the_rest_compiled():
    x = RNG.random(12)
    compiled, result, messages = _compiled_quietly(loop_calling_the_helper, x, 4)
    np.testing.assert_allclose(result, loop_calling_the_helper(x, 4), rtol=1e-15)
    line = _line_of(loop_calling_the_helper, "for i in")
    assert f"lines {line}-{line + 1} run in Python" in messages[0]


def test_a_break_in_a_loop_body_compiles_the_statements_around_it_for_every_trip():
    x = RNG.random(12)
    compiled, result, messages = _compiled_quietly(loop_with_regions, x, 5)
    np.testing.assert_allclose(result, loop_with_regions(x, 5), rtol=1e-14)  # (sin, tanh)
    line = _line_of(loop_with_regions, "ranks = np.asarray")
    assert len(messages) == 1 and f"lines {line}-{line} run in Python" in messages[0]
    regions = {name: r for s in compiled.breaks.splits.values() for name, _, r in s.regions}
    assert sorted(regions) == [
        f"loop_with_regions__after_{line - 2}",
        f"loop_with_regions__before_{line - 2}",
        f"loop_with_regions__body_after_{line}",
        f"loop_with_regions__body_before_{line}",
    ]
    for name in (f"loop_with_regions__body_before_{line}", f"loop_with_regions__body_after_{line}"):
        body = regions[name]  # (the index, new on every trip, is a value: one trace serves all)
        assert body.stats["calls"] == 5 and body.stats["traces"] == 1, name
    assert all(r.stats["fallbacks"] == 0 for r in regions.values())


def indexed_by_the_trip(x, a, n):
    out, rows = np.zeros(n), np.zeros_like(a)
    for i in range(n):
        y = x * 2 if i % 3 == 0 else x - i  # (a branch on the index)
        rows[i] = a[i] * i + a[i - 1]  # (rows at the index and before it: a[-1] on trip 0)
        ranks = np.asarray(_ranked(y))
        z = np.zeros(i + 1)
        z[-1] = x[-i - 1]
        top = np.round(ranks[: i + 1], min(i, 1) + 1)  # (decimals: the index an int here)
        out[i] = top.sum() / (i + 1) + z.sum() + len(z) + i // 2 + i**2 / 3
    return out, rows


def counted_halvings(x, tol):
    k = 0
    while x.max() > tol:
        x = x / 2 + k * 1e-3 * x[k % x.shape[0]]
        ranks = np.asarray(_ranked(x))
        k += 1
        x = x - ranks[0] * 0
    return x, k


def test_an_int_a_loop_python_runs_carries_is_a_value_in_its_body_regions_from_its_second():
    x = RNG.random(5) + 1.0
    compiled, (out, k), _ = _compiled_quietly(counted_halvings, x, 0.01)
    expected = counted_halvings(x, 0.01)
    assert k == expected[1] > 4 and type(k) is int
    np.testing.assert_array_equal(out, expected[0])
    (split,) = compiled.breaks.splits.values()
    for name, _, region in split.regions:
        if "__body_" in name:  # (k = 0, then any k)
            assert region._binder.value_ints == {"k"} and region.stats["traces"] == 2, name


def test_the_index_of_a_loop_python_runs_is_a_value_in_its_body_regions():
    x, a = RNG.random(9), RNG.random((9, 4))
    compiled, (out, rows), _ = _compiled_quietly(indexed_by_the_trip, x, a, 8)
    expected = indexed_by_the_trip(x, a, 8)
    np.testing.assert_array_equal(rows, expected[1])
    np.testing.assert_allclose(out, expected[0], rtol=1e-15)
    line = _line_of(indexed_by_the_trip, "ranks = np.asarray")
    (split,) = compiled.breaks.splits.values()
    regions = {name.rpartition("__")[2]: region for name, _, region in split.regions}
    before, after = regions[f"body_before_{line}"], regions[f"body_after_{line}"]
    assert before._binder.value_ints == {"i"} and before.stats["traces"] == 1
    assert not after._binder.value_ints and after.stats["traces"] == 3  # (0, 1, then a size)
    assert all(r.stats["fallbacks"] == 0 for r in regions.values())


def csr_rows(indptr, indices, values, x):
    y = np.zeros(indptr.shape[0] - 1)
    for i in range(indptr.shape[0] - 1):
        start = indptr[i : i + 1].tolist()[0]  # (a Python list of the data: a break)
        picked = indices[start : indptr[i + 1]]
        stop = indptr[i + 1 : i + 2].tolist()[0]  # (and another)
        y[i] = values[start:stop] @ x[picked]
    return y


def test_regions_of_every_trip_doing_too_little_work_run_in_python_after_a_trial():
    rows, columns = 300, 50
    indptr = np.sort(RNG.integers(0, 4 * rows, rows + 1))
    indptr[0] = 0
    indices = RNG.integers(0, columns, indptr[-1])
    values, x = RNG.random(indptr[-1]), RNG.random(columns)
    compiled, result, _ = _compiled_quietly(csr_rows, indptr, indices, values, x)
    np.testing.assert_allclose(result, csr_rows(indptr, indices, values, x), rtol=1e-14)
    (split,) = compiled.breaks.splits.values()
    body = next(region for name, _, region in split.regions if "__body_" in name)
    inner = body.breaks.regions()  # (the body breaks again at the second list)
    # (the body, refused, puts the driver around its break in its seat at once; each inner
    # region judges itself on its PER_TRIP_TRIAL-th call)
    assert body.trips.calls == 1 and body.trips.demoted_at == 1
    assert body.trips.demoted.startswith("its break at line")
    trial = gcompile.graph_breaks.PER_TRIP_TRIAL
    judged = [r for r in inner if "elements a call" in r.trips.demoted]
    assert len(inner) == 2 and judged and judged[0].trips.demoted_at == trial + 1
    text = "\n".join(compiled.breaks.text())
    first, second = (_line_of(csr_rows, f"{name} = indptr[") for name in ("start", "stop"))
    assert f"body_after_{first} runs in Python from call 1: its break at line {second}" in text
    again = compiled(indptr, indices, values, x)  # (Python runs the body: the same answer)
    np.testing.assert_allclose(again, result, rtol=0, atol=0)


def test_fullgraph_raises_instead_and_some_statements_cannot_break():
    with pytest.raises(gcompile.UnsupportedError, match="tolist"):
        gcompile.compile(top_three, fullgraph=True)(RNG.random(5), 1.0)

    def partly_bound(x, flag):
        if flag:
            y = x * 2
        z = np.asarray(_ranked(x))
        return y + z

    _, result, messages = _compiled_quietly(partly_bound, RNG.random(3), True)
    assert "runs partly_bound eagerly" in messages[0]
    assert (
        "no graph break there: a name the rest of the function reads is bound on some"
        in (messages[0])
    )


def converge_with_exits(x, tol):
    k = 0
    y = x
    while True:
        y = np.sqrt(np.abs(x)) + 1.0  # (the region before the statement)
        k += 1
        if np.asarray(_ranked(y))[-1] > tol * k:  # (refused: Python, leaving the loop)
            break
        y = y * 0.0  # (rebinds y: the break must see the region before's y)
        x = x * 0.5
    return y, k


def skip_large(x, n):
    total = np.zeros_like(x)
    for i in range(n):
        z = x * i
        if np.asarray(_ranked(z))[-1] > 3.0:  # (refused: Python, skipping the rest)
            continue
        total = total + z
    return total


def test_a_statement_leaving_its_loop_runs_in_python_between_the_body_regions():
    x = RNG.random(6) * 10
    compiled, result, messages = _compiled_quietly(converge_with_exits, x, 1.5)
    expected = converge_with_exits(x, 1.5)
    assert result[1] == expected[1] and np.array_equal(result[0], expected[0])
    line = _line_of(converge_with_exits, "> tol * k")
    assert f"lines {line}-{line + 1} run in Python" in messages[0]
    regions = {name for s in compiled.breaks.splits.values() for name, _, _ in s.regions}
    assert f"converge_with_exits__body_before_{line}" in regions
    compiled, result, messages = _compiled_quietly(skip_large, x, 5)
    assert np.array_equal(result, skip_large(x, 5))
    line = _line_of(skip_large, "> 3.0")
    assert f"lines {line}-{line + 1} run in Python" in messages[0]


def _stop(message):
    print(message)
    sys.exit()


def exits_when_negative(a):
    if a[0] < 0.0:  # (never taken here: tracing the branch must not exit)
        _stop("negative")
    return a * 2.0


def test_a_branch_calling_sys_exit_runs_in_python():
    compiled, result, messages = _compiled_quietly(exits_when_negative, np.ones(3))
    assert np.array_equal(result, np.full(3, 2.0)) and "breaks the graph" in messages[0]
    with pytest.raises(SystemExit):
        compiled(-np.ones(3))


def descend_logging(x, lr, steps):
    history = []
    for _ in range(steps):
        loss = np.sum(x * x)
        history.append(loss)  # (a list the loop changes: its regions would take a new one)
        x = x - lr * 2.0 * x
        if np.asarray(_ranked(x))[-1] < 1e-3:
            break
    return x, history


def test_a_loop_changing_a_python_container_runs_whole_in_python():
    x = RNG.random(4) + 1.0
    compiled, result, messages = _compiled_quietly(descend_logging, x, 0.3, 40)
    expected = descend_logging(x, 0.3, 40)
    assert np.array_equal(result[0], expected[0]) and result[1] == expected[1]
    first = _line_of(descend_logging, "for _ in range(steps)")
    assert len(messages) == 1 and f"lines {first}-{first + 5} run in Python" in messages[0]


def escape_times(Z, C, Xi, Yi, N, n):
    """Mandelbrot with shrinking arrays (npbench's mandelbrot2): ``np.add(Z, C, Z)`` is no
    change to a Python container; the refused ``if`` is the statement run in Python."""
    for i in range(n):
        if not len(Z):  # (a length the data decide: Python)
            break
        np.multiply(Z, Z, Z)
        np.add(Z, C, Z)
        out = abs(Z) > 2.0
        N[Xi[out], Yi[out]] = i + 1  # (the trip's int, a different value on each call)
        np.logical_not(out, out)
        Z, C = Z[out], C[out]
        Xi, Yi = Xi[out], Yi[out]
    return N


def test_a_loop_with_ufuncs_writing_out_breaks_at_the_refused_statement_only():
    Xi, Yi = (a.ravel() for a in np.mgrid[0:12, 0:10])
    C = np.linspace(-2.0, 0.5, 120) + 1j * np.linspace(-1.2, 1.2, 120)[::-1]

    def run(fn):
        return fn(np.zeros(120, complex), C.copy(), Xi, Yi, np.zeros((12, 10), np.int64), 30)

    compiled, result, messages = _compiled_quietly(escape_times, *run(lambda *a: a))
    assert np.array_equal(result, run(escape_times)) and np.array_equal(run(compiled), result)
    line = _line_of(escape_times, "if not len(Z)")
    assert len(messages) == 1 and f"lines {line}-{line + 1} run in Python" in messages[0]
    (split,) = compiled.breaks.splits.values()
    body = next(region for name, _, region in split.regions if "__body_after" in name)
    assert body.stats["fallbacks"] == 0 and not body.breaks.splits  # (one Numba program)


def shrinking_escape_times(xn, yn, n, horizon):
    """npbench's mandelbrot2 as written: its grid made inside (``np.mgrid``, constants the
    loop indexes by its masks) and flattened by ``shape`` assignments."""
    Xi, Yi = np.mgrid[0:xn, 0:yn]
    C = np.linspace(-2.0, 0.5, xn)[Xi] + 1j * np.linspace(-1.25, 1.25, yn)[Yi]
    N_ = np.zeros(C.shape, dtype=np.int64)
    Xi.shape = Yi.shape = C.shape = xn * yn
    Z = np.zeros(C.shape, np.complex128)
    for i in range(n):
        if not len(Z):
            break
        np.multiply(Z, Z, Z)
        np.add(Z, C, Z)
        out = abs(Z) > horizon
        N_[Xi[out], Yi[out]] = i + 1
        np.logical_not(out, out)
        Z, Xi, Yi, C = Z[out], Xi[out], Yi[out], C[out]
    return N_.T


def test_shape_assignments_and_a_grid_made_inside_break_only_at_the_refused_test():
    compiled, result, messages = _compiled_quietly(shrinking_escape_times, 12, 10, 30, 2.0)
    np.testing.assert_array_equal(result, shrinking_escape_times(12, 10, 30, 2.0))
    line = _line_of(shrinking_escape_times, "if not len(Z)")
    assert len(messages) == 1 and f"lines {line}-{line + 1} run in Python" in messages[0]
    np.testing.assert_array_equal(
        compiled(12, 10, 30, 3.0), shrinking_escape_times(12, 10, 30, 3.0)
    )


def _partition(arr, left, right):
    pivot = left
    while left < right:
        while left < right and arr[left] <= arr[pivot]:
            left += 1
        while arr[right] > arr[pivot]:
            right -= 1
        if left < right:
            arr[left], arr[right] = arr[right], arr[left]
    arr[pivot], arr[right] = arr[right], arr[pivot]
    return right


def quick_sort(arr, left, right):
    """A recursion whose depth the data decide (luolugithub/practice): the recursive calls run
    in Python, the module's function named by its own body (not a closure of the driver)."""
    if left < right:
        p = _partition(arr, left, right)
        quick_sort(arr, left, p - 1)
        quick_sort(arr, p + 1, right)
    return arr


def sibling_helpers(data):
    """Nested helpers, the first calling the second, defined after it (a closure cell that
    the function binds later): both made again in the driver, where the loop calls them."""

    def info(x):
        return entropy(x) + 1.0

    def entropy(h):
        p = h[h > 0]
        return -sum(p * np.log2(p))  # (Python's sum over a length the data decide: a break)

    out = np.zeros(data.shape[1])
    for i in range(data.shape[1]):
        out[i] = info(data[:, i])
    return out


def test_recursions_and_closures_bound_later_keep_their_meaning_across_breaks():
    a = np.array([5, 3, 8, 1, 9, 2, 7])
    compiled, result, messages = _compiled_quietly(quick_sort, a.copy(), 0, 6)
    np.testing.assert_array_equal(result, np.sort(a))
    assert any("a recursion whose depth the data decide" in m for m in messages), messages
    data = np.random.default_rng(0).random((20, 3))
    compiled, result, messages = _compiled_quietly(sibling_helpers, data)
    np.testing.assert_allclose(result, sibling_helpers(data), rtol=4e-15)  # (a sum's order)
    loop = _line_of(sibling_helpers, "for i in range(data.shape[1])")
    assert len(messages) == 1 and f"lines {loop}-{loop + 1} run in" in messages[0], messages


def ranked_then_shifted(y, w):
    z = np.asarray(sorted(y.tolist(), key=lambda t: -t * w))  # (a lambda called within it)
    w = w + 1.0
    return z * w


def test_a_lambda_used_within_its_statement_does_not_stop_a_break():
    y = np.array([3.0, -1.0, 2.0])
    compiled, result, messages = _compiled_quietly(ranked_then_shifted, y, 2.0)
    np.testing.assert_array_equal(result, ranked_then_shifted(y, 2.0))
    assert compiled.stats["fallbacks"] == 0 and len(messages) == 1 and "breaks" in messages[0]


def scaled_ranks(x, w):
    def scale(v):  # (a function made before the break and read after it: made again there)
        return v * w + 1.0

    shift = lambda v: v - 0.5  # noqa: E731
    y = scale(np.sin(x))
    ranks = np.asarray(_ranked(y))
    return shift(scale(ranks)) + y


def test_functions_made_before_a_break_are_made_again_where_they_are_read():
    x = np.random.default_rng(8).random(7)
    compiled, result, messages = _compiled_quietly(scaled_ranks, x, 3.0)
    np.testing.assert_allclose(result, scaled_ranks(x, 3.0), rtol=4e-15)  # (Numba's sin)
    assert compiled.stats["fallbacks"] == 0 and len(messages) == 1 and "breaks" in messages[0]
    (split,) = compiled.breaks.splits.values()
    assert len(split.regions) == 2  # (before and after: the functions are no region's value)


class _Running:
    """A running mean kept by an object (pyronan's RollingStatistic's form)."""

    def __init__(self, mean):
        self.n, self.mean = 1, mean

    def update(self, value):
        self.n += 1
        self.mean += (value - self.mean) / self.n


def running_means(x):
    state, out = _Running(x[0]), np.empty_like(x)  # (an object the function made)
    for i in range(x.shape[0]):
        state.update(x[i])  # (a change to an object: Python's)
        out[i] = state.mean * 2  # (a region taking the object: refused when it is bound)
    return out


def test_a_region_of_every_trip_refusing_its_arguments_runs_in_python_from_its_first_call():
    x = RNG.random(3000)  # (too many trips to unroll: the loop breaks at `update`)
    compiled, result, _ = _compiled_quietly(running_means, x)
    np.testing.assert_array_equal(result, running_means(x))
    after = _body_region(compiled, "__body_after")
    assert after.stats["fallbacks"] == 1 and after.trips.demoted_at == 1  # (not 40 refusals)
    assert "argument 'state'" in after.trips.demoted and "refused" in after.trips.demoted


def index_as_an_int(x, n):
    out = np.zeros(n)
    for i in range(n):
        y = np.tile(x, i + 1) * i.bit_length()  # (a probed library call's count, an int method)
        ranks = np.asarray(_ranked(y))
        out[i] = ranks.sum()
    return out


def test_a_trip_index_a_region_needs_as_an_int_is_traced_as_one():
    x = RNG.random(3)
    compiled, result, _ = _compiled_quietly(index_as_an_int, x, 4)
    np.testing.assert_array_equal(result, index_as_an_int(x, 4))
    before = _body_region(compiled, "__body_before")
    assert not before._binder.value_ints and before.stats["fallbacks"] == 0


def sized_by_the_trip(x, n):
    out = np.zeros(n)
    for i in range(n):
        z = np.zeros(i + 2)  # (a length the trip index, a value, decides)
        z[-1] = x[i]
        ranks = np.asarray(_ranked(x))
        out[i] = z.sum() + z.size + ranks[0]
    return out


def test_a_region_whose_sizes_the_trip_index_decides_is_judged_without_them():
    x = RNG.random(6)
    compiled, result, _ = _compiled_quietly(sized_by_the_trip, x, 6)
    np.testing.assert_array_equal(result, sized_by_the_trip(x, 6))
    before = _body_region(compiled, "__body_before")
    assert before._binder.value_ints == {"i"} and before.trips.demoted == ""  # (kept)


def flipped(b0, steps):
    """A closure over ``board`` made before a loop that binds ``board`` again (sweep G's
    game of life): a region would hold its own ``board``, which the closure would keep."""
    board = b0.copy()

    def inverted(i):
        if _ranked(board[i : i + 1])[0] < 0.5:  # (refused: a break would split around the loop)
            return 1.0
        return 0.0

    for _ in range(steps):
        new = np.zeros_like(board)
        for i in range(board.shape[0]):
            new[i] = inverted(i)
        board = new
    return board


def test_no_break_leaves_a_closure_reading_a_name_bound_again_elsewhere():
    b = np.array([0.0, 1.0, 1.0, 0.0])
    compiled, result, messages = _compiled_quietly(flipped, b, 3)
    np.testing.assert_array_equal(result, flipped(b, 3))
    np.testing.assert_array_equal(compiled(b, 2), b)  # (twice flipped: as it was)
    assert "reading `board`, which the function binds elsewhere" in messages[-1]


def counted_by_a_closure(x):
    total = 0.0

    def add(v):
        nonlocal total  # (a region would hold its own ``total``, which add would write)
        total += v

    items = x.tolist()  # (reads the data: a graph break)
    add(len(items))
    return total * x


class _Scaled:
    def __init__(self, w):
        self.w = w

    def step(self, x):
        self.last = x * self.w  # (the object's state: not a compiled call's to set)
        return x + 1.0


def test_closures_writing_the_functions_names_and_methods_setting_attributes_run_eagerly():
    x = RNG.random(3)
    compiled, result, messages = _compiled_quietly(counted_by_a_closure, x)
    np.testing.assert_array_equal(result, counted_by_a_closure(x))
    assert "writing `total` of the function (nonlocal)" in messages[-1]
    ours, theirs = _Scaled(2.0), _Scaled(2.0)
    compiled, result, messages = _compiled_quietly(ours.step, x)
    np.testing.assert_array_equal(result, theirs.step(x))
    assert type(ours.last) is np.ndarray and np.array_equal(ours.last, theirs.last)
    assert "runs step eagerly" in messages[-1]


def ranked_walk(x):
    walk = [0.0]
    for i in range(x.shape[0]):
        step = x[i] * 2.0  # (a region of every trip doing little work: Python's after a trial)
        walk.append(walk[-1] + step if step > 0.5 else walk[-1] - 1.0)  # (the list: a break)
    return np.array(walk)


def test_a_loop_whose_body_regions_all_run_in_python_runs_as_written_from_then_on():
    x = RNG.random(400)  # (more trips than the trial takes)
    compiled, result, _ = _compiled_quietly(ranked_walk, x)
    np.testing.assert_array_equal(result, ranked_walk(x))
    (split,) = compiled.breaks.splits.values()
    assert split.per_trip and all(r.trips.python for r in split.per_trip)
    assert split.runner() is split.whole and split.whole is not split.driver
    np.testing.assert_array_equal(compiled(x), ranked_walk(x))


def brownian_paths(s0, sigma, n, rng):
    z = rng.standard_normal(n)  # (a draw: Python runs it on every call)
    return s0 * np.cumsum(sigma * z) + 1.0


def noisy_steps(x, steps, rng):
    for _ in range(steps):
        noise = rng.standard_normal(x.shape)
        x = np.clip(x + 0.1 * noise, -1.0, 1.0)
    return x * 2


def test_draws_from_a_generator_argument_run_in_python_and_the_rest_compiles():
    for make in (np.random.default_rng, np.random.RandomState):
        compiled, result, messages = _compiled_quietly(brownian_paths, 1.0, 0.2, 30, make(3))
        line = _line_of(brownian_paths, "z = rng")
        assert f"lines {line}-{line} run in Python" in messages[0]
        assert f"drawing from argument 'rng' (a {type(make(3)).__module__}" in messages[0]
        rng, eager_rng = make(4), make(4)
        for expected in [brownian_paths(1.0, 0.2, 30, eager_rng) for _ in range(2)]:
            np.testing.assert_array_equal(compiled(1.0, 0.2, 30, rng), expected)  # (new draws)
        (after,) = [r for s in compiled.breaks.splits.values() for _, _, r in s.regions]
        assert after.stats["fallbacks"] == 0 and after.entries[0].run is not None
    x = RNG.random(8) - 0.5
    compiled, result, messages = _compiled_quietly(noisy_steps, x, 3, np.random.default_rng(6))
    np.testing.assert_array_equal(result, noisy_steps(x, 3, np.random.default_rng(6)))
    line = _line_of(noisy_steps, "noise = rng")
    assert f"lines {line}-{line} run in Python" in messages[-1]


def seeded_paths(n, rng=None):
    if rng is None:  # (hands the generator on: runs in Python)
        rng = np.random.default_rng(0)
    return np.cumsum(rng.standard_normal(n) * 0.1)


def test_a_region_handing_a_generator_on_runs_that_statement_in_python():
    for rng in (None, np.random.default_rng(2)):
        compiled, result, messages = _compiled_quietly(seeded_paths, 20, rng)
        eager_rng = None if rng is None else np.random.default_rng(2)
        np.testing.assert_array_equal(result, seeded_paths(20, eager_rng))
    line = _line_of(seeded_paths, "if rng is None")
    assert f"lines {line}-{line + 1} run in Python" in messages[1]
    assert "returning argument 'rng' (a numpy.random._generator.Generator)" in messages[1]


def test_a_length_the_data_decide_counts_at_its_most_when_a_region_is_judged():
    def picked(x, m):
        return x[m] * 2.0  # (u0 rows: at most m's length)

    graph = gcompile.trace(picked, np.ones((600, 2)), np.ones(600, bool))
    small = gcompile.graph_breaks.too_little_work(graph, [np.ones((600, 2)), np.ones(600, bool)])
    assert small is not None and "at most 1200 elements" in small
    large = [np.ones((5000, 2)), np.ones(5000, bool)]
    assert gcompile.graph_breaks.too_little_work(graph, large) is None


def test_element_reads_are_no_work_when_a_region_is_judged():
    def listed(x):
        return list(x), np.zeros(x.shape[0])  # (Sweep J's Dijkstra before its Python loop)

    x = np.arange(160.0)
    graph = gcompile.trace(listed, x)
    assert sum(node.op == "call" for node in graph.nodes) > 100  # (one read per element)
    assert "at most 160 elements" in gcompile.graph_breaks.too_little_work(graph, [x])
