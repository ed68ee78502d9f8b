"""Reference backend: runs a graph node by node with each op's NumPy ``impl``.

Every pass and every other backend is tested against it. Because it executes
the same NumPy calls as eager mode on the caller's own arrays (views are real
views, ``setitem`` writes real memory), it reproduces eager results, dtypes and
mutations exactly. Values are released after their last use.
"""

from __future__ import annotations

from typing import Any, Callable

from ..ir.graph import Graph, Node, map_arg
from ..ir.printer import format_node


def run(graph: Graph, inputs: list) -> list:
    """Execute ``graph`` on the placeholder values ``inputs``; return the flat outputs."""
    placeholders = graph.placeholders
    if len(inputs) != len(placeholders):
        raise TypeError(f"graph {graph.name} takes {len(placeholders)} inputs, got {len(inputs)}")
    env: dict[Node, Any] = dict(zip(placeholders, inputs))
    last_use = _last_uses(graph)
    for node in graph.nodes:
        if node.op == "placeholder":
            continue
        if node.op == "output":
            return [env[v] if isinstance(v, Node) else v for v in node.args[0]]
        if node.op == "constant":
            env[node] = node.target
        else:
            args = map_arg(node.args, env.__getitem__)
            kwargs = map_arg(node.kwargs, env.__getitem__)
            try:
                value = node.target.impl(*args, **kwargs)
            except Exception as exc:
                _add_context(exc, node)
                raise
            # A weak node is Python arithmetic on Python scalars: keep it a Python scalar, so that
            # later NumPy calls promote it as NEP 50 weak (``f32_array * (1 - beta)`` stays float32).
            env[node] = value.item() if node.meta.weak and hasattr(value, "item") else value
        for done in last_use.get(node, ()):
            env.pop(done, None)
    raise ValueError(f"graph {graph.name} has no output node")


def _last_uses(graph: Graph) -> dict[Node, list[Node]]:
    """node -> values whose last reader is ``node`` (outputs are never released)."""
    last: dict[Node, Node] = {}
    for node in graph.nodes:
        if node.op == "output":
            break
        for value in node.all_input_nodes:
            last[value] = node
    output_values = set(graph.output_node.all_input_nodes)
    released: dict[Node, list[Node]] = {}
    for value, reader in last.items():
        if value not in output_values:
            released.setdefault(reader, []).append(value)
    return released


def _add_context(exc: Exception, node: Node) -> None:
    note = f"While executing {format_node(node)}" + (
        f"\n  from {node.source}" if node.source else ""
    )
    if hasattr(exc, "add_note"):
        exc.add_note(note)


def compile_graph(graph: Graph, options: dict | None = None) -> Callable[[list], list]:
    """Backend entry point: a callable running ``graph`` with the interpreter."""

    def run_graph(inputs: list) -> list:
        return run(graph, inputs)

    run_graph.graph = graph
    return run_graph
