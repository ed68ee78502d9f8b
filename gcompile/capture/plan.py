"""Which ``for`` loops of one function scope become runtime calls, and what each one carries.

A loop converts when its body can run as a function called once per iteration with the same
effects as the original: a plain name as target, no ``else:``, nothing in the body that jumps
out of it or depends on running in the function's own frame. Its carried names are the
variables whose values flow between iterations or out of the loop (see ``_carried``).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from .liveness import LoopFacts, analyze
from .scopes import Names, function_names, parameter_names, scan

# Builtins that read or write the calling frame's variables by name.
_FRAME_READERS = ("locals", "vars", "dir", "eval", "exec")
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


@dataclass(frozen=True)
class LoopPlan:
    """How to rewrite one loop.

    ``carried``: in and out of every iteration, in this order (the target first when it is
    one of them). ``maybe_unbound``: carried names perhaps unbound when the loop starts (passed
    as UNDEFINED). ``entry_checks``: those of them an iteration may read before assigning, so
    the body unbinds them again when they hold UNDEFINED. ``effects``: changes the body makes
    to Python objects other than arrays (a handler tracing the body once would make them once).
    """

    node: ast.For
    kind: str  # "range", "reversed_range" or "each"
    carried: tuple[str, ...]
    maybe_unbound: tuple[str, ...]
    entry_checks: tuple[str, ...]
    effects: tuple[str, ...] = ()


def plan_scope(function: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[ast.AST, LoopPlan | str]:
    """For every ``for`` statement of ``function``'s own scope: its plan, or why it stays a
    Python loop (a sentence for users)."""
    names = function_names(function)
    loops = [n for n in _scope_nodes(function.body) if isinstance(n, (ast.For, ast.AsyncFor))]
    dynamic = sorted(names.loads & set(_FRAME_READERS))
    if dynamic:
        why = f"the function calls `{dynamic[0]}()`, which would see the loop's helper names"
        return dict.fromkeys(loops, why)
    facts = analyze(function)
    scope = _Scope(function, names)
    return {node: scope.decide(node, facts[node]) for node in loops}


class _Scope:
    """The function-wide facts a loop decision needs."""

    def __init__(self, function: ast.FunctionDef | ast.AsyncFunctionDef, names: Names):
        self.local = names.local | parameter_names(function.args)
        self.declared = {n: "global" for n in names.declared_global}
        self.declared.update({n: "nonlocal" for n in names.declared_nonlocal})
        self.captured = names.escaping & self.local

    def decide(self, node: ast.For | ast.AsyncFor, facts: LoopFacts) -> LoopPlan | str:
        """The loop's plan, or the reason it is left as written."""
        why = _shape_problem(node) or _body_problem(node.body)
        if why:
            return why
        target = node.target.id
        body = scan(node.body)
        assigned = body.stores | body.dels | {target}
        why = self._assignment_problem(assigned, facts)
        if why:
            return why
        carried = _carried(node, target, body, facts, self.local - self.captured)
        deleted = sorted(body.dels & set(carried))
        if deleted:
            return (
                f"deletes `{deleted[0]}` (with `del` or `except ... as {deleted[0]}`), whose "
                "value is used in a later iteration or after the loop"
            )
        maybe_unbound = tuple(n for n in carried if n not in facts.definite)
        checks = tuple(n for n in maybe_unbound if n in facts.body_entry and n != target)
        nodes = (n for n, _ in _body_nodes(node.body))
        effects = tuple(dict.fromkeys(filter(None, (_python_effect(n, self.local) for n in nodes))))
        return LoopPlan(node, _kind(node.iter), carried, maybe_unbound, checks, effects)

    def _assignment_problem(self, assigned: set[str], facts: LoopFacts) -> str:
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
                    "(`try`) or after a `with` block: an exception in the loop must leave "
                    f"`{name}` as the loop left it"
                )
        return ""


def _carried(
    node: ast.For, target: str, body: Names, facts: LoopFacts, plain_locals: set[str]
) -> tuple[str, ...]:
    """Names passed into every iteration and returned from it, in order of first appearance.

    A name assigned in the body is carried when its value may be read before the body assigns
    it (in this iteration or, through the loop head, in the next one) or after the loop. The
    target is carried when read after the loop. A local the body only reads is carried when it
    may be unbound at the loop, so that reading it raises UnboundLocalError as in Python.
    """
    assigned = body.stores | body.dels
    carried = {n for n in assigned if n in facts.body_entry or n in facts.exit}
    if target in facts.exit:
        carried.add(target)
    carried |= (body.reads & plain_locals) - assigned - {target} - facts.definite
    return tuple(sorted(carried, key=_first_use(node, target)))


def _first_use(node: ast.For, target: str):
    """A sort key: the target first, then names by their first mention in the loop."""
    where: dict[str, tuple[int, int]] = {target: (0, 0)}
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


def _body_problem(body: list[ast.stmt]) -> str:
    """Why a loop body cannot run as a function of its own, or ``""``."""
    for node, in_inner_loop in _body_nodes(body):
        if isinstance(node, (ast.Break, ast.Continue)) and not in_inner_loop:
            return f"contains `{type(node).__name__.lower()}`"
        if isinstance(node, ast.Return):
            return "`return` inside the loop"
        if isinstance(node, (ast.Yield, ast.YieldFrom)):
            return "`yield` inside the loop"
        if isinstance(node, (ast.Await, ast.AsyncFor, ast.AsyncWith)) or getattr(
            node, "is_async", False
        ):
            return "`await`, `async for` or `async with` inside the loop"
        if isinstance(node, (ast.Global, ast.Nonlocal)):
            kind = "global" if isinstance(node, ast.Global) else "nonlocal"
            return f"a `{kind}` statement inside the loop"
        if _is_bare_super(node):
            return "calls `super()` without arguments (it needs the method's own frame)"
    return ""


# Methods that change a Python list, dict or set in place (no NumPy array has them)
_CONTAINER_MUTATORS = frozenset(
    {
        "append",
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


def _python_effect(node: ast.AST, local: set[str]) -> str:
    """A change the node makes to a Python object other than an array, or ``""``:
    ``out.append(v)``, ``self.count += 1`` (``.real``/``.imag`` are an array's own). A method is
    a container's when called on a local name or its attributes (``np.add`` is a function)."""
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in _CONTAINER_MUTATORS
        and _rooted_at(node.func.value, local)
    ):
        return f"calls `.{node.func.attr}(...)` (a change to a Python container)"
    targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
    if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
        for target in targets:
            if isinstance(target, ast.Attribute) and target.attr not in ("real", "imag"):
                return f"assigns the attribute `.{target.attr}`"
    return ""


def _rooted_at(node: ast.expr, names: set[str]) -> bool:
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
    """Every node of a loop body outside nested functions and classes, with whether it sits in
    the body of a loop nested in it (where ``break`` and ``continue`` are that loop's)."""
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


def _scope_nodes(stmts: list[ast.stmt]):
    """The nodes of a function's own scope, in source order (nested scopes not entered)."""
    for stmt in stmts:
        yield stmt
        if isinstance(stmt, _SCOPES):
            continue
        for child in ast.iter_child_nodes(stmt):
            if isinstance(child, ast.stmt) and not isinstance(child, _SCOPES):
                yield from _scope_nodes([child])
            elif isinstance(child, (ast.excepthandler, ast.match_case)):
                yield from _scope_nodes(child.body)
