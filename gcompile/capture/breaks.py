"""Graph breaks: a function whose trace refuses one of its statements runs as compiled regions
around that statement, the statement itself in Python between them::

    def f(x, w):                          def f(x, w):                  (the driver: Python)
        y = np.sin(x) * w                     y, = _gc_region_0(x, w)
        z = helper_numba_cannot_see(y)  =>    z = helper_numba_cannot_see(y)
        return (z ** 2).sum() + y             return _gc_region_1(y, z)

    def f__before_3(x, w):                def f__after_3(y, z):          (compiled regions)
        y = np.sin(x) * w                     return (z ** 2).sum() + y
        return (y,)

The region before the statement returns the names the rest reads (liveness, ``liveness.py``);
the region after it takes them. A statement inside a top-level loop splits the loop's body the
same way: the loop runs in Python, each trip calling a compiled region for the body's
statements before the refused one and one for those after it, which returns the names later
trips and the code after the loop read. Values cross as they are (arrays by reference: no
copy; a view stays a view). A region that refuses another statement splits again in turn. The
statement keeps every Python meaning it had (its own ``return``, its exceptions).

A ``return`` before the statement (``if n != m: return None``) returns from the driver: the
region before returns ``(True, value)`` there, ``(False, names)`` at its end.

Refused with a reason (the function then runs eagerly, as before): no source, a ``yield``,
``global`` or ``nonlocal``, a ``return`` before a statement in a loop's body, a name the rest reads that is
bound on some paths only, or a statement that is the whole function. The statement run in
Python may leave its loop (``if converged: break``, ``continue``, ``return``); a loop with an
``else``, or whose other statements may leave it, runs whole in Python instead.
"""

from __future__ import annotations

import ast
import copy
import types
from dataclasses import dataclass, field
from typing import Callable

from .convert import UNCONVERTIBLE_FLAGS, compile_function, parse_function, register_source
from .exits import loop_exits
from .liveness import _Definite, _Jumps, _Liveness, analyze
from .plan import mutated_by_call, rooted_at, scope_nodes
from .scopes import parameter_names, scan, target_names

PER_TRIP = "body_"  # the name prefix of a loop body's regions
_NO_JUMPS = _Jumps()  # (statements outside loops: no ``break`` or ``continue`` leaves them)


@dataclass
class Split:
    """A function broken at one statement: ``driver`` runs in its place; ``regions`` are the
    compiled functions it calls (``(name, lines, function)``); ``statement`` the lines run in
    Python (a loop's body statement, when the loop's body is split). ``whole``: when the loop
    is split, the driver running that loop as written, which ``runner`` takes once Python
    runs all the regions of its body as written (``per_trip``: their ``trips`` judge them)."""

    driver: Callable
    regions: list
    statement: tuple[int, int]
    whole: Callable | None = None
    per_trip: tuple = ()

    def runner(self) -> Callable:
        """The driver to call: ``whole`` once Python runs every region of the loop's body
        (a call of each would only add its cost to the same Python work)."""
        if self.whole is not None and all(r.trips.python for r in self.per_trip):
            return self.whole
        return self.driver


@dataclass
class _Cut:
    """A statement list cut at one statement: the statements replacing it (calls of the
    regions around the statement) and the regions (``(cell name, FunctionDef, per_trip)``:
    whether it runs on every trip of a loop, as a body's region)."""

    stmts: list
    regions: list = field(default_factory=list)
    shown: ast.stmt | None = None  # (a loop's body cut: the statement run in Python)
    indices: frozenset = frozenset()  # (a loop's body cut: the names of the loop's index)


def split_at(fn: types.FunctionType, lines: tuple, compile_region: Callable) -> Split | str:
    """``fn`` broken at its statement holding ``lines[0]`` (a loop's: in its body, at the
    statement holding the first of the other ``lines`` that is one): a ``Split`` whose regions
    ``compile_region(plain function, seat, per_trip, through, indices)`` made (``seat``: the
    cell the driver calls it through; ``per_trip``: a loop body's region; ``through``: it only
    returns names it is given, and Python runs it; ``indices``: the names of the loop's index
    a body's region takes, new on every trip), or why it cannot break there."""
    found = parse_function(fn)
    if isinstance(found, str):
        return found
    function = found[0]
    why = _unbreakable(fn, function)
    if why:
        return why
    facts = analyze(function)
    scope = _Scope(fn, set(fn.__code__.co_varnames) | set(fn.__code__.co_cellvars), facts)
    body = function.body
    at, line = _statement_of(body, lines)
    if at is None:
        return f"line {line} is not a statement of {fn.__name__}"
    statement = body[at]
    inner = None
    if isinstance(statement, (ast.For, ast.While)):
        inner = _split_loop(scope, statement, [n for n in lines[1:] if n != line])
    whole = all(_docstring(s) for s in body[:at]) and at == len(body) - 1
    if whole and not isinstance(inner, _Cut):
        return "the statement is the whole function"
    params = frozenset(parameter_names(function.args))
    cut = scope.cut(body, at, params, frozenset(), _parameters(function.args), top=True)
    if isinstance(cut, str):
        return cut
    whole = None
    if isinstance(inner, _Cut):  # (the loop runs in Python, its body's regions compiled)
        whole = _driver(function, list(cut.stmts))
        position = next(i for i, s in enumerate(cut.stmts) if s is statement)
        loop = copy.copy(statement)
        loop.body = inner.stmts
        cut.stmts[position] = loop
        cut.regions += inner.regions
    driver = _driver(function, cut.stmts)
    shown, indices = (inner.shown, inner.indices) if isinstance(inner, _Cut) else (statement, ())
    return _made(fn, (driver, whole), cut.regions, compile_region, shown, indices)


def _driver(function: ast.FunctionDef, stmts: list) -> ast.FunctionDef:
    """The driver: ``function``'s signature (its defaults set after) and ``stmts``."""
    driver = copy.deepcopy(function)
    driver.decorator_list = []
    args = driver.args
    args.defaults = [ast.Constant(None) for _ in args.defaults]
    args.kw_defaults = [None if d is None else ast.Constant(None) for d in args.kw_defaults]
    driver.body = copy.deepcopy(stmts)
    return ast.fix_missing_locations(driver)


class _Scope:
    """What cutting a statement list of one function needs: its name, its local names and
    the liveness facts of its loops."""

    def __init__(self, fn: types.FunctionType, local: set, facts: dict):
        self.name = fn.__code__.co_name
        self.local = frozenset(local)
        self.facts = facts

    def cut(self, stmts: list, at: int, bound: frozenset, out: frozenset, params: list,
            top: bool = False, jumps: _Jumps = _NO_JUMPS) -> _Cut | str:  # fmt: skip
        """``stmts`` cut at ``stmts[at]``, given the names certainly ``bound`` before them and
        those live ``out`` after them (at the function's end: none, its returns are in the
        statements; a loop body's ``jumps``: those live where the statement's ``break`` and
        ``continue`` go); ``params`` the names the region before takes."""
        before, statement, after = stmts[:at], stmts[at], stmts[at + 1 :]
        late = sorted(_closures_kept(statement) & scan(after).stores & self.local)
        if late:  # (the binding after it would be in another function: the driver's region)
            return (
                f"a nested function or lambda reading `{late[0]}`, which the function binds "
                "after it (split there, its closure would not see that binding)"
            )
        stale = _closures_made(before) & scan([statement, *after]).stores
        if not top:  # (a trip's closure outlives it: the next trip binds its names again)
            stale |= _closures_made(after) & scan([*before, statement]).stores
        stale &= self.local
        shared = _nonlocal_names([*before, statement, *after]) & self.local
        if shared:  # (the closure writes a cell of the region or driver that made it)
            return f"a nested function writing `{sorted(shared)[0]}` of the function (nonlocal)"
        if stale:  # (a region binds its own copy of the name: the closure would keep it)
            return (
                f"a nested function or lambda made around the statement reading "
                f"`{sorted(stale)[0]}`, which the function binds elsewhere"
            )
        before = [s for s in before if not _docstring(s)]
        returns = any(isinstance(n, ast.Return) for n in scope_nodes(before))
        if returns and not top:
            return "a `return` before the statement"
        made_again = _functions_made(before, self.live([statement, *after], out, jumps))
        copies = list(made_again.values())  # (a function is no region's value: made again)
        read = self.live([*copies, statement, *after], out, jumps) - set(made_again)
        crossing = sorted(read & scan(before).stores)
        known = _Definite().block(before, bound)
        if known is None or not set(crossing) <= known:
            return "a name the rest of the function reads is bound on some paths only"
        after = [*copies, *after] if after else after
        passed = self.live(after, out)
        known = _Definite().block([statement], known)
        if known is not None and not passed <= known:
            return "a name the rest of the function reads is bound on some paths only"
        kind = "" if top else PER_TRIP
        cut = _Cut([])
        if before:
            self.before(cut, statement, kind, (before, params, crossing), returns)
        cut.stmts += [copy.deepcopy(s) for s in copies]
        cut.stmts.append(statement)
        if not after:
            return cut
        results = sorted((out & scan(after).stores) - set(made_again))
        if not top:  # (a trip's region returns what later trips and the rest read)
            known = _Definite().block(after, frozenset(passed))
            if known is None or not set(results) <= known:
                return "a name later trips read is bound on some paths only"
            after = [*after, ast.copy_location(ast.Return(_tuple_of(results, ast.Load)), after[-1])]
        call = self.region(cut, f"{kind}after_{statement.lineno}", after, sorted(passed))
        end = ast.Return(call) if top else ast.Assign([_tuple_of(results, ast.Store)], call)
        cut.stmts.append(ast.copy_location(end, statement))
        return cut

    def before(self, cut: _Cut, statement: ast.stmt, kind: str, part: tuple, returns: bool):
        """The region of the statements before ``statement`` (``part``: them, the names the
        region takes, the ``crossing`` names it returns) and the driver's assignment of them.
        When they may ``return`` (``returns``: ``if n != m: return None``), the region returns
        ``(True, value)`` there and ``(False, crossing)`` at its end, and the driver returns
        the value it was given, or goes on."""
        before, params, crossing = part
        result = _tuple_of(crossing, ast.Load)
        if returns:
            before = [_ReturnsFlagged().visit(s) for s in copy.deepcopy(before)]
            result = ast.Tuple([ast.Constant(False), result], ast.Load())
        result = ast.copy_location(ast.Return(result), before[-1])
        call = self.region(cut, f"{kind}before_{statement.lineno}", [*before, result], params)
        if not returns:
            assign = ast.Assign([_tuple_of(crossing, ast.Store)], call)
            cut.stmts.append(ast.copy_location(assign, statement))
            return
        went = ast.Assign([ast.Name(_LEFT, ast.Store())], call)
        given = ast.Subscript(_load(_LEFT), ast.Constant(1), ast.Load())
        left = ast.If(
            ast.Subscript(_load(_LEFT), ast.Constant(0), ast.Load()), [ast.Return(given)], []
        )
        assign = ast.Assign([_tuple_of(crossing, ast.Store)], copy.deepcopy(given))
        cut.stmts += [ast.copy_location(s, statement) for s in (went, left, assign)]

    def region(self, cut: _Cut, name: str, body: list, params: list) -> ast.Call:
        """A region of ``body`` taking ``params``, added to ``cut``; the driver's call of it."""
        cell = f"_gc_{name.rsplit('_', 1)[0]}"
        per_trip = name.startswith(PER_TRIP)
        cut.regions.append((cell, _region(f"{self.name}__{name}", params, body), per_trip))
        return ast.Call(_load(cell), [_load(p) for p in params], [])

    def live(self, stmts: list, out: frozenset, jumps: _Jumps = _NO_JUMPS) -> frozenset:
        """The local names ``stmts`` may read before binding them, given those live after (and
        where their ``break`` and ``continue`` go)."""
        return _Liveness().block(stmts, out, jumps) & self.local


def _split_loop(scope: _Scope, loop: ast.For | ast.While, lines: list) -> _Cut | str:
    """The cut of a top-level loop's body at its statement holding the last of ``lines`` in
    it, with the statement shown (``shown``); or why the body stays whole."""
    # the innermost line in the body: the statement refused (a generated part of the converted
    # body, ``break``'s flag, may report a line of the loop's end)
    at = next((i for i in (_index(loop.body, n) for n in reversed(lines)) if i is not None), None)
    if at is None or loop.orelse:
        return "the loop's header or `else`"
    regions = loop.body[:at] + loop.body[at + 1 :]  # (the statement may leave: it is Python)
    returns = any(isinstance(n, ast.Return) for n in scope_nodes(regions))
    if returns or loop_exits(regions):
        return "a `break`, `continue` or `return` in the loop outside the statement"
    changed = (mutated_by_call(n) for stmt in regions for n in ast.walk(stmt))
    if any(c is not None and rooted_at(c, scope.local) for c in changed):  # (not ``np.add``)
        return "a change to a Python container in the loop (its regions would take a new one)"
    facts = scope.facts.get(loop)
    if facts is None:
        return "no facts about the loop"
    target = target_names(loop.target) if isinstance(loop, ast.For) else set()
    bound = facts.definite | frozenset(target)
    out = (facts.body_entry | facts.exit) & scope.local
    jumps = _Jumps(facts.exit & scope.local, out)  # (where the statement's break and continue go)
    params = sorted(scope.live(loop.body, out, jumps))
    if not set(params) <= bound:
        return "a name the loop's body reads is bound on some paths only"
    cut = scope.cut(loop.body, at, bound, out, params, jumps=jumps)
    if isinstance(cut, _Cut):
        if not cut.regions:
            return "nothing around the statement in the loop's body"
        cut.shown, cut.indices = loop.body[at], frozenset(target)
    return cut


def _statement_of(body: list, lines: tuple) -> tuple:
    """``(index, line)``: the last statement of ``body`` holding one of ``lines`` (the lines
    of the converted function's statements that were running, outermost first), and that line.
    The conversion nests what follows an early return in an ``else`` (``returns.py``), so the
    refused statement may be one of the lines after the first."""
    found = [(i, line) for line in lines if (i := _index(body, line)) is not None]
    if not found:
        return None, lines[0]
    last = max(i for i, _ in found)
    return last, next(line for i, line in found if i == last)


def _index(stmts: list, line: int) -> int | None:
    return next((i for i, s in enumerate(stmts) if s.lineno <= line <= s.end_lineno), None)


def _docstring(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)


def _unbreakable(fn: types.FunctionType, function: ast.FunctionDef) -> str:
    if fn.__code__.co_flags & UNCONVERTIBLE_FLAGS:
        return "a generator or coroutine"
    if any(isinstance(n, (ast.Global, ast.Nonlocal)) for n in scope_nodes(function.body)):
        return "a `global` or `nonlocal` declaration"
    return ""


def _parameters(args: ast.arguments) -> list:
    """Every parameter of a signature, in order, as plain names."""
    given = args.posonlyargs + args.args + [args.vararg] + args.kwonlyargs + [args.kwarg]
    return [a.arg for a in given if a is not None]


_LEFT = "_gc_left"  # the driver's name for what a region that may return gave it


class _ReturnsFlagged(ast.NodeTransformer):
    """``return value`` becomes ``return (True, value)`` in a region's own scope."""

    def visit_Return(self, node: ast.Return) -> ast.AST:
        value = node.value or ast.Constant(None)
        flagged = ast.Tuple([ast.Constant(True), value], ast.Load())
        return ast.copy_location(ast.Return(flagged), node)

    def visit_FunctionDef(self, node: ast.AST) -> ast.AST:
        return node  # (a nested function's returns are its own)

    visit_AsyncFunctionDef = visit_Lambda = visit_ClassDef = visit_FunctionDef


def _load(name: str) -> ast.Name:
    return ast.Name(name, ast.Load())


def _tuple_of(names: list, context: type) -> ast.Tuple:
    return ast.Tuple([ast.Name(n, context()) for n in names], context())


def _region(name: str, params: list, body: list) -> ast.FunctionDef:
    args = ast.arguments(posonlyargs=[], args=[ast.arg(p) for p in params], kwonlyargs=[],
                         kw_defaults=[], defaults=[])  # fmt: skip
    region = ast.FunctionDef(name, args, copy.deepcopy(body), decorator_list=[], returns=None)
    if "type_params" in ast.FunctionDef._fields:
        region.type_params = []
    return ast.fix_missing_locations(ast.copy_location(region, body[0]))


def _made(fn, drivers: tuple, regions: list, compile_region, shown, indices) -> Split:
    """The split's functions: each region compiled, the drivers (the driver, and the one
    running the split loop whole or None) calling them through cells; ``shown``: the
    statement run in Python; ``indices``: when it is in a loop's body, the names of the
    loop's index (which its body's regions trace as values)."""
    seats = {cell: types.CellType() for cell, *_ in regions}  # (a region may give its seat up)
    compiled = {}
    for cell, region, per_trip in regions:
        plain, through = _function(fn, region, {}), _passes_through(region)
        taken = frozenset(indices) & set(parameter_names(region.args)) if per_trip else frozenset()
        compiled[cell] = compile_region(plain, seats[cell], per_trip, through, taken)
        seats[cell].cell_contents = plain if through else compiled[cell]
    made = []
    for driver in drivers:
        function = None if driver is None else _function(fn, driver, seats)
        if function is not None:
            function.__defaults__, function.__kwdefaults__ = fn.__defaults__, fn.__kwdefaults__
        made.append(function)
    spans = [
        (region.name, (region.body[0].lineno, region.body[-1].end_lineno), compiled[cell])
        for cell, region, _ in regions
    ]
    per_trip = tuple(compiled[cell] for cell, _, per_trip in regions if per_trip)
    return Split(made[0], spans, (shown.lineno, shown.end_lineno), made[1], per_trip)


def _passes_through(region: ast.FunctionDef) -> bool:
    """Whether ``region`` only returns names it is given (``return keep``): Python runs it,
    since a compiled call would only bind its arguments (a list of scalars: one guard each)."""
    if len(region.body) != 1 or not isinstance(region.body[0], ast.Return):
        return False
    value = region.body[0].value
    items = value.elts if isinstance(value, ast.Tuple) else [value]
    return all(item is None or isinstance(item, ast.Name) for item in items)


def _function(fn: types.FunctionType, node: ast.FunctionDef, cells: dict) -> types.FunctionType:
    """``node`` compiled as a function with ``fn``'s globals, its closure cells (and ``cells``,
    the cells of more free names); its source registered for conversion."""
    code = compile_function(fn, node, list(cells))
    own = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))
    own.update(cells)
    closure = tuple(own[n] for n in code.co_freevars)
    made = types.FunctionType(code, fn.__globals__, node.name, None, closure)
    made.__module__, made.__qualname__ = fn.__module__, f"{fn.__qualname__}.<{node.name}>"
    register_source(code, node)
    return made


def _functions_made(stmts: list, read: set) -> dict:
    """The statements of ``stmts`` making a function (a plain ``def``, ``f = lambda ...``) that
    the rest ``read``s, or that such a function's closure reads, by name in their order: made
    again where they are read rather than passed out of a compiled region (their closures
    read names bound before the statement only: ``_Scope.cut`` refuses the others)."""
    makers: dict = {}
    for stmt in stmts:
        name = _function_made(stmt)
        if name is not None:
            makers[name] = stmt
        else:  # (a name bound again after its function was made is not that function)
            makers = {n: s for n, s in makers.items() if n not in scan([stmt]).stores}
    needed, todo = set(), [name for name in read if name in makers]
    while todo:
        name = todo.pop()
        if name not in needed:
            needed.add(name)
            todo += [n for n in scan([makers[name]]).escaping if n in makers]
    return {name: stmt for name, stmt in makers.items() if name in needed}


def _function_made(stmt: ast.stmt) -> str | None:
    """The name ``stmt`` binds to a new function when that is all it does (no decorator,
    defaults of constants), else None."""
    if isinstance(stmt, ast.FunctionDef) and not stmt.decorator_list:
        name, args = stmt.name, stmt.args
    elif (
        isinstance(stmt, ast.Assign)
        and isinstance(stmt.value, ast.Lambda)
        and len(stmt.targets) == 1
        and isinstance(stmt.targets[0], ast.Name)
    ):
        name, args = stmt.targets[0].id, stmt.value.args
    else:
        return None
    defaults = [*args.defaults, *filter(None, args.kw_defaults)]
    return name if all(isinstance(d, ast.Constant) for d in defaults) else None


def _nonlocal_names(stmts: list) -> set:
    """The names nested functions of ``stmts`` declare ``nonlocal`` (and so write)."""
    return {
        name
        for stmt in stmts
        for node in ast.walk(stmt)
        if isinstance(node, ast.Nonlocal)
        for name in node.names
    }


def _closures_made(stmts: list) -> set:
    """The free names of the closures statements of ``stmts`` (at any depth of their own
    scope) bind to a name: those a region would hold in cells of its own."""
    names: set = set()
    for node in scope_nodes(stmts):
        names |= _closures_kept(node)
    return names


def _closures_kept(statement: ast.stmt) -> set:
    """The free names of the functions, classes and lambdas ``statement`` binds to a name (a
    ``def``, ``f = lambda ...``): closures that outlive it. (A lambda it only passes on,
    ``sorted(key=lambda t: -t * w)``, is called within it.)"""
    kept = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    if isinstance(statement, kept) or isinstance(getattr(statement, "value", None), ast.Lambda):
        return scan([statement]).escaping
    return set()
