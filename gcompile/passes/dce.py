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
functional ``update`` nobody reads is dead like any other value.
"""

from __future__ import annotations

from ..ir.graph import Graph
from ..ir.subgraph import has_effects


def dce(graph: Graph) -> bool:
    """Erase unused constant and pure call nodes, last to first; True if any was erased."""
    changed = False
    for node in reversed(graph.nodes):
        dead = node.op in ("constant", "call") and not node.users and not node.is_mutation
        if dead and not has_effects(node):
            graph.erase(node)
            changed = True
    return changed
