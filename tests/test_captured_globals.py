"""Globals and closure variables a compiled function reads (``captured_globals.py``): a call
after one was rebound traces again instead of reusing values the trace took; unchanged ones
(a NaN included) reuse the entry on every path (fast entry, exact-shape memo, general)."""

import numpy as np

import gcompile

dt = 0.1
TABLE = np.arange(4.0)


def diffuse(u):
    return u + dt * (np.roll(u, 1) - 2 * u + np.roll(u, -1)) + TABLE[0]


def scaled_steps(u, n):
    for _ in range(n):  # (a whole-graph program: the fast entry checks the globals too)
        u = u * dt + TABLE[1]
    return u


def closure_pair():
    c = 2.0

    def times_c(x):
        return x * c

    def set_c(value):
        nonlocal c
        c = value

    return times_c, set_c


def test_rebinding_a_global_scalar_or_array_traces_again():
    global dt, TABLE
    saved = dt, TABLE
    u = np.arange(4.0)
    fn, looped = gcompile.compile(diffuse), gcompile.compile(scaled_steps)
    try:
        for value in (0.1, 0.4, 0.1, 1, float("nan"), float("nan")):
            dt = value
            for _ in range(2):  # (the second call takes the fast entry or the memo)
                np.testing.assert_array_equal(fn(u), diffuse(u))
                np.testing.assert_array_equal(looped(u, 3), scaled_steps(u, 3))
        TABLE = np.ones(4)
        np.testing.assert_array_equal(fn(u), diffuse(u))
        np.testing.assert_array_equal(looped(u, 3), scaled_steps(u, 3))
        assert fn.stats["traces"] == 5  # (0.1, 0.4, 1, nan: once each; then the new TABLE)
        assert any(line.startswith("global dt is") for line in fn.entries[-1].guards())
    finally:
        dt, TABLE = saved


def test_rebinding_a_closure_variable_traces_again():
    times_c, set_c = closure_pair()
    fn = gcompile.compile(times_c)
    x = np.arange(3.0)
    np.testing.assert_array_equal(fn(x), x * 2.0)
    set_c(5.0)
    np.testing.assert_array_equal(fn(x), x * 5.0)
    assert fn.stats["traces"] == 2
