"""Constant folding: compute at compile time what depends only on constants.

    %a = arange(start=4)
    %b = multiply(%a, 2)
    %c = add(%x, %b)
  =>
    %const_1 = const<i64[4]>[0, 2, 4, 6]
    %c = add(%x, %const_1)

The value comes from the op's own NumPy ``impl``, so it is what eager mode
computes. Results larger than ``MAX_FOLD_BYTES`` (64 KiB) stay computed: a graph
must not carry a huge literal (``np.arange(n) * 2`` for large ``n``), unless their
constant inputs are large already (a few times their bytes: ``np.mgrid``'s grid, a
constant of the trace, and what is computed from it alone). A NumPy or
Python scalar result is inlined as a literal. A fold that raises (an integer to a
negative power) or warns (division by zero) is left for run time, where eager
mode raises or warns too. ``empty`` is never folded: its contents are undefined.
Returned values (and values whose views are returned) are not folded either: each
call must hand the caller fresh arrays, as eager mode does. Arrays the function
read from outside (globals) are never folded: the graph reads their current
contents on each call, as eager mode does. Nothing that depends on a symbolic
size is folded: its value is known at run time only. The pass expects a
functionalized graph and changes nothing while ``setitem`` nodes remain.
"""

from __future__ import annotations

import warnings

import numpy as np

from ..ir import ops
from ..ir.graph import Graph, map_arg
from ..ir.shape_env import is_symbolic
from ..ir.subgraph import has_effects

MAX_FOLD_BYTES = 64 * 1024
_GROWTH = (
    4  # a fold from large constants (``np.mgrid``'s grid) may give this many times their bytes
)


def _fold_limit(node) -> int:
    """The most bytes a folded value may hold: ``MAX_FOLD_BYTES``, or a few times its
    constant inputs' (the graph holds those already: a trace-made grid's twiddle factors)."""
    given = sum(v.meta.nbytes for v in node.all_input_nodes)
    return max(MAX_FOLD_BYTES, _GROWTH * given)


def constant_fold(graph: Graph) -> bool:
    """Replace call nodes whose inputs are all constants by their value; True if any was folded."""
    if any(node.op == "call" and node.target in (ops.SETITEM, ops.PUT) for node in graph.nodes):
        return False  # before functionalization a node is a buffer that a later setitem may change
    changed = False
    for node in graph.nodes:
        if node.op != "call" or node.is_mutation or node.target is ops.EMPTY or node.returned:
            continue
        if has_effects(node):  # (a print runs on each call, not once here)
            continue
        if any(v.op != "constant" or v.captured for v in node.all_input_nodes):
            continue
        if is_symbolic(node.kwargs) or is_symbolic(node.meta):
            continue  # (symbolic sizes are known at run time only)
        if node.meta.nbytes > _fold_limit(node):
            continue
        try:
            with warnings.catch_warnings(), np.errstate(all="raise"):
                warnings.simplefilter("error")
                value = ops.evaluate(
                    node.target,
                    map_arg(node.args, lambda n: n.target),
                    map_arg(node.kwargs, lambda n: n.target),
                )
        except Exception:  # raised or warned: keep it for run time, where eager behaves the same
            continue
        if node.meta.weak:
            replacement = value.item() if hasattr(value, "item") else value
        elif node.meta.scalar:  # as a NumPy scalar of its dtype (strong), as eager's
            replacement = node.meta.dtype.type(value)
        else:
            with graph.inserting_before(node):
                replacement = graph.constant(np.asarray(value), node.meta, source=node.source)
        graph.replace_all_uses_with(node, replacement)
        graph.erase(node)
        changed = True
    return changed
