"""The module globals and closure variables a compiled function reads, as a guard: a trace took
their values (a scalar became a constant of the graph, an array a constant it reads), so a call
after one of them was rebound (``dt = 0.4``, ``W = new_array``) must not reuse it.

``GlobalsGuard.of(fn)`` finds the names ``fn``'s code (and the code nested in it) loads as
globals, and its closure's variables, whose values are data: numbers, NumPy scalars, arrays,
strings and tuples of them, and lookup tables (``capture.tables``: lists and tuples of
numbers, a list guarded by its items). Not guarded: the globals of other functions it calls, and values
read through containers or objects (``CFG["k"]``, ``self.scale``). ``holds()`` is True while each is still the same object or an equal
value of the same type (an array: the same object; its contents may change, as the README
says). Modules, functions and other objects are not guarded.
"""

from __future__ import annotations

import types
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from .capture import is_table, loaded_globals

_SCALARS = (bool, int, float, complex, str, np.generic)


@dataclass(frozen=True)
class GlobalsGuard:
    """The data values a trace read from outside the arguments (see the module docstring)."""

    namespace: dict  # the function's module globals
    names: tuple  # the global names read, with ``values``
    values: tuple
    cells: tuple  # closure cells read, with ``contents``
    contents: tuple

    @staticmethod
    def of(fn: Callable) -> GlobalsGuard | None:
        """The guard of ``fn``'s data globals and closure variables, or None if it reads none."""
        fn = getattr(fn, "__func__", fn)
        code = getattr(fn, "__code__", None)
        if code is None:
            return None
        namespace = fn.__globals__
        names = tuple(n for n in sorted(loaded_globals(code)) if _data(namespace.get(n, _MISSING)))
        cells = tuple(
            cell for cell in (fn.__closure__ or ()) if _bound(cell) and _data(cell.cell_contents)
        )
        if not names and not cells:
            return None
        values = tuple(_traced(namespace[n]) for n in names)
        contents = tuple(_traced(c.cell_contents) for c in cells)
        return GlobalsGuard(namespace, names, values, cells, contents)

    def holds(self) -> bool:
        """Whether every guarded global and closure variable still has its traced value."""
        namespace = self.namespace
        for name, value in zip(self.names, self.values):
            if not _same(namespace.get(name, _MISSING), value):
                return False
        for cell, value in zip(self.cells, self.contents):
            if not _bound(cell) or not _same(cell.cell_contents, value):
                return False
        return True

    def describe(self) -> list[str]:
        """One line per guarded value (for ``explain()``)."""
        lines = [
            f"global {name} is {_short(value)}" for name, value in zip(self.names, self.values)
        ]
        return lines + [f"a closure variable is {_short(value)}" for value in self.contents]


_MISSING = object()


@dataclass(frozen=True)
class _ListContents:
    """A list's items when traced (a lookup table the trace read as a constant): the list may
    change in place, so its guard compares them, not the object."""

    items: list  # (a copy: compared with ==, which takes a NaN as itself)


def _data(value: Any) -> bool:
    if isinstance(value, (_SCALARS, np.ndarray)) or is_table(value):
        return True
    return type(value) is tuple and len(value) <= 16 and all(_data(v) for v in value)


def _traced(value: Any) -> Any:
    """What the guard keeps of a value the trace read: a list's items, else the value."""
    return _ListContents(list(value)) if type(value) is list else value


def _bound(cell: types.CellType) -> bool:
    try:
        cell.cell_contents  # noqa: B018 - (reading an empty cell raises)
    except ValueError:  # (the variable is not bound yet)
        return False
    return True


def _same(current: Any, traced: Any) -> bool:
    if current is traced:
        return True
    if type(traced) is _ListContents:
        return type(current) is list and current == traced.items
    if type(current) is not type(traced) or isinstance(traced, np.ndarray):
        return False
    if type(traced) is tuple:
        return len(current) == len(traced) and all(map(_same, current, traced))
    equal = bool(current == traced)
    return equal or (
        isinstance(traced, (float, complex, np.inexact))
        and bool(np.isnan(traced))
        and bool(np.isnan(current))
    )


def _short(value: Any) -> str:
    if type(value) is _ListContents:
        return f"a list of {len(value.items)} numbers, {repr(list(value.items[:4]))[:-1]}, ...]"
    if isinstance(value, np.ndarray):
        return f"the array {value.dtype}{list(value.shape)} at {hex(id(value))}"
    return repr(value)[:60]
