"""The reference interpreter and the backend registry."""

from __future__ import annotations

import numpy as np
import pytest

import gcompile
from gcompile import backends
from gcompile.backends import interpreter


def test_runtime_errors_name_the_node_and_the_users_line():
    def f(x, n):
        return x**n

    graph = gcompile.trace(f, np.arange(3), -1)
    with pytest.raises(ValueError, match="Integers to negative integer powers") as info:
        interpreter.run(graph, [np.arange(3)])
    notes = "\n".join(getattr(info.value, "__notes__", []))
    assert "While executing %power_1 : i64[s0] = power(%x, -1)" in notes
    assert f"test_interpreter.py:{f.__code__.co_firstlineno + 1}" in notes


def test_wrong_number_of_inputs():
    graph = gcompile.trace(lambda x, y: x + y, np.ones(2), np.ones(2))
    with pytest.raises(TypeError, match="takes 2 inputs, got 1"):
        interpreter.run(graph, [np.ones(2)])


def test_values_released_early_do_not_affect_outputs():
    def f(x):
        a = x + 1
        b = a * 2
        c = b - a
        return c, a

    graph = gcompile.trace(f, np.ones(3))
    c, a = interpreter.run(graph, [np.arange(3.0)])
    np.testing.assert_array_equal(c, np.arange(3.0) + 1)
    np.testing.assert_array_equal(a, np.arange(3.0) + 1)


def test_registry():
    assert {"interpreter", "numba"} <= set(backends.names())
    assert backends.get("interpreter") is interpreter.compile_graph
    with pytest.raises(ValueError, match="registered:"):
        backends.get("nope")
    with pytest.raises(TypeError):
        backends.register_backend("bad", 3)
