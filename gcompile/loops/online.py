"""Online max: ``max`` and ``sum(exp(x - max))`` of a row in one pass (logsumexp, log-softmax).

    m = np.max(x, axis=-1, keepdims=True)          one loop over each row:
    s = np.sum(np.exp(x - m), axis=-1)      =>       per block of BLOCK elements, the block's x
                                                     and exp(x - ref) in one vector loop

Written as NumPy, the pair takes two passes over every row: the max, then the sum of exps.
Here one loop computes each block's values ``x`` into one buffer and ``exp(x - ref)`` into a
second, where ``ref`` is a reference max that lags the running max. After the block, its max
(eight vector lanes) decides:

* it is at most ``ref + SLACK``: the exps hold (terms up to ``e**SLACK``, no overflow), and
  the block's sum joins the row's (blocked as every float64 sum: ``blocks``);
* it is finite and above that (and for the first block, when there is no ``ref`` yet; that
  block's loop skips the exps): the sum so far is scaled by ``exp(ref - top)``, ``ref``
  becomes the block's max ``top``, and the block's exps are recomputed from its buffer
  (the backend's ``shifted_exp``, a vector loop);
* it is ``-inf`` (a block of ``-inf``: exps of 0) or not a number or ``+inf``: the block adds
  nothing (for the last two the row's max is not finite; see below).

At the end of the row the sum is scaled by ``exp(ref - max)`` (``rescaled_total``). When
the row's max is not finite, NumPy's ``x - max`` has a NaN in the row (``inf - inf``,
``-inf - -inf``, NaN), so the sum is NaN; so is ours. Empty rows never get here (NumPy's max of
an empty row raises, and so does the host).

Accuracy. First-order error terms of our S, relative to the exact ``S = sum(exp(x - M))`` (M
the row's max, ``u`` the unit roundoff of x's dtype, ``t = exp(x - M)``, ``W = sum(t |x - M|)/S``):

* the rounding of ``x - ref``: ``u (SLACK + W)`` (two passes: ``u W``). At the end
  ``M - SLACK <= ref <= M``, and an x above the ref of its block is at most SLACK above it, so
  ``|x - ref| <= max(SLACK, |x - M|)``;
* the exps: their error in ulp (mathlib's), as in the two-pass loop;
* the sums: positive terms, blocked in float64 as in the two-pass loop;
* the scalings (float64 libm exp and a product, ``3 * 2**-53`` of the part they scale): one per
  move of ``ref`` and one at the end, at most ``3 * 2**-53 (K + 1)`` for K moves.

So the online loop adds at most ``u SLACK + 3 * 2**-53 (K + 1)`` to the relative error of S,
which is the absolute error of ``log S`` and of logsumexp; the rest is the summation order.
``tests/backends/test_online.py`` derives the whole bound per row from the data and checks it
against a long double reference. Rows of 2048 normal numbers (sd 1 to 3) move ``ref`` 1.0 to
1.6 times on average (the first block included), at most 3 times. Each row runs on one thread
in a fixed order: the result does not depend on the number of threads.

The pattern holds only in a row kernel (outer loops over rows, one reduced axis, the last)
whose reductions all split into vector lanes, with one such pair, no range-limited expansion
(sin...) and no ``fastmath`` (whose ``ninf`` would drop the tests against ``-inf``); the
exp's value must feed only the sum. Elsewhere the two passes stay.

The plan (``find_pair``) puts the sum in the loop of its max, as an accumulator of
``exp(x - max)`` fed with ``x``; the rewrite ``online_pair`` writes the algorithm above.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from ..ir import ops
from ..ir.graph import Node
from ..ir.meta import normalize_axes
from .blocks import BLOCKS, block_parts
from .dtypes import ufunc_loop
from .indexing import alias_root
from .nodes import (
    COUNTER,
    Accumulate,
    Apply,
    BinOp,
    BoolOp,
    Cast,
    Comment,
    Compare,
    Const,
    Convert,
    Eval,
    If,
    Intrinsic,
    Kernel,
    Let,
    Loop,
    Store,
    Update,
    Var,
)
from .rewrite import Context, map_nests

SLACK = 2.0  # how far a block's max may exceed ``ref`` before ref moves (see the docstring)
_SPLIT = (ops.SUM, ops.MEAN, ops.AMAX, ops.AMIN, ops.ANY, ops.ALL, ops.VAR, ops.STD)
_INF = Const(np.inf, np.dtype(np.float64))
_MINUS_INF = Const(-np.inf, np.dtype(np.float64))


@dataclass
class OnlinePair:
    """``top = max(x)`` and ``total = sum(exp(x - top))`` over one row, computed in one pass.

    ``absorbed``: the nodes the online loop computes itself (the exp; the shift ``x - top`` too
    when the exp is its only user, else the shift is recomputed in a later loop).
    """

    top: Node
    total: Node
    shift: Node
    exp: Node
    absorbed: frozenset

    def place(self, node: Node, after_of: dict) -> bool:
        """Whether ``node`` is planned here: ``total`` is known after the loop of ``top``, the
        absorbed nodes belong to no loop."""
        if node is self.total:
            after_of[node] = after_of[self.top]
            return True
        return node in self.absorbed


def find_pair(plan) -> OnlinePair | None:
    """The one ``max``/``sum(exp(x - max))`` pair of ``plan``'s row kernel that can run online,
    or None (see the module docstring for when)."""
    last = plan.nd - 1
    if (
        plan.fastmath
        or not plan.kept
        or tuple(plan.axes) != (last,)
        or any(r.target not in _SPLIT for r in plan.reductions)
        or plan.range_limited(plan.members)
    ):
        return None
    pairs = [p for p in (_pair_of(top, plan, last) for top in plan.reductions) if p is not None]
    return pairs[0] if len(pairs) == 1 else None


def _pair_of(top: Node, plan, last: int) -> OnlinePair | None:
    """The pair whose max is ``top``, if its users make one."""
    value = top.args[0]
    dtype = top.meta.dtype
    if (
        top.target is not ops.AMAX
        or dtype not in (np.float32, np.float64)
        or tuple(value.meta.shape) != plan.space
        or _axes(top) != (last,)
    ):
        return None
    for shift in top.users:
        if not (
            shift.op == "call"
            and shift.target is ops.SUBTRACT
            and len(shift.args) == 2
            and shift.args[0] is value
            and alias_root(shift.args[1]) is top
            and shift.meta.dtype == dtype
        ):
            continue
        for exp in shift.users:
            if exp.op != "call" or exp.target is not ops.EXP or exp.args[0] is not shift:
                continue
            if exp.meta.dtype != dtype or len(exp.users) != 1 or exp.kwargs:
                continue
            (total,) = exp.users
            if (
                total.op == "call"
                and total.target is ops.SUM
                and total.args[0] is exp
                and total.meta.dtype == dtype
                and _axes(total) == (last,)
            ):
                absorbed = {exp} | ({shift} if list(shift.users) == [exp] else set())
                return OnlinePair(top, total, shift, exp, frozenset(absorbed))
    return None


def _axes(reduction: Node) -> tuple:
    return tuple(normalize_axes(reduction.kwargs.get("axis"), reduction.args[0].meta.ndim))


# -- the rewrite ----------------------------------------------------------------------------------


def online_pair(kernel: Kernel, ctx: Context) -> Kernel:
    """The split loop of a max and its sum of ``exp(x - max)`` (an ``online`` accumulator fed
    with ``x``) as the one-pass algorithm of the module docstring (float32: no blocked sum)::

        ...                                    ...
                                               ref_sum_1 = f32(f64(-inf))
        for b1 in range(0, n1, 128) [block]:   for b1 in range(0, n1, 128) [block]:
          e1 = ...                               e1 = ...
          for i1 in range(b1, e1) [reduce]:      if ref_sum_1 > f64(-inf):
            ld0 = x[s0*i0 + i1]                    for i1 in range(b1, e1) [reduce]:
            lane_amax_1[i1 - b1] = ld0               ld0 = x[s0*i0 + i1]
            lane_sum_1[i1 - b1] = ld0     =>         lane_amax_1[i1 - b1] = ld0
          acc_amax_1 max= lane_max(...)              lane_sum_1[i1 - b1] = exp(subtract(ld0, ...))
          acc_sum_1 += lane_sum(...)             else:
        amax_1 = acc_amax_1                        for i1 in range(b1, e1) [reduce]: (no exps)
        sum_1 = f32(acc_sum_1)                   top_sum_1 = lane_max(lane_amax_1, e1 - b1)
                                                 acc_amax_1 max= top_sum_1
                                                 if top_sum_1 <= ref_sum_1 + f32(2.0) and ...:
                                                   blk_sum_1 = lane_sum(lane_sum_1, ...)
                                                 elif f64(-inf) < top_sum_1 < f64(inf):
                                                   (scale the sum, move ref, recompute the exps)
                                                 else:
                                                   blk_sum_1 = f64(0.0)
                                                 acc_sum_1 += blk_sum_1
                                               amax_1 = acc_amax_1
                                               acc_sum_1 = rescaled_total(acc_sum_1, ...)
                                               sum_1 = f32(acc_sum_1)
    """
    totals = [acc for acc in kernel.accumulators if acc.online]
    if not totals:
        return kernel
    (total,) = totals

    def nest(before: list, loop: Loop, after: list) -> tuple:
        if loop.kind != "block" or not _feeds(loop, total):
            return before, [loop], after
        return _setup(before, total), [_one_pass(loop, total)], _settle(after, total)

    return dataclasses.replace(kernel, body=map_nests(kernel.body, nest))


def _feeds(block: Loop, total) -> bool:
    element = block_parts(block)[1]
    lane = total.var("lane")
    return any(isinstance(s, Store) and s.buffer == lane for s in element.body)


def _setup(before: list, total) -> list:
    """Before the row's loop (and its counter resets): no reference yet."""
    top = total.online[0]
    note = Comment(
        text="{} and {} in one pass: exps against a lagging max ref_{} (online.py)",
        names=(Var("", top.node), Var("", total.node), Var("", total.node)),
    )
    reference = Let(_ref(total), Convert(_MINUS_INF, top.dtype))
    position = len(before)
    while (
        position
        and isinstance(before[position - 1], Let)
        and before[position - 1].var
        in (
            COUNTER,
            BLOCKS,
        )
    ):
        position -= 1
    return list(before[:position]) + [note, reference] + list(before[position:])


def _one_pass(block: Loop, total) -> Loop:
    """The block: its element loop twice (with the exps once a reference is known, without
    them before), then the block's max and sum of exps."""
    top = total.online[0]
    prologue, element, epilogue = block_parts(block)
    lane = total.var("lane")
    with_exps, without = [], []
    for stmt in element.body:
        if isinstance(stmt, Store) and stmt.buffer == lane:
            with_exps.append(dataclasses.replace(stmt, value=_exp_of(stmt.value, total)))
        elif isinstance(stmt, Comment) and stmt.node is total.node:
            with_exps.append(stmt)
        else:
            with_exps.append(stmt)
            without.append(stmt)
    known = Compare((">",), (_ref(total), _MINUS_INF))
    loops = If(
        known,
        (dataclasses.replace(element, body=tuple(with_exps)),),
        (dataclasses.replace(element, body=tuple(without)),),
    )
    of_max = next(s for s in epilogue if _reduces(s, top))
    of_sum = next(s for s in epilogue if _reduces(s, total))
    rest = [s for s in epilogue if s is not of_max and s is not of_sum]
    # (after the other accumulators' lane reductions, before the block sums)
    last = max((i for i, s in enumerate(rest) if _lane_statement(s)), default=-1)
    lines = _block_lines(total, _lane_value(of_max), _lane_value(of_sum))
    body = prologue + [loops] + rest[: last + 1] + lines + rest[last + 1 :]
    return dataclasses.replace(block, body=tuple(body))


def _exp_of(stored, total):
    """``exp(x - ref)`` in the lane buffer's dtype, for ``x`` stored (converted) there."""
    top, shift, exp = total.online
    dtype = top.dtype
    x = Cast(stored.value, stored.source, dtype)
    difference = Apply(shift.target, shift, (x, _ref(total)), (dtype,) * 3, (dtype, dtype))
    loop = tuple(ufunc_loop(exp.target, [dtype], exp.kwargs))
    value = Apply(exp.target, exp, (difference,), loop, (dtype,))
    return Cast(value, dtype, stored.target)


def _block_lines(total, block_max, block_sum) -> list:
    """After a block: its max into the max's accumulator, its sum of exps into ``blk_`` (and
    the total, unless blocked), moving ``ref`` when the block's max is above ``ref + SLACK``."""
    top = total.online[0]
    ref, peak, shrink, blk = (
        _ref(total),
        _named(total, "top_"),
        _named(total, "shrink_"),
        total.var("blk"),
    )
    scaled = [total.var("acc")] + ([total.var("mid")] if total.blocked else [])
    holds = BoolOp(
        "and",
        (
            Compare(("<=",), (peak, BinOp("+", ref, Const(SLACK, top.dtype)))),
            Compare((">",), (ref, _MINUS_INF)),
        ),
    )
    wide = np.dtype(np.float64)
    moves = (
        Let(shrink, Intrinsic("exp", (BinOp("-", Convert(ref, wide), Convert(peak, wide)),))),
        *[Update(acc, "*", shrink) for acc in scaled],
        Let(ref, peak),
        Eval(
            Intrinsic(
                "shifted_exp",
                (top.var("lane"), total.var("lane"), block_max.args[1], ref),
                top.dtype,
            )
        ),
        Let(blk, block_sum),
    )
    finite = Compare(("<", "<"), (_MINUS_INF, peak, _INF))
    lines = [
        Let(peak, block_max),
        Accumulate(top, peak, top.dtype),
        If(holds, (Let(blk, block_sum),), (If(finite, moves, (Let(blk, Const(0, total.dtype)),)),)),
    ]
    if not total.blocked:
        lines.append(Accumulate(total, blk, total.dtype))
    return lines


def _settle(after: list, total) -> list:
    """After the row: the sum of ``exp(x - max)`` from the sum of ``exp(x - ref)``."""
    top = total.online[0]
    acc = total.var("acc")
    settle = Let(acc, Intrinsic("rescaled_total", (acc, _ref(total), top.var("acc"))))
    result = Var("", total.node)
    for position, stmt in enumerate(after):
        if isinstance(stmt, Let) and stmt.var == result:
            return list(after[:position]) + [settle] + list(after[position:])
    return list(after)


def _ref(total) -> Var:
    return _named(total, "ref_")


def _named(total, prefix: str) -> Var:
    return Var(prefix, total.node)


def _reduces(stmt, acc) -> bool:
    """Whether ``stmt`` is the lane reduction of ``acc`` after a split block (into its total,
    or into its block sum once blocked)."""
    if isinstance(stmt, Accumulate):
        return stmt.acc == acc and _lane_statement(stmt)
    return isinstance(stmt, Let) and stmt.var == acc.var("blk") and _lane_statement(stmt)


def _lane_statement(stmt) -> bool:
    value = getattr(stmt, "value", None)
    return (
        isinstance(value, Intrinsic)
        and value.name.startswith("lane_")
        or (
            isinstance(value, Cast)
            and isinstance(value.value, Intrinsic)
            and value.value.name.startswith("lane_")
        )
    )


def _lane_value(stmt) -> Intrinsic:
    value = stmt.value
    return value.value if isinstance(value, Cast) else value
