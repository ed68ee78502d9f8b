"""Fusion: group ops into kernels that read their inputs once and write their outputs once.

    %sub_1 : f32[64,128] = subtract(%x, %amax_1)          %fused_1 : f32[64,128] = fused_1(%x)
    %exp_1 : f32[64,128] = exp(%sub_1)              =>        graph fused_1(x: f32[64,128]):
    ...                                                         ...

Groups (``ir/kernel.py`` names the loop structure of each):

* **pointwise**: elementwise ops over one iteration space (the output shape),
  vertical (producer into consumer) and, through a common consumer or shared
  inputs, horizontal; several outputs allowed. Broadcast inputs, Python scalars,
  casts, ``where``/``clip`` are ordinary members. Views of values computed
  *outside* the group (slices, transposes, broadcasts, reshapes that are views)
  are cloned into the kernel as index maps of its inputs, never materialised.
* **reduction**: elementwise producers plus reductions of one space and one set
  of axes (``np.sum(a * b + c)`` reads a, b, c once, no temporary).
* **row**: reductions over the trailing axes whose results are broadcast back over
  the same rows (softmax, log-softmax, layernorm, RMSNorm, logsumexp,
  standardisation): one kernel over rows, in phases; per-row scalar ops (shape
  rows x 1) belong to it too.
* **epilogue**: a pointwise group consuming a ``matmul`` result of its space; the
  matmul stays a BLAS call and the kernel may write into its buffer.

Legality: a group must be *convex* — no path may leave the group and come back.
Counterexample: ``a = exp(x); b = matmul(a, w); c = a + b``. Grouping ``{a, c}``
would need ``b`` (outside) after ``a`` and before ``c``, inside one kernel: a cycle
between the kernel and the matmul. Two groups that are each convex can still need
each other (``y1 = exp(p).T + q`` and ``x2 = sin(q).T + p`` grouped by input), so
every merge is checked on the graph of groups: it must stay acyclic, which
implies convexity.

A reduction's result is never consumed inside the loop that produces it (the
mis-fusion behind numba#9139): in a reduction group its consumers stay outside;
in a row group they run in a later phase over the row.

Limits: at most ``max_kernel_ops`` ops per kernel (option, default 64), and no
sibling merge that raises the graph's peak memory. Every edge between a kernel
and a node outside it gets a reason in the fusion report (``graph.notes.fusion``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..ir import ops
from ..ir.alias import alias_chain, alias_parent, readers, root
from ..ir.graph import Graph, Node, map_arg, renamed_sizes
from ..ir.kernel import FusedKernel
from ..ir.meta import normalize_axes
from ..ir.shape_env import SymbolicError, data_sizes_in, decide, decide_in_loops, hint, using
from ..ir.symbolic import free_symbols, is_expr
from .dce import dce

MAX_KERNEL_OPS = 64
SIBLING_WINDOW = 256  # nodes between two groups that sibling fusion pairs (``merge_siblings``)
SIBLING_WALKS = 2_000_000  # kernels the cycle checks of sibling fusion visit at most (~2 s)


@dataclass
class Boundary:
    """Why ``producer``'s value crosses a kernel boundary on its way to ``consumer``."""

    producer: str
    consumer: str
    reason: str

    def __str__(self) -> str:
        return f"%{self.producer} -> %{self.consumer}: {self.reason}"


@dataclass
class FusionReport:
    """The groups formed and the reason for every boundary that stopped one from growing."""

    kernels: list = field(default_factory=list)  # (name, style, space, member op names)
    boundaries: list = field(default_factory=list)
    notes: list = field(default_factory=list)  # merges refused for other reasons (peak memory)

    def __str__(self) -> str:
        lines = ["fusion report:"]
        for name, style, space, members in self.kernels:
            lines.append(f"  kernel {name} ({style}, space {list(space)}): {', '.join(members)}")
        if not self.kernels:
            lines.append("  no kernels")
        lines += ["  boundary " + str(b) for b in self.boundaries]
        lines += ["  " + note for note in self.notes]
        return "\n".join(lines)


@dataclass(eq=False)
class _Group:
    nodes: list
    space: tuple
    style: str
    axes: tuple | None = None  # reduced axes (reduction and row groups)
    reduced: set = field(default_factory=set)  # members that are reductions or read one

    @property
    def rows(self) -> tuple:
        """Shape of a per-row value (reduced axes kept as 1)."""
        return tuple(1 if i in self.axes else s for i, s in enumerate(self.space))


def _pointwise(node: Node) -> bool:
    return (
        node.op == "call"
        and node.kind == "elementwise"
        and not node.meta.weak
        and node.meta.ndim > 0
    )


def _reduction(node: Node) -> bool:
    return (
        node.op == "call"
        and getattr(node.target, "loop_reduction", False)
        and isinstance(node.args[0], Node)
        and node.args[0].meta.ndim > 0
        and _not_empty(node)
    )


def _not_empty(node: Node) -> bool:
    """A reduction's input is not empty, or the reduction has an identity and its input is
    empty on some trips of a loop only (``sum(A[i, :i])``), or it is of a length the data
    decide (``x[m].sum()``, ``np.bincount(x).max()``): the kernel's loop runs no time."""
    size = node.args[0].meta.size
    if data_sizes_in(size):  # (a length the data decide: the loop may run no time; NumPy's
        return True  # error for no element is the tracer's check node after it)
    if node.target.identity is not None:
        if node.graph.repeated:  # (in a loop body, where a program has no other template for
            return True  # it: the kernel's loop runs no time on an empty input, as on a trip)
        answer = decide_in_loops(">", size, 0, "an empty reduction")
        if answer is not None or _varies_by_trip(size, node.graph):
            return answer is not False
    try:
        return decide(">", size, 0, "an empty reduction")
    except SymbolicError:  # no answer for every trip of a loop (A[i:].mean(axis=0)): unfused
        return False


def _varies_by_trip(size, graph: Graph) -> bool:
    return is_expr(size) and bool(free_symbols(size) & set(graph.shape_env.loops))


def _axes(node: Node) -> tuple:
    return normalize_axes(node.kwargs.get("axis"), node.args[0].meta.ndim)


def _trailing(axes: tuple, ndim: int) -> bool:
    return bool(axes) and axes == tuple(range(ndim - len(axes), ndim))


def _describe(node: Node) -> str:
    if node.kind == "matmul":
        return f"not an elementwise op: {node.target.name} is a library call (BLAS)"
    if node.kind == "reduction":
        return f"{node.target.name} is not a fusible reduction"
    if node.target is ops.WRITEBACK:
        return "written back into the caller's array after the kernel"
    if node.kind == "scatter":
        return f"{node.target.name} writes a region of an array (not fused)"
    if node.kind == "view":
        return f"{node.target.name} copies its input here (not a view)"
    return f"not fused: {node.target.name} ({node.kind})"


class _Fuser:
    def __init__(self, graph: Graph, max_ops: int):
        self.graph = graph
        self.max_ops = max_ops
        self.order = {node: i for i, node in enumerate(graph.nodes)}
        self.group_of: dict[Node, _Group] = {}
        self.groups: list[_Group] = []
        self.reasons: dict[tuple[Node, Node], str] = {}
        self.notes: list[str] = []
        self.walked = 0  # kernels the cycle checks visited (``SIBLING_WALKS``)
        self._allocations: list | None = None  # (``_peak_bytes``: made once, when first asked)
        self._peak: int | None = None  # the peak bytes of ``group_of`` (None: to compute)
        self._roots: dict[Node, Node | None] = {}
        # a node making a length the data decide -> the nodes using it without a data edge
        self._length_users: dict[Node, list] = {}
        for binder, user in graph.length_edges():
            self._length_users.setdefault(binder, []).append(user)
        # (``_horizon`` assumes every edge leads to a later node)
        self._backward_length_edge = any(
            self.order[user] < self.order[binder]
            for binder, users in self._length_users.items()
            for user in users
        )

    # -- producers as seen through views ---------------------------------------------------------
    def _producer(self, value: Node) -> tuple:
        """``(node, group, read_shape, refusal)``: whose value a consumer reads through ``value``.

        A view of a value outside every group is an index map of a kernel input. A view of a
        value computed in a group is allowed only when it merely adds or drops size-1 axes of a
        per-row value (``m[:, None]``, ``m[..., 0]``); otherwise ``refusal`` says why the
        consumer cannot join that group.
        """
        node, views = alias_chain(value)
        group = self.group_of.get(node)
        reorders = (
            views
            and not (
                node in group.reduced
                and all(_only_reshapes(v) for v in views)
                and _same_values(value.meta.shape, node.meta.shape)
            )
            if group is not None
            else False
        )
        refusal = (
            "view of a value computed in the kernel (would reorder its loop)" if reorders else None
        )
        return node, group, value.meta.shape, refusal

    def _view_root(self, node: Node) -> Node | None:
        """The owner of a view's memory (None for a value that owns it), memoised per run."""
        if node not in self._roots:
            self._roots[node] = root(node) if alias_parent(node) is not None else None
        return self._roots[node]

    # -- legality -----------------------------------------------------------------------------------
    def _no_cycle_through(self, merged: "_Group", group_of: dict) -> bool:
        """Whether the kernels formed by ``group_of`` can still run in some order.

        The graph of groups was acyclic before ``merged`` was formed, so a new cycle must pass
        through ``merged``: walk forward from it. (Positions cannot prune the walk: entering a
        group at a late member and leaving from an early one jumps back.) No cycle implies
        ``merged`` is convex (a path out and back in is a cycle). A view of a member read back
        inside its own group is cloned into the kernel, so it adds no edge. A use of a length
        the data decide is an edge from the node making it (``Graph.length_edges``).
        """

        def unit(node):
            return group_of.get(node, node)

        def successors(u):
            for node in u.nodes if isinstance(u, _Group) else (u,):
                home = unit(self._view_root(node))
                for user in (*node.users, *self._length_users.get(node, ())):
                    target = unit(user)
                    if target is not u and target is not home:
                        yield target

        horizon = self._horizon(merged)
        seen: set = set()
        pending = list(successors(merged))
        try:
            while pending:
                current = pending.pop()
                if current is merged:
                    return False
                if current in seen or self._first(current) > horizon:
                    continue
                seen.add(current)
                pending.extend(successors(current))
            return True
        finally:
            self.walked += len(seen)

    def _first(self, unit) -> int:
        """The position of a kernel's first member, or of a node left alone."""
        return self.order[unit.nodes[0] if isinstance(unit, _Group) else unit]

    def _horizon(self, merged: "_Group") -> float:
        """A position past which no path leads back into ``merged``: edges lead to later nodes,
        and a path moves back only through a kernel, entered at a late member and left from an
        early one; so past the last member of ``merged`` and of every kernel spanning across
        that position (to a fixed point), the positions only grow. (Without this bound each
        check walked the rest of the graph: quadratic in a loop unrolled at trace time.)"""
        if self._backward_length_edge:
            return float("inf")
        inside = set(merged.nodes)
        spans = [
            (self.order[g.nodes[0]], self.order[g.nodes[-1]])
            for g in self.groups
            if g.nodes[0] not in inside
        ]
        horizon = self.order[merged.nodes[-1]]
        while True:
            reach = max((last for first, last in spans if first <= horizon < last), default=None)
            if reach is None:
                return horizon
            horizon = reach

    def _legal(self, merged: "_Group") -> bool:
        return (
            _reads_ok(merged)
            and _rows_consistent(merged)
            and self._no_cycle_through(
                merged, {**self.group_of, **{n: merged for n in merged.nodes}}
            )
        )

    def _join(
        self, groups: list, node: Node, style: str, space: tuple, axes, reduced: bool
    ) -> _Group | None:
        """Merge ``groups`` and ``node`` into one group if that is legal (size cap, convexity).

        A vertical merge removes the intermediate between producer and consumer, so only
        sibling merges are checked against peak memory (``_merge_pair``).
        """
        members = sorted([n for g in groups for n in g.nodes] + [node], key=self.order.__getitem__)
        if len(members) > self.max_ops:
            return self._refuse(groups, node, f"size cap ({self.max_ops} ops per kernel)")
        merged = _Group(members, space, style, axes, set().union(*(g.reduced for g in groups)))
        if reduced:
            merged.reduced.add(node)
        if not _rows_consistent(merged):
            reason = "reads per row a value the kernel broadcasts along its reduced axes"
            return self._refuse(groups, node, reason)
        if not self._legal(merged):
            return self._refuse(
                groups,
                node,
                "would create a cycle through a node outside the kernel (a group must be convex)",
            )
        self.groups = [g for g in self.groups if all(g is not other for other in groups)] + [merged]
        self.group_of.update({n: merged for n in members})
        return merged

    def _refuse(self, groups: list, node: Node, reason: str) -> None:
        """Record ``reason`` on every edge from ``groups`` into ``node`` (direct or through views)."""
        for value in node.all_input_nodes:
            owner = root(value)
            if any(owner in g.nodes for g in groups):
                self.reasons.setdefault((owner, node), reason)
        return None

    def merge_siblings(self) -> None:
        """Horizontal fusion: groups of one space that read a common input become one kernel.

        The groups are taken in the order they start; each is offered to the ones starting
        after it, and a merged group to those after the one it took, never again to those
        before it (a pair the merge would now allow is left apart: fewer kernels merged, only
        conservative; rescanning every pair after each merge took minutes on unrolled loops).
        Only groups starting within ``SIBLING_WINDOW`` nodes of each other's end are paired: a
        loop unrolled at trace time (hundreds of small kernels reading one matrix) would
        otherwise try every pair, each with a walk of the graph (minutes).
        """
        groups = sorted(self.groups, key=lambda g: self.order[g.nodes[0]])
        i = 0
        while i < len(groups):
            merged = self._merge_with_later(groups, i)
            if merged is None:
                i += 1  # (the groups before it were paired with it already)
            elif merged is False:
                return
            else:
                groups[i] = merged  # (it starts where the first did: the order holds)

    def _merge_with_later(self, groups: list, i: int) -> Any:
        """The group that ``groups[i]`` and the first later group it merges with became (that
        one removed from ``groups``), None when it merges with none, False when sibling fusion
        must stop (too many cycle checks)."""
        first = groups[i]
        last = self.order[first.nodes[-1]]
        for j in range(i + 1, len(groups)):
            second = groups[j]
            if self.order[second.nodes[0]] - last > SIBLING_WINDOW:
                return None  # (and the groups after it: they start later still)
            if self.walked > SIBLING_WALKS:
                self.notes.append(
                    f"sibling fusion stopped: its cycle checks visited {self.walked} "
                    f"kernels (more than {SIBLING_WALKS}: a loop unrolled at trace time?)"
                )
                return False
            if self._merge_pair(first, second):
                del groups[j]
                return self.groups[-1]
        return None

    def _inputs(self, group: _Group) -> set:
        inside = set(group.nodes)
        return {root(v) for n in group.nodes for v in n.all_input_nodes if root(v) not in inside}

    def _merge_pair(self, first: _Group, second: _Group) -> bool:
        style = _sibling_style(first, second)
        if style is None or len(first.nodes) + len(second.nodes) > self.max_ops:
            return False
        first_inputs, second_inputs = self._inputs(first), self._inputs(second)
        # Only a shared *array* is worth a merge (it is then read once); a shared scalar is not.
        if not any(getattr(v.meta, "ndim", 0) > 0 for v in first_inputs & second_inputs):
            return False
        if second_inputs & set(first.nodes) or first_inputs & set(second.nodes):
            return False  # producer and consumer, not siblings: placement already decided
        members = sorted(first.nodes + second.nodes, key=self.order.__getitem__)
        merged = _Group(
            members, first.space, style, first.axes or second.axes, first.reduced | second.reduced
        )
        if not self._legal(merged):
            return False
        if self._allocations is None:
            self._allocations = _allocations(self.order)
        if self._peak is None:
            self._peak = _peak_bytes(self.order, self.group_of, self._allocations)
        trial = {**self.group_of, **{n: merged for n in members}}
        before, after = self._peak, _peak_bytes(self.order, trial, self._allocations)
        if after > before:
            self.notes.append(
                f"not merged: kernels with %{first.nodes[-1].name} and %{second.nodes[-1].name} "
                f"(siblings) would raise peak memory from {before} to {after} bytes"
            )
            return False
        self.groups = [g for g in self.groups if g is not first and g is not second] + [merged]
        self.group_of.update({n: merged for n in members})
        self._peak = after
        return True

    def _new(self, node: Node, style: str, space: tuple, axes=None) -> None:
        group = _Group([node], space, style, axes, {node} if axes is not None else set())
        self.groups.append(group)
        self.group_of[node] = group

    # -- placing nodes ------------------------------------------------------------------------------------
    def place_pointwise(self, node: Node) -> None:
        """Join the groups of ``node``'s producers where legal (vertical fusion), else start a group."""
        shape = node.meta.shape
        joinable: list[_Group] = []
        rejected: list[_Group] = []
        needs_rows = reduced = False
        for value in node.all_input_nodes:
            producer, group, read_shape, reason = self._producer(value)
            if group is None or any(group is g for g in rejected):
                continue
            after_reduction = producer in group.reduced
            reason = reason or _fits(group, shape, after_reduction)
            if reason is None and after_reduction and not _row_aligned(read_shape, shape, group):
                reason = "reads a reduction result from other rows (not aligned with its rows)"
            if (
                reason is None
                and group.axes
                and any(g.axes and (g.axes, g.space) != (group.axes, group.space) for g in joinable)
            ):
                reason = "reductions over different axes or spaces"
            if reason:
                self.reasons.setdefault((producer, node), reason)
                rejected.append(group)
                joinable = [g for g in joinable if g is not group]
                continue
            if not any(group is g for g in joinable):
                joinable.append(group)
            needs_rows |= after_reduction or group.style == "row"
            reduced |= after_reduction
        if not joinable:
            style = "epilogue" if self._reads_matmul(node) else "pointwise"
            self._new(node, style, shape)
            return
        carrier = next((g for g in joinable if g.axes), None)
        if needs_rows:
            style = "row"
        elif carrier is not None:
            style = "reduction"
        elif self._reads_matmul(node) or any(g.style == "epilogue" for g in joinable):
            style = "epilogue"
        else:
            style = "pointwise"
        space = carrier.space if carrier is not None else shape
        axes = carrier.axes if carrier is not None else None
        if self._join(joinable, node, style, space, axes, reduced):
            return
        # All producers together are too big or not convex: join the latest one alone if that works.
        latest = max(joinable, key=lambda g: self.order[g.nodes[-1]])
        alone_rows = latest.style == "row" or any(p in latest.reduced for p in node.all_input_nodes)
        alone_style = "row" if alone_rows else latest.style
        if len(joinable) > 1 and self._join(
            [latest],
            node,
            alone_style,
            latest.space if latest.axes else shape,
            latest.axes,
            alone_rows,
        ):
            return
        self._new(node, "epilogue" if self._reads_matmul(node) else "pointwise", shape)

    def _reads_matmul(self, node: Node) -> bool:
        return any(
            v.kind == "matmul" and v.meta.shape == node.meta.shape for v in node.all_input_nodes
        )

    def place_reduction(self, node: Node) -> None:
        """Join the group producing the reduced value (same space and axes), else start a group."""
        space = node.args[0].meta.shape
        axes = _axes(node)
        producer, group, _, reason = self._producer(node.args[0])
        if group is not None:
            after_reduction = producer in group.reduced
            reason = reason or self._reduction_fits(group, space, axes, after_reduction)
            if reason:
                self.reasons.setdefault((producer, node), reason)
            else:
                style = "row" if after_reduction or group.style == "row" else "reduction"
                if self._join([group], node, style, space, axes, True):
                    return
        self._new(node, "reduction", space, axes)

    def _reduction_fits(
        self, group: _Group, space: tuple, axes: tuple, after_reduction: bool
    ) -> str | None:
        if group.space != space:
            return f"shape mismatch {list(group.space)} vs {list(space)}"
        if group.axes is not None and group.axes != axes:
            return f"reductions over different axes {list(group.axes)} vs {list(axes)}"
        if after_reduction and not _trailing(axes, len(space)):
            return "reduction output consumed in its own loop (it reduces leading axes, not rows)"
        return None


def _rows_consistent(group: _Group) -> bool:
    """Whether no member of a row kernel is read both per row and broadcast along the reduced
    axes: ``c`` in ``d = sum(a * c, axis=1)`` then ``c * d`` is ``c[j]`` in the first and
    ``c[i]`` in the second (NumPy broadcasts a lower-rank array along the trailing axes), one
    value the kernel cannot hold for both."""
    if group.style != "row":
        return True
    full, members = len(group.space), set(group.nodes)
    for member in group.nodes:
        if member in group.reduced or member.meta.ndim >= full:
            continue
        ranks = {user.meta.ndim == full for user in member.users if user in members}
        if ranks == {True, False}:
            return False
    return True


def _sibling_style(a: _Group, b: _Group) -> str | None:
    """The style of a kernel doing ``a`` and ``b`` in one pass over their space, or None."""
    if a.space != b.space:
        return None
    styles = {a.style, b.style}
    if len(styles) == 1:
        return a.style if a.axes == b.axes or None in (a.axes, b.axes) else None
    if styles in ({"pointwise", "reduction"}, {"pointwise", "row"}, {"pointwise", "epilogue"}):
        return (styles - {"pointwise"}).pop()
    return None


def _only_reshapes(view: Node) -> bool:
    """A view that can only add or drop axes, never reorder elements (no steps, no transposes)."""
    if view.target in (ops.EXPAND_DIMS, ops.SQUEEZE, ops.RESHAPE):
        return True
    if view.target is ops.GETITEM:
        return all(not isinstance(i, slice) or i == slice(None) for i in view.kwargs["index"])
    return False


def _row_aligned(read_shape: tuple, consumer_shape: tuple, group: "_Group") -> bool:
    """A per-row value of ``read_shape``, broadcast into ``consumer_shape``, lines up with the rows.

    ``x - s`` with ``s = x.sum(-1)`` (no keepdims) broadcasts ``s`` along the *columns*: element
    (i, j) would read row j's sum, so the read is not a row pattern even when shapes fit.
    """
    squeezed = tuple(s for i, s in enumerate(group.space) if i not in group.axes)
    if len(consumer_shape) == len(group.space):
        target = group.rows
    elif tuple(consumer_shape) == squeezed:
        target = squeezed
    else:
        return False
    if len(read_shape) > len(target):
        return False
    padded = (1,) * (len(target) - len(read_shape)) + tuple(read_shape)
    if padded == tuple(consumer_shape):
        return True  # read element by element in the consumer's own space
    return all(r == t or r == 1 for r, t in zip(padded, target))


def _same_values(view_shape: tuple, shape: tuple) -> bool:
    """A view only adds or drops size-1 axes (``m[:, None]``, ``m[..., 0]`` of a keepdims result)."""
    return [s for s in view_shape if s != 1] == [s for s in shape if s != 1]


def _used_outside(node: Node, inside: set) -> bool:
    """Whether a value outside ``inside`` reads ``node`` (a view read only by members does not count)."""
    for user in node.users:
        if user in inside:
            continue
        if alias_parent(user) is None or _used_outside(user, inside):
            return True
    return False


def _allocations(order: dict) -> list:
    """``(node, bytes, readers)`` of each node that may allocate an array (a call making no
    view and no scalar), for ``_peak_bytes`` (the graph does not change while fusion plans)."""
    return [
        (node, hint(node.meta.nbytes), readers(node))  # (the traced sizes stand for all)
        for node in order
        if node.op == "call" and not node.meta.scalar and alias_parent(node) is None
    ]


def _peak_bytes(order: dict, group_of: dict, allocations: list) -> int:
    """Peak bytes of intermediate arrays when each group runs as one step at its last member.

    Values computed and consumed inside one group are never allocated; views cost nothing.
    """
    step: dict = {}
    for node, position in order.items():
        unit = group_of.get(node, node)
        if step.get(unit, -1) < position:
            step[unit] = position
    events: dict[int, int] = {}
    for node, nbytes, node_readers in allocations:
        unit = group_of.get(node, node)
        reads = [step[u] for u in (group_of.get(r, r) for r in node_readers) if u is not unit]
        if not reads and unit is not node:
            continue
        made = step[unit]
        events[made] = events.get(made, 0) + nbytes
        last = max(reads, default=made) + 1
        events[last] = events.get(last, 0) - nbytes
    peak = live = 0
    for position in sorted(events):
        live += events[position]
        peak = max(peak, live)
    return peak


def _reads_ok(group: "_Group") -> bool:
    """Every read inside ``group`` can be done by its loops; recomputes ``group.reduced``.

    A member may read another member through views only if that value comes from a
    reduction of a row kernel over trailing axes, is aligned with the rows, and the views
    only add or drop size-1 axes. Checked on the whole group, since merging groups brings
    together reads that were each placed legally.
    """
    inside = set(group.nodes)
    reduced: set = set()
    rows = group.style == "row" and _trailing(group.axes or (), len(group.space))
    for member in group.nodes:
        for value in member.all_input_nodes:
            owner, views = alias_chain(value)
            if owner not in inside:
                continue
            if owner not in reduced:
                if views:
                    return False  # a view of a value computed in the kernel reorders its loop
                continue
            if not rows or not all(_only_reshapes(v) for v in views):
                return False
            if not _same_values(value.meta.shape, owner.meta.shape):
                return False
            if member.target.loop_reduction:
                if value.meta.shape != group.space:
                    return False
            elif not _row_aligned(value.meta.shape, member.meta.shape, group):
                return False
            reduced.add(member)
        if member.target.loop_reduction:
            reduced.add(member)
    group.reduced = reduced
    return True


def _fits(group: _Group, shape: tuple, after_reduction: bool) -> str | None:
    """Why an elementwise op of ``shape`` cannot join ``group``, or None.

    Reading a reduction's result (``after_reduction``) is legal only in a row kernel: the
    reduction must run over trailing axes, and the reader iterates the same rows later.
    """
    rows = group.rows if group.axes is not None else None
    row_forms = (
        group.space,
        rows,
        rows and tuple(s for i, s in enumerate(group.space) if i not in group.axes),
    )
    if after_reduction:
        if not _trailing(group.axes, len(group.space)):
            return "reduction output consumed in its own loop (it reduces leading axes, not rows)"
        return (
            None if shape in row_forms else f"shape mismatch {list(group.space)} vs {list(shape)}"
        )
    if group.style == "row":
        return (
            None if shape in row_forms else f"shape mismatch {list(group.space)} vs {list(shape)}"
        )
    if shape != group.space:
        return f"shape mismatch {list(group.space)} vs {list(shape)}"
    return None


def _outline(graph: Graph, group: _Group) -> Node:
    """Replace ``group``'s nodes by one kernel node; returns it."""
    inside = set(group.nodes)
    sub = Graph("fused", graph.shape_env)
    mapping: dict[Node, Node] = {}
    inputs: list[Node] = []

    def value_in_kernel(value):
        if not isinstance(value, Node):
            return value
        if value in mapping:
            return mapping[value]
        if value not in inside and alias_parent(value) is not None:  # a view: an index map
            base = value_in_kernel(value.args[0])
            mapping[value] = sub.call(value.target, (base,), value.kwargs, source=value.source)
            return mapping[value]
        mapping[value] = sub.placeholder(value.name, value.meta)
        inputs.append(value)
        return mapping[value]

    for node in group.nodes:
        args = map_arg(node.args, value_in_kernel)
        mapping[node] = sub.call(node.target, args, node.kwargs, source=node.source, name=node.name)
    outputs = [n for n in group.nodes if _used_outside(n, inside)]
    sub.output(tuple(mapping[o] for o in outputs))
    inplace = (
        _product_overwritten(group, inputs, outputs[-1]) if group.style == "epilogue" else None
    )
    members = tuple(n.target.name for n in group.nodes)
    # the copies' metas are inferred again, with what the trace knows now (max(s0-3,0) may be
    # s0-3): the space takes the same forms, so that it matches their shapes
    renamed = renamed_sizes((node.meta, mapping[node].meta) for node in group.nodes)
    space = tuple(renamed.get(size, size) for size in group.space)
    kernel = FusedKernel("fused", group.style, space, sub, members, inplace)
    with graph.inserting_after(group.nodes[-1]):  # where the group's last op was
        node = graph.call(kernel, tuple(inputs), {})  # its meta is what ``sub`` returns
    kernel.name = sub.name = node.name
    with graph.inserting_after(node):
        projections = [
            node if len(outputs) == 1 else graph.call(ops.KERNEL_OUTPUT, (node,), {"item": i})
            for i in range(len(outputs))
        ]
    for output, projection in zip(outputs, projections):
        for user in list(output.users):
            if user not in inside:
                user.replace_input_with(output, projection)
    _erase_members(graph, group, inside)
    return node


def _product_overwritten(group: _Group, inputs: list, result: Node) -> int | None:
    """The input an epilogue's result may overwrite: a product that only a member reads,
    element for element (a product read through a view, ``q[:, :1]`` broadcast along a row, is
    still needed after the loop has written over the elements it reads)."""
    inplace = None
    for i, value in enumerate(inputs):
        if (
            value.kind == "matmul"
            and len(value.users) == 1
            and next(iter(value.users)) in set(group.nodes)
            and value.meta == result.meta
        ):
            inplace = i
    return inplace


def _erase_members(graph: Graph, group: _Group, inside: set) -> None:
    """Erase the group's members, and with them the views of members that only members read
    (cloned into the kernel)."""
    doomed = set(group.nodes)
    frontier = [u for n in group.nodes for u in n.users]
    while frontier:
        user = frontier.pop()
        if (
            user not in doomed
            and alias_parent(user) is not None
            and not _used_outside(user, inside)
        ):
            doomed.add(user)
            frontier.extend(user.users)
    while doomed:  # (users first: those left are read by members only)
        unread = [member for member in doomed if not member.users]
        if not unread:
            raise AssertionError(f"members of a kernel read outside it: {sorted(map(str, doomed))}")
        for member in unread:
            graph.erase(member)
        doomed.difference_update(unread)


def _boundaries(fuser: _Fuser) -> list[Boundary]:
    """A reason for every edge between a group and a node outside it (looking through views)."""
    boundaries = []
    seen = set()
    for node in fuser.order:
        if node.op != "call" or node.meta.weak or node.meta.scalar and node.kind != "reduction":
            continue
        if alias_parent(node) is not None:  # a view: its readers are the producer's readers
            continue
        producer_group = fuser.group_of.get(node)
        for user in readers(node):
            if user.op != "call":
                continue
            consumer_group = fuser.group_of.get(user)
            if producer_group is consumer_group:
                continue
            reason = fuser.reasons.get((node, user))
            if reason is None:
                if consumer_group is None:
                    reason = _describe(user)
                elif producer_group is None:
                    reason = _describe(node)
                else:
                    reason = "separate kernels (no rule joins them)"
            if (node.name, user.name) not in seen:
                seen.add((node.name, user.name))
                boundaries.append(Boundary(node.name, user.name, reason))
    return boundaries


def fuse(graph: Graph, max_kernel_ops: int = MAX_KERNEL_OPS) -> bool:
    """Group fusible ops into FusedKernel nodes; record ``graph.notes.fusion``; True if any kernel."""
    with using(graph.shape_env):
        return _fuse(graph, max_kernel_ops)


def _fuse(graph: Graph, max_kernel_ops: int) -> bool:
    fuser = _Fuser(graph, max_kernel_ops)
    for node in graph.nodes:
        if _pointwise(node):
            fuser.place_pointwise(node)
        elif _reduction(node):
            fuser.place_reduction(node)
    fuser.merge_siblings()
    report = FusionReport(boundaries=_boundaries(fuser), notes=fuser.notes)
    for group in sorted(fuser.groups, key=lambda g: fuser.order[g.nodes[-1]]):
        kernel = _outline(graph, group).target
        report.kernels.append((kernel.name, kernel.style, kernel.space, kernel.members))
    graph.sort()
    dce(graph)
    graph.notes.fusion = report
    return bool(report.kernels)


# The PassManager runs fusion on the top-level graph only: run on the bodies of the kernels it
# has just made, it would nest kernels in kernels.
fuse.skips_kernels = True
