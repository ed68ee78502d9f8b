"""One trace serves every size: symbolic sizes from tracing to the compiled call.

Sizes of 2 or more are symbols in the trace; what the trace had to assume about them is
guarded and named; sizes 0 and 1 are specialised (they change what NumPy does).
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import gcompile
from tests.support import BACKENDS, NUMBA_ULPS, assert_same_value, check


def slices_and_reductions(x):
    inner = x[1:-1] * 2.0 - x[:-2]
    return inner.sum(), np.max(x[::2]), inner / inner.shape[0]


def rows(x, gamma):
    mean = x.mean(axis=-1, keepdims=True)
    centered = x - mean
    return centered / np.sqrt((centered * centered).mean(axis=-1, keepdims=True) + 1e-5) * gamma


def _literals(fn) -> set:
    """The integer literals of the generated code (host and kernels, comments left out)."""
    code = "\n".join(line.split("#")[0] for line in fn.code.splitlines())
    return {int(n) for n in re.findall(r"(?<![\w.])\d+(?![\w.])", code)}


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_program_with_slices_and_reductions_traces_once_for_three_sizes(backend):
    fn = gcompile.compile(slices_and_reductions, backend=backend, fullgraph=True)
    sizes = (10, 37, 1000)
    for size in sizes:
        x = np.random.default_rng(size).random(size)
        for got, want in zip(fn(x), slices_and_reductions(x)):
            assert_same_value(want, got, NUMBA_ULPS if backend == "numba" else 0, "result")
    assert fn.stats["traces"] == 1 and fn.stats["cache_entries"] == 1
    assert str(fn.entries[0].graph).startswith("graph slices_and_reductions(x: f64[s0]):")
    if backend == "numba":
        assert not {n for s in sizes for n in (s, s - 1, s - 2, (s + 1) // 2)} & _literals(fn)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_row_kernel_traces_once_for_three_shapes(backend):
    fn = gcompile.compile(rows, backend=backend, fullgraph=True)
    shapes = ((8, 16), (3, 100), (50, 7))
    for shape in shapes:
        x = np.random.default_rng(0).random(shape)
        gamma = np.random.default_rng(1).random(shape[1])
        assert_same_value(rows(x, gamma), fn(x, gamma), NUMBA_ULPS, "result")
    assert fn.stats["traces"] == 1
    if backend == "numba":
        assert not {n for shape in shapes for n in shape} & _literals(fn)
    assert "x.shape[1] == s0" not in "\n".join(fn.entries[0].guards())  # gamma's size is learned
    assert any(line.startswith("gamma.shape[0] == s1") for line in fn.entries[0].guards())


@pytest.mark.parametrize(
    "fn",
    [
        lambda x: x.sum() / x.shape[0],
        lambda x: x[: x.shape[0] // 2] + x[x.shape[0] // 2 : 2 * (x.shape[0] // 2)],
        lambda x: np.zeros((x.shape[0], 2)) + x[:, None],
        lambda x: x.reshape(2, -1).sum(axis=1),
        lambda x: np.arange(x.shape[0] - 1) * x[1:],
        lambda x: x[x.size - 1] * x,
        lambda x: np.float32(x.shape[0]) * x,
    ],
)
@pytest.mark.parametrize("size", [6, 10])
def test_sizes_used_as_values_shapes_and_bounds(fn, size):
    check(fn, np.arange(float(size)), backends=BACKENDS)


def test_python_that_needs_the_value_specialises_and_says_why():
    def loop(x):
        total = x[0] * 0
        for value in [x[i] for i in range(len(x))]:  # a Python list: its length must be an int
            total = total + value
        return total

    fn = gcompile.compile(loop, backend="interpreter")
    assert fn(np.arange(4.0)) == 6.0 and fn(np.arange(4.0) + 1) == 10.0
    assert fn(np.arange(5.0)) == 10.0
    assert fn.stats["traces"] == 2
    (record,) = fn.recompiles
    assert "a size used as a Python int" in record.changes[0]


def test_size_one_is_specialised_in_the_guard_key():
    fn = gcompile.compile(rows, backend="interpreter")
    fn(np.ones((4, 8)), np.ones(8))
    fn(np.ones((1, 8)), np.ones(8))
    fn(np.ones((9, 3)), np.ones(3))
    assert fn.stats["traces"] == 2
    assert "x: sizes [*,*] -> [1,*]" in fn.recompiles[0].changes[0]


def test_a_learned_equality_that_fails_raises_numpys_error():
    fn = gcompile.compile(lambda a, b: a + b, backend="interpreter")
    np.testing.assert_array_equal(fn(np.ones(3), np.ones(3)), np.full(3, 2.0))
    with pytest.raises(ValueError, match="could not be broadcast"):
        fn(np.ones(3), np.ones(4))


def test_explain_lists_the_symbols_and_what_was_assumed():
    def f(x, y):
        if x.shape[0] > 3:
            return x[1:] + y
        return x

    report = gcompile.explain(
        gcompile.compile(f, backend="interpreter"), np.ones(6), np.ones(5)
    ).guards
    assert report[:2] == [
        "x: array float64[*] layout C writeable",
        "y: array float64[*] layout C writeable",
    ]
    assert "s0 = x.shape[0]" in report and "s1 = y.shape[0]" in report
    assert any(line.startswith("y.shape[0] == s0-1 (broadcasting, at ") for line in report)
    assert any(line.startswith("s0 > 3 (a comparison of sizes, at ") for line in report)


def test_static_tracing_fixes_every_size():
    fn = gcompile.compile(slices_and_reductions, backend="interpreter", options={"dynamic": False})
    fn(np.arange(10.0))
    fn(np.arange(11.0))
    assert fn.stats["traces"] == 2
    assert str(fn.entries[0].graph).startswith("graph slices_and_reductions(x: f64[10]):")
    assert "x.shape[0] == 10" in fn.entries[0].guards()


def sizes_through_floats(x):
    """Sizes computed by float arithmetic (``int(0.25 * n)``, ``round(n / 2)``, a test of
    ``n / 2``): Python needs them as numbers, taken at the traced sizes and guarded."""
    n = x.shape[0]
    quarter = int(n * 0.25)
    head = x[:quarter] * 2.0 + x[n - quarter :]
    middle = x[: round(n / 2)].sum()
    if n / 2 > 10:
        middle = middle + np.float64(float(n) ** 0.5)
    return head, middle, x[np.int64(n) // 3]


def a_size_read_from_data(x):
    return x[: int(x[0] * 4)] * 2.0


def a_size_from_an_array_written_with_data(x):
    a = np.zeros(3)
    a[0] = x[3]  # (the array's node is its value before this write)
    return x[: int(a[0] + x.shape[0] * 0.1)] - 1.0


@pytest.mark.parametrize("backend", BACKENDS)
def test_sizes_computed_through_floats_compile_once_per_size_and_data_stays_refused(backend):
    fn = gcompile.compile(sizes_through_floats, backend=backend, fullgraph=True)
    for size, traces in ((40, 1), (41, 2), (40, 2), (9, 3)):
        x = np.random.default_rng(size).random(size)
        assert_same_value(sizes_through_floats(x), fn(x), NUMBA_ULPS if backend == "numba" else 0)
        assert fn.stats["traces"] == traces  # (each new size traces again: the guard)
    for fn in (a_size_read_from_data, a_size_from_an_array_written_with_data):
        with pytest.raises(gcompile.UnsupportedError):
            gcompile.compile(fn, backend=backend, fullgraph=True)(np.arange(10.0))


def test_bit_length_of_a_size_specialises():
    def padded(x):
        n = 1 << (x.shape[0] - 1).bit_length()  # (an FFT's power-of-two length)
        out = np.zeros(n)
        out[: x.shape[0]] = x
        return out

    fn = gcompile.compile(padded, backend="interpreter", fullgraph=True)
    for size in (3, 4, 5, 9):
        assert np.array_equal(fn(np.arange(float(size))), padded(np.arange(float(size))))
