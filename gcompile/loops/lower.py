"""Lowering: a ``FusedKernel`` becomes the plain loop nest of its plan.

The kernel's parameters are the output arrays (allocated by the host), the sizes of the
iteration space (``n0``, ``n1``, ...), then, in the order the body first reads them, the inputs
and the offsets and strides of the reads (``indexing``). Per kept index (the outer loops), the
nest computes the row values known before any loop, allocates the per-row buffers of stashed
values, then runs each phase of the plan: the accumulators' start values, one loop nest over the
reduced axes whose body computes the phase's full values (``Let``), stores them (``Store``) and
feeds the reductions (``Accumulate``), then the reductions' results and the row values known
after the phase.

Every value is computed in its node's dtype; each operand is first converted to the dtype the
op computes in (``dtypes``), so integers wrap as NumPy's do. Nothing here blocks, splits,
parallelises or chooses math functions: the rewrites do (``rewrites``).
"""

from __future__ import annotations

import dataclasses
from typing import Callable

import numpy as np

from ..ir import ops
from ..ir.graph import Node
from ..ir.kernel import FusedKernel
from ..ir.shape_env import using
from ..ir.symbolic import is_expr, prove_le
from .columns import column_nest, runs_by_columns
from .dtypes import operand_dtypes
from .indexing import alias_root, flat_index
from .nodes import (
    COUNTER,
    Accumulate,
    Affine,
    Alloc,
    Apply,
    BinOp,
    Comment,
    Const,
    Init,
    Kernel,
    Let,
    Load,
    Loop,
    Param,
    Store,
    Subscript,
    Unsupported,
    Update,
    Var,
    index_var,
    product,
    size_var,
    typed,
)
from .plan import Plan, make_plan
from .reads import INTP, KernelReads
from .reductions import accumulators_of

ROW_LENGTH = Var("rowlen")


def _may_exceed_one(size) -> bool:
    """Whether an axis may span more than one element (a symbolic size is 2 or more unless
    the trace proves otherwise)."""
    return size > 1 if not is_expr(size) else prove_le(size, 1) is not True


def lower(kernel: FusedKernel, fastmath: bool, range_limited: Callable[[list], bool]) -> Kernel:
    """The plain loop nest of ``kernel`` (see the module docstring); ``range_limited(nodes)``
    says whether the backend's fast path of any of ``nodes`` holds only in a range (their
    pointwise loop then runs its innermost axis as an element loop, to be checked by blocks).
    Raises ``Unsupported`` for what the loop IR cannot express."""
    if kernel.mutates and len(kernel.graph.placeholders[0].users) > 1:
        # It reads the array it writes: no block may be computed twice (a range fix-up
        # rereads its inputs after the first pass stored into them).
        range_limited = _never
    with using(kernel.graph.shape_env):  # (a view's index map may ask about sizes)
        plan = make_plan(kernel, fastmath, range_limited)
        return _Lowering(plan).kernel()


def _never(nodes: list) -> bool:
    return False


class _Lowering(KernelReads):
    """The state of one lowering: parameters, the naming order of values, the reads cache."""

    def __init__(self, plan: Plan):
        self.plan = plan
        self.graph = plan.kernel.graph
        self.params: dict[Var, Param] = {}
        self.int_params: dict[tuple, Var] = {}
        self.values: dict[Node, None] = {}  # graph nodes in the order they are named
        self.loads: dict = {}  # (value, loop variables) -> its expression, in the current scope
        self.enclosing: set = set()  # load variables of the scope enclosing the current one
        self.index = {p: i for i, p in enumerate(self.graph.placeholders)}
        self.outputs = list(self.graph.output_node.args[0])
        # a kernel writing its result into its first input: the store, and its value
        self.destination = self.outputs[0] if plan.kernel.mutates else None
        if self.destination is not None:
            self.outputs = [self.destination.args[1]]
        self.stored = {node: i for i, node in enumerate(self.outputs)}
        self.accumulators: dict[Node, list] = {}
        self.flats: list = []  # the flat views of the inputs read as memory, made on entry
        self.phase = 0
        self.counted = False  # the phase body records positions (argmax, argmin)
        self.recomputing: set = set()  # full values a later pass computes again, unstored

    # -- the kernel ---------------------------------------------------------------------------
    def kernel(self) -> Kernel:
        plan = self.plan
        outputs = self.output_params()
        for axis in range(plan.nd):
            self.param(size_var(axis), ("int", plan.space[axis]), INTP)
        count = self.reduced_count()
        for reduction in plan.reductions:
            self.named(reduction)
            self.accumulators[reduction] = accumulators_of(reduction, count)
        if plan.online:  # the sum of exp(x - max) runs in the loop of its max
            pair = plan.online
            (top,), (total,) = self.accumulators[pair.top], self.accumulators[pair.total]
            online = (top, pair.shift, pair.exp)
            self.accumulators[pair.total] = [dataclasses.replace(total, online=online)]
        body = self.loop_nest(self.loop_order(outputs))
        # arrays and scalars first, then the integers (the host passes those by name)
        params = sorted(self.params.values(), key=lambda p: p.argument[0] == "int")
        return Kernel(
            plan.kernel.name,
            tuple(params),
            tuple(body),
            tuple(self.values),
            tuple(a for r in plan.reductions for a in self.accumulators[r]),
            tuple(outputs),
            tuple(plan.axes),
            entry=tuple(self.flats),
            writes=0 if self.destination is not None else None,
        )

    def loop_order(self, outputs: list) -> str:
        """``"F"`` when the result is written in Fortran order (its buffer, or the array it is
        written into), else ``"C"``."""
        if self.destination is not None:
            return self.destination.args[0].meta.layout
        return outputs[0][1] if outputs else "C"

    def output_params(self) -> list:
        """The output buffers' parameters; their ``(meta, order)``."""
        outputs = []
        if self.destination is not None:
            return outputs  # (written into the first input: no buffer)
        for position, node in enumerate(self.outputs):
            if not isinstance(node, Node) or alias_root(node) is not node:
                raise Unsupported("a kernel output that is a view or a literal")
            meta = node.meta
            order = self.output_order(meta)
            self.param(
                Var(f"out{position}"),
                ("output", position),
                meta.dtype,
                ndim=max(meta.ndim, 1),
                layout=order,
            )
            outputs.append((meta, order))
        return outputs

    def output_order(self, meta) -> str:
        """``"F"`` or ``"C"``: the order of a new array NumPy would make (its default ``K``).

        A layout the metadata leaves open (``A``) is Fortran when every input spanning
        the output's axes is Fortran-ordered, as NumPy's ufuncs decide; otherwise C.
        """
        if meta.ndim < 2:
            return "C"
        if meta.layout in "CF":
            return meta.layout
        spanning = [
            p.meta
            for p in self.graph.placeholders
            if p.meta.ndim == meta.ndim and sum(_may_exceed_one(s) for s in p.meta.shape) > 1
        ]
        return "F" if spanning and all(m.layout == "F" for m in spanning) else "C"

    def loop_nest(self, order: str) -> list:
        """The kept loops around the row body (the innermost first for an F-ordered output)."""
        plan = self.plan
        if self.destination is None and runs_by_columns(plan, order):
            return column_nest(self)
        kept = list(plan.kept)
        if not plan.axes and order == "F" and plan.nd > 1:
            kept = kept[::-1]
        # A pointwise loop calling a range-limited function runs its innermost axis as an
        # element loop, which ``range_fixups`` splits into checked blocks.
        innermost = None
        if not plan.axes and kept and plan.range_limited(plan.members):
            innermost = kept.pop()
        head = [Let(ROW_LENGTH, self.reduced_count())] if plan.axes and plan.stashed else []
        body = self.row_body([innermost] if innermost is not None else list(plan.axes))
        for axis in reversed(kept):
            body = [Loop(index_var(axis), Const(0), size_var(axis), 1, tuple(body), kind="kept")]
        return head + body

    def row_body(self, reduced: list) -> list:
        """Per kept index: row values known before any loop, then each phase and what follows."""
        plan = self.plan
        out: list = []
        self.row_values(-1, out)
        for node in plan.members:
            if node in plan.stashed:  # (a set: its order varies)
                out.append(Alloc(self.named(node, "buf_"), ROW_LENGTH, node.meta.dtype))
        for phase in range(plan.phases):
            self.phase = phase
            accumulating = self.accumulating(phase)
            fulls = [n for n in plan.members if plan.loop_of.get(n) == phase]
            out += [Init(acc) for acc in accumulating]
            self.counted = False
            row_loads = self.loads
            self.enclosing = {v.name for v in row_loads.values() if isinstance(v, Var)}
            body = self.phase_body(fulls, accumulating)
            self.enclosing = set()
            stashed = plan.stashed
            if reduced and (
                self.counted
                or any(n in stashed for n in fulls)
                or any(plan.loop_of[n] < phase for n in stashed)
            ):
                body.append(Update(COUNTER, "+", Const(1)))
                out.append(Let(COUNTER, Const(0)))
            for axis in reversed(reduced):
                body = [Loop(index_var(axis), Const(0), size_var(axis), 1, tuple(body))]
            out += body
            self.loads = row_loads
            self.phase_results(accumulating, out)
            self.row_values(phase, out)
        return out

    def accumulating(self, phase: int) -> list:
        """The accumulators a phase's loop feeds: its reductions', then the mean passes."""
        plan = self.plan
        main = [self.accumulators[r][-1] for r in plan.reductions if plan.after_of[r] == phase]
        means = [self.accumulators[r][0] for r in plan.reductions if plan.var_pass.get(r) == phase]
        return main + means

    def phase_body(self, fulls: list, accumulating: list) -> list:
        """One element of a phase loop: its values, stores and reduction updates."""
        self.loads = {}
        body: list = []
        for node in self.plan.members:
            if node in fulls:
                self.full_value(node, body)
            for acc in accumulating:
                if acc.node is node:
                    self.update(acc, body)
        return body

    def phase_results(self, accumulating: list, out: list) -> None:
        """After a phase loop: each reduction's result, stored when it is an output."""
        for acc in accumulating:
            node = acc.node
            if acc.prefix:  # the mean pass of var/std
                out.append(Let(self.named(node, "mean_"), acc.final))
                continue
            value = self.named(node)
            out.append(Let(value, acc.final))
            if node in self.stored:
                self.store_row(node, value, out)

    def row_values(self, after: int, out: list) -> None:
        """The per-row elementwise values known once phase ``after`` is done, and their stores."""
        for node in self.plan.members:
            if self.plan.after_of.get(node) == after and not node.target.loop_reduction:
                out.append(Comment(node))
                value = self.named(node)
                out.append(Let(value, self.elementwise(node, out, "row")))
                if node in self.stored:
                    self.store_row(node, value, out)

    # -- statements -----------------------------------------------------------------------------
    def full_value(self, node: Node, body: list) -> None:
        body.append(Comment(node))
        value = self.named(node)  # (named before the inputs its expression reads)
        body.append(Let(value, self.elementwise(node, body, "loop")))
        if self.phase and node in self.recomputing:  # (stored by the pass that made it)
            return
        if node in self.plan.stashed:
            body.append(Store(self.named(node, "buf_"), Affine(None, ((1, COUNTER),)), value))
        if node in self.stored and self.destination is not None:
            body.append(self.store_in_place(value))
        elif node in self.stored:
            index = Subscript(tuple(self.consumer_vars(self.plan.space)))
            body.append(Store(Var(f"out{self.stored[node]}"), index, value))

    def update(self, acc, body: list) -> None:
        """The loop-body statement of accumulator ``acc``."""
        node = acc.node
        body.append(Comment(node))
        source = acc.online[0].node if acc.online else node  # the sum of exp(x - max) reads x
        value, kind = self.operand(source.args[0], source, body)
        if acc.kind == "arg":
            self.counted = True
            body.append(Accumulate(acc, value, kind, index=COUNTER))
            return
        if node.target in (ops.VAR, ops.STD) and not acc.prefix:  # squared deviation
            deviation, out = self.named(node, "dev_"), node.meta.dtype
            body.append(Let(deviation, BinOp("-", typed(value, kind, out), Var("mean_", node))))
            value, kind = BinOp("*", deviation, deviation), out
        body.append(Accumulate(acc, value, kind))

    def store_in_place(self, value) -> Store:
        """The result's store into the region of the first input it replaces."""
        store = self.destination
        base = store.args[0]
        steps = [(step.op, dict(step.params)) for step in store.kwargs.get("views", ())]
        steps.append((ops.GETITEM, {"index": store.kwargs["index"]}))
        loop_vars = self.consumer_vars(self.plan.space)
        index = flat_index(base.meta, steps, loop_vars, self.int_param)
        if index is None:
            raise Unsupported("a store into an array without a flat layout")
        return Store(self.flat_input(base, self.index[base]), index, value)

    def store_row(self, node: Node, value, out: list) -> None:
        shape = tuple(node.meta.shape)
        items = (None,) if node.meta.ndim == 0 else tuple(self.consumer_vars(shape))
        out.append(Store(Var(f"out{self.stored[node]}"), Subscript(items), value))

    # -- expressions ----------------------------------------------------------------------------
    def elementwise(self, node: Node, body: list, where: str) -> Apply:
        operands = [self.operand(v, node, body) for v in node.args]
        kinds = tuple(k for _, k in operands)
        loop = operand_dtypes(node, list(kinds))
        if loop is None:
            args = tuple(e for e, _ in operands)
        else:
            args = tuple(typed(e, k, d) for (e, k), d in zip(operands, loop))
        return Apply(node.target, node, args, loop, kinds, where)

    def operand(self, value, consumer: Node, body: list) -> tuple:
        """``(expression, dtype or Python type)`` of one operand of ``consumer``."""
        plan = self.plan
        if not isinstance(value, Node):
            kind = type(value) if not isinstance(value, np.generic) else np.dtype(type(value))
            return value, kind
        root = alias_root(value)
        if root in plan.loop_of or root in plan.after_of:
            if root in plan.stashed and self.phase > plan.loop_of[root]:
                buffer = self.named(root, "buf_")
                return Load(buffer, Affine(None, ((1, COUNTER),))), root.meta.dtype
            return self.named(root), root.meta.dtype
        loop_reduction = consumer.target.loop_reduction
        shape = consumer.args[0].meta.shape if loop_reduction else consumer.meta.shape
        expr = self.read(value, tuple(shape), body)
        if value.meta.weak:
            return expr, type(np.zeros((), value.meta.dtype).item())
        return expr, value.meta.dtype

    def reduced_count(self):
        """The number of elements the reduced axes span per row."""
        return product([size_var(a) for a in self.plan.axes])

    # -- names and parameters ---------------------------------------------------------------------
    def named(self, node: Node, prefix: str = "") -> Var:
        """The variable ``prefix`` + ``node``'s identifier; names ``node`` if it has no name yet."""
        self.values.setdefault(node)
        return Var(prefix, node)
