"""Loops over ``enumerate(...)``, ``zip(...)`` and ``itertools.repeat(...)``, and loops
unpacking their items, made loops of one name the planner takes::

    for i, row in enumerate(x):          for __gc_item_0 in __gc_rt.iterate(enumerate, x):
        BODY                       =>        i, row = __gc_item_0
                                             BODY

``runtime.iterate`` gives back what the builtin returns, wrapped so that a handler can see
what is iterated (``runtime.Enumerated``, ``runtime.Zipped``): a loop over the rows of traced
arrays then stays a loop. When ``enumerate`` or ``zip`` is not the builtin there, it calls what
the name holds. A target that is not a tuple or list of plain names, and loops with an
``else:``, stay as written.
"""

from __future__ import annotations

import ast

ITEM = "__gc_item_"
_BUILTINS = ("enumerate", "zip")
_WRAPPED = (
    *_BUILTINS,
    "repeat",
)  # (``repeat`` or ``itertools.repeat``: ``runtime.iterate`` checks)


def unpack_targets(function: ast.FunctionDef, runtime: str) -> None:
    """Rewrite the loops of ``function``'s own scope (see the module docstring)."""
    count = 0
    for node in own_loops(function.body):
        node.iter = _Wrap(runtime).visit(node.iter)
        if isinstance(node.target, (ast.Tuple, ast.List)) and _plain_names(node.target):
            item = f"{ITEM}{count}"
            count += 1
            unpack = ast.Assign([node.target], ast.Name(item, ast.Load()))
            node.body.insert(0, ast.fix_missing_locations(ast.copy_location(unpack, node)))
            node.target = ast.copy_location(ast.Name(item, ast.Store()), node.target)


def own_loops(stmts: list[ast.stmt], with_blocks: bool = False, kinds: tuple = (ast.For,)):
    """The ``for`` loops (or loops of ``kinds``; no ``else:``) of a block and of the blocks
    nested in it, not of nested functions or classes; with ``with_blocks``, each with the
    block holding it. Each is yielded before the blocks it holds are read, so a caller may
    rewrite it first."""
    for stmt in list(stmts):
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        if isinstance(stmt, kinds) and not stmt.orelse:
            yield (stmt, stmts) if with_blocks else stmt
        for name in ("body", "orelse", "finalbody"):
            yield from own_loops(getattr(stmt, name, None) or [], with_blocks, kinds)
        for part in getattr(stmt, "handlers", []) + getattr(stmt, "cases", []):
            yield from own_loops(part.body, with_blocks, kinds)


class _Wrap(ast.NodeTransformer):
    """``enumerate(...)`` and ``zip(...)`` in a loop's iterable (``enumerate(zip(a, b))``) as
    ``runtime.iterate(enumerate, ...)`` calls."""

    def __init__(self, runtime: str):
        self.runtime = runtime

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        func = node.func
        named = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
        if named not in _WRAPPED or named in _BUILTINS and not isinstance(func, ast.Name):
            return node
        if any(isinstance(a, ast.Starred) for a in node.args):
            return node
        function = ast.Attribute(ast.Name(self.runtime, ast.Load()), "iterate", ast.Load())
        wrapped = ast.Call(function, [func, *node.args], node.keywords)
        return ast.fix_missing_locations(ast.copy_location(wrapped, node))

    def visit_Lambda(self, node: ast.Lambda) -> ast.AST:
        return node


def _plain_names(target: ast.Tuple | ast.List) -> bool:
    return all(
        isinstance(item, ast.Name) or isinstance(item, (ast.Tuple, ast.List)) and _plain_names(item)
        for item in target.elts
    )
