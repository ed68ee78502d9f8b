"""Loops whose values share memory see each other's writes, on the same trip and on later trips,
as eager NumPy does (issue 19): views made before the loop or inside it, views of views, steps,
transposes, reshapes, ``[None]``, carried views, nested loops, element writes.

The invariant behind it (``frontend/loops._sharing_carried``, checked by ``verify``): no argument
of a loop that its body writes shares memory with another argument of the loop; a carried
array that keeps its memory is a view of the one lifted array instead.
"""

import warnings

import numpy as np
import pytest

import gcompile
from gcompile.frontend import loops as loop_tracing
from gcompile.ir.control import ForRange
from gcompile.ir.subgraph import walk
from gcompile.ir.verify import GraphError
from tests.support import check


def reduced(U, n):  # the reduction: stale reads of U after writes through u
    u = U[1:]
    for _ in range(n):
        d = U[:-1] * 1.0
        u += d
    return U


def gray_scott(Z, n):
    """Gray-Scott reaction-diffusion in the usual tutorial form: U and V views of one array,
    u and v views of their interiors made before the loop and updated in place."""
    U, V = Z[0], Z[1]
    u, v = U[1:-1, 1:-1], V[1:-1, 1:-1]
    Du, Dv, F, k = 0.16, 0.08, 0.035, 0.065
    for _ in range(n):
        Lu = U[0:-2, 1:-1] + U[1:-1, 0:-2] - 4 * U[1:-1, 1:-1] + U[1:-1, 2:] + U[2:, 1:-1]
        Lv = V[0:-2, 1:-1] + V[1:-1, 0:-2] - 4 * V[1:-1, 1:-1] + V[1:-1, 2:] + V[2:, 1:-1]
        uvv = u * v * v
        u += Du * Lu - uvv + F * (1 - u)
        v += Dv * Lv + uvv - (F + k) * v
    return Z


def stepped(U, n):
    e, o = U[::2], U[1::2]
    for _ in range(n):
        e[1:] += o[:-1]
        o += e
    return U


def transposed(A, n):
    t = A.T
    for _ in range(n):
        t += A * 0.5
    return A


def transposed_rows(A, n):
    At = A.T
    for _ in range(n):
        for j in range(A.shape[0]):
            A[j, :] += At[j, :] * 0.5
    return A


def new_axis(U, n):
    v = U[None]
    for _ in range(n):
        v[0, 1:] += U[:-1]
    return U


def reshaped(A, n):
    r = A.reshape(-1)
    for _ in range(n):
        r[1:] += A.reshape(-1)[:-1]
        r[0] = r[0] + A[0, 0]
    return A


def two_views(U, n):
    a, b = U[1:], U[:-1]
    for _ in range(n):
        a += b
        b *= 0.5
    return U


def element_writes(U, n):
    u = U[1:]
    for _ in range(n):
        for j in range(1, u.shape[0]):
            u[j] = u[j - 1] + U[j]
    return U


def nested(U, n):
    u = U[1:]
    for _ in range(n):
        for _j in range(2):
            u += U[:-1] * 0.5
    return U


def view_in_outer_body(U, n):
    for _ in range(n):
        w = U[1:]
        for _j in range(2):
            w += U[:-1] * 0.25
    return U


def column_view(A, n):
    c = A[:, 0]
    for _ in range(n):
        A[1:, :] += c[:-1, None] * 0.5
    return A


def carried_local(U, n):
    W = U.copy()
    w = W[1:]
    for _ in range(n):
        w += W[:-1]
        U += W
    return U, W


def scalar_reads(U, n):
    u = U[1:]
    s = 0.0
    for _ in range(n):
        u *= 1.5
        s = s + U[-1] + U.sum()
    return s, U


def rebound_after_write(U, n):  # x is U's memory on the first trip only
    x = U[1:]
    for _ in range(n):
        U[0] += x[0]
        x = x * 2.0
    return U, x


def jacobi_to_convergence(u0, tol):  # double buffering: u, un = un, u
    u = u0.copy()
    un = np.empty_like(u)
    delta = 1.0
    while delta > tol:
        un[:] = u
        un[1:-1] = 0.5 * (u[2:] + u[:-2])
        delta = np.abs(un - u).max()
        u, un = un, u
    return u, un, delta


def life(grid, n):  # two boards trading places, neighbours counted by np.roll
    a = grid.copy()
    b = np.zeros_like(grid)
    for _ in range(n):
        count = np.roll(a, 1, 0) + np.roll(a, -1, 0) + np.roll(a, 1, 1) + np.roll(a, -1, 1)
        b[...] = (count == 3) | ((a == 1) & (count == 2))
        a, b = b, a
    return a


def rotated_buffers(U, n):  # three buffers trading places, the first written on each trip
    a, b, c = U.copy(), U * 2.0, U * 3.0
    for _ in range(n):
        a[0] += b[1] + c[2]
        a, b, c = b, c, a
    return a, b, c


def buffer_read_after(U, n):  # the first buffer is read after the loop under another name
    a = U.copy()
    first = a
    b = np.zeros_like(U)
    for _ in range(n):
        b[:] = a + 1.0
        a, b = b, a
    return a + first


def argument_buffer(U, n):  # eager writes the argument on every other trip
    un = U.copy()
    for _ in range(n):
        un[1:-1] = 0.5 * (U[2:] + U[:-2])
        U, un = un, U
    return U


VECTOR_CASES = [
    reduced,
    stepped,
    new_axis,
    two_views,
    element_writes,
    nested,
    view_in_outer_body,
    carried_local,
    scalar_reads,
    rebound_after_write,
]
MATRIX_CASES = [transposed, transposed_rows, reshaped, column_view]


@pytest.mark.parametrize("fn", VECTOR_CASES, ids=lambda f: f.__name__)
def test_vector_loops_see_writes_through_views(fn):
    check(fn, np.linspace(0.5, 2.0, 8), 3, backends=("interpreter",))


@pytest.mark.parametrize("fn", MATRIX_CASES, ids=lambda f: f.__name__)
def test_matrix_loops_see_writes_through_views(fn):
    check(fn, np.arange(25.0).reshape(5, 5) / 7, 3, backends=("interpreter",))


def test_the_reduced_case_and_gray_scott_compiled():
    assert reduced(np.array([1.0, 0.0, 0.0]), 2).tolist() == [1.0, 2.0, 1.0]
    check(reduced, np.array([1.0, 0.0, 0.0]), 2)
    check(reduced, np.linspace(0.0, 1.0, 9), 4)
    rng = np.random.default_rng(5)
    Z = np.stack([np.ones((12, 12)), np.zeros((12, 12))])
    Z[:, 4:8, 4:8] = [[[0.5]], [[0.25]]]
    Z += 0.05 * rng.random(Z.shape)
    check(gray_scott, Z, 20)


def test_the_loops_stay_loops_carrying_the_base():
    graph = gcompile.trace(reduced, np.zeros(5), 3)
    (loop,) = [n for n in graph.nodes if isinstance(n.target, ForRange)]
    assert [p.name for p in loop.target.body.placeholders] == ["U"]
    assert loop.args == (graph.placeholders[0],)
    graph = gcompile.trace(gray_scott, np.zeros((2, 6, 6)), 3)
    assert sum(isinstance(n.target, ForRange) for n in graph.nodes) == 1


def test_a_loop_rebinding_shared_memory_runs_in_python_with_a_reason():
    graph = gcompile.trace(rebound_after_write, np.zeros(5), 3)
    assert not any(isinstance(n.target, ForRange) for n in graph.nodes)
    (note,) = graph.notes.loops
    assert not note.rolled and "share memory" in note.reason and "'x'" in note.reason


def test_buffers_a_loop_writes_and_trades_stay_loops_when_the_function_owns_them():
    u0 = np.random.default_rng(3).random(9)
    for tol in (5e-3, 1.5e-3):  # 11 and 16 trips: each buffer ends holding either
        check(jacobi_to_convergence, u0, tol)
    check(rotated_buffers, np.arange(6.0), 7)
    board = (np.random.default_rng(5).random((7, 9)) < 0.4).astype(np.int64)
    check(life, board, 9)
    for fn, args in (
        (jacobi_to_convergence, (u0, 1e-3)),
        (rotated_buffers, (u0, 7)),
        (life, (board, 9)),
    ):
        names = [n.target.name for n in gcompile.trace(fn, *args).nodes if n.op == "call"]
        assert names.count("while_loop") + names.count("for_range") == 1
    # (a roll by an int shorter than its axis is two slices joined: no gather, in loops a call
    # back into NumPy)
    steps = [
        v.node.target.name for v in walk(gcompile.trace(life, board, 9)) if v.node.op == "call"
    ]
    assert "extern" not in steps
    for fn, why in ((buffer_read_after, "under another name"), (argument_buffer, "does not own")):
        check(fn, np.arange(6.0), 5)  # eager's answer, the loop in Python
        graph = gcompile.trace(fn, np.arange(6.0), 5)
        assert not any(isinstance(n.target, ForRange) for n in graph.nodes)
        (note,) = graph.notes.loops
        assert not note.rolled and why in note.reason


def test_verify_names_a_loop_whose_arguments_share_written_memory(monkeypatch):
    monkeypatch.setattr(loop_tracing, "_sharing_carried", lambda *args: frozenset())
    graph = gcompile.trace(reduced, np.zeros(5), 3)
    with pytest.raises(GraphError, match=r"argument 0 \(%getitem_1\), which its body writes"):
        graph.verify()


def write_through_a_chosen_array(x, z):
    y = x if x.sum() > 1.0 else z
    y[1] = -5.0  # (writes x or z, as the data chose)
    return x + z


def write_into_an_array_a_branch_may_have_chosen(x, z):
    if x.sum() > 1.0:
        y = x
    else:
        y = z
    x[0] = 100.0  # (y sees it when it is x)
    return y * 1.0


def write_through_an_array_a_loop_chose(x0, y, n):
    x = x0
    for _ in range(n):
        x = y  # (from the first trip on, x is y)
    x[0] = 5.0
    return y * 1.0


def seidel_until_converged(A, b, x0):
    n = len(A)
    x = x0
    x_new = np.zeros(n)
    trips = 0
    while True:
        for j in range(n):
            x_new[j] = (b[j] - np.dot(A[j][:j], x[:j]) - np.dot(A[j][j + 1 :], x[j + 1 :])) / A[j][
                j
            ]
        trips += 1
        if np.max(np.abs(x_new - x)) < 1e-5:
            break
        x = x_new  # (from the second trip on, the sweep reads what it writes)
    return x_new, trips


def test_writes_through_arrays_a_branch_or_loop_chose_reach_every_name():
    for fn, make in (
        (write_through_a_chosen_array, lambda s: (np.full(3, s), np.zeros(3))),
        (write_into_an_array_a_branch_may_have_chosen, lambda s: (np.full(3, s), np.zeros(3))),
        (write_through_an_array_a_loop_chose, lambda s: (np.zeros(3), np.ones(3), int(3 * s))),
    ):
        compiled = gcompile.compile(fn)
        for s in (1.0, 0.0):
            args, expected_args = make(s), make(s)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", gcompile.GcompileWarning)
                got = compiled(*args)
            assert np.array_equal(got, fn(*expected_args)), (fn.__name__, s)
            assert all(np.array_equal(a, e) for a, e in zip(args, expected_args))
    rng = np.random.default_rng(7)
    A = rng.random((6, 6)) + 6 * np.eye(6)
    b = rng.random(6)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", gcompile.GcompileWarning)
        x, trips = gcompile.compile(seidel_until_converged)(A, b, np.zeros(6))
    expected, expected_trips = seidel_until_converged(A, b, np.zeros(6))
    assert trips == expected_trips and np.array_equal(x, expected)


def write_after_a_loop_may_choose(x, z):
    y = z
    for i in range(x.shape[0]):
        if x[i] > 0:
            y = x  # (y is z, or x once some element is positive)
    y[0] = 5.0  # (refused: a graph break; the region before must hand back that very array)
    return x * 1.0, z * 1.0


def test_a_region_returning_an_array_a_loop_chose_runs_in_python():
    for x in (-np.ones(4), np.ones(4)):
        z = np.arange(4.0)
        args, expected_args = (x.copy(), z.copy()), (x.copy(), z.copy())
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", gcompile.GcompileWarning)
            got = gcompile.compile(write_after_a_loop_may_choose)(*args)
        expected = write_after_a_loop_may_choose(*expected_args)
        assert all(np.array_equal(a, b) for a, b in zip(got, expected))
        assert any("a region returning an array" in str(w.message) for w in caught)
