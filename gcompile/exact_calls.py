"""The exact-call memo of a compiled function: calls whose arguments are all arrays and
scalars, passed positionally, by their exact shapes, flags, scalar types and int values, found
without binding the call (its per-call cost is this lookup and one host call). Exact shapes
and static ints decide every size check; an int traced as a size keys as one, and the entry's
size check decides."""

from __future__ import annotations

from typing import Any

import numpy as np

from .ir.literals import literal_key
from .ir.shape_env import SIZE_END, SIZE_LOW

_SIZE = (int, "size")  # the key of an int traced as a size symbol
_VALUE = (int, "value")  # the key of an int traced as a value (``guards.value_ints``)
MAX_KEYS = 256  # memo entries kept before the memo starts again (many sizes: entries stay)


class ExactCalls:
    """The memo of one compiled function of ``arity`` positional parameters (-1: its calls
    are not memoised: keyword-only or static parameters)."""

    def __init__(self, arity: int, binder: Any):
        self.arity = arity
        self.calls: dict[tuple, tuple] = {}  # key -> (entry, positions of the graph inputs)
        # (its positions of ints traced as size symbols or values, and of scalars static by
        # their values)
        self.binder = binder

    def find(self, args: tuple, kwargs: dict) -> tuple | None:
        """``(entry, graph inputs)`` of a call like an earlier one whose entry admits it."""
        if kwargs or len(args) != self.arity:
            return None
        key = array_key(args, *self._positions())
        found = self.calls.get(key) if key is not None else None
        if found is None:
            return None
        entry, positions = found
        inputs = [args[i] for i in positions]
        checked = self.binder.size_positions or entry.globals is not None
        return (entry, inputs) if not checked or entry.holds(inputs) else None

    def _positions(self) -> tuple[frozenset, frozenset, frozenset]:
        binder = self.binder
        return binder.size_positions, binder.static_positions, binder.value_positions

    def remember(self, args: tuple, kwargs: dict, entry: Any, is_input: list) -> None:
        """Keep the entry a bound call used. (An entry whose trace failed holds for every
        size: under a key for any size value it would take calls an earlier entry admits.)"""
        compiled = entry.failure is None and entry.refusal is None
        if kwargs or len(args) != self.arity or not compiled and self.binder.size_positions:
            return
        key = array_key(args, *self._positions())
        if key is None:
            return
        if len(self.calls) >= MAX_KEYS:
            self.calls.clear()
        self.calls[key] = (entry, tuple(i for i, flag in enumerate(is_input) if flag))


def array_key(
    args: tuple, sizes: frozenset, values: frozenset = frozenset(), weak: frozenset = frozenset()
) -> tuple | None:
    """The exact guard of a call whose arguments are all ndarrays and scalars (None otherwise):
    per array its dtype, shape, contiguity and writeability; a Python float or complex its
    type; an int or bool its value (static), or for an int at a position of ``sizes`` (traced
    as a size symbol) whether it is one (the entry's size check then decides); a NumPy scalar
    its dtype; at a position of ``values`` (a scalar static since a trace found it deciding a
    Python value) its value; an int at a position of ``weak`` (traced as a value) none. Each
    argument is one leaf of the bound call."""
    key = []
    for position, value in enumerate(args):
        kind = type(value)
        if position in values and isinstance(value, (float, complex, int, np.generic)):
            key.append(literal_key(value))
            continue
        if kind is int and position in sizes and SIZE_LOW <= value < SIZE_END:
            key.append(_SIZE)  # (not (int, 2): a static 2 keys so)
            continue
        if kind is int and position in weak and -SIZE_END <= value < SIZE_END:
            key.append(_VALUE)
            continue
        if kind is np.ndarray:
            flags = value.flags
            key.append(
                (value.dtype, value.shape, flags.c_contiguous, flags.f_contiguous, flags.writeable)
            )
        elif kind is float or kind is complex:
            key.append(kind)
        elif kind is int or kind is bool:
            key.append((kind, value))
        elif isinstance(value, np.generic):
            key.append((np.generic, value.dtype))
        else:
            return None
    return tuple(key)
