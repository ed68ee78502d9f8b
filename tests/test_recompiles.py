"""Recompile reasons: a cache miss records the closest entry and the guard that differs."""

from __future__ import annotations

import logging

import numpy as np
import pytest

import gcompile


def scale(x, n):
    return x * n + 1.0


def scale_by(x, factor):
    return x * factor


X = np.arange(6.0)

CHANGES = {
    "dtype": ((X, 2), (X.astype(np.float32), 2), "x: dtype float64 -> float32"),
    "ndim": ((X, 2), (X.reshape(2, 3), 2), "x: ndim 1 -> 2"),
    "size 1": (
        (X, 2),
        (np.arange(1.0), 2),
        "x: sizes [*] -> [1] (sizes 0 and 1 are specialised, * is any size >= 2)",
    ),
    "layout": (
        (X.reshape(2, 3), 2),
        (np.asfortranarray(X.reshape(2, 3)), 2),
        "x: layout C -> F",
    ),
    "writeable": ((X, 2), (np.frombuffer(X.tobytes()), 2), "x: writeable -> read-only"),
    "static int": ((X, 5), (X, 6), "n: 5 -> 6 (static int)"),
    "kind": ((X, 2), (X, 2.5), "n: static value -> Python float"),
}


@pytest.mark.parametrize("guard", sorted(CHANGES))
def test_each_guard_kind_names_what_changed(guard):
    first, second, expected = CHANGES[guard]
    fn = gcompile.compile(scale, backend="interpreter")
    fn(*first)
    fn(*second)
    (record,) = fn.recompiles
    assert record.changes == [expected]
    assert record.closest == 0
    assert "recompiling scale" in str(record) and "test_recompiles.py:" in record.where


def test_the_closest_entry_is_the_one_with_fewest_differences():
    fn = gcompile.compile(scale, backend="interpreter")
    fn(X, 2)
    fn(X.astype(np.float32), 3)  # dtype and n differ from entry 0
    fn(X.astype(np.float32), 2)  # only n differs from entry 1, only dtype from entry 0
    fn(X.astype(np.float32).reshape(2, 3), 3)  # only ndim differs from entry 1
    assert fn.recompiles[-1].closest == 1
    assert fn.recompiles[-1].changes == ["x: ndim 1 -> 2"]
    assert len(fn.recompiles[0].changes) == 2


def test_an_int_whose_value_alone_changes_becomes_a_size_symbol():
    fn = gcompile.compile(scale, backend="interpreter")
    for n in (5, 6, 7, 40, 5):
        np.testing.assert_array_equal(fn(X, n), scale(X, n))
    assert fn.stats["traces"] == 2  # the second value traces n as a symbol; no trace after
    assert fn.recompiles[0].hint == "n: traced as a size from now on"
    assert "n: Python int >= 2 (a size symbol)" in fn.entries[1].guards()
    np.testing.assert_array_equal(fn(X, -3), scale(X, -3))  # 0, 1, negatives: specialised
    assert fn.stats["traces"] == 3
    assert "a size symbol for values of 2 or more" in fn.recompiles[-1].hint


def test_an_entry_for_the_static_int_two_never_answers_for_a_size_int():
    """A call memoised with ``n`` a size keys apart from one with ``n`` the static 2."""

    def shifted(x, n):
        return x.sum() + n

    fn = gcompile.compile(shifted, backend="interpreter")
    x4, x1 = np.ones(4), np.ones(1)
    for x, n in ((x4, 2), (x1, 2), (x4, 5), (x1, 5), (x1, 7), (x4, 2), (x1, 2)):
        assert fn(x, n) == shifted(x, n), (x.shape, n)


def test_calls_with_a_new_value_of_a_size_int_reuse_the_entry_its_size_check_admits():
    def pick(x, n):
        return x[:n] + x[n]

    fn = gcompile.compile(pick, backend="interpreter")
    x = np.arange(10.0)
    for n in (3, 4, 5, 6, 7, 2, 9):
        np.testing.assert_array_equal(fn(x, n), pick(x, n))
    assert fn.stats["traces"] == 2 and fn.stats["cache_hits"] == 5  # (memo hits: n < s0 held)
    with pytest.raises(IndexError, match="index 20 is out of bounds"):
        fn(x, 20)  # (the memo's entry assumed n < s0: its size check sends this call on)
    np.testing.assert_array_equal(fn(x, 5), pick(x, 5))


def test_a_symbolic_int_an_op_needs_as_an_int_is_specialised_and_guarded():
    def total(x, n):
        return np.sum(x, axis=n - 3) * n

    fn = gcompile.compile(total, backend="interpreter", fullgraph=True)
    x = np.arange(24.0).reshape(2, 3, 4)
    for n in (3, 4, 5, 4):
        np.testing.assert_array_equal(fn(x, n), total(x, n))
    assert fn.stats["traces"] == 3  # n = 4 and 5 differ as axes: each is guarded
    assert any("n == 4" in line for line in fn.entries[1].guards())


def test_a_static_value_comes_with_a_hint():
    fn = gcompile.compile(scale, backend="interpreter")
    fn(X, True)
    fn(X, False)
    assert "a NumPy scalar or a float to make it an input" in fn.recompiles[0].hint
    named = gcompile.compile(scale_by, backend="interpreter", static_argnames="factor")
    named(X, 2.0)
    named(X, 3.0)
    assert named.recompiles[0].changes == ["factor: 2.0 -> 3.0 (static float)"]
    assert "static_argnames" in named.recompiles[0].hint


def test_cache_hits_record_nothing():
    fn = gcompile.compile(scale, backend="interpreter")
    for _ in range(3):
        fn(X, 2)
    assert fn.recompiles == []


def test_recompiles_are_logged_when_asked(monkeypatch, caplog):
    monkeypatch.setenv("GCOMPILE_LOG", "recompiles")
    fn = gcompile.compile(scale, backend="interpreter")
    with caplog.at_level(logging.INFO, logger="gcompile"):
        fn(X, 2)
        fn(X.reshape(2, 3), 2)
    messages = [r.getMessage() for r in caplog.records if r.name == "gcompile.recompiles"]
    assert len(messages) == 1 and "x: ndim 1 -> 2" in messages[0]


def test_an_unhashable_static_argument_is_a_clear_refusal():
    fn = gcompile.compile(scale_by, backend="interpreter", static_argnames="factor")
    with pytest.warns(
        gcompile.GcompileWarning, match="static argument 'factor' of unhashable type"
    ):
        result = fn(X, [2.0])
    np.testing.assert_array_equal(result, X * 2.0)
    assert fn.stats["traces"] == 0 and fn.stats["fallbacks"] == 1


def test_the_hint_names_the_parameter_whole():
    def advance(x, n_steps):
        return x * n_steps

    fn = gcompile.compile(advance, backend="interpreter", static_argnames="n_steps")
    fn(X, 2)
    fn(X, 3)
    (record,) = fn.recompiles
    assert record.changes == ["n_steps: 2 -> 3 (static int)"]
    assert record.hint.startswith("n_steps is static (named in static_argnames)")


def test_a_new_size_of_two_or_more_reuses_the_trace():
    fn = gcompile.compile(scale, backend="interpreter")
    for size in (6, 7, 100, 2):
        np.testing.assert_array_equal(fn(np.arange(float(size)), 2), np.arange(size) * 2.0 + 1.0)
    assert fn.stats["traces"] == 1 and fn.recompiles == []


def branch_on_size(x):
    return x * 2 if x.shape[0] > 4 else x - 1


def test_a_size_decision_is_guarded_and_named_when_it_changes():
    fn = gcompile.compile(branch_on_size, backend="interpreter")
    np.testing.assert_array_equal(fn(np.arange(6.0)), np.arange(6.0) * 2)
    np.testing.assert_array_equal(fn(np.arange(9.0)), np.arange(9.0) * 2)
    assert fn.stats["traces"] == 1
    np.testing.assert_array_equal(fn(np.arange(3.0)), np.arange(3.0) - 1)
    (record,) = fn.recompiles
    (change,) = record.changes
    assert (
        change.startswith("sizes: s0 > 4 (a comparison of sizes, at ") and "does not hold" in change
    )
    assert "test_recompiles.py:" in change
    assert any("s0 > 4" in line for line in fn.entries[0].guards())
    np.testing.assert_array_equal(fn(np.arange(4.0)), np.arange(4.0) - 1)
    assert fn.stats["traces"] == 2  # the second entry serves every size <= 4


def grouped_sums(x, fraction):
    return x.reshape(int(fraction * 10), -1).sum(axis=0)  # (a shape from a float argument)


def rounded(x, places):
    return np.round(x, int(places))


def repeated_rows(x, count):
    rows = []
    for i in range(int(count)):  # (a Python loop: its trip count must be a number)
        rows.append(x * i)
    return rows


def scaled_if(x, tol):
    if tol > 1e-3:  # (a branch on a float argument: a cond, one trace for every value)
        return x * 2.0
    return x


def test_float_arguments_that_decide_a_python_value_are_static_guarded_by_value():
    x = np.arange(30.0)
    cases = [
        (grouped_sums, [0.3, 0.5, 0.3, 0.6]),
        (rounded, [2.0, 1.0, 2.0, -0.0]),
        (repeated_rows, [3.0, 2.0, 3.0, 0.0]),
    ]
    for fn, values in cases:
        compiled = gcompile.compile(fn)
        for value in values:
            expected, got = fn(x, value), compiled(x, value)
            if not isinstance(expected, list):
                expected, got = [expected], [got]
            assert len(got) == len(expected)
            for e, g in zip(expected, got):
                np.testing.assert_array_equal(g, e)
                assert g.dtype == e.dtype
        assert compiled._binder.static_scalars == set(fn.__code__.co_varnames[1:2])
        assert compiled.stats["cache_entries"] == len(set(values))
        assert compiled.stats["fallbacks"] == 0
    branching = gcompile.compile(scaled_if)
    for tol in (0.1, 1e-5, 0.2):
        np.testing.assert_array_equal(branching(x, tol), scaled_if(x, tol))
    assert branching.stats["cache_entries"] == 1 and not branching._binder.static_scalars


def reshaped_by_a_loop_sum(x):
    total = 0
    for _ in range(3):
        total = total + x.shape[0]
    return x.reshape(total // 12, -1)  # (a loop's result where a number is needed: refused)


def tuple_or_count(t, x):
    if isinstance(t, tuple):
        return x * t[0]
    return x.reshape(int(t), -1)


def test_specialising_scalars_keeps_other_refusals_and_other_argument_kinds():
    x = np.arange(12.0)
    with pytest.warns(gcompile.GcompileWarning, match="breaks the graph") as caught:
        np.testing.assert_array_equal(gcompile.compile(reshaped_by_a_loop_sum)(x), x.reshape(3, -1))
    assert not any("gcompile bug" in str(w.message) for w in caught)
    compiled, scale = gcompile.compile(tuple_or_count), np.full(12, 2.0)
    for t in (3.0, (scale,), (scale,), 4.0, 3.0):  # (the memo keys a static scalar by value)
        np.testing.assert_array_equal(compiled(t, x), tuple_or_count(t, x))


def test_a_generator_argument_is_guarded_by_its_type_alone():
    fn = gcompile.compile(lambda x, rng: x + 1, backend="interpreter")
    for rng in (np.random.default_rng(0), np.random.default_rng(1), np.random.RandomState(0)):
        fn(X, rng)
    (record,) = fn.recompiles  # (another generator of the same type: the entry's)
    generator, legacy = "numpy.random._generator.Generator", "numpy.random.mtrand.RandomState"
    assert record.changes == [f"rng: {generator} -> {legacy}"]
    fn(X, 2.5)
    assert fn.recompiles[-1].changes == ["rng: random number generator -> Python float"]
