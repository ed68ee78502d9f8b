"""Lists of numbers used as arrays: a dynamic programme's table, a signal, a visited flag.

    dp = [1 for _ in range(len(A) + 1)]        dp = __gc_rt.number_list(1, len(A) + 1)
    for i in range(1, len(A)):                  for i in range(1, len(A)):
        for j in range(i):                  =>      for j in range(i):
            if A[j] < A[i]:                             if A[j] < A[i]:
                dp[i] = max(dp[i], dp[j] + 1)               dp[i] = max(dp[i], dp[j] + 1)

A list of one number repeated (``[x] * n``, ``[c for _ in range(n)]``, and the rows
``[[c] * m for _ in range(n)]``), read and written item by item at positions a loop index or the
data give, is what an array is to NumPy; as a Python list a loop traced once cannot write it
(its positions are traced values). The rewrite makes the binding a call of
``runtime.number_list(value, *counts)``, which makes the list as before unless the tracer
takes it (``frontend/number_lists.py``: an array behind the list's operations).

It applies to a name bound once, at the function's top level, to such a list, and used nowhere
but as ``NAME[i]`` (``NAME[i][j]`` for rows) read, assigned or augmented, in ``len``, ``max`` or
``min`` of it, given to a NumPy function, or returned: every use is one the array can give as
the list would. Anything else (an append, a slice, a loop over it, another function given it)
leaves the list as it is.
"""

from __future__ import annotations

import ast

from .scopes import identifiers, mentions

_NESTED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_READERS = ("len", "max", "min")  # builtins given the whole list (``len`` of a row too)
_NUMPY = ("np", "numpy")
_CONSTANTS = {"np": ("inf", "nan", "pi", "e"), "numpy": ("inf", "nan", "pi", "e")}
_CONSTANTS["math"] = ("inf", "nan", "pi", "e")


def number_lists(function: ast.FunctionDef, runtime: str) -> list[str]:
    """Rewrite in place the bindings of the lists the module docstring describes; returns
    their names."""
    found = []
    for statement in function.body:
        made = _made(statement)
        if made is None:
            continue
        name, value, counts = made
        if _only_item_uses(function, statement, name, len(counts)):
            call = ast.Attribute(ast.Name(runtime, ast.Load()), "number_list", ast.Load())
            statement.value = ast.copy_location(ast.Call(call, [value, *counts], []), value)
            found.append(name)
    if found:
        ast.fix_missing_locations(function)
    return found


def _made(statement: ast.stmt) -> tuple | None:
    """``(name, value, counts)`` of ``name = <a list of one number repeated>``, else None."""
    if not isinstance(statement, ast.Assign) or len(statement.targets) != 1:
        return None
    target = statement.targets[0]
    if not isinstance(target, ast.Name):
        return None
    made = _repeated(statement.value)
    if made is None and isinstance(statement.value, ast.ListComp):
        made = _rows(statement.value)
    return None if made is None else (target.id, *made)


def _repeated(value: ast.expr, pure: bool = False) -> tuple | None:
    """``(value, (count,))`` of ``[x] * n``, ``n * [x]`` or ``[c for _ in range(n)]`` (``x``
    evaluated once unless ``pure``: then a constant, as ``c``)."""
    if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Mult):
        for item, count in ((value.left, value.right), (value.right, value.left)):
            if _single(item) and (_constant(item.elts[0]) or (item is value.left and not pure)):
                return item.elts[0], (count,)
        return None
    if isinstance(value, ast.ListComp):
        count = _range_count(value)
        if count is not None and _constant(value.elt):
            return value.elt, (count,)
    return None


def _rows(value: ast.ListComp) -> tuple | None:
    """``(c, (n, m))`` of ``[[c] * m for _ in range(n)]`` (or ``[[c for _ in range(m)] ...]``),
    ``m`` not reading the outer loop's name and calling nothing but ``len``."""
    count = _range_count(value)
    row = None if count is None else _repeated(value.elt, pure=True)
    if row is None:
        return None
    item, (width,) = row
    target = value.generators[0].target.id
    calls = [n for n in ast.walk(width) if isinstance(n, ast.Call)]
    if mentions(width, {target}) or any(not _is_name(c.func, "len") for c in calls):
        return None
    return item, (count, width)


def _single(node: ast.expr) -> bool:
    return (
        isinstance(node, ast.List)
        and len(node.elts) == 1
        and not isinstance(node.elts[0], ast.Starred)
    )


def _range_count(value: ast.ListComp) -> ast.expr | None:
    """``n`` of a comprehension ``[... for name in range(n)]`` whose item does not read
    ``name`` (one generator, no condition)."""
    if len(value.generators) != 1:
        return None
    generator = value.generators[0]
    iterated = generator.iter
    if generator.ifs or generator.is_async or not isinstance(generator.target, ast.Name):
        return None
    if not (_is_name(getattr(iterated, "func", None), "range") and len(iterated.args) == 1):
        return None
    if iterated.keywords or _reads_target(value.elt, generator.target.id):
        return None
    return iterated.args[0]


def _reads_target(item: ast.expr, name: str) -> bool:
    """Whether a comprehension's ``item`` reads its target ``name``; a row comprehension of
    the same target (``[[0 for x in range(m)] for x in range(n)]``) reads it only in its
    range: its item sees its own."""
    if isinstance(item, ast.ListComp) and len(item.generators) == 1:
        inner = item.generators[0]
        if _is_name(inner.target, name):
            return mentions(inner.iter, {name})
    return mentions(item, {name})


def _constant(node: ast.expr) -> bool:
    """A number written as a constant: ``0``, ``-1.5``, ``float('inf')``, ``np.inf``."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        return _constant(node.operand)
    if isinstance(node, ast.Constant):
        return type(node.value) in (bool, int, float)
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return node.attr in _CONSTANTS.get(node.value.id, ())
    if isinstance(node, ast.Call) and _is_name(node.func, "float") and not node.keywords:
        return len(node.args) == 1 and isinstance(node.args[0], ast.Constant)
    return False


def _is_name(node: ast.AST | None, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name


def _only_item_uses(function: ast.FunctionDef, binding: ast.Assign, name: str, axes: int) -> bool:
    """Whether ``name`` is bound only by ``binding`` and every other use of it is one the
    module docstring lists."""
    if mentions(binding.value, {name}):
        return False
    parents = {child: node for node in ast.walk(function) for child in ast.iter_child_nodes(node)}
    for node in ast.walk(function):
        if node is binding.targets[0]:
            continue
        if isinstance(node, _NESTED) and node is not function and mentions(node, {name}):
            return False
        if name in identifiers(node) and not _item_use(node, parents, axes):
            return False
    return True


def _item_use(node: ast.AST, parents: dict, axes: int) -> bool:
    """Whether ``node``, a use of the list's name, is one the array gives as the list would."""
    if not (isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)):
        return False
    parent = parents[node]
    if isinstance(parent, ast.Subscript) and parent.value is node:
        return _item_access(parent, parents, axes)
    if isinstance(parent, ast.Call) and node in parent.args:
        func = parent.func
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            return func.value.id in _NUMPY
        whole = len(parent.args) == 1 and not parent.keywords
        return whole and any(_is_name(func, f) for f in _READERS[: 1 if axes > 1 else 3])
    if isinstance(parent, ast.Tuple) and isinstance(parents.get(parent), ast.Return):
        return True
    return isinstance(parent, ast.Return)


def _item_access(subscript: ast.Subscript, parents: dict, axes: int) -> bool:
    """``NAME[i]`` (``NAME[i][j]`` of rows) read, or a target of ``=`` or ``op=``."""
    if isinstance(subscript.slice, (ast.Slice, ast.Tuple)):
        return False
    if axes > 1:
        outer = parents[subscript]
        row_length = isinstance(outer, ast.Call) and _is_name(outer.func, "len")
        if row_length and outer.args == [subscript] and not outer.keywords:
            return True
        if not (isinstance(outer, ast.Subscript) and outer.value is subscript):
            return False
        if isinstance(outer.slice, (ast.Slice, ast.Tuple)):
            return False
        subscript = outer
    return not isinstance(subscript.ctx, ast.Del)
