"""Reference backend: runs a graph node by node with each op's NumPy ``impl``.

Every pass and every other backend is tested against it. It executes the same
NumPy calls as eager mode on the caller's own arrays (views are real views,
``writeback`` and, in unfunctionalized graphs, ``setitem`` write real memory),
and scalar-only Python operators as Python/NumPy scalar arithmetic
(``ops.evaluate``), so it reproduces eager results, dtypes and mutations. A node
holding sub-graphs (a fused kernel, ``ir/subgraph.py``) runs by its op's
``interpret``, given a ``run_graph`` that executes the op's graphs, each planned
once. Parameters holding symbolic sizes are evaluated at the sizes of the call,
read from the inputs (a nested graph gets its caller's). Values are released after
their last use.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from ..errors import UnsupportedError
from ..ir import ops
from ..ir.graph import Graph, Node, last_uses, map_arg
from ..ir.printer import format_node
from ..ir.shape_env import ShapeEnv, concrete, data_size_bindings, is_symbolic
from ..ir.subgraph import RunGraph, subgraphs_of


@dataclass
class _Step:
    node: Node
    release: tuple  # values whose last reader is this node
    fresh: bool = False  # a constant that is returned (or viewed by a returned value): copy it
    plans: dict | None = None  # the plans of the graphs of a node holding sub-graphs
    symbolic: bool = False  # parameters hold symbolic sizes, evaluated for each run
    binds: tuple = ()  # (symbol, item, axis): lengths the data decide, read from the value


@dataclass
class _Plan:
    """What running a graph needs, computed once per graph."""

    name: str
    placeholders: list
    steps: list
    outputs: tuple
    shape_env: ShapeEnv  # where the graph's symbolic sizes are read from its inputs
    symbolic: bool  # a step (here or nested) evaluates symbolic parameters


def plan(graph: Graph) -> _Plan:
    """What running ``graph`` needs (release points, nested graphs' plans), computed once."""
    output = graph.output_node
    releases = last_uses(graph)
    steps = [
        _Step(
            node,
            tuple(releases.get(node, ())),
            fresh=node.op == "constant" and node.returned,
            plans={g: plan(g) for g in subgraphs_of(node)} or None,
            symbolic=node.op == "call" and is_symbolic(node.kwargs),
            binds=tuple(data_size_bindings(node.meta)) if node.op == "call" else (),
        )
        for node in graph.nodes
        if node.op in ("constant", "call")
    ]
    symbolic = any(
        s.symbolic or s.binds or any(p.symbolic for p in (s.plans or {}).values()) for s in steps
    )
    return _Plan(graph.name, graph.placeholders, steps, output.args[0], graph.shape_env, symbolic)


def runner(node: Node, sizes: dict | None = None) -> RunGraph:
    """The ``run_graph`` that ``node``'s op interprets itself with: runs any of the node's
    graphs on placeholder values (each graph planned once, here), at ``sizes``."""
    return run_graphs(plans_of(node), sizes)


def plans_of(node: Node) -> dict:
    """The plan of each graph ``node``'s op holds."""
    return {graph: plan(graph) for graph in subgraphs_of(node)}


def run_graphs(plans: dict, sizes: dict | None) -> RunGraph:
    """A ``run_graph`` running the planned graphs ``plans`` at ``sizes`` (symbol -> int)."""

    def run_graph(graph: Graph, inputs, bindings: dict | None = None) -> list:
        return execute(
            plans[graph], list(inputs), {**(sizes or {}), **bindings} if bindings else sizes
        )

    return run_graph


def execute(plan: _Plan, inputs: list, sizes: dict | None = None) -> list:
    """Run a planned graph on the placeholder values ``inputs``; return the flat outputs.

    ``sizes``: the int of each symbolic size (a nested graph gets its caller's); read from
    the inputs when the graph needs them and none are given."""
    if len(inputs) != len(plan.placeholders):
        raise TypeError(
            f"graph {plan.name} takes {len(plan.placeholders)} inputs, got {len(inputs)}"
        )
    if sizes is None and plan.symbolic:
        sizes = plan.shape_env.bind(inputs)
    env: dict[Node, Any] = dict(zip(plan.placeholders, inputs))
    lookup = env.__getitem__
    for step in plan.steps:
        node = step.node
        if node.op == "constant":
            # A returned constant is a new array on every call, as eager mode makes it.
            env[node] = node.target.copy() if step.fresh else node.target
        else:
            try:
                args, kwargs = map_arg(node.args, lookup), map_arg(node.kwargs, lookup)
                if step.symbolic:
                    kwargs = concrete(kwargs, sizes)
                if step.plans is not None:
                    value = node.target.interpret(run_graphs(step.plans, sizes), args, kwargs)
                else:
                    value = evaluate_node(node, args, kwargs)
            except UnsupportedError:
                raise
            except Exception as exc:
                add_context(exc, node)
                raise
            env[node] = value
            for symbol, item, axis in step.binds:
                sizes[symbol] = np.shape(value if item is None else value[item])[axis]
        for done in step.release:
            env.pop(done, None)
    return [env[v] if isinstance(v, Node) else v for v in plan.outputs]


def evaluate_node(node: Node, args: tuple, kwargs: dict) -> Any:
    """The value of call ``node`` (of an ``OpDef``) on concrete ``args`` and ``kwargs``."""
    value = ops.evaluate(node.target, args, kwargs)
    return _weak_value(node, value) if node.meta.weak else value


def _weak_value(node: Node, value: Any) -> Any:
    """A weak node's value is a Python scalar (so later NumPy calls promote it as NEP 50 weak).

    Its kind was fixed at trace time; Python arithmetic can change it with the values
    (``(-4.0) ** 0.5`` is complex), which the compiled graph cannot follow: refused.
    """
    value = value.item() if hasattr(value, "item") else value
    if np.result_type(value).kind != node.meta.dtype.kind:
        raise UnsupportedError(
            f"Python arithmetic whose result type depends on the values ({type(value).__name__} "
            f"where the trace saw {node.meta.short()})",
            node.source,
            hint="pass the value in static_argnames, or compute it with NumPy (np.sqrt, np.power)",
        )
    return value


def run(graph: Graph, inputs: list) -> list:
    """Execute ``graph`` on the placeholder values ``inputs``; return the flat outputs."""
    return execute(plan(graph), inputs)


def add_context(exc: Exception, node: Node) -> None:
    """Note on ``exc`` which node raised it and the user's line."""
    note = f"While executing {format_node(node)}" + (
        f"\n  from {node.source}" if node.source else ""
    )
    if hasattr(exc, "add_note"):
        exc.add_note(note)


def compile_graph(graph: Graph, options: dict | None = None) -> Callable[[list], list]:
    """Backend entry point: a callable running ``graph`` with the interpreter."""
    graph_plan = plan(graph)

    def run_graph(inputs: list) -> list:
        return execute(graph_plan, inputs)

    run_graph.graph = graph
    return run_graph
