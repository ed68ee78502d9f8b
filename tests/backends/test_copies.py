"""Stores copying a temporary into a region (``backends/numba/copies.py``).

When the value read the region it overwrites through another index map, buffer assignment
keeps it a temporary; the host copies it in with the loop of ``copies`` (one per machine, in
Numba's cache), serial or parallel by size. Each case compares with NumPy on both variants and
checks the host calls the loop with sizes computed from the arguments.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import gcompile
from gcompile.backends.numba import copies
from tests.support import check


def stencil_in_place(u):
    u[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])


def shift_right(x):
    x[1:] = x[:-1] * 2.0


def box_in_place(u):
    u[1:-1, 1:-1, 1:-1] = u[:-2, 1:-1, 1:-1] + u[2:, 1:-1, 1:-1] - u[1:-1, 1:-1, :-2]


def reversed_steps(x):
    x[::-2] = x[::2] + 1.0


def narrowing(x):
    x[1:] = x[:-1] * np.float64(0.5)  # (float32 x: a float64 value, cast by the assignment)


def _host(fn, *args, threshold: int) -> str:
    compiled = gcompile.compile(fn, fullgraph=True, options={"parallel_threshold": threshold})
    compiled(*[np.copy(a) for a in args])
    return compiled.code


CASES = [
    (stencil_in_place, (9, 11), "C"),
    (stencil_in_place, (9, 11), "F"),
    (shift_right, (13,), "C"),
    (box_in_place, (5, 6, 7), "C"),
    (reversed_steps, (9,), "C"),
]


@pytest.mark.parametrize("fn, shape, order", CASES)
@pytest.mark.parametrize("threshold", [1, 10**9], ids=["parallel", "serial"])
def test_a_temporary_is_copied_in_by_the_loop(fn, shape, order, threshold):
    x = np.random.default_rng(0).random(shape)
    x = np.asfortranarray(x) if order == "F" else x
    host = _host(fn, x, threshold=threshold)
    assert f"_copy_{'parallel' if threshold == 1 else 'serial'}(v_fused_1" in host
    assert str(shape[0] - 1) not in host.split("_copy_")[1].split("\n")[0]  # sizes by name
    compiled = gcompile.compile(fn, fullgraph=True, options={"parallel_threshold": threshold})
    for size in (shape, tuple(n + 3 for n in shape)):
        y = np.random.default_rng(1).random(size)
        y = np.asfortranarray(y) if order == "F" else y
        expected, actual = y.copy(), y.copy()
        fn(expected)
        compiled(actual)
        np.testing.assert_array_equal(actual, expected)


def test_the_copy_loop_in_the_checked_paths():
    check(stencil_in_place, np.random.default_rng(2).random((6, 8)))
    check(shift_right, np.random.default_rng(3).random(2))  # a one-element region


def test_a_cast_on_the_way_in_stays_numpys_assignment():
    x = np.random.default_rng(4).random(10).astype(np.float32)
    host = _host(narrowing, x, threshold=1)
    assert "_copy_" not in host and "_op_store_1(" in host
    check(narrowing, x)


def test_a_float16_region_stays_numpys_assignment():
    x = np.random.default_rng(5).random((6, 8)).astype(np.float16)  # (Numba has no float16)
    graph = gcompile.trace(stencil_in_place, x, stage="fused")
    (store,) = [n for n in graph.nodes if n.op == "call" and n.target.name == "store"]
    assert copies.copy_statements(store, "v", "b", "C", 1, True) is None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", gcompile.GcompileWarning)  # (its kernel: interpreted)
        check(stencil_in_place, x)
