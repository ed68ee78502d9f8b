"""Graph breaks: a function whose trace refuses one of its top-level statements runs as
compiled regions around that statement, the statement itself in Python between them::

    def f(x, w):                          def f(x, w):                  (the driver: Python)
        y = np.sin(x) * w                     y, = _gc_region_0(x, w)
        z = helper_numba_cannot_see(y)  =>    z = helper_numba_cannot_see(y)
        return (z ** 2).sum() + y             return _gc_region_1(y, z)

    def f__before_3(x, w):                def f__after_3(y, z):          (compiled regions)
        y = np.sin(x) * w                     return (z ** 2).sum() + y
        return (y,)

The region before the statement returns the names the rest of the function reads (liveness,
``liveness.py``); the region after it takes them. Values cross as they are (arrays by
reference: no copy; a view stays a view). A region that refuses another statement splits
again in turn. The statement keeps every Python meaning it had (its own ``return``, its
exceptions); a statement inside a loop makes the whole loop the statement run in Python.

Refused with a reason (the function then runs eagerly, as before): no source, a ``yield``,
``global`` or ``nonlocal``, a ``return`` before the statement, or a name the rest reads that
is bound on some paths only.
"""

from __future__ import annotations

import ast
import copy
import types
from dataclasses import dataclass
from typing import Callable

from .convert import compile_function, parse_function, register_source
from .liveness import _Definite, _Jumps, _Liveness
from .scopes import parameter_names, scan

_BEFORE, _AFTER = "_gc_region_before", "_gc_region_after"


@dataclass
class Split:
    """A function broken at one statement: ``driver`` runs in its place; ``regions`` are the
    compiled functions it calls (``(name, lines, function)``); ``statement`` the lines run in
    Python."""

    driver: Callable
    regions: list
    statement: tuple[int, int]


def split_at(fn: types.FunctionType, line: int, compile_region: Callable) -> Split | str:
    """``fn`` broken at its top-level statement holding ``line``: a ``Split`` whose regions
    ``compile_region(plain function)`` made, or why it cannot break there."""
    found = parse_function(fn)
    if isinstance(found, str):
        return found
    function = found[0]
    why = _unbreakable(function)
    if why:
        return why
    body = function.body
    at = next((i for i, s in enumerate(body) if s.lineno <= line <= s.end_lineno), None)
    if at is None:
        return f"line {line} is not a statement of {fn.__name__}"
    before, statement, after = body[:at], body[at], body[at + 1 :]
    if not any(not _docstring(s) for s in before) and not after:
        return "the statement is the whole function"
    if any(isinstance(n, ast.Return) for s in before for n in _own_nodes(s)):
        return "a `return` before the statement"
    params = frozenset(parameter_names(function.args))
    local = set(fn.__code__.co_varnames) | set(fn.__code__.co_cellvars)
    passed = _live(after, local)
    crossing = sorted(_live([statement, *after], local) & scan(before).stores)
    bound = _Definite().block(before, params)
    if bound is None or not set(crossing) <= bound:
        return "a name the rest of the function reads is bound on some paths only"
    after_bound = _Definite().block([statement], bound)
    if after_bound is not None and not passed <= after_bound:
        return "a name the rest of the function reads is bound on some paths only"
    return _build(
        fn, function, (before, statement, after), crossing, sorted(passed), compile_region
    )


def _docstring(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)


def _unbreakable(function: ast.FunctionDef) -> str:
    for node in _own_nodes(function):
        if isinstance(node, (ast.Yield, ast.YieldFrom, ast.Await)):
            return "a generator or coroutine"
        if isinstance(node, (ast.Global, ast.Nonlocal)):
            return "a `global` or `nonlocal` declaration"
    return ""


def _own_nodes(root: ast.AST):
    """The nodes of ``root``'s scope (nested functions, lambdas and classes left out)."""
    pending = list(ast.iter_child_nodes(root))
    while pending:
        node = pending.pop()
        yield node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            pending.extend(ast.iter_child_nodes(node))


def _live(stmts: list, local: set) -> frozenset:
    """The local names ``stmts`` may read before binding them."""
    return _Liveness().block(stmts, frozenset(), _Jumps()) & frozenset(local)


def _build(fn, function, parts, crossing: list, passed: list, compile_region) -> Split:
    before, statement, after = parts
    name = fn.__code__.co_name
    params = _parameters(function.args)
    regions, functions = [], []
    if before:
        result = ast.Return(ast.Tuple([_load(n) for n in crossing], ast.Load()))
        last = before[-1]
        regions.append(
            _region(
                f"{name}__before_{statement.lineno}",
                params,
                [*before, ast.copy_location(result, last)],
            )
        )
    if after:
        regions.append(_region(f"{name}__after_{statement.lineno}", passed, after))
    for region in regions:
        functions.append(_function(fn, region, {}))
    compiled = [compile_region(f) for f in functions]
    names = dict(zip([_BEFORE] * bool(before) + [_AFTER] * bool(after), compiled))
    driver = _function(
        fn, _driver(function, statement, crossing, passed, bool(before), bool(after)), names
    )
    driver.__defaults__, driver.__kwdefaults__ = fn.__defaults__, fn.__kwdefaults__
    spans = [(r.name, (r.body[0].lineno, r.body[-1].end_lineno)) for r in regions]
    return Split(
        driver,
        [(n, s, c) for (n, s), c in zip(spans, compiled)],
        (statement.lineno, statement.end_lineno),
    )


def _parameters(args: ast.arguments) -> list:
    """Every parameter of a signature, in order, as plain names."""
    given = args.posonlyargs + args.args + [args.vararg] + args.kwonlyargs + [args.kwarg]
    return [a.arg for a in given if a is not None]


def _load(name: str) -> ast.Name:
    return ast.Name(name, ast.Load())


def _region(name: str, params: list, body: list) -> ast.FunctionDef:
    args = ast.arguments(posonlyargs=[], args=[ast.arg(p) for p in params], kwonlyargs=[],
                         kw_defaults=[], defaults=[])  # fmt: skip
    region = ast.FunctionDef(name, args, copy.deepcopy(body), decorator_list=[], returns=None)
    if "type_params" in ast.FunctionDef._fields:
        region.type_params = []
    return ast.fix_missing_locations(ast.copy_location(region, body[0]))


def _driver(function, statement, crossing, passed, before: bool, after: bool) -> ast.FunctionDef:
    """The function run in ``function``'s place: the regions around the statement."""
    driver = copy.deepcopy(function)
    driver.decorator_list = []
    args = driver.args  # (the defaults are the function's own values, set after)
    args.defaults = [ast.Constant(None) for _ in args.defaults]
    args.kw_defaults = [None if d is None else ast.Constant(None) for d in args.kw_defaults]
    body = []
    if before:
        call = ast.Call(_load(_BEFORE), [_load(p) for p in _parameters(function.args)], [])
        target = ast.Tuple([ast.Name(n, ast.Store()) for n in crossing], ast.Store())
        body.append(ast.copy_location(ast.Assign([target], call), statement))
    body.append(copy.deepcopy(statement))
    if after:
        call = ast.Call(_load(_AFTER), [_load(p) for p in passed], [])
        body.append(ast.copy_location(ast.Return(call), statement))
    driver.body = body
    return ast.fix_missing_locations(driver)


def _function(fn: types.FunctionType, node: ast.FunctionDef, cells: dict) -> types.FunctionType:
    """``node`` compiled as a function with ``fn``'s globals, its closure cells (and ``cells``,
    values of more free names); its source registered for conversion."""
    code = compile_function(fn, node, list(cells))
    own = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))
    own.update((k, types.CellType(v)) for k, v in cells.items())
    closure = tuple(own[n] for n in code.co_freevars)
    made = types.FunctionType(code, fn.__globals__, node.name, None, closure)
    made.__module__, made.__qualname__ = fn.__module__, f"{fn.__qualname__}.<{node.name}>"
    register_source(code, node)
    return made
