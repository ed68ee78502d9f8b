"""The ranges of captured ``for`` loops: their bounds as sizes or ints, a range stepped by a
loop index (a ``while`` loop on a traced position), and a first trip traced before the loop
when the loop binds values it carries. A part of ``LoopTracer`` (``loops.py``), which provides
``tracer``, ``notes`` and ``capture_while`` (``branches.py``).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Callable

import numpy as np

from ..capture import UNDEFINED
from ..ir.control import LoopNote
from ..ir.shape_env import trip_count
from ..ir.symbolic import is_expr, prove_nonnegative
from .declines import Declined
from .symint import SymInt

_MAX_PEELED = 2  # trips of a loop traced before it to bind the values it carries


class RangeLoops:
    """Bounds and trips of ``range`` loops (see the module docstring)."""

    def range_bounds(self, start, stop, step, reverse: bool) -> tuple:
        """``(first, stop, step)`` of ``range(start, stop, step)`` (``reversed`` if
        ``reverse``): sizes or ints; declined for bounds read from the data or a step that is
        not a fixed non-zero int."""
        values = [self._bound(v, what) for v, what in ((start, "start"), (stop, "stop"))]
        step = self._bound(step, "step")
        if is_expr(step) or step == 0:
            raise Declined("the range's step is not a fixed non-zero int")
        first, last = values
        if reverse:
            trips = trip_count(first, last, step)
            first, last, step = first + (trips - 1) * step, first - step, -step
        return first, last, step

    def _positive_size(self, step) -> bool:
        """Whether a range's ``step`` is a size or loop index (no int) that is surely positive."""
        if not isinstance(step, SymInt):
            return False
        stride = self._bound(step, "step")
        return is_expr(stride) and prove_nonnegative(stride - 1) is True

    def _stepped(self, body, start, stop, step, carried: tuple, info) -> Any:
        """``for j in range(start, stop, step)`` of a step a loop index gives (``range(i * i,
        n + 1, i)`` of a sieve), which sizes cannot count, as ``j = start; while j < stop:
        body; j += step`` of ``j`` a traced int (``capture_while``)."""
        value = lambda bound: bound.value() if isinstance(bound, SymInt) else bound  # noqa: E731
        first, last, stride = value(start), value(stop), value(step)
        names = (f"{info.target} (the range's position)", *info.carried)
        loop = replace(info, carried=names, kind="while")

        def test(position, *values):
            return position < last

        def stepped(position, *values):
            return (position + stride, *body(position, *values))

        result = self.capture_while(test, stepped, (first, *carried), loop)
        return result if result is NotImplemented else tuple(result)[1:]

    def _bound(self, value, what: str):
        if isinstance(value, SymInt):
            return self.tracer.graph.shape_env.simplify(value.expr)
        if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
            return int(value)
        raise Declined(f"the range's {what} is not a size or a Python int ({type(value).__name__})")

    def _peeled(self, body: Callable, bounds: tuple, carried: tuple, info, source) -> tuple:
        """``(carried, bounds)`` as they are, or, when a carried value is unbound before the
        loop (``i`` read after it, a value its body makes) and the loop surely runs, after its
        first trip traced here, before the loop (which binds them as eager's first trip does):
        the loop then runs from its second trip (bounds None: there is none). A value the
        first trip leaves unbound (an inner loop's index, ``for k in range(i)`` at ``i = 0``)
        has the second traced too, up to ``_MAX_PEELED`` trips."""
        for trip in range(_MAX_PEELED):
            if bounds is None or not any(value is UNDEFINED for value in carried):
                break
            if prove_nonnegative(trip_count(*bounds) - 1) is not True:
                break  # (it may not run: the name stays unbound, as in eager)
            which = "first trip" if trip == 0 else f"first {trip + 1} trips"
            reason = f"its {which} traced before it: the trips bind values the loop carries"
            carried, bounds = self._peel(body, bounds, carried, source, reason)
        return carried, bounds

    def _peel(self, body: Callable, bounds: tuple, carried: tuple, source, reason: str) -> tuple:
        """``(carried, bounds)`` after the first trip of a loop that surely runs, traced here:
        the bounds of the trips left (None: there are none)."""
        first, last, step = bounds
        trips = trip_count(first, last, step)
        carried = tuple(body(SymInt.wrap(self.tracer, first), *carried))
        self.notes.append(LoopNote(source, True, reason=reason))
        if prove_nonnegative(1 - trips) is True:  # (one trip: that was it)
            return carried, None
        return carried, (first + step, last, step)
