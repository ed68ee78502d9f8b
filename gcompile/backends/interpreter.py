"""Reference backend: runs a graph node by node with each op's NumPy ``impl``.

Every pass and every other backend is tested against it. Because it executes
the same NumPy calls as eager mode on the caller's own arrays (views are real
views, ``setitem`` writes real memory), it reproduces eager results, dtypes and
mutations exactly. Values are released after their last use.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from ..ir.graph import Graph, Node, map_arg
from ..ir.kernel import FusedKernel
from ..ir.printer import format_node


@dataclass
class _Step:
    node: Node
    release: tuple  # values whose last reader is this node
    kernel: "_Plan | None" = None  # the plan of a fused kernel's sub-graph


@dataclass
class _Plan:
    """What running a graph needs, computed once per graph."""

    name: str
    placeholders: list
    steps: list
    outputs: tuple


def _plan(graph: Graph) -> _Plan:
    output = graph.output_node
    kept = set(output.all_input_nodes)
    last_reader: dict[Node, Node] = {}
    for node in graph.nodes:
        for value in node.all_input_nodes:
            last_reader[value] = node
    releases: dict[Node, list] = {}
    for value, reader in last_reader.items():
        if value not in kept and reader is not output:
            releases.setdefault(reader, []).append(value)
    steps = [
        _Step(
            node,
            tuple(releases.get(node, ())),
            _plan(node.target.graph) if isinstance(node.target, FusedKernel) else None,
        )
        for node in graph.nodes
        if node.op in ("constant", "call")
    ]
    return _Plan(graph.name, graph.placeholders, steps, output.args[0])


def _execute(plan: _Plan, inputs: list) -> list:
    if len(inputs) != len(plan.placeholders):
        raise TypeError(
            f"graph {plan.name} takes {len(plan.placeholders)} inputs, got {len(inputs)}"
        )
    env: dict[Node, Any] = dict(zip(plan.placeholders, inputs))
    lookup = env.__getitem__
    for step in plan.steps:
        node = step.node
        if node.op == "constant":
            env[node] = node.target
        else:
            try:
                args = map_arg(node.args, lookup)
                if step.kernel is not None:  # a fused kernel: run its sub-graph
                    outputs = _execute(step.kernel, list(args))
                    value = outputs[0] if len(outputs) == 1 else tuple(outputs)
                else:
                    value = node.target.impl(*args, **map_arg(node.kwargs, lookup))
            except Exception as exc:
                _add_context(exc, node)
                raise
            # A weak node is Python arithmetic on Python scalars: keep it a Python scalar, so that
            # later NumPy calls promote it as NEP 50 weak (``f32_array * (1 - beta)`` stays float32).
            env[node] = value.item() if node.meta.weak and hasattr(value, "item") else value
        for done in step.release:
            env.pop(done, None)
    return [env[v] if isinstance(v, Node) else v for v in plan.outputs]


def run(graph: Graph, inputs: list) -> list:
    """Execute ``graph`` on the placeholder values ``inputs``; return the flat outputs."""
    return _execute(_plan(graph), inputs)


def _add_context(exc: Exception, node: Node) -> None:
    note = f"While executing {format_node(node)}" + (
        f"\n  from {node.source}" if node.source else ""
    )
    if hasattr(exc, "add_note"):
        exc.add_note(note)


def compile_graph(graph: Graph, options: dict | None = None) -> Callable[[list], list]:
    """Backend entry point: a callable running ``graph`` with the interpreter."""
    plan = _plan(graph)

    def run_graph(inputs: list) -> list:
        return _execute(plan, inputs)

    run_graph.graph = graph
    return run_graph
