"""Globals and closure variables a compiled function reads (``captured_globals.py``): a call
after one was rebound traces again instead of reusing values the trace took; unchanged ones
(a NaN included) reuse the entry on every path (fast entry, exact-shape memo, general). So
do values in global containers (dicts, lists, namespaces) and a bound method's attributes."""

from types import SimpleNamespace

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


PARAMS = {"W": np.ones(2), "b": 0.0}
WEIGHTS = [np.ones(2)]
CFG = SimpleNamespace(lr=0.1, name="sgd")


def from_containers(x):
    return x @ PARAMS["W"] + PARAMS["b"] + x @ WEIGHTS[0], x * CFG.lr


class Model:
    def __init__(self, w):
        self.w, self.calls = w, 0

    def predict(self, x):
        return x @ self.w + self._bias()

    def _bias(self):
        return self.bias if hasattr(self, "bias") else 0.0


def _agree(fn, compiled, x):
    for got, expected in zip(compiled(x), fn(x)):
        np.testing.assert_array_equal(got, expected)


def test_values_rebound_in_global_containers_or_a_methods_object_trace_again():
    """(Sweep C: a dict, list or namespace of parameters, and a compiled bound method's
    ``self.w``, were frozen at the first trace: a later rebinding was never seen.)"""
    saved = dict(PARAMS), list(WEIGHTS), CFG.lr
    x = np.ones(2)
    compiled = gcompile.compile(from_containers)
    try:
        _agree(from_containers, compiled, x)
        PARAMS["W"], WEIGHTS[0], CFG.lr = np.full(2, 3.0), np.full(2, 2.0), 0.5
        _agree(from_containers, compiled, x)
        PARAMS["W"][0] = 100.0  # (in place: the same array, read on each call)
        _agree(from_containers, compiled, x)
        assert compiled.stats["traces"] == 2
    finally:
        (PARAMS.update(saved[0]), WEIGHTS.__setitem__(0, saved[1][0]))
        CFG.lr = saved[2]
    model, eager = Model(np.array([1.0, 2.0])), Model(np.array([1.0, 2.0]))
    predict = gcompile.compile(model.predict)
    for change in (
        lambda m: None,
        lambda m: setattr(m, "w", m.w * 10),
        lambda m: setattr(m, "bias", 1.5),
    ):
        change(model), change(eager)
        assert predict(x) == eager.predict(x)
    model.note = eager.note = "seen"  # (an attribute no method names: no new trace)
    assert predict(x) == eager.predict(x) and predict.stats["traces"] == 3
