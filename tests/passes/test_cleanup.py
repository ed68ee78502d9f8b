"""The cleanup passes (dce, cse, constant_fold, simplify) on small traced graphs.

Each pass is called directly on a graph from ``gcompile.trace``. The text before and after
is golden, the returned flag says whether the graph changed, the graph still verifies, and
the reference interpreter gives exactly eager NumPy's results (and argument contents) before
and after the pass. Simplification is also checked bit for bit on edge values (NaN, +-inf,
-0.0, subnormals, integer extremes) through compiled functions on every backend.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pytest

import gcompile
from gcompile.backends import interpreter
from gcompile.ir import ops
from gcompile.passes import simplify as simplify_module
from gcompile.passes.constant_fold import MAX_FOLD_BYTES, constant_fold
from gcompile.passes.cse import cse
from gcompile.passes.dce import dce
from gcompile.passes.functionalize import functionalize
from gcompile.passes.simplify import simplify
from gcompile.tools.compare import copy_inputs
from tests.support import (
    BACKENDS,
    assert_same_value,
    call_compiled,
    golden,
    quiet,
    run_eager,
    run_graph,
    tolerance,
)

# -- helpers ---------------------------------------------------------------------------------------


def run_compiled(fn: Callable, args: tuple, backend: str) -> tuple[Any, tuple]:
    """``(result, arguments afterwards)`` of the compiled ``fn`` (full pipeline) on copies."""
    args = copy_inputs(args)
    with quiet():
        result = call_compiled(gcompile.compile(fn, backend=backend, fullgraph=True), *args)
    return result, args


def assert_identical(expected: Any, actual: Any, where: str = "result") -> None:
    """Same structure, types, dtypes, shapes and bits (so NaN payloads and -0.0 count)."""
    if isinstance(expected, (tuple, list)):
        assert type(actual) is type(expected) and len(actual) == len(expected), where
        for i, (e, a) in enumerate(zip(expected, actual)):
            assert_identical(e, a, f"{where}[{i}]")
        return
    if isinstance(expected, dict):
        assert isinstance(actual, dict) and list(actual) == list(expected), where
        for key in expected:
            assert_identical(expected[key], actual[key], f"{where}[{key!r}]")
        return
    assert type(actual) is type(expected), f"{where}: {type(actual)} != {type(expected)}"
    if expected is None:
        return
    e, a = np.asarray(expected), np.asarray(actual)
    assert (a.dtype, a.shape) == (e.dtype, e.shape), (
        f"{where}: {a.dtype}{a.shape} != {e.dtype}{e.shape}"
    )
    if e.dtype.kind == "f":
        np.testing.assert_array_equal(np.signbit(a), np.signbit(e), err_msg=f"{where}: sign bits")
    assert np.ascontiguousarray(a).tobytes() == np.ascontiguousarray(e).tobytes(), (
        f"{where}: bits differ\nexpected {e!r}\nactual   {a!r}"
    )


def assert_pass(
    step: Callable,
    fn: Callable,
    args: tuple,
    *,
    changed: bool,
    before: str,
    after: str,
    prepare: tuple = (),
):
    """Trace ``fn``, run ``prepare`` passes, then ``step``: golden texts, flag, verify, results."""
    graph = gcompile.trace(fn, *args)
    for earlier in prepare:
        earlier(graph)
    assert str(graph) == golden(before)
    expected = run_eager(fn, args)
    assert_identical(expected, run_graph(graph, fn, args), "before the pass")
    assert step(graph) is changed
    graph.verify()
    assert str(graph) == golden(after)
    assert_identical(expected, run_graph(graph, fn, args), "after the pass")
    return graph


def edge_values(dtype: Any, size: int = 16) -> np.ndarray:
    """``size`` values of ``dtype`` at its edges, shaped ``(2, size // 2)``."""
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        values = [True, False, False, True]
    elif dtype.kind in "iu":
        info = np.iinfo(dtype)
        values = [info.min, info.min + 1, info.max - 1, info.max, 0, 1, 2, 100, info.max // 2 + 1]
        if dtype.kind == "i":
            values += [-1, -2, -100, info.min // 2 - 1]
    elif dtype.kind == "f":
        info = np.finfo(dtype)
        tiny, sub = info.smallest_normal, info.smallest_subnormal
        values = [np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, sub, -sub, tiny, -tiny]
        values += [info.max, -info.max, 1.0, -2.5, 1e-30, 3.0 * sub]
    else:
        real = edge_values(np.finfo(dtype).dtype, size).ravel()
        out = np.empty(size, dtype)
        out.real, out.imag = real, real[::-1]
        return out.reshape(2, -1)
    with quiet():
        out = np.array([np.array(v).astype(dtype) for v in values], dtype)
    return np.resize(out, size).reshape(2, -1)


FLOATS = (np.float32, np.float64)
INTS = (np.int8, np.int64, np.uint8)
REALS = FLOATS + INTS
ALL = REALS + (np.bool_,)


def assert_bit_identical_everywhere(fn: Callable, args: tuple, graph=None) -> None:
    """Eager, the interpreter on ``graph`` (if given) and the interpreter backend agree bit for bit;
    the Numba backend too, up to a few ulp for floats (libm and summation order differ)."""
    expected = run_eager(fn, args)
    if graph is not None:
        assert_identical(expected, run_graph(graph, fn, args), "interpreter")
    for backend in BACKENDS:
        actual = run_compiled(fn, args, backend)
        if backend == "numba":
            assert_same_value(expected, actual, tolerance(backend), backend)
        else:
            assert_identical(expected, actual, backend)


# -- dce -------------------------------------------------------------------------------------------


def dead_pure_nodes(x, y):
    unused = np.exp(x) * y
    np.sum(unused)
    return np.sin(x)


def dead_constant(x):
    return x + np.arange(3) * 2


def setitem_is_kept(x):
    x[0] = np.cos(x[1])
    np.exp(x)
    return None


def writeback_is_kept(x, y):
    x[1:] = y[:-1]
    x.T[0] = 5.0
    return np.exp(y)


def nothing_dead(x):
    return np.sqrt(x) + x


def test_dce_drops_dead_pure_nodes():
    assert_pass(
        dce,
        dead_pure_nodes,
        (np.arange(3.0), 2.0),
        changed=True,
        before="""
        graph dead_pure_nodes(x: f64[s0], y: float):
          %exp_1      : f64[s0] = exp(%x)
          %multiply_1 : f64[s0] = multiply(%exp_1, %y)
          %sum_1      : f64[]   = sum(%multiply_1)
          %sin_1      : f64[s0] = sin(%x)
          return %sin_1
        """,
        after="""
        graph dead_pure_nodes(x: f64[s0], y: float):
          %sin_1 : f64[s0] = sin(%x)
          return %sin_1
        """,
    )


def test_dce_drops_a_dead_constant():
    assert_pass(
        dce,
        dead_constant,
        (np.arange(3.0),),
        changed=True,
        prepare=(constant_fold,),
        before="""
        graph dead_constant(x: f64[3]):
          %const_1 : i64[3] = const<i64[3]>[0, 1, 2]
          %const_2 : i64[3] = const<i64[3]>[0, 2, 4]
          %add_1   : f64[3] = add(%x, %const_2)
          return %add_1
        """,
        after="""
        graph dead_constant(x: f64[3]):
          %const_2 : i64[3] = const<i64[3]>[0, 2, 4]
          %add_1   : f64[3] = add(%x, %const_2)
          return %add_1
        """,
    )


def test_dce_keeps_setitem_before_functionalization():
    graph = assert_pass(
        dce,
        setitem_is_kept,
        (np.arange(3.0),),
        changed=True,
        before="""
        graph setitem_is_kept(x: f64[s0]):
          %getitem_1 : f64[]   = getitem(%x, index=[1])
          %cos_1     : f64[]   = cos(%getitem_1)
          %setitem_1 : f64[s0] = setitem(%x, %cos_1, index=[0])
          %exp_1     : f64[s0] = exp(%x)
          return None
        """,
        after="""
        graph setitem_is_kept(x: f64[s0]):
          %getitem_1 : f64[]   = getitem(%x, index=[1])
          %cos_1     : f64[]   = cos(%getitem_1)
          %setitem_1 : f64[s0] = setitem(%x, %cos_1, index=[0])
          return None
        """,
    )
    assert [n.target.name for n in graph.nodes if n.op == "call"][-1] == "setitem"


def test_dce_keeps_writeback_after_functionalization():
    assert_pass(
        dce,
        writeback_is_kept,
        (np.arange(4.0), np.arange(4.0) + 10),
        changed=True,
        prepare=(functionalize,),
        before="""
        graph writeback_is_kept(x: f64[s0], y: f64[s0]):
          %getitem_1   : f64[s0-1] = getitem(%y, index=[:-1])
          %update_1    : f64[s0]   = update(%x, %getitem_1, index=[1:])
          %transpose_1 : f64[s0]   = transpose(%update_1)
          %update_2    : f64[s0]   = update(%update_1, 5.0, index=[0], views=(transpose(),))
          %exp_1       : f64[s0]   = exp(%y)
          %writeback_1 : f64[s0]   = writeback(%x, %update_2)
          return %exp_1
        """,
        after="""
        graph writeback_is_kept(x: f64[s0], y: f64[s0]):
          %getitem_1   : f64[s0-1] = getitem(%y, index=[:-1])
          %update_1    : f64[s0]   = update(%x, %getitem_1, index=[1:])
          %update_2    : f64[s0]   = update(%update_1, 5.0, index=[0], views=(transpose(),))
          %exp_1       : f64[s0]   = exp(%y)
          %writeback_1 : f64[s0]   = writeback(%x, %update_2)
          return %exp_1
        """,
    )


def test_dce_without_dead_nodes_changes_nothing():
    assert_pass(
        dce,
        nothing_dead,
        (np.arange(3.0),),
        changed=False,
        before="""
        graph nothing_dead(x: f64[s0]):
          %sqrt_1 : f64[s0] = sqrt(%x)
          %add_1  : f64[s0] = add(%sqrt_1, %x)
          return %add_1
        """,
        after="""
        graph nothing_dead(x: f64[s0]):
          %sqrt_1 : f64[s0] = sqrt(%x)
          %add_1  : f64[s0] = add(%sqrt_1, %x)
          return %add_1
        """,
    )


# -- cse -------------------------------------------------------------------------------------------


def repeated_calls(x, y):
    a = np.exp(x) * y
    b = np.exp(x) * y
    return a + b


def equal_constants(x):
    a = x + np.array([1.0, -0.0])
    b = x * np.array([1.0, -0.0])
    return a - b


def different_constants(x):
    same_bits_other_dtype = x + np.array([0, 0])
    other_sign_of_zero = x + np.array([0.0, -0.0])
    other_shape = x + np.array([[0.0, 0.0]])
    zeros = x + np.array([0.0, 0.0])
    return same_bits_other_dtype, other_sign_of_zero, other_shape, zeros, x + np.array([0.0, 0.0])


def different_literals(x):
    return x + 1, x + 1.0, x + True, x + 0.0, x + -0.0, x + np.float32(1.0)


def commutative(a, b):
    return (a + b) * (b + a), (a * b) - (b * a), np.maximum(a, b), np.maximum(b, a)


def complex_products(z, w, x):
    return z * w, w * z, x * z, z * x


def repeated_setitem(x):
    x[0] = 1.0
    x[0] = 1.0
    return x.sum()


def test_cse_merges_structurally_equal_nodes():
    assert_pass(
        cse,
        repeated_calls,
        (np.array([0.5, -1.0]), 3.0),
        changed=True,
        before="""
        graph repeated_calls(x: f64[s0], y: float):
          %exp_1      : f64[s0] = exp(%x)
          %multiply_1 : f64[s0] = multiply(%exp_1, %y)
          %exp_2      : f64[s0] = exp(%x)
          %multiply_2 : f64[s0] = multiply(%exp_2, %y)
          %add_1      : f64[s0] = add(%multiply_1, %multiply_2)
          return %add_1
        """,
        after="""
        graph repeated_calls(x: f64[s0], y: float):
          %exp_1      : f64[s0] = exp(%x)
          %multiply_1 : f64[s0] = multiply(%exp_1, %y)
          %add_1      : f64[s0] = add(%multiply_1, %multiply_1)
          return %add_1
        """,
    )


def test_cse_merges_equal_array_constants():
    assert_pass(
        cse,
        equal_constants,
        (np.array([-0.0, 2.0]),),
        changed=True,
        before="""
        graph equal_constants(x: f64[2]):
          %const_1    : f64[2] = const<f64[2]>[ 1., -0.]
          %add_1      : f64[2] = add(%x, %const_1)
          %const_2    : f64[2] = const<f64[2]>[ 1., -0.]
          %multiply_1 : f64[2] = multiply(%x, %const_2)
          %subtract_1 : f64[2] = subtract(%add_1, %multiply_1)
          return %subtract_1
        """,
        after="""
        graph equal_constants(x: f64[2]):
          %const_1    : f64[2] = const<f64[2]>[ 1., -0.]
          %add_1      : f64[2] = add(%x, %const_1)
          %multiply_1 : f64[2] = multiply(%x, %const_1)
          %subtract_1 : f64[2] = subtract(%add_1, %multiply_1)
          return %subtract_1
        """,
    )


def test_cse_keeps_constants_that_differ_in_dtype_sign_of_zero_or_shape():
    graph = assert_pass(
        cse,
        different_constants,
        (np.array([-0.0, 2.0]),),
        changed=True,
        before="""
        graph different_constants(x: f64[2]):
          %const_1 : i64[2]   = const<i64[2]>[0, 0]
          %add_1   : f64[2]   = add(%x, %const_1)
          %const_2 : f64[2]   = const<f64[2]>[ 0., -0.]
          %add_2   : f64[2]   = add(%x, %const_2)
          %const_3 : f64[1,2] = const<f64[1,2]>[[0., 0.]]
          %add_3   : f64[1,2] = add(%x, %const_3)
          %const_4 : f64[2]   = const<f64[2]>[0., 0.]
          %add_4   : f64[2]   = add(%x, %const_4)
          %const_5 : f64[2]   = const<f64[2]>[0., 0.]
          %add_5   : f64[2]   = add(%x, %const_5)
          return (%add_1, %add_2, %add_3, %add_4, %add_5)
        """,
        after="""
        graph different_constants(x: f64[2]):
          %const_1 : i64[2]   = const<i64[2]>[0, 0]
          %add_1   : f64[2]   = add(%x, %const_1)
          %const_2 : f64[2]   = const<f64[2]>[ 0., -0.]
          %add_2   : f64[2]   = add(%x, %const_2)
          %const_3 : f64[1,2] = const<f64[1,2]>[[0., 0.]]
          %add_3   : f64[1,2] = add(%x, %const_3)
          %const_4 : f64[2]   = const<f64[2]>[0., 0.]
          %add_4   : f64[2]   = add(%x, %const_4)
          %add_5   : f64[2]   = add(%x, %const_4)
          return (%add_1, %add_2, %add_3, %add_4, %add_5)
        """,
    )
    # the equal constants merge; the two returned sums stay two arrays (the caller may write one)
    assert sum(1 for n in graph.nodes if n.op == "constant") == 4


DIFFERENT_LITERALS = """
graph different_literals(x: f64[s0,s1]):
  %add_1 : f64[s0,s1] = add(%x, 1)
  %add_2 : f64[s0,s1] = add(%x, 1.0)
  %add_3 : f64[s0,s1] = add(%x, True)
  %add_4 : f64[s0,s1] = add(%x, 0.0)
  %add_5 : f64[s0,s1] = add(%x, -0.0)
  %add_6 : f64[s0,s1] = add(%x, f32(1.0))
  return (%add_1, %add_2, %add_3, %add_4, %add_5, %add_6)
"""


def test_cse_keeps_literals_that_promote_or_round_differently():
    """``1``, ``1.0`` and ``True`` are different NEP 50 operands; ``0.0`` and ``-0.0`` differ."""
    x = edge_values(np.float64)
    assert_pass(
        cse,
        different_literals,
        (x,),
        changed=False,
        before=DIFFERENT_LITERALS,
        after=DIFFERENT_LITERALS,
    )
    # Why: on a bool array the three literals give three dtypes, and x + 0.0 and x + -0.0
    # differ in the sign of zero.
    eager = different_literals(edge_values(np.bool_))[:3]
    assert [r.dtype for r in eager] == [np.int64, np.float64, np.bool_]
    plus_zero, minus_zero = different_literals(np.array([-0.0]))[3:5]
    assert not np.signbit(plus_zero[0]) and np.signbit(minus_zero[0])


def test_cse_canonicalises_commutative_real_ops_but_not_maximum():
    a, b = np.array([0.0, -0.0, np.nan, 1.0]), np.array([-0.0, 0.0, 2.0, np.nan])
    graph = assert_pass(
        cse,
        commutative,
        (a, b),
        changed=True,
        before="""
        graph commutative(a: f64[s0], b: f64[s0]):
          %add_1      : f64[s0] = add(%a, %b)
          %add_2      : f64[s0] = add(%b, %a)
          %multiply_1 : f64[s0] = multiply(%add_1, %add_2)
          %multiply_2 : f64[s0] = multiply(%a, %b)
          %multiply_3 : f64[s0] = multiply(%b, %a)
          %subtract_1 : f64[s0] = subtract(%multiply_2, %multiply_3)
          %maximum_1  : f64[s0] = maximum(%a, %b)
          %maximum_2  : f64[s0] = maximum(%b, %a)
          return (%multiply_1, %subtract_1, %maximum_1, %maximum_2)
        """,
        after="""
        graph commutative(a: f64[s0], b: f64[s0]):
          %add_1      : f64[s0] = add(%a, %b)
          %multiply_1 : f64[s0] = multiply(%add_1, %add_1)
          %multiply_2 : f64[s0] = multiply(%a, %b)
          %subtract_1 : f64[s0] = subtract(%multiply_2, %multiply_2)
          %maximum_1  : f64[s0] = maximum(%a, %b)
          %maximum_2  : f64[s0] = maximum(%b, %a)
          return (%multiply_1, %subtract_1, %maximum_1, %maximum_2)
        """,
    )
    # maximum(0.0, -0.0) and maximum(-0.0, 0.0) differ in the sign of the zero they return
    first, second = run_graph(graph, commutative, (a, b))[0][2:]
    assert list(np.signbit(first[:2])) == [not s for s in np.signbit(second[:2])]


def test_cse_does_not_canonicalise_complex_products():
    z = np.array([1.5 + 2.5j, np.inf + 1j, -0.0 + 0.0j])
    w = np.array([1e308 + 1e308j, 2.0 - 0.0j, -1.0 + np.nan * 1j])
    assert_pass(
        cse,
        complex_products,
        (z, w, np.array([1.0, -0.0, np.inf])),
        changed=False,
        before="""
        graph complex_products(z: c128[s0], w: c128[s0], x: f64[s0]):
          %multiply_1 : c128[s0] = multiply(%z, %w)
          %multiply_2 : c128[s0] = multiply(%w, %z)
          %multiply_3 : c128[s0] = multiply(%x, %z)
          %multiply_4 : c128[s0] = multiply(%z, %x)
          return (%multiply_1, %multiply_2, %multiply_3, %multiply_4)
        """,
        after="""
        graph complex_products(z: c128[s0], w: c128[s0], x: f64[s0]):
          %multiply_1 : c128[s0] = multiply(%z, %w)
          %multiply_2 : c128[s0] = multiply(%w, %z)
          %multiply_3 : c128[s0] = multiply(%x, %z)
          %multiply_4 : c128[s0] = multiply(%z, %x)
          return (%multiply_1, %multiply_2, %multiply_3, %multiply_4)
        """,
    )


def test_cse_never_merges_side_effects():
    assert_pass(
        cse,
        repeated_setitem,
        (np.arange(3.0),),
        changed=False,
        before="""
        graph repeated_setitem(x: f64[s0]):
          %setitem_1 : f64[s0] = setitem(%x, 1.0, index=[0])
          %setitem_2 : f64[s0] = setitem(%x, 1.0, index=[0])
          %sum_1     : f64[]   = sum(%x)
          return %sum_1
        """,
        after="""
        graph repeated_setitem(x: f64[s0]):
          %setitem_1 : f64[s0] = setitem(%x, 1.0, index=[0])
          %setitem_2 : f64[s0] = setitem(%x, 1.0, index=[0])
          %sum_1     : f64[]   = sum(%x)
          return %sum_1
        """,
    )


@pytest.mark.parametrize("backend", BACKENDS)
def test_cse_keeps_two_equal_returned_arrays_distinct(backend):
    """Eager mode returns two new arrays: writing into one must not change the other."""

    def twice(x):
        return x + 1, x + 1

    first, second = gcompile.compile(twice, backend=backend, fullgraph=True)(np.arange(3.0))
    assert first is not second and not np.shares_memory(first, second)
    first[0] = 100.0
    np.testing.assert_array_equal(second, [1.0, 2.0, 3.0])


def relax_to_tolerance(u, dx, tol):
    """The scalar ``2 * dx`` is hoisted out of the loop twice and merged outside: the loop reads
    it through two placeholders until cse makes them one. ``s`` and ``t`` start as one value
    and are carried apart."""
    diff, s, t = 1.0, dx * 3, dx * 3
    while diff > tol:
        un = u.copy()
        b = (un[2:] - un[:-2]) / (2 * dx)
        u[1:-1] = 0.5 * (un[2:] + un[:-2]) + 0.001 * dx * ((un[2:] - un[:-2]) / (2 * dx) - b)
        diff = np.abs(u - un).max()
        s, t = s + 1.0, t * 1.5
    return u, s, t


@pytest.mark.parametrize("backend", BACKENDS)
def test_cse_merges_a_loops_placeholders_given_one_scalar_but_not_carried_ones(backend):
    u = np.linspace(0.0, 1.0, 20) ** 2
    graph = gcompile.trace(relax_to_tolerance, u, 0.1, 1e-4, stage="optimized")
    (loop,) = [n for n in graph.nodes if n.op == "call" and n.target.name == "while_loop"]
    body = loop.target.regions[0].graph
    divides = [n for n in body.nodes if n.op == "call" and n.target.name == "divide"]
    assert len(divides) == 1, body
    compiled = gcompile.compile(relax_to_tolerance, backend=backend, fullgraph=True)
    assert_same_value(relax_to_tolerance(u.copy(), 0.1, 1e-4), compiled(u.copy(), 0.1, 1e-4), 0)


# -- constant_fold ---------------------------------------------------------------------------------


def arange_times_two(x):
    return x + np.arange(4) * 2


def huge_fold(x):
    return x + np.arange(100_000) * 2


def at_the_limit(x):
    return x + np.arange(8192) * 2  # 8192 * 8 bytes = 64 KiB: folded


def over_the_limit(x):
    return x + np.arange(8193) * 2


def negative_power(x):
    return x + np.arange(3) ** -1


def divide_by_zeros(x):
    return x + 1 / np.zeros(3)


def uses_empty(x):
    return np.empty(3) * 0 + x  # the values are undefined: only the graph is checked


def returns_constant():
    return np.arange(4) * 2


def test_constant_fold_folds_arange_times_two():
    assert_pass(
        constant_fold,
        arange_times_two,
        (np.ones(4),),
        changed=True,
        before="""
        graph arange_times_two(x: f64[4]):
          %arange_1   : i64[4] = arange(start=4)
          %multiply_1 : i64[4] = multiply(%arange_1, 2)
          %add_1      : f64[4] = add(%x, %multiply_1)
          return %add_1
        """,
        after="""
        graph arange_times_two(x: f64[4]):
          %const_1 : i64[4] = const<i64[4]>[0, 1, 2, 3]
          %const_2 : i64[4] = const<i64[4]>[0, 2, 4, 6]
          %add_1   : f64[4] = add(%x, %const_2)
          return %add_1
        """,
    )


def test_constant_fold_leaves_results_over_64_kib_computed():
    assert_pass(
        constant_fold,
        huge_fold,
        (np.ones(100_000),),
        changed=False,
        before="""
        graph huge_fold(x: f64[100000]):
          %arange_1   : i64[100000] = arange(start=100000)
          %multiply_1 : i64[100000] = multiply(%arange_1, 2)
          %add_1      : f64[100000] = add(%x, %multiply_1)
          return %add_1
        """,
        after="""
        graph huge_fold(x: f64[100000]):
          %arange_1   : i64[100000] = arange(start=100000)
          %multiply_1 : i64[100000] = multiply(%arange_1, 2)
          %add_1      : f64[100000] = add(%x, %multiply_1)
          return %add_1
        """,
    )


def test_constant_fold_limit_is_64_kib():
    assert MAX_FOLD_BYTES == 64 * 1024
    args = (np.ones(8192),)
    folded = gcompile.trace(at_the_limit, *args)
    assert constant_fold(folded)
    folded.verify()
    (add,) = [n for n in folded.nodes if n.op == "call"]
    assert add.args[1].op == "constant" and add.args[1].target.nbytes == MAX_FOLD_BYTES
    assert_identical(run_eager(at_the_limit, args), run_graph(folded, at_the_limit, args))
    kept = gcompile.trace(over_the_limit, np.ones(8193))
    text = str(kept)
    assert not constant_fold(kept)
    assert str(kept) == text


def test_constant_fold_leaves_a_raising_fold_for_run_time():
    graph = gcompile.trace(negative_power, np.ones(3))
    assert constant_fold(graph)
    graph.verify()
    assert str(graph) == golden(
        """
        graph negative_power(x: f64[3]):
          %const_1 : i64[3] = const<i64[3]>[0, 1, 2]
          %power_1 : i64[3] = power(%const_1, -1)
          %add_1   : f64[3] = add(%x, %power_1)
          return %add_1
        """
    )
    with pytest.raises(ValueError, match="negative integer powers") as eager:
        negative_power(np.ones(3))
    with pytest.raises(ValueError, match=str(eager.value)):
        interpreter.run(graph, [np.ones(3)])


def test_constant_fold_leaves_a_warning_fold_for_run_time():
    graph = gcompile.trace(divide_by_zeros, np.ones(3))
    assert constant_fold(graph)
    graph.verify()
    assert str(graph) == golden(
        """
        graph divide_by_zeros(x: f64[3]):
          %const_1  : f64[3] = const<f64[3]>[0., 0., 0.]
          %divide_1 : f64[3] = divide(1, %const_1)
          %add_1    : f64[3] = add(%x, %divide_1)
          return %add_1
        """
    )
    with pytest.warns(RuntimeWarning, match="divide by zero"):
        expected = divide_by_zeros(np.ones(3))
    with pytest.warns(RuntimeWarning, match="divide by zero"):
        (actual,) = interpreter.run(graph, [np.ones(3)])
    assert_identical(expected, actual)


def test_constant_fold_never_folds_empty():
    graph = gcompile.trace(uses_empty, np.ones(3))
    text = golden(
        """
        graph uses_empty(x: f64[3]):
          %empty_1    : f64[3] = empty(shape=(3,))
          %multiply_1 : f64[3] = multiply(%empty_1, 0)
          %add_1      : f64[3] = add(%multiply_1, %x)
          return %add_1
        """
    )
    assert str(graph) == text
    assert not constant_fold(graph)
    assert str(graph) == text


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_returned_folded_constant_is_fresh_on_every_call(backend):
    compiled = gcompile.compile(returns_constant, backend=backend, fullgraph=True)
    assert gcompile.trace(returns_constant, stage="optimized").nodes[0].op == "constant"
    first = compiled()
    first[...] = -1
    second = compiled()
    np.testing.assert_array_equal(second, [0, 2, 4, 6])
    assert second is not first and not np.shares_memory(first, second)


@pytest.mark.parametrize("backend", BACKENDS)
def test_returned_folded_constants_keep_their_aliasing(backend):
    """Eager mode returns a buffer and a view of it: writing one shows through the other."""

    def buffer_and_view():
        buffer = np.zeros(3)
        return buffer, buffer[1:]

    buffer, view = gcompile.compile(buffer_and_view, backend=backend, fullgraph=True)()
    eager_buffer, eager_view = buffer_and_view()
    assert np.shares_memory(eager_buffer, eager_view)
    assert np.shares_memory(buffer, view)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_folded_numpy_scalar_stays_a_numpy_scalar(backend):
    """``np.arange(4.0).sum()`` folds to ``np.float64(6.0)``, which is not a weak Python float."""

    def folded_sum(x: float):
        return np.arange(4.0).sum() + x

    expected = folded_sum(1.0)
    actual = gcompile.compile(folded_sum, backend=backend, fullgraph=True)(1.0)
    assert type(actual) is type(expected) is np.float64
    assert actual == expected


# -- simplify --------------------------------------------------------------------------------------
# Each example returns a fresh array (``x.copy()``), so the rewritten value may be returned.


def multiply_by_one(x):
    return x.copy() * 1


def divide_by_one(x):
    return x.copy() / 1


def subtract_zero(x):
    return x.copy() - 0


def power_one(x):
    return x.copy() ** 1


def power_two(x):
    return np.power(x.copy(), 2)


def involution(x):
    negated = -x.copy()
    return -negated


def astype_same(x):
    return x.copy().astype(x.dtype)


WIDER = {
    np.dtype(np.float32): np.float64,
    np.dtype(np.float64): np.complex128,
    np.dtype(np.int8): np.int64,
    np.dtype(np.uint8): np.uint16,
    np.dtype(np.bool_): np.int8,
}


def astype_round_trip(x):
    return x.copy().astype(WIDER[x.dtype]).astype(x.dtype)


def where_same(x):
    y = x.copy()
    return np.where(x > 0, y, y)


def update_with_own_region(u):
    u[1:, 1:] += u[:-1, :-1]  # ends by writing u[1:, 1:] back into itself


def update_whole(x):
    x += x


def update_whole_slices(x):
    y = np.empty_like(x)
    y[:] = x * x  # (every element: `[:]` as `[...]`)
    return y + x


def copy_of_unread(x):
    y = x * 2.0
    return y.copy() + 1.0  # (nothing else reads y)


def positive(x):
    return +x.copy()


def transpose_transpose(x):
    return x.copy().T.T


def reshape_reshape(x):
    return x.copy().reshape(-1).reshape(x.shape)


def outer_as_product(x):
    return np.outer(x, x[::-1]) + 1.0


RULE_EXAMPLES = {
    fn.__name__: fn
    for fn in (
        multiply_by_one,
        divide_by_one,
        subtract_zero,
        power_one,
        power_two,
        involution,
        astype_same,
        astype_round_trip,
        where_same,
        update_with_own_region,
        update_whole,
        copy_of_unread,
        positive,
        transpose_transpose,
        reshape_reshape,
        outer_as_product,
    )
}


def double_invert(x):
    return ~~x.copy()


def double_logical_not(x):
    return np.logical_not(np.logical_not(x.copy()))


def double_conjugate(z):
    return np.conjugate(np.conjugate(z.copy()))


def transpose_composition(x):
    return np.transpose(np.transpose(x, (1, 2, 0)), (1, 2, 0)).copy()


def reshape_composition(x):
    return x.reshape(2, 6).reshape(3, 4).copy()


def prepared(fn: Callable, args: tuple):
    """``fn``'s traced graph, functionalized as the pipeline does before simplifying."""
    graph = gcompile.trace(fn, *args)
    functionalize(graph)
    return graph


def rule_fires(rule: Callable, graph) -> bool:
    """Whether ``rule`` proposes a replacement for some call node (it may add nodes to graph)."""
    return any(rule(node, graph) is not None for node in graph.nodes if node.op == "call")


SIMPLIFY_GOLDEN = {  # name: (function, argument, text before, text after simplify)
    "multiply_by_one": (
        multiply_by_one,
        np.arange(6.0).reshape(2, 3),
        """
            graph multiply_by_one(x: f64[s0,s1]):
              %copy_1     : f64[s0,s1] = copy(%x, order='C')
              %multiply_1 : f64[s0,s1] = multiply(%copy_1, 1)
              return %multiply_1
        """,
        """
            graph multiply_by_one(x: f64[s0,s1]):
              %copy_1     : f64[s0,s1] = copy(%x, order='C')
              %multiply_1 : f64[s0,s1] = multiply(%copy_1, 1)
              return %copy_1
        """,
    ),
    "divide_by_one": (
        divide_by_one,
        np.arange(6.0).reshape(2, 3),
        """
            graph divide_by_one(x: f64[s0,s1]):
              %copy_1   : f64[s0,s1] = copy(%x, order='C')
              %divide_1 : f64[s0,s1] = divide(%copy_1, 1)
              return %divide_1
        """,
        """
            graph divide_by_one(x: f64[s0,s1]):
              %copy_1   : f64[s0,s1] = copy(%x, order='C')
              %divide_1 : f64[s0,s1] = divide(%copy_1, 1)
              return %copy_1
        """,
    ),
    "subtract_zero": (
        subtract_zero,
        np.arange(6.0).reshape(2, 3),
        """
            graph subtract_zero(x: f64[s0,s1]):
              %copy_1     : f64[s0,s1] = copy(%x, order='C')
              %subtract_1 : f64[s0,s1] = subtract(%copy_1, 0)
              return %subtract_1
        """,
        """
            graph subtract_zero(x: f64[s0,s1]):
              %copy_1     : f64[s0,s1] = copy(%x, order='C')
              %subtract_1 : f64[s0,s1] = subtract(%copy_1, 0)
              return %copy_1
        """,
    ),
    "power_one": (
        power_one,
        np.arange(6.0).reshape(2, 3),
        """
            graph power_one(x: f64[s0,s1]):
              %copy_1  : f64[s0,s1] = copy(%x, order='C')
              %power_1 : f64[s0,s1] = power(%copy_1, 1)
              return %power_1
        """,
        """
            graph power_one(x: f64[s0,s1]):
              %copy_1  : f64[s0,s1] = copy(%x, order='C')
              %power_1 : f64[s0,s1] = power(%copy_1, 1)
              return %copy_1
        """,
    ),
    "power_two": (
        power_two,
        np.arange(6.0).reshape(2, 3),
        """
            graph power_two(x: f64[s0,s1]):
              %copy_1  : f64[s0,s1] = copy(%x, order='C')
              %power_1 : f64[s0,s1] = power(%copy_1, 2)
              return %power_1
        """,
        """
            graph power_two(x: f64[s0,s1]):
              %copy_1     : f64[s0,s1] = copy(%x, order='C')
              %multiply_1 : f64[s0,s1] = multiply(%copy_1, %copy_1)
              %power_1    : f64[s0,s1] = power(%copy_1, 2)
              return %multiply_1
        """,
    ),
    "involution": (
        involution,
        np.arange(6.0).reshape(2, 3),
        """
            graph involution(x: f64[s0,s1]):
              %copy_1     : f64[s0,s1] = copy(%x, order='C')
              %negative_1 : f64[s0,s1] = negative(%copy_1)
              %negative_2 : f64[s0,s1] = negative(%negative_1)
              return %negative_2
        """,
        """
            graph involution(x: f64[s0,s1]):
              %copy_1     : f64[s0,s1] = copy(%x, order='C')
              %negative_1 : f64[s0,s1] = negative(%copy_1)
              %negative_2 : f64[s0,s1] = negative(%negative_1)
              return %copy_1
        """,
    ),
    "astype_same": (
        astype_same,
        np.arange(6.0).reshape(2, 3),
        """
            graph astype_same(x: f64[s0,s1]):
              %copy_1   : f64[s0,s1] = copy(%x, order='C')
              %astype_1 : f64[s0,s1] = astype(%copy_1, dtype=float64)
              return %astype_1
        """,
        """
            graph astype_same(x: f64[s0,s1]):
              %copy_1   : f64[s0,s1] = copy(%x, order='C')
              %astype_1 : f64[s0,s1] = astype(%copy_1, dtype=float64)
              return %copy_1
        """,
    ),
    "astype_round_trip": (
        astype_round_trip,
        np.arange(6.0).reshape(2, 3),
        """
            graph astype_round_trip(x: f64[s0,s1]):
              %copy_1   : f64[s0,s1]  = copy(%x, order='C')
              %astype_1 : c128[s0,s1] = astype(%copy_1, dtype=complex128)
              %astype_2 : f64[s0,s1]  = astype(%astype_1, dtype=float64)
              return %astype_2
        """,
        """
            graph astype_round_trip(x: f64[s0,s1]):
              %copy_1   : f64[s0,s1]  = copy(%x, order='C')
              %astype_1 : c128[s0,s1] = astype(%copy_1, dtype=complex128)
              %astype_2 : f64[s0,s1]  = astype(%astype_1, dtype=float64)
              return %copy_1
        """,
    ),
    "where_same": (
        where_same,
        np.arange(6.0).reshape(2, 3),
        """
            graph where_same(x: f64[s0,s1]):
              %copy_1    : f64[s0,s1]  = copy(%x, order='C')
              %greater_1 : bool[s0,s1] = greater(%x, 0)
              %where_1   : f64[s0,s1]  = where(%greater_1, %copy_1, %copy_1)
              return %where_1
        """,
        """
            graph where_same(x: f64[s0,s1]):
              %copy_1    : f64[s0,s1]  = copy(%x, order='C')
              %greater_1 : bool[s0,s1] = greater(%x, 0)
              %where_1   : f64[s0,s1]  = where(%greater_1, %copy_1, %copy_1)
              return %copy_1
        """,
    ),
    "update_with_own_region": (
        update_with_own_region,
        np.arange(6.0).reshape(2, 3),
        """
            graph update_with_own_region(u: f64[s0,s1]):
              %getitem_1   : f64[s0-1,s1-1] = getitem(%u, index=[1:, 1:])
              %getitem_2   : f64[s0-1,s1-1] = getitem(%u, index=[:-1, :-1])
              %add_1       : f64[s0-1,s1-1] = add(%getitem_1, %getitem_2)
              %update_1    : f64[s0,s1]     = update(%u, %add_1, index=[1:, 1:])
              %getitem_3   : f64[s0-1,s1-1] = getitem(%update_1, index=[1:, 1:])
              %update_2    : f64[s0,s1]     = update(%update_1, %getitem_3, index=[1:, 1:])
              %writeback_1 : f64[s0,s1]     = writeback(%u, %update_2)
              return None
        """,
        """
            graph update_with_own_region(u: f64[s0,s1]):
              %getitem_1   : f64[s0-1,s1-1] = getitem(%u, index=[1:, 1:])
              %getitem_2   : f64[s0-1,s1-1] = getitem(%u, index=[:-1, :-1])
              %add_1       : f64[s0-1,s1-1] = add(%getitem_1, %getitem_2)
              %update_1    : f64[s0,s1]     = update(%u, %add_1, index=[1:, 1:])
              %getitem_3   : f64[s0-1,s1-1] = getitem(%update_1, index=[1:, 1:])
              %update_2    : f64[s0,s1]     = update(%update_1, %getitem_3, index=[1:, 1:])
              %writeback_1 : f64[s0,s1]     = writeback(%u, %update_1)
              return None
        """,
    ),
    "update_whole": (
        update_whole,
        np.arange(6.0).reshape(2, 3),
        """
            graph update_whole(x: f64[s0,s1]):
              %add_1       : f64[s0,s1] = add(%x, %x)
              %update_1    : f64[s0,s1] = update(%x, %add_1, index=[...])
              %writeback_1 : f64[s0,s1] = writeback(%x, %update_1)
              return None
        """,
        """
            graph update_whole(x: f64[s0,s1]):
              %add_1       : f64[s0,s1] = add(%x, %x)
              %update_1    : f64[s0,s1] = update(%x, %add_1, index=[...])
              %writeback_1 : f64[s0,s1] = writeback(%x, %add_1)
              return None
        """,
    ),
    "copy_of_unread": (
        copy_of_unread,
        np.arange(6.0).reshape(2, 3),
        """
            graph copy_of_unread(x: f64[s0,s1]):
              %multiply_1 : f64[s0,s1] = multiply(%x, 2.0)
              %copy_1     : f64[s0,s1] = copy(%multiply_1, order='C')
              %add_1      : f64[s0,s1] = add(%copy_1, 1.0)
              return %add_1
        """,
        """
            graph copy_of_unread(x: f64[s0,s1]):
              %multiply_1 : f64[s0,s1] = multiply(%x, 2.0)
              %copy_1     : f64[s0,s1] = copy(%multiply_1, order='C')
              %add_1      : f64[s0,s1] = add(%multiply_1, 1.0)
              return %add_1
        """,
    ),
    "positive": (
        positive,
        np.arange(6.0).reshape(2, 3),
        """
            graph positive(x: f64[s0,s1]):
              %copy_1     : f64[s0,s1] = copy(%x, order='C')
              %positive_1 : f64[s0,s1] = positive(%copy_1)
              return %positive_1
        """,
        """
            graph positive(x: f64[s0,s1]):
              %copy_1     : f64[s0,s1] = copy(%x, order='C')
              %positive_1 : f64[s0,s1] = positive(%copy_1)
              return %copy_1
        """,
    ),
    "transpose_transpose": (
        transpose_transpose,
        np.arange(6.0).reshape(2, 3),
        """
            graph transpose_transpose(x: f64[s0,s1]):
              %copy_1      : f64[s0,s1] = copy(%x, order='C')
              %transpose_1 : f64[s1,s0] = transpose(%copy_1)
              %transpose_2 : f64[s0,s1] = transpose(%transpose_1)
              return %transpose_2
        """,
        """
            graph transpose_transpose(x: f64[s0,s1]):
              %copy_1      : f64[s0,s1] = copy(%x, order='C')
              %transpose_1 : f64[s1,s0] = transpose(%copy_1)
              %transpose_2 : f64[s0,s1] = transpose(%transpose_1)
              return %copy_1
        """,
    ),
    "reshape_reshape": (
        reshape_reshape,
        np.arange(6.0).reshape(2, 3),
        """
            graph reshape_reshape(x: f64[s0,s1]):
              %copy_1    : f64[s0,s1] = copy(%x, order='C')
              %reshape_1 : f64[s0*s1] = reshape(%copy_1, shape=(-1,))
              %reshape_2 : f64[s0,s1] = reshape(%reshape_1, shape=(s0, s1))
              return %reshape_2
        """,
        """
            graph reshape_reshape(x: f64[s0,s1]):
              %copy_1    : f64[s0,s1] = copy(%x, order='C')
              %reshape_1 : f64[s0*s1] = reshape(%copy_1, shape=(-1,))
              %reshape_2 : f64[s0,s1] = reshape(%reshape_1, shape=(s0, s1))
              return %copy_1
        """,
    ),
    "double_invert": (
        double_invert,
        np.arange(6, dtype=np.int8),
        """
            graph double_invert(x: i8[s0]):
              %copy_1   : i8[s0] = copy(%x, order='C')
              %invert_1 : i8[s0] = invert(%copy_1)
              %invert_2 : i8[s0] = invert(%invert_1)
              return %invert_2
        """,
        """
            graph double_invert(x: i8[s0]):
              %copy_1   : i8[s0] = copy(%x, order='C')
              %invert_1 : i8[s0] = invert(%copy_1)
              %invert_2 : i8[s0] = invert(%invert_1)
              return %copy_1
        """,
    ),
    "double_logical_not": (
        double_logical_not,
        np.array([True, False]),
        """
            graph double_logical_not(x: bool[s0]):
              %copy_1        : bool[s0] = copy(%x, order='C')
              %logical_not_1 : bool[s0] = logical_not(%copy_1)
              %logical_not_2 : bool[s0] = logical_not(%logical_not_1)
              return %logical_not_2
        """,
        """
            graph double_logical_not(x: bool[s0]):
              %copy_1        : bool[s0] = copy(%x, order='C')
              %logical_not_1 : bool[s0] = logical_not(%copy_1)
              %logical_not_2 : bool[s0] = logical_not(%logical_not_1)
              return %copy_1
        """,
    ),
    "double_conjugate": (
        double_conjugate,
        np.array([1.0 + 2.0j]),
        """
            graph double_conjugate(z: c128[1]):
              %copy_1      : c128[1] = copy(%z, order='C')
              %conjugate_1 : c128[1] = conjugate(%copy_1)
              %conjugate_2 : c128[1] = conjugate(%conjugate_1)
              return %conjugate_2
        """,
        """
            graph double_conjugate(z: c128[1]):
              %copy_1      : c128[1] = copy(%z, order='C')
              %conjugate_1 : c128[1] = conjugate(%copy_1)
              %conjugate_2 : c128[1] = conjugate(%conjugate_1)
              return %copy_1
        """,
    ),
    "transpose_composition": (
        transpose_composition,
        np.zeros((2, 3, 4)),
        """
            graph transpose_composition(x: f64[s0,s1,s2]):
              %transpose_1 : f64[s1,s2,s0] = transpose(%x, axes=(1, 2, 0))
              %transpose_2 : f64[s2,s0,s1] = transpose(%transpose_1, axes=(1, 2, 0))
              %copy_1      : f64[s2,s0,s1] = copy(%transpose_2, order='C')
              return %copy_1
        """,
        """
            graph transpose_composition(x: f64[s0,s1,s2]):
              %transpose_1 : f64[s1,s2,s0] = transpose(%x, axes=(1, 2, 0))
              %transpose_3 : f64[s2,s0,s1] = transpose(%x, axes=(2, 0, 1))
              %transpose_2 : f64[s2,s0,s1] = transpose(%transpose_1, axes=(1, 2, 0))
              %copy_1      : f64[s2,s0,s1] = copy(%transpose_3, order='C')
              return %copy_1
        """,
    ),
    "reshape_composition": (
        reshape_composition,
        np.arange(12.0),
        """
            graph reshape_composition(x: f64[12]):
              %reshape_1 : f64[2,6] = reshape(%x, shape=(2, 6))
              %reshape_2 : f64[3,4] = reshape(%reshape_1, shape=(3, 4))
              %copy_1    : f64[3,4] = copy(%reshape_2, order='C')
              return %copy_1
        """,
        """
            graph reshape_composition(x: f64[12]):
              %reshape_1 : f64[2,6] = reshape(%x, shape=(2, 6))
              %reshape_3 : f64[3,4] = reshape(%x, shape=(3, 4))
              %reshape_2 : f64[3,4] = reshape(%reshape_1, shape=(3, 4))
              %copy_1    : f64[3,4] = copy(%reshape_3, order='C')
              return %copy_1
        """,
    ),
}


@pytest.mark.parametrize("name", sorted(SIMPLIFY_GOLDEN))
def test_simplify_golden(name):
    fn, arg, before, after = SIMPLIFY_GOLDEN[name]
    assert_pass(
        simplify, fn, (arg,), changed=True, prepare=(functionalize,), before=before, after=after
    )


def test_every_rule_has_an_example_that_fires_it():
    assert list(RULE_EXAMPLES) == [rule.__name__ for rule in simplify_module.RULES]
    for rule in simplify_module.RULES:
        example = RULE_EXAMPLES[rule.__name__]
        args = (edge_values(np.float64),)
        assert rule_fires(rule, prepared(example, args)), rule.__name__
        assert simplify(prepared(example, args)), rule.__name__


EDGE_CASES = [  # (rule, example, dtypes where the rewrite applies)
    ("multiply_by_one", multiply_by_one, REALS),
    ("divide_by_one", divide_by_one, FLOATS),
    ("subtract_zero", subtract_zero, REALS),
    ("power_one", power_one, REALS),
    ("power_two", power_two, REALS),
    ("involution", involution, REALS),
    ("involution", double_invert, INTS + (np.bool_,)),
    ("involution", double_logical_not, (np.bool_,)),
    ("involution", double_conjugate, (np.complex64, np.complex128)),
    ("astype_same", astype_same, ALL),
    ("astype_round_trip", astype_round_trip, (np.float32, np.float64, np.int8, np.uint8, np.bool_)),
    ("where_same", where_same, ALL),
    ("update_with_own_region", update_with_own_region, ALL),
    ("update_whole", update_whole, ALL),
    ("update_whole", update_whole_slices, ALL),
    ("copy_of_unread", copy_of_unread, REALS),
    ("positive", positive, REALS),
    ("transpose_transpose", transpose_transpose, ALL),
    ("transpose_transpose", transpose_composition, ALL),
    ("reshape_reshape", reshape_reshape, ALL),
    ("reshape_reshape", reshape_composition, ALL),
]
EDGE_PARAMS = [
    pytest.param(rule, fn, dtype, id=f"{fn.__name__}-{np.dtype(dtype).name}")
    for rule, fn, dtypes in EDGE_CASES
    for dtype in dtypes
]


def edge_args(fn: Callable, dtype: Any) -> tuple:
    """Edge values of ``dtype`` in the shape ``fn`` needs."""
    if fn is transpose_composition:
        return (edge_values(dtype, 24).reshape(2, 3, 4),)
    if fn is reshape_composition:
        return (edge_values(dtype, 12).ravel(),)
    return (edge_values(dtype),)


@pytest.mark.parametrize("rule, fn, dtype", EDGE_PARAMS)
def test_simplified_results_are_bit_identical_on_edge_values(rule, fn, dtype):
    args = edge_args(fn, dtype)
    assert rule_fires(getattr(simplify_module, rule), prepared(fn, args))
    graph = prepared(fn, args)
    assert simplify(graph)
    graph.verify()
    assert_bit_identical_everywhere(fn, args, graph)


def times_zero(x):
    return x.copy() * 0


def plus_float_zero(x):
    return x.copy() + 0.0


def plus_int_zero(x):
    return x.copy() + 0


def minus_negative_zero(x):
    return x.copy() - (-0.0)


def complex_power_two(z):
    return np.power(z.copy(), 2)


def bool_times_one(x):
    return x.copy() * 1


def int_times_float_one(x):
    return x.copy() * 1.0


def int_divided_by_one(x):
    return x.copy() / 1


def bool_power_two(x):
    return np.power(x.copy(), 2)


def narrowing_round_trip(x):
    return x.copy().astype(np.float32).astype(np.float64)


def logical_not_twice_on_floats(x):
    return np.logical_not(np.logical_not(x.copy()))


NOT_EXACT = [
    (times_zero, FLOATS),
    (plus_float_zero, FLOATS),
    (plus_int_zero, FLOATS),
    (minus_negative_zero, FLOATS),
    (complex_power_two, (np.complex64, np.complex128)),
    (bool_times_one, (np.bool_,)),
    (int_times_float_one, INTS),
    (int_divided_by_one, INTS),
    (bool_power_two, (np.bool_,)),
    (narrowing_round_trip, (np.float64,)),
    (logical_not_twice_on_floats, FLOATS),
]


@pytest.mark.parametrize(
    "fn, dtype",
    [
        pytest.param(fn, dtype, id=f"{fn.__name__}-{np.dtype(dtype).name}")
        for fn, dtypes in NOT_EXACT
        for dtype in dtypes
    ],
)
def test_inexact_rewrites_never_happen(fn, dtype):
    args = (edge_values(dtype),)
    graph = prepared(fn, args)
    text = str(graph)
    assert not simplify(graph)
    assert str(graph) == text
    assert_bit_identical_everywhere(fn, args, graph)


def test_complex_power_two_stays_a_power():
    z = edge_values(np.complex128)
    assert "= power(%copy_1, 2)" in str(gcompile.trace(complex_power_two, z, stage="optimized"))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", [np.float64, np.int64])
def test_returning_an_argument_times_one_gives_a_new_array(backend, dtype):
    def times_one(x):
        return x * 1

    x = edge_values(dtype)
    graph = gcompile.trace(times_one, x)
    assert not simplify(graph)
    result = gcompile.compile(times_one, backend=backend, fullgraph=True)(x)
    assert result is not x and not np.shares_memory(result, x)
    assert_identical(times_one(x), result)


def simplified_then_viewed(x):
    return (x * 1).reshape(2, -1), (+x)[::2], x.astype(x.dtype).T


def whole_copy_then_viewed(x):
    buffer = np.zeros_like(x)
    buffer[...] = x
    return buffer[1:]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn", [simplified_then_viewed, whole_copy_then_viewed])
def test_a_returned_view_of_a_simplified_value_is_not_a_view_of_an_argument(backend, fn):
    """Eager mode returns views of new arrays: writing into them must not reach the caller's x."""
    x = np.arange(8.0)
    results = gcompile.compile(fn, backend=backend, fullgraph=True)(x)
    for result in results if isinstance(results, tuple) else (results,):
        assert not np.shares_memory(result, x)


def inner_dtype_involution(x):
    return np.negative(np.negative(x.copy(), dtype=np.float32), dtype=np.float64)


def lossy_round_trip(x):
    return x.copy().astype(np.float64).astype(np.int64)  # can_cast(i8, f8, "safe") holds


@pytest.mark.parametrize(
    "fn, args",
    [
        (inner_dtype_involution, (np.array([1.0 + 2.0**-30, 1e-40, 1e300, -0.0]),)),
        (lossy_round_trip, (np.array([2**53 + 1, np.iinfo(np.int64).max, -3]),)),
    ],
    ids=["inner_dtype_involution", "lossy_round_trip"],
)
def test_rewrites_through_a_rounding_cast_do_not_happen(fn, args):
    graph = prepared(fn, args)
    simplify(graph)
    assert_bit_identical_everywhere(fn, args, graph)


def grid_twiddles(x):
    i, j = np.mgrid[0:2, 0:20000]  # (a constant of the trace: 320 KB)
    return x + np.exp(-2j * np.pi * i * j / 4.0)[1]


def test_values_computed_from_large_constants_alone_fold_up_to_a_few_times_their_bytes():
    x = np.ones(20000)
    graph = gcompile.trace(grid_twiddles, x, stage="optimized")
    assert not [n for n in graph.nodes if n.op == "call" and n.target is ops.EXP]
    assert_identical(run_eager(grid_twiddles, (x,)), run_graph(graph, grid_twiddles, (x,)))
