"""Arrays built from a list comprehension over a range, ``np.array([f(i) for i in range(n)])``,
or over another iterable (an array's rows: ``np.array([f(x) for x in X])``, ``array_of_each``),
become a runtime call, so that a tracer can make them one loop writing the rows of a new array
instead of ``n`` traced elements::

    np.array([x[i] * i for i in range(1, n)], dtype=float)
        =>  __gc_rt.array_of(np.array, lambda i: x[i] * i, range, (1, n), __gc_comp_info_0,
                             dtype=float)

Only a call of a function named ``array``, ``asarray`` or ``stack`` (an attribute: ``np.array``)
whose first argument is a list comprehension of one ``for`` over ``range(...)`` with no ``if``
and a plain name as its target; the runtime checks that the function is NumPy's and ``range``
the builtin, else it builds the list as written. Runs after ``expressions.py`` (which does not
enter the lambda this makes).

A call of ``sum`` (a plain name) of such a comprehension, or of such a generator expression,
becomes ``__gc_rt.sum_of(sum, lambda j: ..., range, bounds, info[, start])`` the same way
(``sum(a[i, j] * x[j] for j in range(i))``: one loop adding in Python's order).
"""

from __future__ import annotations

import ast

from .expressions import stays
from .plan import LoopPlan, mutated_by_call
from .scopes import OwnScope

COMPREHENSION_INFO = "__gc_comp_info_"
_FUNCTIONS = ("array", "asarray", "stack")


class Comprehensions(OwnScope):
    """Rewrites the array comprehensions of a function's own scope and of the functions the
    rewrite made (``generated``: their name prefixes). ``sites``: one ``(info name, LoopPlan)``
    per rewritten comprehension (its target the loop's)."""

    def __init__(self, runtime: str, generated: tuple[str, ...]):
        super().__init__(generated)
        self.runtime = runtime
        self.sites: list[tuple[str, LoopPlan]] = []

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        comprehension, function = _array_comprehension(node), "array_of"
        if comprehension is None:
            comprehension, function = _summed_comprehension(node), "sum_of"
        if comprehension is None:
            comprehension, function = _rows_comprehension(node), "array_of_each"
        if comprehension is None:
            return node
        generator = comprehension.generators[0]
        target = generator.target.id
        info = f"{COMPREHENSION_INFO}{len(self.sites)}"
        loop = ast.For(generator.target, generator.iter, [], [])
        kind = "each" if function == "array_of_each" else "range"
        self.sites.append((info, LoopPlan(ast.copy_location(loop, node), kind, (), (), ())))
        element = ast.Lambda(_arguments(target), comprehension.elt)
        runtime = ast.Attribute(ast.Name(self.runtime, ast.Load()), function, ast.Load())
        if function == "array_of_each":
            iterated = [generator.iter]
        else:
            iterated = [generator.iter.func, ast.Tuple(list(generator.iter.args), ast.Load())]
        args = [node.func, element, *iterated, ast.Name(info, ast.Load()), *node.args[1:]]
        call = ast.Call(runtime, args, node.keywords)
        return ast.fix_missing_locations(ast.copy_location(call, node))


def _array_comprehension(node: ast.Call) -> ast.ListComp | None:
    """The list comprehension ``node`` builds an array of, when it is one this rewrites."""
    first = _array_argument(node)
    return None if first is None else _over_a_range(first, (ast.ListComp,))


def _rows_comprehension(node: ast.Call) -> ast.ListComp | None:
    """The list comprehension over anything but ``range(...)`` (an array's rows: ``[f(x) for
    x in X]``) that ``node`` builds an array of, when it is one this rewrites."""
    first = _array_argument(node)
    return None if first is None else _plain(first, (ast.ListComp,))


def _array_argument(node: ast.Call) -> ast.expr | None:
    """The first argument of ``node`` when it is a call of ``array``, ``asarray`` or ``stack``."""
    func = node.func
    if not (isinstance(func, ast.Attribute) and func.attr in _FUNCTIONS and node.args):
        return None
    return node.args[0]


def _summed_comprehension(node: ast.Call) -> ast.ListComp | ast.GeneratorExp | None:
    """The comprehension or generator expression ``sum(...)`` adds up, when it is one this
    rewrites (``sum(e for j in range(n))``, ``sum([e for j in range(n)], start)``)."""
    func = node.func
    if not (isinstance(func, ast.Name) and func.id == "sum") or node.keywords:
        return None
    if not 1 <= len(node.args) <= 2 or any(isinstance(a, ast.Starred) for a in node.args):
        return None
    return _over_a_range(node.args[0], (ast.ListComp, ast.GeneratorExp))


def _over_a_range(first: ast.expr, kinds: tuple) -> ast.ListComp | ast.GeneratorExp | None:
    """``first`` when it is a comprehension ``_plain`` takes over ``range(...)``."""
    first = _plain(first, kinds)
    iterable = first.generators[0].iter if first is not None else None
    if not (isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Name)):
        return None
    if iterable.func.id != "range" or iterable.keywords or not 1 <= len(iterable.args) <= 3:
        return None
    return first


def _plain(first: ast.expr, kinds: tuple) -> ast.ListComp | ast.GeneratorExp | None:
    """``first`` when it is a comprehension of ``kinds`` of one ``for`` with no ``if``, a
    plain name as its target, whose element changes no list (else it runs as written, once
    per element)."""
    if not isinstance(first, kinds) or len(first.generators) != 1:
        return None
    generator = first.generators[0]
    if generator.ifs or generator.is_async or not isinstance(generator.target, ast.Name):
        return None
    if stays(first) or any(mutated_by_call(node) for node in ast.walk(first.elt)):
        return None
    return first


def _arguments(name: str) -> ast.arguments:
    return ast.arguments(
        posonlyargs=[], args=[ast.arg(name)], kwonlyargs=[], kw_defaults=[], defaults=[]
    )
