"""The text form read back (``Graph.parse``): what it gives back prints the same and holds the
table's ops, literals and metas; what the text does not hold is refused by name. (Every graph
the suite traces is read back too: ``tests/conftest.py``.)"""

import numpy as np
import pytest

import gcompile
from gcompile.ir import ops
from gcompile.ir.externs import ExternCall, Operand
from gcompile.ir.graph import Graph
from gcompile.ir.parser import ParseError

W = np.arange(12.0).reshape(3, 4)  # a constant of more than 8 elements: printed without values


def views_and_literals(x, y, z):
    a = x[1:, ::2].T.reshape(-1) * np.float32(2.5)
    b = np.where(a > 0, a, -0.0).astype(np.float32)
    c = z * (-2j) + np.array([1.0, -1.5, np.inf])
    return np.concatenate([b, b]), {"c": c, "e": np.exp(y[..., None, 0])}, x[()].sum(axis=(0, 1))


def library_calls(x, y):
    return np.sort(x, axis=None), np.linalg.norm(x, ord=np.inf, axis=1), np.linalg.solve(y, y[0])


def a_loop(x):
    for i in range(1, x.shape[0]):
        x[i] += x[i - 1]
    return x


def _read_back(fn, *args, stage="traced"):
    graph = gcompile.trace(fn, *args, stage=stage)
    parsed = Graph.parse(str(graph))
    assert str(parsed) == str(graph)
    return parsed


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


def test_library_calls_with_a_rule_read_back_as_calls_of_the_function():
    parsed = _read_back(library_calls, np.ones((4, 4)), np.eye(3))
    calls = [n.kwargs["call"] for n in parsed.nodes if n.op == "call" and "call" in n.kwargs]
    assert [c.function for c in calls] == [np.sort, np.linalg.norm, np.linalg.solve]
    assert all(isinstance(c, ExternCall) for c in calls)
    assert calls[2].arguments == (("a", Operand(0)), ("b", Operand(1)))


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("graph f(x: f64[s0]):\n  %c : f64[3,4] = const<f64[3,4]>\n  return %c", "without"),
        ("graph f(x: f64[s0]):\n  %e : f64[s0] = extern(%x, call=np.cross(a=#0))", "probed"),
        ("graph f(x: f64[s0]):\n  %e : f64[s0] = frobnicate(%x)", "frobnicate is no op"),
        (
            "graph f(x: f64[s0]):\n  %e : f64[s0] = exp(%x, os.system('x'))",
            "os.system: no library call",
        ),
        ("graph f(x: f64[s0]):\n  %e : f64[s0] = exp(%x, __import__('os'))", "not a literal"),
        ("graf f(x):", "not a graph's first line"),
        ("graph f(x: q7[s0]):", "not a meta"),
    ],
)
def test_what_the_text_does_not_hold_is_refused(text, says):
    with pytest.raises(ParseError, match=says):
        Graph.parse(text)


def test_a_graph_holding_graphs_is_refused_naming_the_op():
    text = str(gcompile.trace(a_loop, np.ones(6)))
    with pytest.raises(ParseError, match="for_range is no op"):
        Graph.parse(text)
    text = str(
        gcompile.trace(
            views_and_literals, np.ones((5, 6)), np.ones((4, 3)), np.ones(3, complex), stage="fused"
        )
    )
    with pytest.raises(ParseError, match="fused_1 is no op|a graph held by an op"):
        Graph.parse(text)
