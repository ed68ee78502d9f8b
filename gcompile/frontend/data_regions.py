"""Regions read at positions from the data (``row = A[k]``, ``A[k, 1:]``, ``k`` a traced int):
NumPy's views, the graph's copies (``element`` nodes, ``ops.ELEMENT``); and the read-only views
library calls return (``np.diagonal(A)``: an ``extern`` node, a copy of its first operand's).

The two agree as long as neither side is written while the other is read: a write through such
a region, and a read of one after its array was written, would tell them apart, so both are
refused (the function then runs as the tracer's caller decides: a graph break or eagerly),
naming the line. The tracer owns one ``DataRegions``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..ir import ops
from ..ir.alias import root
from ..ir.graph import Node
from .symint import SymInt
from .traced_array import TracedArray


class DataRegions:
    """The regions a trace read at data positions, and those whose array was written since."""

    def __init__(self, tracer: Any):
        self.tracer = tracer
        self.taken: set[Node] = set()
        self.stale: set[Node] = set()

    def take(self, region: Node) -> None:
        """Record ``region``, an ``element`` node of one or more axes."""
        self.taken.add(region)

    def forget(self, erased: set) -> None:
        """Drop the regions among ``erased`` nodes (a trace rolled back)."""
        self.taken -= erased
        self.stale -= erased

    def indexed(self, region: Any, index: Any) -> Any:
        """``region[index]`` read from the region's array at once (``A[k][j]``: one element
        of ``A``, not a copy of its row first), for a region of whole axes not written since
        it was taken, indexed by ints, sizes, traced ints and whole slices; else None."""
        composed = self._composed(region, index)
        if composed is None:
            return None
        array, template, positions = composed
        found = self.tracer.call(ops.ELEMENT, array, *positions, index=template)
        if found.ndim:
            self.take(found._node)
        return found

    def assigned(self, region: Any, index: Any, value: Any) -> bool:
        """``region[index] = value`` written into the region's array (``A[k][j] = v``: NumPy
        writes ``A`` through its view), for a region ``indexed`` would read; False (nothing
        written) for any other."""
        composed = self._composed(region, index)
        if composed is not None:
            array, template, positions = composed
            self.tracer.write(array, value, template, positions)
        return composed is not None

    def _composed(self, region: Any, index: Any) -> tuple | None:
        """``(array, template, positions)`` of ``region[index]`` as one index of the region's
        array (see ``indexed``), or None."""
        node = region._node
        if node not in self.taken or node in self.stale or node.target is not ops.ELEMENT:
            return None
        outer = node.kwargs["index"]
        items = index if isinstance(index, tuple) else (index,)
        if any(isinstance(item, slice) and not _whole(item) for item in outer):
            return None
        if len(items) > region.ndim or not all(_composable(item) for item in items):
            return None  # (``np.newaxis``, an index array, a mask: NumPy's indexing of a copy)
        given = iter(items + (slice(None),) * (region.ndim - len(items)))
        taken_at = iter(node.args[1:])
        template, positions = [], []
        for item in outer:
            if item is None:  # (a position of the region's own read)
                template.append(None)
                positions.append(self.tracer.wrap(next(taken_at)))
            elif not isinstance(item, slice):  # (an int or size of the region's read)
                template.append(item)
            elif _traced_int(new := next(given)):
                template.append(None)
                positions.append(new)
            else:  # (an int or size, a whole slice)
                template.append(new if isinstance(new, slice) else _position(new))
        return self.tracer.wrap(node.args[0]), tuple(template), positions

    def written(self, target: Node) -> None:
        """A write into ``target`` (or a view of it): refused into such a region; the regions
        of its array taken so far are stale."""
        owner = root(target)
        if owner in self.taken:
            self.tracer.refuse(
                "writing into a region read at a position from the data (row = A[k]; "
                "row[j] = v): NumPy writes A through its view, the graph holds a copy",
                hint="copy the region explicitly (row = A[k].copy()) if A is not meant to change",
            )
        self.stale.update(r for r in self.taken if array_of(r) is array_of(target))

    def leaving(self, values: tuple) -> None:
        """Values leaving a graph (returned, carried out of a loop body or a branch): refused
        when one is such a region, whose writes outside would miss the array."""
        if any(isinstance(v, Node) and _element_region(root(v), self.taken) for v in values):
            self.tracer.refuse(
                "a region read at a position from the data (A[k], A[k, 1:]) returned, or "
                "carried out of a loop or a branch: NumPy's value is a view of A",
                hint="return or carry a copy (A[k].copy())",
            )

    def looped(self, read: list, written: list) -> None:
        """A loop body that reads ``read`` (values from outside it) and writes ``written``:
        refused when it reads a region whose array it writes (a later trip's read sees the
        write in NumPy, whatever the order in the body)."""
        arrays = {array_of(w) for w in written if isinstance(w, Node)}
        if any(
            isinstance(v, Node) and root(v) in self.taken and array_of(v) in arrays for v in read
        ):
            self.tracer.refuse(
                "a loop body reading a region read at a position from the data (row = A[k]) "
                "and writing its array: NumPy's view sees the write on the next trip",
                hint="take the region inside the loop body, after the write",
            )

    def read(self, node: Node) -> None:
        """A read of ``node``: refused when it is a stale region (or a view of one)."""
        if root(node) in self.stale:
            self.tracer.refuse(
                "reading a region read at a position from the data (or a library call's view, "
                "np.diagonal(A)) after its array was written (NumPy's view sees the write, "
                "the graph's copy does not)",
                hint="read the region again after the write",
            )


def _element_region(node: Node, taken: set) -> bool:
    """Whether ``node`` is a region read at data positions (a library call's read-only view
    may leave its graph: NumPy's caller cannot write through it either)."""
    return node in taken and node.target is not ops.EXTERN


def array_of(node: Node) -> Node:
    """The array whose memory ``node`` is in NumPy: through views, regions of regions and
    complex parts (``z.real[k]``: a view of ``z``)."""
    found = root(node)
    while found.op == "call" and (
        found.target in (ops.ELEMENT, ops.REAL, ops.IMAG)
        or found.target is ops.EXTERN
        and not found.meta.writeable
        and found.args
    ):
        found = root(found.args[0])
    return found


def _traced_int(item: Any) -> bool:
    return isinstance(item, TracedArray) and item.ndim == 0 and item.dtype.kind in "iu"


def _position(item: Any) -> Any:
    """An int or size index item as an ``element`` template holds it, else None."""
    if isinstance(item, SymInt):
        return item.expr
    if isinstance(item, (int, np.integer)) and not isinstance(item, (bool, np.bool_)):
        return int(item)
    return None


def _composable(item: Any) -> bool:
    """An index item ``indexed`` takes: a traced int, an int or size, a whole slice."""
    return _traced_int(item) or _position(item) is not None or _whole(item)


def _whole(item: Any) -> bool:
    return (
        isinstance(item, slice) and item.start is None and item.stop is None and item.step is None
    )
