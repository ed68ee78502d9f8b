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
  ``np.dot``, ``np.inner`` of two segments) are one loop over the elements, the while loop of
  ``for j in range(length)`` (``branches.ControlTracer.capture_range``), accumulating in the
  dtype NumPy's result has, in order (a float sum may differ from NumPy's pairwise one by
  rounding); ``max`` and ``min`` of no element raise NumPy's ValueError (a ``check`` node);
  ``.size`` is the count.

A segment's elements are computed where it is reduced, so a write recorded since it was made
into an array it reads is refused there (NumPy's elementwise results are copies), as is a use
in another graph than the one that made it (a loop body or branch inside). Anything that needs
its length as a number (``len``, its shape, indexing it, returning it, writing through it,
other NumPy functions) is refused, naming the line.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..capture.runtime import LoopInfo
from ..errors import source_text, user_source
from ..ir import ops
from ..ir.alias import written_operands
from .data_regions import array_of
from .masks import REDUCTIONS, MaskedValue, install_operators, same_value
from .symint import SymInt
from .traced_array import DEFERRED, TracedArray

_SEGMENT = "x[lo:hi]"  # how refusals name a segment
_UNALIGNED = "shapes not aligned: slices x[lo:hi] of lengths the data decide differ"
_MISMATCH = "operands could not be broadcast together (slices x[lo:hi] of lengths the data decide)"


def slice_with_data_bounds(array: TracedArray, index: Any) -> Segment | None:
    """``array[index]`` as a ``Segment`` when ``index`` is one slice with a bound read from the
    data; None for any other index."""
    item = index[0] if isinstance(index, tuple) and len(index) == 1 else index
    if not isinstance(item, slice):
        return None
    bounds = (item.start, item.stop)
    if not any(_from_data(b) for b in bounds):
        return None
    tracer = array._tracer
    if array.ndim != 1:
        tracer.refuse(f"a slice with bounds read from the data of a {array.ndim}-d array")
    if item.step not in (None, 1):
        tracer.refuse("a slice with bounds read from the data and a step other than 1")
    size = array.shape[0]
    size = tracer.symint_value(size.expr) if isinstance(size, SymInt) else size
    start = _clipped(item.start, np.int64(0), size)
    stop = _clipped(item.stop, size, size)
    length = np.maximum(np.subtract(stop, start), 0)
    return Segment(tracer, length, lambda j: array[start + j], array.dtype, (array,))


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
    value = bound if isinstance(bound, TracedArray) else np.int64(bound.__index__())
    if isinstance(value, TracedArray) and value.dtype != np.int64:
        value = value.astype(np.int64)
    if np.dtype(bound.dtype if isinstance(bound, TracedArray) else np.int64).kind == "u":
        return np.minimum(value, size)
    return np.where(value < 0, np.maximum(value + size, 0), np.minimum(value, size))


class Segment:
    """``x[lo:hi]`` with bounds from the data, as the loop reading it (see the module
    docstring)."""

    __slots__ = ("tracer", "length", "element", "dtype", "reads", "graph", "mark", "where")
    __array_priority__ = 2000
    __hash__ = None

    def __init__(self, tracer, length: Any, element: Callable, dtype, reads: tuple):
        self.tracer, self.length, self.element = tracer, length, element
        self.dtype = np.dtype(dtype)
        self.reads = reads  # the arrays its elements read
        self.graph = tracer.graph
        self.mark = len(tracer.graph.nodes)
        self.where = user_source()

    @property
    def ndim(self) -> int:
        return 1

    @property
    def size(self) -> TracedArray:
        """The count of elements (a traced Python int, as NumPy's ``.size``)."""
        return self.tracer.call(ops.PYTHON_SCALAR, self.length, kind="int")

    def refuse(self, use: str, detail: str = "", made_here: bool = False) -> None:
        """Refuse a use that needs the segment's length (``use``: "len() of"), at the user's
        current line, or where it was made (``made_here``)."""
        self.tracer.refuse(
            f"{use} a slice {_SEGMENT} with bounds read from the data, whose length the data "
            "decide",
            detail=detail,
            source=self.where if made_here else "",
            hint="elementwise math on it, gathers x[idx] by it and reductions (sum, dot, @, "
            "mean, max, min, prod, any, all) compile; else write the loop over "
            "range(lo, hi)",
        )

    def derived(self, length: Any, element: Callable, dtype, reads: tuple) -> Segment:
        """A segment of ``length`` whose elements are ``element(j)``, reading this one's arrays
        and ``reads``."""
        made = Segment(self.tracer, length, element, dtype, self.reads + reads)
        made.mark, made.graph = self.mark, self.graph
        return made

    # -- elementwise --------------------------------------------------------------------------------
    def elementwise(self, function: Callable, operands: tuple) -> Any:
        """``function`` of the operands' elements, per element."""
        length, elements = self.aligned([o for o in operands if isinstance(o, Segment)])
        parts, stand_ins, reads = [], [], ()
        for operand in operands:
            if isinstance(operand, Segment):
                parts.append(elements[id(operand)])
                stand_ins.append(np.zeros(1, operand.dtype))
                reads += operand.reads
            else:
                parts.append(self._scalar(operand))
                stand_ins.append(_stand_in(operand))
                reads += (operand,) if isinstance(operand, TracedArray) else ()
        dtype = function(*stand_ins).dtype  # (NumPy's result dtype, from data-free stand-ins)
        return self.derived(length, lambda j: function(*(part(j) for part in parts)), dtype, reads)

    def _scalar(self, value: Any) -> Callable:
        """The element function of a scalar operand beside this segment."""
        ndim = value.ndim if isinstance(value, TracedArray) else np.ndim(value)
        if ndim or isinstance(value, MaskedValue):
            self.refuse("elementwise math between an array of other length and")
        return lambda j: value

    def same_graph(self, segments: list) -> None:
        """Refuse segments made in another graph than this one (their lengths are its values)."""
        if any(segment.graph is not self.graph for segment in segments):
            self.refuse("elementwise math or a product between segments of two graphs and")

    def aligned(self, segments: list) -> tuple:
        """The broadcast length of ``segments`` (this one's graph, not written since) and each
        one's element function at that length, by ``id``: NumPy's broadcasting of 1-d arrays,
        a ``check`` node raising its ValueError for lengths neither equal nor 1."""
        self.same_graph(segments)
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

    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
        if method != "__call__" or kwargs.get("out") is not None or len(inputs) > ufunc.nin:
            self.refuse(f"np.{ufunc.__name__}.{method} or out= on")
        return self.elementwise(lambda *values: ufunc(*values, **kwargs), inputs)

    def __array_function__(self, func: Callable, types: tuple, args: tuple, kwargs: dict) -> Any:
        reduction = REDUCTIONS.get(func)
        if reduction is not None and isinstance(args[0], Segment):
            return getattr(args[0], reduction)(*args[1:], **kwargs)
        if func in (np.dot, np.inner) and len(args) == 2 and not kwargs:
            return _dot(*args)
        if func in (np.where, np.clip):
            return self.elementwise(lambda *values: func(*values, **kwargs), args)
        if func is np.count_nonzero and len(args) == 1 and not kwargs:
            return (self != 0).sum()
        self.refuse(f"np.{func.__name__} of")

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
        return self.derived(self.length, lambda j: array[element(j)], array.dtype, (array,))

    # -- reductions ----------------------------------------------------------------------------------
    def fold(self, name: str, initial: Any, combine: Callable) -> TracedArray:
        """``combine(acc, element)`` over the elements in order, from ``initial``: one loop
        over the bounds."""
        self._usable(f"the {name} of")
        source = user_source()
        filename, _, line = (source or "<unknown>:0").rpartition(":")
        line = int(line)
        text = f"{name} of {_SEGMENT} ({source_text(source)})"
        info = LoopInfo(filename, line, line, "j", ("acc",), text, "range")

        def body(j, acc):
            return (combine(acc, self.element(j)),)

        after = self.tracer.loops.capture_range(body, 0, self.length, 1, (initial,), info)
        if after is NotImplemented:
            notes = [n for n in self.tracer.loops.notes if not n.rolled]
            self.refuse(f"the {name} of", detail=notes[-1].reason if notes else "")
        return after[0]

    def _usable(self, use: str) -> None:
        """Refuse ``use`` in another graph than the one that made this segment, or after a write
        into an array its elements read (theirs would be NumPy's values before it)."""
        if self.tracer.graph is not self.graph:
            self.refuse(f"{use} (in a loop body or branch inside the one that made it)")
        arrays = {array_of(array._node) for array in self.reads}
        for node in self.graph.nodes[self.mark :]:
            if any(array_of(node.args[i]) in arrays for i in written_operands(node)):
                self.refuse(
                    f"{use} (after a write into an array it reads: NumPy's value is from before)"
                )

    def sum(self, axis=None, dtype=None, out=None, keepdims=False):
        self._plain(axis, out, keepdims)
        total = np.sum(np.zeros(0, self.dtype), dtype=dtype).dtype
        return self.fold("sum", total.type(0), lambda acc, v: acc + v.astype(total))

    def prod(self, axis=None, dtype=None, out=None, keepdims=False):
        self._plain(axis, out, keepdims)
        total = np.prod(np.zeros(0, self.dtype), dtype=dtype).dtype
        return self.fold("product", total.type(1), lambda acc, v: acc * v.astype(total))

    def any(self, axis=None, out=None, keepdims=False):
        self._plain(axis, out, keepdims)
        return self.fold("any", np.False_, lambda acc, v: np.logical_or(acc, v))

    def all(self, axis=None, out=None, keepdims=False):
        self._plain(axis, out, keepdims)
        return self.fold("all", np.True_, lambda acc, v: np.logical_and(acc, v))

    def mean(self, axis=None, dtype=None, out=None, keepdims=False):
        """NumPy's mean: the sum in its accumulator's dtype over the count (nan of none)."""
        self._plain(axis, out, keepdims)
        wanted = np.mean(np.zeros(1, self.dtype), dtype=dtype).dtype
        accumulator = np.float32 if wanted == np.float16 else wanted
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
        kind = self.dtype.kind
        if kind == "c":
            self.refuse(f"the {name} of")
        lowest = name == "maximum"
        if kind == "f":
            initial = self.dtype.type(-np.inf if lowest else np.inf)
        elif kind == "b":
            initial = np.bool_(not lowest)
        else:
            info = np.iinfo(self.dtype)
            initial = self.dtype.type(info.min if lowest else info.max)
        result = self.fold(name, initial, lambda acc, v: function(acc, v))
        message = f"zero-size array to reduction operation {name} which has no identity"
        present = np.greater(self.length, 0)
        return self.tracer.call(ops.CHECK, result, present, error="ValueError", message=message)

    def _plain(self, axis: Any, out: Any, keepdims: bool) -> None:
        if out is not None or keepdims or axis not in (None, 0, -1, (0,)):
            self.refuse("a reduction with out=, keepdims=True or an axis of")

    # -- uses that need the length --------------------------------------------------------------------
    @property
    def shape(self) -> tuple:
        self.refuse("the shape of")

    def __len__(self) -> int:
        self.refuse("len() of")

    def __iter__(self):
        self.refuse("iterating over")

    def __getitem__(self, index: Any) -> Any:
        self.refuse("indexing")

    def __setitem__(self, index: Any, value: Any) -> None:
        self.refuse("assigning into")

    def __bool__(self) -> bool:
        self.refuse("bool() of")

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        self.refuse("converting to a NumPy array")

    def __getattr__(self, name: str) -> Any:
        if hasattr(np.ndarray, name) and not name.startswith("__"):
            self.refuse(f"the method or attribute .{name} of")
        raise AttributeError(f"'Segment' object has no attribute {name!r}")


def _dot(a: Any, b: Any) -> TracedArray:
    """``a @ b`` of two segments: the sum of their products (of equal lengths: a ``check``
    node raises NumPy's ValueError, a product does not broadcast)."""
    first = a if isinstance(a, Segment) else b
    if not (isinstance(a, Segment) and isinstance(b, Segment)):
        first.refuse("a product of an array of other shape and")
    dtype = np.result_type(a.dtype, b.dtype)
    if dtype.kind == "b":
        first.refuse("a product of booleans of")
    first.same_graph([a, b])
    length = a.length
    if not _same(length, b.length):
        fits = np.equal(length, b.length)
        length = first.tracer.call(ops.CHECK, length, fits, error="ValueError", message=_UNALIGNED)
    ea, eb = a.element, b.element
    products = first.derived(
        length, lambda j: ea(j).astype(dtype) * eb(j).astype(dtype), dtype, b.reads
    )
    return products.fold("dot product", dtype.type(0), lambda acc, v: acc + v)


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


install_operators(Segment)
DEFERRED.add(Segment)
