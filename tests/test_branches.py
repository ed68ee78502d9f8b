"""Branches on traced values: ``cond`` nodes, traced by ``frontend.branches.ControlTracer``.

These call the handler protocol as the capture front-end's ``runtime.cond`` does, with the two
branches as functions of the carried values.
"""

from dataclasses import dataclass

import numpy as np

import gcompile
from gcompile.capture import runtime
from gcompile.ir.control import Cond, WhileLoop

from .support import check

RNG = np.random.default_rng(3)


@dataclass(frozen=True)
class _Info:
    carried: tuple
    filename: str = __file__
    line: int = 0
    effects: tuple = ()


def _cond(test, then, orelse, carried, info):
    handler = runtime.current_handler()
    if handler is not None:
        result = handler.capture_cond(test, then, orelse, carried, info)
        if result is not NotImplemented:
            return result
    return then(*carried) if test else orelse(*carried)


def _while(test, body, carried, info):
    handler = runtime.current_handler()
    if handler is not None:
        result = handler.capture_while(test, body, carried, info)
        if result is not NotImplemented:
            return result
    while test(*carried):
        carried = body(*carried)
    return carried


def count_and_clip(x, t):
    n, total = 0.0, 0.0
    for i in range(2):  # (two trips, unrolled: each holds one branch)

        def then(n, total, i=i):
            x[i] = t
            return n + 1.0, total + x[i]

        def orelse(n, total, i=i):
            return n, total

        n, total = _cond(x[i] > t, then, orelse, (n, total), _Info(("n", "total")))
    return n, total


def test_a_branch_on_a_traced_value_is_a_cond_node_and_compiles():
    fn = gcompile.compile(count_and_clip, fullgraph=True)
    for x in [RNG.random(5), np.array([0.9, 0.1, 0.5]), np.array([0.1, 0.9, 0.2])]:
        mine, theirs = x.copy(), x.copy()
        assert fn(mine, 0.5) == count_and_clip(theirs, 0.5)
        np.testing.assert_array_equal(mine, theirs)
    graph = fn.entries[-1].graph
    conds = [n for n in graph.nodes if isinstance(n.target, Cond)]
    assert len(conds) == 2 and all(c.target.in_place for c in conds)
    assert "if greater_1:" in fn.code
    notes = [note.text() for note in graph.notes.loops]
    assert any("branch kept as %cond_1, setting n, total" in text for text in notes)


def sqrt_by_newton(u, tol):
    def test(err, count, x):
        return err > tol

    def body(err, count, x):
        new = 0.5 * (x + u / x)
        return np.abs(new - x).max(), count + 1, new

    info = _Info(("err", "count", "x"))
    err, count, x = _while(test, body, (1.0, 0, u.copy()), info)
    return x, count


def collatz_steps(n0):
    def test(n, steps):
        return n != 1

    def body(n, steps):
        return np.where(n % 2 == 0, n // 2, 3 * n + 1)[()], steps + 1

    return _while(test, body, (n0 + 0, 0), _Info(("n", "steps")))[1]


def test_a_while_loop_on_traced_values_is_one_node_and_compiles():
    for u in [RNG.random(40) + 1.0, np.full(3, 4.0)]:
        check(sqrt_by_newton, u, 1e-12)
    fn = gcompile.compile(collatz_steps, fullgraph=True)
    for n in [27, 97, 1]:
        assert fn(np.int64(n)) == collatz_steps(np.int64(n))
    graph = fn.entries[-1].graph
    (loop,) = [n for n in graph.nodes if isinstance(n.target, WhileLoop)]
    assert [r.role for r in loop.target.regions] == ["body", "test"]
    assert "while True:" in fn.code and "if not not_equal_1:" in fn.code
