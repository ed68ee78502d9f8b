"""literal_key: a hashable key that is equal for two literals exactly when they behave identically.

Python's ``==`` is too coarse for a compiler: ``1 == 1.0 == True`` although NEP 50
promotes them differently, ``0.0 == -0.0`` although their signs differ, and
``nan != nan``. CSE keys literals with this, and so do the guards of static
arguments.
"""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np

from .graph import Node


def literal_key(value: Any) -> Any:
    """A hashable key equal for two literals exactly when they behave identically."""
    if isinstance(value, Node):
        return ("node", id(value))
    if isinstance(value, (tuple, list)):
        return (type(value).__name__, tuple(literal_key(v) for v in value))
    if isinstance(value, dict):
        return ("dict", tuple((k, literal_key(v)) for k, v in sorted(value.items())))
    if isinstance(value, slice):
        return ("slice", literal_key((value.start, value.stop, value.step)))
    if isinstance(value, np.generic):
        return ("np", value.dtype.str, value.tobytes())
    if isinstance(value, float):
        return ("float", np.float64(value).tobytes())
    if isinstance(value, complex):
        return ("complex", np.complex128(value).tobytes())
    if isinstance(value, np.ndarray):
        return (
            "array",
            value.dtype.str,
            value.shape,
            hashlib.sha256(np.ascontiguousarray(value)).hexdigest(),
        )
    return (type(value).__name__, value)
