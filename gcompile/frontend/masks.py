"""Boolean-mask gathers ``x[mask]``, whose length the data decide, kept at ``x``'s own shape.

``x[m]`` (``m`` a traced boolean array of ``x``'s leading shape) is a ``MaskedValue``: ``x``
whole, and the mask. What the program then does with the gathered values is computed on whole
arrays, with no shape the data decide:

- elementwise math (ufuncs, Python operators, ``np.where``, ``np.clip``) on masked values of one
  mask, scalars and arrays of the trailing shape stays masked, computed on every element;
- ``y[m] = v`` (``v`` a scalar, a masked value of the same mask, or an array of the trailing
  shape, cast to ``y``'s dtype as NumPy's assignment casts) is
  ``y[...] = np.where(m, v, y)``;
- reductions over the gathered axis (``sum``, ``prod``, ``mean``, ``max``, ``min``, ``any``,
  ``all``, methods or NumPy functions) reduce ``np.where(m, values, identity)``; ``max`` and
  ``min`` of no element raise NumPy's ValueError (a ``check`` node); ``.size`` is the count.

Anything else (its shape, ``len``, indexing it, another NumPy function, returning it, math with
a value of another mask or of the mask's length) needs the gathered array itself: ``whole``
makes it once (``np.extract(m, x)``, or ``np.compress(m, x, axis=0)`` for a mask of the
leading axis: a library call whose length ``u0`` the data decide, ``ir/externs.py``), and from
then on the value is that array. Gathers by one mask share their length. Two masks are one when
they are one node, or the same computation on the same values with no write recorded between
them: ``x[x > 0] = x[x > 0] ** 2`` computes ``x > 0`` twice.
"""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from ..ir import ops
from ..ir.alias import memory_of
from ..ir.graph import Node
from ..ir.literals import literal_key
from ..ir.subgraph import subgraphs_of
from .data_lengths import (
    LengthFromData,
    as_arrays,
    empty_check,
    extreme_identity,
    install_operators,
    mean_dtypes,
)
from .symint import SymInt
from .traced_array import TracedArray

_GATHERED = "x[mask]"  # how refusals name a masked value


def mask_of(array: TracedArray, index: Any) -> TracedArray | None:
    """The mask when ``index`` is one traced boolean array (``x[m]``), else None; an ``m``
    that is not of ``array``'s leading shape raises NumPy's IndexError."""
    if isinstance(index, tuple) and len(index) == 1:
        index = index[0]
    if not isinstance(index, TracedArray) or index.dtype != bool:
        return None
    tracer = array._tracer
    if index.ndim == 0:
        tracer.refuse("indexing with a 0-d boolean array x[flag] (its length is the data's)")
    if index.ndim > array.ndim or not _same_shape(index.shape, array.shape[: index.ndim]):
        raise IndexError(
            f"boolean index did not match indexed array along axis 0; shape of the array is "
            f"{tuple(array.shape)} and shape of the boolean index is {tuple(index.shape)}"
        )
    return index


def beside_basic(index: Any) -> tuple[tuple, TracedArray] | None:
    """``(view index, mask)`` when ``index`` holds one traced 1-d boolean array at a position
    after ints only, and ints or slices after it (``X[labels == k, :]``, ``data[m, i]``):
    NumPy's ``X[index]`` is then ``X[view index][mask]``, the view index having a whole slice
    where the mask was; else None."""
    if not isinstance(index, tuple):
        return None
    masks = [i for i, item in enumerate(index) if isinstance(item, TracedArray) and item.ndim]
    if len(masks) != 1 or index[masks[0]].dtype != bool or index[masks[0]].ndim != 1:
        return None
    at = masks[0]
    ints = (int, np.integer, SymInt)
    before, after = index[:at], index[at + 1 :]
    if not all(isinstance(item, ints) and not isinstance(item, bool) for item in before):
        return None
    if not all(isinstance(item, (*ints, slice)) and not isinstance(item, bool) for item in after):
        return None
    return (*before, slice(None), *after), index[at]


def _same_shape(a: tuple, b: tuple) -> bool:
    return len(a) == len(b) and all(x == y for x, y in zip(a, b))


def assign(target: TracedArray, mask: TracedArray, value: Any) -> None:
    """``target[mask] = value`` as ``target[...] = np.where(mask, value, target)``."""
    tracer = target._tracer
    if isinstance(value, SymInt):  # (a size or a loop index: its value at run time)
        value = tracer.symint_value(value.expr)
    if isinstance(value, MaskedValue):
        value = value.values_under(mask, "assigning under another mask")
    elif isinstance(value, TracedArray):
        trailing = target.ndim - mask.ndim
        if value.ndim > trailing and not (value.ndim == trailing + 1 and value.shape[0] == 1):
            tracer.refuse(
                "x[mask] = values: values of the mask's length (the data decide it)",
                hint="write np.where(mask, values_at_x_shape, x), or x[mask] = f(y[mask])",
            )
    else:
        value = np.asarray(value, dtype=target.dtype)  # (NumPy's errors: 300 into uint8...)
    if isinstance(value, TracedArray) and value.dtype != target.dtype:
        value = value.astype(target.dtype)
    tracer.write(target, np.where(_spread(mask, target.ndim), value, target), (Ellipsis,))


def _spread(mask: TracedArray, ndim: int) -> TracedArray:
    """``mask`` with an axis of length 1 for each trailing axis of an ``ndim`` array."""
    return mask if mask.ndim == ndim else mask[(Ellipsis,) + (None,) * (ndim - mask.ndim)]


class MaskedValue(LengthFromData):
    """``values[mask]`` with its values kept at ``values``' shape (see the module docstring)."""

    __slots__ = ("values", "mask", "where", "array", "graph", "anchor")
    NAME = f"a boolean-mask gather {_GATHERED}"
    HINT = "write np.where(mask, x, fill) to keep the shape, or index by np.flatnonzero(mask)"

    def __init__(self, values: TracedArray, mask: TracedArray, where: str | None = None):
        self.values, self.mask = values, mask
        self.where = where  # the user's line that made it (``x[m]``)
        self.array = None  # the gathered array, once a use needs it (``whole``)
        # where it was made: a use after a write gathers there (NumPy's copy was made then)
        self.graph = values._tracer.graph
        self.anchor = self.graph.insertion_anchor()

    def whole(self, use: str) -> TracedArray:
        """The gathered array (made on the first use that needs it: see the module docstring),
        of the values as they were where ``x[m]`` was written: made there when a write may
        have come since, or when it is used in a loop body or branch traced now."""
        if self.array is None:
            tracer = self.tracer
            if tracer.graph is self.graph and not self._written():
                self.array = gather(self.values, self.mask)
            elif tracer.loops.encloses(self.graph):
                with tracer.recording_after(self.graph, self.anchor):
                    self.array = gather(self.values, self.mask)
            else:
                self.refuse(
                    use, detail="after the loop body or branch that made it", made_here=True
                )
        return self.array

    def _current(self, use: str) -> bool:
        """Whether the values can still be read where they are (no write since ``x[m]``);
        else the gathered array is made, as of then (``whole``)."""
        if self.array is None and (self.tracer.graph is not self.graph or self._written()):
            self.whole(use)
        return self.array is None

    def _written(self) -> bool:
        """Whether the memory of the values or of the mask was written since ``x[m]``; when
        one is a loop body's or a branch's placeholder (or a view of one), whether anything
        was: such placeholders may share memory, so no narrower test is safe there (the
        function's own arguments do not: a call passing a written one that overlaps another
        runs eagerly)."""
        graph, nodes = self.graph, (self.values._node, self.mask._node)
        top = self.tracer.loops.is_top(graph)
        if not top and any(memory_of(node).op == "placeholder" for node in nodes):
            return graph.written_after(self.anchor)
        return any(graph.written_after(self.anchor, node) for node in nodes)

    @property
    def tracer(self) -> Any:
        return self.values._tracer

    @property
    def dtype(self) -> np.dtype:
        return self.values.dtype

    @property
    def ndim(self) -> int:
        return self.values.ndim - self.mask.ndim + 1

    @property
    def size(self) -> TracedArray:
        """The count of gathered elements (a traced Python int, as NumPy's ``.size``)."""
        if not self._current("the size of"):
            return self.array.size
        count = np.sum(self.mask) * self.trailing
        return self.tracer.call(ops.PYTHON_SCALAR, count, kind="int")

    @property
    def trailing(self) -> Any:
        """The elements one True of the mask gathers (the product of the trailing sizes)."""
        return math.prod(self.values.shape[self.mask.ndim :])

    def values_under(self, mask: TracedArray, use: str) -> TracedArray:
        """The values, once ``mask`` is proved to be this value's mask; else refused."""
        if not same_value(self.mask._node, mask._node):
            self.refuse(use, detail="the compiler cannot prove the two masks equal")
        if self.array is None and self._written() and self._mask_kept():
            self._snapshot()  # (``Z[M], T[M] = T[M], Z[M]``: Z's values as gathered)
        if not self._current(use):
            self.refuse(use, detail="its array or mask was written since it was gathered")
        return self.values

    def _mask_kept(self) -> bool:
        """Whether the mask's memory was provably not written since ``x[m]``."""
        node = self.mask._node
        if not self.tracer.loops.is_top(self.graph) and memory_of(node).op == "placeholder":
            return False
        return not self.graph.written_after(self.anchor, node) and self.tracer.loops.encloses(
            self.graph
        )

    def _snapshot(self) -> None:
        """The values copied where ``x[m]`` was written (NumPy's gather was made there): at
        the array's own shape, as the masked value keeps them."""
        with self.tracer.recording_after(self.graph, self.anchor):
            self.values = self.values.copy()
        self.anchor = self.values._node

    def __setitem__(self, index: Any, value: Any) -> None:
        self.whole("assigning into")[index] = value  # (the gathered array: a copy, as NumPy's)

    def _shares_mask(self, value: Any) -> bool:
        """Whether ``value`` is kept masked beside this value: a scalar, an array of the
        trailing shape, or a masked value of a mask proved the same, neither made whole."""
        if isinstance(value, MaskedValue):
            return value._current("elementwise math on") and same_value(
                self.mask._node, value.mask._node
            )
        ndim = 0 if isinstance(value, SymInt) else getattr(value, "ndim", None)
        ndim = np.ndim(value) if ndim is None else ndim
        return ndim <= self.values.ndim - self.mask.ndim

    # -- elementwise --------------------------------------------------------------------------------
    def elementwise(self, function: Callable, operands: tuple) -> Any:
        """``function`` of the operands' values at the whole shape, masked again; of the
        gathered arrays when one operand needs them (``whole``)."""
        current = self._current("elementwise math on")
        if not current or not all(self._shares_mask(o) for o in operands):
            return function(*as_arrays(operands, "elementwise math on"))
        values = tuple(self.operand(o) for o in operands)
        result = function(*values)
        if isinstance(result, tuple):
            return tuple(MaskedValue(r, self.mask, self.where) for r in result)
        return MaskedValue(result, self.mask, self.where)

    def operand(self, value: Any) -> Any:
        """An operand of elementwise math beside this value: its values at the whole shape."""
        return value.values if isinstance(value, MaskedValue) else value  # (``_shares_mask``)

    # -- reductions ----------------------------------------------------------------------------------
    def reduce(self, function: Callable, identity: Any, axis: Any, keepdims: bool, **kwargs):
        """``function`` over the gathered axis (``axis`` None or 0) of the values, the masked
        out ones replaced by ``identity``."""
        if keepdims or axis not in (None, 0, -self.ndim) or not self._current("a reduction of"):
            return function(self.whole("a reduction of"), axis=axis, keepdims=keepdims, **kwargs)
        ndim = self.values.ndim
        axes = tuple(range(ndim)) if axis is None else tuple(range(self.mask.ndim))
        kept = np.where(_spread(self.mask, ndim), self.values, self.dtype.type(identity))
        return function(kept, axis=axes, **kwargs)

    def sum(self, axis=None, dtype=None, out=None, keepdims=False):
        self._no_out(out)
        return self.reduce(np.sum, 0, axis, keepdims, dtype=dtype)

    def prod(self, axis=None, dtype=None, out=None, keepdims=False):
        self._no_out(out)
        return self.reduce(np.prod, 1, axis, keepdims, dtype=dtype)

    def any(self, axis=None, out=None, keepdims=False):
        self._no_out(out)
        return self.reduce(np.any, 0, axis, keepdims)

    def all(self, axis=None, out=None, keepdims=False):
        self._no_out(out)
        return self.reduce(np.all, 1, axis, keepdims)

    def mean(self, axis=None, dtype=None, out=None, keepdims=False):
        """NumPy's mean: the sum in the accumulator's dtype over the count (nan of none)."""
        self._no_out(out)
        if keepdims or axis not in (None, 0, -self.ndim) or not self._current("the mean of"):
            return self.whole("the mean of").mean(axis=axis, dtype=dtype, keepdims=keepdims)
        result_dtype, accumulator = mean_dtypes(self.dtype, dtype)
        total = self.reduce(np.sum, 0, axis, keepdims, dtype=accumulator)
        count = np.sum(self.mask)
        if axis is None:
            count = count * self.trailing
        result = np.true_divide(total, count.astype(total.dtype))
        return result if result.dtype == result_dtype else result.astype(result_dtype)

    def max(self, axis=None, out=None, keepdims=False):
        self._no_out(out)
        return self._extreme(np.max, "maximum", axis, keepdims)

    def min(self, axis=None, out=None, keepdims=False):
        self._no_out(out)
        return self._extreme(np.min, "minimum", axis, keepdims)

    def _extreme(self, function: Callable, name: str, axis: Any, keepdims: bool) -> Any:
        identity = extreme_identity(self.dtype, name)
        whole = identity is None or keepdims or axis not in (None, 0, -self.ndim)
        if whole or not self._current(f"the {name} of"):
            return function(self.whole(f"the {name} of"), axis=axis, keepdims=keepdims)
        result = self.reduce(function, identity, axis, keepdims)
        return empty_check(self.tracer, result, np.any(self.mask), name)

    def _no_out(self, out: Any) -> None:
        if out is not None:
            self.refuse("a reduction with out= of")

    def astype(self, dtype, *args, **kwargs) -> Any:
        if not self._current("astype of"):
            return self.array.astype(dtype, *args, **kwargs)
        return MaskedValue(self.values.astype(dtype, *args, **kwargs), self.mask, self.where)


install_operators(MaskedValue)


def gather(values: TracedArray, mask: TracedArray) -> TracedArray:
    """``values[mask]`` as an array: ``np.extract`` of a mask of ``values``' shape, else
    ``np.compress`` along the leading axis (of ``values`` with the mask's axes as one)."""
    if mask.ndim == values.ndim:
        return np.extract(mask, values)
    if mask.ndim > 1:
        rows = math.prod(values.shape[: mask.ndim])
        values, mask = values.reshape((rows,) + tuple(values.shape[mask.ndim :])), mask.ravel()
    return np.compress(mask, values, axis=0)


def same_value(a: Node, b: Node) -> bool:
    """Whether nodes ``a`` and ``b`` of one graph hold the same value: one node, or the same
    pure computation on the same values with no write recorded between them."""
    if a is b:
        return True
    if a.graph is not b.graph:
        return False
    visited: list = []
    if not _same_computation(a, b, visited, depth=8):
        return False
    nodes = a.graph.nodes
    position = {node: i for i, node in enumerate(nodes)}
    first, last = min(position[n] for n in visited), max(position[n] for n in visited)
    return not any(node.is_mutation for node in nodes[first : last + 1])


def _same_computation(a: Any, b: Any, visited: list, depth: int) -> bool:
    if a is b:
        return True
    if not (isinstance(a, Node) and isinstance(b, Node)):
        if isinstance(a, Node) or isinstance(b, Node):
            return False
        return literal_key(a) == literal_key(b)
    visited += [a, b]
    if a.op == "constant" and b.op == "constant":
        return literal_key(np.asarray(a.target)) == literal_key(np.asarray(b.target))
    if depth == 0 or a.op != "call" or b.op != "call" or a.target is not b.target:
        return False
    pure = not (a.is_mutation or subgraphs_of(a) or a.kind in ("creation", "opaque"))
    if not pure or len(a.args) != len(b.args) or literal_key(a.kwargs) != literal_key(b.kwargs):
        return False
    return all(_same_computation(x, y, visited, depth - 1) for x, y in zip(a.args, b.args))
