"""Statements that change Python state outside the function, marked so that they run in Python
on every call instead of once while tracing::

    self.state = self.state + x          __gc_rt.python_effect("assigns the attribute `.state`")
                                   =>    self.state = self.state + x

A marked statement is one that rebinds a name declared ``global`` or ``nonlocal``, assigns an
attribute of an object the function did not make (``self.n``, a parameter's, a global's), calls
a mutating method of a container on such an object (``history.append(v)``), or is a ``try``
statement around operations on the data (its handlers catch what they raise at run time,
which a trace cannot see). The marker is a no-op in plain Python; while tracing it refuses the statement
(``runtime.python_effect``) unless the object is an array or a module (``x.real = v``,
``np.add(a, b, out=b)``: the tracer's), so the function breaks its graph there
(``graph_breaks``) or runs eagerly.
"""

from __future__ import annotations

import ast

from .plan import _CONTAINER_MUTATORS
from .scopes import function_names, parameter_names

EFFECT = "python_effect"
MARK = "python_effect_mark"
_BLOCKS = ("body", "orelse", "finalbody")


def mark_effects(function: ast.FunctionDef, runtime: str) -> bool:
    """Insert a marker (a call of ``runtime``'s ``python_effect``) before each statement of
    ``function``'s own scope with an effect (see the module docstring); True if any."""
    names = function_names(function)
    made = names.local - parameter_names(function.args)  # (objects the function made)
    rebound = names.declared_global | names.declared_nonlocal
    return _mark(function.body, made, rebound, runtime)


def _mark(block: list[ast.stmt], made: set, rebound: set, runtime: str) -> bool:
    marked = False
    for stmt in list(block):
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        if isinstance(stmt, ast.Try) or type(stmt).__name__ == "TryStar":
            _mark_try(stmt, block, runtime)
            marked = True
        effect = _effect(stmt, made, rebound)
        if effect is not None:
            block.insert(block.index(stmt), _marker(stmt, *effect, runtime))
            marked = True
            continue
        for name in _BLOCKS:
            marked |= _mark(getattr(stmt, name, None) or [], made, rebound, runtime)
        for part in getattr(stmt, "handlers", []) + getattr(stmt, "cases", []):
            marked |= _mark(part.body, made, rebound, runtime)
    return marked


def _effect(stmt: ast.stmt, made: set, rebound: set) -> tuple | None:
    """``(why, receiver)`` when ``stmt`` may change Python state outside the function (the
    receiver: the expression of the object it changes, None when it surely does), or None."""
    targets = stmt.targets if isinstance(stmt, ast.Assign) else [getattr(stmt, "target", None)]
    if isinstance(stmt, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
        for target in targets:
            if isinstance(target, ast.Name) and target.id in rebound:
                return f"rebinds `{target.id}`, declared global or nonlocal", None
            if isinstance(target, ast.Attribute) and _foreign(target.value, made):
                return f"assigns the attribute `.{target.attr}` of", target.value
    if isinstance(stmt, (ast.For, ast.While, ast.If)):
        return None  # (their blocks are read on their own)
    for node in ast.walk(stmt):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in _CONTAINER_MUTATORS
            and _foreign(node.func.value, made)
        ):
            return f"calls `.{node.func.attr}(...)` of", node.func.value
    return None


def _foreign(node: ast.expr, made: set) -> bool:
    """Whether ``node`` is a chain of names and attributes not rooted at a name the function
    bound itself (``self.log``, ``history``, an argument)."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name) and node.id not in made


def _mark_try(stmt: ast.stmt, block: list[ast.stmt], runtime: str) -> None:
    """A ``try`` statement: the graph's size noted before it, and a marker ending its body and
    opening each handler that refuses it when its body recorded operations (what they raise
    when they run, its handlers would catch: a trace cannot see it). One on values known while
    tracing (shapes, options) stays Python's, run once."""
    since = f"__gc_try_{stmt.lineno}_{stmt.col_offset}"
    note = ast.Call(ast.Attribute(ast.Name(runtime, ast.Load()), MARK, ast.Load()), [], [])
    block.insert(
        block.index(stmt), _located(ast.Assign([ast.Name(since, ast.Store())], note), stmt)
    )
    reason = "is a `try` around operations on the data (its handlers catch what they raise)"
    stmt.body.append(_marker(stmt, reason, None, runtime, since))
    for handler in stmt.handlers:
        handler.body.insert(0, _marker(stmt, reason, None, runtime, since))


def _marker(
    stmt: ast.stmt, reason: str, receiver: ast.expr | None, runtime: str, since: str = ""
) -> ast.stmt:
    arguments = [ast.Constant(reason)] + ([] if receiver is None else [receiver])
    keywords = [ast.keyword("since", ast.Name(since, ast.Load()))] if since else []
    function = ast.Attribute(ast.Name(runtime, ast.Load()), EFFECT, ast.Load())
    call = ast.Call(function, arguments, keywords)
    return _located(ast.Expr(call), stmt)


def _located(stmt: ast.stmt, like: ast.AST) -> ast.stmt:
    return ast.fix_missing_locations(ast.copy_location(stmt, like))
