"""Every refusal kind: an UnsupportedError naming the construct and the user's file:line."""

from __future__ import annotations

import inspect
import math

import numpy as np
import pytest

import gcompile
from gcompile import UnsupportedError


def line_of(fn, text: str) -> str:
    """``file:line`` of the first line of ``fn``'s source containing ``text``."""
    lines, start = inspect.getsourcelines(fn)
    for offset, line in enumerate(lines):
        if text in line:
            return f"{inspect.getsourcefile(fn)}:{start + offset}"
    raise AssertionError(f"{text!r} not in the source of {fn.__name__}")


def data_dependent_if(x):
    return x if bool(x.sum() > 0) else -x


def float_of_traced(x):
    return x * float(x[:1])  # (of an array: of a traced scalar it is a python_scalar)


def int_of_traced(x):
    return x * int(x[:1])


def math_function(x):
    return math.gamma(x[0])  # (one math has that NumPy has not: math_calls.py takes the rest)


def range_of_traced(x):
    total = x
    for _ in reversed(range(x[0])):  # (a forward one is a while loop over the data)
        total = total + 1
    return total


def boolean_mask(x):
    y = x[x > 0]
    x[x > 1] = y  # (values gathered by another mask)
    return x


def traced_integer_write(x, i):
    x[i] = 0.0
    return x


def array_index(x):
    return x[np.array([True, False, True, False])]


def unsupported_function(x):
    return np.histogram_bin_edges(x, bins="auto")  # (as many bins as the data ask: no rule)


def unsupported_submodule_function(x):
    return np.lib.scimath.sqrt(x)


def unsupported_ufunc(x):
    mantissas, exponents = np.empty(x.shape), np.empty(x.shape, np.int32)
    return np.frexp(x, out=(mantissas, exponents))  # (without out=: a library call)


def unsupported_ufunc_method(x):
    return np.add.reduceat(x, [0, 2])


def ufunc_at(x):
    np.add.at(x, 0, 1.0)
    return x


def item_of_traced(x):
    return x.item()


def tolist_of_traced(x):
    return x.tolist()


def traced_axis(x):
    return np.sum(x, axis=x)


def out_into_global(x):
    return np.add(x, 1, out=GLOBAL_BUFFER)


def write_into_global(x):
    GLOBAL_BUFFER[...] = x
    return x


def ufunc_of_a_list_made_of_traced_values(x):
    return np.sin([x[0], x[1]])


def slice_bound_from_data(x):
    return x[: x[0]] + 1  # (the slice itself returned is NumPy's view, taken on return)


def returns_object(x):
    return {1, 2}


def ndarray_method_not_in_table(x):
    return x.tobytes()


GLOBAL_BUFFER = np.zeros(4)


def element_into_an_array_made_outside(x):
    out = np.frombuffer(b"\0" * 32, dtype=np.float64).copy()  # NumPy's, not the trace's
    out[0] = x[0]
    return out


def masked_array_of_traced(x):
    return np.ma.masked_equal(x, 2).filled(0)


REFUSALS = [
    (data_dependent_if, "bool() of a traced value", "bool(x.sum() > 0)"),
    (float_of_traced, "float() of a traced value", "float(x[:1])"),
    (int_of_traced, "int() of a traced value", "int(x[:1])"),
    (math_function, "float() of a traced value", "math.gamma"),
    (range_of_traced, "used as a Python integer", "reversed(range(x[0]))"),
    (boolean_mask, "assigning under another mask", "x[x > 1] = y"),
    (array_index, "boolean-mask indexing", "x[np.array"),
    (unsupported_function, "np.histogram_bin_edges", "np.histogram_bin_edges"),
    (unsupported_submodule_function, "numpy.lib.scimath.sqrt", "np.lib.scimath.sqrt"),
    (unsupported_ufunc, "the ufunc frexp with out=", "np.frexp"),
    (unsupported_ufunc_method, "np.add.reduceat", "np.add.reduceat"),
    (ufunc_at, "np.add.at", "np.add.at"),
    (item_of_traced, "x.item()", "x.item()"),
    (tolist_of_traced, "x.tolist()", "x.tolist()"),
    (traced_axis, "a traced value as the 'axis' argument", "axis=x"),
    (out_into_global, "not an argument of the function", "out=GLOBAL_BUFFER"),
    (
        write_into_global,
        "a statement that assigns an item of ndarray",  # (runs in Python: ``effects``)
        "GLOBAL_BUFFER[...] = x",
    ),
    (
        ufunc_of_a_list_made_of_traced_values,
        "a NumPy function given a Python list or tuple of traced values made in the function",
        "np.sin([x[0], x[1]])",
    ),
    (
        slice_bound_from_data,
        "returning a slice x[lo:hi] with bounds read from the data",
        "x[: x[0]]",
    ),
    (returns_object, "returning a value of type set", "def returns_object"),
    (masked_array_of_traced, "array inside numpy.ma.core.masked_equal", "np.ma.masked_equal"),
    (ndarray_method_not_in_table, "the ndarray attribute or method .tobytes", "x.tobytes()"),
    (
        element_into_an_array_made_outside,
        "`out[0] = x[0]` on traced values: it raised ValueError",
        "out[0] = x[0]",
    ),
]


@pytest.mark.parametrize("fn, construct, text", REFUSALS, ids=[r[0].__name__ for r in REFUSALS])
def test_refusal_names_construct_and_line(fn, construct, text):
    x = np.arange(4, dtype=np.int64) + 1
    with pytest.raises(UnsupportedError) as info:
        gcompile.trace(fn, x)
    message = str(info.value)
    assert construct in message
    assert info.value.source == line_of(fn, text), message
    assert line_of(fn, text) in message


def test_a_write_through_a_traced_integer_array_compiles():  # (tests/test_unbacked.py)
    compiled = gcompile.compile(traced_integer_write, backend="interpreter", fullgraph=True)
    np.testing.assert_array_equal(compiled(np.arange(4.0), np.array([1, 2])), [0.0, 0, 0, 3])


@pytest.mark.parametrize(
    "value, what",
    [
        (np.array([object(), 1], dtype=object), "object dtype"),
        (np.zeros(3, dtype=[("a", "f8"), ("b", "i4")]), "structured dtype"),
        (np.array(["a", "b"]), "string dtype"),
        (np.arange(3, dtype=">f8"), "non-native byte order"),
        (np.array(["2020-01-01"], dtype="datetime64[D]"), "datetime dtype"),
    ],
    ids=["object", "structured", "string", "big-endian", "datetime"],
)
def test_unsupported_argument_dtypes_name_the_argument(value, what):
    def f(values):
        return values

    with pytest.raises(UnsupportedError) as info:
        gcompile.trace(f, value)
    assert "argument 'values'" in str(info.value) and what in str(info.value)
    compiled = gcompile.compile(f)
    with pytest.warns(gcompile.GcompileWarning, match=what):
        result = compiled(value)
    assert result is value  # ran eagerly


@pytest.mark.parametrize(
    "dtype, what",
    [([("U", np.double)], "np.zeros of a structured dtype"), (">f8", "np.ones of a non-native")],
)
def test_arrays_made_inside_of_unsupported_dtypes_are_refused_naming_the_call(dtype, what):
    def made(x):
        return (np.ones if dtype == ">f8" else np.zeros)(x.shape[0], dtype), x

    with pytest.raises(UnsupportedError, match=what):
        gcompile.trace(made, np.ones(3))


def test_set_argument_is_a_clear_error():
    def f(x, options):
        return x

    with pytest.raises(UnsupportedError, match="argument 'options' of type set"):
        gcompile.trace(f, np.ones(2), {1, 2})


def test_unhashable_static_argument_is_a_clear_error():
    def f(x, shape):
        return x.reshape(shape)

    with pytest.raises(UnsupportedError, match="static argument 'shape' of unhashable type list"):
        gcompile.trace(f, np.ones(4), [2, 2], static_argnames=("shape",))


def test_fallback_warns_once_per_reason_and_runs_eagerly():
    compiled = gcompile.compile(data_dependent_if)
    x = np.arange(3.0)
    with pytest.warns(gcompile.GcompileWarning, match="bool\\(\\) of a traced value") as record:
        np.testing.assert_array_equal(compiled(x), x)
    assert line_of(data_dependent_if, "bool(x.sum() > 0)") in str(record[0].message)
    # The same reason again: eager result, no new warning (warnings are errors in this suite).
    np.testing.assert_array_equal(compiled(-x), x)
    assert compiled.stats["fallbacks"] == 2
    assert compiled.stats["traces"] == 0
    assert [r.construct for r in compiled.refusals] == [
        "bool() of a traced value (Python `if`, `while`, `and`, `or`, `not` on array data)"
    ]


def test_fullgraph_raises_the_refusal():
    compiled = gcompile.compile(boolean_mask, fullgraph=True)
    with pytest.raises(UnsupportedError, match="boolean-mask gather"):
        compiled(np.arange(3.0))


def test_refusal_hint_suggests_a_rewrite():
    with pytest.raises(UnsupportedError) as info:
        gcompile.trace(boolean_mask, np.arange(3.0))
    assert "np.where" in info.value.hint


def draws_noise(x):
    return x + np.random.standard_normal(x.shape)


def test_random_draws_inside_the_function_are_refused():
    with pytest.raises(UnsupportedError, match="random state used inside the function") as info:
        gcompile.trace(draws_noise, np.ones(3))
    assert info.value.source == line_of(draws_noise, "np.random.standard_normal")
    assert np.random.standard_normal.__module__ is not None  # the patch is gone after tracing
    assert np.random.standard_normal((2,)).shape == (2,)


def draws_from(x, rng):
    return x + rng.normal(size=x.shape)


RANDOM_FUNCTIONS = [n for n in np.random.__all__ if not isinstance(getattr(np.random, n), type)]


def test_every_function_of_np_random_is_refused_before_numpy_draws():
    # (np.random.gamma of a traced scale reached NumPy's C code, which crashed the interpreter)
    for name in ("gamma", "beta", "lognormal", "multivariate_normal"):
        with pytest.raises(UnsupportedError, match="random state used inside the function"):
            gcompile.trace(lambda x, name=name: getattr(np.random, name)(x * 0.5, x), np.ones(2))
    with pytest.raises(UnsupportedError, match="a random number generator made inside"):
        gcompile.trace(lambda x: np.random.default_rng(7).random(2) + x, np.ones(2))
    assert {"gamma", "get_state", "zipf", "default_rng"} <= set(RANDOM_FUNCTIONS)
    for function in RANDOM_FUNCTIONS:
        with pytest.raises(UnsupportedError, match=f"np.random.{function}"):
            gcompile.trace(lambda x, f=function: getattr(np.random, f)() + x, np.ones(2))


def test_draws_from_a_generator_argument_are_refused_where_they_are_and_objects_at_the_call():
    for rng in (np.random.default_rng(0), np.random.RandomState(0)):
        kind = type(rng).__name__
        with pytest.raises(UnsupportedError, match=f"'rng' \\(a numpy.+{kind}\\)") as info:
            gcompile.trace(draws_from, np.ones(3), rng)
        assert info.value.source == line_of(draws_from, "rng.normal")

    class Config:
        scale = 2

    with pytest.raises(UnsupportedError, match="argument 'cfg' of type Config"):
        gcompile.trace(lambda x, cfg: x * cfg.scale, np.ones(2), Config())


def test_functions_and_dtypes_are_static_arguments():
    def f(x, activation, dtype):
        return activation(x).astype(dtype)

    graph = gcompile.trace(f, np.ones(2), np.tanh, np.float32)
    assert "tanh(%x)" in str(graph) and "dtype=float32" in str(graph)


def rebinds_dict_item(params, x):
    params["w"] = params["w"] * 2 + x
    return x + 1


def appends_to_list(values, x):
    values.append(x.sum())
    return x * values[0]


def appends_to_a_nested_list(x, nested):
    nested[0][0].append(1.0)
    return x * 1


def appends_through_star_args(*args):
    args[1][0].append(1.0)
    return args[0] * 1


def test_changing_a_list_nested_in_tuples_or_star_args_is_refused():
    with pytest.raises(UnsupportedError, match=r"calls `\.append\(\.\.\.\)` of list"):
        gcompile.trace(appends_to_a_nested_list, np.ones(2), (([],),))
    with pytest.raises(UnsupportedError, match=r"(passed as argument 'args'|\.append)"):
        gcompile.trace(appends_through_star_args, np.ones(2), ([],))


@pytest.mark.parametrize(
    "fn, make, name",
    [
        (rebinds_dict_item, lambda: {"w": np.ones(3)}, "params"),
        (appends_to_list, lambda: [2.0], "values"),
    ],
)
def test_changing_a_container_argument_is_refused_and_eager_keeps_the_change(fn, make, name):
    """Eager NumPy changes the caller's dict or list; a compiled call could not, so it refuses
    (the statement: ``capture/effects.py``; or, seen after the trace, the whole function)."""
    changed = f"(changing the list or dict passed as argument '{name}'|assigns an item of dict)"
    with pytest.raises(UnsupportedError, match=changed):
        gcompile.trace(fn, make(), np.arange(3.0))
    compiled = gcompile.compile(fn, backend="interpreter")
    expected, got = make(), make()
    fn(expected, np.arange(3.0))
    with pytest.warns(gcompile.GcompileWarning, match="(changing the list or dict|assigns an)"):
        compiled(got, np.arange(3.0))
    assert len(got) == len(expected)
    for a, b in zip(
        expected.values() if isinstance(expected, dict) else expected,
        got.values() if isinstance(got, dict) else got,
    ):
        np.testing.assert_array_equal(a, b)


def list_filled_by_index(x):
    out = [0.0] * x.shape[0]  # a list of n items: n is taken as an int
    for k in range(x.shape[0]):
        out[k] = x[k] * 2  # k indexes a list: the loop runs in Python
    out.append(0.0)  # (a list operation: no list of numbers traced as an array)
    return np.array(out)


def test_a_size_repeats_a_list_and_a_loop_index_used_as_an_int_unrolls_its_loop():
    x = np.arange(1.0, 5.0)
    graph = gcompile.trace(list_filled_by_index, x)
    (note,) = graph.notes.loops
    assert not note.rolled and "loop index k0 used as a Python int" in note.reason
    compiled = gcompile.compile(list_filled_by_index, backend="interpreter", fullgraph=True)
    np.testing.assert_array_equal(compiled(x), np.append(x * 2, 0.0))


def closure_importing_from_numpy():
    from numpy import empty

    def fill(a):
        out = empty(a.shape)
        for k in range(a.shape[0]):
            out[k] = a[k] * 2
        return out

    return fill


def test_numpy_names_in_closure_cells_are_traced():
    fill = closure_importing_from_numpy()
    compiled = gcompile.compile(fill, backend="interpreter", fullgraph=True)
    np.testing.assert_array_equal(compiled(np.arange(3.0)), np.arange(3.0) * 2)
    assert fill.__closure__[0].cell_contents is np.empty  # restored after tracing
