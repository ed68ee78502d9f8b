"""Graph and Node: builders, use lists kept by the Graph methods, editing, verification."""

from __future__ import annotations

import numpy as np
import pytest

import gcompile
from gcompile.ir import Graph, GraphError, TensorMeta, ops
from tests.support import run_interpreter

F64_3 = TensorMeta((3,), np.float64)


def small_graph():
    g = Graph("small")
    x = g.placeholder("x", F64_3)
    e = g.call(ops.EXP, (x,))
    m = g.call(ops.MULTIPLY, (e, 2.0))
    g.output((m,))
    return g, x, e, m


def test_builders_infer_meta_and_keep_users():
    g, x, e, m = small_graph()
    assert e.meta == F64_3 and m.meta == F64_3
    assert list(x.users) == [e] and list(e.users) == [m] and list(m.users) == [g.output_node]
    assert [n.name for n in g.nodes] == ["x", "exp_1", "multiply_1", "output"]
    g.verify()


def test_args_setter_updates_users():
    g, x, e, m = small_graph()
    m.args = (x, 3.0)
    assert list(e.users) == [] and m in x.users
    g.verify()


def test_replace_all_uses_with_and_erase():
    g, x, e, m = small_graph()
    with g.inserting_before(m):
        s = g.call(ops.SIN, (x,))
    changed = g.replace_all_uses_with(e, s)
    assert changed == [m] and m.args[0] is s
    g.erase(e)
    assert [n.name for n in g.nodes] == ["x", "sin_1", "multiply_1", "output"]
    g.verify()
    np.testing.assert_array_equal(
        run_interpreter(g, np.arange(3.0))[0], np.sin(np.arange(3.0)) * 2.0
    )


def test_erase_refuses_a_used_node():
    g, x, e, m = small_graph()
    with pytest.raises(ValueError, match="still used by"):
        g.erase(e)


def test_inserting_after_keeps_creation_order():
    g, x, e, m = small_graph()
    with g.inserting_after(x):
        a = g.call(ops.NEGATIVE, (x,))
        b = g.call(ops.ABSOLUTE, (a,))
    assert [n.name for n in g.nodes][:4] == ["x", "negative_1", "absolute_1", "exp_1"]
    assert b.meta == F64_3


def test_names_are_unique_legal_identifiers():
    g = Graph("names")
    a = g.placeholder("exp_1", F64_3)
    b = g.placeholder("class", F64_3)
    c = g.placeholder("0bad-name", F64_3)
    e = g.call(ops.EXP, (a,))
    assert {a.name, b.name, c.name, e.name} == {"exp_1", "_class", "_0bad_name", "exp_2"}


def test_nested_args_track_users():
    g = Graph("cat")
    x = g.placeholder("x", F64_3)
    y = g.placeholder("y", F64_3)
    c = g.call(ops.CONCATENATE, (x, y), {"axis": 0})
    assert c.meta.shape == (6,) and c in x.users and c in y.users
    with pytest.raises(ValueError, match="another graph"):
        Graph("other").call(ops.EXP, (x,))


def test_verify_reports_problems_with_the_graph_text():
    g, x, e, m = small_graph()
    m.meta = TensorMeta((3,), np.float32)
    with pytest.raises(GraphError) as info:
        g.verify()
    message = str(info.value)
    assert "multiply's rule, which gives f64[3]" in message
    assert "graph small(x: f64[3]):" in message


def test_verify_catches_use_before_definition_and_broken_users():
    g, x, e, m = small_graph()
    e.args = (m,)  # a cycle: exp reads multiply, which comes later
    with pytest.raises(GraphError, match="reads %multiply_1 before it is defined"):
        g.verify()
    g2, x2, e2, m2 = small_graph()
    x2.users.pop(e2)
    with pytest.raises(GraphError, match="missing from its users"):
        g2.verify()


def test_verify_requires_an_output_last():
    g = Graph("no_output")
    g.placeholder("x", F64_3)
    with pytest.raises(GraphError, match="no output node"):
        g.verify()


def test_traced_nodes_record_the_users_line():
    def f(x):
        y = np.exp(x)
        return y + 1

    graph = gcompile.trace(f, np.ones(2))
    exp_node = graph.find("exp_1")
    assert exp_node.source.endswith(f"test_graph.py:{f.__code__.co_firstlineno + 1}")
    assert graph.find("add_1").source.endswith(f"test_graph.py:{f.__code__.co_firstlineno + 2}")
