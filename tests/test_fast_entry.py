"""The fast entry: a call goes straight to the whole-graph program of the entry it used last.

Every call that the fast entry cannot take (another dtype, layout, size class, scalar kind,
arity, a disabled compiler) must give what the general path gives; these tests call each
compiled function with many such arguments in turn.
"""

import warnings

import numpy as np
import pytest

import gcompile
from gcompile import fast_entry

RNG = np.random.default_rng(7)


def periodic_laplacian(u, dx=0.5):
    lap = np.empty_like(u)
    lap[1:-1] = u[:-2] - 2.0 * u[1:-1] + u[2:]
    lap[0] = u[-1] - 2.0 * u[0] + u[1]
    lap[-1] = u[-2] - 2.0 * u[-1] + u[0]
    return lap / (dx * dx)


def blend(x, y, w):
    """Two inputs whose sizes must agree, and a tuple of results."""
    mixed = np.empty_like(x)
    mixed[0] = x[0]
    for i in range(1, x.shape[0]):
        mixed[i] = w * x[i] + (1.0 - w) * mixed[i - 1] + y[i]
    return mixed, np.tanh(mixed) + y


def _served(fn) -> int:
    """Calls the fast entry served so far."""
    return sum(e.fast.calls for e in fn.entries if isinstance(e.fast, fast_entry.FastEntry))


def test_a_whole_program_is_called_straight_and_every_other_call_takes_the_general_path():
    fn = gcompile.compile(periodic_laplacian)
    u = RNG.random(40)
    np.testing.assert_array_equal(fn(u, 0.1), periodic_laplacian(u, 0.1))
    assert type(fn).__call__ is fn._fast.function and fn.__name__ == "periodic_laplacian"
    program = fn.entries[0].run.program.entry.function
    calls = [
        ((u, 0.1), 1),  # the same kinds: served
        ((RNG.random(7), 0.3), 1),  # other sizes, one trace
        ((u,), 1),  # the default
        ((), {"u": u, "dx": 0.2}),  # by keyword
        ((u.astype(np.float32), 0.1), 0),  # another dtype: the general path compiles
        ((u.astype(np.float32), np.float64(0.1)), 0),  # a NumPy scalar: no weak float
        ((u[::2], 0.1), 0),  # not contiguous
        ((np.ones(2), 0.1), 1),  # the least size the trace assumed
        ((np.ones((2, 3)), 0.1), 0),  # another rank
        ((u, 1), 0),  # an int for a float
        ((u, 0.1), 0),  # back to the first entry: the general path makes it the fast one
        ((u, 0.1), 1),
    ]
    for args, served in calls:
        kwargs = served if isinstance(served, dict) else {}
        before = _served(fn)
        result = fn(*args, **kwargs)
        expected = periodic_laplacian(*args, **kwargs)
        assert result.dtype == expected.dtype and result.shape == expected.shape
        np.testing.assert_array_equal(result, expected)
        if not kwargs:
            assert _served(fn) - before == served, args
    assert len(program.overloads) == 1  # the general path compiled the other kinds elsewhere
    assert fn.stats["calls"] == len(calls) + 1


def test_the_fast_entry_raises_what_eager_raises():
    fn = gcompile.compile(periodic_laplacian)
    u = RNG.random(12)
    fn(u, 0.5)
    for args in [(), (u, 0.5, 3)]:
        with pytest.raises(TypeError) as compiled_error:
            fn(*args)
        with pytest.raises(TypeError) as eager_error:
            periodic_laplacian(*args)
        assert str(compiled_error.value) == str(eager_error.value)
    readonly = u.copy()
    readonly.flags.writeable = False
    np.testing.assert_array_equal(fn(readonly, 0.5), periodic_laplacian(readonly, 0.5))


def test_sizes_the_program_was_not_compiled_for_go_to_the_general_path():
    fn = gcompile.compile(blend)
    x, y = RNG.random(30), RNG.random(30)
    for args in [(x, y, 0.25), (x[:9], y[:9], 0.5), (x, y, 0.75)]:
        for got, want in zip(fn(*args), blend(*args)):
            np.testing.assert_allclose(got, want, rtol=1e-15, atol=0)
    assert isinstance(fn(x, y, 0.5), tuple) and _served(fn) == 3
    with pytest.raises(IndexError):  # eager's own error
        fn(x, y[:10], 0.5)


def test_disabling_the_compiler_reaches_calls_the_fast_entry_would_take(monkeypatch):
    fn = gcompile.compile(periodic_laplacian)
    u = RNG.random(16)
    fn(u, 0.5)
    ran = []
    monkeypatch.setattr(fn, "eager", lambda *args: ran.append(args) or periodic_laplacian(*args))
    monkeypatch.setenv("GCOMPILE_DISABLE", "1")
    np.testing.assert_array_equal(fn(u, 0.5), periodic_laplacian(u, 0.5))
    monkeypatch.delenv("GCOMPILE_DISABLE")
    gcompile.config.set("disable", True)
    try:
        fn(u, 0.5)
    finally:
        gcompile.config.set("disable", None)
    assert len(ran) == 2
    assert fn._fast is None  # (``config.set`` took the fast entry down: it looks at no option)
    fn(u, 0.5)
    assert len(ran) == 2 and fn._fast is not None


def bump_then_take(a, idx):
    for i in range(a.shape[0]):
        a[i] += 1.0
    return a[idx] * 2.0


def test_a_program_writing_its_arguments_is_called_straight_and_checks_their_overlap():
    fn = gcompile.compile(bump_then_take)
    taken = np.array([0, 4])
    for _ in range(2):
        a, expected = np.zeros(5), np.zeros(5)
        np.testing.assert_array_equal(fn(a, taken), bump_then_take(expected, taken))
        np.testing.assert_array_equal(a, expected)
    assert _served(fn) == 1
    # an error after the writes is the call's own: not run again (the bump happens once)
    a, expected = np.zeros(5), np.zeros(5)
    general_calls = fn.stats["calls"]
    for array in (a, expected):
        with pytest.raises(IndexError):
            (fn if array is a else bump_then_take)(array, np.array([0, 7]))
    np.testing.assert_array_equal(a, expected)
    assert fn.stats["calls"] == general_calls
    # indices in the very memory the loop writes: the general path refuses, eager runs
    memory = np.zeros(8, dtype=np.int64)
    with pytest.warns(UserWarning, match="share memory"), pytest.raises(IndexError):
        fn(memory.view(np.float64), memory[:2])
    readonly = np.zeros(5)
    readonly.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        fn(readonly, taken)
    assert fn.stats["calls"] == general_calls + 2


def bump_by(a, n):
    for i in range(a.shape[0]):
        a[i] += n
    return a.sum()


def test_an_int_past_int64_takes_the_general_path_and_gives_eagers_answer():
    fn = gcompile.compile(bump_by)
    for n in (3, 4, 2**63, -(2**63) - 1, 5):  # (a program of int64 sizes: Numba refuses more)
        a, expected = np.zeros(4), np.zeros(4)
        assert fn(a, n) == bump_by(expected, n)
        np.testing.assert_array_equal(a, expected)


def test_a_large_output_comes_from_the_host_pool_in_the_fast_entry_too():
    fn = gcompile.compile(periodic_laplacian)
    u = RNG.random(200_000)  # 1.6 MB: the pool reuses a buffer the caller dropped
    np.testing.assert_array_equal(fn(u, 0.5), periodic_laplacian(u, 0.5))
    assert fn.entries[0].run.program.entry.buffers[0].pooled
    assert "_gc_pooled(u.shape, _gc_b0, 'C')" in fn._fast.source
    first = fn(u, 0.5)
    address = first.ctypes.data
    del first
    second = fn(u, 0.25)
    assert second.ctypes.data == address and _served(fn) == 2
    np.testing.assert_array_equal(second, periodic_laplacian(u, 0.25))


def test_a_pooled_buffer_its_caller_reshaped_or_froze_is_not_handed_out_again():
    fn = gcompile.compile(periodic_laplacian)
    u = RNG.random(200_000)
    first = fn(u, 0.5)
    first.shape = (400, 500)  # (in place: the pool still holds this array)
    del first
    np.testing.assert_array_equal(fn(u, 0.25), periodic_laplacian(u, 0.25))
    frozen = fn(u, 0.5)
    frozen.flags.writeable = False
    del frozen
    again = fn(u, 0.75)
    assert again.flags.writeable
    np.testing.assert_array_equal(again, periodic_laplacian(u, 0.75))


def pieces(x, y):
    """Outputs the program writes into its caller's buffers (a filled creation of another
    shape, a kernel's output) and one it returns (a view of one of them)."""
    head = np.zeros(x.shape[0] - 1)
    for i in range(1, x.shape[0] - 1):
        head[i] = head[i - 1] + x[i] * y[i]
    return head, np.tanh(x) * y, head[::2]


def row_sums(X):
    y = np.zeros((X.shape[0], X.shape[1]))
    for i in range(X.shape[0]):
        y[i] = X[i].sum(axis=1)
    return y


def test_a_buffer_of_fewer_axes_than_its_input_is_made_of_its_own_shape():
    fn = gcompile.compile(row_sums)
    for _ in range(3):
        X = RNG.random((2, 3, 4))
        np.testing.assert_allclose(fn(X), row_sums(X), rtol=1e-15, atol=0)
    assert _served(fn) == 2 and "(X.shape[0], X.shape[1])" in fn._fast.source


def test_outputs_in_the_callers_buffers_and_returned_ones_keep_eager_identity():
    fn = gcompile.compile(pieces)
    for n in (9, 30, 2, 30):
        x, y = RNG.random(n), RNG.random(n)
        got, want = fn(x, y), pieces(x, y)
        for a, b in zip(got, want):
            assert a.dtype == b.dtype and a.shape == b.shape
            np.testing.assert_allclose(a, b, rtol=1e-15, atol=0)
        assert np.shares_memory(got[0], got[2]) and not np.shares_memory(got[0], got[1])
    assert _served(fn) == 3 and "_gc_r0 = _gc_empty((x.shape[0] - 1,), _gc_b0)" in fn._fast.source


def checksum(data, poly=0x8408):
    """A CRC loop returning Python ints and NumPy scalars (no array): the program returns
    each value's element, the fast entry gives it its type."""
    crc = 0xFFFF
    total = np.float32(0)
    for b in data:
        crc = (crc >> 1) ^ poly if (crc ^ int(b)) & 1 else crc >> 1
        total += b * np.float32(0.5)
    return crc & 0xFFFF, total, data.sum() * 0.5, data[0] > 3


def test_a_program_returning_scalars_has_a_fast_entry_giving_their_types():
    fn = gcompile.compile(checksum)
    data = RNG.integers(0, 256, 50).astype(np.uint8)
    for _ in range(3):
        expected, actual = checksum(data), fn(data)
        assert [type(v) for v in actual] == [type(v) for v in expected]
        assert actual == expected
    assert fn._fast is not None and _served(fn) >= 2


def scaled_into(out, x):
    for i in range(out.shape[0]):
        out[i] = 2.0 * x[i] + out[i - 1]
    return out.sum()


def test_the_overlap_check_of_a_writing_program_reads_any_strides():
    fn = gcompile.compile(scaled_into)
    fn(np.zeros(4), np.ones(4))
    for first, second, overlap in [
        (slice(0, 4), slice(4, 8), False),
        (slice(0, 4), slice(2, 6), True),  # (both contiguous: the fast entry checks)
        (slice(0, 4), slice(None, 3, -1), False),  # (a reversed view of the other half)
        (slice(2, 6), slice(None, 3, -1), True),
        (slice(0, 8, 2), slice(1, 8, 2), True),  # (interleaved: NumPy's bounds meet too)
        (slice(0, 0), slice(0, 4), False),
    ]:
        memory, expected = np.arange(8.0), np.arange(8.0)
        want = scaled_into(expected[first], expected[second])
        eager_runs = fn.stats["fallbacks"]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", gcompile.GcompileWarning)  # (warned once a reason)
            got = fn(memory[first], memory[second])
        assert got == want and np.array_equal(memory, expected)
        assert (fn.stats["fallbacks"] > eager_runs) == overlap, (first, second)
