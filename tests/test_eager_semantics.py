"""Corners where a compiled function could drift from eager NumPy: returned constants, Python-scalar
arithmetic, static-argument keys, memory layout, complex edge values, creation-function keywords."""

from __future__ import annotations

import copy

import numpy as np
import pytest

import gcompile
from tests.support import check

RNG_ARGS = np.random.default_rng(11)


def compiled(fn, **kwargs):
    return gcompile.compile(fn, fullgraph=True, **kwargs)


def test_an_array_literal_returned_is_fresh_on_every_call():
    fn = compiled(lambda x: (x, np.array([1.0, 2.0]), np.array([3.0, 4.0]).T))
    first = fn(np.ones(1))
    first[1][0] = 99.0
    first[2][0] = 99.0
    again = fn(np.ones(1))
    np.testing.assert_array_equal(again[1], [1.0, 2.0])
    np.testing.assert_array_equal(again[2], [3.0, 4.0])


def test_in_place_changes_to_a_global_array_are_seen():
    table = np.ones(3)

    def f(x):
        return x + table

    fn = compiled(f)
    fn(np.zeros(3))
    table[:] = 5.0
    np.testing.assert_array_equal(fn(np.zeros(3)), [5.0, 5.0, 5.0])


@pytest.mark.parametrize(
    "fn, args",
    [
        (lambda x, a, b: x * a**b, (np.ones(1), 83.0035693274327, 1.7030556641407104)),
        (lambda x, b: x.sum() ** b, (np.array([50.3]), 0.44)),
        (lambda x, a: x * (a // 0.3) + a % 0.3, (np.ones(2), 1.7)),
        # the ufunc called on NumPy scalars runs its loop, an ulp from 2 ** s here
        (lambda s: np.power(2, s), (np.float64(1.999901437521511),)),
    ],
    ids=["python-float-pow", "numpy-scalar-pow", "python-floordiv-mod", "ufunc-on-scalars"],
)
def test_scalar_arithmetic_is_python_and_numpy_scalar_arithmetic(fn, args):
    check(fn, *args)


def test_python_division_by_zero_raises_like_python():
    fn = compiled(lambda x, a: x * (1.0 / a))
    with pytest.raises(ZeroDivisionError):
        fn(np.ones(1), 0.0)


def test_python_power_that_turns_complex_runs_eagerly():
    def f(x, a):
        return x * a**0.5

    fn = gcompile.compile(f)
    np.testing.assert_array_equal(fn(np.ones(1), 4.0), [2.0])
    with pytest.warns(gcompile.GcompileWarning, match="result type depends on the values"):
        result = fn(np.ones(1), -4.0)
    np.testing.assert_array_equal(result, f(np.ones(1), -4.0))
    with pytest.raises(gcompile.UnsupportedError):
        compiled(f)(np.ones(1), -4.0)


def test_static_floats_are_keyed_by_their_bits():
    fn = compiled(lambda x, eps: x / eps, static_argnames="eps")
    np.testing.assert_array_equal(fn(np.ones(1), 0.0), [np.inf])
    np.testing.assert_array_equal(fn(np.ones(1), -0.0), [-np.inf])
    fn(np.ones(1), float("nan"))
    fn(np.ones(1), float("nan"))
    assert fn.stats["traces"] == 3 and fn.stats["cache_hits"] == 1


@pytest.mark.parametrize(
    "fn",
    [
        lambda z: z * 1 + 0j,
        lambda z: z / 1 + 0j,
    ],
    ids=["times-one", "over-one"],
)
def test_complex_identities_are_not_simplified(fn):
    check(fn, np.array([complex(np.inf, 1.0), complex(np.nan, 2.0)]))


@pytest.mark.parametrize(
    "fn",
    [
        lambda x: np.copy(x, order="C"),
        lambda x: np.copy(x, order="F"),
        lambda x: x.astype(np.float32, order="C"),
        lambda x: np.array(x, dtype=np.float32, order="C"),
    ],
    ids=["copy-C", "copy-F", "astype-C", "array-C"],
)
def test_requested_memory_order_is_kept(fn):
    x = np.asfortranarray(np.arange(6.0).reshape(2, 3))
    eager, result = fn(x.copy(order="K")), compiled(fn)(x.copy(order="K"))
    assert (result.flags.c_contiguous, result.flags.f_contiguous) == (
        eager.flags.c_contiguous,
        eager.flags.f_contiguous,
    )
    np.testing.assert_array_equal(result, eager)


def test_a_buffer_filled_whole_keeps_its_layout():
    def f(x):
        a = np.empty((2, 3))
        a[...] = x * 2
        return a

    result = compiled(f)(np.asfortranarray(np.ones((2, 3))))
    assert result.flags.c_contiguous


def test_numpy_scalar_copy_is_a_scalar():
    check(lambda x: x.sum().copy(), np.ones(2))


def _copied(a, b):
    a = copy.deepcopy(a)  # (Rosetta Code's Gaussian elimination starts so)
    b = copy.copy(b)
    a[0] = 5.0
    b[0, 1] = 7.0
    return a, b


def test_copy_and_deepcopy_of_an_array_are_copies_in_its_layout():
    check(_copied, np.arange(3.0), np.asfortranarray(np.arange(6.0).reshape(2, 3)))


def test_array_ndmin_is_refused_even_with_a_dtype():
    with pytest.raises(gcompile.UnsupportedError, match="ndmin"):
        gcompile.trace(lambda x: np.array(x, dtype=np.float32, ndmin=3), np.ones(2))


@pytest.mark.parametrize(
    "fn",
    [
        lambda x: x + np.arange(start=1, stop=3),
        lambda x: x + np.arange(stop=2),
        lambda x: x + np.arange(2),
        lambda x: x + np.arange(0.5, 1.5, 0.5, dtype=np.float32),
    ],
    ids=["start-stop", "stop", "positional", "step-dtype"],
)
def test_arange_keywords(fn):
    check(fn, np.ones(2))


def test_internal_failures_are_cached_and_warned_once():
    from gcompile import backends

    def broken(graph, options):
        raise RuntimeError("boom")

    backends.register_backend("broken_once", broken)
    fn = gcompile.compile(lambda x: x + 1, backend="broken_once")
    with pytest.warns(gcompile.GcompileWarning, match="boom"):
        fn(np.ones(2))
    np.testing.assert_array_equal(fn(np.ones(2)), [2.0, 2.0])  # no second warning, no re-trace
    assert fn.stats["traces"] == 1 and fn.stats["fallbacks"] == 2


def _out_of_range_comparisons(x):
    return x > -40, x == 300, -1 < x, np.less_equal(x, -3), x[1:] != -2, x[0] >= -1, x < 2**40


@pytest.mark.parametrize("dtype", [np.uint8, np.int8, np.uint32, np.uint64])
def test_integers_compared_with_a_python_int_beyond_their_range_are_compared_exactly(dtype):
    """(NEP 50: NumPy compares the values; a kernel casting -40 to uint8 would compare 216.)"""
    check(_out_of_range_comparisons, np.arange(5, dtype=dtype) * 3)


def _compared_with_an_int_argument(x, n):
    return x > n, n <= x, np.equal(x, n), np.greater(x, -1, dtype=bool)


def test_an_int_argument_and_clip_bounds_beyond_the_dtype_are_compared_exactly():
    x = np.array([0, 60, 120, 180, 240], np.uint8)
    fn = gcompile.compile(_compared_with_an_int_argument, fullgraph=True)
    for n in (5, 6, 300, -3, 120, 2**40):  # (the second call makes n a run-time value)
        for e, a in zip(_compared_with_an_int_argument(x, n), fn(x, n)):
            np.testing.assert_array_equal(a, e, strict=True)
    check(lambda x: (np.clip(x, -1, 300), np.clip(x, 3, 300), np.clip(x, -5, None)), x)
    clipped = gcompile.compile(lambda x, n: np.clip(x, 1, n), fullgraph=True)
    for n in (5, 6, 200, 300, 2**40):  # (run-time bounds past uint8: clamped, not wrapped)
        np.testing.assert_array_equal(clipped(x, n), np.clip(x, 1, n), strict=True)
    check(lambda x: np.clip(x, -200, 100), x.astype(np.int8))


def conjugate_then_write(a):
    b = a.conj()  # (of a real array: the array itself, as NumPy's method returns it)
    b[0] = 5.0
    return a, b.conjugate() * 2


def test_the_conjugate_of_a_real_array_is_the_array_itself():
    check(conjugate_then_write, np.arange(4.0))
    check(conjugate_then_write, np.array([1 + 2j, 3 - 1j]))


def type_checks(X, a, b):
    if type(X) != type(np.array([])):  # noqa: E721 (k-means from a course: a type guard)
        return None
    kinds = isinstance(X, np.ndarray), isinstance(X[0, 0], float), isinstance(a, float)
    return X.sum() * len(kinds) + min(a, b), type(X[0, 0]).__name__, kinds


def test_type_and_isinstance_answer_as_in_eager_mode():
    X = np.arange(6.0).reshape(3, 2)
    got, expected = gcompile.compile(type_checks)(X, 0.5, 0.25), type_checks(X, 0.5, 0.25)
    assert got == expected and type(got[0]) is type(expected[0])


def test_an_argument_holding_many_values_in_lists_runs_eagerly_with_the_reason():
    fn = gcompile.compile(lambda values, x: x * len(values))
    with pytest.warns(gcompile.GcompileWarning, match="more than 64 values"):
        assert np.array_equal(fn([1.0] * 65, np.ones(2)), np.full(2, 65.0))
    assert fn.stats["traces"] == 0


def test_numpy_functions_are_static_arguments():
    fn = gcompile.compile(lambda x, statistic: np.sort(statistic(x, 1)), fullgraph=True)
    x = RNG_ARGS.random((4, 5))
    assert np.array_equal(fn(x, np.mean), np.sort(np.mean(x, 1)))
    assert np.array_equal(fn(x, np.max), np.sort(np.max(x, 1)))


def _scaled_by(w):
    def scaled(v):
        return v * w

    return scaled


def test_a_helper_defined_anew_on_each_call_keys_by_its_code_and_closure():
    fn = gcompile.compile(lambda x, f: f(x) + 1.0, fullgraph=True)
    x, weights = np.ones(3), np.arange(3.0)
    for f, expected in (
        (_scaled_by(2.0), 3.0),
        (_scaled_by(2.0), 3.0),  # (another function object, the same code and values)
        (_scaled_by(3.0), 4.0),
        (_scaled_by(weights), weights + 1.0),  # (an array it holds may change: by identity)
        (_scaled_by(weights), weights + 1.0),
    ):
        assert np.array_equal(fn(x, f), np.broadcast_to(expected, (3,)))
    assert fn.stats["traces"] == 4
    settings = {"k": 2.0}
    assert np.array_equal(fn(x, _scaled_by_setting(settings)), np.full(3, 3.0))
    settings["k"] = 5.0  # (a container it holds changed: by identity, traced again)
    assert np.array_equal(fn(x, _scaled_by_setting(settings)), np.full(3, 6.0))


def _scaled_by_setting(settings):
    def scaled(v):
        return v * settings["k"]

    return scaled


def flattened(a, n):
    b = a * 2.0
    c = b  # (another name of the same array: it sees the new shape too)
    before = b[1:3]  # (a view made before keeps its shape)
    c.shape = (n, -1)
    b[0] = 7.0
    return b, c.shape, before


def flattened_argument(a):
    a.shape = a.size  # (the caller's array changes shape: Python runs it, a graph break)
    a[0] = 5.0
    return a.sum()


def transposed_flattened(a):
    t = a.T
    t.shape = a.size  # (needs a copy: NumPy's AttributeError)
    return t


def test_a_shape_assignment_reshapes_the_array_in_place_as_numpy_does():
    check(flattened, np.arange(12.0), 3)
    check(flattened, np.arange(12.0), 4)
    a, b = np.ones((3, 4)), np.ones((3, 4))
    with pytest.warns(gcompile.GcompileWarning, match="setting the shape of an array the function"):
        assert gcompile.compile(flattened_argument)(a) == flattened_argument(b)
    assert a.shape == b.shape == (12,) and np.array_equal(a, b)
    for fn in (transposed_flattened, compiled(transposed_flattened)):
        with pytest.raises(AttributeError, match="Incompatible shape for in-place modification"):
            fn(np.ones((3, 4)))


def scalar_checks(x, delta, z):
    return np.isscalar(delta), np.isscalar(x[0]), np.isscalar(x), np.isscalar(z), x * delta


def test_isscalar_answers_as_eager_for_traced_scalars_and_arrays():
    check(scalar_checks, np.arange(3.0), 0.5, np.array(2.0), backends=("numba",))
    assert compiled(scalar_checks)(np.arange(3.0), 0.5, np.array(2.0))[:4] == (
        True,
        True,
        False,
        False,
    )


INT_REFERENCE = np.array([-1, 2, 3])


def closeness(x, flags):
    return (
        np.isclose(x, INT_REFERENCE),  # (an integer array from outside: compared in float)
        np.isclose(x, [-1, 2, 3]),
        np.isclose(flags, True),
    )


def grid_flattened(n):
    Z = np.mgrid[0:3, 0:n]  # (a grid the function made: its shape may be set)
    Z.shape = (2, 3 * n)
    return Z * 2


def test_isclose_takes_its_reference_in_floating_point_and_grids_made_inside_take_a_shape():
    x = np.array([np.iinfo(np.int64).max, 2, 3])
    check(closeness, x, np.array([True, False, True]), backends=("numba",))
    check(grid_flattened, 4, backends=("numba",))
    assert compiled(grid_flattened)(5).shape == (2, 15)


def _with_an_int_argument(x, n):
    # (the int converts to the dtype of the loop NumPy picks: x / n's is float64, no check)
    return x + n, n * x, np.subtract(x, n), x / n, np.add(x, n, dtype=np.int32)


@pytest.mark.parametrize(
    "dtype, ints", [(np.int8, (5, 6, 127, 128, -129)), (np.uint8, (5, 6, 255, 256, -1))]
)
def test_a_run_time_int_beyond_an_integer_dtype_raises_overflow_error_as_numpy(dtype, ints):
    """(NEP 50: ``int8_array + 200`` raises where a kernel would wrap 200 into int8.)"""
    x = np.arange(3, dtype=dtype)
    fn = gcompile.compile(_with_an_int_argument, fullgraph=True)
    for n in ints:  # (the second call makes n a run-time value)
        try:
            expected = _with_an_int_argument(x, n)
        except OverflowError:
            with pytest.raises(OverflowError, match=f"out of bounds for {np.dtype(dtype)}"):
                fn(x, n)
            continue
        for e, a in zip(expected, fn(x, n)):
            np.testing.assert_array_equal(a, e, strict=True)


def _python_ints_of_sizes(x):
    n = x.shape[0]
    text = len(str(n)) + len(str(n - 1)) + len(f"{n:05d}")
    return x[: n - 3] * (n - 8) ** -1 + text, x[-1] * n**-2


def test_sizes_are_python_ints_to_str_and_to_negative_powers():
    """``str(n)`` is the size's digits; ``n ** -1`` a Python float, ``0 ** -1`` its
    ZeroDivisionError."""
    fn = gcompile.compile(_python_ints_of_sizes, backend="interpreter", fullgraph=True)
    for size in (9, 150, 1234, 8):
        x = np.arange(float(size))
        try:
            expected = _python_ints_of_sizes(x)
        except ZeroDivisionError:
            with pytest.raises(ZeroDivisionError, match="negative power"):
                fn(x)
            continue
        for e, a in zip(expected, fn(x)):
            np.testing.assert_array_equal(a, e, strict=True)


def test_a_call_while_numpy_raises_floating_point_errors_runs_eagerly():
    fn = gcompile.compile(lambda x, y: x / y + 1.0)
    x, y = np.ones(3), np.array([1.0, 0.0, 2.0])
    with np.errstate(divide="ignore"):
        np.testing.assert_array_equal(fn(x, y), [2.0, np.inf, 1.5])
        fn(x, y)  # (a fast entry, if it has one)
    with (
        np.errstate(divide="raise"),
        pytest.warns(gcompile.GcompileWarning, match="divide='raise'"),
    ):
        with pytest.raises(FloatingPointError):
            fn(x, y)
    previous = np.seterr(all="raise")
    try:
        with pytest.warns(gcompile.GcompileWarning, match="over='raise'"):
            with pytest.raises(FloatingPointError):
                fn(x, y)
    finally:
        np.seterr(**previous)
    with np.errstate(divide="ignore"):
        np.testing.assert_array_equal(fn(x, y), [2.0, np.inf, 1.5])


def _appended(x, n):
    ends = np.concatenate((np.flatnonzero(x > 1), [len(x)]))  # (a list holding a size)
    return np.append(x, [n, 1]), np.append(x, [x.shape[0], 1]), np.diff(ends), ends * [len(x)]


def test_append_takes_a_list_holding_run_time_ints():
    fn = gcompile.compile(_appended, fullgraph=True)
    for n in (5, 6, 9):
        for e, a in zip(_appended(np.arange(n / 2), n), fn(np.arange(n / 2), n)):
            np.testing.assert_array_equal(a, e, strict=True)


def euler_history(x0, t):
    """Gordon College's diffeq.py: the history made as ``np.array([x0] * n)``."""
    n = len(t)
    x = np.array([x0] * n)
    for i in range(n - 1):
        x[i + 1] = x[i] + (t[i + 1] - t[i]) * np.sin(x[i])
    return x


def test_an_array_of_one_row_repeated_in_a_list_is_that_row_broadcast():
    """(One node, not a row each: at n=101 it took 9 s to compile, at 20001 it was refused.)"""
    fn = gcompile.compile(euler_history, fullgraph=True)
    for n in (101, 20001):
        t, x0 = np.linspace(0, 1, n), np.array([1.0, 0.0])
        np.testing.assert_array_equal(fn(x0, t), euler_history(x0, t), strict=True)
    assert len(gcompile.trace(euler_history, np.ones(2), np.ones(101)).nodes) < 20


def padded_columns(x, padding):
    """cs231n's loop im2col, reduced: a length computed by int() of sizes and a static int."""
    H, W = x.shape
    HH = int((H + 2 * padding - 2) / 2 + 1)
    xp = np.pad(x, ((padding, padding), (padding, padding)), mode="constant")
    cols = np.zeros(HH)
    for yy in range(HH):
        cols[yy] = xp[2 * yy, 0]
    return cols


def test_a_length_the_passes_fold_to_an_int_keeps_its_array():
    """(The carrier of a length folded to a constant failed constant_fold: an internal error.)"""
    fn = gcompile.compile(padded_columns, fullgraph=True)
    for n, padding in ((4, 0), (6, 1), (8, 0)):
        x = RNG_ARGS.random((n, n))
        np.testing.assert_array_equal(fn(x, padding), padded_columns(x, padding), strict=True)
