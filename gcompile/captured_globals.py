"""The module globals and closure variables a compiled function reads, as a guard: a trace took
their values (a scalar became a constant of the graph, an array a constant it reads), so a call
after one of them was rebound (``dt = 0.4``, ``W = new_array``) must not reuse it.

``GlobalsGuard.of(fn)`` finds the names ``fn``'s code (and the code nested in it) loads as
globals, and its closure's variables, whose values are data: numbers, NumPy scalars, arrays,
strings and tuples of them. Not guarded: the globals of other functions it calls, and values
read through containers or objects (``CFG["k"]``, ``self.scale``). ``holds()`` is True while each is still the same object or an equal
value of the same type (an array: the same object; its contents may change, as the README
says). Modules, functions and other objects are not guarded.
"""

from __future__ import annotations

import dis
import types
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

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
        names = tuple(n for n in sorted(_loaded_names(code)) if _data(namespace.get(n, _MISSING)))
        cells = tuple(
            cell for cell in (fn.__closure__ or ()) if _bound(cell) and _data(cell.cell_contents)
        )
        if not names and not cells:
            return None
        values = tuple(namespace[n] for n in names)
        return GlobalsGuard(namespace, names, values, cells, tuple(c.cell_contents for c in cells))

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
_GLOBAL_LOADS = ("LOAD_GLOBAL", "LOAD_NAME")


def _loaded_names(code: types.CodeType) -> set:
    """The names ``code`` and the code objects nested in it load as globals (not the
    attribute names ``co_names`` also holds: ``x.size`` is no global ``size``)."""
    names = {i.argval for i in dis.get_instructions(code) if i.opname in _GLOBAL_LOADS}
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _loaded_names(const)
    return names


def _data(value: Any) -> bool:
    if isinstance(value, (_SCALARS, np.ndarray)):
        return True
    return type(value) is tuple and len(value) <= 16 and all(_data(v) for v in value)


def _bound(cell: types.CellType) -> bool:
    try:
        cell.cell_contents  # noqa: B018 - (reading an empty cell raises)
    except ValueError:  # (the variable is not bound yet)
        return False
    return True


def _same(current: Any, traced: Any) -> bool:
    if current is traced:
        return True
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
    if isinstance(value, np.ndarray):
        return f"the array {value.dtype}{list(value.shape)} at {hex(id(value))}"
    return repr(value)[:60]
