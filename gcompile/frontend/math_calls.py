"""Python's ``math`` functions of traced scalars (``math.exp(x[i])``): NumPy's ufunc of the
value as a float64, a weak Python float again (or a Python int, a bool), with Python's errors.

``math`` raises where NumPy returns a special value: ``math.sqrt(-1.0)`` and ``math.log(0.0)``
raise ``ValueError('math domain error')``, ``math.exp(1000.0)`` ``OverflowError('math range
error')``, ``math.floor(nan)`` Python's error of ``int(nan)``. Each becomes a ``check`` node
that raises that error on the call where it happens (NaN passes, as ``math`` lets it through).
"""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from ..ir import ops


def _below(bound: float) -> Callable:
    return lambda x: ~(x < bound)


def _at_most(bound: float) -> Callable:
    return lambda x: ~(x <= bound)


def _finite(x):
    return ~np.isinf(x)


def _within(bound: float, closed: bool) -> Callable:
    return (lambda x: ~(np.abs(x) > bound)) if closed else (lambda x: ~(np.abs(x) >= bound))


# math function -> (NumPy ufunc, the values math accepts (None: all), whether it can overflow)
_FLOAT = {
    math.exp: (np.exp, None, True),
    math.expm1: (np.expm1, None, True),
    math.log: (np.log, _at_most(0.0), False),
    math.log2: (np.log2, _at_most(0.0), False),
    math.log10: (np.log10, _at_most(0.0), False),
    math.log1p: (np.log1p, _at_most(-1.0), False),
    math.sqrt: (np.sqrt, _below(0.0), False),
    math.sin: (np.sin, _finite, False),
    math.cos: (np.cos, _finite, False),
    math.tan: (np.tan, _finite, False),
    math.asin: (np.arcsin, _within(1.0, True), False),
    math.acos: (np.arccos, _within(1.0, True), False),
    math.atan: (np.arctan, None, False),
    math.sinh: (np.sinh, None, True),
    math.cosh: (np.cosh, None, True),
    math.tanh: (np.tanh, None, False),
    math.asinh: (np.arcsinh, None, False),
    math.acosh: (np.arccosh, _below(1.0), False),
    math.atanh: (np.arctanh, _within(1.0, False), False),
    math.fabs: (np.abs, None, False),
    math.degrees: (np.degrees, None, False),
    math.radians: (np.radians, None, False),
}
_TWO = {math.atan2: np.arctan2, math.copysign: np.copysign}
_ROUNDING = {math.floor: np.floor, math.ceil: np.ceil, math.trunc: np.trunc}
_TESTS = {math.isnan: np.isnan, math.isinf: np.isinf, math.isfinite: np.isfinite}


def math_call(tracer, function: Callable, args: tuple, kwargs: dict, to_int: Callable) -> Any:
    """``function(*args)`` for a ``math`` function of traced real scalars, or NotImplemented
    (Python runs it: a traced value then refuses with its reason). ``to_int``: ``int()`` of a
    traced float, with Python's errors."""
    values = _real_scalars(tracer, args) if not kwargs else None
    if values is None or not any(tracer.is_traced(v) for v in values):
        return NotImplemented
    if function in _FLOAT and len(values) == 1:
        return _float_function(tracer, *_FLOAT[function], values[0])
    if function in _TWO and len(values) == 2:
        return _python_float(tracer, _TWO[function](*values))
    if function in _ROUNDING and len(values) == 1:
        return to_int(_ROUNDING[function](values[0]))
    if function in _TESTS and len(values) == 1:
        return _TESTS[function](values[0])
    return NotImplemented


def _real_scalars(tracer, args: tuple) -> list | None:
    """The arguments as float64 values (Python numbers as they are), or None if one is not a
    real scalar."""
    values = []
    for value in args:
        if tracer.is_traced(value):
            if value.ndim or value.dtype.kind not in "biuf":
                return None
            values.append(value.astype(np.float64))
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            values.append(float(value))
        else:
            return None
    return values


def _float_function(tracer, ufunc, accepts, overflows: bool, x) -> Any:
    result = ufunc(x)
    if accepts is not None:
        result = _raise_unless(tracer, result, accepts(x), "ValueError", "math domain error")
    if overflows:
        fits = ~(np.isinf(result) & ~np.isinf(x))
        result = _raise_unless(tracer, result, fits, "OverflowError", "math range error")
    return _python_float(tracer, result)


def _raise_unless(tracer, result, holds, error: str, message: str):
    return tracer.call(ops.CHECK, result, holds, error=error, message=message)


def _python_float(tracer, value):
    return tracer.call(ops.PYTHON_SCALAR, value, kind="float")
