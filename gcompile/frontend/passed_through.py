"""Carried values a loop or branch passes through unchanged that are neither numbers nor arrays.

A name the body only reads is carried when it may be unbound before the statement, so that a
read raises UnboundLocalError as in Python (``capture/plan``): ``if method == 'linear':
interp = linear`` before ``for x in xs: y = interp(x, data)``. Bound at trace time to a
function, a string or another object, it cannot be a loop's carried value (only numbers and
arrays are), and the loop would run in Python, unrolled. Such values are given to the body as
themselves instead, and left out of what the loop or branch carries. A body that returns
another object in their place rebinds the name: it declines, as before.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Callable

import numpy as np

from ..capture import UNDEFINED
from .declines import Declined
from .symint import SymInt


class PassedThrough:
    """The carried values of one loop or branch that pass through it (see the module
    docstring); false when there are none."""

    def __init__(self, tracer, carried: tuple, info):
        self.info = info
        self.values = {i: v for i, v in enumerate(carried) if _passes_through(tracer, v)}
        self._kept = [i for i in range(len(carried)) if i not in self.values]

    def __bool__(self) -> bool:
        return bool(self.values)

    def carried(self, carried: tuple) -> tuple:
        """The values still carried."""
        return tuple(carried[i] for i in self._kept)

    def kept_info(self):
        """``info`` naming only the values still carried."""
        return replace(self.info, carried=tuple(self.info.carried[i] for i in self._kept))

    def body(self, function: Callable, leading: int = 0) -> Callable:
        """``function`` (taking ``leading`` arguments, a loop's index, before the carried
        values and returning them all) taking and returning only the values still carried."""

        def reduced(*arguments):
            values = iter(arguments[leading:])
            count = len(self._kept) + len(self.values)
            full = [self.values[i] if i in self.values else next(values) for i in range(count)]
            results = function(*arguments[:leading], *full)
            for i, value in self.values.items():
                if results[i] is not value:
                    name = self.info.carried[i]
                    kind = type(value).__name__
                    raise Declined(f"it rebinds {name!r}, a {kind} (not a number or array)")
            return tuple(results[i] for i in self._kept)

        return reduced

    def after(self, result):
        """The carried values after the statement, from those the reduced one returned."""
        if result is NotImplemented:
            return result
        values = iter(result)
        count = len(self._kept) + len(self.values)
        return tuple(self.values[i] if i in self.values else next(values) for i in range(count))


def _passes_through(tracer, value) -> bool:
    """Whether ``value`` is neither a number, an array, a traced value nor unbound."""
    if value is UNDEFINED or tracer.is_traced(value):
        return False
    return not isinstance(value, (SymInt, np.ndarray, bool, int, float, complex, np.generic))
