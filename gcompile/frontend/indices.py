"""The indices of traced arrays, as the recorder takes them: a basic index (ints, sizes,
slices, ``None``, ``...``) normalised for a ``getitem`` or ``setitem`` node, one element (or a
region beside them) read or written at positions that come from the data (``element``, ``put``),
and a gather by an integer array (``np.take``).
Anything else is refused, naming the construct.

A part of the recorder (``recorder.Tracer``), which provides ``refuse``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..ir import ops
from ..ir.layout import expanded_index
from ..ir.shape_env import data_sizes_in
from . import masks, segments
from .symint import SymInt, unwrap
from .traced_array import TracedArray, holds_traced


def integer_array(tracer: Any, value: Any) -> Any:
    """``value`` as an integer array index (traced, or a list, range or array of ints of one
    or more axes; a list of sizes or traced ints: ``A[[i, p]]``), else None."""
    if isinstance(value, list) and any(isinstance(v, (SymInt, TracedArray)) for v in value):
        items = [v.value() if isinstance(v, SymInt) else v for v in value]
        if not all(isinstance(v, (TracedArray, int, np.integer)) for v in items):
            return None
        value = tracer.sequence_as_array(items)
    elif isinstance(value, (list, np.ndarray, range)) and not holds_traced(value):
        value = np.asarray(value)  # (a range: NumPy's index of its ints, ``x[range(n), y]``)
    elif not isinstance(value, TracedArray):
        return None
    return value if value.dtype.kind in "iu" and value.ndim > 0 else None


class Indices:
    """The tracer's reading of indices (see the module docstring)."""

    def gather_by_indices(self, array: TracedArray, index: Any) -> TracedArray | None:
        """``array[idx]``, ``idx`` an integer array (traced, or a list or array of ints): NumPy's
        copy, ``np.take(array, idx, axis=0)`` (a library call, ``ir/externs``); None for any
        other index."""
        if isinstance(index, tuple) and len(index) == 1:
            index = index[0]
        if isinstance(index, tuple):
            return self._gather_beside_basic(array, index)
        index = integer_array(self, index)
        if index is None or array.ndim == 0:
            return None
        return np.take(array, index, axis=0)

    def _gather_beside_basic(self, array: TracedArray, index: tuple) -> TracedArray | None:
        """``A[i, idx]``, ``A[:, idx]``, ``A[1:, idx, 2]``: one integer array beside ints and
        slices, the array and the ints adjacent (NumPy then keeps the gathered axes in place):
        ``np.take`` of the basic part along the array's axis (an ``...`` among them stands for
        its full slices: ``A[idx, ...]``). None for any other index."""
        if any(item is Ellipsis for item in index) and not any(item is None for item in index):
            index = expanded_index(index, array.ndim)
        found = [integer_array(self, item) for item in index]
        arrays = [j for j, item in enumerate(found) if item is not None]
        if len(arrays) == len(index) > 1:  # (``A[rows, cols]``, ``A[np.nonzero(m)]``)
            return self._gather_at_positions(array, found)
        if len(arrays) > 1 and arrays == list(range(len(arrays))):  # (``img[iy, ix, 0]``)
            return self._gather_then_basic(array, found[: len(arrays)], index[len(arrays) :])
        if len(arrays) != 1 or len(index) > array.ndim:
            return None
        (at,) = arrays
        for item in index[:at] + index[at + 1 :]:
            exact = isinstance(item, (int, np.integer, SymInt)) and not isinstance(item, bool)
            if not (exact or isinstance(item, slice)):
                return None
        advanced = [j for j, item in enumerate(index) if j == at or not isinstance(item, slice)]
        if advanced[-1] - advanced[0] + 1 != len(advanced):
            return None  # (apart: NumPy moves the gathered axes first)
        basic = tuple(slice(None) if j == at else item for j, item in enumerate(index))
        axis = sum(isinstance(item, slice) for item in index[:at])
        return np.take(array[basic], found[at], axis=axis)

    def _gather_then_basic(self, array: TracedArray, positions: list, rest: tuple) -> Any:
        """``A[i0, i1, j, :]``: integer arrays on the leading axes, ints and slices after them.
        NumPy puts the gathered axes first (beside the ints, or apart from them by a slice), so
        this is the gather at those positions indexed by the rest on the axes after its own.
        None for other items after the arrays."""
        for item in rest:
            exact = isinstance(item, (int, np.integer, SymInt)) and not isinstance(item, bool)
            if not (exact or isinstance(item, slice)):
                return None
        gathered = self._gather_at_positions(array, positions)
        if gathered is None:
            return None
        own = gathered.ndim - (array.ndim - len(positions))
        return gathered[(slice(None),) * own + tuple(rest)]

    def _gather_at_positions(self, array: TracedArray, positions: list) -> TracedArray | None:
        """``A[i0, i1, ...]``, one integer array per leading axis, their shapes broadcast
        together (``img[iy, ix]``, ``iy`` and ``ix`` of one shape): the rows at those positions
        (``np.take`` of ``A`` with those axes as one, at the flat positions), each position's
        range checked against its own axis as NumPy's is (an IndexError)."""
        if len(positions) > array.ndim:
            return None
        flat = 0
        positions = [p if p.dtype == np.int64 else p.astype(np.int64) for p in positions]
        for axis, p in enumerate(positions):  # (in int64: int16 positions would wrap)
            size = array.shape[axis]
            inside = np.all((p >= -size) & (p < size))
            known = "" if isinstance(size, SymInt) else f" with size {size}"
            message = f"an index is out of bounds for axis {axis}{known}"
            wrapped = np.where(p < 0, p + size, p)  # (a fresh value: ``check`` hands it on)
            wrapped = self.call(ops.CHECK, wrapped, inside, error="IndexError", message=message)
            flat = flat * size + wrapped
        rows = math.prod(array.shape[: len(positions)])
        merged = array.reshape((rows,) + tuple(array.shape[len(positions) :]))
        return np.take(merged, flat, axis=0)

    def segment(self, array: TracedArray, index: Any) -> segments.Segment | None:
        """``array[idx]`` of a segment ``idx`` (a gather by it), or ``array[lo:hi]`` with a bound
        read from the data: a ``Segment`` (``segments``); None for any other index."""
        item = index[0] if isinstance(index, tuple) and len(index) == 1 else index
        if isinstance(item, segments.Segment):
            return item.gather(array)
        return segments.slice_with_data_bounds(array, index)

    def positions_on_data_sizes(self, array: TracedArray, index: Any) -> Any:
        """``index`` with each int (or size) on an axis whose length the data decide (``u0``)
        as a traced position, whose range the program checks when it runs (``element``,
        ``put``: NumPy's IndexError), since no guard can stand for it."""
        if not data_sizes_in(array.meta.shape):
            return index
        given = index if isinstance(index, tuple) else (index,)
        if any(i is None or i is Ellipsis for i in given) or len(given) > array.ndim:
            return index
        found = list(given)
        for axis, item in enumerate(given):
            exact = isinstance(item, (int, np.integer)) and not isinstance(item, (bool, np.bool_))
            if (exact or isinstance(item, SymInt)) and data_sizes_in(array.meta.shape[axis]):
                found[axis] = self.symint_value(unwrap(item))
        return tuple(found) if isinstance(index, tuple) else found[0]

    def element_index(self, array: TracedArray, index: Any) -> tuple | None:
        """``(template, positions)`` when ``index`` picks one element of ``array``, or a region
        (slices, ``...`` or fewer indices than axes beside them: ``A[k]``, ``A[k, 1:]``), with
        some positions read from the data (traced 0-d ints): the template holds the other
        positions (ints, sizes) and the slices, None where a traced one goes. None for any
        other index (``np.newaxis`` or an array among them: refused later)."""
        given = index if isinstance(index, tuple) else (index,)
        if any(i is None for i in given) or not any(isinstance(i, TracedArray) for i in given):
            return None
        items = expanded_index(given, array.ndim)  # (``...`` and the trailing axes as slices)
        if len(items) != len(given) and not any(isinstance(i, slice) for i in items):
            return None  # (``r[..., k]``: NumPy's 0-d view)
        template, positions = [], []
        for item in items:
            if isinstance(item, TracedArray) and item.ndim == 0 and item.dtype.kind in "iu":
                template.append(None)
                positions.append(item)
            elif isinstance(item, SymInt):
                template.append(item.expr)
            elif isinstance(item, (int, np.integer)) and not isinstance(item, (bool, np.bool_)):
                template.append(int(item))
            elif isinstance(item, slice):
                template.append(
                    slice(*(self._slice_bound(b) for b in (item.start, item.stop, item.step)))
                )
            else:
                return None
        return tuple(template), positions

    def basic_index(self, index: Any) -> tuple:
        """``index`` as a tuple of ints, slices, None and Ellipsis; other indices are refused."""
        items = index if isinstance(index, tuple) else (index,)
        out = []
        for item in items:
            if isinstance(item, (masks.MaskedValue, segments.Segment)):
                item.refuse("indexing with")
            if isinstance(item, TracedArray) and item.ndim == 0 and item.dtype.kind in "iu":
                value = item._from_sizes()  # (of sizes alone: a position like any int)
                item = item if value is None else int(value)
            if isinstance(item, TracedArray):
                if item.dtype == bool:
                    self.refuse(
                        "boolean-mask indexing x[mask] (its shape depends on the data)",
                        hint="use np.where(mask, x, fill) to keep the shape",
                    )
                self.refuse(
                    "indexing with a traced integer array or value beside other indices, or "
                    "writing through one (x[idx, j], x[idx] = v: by data)"
                )
            if isinstance(item, (bool, np.bool_)):
                self.refuse("boolean scalar index x[True]")
            if isinstance(item, SymInt):
                out.append(item.expr)
            elif isinstance(item, (int, np.integer)):
                out.append(int(item))
            elif isinstance(item, slice):
                out.append(
                    slice(*(self._slice_bound(b) for b in (item.start, item.stop, item.step)))
                )
            elif item is None or item is Ellipsis:
                out.append(item)
            elif isinstance(item, (list, np.ndarray)):
                kind = "boolean-mask" if np.asarray(item).dtype == bool else "integer-array"
                self.refuse(f"{kind} indexing x[[...]] (fancy indexing)")
            else:
                raise IndexError(
                    "only integers, slices (`:`), ellipsis (`...`), numpy.newaxis (`None`) and "
                    "integer or boolean arrays are valid indices"
                )
        return tuple(out)

    def _slice_bound(self, bound: Any) -> Any:
        if bound is None:
            return None
        if isinstance(bound, SymInt):
            return bound.expr
        if isinstance(bound, TracedArray):
            value = bound._from_sizes() if bound.dtype.kind in "iu" else None
            if value is None:
                self.refuse("a slice bound computed from data")
            return int(value)
        return int(bound.__index__())
