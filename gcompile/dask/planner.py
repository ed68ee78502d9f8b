"""The chunk plan: how each fused kernel of a graph (and each elementwise or reduction op left
outside kernels) maps onto dask, decided from the graph alone (the chunks of a call are the
executor's business, ``executor.py``).

* ``blockwise``: elementwise and broadcast kernels, one task per chunk;
* ``whole``: kernels along axes (a row's mean, softmax, ``cumsum``): those axes rechunked into
  one chunk first, then blockwise;
* ``reduce``: reductions (sum, prod, max, min, any, all, mean): a compiled chunk step keeping
  the reduced axes, then dask's tree reduction of the partial results, its combine and
  aggregate steps compiled functions too (``executor._combiner``);
* ``overlap``: slices with offsets (stencils): ``map_overlap`` with the depth the slices need,
  no padding at the array's edges (the slices never read past them);
* ``chain``: steps in turn, each reading the unit's inputs and the outputs of those before it:
  a stencil, then reductions of its values; arrays of the space by ``blockwise``, then the
  reductions of them (``y, y.sum(axis=0)``); a pointwise kernel's outputs sharing no work, a
  ``blockwise`` step each (no tuple per block and item task per output);
* ``numpy``: anything else runs through dask's own NumPy implementation, with a warning.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

from ..ir import ops
from ..ir.graph import Graph, Node
from ..ir.kernel import FusedKernel
from ..ir.symbolic import is_int
from .source import PARTIAL, function_source

# Reductions a tree can combine: the chunk step's op -> the NumPy reduction combining partials,
# each reducing op's own function (a mean: the partial sums' total, divided by the count:
# ``executor``), and the ops running along an axis (the accumulations)
TREE = {op.name: op.impl.__name__ for op in ops.OPS if op.reduces is not None}
TREE.update(PARTIAL)
_ALONG_AXIS = tuple(op.name for op in ops.OPS if op.accumulates is not None) + ("accumulate",)


@dataclass
class Unit:
    """What one dask step computes: a fused kernel, or one op outside kernels."""

    name: str
    style: str  # the kernel's style (``ir/kernel.py``)
    space: tuple
    inputs: list  # the nodes the chunk function takes (a kernel's placeholders)
    nodes: list  # the nodes it computes, in order
    outputs: list  # the nodes it returns
    arguments: tuple  # the graph's values passed for ``inputs``
    mutates: bool = False


@dataclass
class KernelStep:
    """How one unit runs over dask arrays."""

    unit: Unit
    mode: str
    source: str
    whole: tuple = ()  # space axes rechunked into one chunk
    dropped: tuple = ()  # space axes the outputs do not have (reduced, in one chunk)
    depth: dict = field(default_factory=dict)  # overlap: space axis -> (before, after)
    aligned: tuple = ()  # overlap: the inputs read whole, of the result's shape (by position)
    reducers: tuple = ()  # reduce: per output (op name, space axes, keepdims, chunk source)
    reason: str = ""  # numpy: why, with the user's line
    first: KernelStep | None = None  # global reductions computed first, passed as arguments
    parts: tuple = ()  # chain: a stencil or elementwise step, then reductions of its values


def plan_graph(graph: Graph) -> dict:
    """The ``KernelStep`` of each kernel node, and of each elementwise or reduction op, of a
    fused ``graph``."""
    steps = {}
    for node in graph.nodes:
        unit = _unit(node)
        if unit is not None:
            steps[node] = plan_unit(unit)
    return steps


def _unit(node: Node) -> Unit | None:
    if isinstance(node.target, FusedKernel):
        k = node.target
        calls = [n for n in k.graph.nodes if n.op in ("call", "constant")]
        outputs = list(k.graph.output_node.args[0])
        inputs = k.graph.placeholders
        return Unit(node.name, k.style, k.space, inputs, calls, outputs, node.args, k.mutates)
    if node.op != "call" or node.target.kind not in ("elementwise", "reduction"):
        return None
    if node.target.name == "python_scalar":
        return None
    inputs = list(dict.fromkeys(a for a in node.args if isinstance(a, Node)))
    if node.target.kind == "elementwise":
        style, space = "pointwise", node.meta.shape
    else:
        along = node.target.name in _ALONG_AXIS
        style, space = ("row" if along else "reduction"), node.args[0].meta.shape
    return Unit(node.name, style, tuple(space), inputs, [node], [node], tuple(inputs))


def plan_unit(unit: Unit) -> KernelStep:
    """The mapping of one unit (see the module docstring)."""
    source = function_source(unit.name, unit.inputs, unit.nodes, unit.outputs)
    calls = [n for n in unit.nodes if n.op == "call"]
    if unit.mutates:
        return _numpy(unit, source, calls[-1], "writes into an argument's memory")
    odd = [n for n in calls if n.target.kind not in ("elementwise", "reduction", "view")]
    if odd:
        return _numpy(unit, source, odd[0], "has no chunk-by-chunk form")
    views = [n for n in calls if n.target.kind == "view"]
    reductions = [n for n in calls if n.target.kind == "reduction"]
    if views:
        if reductions:
            return _stencil_then_reduce(unit, source, views, reductions)
        return _overlap(unit, source, views)
    if reductions and unit.style == "reduction":
        step = _reduce(unit, reductions) or _arrays_then_reductions(unit, source, reductions)
        if step is not None:
            return step
    if reductions and unit.style == "row":
        step = _split(unit, reductions)
        if step is not None:
            return step
    whole = tuple(sorted({a for n in reductions for a in _space_axes(n, len(unit.space))}))
    if whole and whole == tuple(range(len(unit.space))):
        why = "reduces every axis with no tree form (one chunk would hold the whole array)"
        return _numpy(unit, source, reductions[0], why)
    dropped = _dropped(unit)
    problem = _blockwise_problem(unit, whole, dropped=dropped or ())
    if problem is not None or dropped is None or not set(dropped) <= set(whole):
        culprit = problem or unit.outputs[0]
        return _numpy(unit, source, culprit, "reads or returns arrays not aligned with its space")
    if whole:
        return KernelStep(unit, "whole", source, whole=whole, dropped=dropped)
    parts = _array_steps(unit)
    return parts[0] if len(parts) == 1 else KernelStep(unit, "chain", source, parts=parts)


def _dropped(unit: Unit) -> tuple | None:
    """The space axes the outputs drop (``x.var(axis=1)``): the same for every output (None
    when they differ), each output a reduction without ``keepdims``, or none."""
    found = set()
    for out in unit.outputs:
        reduces = out.op == "call" and out.target.kind == "reduction"
        keeps = not reduces or out.kwargs.get("keepdims") or out.target.name in _ALONG_AXIS
        found.add(() if keeps else _space_axes(out, len(unit.space)))
    return found.pop() if len(found) == 1 else None


def _numpy(unit: Unit, source: str, culprit: Node, why: str) -> KernelStep:
    where = f" ({culprit.source})" if culprit.source else ""
    reason = f"'{culprit.target.name}' in {unit.name} {why}{where}"
    return KernelStep(unit, "numpy", source, reason=reason)


def _space_axes(node: Node, rank: int) -> tuple:
    """The space axes a reduction (or accumulation) node runs along."""
    ndim = len(node.args[0].meta.shape)
    axis = node.kwargs.get("axis")
    axes = range(ndim) if axis is None else (axis,) if isinstance(axis, int) else axis
    return tuple(a % ndim + rank - ndim for a in axes)


def _reduce(unit: Unit, reductions: list) -> KernelStep | None:
    """A tree reduction when every output is a tree-combinable reduction of the whole space."""
    rank = len(unit.space)
    if set(unit.outputs) != set(reductions) or len(unit.outputs) != len(reductions):
        return None
    reducers = []
    for out in unit.outputs:
        if out.target.name not in TREE or len(out.args[0].meta.shape) != rank:
            return None
        keepdims = bool(out.kwargs.get("keepdims"))
        # one chunk function per output: dask's own tree per reduction, no larger a graph
        source = function_source(unit.name, unit.inputs, unit.nodes, [out], partial=True)
        reducers.append((out.target.name, _space_axes(out, rank), keepdims, source))
    if _blockwise_problem(unit, (), check_outputs=False) is not None:
        return None
    return KernelStep(unit, "reduce", reducers[0][3], reducers=tuple(reducers))


def _split(unit: Unit, reductions: list) -> KernelStep | None:
    """A kernel using reductions of its whole space (``x - x.mean()``): those reductions as a
    tree reduction first, then the rest blockwise with their results as arguments (no chunk
    holds the whole array). None when a reduction keeps an axis or reads another."""
    rank = len(unit.space)
    feeding = _ancestors(reductions, unit.nodes)
    if any(_space_axes(r, rank) != tuple(range(rank)) for r in reductions):
        return None
    if any(_ancestors(r.args, unit.nodes) & set(reductions) for r in reductions):
        return None
    nodes = [n for n in unit.nodes if n in feeding]
    first = _reduce(
        Unit(unit.name, "reduction", unit.space, unit.inputs, nodes, reductions, unit.arguments),
        reductions,
    )
    if first is None:
        return None
    rest = [n for n in unit.nodes if n not in reductions]
    inputs = list(unit.inputs) + reductions
    after = Unit(unit.name, "pointwise", unit.space, inputs, rest, unit.outputs, unit.arguments)
    if _blockwise_problem(after, ()) is not None:
        return None
    source = function_source(unit.name, inputs, rest, unit.outputs)
    return KernelStep(after, "blockwise", source, first=first)


def _arrays_then_reductions(unit: Unit, source: str, reductions: list) -> KernelStep | None:
    """A kernel returning arrays of its space and reductions that nothing in it reads
    (``y, y.sum(axis=0), (y * 0.5).mean(axis=1)``): those arrays by ``blockwise`` first, then
    the reductions as trees whose chunk steps read them (each value computed once, and no more
    tasks than dask's own steps for the same ops). None when a reduction is read inside, is
    not a tree's, or an array is not aligned with the space."""
    if not set(reductions) <= set(unit.outputs):
        return None
    if any(r in n.args for n in unit.nodes for r in reductions):
        return None
    arrays = [o for o in unit.outputs if o not in reductions]
    feeding = _ancestors(arrays, unit.nodes)
    nodes = [n for n in unit.nodes if n in feeding]
    first = Unit(unit.name, "pointwise", unit.space, unit.inputs, nodes, arrays, unit.arguments)
    if _blockwise_problem(first, ()) is not None:
        return None
    # the reductions' own work, reading the arrays computed first instead of computing them
    rest = [n for n in unit.nodes if n not in arrays]
    needed = _ancestors(reductions, rest)
    nodes = [n for n in rest if n in needed]
    read = {a for n in nodes for a in n.args}
    inputs = [v for v in [*unit.inputs, *arrays] if v in read]
    ordered = [o for o in unit.outputs if o in reductions]
    second = _reduce(Unit(unit.name, "reduction", unit.space, inputs, nodes, ordered, ()), ordered)
    if second is None:
        return None
    return KernelStep(unit, "chain", source, parts=(*_array_steps(first), second))


def _array_steps(unit: Unit) -> tuple:
    """The ``blockwise`` steps making a pointwise unit's outputs: one per output when they
    share no work but one another (each step reading the unit's inputs and the outputs before
    it that it needs: nothing computed twice, no item task per output, so no more tasks than
    dask's own steps for the ops), else one for all (a tuple per block)."""
    outputs = [n for n in unit.nodes if n in unit.outputs]  # (in the order they are made)
    own = {
        o: _ancestors([o], [n for n in unit.nodes if n is o or n not in outputs]) for o in outputs
    }
    pairs = itertools.combinations(outputs, 2)
    shared = any(n.op == "call" for a, b in pairs for n in own[a] & own[b])  # (constants: no work)
    if len(outputs) < 2 or shared or len(outputs) != len(unit.outputs):
        source = function_source(unit.name, unit.inputs, unit.nodes, unit.outputs)
        return (KernelStep(unit, "blockwise", source),)
    steps = []
    for output in outputs:
        nodes = [n for n in unit.nodes if n in own[output]]
        read = {a for n in nodes for a in n.args}
        inputs = [*unit.inputs, *(o for o in outputs if o in read)]
        part = Unit(unit.name, unit.style, unit.space, inputs, nodes, [output], ())
        steps.append(
            KernelStep(part, "blockwise", function_source(unit.name, inputs, nodes, [output]))
        )
    return tuple(steps)


def _stencil_then_reduce(unit: Unit, source: str, views: list, reductions: list) -> KernelStep:
    """Reductions of a stencil's values (``(x[1:] - x[:-1]).sum()``): the stencil by
    ``map_overlap``, returning what the reductions read, then the reductions as a tree."""
    refused = _numpy(unit, source, reductions[0], "reduces slices in a way dask cannot chunk")
    if any(
        r not in unit.outputs or _ancestors(r.args, unit.nodes) & set(reductions)
        for r in reductions
    ):
        return refused
    rest = [n for n in unit.nodes if n not in reductions]
    read = [a for r in reductions for a in r.args if isinstance(a, Node)]
    needed = list(dict.fromkeys(read + [o for o in unit.outputs if o not in reductions]))
    stencil = Unit(unit.name, "pointwise", unit.space, unit.inputs, rest, needed, unit.arguments)
    first = _overlap(stencil, function_source(unit.name, unit.inputs, rest, needed), views)
    then = Unit(unit.name, "reduction", unit.space, needed, reductions, reductions, ())
    second = _reduce(then, reductions) if first.mode == "overlap" else None
    if second is None:
        return refused
    return KernelStep(unit, "chain", source, parts=(first, second))


def _ancestors(roots, nodes: list) -> set:
    """The nodes among ``nodes`` that ``roots`` are or read, directly or not."""
    inside = set(nodes)
    found: set = set()
    stack = [r for r in roots if isinstance(r, Node) and r in inside]
    while stack:
        node = stack.pop()
        if node not in found:
            found.add(node)
            stack += [a for a in node.args if isinstance(a, Node) and a in inside]
    return found


def _blockwise_problem(
    unit: Unit, whole: tuple, check_outputs=True, dropped: tuple = ()
) -> Node | None:
    """The first node whose shape does not line up with the space's blocks, or None.

    Inputs align right with the space (each size that size, or 1); outputs are the space
    without the ``dropped`` axes (each size that size, or 1 along an axis in one chunk)."""
    rank = len(unit.space)
    kept = [a for a in range(rank) if a not in dropped]
    values = [(p, range(rank), True) for p in unit.inputs]
    if check_outputs:
        values += [(o, kept, False) for o in unit.outputs]
    for value, axes, is_input in values:
        shape = getattr(value.meta, "shape", ())
        if getattr(value.meta, "scalar", False) and is_input:
            continue
        if len(shape) > len(axes) or (not is_input and len(shape) != len(axes)):
            return _culprit(value, unit)
        for axis, size in zip(list(axes)[len(axes) - len(shape) :], shape):
            if size != unit.space[axis] and not (size == 1 and (is_input or axis in whole)):
                return _culprit(value, unit)
    return None


def _culprit(value: Node, unit: Unit) -> Node:
    """The op to name for ``value``: itself when it is computed here, else its first reader."""
    if value in unit.nodes:
        return value
    return next((n for n in unit.nodes if n.op == "call" and value in n.args), unit.nodes[0])


def _overlap(unit: Unit, source: str, views: list) -> KernelStep:
    """A stencil: every array argument read only through unit-step slices of one shape, or
    read whole with the result's shape (a coefficient per result element: ``aligned``)."""
    bases = {v.args[0] for v in views}
    base_shape = views[0].args[0].meta.shape
    starts: dict = {}
    for view in views:
        index = view.kwargs.get("index", ())
        ok = view.target.name == "getitem" and view.args[0] in unit.inputs
        ok = ok and all(isinstance(i, slice) and i.step in (None, 1) for i in index)
        if not ok:
            return _numpy(unit, source, view, "is a view other than a unit-step slice")
        if view.args[0].meta.shape != base_shape or view.meta.shape != unit.space:
            why = "slices arrays of different shapes (an overlap needs one shape, one depth)"
            return _numpy(unit, source, view, why)
        for axis, part in enumerate(index):
            start = 0 if part.start is None else part.start
            if not is_int(start) or start < 0:
                return _numpy(unit, source, view, "slices from the end")
            starts.setdefault(axis, []).append(start)
    aligned = []
    for position, p in enumerate(unit.inputs):
        direct = [n for n in unit.nodes if n.op == "call" and p in n.args and n not in views]
        if p in bases and direct:
            return _numpy(unit, source, _culprit(p, unit), "mixes slices and whole arrays")
        if p not in bases and not getattr(p.meta, "scalar", False):
            shape = p.meta.shape
            if not shape or shape != unit.space[len(unit.space) - len(shape) :]:
                why = "mixes slices and whole arrays not of the result's shape"
                return _numpy(unit, source, _culprit(p, unit), why)
            aligned.append(position)
    depth = {}
    for axis, found in starts.items():
        shrink = base_shape[axis] - unit.space[axis]
        if not is_int(shrink):
            return _numpy(unit, source, views[0], "slices by a symbolic amount")
        if shrink:
            depth[axis] = (min(found), shrink - min(found))
    return KernelStep(unit, "overlap", source, depth=depth, aligned=tuple(aligned))
