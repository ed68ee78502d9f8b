"""Buffer assignment (``passes/buffers.py``): writes go into the memory they update.

Each case pins what the fused graph does (a kernel writing into the array, or a temporary
copied in, or a copy kept) and checks the results against NumPy on both backends, at two
sizes where sizes matter.
"""

from __future__ import annotations

import numpy as np
import pytest

import gcompile
from gcompile.ir import ops
from gcompile.ir.kernel import FusedKernel
from gcompile.tools.explain import graph_counts
from tests.support import check


def jacobi(a, b):
    b[1:-1, 1:-1] = 0.25 * (a[:-2, 1:-1] + a[2:, 1:-1] + a[1:-1, :-2] + a[1:-1, 2:])


def stencil_in_place(u):
    u[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])


def exp_tail(x):
    x[1:] = np.exp(x[1:]) * 2.0


def row_from_another(a):
    a[2, :] = a[0, :] * 3.0 - a[1, :]


def differences(x):
    out = np.zeros_like(x)
    out[1:] = x[1:] - x[:-1]
    return out


def softmax_in_place(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    x[...] = e / e.sum(axis=1, keepdims=True)


def sin_in_place(x):
    x[:] = np.sin(x) * 0.5


def both_gradients(f):
    gy, gx = np.empty_like(f), np.empty_like(f)  # (one value to CSE: two writes start from it)
    gy[1:-1, :] = f[2:, :] - f[:-2, :]
    gy[0, :], gy[-1, :] = f[1, :] - f[0, :], f[-1, :] - f[-2, :]
    gx[:, 1:-1] = f[:, 2:] - f[:, :-2]
    gx[:, 0], gx[:, -1] = f[:, 1] - f[:, 0], f[:, -1] - f[:, -2]
    return gy, gx


def scaled_by_root(x, p: float):
    x[1:] = x[1:] * p**0.5  # (a region: `x[:]` is the whole array, a writeback of the product)


def fused(fn, *args):
    return gcompile.trace(
        fn, *[np.copy(a) if isinstance(a, np.ndarray) else a for a in args], stage="fused"
    )


def targets(graph) -> list:
    return [n.target.name for n in graph.nodes if n.op == "call"]


def writer_kernels(graph) -> list:
    """The kernels writing their result into their first argument."""
    return [n for n in graph.nodes if isinstance(n.target, FusedKernel) and n.target.mutates]


def notes(graph) -> str:
    return "\n".join(graph.notes.fusion.notes)


@pytest.mark.parametrize("n", [6, 33])
def test_a_kernel_writes_straight_into_the_destination_region(n):
    a, b = np.random.default_rng(0).random((n, n + 1)), np.zeros((n, n + 1))
    graph = fused(jacobi, a, b)
    assert targets(graph) == ["fused_1"]  # no temporary, no update copy, no write-back
    (kernel,) = writer_kernels(graph)
    assert kernel.args[0] is graph.placeholders[1]  # it writes b
    assert graph_counts(graph)["buffers"] == 0
    assert "%fused_1 writes its result into %b[1:-1, 1:-1] (no temporary)" in notes(graph)
    check(jacobi, a, b)


def test_reading_the_region_elsewhere_keeps_a_temporary_and_stores_it_in_place():
    u = np.random.default_rng(1).random((7, 9))
    graph = fused(stencil_in_place, u)
    (stencil, store) = [n for n in graph.nodes if n.op == "call"]
    assert store.target is ops.STORE and store.args == (graph.placeholders[0], stencil)
    assert not writer_kernels(graph)
    assert "reads the region through another index map" in notes(graph)  # (the temporary)
    assert "a copy loop writes it in" in notes(graph)
    check(stencil_in_place, u)


@pytest.mark.parametrize(
    "fn, shape",
    [(exp_tail, (10,)), (row_from_another, (3, 8)), (softmax_in_place, (4, 300))],
)
def test_the_same_element_or_disjoint_memory_is_read_in_place(fn, shape):
    x = np.random.default_rng(2).random(shape)
    graph = fused(fn, x)
    (kernel,) = writer_kernels(graph)
    assert not any(
        n.target in (ops.UPDATE, ops.WRITEBACK, ops.STORE) for n in graph.nodes if n.op == "call"
    )
    assert kernel.args[0] is graph.placeholders[0]
    check(fn, x)


def test_an_array_the_function_makes_is_written_by_the_kernel():
    x = np.random.default_rng(3).random(12)
    graph = fused(differences, x)
    assert [t for t in targets(graph) if t != "zeros"] == ["fused_1"]
    check(differences, x)


def test_two_writes_from_one_value_write_one_in_place_and_copy_the_other():
    f = np.random.default_rng(4).random((5, 6))
    graph = fused(both_gradients, f)
    assert "copies %empty_1: another write starts from the same value" in notes(graph)
    check(both_gradients, f)


def scaled_laplacian(u, h):
    lap = np.empty_like(u)
    lap[1:-1] = u[:-2] - 2.0 * u[1:-1] + u[2:]
    lap[0], lap[-1] = 0.0, 0.0
    return lap / (h * h)


def temporary_read_again(u):
    t = np.empty_like(u)
    t[1:] = u[1:] * 2.0
    t[0] = 1.0
    return np.exp(t), t


def temporary_read_shifted(u):
    t = np.zeros_like(u)
    t[1:] = u[1:] * 2.0
    return t - t[::-1]


def test_a_kernel_writes_into_a_temporary_that_dies_at_it_and_nowhere_else():
    u = np.random.default_rng(5).random(20)
    graph = fused(scaled_laplacian, u, 0.5)
    (last,) = [n for n in writer_kernels(graph) if n.args[0] is not graph.placeholders[0]][-1:]
    assert "writes its result into %" in notes(graph) and "dead after it" in notes(graph)
    assert graph.output_node.args[0][0] is last  # the temporary's memory is returned
    check(scaled_laplacian, u, 0.5)
    for fn in (temporary_read_again, temporary_read_shifted):
        graph = fused(fn, u)
        assert "dead after it" not in notes(graph), fn.__name__
        check(fn, u)


def test_a_range_limited_function_in_place_gives_numpys_values_beyond_its_range():
    x = np.linspace(-1e6, 1e6, 1001)  # sin's fast path holds in a range: these leave it
    check(sin_in_place, x)


def test_arithmetic_that_may_refuse_at_run_time_keeps_the_copies():
    x = np.arange(4.0)
    graph = fused(scaled_by_root, x, 4.0)
    assert ops.WRITEBACK in [n.target for n in graph.nodes if n.op == "call"]
    assert "Python arithmetic may refuse at run time" in notes(graph)
    fn = gcompile.compile(scaled_by_root)
    fn(x, 4.0)
    np.testing.assert_array_equal(x, np.arange(4.0) * 2.0)
    expected = x.copy()
    with np.errstate(all="ignore"), pytest.warns(np.exceptions.ComplexWarning):
        scaled_by_root(expected, -4.0)  # eager: a complex factor, its real part kept
    with pytest.warns(gcompile.GcompileWarning, match="result type depends on the values"):
        with pytest.warns(np.exceptions.ComplexWarning):
            fn(x, -4.0)  # refused while running: eager reruns it on unchanged arguments
    np.testing.assert_array_equal(x, expected)


def test_an_argument_written_in_place_that_shares_memory_with_another_runs_eagerly():
    a = np.random.default_rng(5).random((6, 6))
    expected = a.copy()
    jacobi(expected, expected)
    fn = gcompile.compile(jacobi)
    with pytest.warns(gcompile.GcompileWarning, match="share memory"):
        fn(a, a)
    np.testing.assert_array_equal(a, expected)


def shift_right(a):
    a[2:] = a[:-2]


def test_an_overlapping_copy_stays_numpys_assignment():
    a = np.arange(10.0)
    graph = fused(shift_right, a)
    assert targets(graph) == ["getitem", "store"]  # NumPy buffers the overlapping copy
    assert not writer_kernels(graph)
    check(shift_right, a)
