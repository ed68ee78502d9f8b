"""The module globals and closure variables a compiled function reads, as a guard: a trace took
their values (a scalar became a constant of the graph, an array a constant it reads), so a call
after one of them was rebound (``dt = 0.4``, ``W = new_array``) must not reuse it.

``GlobalsGuard.of(fn)`` finds the names ``fn``'s code (and the code nested in it) loads as
globals, and its closure's variables, whose values are data: numbers, NumPy scalars, arrays,
strings and tuples of them, lookup tables (``capture.tables``: lists and tuples of numbers, a
list guarded by its items), and containers of data (dicts, lists, ``SimpleNamespace`` and
dataclass instances: ``params["W"]``, ``cfg.lr``), guarded by a snapshot of their structure
and leaves (``_Snapshot``, at most ``_MAX_LEAVES``). A bound method's object is guarded so too,
by the attributes its class's code names (``self.w``). ``holds()`` is True while each is still
the same object or an equal value of the same type (an array: the same object; its contents
may change, as the README says; a container: the same structure of such values). Not guarded:
the globals of other functions it calls, modules' and classes' attributes (``cfg.LR`` of a
module), larger containers, functions and other objects.
"""

from __future__ import annotations

import types
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from .capture import is_table, loaded_globals
from .ir.pytree import flatten, is_attribute_object, more_leaves

_SCALARS = (bool, int, float, complex, str, np.generic)


@dataclass(frozen=True)
class GlobalsGuard:
    """The data values a trace read from outside the arguments (see the module docstring)."""

    namespace: dict  # the function's module globals
    names: tuple  # the global names read, with ``values``
    values: tuple
    cells: tuple  # closure cells read, with ``contents``
    contents: tuple
    owner: tuple | None = None  # a bound method's object and the snapshot of its attributes

    @staticmethod
    def of(fn: Callable) -> GlobalsGuard | None:
        """The guard of ``fn``'s data globals and closure variables (and of a bound method's
        object), or None if it reads none."""
        original, fn = fn, getattr(fn, "__func__", fn)
        code = getattr(fn, "__code__", None)
        if code is None:
            return None
        namespace = fn.__globals__
        names = tuple(n for n in sorted(loaded_globals(code)) if _data(namespace.get(n, _MISSING)))
        cells = tuple(
            cell for cell in (fn.__closure__ or ()) if _bound(cell) and _data(cell.cell_contents)
        )
        owner = _owner_state(method) if (method := bound_method(original)) else None
        if not names and not cells and owner is None:
            return None
        values = tuple(_traced(namespace[n]) for n in names)
        contents = tuple(_traced(c.cell_contents) for c in cells)
        return GlobalsGuard(namespace, names, values, cells, contents, owner)

    def holds(self) -> bool:
        """Whether every guarded global and closure variable still has its traced value."""
        namespace = self.namespace
        for name, value in zip(self.names, self.values):
            if not _same(namespace.get(name, _MISSING), value):
                return False
        for cell, value in zip(self.cells, self.contents):
            if not _bound(cell) or not _same(cell.cell_contents, value):
                return False
        if self.owner is not None:
            method, names, snapshot = self.owner
            return _same(_attributes(method.__self__, names), snapshot)
        return True

    def describe(self) -> list[str]:
        """One line per guarded value (for ``explain()``)."""
        lines = [
            f"global {name} is {_short(value)}" for name, value in zip(self.names, self.values)
        ]
        lines += [f"a closure variable is {_short(value)}" for value in self.contents]
        if self.owner is not None:
            lines.append(f"the method's object has {_short(self.owner[2])}")
        return lines


_MISSING = object()


@dataclass(frozen=True)
class _ListContents:
    """A list's items when traced (a lookup table the trace read as a constant): the list may
    change in place, so its guard compares them, not the object."""

    items: list  # (a copy: compared with ==, which takes a NaN as itself)


@dataclass(frozen=True)
class _Snapshot:
    """A container of data when traced (a dict, a list, an attribute object): its structure
    (``pytree.TreeSpec``) and its leaves as the guard keeps them (arrays by identity)."""

    spec: Any
    leaves: tuple

    def __str__(self) -> str:
        return f"{self.spec.kind} of {len(self.leaves)} values"


_MAX_LEAVES = 64  # (a larger container is left unguarded: checking it would cost each call)


def _data(value: Any) -> bool:
    if isinstance(value, (_SCALARS, np.ndarray)) or is_table(value):
        return True
    if type(value) is tuple and len(value) <= 16 and all(_data(v) for v in value):
        return True
    container = type(value) in (dict, list) or is_attribute_object(value)
    return container and not more_leaves(value, _MAX_LEAVES)


def _traced(value: Any) -> Any:
    """What the guard keeps of a value the trace read: a table's items, a container's
    snapshot, else the value."""
    if is_table(value) and type(value) is list:
        return _ListContents(list(value))
    if type(value) in (dict, list) or is_attribute_object(value):
        leaves, spec = flatten(value)
        return _Snapshot(spec, tuple(_traced(leaf) for _, leaf in leaves))
    return value


def bound_method(fn: Any) -> types.MethodType | None:
    """``fn`` when it is a method bound to an object keeping attributes in ``__dict__``."""
    bound = type(fn) is types.MethodType and hasattr(fn.__self__, "__dict__")
    return fn if bound and not isinstance(fn.__self__, type) else None


def _owner_state(method: types.MethodType) -> tuple | None:
    """``(method, names, snapshot)`` of the attributes of its object that its class's code
    names (any method may read them for it), or None when they are too many."""
    names = set()
    for function in (method.__func__, *vars(type(method.__self__)).values()):
        code = getattr(getattr(function, "__func__", function), "__code__", None)
        names |= _attribute_names(code) if code is not None else set()
    names = tuple(sorted(names))  # (one absent now is kept absent: a later one is a change)
    attributes = _attributes(method.__self__, names)
    if more_leaves(attributes, _MAX_LEAVES):
        return None
    return method, names, _traced(attributes)


def _attribute_names(code: types.CodeType) -> set:
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _attribute_names(const)
    return names


def _attributes(owner: Any, names: tuple) -> dict:
    state = vars(owner)
    return {name: state.get(name, _MISSING) for name in names}


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
    if type(traced) is _Snapshot:
        if type(current) not in (dict, list) and not is_attribute_object(current):
            return False
        if more_leaves(current, _MAX_LEAVES):
            return False
        leaves, spec = flatten(current)
        return spec == traced.spec and all(
            _same(leaf, kept) for (_, leaf), kept in zip(leaves, traced.leaves)
        )
    if type(current) is not type(traced) or not _comparable(traced):
        return False
    if type(traced) is tuple:
        return len(current) == len(traced) and all(map(_same, current, traced))
    equal = bool(current == traced)
    return equal or (
        isinstance(traced, (float, complex, np.inexact))
        and bool(np.isnan(traced))
        and bool(np.isnan(current))
    )


def _comparable(value: Any) -> bool:
    """A value compared by equality (else by identity alone: an array, a function, ...)."""
    return isinstance(value, (_SCALARS, tuple)) or value is None


def _short(value: Any) -> str:
    if type(value) is _ListContents:
        return f"a list of {len(value.items)} numbers, {repr(list(value.items[:4]))[:-1]}, ...]"
    if isinstance(value, np.ndarray):
        return f"the array {value.dtype}{list(value.shape)} at {hex(id(value))}"
    return repr(value)[:60]
