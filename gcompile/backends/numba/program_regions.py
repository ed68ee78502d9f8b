"""Reads and writes of regions in loop programs: basic subscripts, stores into a region (a
loop over it, buffered where it overlaps its source as NumPy's copy is), writes through
getitem and transpose views, write-backs into the caller's arrays, and views of values.

A part of the program writer (``programs._ProgramWriter``), whose lines and values it
writes into.
"""

from __future__ import annotations

from ...ir import ops
from ...ir.alias import memory_of
from ...ir.graph import Node
from ...ir.shape_env import using
from .render import INDENT
from .rules import NoTemplate

# views that keep the elements' C order: a reshape (of a contiguous copy when the input is not
# contiguous; a value in a loop body is only read, so a copy is as good as the view)
RESHAPING = (ops.RESHAPE, ops.EXPAND_DIMS, ops.SQUEEZE, ops.RAVEL)


class RegionWriting:
    """The program writer's region reads and writes (a part of ``programs._ProgramWriter``)."""

    def subscript(self, index, ndim: int) -> str:
        """Numba's subscript of basic index ``index`` into an array of ``ndim`` axes (an
        Ellipsis spelled as the slices it stands for)."""
        items = list(index) if isinstance(index, (tuple, list)) else [index]
        if any(isinstance(item, Node) for item in items):
            raise NoTemplate("an index array in a loop body")
        if Ellipsis in items:
            at = items.index(Ellipsis)
            taken = sum(1 for item in items if item is not None and item is not Ellipsis)
            items[at : at + 1] = [slice(None)] * (ndim - taken)
        texts = []
        for item in items:
            if isinstance(item, slice):
                parts = ["" if p is None else self.size(p) for p in (item.start, item.stop)]
                step = "" if item.step is None else f":{self.size(item.step)}"
                texts.append(f"{parts[0]}:{parts[1]}{step}")
            else:
                texts.append("None" if item is None else self.size(item))
        return ", ".join(texts) if texts else "()"

    def store(self, node: Node, indent: str) -> None:
        base, value = node.args
        array, meta = self.values[base], base.meta
        with using(base.graph.shape_env):
            for step in node.kwargs.get("views", ()):
                array, meta = self.view_step(array, meta, step)
        self.write(array, base, node.kwargs["index"], value, indent, meta)
        self.values[node] = self.values[base]

    def view_step(self, array: str, meta, step: ops.ViewStep) -> tuple:
        """``array`` seen through one step of a store's ``views``: ``(text, meta)``; only the
        steps Numba's arrays take as views of the same memory (basic indexing, transposes)."""
        params = dict(step.params)
        if step.op not in (ops.GETITEM, ops.TRANSPOSE):
            raise NoTemplate(f"a store through a {step.op.name} view in a loop body")
        after = step.op.infer(meta, **params)
        return self.view_text(array, step.op, params, meta, after), after

    def write(self, array: str, base: Node, index, value, indent: str, meta=None) -> None:
        """``array[index] = value`` (``array`` of ``meta``, by default ``base``'s); an array
        region as element loops: Numba's array assignment compiles its broadcasting error
        messages (~1.7 s on a program's first compile)."""
        meta = base.meta if meta is None else meta
        text = f"{array}[{self.subscript(index, meta.ndim)}]"
        with using(base.graph.shape_env):
            region = ops.GETITEM.infer(meta, index=tuple(index)).shape
        shape = value.meta.shape if isinstance(value, Node) else ()
        source = self.value(value)
        if shape and memory_of(value) is memory_of(base):  # B[1:] = B[:-1]: NumPy buffers it
            buffered = self.fresh("buffered")
            self.lines.append(f"{indent}{buffered} = {source}.copy()")
            source = buffered
        if not region or (shape and tuple(shape) != tuple(region)):
            self.lines.append(f"{indent}{text} = {source}")  # an element, or broadcast
            return
        target = self.fresh("region")
        self.lines.append(f"{indent}{target} = {text}")
        axes = [self.fresh(f"t{axis}") for axis in range(len(region))]
        for depth, axis in enumerate(axes):
            inner = indent + INDENT * depth
            self.lines.append(f"{inner}for {axis} in range({target}.shape[{depth}]):")
        element = ", ".join(axes)
        source = f"{source}[{element}]" if shape else source
        self.lines.append(f"{indent + INDENT * len(axes)}{target}[{element}] = {source}")

    def view(self, node: Node) -> str:
        """A reshape, transpose or broadcast of an array read in the body."""
        base = self.values[node.args[0]]
        return self.view_text(base, node.target, node.kwargs, node.args[0].meta, node.meta)

    def view_text(self, array: str, op, params: dict, before, after) -> str:
        """``array`` (of meta ``before``) through view op ``op`` (giving ``after``): basic
        indexing, a transpose or broadcast; a reshape of a contiguous copy (read only)."""
        shape = ", ".join(self.size(s) for s in after.shape) + ("," if after.ndim == 1 else "")
        if op is ops.GETITEM:
            return f"{array}[{self.subscript(params['index'], before.ndim)}]"
        if op in RESHAPING:
            return f"np.ascontiguousarray({array}).reshape(({shape}))"
        if op is ops.BROADCAST_TO:
            return f"np.broadcast_to({array}, ({shape}))"
        if op is ops.TRANSPOSE:
            axes = params.get("axes")
            axes = tuple(range(after.ndim))[::-1] if axes is None else tuple(axes)
            return f"{array}.transpose({axes!r})"
        raise NoTemplate(f"a {op.name} view in a loop body")

    def update(self, node: Node, indent: str) -> None:
        """A functional update: a copy of the array with the region replaced."""
        if node.kwargs.get("views"):
            raise NoTemplate("an update through views")
        base, value = node.args
        self.assign(node, indent, f"{self.values[base]}.copy()")
        self.write(self.values[node], base, node.kwargs["index"], value, indent)

    def writeback(self, node: Node, indent: str) -> None:
        """The newest value of an array written into the caller's array."""
        target, value = node.args
        if target.meta.ndim == 0:
            raise NoTemplate("a write into a 0-d argument")
        self.write(self.values[target], target, (Ellipsis,), value, indent)
        self.values[node] = self.values[target]
