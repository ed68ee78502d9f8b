"""``np.array([f(i) for i in range(a, b)])`` (``capture/comprehensions.py``) as one loop writing
the rows of a new array, its body traced once, instead of ``b - a`` traced elements.

The first element, traced and rolled back, gives the rows' shape and dtype; every trip must
make an element of that same shape and dtype (else the comprehension runs in Python, as do
bounds read from the data, a step other than 1, an empty range and keywords other than
``dtype=``; ``np.stack`` with ``axis=0`` only). ``dtype=`` casts the array, as NumPy casts each
element.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Callable

import numpy as np

from ..errors import UnsupportedError
from ..ir.shape_env import trip_count
from .declines import Declined
from .loops import _roll_back
from .traced_array import TracedArray, holds_traced

_ARRAYS = (np.array, np.asarray, np.stack)
_ROWS = "__gc_rows"
_TOTAL = "__gc_total"


def capture_array(
    handler: Any,
    function: Callable,
    element: Callable,
    start: Any,
    stop: Any,
    step: Any,
    info: Any,
    args: tuple,
    kwargs: dict,
) -> Any:
    """The array of ``function([element(i) for i in range(start, stop, step)])``, or
    NotImplemented (see the module docstring); ``handler`` a ``LoopTracer``."""
    tracer = handler.tracer
    original = function if function in _ARRAYS else getattr(function, "__wrapped__", None)
    axis = kwargs.get("axis", 0) if original is np.stack else 0
    if original not in _ARRAYS or args or set(kwargs) - {"dtype", "axis"} or axis != 0:
        return NotImplemented
    if step != 1 or tracer.is_traced(start) or tracer.is_traced(stop) or not stop - start >= 1:
        return NotImplemented
    row = _first_row(handler, element, start)
    if row is None:
        return NotImplemented
    shape, dtype = row
    empty = getattr(np.empty, "__wrapped__", np.empty)  # (NumPy's, not its tracing patch)
    rows = tracer.numpy.creation(empty, ((stop - start, *shape), dtype), {})

    def trip(index, rows):
        value = _as_array(tracer, element(index))
        if tuple(value.shape) != shape or value.dtype != dtype:
            raise Declined("its elements differ in shape or dtype")
        rows[index - start] = value
        return (rows,)

    after = handler.capture_range(trip, start, stop, 1, (rows,), replace(info, carried=(_ROWS,)))
    if after is NotImplemented:
        return NotImplemented
    wanted = kwargs.get("dtype")
    return after[0] if wanted is None else after[0].astype(wanted)


def capture_sum(handler: Any, element: Callable, start, stop, step, info, args: tuple) -> Any:
    """``sum(element(i) for i in range(start, stop, step), *args)`` as one loop adding the
    elements to the start (0 unless given) in order, as Python's ``sum`` does; NotImplemented
    for bounds or a start read from the data. Whether the range is empty is decided (guarded,
    or the loop around split): an empty one gives the start itself, as Python does."""
    tracer = handler.tracer
    if any(tracer.is_traced(bound) for bound in (start, stop, step)):
        return NotImplemented
    initial = args[0] if args else 0
    first, last, stride = handler.range_bounds(start, stop, step, False)
    trips = trip_count(first, last, stride)
    if not tracer.graph.shape_env.decide(">", trips, 0, "whether a sum's range is empty"):
        return initial  # (Python's sum of nothing: the start itself, of its own type)

    def trip(index, total):
        return (total + element(index),)

    carried = replace(info, carried=(_TOTAL,))
    after = handler.capture_range(trip, start, stop, step, (initial,), carried)
    return NotImplemented if after is NotImplemented else after[0]


def _first_row(handler: Any, element: Callable, start: Any) -> tuple | None:
    """``(shape, dtype)`` of ``element(start)``, its nodes rolled back; None for an element
    NumPy would not make an array of numbers (a list of strings, of lists of other lengths)."""
    graph = handler.tracer.graph
    mark = graph.insertion_anchor()
    try:
        value = _as_array(handler.tracer, element(start))
        if not isinstance(value, TracedArray) and value.dtype.kind not in "biufc":
            return None
        return tuple(value.shape), value.dtype
    except (ValueError, UnsupportedError):
        return None
    finally:
        handler._forget(graph.nodes_after(mark))
        _roll_back(graph, mark)


def _as_array(tracer: Any, value: Any) -> Any:
    """A traced value as it is; a list or tuple holding some as ``np.asarray`` makes it (a
    row of ``np.array([[f(x, c) for c in C] for x in X])``); anything else as NumPy does."""
    if tracer.is_traced(value):
        return value
    if isinstance(value, (list, tuple)) and holds_traced(value):
        return tracer.sequence_as_array(value)
    return np.asarray(value)
