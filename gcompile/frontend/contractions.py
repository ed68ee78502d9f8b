"""``np.einsum`` that is no matrix product (``ir/einsum.py`` plans those): the operands
broadcast over all the labels, multiplied, and summed over the labels the output drops::

    np.einsum("kij,k->ij", G, w)   =>   np.sum(G * w[:, None, None], axis=0)

Fusion computes the sum from the products without storing them. The result has einsum's dtype
(the sum accumulates in it, as einsum does: an int8 contraction stays int8) and C order; the
sum's order may differ from einsum's in the last bits of a float. A ``...`` or a label
repeated in one operand (a diagonal) is refused.
"""

from __future__ import annotations

from typing import Any

import numpy as np


def by_broadcast(rec: Any, subscripts: str, arrays: tuple) -> Any:
    """``np.einsum(subscripts, *arrays)`` of traced arrays (see the module docstring)."""
    probes = [np.ones((1,) * x.ndim, x.dtype) for x in arrays]
    dtype = np.asarray(np.einsum(subscripts, *probes)).dtype  # (NumPy's errors, as eager's)
    inputs, arrow, output = subscripts.replace(" ", "").partition("->")
    terms = inputs.split(",")
    if "." in subscripts:
        rec.refuse("np.einsum with '...' that is not a matrix product", hint=_HINT)
    if any(len(set(term)) != len(term) for term in terms):
        rec.refuse("np.einsum with a label repeated in one operand (a diagonal)", hint=_HINT)
    if not arrow:  # implicit output: the labels used once, in alphabetical order
        output = "".join(sorted(c for c in set(inputs) - {","} if inputs.count(c) == 1))
    labels = list(dict.fromkeys(output + "".join(terms)))
    product = None
    for term, x in zip(terms, arrays):
        spread = _spread(x, term, labels)
        product = spread if product is None else product * spread
    dropped = tuple(range(len(output), len(labels)))
    result = np.sum(product, axis=dropped, dtype=dtype) if dropped else product
    return result if result.dtype == dtype else result.astype(dtype)


def _spread(x: Any, term: str, labels: list) -> Any:
    """``x`` (axes named by ``term``) with its axes in ``labels`` order and a size-1 axis for
    each label it does not have."""
    order = sorted(range(len(term)), key=lambda axis: labels.index(term[axis]))
    if order != list(range(len(term))):
        x = np.transpose(x, order)
    present = {term[axis] for axis in order}
    index = tuple(slice(None) if label in present else None for label in labels)
    return x if len(index) == x.ndim else x[index]


_HINT = "write it with NumPy operations (multiply, then sum over the dropped axes)"
