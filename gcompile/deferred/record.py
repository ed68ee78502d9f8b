"""The steps lazy values record, and the session that computes them when one is needed.

A ``Step`` is one NumPy call whose arguments may be lazy values. The session holds every value
not yet computed (weakly: a value the program dropped is not computed unless another needs it)
and computes them all at once (``flush``): the steps they need, in the order they were
recorded, run as one compiled function (``replay``). A write into a lazy value (``out=``, an
item assignment, ``+=``) flushes first, so values recorded before it see the memory as eager
NumPy would have.
"""

from __future__ import annotations

import itertools
import threading
import weakref
from dataclasses import dataclass
from typing import Any, Callable


@dataclass(eq=False)
class Step:
    """``function(*args, **kwargs)`` (``function`` a string: a method of the first argument),
    the arguments holding the steps of pending values (not the values: a value the program
    dropped is then only a step, computed within the flush that needs it); ``result`` once a
    flush computed it for a value still held."""

    function: Callable | str
    args: tuple
    kwargs: dict
    order: int
    done: bool = False
    result: Any = None


class Session:
    """The lazy values not yet computed, and their computing (one per process)."""

    def __init__(self):
        self.pending: weakref.WeakValueDictionary = weakref.WeakValueDictionary()
        self.counter = itertools.count()
        self.lock = threading.RLock()

    def record(self, value: Any) -> None:
        """``value`` (a ``LazyArray`` with a step) is pending."""
        self.pending[value.step.order] = value

    def flush(self, needed: Any = None, strict: bool = False) -> None:
        """Compute every pending value still alive, in one compiled call. When that raises
        (NumPy's error: shapes that do not broadcast, say), each value is computed on its own:
        those that fail stay pending, and their error is raised when one is needed (``needed``
        is, or ``strict``: the end of a block), as eager NumPy raises it at its line."""
        from .replay import run  # (replay compiles through the API: imported when needed)

        with self.lock:
            values = sorted(self.pending.values(), key=lambda v: v.step.order)
            self.pending.clear()
            try:
                if values:
                    run(values)
                return
            except Exception:
                failures = self._one_by_one(values)
        if needed is not None and id(needed) in failures:
            raise failures[id(needed)]
        if strict and failures:
            raise next(iter(failures.values()))

    def _one_by_one(self, values: list) -> dict:
        """Compute each of ``values`` on its own: id -> the error of each that fails (kept
        pending)."""
        from .replay import run

        failures = {}
        for value in values:
            if value.step is None:  # (computed with another)
                continue
            try:
                run([value])
            except Exception as error:
                failures[id(value)] = error
                self.record(value)
        return failures


SESSION = Session()
