"""Tests that raise: ``if TEST: raise E(...)`` and ``assert TEST, MSG`` become one runtime call,
so that a tracer can record the test as a check of the data (a ``raise_unless`` node) instead of
asking ``bool()`` of a traced value, and the loop around it stays a loop::

    if A[k, k] == 0.0:                  =>  __gc_rt.raise_if(A[k, k] == 0.0,
        raise ValueError("zero pivot")                       lambda: ValueError("zero pivot"))
    else:                                   rest
        rest
    assert x.min() >= 0, "negative"     =>  __gc_rt.raise_if(x.min() >= 0,
                                                             lambda: AssertionError("negative"),
                                                             True)

The exception stays lazy (made only when the test holds, as Python makes it), the test is
evaluated once, and an ``else`` (or ``elif``) follows the call: it runs exactly when the
``raise`` did not. So does the body of ``if TEST: ... else: raise E(...)`` (what a loop's
``return`` lifted after it and a ``raise`` after the loop become: ``if returned: return x``
``else: raise``), the call then raising unless the test holds. On values that are not traced
the call does what the statement did (``runtime.raise_if``). Left as written: an exception made by anything but a class called
with at most one literal or f-string (``_plain``: it is made while tracing), a bare
``raise``, ``raise ... from ...``, an ``if`` neither branch of which only raises, ``assert``
under ``python -O``, and statements of nested functions and of ``try`` blocks (a handler may
catch the error: ``effects`` refuses those).
"""

from __future__ import annotations

import ast
import sys

from .expressions import stays

_NESTED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Try)


def guard_raises(function: ast.FunctionDef, runtime: str) -> int:
    """Rewrite the raising tests of ``function``'s own scope (see the module docstring); the
    number rewritten."""
    calls: list[ast.stmt] = []
    function.body = _block(function.body, runtime, calls)
    return len(calls)


def _block(stmts: list[ast.stmt], runtime: str, calls: list) -> list[ast.stmt]:
    out: list[ast.stmt] = []
    for stmt in stmts:
        call = _raise_if(stmt, runtime)
        if call is None:
            if not isinstance(stmt, _NESTED) and type(stmt).__name__ != "TryStar":
                for name in ("body", "orelse"):
                    if getattr(stmt, name, None):
                        setattr(stmt, name, _block(getattr(stmt, name), runtime, calls))
            out.append(stmt)
            continue
        calls.append(call)
        out.append(call)
        if isinstance(stmt, ast.If):  # (the branch that does not raise follows)
            rest = stmt.body if _raises(stmt.orelse) and not _raises(stmt.body) else stmt.orelse
            out.extend(_block(rest, runtime, calls))
    return out


def _raises(block: list[ast.stmt]) -> ast.expr | None:
    """The exception a block made of one ``raise E(...)`` raises, or None."""
    if len(block) != 1 or not isinstance(block[0], ast.Raise):
        return None
    return block[0].exc if block[0].cause is None else None


def _plain(made: ast.expr) -> bool:
    """Whether making the exception can do nothing but make it (it is made while tracing to
    read its class and message): a class named (``ValueError``), or one called with at most
    one literal string or f-string of names, attributes and subscripts, formatted or not (no
    call, which could write an array or print)."""
    if isinstance(made, (ast.Name, ast.Attribute)):
        return True
    if not isinstance(made, ast.Call) or made.keywords or len(made.args) > 1:
        return False
    if not isinstance(made.func, (ast.Name, ast.Attribute)):
        return False
    for arg in made.args:
        parts = arg.values if isinstance(arg, ast.JoinedStr) else [arg]
        for part in parts:
            inner = part.value if isinstance(part, ast.FormattedValue) else part
            if not isinstance(inner, (ast.Constant, ast.Name, ast.Attribute, ast.Subscript)):
                return False
            if any(isinstance(n, ast.Call) for n in ast.walk(inner)):
                return False
    return True


def _raise_if(stmt: ast.stmt, runtime: str) -> ast.stmt | None:
    """The runtime call ``stmt`` becomes, or None if it stays: ``if test: raise E`` (its
    ``else`` follows), ``if test: ... else: raise E`` (a loop's ``return`` lifted after it,
    then a ``raise``: its body follows) and ``assert``."""
    if isinstance(stmt, ast.If) and (_raises(stmt.body) or _raises(stmt.orelse)):
        made = _raises(stmt.body)
        test, negate = stmt.test, made is None
        made = made if made is not None else _raises(stmt.orelse)
    elif isinstance(stmt, ast.Assert) and not sys.flags.optimize:
        detail = [] if stmt.msg is None else [stmt.msg]
        made = ast.Call(ast.Name("AssertionError", ast.Load()), detail, [])
        test, negate = stmt.test, True
    else:
        return None
    if stays(test) or not _plain(made):
        return None
    arguments = ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[], defaults=[])
    function = ast.Attribute(ast.Name(runtime, ast.Load()), "raise_if", ast.Load())
    make = ast.Lambda(arguments, made)
    make.called_at_once = True  # (``scopes``: its names are read here, shared with no closure)
    args = [test, make, ast.Constant(negate)]
    built = [ast.keyword("built", ast.Constant(True))] if isinstance(made, ast.Call) else []
    call = ast.Expr(ast.Call(function, args, built))
    return ast.fix_missing_locations(ast.copy_location(call, stmt))
