"""``return`` inside ``for`` and ``while`` loops, made a flag and a ``break`` (which ``exits`` then makes a
flag too), the return itself moved after the loop, so that the loop stays one loop::

    for i in range(n):                  __gc_returning_0 = False
        if x[i] > t:                    for i in range(n):
            return i             =>         if x[i] > t:
    return -1                                   __gc_returning_0 = True
                                                break
                                        if __gc_returning_0:
                                            return i
                                        return -1

The returned expression is evaluated after the loop instead of in it: the same values, since
nothing runs between (the rest of the trip that returns, and the trips after it, do nothing
once the break is made a flag), and the loop's variables keep that trip's values. Several
returns in one loop number their flag (``__gc_returning_0 == 2``). A return in a loop nested
in the loop breaks each loop out to it (``if __gc_returning_0: break`` after the inner one).
A ``while`` loop's test is not evaluated again after the break, as it is not after the
return. A loop with a return inside ``try``, ``with`` or ``match``, or with an ``else:``,
stays as written.
"""

from __future__ import annotations

import ast

from .iterables import own_loops

RETURNING = "__gc_returning_"
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_LOOPS = (ast.For, ast.While)
_LIFTED = (ast.If, *_LOOPS)  # the statements a lifted return may sit in


def lift_loop_returns(function: ast.FunctionDef) -> None:
    """Rewrite the returns inside ``function``'s own loops (see the module docstring)."""
    count = 0
    for loop, block in own_loops(function.body, True, _LOOPS):  # (outer loops first)
        if not _returns_in(loop.body) or not _liftable(loop.body):
            continue
        flag = f"{RETURNING}{count}"
        count += 1
        values: list[ast.expr] = []
        single = sum(isinstance(n, ast.Return) for s in loop.body for n in _own_nodes(s)) == 1
        loop.body = _replace(loop.body, flag, values, single)
        at = block.index(loop)
        start = ast.Assign([ast.Name(flag, ast.Store())], ast.Constant(False if single else 0))
        after = [_return_if(flag, number, value, single) for number, value in enumerate(values, 1)]
        block[at : at + 1] = [_located(start, loop), loop, *(_located(s, loop) for s in after)]
        ast.fix_missing_locations(loop)


def _returns_in(stmts: list[ast.stmt]) -> bool:
    """Whether the statements hold a ``return`` of their own scope."""
    for stmt in stmts:
        for node in _own_nodes(stmt):
            if isinstance(node, ast.Return):
                return True
    return False


def _own_nodes(node: ast.AST):
    yield node
    for child in ast.iter_child_nodes(node):
        if not isinstance(child, _SCOPES):
            yield from _own_nodes(child)


def _liftable(stmts: list[ast.stmt]) -> bool:
    """Whether every return in the statements sits in ``if``, ``for`` and ``while`` (no
    ``else:``) statements only."""
    for stmt in stmts:
        if isinstance(stmt, ast.Return) or not _returns_in([stmt]):
            continue
        if not isinstance(stmt, _LIFTED) or (isinstance(stmt, _LOOPS) and stmt.orelse):
            return False
        if not _liftable(stmt.body) or not _liftable(getattr(stmt, "orelse", [])):
            return False
    return True


def _replace(stmts: list[ast.stmt], flag: str, values: list, single: bool) -> list[ast.stmt]:
    """The statements with each ``return v`` setting ``flag`` (True for the ``single`` one,
    else its number among ``values``, where ``v`` goes) and breaking; a loop nested in them
    that did so is followed by a break out of the enclosing loop when the flag is set."""
    out: list[ast.stmt] = []
    for stmt in stmts:
        if isinstance(stmt, ast.Return):
            values.append(stmt.value or ast.Constant(None))
            mark = ast.Constant(True if single else len(values))
            out += [
                _located(ast.Assign([ast.Name(flag, ast.Store())], mark), stmt),
                _located(ast.Break(), stmt),
            ]
            continue
        if isinstance(stmt, ast.If) and _returns_in([stmt]):
            stmt.body = _replace(stmt.body, flag, values, single)
            stmt.orelse = _replace(stmt.orelse, flag, values, single)
        out.append(stmt)
        if isinstance(stmt, _LOOPS) and _returns_in(stmt.body):
            stmt.body = _replace(stmt.body, flag, values, single)
            leave = ast.If(ast.Name(flag, ast.Load()), [ast.Break()], [])
            out.append(_located(leave, stmt))
    return out


def _return_if(flag: str, number: int, value: ast.expr, single: bool) -> ast.If:
    test = (
        ast.Name(flag, ast.Load())
        if single
        else ast.Compare(ast.Name(flag, ast.Load()), [ast.Eq()], [ast.Constant(number)])
    )
    return ast.If(test, [ast.Return(value)], [])


def _located(stmt: ast.stmt, like: ast.AST) -> ast.stmt:
    return ast.fix_missing_locations(ast.copy_location(stmt, like))
