"""Flatten nested tuples, lists and dicts into leaves and back.

Function arguments and return values may be containers of arrays (``(w, m, v)``,
``{"loss": l, "grad": g}``); the graph sees only the leaves. A ``TreeSpec``
records the structure so the leaves can be put back, and is hashable so it can
take part in cache keys.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable


@dataclass(frozen=True)
class TreeSpec:
    """Structure of a flattened value: ``kind`` is ``"leaf"``, ``"tuple"``, ``"list"``, ``"dict"``
    or ``"rows"`` (a list returned as an array's rows: ``RowsOf``)."""

    kind: str
    keys: tuple = ()
    children: tuple = ()


LEAF = TreeSpec("leaf")


@dataclass(frozen=True)
class RowsOf:
    """A list returned as the rows of one array (a list a rolled loop appended to): a leaf of
    kind "rows", made a list again on unflattening (``how``: "tolist" for Python numbers,
    "list" for NumPy scalars or row arrays)."""

    array: Any
    how: str


def flatten(value: Any, path: str = "") -> tuple[list[tuple[str, Any]], TreeSpec]:
    """Return ``([(path, leaf), ...], spec)``; paths name leaves (``params_0``, ``state_lr``)."""
    leaves: list[tuple[str, Any]] = []
    spec = _flatten(value, path, leaves)
    return leaves, spec


def _flatten(value: Any, path: str, leaves: list) -> TreeSpec:
    if isinstance(value, RowsOf):
        leaves.append((path, value.array))
        return TreeSpec("rows", (value.how,), (LEAF,))
    if isinstance(value, (tuple, list)) and not _is_namedtuple(value):
        children = tuple(
            _flatten(v, f"{path}_{i}" if path else str(i), leaves) for i, v in enumerate(value)
        )
        return TreeSpec("tuple" if isinstance(value, tuple) else "list", (), children)
    if isinstance(value, dict):
        keys = tuple(value)
        children = tuple(
            _flatten(value[k], f"{path}_{k}" if path else str(k), leaves) for k in keys
        )
        return TreeSpec("dict", keys, children)
    leaves.append((path, value))
    return LEAF


def more_leaves(value: Any, limit: int) -> bool:
    """Whether ``value`` has more than ``limit`` leaves (counted until there are)."""
    pending, count = [value], 0
    while pending:
        item = pending.pop()
        if isinstance(item, (tuple, list)) and not _is_namedtuple(item):
            if len(item) > limit:
                return True
            pending.extend(item)
        elif isinstance(item, dict):
            pending.extend(item.values())
        else:
            count += 1
            if count > limit:
                return True
    return False


def _is_namedtuple(value: Any) -> bool:
    return isinstance(value, tuple) and hasattr(type(value), "_fields")


def unflatten(spec: TreeSpec, leaves: list, convert: Callable[[Any], Any] = lambda x: x) -> Any:
    """Rebuild the structure of ``spec`` from ``leaves`` (applying ``convert`` to each)."""
    it = iter(leaves)
    return _unflatten(spec, it, convert)


def _unflatten(spec: TreeSpec, it, convert):
    if spec.kind == "leaf":
        return convert(next(it))
    values = [_unflatten(child, it, convert) for child in spec.children]
    if spec.kind == "rows":  # (a graph's node in the text form, the array on a call)
        rows, how = values[0], spec.keys[0]
        if not hasattr(rows, "tolist"):
            return RowsOf(rows, how)
        return rows.tolist() if how == "tolist" else list(rows)
    if spec.kind == "tuple":
        return tuple(values)
    if spec.kind == "list":
        return values
    return dict(zip(spec.keys, values))


def map_leaves(function: Callable[[Any], Any], value: Any) -> Any:
    """``value`` with ``function`` applied to each leaf of its tuples, lists and dicts (a
    namedtuple comes back a tuple)."""
    if isinstance(value, tuple):
        return tuple(map_leaves(function, v) for v in value)
    if isinstance(value, list):
        return [map_leaves(function, v) for v in value]
    if isinstance(value, dict):
        return {k: map_leaves(function, v) for k, v in value.items()}
    return function(value)
