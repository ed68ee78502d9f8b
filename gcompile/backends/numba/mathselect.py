"""Math selection: each float function call as its inlined ``mathlib`` expansion or a libm call.

An expansion is branch-free code LLVM vectorises (``mathlib``); in a loop that does not
vectorise anyway (one that carries an argmax or a product, or a value computed once per row) a
scalar libm call is as fast and more accurate. Each expansion call site is charged
EXPANSION_COST s of compile time (twice that for sin, cos and tan); past COMPILE_BUDGET s per
kernel, functions with a libm twin call libm instead. (exp is inlined by Numba at every call
site; the other families are compiled once and inlined by LLVM, so for them the charge
overestimates repeated calls: the budget stays conservative.) A range-limited expansion (sin,
cos, tan) is used only in a loop that checks its range (``loops.ranges``); the recomputation of
a flagged block calls libm wherever it can: it runs rarely, and a second inlined expansion would
double the compile time. Why each function is computed the way it is goes into the notes
``explain`` shows (``KernelCode.math``).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import numpy as np

from ...ir.graph import Node
from ...loops.nodes import Accumulate, Apply, BinOp, If, Kernel, Let, Loop, RangeCheck, While
from ...loops.ranges import BAD, SAVED_COUNT, range_limit
from ...loops.rewrite import Context, map_exprs
from . import mathlib
from .rules import power_shortcut, rule_of

EXPANSION_COST = 0.25
COMPILE_BUDGET = 2.5


def expansion_of(node: Node):
    """The ``mathlib`` template of ``node``'s ufunc for its float dtype, or None."""
    op = node.target
    if not isinstance(op.impl, np.ufunc) or node.meta.dtype not in (np.float32, np.float64):
        return None
    return mathlib.TEMPLATES.get(op.name)


def range_limits(node: Node) -> tuple | None:
    """``(float32, float64)`` limits of ``node``'s range-limited expansion, or None."""
    template = expansion_of(node)
    return None if template is None else template.range_limit


@dataclass
class MathContext(Context):
    """The rewrites' context with what the math selection records: ``math`` (float function ->
    how it is computed, and why), whether the kernel inlines expansions, their compile cost."""

    math: dict = field(default_factory=dict)
    expansions: bool = False
    compile_cost: float = 0.0


def select_math(kernel: Kernel, ctx: MathContext) -> Kernel:
    """Every float function call ``fast`` (its expansion) or not (libm), in the order the calls
    appear, with the budget; a range check whose call took libm is dropped, and a block left
    without checks loses its recomputation::

        sin_1 = sin(ld0)            =>    sin_1 = sin.fast(ld0)        (a vector loop)
        log_1 = log(sum_1)          =>    log_1 = log(sum_1)           (once per row)
    """
    walk = _Selection(ctx)
    body, _ = walk.stmts(kernel.body, _vector(kernel.body), flagged=False)
    return dataclasses.replace(kernel, body=tuple(body))


def _vector(stmts: tuple) -> bool:
    """Whether a loop with this body can vectorise: it carries no accumulator."""
    return not any(isinstance(s, Accumulate) for s in stmts)


def _is_flag(stmt) -> bool:
    return isinstance(stmt, Let) and stmt.var == BAD and isinstance(stmt.value, BinOp)


class _Selection:
    def __init__(self, ctx: MathContext):
        self.ctx = ctx
        self.fast_sites: set = set()  # range-limited calls that took the fast path in a loop

    def stmts(self, stmts: tuple, vector: bool, flagged: bool) -> tuple[list, bool]:
        """``stmts`` selected; and whether their range checks were all dropped."""
        out: list = []
        unchecked = dropped = False
        for stmt in stmts:
            if isinstance(stmt, Loop):
                body, unchecked_inside = self.stmts(
                    stmt.body, _vector(stmt.body), any(_is_flag(s) for s in stmt.body)
                )
                unchecked = unchecked or unchecked_inside
                out.append(dataclasses.replace(stmt, body=tuple(body)))
            elif isinstance(stmt, While):
                test, _ = self.stmts(stmt.test, False, flagged)
                body, _ = self.stmts(stmt.body, False, flagged)
                out.append(dataclasses.replace(stmt, test=tuple(test), body=tuple(body)))
            elif isinstance(stmt, If):
                if unchecked and stmt.cond == BAD:
                    continue  # the recomputation of a block without range checks
                body, _ = self.stmts(stmt.body, vector, flagged)
                orelse, _ = self.stmts(stmt.orelse, vector, flagged)
                out.append(dataclasses.replace(stmt, body=tuple(body), orelse=tuple(orelse)))
            elif _is_flag(stmt):
                flag = self.checks(stmt)
                dropped = flag is None
                out += [] if dropped else [flag]
            else:
                out.append(map_exprs(stmt, lambda e: self.choose(e, vector, flagged)))
        if unchecked:
            out = [s for s in out if not (isinstance(s, Let) and s.var == SAVED_COUNT)]
        return out, dropped

    def checks(self, flag: Let) -> Let | None:
        """The flag's checks of calls that took the fast path (None if there are none)."""
        checks, value = [], flag.value
        while isinstance(value, BinOp):
            checks.append(value.right)
            value = value.left
        kept = [
            c for c in reversed(checks) if isinstance(c, RangeCheck) and c.site in self.fast_sites
        ]
        self.fast_sites = set()
        if not kept:
            return None
        value = BAD
        for check in kept:
            value = BinOp("|", value, check)
        return Let(BAD, value)

    def choose(self, expr, vector: bool, flagged: bool):
        """``expr`` with the implementation of its call chosen, if it is a float function."""
        if not isinstance(expr, Apply) or not isinstance(expr.op.impl, np.ufunc):
            return expr
        loop = expr.loop
        if loop is None or any(d == np.float16 for d in loop) or power_shortcut(expr):
            return expr  # (the renderer refuses the first two; the third calls nothing)
        ctx, name = self.ctx, expr.op.name
        template = expansion_of(expr.node)
        rule = rule_of(expr.op)
        libm = rule is not None and rule.libm
        floating = loop[0].kind == "f"
        limit = range_limit(expr, ctx) if template is not None and floating else None
        in_vector = vector and expr.where == "loop"
        usable = in_vector or (template is not None and not libm)
        cost = EXPANSION_COST * (2 if limit is not None else 1)
        over_budget = libm and template is not None and ctx.compile_cost + cost > COMPILE_BUDGET
        if (
            template is None
            or not usable
            or (limit is not None and not flagged)
            or (libm and (over_budget or expr.exact))
        ):
            if floating and (template is not None or libm):
                self.note_libm(expr, template, in_vector, usable and over_budget and not expr.exact)
            return expr
        ctx.expansions = True
        ctx.compile_cost += cost
        loop_kind = "a vector loop" if in_vector else "a scalar loop"
        how = f"inlined expansion _m.{template.function(loop[0])} in {loop_kind}"
        if limit is None:
            ctx.math[name] = how
        else:
            ctx.math[name] = f"{how}; a block with an |x| > {limit:g} is recomputed with libm"
            self.fast_sites.add(expr.node)
        return dataclasses.replace(expr, fast=True)

    def note_libm(self, expr: Apply, template, in_vector: bool, over_budget: bool) -> None:
        """Why a float function is a libm call (``explain`` shows it); the first reason stays."""
        math, name = self.ctx.math, expr.op.name
        if template is None:
            reason = "libm call per element: gcompile has no vectorisable expansion for it"
        elif expr.where == "scalar":
            reason = "libm call: a scalar op of a loop program, one value per trip"
        elif not in_vector:
            reason = (
                "libm call: computed once per row, outside the element loops"
                if expr.where == "row"
                else "libm call per element: its loop accumulates a reduction that cannot be "
                "split from it (argmax/argmin, prod), so the loop does not vectorise"
            )
        else:
            reason = "libm call: a 0-d kernel has no loop to vectorise"
        if template is not None and over_budget:
            reason = (
                "libm call per element: the kernel already inlines expansions worth "
                f"{self.ctx.compile_cost:.1f} s of compile time (budget {COMPILE_BUDGET:g} s)"
            )
            earlier = math.get(name, "")
            if earlier.startswith("inlined") and "budget" not in earlier:
                math[name] = f"{earlier}; further calls: {reason}"
        math.setdefault(name, reason)
