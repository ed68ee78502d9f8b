"""Flatten nested tuples, lists and dicts into leaves and back.

Function arguments and return values may be containers of arrays (``(w, m, v)``,
``{"loss": l, "grad": g}``, a namedtuple: kind "namedtuple", its class the key), or objects holding them as attributes (a ``SimpleNamespace`` or
a dataclass instance of parameters: kind "object", its type and attribute names the keys);
the graph sees only the leaves. A ``TreeSpec``
records the structure so the leaves can be put back, and is hashable so it can
take part in cache keys.
"""

from __future__ import annotations

import types
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np


@dataclass(frozen=True)
class TreeSpec:
    """Structure of a flattened value: ``kind`` is ``"leaf"``, ``"tuple"``, ``"namedtuple"``,
    ``"list"``, ``"dict"``, ``"object"``,
    ``"rows"`` (a list returned as an array's rows: ``RowsOf``) or ``"slice"`` (a slice whose
    bounds the data decide: ``SliceOf``)."""

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


@dataclass(frozen=True)
class SliceOf:
    """An array returned as a slice of another whose bounds the data decide (``x[:k]``,
    ``v[:, :k]``): a leaf of kind "slice" holding the array and, per sliced axis (``axes``),
    its start and stop (NumPy's, counted from the start and clipped to the axis); on
    unflattening, NumPy's view ``array[..., start:stop, ...]`` of the values returned."""

    array: Any
    axes: tuple
    bounds: tuple  # (start, stop) of each axis of ``axes``

    def view(self) -> Any:
        index = [slice(None)] * (max(self.axes) + 1)
        for axis, (start, stop) in zip(self.axes, self.bounds):
            index[axis] = slice(int(start), int(stop))
        return self.array[tuple(index)]


def flatten(value: Any, path: str = "") -> tuple[list[tuple[str, Any]], TreeSpec]:
    """Return ``([(path, leaf), ...], spec)``; paths name leaves (``params_0``, ``state_lr``)."""
    leaves: list[tuple[str, Any]] = []
    spec = _flatten(value, path, leaves)
    return leaves, spec


def _flatten(value: Any, path: str, leaves: list) -> TreeSpec:
    if isinstance(value, RowsOf):
        leaves.append((path, value.array))
        return TreeSpec("rows", (value.how,), (LEAF,))
    if isinstance(value, SliceOf):
        leaves.append((path, value.array))
        bounds = [bound for pair in value.bounds for bound in pair]
        leaves.extend((f"{path}_bound{i}", bound) for i, bound in enumerate(bounds))
        return TreeSpec("slice", value.axes, (LEAF,) * (1 + len(bounds)))
    if _is_namedtuple(value):
        children = tuple(
            _flatten(v, f"{path}_{k}" if path else k, leaves)
            for k, v in zip(type(value)._fields, value)
        )
        return TreeSpec("namedtuple", (type(value),), children)
    if isinstance(value, (tuple, list)):
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
    if is_attribute_object(value):
        attributes = vars(value)
        children = tuple(
            _flatten(v, f"{path}_{k}" if path else k, leaves) for k, v in attributes.items()
        )
        cls = getattr(type(value), ARGUMENT_OF, type(value))  # (a rebuilt argument's class)
        return TreeSpec("object", (cls, *attributes), children)
    leaves.append((path, value))
    return LEAF


# on a class standing for an argument's class when rebuilt (``guards.argument_object``): that class
ARGUMENT_OF = "__gcompile_argument_of__"


def is_attribute_object(value: Any) -> bool:
    """A ``SimpleNamespace``, or an instance of a dataclass keeping its attributes in its
    ``__dict__`` (not ``slots``), flattened by its attributes."""
    cls = type(value)
    if cls in _PLAIN_LEAVES:  # (the common leaves, on every call's path: no more questions)
        return False
    if issubclass(cls, types.SimpleNamespace):
        return True
    fields = getattr(cls, "__dataclass_fields__", None)
    return fields is not None and hasattr(value, "__dict__") and not hasattr(cls, "__slots__")


_PLAIN_LEAVES = frozenset((np.ndarray, float, int, bool, complex, str, type(None)))


def plain_object(cls: type, attributes: dict) -> Any:
    """An instance of ``cls`` holding ``attributes`` (not initialised again)."""
    made = cls.__new__(cls)
    made.__dict__.update(attributes)
    return made


def more_leaves(value: Any, limit: int) -> bool:
    """Whether ``value`` has more than ``limit`` leaves (counted until there are)."""
    pending, count = [value], 0
    while pending:
        item = pending.pop()
        if isinstance(item, (tuple, list)):
            if len(item) > limit:
                return True
            pending.extend(item)
        elif isinstance(item, dict):
            pending.extend(item.values())
        elif is_attribute_object(item):
            pending.extend(vars(item).values())
        else:
            count += 1
            if count > limit:
                return True
    return False


def _is_namedtuple(value: Any) -> bool:
    return isinstance(value, tuple) and hasattr(type(value), "_fields")


def unflatten(
    spec: TreeSpec,
    leaves: list,
    convert: Callable[[Any], Any] = lambda x: x,
    make_object: Callable[[type, dict], Any] = plain_object,
) -> Any:
    """Rebuild the structure of ``spec`` from ``leaves`` (applying ``convert`` to each); an
    object by ``make_object(type, attributes)``."""
    it = iter(leaves)
    return _unflatten(spec, it, convert, make_object)


def _unflatten(spec: TreeSpec, it, convert, make_object):
    if spec.kind == "leaf":
        return convert(next(it))
    values = [_unflatten(child, it, convert, make_object) for child in spec.children]
    if spec.kind == "object":
        return make_object(spec.keys[0], dict(zip(spec.keys[1:], values)))
    if spec.kind == "namedtuple":
        return spec.keys[0]._make(values)
    if spec.kind == "rows":  # (a graph's node in the text form, the array on a call)
        rows, how = values[0], spec.keys[0]
        if not hasattr(rows, "tolist"):
            return RowsOf(rows, how)
        return rows.tolist() if how == "tolist" else list(rows)
    if spec.kind == "slice":  # (as "rows": a node of the text form, the view on a call)
        array, bounds = values[0], values[1:]
        sliced = SliceOf(array, spec.keys, tuple(zip(bounds[::2], bounds[1::2])))
        return sliced.view() if hasattr(array, "ndim") else sliced
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
