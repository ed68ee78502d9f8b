"""Arguments that are objects of parameters: a ``SimpleNamespace`` or a dataclass instance,
flattened by their attributes (``ir/pytree``), guarded by their type and attribute names; a
namedtuple, flattened as a tuple and guarded by its class."""

import warnings
from collections import namedtuple
from dataclasses import dataclass
from types import SimpleNamespace
from typing import NamedTuple

import numpy as np
import pytest

import gcompile

RNG = np.random.default_rng(41)


@dataclass
class Grid:
    u: np.ndarray
    dx: float
    steps: int = 3

    def laplacian(self):
        return (np.roll(self.u, 1) - 2 * self.u + np.roll(self.u, -1)) / self.dx**2


@dataclass(frozen=True)
class Scale:
    a: float
    b: np.ndarray
    mode: str = "twice"


@dataclass(slots=True)
class Slotted:
    a: float


class Layer(NamedTuple):
    bias: float
    weights: np.ndarray


def dense(layer, v):
    """A namedtuple unpacked, read by name and made anew (``_replace``) for the result."""
    b, w = layer
    out = np.maximum(w * v, layer.bias)
    return layer._replace(weights=out), b * out.sum()


def diffuse(grid, dt):
    """A method of the argument in a loop, writing the array it holds in place."""
    for _ in range(grid.steps):
        grid.u[:] = grid.u + dt * grid.laplacian()
    return grid.u.max()


def scaled(p, x):
    y = x * p.a + p.b
    if p.mode == "twice":
        y = y * 2
    return y


def counted(p, x):
    p.calls = p.calls + 1  # (an assignment to the caller's object: runs in Python)
    return x * p.scale


def test_parameter_objects_compile_and_hold_new_values_without_tracing_again():
    compiled = gcompile.compile(scaled, fullgraph=True)
    for i in range(4):
        x = RNG.random(5)
        for p in (Scale(i / 3, RNG.random(5)), SimpleNamespace(a=i / 3, b=RNG.random(5), mode="")):
            np.testing.assert_array_equal(compiled(p, x), scaled(p, x))
    assert compiled.stats["traces"] == 2 and compiled.stats["fallbacks"] == 0  # (one per kind)
    other = SimpleNamespace(a=1.0, b=RNG.random(5), mode="", extra=3)
    np.testing.assert_array_equal(compiled(other, x), scaled(other, x))
    assert compiled.stats["traces"] == 3  # (other attributes: another entry)


def test_namedtuple_arguments_and_results_keep_their_class():
    compiled = gcompile.compile(dense, fullgraph=True)
    for bias in (0.25, -1.0):
        layer = Layer(bias, RNG.random(6) - 0.5)
        v = RNG.random(6)
        got, expected = compiled(layer, v), dense(layer, v)
        assert type(got[0]) is Layer and got[0].bias == bias
        np.testing.assert_array_equal(got[0].weights, expected[0].weights)
        assert got[1] == expected[1]
    assert compiled.stats["traces"] == 1 and compiled.stats["fallbacks"] == 0
    other = namedtuple("Other", "bias weights")(1.0, RNG.random(6))  # (another class)
    assert type(compiled(other, v)[0]).__name__ == "Other"
    np.testing.assert_array_equal(compiled(other, v)[1], dense(other, v)[1])
    assert compiled.stats["traces"] == 2
    (record,) = compiled.recompiles
    assert "{layer=Layer(*, *), v=*} -> {layer=Other(*, *), v=*}" in record.changes[0]


def test_a_method_of_the_argument_writes_the_callers_array():
    compiled = gcompile.compile(diffuse, fullgraph=True)
    u = RNG.random(40)
    mine, theirs = Grid(u.copy(), 0.5), Grid(u.copy(), 0.5)
    assert compiled(mine, 0.05) == diffuse(theirs, 0.05)
    np.testing.assert_array_equal(mine.u, theirs.u)


def test_an_attribute_assignment_runs_in_python_on_the_callers_object():
    compiled = gcompile.compile(counted)
    mine, theirs = SimpleNamespace(calls=0, scale=2.0), SimpleNamespace(calls=0, scale=2.0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(3):
            np.testing.assert_array_equal(compiled(mine, np.ones(3)), counted(theirs, np.ones(3)))
    assert mine.calls == theirs.calls == 3
    assert any("assigns an attribute" in str(w.message) for w in caught)


def test_objects_keeping_attributes_in_slots_are_refused_with_the_argument_named():
    with pytest.raises(gcompile.UnsupportedError, match="argument 'p' of type Slotted"):
        gcompile.compile(scaled, fullgraph=True)(Slotted(1.0), np.ones(2))
