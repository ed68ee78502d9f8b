"""Expressions that decide on a value: ``a if c else b``, ``and``, ``or`` and ``not`` become
runtime calls, so that a tracer can take them over when the deciding value is traced (Python
asks ``bool()`` of it, which a traced value cannot answer)::

    y = x * 2 if s > 0 else -x       =>  y = __gc_rt.if_exp(s > 0, lambda: x * 2, lambda: -x,
                                                           __gc_expr_info_0)
    if a > 0 and b > 0:              =>  if __gc_rt.and_(a > 0, lambda: b > 0, __gc_expr_info_1):
    ok = not done                    =>  ok = __gc_rt.not_(done)
    0.3 < x < 0.6                    =>  __gc_rt.compare_chain(0.3, (("lt", lambda: x),
                                                                     ("lt", lambda: 0.6)), ...)

The operands that Python evaluates only on a condition stay lazy (in a ``lambda``), and each
operand is evaluated once: on values that are not traced, the calls do what the expression
did; a chained comparison evaluates each operand once, the later ones only while the
comparisons hold, its ``and`` an ``and_``. ``a and b and c`` nests (``and_(a, lambda: and_(b, lambda: c, ...), ...)``). An
expression holding ``:=``, ``yield`` or ``await`` stays as written (a lambda would change what
they bind or mean). Runs after calls are routed (``transform._Calls`` does not enter lambdas).
"""

from __future__ import annotations

import ast

from .plan import BranchPlan
from .scopes import OwnScope

EXPRESSION_INFO = "__gc_expr_info_"
# the comparisons a chain (``lo < x <= hi``) is made of, by their ``operator`` names
_ORDERS = {ast.Lt: "lt", ast.LtE: "le", ast.Gt: "gt", ast.GtE: "ge", ast.Eq: "eq", ast.NotEq: "ne"}
_STAYS = (ast.NamedExpr, ast.Yield, ast.YieldFrom, ast.Await)


class Expressions(OwnScope):
    """Rewrites the deciding expressions of a function's own scope and of the functions the
    rewrite made (``generated``: their name prefixes), not of nested user functions, lambdas or
    classes. ``sites``: one ``(info name, BranchPlan)`` per rewritten expression."""

    def __init__(self, runtime: str, generated: tuple[str, ...]):
        super().__init__(generated)
        self.runtime = runtime
        self.sites: list[tuple[str, BranchPlan]] = []

    def visit_IfExp(self, node: ast.IfExp) -> ast.AST:
        self.generic_visit(node)
        if stays(node):
            return node
        args = [node.test, _lazy(node.body), _lazy(node.orelse)]
        return self._call("if_exp", args, node)

    def visit_BoolOp(self, node: ast.BoolOp) -> ast.AST:
        self.generic_visit(node)
        if stays(node):
            return node
        function = "and_" if isinstance(node.op, ast.And) else "or_"
        result = node.values[-1]
        for value in reversed(node.values[:-1]):
            result = self._call(function, [value, _lazy(result)], node)
        return result

    def visit_Compare(self, node: ast.Compare) -> ast.AST:
        self.generic_visit(node)
        if len(node.ops) < 2 or stays(node) or not all(type(o) in _ORDERS for o in node.ops):
            return node
        links = [
            ast.Tuple([ast.Constant(_ORDERS[type(op)]), _lazy(right)], ast.Load())
            for op, right in zip(node.ops, node.comparators)
        ]
        return self._call("compare_chain", [node.left, ast.Tuple(links, ast.Load())], node)

    def visit_UnaryOp(self, node: ast.UnaryOp) -> ast.AST:
        self.generic_visit(node)
        if not isinstance(node.op, ast.Not) or stays(node):
            return node
        call = ast.Call(
            ast.Attribute(ast.Name(self.runtime, ast.Load()), "not_", ast.Load()),
            [node.operand],
            [],
        )
        return ast.copy_location(call, node)

    def _call(self, function: str, args: list[ast.expr], node: ast.expr) -> ast.Call:
        """``runtime.function(*args, info)``, with a new site for ``node``."""
        info = f"{EXPRESSION_INFO}{len(self.sites)}"
        self.sites.append((info, BranchPlan(node, (), (), ())))
        runtime = ast.Attribute(ast.Name(self.runtime, ast.Load()), function, ast.Load())
        call = ast.Call(runtime, [*args, ast.Name(info, ast.Load())], [])
        return ast.fix_missing_locations(ast.copy_location(call, node))


def _lazy(expression: ast.expr) -> ast.Lambda:
    """``lambda: expression``."""
    arguments = ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[], defaults=[])
    return ast.copy_location(ast.Lambda(arguments, expression), expression)


def stays(node: ast.expr) -> bool:
    """Whether ``node`` holds something a lambda would change (``:=``, ``yield``, ``await``)."""
    return any(isinstance(inner, _STAYS) for inner in ast.walk(node))
