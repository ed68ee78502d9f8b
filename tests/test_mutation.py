"""Mutation semantics: after a compiled call the caller's arrays are exactly what eager NumPy leaves."""

from __future__ import annotations

import numpy as np
import pytest

import gcompile
from tests.support import check


def slice_assign(a, b):
    a[1:-1] = b[1:-1] * 2
    return a.sum()


def augmented_on_argument(a, b):
    a += b
    a *= 2
    a -= 1


def augmented_on_strided_slice(a):
    a[::2] *= 2
    a[1::2] += a[::2]


def write_through_view_variable(a):
    v = a[:, 1:]
    v += 1
    return a.sum()


def write_through_reshape_view(a):
    flat = a.reshape(-1)
    flat[0] = 99.0
    a.T[1, 0] = -1.0


def ufunc_out_argument(a, b):
    np.multiply(a, 2, out=a)
    np.add(a, b, out=b)
    return np.subtract(a, b, out=a)


def copyto_and_fill(a, b):
    np.copyto(a, b * 3)
    b.fill(0.5)


def read_before_and_after_write(a):
    before = a * 1
    view = a[:2]
    a += 1
    return before, view, a * 1


def scalar_augmented_rebinds(x):
    s = x.sum()
    t = s
    s += 1
    return s, t


def element_augmented(a):
    a[0] += 10
    a[-1] *= 3
    return a


def returns_argument_itself(a):
    a += 1
    return a


def intermediate_buffer(x):
    out = np.zeros_like(x)
    out[1:] = x[:-1]
    out[0] = x[-1]
    out *= 2
    return out


def aliased_arguments(a, b):
    a += 1
    return b * 2


def mixed_dtype_out(a, b, c):
    np.add(a, b, out=c)


def unsafe_setitem_cast(a):
    a[...] = 1.7
    a[0] = -2.9


def ravel_of_fortran_copies(a):
    flat = np.ravel(a)
    flat[0] = 100.0
    return flat


def loop_of_inplace_steps(u, steps):
    tmp = np.empty_like(u)
    for _ in range(steps):
        tmp[1:-1] = 0.5 * (u[:-2] + u[2:])
        tmp[0], tmp[-1] = u[0], u[-1]
        u, tmp = tmp, u
    return u


CASES = [
    (slice_assign, lambda: (np.arange(6.0), np.ones(6))),
    (augmented_on_argument, lambda: (np.arange(4.0), np.ones(4))),
    (augmented_on_strided_slice, lambda: (np.arange(8, dtype=np.int32),)),
    (write_through_view_variable, lambda: (np.arange(12.0).reshape(3, 4),)),
    (write_through_reshape_view, lambda: (np.arange(6.0).reshape(2, 3),)),
    (ufunc_out_argument, lambda: (np.arange(4.0), np.ones(4))),
    (copyto_and_fill, lambda: (np.zeros(3), np.arange(3.0))),
    (read_before_and_after_write, lambda: (np.arange(4.0),)),
    (scalar_augmented_rebinds, lambda: (np.arange(4.0),)),
    (element_augmented, lambda: (np.arange(4),)),
    (intermediate_buffer, lambda: (np.arange(5.0),)),
    (
        mixed_dtype_out,
        lambda: (np.arange(3, dtype=np.int16), np.full(3, 0.5), np.zeros(3, np.float32)),
    ),
    (unsafe_setitem_cast, lambda: (np.zeros(3, np.int64),)),
    (ravel_of_fortran_copies, lambda: (np.asfortranarray(np.arange(6.0).reshape(2, 3)),)),
    (loop_of_inplace_steps, lambda: (np.linspace(0.0, 1.0, 9) ** 2, 3)),
]


@pytest.mark.parametrize("fn, make_args", CASES, ids=[c[0].__name__ for c in CASES])
def test_mutation_matches_eager(fn, make_args):
    check(fn, *make_args())


def test_returned_argument_is_the_callers_object():
    fn = gcompile.compile(returns_argument_itself, fullgraph=True)
    a = np.arange(3.0)
    assert fn(a) is a
    np.testing.assert_array_equal(a, [1.0, 2.0, 3.0])


def test_same_array_passed_twice_runs_eagerly_with_a_warning():
    fn = gcompile.compile(aliased_arguments)
    fn(np.arange(3.0), np.arange(3.0))  # separate arrays: compiled
    shared, eager_shared = np.arange(3.0), np.arange(3.0)
    with pytest.warns(
        gcompile.GcompileWarning,
        match="share memory \\(argument 'a' is written, argument 'b' overlaps it\\)",
    ):
        result = fn(shared, shared)
    np.testing.assert_array_equal(result, aliased_arguments(eager_shared, eager_shared))
    np.testing.assert_array_equal(result, [2.0, 4.0, 6.0])  # b saw a's write, as in eager mode
    np.testing.assert_array_equal(shared, eager_shared)
    assert fn.stats["fallbacks"] == 1 and fn.stats["traces"] == 1
    strict = gcompile.compile(aliased_arguments, fullgraph=True)
    with pytest.raises(gcompile.UnsupportedError, match="share memory"):
        strict(shared, shared)


def test_overlapping_views_passed_as_arguments():
    base_eager, base_compiled = np.arange(8.0), np.arange(8.0)
    fn = gcompile.compile(aliased_arguments)
    eager = aliased_arguments(base_eager[:6], base_eager[2:])
    with pytest.warns(gcompile.GcompileWarning, match="share memory"):
        compiled = fn(base_compiled[:6], base_compiled[2:])
    np.testing.assert_array_equal(compiled, eager)
    np.testing.assert_array_equal(base_compiled, base_eager)


def test_writing_a_read_only_argument_names_it():
    a = np.arange(3.0)
    a.flags.writeable = False
    with pytest.raises(ValueError, match="argument 'a', which is not writeable"):
        gcompile.trace(returns_argument_itself, a)
    fn = gcompile.compile(returns_argument_itself)
    with pytest.raises(ValueError, match="read-only"):
        fn(a)
    np.testing.assert_array_equal(a, [0.0, 1.0, 2.0])


def test_writing_a_broadcast_view_is_refused_like_numpy():
    def f(x):
        b = np.broadcast_to(x, (3, 3))
        b[0, 0] = 1.0
        return b

    with pytest.raises(ValueError, match="read-only"):
        f(np.zeros(3))
    with pytest.raises(ValueError, match="read-only view"):
        gcompile.trace(f, np.zeros(3))


def test_same_kind_casting_of_augmented_assignment():
    def f(a):
        a += 1.5

    with pytest.raises(TypeError):
        f(np.zeros(2, np.int64))
    with pytest.raises(TypeError, match="same_kind"):
        gcompile.trace(f, np.zeros(2, np.int64))


def test_out_must_have_the_broadcast_shape():
    def f(a, b):
        np.add(a, b, out=a)

    with pytest.raises(ValueError, match="non-broadcastable output"):
        gcompile.trace(f, np.zeros(3), np.zeros((2, 3)))


def test_setitem_value_must_broadcast():
    def f(a, b):
        a[1:] = b

    with pytest.raises(
        ValueError, match="could not broadcast input array from shape \\(3,\\) into shape \\(2,\\)"
    ):
        gcompile.trace(f, np.zeros(3), np.zeros(3))
    check(
        f, np.zeros((2, 3)), np.ones((1, 1, 3))
    )  # leading 1s of the value are dropped, as in NumPy


def test_mutation_is_explicit_in_the_graph():
    graph = gcompile.trace(augmented_on_strided_slice, np.arange(8))
    setitems = [n for n in graph.nodes if n.op == "call" and n.is_mutation]
    assert len(setitems) == 4
    assert all(n.kind == "scatter" and not n.users for n in setitems)


GLOBAL_STATE = np.zeros(3)


def adds_global(x):
    x += 1
    return x + GLOBAL_STATE


def test_written_argument_that_is_a_global_the_function_reads_runs_eagerly():
    fn = gcompile.compile(adds_global)
    fn(np.zeros(3))
    GLOBAL_STATE[:] = 0
    with pytest.warns(gcompile.GcompileWarning, match="the array read from outside"):
        result = fn(GLOBAL_STATE)
    np.testing.assert_array_equal(
        result, [2.0, 2.0, 2.0]
    )  # eager: x += 1 is seen through the global
