"""The loop plan of a fused kernel: which loops it has and in which loop each value is known.

``kept`` axes are the outer loops (all axes for a pointwise kernel). A reduction or row kernel
runs, per kept index, one or more *phases* over the reduced axes: a reduction computed in phase
``p`` is usable from phase ``p + 1`` on (softmax: max, then sum of exp, then divide). A full
value (one per element) belongs to the phase loop that computes it (``loop_of``); a per-row
value (a reduction, or what is computed from reductions) is known after a phase (``after_of``;
-1: before any). A value computed in one phase and read in a later one is *stashed* in a
per-row buffer, not recomputed. ``var``/``std`` take two phases, as NumPy computes them: the
mean, then the sum of squared deviations from it (``var_pass`` is the first). A max and the sum
of ``exp(x - max)`` over the same rows share one phase (``online``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from ..ir import ops
from ..ir.graph import Node
from ..ir.kernel import FusedKernel
from ..ir.meta import normalize_axes
from . import online
from .indexing import alias_root
from .nodes import Unsupported


@dataclass
class Plan:
    """The loops of one kernel (see the module docstring). ``range_limited(nodes)``: whether
    any of ``nodes`` has a fast path that holds only in a range (the backend's sin, cos...)."""

    kernel: FusedKernel
    range_limited: Callable[[list], bool]
    fastmath: bool = False
    members: list = field(default_factory=list)
    reductions: list = field(default_factory=list)
    axes: tuple = ()
    kept: list = field(default_factory=list)
    loop_of: dict = field(default_factory=dict)
    after_of: dict = field(default_factory=dict)
    var_pass: dict = field(default_factory=dict)
    stashed: set = field(default_factory=set)
    phases: int = 1
    online: object = None

    @property
    def space(self) -> tuple:
        return tuple(self.kernel.space)

    @property
    def nd(self) -> int:
        return len(self.kernel.space)

    def full(self, node: Node) -> bool:
        """Whether ``node`` has one value per element of the iteration space."""
        return not node.target.loop_reduction and tuple(node.meta.shape) == self.space


def make_plan(kernel: FusedKernel, fastmath: bool, range_limited: Callable[[list], bool]) -> Plan:
    """The plan of ``kernel``; raises ``Unsupported`` for a per-row value computed from a full
    row."""
    plan = Plan(kernel, range_limited, fastmath)
    # (a store of the result into the kernel's first input is the lowering's, not a loop value)
    plan.members = [n for n in kernel.graph.nodes if n.op == "call" and n.target is not ops.STORE]
    plan.reductions = [n for n in plan.members if n.target.loop_reduction]
    if plan.reductions:
        first = plan.reductions[0]
        plan.axes = normalize_axes(first.kwargs.get("axis"), first.args[0].meta.ndim)
    plan.kept = [a for a in range(plan.nd) if a not in plan.axes]
    plan.online = online.find_pair(plan)
    _assign_phases(plan)
    return plan


def _assign_phases(plan: Plan) -> None:
    """Every member's loop (full values) or the loop after which it is known (row values)."""
    for node in plan.members:
        if node.kind == "view" or plan.online and plan.online.place(node, plan.after_of):
            continue
        inputs = [alias_root(v) for v in node.all_input_nodes]
        levels_full = [plan.loop_of[v] for v in inputs if v in plan.loop_of]
        levels_row = [plan.after_of[v] for v in inputs if v in plan.after_of]
        level = max(levels_full + [r + 1 for r in levels_row] + [0])
        if node.target in (ops.VAR, ops.STD):
            plan.var_pass[node] = level
            plan.after_of[node] = level + 1
        elif node.target.loop_reduction:
            plan.after_of[node] = level
        elif plan.full(node):
            plan.loop_of[node] = level
        else:
            if levels_full:
                raise Unsupported(f"{node.name}: a per-row value computed from a full row")
            plan.after_of[node] = max(levels_row + [-1])
    levels = list(plan.loop_of.values()) + list(plan.after_of.values())
    plan.phases = 1 + max(levels + [0]) if plan.axes else 1
    for node, loop in plan.loop_of.items():
        for user in node.users:
            if plan.loop_of.get(user, plan.after_of.get(user, loop)) > loop:
                plan.stashed.add(node)
