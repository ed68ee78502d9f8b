"""``np.einsum`` that is no plain matrix product (``ir/einsum.py`` plans those).

A float contraction of two operands is one batched matrix product (BLAS) of the operands with
their axes grouped, as ``np.tensordot`` does::

    np.einsum("kij,k->ij", G, w)   =>   np.reshape(np.reshape(w, (1, k)) @ np.reshape(G, (k, i*j)), (i, j))

Any other (integers, three operands, a label summed within one operand, a size-1 label that
broadcasts) is the operands broadcast over all the labels, multiplied, and summed over the
labels the output drops (fusion computes the sum from the products without storing them),
in einsum's dtype (an int8 contraction stays int8). Float sums may differ from einsum's in
the last bits. A ``...`` or a label repeated in one operand (a diagonal) is refused.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np


def contraction(rec: Any, subscripts: str, arrays: tuple) -> Any:
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
    if len(arrays) == 2 and dtype.kind in "fc":
        product = _as_batched_product(terms, output, arrays)
        if product is not None:
            return product
    return _by_broadcast(terms, output, arrays, dtype)


def _by_broadcast(terms: list, output: str, arrays: tuple, dtype: np.dtype) -> Any:
    """The operands broadcast over all labels, multiplied, summed over the dropped ones."""
    labels = list(dict.fromkeys(output + "".join(terms)))
    product = None
    for term, x in zip(terms, arrays):
        spread = _spread(x, term, labels)
        product = spread if product is None else product * spread
    dropped = tuple(range(len(output), len(labels)))  # (labels: the output's first)
    result = np.sum(product, axis=dropped, dtype=dtype) if dropped else product
    return result if result.dtype == dtype else result.astype(dtype)


def _as_batched_product(terms: list, output: str, arrays: tuple) -> Any:
    """A float contraction of two operands as one (batched) matrix product, BLAS's: each
    operand's axes grouped as (batch, free, summed) or (batch, summed, free), the operands
    ordered so that neither needs a transposed copy where that is possible (the one whose
    summed labels lead on the right, the one whose summed labels trail on the left). None when
    a label is summed within one operand or broadcast from size 1, nothing is summed, or
    neither operand has a free label (``ijk,ijk->ij``: a dot product per batch item, whose
    products and sum fuse, where a batched product of 1-row matrices would not)."""
    sizes: dict = {}
    for term, x in zip(terms, arrays):
        for label, size in zip(term, x.shape):
            if label in sizes and not sizes[label] == size:
                return None  # (einsum broadcasts a label of size 1: the broadcast form does)
            sizes[label] = size
    (ta, tb), (a, b) = terms, arrays
    if any(
        label not in output and label not in other
        for term, other in ((ta, tb), (tb, ta))
        for label in term
    ):
        return None
    batch = [label for label in output if label in ta and label in tb]
    summed = [label for label in ta if label in tb and label not in output]
    if not summed:
        return None
    free = {
        term: [label for label in output if label in term and label not in batch] for term in terms
    }
    if not free[ta] and not free[tb]:
        return None

    def summed_first(term):
        return [label for label in term if label not in batch][: len(summed)] == summed

    def summed_last(term):
        return [label for label in term if label not in batch][-len(summed) :] == summed

    def untransposed(left, right):  # (both read in memory order: no transposed copy)
        return summed_last(left) and summed_first(right)

    fits, swapped = untransposed(ta, tb), untransposed(tb, ta)
    if not fits and (swapped or summed_first(ta) and not summed_first(tb)):
        (ta, a), (tb, b) = (tb, b), (ta, a)
    left = _grouped(a, ta, batch, free[ta], summed, sizes)
    right = _grouped(b, tb, batch, summed, free[tb], sizes)
    result = np.matmul(left, right)
    labels = batch + free[ta] + free[tb]
    result = np.reshape(result, tuple(sizes[label] for label in labels))
    order = [labels.index(label) for label in output]
    return result if order == list(range(len(order))) else np.transpose(result, order)


def _grouped(x: Any, term: str, batch: list, rows: list, columns: list, sizes: dict) -> Any:
    """``x`` with its axes as ``batch``, then ``rows`` as one axis and ``columns`` as one."""
    order = [term.index(label) for label in batch + rows + columns]
    if order != list(range(len(order))):
        x = np.transpose(x, order)
    shape = [sizes[label] for label in batch]
    shape.append(math.prod(sizes[label] for label in rows))
    shape.append(math.prod(sizes[label] for label in columns))
    return np.reshape(x, tuple(shape))


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
