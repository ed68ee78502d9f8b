"""Python lists and tuples holding traced values, which NumPy functions convert to arrays as
eager NumPy does (``np.sum([a, b])``, ``np.add(lst, 1)``)."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .traced_array import holds_traced


class ConvertedByNumPy:
    """A list or tuple argument holding traced values. Python operations on it are list
    operations (``a * 2`` repeats it); a NumPy function or ufunc given it converts it as
    ``np.asarray`` would, as eager NumPy does."""

    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
        inputs = self._as_array_in(inputs[: ufunc.nin]) + inputs[ufunc.nin :]
        return getattr(ufunc, method)(*inputs, **kwargs)

    def __array_function__(self, func: Callable, types: tuple, args: tuple, kwargs: dict) -> Any:
        args, kwargs = self._as_array_in((args, kwargs))
        return func(*args, **kwargs)

    def _as_array_in(self, value: Any) -> Any:
        """``value`` with this sequence, wherever it occurs in it (not as ``out=``), replaced
        by its array."""
        from .recorder import current_tracer  # (the recorder imports this module's users)

        array = current_tracer().sequence_as_array(self) if holds_traced(self) else np.asarray(self)
        found = []

        def swap(v: Any, key: Any = None) -> Any:
            if v is self and key != "out":
                found.append(v)
                return array
            if isinstance(v, dict):
                return {k: swap(x, k) for k, x in v.items()}
            if type(v) in (list, tuple):
                return type(v)(swap(x) for x in v)
            return v

        swapped = swap(value)
        if not found:  # only given as out=, which NumPy requires to be an array
            raise TypeError("return arrays must be of ArrayType")
        return swapped


class TracedList(ConvertedByNumPy, list):
    """A list argument holding traced values (see ``ConvertedByNumPy``)."""


class TracedTuple(ConvertedByNumPy, tuple):
    """A tuple argument holding traced values (see ``ConvertedByNumPy``)."""


def convertible_sequences(value: Any) -> Any:
    """``value`` (an argument) with its lists and tuples that hold traced values, at any
    depth, made TracedList and TracedTuple, so NumPy functions given them convert them."""
    if isinstance(value, dict):
        return {k: convertible_sequences(v) for k, v in value.items()}
    if type(value) in (list, tuple) and holds_traced(value):
        items = [convertible_sequences(v) for v in value]
        return TracedList(items) if isinstance(value, list) else TracedTuple(items)
    return value
