"""Subscripts of a program by loop indices made unsigned.

Numba checks every signed subscript for a negative value, to count it from the end as NumPy
does: a compare and a branch per subscript in the innermost loops (measured on a Nussinov
table fill of 500 bases: 13.3 ms signed, 7.4 ms unsigned). An index is written
``np.uint64(index)`` when it is at least 0 for certain: built by ``+`` and ``*`` from
constants and sizes (2 or more: the program's entry checks it) and the indices of the loops
around it, each at least 0 (a range going up from a start at least 0, or going down to a stop
at least -1), or less a constant it is known to exceed. A position read from the data, a
carried value or anything else keeps its sign (and NumPy's meaning of a negative one).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ..ir.symbolic import bounds, is_expr, is_int
from .nodes import (
    BinOp,
    Const,
    Convert,
    If,
    Item,
    Kernel,
    Loop,
    ObjectMode,
    Size,
    Slice,
    Var,
    While,
)
from .rewrite import map_exprs

_UNSIGNED = np.dtype(np.uint64)


def unsigned_indices(kernel: Kernel, ctx) -> Kernel:
    """``kernel`` with each subscript index that is at least 0 made ``uint64``."""
    return dataclasses.replace(kernel, body=_block(kernel.body, {}))


def _block(statements: tuple, lows: dict) -> tuple:
    return tuple(_statement(statement, lows) for statement in statements)


def _statement(statement, lows: dict):
    if isinstance(statement, Loop):
        inner = {**lows, statement.var: _loop_low(statement, lows)}
        body = _block(statement.body, inner)
        carried = tuple((var, _exprs(value, inner)) for var, value in statement.carried)
        return dataclasses.replace(statement, body=body, carried=carried)
    if isinstance(statement, While):
        test, body = _block(statement.test, lows), _block(statement.body, lows)
        carried = tuple((var, _exprs(value, lows)) for var, value in statement.carried)
        cond = _exprs(statement.cond, lows)
        return dataclasses.replace(statement, test=test, body=body, carried=carried, cond=cond)
    if isinstance(statement, If):
        body, orelse = _block(statement.body, lows), _block(statement.orelse, lows)
        return dataclasses.replace(
            statement, cond=_exprs(statement.cond, lows), body=body, orelse=orelse
        )
    if isinstance(statement, ObjectMode):
        return statement
    return _exprs(statement, lows)


def _exprs(value, lows: dict):
    def unsigned(expr):
        if not isinstance(expr, Item):
            return expr
        items = tuple(_unsigned_item(item, lows) for item in expr.items)
        return expr if items == expr.items else dataclasses.replace(expr, items=items)

    return map_exprs(value, unsigned)


def _unsigned_item(item, lows: dict):
    if item is None or isinstance(item, (Slice, Const, Convert)):
        return item
    low = _low(item, lows)
    return Convert(item, _UNSIGNED) if low is not None and low >= 0 else item


def _loop_low(loop: Loop, lows: dict) -> int | None:
    """The least value ``loop``'s index takes, when known."""
    if loop.step > 0:
        return _low(loop.start, lows)
    stop = _low(loop.stop, lows)
    return None if stop is None else stop + 1


def _low(expr, lows: dict) -> int | None:
    """A lower bound of ``expr``, or None."""
    if isinstance(expr, Const):
        return expr.value if is_int(expr.value) else None
    if isinstance(expr, Var):
        return lows.get(expr)
    if isinstance(expr, Size):  # (each symbol knows its interval: sizes >= 2, loop indices)
        low = bounds(expr.expr)[0] if is_expr(expr.expr) else expr.expr
        return low if is_int(low) else None
    if not isinstance(expr, BinOp):
        return None
    left, right = _low(expr.left, lows), _low(expr.right, lows)
    if expr.op == "+" and left is not None and right is not None:
        return left + right
    if expr.op == "*" and left is not None and right is not None and left >= 0 and right >= 0:
        return left * right
    if (
        expr.op == "-"
        and left is not None
        and isinstance(expr.right, Const)
        and is_int(expr.right.value)
    ):
        return left - expr.right.value
    return None
