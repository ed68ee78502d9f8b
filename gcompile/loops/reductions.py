"""The accumulators of the reductions a loop computes: start value, how values combine, the
result once the loop is done.

Float64 (and complex128) sums are *blocked* (``blocked_sums``): no partial sum takes more than
a block of terms of similar size, so the error stays a few ulp times log2(n), as with NumPy's
pairwise sum, where one accumulator's would grow with n. Float32 (and complex64) sums
accumulate in float64, which is more accurate than NumPy's float32 pairwise sum, so the two
agree within NumPy's own error. Products, max and min accumulate naively in the result dtype,
as NumPy does. ``var``/``std`` take two accumulators: the mean, then the sum of squared
deviations from it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..ir import ops
from ..ir.graph import Node
from .nodes import (
    Accumulator,
    BinOp,
    BoolOp,
    Compare,
    Const,
    Convert,
    Intrinsic,
    Unsupported,
    Var,
)


def accumulators_of(node: Node, count: Any) -> list[Accumulator]:
    """The accumulators of reduction ``node`` over ``count`` elements per row (an expression),
    in the order their loops run; raises ``Unsupported`` for what no loop computes."""
    op, out = node.target, node.meta.dtype
    operand = node.args[0].meta.dtype
    acc = Var("acc_", node)
    if op in (ops.SUM, ops.MEAN):
        return [_sum(node, out, operand, acc, count)]
    if op is ops.PROD:
        dtype = out if out.kind in "fc" else _wide_int(out)
        return [Accumulator(node, "prod", dtype, Const(1, dtype), Convert(acc, out), operand)]
    if op in (ops.AMAX, ops.AMIN):
        if out.kind == "c":
            raise Unsupported(f"no template for {op.name} on complex")
        high = op is ops.AMAX
        kind = "max" if high else "min"
        return [Accumulator(node, kind, out, _extreme(out, high), acc, operand, lane=kind)]
    if op in (ops.ANY, ops.ALL):
        kind = "any" if op is ops.ANY else "all"
        start = Const(op is ops.ALL, np.dtype(bool))
        return [Accumulator(node, kind, np.dtype(bool), start, acc, operand, lane=kind)]
    if op in (ops.VAR, ops.STD):
        return _variance(node, out, operand, count)
    if op in (ops.ARGMAX, ops.ARGMIN):
        if operand.kind == "c":
            raise Unsupported(f"no template for {op.name} on complex")
        high = op is ops.ARGMAX
        return [Accumulator(node, "arg", operand, None, Var("at_", node), operand, high=high)]
    raise Unsupported(f"no loop for reduction {op.name}")


def mean_of(total: Any, count: Any, dtype: np.dtype) -> Convert:
    """``total / count`` in ``dtype``."""
    return Convert(BinOp("/", Convert(total, dtype), Convert(count, dtype)), dtype)


def _sum(node: Node, out: np.dtype, operand: np.dtype, acc: Var, count: Any) -> Accumulator:
    op = node.target
    if out.kind in "fc":
        wide = np.dtype(np.complex128 if out.kind == "c" else np.float64)
        final = mean_of(acc, count, out) if op is ops.MEAN else Convert(acc, out)
        return Accumulator(
            node, "sum", wide, Const(0, wide), final, operand, blocked=out == wide, lane="sum"
        )
    wide = _wide_int(out)
    if out.kind not in "iub":
        raise Unsupported(f"{op.name} of {out}")
    return Accumulator(node, "sum", wide, Const(0, wide), Convert(acc, out), operand, lane="sum")


def _variance(node: Node, out: np.dtype, operand: np.dtype, count: Any) -> list[Accumulator]:
    """The mean pass (prefix ``m_``), then the sum of squared deviations."""
    op = node.target
    if out.kind != "f" or operand.kind == "c":
        raise Unsupported(f"no template for {op.name} on {operand}")
    wide = np.dtype(np.float64)
    ddof = int(node.kwargs.get("ddof", 0) or 0)
    dof = Intrinsic("max", (BinOp("-", count, Const(ddof)), Const(0)))
    variance = mean_of(Var("acc_", node), dof, out)
    final = Convert(Intrinsic("sqrt", (variance,)), out) if op is ops.STD else variance
    common = dict(blocked=out == wide, lane="sum")
    mean = mean_of(Var("acc_m_", node), count, out)
    return [
        Accumulator(node, "sum", wide, Const(0, wide), mean, operand, prefix="m_", **common),
        Accumulator(node, "sum", wide, Const(0, wide), final, out, **common),
    ]


def _wide_int(dtype: np.dtype) -> np.dtype:
    return np.dtype(np.uint64 if dtype.kind == "u" else np.int64)


def _extreme(dtype: np.dtype, high: bool) -> Const:
    """The start of a max (``high``) or min: the dtype's lowest or highest value."""
    if dtype.kind == "f":
        return Const(-np.inf if high else np.inf, dtype)
    if dtype.kind == "b":
        return Const(not high, dtype)
    info = np.iinfo(dtype)
    return Const(info.min if high else info.max, dtype)


def better(acc: Accumulator, value: Any):
    """Whether ``value`` beats the best so far of an ``arg`` accumulator (NaN wins, once)."""
    best = acc.var("best")
    test = Compare((">" if acc.high else "<",), (value, best))
    if acc.dtype.kind != "f":
        return test
    is_nan = Compare(("!=",), (value, value))
    return BoolOp("and", (Compare(("==",), (best, best)), BoolOp("or", (test, is_nan))))
