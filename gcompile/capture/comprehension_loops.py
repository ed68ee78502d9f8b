"""A list comprehension bound to a name becomes a loop appending to that name::

    rows = [predict(x) for x in X]          rows = []
                                      =>    for __gc_x_c in X:
                                                rows.append(predict(__gc_x_c))

so that ``accumulations`` marks the list a loop grows and a handler records every trip's row
from one trace of the body (``np.array(rows)`` afterwards: one loop writing a buffer), where
the comprehension would have run once per row while tracing. The rewrite takes a statement
``NAME = [ELT for TARGET in ITER]`` of the function's own scope with one generator, no
condition, a target of plain names and neither ``NAME`` nor a nested scope mentioning the
targets in ``ELT`` or ``ITER``; the targets get names of their own (a comprehension's do not
leak into the function). ``ITER`` is evaluated once, first, as the comprehension does.
"""

from __future__ import annotations

import ast

from .scopes import target_names

_NESTED = (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
_BLOCKS = ("body", "orelse", "finalbody")


def loop_comprehensions(function: ast.FunctionDef) -> int:
    """Rewrite in place the comprehensions of ``function`` the module docstring describes;
    returns how many."""
    count = _rewrite_block(function.body)
    if count:
        ast.fix_missing_locations(function)
    return count


def _rewrite_block(block: list) -> int:
    count = 0
    for statement in list(block):
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        loop = _as_loop(statement)
        if loop is not None:
            position = block.index(statement)
            block[position : position + 1] = loop
            count += 1
            continue
        for name in _BLOCKS:
            count += _rewrite_block(getattr(statement, name, None) or [])
        for part in getattr(statement, "handlers", []) + getattr(statement, "cases", []):
            count += _rewrite_block(part.body)
    return count


def _as_loop(statement: ast.stmt) -> list | None:
    """``[NAME = [], for ...: NAME.append(ELT)]`` for a statement of the rewritten form."""
    if not isinstance(statement, ast.Assign) or len(statement.targets) != 1:
        return None
    name, value = statement.targets[0], statement.value
    if not isinstance(name, ast.Name) or not isinstance(value, ast.ListComp):
        return None
    if len(value.generators) != 1:
        return None
    generator = value.generators[0]
    if generator.ifs or generator.is_async or not _plain(generator.target):
        return None
    targets = target_names(generator.target)
    if any(_mentions(part, {name.id}) for part in (value.elt, generator.iter)):
        return None
    if any(_mentions(n, targets) for n in ast.walk(value.elt) if isinstance(n, _NESTED)):
        return None
    renamed = {target: f"__gc_{target}_c" for target in targets}
    element = _Renamed(renamed).visit(value.elt)
    target = _Renamed(renamed).visit(generator.target)
    append = ast.Attribute(ast.Name(name.id, ast.Load()), "append", ast.Load())
    grow = ast.Expr(ast.Call(append, [element], []))
    start = ast.Assign([ast.Name(name.id, ast.Store())], ast.List([], ast.Load()))
    loop = ast.For(target, generator.iter, [ast.copy_location(grow, statement)], [])
    return [ast.copy_location(start, statement), ast.copy_location(loop, statement)]


def _plain(target: ast.expr) -> bool:
    """A name, or a tuple or list of plain targets (``for i, x in enumerate(X)``)."""
    if isinstance(target, ast.Name):
        return True
    return isinstance(target, (ast.Tuple, ast.List)) and all(_plain(t) for t in target.elts)


def _mentions(node: ast.AST, names: set) -> bool:
    return any(isinstance(n, ast.Name) and n.id in names for n in ast.walk(node))


class _Renamed(ast.NodeTransformer):
    def __init__(self, names: dict):
        self.names = names

    def visit_Name(self, node: ast.Name) -> ast.Name:
        if node.id in self.names:
            return ast.copy_location(ast.Name(self.names[node.id], node.ctx), node)
        return node
