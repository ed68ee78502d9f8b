"""verify(graph): structural and type checks, reporting the whole graph on failure.

Checked: every node belongs to the graph and is linked in order; names are unique
identifiers; every argument is defined earlier in the same graph; ``users`` lists
match the arguments exactly; there is one output node and it is last; each call
node's meta equals what its op's ``infer`` derives from its arguments (like
autodidax's ``typecheck_jaxpr``); a loop's arguments that its body writes share memory with
no other argument. A node holding sub-graphs (``ir/subgraph.py``)
must feed each graph's placeholders arguments of their metas, and each of its graphs
is verified too, its problems prefixed with their path::

    in %fused_1's body: %exp_1 reads %y before it is defined (or from outside the graph)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .graph import map_arg
from .subgraph import operand_problems, regions_of

if TYPE_CHECKING:
    from .graph import Graph


class GraphError(Exception):
    """A graph broke an invariant; the message quotes the graph."""


def verify(graph: "Graph") -> None:
    """Raise GraphError if ``graph`` breaks an invariant of the IR."""
    problems = list(_problems(graph))
    if problems:
        raise GraphError(
            "graph failed verification:\n  - " + "\n  - ".join(problems) + "\n" + _safe_text(graph)
        )


def _problems(graph: "Graph"):
    seen: set = set()
    names: set = set()
    nodes = graph.nodes
    for position, node in enumerate(nodes):
        if node.graph is not graph:
            yield f"%{node.name} is linked into {graph.name} but belongs to another graph"
        if not node.name.isidentifier():
            yield f"%{node.name} is not a legal identifier"
        if node.name in names:
            yield f"name %{node.name} is used twice"
        names.add(node.name)
        if node._next._prev is not node:
            yield f"%{node.name}: broken links"
        for value in node.all_input_nodes:
            if value not in seen:
                yield f"%{node.name} reads %{value.name} before it is defined (or from outside the graph)"
            if node not in value.users:
                yield f"%{node.name} reads %{value.name} but is missing from its users"
        for user in node.users:
            if node not in user.all_input_nodes:
                yield f"%{node.name} lists %{user.name} as a user, which does not read it"
            if user.graph is not graph:
                yield f"%{node.name} is used by %{user.name} of another graph"
        if node.op == "output" and position != len(nodes) - 1:
            yield "the output node is not the last node"
        if node.op in ("placeholder", "constant", "call") and node.meta is None:
            yield f"%{node.name} has no meta"
        if node.op == "call":
            yield from _check_call(node)
        seen.add(node)
    if not nodes or nodes[-1].op != "output":
        yield "the graph has no output node"


def _check_call(node):
    """The node's arguments against its op: the binding of every sub-graph, else the op's rule;
    then the problems inside each sub-graph, with their path."""
    regions = regions_of(node)
    if getattr(node.target, "holds_program", False):
        yield from _check_disjoint(node)
    inputs = map_arg(node.args, lambda n: n.meta)
    binding = [p for region in regions for p in operand_problems(region, inputs)]
    if binding:
        yield from (f"%{node.name}'s {problem}" for problem in binding)
    else:
        yield from _check_meta(node)
    for region in regions:
        for problem in _problems(region.graph):
            yield f"in %{node.name}'s {region.role}: {problem}"


def _check_disjoint(node):
    """A loop's body sees each argument as separate memory: no argument it writes may share
    memory with another (the loop tracer carries such values by reference instead)."""
    from .alias import shared_with_written, written_operands

    for w, i in shared_with_written(node.args, written_operands(node)):
        yield (
            f"%{node.name}'s argument {w} (%{node.args[w].name}), which its body writes, shares "
            f"memory with argument {i} (%{node.args[i].name})"
        )


def _check_meta(node):
    infer = getattr(node.target, "infer", None)
    if infer is None:
        return
    try:
        derived = node.graph.infer(node.target, node.args, node.kwargs)
    except Exception as exc:  # the op rejects its own arguments
        yield f"%{node.name}: {node.target.name} rejects its arguments: {type(exc).__name__}: {exc}"
        return
    if derived != node.meta:
        recorded, rule = (
            (node.meta, derived)
            if str(node.meta) != str(derived)
            else (repr(node.meta), repr(derived))
        )
        yield f"%{node.name}: meta {recorded} differs from {node.target.name}'s rule, which gives {rule}"


def _safe_text(graph: "Graph") -> str:
    try:
        return str(graph)
    except (
        Exception
    ) as exc:  # a broken graph may not print; say so instead of hiding the first error
        return f"(graph text unavailable: {type(exc).__name__}: {exc})"
