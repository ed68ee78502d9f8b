"""Online max: ``max`` and ``sum(exp(x - max))`` of a row in one pass (logsumexp, log-softmax).

    m = np.max(x, axis=-1, keepdims=True)          one loop over each row:
    s = np.sum(np.exp(x - m), axis=-1)      =>       per block of BLOCK elements, the block's x
                                                     and exp(x - ref) in one vector loop

Written as NumPy, the pair takes two passes over every row: the max, then the sum of exps.
Here one loop computes each block's values ``x`` into one buffer and ``exp(x - ref)`` into a
second, where ``ref`` is a reference max that lags the running max. After the block, its max
(eight vector lanes) decides:

* it is at most ``ref + SLACK``: the exps hold (terms up to ``e**SLACK``, no overflow), and
  the block's sum joins the row's (blocked as every float64 sum: ``codegen``);
* it is finite and above that (and for the first block, when there is no ``ref`` yet; that
  block's loop skips the exps): the sum so far is scaled by ``exp(ref - top)``, ``ref``
  becomes the block's max ``top``, and the block's exps are recomputed from its buffer
  (``scalar.shifted_exp_f32``/``_f64``, a vector loop);
* it is ``-inf`` (a block of ``-inf``: exps of 0) or not a number or ``+inf``: the block adds
  nothing (for the last two the row's max is not finite; see below).

At the end of the row the sum is scaled by ``exp(ref - max)`` (``scalar.rescaled_total``). When
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
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...ir import ops
from ...ir.graph import Node
from ...ir.meta import normalize_axes
from . import mathlib
from . import templates as tpl

SLACK = 2.0  # how far a block's max may exceed ``ref`` before ref moves (see the docstring)
_SPLIT = (ops.SUM, ops.MEAN, ops.AMAX, ops.AMIN, ops.ANY, ops.ALL, ops.VAR, ops.STD)


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

    # -- planning ----------------------------------------------------------------------------------
    def place(self, node: Node, after_of: dict) -> bool:
        """Whether ``node`` is planned here: ``total`` is known after the loop of ``top``, the
        absorbed nodes belong to no loop."""
        if node is self.total:
            after_of[node] = after_of[self.top]
            return True
        return node in self.absorbed

    def in_phase(self, accumulating: list) -> bool:
        """Whether the phase with these ``(reduction, accumulator)`` runs the online loop."""
        return any(r is self.total for r, _ in accumulating)

    # -- emission ----------------------------------------------------------------------------------
    def names(self, gen) -> tuple[str, str]:
        return gen.name(self.top), gen.name(self.total)

    def setup_lines(self, gen, indent: str) -> list:
        """Before the row's loop: no reference yet."""
        t, s = self.names(gen)
        note = [
            f"{indent}# {t} and {s} in one pass: exps against a lagging max ref_{s} (online.py)"
        ]
        return (note if gen.readable else []) + [
            f"{indent}ref_{s} = {tpl.type_name(self.top.meta.dtype)}(-np.inf)"
        ]

    def element_lines(self, gen, indent: str, lane: str, setup: dict) -> list:
        """In the loop over a block: ``exp(x - ref)`` into the sum's block buffer."""
        _, s = self.names(gen)
        dtype = self.top.meta.dtype
        block: list = []
        gen.comment(self.total, block, indent)
        expr, kind = gen.operand(self.top.args[0], self.top, block, indent)
        shift = f"{tpl.type_name(dtype)}(({gen.typed(expr, kind, dtype)} - ref_{s}))"
        loop = tpl.loop_dtypes(self.exp.target, [dtype], self.exp.kwargs)
        value = f"{tpl.type_name(dtype)}({gen.ufunc(self.exp, [shift], loop)})"
        lane_type = gen.lane_dtype(self.total, s, setup)
        return block + [f"{indent}lane_{s}[{lane}] = {gen.typed(value, dtype, lane_type)}"]

    def unswitch(self, gen, header: str, with_exps: list, without: list, indent: str) -> list:
        """The block's loop (``header`` and body) twice: with the exps once a reference is known,
        without them before (the first block's exps are computed after its max)."""
        _, s = self.names(gen)

        def nested(lines):
            return ["    " + line for line in [header, *lines]]

        return [f"{indent}if ref_{s} > -np.inf:", *nested(with_exps), f"{indent}else:"] + nested(
            without
        )

    def block_lines(self, gen, setups: dict, indent: str, count: str) -> list:
        """After a block: its max into ``top``'s accumulator, its sum of exps into ``blk_``/``acc_``
        (moving ``ref`` and recomputing the block's exps when its max is above ``ref + SLACK``)."""
        t, s = self.names(gen)
        dtype = self.top.meta.dtype
        setup = setups[self.total]
        lane_type = gen.lane_dtype(self.total, s, setup)
        block_max = gen.lane_reduction(setups[self.top], dtype, f"lane_{t}", count)
        block_sum = gen.lane_reduction(setup, lane_type, f"lane_{s}", count)
        shifted = "shifted_" + mathlib.TEMPLATES["exp"].function(dtype)
        scaled = [f"acc_{s}"] + ([f"mid_{s}"] if setup.get("blocked") else [])
        inner = indent + "    "
        lines = [
            f"{indent}top_{s} = {block_max}",
            indent + setups[self.top]["combine"].format(a=f"acc_{t}", p=f"top_{s}"),
            f"{indent}if top_{s} <= ref_{s} + {tpl.literal(SLACK, dtype)} and ref_{s} > -np.inf:",
            f"{inner}blk_{s} = {block_sum}",
            f"{indent}elif -np.inf < top_{s} < np.inf:",
            f"{inner}shrink_{s} = math.exp(np.float64(ref_{s}) - np.float64(top_{s}))",
            *[f"{inner}{acc} *= shrink_{s}" for acc in scaled],
            f"{inner}ref_{s} = top_{s}",
            f"{inner}_s.{shifted}(lane_{t}, lane_{s}, {count}, ref_{s})",
            f"{inner}blk_{s} = {block_sum}",
            f"{indent}else:",
            f"{inner}blk_{s} = {tpl.literal(0, setup['acc'])}",
        ]
        if not setup.get("blocked"):
            lines.append(f"{indent}acc_{s} += blk_{s}")
        return lines

    def settle_lines(self, gen, indent: str) -> list:
        """After the row: the sum of ``exp(x - max)`` from the sum of ``exp(x - ref)``."""
        t, s = self.names(gen)
        return [f"{indent}acc_{s} = _s.rescaled_total(acc_{s}, ref_{s}, acc_{t})"]


def find_pair(gen) -> OnlinePair | None:
    """The one ``max``/``sum(exp(x - max))`` pair of ``gen``'s row kernel that can run online,
    or None (see the module docstring for when)."""
    last = gen.nd - 1
    if (
        gen.code.fastmath
        or not gen.kept
        or tuple(gen.axes) != (last,)
        or any(r.target not in _SPLIT for r in gen.reductions)
        or gen.range_limited(gen.members)
    ):
        return None
    pairs = [p for p in (_pair_of(top, gen, last) for top in gen.reductions) if p is not None]
    return pairs[0] if len(pairs) == 1 else None


def _pair_of(top: Node, gen, last: int) -> OnlinePair | None:
    """The pair whose max is ``top``, if its users make one."""
    value = top.args[0]
    dtype = top.meta.dtype
    if (
        top.target is not ops.AMAX
        or dtype not in (np.float32, np.float64)
        or tuple(value.meta.shape) != gen.space
        or _axes(top) != (last,)
    ):
        return None
    for shift in top.users:
        if not (
            shift.op == "call"
            and shift.target is ops.SUBTRACT
            and len(shift.args) == 2
            and shift.args[0] is value
            and gen.alias_root(shift.args[1]) is top
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
