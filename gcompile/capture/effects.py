"""Statements that change Python state outside the function, marked so that they run in Python
on every call instead of once while tracing::

    self.state = self.state + x          __gc_rt.python_effect("assigns the attribute `.state`")
                                   =>    self.state = self.state + x

A marked statement is one that rebinds a name declared ``global`` or ``nonlocal``, assigns an
attribute or an item of an object the function did not make (``self.n``, ``D[k]``, a
parameter's, a global's), calls a mutating method of a container on such an object
(``history.append(v)``), or is a ``try`` statement with handlers around operations on the data
(they would catch what those raise at run time, which a trace cannot see; the check runs
before each exit of its body too), unless each of its handlers only raises: its body is then
traced, and what it catches, raised by the compiled code, makes the call run again eagerly
(``runtime.rerun_on``), which raises as the handler does. The marker is a no-op in plain
Python; while tracing it refuses the statement (``runtime.python_effect``) unless, on the way
from the name it starts from to the object it changes, it meets a traced array or a module
(``x.real = v``,
``x.T[i] = v``, ``state["t"][...] = v``, ``params[k] -= g``: the array changes in place,
``np.add(a, b, out=b)``: the tracer's), so the function breaks its graph there
(``graph_breaks``) or runs eagerly. Not seen: changes through a local
alias of an outside object (``h = self.items; h.append(v)``), ``setattr`` and functions that
change their arguments (``heapq.heappush``).
"""

from __future__ import annotations

import ast
import copy

from .plan import mutated_by_call
from .scopes import function_names, parameter_names

EFFECT = "python_effect"
MARK = "python_effect_mark"
RERUN = "rerun_on"
_RETURNED = "__gc_try_returned"
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
        if (isinstance(stmt, ast.Try) or type(stmt).__name__ == "TryStar") and stmt.handlers:
            _mark_try(stmt, block, runtime)  # (a ``finally`` alone catches nothing)
            marked = True
        effect = _effect(stmt, made, rebound)
        if effect is not None:
            block.insert(block.index(stmt), _marker(stmt, runtime, *effect))
            marked = True
            continue
        for name in _BLOCKS:
            marked |= _mark(getattr(stmt, name, None) or [], made, rebound, runtime)
        for part in getattr(stmt, "handlers", []) + getattr(stmt, "cases", []):
            marked |= _mark(part.body, made, rebound, runtime)
    return marked


def _effect(stmt: ast.stmt, made: set, rebound: set) -> tuple | None:
    """``(why, root, steps)`` when ``stmt`` may change Python state outside the function: the
    name of the object it starts from (None when it surely does) and the attributes and items
    leading from it to the object changed (an augmented item's own too); or None."""
    targets = stmt.targets if isinstance(stmt, ast.Assign) else [getattr(stmt, "target", None)]
    if isinstance(stmt, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
        for target in targets:
            if isinstance(target, ast.Name) and target.id in rebound:
                return f"rebinds `{target.id}`, declared global or nonlocal", None, []
            if not isinstance(target, (ast.Attribute, ast.Subscript)):
                continue
            reached = _path(target if isinstance(stmt, ast.AugAssign) else target.value, made)
            if reached is not None:
                what = "an attribute" if isinstance(target, ast.Attribute) else "an item"
                return f"assigns {what} of", *reached
    if isinstance(stmt, (ast.For, ast.While, ast.If)):
        return None  # (their blocks are read on their own)
    for node in ast.walk(stmt):
        changed = mutated_by_call(node)
        if changed is not None:
            reached = _path(changed, made)
            if reached is not None:
                return f"calls `.{node.func.attr}(...)` of", *reached
    return None


def _path(node: ast.expr, made: set) -> tuple | None:
    """``(root name, steps)`` of a chain of names, attributes and items not rooted at a name
    the function bound itself (``self.log``, ``history``, ``params[k]``): each step
    ``("attr", name)`` or ``("item", key)``, up to the first slice; else None."""
    steps: list[ast.expr] = []
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        if isinstance(node, ast.Attribute):
            steps.insert(0, ast.Tuple([ast.Constant("attr"), ast.Constant(node.attr)], ast.Load()))
        elif any(isinstance(n, ast.Slice) for n in ast.walk(node.slice)):
            steps.clear()  # (a slice of what follows: the object before it is the one changed)
        else:
            key = copy.deepcopy(node.slice)
            steps.insert(0, ast.Tuple([ast.Constant("item"), key], ast.Load()))
        node = node.value
    if not isinstance(node, ast.Name) or node.id in made:
        return None
    return node, steps


def _mark_try(stmt: ast.stmt, block: list[ast.stmt], runtime: str) -> None:
    """A ``try`` statement: the graph's size noted before it, and a marker before each exit of
    its body and opening each handler that refuses it when its body recorded operations (what
    they raise when they run, its handlers would catch: a trace cannot see it). One on values
    known while tracing (shapes, options) stays Python's, run once."""
    since = f"__gc_try_{stmt.lineno}_{stmt.col_offset}"
    note = ast.Call(ast.Attribute(ast.Name(runtime, ast.Load()), MARK, ast.Load()), [], [])
    block.insert(
        block.index(stmt), _located(ast.Assign([ast.Name(since, ast.Store())], note), stmt)
    )
    reason = "is a `try` around operations on the data (its handlers catch what they raise)"

    def check() -> ast.stmt:
        return _marker(stmt, runtime, reason, None, [], since)

    if _raises_only(stmt):  # (what its body raises at run time makes the call run eagerly)
        caught = ast.Tuple([handler.type for handler in stmt.handlers], ast.Load())
        rerun = ast.Attribute(ast.Name(runtime, ast.Load()), RERUN, ast.Load())
        block.insert(block.index(stmt), _located(ast.Expr(ast.Call(rerun, [caught], [])), stmt))
    else:
        stmt.body = _before_exits(stmt.body, check) + [check()]
    for handler in stmt.handlers:
        handler.body.insert(0, check())


def _raises_only(stmt: ast.stmt) -> bool:
    """Whether each handler of the ``try`` statement ``stmt`` names what it catches and only
    raises (``except LinAlgError: raise ValueError(...)``), with no ``else`` or ``finally``."""
    return (
        isinstance(stmt, ast.Try)
        and not stmt.orelse
        and not stmt.finalbody
        and all(
            h.type is not None and len(h.body) == 1 and isinstance(h.body[0], ast.Raise)
            for h in stmt.handlers
        )
    )


def _before_exits(block: list[ast.stmt], check, in_loop: bool = False) -> list[ast.stmt]:
    """``block`` with ``check()`` before each exit of the ``try`` body it is in: each
    ``return`` (after its value is computed) and, outside loops nested in the body, each
    ``break`` and ``continue``."""
    out: list[ast.stmt] = []
    for stmt in block:
        if isinstance(stmt, ast.Return) and stmt.value is not None:
            kept = ast.Name(_RETURNED, ast.Store())
            out.append(_located(ast.Assign([kept], stmt.value), stmt))
            out.append(check())
            out.append(_located(ast.Return(ast.Name(_RETURNED, ast.Load())), stmt))
            continue
        if isinstance(stmt, ast.Return) or (
            isinstance(stmt, (ast.Break, ast.Continue)) and not in_loop
        ):
            out.append(check())
        elif isinstance(stmt, ast.If):
            stmt.body = _before_exits(stmt.body, check, in_loop)
            stmt.orelse = _before_exits(stmt.orelse, check, in_loop)
        elif isinstance(stmt, (ast.For, ast.While)):
            stmt.body = _before_exits(stmt.body, check, in_loop=True)
        out.append(stmt)
    return out


def _marker(
    stmt: ast.stmt,
    runtime: str,
    reason: str,
    root: ast.Name | None,
    steps: list,
    since: str = "",
) -> ast.stmt:
    """``runtime.python_effect(reason[, root, steps][, since=since])``."""
    arguments: list[ast.expr] = [ast.Constant(reason)]
    if root is not None:
        arguments += [ast.Name(root.id, ast.Load()), ast.Tuple(steps, ast.Load())]
    keywords = [ast.keyword("since", ast.Name(since, ast.Load()))] if since else []
    function = ast.Attribute(ast.Name(runtime, ast.Load()), EFFECT, ast.Load())
    return _located(ast.Expr(ast.Call(function, arguments, keywords)), stmt)


def _located(stmt: ast.stmt, like: ast.AST) -> ast.stmt:
    return ast.fix_missing_locations(ast.copy_location(stmt, like))
