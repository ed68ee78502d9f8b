"""Lists a function grows in its loops, marked so that a loop traced once can record every
trip's item::

    ys = [y0]                              ys = __gc_rt.growing_list([y0])
    for t in range(n):             =>      for t in range(n):
        ...                                    ...
        ys.append(y)                           __gc_rt.append_to(ys, y)
    return np.array(ys)                    return np.array(ys)

A name is marked when every binding of it in the function's own scope is a list display
(``[]``, ``[a, b]``) or ``list()``, or a NumPy function's result, never a list (``ys =
np.array(ys)`` after the loop), no nested function or class uses it, and a loop of the
scope appends to it (``name.append(value)`` as a statement). Each of its displays and each of
its appends, in loops or not, becomes a runtime call: in plain Python they make and append to
a list (``runtime.growing_list``, ``runtime.append_to``); while tracing, the handler makes a
list that a rolled loop's trips append rows to (``frontend/list_rows.py``).
"""

from __future__ import annotations

import ast

from .plan import scope_nodes
from .scopes import function_names, parameter_names

GROWING = "growing_list"
APPEND = "append_to"


def mark_accumulations(function: ast.FunctionDef, runtime: str) -> set[str]:
    """Rewrite the displays and appends of the lists ``function`` grows in its loops (see the
    module docstring); the names rewritten."""
    names = function_names(function)
    ruled_out = (
        parameter_names(function.args)
        | names.escaping
        | names.declared_global
        | names.declared_nonlocal
        | names.dels
    )
    displays: dict[str, list[tuple]] = {}
    for node in scope_nodes(function.body):
        for name, display in _bindings(node):
            if display is None:
                ruled_out.add(name)
            else:
                displays.setdefault(name, []).append(display)
    grown = _appended_in_loops(function.body) & set(displays) - ruled_out
    for name in grown:
        for holder, field, position in displays[name]:
            elements = getattr(holder, field)
            value = elements if position is None else elements[position]
            made = _runtime_call(runtime, GROWING, [value], value)
            if position is None:
                setattr(holder, field, made)
            else:
                elements[position] = made
    if grown:
        _rewrite_appends(function.body, grown, runtime)
    return grown


def _bindings(node: ast.AST):
    """``(name, display)`` for each name ``node`` binds: where the list display (or
    ``list()``) it binds the name to is, ``(holder, field, position or None)``, when it binds
    the name to one (``ys = []``, ``a, b = [], []``); else None."""
    if isinstance(node, ast.Assign) and len(node.targets) == 1:
        target, value = node.targets[0], node.value
        if isinstance(target, ast.Name) and _is_new_list(value):
            yield target.id, (node, "value", None)
            return
        if isinstance(target, ast.Name) and _numpy_result(value):
            return  # (an array: appends to the name after it raise in eager mode too)
        if (
            isinstance(target, (ast.Tuple, ast.List))
            and isinstance(value, ast.Tuple)
            and len(target.elts) == len(value.elts)
            and all(isinstance(t, ast.Name) for t in target.elts)
            and all(_is_new_list(v) for v in value.elts)
        ):
            for position, name in enumerate(target.elts):
                yield name.id, (value, "elts", position)
            return
    for child in _own_parts(node):
        if isinstance(child, ast.Name) and isinstance(child.ctx, (ast.Store, ast.Del)):
            yield child.id, None
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        for alias in node.names:
            yield (alias.asname or alias.name).split(".")[0], None
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        yield node.name, None
    if isinstance(node, ast.ExceptHandler) and node.name:
        yield node.name, None


def _own_parts(stmt: ast.stmt):
    """The expression nodes of ``stmt`` itself (not of the statements nested in it, which
    ``scope_nodes`` yields on their own), outside nested scopes."""
    stack = [child for child in ast.iter_child_nodes(stmt) if not isinstance(child, ast.stmt)]
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Lambda, ast.excepthandler, ast.match_case)):
            continue
        yield node
        stack.extend(ast.iter_child_nodes(node))


def _is_new_list(value: ast.expr) -> bool:
    if isinstance(value, ast.List):
        return True
    return (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Name)
        and value.func.id == "list"
        and not value.args
        and not value.keywords
    )


def _numpy_result(value: ast.expr) -> bool:
    """Whether ``value`` is a call of a NumPy function (``np.array(ys)``), whose result is
    never a list."""
    func = value.func if isinstance(value, ast.Call) else None
    return (
        isinstance(func, ast.Attribute)
        and isinstance(func.value, ast.Name)
        and func.value.id in _NUMPY_NAMES
    )


_NUMPY_NAMES = ("np", "numpy")


def _appended(stmt: ast.stmt) -> str | None:
    """The name ``stmt`` appends one value to (``name.append(value)``), else None."""
    call = stmt.value if isinstance(stmt, ast.Expr) else None
    if (
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Attribute)
        and call.func.attr == "append"
        and isinstance(call.func.value, ast.Name)
        and len(call.args) == 1
        and not isinstance(call.args[0], ast.Starred)
        and not call.keywords
    ):
        return call.func.value.id
    return None


def _appended_in_loops(body: list[ast.stmt]) -> set[str]:
    found: set[str] = set()
    for node in scope_nodes(body):
        if isinstance(node, (ast.For, ast.While)):
            for inner in scope_nodes(node.body):
                name = _appended(inner)
                if name is not None:
                    found.add(name)
    return found


def _rewrite_appends(body: list[ast.stmt], grown: set[str], runtime: str) -> None:
    blocks = [body]
    for node in scope_nodes(body):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        blocks += [getattr(node, field, None) or [] for field in ("body", "orelse", "finalbody")]
        blocks += [part.body for part in getattr(node, "handlers", []) + getattr(node, "cases", [])]
    for block in blocks:
        _rewrite_block(block, grown, runtime)


def _rewrite_block(block: list[ast.stmt], grown: set[str], runtime: str) -> None:
    for position, stmt in enumerate(block):
        name = _appended(stmt)
        if name in grown:
            call = stmt.value
            arguments = [ast.Name(name, ast.Load()), call.args[0]]
            block[position] = ast.Expr(_runtime_call(runtime, APPEND, arguments, call))
            ast.copy_location(block[position], stmt)


def _runtime_call(runtime: str, function: str, arguments: list, like: ast.AST) -> ast.Call:
    call = ast.Call(
        ast.Attribute(ast.Name(runtime, ast.Load()), function, ast.Load()), arguments, []
    )
    return ast.fix_missing_locations(ast.copy_location(call, like))
