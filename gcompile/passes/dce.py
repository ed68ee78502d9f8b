"""Dead-code elimination: drop values nothing reads.

    %a = exp(%x)          # unused
    %b = sin(%x)
    return %b
  =>
    %b = sin(%x)
    return %b

Kept: placeholders (the signature), the output, and nodes with side effects
(``OpDef.mutates``: ``setitem`` before functionalization, ``writeback`` after),
which change the caller's memory even when nothing reads them, and nodes that run
for their effect (``subgraph.has_effects``: a ``print``, a loop that prints). A
functional ``update`` nobody reads is dead like any other value. A node making a value whose
length the data decide (``u0``, ``ir/shape_env.py``) is kept while a kept node's shapes or
parameters use that length (``np.flatnonzero(m).size``): running it binds the length.
"""

from __future__ import annotations

from ..ir.graph import Graph, Node
from ..ir.shape_env import data_size_bindings, data_sizes_in
from ..ir.subgraph import data_sizes_used, has_effects


def dce(graph: Graph) -> bool:
    """Erase unused constant and pure call nodes, last to first; True if any was erased."""
    changed = False
    lengths = set() if graph.shape_env.data_sizes else None  # the data-decided lengths used
    for node in reversed(graph.nodes):
        dead = node.op in ("constant", "call") and not node.users and not node.is_mutation
        if dead and not has_effects(node) and not _binds_used(node, lengths):
            graph.erase(node)
            changed = True
        elif lengths is not None:
            lengths |= data_sizes_used(node) | data_sizes_in(node.args)
    return changed


def _binds_used(node: Node, lengths: set | None) -> bool:
    """Whether ``node`` makes the value a used length the data decide is read from."""
    return bool(lengths) and any(s in lengths for s, _, _ in data_size_bindings(node.meta))
