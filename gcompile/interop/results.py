"""Results given back as the caller's kind of array.

A compiled call whose arguments include arrays of another library (``arrays``) returns its
array results as that library's arrays when the library takes NumPy's memory without a copy:
the type's own ``from_dlpack`` class method (the array API's convention), or
``torch.from_dlpack`` for a type of the ``torch`` package. Otherwise, and for a result the
library refuses to take as it is, the result stays a NumPy array.
"""

from __future__ import annotations

import sys
from typing import Any, Callable

import numpy as np


def converter(kind: type | None) -> Callable[[Any], Any] | None:
    """The function giving a NumPy result back as a ``kind`` array, or None (results stay
    NumPy arrays)."""
    if kind is None:
        return None
    take = _importer(kind)
    if take is None:
        return None

    def convert(result: Any) -> Any:
        if type(result) is not np.ndarray:
            return result  # a scalar, a Python value
        try:
            return take(result)
        except (BufferError, TypeError, ValueError):
            return result  # the library does not take this array as it is (read-only, say)

    return convert


def _importer(kind: type) -> Callable[[np.ndarray], Any] | None:
    """``kind.from_dlpack``, or ``torch.from_dlpack`` for torch's types, or None."""
    if kind.__module__.split(".")[0] == "torch":
        torch = sys.modules.get("torch")
        return getattr(torch, "from_dlpack", None)
    hook = getattr(kind, "from_dlpack", None)
    return hook if callable(hook) else None
