"""Functionalization: in-place updates become pure data flow plus explicit write-backs.

    graph step(u: f64[6,6], alpha: float):
      %getitem_1 : f64[4,4] = getitem(%u, index=[1:-1, 1:-1])
      %add_1     : f64[4,4] = add(%getitem_1, %alpha)
      %setitem_1 : f64[4,4] = setitem(%getitem_1, %add_1, index=[...])
      %getitem_2 : f64[6]   = getitem(%u, index=[0])
      return %getitem_2
  =>
    graph step(u: f64[6,6], alpha: float):
      %getitem_1   : f64[4,4] = getitem(%u, index=[1:-1, 1:-1])
      %add_1       : f64[4,4] = add(%getitem_1, %alpha)
      %update_1    : f64[6,6] = update(%u, %add_1, index=[...], views=(getitem(index=(1:-1, 1:-1)),))
      %writeback_1 : f64[6,6] = writeback(%u, %update_1)
      %getitem_3   : f64[6]   = getitem(%writeback_1, index=[0])
      return %getitem_3

Before this pass a node stands for a *buffer*: ``setitem`` writes it, and later
reads of the buffer or of any view of it see the write. After it, every node is
a value: a write becomes ``update`` (a copy with the region replaced; a ``put`` at
positions read from the data a ``put_update``), and each
later read of the written array, or of a view of it, reads the newest version
(views are re-derived from it). Arrays the caller passed in and the function
wrote get one ``writeback`` each, just before the output; returned values that
alias such an argument (the argument itself, or a view of it) are taken from
the ``writeback`` node, whose value is the caller's array, so identity and
aliasing match eager mode.

Views: ``getitem`` (unless it reads one element), ``transpose``, ``swapaxes``,
``moveaxis``, ``expand_dims``, ``squeeze``, ``broadcast_to`` alias their input;
``reshape`` and ``ravel`` alias it when NumPy can reshape without copying, which
is decided exactly for C- and F-contiguous inputs. For strided inputs it depends
on the strides, so a function that writes such an array (or through such a
reshape) is refused rather than guessed.

Arguments that share memory (the same array twice, overlapping views) are not
modelled here: the compiled function checks its inputs on each call and runs
eagerly, with a warning, when a written argument overlaps another
(``api.CompiledFunction``).
"""

from __future__ import annotations

from ..errors import UnsupportedError
from ..ir import ops
from ..ir.alias import alias_chain, may_copy, readers, view_parent
from ..ir.graph import Graph, Node, map_arg

_WRITES = (ops.SETITEM, ops.PUT)  # what becomes an update (a put_update)


class _Functionalizer:
    def __init__(self, graph: Graph):
        self.graph = graph
        self.version: dict[Node, Node] = {}  # written root -> its newest value
        self.origin: dict[Node, Node] = {}  # update node -> the root it is a version of
        self.derived: dict[Node, tuple[Node, Node]] = {}  # view -> (root version, view of it)

    def chain(self, node: Node) -> tuple[Node, list[Node]]:
        """``alias_chain`` with versions mapped back to the array they are versions of."""
        root, views = alias_chain(node)
        return self.origin.get(root, root), views

    def current(self, value, before: Node):
        """The value ``value`` has at ``before``: re-derived from its root's newest version if written."""
        if not isinstance(value, Node):
            return value
        root, views = self.chain(value)
        newest = self.version.get(root)
        if newest is None:
            return value
        if not views:
            return newest
        cached = self.derived.get(value)
        if cached is not None and cached[0] is newest:
            return cached[1]
        view = self._replay(newest, views, before)
        self.derived[value] = (newest, view)
        return view

    def _replay(self, base: Node, views: list[Node], before: Node) -> Node:
        with self.graph.inserting_before(before):
            for view in views:
                base = self.graph.call(view.target, (base,), view.kwargs, source=view.source)
        return base

    def write(self, node: Node) -> None:
        """A ``setitem`` (``put``) as an ``update`` (``put_update``) of its root's newest value."""
        target, value, *positions = node.args
        root, views = self.chain(target)
        base = self.version.get(root, root)
        steps = tuple(ops.ViewStep(v.target, tuple(sorted(v.kwargs.items()))) for v in views)
        index = node.kwargs["index"]
        if steps and steps[-1].op is ops.GETITEM and index == (Ellipsis,):  # t = u[i]; t[...] = v
            index, steps = dict(steps[-1].params)["index"], steps[:-1]
        params = {"index": index, **({"views": steps} if steps else {})}
        op = ops.PUT_UPDATE if node.target is ops.PUT else ops.UPDATE
        operands = (base, *(self.current(v, node) for v in (value, *positions)))
        with self.graph.inserting_before(node):
            update = self.graph.call(op, operands, params, source=node.source)
        self.version[root] = update
        self.origin[update] = root
        self.graph.erase(node)

    def finish(self, output: Node) -> None:
        """Write back the arguments the function wrote; point outputs at current values."""
        writebacks = {}
        for root, newest in self.version.items():
            if root.op == "placeholder":
                with self.graph.inserting_before(output):
                    writebacks[root] = self.graph.call(
                        ops.WRITEBACK, (root, newest), source=newest.source
                    )

        def returned(value):
            if not isinstance(value, Node):
                return value
            root, views = self.chain(value)
            if root in writebacks:
                return self._replay(writebacks[root], views, output) if views else writebacks[root]
            return self.current(value, output)

        output.args = (tuple(returned(v) for v in output.args[0]),)


def _check_reads_of_copies(graph: Graph, writes: list) -> None:
    """A reshape that may copy cannot be modelled exactly where copy and view differ: refuse
    when it is written through, or read after a write into the array it reshapes (a read
    before, or by that write itself, sees the same values either way)."""
    order = {n: i for i, n in enumerate(graph.nodes)}
    targets = [(alias_chain(w.args[0])[0], order[w]) for w in writes]
    for node in graph.nodes:
        if not may_copy(node):
            continue
        base = alias_chain(node.args[0])[0]
        last = max((order[r] for r in readers(node, view_parent)), default=order[node])
        if any(root is node or root is base and order[node] < at < last for root, at in targets):
            raise UnsupportedError(
                "a reshape or ravel of a non-contiguous array that the function also writes "
                "(NumPy may or may not copy it)",
                node.source,
                hint="copy explicitly (x.copy()) or make the array contiguous before reshaping",
            )


def functionalize(graph: Graph) -> bool:
    """Replace ``setitem`` nodes by ``update`` values (``put`` ones by ``put_update``) and
    ``writeback``s; True if there were any."""
    writes = [n for n in graph.nodes if n.op == "call" and n.target in _WRITES]
    if not writes:
        return False
    _check_reads_of_copies(graph, writes)
    state = _Functionalizer(graph)
    for node in graph.nodes:
        if node.op == "output":
            state.finish(node)
        elif node.op == "call" and node.target in _WRITES:
            state.write(node)
        elif node.op == "call":
            node.args = map_arg(node.args, lambda v, at=node: state.current(v, at))
    return True
