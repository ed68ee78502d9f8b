"""networkx export: one node per IR node and kernel member, attributes, edges through kernels."""

from __future__ import annotations

import re

import networkx
import numpy as np

import gcompile
from gcompile.tools.dot import VertexIndex, to_dot
from gcompile.tools.nx import to_networkx
from tests.realistic import black_scholes, softmax


def shift(x, y):
    x[1:] += y
    return x.sum()


def dense_relu(x, w, b):
    return np.maximum(x @ w + b, 0)


def trace_black_scholes():
    years = np.linspace(0.5, 2.0, 1000)
    return gcompile.trace(
        black_scholes, years * 100, np.full(1000, 100.0), years, 0.01, 0.2, stage="fused"
    )


def test_softmax_longest_path_runs_through_the_kernel():
    graph = to_networkx(gcompile.trace(softmax, np.ones((64, 128), np.float32), stage="fused"))
    assert networkx.dag_longest_path(graph) == [
        "x",
        "fused_1.amax_1",
        "fused_1.subtract_1",
        "fused_1.exp_1",
        "fused_1.sum_1",
        "fused_1.divide_1",
        "fused_1",
        "return",
    ]
    assert not graph.has_edge("x", "fused_1")  # a kernel's inputs go to the members reading them


def test_node_attributes():
    graph = to_networkx(gcompile.trace(softmax, np.ones((64, 128), np.float32), stage="fused"))
    assert graph.nodes["x"] == {
        "op": "placeholder",
        "target": None,
        "shape": ("s0", "s1"),
        "dtype": "float32",
        "kind": None,
        "source": None,
        "parent": None,
    }
    amax = graph.nodes["fused_1.amax_1"]
    assert (amax["op"], amax["target"], amax["kind"], amax["parent"]) == (
        "call",
        "amax",
        "reduction",
        "fused_1",
    )
    assert amax["shape"] == ("s0", 1) and amax["dtype"] == "float32"
    assert re.search(r"realistic\.py:\d+$", amax["source"])
    kernel = graph.nodes["fused_1"]
    assert (kernel["target"], kernel["kind"], kernel["parent"]) == ("fused_1", "fused", None)
    assert graph.nodes["return"]["op"] == "output" and graph.nodes["return"]["shape"] is None


def test_every_ir_node_and_kernel_member_is_a_node():
    ir = trace_black_scholes()
    graph = to_networkx(ir)
    index = VertexIndex(ir)
    members = [m for call in index.holders for m in index.members(call)]
    assert graph.number_of_nodes() == len(ir.nodes) + len(members) == 13 + 47
    assert {n for n, parent in graph.nodes(data="parent") if parent == "fused_1"} == {
        f"fused_1.{m.name}" for m in members
    }
    assert networkx.is_directed_acyclic_graph(graph)


def test_kernel_with_several_outputs():
    graph = to_networkx(trace_black_scholes())
    kernel = graph.nodes["fused_1"]
    assert kernel["shape"] is None and kernel["dtype"] is None  # a tuple of two arrays
    assert set(graph.successors("fused_1")) == {"kernel_output_1", "kernel_output_2"}
    assert {"fused_1.subtract_2", "fused_1.subtract_3"} <= set(graph.predecessors("fused_1"))
    # scalar arithmetic outside the kernel feeds the member that reads it
    assert graph.has_edge("add_1", "fused_1.multiply_3")
    assert graph.nodes["add_1"]["shape"] == () and graph.nodes["add_1"]["parent"] is None


def test_mutation_and_library_call_edges():
    # fusion alone: the functional update and the write-back (buffer assignment then writes
    # the region in place, in the kernel)
    alone = {"disable": ["assign_buffers"]}
    graph = to_networkx(
        gcompile.trace(shift, np.ones(10), np.ones(9), stage="fused", options=alone)
    )
    writeback = graph.nodes["writeback_1"]
    assert (writeback["target"], writeback["kind"]) == ("writeback", "scatter")
    assert set(graph.predecessors("writeback_1")) == {"x", "update_1"}
    assert graph.has_edge("fused_1.add_1", "fused_1") and graph.has_edge("fused_1", "update_1")
    in_place = to_networkx(gcompile.trace(shift, np.ones(10), np.ones(9), stage="fused"))
    assert in_place.nodes["fused_1.store_1"]["parent"] == "fused_1"
    assert in_place.has_edge("fused_1.add_1", "fused_1.store_1") and "writeback_1" not in in_place

    dense = to_networkx(
        gcompile.trace(dense_relu, np.ones((8, 4)), np.ones((4, 3)), np.ones(3), stage="fused")
    )
    assert dense.nodes["matmul_1"]["kind"] == "matmul"
    assert dense.has_edge("matmul_1", "fused_1.add_1") and dense.has_edge("b", "fused_1.add_1")
    assert {"x", "w", "b"} <= networkx.ancestors(dense, "return")


def test_ids_match_the_drawing():
    ir = trace_black_scholes()
    drawn = set(re.findall(r'^\s*"([^"/]+)" \[label=', to_dot(ir), re.MULTILINE))
    folded = {n for n, d in to_networkx(ir).nodes(data=True) if d["kind"] == "fused"} | {
        "kernel_output_1",
        "kernel_output_2",
    }
    assert drawn == set(to_networkx(ir).nodes) - folded
