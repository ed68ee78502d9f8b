"""The text form read back (``Graph.parse``): what it gives back prints the same, holds the
table's ops, literals and metas, the graphs of loops, branches and fused kernels, library calls
and every constant's values, and runs on the interpreter as the original does; what the text
does not hold (a callback, a constant printed without its values) is refused by name. (Every
graph the suite traces or brings to a stage is read back too: ``tests/conftest.py``.)"""

from collections import namedtuple
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

import gcompile
from gcompile.backends import interpreter
from gcompile.ir import ops
from gcompile.ir.control import Cond, ForRange, WhileLoop
from gcompile.ir.externs import ExternCall, Operand
from gcompile.ir.graph import Graph
from gcompile.ir.kernel import FusedKernel
from gcompile.ir.parser import ParseError
from gcompile.ir.printer import format_graph
from gcompile.ir.subgraph import walk

W = np.arange(12.0).reshape(3, 4) / 7  # a constant of more than 8 elements: printed without values


def views_and_literals(x, y, z):
    a = x[1:, ::2].T.reshape(-1) * np.float32(2.5)
    b = np.where(a > 0, a, -0.0).astype(np.float32)
    c = z * (-2j) + np.array([1.0, -1.5, np.inf])
    d = x[()].sum(axis=(0, 1)) + x.shape[0] ** 2  # (a power of a size, as a value)
    return np.concatenate([b, b]), {"c": c, "e": np.exp(y[..., None, 0])}, d


def library_calls(x, y):
    return np.sort(x, axis=None), np.linalg.norm(x, ord=np.inf, axis=1), np.linalg.solve(y, y[0])


def a_loop(x):
    total = 0.0
    for i in range(1, x.shape[0]):
        x[i] += x[i - 1]
        total = total + x[i].sum()
    return x, total


def nested_loops(a):
    for i in range(a.shape[0]):
        for j in range(i):
            a[i, j] = a[i, j] * 2 + a[j, i]
    return a


def a_branch(x, y):
    if x.sum() > 0:
        z = x * 2
        y[0] = 5.0
    else:
        z = x - 1
    return z, y


def a_while_loop(x):
    err, count = 1.0, 0
    while err > 1e-3:
        x = x * x * 0.5
        err = np.abs(x).max()
        count += 1
    return x, count


def a_loop_that_breaks(x):
    for i in range(x.shape[0]):
        if x[i] > 2.5:
            break
        x[i] = -x[i]
    return x


def softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def a_big_constant(x):
    return x @ W + np.float64(1 / 3)


def library_calls_probed(a, b):
    counts, edges = np.histogram(b, bins=3)
    return np.cross(a[0], b), np.linalg.solve(a, b), counts, edges


def prints(x):
    y = x * 2
    print("y is", y)
    return y + 1


def _read_back(fn, *args, stage="traced"):
    graph = gcompile.trace(fn, *args, stage=stage)
    parsed = Graph.parse(str(graph))
    assert str(parsed) == str(graph)
    return parsed


def _runs_the_same(fn, *args, stage="traced"):
    """The graph of ``fn`` read back from its whole text: printed the same, and run on the
    interpreter, the same results and the same writes into the arguments."""
    graph = gcompile.trace(fn, *(np.copy(a) for a in args), stage=stage)
    text = format_graph(graph, values=True)
    parsed = Graph.parse(text)
    assert format_graph(parsed, values=True) == text and str(parsed) == str(graph)
    expected_args, got_args = [np.copy(a) for a in args], [np.copy(a) for a in args]
    expected = interpreter.run(graph, expected_args)
    got = interpreter.run(parsed, got_args)
    for want, have in zip(expected + expected_args, got + got_args):
        np.testing.assert_array_equal(have, want)
    return parsed


def _targets(graph: Graph, kind: type) -> list:
    return [v.node.target for v in walk(graph) if isinstance(v.node.target, kind)]


def test_ops_literals_and_sizes_read_back_at_each_stage_before_fusion():
    x, y, z = np.ones((5, 6)), np.ones((4, 3)), np.ones(3, complex)
    for stage in ("traced", "optimized"):
        parsed = _read_back(views_and_literals, x, y, z, stage=stage)
        getitem = next(n for n in parsed.nodes if n.op == "call" and n.target is ops.GETITEM)
        assert getitem.kwargs["index"] == (slice(1, None), slice(None, None, 2))
        assert [str(size) for size in getitem.meta.shape] == ["s0-1", "(s1+1)//2"]
        assert parsed.out_spec.kind == "tuple" and parsed.out_spec.children[1].kind == "dict"
    constants = [n.target for n in parsed.nodes if n.op == "constant"]
    assert any(np.array_equal(c, [1.0, -1.5, np.inf]) for c in constants)


Point = namedtuple("Point", "x y")


@dataclass
class Private:
    _w: Any
    b: float


def test_records_returned_read_back_as_namedtuples_of_their_name_and_fields():
    def records(x):
        return SimpleNamespace(a=x * 2, b=1), Point(x=x + 1, y=2.5), Private(_w=x, b=1.0)

    parsed = _read_back(records, np.ones(3))
    text = "return (namespace(a=%multiply_1, b=1), Point(x=%add_1, y=2.5), Private(_w=%x, b=1.0))"
    assert text in str(parsed)
    assert [c.kind for c in parsed.out_spec.children] == ["object"] * 3


def test_library_calls_with_a_rule_read_back_as_calls_of_the_function():
    parsed = _read_back(library_calls, np.ones((4, 4)), np.eye(3))
    calls = [n.kwargs["call"] for n in parsed.nodes if n.op == "call" and "call" in n.kwargs]
    assert [c.function for c in calls] == [np.sort, np.linalg.norm, np.linalg.solve]
    assert all(isinstance(c, ExternCall) for c in calls)
    assert calls[2].arguments == (("a", Operand(0)), ("b", Operand(1)))


@pytest.mark.parametrize("stage", ["traced", "optimized", "fused"])
def test_a_loop_carrying_values_reads_back_and_runs(stage):
    parsed = _runs_the_same(a_loop, np.arange(6.0), stage=stage)
    (loop,) = _targets(parsed, ForRange)
    assert str(loop.index) == "k0" and (loop.index.lo, str(loop.index.hi)) == (1, "s0-1")
    assert loop.carries == ((0, 0), (1, 1)) and loop.names == ("total", "x")
    assert loop.in_place == (frozenset({1}) if stage == "fused" else frozenset())


@pytest.mark.parametrize("stage", ["traced", "fused"])
def test_nested_loops_read_back_with_the_inner_interval_on_the_outer_index(stage):
    parsed = _runs_the_same(nested_loops, np.arange(16.0).reshape(4, 4), stage=stage)
    outer, inner = _targets(parsed, ForRange)
    assert inner.index.hi == outer.index - 1
    assert parsed.find("for_range_1").target.body.repeated


def test_a_loop_ended_by_a_break_keeps_its_flag():
    parsed = _runs_the_same(a_loop_that_breaks, np.array([1.0, 2.0, 3.0, 1.0]))
    (loop,) = _targets(parsed, ForRange)
    assert loop.exit is not None and loop.names[loop.exit].startswith("__gc_break")


@pytest.mark.parametrize("stage", ["traced", "optimized", "fused"])
@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_a_branch_reads_back_with_its_operands_outputs_and_updates(stage, sign):
    parsed = _runs_the_same(a_branch, sign * np.arange(1.0, 4.0), np.zeros(3), stage=stage)
    (branch,) = _targets(parsed, Cond)
    assert branch.names[0] == "z" and branch.carries and branch.then_operands


@pytest.mark.parametrize("stage", ["traced", "fused"])
def test_a_while_loop_reads_back_with_its_test(stage):
    parsed = _runs_the_same(a_while_loop, np.full(3, 0.9), stage=stage)
    (loop,) = _targets(parsed, WhileLoop)
    assert loop.test_operands == (0, 1, 2) and loop.regions[1].graph.name.endswith("_test")


def test_a_fused_graph_reads_back_with_its_kernels():
    parsed = _runs_the_same(softmax, np.arange(12.0).reshape(3, 4), stage="fused")
    (kernel,) = _targets(parsed, FusedKernel)
    assert (kernel.style, [str(s) for s in kernel.space]) == ("row", ["s0", "s1"])
    assert kernel.members == ("amax", "subtract", "exp", "sum", "divide")


def test_library_calls_read_back_probed_or_with_a_rule_and_run():
    a = np.array([[4.0, 1.0, 0.0], [1.0, 3.0, 1.0], [0.0, 1.0, 2.0]])
    parsed = _runs_the_same(library_calls_probed, a, np.array([1.0, 2.0, 4.0]))
    calls = {n.kwargs["call"].name: n.kwargs["call"] for n in parsed.nodes if "call" in n.kwargs}
    assert calls["np.cross"].probed is not None and calls["np.linalg.solve"].probed is None
    assert calls["np.histogram"].function is np.histogram


@pytest.mark.parametrize("stage", ["traced", "fused"])
def test_a_big_constant_reads_back_from_the_text_with_every_value(stage):
    parsed = _runs_the_same(a_big_constant, np.ones((2, 3)), stage=stage)
    (constant,) = [n.target for n in parsed.nodes if n.op == "constant"]
    assert constant.tobytes() == W.tobytes()  # (every bit: the shortest exact text)
    with pytest.raises(ParseError, match="without its values"):
        Graph.parse(str(gcompile.trace(a_big_constant, np.ones((2, 3)))))


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("graph f(x: f64[s0]):\n  %c : f64[3,4] = const<f64[3,4]>\n  return %c", "without"),
        (
            "graph f(x: f64[s0]):\n  %e : f64[s0] = extern(%x, call=np.random.rand(#0))",
            "np.random.rand: no",
        ),
        ("graph f(x: f64[s0]):\n  %e : f64[s0] = frobnicate(%x)", "frobnicate is no op"),
        (
            "graph f(x: f64[s0]):\n  %e : f64[s0] = exp(%x, os.system('x'))",
            "os.system: no library call of NumPy's",
        ),
        ("graph f(x: f64[s0]):\n  %e : f64[s0] = exp(%x, __import__('os'))", "not a literal"),
        ("graf f(x):", "not a graph's first line"),
        ("graph f(x: q7[s0]):", "not a meta"),
    ],
)
def test_what_the_text_does_not_hold_is_refused(text, says):
    with pytest.raises(ParseError, match=says):
        Graph.parse(text)


def test_a_callback_is_refused_naming_the_node():
    text = str(gcompile.trace(prints, np.ones(3)))
    with pytest.raises(ParseError, match="%callback_1 calls back into Python"):
        Graph.parse(text)
