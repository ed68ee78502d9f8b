"""Data flow over one function's structured statements, for every ``for`` and ``if`` in it.

Two analyses on the AST of a single scope (nested functions are other scopes):

- liveness, backward: a name is live at a point when its current value may be read later.
  Loops are fixpoints; ``break``/``continue`` jump to the loop's exit and head; an exception
  may leave any statement for the handlers of an enclosing ``try``, its ``finally``, or the
  code after a ``with`` (whose context manager may suppress it). ``match`` and the bindings of
  walrus, ``except ... as`` and pattern captures never end a name's liveness (conservative).
- definite assignment, forward: the names certainly bound before each loop and ``if``
  (parameters, plain assignments on every path), never counting a walrus or a binding inside
  ``try``.

More names live, or fewer certainly bound, is always the safe side.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from .scopes import definite_binds, parameter_names, scan, target_names

_LOOPS = (ast.For, ast.AsyncFor, ast.While)


@dataclass(frozen=True)
class Facts:
    """What the analyses know about one ``for`` or ``if`` statement, whose "body" is a loop's
    body or both branches of an ``if``.

    ``body_entry``: for a loop, the names live at the start of its body once the target is
    bound; for an ``if``, those a branch may read before binding them. ``exit``: live after the
    statement. ``exc``: live where this function may resume after an exception in the body.
    ``definite``: certainly bound when the statement starts (before an ``if``'s test).
    """

    body_entry: frozenset[str]
    exit: frozenset[str]
    exc: frozenset[str]
    definite: frozenset[str]


@dataclass(frozen=True)
class _Jumps:
    brk: frozenset[str] = frozenset()
    cont: frozenset[str] = frozenset()
    exc: frozenset[str] = frozenset()


def analyze(function: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[ast.AST, Facts]:
    """The facts of every ``for`` and ``if`` statement of ``function``'s own scope, keyed by
    its node."""
    live = _Liveness()
    live.block(function.body, frozenset(), _Jumps())
    bound = _Definite()
    bound.block(function.body, frozenset(parameter_names(function.args)))
    return {
        node: Facts(entry, exit, exc, bound.before[node])
        for node, (entry, exit, exc) in live.blocks.items()
    }


class _Liveness:
    """Backward liveness; ``blocks`` holds each ``for``'s and ``if``'s sets from the final
    (fixpoint) pass."""

    def __init__(self):
        self.blocks: dict[ast.AST, tuple[frozenset, frozenset, frozenset]] = {}

    def block(self, stmts: list[ast.stmt], out: frozenset, jumps: _Jumps) -> frozenset:
        """Names live before ``stmts`` given those live after them."""
        for stmt in reversed(stmts):
            out = self.stmt(stmt, out, jumps) | jumps.exc
        return out

    def stmt(self, stmt: ast.stmt, out: frozenset, jumps: _Jumps) -> frozenset:
        """Names live before one statement."""
        if isinstance(stmt, (ast.For, ast.AsyncFor)):
            return self._for(stmt, out, jumps)
        if isinstance(stmt, ast.While):
            return self._while(stmt, out, jumps)
        if isinstance(stmt, ast.If):
            branches = self.block(stmt.body, out, jumps) | self.block(stmt.orelse, out, jumps)
            self.blocks[stmt] = (_read_first(stmt), out, jumps.exc)
            return _reads(stmt.test) | branches
        if isinstance(stmt, (ast.With, ast.AsyncWith)):
            return self._with(stmt, out, jumps)
        if isinstance(stmt, (ast.Try, getattr(ast, "TryStar", ast.Try))):
            return self._try(stmt, out, jumps)
        if isinstance(stmt, ast.Match):
            cases = frozenset().union(*(self._case(c, out, jumps) for c in stmt.cases))
            return _reads(stmt.subject) | cases | out
        if isinstance(stmt, ast.Break):
            return jumps.brk
        if isinstance(stmt, ast.Continue):
            return jumps.cont
        if isinstance(stmt, (ast.Return, ast.Raise)):
            return _reads(stmt)
        return (out - definite_binds(stmt)) | _reads(stmt)

    def _for(self, stmt: ast.For | ast.AsyncFor, out: frozenset, jumps: _Jumps) -> frozenset:
        exit = self.block(stmt.orelse, out, jumps)
        bound, target_reads = target_names(stmt.target), _reads(stmt.target)
        head = exit
        while True:
            inner = _Jumps(out, head, jumps.exc)
            entry = self.block(stmt.body, head, inner)
            new_head = exit | (entry - bound) | target_reads | jumps.exc
            if new_head == head:
                break
            head = new_head
        self.blocks[stmt] = (entry, out, jumps.exc)
        return _reads(stmt.iter) | head

    def _while(self, stmt: ast.While, out: frozenset, jumps: _Jumps) -> frozenset:
        exit = self.block(stmt.orelse, out, jumps)
        head = exit | _reads(stmt.test)
        while True:
            entry = self.block(stmt.body, head, _Jumps(out, head, jumps.exc))
            new_head = head | entry
            if new_head == head:
                # (what the test reads is read on entering each trip, as the body's first reads)
                self.blocks[stmt] = (entry | _reads(stmt.test), out, jumps.exc)
                return head
            head = new_head

    def _with(self, stmt: ast.With | ast.AsyncWith, out: frozenset, jumps: _Jumps) -> frozenset:
        # The context manager may suppress an exception: execution then continues after it.
        body = self.block(stmt.body, out, _Jumps(jumps.brk, jumps.cont, jumps.exc | out))
        bound = set().union(*(target_names(i.optional_vars) for i in stmt.items if i.optional_vars))
        heads = frozenset().union(*(_reads(i) for i in stmt.items))
        return heads | (body - bound) | out

    def _try(self, stmt: ast.Try, out: frozenset, jumps: _Jumps) -> frozenset:
        if stmt.finalbody:
            # finally runs on every way out; what is live on any of them is live after it.
            after = self.block(stmt.finalbody, out | jumps.brk | jumps.cont | jumps.exc, jumps)
            jumps = _Jumps(jumps.brk | after, jumps.cont | after, jumps.exc | after)
            out = after
        handlers = frozenset().union(*(self._handler(h, out, jumps) for h in stmt.handlers))
        orelse = self.block(stmt.orelse, out, jumps)
        body_jumps = _Jumps(jumps.brk, jumps.cont, jumps.exc | handlers)
        return self.block(stmt.body, orelse, body_jumps) | handlers | jumps.exc

    def _handler(self, handler: ast.ExceptHandler, out: frozenset, jumps: _Jumps) -> frozenset:
        kind = _reads(handler.type) if handler.type is not None else frozenset()
        return kind | self.block(handler.body, out, jumps)

    def _case(self, case: ast.match_case, out: frozenset, jumps: _Jumps) -> frozenset:
        guard = _reads(case.guard) if case.guard is not None else frozenset()
        return _reads(case.pattern) | guard | self.block(case.body, out, jumps)


class _Definite:
    """Forward definite assignment; ``before`` holds the certainly bound names at each ``for``
    and ``if``. ``None`` stands for an unreachable point (after ``return``, ``raise``,
    ``break``, ...)."""

    def __init__(self):
        self.before: dict[ast.AST, frozenset[str]] = {}
        self._breaks: list[list] = []  # per enclosing loop: the names bound at its breaks

    def block(self, stmts: list[ast.stmt], bound: frozenset | None) -> frozenset | None:
        """Names certainly bound after ``stmts`` given those bound before."""
        for stmt in stmts:
            bound = self.stmt(stmt, bound)
        return bound

    def stmt(self, stmt: ast.stmt, bound: frozenset | None) -> frozenset | None:
        """Names certainly bound after one statement."""
        if isinstance(stmt, ast.Break) and self._breaks and bound is not None:
            self._breaks[-1].append(bound)
        if isinstance(stmt, (ast.Return, ast.Raise, ast.Break, ast.Continue)):
            return None
        known = bound if bound is not None else frozenset()  # dead code: assume nothing
        if isinstance(stmt, ast.If):
            self.before[stmt] = known
            return _meet(self.block(stmt.body, bound), self.block(stmt.orelse, bound))
        if isinstance(stmt, (ast.With, ast.AsyncWith)):
            bound_vars = (target_names(i.optional_vars) for i in stmt.items if i.optional_vars)
            entered = known | frozenset().union(*bound_vars)
            self.block(stmt.body, entered)  # the manager may suppress an exception midway
            return entered - scan(stmt.body).dels
        if isinstance(stmt, (ast.For, ast.AsyncFor, ast.While)):
            self.before[stmt] = known
        if isinstance(stmt, _LOOPS) or _is_compound(stmt):
            return self._compound(stmt, known)
        if isinstance(stmt, ast.Delete):
            return known - scan([stmt]).dels
        return known | definite_binds(stmt)

    def _compound(self, stmt: ast.stmt, known: frozenset) -> frozenset | None:
        """Loops, ``try`` and ``match``: each part is entered with what is bound before the
        statement less what any part may delete; nothing is added after it, except after a
        ``while True:`` without ``else``, left only by its breaks: what each of them has bound
        (None, unreachable, when it has none)."""
        deleted = scan([stmt]).dels
        kept = known - deleted
        parts = _parts(stmt)
        breaks = []
        if isinstance(stmt, _LOOPS):  # (a break in its else, a try or a match: another's)
            self._breaks.append(breaks)
            body, extra = parts.pop(0)
            self.block(body, kept | extra)
            self._breaks.pop()
        for part, extra in parts:
            self.block(part, kept | extra)
        if not _forever(stmt):
            return kept
        after = None
        for bound in breaks:  # (less what the loop deletes: a finally may, after a break)
            after = _meet(after, bound - deleted)
        return after


def _parts(stmt: ast.stmt) -> list[tuple[list[ast.stmt], frozenset]]:
    """The statement lists of a loop, ``try`` or ``match``, each with the names bound on
    entering it (a ``for`` body has its target)."""
    if isinstance(stmt, (ast.For, ast.AsyncFor)):
        return [(stmt.body, frozenset(target_names(stmt.target))), (stmt.orelse, frozenset())]
    if isinstance(stmt, ast.While):
        return [(stmt.body, frozenset()), (stmt.orelse, frozenset())]
    if isinstance(stmt, ast.Match):
        return [(case.body, frozenset()) for case in stmt.cases]
    lists = [stmt.body, stmt.orelse, stmt.finalbody] + [h.body for h in stmt.handlers]
    return [(part, frozenset()) for part in lists]


def _forever(stmt: ast.stmt) -> bool:
    """Whether ``stmt`` is a ``while`` on a true constant (``while True:``, ``while 1:``)
    without ``else``: left by a ``break`` (or a return or raise) only."""
    test = getattr(stmt, "test", None)
    return (
        isinstance(stmt, ast.While)
        and isinstance(test, ast.Constant)
        and bool(test.value)
        and not stmt.orelse
    )


def _is_compound(stmt: ast.stmt) -> bool:
    return isinstance(stmt, (ast.Try, getattr(ast, "TryStar", ast.Try), ast.Match))


def _meet(a: frozenset | None, b: frozenset | None) -> frozenset | None:
    if a is None:
        return b
    if b is None:
        return a
    return a & b


def _read_first(stmt: ast.If) -> frozenset[str]:
    """Names a branch of ``stmt`` may read before it binds them (whatever follows the ``if``)."""
    alone = _Liveness()  # its facts on nested statements are not the function's
    branches = (alone.block(branch, frozenset(), _Jumps()) for branch in (stmt.body, stmt.orelse))
    return frozenset().union(*branches)


def _reads(node: ast.AST) -> frozenset[str]:
    return frozenset(scan([node]).reads)
