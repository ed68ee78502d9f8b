"""Unrolling of small loops: a ``for_range`` with a fixed, small trip count becomes its body,
once per index value, in the enclosing graph.

A loop of few trips gains nothing from staying a loop: its body's ops, repeated, fuse with the
code around them into kernels (``for _ in range(8): a = np.sin(a) + a`` is one kernel), and
a one-trip loop (a piece of a split range, ``if i == 0``) is straight-line code. Unrolled when
the bounds are ints and ``trips * body ops <= MAX_UNROLLED_OPS`` and ``trips * body reductions
<= MAX_UNROLLED_REDUCTIONS`` (or one trip), the body holds no loop itself nor makes a
length the data decide (each trip's would be one symbol in the copies), and the pass
runs first, on the traced graph (mutations still ``setitem``s).

The loop's value semantics are kept: an array the body writes in place is the loop's own
copy (``ForRange``), so the unrolled body writes a ``copy`` of it, as the interpreter would;
the functionalization and buffer assignment that follow remove copies nothing needs.
"""

from __future__ import annotations

from ..ir import ops
from ..ir.control import LoopNote
from ..ir.graph import Graph, Node, map_arg
from ..ir.shape_env import data_size_bindings, map_symbolic
from ..ir.subgraph import body_of, loop_of, subgraphs_of
from ..ir.symbolic import substitute

MAX_UNROLLED_OPS = 64  # trips x body ops of a loop unrolled
# trips x body reductions: each reduction in a fused kernel is a phase of its own, whose Numba
# compile costs far more than an elementwise op (a 4-trip body of 3 masked reductions, unrolled
# into one 12-phase kernel, took 5 s to compile; rolled, under 1 s), and a loop of such trips
# runs as fast rolled
MAX_UNROLLED_REDUCTIONS = 4


def unroll_loops(graph: Graph) -> bool:
    """Unroll every small loop of ``graph`` (see the module docstring); True if any."""
    changed = False
    for node in list(graph.nodes):
        if loop_of(node) is None:
            continue
        trips = _small_trip_count(node)
        if trips is None:
            continue
        _inline(graph, node, trips)
        reason = f"unrolled by the unroll_loops pass ({len(trips)} trips, {_size(node)} ops)"
        graph.notes.loops.append(LoopNote(node.target.source, False, reason))
        changed = True
    return changed


unroll_loops.skips_kernels = True


def _size(node: Node) -> int:
    return sum(1 for n in body_of(node.target).nodes if n.op in ("call", "constant"))


def _small_trip_count(node: Node) -> range | list | None:
    """The index values of a loop to unroll, or None to keep it."""
    if any(subgraphs_of(n) for n in body_of(node.target).nodes):
        return None
    trips = node.target.trips(node.kwargs)  # (a list: one trip at a symbolic index)
    if trips is None or isinstance(trips, list):
        return trips
    if len(trips) <= 1:
        return trips
    if any(data_size_bindings(n.meta) for n in body_of(node.target).nodes):
        return None  # (a length the data decide, one per trip: copies would share its symbol)
    if len(trips) * _size(node) > MAX_UNROLLED_OPS:
        return None
    if len(trips) * _reductions(node) > MAX_UNROLLED_REDUCTIONS:
        return None
    return trips


def _reductions(node: Node) -> int:
    body = body_of(node.target).nodes
    return sum(1 for n in body if n.op == "call" and getattr(n.target, "kind", None) == "reduction")


def _inline(graph: Graph, node: Node, trips) -> None:
    """Replace ``node`` by its body once per index value."""
    loop = node.target
    body = body_of(loop)
    bound = loop.bound_symbols[:1]  # the index, if the loop has one
    written = {n.args[0] for n in body.nodes if n.op == "call" and n.is_mutation}
    values = list(node.args)
    with graph.inserting_before(node):
        for position, placeholder in enumerate(body.placeholders):
            if placeholder in written and isinstance(values[position], Node):
                values[position] = graph.call(
                    ops.COPY, (values[position],), {"order": "K"}, source=node.source
                )
        for value in trips:
            outputs = _copy_body(graph, body, values, dict(zip(bound, [value])))
            for position, output in loop.carries:
                values[position] = outputs[output]
    by_output = {output: values[position] for position, output in loop.carries}
    results = [by_output[i] for i in range(len(body.output_node.args[0]))]
    _replace(graph, node, results)


def _copy_body(graph: Graph, body: Graph, inputs: list, index: dict) -> list:
    """The body's nodes added to ``graph`` with its placeholders bound to ``inputs`` and the
    index symbol to its value; returns the body's outputs."""
    env = dict(zip(body.placeholders, inputs))

    def sizes(expr):
        return graph.shape_env.simplify(substitute(expr, index))

    for member in body.nodes:
        if member.op == "constant":
            env[member] = graph.constant(
                member.target, member.meta, member.name, member.source, member.captured
            )
        elif member.op == "call":
            args = map_symbolic(map_arg(member.args, env.__getitem__), sizes)
            kwargs = map_symbolic(map_arg(member.kwargs, env.__getitem__), sizes)
            # (the meta inferred again: at a known index a size may take a simpler form)
            env[member] = graph.call(member.target, args, kwargs, source=member.source)
    return [env[v] if isinstance(v, Node) else v for v in body.output_node.args[0]]


def _replace(graph: Graph, node: Node, results: list) -> None:
    """Make the readers of the loop's value read ``results`` instead, and remove the loop."""
    if len(results) == 1:
        graph.replace_all_uses_with(node, results[0])
    else:
        for user in list(node.users):
            graph.replace_all_uses_with(user, results[user.kwargs["item"]])
            graph.erase(user)
    graph.erase(node)
