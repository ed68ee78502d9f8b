"""``np.vectorize(f)(*arrays)`` of traced arrays: what NumPy computes, ``f`` of each element of
the arrays broadcast together, as one loop over their flat positions writing the results into
an array of the broadcast shape, its dtype the first result's (NumPy's, without ``otypes``) or
``otypes``'s: ``f`` is traced once, converted as the function's own helpers are (its ``if``
statements on the element become branches). A ``signature``, ``excluded`` arguments, keywords,
or inputs of no element decline (NotImplemented: the call is refused as before).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..capture import runtime
from ..capture.runtime import LoopInfo
from ..errors import source_text, user_source
from .traced_array import TracedArray


def vectorized_call(handler: Any, function: Any, args: tuple, kwargs: dict) -> Any:
    """The result of ``function(*args)`` for an ``np.vectorize`` instance given traced arrays,
    or NotImplemented (see the module docstring); ``handler`` a ``LoopTracer``."""
    if not isinstance(function, np.vectorize) or kwargs or not args:
        return NotImplemented
    if function.signature is not None or function.excluded:
        return NotImplemented
    if not any(isinstance(a, TracedArray) for a in args):
        return NotImplemented
    tracer = handler.tracer
    arrays = [a if isinstance(a, TracedArray) else np.asarray(a) for a in args]
    shape = tuple(np.broadcast_shapes(*(tuple(a.shape) for a in arrays)))
    flats = [  # (a number: given as NumPy's scalar to each call, as NumPy's vectorize does)
        a[()] if a.ndim == 0 else np.broadcast_to(tracer.wrap(tracer.operand(a)), shape).ravel()
        for a in arrays
    ]
    count = math.prod(shape)
    pyfunc = function.pyfunc
    module = getattr(pyfunc, "__module__", None) or ""
    source = user_source()
    info = LoopInfo.at(source, f"np.vectorize over each element ({source_text(source)})", ())

    def element(i):
        items = (flat if np.ndim(flat) == 0 else flat[i] for flat in flats)
        return runtime.call(module, pyfunc, *items)

    otypes = function.otypes
    made = handler.capture_array(np.array, element, 0, count, 1, info, (), {})
    if made is NotImplemented:
        return NotImplemented
    result = made.reshape(shape)
    return result.astype(otypes[0]) if otypes else result
