"""Numba source text of dtypes, literals and conversions (shared by the rules and the renderer)."""

from __future__ import annotations

import cmath
import math
from typing import Any

import numpy as np


def type_name(dtype: np.dtype) -> str:
    """The Numba-callable constructor of ``dtype`` (``np.float32``)."""
    return "np.bool_" if dtype == np.bool_ else f"np.{np.dtype(dtype).name}"


def cast(expr: str, source: np.dtype, target: np.dtype) -> str:
    """``expr`` of dtype ``source`` converted as NumPy's ``astype`` would (unsafe casting)."""
    source, target = np.dtype(source), np.dtype(target)
    if source == target:
        return expr
    if target == np.bool_:
        return f"({expr} != 0)"
    if source.kind == "c" and target.kind != "c":
        return f"{type_name(target)}(({expr}).real)"
    return f"{type_name(target)}({expr})"


def literal(value: Any, dtype: np.dtype) -> str:
    """A Python or NumPy scalar as source text of ``dtype``."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return repr(bool(value))
    if dtype.kind == "c":
        value = complex(value)
        return f"{type_name(dtype)}(complex({_float_text(value.real)}, {_float_text(value.imag)}))"
    if dtype.kind == "f":
        text = _float_text(float(value))
        return text if dtype == np.float64 else f"{type_name(dtype)}({text})"
    text = repr(int(value))
    return text if dtype == np.int64 else f"{type_name(dtype)}({text})"


def untyped_literal(value: Any) -> str:
    """A Python literal as source text (a float's infinities and NaN through ``np``, which
    ``repr`` would write as the unknown names ``inf`` and ``nan``)."""
    if type(value) is float:
        return _float_text(value)
    if type(value) is complex and not cmath.isfinite(value):
        return f"complex({_float_text(value.real)}, {_float_text(value.imag)})"
    return repr(value)


def _float_text(value: float) -> str:
    if math.isnan(value):
        return "np.nan"
    if math.isinf(value):
        return "np.inf" if value > 0 else "-np.inf"
    return repr(value)
