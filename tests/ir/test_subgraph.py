"""Ops holding sub-graphs: the protocol, the walks, and every consumer going through them.

``Cond`` below is a test-only op that is not a fused kernel: a JAX-style branch
``cond(pred, *operands)`` with two graphs, ``then`` and ``else``, each reading its own
subset of the operands (the predicate is read by the op itself). Every consumer handles it
through the protocol alone: nothing in gcompile knows this class.
"""

from __future__ import annotations

import functools
import re
import shutil
from dataclasses import dataclass

import networkx
import numpy as np
import pytest

import gcompile
from gcompile import backends
from gcompile.backends import interpreter
from gcompile.cli import graph_json
from gcompile.ir import Graph, GraphError, TensorMeta, ops
from gcompile.ir.subgraph import (
    Region,
    RunGraph,
    SubgraphOp,
    graphs_in,
    regions_of,
    subgraphs_of,
    walk,
)
from gcompile.passes.dce import dce
from gcompile.passes.fuse import fuse
from gcompile.passes.manager import PassManager, fuse_graph
from gcompile.tools.compare import first_differing_op
from gcompile.tools.dot import svg, to_dot
from gcompile.tools.nx import to_networkx

F64 = TensorMeta((3,), np.dtype("f8"))
BOOL = TensorMeta((), np.dtype(bool))


@dataclass(eq=False)
class Cond(SubgraphOp):
    """``cond(pred, *operands)``: runs ``then`` when ``pred`` holds, else ``otherwise``."""

    then: Region
    otherwise: Region

    name = "cond"
    kind = "control"

    @property
    def regions(self) -> tuple[Region, ...]:
        return (self.then, self.otherwise)

    def interpret(self, run_graph: RunGraph, args: tuple, kwargs: dict) -> object:
        region = self.then if args[0] else self.otherwise
        (value,) = run_graph(region.graph, region.inputs(args))
        return value


def choose(dead_code: bool = False) -> Graph:
    """``cond(p, x, y) + 1`` where the ``then`` graph computes ``x * y`` from operands 1 and 2
    and the ``else`` graph ``-y`` from operand 2 (``dead_code``: ``then`` also computes an
    unused ``exp(x)``)."""
    then = Graph("then")
    x, y = then.placeholder("x", F64), then.placeholder("y", F64)
    if dead_code:
        then.call(ops.EXP, (x,))
    then.output((then.call(ops.MULTIPLY, (x, y)),))
    otherwise = Graph("else")
    otherwise.output((otherwise.call(ops.NEGATIVE, (otherwise.placeholder("y", F64),)),))
    op = Cond(Region("then", then, (1, 2)), Region("else", otherwise, (2,)))
    graph = Graph("choose")
    p, x, y = (graph.placeholder(n, m) for n, m in (("p", BOOL), ("x", F64), ("y", F64)))
    graph.output((graph.call(ops.ADD, (graph.call(op, (p, x, y)), 1.0)),))
    return graph


CHOOSE_TEXT = """\
graph choose(p: bool[], x: f64[3], y: f64[3]):
  %cond_1 : f64[3] = cond(%p, %x, %y)
    then: graph then(x: f64[3], y: f64[3]):
      %multiply_1 : f64[3] = multiply(%x, %y)
      return (%multiply_1,)
    else: graph else(y: f64[3]):
      %negative_1 : f64[3] = negative(%y)
      return (%negative_1,)
  %add_1  : f64[3] = add(%cond_1, 1.0)
  return (%add_1,)"""


def cond_node(graph: Graph):
    return graph.find("cond_1")


# -- the protocol and the walks --------------------------------------------------------------------


def test_regions_subgraphs_and_the_default_infer():
    graph = choose()
    node = cond_node(graph)
    then, otherwise = subgraphs_of(node)
    assert [r.role for r in regions_of(node)] == ["then", "else"]
    assert (then.name, otherwise.name) == ("then", "else")
    assert node.meta == F64 and node.kind == "control"
    assert subgraphs_of(graph.find("add_1")) == () and subgraphs_of(graph.find("x")) == ()
    with pytest.raises(ValueError, match=r"then placeholder %x is f64\[3\] but argument 1 is f32"):
        node.target.infer(BOOL, TensorMeta((3,), np.dtype("f4")), F64)


def test_walk_visits_nested_nodes_right_after_their_op():
    graph = choose()
    visits = [(v.depth, v.node.name, v.owner and v.owner.name) for v in walk(graph)]
    assert visits == [
        (0, "p", None),
        (0, "x", None),
        (0, "y", None),
        (0, "cond_1", None),
        (1, "x", "cond_1"),
        (1, "y", "cond_1"),
        (1, "multiply_1", "cond_1"),
        (1, "output", "cond_1"),
        (1, "y", "cond_1"),
        (1, "negative_1", "cond_1"),
        (1, "output", "cond_1"),
        (0, "add_1", None),
        (0, "output", None),
    ]
    roles = {v.node.name: v.path[-1][1].role for v in walk(graph) if v.depth}
    assert roles["multiply_1"] == "then" and roles["negative_1"] == "else"
    assert [g.name for g in graphs_in(graph)] == ["choose", "then", "else"]


def test_walk_descends_into_fused_kernels():
    fused = gcompile.trace(lambda x: np.exp(x) * 2 + x, np.ones(4), stage="fused")
    (kernel,) = [n for n in fused.nodes if subgraphs_of(n)]
    nested = [v.node.name for v in walk(fused) if v.owner is kernel and v.node.op == "call"]
    assert nested == ["exp_1", "multiply_1", "add_1"]
    assert list(graphs_in(fused)) == [fused, kernel.target.graph]


# -- printer and verify ---------------------------------------------------------------------------


def test_printer_shows_each_graph_under_its_node_with_its_role():
    assert str(choose()) == CHOOSE_TEXT


def test_verify_accepts_the_graph_and_reports_a_broken_nested_graph_with_its_path():
    graph = choose()
    graph.verify()
    then, _ = subgraphs_of(cond_node(graph))
    then.find("multiply_1").meta = TensorMeta((4,), np.dtype("f8"))
    with pytest.raises(GraphError) as info:
        graph.verify()
    message = str(info.value)
    assert (
        "in %cond_1's then: %multiply_1: meta f64[4] differs from multiply's rule, "
        "which gives f64[3]" in message
    )
    # the op's own rule sees the disagreeing branches too
    assert "cond: its graphs return different metas (then f64[4], else f64[3])" in message


def test_verify_checks_the_binding_of_arguments_to_placeholders():
    graph = choose()
    _, otherwise = subgraphs_of(cond_node(graph))
    otherwise.find("y").meta = TensorMeta((3,), np.dtype("f4"))
    with pytest.raises(GraphError, match=r"%cond_1's else placeholder %y is f32\[3\] but argument"):
        graph.verify()


def test_verify_reports_a_nested_graph_without_output_and_nested_paths():
    inner = Graph("inner")
    inner.placeholder("x", F64)
    middle = Graph("middle")
    value = middle.placeholder("x", F64)
    broken = Cond(Region("then", inner, (1,)), Region("else", inner, (1,)))
    middle.output((middle.call(broken, (True, value), meta=F64),))
    outer = Graph("outer")
    x = outer.placeholder("x", F64)
    hold = Cond(Region("then", middle, (1,)), Region("else", middle, (1,)))
    outer.output((outer.call(hold, (True, x), meta=F64),))
    with pytest.raises(GraphError, match="in %cond_1's then: in %cond_1's then: the graph has no"):
        outer.verify()


# -- backends --------------------------------------------------------------------------------------


def test_the_interpreter_runs_the_op_by_its_interpret():
    graph = choose()
    x, y = np.array([1.0, 2.0, 3.0]), np.array([4.0, 5.0, 6.0])
    (taken,) = interpreter.run(graph, [np.True_, x, y])
    (other,) = interpreter.run(graph, [np.False_, x, y])
    np.testing.assert_array_equal(taken, x * y + 1)
    np.testing.assert_array_equal(other, -y + 1)


def test_an_error_in_a_nested_graph_names_both_nodes():
    graph = choose()
    with pytest.raises(ValueError) as info:
        interpreter.run(graph, [np.True_, np.ones(3), np.ones(2)])
    notes = "\n".join(info.value.__notes__)
    assert "While executing %multiply_1" in notes and "While executing %cond_1" in notes


def test_the_numba_host_runs_the_op_in_the_interpreter_and_says_so():
    graph = choose()
    with pytest.warns(gcompile.GcompileWarning, match="control op cond_1 runs in the interpreter"):
        run = backends.get("numba")(graph, {})
    (result,) = run([np.False_, np.ones(3), np.arange(3.0)])
    np.testing.assert_array_equal(result, 1 - np.arange(3.0))
    assert "_interpret_cond_1(v_p, v_x, v_y)" in run.program.source


# -- passes ----------------------------------------------------------------------------------------


def test_a_pass_reaches_nested_graphs_and_dce_removes_dead_nodes_inside_a_branch():
    graph = choose(dead_code=True)
    then, _ = subgraphs_of(cond_node(graph))
    assert [n.name for n in then.nodes if n.op == "call"] == ["exp_1", "multiply_1"]
    records = []
    assert PassManager([("dce", dce)], verify=True, records=records).run(graph)
    assert [n.name for n in then.nodes if n.op == "call"] == ["multiply_1"]
    assert records[0].changed and str(graph) == CHOOSE_TEXT


def test_each_pass_sees_every_graph_top_level_first_unless_it_skips_kernels():
    seen = []

    def record(graph: Graph) -> bool:
        seen.append(graph.name)
        return False

    PassManager([("record", record)]).run(choose())
    assert seen == ["choose", "then", "else"]
    seen.clear()
    record.skips_kernels = True  # (the test's cond holds no program: its graphs are skipped)
    PassManager([("record", record), ("bound", functools.partial(record))]).run(choose())
    assert seen == ["choose", "choose"]


def test_fusion_stays_at_the_top_level():
    graph = choose()
    fuse_graph(graph)
    assert [n.kind for n in graph.nodes if n.op == "call"] == ["control", "fused"]
    for sub in subgraphs_of(cond_node(graph)):
        assert all(not subgraphs_of(n) for n in sub.nodes), str(sub)
    graph.verify()


def test_a_kernel_inside_a_branch_is_printed_run_and_verified_two_levels_deep():
    graph = nested()
    then, _ = subgraphs_of(cond_node(graph))
    (kernel,) = [n for n in then.nodes if subgraphs_of(n)]
    assert kernel.name == "fused_1" and [v.depth for v in walk(graph)].count(2) == 4
    assert "    then: graph then(x: f64[3], y: f64[3]):\n      %fused_1" in str(graph)
    assert "\n        graph fused_1(x: f64[3], y: f64[3]):    # pointwise over [3]\n" in str(graph)
    (value,) = interpreter.run(graph, [np.True_, np.full(3, 2.0), np.arange(3.0)])
    np.testing.assert_array_equal(value, 2 * np.arange(3.0) + 1)


# -- tools -----------------------------------------------------------------------------------------


def nested() -> Graph:
    """``choose()`` with its ``then`` graph fused: a kernel inside a branch."""
    graph = choose()
    then, _ = subgraphs_of(cond_node(graph))
    fuse(then)
    graph.verify()
    return graph


def dot_edges(text: str) -> set[tuple[str, str, str]]:
    """(source, target, attributes) of every edge of a DOT text."""
    return set(re.findall(r'^\s*"([^"]+)" -> "([^"]+)"(.*);$', text, re.MULTILINE))


def cluster(text: str, name: str) -> str:
    """The text of cluster ``name``, up to the end of its last nested cluster."""
    start = text.index(f'subgraph "{name}" {{')
    depth = 0
    for end, line in enumerate(text[start:].splitlines(keepends=True)):
        depth += line.rstrip().endswith("{") - (line.strip() == "}")
        if depth == 0:
            return "".join(text[start:].splitlines(keepends=True)[: end + 1])
    raise AssertionError(f"{name} is not closed")


def test_dot_draws_the_op_as_a_cluster_with_one_cluster_per_graph():
    text = to_dot(choose())
    whole = cluster(text, "cluster_cond_1")
    assert '"cond_1.then.multiply_1" [' in cluster(whole, "cluster_cond_1.then")
    assert '"cond_1.else.negative_1" [' in cluster(whole, "cluster_cond_1.else")
    assert "<b>cond_1</b>" in whole and "op holding sub-graphs" in text  # title and legend
    assert not re.search(r'^\s*"cond_1" \[', text, re.MULTILINE)  # the op is its cluster
    assert dot_edges(text) == {
        ("p", "cond_1.then.multiply_1", ' [lhead="cluster_cond_1"]'),  # the predicate
        ("x", "cond_1.then.multiply_1", ""),
        ("y", "cond_1.then.multiply_1", ""),
        ("y", "cond_1.else.negative_1", ""),
        ("cond_1.then.multiply_1", "add_1", ""),
        ("cond_1.else.negative_1", "add_1", ""),
        ("add_1", "return", ""),
    } | {e for e in dot_edges(text) if e[0].startswith("legend/")}


def test_dot_nests_a_kernel_cluster_inside_the_branch():
    text = to_dot(nested())
    kernel = cluster(cluster(text, "cluster_cond_1.then"), "cluster_cond_1.then.fused_1")
    assert '"cond_1.then.fused_1.multiply_1" [' in kernel and "pointwise [3]" in kernel
    assert ("x", "cond_1.then.fused_1.multiply_1", "") in dot_edges(text)
    assert ("cond_1.then.fused_1.multiply_1", "add_1", "") in dot_edges(text)


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz `dot` is not installed")
def test_graphviz_accepts_the_drawing():
    assert "<svg" in svg(nested())


def test_networkx_exports_nested_nodes_with_their_parent():
    graph = to_networkx(nested())
    assert graph.nodes["cond_1.else.negative_1"]["parent"] == "cond_1"
    assert graph.nodes["cond_1.then.fused_1"]["parent"] == "cond_1"
    assert graph.nodes["cond_1.then.fused_1.multiply_1"]["parent"] == "cond_1.then.fused_1"
    assert set(graph.predecessors("cond_1")) == {
        "p",
        "cond_1.then.fused_1",
        "cond_1.else.negative_1",
    }
    assert set(graph.predecessors("cond_1.then.fused_1.multiply_1")) == {"x", "y"}
    assert graph.number_of_nodes() == 9 and networkx.is_directed_acyclic_graph(graph)


def test_compare_runs_the_op_alone_with_the_backend_and_names_it():
    def off_by_one(graph, options):
        run = interpreter.compile_graph(graph, options)
        return lambda inputs: [out + 1 for out in run(inputs)]

    backends.register_backend("off_by_one_alone", off_by_one)
    inputs = [np.True_, np.ones(3), np.arange(3.0)]
    assert first_differing_op(choose(), inputs, "off_by_one_alone", {}, ulps=4) == (
        "%cond_1 : f64[3] = cond(%p, %x, %y) (control: multiply, negative) output 0"
    )
    agreeing = first_differing_op(choose(), inputs, "interpreter", {}, ulps=4)
    assert agreeing.startswith("no node holding sub-graphs")


def test_the_json_dump_nests_each_graph_with_its_role_and_operands():
    (node,) = [n for n in graph_json(choose())["nodes"] if n["name"] == "cond_1"]
    assert (node["kind"], node["params"]) == ("control", {})
    assert [
        (g["role"], g["operands"], [n["name"] for n in g["nodes"]]) for g in node["subgraphs"]
    ] == [
        ("then", [1, 2], ["x", "y", "multiply_1", "output"]),
        ("else", [2], ["y", "negative_1", "output"]),
    ]


# -- a loop op of its own: the passes, reports and drawings reach loops through the protocol ------


@dataclass(eq=False)
class Repeat(SubgraphOp):
    """``repeat(x, c, times=n)``: ``x = body(x, c)`` n times (a test-only loop: no index,
    placeholder 0 carried from output 0, ``c`` read only)."""

    body: Graph

    name = "repeat"
    kind = "loop"
    holds_program = True
    repeats = True
    carries = ((0, 0),)

    @property
    def regions(self) -> tuple[Region, ...]:
        return (Region("body", self.body, tuple(range(len(self.body.placeholders)))),)

    def interpret(self, run_graph: RunGraph, args: tuple, kwargs: dict) -> object:
        x, *read = args
        for _ in range(kwargs["times"]):
            (x,) = run_graph(self.body, [x, *read])
        return x

    def trips(self, kwargs: dict) -> range:
        return range(kwargs["times"])

    def summary(self, kwargs: dict) -> str:
        return f"{kwargs['times']} trips"


def repeated(times: int) -> Graph:
    """``repeat(x, c)`` of a body ``x * (c * 2.0) + 1.0``: ``c * 2.0`` is invariant."""
    body = Graph("body")
    x, c = body.placeholder("x", F64), body.placeholder("c", F64)
    twice = body.call(ops.MULTIPLY, (c, 2.0))
    body.output((body.call(ops.ADD, (body.call(ops.MULTIPLY, (x, twice)), 1.0)),))
    graph = Graph("repeated")
    x, c = graph.placeholder("x", F64), graph.placeholder("c", F64)
    graph.output((graph.call(Repeat(body), (x, c), {"times": times}),))
    return graph


def _expected(times: int, x, c):
    for _ in range(times):
        x = x * (c * 2.0) + 1.0
    return x


def test_a_loop_op_is_hoisted_unrolled_reported_and_drawn_through_the_protocol():
    from gcompile.passes.hoist import hoist_invariants
    from gcompile.passes.unroll import unroll_loops
    from gcompile.tools.loops_report import loop_lines

    x, c = np.array([0.5, 1.0, 2.0]), np.array([0.25, 0.5, -1.0])
    graph = repeated(100)
    assert hoist_invariants(graph)  # c * 2.0 leaves the body, read through a new placeholder
    (body,) = subgraphs_of(graph.find("repeat_1"))
    dce(body)
    assert [n.name for n in body.nodes if n.op == "call"] == ["multiply_2", "add_1"]
    assert graph.find("repeat_1").args[2] is graph.find("multiply_1")
    assert not unroll_loops(graph)  # 100 trips: stays a loop
    assert "repeat_1    rolled, 100 trips" in "\n".join(loop_lines(graph))
    assert 'label=<<font point-size="8">next</font>>' in to_dot(graph)  # the carried value
    np.testing.assert_allclose(interpreter.run(graph, [x, c])[0], _expected(100, x, c))
    small = repeated(3)
    assert unroll_loops(small) and not any(subgraphs_of(n) for n in small.nodes)
    np.testing.assert_allclose(interpreter.run(small, [x, c])[0], _expected(3, x, c))
