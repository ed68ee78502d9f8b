"""``break`` and ``continue`` in ``for`` loops, made branches and a flag, so that the loop stays
one loop (its test on data a ``cond``)::

    for i in range(n):                  __gc_break_0 = False
        if x[i] < 0:                    for __gc_index_0 in range(n):
            break                           if not __gc_break_0:
        if x[i] == 0:            =>             i = __gc_index_0
            continue                            if x[i] < 0:
        s += x[i]                                   __gc_break_0 = True
                                                else:
                                                    if x[i] == 0:
                                                        pass
                                                    else:
                                                        s += x[i]

The statements after an ``if`` with a branch that ends in ``break`` or ``continue`` move into
its other branch (``returns.merge_tails``); then a ``continue`` that ends a branch is dropped
and a ``break`` sets the flag, and the trips after it do nothing: the loop variable keeps the
value of the trip that broke, as in Python. A loop's ``else:`` moves after it first
(``lift_loop_else``). A loop whose exits are not all at the ends of branches (one inside a
``try`` or ``with``) stays as written.
"""

from __future__ import annotations

import ast

from .iterables import own_loops
from .returns import merge_tails

BREAK = "__gc_break_"
INDEX = "__gc_index_"
ELSE = "__gc_unbroken_"  # (``__gc_else_`` names the branch functions)
_EXITS = (ast.Break, ast.Continue)
_NESTED = (
    ast.For,
    ast.AsyncFor,
    ast.While,
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.Lambda,
    ast.ClassDef,
)


def lift_loop_else(function: ast.FunctionDef) -> None:
    """The ``else:`` of each ``for`` loop of ``function``'s own scope moved after the loop, run
    unless the loop broke (a flag each ``break`` clears first), so that the loop can be taken::

        for i in range(n):               __gc_unbroken_0 = True
            if x[i] == t:                for i in range(n):
                break              =>        if x[i] == t:
        else:                                    __gc_unbroken_0 = False
            i = -1                               break
                                         if __gc_unbroken_0:
                                             i = -1
    """
    count = 0
    for loop, block in _loops_with_else(function.body):
        at = block.index(loop)
        orelse, loop.orelse = loop.orelse, []
        if not any(isinstance(e, ast.Break) for e in loop_exits(loop.body)):
            block[at + 1 : at + 1] = orelse  # (no break: the else always runs)
            continue
        flag = f"{ELSE}{count}"
        count += 1
        _clear_before_breaks(loop.body, flag)
        start = ast.Assign([ast.Name(flag, ast.Store())], ast.Constant(True))
        after = ast.If(ast.Name(flag, ast.Load()), orelse, [])
        block[at : at + 1] = [ast.copy_location(start, loop), loop, ast.copy_location(after, loop)]
        for made in (start, loop, after):
            ast.fix_missing_locations(made)


def _loops_with_else(stmts: list[ast.stmt]):
    """``(loop, block holding it)`` for each ``for`` loop with an ``else:`` of a block and the
    blocks nested in it (not of nested functions or classes), innermost last."""
    for stmt in list(stmts):
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        if isinstance(stmt, ast.For) and stmt.orelse:
            yield stmt, stmts
        for name in ("body", "orelse", "finalbody"):
            yield from _loops_with_else(getattr(stmt, name, None) or [])
        for part in getattr(stmt, "handlers", []) + getattr(stmt, "cases", []):
            yield from _loops_with_else(part.body)


def _clear_before_breaks(stmts: list[ast.stmt], flag: str) -> None:
    """``flag = False`` before each ``break`` of the loop body ``stmts`` (not of nested loops)."""
    for position in range(len(stmts) - 1, -1, -1):
        stmt = stmts[position]
        if isinstance(stmt, ast.Break):
            clear = ast.Assign([ast.Name(flag, ast.Store())], ast.Constant(False))
            stmts.insert(position, ast.fix_missing_locations(ast.copy_location(clear, stmt)))
        elif not isinstance(stmt, _NESTED):
            for name in ("body", "orelse", "finalbody"):
                _clear_before_breaks(getattr(stmt, name, None) or [], flag)
            for part in getattr(stmt, "handlers", []) + getattr(stmt, "cases", []):
                _clear_before_breaks(part.body, flag)


def desugar_exits(function: ast.FunctionDef) -> None:
    """Rewrite the ``for`` and ``while`` loops of ``function``'s own scope that ``break`` or
    ``continue`` (a ``while`` loop: its test ``not flag and (test)``, the trips after a break
    not run at all)."""
    count = 0
    for loops in (own_loops(function.body, with_blocks=True), _whiles(function.body)):
        for loop, block in loops:  # (lazy: a loop is rewritten before the blocks it holds)
            if not loop_exits(loop.body):
                continue
            body = merge_tails(loop.body, _ends_in_exit)
            if loop_exits(body) != _tail_exits(body):
                continue
            breaking = _breaking_if(body)
            breaks = any(isinstance(e, ast.Break) for e in loop_exits(body))
            loop.body = _replace_tails(body, f"{BREAK}{count}")
            if breaks and isinstance(loop, ast.For):
                _guard(loop, block, count, breaking)
                count += 1
            elif breaks:
                _guard_while(loop, block, count)
                count += 1


def _whiles(stmts: list[ast.stmt]):
    """``(loop, block holding it)`` for each ``while`` loop (no ``else:``) of a block and the
    blocks nested in it, not of nested functions or classes."""
    for stmt in list(stmts):
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        if isinstance(stmt, ast.While) and not stmt.orelse:
            yield stmt, stmts
        for name in ("body", "orelse", "finalbody"):
            yield from _whiles(getattr(stmt, name, None) or [])
        for part in getattr(stmt, "handlers", []) + getattr(stmt, "cases", []):
            yield from _whiles(part.body)


def _guard_while(loop: ast.While, block: list[ast.stmt], number: int) -> None:
    """The loop's test made ``not flag and (test)``, the flag set to False before it."""
    flag = f"{BREAK}{number}"
    unbroken = ast.UnaryOp(ast.Not(), ast.Name(flag, ast.Load()))
    loop.test = ast.copy_location(ast.BoolOp(ast.And(), [unbroken, loop.test]), loop.test)
    start = ast.Assign([ast.Name(flag, ast.Store())], ast.Constant(False))
    block.insert(block.index(loop), start)
    ast.fix_missing_locations(loop)
    ast.fix_missing_locations(ast.copy_location(start, loop))


def _guard(loop: ast.For, block: list[ast.stmt], number: int, breaking: ast.If | None) -> None:
    """The loop's body run only while its flag is unset, the target assigned there; the flag
    set to False before the loop in ``block``. The test of the flag is placed where
    ``breaking`` (the ``if`` that breaks) is: a flag set on data is that decision, and a
    refusal of it names the ``if``'s line, not the body's last."""
    flag, index = f"{BREAK}{number}", f"{INDEX}{number}"
    assign = ast.Assign([loop.target], ast.Name(index, ast.Load()))
    test = ast.UnaryOp(ast.Not(), ast.Name(flag, ast.Load()))
    guard = ast.If(test, [assign, *loop.body], [])
    if breaking is not None:
        for node in (guard, test, test.operand):
            node.lineno, node.col_offset = breaking.lineno, breaking.col_offset
            node.end_lineno = breaking.test.end_lineno
            node.end_col_offset = breaking.test.end_col_offset
    loop.body = [guard]
    loop.target = ast.Name(index, ast.Store())
    start = ast.Assign([ast.Name(flag, ast.Store())], ast.Constant(False))
    block.insert(block.index(loop), start)
    ast.fix_missing_locations(loop)  # (the new nodes in it take the loop's line)
    ast.fix_missing_locations(ast.copy_location(start, loop))


def _breaking_if(block: list[ast.stmt]) -> ast.If | None:
    """The ``if`` statement one of whose branches ends in the first tail ``break`` of
    ``block`` (see ``_tail_exits``), or None."""
    last = block[-1] if block else None
    if not isinstance(last, ast.If):
        return None
    for branch in (last.body, last.orelse):
        if branch and isinstance(branch[-1], ast.Break):
            return last
        found = _breaking_if(branch)
        if found is not None:
            return found
    return None


def loop_exits(stmts: list[ast.stmt]) -> list[ast.stmt]:
    """The ``break`` and ``continue`` statements of the loop body ``stmts`` (not of loops or
    functions nested in it)."""
    found = []
    for stmt in stmts:
        if isinstance(stmt, _EXITS):
            found.append(stmt)
        elif not isinstance(stmt, _NESTED):
            for child in ast.iter_child_nodes(stmt):
                if isinstance(child, ast.stmt):
                    found += loop_exits([child])
                elif isinstance(child, (ast.excepthandler, ast.match_case)):
                    found += loop_exits(child.body)
    return found


def _ends_in_exit(block: list[ast.stmt]) -> bool:
    if not block:
        return False
    last = block[-1]
    if isinstance(last, _EXITS):
        return True
    return isinstance(last, ast.If) and _ends_in_exit(last.body) and _ends_in_exit(last.orelse)


def _tail_exits(block: list[ast.stmt]) -> list[ast.stmt]:
    """The exits that end ``block``, or the branches of the ``if`` statement that ends it
    (nested ones too): an exit anywhere else is not at a tail."""
    if not block:
        return []
    last = block[-1]
    if isinstance(last, _EXITS):
        return [last]
    if isinstance(last, ast.If):
        return _tail_exits(last.body) + _tail_exits(last.orelse)
    return []


def _replace_tails(block: list[ast.stmt], flag: str) -> list[ast.stmt]:
    """``block`` with each tail ``continue`` dropped and each tail ``break`` setting ``flag``."""
    out = []
    for stmt in block:
        if isinstance(stmt, ast.If):
            stmt.body = _replace_tails(stmt.body, flag) or [ast.copy_location(ast.Pass(), stmt)]
            stmt.orelse = _replace_tails(stmt.orelse, flag)
        if isinstance(stmt, ast.Continue):
            continue
        if isinstance(stmt, ast.Break):
            stmt = ast.copy_location(
                ast.Assign([ast.Name(flag, ast.Store())], ast.Constant(True)), stmt
            )
        out.append(stmt)
    return out
