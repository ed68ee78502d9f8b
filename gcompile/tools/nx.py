"""networkx export: the graph with its kernels opened, for analyses the compiler does not do.

One networkx node per IR node of the outer graph (inputs, constants, calls, kernel calls,
``kernel_output`` projections, the output) and per op of every kernel's sub-graph, with
the ids of the drawing (``tools/dot.py``: ``"x"``, ``"fused_1.exp_1"``, ``"return"``).
Edges run from producer to reader; a kernel's inputs lead to the members that read them,
and the members it returns lead to the kernel's node (which its readers, ``kernel_output``
projections included, read as in the IR)::

    x -> fused_1(x) -> return    =>    x -> fused_1.amax_1 -> ... -> fused_1.divide_1
                                         -> fused_1 -> return

Example:
    >>> g = to_networkx(gcompile.trace(softmax, x, stage="fused"))
    >>> networkx.dag_longest_path(g)
    ['x', 'fused_1.amax_1', 'fused_1.subtract_1', ..., 'fused_1', 'return']
"""

from __future__ import annotations

import networkx

from ..ir.graph import Graph, Node, nodes_in
from ..ir.kernel import FusedKernel
from ..ir.meta import TensorMeta
from .dot import KernelIndex


def to_networkx(graph: Graph) -> networkx.DiGraph:
    """A ``networkx.DiGraph`` of ``graph`` with its kernels opened (see the module docstring).

    Node attributes: ``op`` (``placeholder``, ``constant``, ``call``, ``output``), ``target``
    (the op's name, or the kernel's; None for other opcodes), ``shape`` (a tuple of ints, and
    strings for symbolic sizes such as ``"s0-1"``; None for the output and for a kernel with
    several outputs), ``dtype`` (``"float32"``; None where
    ``shape`` is), ``kind`` (the op's kind, ``"fused"`` for a kernel; None for other
    opcodes), ``source`` (``file:line`` of the user's code, or None) and ``kernel`` (the
    name of the kernel holding the op, or None).
    """
    index = KernelIndex(graph)
    result = networkx.DiGraph(name=graph.name)
    for node in graph.nodes:
        node_id = index.vertex_id(node)
        result.add_node(node_id, **_attributes(node, None))
        if isinstance(node.target, FusedKernel):
            _add_kernel(result, index, node)
        else:
            result.add_edges_from((index.vertex_id(v), node_id) for v in node.all_input_nodes)
    return result


def _add_kernel(result: networkx.DiGraph, index: KernelIndex, call: Node) -> None:
    """Add the kernel's members; its inputs lead to the members that read them, its results
    to ``call``."""
    for member in index.members(call):
        result.add_node(index.vertex_id(member), **_attributes(member, call.name))
        for value in member.all_input_nodes:
            _add_edge(result, index, value, member)
    for value in nodes_in(KernelIndex.returned(call)):
        _add_edge(result, index, value, call)


def _add_edge(result: networkx.DiGraph, index: KernelIndex, value: Node, reader: Node) -> None:
    """Add the edge from ``value``'s node (through a kernel's placeholder) to ``reader``'s."""
    source = index.vertex_id(value)
    if source is not None:  # a kernel input bound to a literal
        result.add_edge(source, index.vertex_id(reader))


def _attributes(node: Node, kernel: str | None) -> dict:
    """The node attributes listed in ``to_networkx``'s docstring."""
    meta = node.meta
    single = isinstance(meta, TensorMeta)  # not the output's None, nor a kernel's TupleMeta
    return {
        "op": node.op,
        "target": node.target.name if node.op == "call" else None,
        "shape": tuple(s if isinstance(s, int) else str(s) for s in meta.shape) if single else None,
        "dtype": str(meta.dtype) if single else None,
        "kind": node.kind,
        "source": node.source,
        "kernel": kernel,
    }
