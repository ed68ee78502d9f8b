"""Loop-invariant code motion: what a loop body computes the same way on every trip is computed
once, before the loop.

    %for_range_1 = for_range(%x, %r, ...)               %multiply_1 = multiply(2.0, %r)
      graph body(x, r):                            =>    %for_range_1 = for_range(%x, %multiply_1, ...)
        %multiply_1 = multiply(2.0, %r)                    graph body(x, multiply_1):
        %add_1 = add(%x, %multiply_1)                        %add_1 = add(%x, %multiply_1)

A body node is invariant when it is a pure op (no write, no sub-graph, no raise on data: a loop
of no trip raises nothing; a library call that raises nothing the values decide, ``np.diagonal``,
qualifies), its sizes and
parameters do not mention the loop's index or the index of a loop nested in it, and each input
is a constant, an invariant node, or a placeholder of a value the loop only reads (not carried:
carried values change from trip to trip, and an array the loop writes is always carried). The
hoisted node moves to the enclosing graph, reading the loop's arguments; the body gets a new
placeholder for its value. Each move is a note in ``graph.notes.loops`` (``explain()``).
"""

from __future__ import annotations

from ..ir import ops
from ..ir.control import LoopNote
from ..ir.graph import Graph, Node, map_arg
from ..ir.shape_env import is_symbolic, map_symbolic
from ..ir.subgraph import body_of, loop_of, regions_of, subgraphs_of
from ..ir.symbolic import free_symbols


def hoist_invariants(graph: Graph) -> bool:
    """Move the invariant nodes of every loop of ``graph`` out of it; True if any moved."""
    changed = False
    for node in list(graph.nodes):
        if loop_of(node) is not None:
            changed |= _hoist(graph, node)
    return changed


hoist_invariants.skips_kernels = True


def _hoist(graph: Graph, loop_node: Node) -> bool:
    loop = loop_node.target
    body = body_of(loop)
    carried = {position for position, _ in loop.carries}
    outer = {
        placeholder: loop_node.args[position]
        for position, placeholder in enumerate(body.placeholders)
        if position not in carried
    }
    indices = _indices(body) | set(loop.bound_symbols)
    moved: dict[Node, Node] = {}
    for member in body.nodes:
        if member.op == "constant":
            with graph.inserting_before(loop_node):
                moved[member] = graph.constant(
                    member.target, member.meta, member.name, member.source, member.captured
                )
        elif _invariant(member, outer, moved, indices):
            with graph.inserting_before(loop_node):
                args = map_arg(member.args, lambda v: moved.get(v, outer.get(v)))
                kwargs = map_arg(member.kwargs, lambda v: moved.get(v, outer.get(v)))
                moved[member] = graph.call(member.target, args, kwargs, member.meta, member.source)
    calls = [m for m in moved if m.op == "call"]
    read = [m for m in calls if any(user not in moved for user in m.users)]
    for member in read:
        _read_from_outside(body, loop_node, member, moved[member])
    if read:  # (placeholders first, in order: one made mid-trace may follow its readers)
        body.sort()  # once: a sort per hoisted node made hoisting quadratic (12 s for 360)
    if calls:
        names = ", ".join(f"%{m.name}" for m in calls)
        graph.notes.loops.append(
            LoopNote(loop.source, True, f"hoisted out of %{loop_node.name}: {names}")
        )
    return bool(calls)


def _invariant(member: Node, outer: dict, moved: dict, indices: set) -> bool:
    if member.op != "call" or member.is_mutation or subgraphs_of(member):
        return False
    if member.kind == "creation":  # a fresh array per trip, which the body may write in place
        return False
    # a loop of no trip must not raise, and a print runs once per trip
    if _may_raise(member) or member.target.effects:
        return False
    if member.meta is None or _mentions(member.meta, indices) or _mentions(member.kwargs, indices):
        return False
    return all(value in outer or value in moved for value in member.all_input_nodes)


def _may_raise(member: Node) -> bool:
    """Whether the node may raise on the data (a library call: as its function may)."""
    call = member.kwargs.get("call") if member.target is ops.EXTERN else None
    return call.raises_on_data if call is not None else member.target.raises_on_data


def _mentions(value, indices: set) -> bool:
    if not is_symbolic(value):
        return False
    found: set = set()
    _collect(value, found)
    return bool(found & indices)


def _collect(value, found: set) -> None:
    """The symbols in ``value`` (an expression, a meta, or a structure holding them)."""

    def note(expr):
        found.update(free_symbols(expr))
        return expr

    map_symbolic(value, note)


def _indices(body: Graph) -> set:
    """The symbols bound by the ops nested in ``body`` (the indices of its loops)."""
    found = set()
    for member in body.nodes:
        for region in regions_of(member):
            found |= set(member.target.bound_symbols) | _indices(region.graph)
    return found


def _read_from_outside(body: Graph, loop_node: Node, member: Node, value: Node) -> None:
    """Make ``member``'s readers in the body read a new placeholder bound to ``value`` (the
    caller sorts the body afterwards)."""
    with body.inserting_after(body.placeholders[-1]):  # placeholders bind arguments in order
        placeholder = body.placeholder(member.name, member.meta)
    body.replace_all_uses_with(member, placeholder)
    loop_node.args = (*loop_node.args, value)
