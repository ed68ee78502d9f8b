"""``np.vectorize(f)(*arrays)`` of traced arrays: what NumPy computes, ``f`` of each element of
the arrays broadcast together, as one loop over their flat positions writing the results into
an array of the broadcast shape, its dtype the first result's (NumPy's, without ``otypes``) or
``otypes``'s, each element given to ``f`` as the Python number NumPy gives: ``f`` is traced once, converted as the function's own helpers are (its ``if``
statements on the element become branches). A ``signature``, ``excluded`` arguments, keywords,
inputs of no element, or without ``otypes`` inputs of other dtypes than Python's numbers' (NumPy
takes the results' dtype from a first call on NumPy scalars, float32 ones say, and computes the
values on Python numbers) decline (NotImplemented: the call is refused as before).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..capture import runtime
from ..capture.runtime import LoopInfo
from ..errors import source_text, user_source
from .builtins import scalar_builtin
from .traced_array import TracedArray

# the dtypes of Python's numbers, whose NumPy scalars give what the numbers give
_PYTHON_DTYPES = frozenset(map(np.dtype, (np.float64, np.int64, np.bool_, np.complex128)))


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
    if not function.otypes and any(a.dtype not in _PYTHON_DTYPES for a in arrays):
        return NotImplemented  # (NumPy's dtype: its first call's, on NumPy scalars of these)
    shape = tuple(np.broadcast_shapes(*(tuple(a.shape) for a in arrays)))
    flats = [  # (a number: given to each call as the Python number NumPy's vectorize gives)
        a.item() if a.ndim == 0 and not isinstance(a, TracedArray) else _flat(tracer, a, shape)
        for a in arrays
    ]
    count = math.prod(shape)
    pyfunc = function.pyfunc
    module = getattr(pyfunc, "__module__", None) or ""
    source = user_source()
    info = LoopInfo.at(source, f"np.vectorize over each element ({source_text(source)})", ())

    def element(i):
        items = (_python(tracer, flat if np.ndim(flat) == 0 else flat[i]) for flat in flats)
        return runtime.call(module, pyfunc, *items)

    otypes = function.otypes
    made = handler.capture_array(np.array, element, 0, count, 1, info, (), {})
    if made is NotImplemented:
        return NotImplemented
    result = made.reshape(shape)
    return result.astype(otypes[0]) if otypes else result


def _python(tracer: Any, item: Any) -> Any:
    """An element as NumPy's vectorize gives it to ``f``: a Python float or int (its object
    array's items; a float32's value in double precision, an int8's past its range), a bool
    or complex as it is."""
    if not isinstance(item, TracedArray) or item.dtype.kind not in "iuf":
        return item
    kind = float if item.dtype.kind == "f" else int
    return scalar_builtin(tracer, kind, (item,), {})


def _flat(tracer: Any, array: Any, shape: tuple) -> Any:
    """``array`` (traced, or made a constant of the trace) broadcast to ``shape``, raveled."""
    return np.broadcast_to(tracer.wrap(tracer.operand(array)), shape).ravel()
