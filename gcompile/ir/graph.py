"""Graph and Node: an SSA graph of NumPy operations in topological order.

A ``Node`` is one value. Its ``op`` is one of

* ``placeholder`` - a graph input (an array argument, a Python ``float`` ...);
* ``constant``    - an array known at trace time (``target`` holds it);
* ``call``        - ``target(*args, **kwargs)`` where ``target`` is an ``OpDef``, or a
  ``SubgraphOp`` holding graphs of its own (a fused kernel; ``ir/subgraph.py``);
* ``output``      - the returned values, flattened (``args[0]`` is a tuple).

``args`` and ``kwargs`` hold Nodes and Python literals. Assigning them keeps the
``users`` lists of every referenced node in step, so passes never edit use lists
by hand. Nodes form a doubly linked list owned by their Graph; all edits go
through Graph methods (``call``, ``inserting_before``, ``replace_all_uses_with``,
``erase``).

Mutation is explicit: an op with ``mutates`` writes into its first argument's
memory, in program order, and its node's value is the written array. Before
functionalization these are ``setitem`` nodes that nothing reads; every pass
must keep them and their order relative to reads of the same memory.
``passes/functionalize.py`` turns them into values, leaving one ``writeback``
per written argument, which returned aliases of that argument read.
"""

from __future__ import annotations

import contextlib
import heapq
import keyword
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

from .meta import TensorMeta
from .pytree import TreeSpec
from .shape_env import ShapeEnv, data_size_bindings, is_symbolic, map_symbolic, using

OPCODES = ("placeholder", "constant", "call", "output")


def map_arg(value: Any, fn: Callable[["Node"], Any]) -> Any:
    """Apply ``fn`` to every Node inside ``value`` (nested tuples, lists, dicts), rebuilding it."""
    if isinstance(value, Node):
        return fn(value)
    if isinstance(value, tuple):
        items = (map_arg(v, fn) for v in value)
        return type(value)(*items) if hasattr(type(value), "_fields") else tuple(items)
    if isinstance(value, list):
        return [map_arg(v, fn) for v in value]
    if isinstance(value, dict):
        return {k: map_arg(v, fn) for k, v in value.items()}
    return value


def nodes_in(value: Any) -> list["Node"]:
    """The Nodes referenced inside ``value``, in order, without repeats."""
    found: dict[Node, None] = {}
    map_arg(value, lambda n: found.setdefault(n))
    return list(found)


class Node:
    """One value of a Graph. See the module docstring for the opcodes."""

    def __init__(
        self,
        graph: "Graph",
        name: str,
        op: str,
        target: Any,
        meta: TensorMeta | None,
        source: str | None = None,
    ):
        if op not in OPCODES:
            raise ValueError(f"unknown opcode {op!r}; expected one of {OPCODES}")
        self.graph = graph
        self.name = name
        self.op = op
        self.target = target
        self.meta = meta
        self.source = source
        self.captured = False  # a constant array the function read from outside (a global)
        self.users: dict[Node, None] = {}
        self._args: tuple = ()
        self._kwargs: dict = {}
        self._inputs: list[Node] = []
        # (the metas of its inputs its meta was derived from, and that meta: propagate_metas
        # derives it again only when one of them changed)
        self._derived: tuple | None = None
        self._prev: Node = self
        self._next: Node = self

    # -- inputs -----------------------------------------------------------------
    @property
    def args(self) -> tuple:
        return self._args

    @args.setter
    def args(self, value: tuple) -> None:
        self._set_inputs(tuple(value), self._kwargs)

    @property
    def kwargs(self) -> dict:
        return self._kwargs

    @kwargs.setter
    def kwargs(self, value: dict) -> None:
        self._set_inputs(self._args, dict(value))

    @property
    def all_input_nodes(self) -> list["Node"]:
        """Every Node this node reads, in first-use order."""
        return list(self._inputs)

    def _set_inputs(self, args: tuple, kwargs: dict) -> None:
        for old in self._inputs:
            old.users.pop(self, None)
        self._args, self._kwargs = args, kwargs
        self._inputs = nodes_in((args, kwargs))
        self._derived = None
        for new in self._inputs:
            if new.graph is not self.graph:
                raise ValueError(f"node {new.name} belongs to another graph than {self.name}")
            new.users[self] = None

    def replace_input_with(self, old: "Node", new: Any) -> None:
        """Make this node read ``new`` (a Node or a literal) wherever it read ``old``."""
        swap = lambda n: new if n is old else n  # noqa: E731
        self._set_inputs(map_arg(self._args, swap), map_arg(self._kwargs, swap))

    # -- kind -------------------------------------------------------------------
    @property
    def kind(self) -> str | None:
        """The op kind of a call node (``elementwise``, ``reduction``, ...), else None."""
        return getattr(self.target, "kind", None) if self.op == "call" else None

    @property
    def written_arguments(self) -> tuple:
        """Positions of the arguments whose memory this node writes: the first for an op that
        ``mutates`` (``setitem``, ``store``, ``writeback``); those a sub-graph op writes in
        place (a kernel writing its result into its first argument, a loop carrying an array
        in its own memory)."""
        if self.op != "call":
            return ()
        written = getattr(self.target, "written_arguments", None)
        if written is not None:
            return written
        return (0,) if getattr(self.target, "mutates", False) else ()

    @property
    def is_mutation(self) -> bool:
        """True for nodes that write an argument's memory (``written_arguments``)."""
        return bool(self.written_arguments)

    @property
    def returned(self) -> bool:
        """Whether this value, or a view of it, is returned by the graph (callers may write into it)."""
        from .alias import returned

        return returned(self)

    def __repr__(self) -> str:
        return f"%{self.name}"


@dataclass
class GraphNotes:
    """What the front end and the passes said about a graph, for the tools (``explain``, the
    debug dump); no pass reads another's notes to decide anything but the report it extends."""

    fusion: Any = None  # fuse's report: kernels, boundaries and their reasons (passes/fuse.py)
    loops: list = field(default_factory=list)  # a LoopNote per loop: rolled, or why not


class Graph:
    """Nodes in topological order, with builders and edit methods.

    Example:
        >>> g = Graph("double")
        >>> x = g.placeholder("x", TensorMeta((3,), "f8"))
        >>> y = g.call(ops.MULTIPLY, (x, 2.0))
        >>> g.output((y,))
    """

    def __init__(self, name: str = "graph", shape_env: ShapeEnv | None = None):
        self.name = name
        # the symbolic sizes its metas use (shared by the graphs nested in it)
        self.shape_env = shape_env if shape_env is not None else ShapeEnv()
        self._root = Node(self, "", "output", None, None)
        self._root.op = "root"  # sentinel: not a real node, never yielded
        self._insert_before: Node = self._root
        self._names: set[str] = set()
        self._counters: dict[str, int] = {}
        self.out_spec: TreeSpec | None = None
        self.repeated = False  # a loop's body: it runs once per iteration (frontend/loops.py)
        self.notes = GraphNotes()
        # exception classes whose raise by the compiled graph makes the call run again eagerly
        # (a ``try`` around its operations whose handlers only raise: eager raises as they do)
        self.reruns_on: tuple = ()

    # -- iteration --------------------------------------------------------------
    @property
    def nodes(self) -> list[Node]:
        """A snapshot list of the nodes in order (safe to edit the graph while looping)."""
        return list(self._iter())

    def _iter(self) -> Iterator[Node]:
        node = self._root._next
        while node is not self._root:
            yield node
            node = node._next

    def __len__(self) -> int:
        return sum(1 for _ in self._iter())

    @staticmethod
    def parse(text: str) -> "Graph":
        """The graph whose text form (``str(graph)``) is ``text`` (``ir/parser.py``; a callback
        and a constant printed without its values are not in the text: ``ParseError``)."""
        from .parser import parse_graph  # (the parser builds graphs: imported when asked)

        return parse_graph(text)

    @property
    def placeholders(self) -> list[Node]:
        return [n for n in self._iter() if n.op == "placeholder"]

    @property
    def output_node(self) -> Node:
        last = self._root._prev
        if last is self._root or last.op != "output":
            raise ValueError(f"graph {self.name} has no output node")
        return last

    def find(self, name: str) -> Node:
        """The node called ``name``."""
        for node in self._iter():
            if node.name == name:
                return node
        raise KeyError(f"no node named {name!r} in graph {self.name}")

    # -- names ------------------------------------------------------------------
    def unique_name(self, hint: str) -> str:
        """A legal identifier based on ``hint`` not used yet in this graph (``exp`` -> ``exp_1``)."""
        base = re.sub(r"\W", "_", hint) or "v"
        if base[0].isdigit():
            base = "_" + base
        counter = self._counters.get(base, 0)
        while True:
            counter += 1
            name = f"{base}_{counter}"
            if name not in self._names:
                break
        self._counters[base] = counter
        self._names.add(name)
        return name

    def _claim_name(self, name: str) -> str:
        name = re.sub(r"\W", "_", name) or "arg"
        if name[0].isdigit() or keyword.iskeyword(name):
            name = "_" + name
        if name in self._names:
            return self.unique_name(name)
        self._names.add(name)
        return name

    # -- building ---------------------------------------------------------------
    def _link(self, node: Node) -> Node:
        before = self._insert_before
        node._prev, node._next = before._prev, before
        before._prev._next = node
        before._prev = node
        return node

    def placeholder(self, name: str, meta: TensorMeta, source: str | None = None) -> Node:
        """Add an input called ``name`` (made unique and a legal identifier)."""
        return self._link(Node(self, self._claim_name(name), "placeholder", None, meta, source))

    def constant(
        self,
        value: Any,
        meta: TensorMeta,
        name: str = "const",
        source: str | None = None,
        captured: bool = False,
    ) -> Node:
        """Add an array known at trace time.

        ``captured`` marks an array the traced function read from outside (a global, a closure,
        a default): the graph holds it by reference and reads its current contents on every
        run, so passes must not fold it or merge it by value.
        """
        node = Node(self, self.unique_name(name), "constant", value, meta, source)
        node.captured = captured
        return self._link(node)

    def call(
        self,
        op: Any,
        args: tuple = (),
        kwargs: dict | None = None,
        meta: TensorMeta | None = None,
        source: str | None = None,
        name: str | None = None,
    ) -> Node:
        """Add ``op(*args, **kwargs)``; its meta comes from ``op.infer`` unless given.

        The node is named after the op (``exp_1``), or ``name`` when given and still free.
        """
        kwargs = dict(kwargs or {})
        if meta is None:
            meta = self.infer(op, tuple(args), kwargs)
        node = Node(
            self,
            self._claim_name(name) if name else self.unique_name(op.name),
            "call",
            op,
            meta,
            source,
        )
        node._set_inputs(tuple(args), kwargs)
        return self._link(node)

    def output(self, values: tuple, spec: TreeSpec | None = None) -> Node:
        """Add the output node returning the flat tuple ``values`` (structure ``spec``)."""
        node = Node(self, "output", "output", None, None)
        node._set_inputs((tuple(values),), {})
        self.out_spec = spec
        return self._link(node)

    def insertion_anchor(self) -> Node | None:
        """The node the next node added follows (None: it goes first)."""
        previous = self._insert_before._prev
        return None if previous is self._root else previous

    def placeholders_first(self) -> None:
        """Relink the inputs before every other node, each list keeping its order (an input
        added while nodes were inserted mid-graph lands among them)."""
        nodes = self.nodes
        ordered = [n for n in nodes if n.op == "placeholder"]
        self._relink(ordered + [n for n in nodes if n.op != "placeholder"])

    def _relink(self, ordered: list) -> None:
        """Link ``ordered`` (every node of the graph) in that order."""
        previous = self._root
        for node in ordered:
            previous._next, node._prev = node, previous
            previous = node
        previous._next, self._root._prev = self._root, previous

    def nodes_after(self, anchor: Node | None) -> list[Node]:
        """The nodes linked after ``anchor`` (None: every node): what was recorded since
        ``insertion_anchor`` gave it (a node inserted before it since is not among them)."""
        if anchor is not None and anchor._next is anchor:  # (erased: its links lead nowhere)
            raise ValueError(f"%{anchor.name} is no longer in the graph")
        nodes, node = [], (anchor or self._root)._next
        while node is not self._root:
            nodes.append(node)
            node = node._next
        return nodes

    def written_after(self, anchor: Node | None, value: Node | None = None) -> bool:
        """Whether a node after ``anchor`` (None: any node) writes memory (``is_mutation``):
        ``value``'s memory when given, else any."""
        from .alias import memory_of, written_memories

        memory = None if value is None else memory_of(value)
        node = (anchor or self._root)._next
        while node is not self._root:
            if node.is_mutation and (memory is None or memory in written_memories(node)):
                return True
            node = node._next
        return False

    @contextlib.contextmanager
    def inserting_before(self, node: Node):
        """New nodes go right before ``node`` inside the ``with`` block."""
        saved, self._insert_before = self._insert_before, node
        try:
            yield
        finally:
            self._insert_before = saved

    @contextlib.contextmanager
    def inserting_after(self, node: Node):
        """New nodes go right after ``node`` (in order of creation) inside the ``with`` block."""
        with self.inserting_before(node._next):
            yield

    # -- editing ----------------------------------------------------------------
    def replace_all_uses_with(self, old: Node, new: Any) -> list[Node]:
        """Make every user of ``old`` read ``new`` (a Node or a literal) instead; returns the users changed."""
        changed = list(old.users)
        for user in changed:
            user.replace_input_with(old, new)
        return changed

    def sort(self) -> None:
        """Re-link the nodes in a topological order that keeps the current order where it can.

        Besides data edges, a node that writes memory (``is_mutation``) comes after every other
        reader of the array it writes, directly or through views; another node writing the
        same array (and reading it no other way) is not such a reader: writes into one array
        are ordered by the values they write (``store`` then ``writeback``).
        """
        nodes = self.nodes
        position = {node: i for i, node in enumerate(nodes)}
        after = self._order()
        waiting = {node: 0 for node in nodes}
        for node in nodes:
            for later in after[node]:
                waiting[later] += 1
        ready = [(position[n], n.name, n) for n in nodes if waiting[n] == 0]
        heapq.heapify(ready)
        ordered = []
        while ready:
            _, _, node = heapq.heappop(ready)
            ordered.append(node)
            for later in after[node]:
                waiting[later] -= 1
                if waiting[later] == 0:
                    heapq.heappush(ready, (position[later], later.name, later))
        if len(ordered) != len(nodes):
            raise ValueError(f"graph {self.name} has a cycle")
        # stable: placeholders stay first, the output stays last
        ordered.sort(key=lambda n: 0 if n.op == "placeholder" else 2 if n.op == "output" else 1)
        self._relink(ordered)

    def _order(self) -> dict:
        """Node -> the nodes that must run after it: its users, the writes into memory it
        reads (``sort``), the nodes using a length it binds (``length_edges``)."""
        from .alias import memory_readers

        nodes = self.nodes
        after: dict[Node, list[Node]] = {node: list(dict.fromkeys(node.users)) for node in nodes}
        for writer in (n for n in nodes if n.is_mutation):
            for target in (writer.args[i] for i in writer.written_arguments):
                for reader in memory_readers(target):
                    if reader is not writer and not _only_writes(reader, target):
                        if writer not in after[reader]:
                            after[reader].append(writer)
        for binder, node in self.length_edges():
            if node not in after[binder]:
                after[binder].append(node)
        return after

    def followers(self, node: Node) -> set:
        """The nodes that must run after ``node`` (``sort``'s order: by data, by the writes
        after the reads of what they overwrite, by lengths the data decide)."""
        after, found, pending = self._order(), set(), [node]
        while pending:
            for later in after[pending.pop()]:
                if later not in found:
                    found.add(later)
                    pending.append(later)
        return found

    def length_edges(self) -> list:
        """``(binder, node)``: ``node``'s parameters or shapes (or those of the graphs it holds)
        use a length the data decide (``u0``) that ``binder`` makes (``shape_env.data_size_bindings``), with no data edge
        saying so (``symint(expr=u0)``, ``zeros(shape=(u0,))``): it runs after ``binder``."""
        if not self.shape_env.data_sizes:
            return []
        nodes, binders = self.nodes, {}
        for node in nodes:
            for symbol, _, _ in data_size_bindings(node.meta):
                binders.setdefault(symbol, node)
        from .subgraph import data_sizes_used  # (it walks the graphs nodes hold)

        edges = []
        for node in nodes:
            for symbol in data_sizes_used(node):
                binder = binders.get(symbol)
                if binder is not None and binder is not node and binder not in node.all_input_nodes:
                    edges.append((binder, node))
        return edges

    def infer(self, op: Any, args: tuple, kwargs: dict) -> Any:
        """``op``'s meta for ``args`` and ``kwargs``, its questions about symbolic sizes
        answered by this graph's ``shape_env``."""
        with using(self.shape_env):
            return op.infer(*map_arg(args, _meta_of_node), **kwargs)

    def propagate_metas(self) -> None:
        """Re-derive every call node's meta from its inputs, in order (after passes substitute
        values whose layout differs, downstream layouts follow). A node holding sub-graphs
        (``ir/subgraph.py``) first gives each graph's placeholders the metas of the arguments
        bound to them, has its graphs' metas re-derived, then asks its op. A node without
        sub-graphs whose input metas and own meta are those it was last derived from and to
        keeps its meta (the op's answer would be the same: a trace's facts only grow)."""
        from .subgraph import regions_of

        for node in self._iter():
            if node.op == "call" and not regions_of(node):
                inputs = tuple(n.meta for n in node._inputs)
                if not _derived_from(node, inputs):
                    node.meta = self.infer(node.target, node.args, node.kwargs)
                    node._derived = (inputs, node.meta)
            elif node.op == "call":
                renamed: dict = {}
                for region in regions_of(node):
                    for placeholder, index in zip(region.graph.placeholders, region.operands):
                        if isinstance(node.args[index], Node):
                            placeholder.meta = node.args[index].meta
                    before = {member: member.meta for member in region.graph.nodes}
                    region.graph.propagate_metas()
                    renamed.update(renamed_sizes((meta, m.meta) for m, meta in before.items()))
                if renamed:  # sizes the op holds itself (a kernel's space) follow its graphs'
                    node.target.map_sizes(lambda size, table=renamed: table.get(size, size))
                node.meta = self.infer(node.target, node.args, node.kwargs)

    def substitute_sizes(self, fn: Callable) -> None:
        """Replace every symbolic size in metas and parameters (and in nested graphs and the
        parameters of the ops holding them) by ``fn(size)``: the replacements a trace
        learned, or concrete sizes."""
        from .subgraph import subgraphs_of

        for node in self._iter():
            if node.meta is not None:
                node.meta = map_symbolic(node.meta, fn)
            if node.op == "call" and is_symbolic(node.kwargs):
                node.kwargs = map_symbolic(node.kwargs, fn)
            for sub in subgraphs_of(node):
                sub.substitute_sizes(fn)
            if subgraphs_of(node):
                node.target.map_sizes(fn)

    def erase(self, node: Node) -> None:
        """Remove ``node``, which must have no users."""
        if node.users:
            raise ValueError(f"cannot erase %{node.name}: still used by {list(node.users)}")
        node._set_inputs((), {})
        node._prev._next, node._next._prev = node._next, node._prev
        node._prev = node._next = node
        self._names.discard(node.name)

    # -- checking and printing ----------------------------------------------------
    def verify(self) -> None:
        """Check order, use lists, names and metas; raises GraphError quoting the graph."""
        from .verify import verify

        verify(self)

    def __str__(self) -> str:
        from .printer import format_graph

        return format_graph(self)

    def print(self) -> None:
        """Print the text form."""
        print(str(self))

    def tabular(self) -> str:
        """The table form: one row per node with opcode, name, target, args, kwargs, meta, source."""
        from .printer import format_tabular

        return format_tabular(self)

    def print_tabular(self) -> None:
        """Print the table form."""
        print(self.tabular())


def last_uses(graph: Graph) -> dict:
    """Per node, the values whose last reader it is (the returned values excepted): where a
    runner of the graph may release them."""
    output = graph.output_node
    kept = set(output.all_input_nodes)
    last_reader: dict[Node, Node] = {}
    for node in graph._iter():
        for value in node.all_input_nodes:
            last_reader[value] = node
    releases: dict[Node, list] = {}
    for value, reader in last_reader.items():
        if value not in kept and reader is not output:
            releases.setdefault(reader, []).append(value)
    return releases


def renamed_sizes(pairs) -> dict:
    """Sizes whose form re-deriving changed (``max(s0-3,0)`` to ``s0-3`` once ``s0 >= 3`` is
    known): old size -> new, from ``(old meta, new meta)`` pairs of the same values."""
    renamed = {}
    for before, after in pairs:
        old, new = getattr(before, "shape", None), getattr(after, "shape", None)
        if old is not None and new is not None and len(old) == len(new):
            renamed.update((a, b) for a, b in zip(old, new) if a is not b and a != b)
    return renamed


def _only_writes(node: Node, target: Node) -> bool:
    """Whether ``node`` meets ``target`` only as an array it writes (writes into one array are
    ordered by the values they write, not as reads)."""
    written = [node.args[i] for i in node.written_arguments]
    others = [a for i, a in enumerate(node.args) if i not in node.written_arguments]
    return target in written and target not in nodes_in((others, node.kwargs))


def _derived_from(node: Node, inputs: tuple) -> bool:
    """Whether ``node``'s meta is the one derived last from these very input metas."""
    derived = node._derived
    if derived is None or derived[1] is not node.meta or len(derived[0]) != len(inputs):
        return False
    return all(old is new for old, new in zip(derived[0], inputs))


def _meta_of_node(node: Node) -> TensorMeta:
    return node.meta
