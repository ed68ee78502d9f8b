"""The AST rewrite of one function: planned ``for`` loops and ``if`` statements become runtime
calls.

A loop that ``plan.plan_scope`` accepts,

    for i in range(a, b):
        BODY

becomes a function of one iteration and a call running it (names from ``runtime`` and the
converter's closure are reserved: ``__gc_rt``, ``__gc_call``, ``__gc_info_N``,
``__gc_loop_N``, ``_loop_body_N``)::

    def _loop_body_0(i, s, t):          # the target, then the carried names
        if t is __gc_rt.UNDEFINED:       # an entry check: reading t raises as in Python
            del t
        BODY
        try:                             # an entry-checked name may still be unbound
            t
        except NameError:
            t = __gc_rt.UNDEFINED
        return (s, t)
    __gc_loop_0 = ((range,), (a, b))     # evaluated first, as the loop would
    try:                                 # a carried name perhaps unbound before the loop
        t
    except NameError:
        t = __gc_rt.UNDEFINED
    (s, t) = __gc_rt.for_range(_loop_body_0, __gc_loop_0[1], (s, t), __gc_info_0, False,
                               resolved=__gc_loop_0[0])
    del __gc_loop_0
    if t is __gc_rt.UNDEFINED:
        del t

Without names perhaps unbound, the call takes the bounds (or iterable) and ``resolved=(range,)``
directly. When the target is carried, its slot comes first and the body takes its previous value as
``__gc_prev`` (unused). Names the body only reads stay free variables of the body function.

An ``if TEST: THEN else: ELSE`` that the plan accepts becomes two such functions of the carried
names, without a target (``__gc_then_N``, ``__gc_else_N``; an absent ``else`` is one that only
returns them), and ``(a, b) = __gc_rt.cond(TEST, __gc_then_N, __gc_else_N, (a, b),
__gc_branch_info_N)``: the test is evaluated once, in the scope, before the carried names
perhaps unbound are bound to UNDEFINED (held in ``__gc_test_N`` when there are some).

Each generated function is a scope of its own, planned and rewritten in turn (nested loops,
``elif`` chains, loops in branches). Every generated statement carries the location of the
statement's header, so tracebacks point at the user's lines. Nested functions, lambdas and
classes of the user's code are left as written; calls of a function defined by a plain
``def`` in the function go through ``__gc_call`` as calls of the module's functions do, so that
it runs converted too (``runtime.call``).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Callable

from .accumulations import mark_accumulations
from .comprehension_loops import loop_comprehensions
from .comprehensions import Comprehensions
from .effects import mark_effects
from .exits import desugar_exits, lift_loop_else
from .expressions import Expressions
from .iterables import unpack_targets
from .lists import split_lists
from .loop_returns import lift_loop_returns
from .number_lists import number_lists
from .plan import BranchPlan, LoopPlan, plan_scope, range_call
from .raises import guard_raises
from .returns import merge_returns
from .runtime import MATH_MODULE
from .scopes import NonLocalNames, function_names, identifiers, parameter_names, scan
from .tables import Tables, read_only_lists
from .unbound import track_unbound

RUNTIME = "__gc_rt"
CALL = "__gc_call"
NDARRAY = "ndarray"  # (attribute calls routed: ``<module>.ndarray(...)``, ``math.<f>(...)``)
INFO = "__gc_info_"
BODY = "_loop_body_"
PREV = "__gc_prev"
OPERANDS = "__gc_loop_"
THEN = "__gc_then_"
ELSE = "__gc_else_"
BRANCH_INFO = "__gc_branch_info_"
TEST = "__gc_test_"
WHILE_TEST = "__gc_while_test_"
GENERATED = (BODY, THEN, ELSE, WHILE_TEST)  # the functions the rewrite makes, parts of the scope
RESERVED_PREFIXES = ("__gc_", BODY)
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


@dataclass
class Rewrite:
    """What ``rewrite`` did to a function.

    ``loops``: one ``(info name, plan)`` per converted loop, outer loops before the loops
    nested in them. ``notes``: ``(line, reason)`` per loop left as a Python loop. ``branches``
    and ``branch_notes``: the same for ``if`` statements. ``calls``: the names of the calls
    routed through ``__gc_call``; ``methods`` the attribute names of those calls on objects
    (``self.step(...)``: not on modules). ``expressions``: one ``(info name, plan)`` per conditional
    expression, ``and``, ``or`` made a runtime call (``expressions.py``); ``comprehensions``
    the same per array comprehension (``comprehensions.py``).
    """

    loops: list[tuple[str, LoopPlan]] = field(default_factory=list)
    notes: list[tuple[int, str]] = field(default_factory=list)
    branches: list[tuple[str, BranchPlan]] = field(default_factory=list)
    branch_notes: list[tuple[int, str]] = field(default_factory=list)
    calls: set[str] = field(default_factory=set)
    methods: set[str] = field(default_factory=set)  # attribute calls routed (``obj.m(...)``)
    expressions: list[tuple[str, BranchPlan]] = field(default_factory=list)
    comprehensions: list[tuple[str, LoopPlan]] = field(default_factory=list)
    effects: bool = False  # statements marked as changing Python state (``effects``)
    raises: int = 0  # raising tests made runtime calls (``raises``)


def rewrite(
    function: ast.FunctionDef,
    route_call: Callable[[str], bool],
    is_module: Callable[[str], bool] = lambda name: False,
) -> Rewrite:
    """Rewrite ``function`` in place (see the module docstring).

    ``route_call(name)`` tells whether a call ``name(...)`` of a name that is not local to the
    function becomes ``__gc_call(name, ...)`` (see ``runtime.call``). Calls of attributes,
    ``obj.m(...)``, become ``__gc_call(obj.m, ...)`` unless ``obj`` is a name not local to the
    function of which ``is_module(name)`` says it is a module (``np.sum(...)`` stays).
    """
    result = Rewrite()
    made = read_only_lists(function)  # (the user's own statements, before any rewrite)
    defined = defined_functions(function)
    track_unbound(function, RUNTIME)  # (on the user's own statements, before they move)
    split_lists(function)
    number_lists(function, RUNTIME)
    loop_comprehensions(function)
    result.effects = mark_effects(function, RUNTIME)
    mark_accumulations(function, RUNTIME)
    lift_loop_returns(function)
    merge_returns(function)
    lift_loop_else(function)
    result.raises = guard_raises(function, RUNTIME)
    desugar_exits(function)
    unpack_targets(function, RUNTIME)
    local = function_names(function).local | parameter_names(function.args)
    _Rewriter(result, frozenset(local)).scope(function)
    _keep_local(function, local)
    _Calls(local, route_call, is_module, result, defined).visit_scope(function)
    kept = parameter_names(function.args) - scan(function.body).stores  # (never bound again)
    Tables(RUNTIME, GENERATED, local - kept, RESERVED_PREFIXES, made).visit_scope(function)
    expressions = Expressions(RUNTIME, GENERATED)
    expressions.visit_scope(function)
    result.expressions = expressions.sites
    comprehensions = Comprehensions(RUNTIME, GENERATED)
    comprehensions.visit_scope(function)
    result.comprehensions = comprehensions.sites
    return result


def _keep_local(function: ast.FunctionDef, local: set[str]) -> None:
    """Names only generated functions assign are no longer bound in ``function``: bind them in
    code that never runs, so that they stay local there (reading one before the loop or ``if``
    raises UnboundLocalError as before instead of finding a global)."""
    lost = sorted(local - function_names(function).local)
    if lost:
        assignments = "\n".join(f"    {name} = None" for name in lost)
        where = (function.lineno, function.col_offset, function.lineno, function.col_offset)
        function.body.append(_located(_statement(f"if False:\n{assignments}"), where))


def uses_reserved(function: ast.FunctionDef) -> str:
    """A name of ``function`` that starts with a reserved prefix, or ``""``."""
    for node in ast.walk(function):
        for name in identifiers(node):
            if name.startswith(RESERVED_PREFIXES):
                return name
    return ""


class _Rewriter:
    """Converts the planned loops and ``if`` statements of one scope, then those of the
    functions it makes."""

    def __init__(self, result: Rewrite, local: frozenset[str]):
        self.result = result
        self.local = local  # the names local to the function (the generated ones' containers)

    def scope(self, function: ast.FunctionDef, checks: int = 0) -> None:
        """Rewrite the loops and ``if`` statements of ``function``'s own scope but its first
        ``checks`` statements (generated entry checks, which stay as they are)."""
        plans = plan_scope(function, self.local)
        function.body[checks:] = self.block(function.body[checks:], plans)

    def block(self, stmts: list[ast.stmt], plans: dict) -> list[ast.stmt]:
        """``stmts`` with their planned statements replaced."""
        out: list[ast.stmt] = []
        for stmt in stmts:
            plan = plans.get(stmt)
            if isinstance(plan, LoopPlan):
                out.extend(self.while_loop(plan) if plan.kind == "while" else self.loop(plan))
                continue
            if isinstance(plan, BranchPlan):
                out.extend(self.branch(plan))
                continue
            if isinstance(plan, str):
                notes = self.result.branch_notes if isinstance(stmt, ast.If) else self.result.notes
                notes.append((stmt.lineno, plan))
            if not isinstance(stmt, _SCOPES):
                self._inner_blocks(stmt, plans)
            out.append(stmt)
        return out

    def _inner_blocks(self, stmt: ast.stmt, plans: dict) -> None:
        for name in ("body", "orelse", "finalbody"):
            if isinstance(getattr(stmt, name, None), list):
                setattr(stmt, name, self.block(getattr(stmt, name), plans))
        for part in getattr(stmt, "handlers", []) + getattr(stmt, "cases", []):
            part.body = self.block(part.body, plans)

    def loop(self, plan: LoopPlan) -> list[ast.stmt]:
        """The statements replacing one planned loop."""
        number = len(self.result.loops)
        info, body = f"{INFO}{number}", f"{BODY}{number}"
        self.result.loops.append((info, plan))
        target = plan.node.target.id
        params = [target] + [PREV if n == target else n for n in plan.carried]
        function = self.function(body, params, plan.node.body, plan)
        return _replacement(
            plan,
            [function],
            _operands(plan),
            f"{OPERANDS}{number}",
            lambda operands: _loop_call(plan, body, info, operands),
        )

    def while_loop(self, plan: LoopPlan) -> list[ast.stmt]:
        """The statements replacing one planned ``while`` loop: its test and its body as
        functions of the carried names, and ``(a, b) = __gc_rt.while_loop(test, body, (a, b),
        info)``."""
        number = len(self.result.loops)
        info, body, test = f"{INFO}{number}", f"{BODY}{number}", f"{WHILE_TEST}{number}"
        self.result.loops.append((info, plan))
        carried = list(plan.carried)
        functions = [
            _test_function(test, carried, plan),
            self.function(body, carried, plan.node.body, plan),
        ]
        call = _runtime_call("while_loop", [_name(test), _name(body), _tuple(carried), _name(info)])
        return _replacement(plan, functions, [], f"{OPERANDS}{number}", lambda _: call)

    def branch(self, plan: BranchPlan) -> list[ast.stmt]:
        """The statements replacing one planned ``if``."""
        number = len(self.result.branches)
        info, names = f"{BRANCH_INFO}{number}", (f"{THEN}{number}", f"{ELSE}{number}")
        self.result.branches.append((info, plan))
        parts = (plan.node.body, plan.node.orelse)
        functions = [self.function(n, list(plan.carried), p, plan) for n, p in zip(names, parts)]
        return _replacement(
            plan,
            functions,
            [plan.node.test],
            f"{TEST}{number}",
            lambda operands: _cond_call(plan, names, info, operands[0]),
        )

    def function(
        self, name: str, params: list[str], stmts: list[ast.stmt], plan: LoopPlan | BranchPlan
    ) -> ast.FunctionDef:
        """``def name(*params): entry checks; stmts; return carried``, rewritten in turn."""
        checks = plan.entry_checks if stmts else ()  # an absent ``else`` reads nothing
        args = ast.arguments(
            posonlyargs=[],
            args=[ast.arg(p) for p in params],
            kwonlyargs=[],
            kw_defaults=[],
            defaults=[],
        )
        body = [
            *(_unbind_undefined(n) for n in checks),
            *stmts,
            *(_bind_undefined(n) for n in checks),
            ast.Return(_tuple(list(plan.carried))),
        ]
        function = ast.FunctionDef(name=name, args=args, body=body, decorator_list=[], returns=None)
        if "type_params" in ast.FunctionDef._fields:
            function.type_params = []
        self.scope(_located(function, _header(plan.node)), len(checks))
        return function


def _test_function(name: str, carried: list[str], plan: LoopPlan) -> ast.FunctionDef:
    """``def name(*carried): return TEST``, a ``while`` loop's test (a name unbound when the
    loop starts raises as in Python: UNDEFINED is unbound again first)."""
    args = ast.arguments(
        posonlyargs=[],
        args=[ast.arg(n) for n in carried],
        kwonlyargs=[],
        kw_defaults=[],
        defaults=[],
    )
    body = [*(_unbind_undefined(n) for n in plan.maybe_unbound), ast.Return(plan.node.test)]
    function = ast.FunctionDef(name=name, args=args, body=body, decorator_list=[], returns=None)
    if "type_params" in ast.FunctionDef._fields:
        function.type_params = []
    return _located(function, _header(plan.node))


def _replacement(
    plan: LoopPlan | BranchPlan,
    functions: list[ast.stmt],
    operands: list[ast.expr],
    hold: str,
    make_call: Callable[[list[ast.expr]], ast.Call],
) -> list[ast.stmt]:
    """The statements replacing a planned statement: its functions, ``make_call(operands)``
    assigning the carried names, and around it the carried names perhaps unbound bound to
    UNDEFINED and unbound again. With some, the operands are evaluated first, into ``hold``."""
    before: list[ast.stmt] = []
    after: list[ast.stmt] = []
    if plan.maybe_unbound:  # evaluate them before binding names to UNDEFINED
        before = [ast.Assign(targets=[_name(hold, ast.Store())], value=_tuple(operands))]
        operands = [
            ast.Subscript(_name(hold), ast.Constant(i), ast.Load()) for i in range(len(operands))
        ]
        after = [ast.Delete([_name(hold, ast.Del())])]
    before += [_bind_undefined(n) for n in plan.maybe_unbound]
    after += [_unbind_undefined(n) for n in plan.maybe_unbound]
    call = make_call(operands)
    if plan.carried:
        run = ast.Assign(targets=[_tuple(list(plan.carried), ast.Store())], value=call)
    else:
        run = ast.Expr(call)
    return [_located(s, _header(plan.node)) for s in [*functions, *before, run, *after]]


def _operands(plan: LoopPlan) -> list[ast.expr]:
    """What the loop statement evaluates: its iterable, or what ``range`` (and ``reversed``)
    mean there and the bounds."""
    if plan.kind == "each":
        return [plan.node.iter]
    names = ["reversed", "range"] if plan.kind == "reversed_range" else ["range"]
    return [_tuple(names), _tuple(list(range_call(plan.node).args))]


def _loop_call(plan: LoopPlan, body: str, info: str, operands: list[ast.expr]) -> ast.Call:
    """``for_each(body, iterable, carried, info)`` or
    ``for_range(body, bounds, carried, info, reverse, resolved=...)``."""
    carried = _tuple(list(plan.carried))
    if plan.kind == "each":
        return _runtime_call("for_each", [_name(body), operands[0], carried, _name(info)])
    reverse = ast.Constant(plan.kind == "reversed_range")
    call = _runtime_call("for_range", [_name(body), operands[1], carried, _name(info), reverse])
    call.keywords = [ast.keyword("resolved", operands[0])]
    return call


def _cond_call(plan: BranchPlan, names: tuple[str, str], info: str, test: ast.expr) -> ast.Call:
    """``cond(test, then, orelse, carried, info)``."""
    args = [test, *map(_name, names), _tuple(list(plan.carried)), _name(info)]
    return _runtime_call("cond", args)


def _bind_undefined(name: str) -> ast.stmt:
    """``try: name / except NameError: name = UNDEFINED``."""
    return _statement(f"try:\n    {name}\nexcept NameError:\n    {name} = {RUNTIME}.UNDEFINED")


def _unbind_undefined(name: str) -> ast.stmt:
    """``if name is UNDEFINED: del name``."""
    return _statement(f"if {name} is {RUNTIME}.UNDEFINED:\n    del {name}")


def _statement(text: str) -> ast.stmt:
    """One statement parsed from ``text``, without locations (``_located`` gives them)."""
    stmt = ast.parse(text).body[0]
    for node in ast.walk(stmt):
        for attribute in node._attributes:
            if hasattr(node, attribute):
                delattr(node, attribute)
    return stmt


def _runtime_call(function: str, args: list[ast.expr]) -> ast.Call:
    return ast.Call(ast.Attribute(_name(RUNTIME), function, ast.Load()), args, [])


def _is_name(node: ast.AST, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name


def _name(name: str, ctx: ast.expr_context | None = None) -> ast.Name:
    return ast.Name(name, ctx or ast.Load())


def _tuple(items: list, ctx: ast.expr_context | None = None) -> ast.Tuple:
    ctx = ctx or ast.Load()
    elts = [_name(i, ctx) if isinstance(i, str) else i for i in items]
    return ast.Tuple(elts, ctx)


def _header(node: ast.For | ast.If | ast.While) -> tuple[int, int, int, int]:
    """The location of ``for TARGET in ITER``, ``if TEST`` or ``while TEST`` (not the body)."""
    end = node.iter if isinstance(node, (ast.For, ast.AsyncFor)) else node.test
    return node.lineno, node.col_offset, end.end_lineno, end.end_col_offset


def _located(node: ast.AST, where: tuple[int, int, int, int]) -> ast.AST:
    """``node`` with the location ``where`` given to it and to every node inside it that has
    none (the generated ones; the user's keep theirs)."""
    line, col, end_line, end_col = where
    for child in ast.walk(node):
        if "lineno" in child._attributes and not hasattr(child, "lineno"):
            child.lineno, child.col_offset = line, col
            child.end_lineno, child.end_col_offset = end_line, end_col
    return node


class _Calls(NonLocalNames):
    """Routes ``name(...)`` calls through ``__gc_call`` (of non-local names the router takes,
    and of every local name but the rewrite's own) in the function's own scope, the functions
    the rewrite made and the user's undecorated nested functions (``math.sqrt`` in a helper
    defined inside: their own names shadow too; not in lambdas, classes or decorated
    functions, ``@njit``'s)."""

    def __init__(self, local: set[str], route: Callable[[str], bool], is_module, result, defined):
        super().__init__(GENERATED, local)
        self.route, self.is_module = route, is_module
        self.routed, self.methods = result.calls, result.methods
        self.defined = defined  # (the function's own ``def`` names, unless an inner scope's)

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        if node.name.startswith(self.generated) or node.decorator_list:
            return super().visit_FunctionDef(node)  # (a decorated def: ``@njit``'s own code)
        saved, defined = self.shadowed, self.defined
        own = function_names(node).local | parameter_names(node.args)
        self.shadowed, self.defined = saved | own, defined - own
        try:
            node.body = [self.visit(stmt) for stmt in node.body]
        finally:
            self.shadowed, self.defined = saved, defined
        return node

    def visit_Call(self, node: ast.Call) -> ast.AST:
        """``f(...)`` becomes ``__gc_call(f, ...)`` when ``f`` is routed; so do
        ``<module>.ndarray(...)`` (``np.ndarray(shape, dtype)``) and ``math.<f>(...)``: a
        handler may take them; and ``obj.m(...)`` on objects other than modules, and calls of
        what a call or a subscript gives (a method of the user's class, or its instance's
        ``__call__``, runs converted)."""
        self.generic_visit(node)
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr == NDARRAY:
            self.routed.add(NDARRAY)
        elif isinstance(func, ast.Attribute) and _is_name(func.value, MATH_MODULE):
            self.routed.add(MATH_MODULE)
        elif isinstance(func, ast.Attribute):
            if not self._on_object(func.value):
                return node
            self.methods.add(func.attr)
        elif isinstance(func, (ast.Call, ast.Subscript)):  # (``Poly(c)(x)``, ``steps[k](x)``)
            self.methods.add("__call__")
        elif isinstance(func, ast.Name) and func.id in self.defined:
            self.routed.add(func.id)
        elif isinstance(func, ast.Name) and func.id in self.shadowed:
            if func.id.startswith(RESERVED_PREFIXES):
                return node
            # (a local name: an alias of a helper, ``interp = interpolation``, or a callable
            # argument; the runtime converts what is a function of the module)
        elif not isinstance(func, ast.Name) or not self.route(func.id):
            return node
        else:
            self.routed.add(func.id)
        routed = ast.Call(_name(CALL), [func, *node.args], node.keywords)
        return ast.copy_location(routed, node)

    def _on_object(self, value: ast.expr) -> bool:
        """Whether ``value.m(...)`` calls a method of an object: not of a module, nor of a
        name the rewrite made (``__gc_rt.for_range``)."""
        if not isinstance(value, ast.Name):
            return True
        if value.id.startswith(RESERVED_PREFIXES):
            return False
        return value.id in self.shadowed or not self.is_module(value.id)


def defined_functions(function: ast.FunctionDef) -> frozenset[str]:
    """The names ``function``'s own scope binds only by an undecorated ``def`` (a helper
    defined inside it, whose loops its calls then convert)."""
    defs = _OwnDefs()
    for stmt in function.body:
        defs.visit(stmt)
    return frozenset(defs.plain - defs.stores - defs.decorated)


class _OwnDefs(ast.NodeVisitor):
    """The ``def`` statements of one scope (undecorated: ``plain``; else ``decorated``) and the
    other names it stores, not looking into nested scopes."""

    def __init__(self):
        self.plain: set[str] = set()
        self.decorated: set[str] = set()
        self.stores: set[str] = set()

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        (self.decorated if node.decorator_list else self.plain).add(node.name)

    def visit_Name(self, node: ast.Name) -> None:
        if not isinstance(node.ctx, ast.Load):
            self.stores.add(node.id)

    def _other_scope(self, node: ast.AST) -> None:
        if isinstance(node, (ast.AsyncFunctionDef, ast.ClassDef)):
            self.stores.add(node.name)

    visit_AsyncFunctionDef = visit_ClassDef = visit_Lambda = _other_scope
