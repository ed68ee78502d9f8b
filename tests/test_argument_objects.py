"""Arguments that are objects of parameters: a ``SimpleNamespace`` or a dataclass instance,
flattened by their attributes (``ir/pytree``), guarded by their type and attribute names."""

import warnings
from dataclasses import dataclass
from types import SimpleNamespace

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
