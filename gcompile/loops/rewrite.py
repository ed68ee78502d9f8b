"""What the rewrites share: their context, the walk to each phase's loop nest, generic maps.

A rewrite is a function ``(Kernel, Context) -> Kernel`` whose docstring shows ``before =>
after`` in loop IR text (``printer``). A backend applies a flat named list of them with
``apply_rewrites``, in order; each may only rely on the rewrites before it.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Callable

from .nodes import Accumulate, If, Init, Kernel, Loop, Unsupported
from .verify import verify

NEST_KINDS = ("reduce", "block")  # loops of a phase's nest


@dataclass
class Context:
    """What the rewrites know beyond the kernel: whether it is big enough to run in parallel
    (a loop program: whether its loops may, from ``parallel_threshold`` elements of work), and
    the backend's ``range_limits(node)``: ``(float32 limit, float64 limit)`` of a fast path
    that holds only for ``|x| <= limit`` (sin, cos...), or None."""

    parallel: bool = False
    parallel_threshold: int = 0
    range_limits: Callable[[Any], tuple | None] = field(default=lambda node: None)


Rewrite = Callable[[Kernel, Context], Kernel]


def apply_rewrites(kernel: Kernel, ctx: Context, rewrites: list[tuple[str, Rewrite]]) -> Kernel:
    """``kernel`` after each ``(name, rewrite)`` of ``rewrites`` in turn, verified before the
    first and after the last (``verify``); an error names the rewrite it came from."""
    verify(kernel)
    for name, rewrite in rewrites:
        try:
            kernel = rewrite(kernel, ctx)
        except Unsupported:
            raise
        except Exception as error:
            note = getattr(error, "add_note", None)
            if note is not None:
                note(f"while running the loop rewrite {name!r} on kernel {kernel.name}")
            raise
    verify(kernel)
    return kernel


def map_nests(stmts: tuple, fn: Callable) -> tuple:
    """``stmts`` with every phase loop nest (a loop of a kind in ``NEST_KINDS`` that is not inside
    another) replaced: ``fn(before, nest, after) -> (before, replacement, after)`` gets the
    statements before it in its list (already mapped; it may edit them), the nest, and those
    after it (not yet mapped)."""
    out: list = []
    rest = list(stmts)
    while rest:
        stmt = rest.pop(0)
        if isinstance(stmt, Loop) and stmt.kind in NEST_KINDS:
            out, replacement, rest = fn(out, stmt, rest)
            out = list(out) + list(replacement)
            rest = list(rest)
        elif isinstance(stmt, Loop):
            out.append(dataclasses.replace(stmt, body=map_nests(stmt.body, fn)))
        elif isinstance(stmt, If):
            body, orelse = map_nests(stmt.body, fn), map_nests(stmt.orelse, fn)
            out.append(dataclasses.replace(stmt, body=body, orelse=orelse))
        else:
            out.append(stmt)
    return tuple(out)


def with_innermost(nest: Loop, fn: Callable[[Loop], Loop]) -> Loop:
    """``nest`` with its innermost loop ``inner`` replaced by ``fn(inner)`` (a loop of a reduced
    axis, or the block loop around it once strip-mined)."""
    if len(nest.body) == 1 and isinstance(nest.body[0], Loop) and nest.kind == "reduce":
        return dataclasses.replace(nest, body=(with_innermost(nest.body[0], fn),))
    return fn(nest)


def accumulators_in(stmts: tuple) -> list:
    """The accumulators ``Accumulate`` statements of ``stmts`` (not in nested loops) feed."""
    found: dict = {}
    for stmt in stmts:
        if isinstance(stmt, Accumulate):
            found.setdefault(stmt.acc)
        elif isinstance(stmt, If):
            for acc in accumulators_in(stmt.body + stmt.orelse):
                found.setdefault(acc)
    return list(found)


def init_order(kernel: Kernel) -> dict:
    """Each accumulator's position among the ``Init`` statements: the order of a phase's
    accumulators (its reductions', then the mean passes of var/std)."""
    order: dict = {}

    def visit(stmts):
        for stmt in stmts:
            if isinstance(stmt, Init) and stmt.part == "acc":
                order.setdefault(stmt.acc, len(order))
            elif isinstance(stmt, Loop):
                visit(stmt.body)
            elif isinstance(stmt, If):
                visit(stmt.body + stmt.orelse)

    visit(kernel.body)
    return order


def insert_after_inits(stmts: tuple, extra: dict) -> tuple:
    """``stmts`` with ``extra[acc]`` (a list of statements) right after each ``Init(acc)``."""
    out: list = []
    for stmt in stmts:
        if isinstance(stmt, Loop):
            stmt = dataclasses.replace(stmt, body=insert_after_inits(stmt.body, extra))
        out.append(stmt)
        if isinstance(stmt, Init) and stmt.part == "acc":
            out += extra.get(stmt.acc, [])
    return tuple(out)


def mentions(value: Any, target: Any) -> bool:
    """Whether ``target`` (a node of the loop IR) occurs anywhere inside ``value``."""
    if type(value) is type(target) and value == target:
        return True
    if isinstance(value, tuple):
        return any(mentions(v, target) for v in value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return any(
            mentions(getattr(value, f.name), target)
            for f in dataclasses.fields(value)
            if f.name not in ("node", "op", "site", "acc")
        )
    return False


def map_exprs(value: Any, fn: Callable[[Any], Any]) -> Any:
    """``value`` rebuilt bottom-up with ``fn`` applied to every loop IR node inside it."""
    if isinstance(value, tuple):
        items = tuple(map_exprs(v, fn) for v in value)
        return value if all(a is b for a, b in zip(items, value)) else items
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        changes = {}
        for f in dataclasses.fields(value):
            if f.name in ("node", "op", "site", "acc"):
                continue
            old = getattr(value, f.name)
            new = map_exprs(old, fn)
            if new is not old:
                changes[f.name] = new
        if changes:
            value = dataclasses.replace(value, **changes)
        return fn(value)
    return value
