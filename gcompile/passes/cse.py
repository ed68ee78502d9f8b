"""Common-subexpression elimination: one node per distinct computation.

    %a = exp(%x)
    %b = exp(%x)
    %c = add(%a, %b)
  =>
    %a = exp(%x)
    %c = add(%a, %a)

Two call nodes are the same when their op, arguments and parameters are equal:
nodes by identity, literals by type and exact value (``1``, ``1.0`` and ``True``
promote differently; ``0.0`` and ``-0.0`` differ), array constants by dtype, shape
and bytes (so equal constants merge too). Arguments of commutative ops are put in
a canonical order, except for complex operands, whose products are not bitwise
commutative. Nodes with side effects, or run for their effect (a ``print``), are never merged. Run after
functionalization: before it, two reads of one array may see different contents.

A loop or branch given one scalar twice (two invariants hoisted from its body, merged outside)
reads it through one placeholder, so that its body's nodes computed from it merge too.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..ir.graph import Graph, Node
from ..ir.literals import literal_key
from ..ir.subgraph import has_effects, regions_of


def _call_key(node: Node) -> Any:
    args = list(node.args)
    op = node.target
    if getattr(op, "commutative", False) and len(args) == 2:
        if not any(
            getattr(getattr(a, "meta", None), "dtype", np.dtype(float)).kind == "c" for a in args
        ) and not any(isinstance(a, complex) for a in args):
            args.sort(key=lambda a: repr(literal_key(a)))
    return (id(op), literal_key(tuple(args)), literal_key(node.kwargs))


def cse(graph: Graph) -> bool:
    """Merge structurally equal constant and pure call nodes; True if any was merged."""
    seen: dict[Any, Node] = {}
    changed = False
    for node in graph.nodes:
        if node.op == "call" and getattr(node.target, "holds_program", False):
            changed |= _merge_repeated_scalars(node)
        if node.op == "constant":
            key = ("constant", literal_key(np.asarray(node.target)), type(node.target).__name__)
        elif node.op == "call" and not node.is_mutation and not has_effects(node):
            key = _call_key(node)
        else:
            continue
        first = seen.get(key)
        if first is None:
            seen[key] = node
        elif first.meta == node.meta and not (first.returned and node.returned):
            # (two returned arrays stay two objects: the caller may write into one)
            graph.replace_all_uses_with(node, first)
            graph.erase(node)
            changed = True
    return changed


def _merge_repeated_scalars(node: Node) -> bool:
    """Make the uses of placeholders of ``node``'s graphs that receive the same scalar argument
    (not a value a loop carries) read the first of them; True if any changed."""
    regions = regions_of(node)
    carried = set()  # (the arguments a loop carries: its body's carried placeholders receive them)
    if node.target.repeats:
        carried = {regions[0].operands[position] for position, _ in node.target.carries}
    changed = False
    for region in regions:  # (a loop's test reads the carried values as its body does)
        first: dict[Node, Node] = {}
        for placeholder, operand in zip(region.graph.placeholders, region.operands):
            value = node.args[operand]
            if operand in carried or not getattr(getattr(value, "meta", None), "scalar", False):
                continue
            kept = first.setdefault(value, placeholder)
            if kept is not placeholder and kept.meta == placeholder.meta:
                changed |= bool(region.graph.replace_all_uses_with(placeholder, kept))
    return changed
