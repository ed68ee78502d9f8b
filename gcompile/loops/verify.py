"""Lint of a loop IR kernel: every variable is set before it is read, and every accumulator is
started before it accumulates. ``apply_rewrites`` checks the kernel before the first rewrite and
after the last; the error holds the kernel's text."""

from __future__ import annotations

import dataclasses

from .nodes import (
    Accumulate,
    Alloc,
    Assign,
    CallKernel,
    Comment,
    If,
    Init,
    Kernel,
    Let,
    Loop,
    ObjectMode,
    Tuple,
    Update,
    Var,
    While,
)
from .printer import format_kernel

_SKIPPED = ("node", "op", "site", "acc")  # fields that hold no variable of the loop IR


class LoopIRError(Exception):
    """A loop IR kernel that breaks a rule of ``verify``."""


def verify(kernel: Kernel) -> None:
    """Raise ``LoopIRError`` (with the kernel's text) if ``kernel`` reads a variable no earlier
    statement sets, in the order the statements run."""
    problems: list = []
    defined = {param.var for param in kernel.params}
    _check(kernel.entry + kernel.body, defined, problems)
    if problems:
        raise LoopIRError("\n".join(problems[:5]) + "\n" + format_kernel(kernel))


def _check(stmts: tuple, defined: set, problems: list) -> None:
    for stmt in stmts:
        if isinstance(stmt, Comment):
            continue
        if isinstance(stmt, Loop):
            _reads((stmt.start, stmt.stop), defined, problems, stmt)
            defined.add(stmt.var)
            _check(stmt.body, defined, problems)
            _reads(stmt.carried, defined, problems, stmt)
        elif isinstance(stmt, Assign) and isinstance(stmt.target, Tuple):  # unpacking
            _reads(stmt.value, defined, problems, stmt)
            defined.update(stmt.target.items)
        elif isinstance(stmt, ObjectMode):
            _check(stmt.body, defined, problems)
            defined.update(var for var, _ in stmt.outputs)
        elif isinstance(stmt, CallKernel):  # (its function is a global of the module)
            _reads(stmt.arguments, defined, problems, stmt)
        elif isinstance(stmt, While):
            _check(stmt.test, defined, problems)
            _reads(stmt.cond, defined, problems, stmt)
            _check(stmt.body, defined, problems)
            _reads(stmt.carried, defined, problems, stmt)
        elif isinstance(stmt, If):
            _reads(stmt.cond, defined, problems, stmt)
            _check(stmt.body, defined, problems)
            _check(stmt.orelse, defined, problems)
        elif isinstance(stmt, Init):
            parts = ("best", "at") if stmt.acc.kind == "arg" else (stmt.part,)
            defined.update(stmt.acc.var(part) for part in parts)
        elif isinstance(stmt, Accumulate):
            _reads((stmt.value, stmt.index), defined, problems, stmt)
            parts = ("best", "at") if stmt.acc.kind == "arg" else (stmt.part,)
            _reads(tuple(stmt.acc.var(part) for part in parts), defined, problems, stmt)
        elif isinstance(stmt, (Let, Alloc)):
            _reads(stmt, defined, problems, stmt, skip=("var",))
            defined.add(stmt.var)
        elif isinstance(stmt, Update):
            _reads((stmt.var, stmt.value), defined, problems, stmt)
        else:
            _reads(stmt, defined, problems, stmt)


def _reads(value, defined: set, problems: list, stmt, skip: tuple = ()) -> None:
    """Record a problem for every variable inside ``value`` that is not in ``defined``."""
    if isinstance(value, Var):
        if value not in defined:
            problems.append(f"{_name(value)} is read before it is set, in {stmt!r}"[:300])
    elif isinstance(value, tuple):
        for item in value:
            _reads(item, defined, problems, stmt)
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        for field in dataclasses.fields(value):
            if field.name not in _SKIPPED + skip:
                _reads(getattr(value, field.name), defined, problems, stmt)


def _name(var: Var) -> str:
    return var.name + (var.node.name if var.node is not None else "") + var.suffix
