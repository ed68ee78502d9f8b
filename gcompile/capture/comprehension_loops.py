"""A list comprehension bound to a name that only array functions read becomes a loop::

    rows = [predict(x) for x in X]          __gc_rows_list = []
    return np.array(rows)             =>    for __gc_x_c in X:
                                                __gc_rows_list.append(predict(__gc_x_c))
                                            rows = __gc_rows_list
                                            return np.array(rows)

so that ``accumulations`` marks the list a loop grows and a handler records every trip's row
from one trace of the body (one loop writing a buffer), where the comprehension would have run
once per row while tracing. The rewrite takes a statement ``NAME = [ELT for TARGET in ITER]``
of the function's own scope with one generator, no condition, a target of plain names, no
nested scope mentioning the targets in ``ELT``, and ``NAME`` read elsewhere only as the first
argument of ``ARRAY_FUNCTIONS`` (a list read otherwise would make the loop decline, and the
trace start again: the comprehension as written is cheaper). The list is built in a name of
its own and bound to ``NAME`` once complete, as the comprehension binds it (a function reading
``NAME`` meanwhile, or an exception, sees the value before); the targets get names of their own
(a comprehension's do not leak into the function).
"""

from __future__ import annotations

import ast

from .scopes import mentions, target_names

_NESTED = (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
_BLOCKS = ("body", "orelse", "finalbody")


ARRAY_FUNCTIONS = ("array", "asarray", "stack", "vstack", "hstack", "column_stack", "concatenate")


def loop_comprehensions(function: ast.FunctionDef) -> int:
    """Rewrite in place the comprehensions of ``function`` the module docstring describes;
    returns how many."""
    count = _rewrite_block(function.body, _array_only_names(function))
    if count:
        ast.fix_missing_locations(function)
    return count


def _array_only_names(function: ast.FunctionDef) -> set:
    """The names every read of which is the first argument of ``np.<ARRAY_FUNCTIONS>(...)``."""
    as_arrays = set()  # (the reads that are)
    for node in ast.walk(function):
        if isinstance(node, ast.Call) and _array_function(node.func) and node.args:
            if isinstance(node.args[0], ast.Name):
                as_arrays.add(id(node.args[0]))
    read_so, read_otherwise = set(), set()
    for node in ast.walk(function):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            (read_so if id(node) in as_arrays else read_otherwise).add(node.id)
    return read_so - read_otherwise


def _array_function(func: ast.expr) -> bool:
    return isinstance(func, ast.Attribute) and func.attr in ARRAY_FUNCTIONS


def _rewrite_block(block: list, array_only: set) -> int:
    count = 0
    for statement in list(block):
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        loop = _as_loop(statement, array_only)
        if loop is not None:
            position = block.index(statement)
            block[position : position + 1] = loop
            count += 1
            continue
        for name in _BLOCKS:
            count += _rewrite_block(getattr(statement, name, None) or [], array_only)
        for part in getattr(statement, "handlers", []) + getattr(statement, "cases", []):
            count += _rewrite_block(part.body, array_only)
    return count


def _as_loop(statement: ast.stmt, array_only: set) -> list | None:
    """The statements building the list in a loop, for a statement of the rewritten form."""
    if not isinstance(statement, ast.Assign) or len(statement.targets) != 1:
        return None
    name, value = statement.targets[0], statement.value
    if not isinstance(name, ast.Name) or not isinstance(value, ast.ListComp):
        return None
    if name.id not in array_only:
        return None
    if len(value.generators) != 1:
        return None
    generator = value.generators[0]
    if generator.ifs or generator.is_async or not _plain(generator.target):
        return None
    targets = target_names(generator.target)
    if any(mentions(n, targets) for n in ast.walk(value.elt) if isinstance(n, _NESTED)):
        return None
    renamed = {target: f"__gc_{target}_c" for target in targets}
    element = _Renamed(renamed).visit(value.elt)
    target = _Renamed(renamed).visit(generator.target)
    rows = f"__gc_{name.id}_list"
    append = ast.Attribute(ast.Name(rows, ast.Load()), "append", ast.Load())
    grow = ast.Expr(ast.Call(append, [element], []))
    start = ast.Assign([ast.Name(rows, ast.Store())], ast.List([], ast.Load()))
    loop = ast.For(target, generator.iter, [ast.copy_location(grow, statement)], [])
    done = ast.Assign([ast.Name(name.id, ast.Store())], ast.Name(rows, ast.Load()))
    return [ast.copy_location(s, statement) for s in (start, loop, done)]


def _plain(target: ast.expr) -> bool:
    """A name, or a tuple or list of plain targets (``for i, x in enumerate(X)``)."""
    if isinstance(target, ast.Name):
        return True
    return isinstance(target, (ast.Tuple, ast.List)) and all(_plain(t) for t in target.elts)


class _Renamed(ast.NodeTransformer):
    def __init__(self, names: dict):
        self.names = names

    def visit_Name(self, node: ast.Name) -> ast.Name:
        if node.id in self.names:
            return ast.copy_location(ast.Name(self.names[node.id], node.ctx), node)
        return node
