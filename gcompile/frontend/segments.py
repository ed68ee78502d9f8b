"""Slices whose bounds are read from the data (``A_val[A_row[i]:A_row[i + 1]]``, a row of a
CSR matrix), whose length the data decide: kept as the loop that reads them.

``x[lo:hi]`` of a 1-d traced array, ``lo`` or ``hi`` a traced int that is not a size, is a
``Segment``: its length (a traced int: the bounds as NumPy takes them, a negative one counted
from the end, both clipped to the array) and how its element ``j`` (``x[start + j]``) is
computed. What the code then does with it:

- elementwise math (ufuncs, Python operators, ``np.where``, ``np.clip``, ``astype``) with
  scalars and other segments stays a segment, computed per element; segments of lengths not
  proved equal broadcast as NumPy's arrays do (one of length 1 is read at its first element),
  a ``check`` node raising NumPy's ValueError when the lengths differ otherwise;
- ``y[idx]`` (``idx`` a segment of integers: ``x[cols]``) gathers per element, with NumPy's
  IndexError out of range;
- reductions (``sum``, ``prod``, ``mean``, ``max``, ``min``, ``any``, ``all``, and ``a @ b``,
  ``np.dot``, ``np.inner`` of two segments of one length) are one loop over the elements, the
  while loop of ``for j in range(length)`` (``branches.ControlTracer.capture_range``), adding
  in order in a wider float than NumPy's pairwise sum (float16 in float32, float32 and
  complex64 in double), rounded to NumPy's dtype at the end; ``max`` and ``min`` of no element
  raise NumPy's ValueError (a ``check`` node); ``.size`` is the count.

A segment's elements are computed where it is reduced, in the graph that made it. A write
recorded since the oldest segment it was computed from was made, into an array it reads, is
refused there (NumPy's elementwise results are copies), and so is any write after a gather
(NumPy raises an out-of-range gather before it); an in-place operator on the slice itself
(``s += 1``, a write through NumPy's view) is refused. Anything that needs its length as a
number (``len``, its shape, indexing it, returning it, other NumPy functions) is refused,
naming the line (``data_lengths``).
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..capture.runtime import LoopInfo
from ..errors import source_text, user_source
from ..ir import ops
from ..ir.alias import written_operands
from ..ir.pytree import SliceOf
from .data_lengths import (
    LengthFromData,
    empty_check,
    extreme_identity,
    install_operators,
    mean_dtypes,
)
from .data_regions import array_of
from .masks import MaskedValue, same_value
from .symint import SymInt
from .traced_array import TracedArray

_MISMATCH = "operands could not be broadcast together (slices x[lo:hi] of lengths the data decide)"
_UNALIGNED = "shapes not aligned: slices x[lo:hi] of lengths the data decide differ"
# the dtype a sum of each dtype adds in (NumPy's pairwise sum is as exact: a running total in
# the dtype itself is not)
_WIDER = {
    np.dtype(np.float16): np.dtype(np.float32),
    np.dtype(np.float32): np.dtype(np.float64),
    np.dtype(np.complex64): np.dtype(np.complex128),
}


def slice_with_data_bounds(array: TracedArray, index: Any) -> Segment | DataSlice | None:
    """``array[index]`` when ``index`` is slices, one with a bound read from the data: a
    ``Segment`` for one slice of a 1-d array, else a ``DataSlice``; None for any other
    index."""
    items = index if isinstance(index, tuple) else (index,)
    if not items or not all(isinstance(item, slice) for item in items):
        return None
    if not any(_from_data(b) for item in items for b in (item.start, item.stop)):
        return None
    tracer = array._tracer
    if len(items) > array.ndim:
        raise IndexError(
            f"too many indices for array: array is {array.ndim}-dimensional, but "
            f"{len(items)} were indexed"
        )
    if any(item.step not in (None, 1) for item in items):
        tracer.refuse("a slice with bounds read from the data and a step other than 1")
    sizes = [tracer.symint_value(n.expr) if isinstance(n, SymInt) else n for n in array.shape]
    axes = tuple(a for a, s in enumerate(items) if s.start is not None or s.stop is not None)
    bounds = tuple(
        (
            _clipped(items[a].start, np.int64(0), sizes[a]),
            _clipped(items[a].stop, sizes[a], sizes[a]),
        )
        for a in axes
    )
    if array.ndim != 1:
        return DataSlice(tracer, array, axes, bounds)
    ((start, stop),) = bounds
    length = np.maximum(np.subtract(stop, start), 0)
    segment = Segment(tracer, length, lambda j: array[start + j], array.dtype, (array,))
    segment.view = SliceOf(array, axes, bounds)
    return segment


def _from_data(bound: Any) -> bool:
    return (
        isinstance(bound, TracedArray)
        and bound.ndim == 0
        and bound.dtype.kind in "iu"
        and bound._from_sizes() is None
    )


def _clipped(bound: Any, default: Any, size: Any) -> Any:
    """A slice bound as NumPy takes it: counted from the end when negative, clipped to
    ``[0, size]``; a traced int64 (or ``default`` for None)."""
    if bound is None:
        return default
    if isinstance(bound, TracedArray) and bound.dtype.kind not in "iu":
        raise TypeError("slice indices must be integers or None or have an __index__ method")
    if isinstance(bound, TracedArray) and bound.dtype.kind == "u":
        return np.minimum(bound, size).astype(np.int64)  # (clipped first: 2**63 and above)
    value = bound if isinstance(bound, TracedArray) else np.int64(bound.__index__())
    if isinstance(value, TracedArray) and value.dtype != np.int64:
        value = value.astype(np.int64)
    return np.where(value < 0, np.maximum(value + size, 0), np.minimum(value, size))


class Segment(LengthFromData):
    """``x[lo:hi]`` with bounds from the data, as the loop reading it (see the module
    docstring)."""

    __slots__ = (
        "tracer",
        "length",
        "element",
        "dtype",
        "reads",
        "graph",
        "mark",
        "where",
        "view",
        "gathers",
    )
    NAME = "a slice x[lo:hi] with bounds read from the data"
    HINT = (
        "elementwise math on it, gathers x[idx] by it and reductions (sum, dot, @, mean, max, "
        "min, prod, any, all) compile; else write the loop over range(lo, hi)"
    )

    def __init__(self, tracer, length: Any, element: Callable, dtype, reads: tuple):
        self.tracer, self.length, self.element = tracer, length, element
        self.dtype = np.dtype(dtype)
        self.reads = reads  # the arrays its elements read
        self.graph = tracer.graph
        self.mark = len(tracer.graph.nodes)  # (the nodes recorded since: writes to check)
        self.where = user_source()
        self.view = None  # the slice itself (NumPy's view: a ``SliceOf``), not values from it
        self.gathers = False  # its elements read positions from the data (``x[cols]``)

    @property
    def ndim(self) -> int:
        return 1

    @property
    def size(self) -> TracedArray:
        """The count of elements (a traced Python int, as NumPy's ``.size``)."""
        return self.tracer.call(ops.PYTHON_SCALAR, self.length, kind="int")

    def derived(self, length: Any, element: Callable, dtype, sources: list, reads=()) -> Segment:
        """A segment of ``length`` whose elements are ``element(j)``, computed from the
        segments ``sources`` (this one among them) and the arrays ``reads``."""
        made = Segment(self.tracer, length, element, dtype, reads)
        made.reads += tuple(a for s in sources for a in s.reads)
        made.mark = min(s.mark for s in sources)
        made.graph, made.where = self.graph, self.where
        made.gathers = any(s.gathers for s in sources)
        return made

    def functions(self) -> dict:
        return {
            np.dot: lambda args, kwargs: _dot(*args, **kwargs),
            np.inner: lambda args, kwargs: _dot(*args, **kwargs),
            np.count_nonzero: lambda args, kwargs: (self._only(args, kwargs) != 0).sum(),
        }

    def _only(self, args: tuple, kwargs: dict) -> Segment:
        if len(args) != 1 or kwargs:
            self.refuse("np.count_nonzero with an axis of")
        return self

    # -- elementwise --------------------------------------------------------------------------------
    def elementwise(self, function: Callable, operands: tuple) -> Any:
        """``function`` of the operands' elements, per element."""
        segments = [o for o in operands if isinstance(o, Segment)]
        length, elements = self.aligned(segments)
        parts, stand_ins, reads = [], [], ()
        for operand in operands:
            if isinstance(operand, Segment):
                parts.append(elements[id(operand)])
                stand_ins.append(np.zeros(1, operand.dtype))
            else:
                parts.append(self._scalar(operand))
                stand_ins.append(_stand_in(operand))
                reads += (operand,) if isinstance(operand, TracedArray) else ()
        probe = function(*stand_ins)  # (NumPy's result dtype, from data-free stand-ins)
        if isinstance(probe, tuple):
            self.refuse("a function of several results (np.divmod, np.frexp) of")
        element = lambda j: function(*(part(j) for part in parts))  # noqa: E731
        return self.derived(length, element, probe.dtype, segments, reads)

    def _scalar(self, value: Any) -> Callable:
        """The element function of a scalar operand beside this segment."""
        if isinstance(value, MaskedValue):
            self.refuse("elementwise math between a boolean-mask gather and")
        if not isinstance(value, SymInt):
            ndim = value.ndim if isinstance(value, TracedArray) else np.ndim(value)
            if ndim:
                self.refuse("elementwise math between an array of other length and")
        return lambda j: value

    def aligned(self, segments: list) -> tuple:
        """The broadcast length of ``segments`` (of this one's graph) and each one's element
        function at that length, by ``id``: NumPy's broadcasting of 1-d arrays, a ``check``
        node raising its ValueError for lengths neither equal nor 1."""
        if any(segment.graph is not self.graph for segment in segments):
            self.refuse("elementwise math or a product between segments of two graphs and")
        length = segments[0].length
        for segment in segments[1:]:
            other = segment.length
            if not _same(length, other):
                fits = (length == other) | (length == 1) | (other == 1)
                length = np.where(other == 1, length, other)
                length = self.tracer.call(
                    ops.CHECK, length, fits, error="ValueError", message=_MISMATCH
                )
        return length, {id(s): _spread(s, length) for s in segments}

    def astype(self, dtype, *args, **kwargs) -> Segment:
        return self.elementwise(lambda value: value.astype(dtype, *args, **kwargs), (self,))

    def __matmul__(self, other: Any) -> TracedArray:
        return _dot(self, other)

    def __rmatmul__(self, other: Any) -> TracedArray:
        return _dot(other, self)

    def dot(self, other: Any) -> TracedArray:
        return _dot(self, other)

    # -- gathers ------------------------------------------------------------------------------------
    def gather(self, array: TracedArray) -> Segment:
        """``array[self]``: ``array``'s elements at this segment's integers."""
        if self.dtype.kind not in "iu":
            self.refuse(f"indexing by a {self.dtype} array of")
        if array.ndim != 1:
            self.refuse(f"indexing a {array.ndim}-d array by")
        element = self.element
        made = self.derived(self.length, lambda j: array[element(j)], array.dtype, [self], (array,))
        made.gathers = True
        return made

    # -- reductions ----------------------------------------------------------------------------------
    def fold(self, name: str, initial: Any, combine: Callable) -> TracedArray:
        """``combine(acc, element)`` over the elements in order, from ``initial``: one loop
        over them."""
        self._usable(f"the {name} of")
        source = user_source()
        info = LoopInfo.at(source, f"{name} of x[lo:hi] ({source_text(source)})", ("acc",))

        def body(j, acc):
            return (combine(acc, self.element(j)),)

        after = self.tracer.loops.capture_range(body, 0, self.length, 1, (initial,), info)
        if after is NotImplemented:
            notes = [n for n in self.tracer.loops.notes if not n.rolled]
            self.refuse(f"the {name} of", detail=notes[-1].reason if notes else "")
        return after[0]

    def total(self, name: str, dtype: np.dtype, combine: Callable) -> TracedArray:
        """A sum (``combine``: how each element adds) of ``dtype``, added up in ``_WIDER``."""
        wide = _WIDER.get(dtype, dtype)
        result = self.fold(name, wide.type(0), lambda acc, v: acc + combine(v).astype(wide))
        return result if wide == dtype else result.astype(dtype)

    def _usable(self, use: str) -> None:
        """Refuse ``use`` in another graph than the one that made this segment, after a write
        into an array its elements read, or after any write when it gathers."""
        if self.tracer.graph is not self.graph:
            self.refuse(f"{use} (in a loop body or branch inside the one that made it)")
        arrays = {array_of(array._node) for array in self.reads}
        for node in self.graph.nodes[self.mark :]:
            written = [array_of(node.args[i]) for i in written_operands(node)]
            if written and (self.gathers or any(w in arrays for w in written)):
                self.refuse(
                    f"{use} (its values are read where it is reduced, after a write made "
                    "since: into an array it reads, or anywhere after a gather, which NumPy "
                    "checks at once)"
                )

    def sum(self, axis=None, dtype=None, out=None, keepdims=False):
        self._plain(axis, out, keepdims)
        result = np.sum(np.zeros(0, self.dtype), dtype=dtype).dtype
        return self.total("sum", result, lambda v: v)

    def prod(self, axis=None, dtype=None, out=None, keepdims=False):
        self._plain(axis, out, keepdims)
        result = np.prod(np.zeros(0, self.dtype), dtype=dtype).dtype
        return self.fold("product", result.type(1), lambda acc, v: acc * v.astype(result))

    def any(self, axis=None, out=None, keepdims=False):
        self._plain(axis, out, keepdims)
        return self.fold("any", np.False_, lambda acc, v: np.logical_or(acc, v))

    def all(self, axis=None, out=None, keepdims=False):
        self._plain(axis, out, keepdims)
        return self.fold("all", np.True_, lambda acc, v: np.logical_and(acc, v))

    def mean(self, axis=None, dtype=None, out=None, keepdims=False):
        """NumPy's mean: the sum in its accumulator's dtype over the count (nan of none)."""
        self._plain(axis, out, keepdims)
        wanted, accumulator = mean_dtypes(self.dtype, dtype)
        total = self.sum(dtype=accumulator)
        result = np.true_divide(total, self.length.astype(total.dtype))
        return result if result.dtype == wanted else result.astype(wanted)

    def max(self, axis=None, out=None, keepdims=False):
        self._plain(axis, out, keepdims)
        return self._extreme(np.maximum, "maximum")

    def min(self, axis=None, out=None, keepdims=False):
        self._plain(axis, out, keepdims)
        return self._extreme(np.minimum, "minimum")

    def _extreme(self, function: np.ufunc, name: str) -> TracedArray:
        initial = extreme_identity(self.dtype, name)
        if initial is None:
            self.refuse(f"the {name} of")
        result = self.fold(name, initial, lambda acc, v: function(acc, v))
        return empty_check(self.tracer, result, np.greater(self.length, 0), name)

    def _plain(self, axis: Any, out: Any, keepdims: bool) -> None:
        if out is not None or keepdims or axis not in (None, 0, -1, (0,)):
            self.refuse("a reduction with out=, keepdims=True or an axis of")


def _dot(a: Any, b: Any) -> TracedArray:
    """``a @ b`` of two segments: the sum of their products (of equal lengths: a ``check``
    node raises NumPy's ValueError, a product does not broadcast)."""
    first = a if isinstance(a, Segment) else b
    if not (isinstance(a, Segment) and isinstance(b, Segment)):
        first.refuse("a product of an array of other shape and")
    dtype = np.result_type(a.dtype, b.dtype)
    if dtype.kind == "b":
        first.refuse("a product of booleans of")
    if a.graph is not b.graph:
        first.refuse("a product between segments of two graphs and")
    length = a.length
    if not _same(length, b.length):
        fits = np.equal(length, b.length)
        length = first.tracer.call(ops.CHECK, length, fits, error="ValueError", message=_UNALIGNED)
    ea, eb = a.element, b.element
    products = first.derived(
        length, lambda j: ea(j).astype(dtype) * eb(j).astype(dtype), dtype, [a, b]
    )
    return products.total("dot product", dtype, lambda v: v)


def _spread(segment: Segment, length: Any) -> Callable:
    """``segment``'s element function at the broadcast ``length``: its first element at every
    position when its own length is 1."""
    if _same(segment.length, length):
        return segment.element
    step = (segment.length != 1).astype(np.int64)
    return lambda j: segment.element(j * step)


def _stand_in(value: Any) -> Any:
    """A data-free value promoting as ``value`` does (a weak traced scalar as a Python one)."""
    if isinstance(value, SymInt):
        return 0
    if isinstance(value, TracedArray):
        zero = np.zeros((), value.dtype)
        return zero.item() if value._node.meta.weak else zero
    return value


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, TracedArray) and isinstance(b, TracedArray):
        return same_value(a._node, b._node)
    if isinstance(a, TracedArray) or isinstance(b, TracedArray):
        return False
    return a == b


def _install_in_place(cls: type) -> None:
    """``s += v`` and the other in-place operators (``_in_place``)."""
    for op in ops.OPS:
        name = op.dunder
        if not name or not hasattr(cls, f"__r{name}__"):
            continue
        binary = getattr(cls, f"__{name}__")
        setattr(cls, f"__i{name}__", _in_place(binary))


def _in_place(binary: Callable) -> Callable:
    """``s op= other``: refused on the slice itself (NumPy writes its array through the view),
    else the new values (a computed segment is a copy: Python rebinds the name)."""

    def method(self: Segment, other: Any) -> Segment:
        if self.view is not None:
            self.refuse(
                "an in-place operator (s += ...: a write through NumPy's view) on",
                hint="write the loop over range(lo, hi), or copy the slice first",
            )
        return binary(self, other)

    return method


class DataSlice(LengthFromData):
    """``x[a:b, :c]`` of an array of two or more dimensions with a bound read from the data:
    returned, NumPy's view taken on return (``returned``); any other use refused, naming the
    line."""

    __slots__ = ("tracer", "view", "where")
    NAME = "a slice with bounds read from the data"
    HINT = (
        "return it as it is (the slice is taken as the function returns), or slice a 1-d "
        "array, whose elementwise math and reductions compile"
    )

    def __init__(self, tracer, array: TracedArray, axes: tuple, bounds: tuple):
        self.tracer, self.where = tracer, user_source()
        self.view = SliceOf(array, axes, bounds)

    def elementwise(self, function: Callable, operands: tuple) -> Any:
        self.refuse("elementwise math on")


def returned(value: Any) -> Any:
    """What the function returning ``value`` returns: a slice with bounds read from the data,
    itself, as the view taken on each call (``SliceOf``), else ``value``."""
    view = getattr(value, "view", None) if isinstance(value, (Segment, DataSlice)) else None
    return value if view is None else view


install_operators(Segment)
_install_in_place(Segment)
install_operators(DataSlice)
