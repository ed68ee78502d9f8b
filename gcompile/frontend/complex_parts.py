"""Complex parts while tracing: ``z.real`` and ``z.imag`` as values that see writes of ``z``.

NumPy's ``z.real``/``z.imag`` are views into ``z``; in a graph they are values (``real``,
``imag`` nodes). A write through a part writes ``z`` (the other part kept, through a
``complex`` node), and a part read after its array was written is taken again from the array,
so both directions see each other's writes as in NumPy. The tracer owns one ``ComplexParts``.
"""

from __future__ import annotations

from typing import Any

from ..errors import UnsupportedError, source_text
from ..ir import ops
from ..ir.alias import alias_parent, may_copy, root, view_parent
from ..ir.graph import Node


class ComplexParts:
    """The parts of complex arrays a trace took, and those whose array was written since."""

    def __init__(self, tracer: Any):
        self.tracer = tracer
        self.taken: set[Node] = set()
        self.stale: set[Node] = set()

    def take(self, op: ops.OpDef, array: Any) -> Any:
        """Record ``array.real`` or ``array.imag`` (``op``: ``ops.REAL`` or ``ops.IMAG``)."""
        part = self.tracer.call(op, array)
        if array.dtype.kind == "c":
            self.taken.add(part._node)
        return part

    def assign(self, array: Any, op: ops.OpDef, value: Any) -> None:
        """``array.real = value`` (``op`` ``ops.REAL``) or ``array.imag = value``."""
        if array.meta.scalar:
            raise AttributeError(f"attribute '{op.name}' of a scalar is not writable")
        if array.dtype.kind != "c":
            if op is ops.IMAG:
                raise TypeError("array does not have imaginary part to set")
            self.tracer.write(array, value, (Ellipsis,))  # the real part of a real array is it
            return
        node = getattr(value, "_node", None)
        if node in self.taken and node.target is op and node.args[0] is array._node:
            return  # ``z.real = z.real``, the end of ``z.real += v``: a view copied onto itself
        self.tracer.write(self.take(op, array), value, (Ellipsis,))

    def written(self, owner: Node) -> None:
        """The memory of ``owner`` was written: its parts taken so far are stale."""
        self.stale.update(p for p in self.taken if root(p.args[0]) is owner)

    def chain(self, node: Node) -> tuple[Node, list[Node]] | None:
        """``(part, views)`` when ``node`` is a complex part or a view of one, else None."""
        views = []
        while node not in self.taken:
            parent = view_parent(node)
            if parent is None or (alias_parent(node) is None and not may_copy(node)):
                return None  # not a view (or a reshape known to copy)
            views.append(node)
            node = parent
        return node, views[::-1]

    def retaken(self, node: Node) -> Node:
        """``node``, or, if it reads a part whose complex array was written since it was taken,
        the same view of the part taken again from the array (NumPy's view sees the write)."""
        chain = self.chain(node)
        if chain is None or chain[0] not in self.stale:
            return node
        part, views = chain
        _refuse_unknown_copy(part, views)
        value = self.take(part.target, self.tracer.wrap(part.args[0]))
        for view in views:
            value = self.tracer.call(view.target, value, *view.args[1:], **view.kwargs)
        return value._node

    def write(self, part: Node, views: list[Node], value: Any, index: tuple) -> None:
        """``target[index] = value`` for ``target`` a view (``views``) of complex part ``part``:
        the complex array is written, its other part kept."""
        _refuse_unknown_copy(part, views)
        tracer = self.tracer
        target = views[-1] if views else part
        operand = tracer.operand(value)
        ops.SETITEM.infer(target.meta, getattr(operand, "meta", operand), index)  # NumPy's errors
        region = tracer.wrap(part.args[0])
        for view in views:
            region = tracer.call(view.target, region, *view.args[1:], **view.kwargs)
        kept = tracer.call(ops.IMAG if part.target is ops.REAL else ops.REAL, region[index])
        parts = (value, kept) if part.target is ops.REAL else (kept, value)
        tracer.write(region, tracer.call(ops.COMPLEX, *parts, dtype=region.dtype), index)


def _refuse_unknown_copy(part: Node, views: list[Node]) -> None:
    """Refuse a reshape of a part that NumPy may or may not copy, when it matters: the part's
    array is written (through it, or before it is read)."""
    for view in views:
        if may_copy(view):
            raise UnsupportedError(
                f"a reshape or ravel of z.{part.target.name} (NumPy may or may not copy it) in "
                "a function that also writes the complex array or its part",
                view.source,
                hint=f"copy the part explicitly (z.{part.target.name}.copy()) before reshaping",
                detail=f"in `{source_text(view.source)}`",
            )
