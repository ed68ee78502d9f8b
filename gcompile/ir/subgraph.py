"""Ops that hold sub-graphs: one protocol for all of them, and walks over nested graphs.

A call node whose ``target`` is a ``SubgraphOp`` holds graphs of its own. The fused
kernel (``ir/kernel.py``) is the first such op; loops and branches (``for_range``,
``while_loop``, ``cond``) take the same shape, as JAX's ``cond``/``while``/``scan``
primitives hold jaxprs in their parameters and PyTensor's ``OpFromGraph``/``Scan`` hold
an inner ``FunctionGraph``::

    %fused_1 : f32[64,128] = fused_1(%x, %amax_1)
      graph fused_1(x: f32[64,128], amax_1: f32[64,1]):      one Region: role "body",
        %subtract_1 : f32[64,128] = subtract(%x, %amax_1)     operands (0, 1)
        return %subtract_1

The op tells a consumer everything it needs, so no consumer knows which op it is:

* ``regions``: its graphs, each a ``Region`` with a role name (``body``; ``then`` and
  ``else`` for a branch) and ``operands``: placeholder ``k`` of the graph receives the
  node's argument ``operands[k]`` and has that argument's meta. A graph may read any
  subset of the arguments in any order (a branch reads the operands, not the predicate),
  and an argument may be read by no graph (the predicate, which the op itself reads). A
  value carried from one loop iteration to the next receives its first value this way;
  a loop counter is such a carried value, as in JAX's ``fori_loop``.
* ``infer(*metas, **params)``: the node's meta from its arguments' metas, like an
  ``OpDef``'s rule. The default checks the operands and returns the metas of the graphs'
  outputs, which must agree (one meta, or a ``TupleMeta`` for several outputs).
* ``interpret(run_graph, args, kwargs)``: the op's reference semantics, given
  ``run_graph(graph, inputs, bindings=None) -> outputs`` by whoever runs the node (the
  interpreter, the Numba host's fallback, compare), which thus runs any such op without
  knowing it; ``bindings`` gives symbols the op binds (a loop's index) their int values.
* ``holds_program``: whether the graphs are user code that the graph passes optimise like the
  top level (a loop's body), or already a lowered group (a fused kernel's body, which fusion
  must not fuse again). ``program_graphs(graph)`` walks the former.
* ``params``: what dumps and drawings show about the op besides its graphs.
* loops (``repeats``: the first region, the body, runs many times per call): ``carries``
  (``(placeholder, output)`` pairs: a body output fed back to a placeholder for the next
  trip), ``in_place`` (carried placeholders that run in their argument's own memory, set by
  buffer assignment), ``names`` (the user's names of the outputs), ``bound_symbols`` (symbols
  the op binds in its graphs: a loop's index), ``trips(kwargs)`` (the bound symbol's values
  when the trip count is known at compile time: unrolling), ``summary(kwargs)`` (one line
  for reports) and ``source`` (the user's ``file:line``). Passes (unroll, hoist, buffers),
  drawings and reports read loops through these only.

Consumers reach nested graphs only through ``regions_of(node)`` and ``subgraphs_of(node)``,
and walk them with ``walk(graph)`` (each node, with the nodes of an op's graphs right after
the op's node) and ``graphs_in(graph)`` (the graph, then every nested graph).
"""

from __future__ import annotations

import abc
from dataclasses import replace
from typing import Any, Callable, Iterator, NamedTuple, Sequence

from .graph import Graph, Node
from .meta import TensorMeta, TupleMeta, meta_of
from .shape_env import active, data_sizes_in

RunGraph = Callable[..., list]
"""``run_graph(graph, inputs, bindings=None) -> outputs``: runs one of an op's graphs on its
placeholder values, with ``bindings`` (symbol -> int) added to the sizes of the call."""


class Region(NamedTuple):
    """One graph of a sub-graph op and how the op's node feeds it (see the module docstring)."""

    role: str
    graph: Graph
    operands: tuple  # placeholder k receives the node's argument operands[k]

    def inputs(self, args: Sequence) -> list:
        """The values of this graph's placeholders, picked from the node's argument values."""
        return [args[i] for i in self.operands]


class SubgraphOp(abc.ABC):
    """A call target holding sub-graphs (see the module docstring).

    A subclass sets ``name`` (the node's target name, as an ``OpDef``'s) and ``kind``, and
    defines ``regions`` and ``interpret``; ``infer`` and ``params`` have defaults.
    """

    name: str
    kind: str
    holds_program: bool = False
    repeats: bool = False  # the body (first region) runs many times per call: a loop
    carries: tuple = ()  # ((placeholder position, output position), ...) of a loop's body
    in_place: frozenset = frozenset()  # carried placeholders run in the argument's memory
    names: tuple = ()  # the user's name of each output
    source: str | None = None  # file:line of the user's statement
    # the OpDef traits passes read of any call target: a sub-graph op is no view
    may_copy = False
    strided = None

    @property
    @abc.abstractmethod
    def regions(self) -> tuple[Region, ...]:
        """The op's graphs, each with its role and the node arguments its placeholders receive."""

    @abc.abstractmethod
    def interpret(self, run_graph: RunGraph, args: tuple, kwargs: dict) -> Any:
        """The node's value from its argument values; runs the op's graphs with ``run_graph``."""

    @property
    def params(self) -> dict:
        """What dumps and drawings show about the op besides its graphs (name -> value)."""
        return {}

    @property
    def written_arguments(self) -> tuple:
        """Positions of the node's arguments whose memory the op writes in place (default:
        none; its value is new memory)."""
        return ()

    def output_argument(self, output: int) -> int | None:
        """The argument whose memory holds the node's output ``output`` (written in place), or
        None when that output is new memory."""
        return None

    @property
    def bound_symbols(self) -> tuple:
        """The symbols the op binds in its graphs (a loop's index); none by default."""
        return ()

    def region_note(self, region: Region) -> str:
        """What the text form says of ``region`` after its graph's header (``Graph.parse``
        reads it back): how the node's arguments feed it, what a loop carries. Empty by
        default: no comment."""
        return ""

    def trips(self, kwargs: dict) -> range | list | None:
        """The values of the bound symbol, one per trip, when the count is known at compile
        time (unrolling); None otherwise, the default."""
        return None

    def summary(self, kwargs: dict) -> str:
        """One line for reports (``index k0 in [0, s0-1], s0 trips``); empty by default."""
        return ""

    def map_sizes(self, fn: Callable[[Any], Any]) -> None:
        """Replace the symbolic sizes the op itself holds (not its graphs') by ``fn(size)``;
        ``Graph.substitute_sizes`` calls it. The default holds none."""
        return None

    def infer(self, *inputs: Any, **params: Any) -> TensorMeta | TupleMeta:
        """The node's meta: the metas its graphs return, once ``inputs`` (the arguments' metas,
        or literal values) are checked against the placeholders they are bound to."""
        problems = [p for region in self.regions for p in operand_problems(region, inputs)]
        if problems:
            raise ValueError(f"{self.name}: " + "; ".join(problems))
        results = [(region.role, output_meta(region.graph)) for region in self.regions]
        if any(meta != results[0][1] for _, meta in results):
            returned = ", ".join(f"{role} {meta}" for role, meta in results)
            raise ValueError(f"{self.name}: its graphs return different metas ({returned})")
        return results[0][1]


def operand_problems(region: Region, inputs: Sequence) -> Iterator[str]:
    """How the node's ``inputs`` (argument metas, or literal values) disagree with the
    placeholders of ``region``'s graph they are bound to; nothing when they agree."""
    placeholders = region.graph.placeholders
    if len(placeholders) != len(region.operands):
        yield (
            f"{region.role} has {len(placeholders)} placeholders "
            f"but {len(region.operands)} operands"
        )
        return
    for placeholder, index in zip(placeholders, region.operands):
        where = f"{region.role} placeholder %{placeholder.name}"
        if not 0 <= index < len(inputs):
            yield f"{where} is bound to argument {index}, but the node has {len(inputs)}"
            continue
        try:
            meta = _input_meta(inputs[index])
        except TypeError as exc:
            yield f"{where} is bound to argument {index}, which has no meta: {exc}"
            continue
        expected_meta, meta = _simplified(placeholder.meta), _simplified(meta)
        if meta != expected_meta and not _promises_less(expected_meta, meta):
            expected, given = _distinct_texts(placeholder.meta, meta)
            yield f"{where} is {expected} but argument {index} is {given}"


def _simplified(meta: Any) -> Any:
    """``meta`` with the equalities the active trace learned applied (an argument recorded
    before its size was found equal to another, ``x = A @ x``)."""
    env = active()
    if env is None or not env.replacements or not hasattr(meta, "map_sizes"):
        return meta
    return meta.map_sizes(env.simplify)


def _promises_less(placeholder: Any, given: Any) -> bool:
    """A placeholder with no layout promise (``A``) takes an argument of any layout, a
    read-only one a writeable argument (a carried scalar settles as a computed, read-only
    value; its first value may be an argument), and a scalar one any scalar of its type (a
    NumPy scalar literal is read-only, a scalar argument writeable: neither is written)."""
    if not isinstance(placeholder, TensorMeta) or not isinstance(given, TensorMeta):
        return False
    layout = "A" if placeholder.layout == "A" else given.layout
    writeable = given.writeable and placeholder.writeable
    if placeholder.scalar:  # a scalar is never written in place
        writeable = placeholder.writeable
    return placeholder == replace(given, layout=layout, writeable=writeable)


def _input_meta(value: Any) -> TensorMeta | TupleMeta:
    """The meta of a node input as ``infer`` receives it: a meta, or a literal value."""
    return value if isinstance(value, (TensorMeta, TupleMeta)) else meta_of(value)


def output_meta(graph: Graph) -> TensorMeta | TupleMeta:
    """The meta of what ``graph`` returns: its one output's, or a TupleMeta of several."""
    metas = tuple(v.meta if isinstance(v, Node) else meta_of(v) for v in graph.output_node.args[0])
    return metas[0] if len(metas) == 1 else TupleMeta(metas)


def _distinct_texts(a: Any, b: Any) -> tuple[str, str]:
    """``str`` of two metas, or their ``repr`` when the short forms look the same (layouts)."""
    return (str(a), str(b)) if str(a) != str(b) else (repr(a), repr(b))


def regions_of(node: Node) -> tuple[Region, ...]:
    """The regions of the op ``node`` calls; empty for every other node."""
    if node.op == "call" and isinstance(node.target, SubgraphOp):
        return node.target.regions
    return ()


def loop_of(node: Node) -> SubgraphOp | None:
    """The op of ``node`` when it is a loop (``repeats``), else None."""
    if node.op == "call" and isinstance(node.target, SubgraphOp) and node.target.repeats:
        return node.target
    return None


def body_of(op: SubgraphOp) -> Graph:
    """A loop's body: its first region's graph."""
    return op.regions[0].graph


def subgraphs_of(node: Node) -> tuple[Graph, ...]:
    """The graphs ``node``'s op holds, in region order; empty for every other node."""
    return tuple(region.graph for region in regions_of(node))


def has_effects(node: Node) -> bool:
    """Whether running ``node`` does something besides computing its value (a ``print``): its
    op's ``effects``, or a node of a graph it holds that has them."""
    if getattr(node.target, "effects", False):
        return True
    return any(has_effects(inner) for graph in subgraphs_of(node) for inner in graph.nodes)


def data_sizes_used(node: Node) -> set:
    """The lengths the data decide (``u0``) that running ``node`` uses: in its shapes and
    parameters, or in those of the graphs it holds (a loop body reading ``idx.size``)."""
    found = data_sizes_in((node.meta, node.kwargs))
    for graph in subgraphs_of(node):
        for inner in graph.nodes:
            found |= data_sizes_used(inner)
    return found


class Visit(NamedTuple):
    """A node met by ``walk``, with the ops (and their regions) whose graphs hold it."""

    node: Node
    path: tuple  # ((op node, Region), ...) from the outermost graph down to node's graph

    @property
    def depth(self) -> int:
        """0 for a node of the walked graph, 1 inside an op's graph, and so on."""
        return len(self.path)

    @property
    def owner(self) -> Node | None:
        """The node of the op whose graph holds this node; None in the walked graph."""
        return self.path[-1][0] if self.path else None


def walk(graph: Graph, path: tuple = ()) -> Iterator[Visit]:
    """Every node of ``graph`` in order and, right after a node holding sub-graphs, the nodes
    of its graphs (region by region, depth first).

    Example:
        >>> [(v.depth, v.node.name) for v in walk(fused_softmax)]
        [(0, 'x'), (0, 'fused_1'), (1, 'x'), (1, 'amax_1'), ..., (1, 'output'), (0, 'output')]
    """
    for node in graph.nodes:
        yield Visit(node, path)
        for region in regions_of(node):
            yield from walk(region.graph, (*path, (node, region)))


def program_graphs(graph: Graph) -> Iterator[Graph]:
    """``graph``, then every graph nested in it through ops that hold programs (loop bodies;
    not fused kernels' bodies), depth first; lazy like ``graphs_in``."""
    yield graph
    for node in graph.nodes:
        if node.op == "call" and getattr(node.target, "holds_program", False):
            for sub in subgraphs_of(node):
                yield from program_graphs(sub)


def graphs_in(graph: Graph) -> Iterator[Graph]:
    """``graph``, then every graph nested in it, depth first. Lazy: the nodes of a graph are
    read when the walk reaches them, so a caller may edit a graph before its sub-graphs come."""
    yield graph
    for node in graph.nodes:
        for sub in subgraphs_of(node):
            yield from graphs_in(sub)
