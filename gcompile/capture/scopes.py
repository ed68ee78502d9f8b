"""Which names a piece of a function reads and binds, following Python's scoping rules.

A scan covers the statements or expressions of one scope. Nested scopes (functions, lambdas,
classes, comprehensions) are not entered as part of it: what they take from the enclosing scope
(their free names) counts as read by it. Free names of scopes that may outlive the statement
creating them (functions, lambdas, classes, generator expressions) are also kept apart as
``escaping``: a variable they use is shared with them through a closure cell. A lambda that
is called where it is made or never (``raises``: the exception of a raising test, marked
``called_at_once``) is not one of them: its names are read where it stands.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

# Builtins that consume a generator expression at once, so it cannot outlive its statement.
_CONSUMERS = frozenset(
    {"sum", "min", "max", "any", "all", "list", "tuple", "set", "frozenset", "sorted", "dict"}
)


@dataclass
class Names:
    """What one scope's code does with names (see the module docstring)."""

    loads: set[str] = field(default_factory=set)
    stores: set[str] = field(default_factory=set)  # any binding: assignment, import, def, ...
    dels: set[str] = field(default_factory=set)  # ``del x`` and ``except ... as x`` (unbound after)
    inner: set[str] = field(default_factory=set)  # free names of comprehensions run at once
    escaping: set[str] = field(default_factory=set)
    declared_global: set[str] = field(default_factory=set)
    declared_nonlocal: set[str] = field(default_factory=set)

    @property
    def reads(self) -> set[str]:
        """Every name whose value this code may read (``del x`` reads ``x``: it must be bound)."""
        return self.loads | self.dels | self.inner | self.escaping

    @property
    def local(self) -> set[str]:
        """Names local to the scope (bound in it and not declared global or nonlocal)."""
        return (self.stores | self.dels) - self.declared_global - self.declared_nonlocal


def scan(nodes: list[ast.AST]) -> Names:
    """The names used by ``nodes``, statements or expressions of one scope."""
    scanner = _Scanner()
    for node in nodes:
        scanner.visit(node)
    return scanner.names


def function_names(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> Names:
    """The names of a function's own scope: its parameters (as stores) and its body."""
    scanner = _Scanner()
    scanner.names.stores |= parameter_names(node.args)
    for part in node.body if isinstance(node.body, list) else [node.body]:
        scanner.visit(part)
    return scanner.names


def parameter_names(args: ast.arguments) -> set[str]:
    """The names a function's parameters bind."""
    params = args.posonlyargs + args.args + args.kwonlyargs + [args.vararg, args.kwarg]
    return {a.arg for a in params if a is not None}


def target_names(target: ast.expr) -> set[str]:
    """The plain names an assignment target binds (``a, (b, *c)`` binds a, b, c)."""
    if isinstance(target, ast.Name):
        return {target.id}
    if isinstance(target, (ast.Tuple, ast.List)):
        return set().union(*(target_names(t) for t in target.elts))
    if isinstance(target, ast.Starred):
        return target_names(target.value)
    return set()  # attributes and subscripts bind no name


def definite_binds(stmt: ast.stmt) -> set[str]:
    """Names a simple statement certainly binds once it completes (walrus targets excluded:
    they may sit in a branch of an expression)."""
    if isinstance(stmt, ast.Assign):
        return set().union(*(target_names(t) for t in stmt.targets))
    if isinstance(stmt, (ast.AugAssign, ast.AnnAssign)):
        has_value = isinstance(stmt, ast.AugAssign) or stmt.value is not None
        return target_names(stmt.target) if has_value else set()
    if isinstance(stmt, (ast.Import, ast.ImportFrom)):
        return {_import_binding(alias) for alias in stmt.names}
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {stmt.name}
    return set()


def _import_binding(alias: ast.alias) -> str:
    return alias.asname or alias.name.split(".")[0]


class _Scanner(ast.NodeVisitor):
    """Collects the Names of one scope; nested scopes are summarised by their free names."""

    def __init__(self, comprehension: bool = False):
        self.names = Names()
        self.comprehension = comprehension
        self.walrus: set[str] = set()  # in a comprehension, walrus targets bind outside it

    def visit_Name(self, node: ast.Name) -> None:
        if isinstance(node.ctx, ast.Load):
            self.names.loads.add(node.id)
        elif isinstance(node.ctx, ast.Store):
            self.names.stores.add(node.id)
        else:
            self.names.dels.add(node.id)

    def visit_NamedExpr(self, node: ast.NamedExpr) -> None:
        self.visit(node.value)
        (self.walrus if self.comprehension else self.names.stores).add(node.target.id)

    def visit_Global(self, node: ast.Global) -> None:
        self.names.declared_global.update(node.names)

    def visit_Nonlocal(self, node: ast.Nonlocal) -> None:
        self.names.declared_nonlocal.update(node.names)

    def visit_Import(self, node: ast.Import) -> None:
        self.names.stores.update(_import_binding(alias) for alias in node.names)

    visit_ImportFrom = visit_Import

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        # ``x += v`` reads x before binding it (its target has only the Store context).
        self.visit(node.value)
        if isinstance(node.target, ast.Name):
            self.names.loads.add(node.target.id)
        self.visit(node.target)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        # A local annotation is not evaluated, but ``x: int`` alone still makes x local.
        self.visit(node.target)
        if node.value is not None:
            self.visit(node.value)

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        if node.type is not None:
            self.visit(node.type)
        if node.name:
            self.names.stores.add(node.name)
            self.names.dels.add(node.name)  # Python deletes it when the handler ends
        for stmt in node.body:
            self.visit(stmt)

    def visit_MatchAs(self, node: ast.MatchAs) -> None:
        if node.name:
            self.names.stores.add(node.name)
        self.generic_visit(node)

    def visit_MatchStar(self, node: ast.MatchStar) -> None:
        if node.name:
            self.names.stores.add(node.name)

    def visit_MatchMapping(self, node: ast.MatchMapping) -> None:
        if node.rest:
            self.names.stores.add(node.rest)
        self.generic_visit(node)

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self._visit_signature(node.decorator_list, node.args)
        if node.returns is not None:
            self.visit(node.returns)
        self.names.stores.add(node.name)
        self.names.escaping |= _function_free(node)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Lambda(self, node: ast.Lambda) -> None:
        self._visit_signature([], node.args)
        if getattr(node, "called_at_once", False):  # (a raise's exception, made where it is)
            self.visit(node.body)
            return
        self.names.escaping |= _function_free(node)

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        for part in node.decorator_list + node.bases + node.keywords:
            self.visit(part)
        self.names.stores.add(node.name)
        self.names.escaping |= _class_free(node)

    def _visit_signature(self, decorators: list[ast.expr], args: ast.arguments) -> None:
        """What a def or lambda evaluates where it stands: decorators, defaults, annotations."""
        for part in decorators + args.defaults + [d for d in args.kw_defaults if d is not None]:
            self.visit(part)
        params = args.posonlyargs + args.args + args.kwonlyargs + [args.vararg, args.kwarg]
        for param in params:
            if param is not None and param.annotation is not None:
                self.visit(param.annotation)

    def visit_Call(self, node: ast.Call) -> None:
        consumed = (
            isinstance(node.func, ast.Name)
            and node.func.id in _CONSUMERS
            and node.args
            and isinstance(node.args[0], ast.GeneratorExp)
        )
        if not consumed:
            self.generic_visit(node)
            return
        self.visit(node.func)
        self._visit_comprehension(node.args[0], escaping=False)
        for part in node.args[1:] + node.keywords:
            self.visit(part)

    def visit_ListComp(self, node: ast.ListComp | ast.SetComp | ast.DictComp) -> None:
        self._visit_comprehension(node, escaping=False)

    visit_SetComp = visit_DictComp = visit_ListComp

    def visit_GeneratorExp(self, node: ast.GeneratorExp) -> None:
        self._visit_comprehension(node, escaping=True)

    def _visit_comprehension(self, node: ast.expr, escaping: bool) -> None:
        self.visit(node.generators[0].iter)  # evaluated in the enclosing scope
        inner = _Scanner(comprehension=True)
        for i, generator in enumerate(node.generators):
            inner.visit(generator.target)
            if i:
                inner.visit(generator.iter)
            for condition in generator.ifs:
                inner.visit(condition)
        for part in ("elt", "key", "value"):
            if hasattr(node, part):
                inner.visit(getattr(node, part))
        own = inner.names.stores
        (self.walrus if self.comprehension else self.names.stores).update(inner.walrus)
        free = inner.names.reads - own
        if escaping:
            self.names.escaping |= free
        else:
            self.names.inner |= free
            self.names.escaping |= inner.names.escaping - own


def _function_free(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> set[str]:
    """Names a function or lambda takes from enclosing scopes (or the globals)."""
    names = function_names(node)
    return (names.reads | names.declared_nonlocal) - names.local - names.declared_global


def _class_free(node: ast.ClassDef) -> set[str]:
    """Names a class body takes from enclosing scopes; a class's own names are not visible to
    the functions and comprehensions inside it."""
    names = scan(node.body)
    own_level = (names.loads | names.dels | names.declared_nonlocal) - names.local
    return (own_level - names.declared_global) | names.inner | names.escaping


class OwnScope(ast.NodeTransformer):
    """A rewrite of the expressions of a function's own scope and of the functions the
    conversion made there (``generated``: their name prefixes): the user's nested functions,
    lambdas and classes are not entered."""

    def __init__(self, generated: tuple[str, ...]):
        self.generated = generated

    def visit_scope(self, function: ast.FunctionDef) -> None:
        """Rewrite ``function``'s body."""
        function.body = [self.visit(stmt) for stmt in function.body]

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        if node.name.startswith(self.generated):
            self.visit_scope(node)
        return node

    def visit_AsyncFunctionDef(self, node: ast.AST) -> ast.AST:
        return node

    visit_Lambda = visit_ClassDef = visit_AsyncFunctionDef


class NonLocalNames(OwnScope):
    """An ``OwnScope`` rewrite of expressions on names the function does not bind:
    ``shadowed`` holds its local names, and inside a comprehension its targets too."""

    def __init__(self, generated: tuple[str, ...], local: set[str]):
        super().__init__(generated)
        self.shadowed = set(local)

    def _comprehension(self, node: ast.AST) -> ast.AST:
        bound = set().union(*(target_names(g.target) for g in node.generators))
        saved, self.shadowed = self.shadowed, self.shadowed | bound
        try:
            return self.generic_visit(node)
        finally:
            self.shadowed = saved

    visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = _comprehension


def identifiers(node: ast.AST) -> list[str]:
    """The names ``node`` itself spells, read or bound: a name, a parameter, a ``def`` or
    ``class``, ``global``/``nonlocal``, an import's, ``except ... as``, a match capture."""
    if isinstance(node, ast.Name):
        return [node.id]
    if isinstance(node, ast.arg):
        return [node.arg]
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [node.name]
    if isinstance(node, (ast.Global, ast.Nonlocal)):
        return list(node.names)
    if isinstance(node, ast.alias):
        return [node.asname or node.name.split(".")[0]]
    if isinstance(node, (ast.ExceptHandler, ast.MatchAs, ast.MatchStar)):
        return [node.name] if node.name else []
    if isinstance(node, ast.MatchMapping):
        return [node.rest] if node.rest else []
    return []


def mentions(node: ast.AST, names: set) -> bool:
    """Whether ``node`` (or anything in it) reads or binds a name of ``names`` as a variable."""
    return any(isinstance(n, ast.Name) and n.id in names for n in ast.walk(node))
