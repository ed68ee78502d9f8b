"""The dtypes an elementwise op computes in: its operands are converted to them first.

For a ufunc these are NumPy's own loop dtypes (``ufunc.resolve_dtypes``, NEP 50 for Python
scalars); for the elementwise ops that are not ufuncs, the conversions NumPy's functions make
(``where``'s condition to bool and its branches to the result's dtype, ``clip``'s bounds to the
result's, ``complex``'s parts to the real dtype of the result).
"""

from __future__ import annotations

import numpy as np

from ..ir import ops
from ..ir.graph import Node

_TO_RESULT = (ops.CLIP, ops.ASTYPE, ops.COPY, ops.ROUND, ops.PYTHON_SCALAR)


def ufunc_loop(op: ops.OpDef, operands: list, params: dict) -> list | None:
    """The dtypes NumPy's loop for ``op`` uses (inputs then outputs), or None if it has none.

    ``operands`` holds a dtype, or a Python type (``float``) for a weak Python scalar.
    """
    ufunc = op.impl
    # a Python bool is not weak under NEP 50: it is a bool operand like any other
    operands = [np.dtype(bool) if o is bool else o for o in operands]
    if all(isinstance(o, type) for o in operands):  # only weak scalars: NumPy's default dtypes
        operands = [np.dtype(o) for o in operands]  # (else its loop is the object one)
    extra = {}
    if params.get("dtype") is not None:
        extra["signature"] = (None,) * ufunc.nin + (np.dtype(params["dtype"]),) * ufunc.nout
    try:
        resolved = ufunc.resolve_dtypes(tuple(operands) + (None,) * ufunc.nout, **extra)
    except (TypeError, ValueError, np.exceptions.DTypePromotionError):
        return None
    return [np.dtype(d) for d in resolved]


def operand_dtypes(node: Node, kinds: list) -> tuple | None:
    """The dtypes ``node``'s operands (of ``kinds``) are converted to, in order (for a ufunc,
    followed by its outputs'); None when NumPy has no loop or the op is not elementwise."""
    op, out = node.target, node.meta.dtype
    if isinstance(op.impl, np.ufunc):
        loop = ufunc_loop(op, kinds, node.kwargs)
        return None if loop is None else tuple(loop)
    if op is ops.WHERE:
        return (np.dtype(bool), out, out)
    if op in _TO_RESULT:
        return (out,) * len(kinds)
    if op in (ops.REAL, ops.IMAG):
        return (np.dtype(kinds[0]),)  # np.dtype(complex) is complex128, and so on
    if op is ops.COMPLEX:
        part = np.finfo(out).dtype  # float32 of complex64, float64 of complex128
        return (part, part)
    return None
