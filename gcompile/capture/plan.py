"""Which ``for`` loops and ``if`` statements of one function scope become runtime calls, and
what each one carries.

A loop converts when its body can run as a function called once per iteration with the same
effects as the original: a plain name as target, no ``else:``, nothing in the body that jumps
out of it or depends on running in the function's own frame. An ``if`` converts when each of its
branches can run so, as a function called once (its test stays in the scope). The carried names
are the variables whose values flow into the body, between iterations or out of the statement
(see ``_carried``).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from .liveness import Facts, analyze
from .scopes import Names, function_names, parameter_names, scan

# Builtins that read or write the calling frame's variables by name.
_FRAME_READERS = ("locals", "vars", "dir", "eval", "exec")
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_PLANNED = (ast.For, ast.AsyncFor, ast.If, ast.While)
# How reasons name the code run as a function, and where a deleted name's value is needed.
_LOOP = ("the loop", "is used in a later iteration or after the loop")
_BRANCH = ("a branch", "comes from before the `if` or is used after it")


@dataclass(frozen=True)
class LoopPlan:
    """How to rewrite one loop.

    ``carried``: in and out of every iteration, in this order (the target first when it is
    one of them). ``maybe_unbound``: carried names perhaps unbound when the loop starts (passed
    as UNDEFINED). ``entry_checks``: those of them an iteration may read before assigning, so
    the body unbinds them again when they hold UNDEFINED. ``effects``: changes the body makes
    to Python objects other than arrays (a handler tracing the body once would make them once);
    ``calls_on``: its calls of methods of objects named (``calls_on``; ``object_calls``: the
    runtime looks at what they are).
    """

    node: ast.For | ast.While
    kind: str  # "range", "reversed_range", "each" or "while"
    carried: tuple[str, ...]
    maybe_unbound: tuple[str, ...]
    entry_checks: tuple[str, ...]
    effects: tuple[str, ...] = ()
    calls_on: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class BranchPlan:
    """How to rewrite one ``if`` statement: its two branches as functions of the ``carried``
    names, returning them. ``maybe_unbound``, ``entry_checks`` and ``effects`` are a loop's
    (``LoopPlan``), for both branches together."""

    node: ast.If
    carried: tuple[str, ...]
    maybe_unbound: tuple[str, ...]
    entry_checks: tuple[str, ...]
    effects: tuple[str, ...] = ()
    calls_on: tuple[tuple[str, str], ...] = ()


def plan_scope(
    function: ast.FunctionDef | ast.AsyncFunctionDef, enclosing: frozenset[str] = frozenset()
) -> dict[ast.AST, LoopPlan | BranchPlan | str]:
    """For every ``for`` and ``if`` statement of ``function``'s own scope: its plan, or why it
    stays as written (a sentence for users). ``enclosing``: the local names of the function a
    generated ``function`` (a loop body, a branch) was taken from."""
    names = function_names(function)
    nodes = [n for n in scope_nodes(function.body) if isinstance(n, _PLANNED)]
    dynamic = sorted(names.loads & set(_FRAME_READERS))
    if dynamic:
        why = f"the function calls `{dynamic[0]}()`, which would see the converted code's names"
        return dict.fromkeys(nodes, why)
    facts = analyze(function)
    scope = _Scope(function, names, enclosing)
    return {node: scope.decide(node, facts[node]) for node in nodes}


class _Scope:
    """The function-wide facts a decision needs."""

    def __init__(
        self, function: ast.FunctionDef | ast.AsyncFunctionDef, names: Names, enclosing: frozenset
    ):
        self.local = names.local | parameter_names(function.args)
        self.containers = self.local | enclosing  # names whose methods change local objects
        self.declared = {n: "global" for n in names.declared_global}
        self.declared.update({n: "nonlocal" for n in names.declared_nonlocal})
        self.captured = names.escaping & self.local

    def decide(
        self, node: ast.For | ast.AsyncFor | ast.If, facts: Facts
    ) -> LoopPlan | BranchPlan | str:
        """The statement's plan, or the reason it is left as written."""
        if isinstance(node, ast.If):
            found = self._function_of(node, node.body + node.orelse, facts, _BRANCH)
            return found if isinstance(found, str) else BranchPlan(node, **found)
        if isinstance(node, ast.While):
            why = _while_problem(node)
            test = ast.Expr(node.test)  # (the test runs as a function of the carried names too)
            found = why or self._function_of(node, [*node.body, test], facts, _LOOP)
            return found if isinstance(found, str) else LoopPlan(node, "while", **found)
        why = _shape_problem(node)
        if why:
            return why
        found = self._function_of(node, node.body, facts, _LOOP, node.target.id)
        return found if isinstance(found, str) else LoopPlan(node, _kind(node.iter), **found)

    def _function_of(
        self,
        node: ast.stmt,
        stmts: list[ast.stmt],
        facts: Facts,
        words: tuple[str, str],
        target: str | None = None,
    ) -> dict | str:
        """What ``stmts`` (a loop body taking ``target`` first, or the branches of an ``if``)
        carry when they run as a function: the ``carried``, ``maybe_unbound``,
        ``entry_checks`` and ``effects`` of a plan; or why they cannot run so."""
        why = _body_problem(stmts, words[0])
        if why:
            return why
        body = scan(stmts)
        own = {target} if target else set()
        why = self._assignment_problem(body.stores | body.dels | own, facts, words[0])
        if why:
            return why
        carried = _carried(node, body, facts, self.local - self.captured, target)
        deleted = sorted(body.dels & set(carried))
        if deleted:
            name = deleted[0]
            return (
                f"deletes `{name}` (with `del` or `except ... as {name}`), whose value {words[1]}"
            )
        maybe_unbound = tuple(n for n in carried if n not in facts.definite)
        checks = tuple(n for n in maybe_unbound if n in facts.body_entry and n not in own)
        effects = _effects(stmts, self.containers)
        calls = calls_on([n for n, _ in _body_nodes(stmts)], self.containers)
        return dict(
            carried=carried,
            maybe_unbound=maybe_unbound,
            entry_checks=checks,
            effects=effects,
            calls_on=calls,
        )

    def _assignment_problem(self, assigned: set[str], facts: Facts, body: str) -> str:
        for name in sorted(assigned):
            if name in self.declared:
                return f"assigns `{name}`, which the function declares `{self.declared[name]}`"
            if name in self.captured:
                return (
                    f"assigns `{name}`, which a nested function, lambda, class or generator "
                    "expression of this function also uses (a closure would see a different "
                    "variable)"
                )
            if name in facts.exc:
                return (
                    f"assigns `{name}`, which this function reads after catching an exception "
                    f"(`try`) or after a `with` block: an exception raised in {body} "
                    f"must leave `{name}` as it was at that point"
                )
        return ""


def _carried(
    node: ast.stmt, body: Names, facts: Facts, plain_locals: set[str], target: str | None
) -> tuple[str, ...]:
    """Names passed into the body and returned from it, in order of first appearance.

    A name the body assigns is carried when its value may be read before the body assigns it
    (in this iteration or, through the loop head, in the next one; in a branch that does not
    assign it) or after the statement. A loop's target is carried when read after the loop. A
    local the body only reads is carried when it may be unbound at the statement, so that
    reading it raises UnboundLocalError as in Python.
    """
    assigned = body.stores | body.dels
    carried = {n for n in assigned if n in facts.body_entry or n in facts.exit}
    own = {target} if target else set()
    carried |= own & facts.exit
    carried |= (body.reads & plain_locals) - assigned - own - facts.definite
    return tuple(sorted(carried, key=_first_use(node, target)))


def _first_use(node: ast.stmt, target: str | None):
    """A sort key: a loop's target first, then names by their first mention in the statement."""
    where: dict[str, tuple[int, int]] = {target: (0, 0)} if target else {}
    for child in ast.walk(node):
        if isinstance(child, ast.Name):
            spot = (child.lineno, child.col_offset)
            where[child.id] = min(where.get(child.id, spot), spot)
    return lambda name: (where.get(name, (1 << 30, 0)), name)


def _kind(iterable: ast.expr) -> str:
    """``range(...)`` with 1 to 3 plain arguments, ``reversed`` of one, or anything else."""
    if _is_call(iterable, "reversed", 1) and _is_call(iterable.args[0], "range", 3):
        return "reversed_range"
    return "range" if _is_call(iterable, "range", 3) else "each"


def _is_call(node: ast.expr, name: str, most: int) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == name
        and 1 <= len(node.args) <= most
        and not node.keywords
        and not any(isinstance(a, ast.Starred) for a in node.args)
    )


def range_call(node: ast.For) -> ast.Call:
    """The ``range(...)`` call of a loop whose kind is "range" or "reversed_range"."""
    return node.iter.args[0] if node.iter.func.id == "reversed" else node.iter


def _shape_problem(node: ast.For | ast.AsyncFor) -> str:
    if isinstance(node, ast.AsyncFor):
        return "an `async for` loop"
    if node.orelse:
        return "has an `else:` clause"
    if isinstance(node.target, (ast.Tuple, ast.List)):
        return "loop target is a tuple (`for i, x in ...`)"
    if not isinstance(node.target, ast.Name):
        return "loop target is not a plain name (the loop assigns to an attribute or an item)"
    return ""


def _while_problem(node: ast.While) -> str:
    if node.orelse:
        return "has an `else:` clause"
    if any(isinstance(n, ast.NamedExpr) for n in ast.walk(node.test)):
        return "its test assigns a name (`:=`)"
    return ""


def _body_problem(body: list[ast.stmt], where: str) -> str:
    """Why a loop body or the branches of an ``if`` (``where``: "the loop", "a branch") cannot
    run as a function of their own, or ``""``."""
    for node, in_inner_loop in _body_nodes(body):
        if isinstance(node, (ast.Break, ast.Continue)) and not in_inner_loop:
            return f"contains `{type(node).__name__.lower()}`"
        if isinstance(node, ast.Return):
            return f"`return` inside {where}"
        if isinstance(node, (ast.Yield, ast.YieldFrom)):
            return f"`yield` inside {where}"
        if isinstance(node, (ast.Await, ast.AsyncFor, ast.AsyncWith)) or getattr(
            node, "is_async", False
        ):
            return f"`await`, `async for` or `async with` inside {where}"
        if isinstance(node, (ast.Global, ast.Nonlocal)):
            kind = "global" if isinstance(node, ast.Global) else "nonlocal"
            return f"a `{kind}` statement inside {where}"
        if _is_bare_super(node):
            return "calls `super()` without arguments (it needs the method's own frame)"
    return ""


# Methods that change a Python list, dict or set in place (an array's ``sort``: the marker
# lets a change of a traced array through, ``effects``)
CONTAINER_MUTATORS = frozenset(
    {
        "append",
        "reverse",
        "sort",
        "extend",
        "insert",
        "pop",
        "remove",
        "clear",
        "update",
        "setdefault",
        "add",
        "discard",
        "popitem",
    }
)


def calls_on(nodes: list[ast.AST], names: set[str]) -> tuple[tuple[str, str], ...]:
    """The ``(name, method)`` of each call ``name.method(...)`` among ``nodes`` (of a global
    too) other than a container's mutating method on one of ``names`` (those are
    ``effects``), and ``next(name)`` as ``__next__``."""
    found = []
    for node in nodes:
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            if not (func.value.id in names and func.attr in CONTAINER_MUTATORS):
                found.append((func.value.id, func.attr))
        elif (
            isinstance(func, ast.Name)
            and func.id == "next"
            and node.args
            and isinstance(node.args[0], ast.Name)
        ):
            found.append((node.args[0].id, "__next__"))
    return tuple(dict.fromkeys(found))


def _effects(stmts: list[ast.stmt], local: set[str]) -> tuple[str, ...]:
    """The changes ``stmts`` make to Python objects other than arrays (``_python_effect``)."""
    found = (_python_effect(node, local) for node, _ in _body_nodes(stmts))
    return tuple(dict.fromkeys(filter(None, found)))


def mutated_by_call(node: ast.AST) -> ast.expr | None:
    """The object a call of a container's mutating method changes (``out.append(v)``: the
    expression ``out``), or None for any other node."""
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in CONTAINER_MUTATORS
    ):
        return node.func.value
    return None


def _python_effect(node: ast.AST, local: set[str]) -> str:
    """A change the node makes to a Python object other than an array, or ``""``:
    ``out.append(v)``, ``self.count += 1`` (``.real``/``.imag`` are an array's own). A method is
    a container's when called on a local name or its attributes (``np.add`` is a function)."""
    changed = mutated_by_call(node)
    if changed is not None and rooted_at(changed, local):
        return f"calls `.{node.func.attr}(...)` (a change to a Python container)"
    targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
    if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
        for target in targets:
            if isinstance(target, ast.Attribute) and target.attr not in ("real", "imag"):
                return f"assigns the attribute `.{target.attr}`"
    return ""


def rooted_at(node: ast.expr, names: set[str]) -> bool:
    """Whether ``node`` is one of ``names``, or an attribute or item of one (``self.log``)."""
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return isinstance(node, ast.Name) and node.id in names


def _is_bare_super(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "super"
        and not node.args
    )


def _body_nodes(body: list[ast.stmt]):
    """Every node of a loop body (or of branches) outside nested functions and classes, with
    whether it sits in the body of a loop nested in it (where ``break`` and ``continue`` are
    that loop's)."""
    stack = [(stmt, False) for stmt in reversed(body)]
    while stack:
        node, inner = stack.pop()
        yield node, inner
        for name, value in reversed(list(ast.iter_fields(node))):
            in_loop = inner or (isinstance(node, (ast.For, ast.While)) and name == "body")
            children = value if isinstance(value, list) else [value]
            for child in reversed(children):
                if isinstance(child, ast.AST) and not isinstance(child, _SCOPES):
                    stack.append((child, in_loop))


def scope_nodes(stmts: list[ast.stmt]):
    """The nodes of a function's own scope, in source order (nested scopes not entered)."""
    for stmt in stmts:
        yield stmt
        if isinstance(stmt, _SCOPES):
            continue
        for child in ast.iter_child_nodes(stmt):
            if isinstance(child, ast.stmt) and not isinstance(child, _SCOPES):
                yield from scope_nodes([child])
            elif isinstance(child, (ast.excepthandler, ast.match_case)):
                yield from scope_nodes(child.body)
