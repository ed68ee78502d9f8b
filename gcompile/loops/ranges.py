"""Range fix-ups: a fast path that holds only for ``|x| <= limit`` (the backend's sin, cos, tan)
runs in a vector loop that flags arguments beyond its range; a flagged block is recomputed
exactly (with libm).

The flag is an OR over the block, which keeps the loop vectorisable; the recomputation runs
rarely (huge arguments), so its cost does not matter, and it needs no fast path of its own.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from .blocks import block_parts, strip_mine
from .nodes import COUNTER, Apply, BinOp, Const, If, Kernel, Let, Loop, RangeCheck, Update, Var
from .rewrite import Context, accumulators_in, map_exprs, map_nests, with_innermost

_BOOL = np.dtype(bool)
BAD = Var("bad")  # some argument of the block left its fast path's range
SAVED_COUNT = Var("cnt0")  # the element counter at the block's start, for its recomputation


def range_fixups(kernel: Kernel, ctx: Context) -> Kernel:
    """In a vector loop (it feeds no accumulator: a pointwise loop, or a split one) with calls
    whose fast path is range-limited, each block flags an argument out of range in ``bad`` and
    is recomputed when flagged, its calls marked ``exact``::

        for i0 in range(n0) [reduce]:        for b0 in range(0, n0, 128) [block]:
          ld0 = x[i0]                          e0 = n0 if b0 + 128 > n0 else b0 + 128
          sin_1 = sin(ld0)            =>       bad = False
          out0[i0] = sin_1                     for i0 in range(b0, e0) [reduce]:
                                                 ld0 = x[i0]
                                                 sin_1 = sin(ld0)
                                                 out0[i0] = sin_1
                                                 bad = bad | (abs(ld0) > f64(35184372088832.0))
                                               if bad:
                                                 for i0 in range(b0, e0) [fixup]:
                                                   ld0 = x[i0]
                                                   sin_1 = sin.exact(ld0)
                                                   out0[i0] = sin_1

    ``select_math`` drops the check of a call that takes the exact path anyway.
    """

    def nest(before: list, loop: Loop, after: list) -> tuple:
        return before, [with_innermost(loop, lambda inner: _flag(inner, ctx))], after

    return dataclasses.replace(kernel, body=map_nests(kernel.body, nest))


def _flag(inner: Loop, ctx: Context) -> Loop:
    element = block_parts(inner)[1] if inner.kind == "block" else inner
    if not isinstance(element, Loop) or accumulators_in(element.body):
        return inner
    limited = [a for a in applies_in(element.body) if ctx.range_limits(a.node) is not None]
    if not limited:
        return inner
    block = inner if inner.kind == "block" else strip_mine(inner)
    prologue, element, epilogue = block_parts(block)
    prologue.append(Let(BAD, Const(False, _BOOL)))
    checks = [check for check in (_check(a, ctx) for a in limited) if check is not None]
    if not checks:
        return dataclasses.replace(block, body=tuple(prologue + [element] + epilogue))
    counting = any(isinstance(s, Update) and s.var == COUNTER for s in element.body)
    redo = dataclasses.replace(element, body=map_exprs(element.body, _exact), kind="fixup")
    fix = ([Let(COUNTER, SAVED_COUNT)] if counting else []) + [redo]
    if counting:
        prologue.append(Let(SAVED_COUNT, COUNTER))
    flag = BAD
    for check in checks:
        flag = BinOp("|", flag, check)
    flagged = dataclasses.replace(element, body=element.body + (Let(BAD, flag),))
    return dataclasses.replace(
        block, body=tuple(prologue + [flagged, If(BAD, tuple(fix))] + epilogue)
    )


def applies_in(stmts: tuple) -> list:
    """The ``Apply`` nodes inside ``stmts``, in the order they are computed."""
    found: list = []

    def collect(expr):
        if isinstance(expr, Apply):
            found.append(expr)
        return expr

    map_exprs(stmts, collect)
    return found


def range_limit(apply: Apply, ctx: Context) -> float | None:
    """The limit of ``apply``'s fast path for its loop's float dtype, or None."""
    limits = ctx.range_limits(apply.node)
    loop = apply.loop
    if limits is None or not loop or loop[0].kind != "f":
        return None
    return limits[loop[0].itemsize == 8]


def _check(apply: Apply, ctx: Context) -> RangeCheck | None:
    limit = range_limit(apply, ctx)
    if limit is None:
        return None
    return RangeCheck(apply.node, apply.args[0], Const(limit, apply.loop[0]))


def _exact(expr):
    return dataclasses.replace(expr, exact=True) if isinstance(expr, Apply) else expr
