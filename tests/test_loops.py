"""Loops as loops: ``for`` loops captured as ``for_range`` nodes, compiled into one Numba
function per loop nest, checked against eager NumPy (results and arguments written in place),
with the graph's size independent of the trip count and one trace for every size."""

from __future__ import annotations

import collections
import warnings

import numpy as np
import pytest

import gcompile
from bench.loop_programs import covariance  # npbench's polybench covariance: v @ M per column
from gcompile.ir.control import ForRange
from gcompile.ir.subgraph import loop_of, walk

from .support import check

RNG = np.random.default_rng(7)


def _loops(graph) -> list:
    return [
        v.node for v in walk(graph) if v.node.op == "call" and isinstance(v.node.target, ForRange)
    ]


# -- programs -------------------------------------------------------------------------------------


def crout_lu(A):
    n = A.shape[0]
    for k in range(n):
        for i in range(k + 1, n):
            A[i, k] /= A[k, k]
            A[i, k + 1 :] -= A[i, k] * A[k, k + 1 :]
    return A


def lower_solve(L, b):
    n = L.shape[0]
    x = np.empty(n)
    for i in range(n):
        x[i] = (b[i] - L[i, :i] @ x[:i]) / L[i, i]
    return x


def upper_solve_in_place(U, b):
    n = U.shape[0]
    for i in range(n - 1, -1, -1):
        b[i] = (b[i] - np.dot(U[i, i + 1 :], b[i + 1 :])) / U[i, i]


def running_max(x):
    best = x[0]
    for i in range(1, x.shape[0]):
        best = np.maximum(best, x[i])
    return best


def decay(x, alpha):
    acc = 0.0
    for v in x:
        acc = alpha * acc + v
    return acc


def smooth_rows(img, passes):
    out = img.copy()
    for _ in range(passes):
        out[:, 1:-1] = 0.25 * out[:, :-2] + 0.5 * out[:, 1:-1] + 0.25 * out[:, 2:]
    return out


def first_and_last(x):
    y = np.zeros_like(x)
    n = x.shape[0]
    for i in range(n):
        if i == 0:
            y[i] = x[i]
        elif i == n - 1:
            y[i] = -x[i]
        else:
            y[i] = x[i - 1] + x[i + 1]
    return y


def reversed_prefix(x):
    total = np.float32(0)
    for i in reversed(range(x.shape[0])):
        total = total + x[i]
        x[i] = total
    return x


def counts(a):
    hits = 0
    for i in range(a.shape[0]):
        hits = hits + a[i]
    return hits


def empty_and_single(x):
    s = 1.0
    for i in range(3, 3):
        s = s * x[i]
    for i in range(2, 3):
        s = s + x[i]
    return s


def stepped(x):
    out = np.zeros(x.shape[0] // 3 + 1)
    for i in range(0, x.shape[0], 3):
        out[i // 3] = x[i]
    return out


def _scale_row(A, i, c):
    for j in range(A.shape[1]):
        A[i, j] *= c


def with_helper(A):
    for i in range(A.shape[0]):
        _scale_row(A, i, 2.0)
    return A


def power_iteration(A, x, steps):
    for _ in range(steps):
        y = A @ x
        x = y / np.sqrt(y @ y)
    return x


def left_products(A, x, steps):
    for _ in range(steps):
        y = x @ A
        x = y / np.sum(np.abs(y))
    return x


def python_list_loop(x):
    for c in [1.0, 2.0, 3.0]:
        x = x * c
    return x


def table_max(seq):
    n = seq.shape[0]
    table = np.zeros((n, n), np.int32)
    for i in range(n - 1, -1, -1):
        for j in range(i + 1, n):
            table[i, j] = max(table[i, j], table[i, j - 1] + seq[j])
            table[i, j] = min(table[i, j], table[i, j - 1] + 7)
    return table


def outer_min_plus(path):
    for k in range(path.shape[0]):
        path[:] = np.minimum(path[:], np.add.outer(path[:, k], path[k, :]))


def sweep_rows(steps, n, A):
    for _ in range(steps - 1):
        for i in range(1, n - 1):
            A[i, 1:-1] += A[i - 1, :-2] + A[i + 1, 2:]
            for j in range(1, n - 1):
                A[i, j] += A[i, j - 1]
                A[i, j] /= 4.0


def batched_rows(A, C4):  # npbench's polybench doitgen: a (NQ, 1, NP) @ (NP, NP) per trip
    NR, NQ, NP = A.shape
    for r in range(NR):
        A[r, :, :] = np.reshape(np.reshape(A[r], (NQ, 1, NP)) @ C4, (NQ, NP))


def mixed_products(A, B, x, steps):  # M @ M, M.T @ v of float32 v, v @ M in a body
    for _ in range(steps):  # (strided and reversed operands: tests/backends/test_blas.py)
        B = np.tanh(A @ B) + A.T @ x
        x = (x @ B).astype(np.float32) / B.shape[0]
    return B, x


PROGRAMS = {
    "crout_lu": (crout_lu, lambda n: (RNG.random((n, n)) + n * np.eye(n),)),
    "lower_solve": (
        lower_solve,
        lambda n: (np.tril(RNG.random((n, n))) + n * np.eye(n), RNG.random(n)),
    ),
    "upper_solve_in_place": (
        upper_solve_in_place,
        lambda n: (np.triu(RNG.random((n, n))) + n * np.eye(n), RNG.random(n)),
    ),
    "running_max": (running_max, lambda n: (RNG.random(n),)),
    "decay": (decay, lambda n: (RNG.random(n), 0.9)),
    "smooth_rows": (smooth_rows, lambda n: (RNG.random((n, n + 3)), 90)),
    "first_and_last": (first_and_last, lambda n: (RNG.random(n),)),
    "reversed_prefix": (reversed_prefix, lambda n: (RNG.random(n).astype(np.float32),)),
    "counts": (counts, lambda n: (RNG.integers(0, 5, n).astype(np.int32),)),
    "empty_and_single": (empty_and_single, lambda n: (RNG.random(n),)),
    "stepped": (stepped, lambda n: (RNG.random(n),)),
    "with_helper": (with_helper, lambda n: (RNG.random((n, 4)),)),
    "python_list_loop": (python_list_loop, lambda n: (RNG.random(n),)),
    "power_iteration": (power_iteration, lambda n: (RNG.random((n, n)), RNG.random(n), 30)),
    "left_products": (left_products, lambda n: (RNG.random((n, n)), RNG.random(n), 30)),
    "table_max": (table_max, lambda n: (RNG.integers(0, 4, n).astype(np.int32),)),
    "outer_min_plus": (outer_min_plus, lambda n: (RNG.integers(1, 50, (n, n)).astype(np.int64),)),
    # (at most 20 rows: check's error bounds trace every trip unrolled, 3 * 18 * 18 inner
    # bodies here instead of 3 * 38 * 38; the loops stay rolled in the program either way)
    "sweep_rows": (sweep_rows, lambda n: (4, min(n, 20), RNG.random((min(n, 20),) * 2))),
    "covariance": (covariance, lambda n: (n, 3.0 * n, RNG.random((3 * n, n)))),
    "batched_rows": (batched_rows, lambda n: (RNG.random((n, 3, n)), RNG.random((n, n)))),
    "mixed_products": (
        mixed_products,
        lambda n: (
            RNG.random((2 * n, 2 * n)) / n,
            RNG.random((2 * n, 2 * n)),
            RNG.random(2 * n).astype(np.float32),
            40,
        ),
    ),
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
@pytest.mark.parametrize("n", [5, 40])
def test_loop_programs_match_eager(name, n):
    fn, make = PROGRAMS[name]
    check(fn, *make(n))


@pytest.mark.parametrize("name", sorted(set(PROGRAMS) - {"python_list_loop", "empty_and_single"}))
def test_loops_stay_loops_and_compile_to_one_numba_function(name):
    fn, make = PROGRAMS[name]
    compiled = gcompile.compile(fn, fullgraph=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no loop left to the interpreter
        compiled(*make(40))  # (the size of test_loop_programs_match_eager's second case: an
        # int argument, a static value, gives the same program, compiled once per process)
    assert _loops(compiled.entries[-1].graph), "the loop was unrolled"
    assert "# loop " in compiled.code  # (the loop nest, or the whole graph, as one function)
    assert "runs in the interpreter" not in compiled.code


def test_one_trace_for_every_size():
    compiled = gcompile.compile(crout_lu)
    for n in (6, 17, 40):
        A = RNG.random((n, n)) + n * np.eye(n)
        expected = crout_lu(A.copy())
        np.testing.assert_allclose(compiled(A), expected, rtol=1e-12)
    assert compiled.stats["traces"] == 1


def test_an_int_argument_that_changes_is_a_size_from_its_second_value():
    compiled = gcompile.compile(covariance, fullgraph=True)
    for M in (5, 9, 13, 5):  # (M = 5 first: the program of test_loop_programs_match_eager's
        # [5-covariance], a static value, compiled once per process)
        data = RNG.random((3 * M, M))
        assert_close_covariance(compiled(M, 3.0, data.copy()), covariance, M, 3.0, data)
        if M == 9:
            compiles = compiled.stats["kernel_compiles"]
    assert compiled.stats["traces"] == 2
    assert compiled.stats["kernel_compiles"] == compiles  # (no compile for M = 13)


def assert_close_covariance(got, covariance, M, float_n, data):
    """``got`` within the error bound of dot products (gamma_n |x| . |y|) of the eager result:
    the loop's products are summed in another order (blocked BLAS) than NumPy's per column,
    and entries near zero are sums of terms that cancel."""
    want = covariance(M, float_n, data.copy())
    centred = np.abs(data - data.mean(axis=0))
    bound = 4 * len(data) * np.finfo(data.dtype).eps * (centred.T @ centred) / (float_n - 1.0)
    assert got.dtype == want.dtype and got.shape == want.shape
    assert np.all(np.abs(got - want) <= bound)


def upper_gram(X, Y):
    """Row i: column i of X times the columns of Y after i (a product per trip, blocked)."""
    n = X.shape[1]
    G = np.zeros((n, Y.shape[1]))
    for i in range(n):
        G[i, i + 1 :] = X[:, i] @ Y[:, i + 1 :]
    return G


def gram_that_scales_its_columns(X):
    """The same products, but the loop writes X: each trip must see the columns before it."""
    n = X.shape[1]
    G = np.zeros((n, n))
    for i in range(n):
        G[i, i:] = X[:, i] @ X[:, i:]
        X[:, i] *= 0.5
    return G


def _program_source(compiled) -> str:
    return "\n".join(source for _, source in compiled.entries[-1].run.program.loops)


def test_products_of_a_column_and_the_columns_after_it_are_one_gemm_per_block_of_trips():
    M, n = 70, 80  # (70 trips: blocks of 32, 32 and 6; a matrix too large to fuse the product)
    data = RNG.random((n, M))
    compiled = gcompile.compile(covariance, fullgraph=True)
    assert_close_covariance(compiled(M, float(n), data.copy()), covariance, M, float(n), data)
    assert "block_products" in _program_source(compiled)
    X, Y = RNG.random((90, 66)), RNG.random((90, 140))
    compiled = gcompile.compile(upper_gram, fullgraph=True)
    np.testing.assert_allclose(compiled(X, Y), upper_gram(X, Y), rtol=1e-12)
    assert "block_products" in _program_source(compiled)
    compiled = gcompile.compile(gram_that_scales_its_columns, fullgraph=True)
    got, want = compiled(X.copy()), gram_that_scales_its_columns(X.copy())
    np.testing.assert_allclose(got, want, rtol=1e-12)
    assert "block_products" not in _program_source(compiled)


def test_len_of_an_array_stays_symbolic_in_a_loop():
    def weighted(x):
        total = 0.0
        for i in range(len(x)):
            total = total + x[i] * i
        return total

    compiled = gcompile.compile(weighted, fullgraph=True)
    for n in (5, 50, 500):
        x = RNG.random(n)
        assert compiled(x) == weighted(x)  # (the same order of additions: exact)
    assert compiled.stats["traces"] == 1


def test_a_python_int_a_loop_makes_a_python_float_stays_a_python_float():
    def clock(x, dt, steps):
        t = 0  # (then ``t += dt``: a Python float, as in eager mode)
        halves = x.shape[0]
        for _ in range(steps):
            x = x + dt
            t += dt
            halves = halves / 2
        return x, t, halves

    compiled = gcompile.compile(clock, fullgraph=True)
    for args in ((np.ones(4), 0.1, 5), (np.ones(2), 0.25, 0)):
        got, expected = compiled(*args), clock(*args)
        assert [type(v) for v in got] == [type(v) for v in expected]
        np.testing.assert_array_equal(got[0], expected[0])
        assert got[1:] == expected[1:]


def energies(x, steps):
    """pmocz/nbody-python's energy: ``np.sum(np.sum(...))``, a reduction of one element."""
    out = np.zeros((steps, 4))
    for i in range(steps):
        x = x * 0.5 + 1
        out[i] = np.sum(np.sum(x)), np.mean(np.max(x)), np.prod(x.min()), np.any(np.all(x > 1))
    return out


def test_a_reduction_of_one_element_in_a_loop_body_is_that_element():
    for x in (RNG.random((4, 3)), np.arange(6, dtype=np.int16).reshape(2, 3)):
        check(energies, x, 5)
    compiled = gcompile.compile(energies, fullgraph=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error", gcompile.GcompileWarning)  # (not in the interpreter)
        compiled(RNG.random((4, 3)), 5)


def test_graph_size_does_not_grow_with_the_trip_count():
    def sizes(steps):
        graph = gcompile.trace(smooth_rows, RNG.random((8, 8)), steps, stage="fused")
        return len(str(graph).splitlines())

    assert sizes(200) == sizes(2000)


def test_small_fixed_loops_are_unrolled_by_a_pass():
    graph = gcompile.trace(smooth_rows, RNG.random((8, 8)), 3)
    assert _loops(graph), "the tracer keeps the loop"
    optimized = gcompile.trace(smooth_rows, RNG.random((8, 8)), 3, stage="optimized")
    assert not _loops(optimized)
    notes = [n.reason for n in optimized.notes.loops if not n.rolled]
    assert any("unroll_loops" in reason for reason in notes)


def test_matrix_products_in_a_loop_body_call_blas_from_the_program():
    def layers(x, w, b):
        for _ in range(40):
            x = np.tanh(x @ w + b)
        return x

    args = (RNG.random((8, 16)), RNG.random((16, 16)) * 0.1, RNG.random(16))
    compiled = gcompile.compile(layers, fullgraph=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no loop left to the interpreter
        check(layers, *args)
        compiled(*args)
    assert _loops(compiled.entries[-1].graph), "the loop was unrolled"
    assert "_matmul_into(" in compiled.code


def test_a_question_on_the_index_splits_the_range():
    graph = gcompile.trace(first_and_last, RNG.random(9), stage="optimized")
    starts = sorted(str(node.kwargs["start"]) for node in _loops(graph))
    assert starts == ["1"]  # i == 0 and i == n - 1 unrolled, one loop over 1..n-2 left
    assert check(first_and_last, np.arange(9.0)) is not None


def test_out_of_bounds_index_raises_index_error_like_numpy():
    def shift(x):
        y = np.empty_like(x)
        for i in range(x.shape[0]):
            y[i] = x[i + 1]
        return y

    compiled = gcompile.compile(shift)
    with pytest.raises(IndexError), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        compiled(np.arange(5.0))


def test_loops_left_to_python_are_explained():
    def early_exit(x, limit):
        total = 0.0
        for i in range(x.shape[0]):
            with np.errstate(all="ignore"):  # (a return inside `with`: the loop stays Python's)
                if i >= limit:
                    return total
            total += x[i]
        return total

    report = gcompile.explain(early_exit, np.arange(4.0), 2)
    text = str(report)
    assert "== loops" in text and "unrolled in Python" in text and "`return`" in text


def test_explain_lists_rolled_loops_with_index_and_carried_values():
    text = str(gcompile.explain(decay, RNG.random(10), 0.5))
    assert "rolled, index k0 in [0, s0-1], s0 trips" in text
    assert "carried: acc (by value)" in text
    assert "== symbols" in text and "s0  x.shape[0]" in text


def test_drawing_has_a_back_edge_per_carried_value():
    graph = gcompile.trace(decay, RNG.random(10), 0.5)
    dot = graph.to_dot() if hasattr(graph, "to_dot") else gcompile.tools.dot.to_dot(graph)
    assert 'label=<<font point-size="8">next</font>>' in dot


def test_a_trace_past_the_budget_runs_eagerly_naming_the_unrolled_loop():
    def early_exit_sum(x):
        total = 0.0
        for i in range(x.shape[0]):
            with np.errstate(all="ignore"):  # (a return inside `with`: the loop stays Python's)
                if i < 0:
                    return 0.0
            total = total + x[i]
        return total

    compiled = gcompile.compile(early_exit_sum, options={"max_graph_nodes": 500})
    x = RNG.random(2000)
    with pytest.warns(gcompile.GcompileWarning, match="too large to compile"):
        assert compiled(x) == early_exit_sum(x)
    assert "unrolled" in compiled.refusals[-1].hint
    # (gcompile.trace and explain() trace with the same budget: they refuse, never run on)
    with pytest.raises(gcompile.UnsupportedError, match="too large to compile"):
        gcompile.trace(early_exit_sum, RNG.random(20000))


def test_a_loop_body_past_the_statement_budget_is_refused_with_its_line():
    compiled = gcompile.compile(crout_lu, options={"max_loop_statements": 3})
    A = RNG.random((6, 6)) + 6 * np.eye(6)
    with pytest.warns(gcompile.GcompileWarning, match="a loop too large to compile"):
        compiled(A.copy())
    assert "test_loops.py" in compiled.refusals[-1].detail


def from_an_initial_guess(A, b):
    """Sweep H's Gauss-Seidel: arrays of Python numbers, written with traced values."""
    x = np.array([4, 4, 5], float)
    flags = np.asarray((0, 0))
    for _ in range(3):
        for i in range(3):
            x[i] = (b[i] - A[i, i - 1] * x[i - 1] - A[i, i - 2] * x[i - 2]) / A[i, i]
    flags[1] = b.sum() > 100
    return x, flags, np.array([2, 3])


def test_arrays_of_python_numbers_written_with_traced_values_are_the_graphs():
    A = np.array([[9.0, 8, 9], [5, 10, 4], [2, 4, 8]])
    b = np.array([170.0, 117, 98])
    check(from_an_initial_guess, A, b)
    compiled = gcompile.compile(from_an_initial_guess, fullgraph=True)
    for scale in (1.0, 0.5, 1.0):  # (made afresh on each call: no call sees another's writes)
        for got, expected in zip(compiled(A, b * scale), from_an_initial_guess(A, b * scale)):
            np.testing.assert_array_equal(got, expected)
    assert compiled.stats["traces"] == 1


def elementary_automaton(rule, generations, width):
    """Sweep H's rule 30: an array of Python numbers indexed by traced values."""
    rules = np.array([int(i) for i in np.binary_repr(rule, 8)])
    population = np.zeros((generations, width), dtype=int)
    population[0, width // 2] = 1
    for g in range(generations - 1):
        for i in range(1, width - 1):
            population[g + 1, i] = rules[7 - np.dot(population[g, i - 1 : i + 2], [4, 2, 1])]
    return population


def test_arrays_of_python_numbers_indexed_by_traced_values_are_the_graphs():
    for rule in (30, 110):
        check(elementary_automaton, rule, 12, 30)
    graph = gcompile.trace(elementary_automaton, 30, 12, 30)
    assert sum(loop_of(node) is not None for node in graph.nodes) == 1


def sieve(n):
    """A prime sieve reading the slice it writes, ``flags[j * j :: j] *= 0``: the read needs
    ``j`` as an int, so the loop is unrolled, one ``if`` of the data per trip. (Written with a
    number, ``mask[j * j :: j] = False``, it is a while loop: ``tests/test_number_lists.py``.)"""
    flags = np.ones(n, dtype=np.int64)
    flags[:2] = 0
    for j in range(2, int(np.sqrt(n)) + 1):
        if flags[j]:
            flags[j * j :: j] *= 0
    return np.nonzero(flags)[0]


def sorted_sieve(n):
    return np.sort(sieve(n).astype(np.float64))  # (np.sort: no whole program, a host of them)


def test_many_branches_of_an_unrolled_loop_are_refused_before_numba_compiles_them():
    """A whole program of branches compiles about 35 ms a branch: past MAX_BRANCHES (a sieve
    to 10000 has 99; the trace stops at the 65th) it runs eagerly; a host that would compile each on its own refuses past
    MAX_SEPARATE_BRANCHES (a loop unrolled with np.sort after it: 30 branches); a short one
    compiles."""
    first = sieve.__code__.co_firstlineno
    loop = f"the loop at {__file__}:{first + 6} ran in Python: bool() of a traced value"
    branch = f"the `if` at {__file__}:{first + 7} ran in Python: a question about the loop index"
    for fn, n, says in (
        (sieve, 10_000, ("more than 64 branches", loop, branch)),  # (and why each ran in Python)
        (sorted_sieve, 1000, ("30 branches",)),
    ):
        compiled = gcompile.compile(fn)
        with pytest.warns(gcompile.GcompileWarning, match="too large to compile"):
            np.testing.assert_array_equal(compiled(n), fn(n))
        detail = compiled.refusals[-1].detail
        assert all(s in detail for s in says) and compiled.stats["kernel_compiles"] == 0
    compiled = gcompile.compile(sieve, fullgraph=True)
    for n in (100, 101, 120):
        np.testing.assert_array_equal(compiled(n), sieve(n))


def _bisected(f, lower, upper):
    while upper - lower > 1e-9:
        middle = 0.5 * (upper + lower)
        if f(middle) > 0:
            upper = middle
        else:
            lower = middle
    return lower


def roots_by_lambdas(coefs):
    """Sweep G's roots: a lambda over the loop's variable unrolls the loop, a while loop of the
    data per trip: 40 trips, one program of 921 statements, compiled in 4.5 s."""
    roots = []
    for c in coefs:
        f = lambda x: c[0] * x**3 + c[1] * x + c[2]  # noqa: E731, B023
        roots.append(_bisected(f, 0.0, 4.0))
    return np.array(roots)


def test_a_program_past_the_statement_budget_is_refused_before_numba_compiles_it():
    coefs = np.column_stack([np.ones(40), np.linspace(0.1, 2, 40), -np.linspace(0.5, 3, 40)])
    compiled = gcompile.compile(roots_by_lambdas)
    with pytest.warns(gcompile.GcompileWarning, match="too large to compile"):
        np.testing.assert_array_equal(compiled(coefs), roots_by_lambdas(coefs))
    assert "statements (budget 600)" in compiled.refusals[-1].detail
    assert compiled.stats["kernel_compiles"] == 0


def test_loops_option_off_unrolls_as_before():
    graph = gcompile.trace(decay, RNG.random(6), 0.5, options={"loops": False})
    assert not _loops(graph)


def _calls(graph, name: str) -> int:
    return sum(1 for v in walk(graph) if v.node.op == "call" and v.node.target.name == name)


def test_vector_products_in_loop_bodies_become_sums_for_generated_code_only():
    L, b = RNG.random((6, 6)) + 6 * np.eye(6), RNG.random(6)
    optimized = gcompile.trace(lower_solve, L, b, stage="optimized")
    assert _calls(optimized, "matmul") == 0 and _calls(optimized, "sum") >= 1
    interpreted = gcompile.trace(
        lower_solve, L, b, stage="optimized", options={"backend": "interpreter"}
    )
    assert _calls(interpreted, "matmul") >= 1  # (the interpreter keeps NumPy's dot)


def power_steps(A, x, steps):
    for _ in range(steps):
        y = A @ x
        x = y / np.sqrt(y @ y)
    return x


def test_a_small_matrix_product_fused_at_the_traced_sizes_traces_again_for_a_large_one():
    """(A power method traced at n=6, then called at n=400, ran its matrix-vector products
    as fused kernels, not BLAS: slower than eager.)"""
    compiled = gcompile.compile(power_steps, fullgraph=True)
    for n in (6, 8, 80):
        A, x = RNG.random((n, n)), RNG.random(n)
        check(power_steps, A, x, 30)
        compiled(A, x, 30)
    assert compiled.stats["traces"] == 2  # (6 and 8 share a trace: 64 elements < SMALL_MATRIX)
    large = gcompile.trace(power_steps, RNG.random((80, 80)), RNG.random(80), 30, stage="optimized")
    small = gcompile.trace(power_steps, RNG.random((6, 6)), RNG.random(6), 30, stage="optimized")
    for graph, products in ((large, 1), (small, 0)):  # (A @ x: BLAS at 6400 elements only)
        assert sum(_calls(loop.target.body, "matmul") for loop in _loops(graph)) == products


def test_loop_invariant_code_is_hoisted_before_the_loop():
    def scaled_decay(x, alpha):
        acc = 0.0
        for v in x:
            acc = (1.0 - alpha) * acc + alpha * v
        return acc

    graph = gcompile.trace(scaled_decay, RNG.random(10), 0.25, stage="optimized")
    (loop,) = _loops(graph)
    body_ops = {n.target.name for n in loop.target.body.nodes if n.op == "call"}
    assert "subtract" not in body_ops  # 1.0 - alpha: computed once, before the loop
    assert any(n.op == "call" and n.target.name == "subtract" for n in graph.nodes)
    assert any("hoisted out of" in note.reason for note in graph.notes.loops)
    check(scaled_decay, RNG.random(10), 0.25)


def rows_appended(x, n):
    rows = []
    for i in range(n):
        rows.extend([x * i])  # (appends are recorded as rows: ``test_list_rows.py``)
    return np.stack(rows)


def last_in_a_dict(x, n):
    d = {}
    for i in range(n):
        d["last"] = x * i  # the body's value leaves the loop through the dict
    return d["last"] + 1


def test_loops_changing_python_objects_run_in_python_with_their_reason():
    x = np.arange(3.0)
    graph = gcompile.trace(rows_appended, x, 4)
    assert not _loops(graph)
    (note,) = graph.notes.loops
    assert "its body calls `.extend(...)`" in note.reason
    graph = gcompile.trace(last_in_a_dict, x, 4)
    assert not _loops(graph)
    (note,) = graph.notes.loops
    assert "its body changes a dict it reads" in note.reason
    check(rows_appended, x, 4, backends=("interpreter",))
    check(last_in_a_dict, x, 4, backends=("interpreter",))


def diagonal_then_add(a):
    t = 0.0
    for i in range(a.shape[0]):
        t += np.tanh(a[i, i])
    return a + t


def test_a_programs_top_level_kernels_write_its_callers_buffers_in_parallel_on_large_spaces():
    a = RNG.random((40, 40))
    check(diagonal_then_add, a, backends=("numba",))
    compiled = gcompile.compile(diagonal_then_add)
    first = compiled(a)
    code = compiled.code
    assert "_buffer0 = _empty((s0, s1), _float64, 'C')" in code
    assert "_loop_diagonal_then_add(v_a, _buffer0, _loop_diagonal_then_add_c0)" in code
    assert "out0_fused_1 = b0" in code and "return\n" in code  # (the caller keeps its buffer)
    assert "_fused_1(out0_fused_1, a0, t, n0=s0, n1=s1, st0=s1)" in code
    assert "(called as _fused_1 in loop diagonal_then_add), serial" in code  # (one variant)
    second = compiled(a)  # the caller still holds the first result: a new buffer
    assert second is not first and np.array_equal(first, second)
    np.testing.assert_allclose(first, diagonal_then_add(a), rtol=1e-14)  # (tanh: libm's)
    large = RNG.random((2048, 2048))  # (2^22 elements: another program, its kernel parallel)
    np.testing.assert_allclose(compiled(large), diagonal_then_add(large), rtol=1e-14)
    assert "(called as _fused_1 in loop diagonal_then_add), parallel" in compiled.code
    assert compiled.stats["traces"] == 2
    programs = [e.run.program.run.__globals__["_loop_diagonal_then_add"] for e in compiled.entries]
    kernels = [program.py_func.__globals__["_fused_1"] for program in programs]
    assert [bool(k.targetoptions.get("parallel")) for k in kernels] == [False, True]
    # (its program too: Numba loading a serial program from disk would not start the threads)
    assert [p.targetoptions.get("parallel") is not False for p in programs] == [False, True]


def decaying_sum(u, steps):
    acc = np.zeros_like(u)
    for k in range(steps):
        acc[k] = acc[k - 1] * 0.5 + u[k]
    return acc


def test_a_large_array_a_whole_program_creates_comes_from_the_host_pool_filled():
    u = RNG.random(200_000)  # 1.6 MB: pooled, so its zeros are written by the program
    compiled = gcompile.compile(decaying_sum, fullgraph=True)
    for steps in (300, 299, 300, 100):  # (299: steps is a size from then on; the call with
        # 100 gets the buffer of the call with 300 back, which holds values past 100)
        np.testing.assert_array_equal(compiled(u, steps), decaying_sum(u, steps))
    assert "_empty((s0,), _float64, 'C')" in compiled.code and "b0[...] = 0.0" in compiled.code


def smooth_steps(u, steps):
    for _ in range(steps):
        v = np.tanh(u[1:-1]) * 0.5  # a fixed-size kernel output that dies within the trip
        u[1:-1] = v + u[:-2] * 0.25
    w = u.copy()
    for _ in range(steps):
        w = np.tanh(w) + 0.5  # carried: a new array each trip
    return u, w


def test_a_kernel_output_that_dies_within_the_trip_gets_one_buffer_before_the_loop():
    u = RNG.random(50)
    check(smooth_steps, u, 40)
    compiled = gcompile.compile(smooth_steps, fullgraph=True)
    compiled(u.copy(), 40)  # (40 trips: neither loop is unrolled)
    ((_, source),) = compiled.entries[-1].run.program.loops
    before_loops = source.split("for k")[0]
    assert before_loops.count("= _memory.empty((s0 - 2,), np.float64)") == 1  # v's buffer
    assert (
        source.split("for k1")[1].count("_memory.empty((s0,), np.float64)") == 1
    )  # w's, made on every trip
    assert "_memory.empty((s0,)" not in before_loops


def relax_with_edges(p, q, trips):
    """A relaxation whose edge rows copy their neighbours (rows apart from their source), one
    column shifted in place (overlapping its source), a block filled and a 3-D block copied."""
    for _ in range(trips):
        p[1:-1, 1:-1] = 0.25 * (p[:-2, 1:-1] + p[2:, 1:-1] + p[1:-1, :-2] + p[1:-1, 2:])
        p[-1, :] = p[-2, :]
        p[0, :] = p[1, :]
        p[1:, -1] = p[:-1, -1]
        p[2:4, 2:4] = 1.0
        q[1:] = q[:-1] * 0.5 + p[1:3, 1:3]
    return p, q


def test_a_programs_stores_call_shared_copies_and_keep_numpys_order_where_they_overlap():
    p, q = RNG.random((9, 8)), RNG.random((4, 2, 2))
    check(relax_with_edges, p, q, 40)
    compiled = gcompile.compile(relax_with_edges, fullgraph=True)
    compiled(p.copy(), q.copy(), 40)
    ((_, source),) = compiled.entries[-1].run.program.loops
    assert "_copies.assign_1d(p[-1, :], " in source  # (rows apart: no order to keep)
    assert "_copies.assign_overlapping(p[1:, -1], " in source
    assert "_copies.fill_2d(p[2:4, 2:4], 1.0)" in source
    assert "_copies.assign_3d(q[1:], " in source


def swap_through_a_list(x):
    s = [np.zeros(x.shape[1]), np.zeros(x.shape[1])]
    for row in x:
        s[0] += row
        s[1][:] = s[0] * 2
        s[0:2] = s[1:2] + s[0:1]  # (the list changes: tracing the body once would do it once)
    return s[0], s[1]


def tally_in_a_dict(x):
    totals = {"sum": 0.0, "squares": 0.0}
    for v in x:
        totals["sum"] = totals["sum"] + v
        totals["squares"] = totals["squares"] + v * v
    return totals["sum"], totals["squares"]


def swap_in_a_nested_list(x):
    s = [[1.0, 2.0]]
    for i in range(x.shape[0]):
        s[0][0:2] = s[0][1:2] + s[0][0:1]  # (Python numbers of a list the list holds)
        x[i] += s[0][0]
    return x, x.sum()


def tally_in_a_defaultdict(x):
    totals = collections.defaultdict(float)
    for v in x:
        totals["sum"] = totals["sum"] + v
    return totals["sum"], totals["sum"] * 2


def test_a_loop_changing_a_list_or_dict_it_reads_runs_as_python_on_them_unchanged():
    x = np.arange(12.0).reshape(3, 4)
    cases = [
        (swap_through_a_list, x),
        (tally_in_a_dict, np.linspace(0, 1, 7)),
        (swap_in_a_nested_list, np.ones(5)),
        (tally_in_a_defaultdict, np.linspace(0, 1, 7)),
    ]
    for fn, arg in cases:
        expected = fn(arg.copy())
        got = gcompile.compile(fn)(arg.copy())
        for e, g in zip(expected, got):
            np.testing.assert_array_equal(g, e)


def border_erosion(img, kernel):
    """NTU Computer Vision's binary erosion: four loops, a border test on two indices with
    ``continue`` and a ``break``. The outer loops split their ranges; the inner ones ask their
    tests on each trip (splitting them too copied the body 81 times: 14 s of Numba)."""
    h, w = img.shape
    out = np.zeros((h, w), np.uint8)
    for i in range(h):
        for j in range(w):
            flag = 0
            for ii in range(kernel.shape[0]):
                for jj in range(kernel.shape[1]):
                    if kernel[ii][jj] == 1:
                        if i + ii - 2 < 0 or j + jj - 2 < 0 or i + ii - 2 >= h or j + jj - 2 >= w:
                            continue
                        if img[i + ii - 2][j + jj - 2] != 255:
                            flag = 1
                            break
            if flag == 0:
                out[i][j] = 255
    return out


def test_questions_on_indices_inside_a_split_loop_are_asked_on_each_trip():
    kernel = np.ones((5, 5), np.int64)
    kernel[0, 0] = kernel[4, 4] = 0
    img = (RNG.random((9, 9)) > 0.1).astype(np.uint8) * 255
    compiled = gcompile.compile(border_erosion, fullgraph=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error", gcompile.GcompileWarning)  # (no interpreter fallback)
        for part in (img, img[:6, :6].copy()):  # (one entry: the sizes are symbols)
            np.testing.assert_array_equal(compiled(part, kernel), border_erosion(part, kernel))
    assert compiled.stats["traces"] == 1
    graph = gcompile.trace(border_erosion, img, kernel)
    assert any("asked on each trip" in (note.reason or "") for note in graph.notes.loops)
    assert all(note.rolled for note in graph.notes.loops)
    assert len(_loops(graph)) < 20  # (not one copy of the inner loops per piece of the outer)


def rolled_windows(im):
    """A corner detector's windows (ledinhtri97's Moravec detector): np.roll by the loop
    index, then the top-left corner."""
    out = np.zeros((im.shape[0] - 2, 3, 3), im.dtype)
    for x in range(1, im.shape[0] - 1):
        out[x - 1] = np.roll(np.roll(im, shift=-x + 1, axis=0), shift=2, axis=1)[:3, :3]
    return out


def test_a_roll_by_the_loop_index_keeps_the_loop_rolled():
    im = np.random.default_rng(3).integers(0, 9, (7, 6))
    graph = gcompile.trace(rolled_windows, im)
    assert graph.notes.loops and all(note.rolled for note in graph.notes.loops)
    np.testing.assert_array_equal(gcompile.compile(rolled_windows)(im), rolled_windows(im))


def test_roll_takes_shifts_as_numpy_does_and_refuses_those_past_int64():
    x = np.arange(5.0)
    for shift in (2.7, np.uint64(3), -7, True, np.int8(-2)):
        compiled = gcompile.compile(lambda a, s=shift: np.roll(a, s), fullgraph=True)
        np.testing.assert_array_equal(compiled(x), np.roll(x, shift))
    for shift in (10**20, -(2**63)):
        with pytest.raises(gcompile.UnsupportedError, match="past int64"):
            gcompile.compile(lambda a, s=shift: np.roll(a, s), fullgraph=True)(x)
    with pytest.raises(gcompile.UnsupportedError, match="traced array of shifts"):
        gcompile.compile(lambda a, s: np.roll(a, s), fullgraph=True)(x, np.array([1, 2]))
