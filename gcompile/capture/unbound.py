"""Names an ``if`` may leave unbound that the function reads: a flag beside each, so that the
``if`` can still be a branch of the graph.

Python raises UnboundLocalError at a read of a name no path bound. A branch of the graph
(``cond``) runs the code of both sides, so it needs a value for every name either side binds.
For a name some ``if`` binds on one side only (``if d > 0: s = 1`` / ``elif d < 0: s = -1``)
and which the function reads, this pass keeps a flag telling whether it is bound::

    __gc_ok_s = False                        # at the function's start
    if d > 0:
        s = 1
        __gc_ok_s = True                     # after each statement binding s
    ...
    out[i] = __gc_rt.bound(s, __gc_ok_s, 's') * x[i]      # each read of s

A branch that leaves ``s`` unbound then gives it a zero of the other side's type
(``frontend/branches.py``), and ``runtime.bound`` raises UnboundLocalError where the flag is
false, as Python raises at that read (a check of the data where the flag is traced). An
``s += v`` checks first, as Python reads ``s`` first.

Only names whose every binding is a plain, augmented or annotated assignment or a ``for``
target of the function's own scope are kept so; a name that a nested scope uses, that is
deleted, declared global or nonlocal, or bound otherwise stays as it was (the ``if`` leaves it
unbound, and a read of it stops the trace).
"""

from __future__ import annotations

import ast

from .liveness import _Definite, _meet
from .scopes import parameter_names, scan, target_names

FLAG = "__gc_ok_"
GENERATED = "__gc_"  # (the names earlier rewrites made: their own rules keep them bound)
_NESTED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def flag_of(name: str) -> str:
    """The flag kept beside ``name``: whether it is bound."""
    return FLAG + name


def track_unbound(function: ast.FunctionDef, runtime: str) -> frozenset[str]:
    """Give a flag to each name of ``function`` that an ``if`` may leave unbound and the
    function reads (see the module docstring); the names."""
    bindings = _Bindings()
    for stmt in function.body:
        bindings.visit(stmt)
    names = frozenset(_one_sided(function) & (bindings.plain - bindings.other))
    names &= frozenset(n for n in scan(function.body).loads if not n.startswith(GENERATED))
    if not names:
        return names
    reads = _Reads(names, runtime)
    function.body = [reads.visit(stmt) for stmt in function.body]  # (not its defaults)
    start = 1 if ast.get_docstring(function, clean=False) is not None else 0
    body = _Flags(names, runtime).block(function.body)
    where = function.body[start] if start < len(function.body) else function
    inits = [_flag_set(name, False, where) for name in sorted(names)]
    function.body = body[:start] + inits + body[start:]
    return names


def _one_sided(function: ast.FunctionDef) -> set[str]:
    """Names some ``if`` of the function's own scope binds that are not certainly bound after
    it, nor before it."""
    definite = _Definite()
    definite.block(function.body, frozenset(parameter_names(function.args)))
    found: set[str] = set()
    for stmt, before in definite.before.items():
        if not isinstance(stmt, ast.If):
            continue
        after = _meet(_Definite().block(stmt.body, before), _Definite().block(stmt.orelse, before))
        if after is not None:  # (None: neither branch reaches the code after the if)
            found |= (scan(stmt.body).stores | scan(stmt.orelse).stores) - before - after
    return found


class _Bindings(ast.NodeVisitor):
    """The names of a scope bound by plain assignments and ``for`` targets (``plain``), and
    those bound otherwise, deleted, declared, or used by a nested scope (``other``)."""

    def __init__(self):
        self.plain: set[str] = set()
        self.other: set[str] = set()
        self._targets: set[int] = set()  # the Name nodes of plain targets

    def _plain_target(self, target: ast.expr) -> None:
        for node in ast.walk(target):
            if isinstance(node, ast.Name) and node.id in target_names(target):
                self._targets.add(id(node))

    def visit_Assign(self, node: ast.Assign) -> None:
        for target in node.targets:
            self._plain_target(target)
        self.generic_visit(node)

    def _bound_by_target(self, node: ast.AugAssign | ast.AnnAssign | ast.For) -> None:
        if not isinstance(node, ast.AnnAssign) or node.value is not None:
            self._plain_target(node.target)
        self.generic_visit(node)

    visit_AugAssign = visit_AnnAssign = visit_For = _bound_by_target

    def visit_Name(self, node: ast.Name) -> None:
        if isinstance(node.ctx, ast.Store) and id(node) in self._targets:
            self.plain.add(node.id)
        elif not isinstance(node.ctx, ast.Load):
            self.other.add(node.id)

    def visit_NamedExpr(self, node: ast.NamedExpr) -> None:
        self.other.add(node.target.id)
        self.generic_visit(node)

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        if node.name:
            self.other.add(node.name)
        self.generic_visit(node)

    def visit_Import(self, node: ast.Import | ast.ImportFrom) -> None:
        self.other.update(alias.asname or alias.name.split(".")[0] for alias in node.names)

    visit_ImportFrom = visit_Import

    def visit_Global(self, node: ast.Global | ast.Nonlocal) -> None:
        self.other.update(node.names)

    visit_Nonlocal = visit_Global

    def generic_visit(self, node: ast.AST) -> None:
        if isinstance(node, (*_NESTED, *_COMPREHENSIONS, ast.Match)):
            self.other.update(_identifiers(node))
            return
        super().generic_visit(node)


class _Reads(ast.NodeTransformer):
    """Each read of a flagged name becomes ``runtime.bound(name, flag, 'name')`` (no nested
    scope uses one: they are not entered)."""

    def __init__(self, names: frozenset[str], runtime: str):
        self.names = names
        self.runtime = runtime

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if node.id not in self.names or not isinstance(node.ctx, ast.Load):
            return node
        return _located(_bound_call(node, self.runtime), node)


class _Flags:
    """Inserts the flags' assignments after the statements binding their names (where the
    name may be unbound before: ``known`` holds those certainly bound), and the check before
    ``name += v``."""

    def __init__(self, names: frozenset[str], runtime: str):
        self.names = names
        self.runtime = runtime

    def block(self, stmts: list[ast.stmt], known: frozenset = frozenset()) -> list[ast.stmt]:
        """``stmts`` with the flags set (in place for the statements nested in them)."""
        self.known = known
        out: list[ast.stmt] = []
        for stmt in stmts:
            if isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name):
                if stmt.target.id in self.names:
                    check = _bound_call(ast.Name(stmt.target.id, ast.Load()), self.runtime)
                    out.append(_located(ast.Expr(check), stmt))
            out.append(stmt)
            out.extend(self._statement(stmt, self.known))
        return out

    def _statement(self, stmt: ast.stmt, known: frozenset) -> list[ast.stmt]:
        """The flags' assignments to put after ``stmt`` (the statements nested in it done);
        ``self.known`` becomes what is certainly bound after it."""
        if isinstance(stmt, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            bound = set().union(*(target_names(t) & self.names for t in targets))
            if getattr(stmt, "value", None) is None:
                bound = set()
            self.known = known | bound
            return [_flag_set(name, True, stmt) for name in sorted(bound - known)]
        if isinstance(stmt, ast.If):
            stmt.body = self.block(stmt.body, known)
            after_body = self.known
            stmt.orelse = self.block(stmt.orelse, known)
            self.known &= after_body
            return []
        if isinstance(stmt, (ast.For, ast.AsyncFor)):
            target = target_names(stmt.target) & self.names
            sets = [_flag_set(name, True, stmt) for name in sorted(target - known)]
            stmt.body = sets + self.block(stmt.body, known | target)
            stmt.orelse = self.block(stmt.orelse, known)
        elif not isinstance(stmt, _NESTED):  # (while, with, try: nothing more known after)
            for field in ("body", "orelse", "finalbody"):
                if isinstance(getattr(stmt, field, None), list):
                    setattr(stmt, field, self.block(getattr(stmt, field), known))
            for handler in getattr(stmt, "handlers", ()):
                handler.body = self.block(handler.body, known)
        self.known = known
        return []


def _identifiers(node: ast.AST) -> set[str]:
    """Every name a nested scope or a ``match`` statement mentions or binds."""
    found = {getattr(node, "name", None)}
    for inner in ast.walk(node):
        if isinstance(inner, ast.Name):
            found.add(inner.id)
        elif isinstance(inner, (ast.MatchAs, ast.MatchStar)):
            found.add(inner.name)
        elif isinstance(inner, ast.MatchMapping):
            found.add(inner.rest)
    return found - {None}


def _bound_call(name: ast.Name, runtime: str) -> ast.Call:
    function = ast.Attribute(ast.Name(runtime, ast.Load()), "bound", ast.Load())
    flag = ast.Name(flag_of(name.id), ast.Load())
    return ast.Call(function, [name, flag, ast.Constant(name.id)], [])


def _flag_set(name: str, value: bool, where: ast.AST) -> ast.stmt:
    stmt = ast.Assign([ast.Name(flag_of(name), ast.Store())], ast.Constant(value))
    return _located(stmt, where)


def _located(made: ast.AST, where: ast.AST) -> ast.AST:
    """``made`` with ``where``'s location on every node of it."""
    for node in ast.walk(made):
        if "lineno" in node._attributes:
            ast.copy_location(node, where)
    return made
