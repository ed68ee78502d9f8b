"""Which ``np.einsum`` calls are matrix products, and how to write them as ``matmul``.

``np.einsum('bij,bjk->bik', a, b)`` is ``a @ b``; ``'ij,kj->ik'`` is ``a @ b.T``. A two-operand
einsum whose subscripts contract exactly one label, keep at most one label of each operand
alone (the rows of the first, the columns of the second), and name the shared labels (and a
leading ``...``) first in the output is planned here as: transpose each operand to
``(batch..., rows, k)`` and ``(batch..., k, columns)``, add a size-1 axis where a side has no
rows or columns but has batch axes, ``matmul``, and drop the added axis again.

Everything else (three operands, diagonals ``'ii->i'``, sums ``'ij->'``, outer products, an
output in another order, a dot product per batch item ``'ijk,ijk->ij'``) has no plan: the caller refuses it with the reason given.

The result has the memory order eager einsum gives it (``order='K'`` follows the operands):
C order as planned, F order (two axes) as the transpose of the product of the transposed
operands; any other order is refused.

The product then runs through BLAS, as ``np.einsum(..., optimize=True)`` does; NumPy's default
einsum sums in its own order, so float results may differ in the last bits (integer results
are the same).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .meta import broadcast_shapes
from .shape_env import decide, hint


@dataclass(frozen=True)
class MatmulPlan:
    """How to compute an einsum as ``matmul``: operand permutations and the size-1 axes added."""

    a_axes: tuple  # transpose of the first operand to (batch..., rows?, k)
    b_axes: tuple  # transpose of the second operand to (batch..., k, columns?)
    a_row_added: bool  # a size-1 row axis goes in before k (then dropped from the result)
    b_column_added: bool  # a size-1 column axis goes in after k (then dropped from the result)


def _split(subscripts: str, ndims: tuple) -> tuple | str:
    """``(a, b, output)`` terms with ``...`` written ``'.'``, or why they are not handled."""
    text = subscripts.replace(" ", "")
    inputs, arrow, output = text.partition("->")
    terms = inputs.split(",")
    if len(terms) != 2 or len(ndims) != 2:
        return "an einsum of other than two operands"
    parsed = []
    for term in terms + ([output] if arrow else []):
        body = term[3:] if term.startswith("...") else term
        if not all(c.isalpha() and c.isascii() for c in body) or len(set(body)) != len(body):
            return "an einsum with repeated labels (diagonals) or an ellipsis not in front"
        parsed.append(("." if len(body) != len(term) else "") + body)
    if not arrow:  # implicit output: the ellipsis, then the labels used once, sorted
        both = parsed[0] + parsed[1]
        once = sorted(c for c in set(both) - {"."} if both.count(c) == 1)
        parsed.append(("." if "." in both else "") + "".join(once))
    for term, ndim in zip(parsed[:2], ndims):
        if len(term.lstrip(".")) > ndim or "." not in term and len(term) != ndim:
            return None  # NumPy's own error for a wrong number of labels
    return parsed[0], parsed[1], parsed[2]


def matmul_plan(subscripts: str, a_shape: tuple, b_shape: tuple) -> MatmulPlan | str | None:
    """The plan for ``np.einsum(subscripts, a, b)``; a reason (str) when it is no matrix product.

    ``None`` when the call is an error in NumPy (wrong label count, sizes that do not match):
    the caller refuses too, and the eager call then raises NumPy's own error.
    """
    split = _split(subscripts, (len(a_shape), len(b_shape)))
    if not isinstance(split, tuple):
        return split
    a, b, out = split
    if "." in out and not ("." in a or "." in b) or "." in (a + b) and not out.startswith("."):
        return "an einsum whose ellipsis is not kept in front of the output"
    la, lb, lo = set(a) - {"."}, set(b) - {"."}, out.lstrip(".")
    contracted = (la & lb) - set(lo)
    rows, columns = la - lb, lb - la
    batch = [c for c in lo if c in la and c in lb]
    if len(contracted) != 1 or not (rows | columns) <= set(lo) or set(lo) - (la | lb):
        return f"einsum {subscripts!r} is not a matrix product (one label summed, the others kept)"
    if len(rows) > 1 or len(columns) > 1 or list(lo) != batch + sorted(rows) + sorted(columns):
        return f"einsum {subscripts!r} is not a matrix product in matmul's output order"
    if batch and not rows and not columns:  # (products and their sum fuse; 1x1 products not)
        return f"einsum {subscripts!r} is a dot product per batch item, not a matrix product"
    (k,) = contracted
    a_dims, b_dims = _dims(a, a_shape), _dims(b, b_shape)
    if a_dims is None or b_dims is None:
        return None
    a_ellipsis = list(range(len(a_shape) - len(la)))
    b_ellipsis = list(range(len(b_shape) - len(lb)))
    try:
        if not decide("==", a_dims[k][1], b_dims[k][1], "einsum: the contracted sizes"):
            return None
        for c in batch:
            broadcast_shapes((a_dims[c][1],), (b_dims[c][1],))
        broadcast_shapes(
            tuple(a_shape[i] for i in a_ellipsis), tuple(b_shape[i] for i in b_ellipsis)
        )
    except ValueError:
        return None
    a_order = a_ellipsis + [a_dims[c][0] for c in [*batch, *sorted(rows), k]]
    b_order = b_ellipsis + [b_dims[c][0] for c in [*batch, k, *sorted(columns)]]
    batched = bool(batch) or "." in out
    return MatmulPlan(tuple(a_order), tuple(b_order), batched and not rows, batched and not columns)


def _dims(term: str, shape: tuple) -> dict | None:
    """Per label, ``(axis, size)`` in an operand of ``shape`` (the ellipsis takes the rest)."""
    letters = term.lstrip(".")
    first = len(shape) - len(letters)
    if first < 0:
        return None
    return {c: (first + i, shape[first + i]) for i, c in enumerate(letters)}


def eager_result(subscripts: str, operands: tuple) -> tuple | str:
    """``(dtype, order)`` of what eager einsum returns (order ``"C"`` or ``"F"``), or a reason.

    Asked of NumPy on stand-ins of at most 2 per axis in each operand's order (einsum orders its
    output by the operands' strides, which such stand-ins rank the same way).
    """
    probes = []
    for x in operands:
        if not (x.flags.c_contiguous or x.flags.f_contiguous):
            return "np.einsum of a strided operand (its result's memory order is NumPy's choice)"
        sizes = x.meta.shape if hasattr(x, "meta") else x.shape
        shape = tuple(2 if decide(">=", s, 2, "einsum's memory order") else hint(s) for s in sizes)
        probes.append(np.ones(shape, x.dtype, order="C" if x.flags.c_contiguous else "F"))
    result = np.asarray(np.einsum(subscripts, *probes))
    if result.flags.c_contiguous:
        return result.dtype, "C"
    if result.flags.f_contiguous and result.ndim == 2:
        return result.dtype, "F"
    return "np.einsum whose result NumPy lays out in neither C nor two-axis F order"
