"""literal_key: a hashable key that is equal for two literals exactly when they behave identically.

Python's ``==`` is too coarse for a compiler: ``1 == 1.0 == True`` although NEP 50
promotes them differently, ``0.0 == -0.0`` although their signs differ, and
``nan != nan``. CSE keys literals with this, and so do the guards of static
arguments.
"""

from __future__ import annotations

import hashlib
import types
from typing import Any

import numpy as np

from .graph import Node


def literal_key(value: Any) -> Any:
    """A hashable key equal for two literals exactly when they behave identically."""
    if isinstance(value, Node):
        return ("node", id(value))
    if isinstance(value, (tuple, list)):
        return (type(value).__name__, tuple(literal_key(v) for v in value))
    if isinstance(value, dict):
        return ("dict", tuple((k, literal_key(v)) for k, v in sorted(value.items())))
    if isinstance(value, slice):
        return ("slice", literal_key((value.start, value.stop, value.step)))
    if isinstance(value, np.generic):
        return ("np", value.dtype.str, value.tobytes())
    if isinstance(value, float):
        return ("float", np.float64(value).tobytes())
    if isinstance(value, complex):
        return ("complex", np.complex128(value).tobytes())
    if isinstance(value, np.ndarray):
        return (
            "array",
            value.dtype.str,
            value.shape,
            hashlib.sha256(np.ascontiguousarray(value)).hexdigest(),
        )
    if isinstance(value, types.FunctionType):
        return _function_key(value, frozenset())
    return (type(value).__name__, value)


def _function_key(function: types.FunctionType, seen: frozenset) -> Any:
    """A function by what it does, so that a helper defined anew on each call (a nested
    ``def``) keys alike: its code, globals, defaults and the values its closure holds, when
    those are Python numbers, strings or such functions; else the function itself (a
    container or an array in its closure may change between calls)."""
    if function in seen:  # (a closure reaching itself)
        return ("function", _Identity(function))
    seen |= {function}
    cells = []
    for cell in function.__closure__ or ():
        try:
            content = cell.cell_contents
        except ValueError:  # (an empty cell: a name not bound yet)
            cells.append(("empty",))
            continue
        if isinstance(content, types.FunctionType):
            cells.append(_function_key(content, seen))
        elif _plain(content):
            cells.append(literal_key(content))
        else:
            return ("function", _Identity(function))
    defaults = (*(function.__defaults__ or ()), *(function.__kwdefaults__ or {}).items())
    flat = [v for d in defaults for v in (d if isinstance(d, tuple) else (d,))]
    if not all(_plain(v) for v in flat):
        return ("function", _Identity(function))
    code, scope = function.__code__, _Identity(function.__globals__)
    return ("function", code, scope, tuple(literal_key(d) for d in defaults), tuple(cells))


def _plain(value: Any) -> bool:
    return isinstance(value, (bool, int, float, complex, str, type(None)))


class _Identity:
    """A value in a key by its identity (an array a closure holds: no ``==`` of its items)."""

    __slots__ = ("value",)

    def __init__(self, value: Any):
        self.value = value

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, _Identity) and other.value is self.value

    def __hash__(self) -> int:
        return id(self.value)
