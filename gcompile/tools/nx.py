"""networkx export: the graph with the graphs of its ops opened, for analyses the compiler does not do.

One networkx node per IR node of the outer graph (inputs, constants, calls, nodes holding
sub-graphs, ``kernel_output`` projections, the output) and per op and constant of every
nested graph (a fused kernel's body, a branch), at any depth, with the ids of the drawing
(``tools/dot.py``: ``"x"``, ``"fused_1.exp_1"``, ``"cond_1.then.multiply_1"``,
``"return"``). Edges run from producer to reader; the placeholders of a nested graph are
not nodes: the values they receive lead to the members that read them. What the graphs
return leads to their op's node (which its readers, ``kernel_output`` projections
included, read as in the IR), and so do the values the op reads that no placeholder
receives (a branch's predicate)::

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
from ..ir.meta import TensorMeta
from ..ir.subgraph import regions_of, walk
from .dot import VertexIndex


def to_networkx(graph: Graph) -> networkx.DiGraph:
    """A ``networkx.DiGraph`` of ``graph`` with its ops' graphs opened (see the module docstring).

    Node attributes: ``op`` (``placeholder``, ``constant``, ``call``, ``output``), ``target``
    (the op's name, or the kernel's; None for other opcodes), ``shape`` (a tuple of ints, and
    strings for symbolic sizes such as ``"s0-1"``; None for the output and for an op with
    several outputs), ``dtype`` (``"float32"``; None where
    ``shape`` is), ``kind`` (the op's kind, ``"fused"`` for a kernel; None for other
    opcodes), ``source`` (``file:line`` of the user's code, or None) and ``parent`` (the id
    of the node whose graph holds this one, ``"fused_1"``; None in the outer graph).
    """
    index = VertexIndex(graph)
    result = networkx.DiGraph(name=graph.name)
    for visit in walk(graph):
        node = visit.node
        if visit.depth and node.op in ("placeholder", "output"):
            continue  # stands for the outer argument / leads to the owner, as below
        parent = index.vertex_id(visit.owner) if visit.depth else None
        result.add_node(index.vertex_id(node), **_attributes(node, parent))
        if regions_of(node):
            returned = [v for r in regions_of(node) for v in nodes_in(r.graph.output_node.args)]
            reads = index.unbound(node) + returned
        else:
            reads = node.all_input_nodes
        for value in reads:
            _add_edge(result, index, value, node)
    return result


def _add_edge(result: networkx.DiGraph, index: VertexIndex, value: Node, reader: Node) -> None:
    """Add the edge from ``value``'s node (through a nested placeholder) to ``reader``'s."""
    source = index.vertex_id(value)
    if source is not None:  # a placeholder bound to a literal argument
        result.add_edge(source, index.vertex_id(reader))


def _attributes(node: Node, parent: str | None) -> dict:
    """The node attributes listed in ``to_networkx``'s docstring."""
    meta = node.meta
    single = isinstance(meta, TensorMeta)  # not the output's None, nor a TupleMeta
    return {
        "op": node.op,
        "target": node.target.name if node.op == "call" else None,
        "shape": tuple(s if isinstance(s, int) else str(s) for s in meta.shape) if single else None,
        "dtype": str(meta.dtype) if single else None,
        "kind": node.kind,
        "source": node.source,
        "parent": parent,
    }
