"""Early returns from ``if`` statements, made tail returns and then one return, so that the
``if`` can become a ``cond`` when its test is traced::

    if s > 0:                       if s > 0:                      if s > 0:
        return x + 1                    return x + 1                   __gc_result = x + 1
    y = x * 2               =>      else:                   =>     else:
    return y - 1                        y = x * 2                      y = x * 2
                                        return y - 1                   __gc_result = y - 1
                                                                   return __gc_result

Step one: an ``if`` of which one branch ends in a return and the other does not takes the
statements after it into that other branch (nothing after such an ``if`` runs when the first
branch is taken: the same program). Step two: when the function's last statement is an ``if``
whose branches all end in a return, and it holds no other ``return``, each return assigns
``__gc_result`` and one return follows. Only the function's own blocks and the branches of
its ``if`` statements are rewritten: a return inside a loop, ``try`` or ``with`` stays.
"""

from __future__ import annotations

import ast
from typing import Callable

RESULT = "__gc_result"
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


def merge_returns(function: ast.FunctionDef) -> None:
    """Rewrite ``function``'s early returns in ``if`` statements (see the module docstring).
    A function whose last statement is an ``if`` holding returns, that may run past its end,
    ends in ``return None`` first (what Python returns there), so that every path returns."""
    last = function.body[-1] if function.body else None
    if _past_its_end(function.body):
        none = ast.copy_location(ast.Return(ast.Constant(None)), last)
        function.body.append(ast.fix_missing_locations(none))
    function.body = merge_tails(function.body, _ends_in_return)
    last = function.body[-1] if function.body else None
    if isinstance(last, ast.If) and _ends_in_return([last]) and _returns(last) == _tails(last):
        width = _tuple_width(last)
        names = [RESULT] if width is None else [f"{RESULT}_{i}" for i in range(width)]
        _assign_tails(last, names)
        loads = [ast.Name(name, ast.Load()) for name in names]
        value = loads[0] if width is None else ast.Tuple(loads, ast.Load())
        ret = ast.Return(value)
        function.body.append(ast.fix_missing_locations(ast.copy_location(ret, last)))


def merge_tails(block: list[ast.stmt], ends: Callable[[list[ast.stmt]], bool]) -> list[ast.stmt]:
    """``block`` with each ``if`` of which one branch ``ends`` (in a return, a break...) and
    the other does not holding the statements after it in that other branch."""
    out: list[ast.stmt] = []
    for position, stmt in enumerate(block):
        out.append(stmt)
        if not isinstance(stmt, ast.If):
            continue
        stmt.body, stmt.orelse = merge_tails(stmt.body, ends), merge_tails(stmt.orelse, ends)
        rest = block[position + 1 :]
        exits = ends(stmt.body), ends(stmt.orelse)
        if rest and exits[0] != exits[1]:
            if exits[0]:
                stmt.orelse = merge_tails(stmt.orelse + rest, ends)
            else:
                stmt.body = merge_tails(stmt.body + rest, ends)
            return out
    return out


def _past_its_end(body: list[ast.stmt]) -> bool:
    """Whether the function may run past its last statement, an ``if`` of the user's that
    holds returns (not the one a loop's return became: its loop returns, by a flag the
    trace cannot tell)."""
    last = body[-1] if body else None
    if not isinstance(last, ast.If) or not _returns(last) or _ends_in_return(body):
        return False
    return not any(
        isinstance(n, ast.Name) and n.id.startswith("__gc_") for n in ast.walk(last.test)
    )


def _ends_in_return(block: list[ast.stmt]) -> bool:
    """Whether running ``block`` always ends in a ``return`` at its end."""
    if not block:
        return False
    last = block[-1]
    if isinstance(last, ast.Return):
        return True
    return isinstance(last, ast.If) and _ends_in_return(last.body) and _ends_in_return(last.orelse)


def _tails(stmt: ast.If) -> int:
    """How many returns end the branches of ``stmt`` (nested ``if`` statements' included)."""
    return sum(
        _tails(block[-1]) if isinstance(block[-1], ast.If) else 1
        for block in (stmt.body, stmt.orelse)
    )


def _returns(node: ast.AST) -> int:
    """How many ``return`` statements ``node`` holds in its own scope."""
    count = 0
    for child in ast.iter_child_nodes(node):
        if isinstance(child, _SCOPES):
            continue
        count += isinstance(child, ast.Return) + _returns(child)
    return count


def _tail_values(stmt: ast.If) -> list:
    """The values the tail returns of ``stmt`` return (None for a bare ``return``)."""
    values = []
    for block in (stmt.body, stmt.orelse):
        last = block[-1]
        values += _tail_values(last) if isinstance(last, ast.If) else [last.value]
    return values


def _tuple_width(stmt: ast.If) -> int | None:
    """The length of the tuple every tail return of ``stmt`` writes out (``return x, it``),
    else None: a tuple result is then one name per item, so that each may be carried."""
    widths = {len(v.elts) if isinstance(v, ast.Tuple) else None for v in _tail_values(stmt)}
    width = widths.pop() if len(widths) == 1 else None
    return width if width else None


def _assign_tails(stmt: ast.If, names: list) -> None:
    """Each tail ``return value`` of ``stmt`` as ``__gc_result = value`` (or, for a tuple,
    ``__gc_result_0, __gc_result_1 = value``)."""
    for block in (stmt.body, stmt.orelse):
        last = block[-1]
        if isinstance(last, ast.If):
            _assign_tails(last, names)
            continue
        value = last.value or ast.Constant(None)
        stores = [ast.Name(name, ast.Store()) for name in names]
        target = stores[0] if len(stores) == 1 else ast.Tuple(stores, ast.Store())
        assign = ast.Assign([target], value)
        block[-1] = ast.fix_missing_locations(ast.copy_location(assign, last))
