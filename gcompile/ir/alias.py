"""Which values share memory: views and their bases, and who reads a value through views.

A view op's result may be the same memory as its input. ``alias_parent`` answers
exactly (a reshape or ravel aliases only when NumPy can reshape without copying,
decided for C and F inputs); ``view_parent`` answers conservatively (any view
op's array result), which is what ordering writes after reads needs. The other
helpers walk these links: the array that owns a view's memory, the readers of a
value through views, whether a value reaches the graph's output.
"""

from __future__ import annotations

from typing import AbstractSet, Callable

from . import layout, ops
from .graph import Node
from .meta import TupleMeta
from .shape_env import using
from .subgraph import SubgraphOp
from .symbolic import is_expr


def reshape_is_view(node: Node) -> bool | None:
    """Whether a reshape/ravel node returns a view: exact for C and F inputs, None when unknown."""
    parent = node.args[0].meta
    if _unit_axes_only(parent.shape, node.meta.shape):
        return True  # NumPy adds or drops axes of size 1 without copying, whatever the strides
    if parent.layout == "A":
        return None
    with using(node.graph.shape_env):
        return node.target.strided(layout.of_meta(parent), **node.kwargs) is not None


def _unit_axes_only(before: tuple, after: tuple) -> bool:
    """The shapes differ only by axes of size 1 (a symbolic size is never 1: sizes 0 and 1 are
    specialised)."""
    return [s for s in before if not _is_one(s)] == [s for s in after if not _is_one(s)]


def _is_one(size) -> bool:
    return not is_expr(size) and size == 1


def view_parent(node: Node) -> Node | None:
    """The input a view op's result may share memory with (conservative), or None."""
    if node.op != "call" or node.kind != "view" or node.meta.scalar:
        return None
    parent = node.args[0]
    if not isinstance(parent, Node) or parent.meta.scalar:
        return None  # one element read is a copy; a view of a NumPy scalar is a new array
    return parent


def alias_parent(node: Node) -> Node | None:
    """The node whose memory ``node`` is a view of (exact), or None when ``node`` owns its value."""
    parent = view_parent(node)
    if parent is not None and node.target.may_copy and not reshape_is_view(node):
        return None
    return parent


def may_copy(node: Node) -> bool:
    """A reshape/ravel of a strided array: NumPy copies or not depending on the strides."""
    return node.op == "call" and node.target.may_copy and reshape_is_view(node) is None


def chain(node: Node, parent_of: Callable[[Node], Node | None]) -> tuple[Node, list[Node]]:
    """``(start, steps)``: following ``parent_of`` from ``node`` until it gives None, the node
    reached and the nodes passed on the way, from it to ``node``. One walk for view chains:
    exact aliasing (``alias_chain``), a kernel's index maps (``loops/indexing.view_chain``)."""
    steps = []
    while (parent := parent_of(node)) is not None:
        steps.append(node)
        node = parent
    return node, steps[::-1]


def alias_chain(node: Node) -> tuple[Node, list[Node]]:
    """``(root, views)``: the node owning ``node``'s memory and the views from it to ``node``."""
    return chain(node, alias_parent)


def root(node: Node) -> Node:
    """The node owning ``node``'s memory."""
    return alias_chain(node)[0]


def readers(node: Node, parent: Callable[[Node], Node | None] = alias_parent) -> list[Node]:
    """Nodes reading ``node``'s value directly or through views (``parent`` decides what a view is)."""
    found, pending = [], [node]
    while pending:
        for user in pending.pop().users:
            if parent(user) is not None:
                pending.append(user)
            else:
                found.append(user)
    return found


def memory_readers(array: Node) -> list[Node]:
    """Every node reading ``array``'s memory: its users and, through anything that may be a view
    of it, their users too (the views included). Used to order a write after all reads."""
    found, pending = [], [array]
    while pending:
        for user in pending.pop().users:
            if user not in found:
                found.append(user)
                if view_parent(user) is not None:
                    pending.append(user)
    return found


def returned(node: Node, excluding: Node | None = None) -> bool:
    """Whether ``node``, or a view of it, is returned by its graph (not counting through
    ``excluding``). A returned value may be written by the caller, so passes keep it distinct."""
    pending = [node]
    while pending:
        for user in pending.pop().users:
            if user is excluding:
                continue
            if user.op == "output":
                return True
            if view_parent(user) is not None:
                pending.append(user)
    return False


def memory_of(node: Node) -> Node:
    """The node owning the memory ``node``'s value lives in: through views, and through nodes
    whose value is an argument they wrote (``store``, ``writeback``, a kernel writing in place,
    a loop's output carried in place)."""
    while True:
        node = root(node)
        holder = _holding_argument(node)
        if holder is None:
            return node
        node = holder


def _holding_argument(node: Node) -> Node | None:
    """The argument whose memory ``node``'s value is, when ``node`` wrote it in place."""
    if node.op != "call":
        return None
    if node.target is ops.KERNEL_OUTPUT:
        owner, output = node.args[0], node.kwargs["item"]
    else:
        owner, output = node, 0
        if isinstance(node.meta, TupleMeta):
            return None
    target = owner.target
    if isinstance(target, SubgraphOp):
        position = target.output_argument(output)
    else:
        position = 0 if getattr(target, "mutates", False) else None
    return None if position is None else owner.args[position]


def chosen_memories(node: Node) -> set[Node]:
    """The memories of arguments a branch or a loop's trips may have handed back as ``node``'s
    value (``y = x if c else z``: ``x``'s and ``z``'s; ``for ...: y = x``: ``x``'s), which
    ``memory_of`` cannot name: it follows one memory, and this value is one of several as the
    data decide. Empty for any other value, for an array a branch updates (written back into
    its argument), and for a loop's carried values as they came (their first memory when
    the loop runs no trip)."""
    memory = memory_of(node)
    if memory.op != "call":
        return set()
    owner, output = memory, 0
    if memory.target is ops.KERNEL_OUTPUT:
        owner, output = memory.args[0], memory.kwargs["item"]
    target = owner.target
    if not isinstance(target, SubgraphOp) or target.kind not in ("branch", "loop"):
        return set()
    loop = target.kind == "loop"
    if not loop and any(carried == output for _, carried in target.carries):
        return set()
    found = set()
    for region in target.regions[:1] if loop else target.regions:
        results = region.graph.output_node.args[0]
        returned = results[output] if isinstance(results, tuple) else results
        if not isinstance(returned, Node) or returned.meta.scalar:
            continue
        for held in memories(returned):
            if held.op != "placeholder":
                continue
            at = region.graph.placeholders.index(held)
            if loop and any(position == at for position, _ in target.carries):
                continue
            found |= memories(owner.args[region.operands[at]])
    return found


def returns_a_choice(graph) -> bool:
    """Whether ``graph`` returns an array that may be one of its inputs' memory as the data
    decide (``chosen_memories``): its value is then a copy, where Python's is that array."""
    results = graph.output_node.args[0]
    inputs = set(graph.placeholders)
    return any(
        isinstance(value, Node) and not value.meta.scalar and chosen_memories(value) & inputs
        for value in (results if isinstance(results, tuple) else (results,))
    )


def memories(node: Node) -> set[Node]:
    """Every memory ``node``'s value may live in: its own (``memory_of``), or one a branch
    chose (``chosen_memories``)."""
    return {memory_of(node)} | chosen_memories(node)


def shared_with_written(args, written) -> list[tuple[int, int]]:
    """Pairs ``(w, i)`` of argument positions whose values may share memory (``memories``)
    where ``w`` is in ``written``: the arguments of a loop whose body writes ``w`` and reads
    ``i`` as separate memory, which would miss each other's writes."""
    memory = {
        i: memories(value)
        for i, value in enumerate(args)
        if isinstance(value, Node) and not value.meta.scalar
    }
    return [
        (w, i)
        for w in sorted(written)
        if w in memory
        for i in memory
        if i != w and memory[i] & memory[w]
    ]


def written_placeholders(graph) -> AbstractSet[Node]:
    """The placeholders of ``graph`` the user's code writes (``setitem``, ``put``, through
    views too), a set iterated in the order of their first writes (a set of nodes iterates in
    the order of their addresses: a branch's outputs took another order on each trace): as
    traced, a loop body's write into a placeholder is a write into the caller's memory.
    (After functionalization a body writes its own copy of a carried array, unless the loop
    runs ``in_place``.)"""
    written: dict[Node, None] = {}
    for member in graph.nodes:
        if member.op == "call" and member.target in (ops.SETITEM, ops.PUT):
            base = memory_of(member.args[0])
            if base.op == "placeholder":
                written[base] = None
    return written.keys()


def written_inputs(graph) -> list[int]:
    """The positions of ``graph``'s placeholders whose memory the compiled graph writes
    (write-backs, in-place writes, loops running in an argument's memory)."""
    position = {node: i for i, node in enumerate(graph.placeholders)}
    memories = {memory_of(node.args[i]) for node in graph.nodes for i in node.written_arguments}
    return sorted(position[memory] for memory in memories if memory in position)


def written_memories(node: Node) -> set[Node]:
    """The memories (``memory_of``) of the arguments ``node`` writes."""
    return {memory_of(node.args[i]) for i in written_operands(node)}


def written_operands(node: Node) -> set[int]:
    """Positions of a sub-graph op's arguments whose memory it writes: in place, or (as traced)
    its graphs through their placeholders."""
    written = set(node.written_arguments)
    for region in getattr(node.target, "regions", ()):
        placeholders = region.graph.placeholders
        for base in written_placeholders(region.graph):
            written.add(region.operands[placeholders.index(base)])
    return written


def store_region(base: Node, params: dict) -> layout.Strided | None:
    """The region a store into ``base`` with ``params`` (its ``views`` and ``index``) writes,
    as a view of ``base``'s memory; None when ``base`` has no flat memory (layout ``"A"``)."""
    if base.meta.layout not in "CF":
        return None
    region = layout.of_meta(base.meta)
    for step in params.get("views", ()):
        region = step.op.strided(region, **dict(step.params))
        if region is None:
            return None
    return layout.getitem(region, params["index"])


def copied_region(store: Node) -> layout.Strided | None:
    """The region ``store`` writes when it copies an array of the region's shape and dtype
    from other memory (a plain copy loop does that); otherwise None. Needs the graph's shape
    environment (``shape_env.using``)."""
    base, value = store.args[:2]
    if not isinstance(value, Node) or value.meta.scalar or value.meta.ndim == 0:
        return None
    if memory_of(value) is memory_of(base):
        return None  # (overlapping: NumPy buffers it)
    region = store_region(base, store.kwargs)
    if region is None or value.meta.dtype != store.meta.dtype:
        return None
    return region if tuple(value.meta.shape) == tuple(region.shape) else None
