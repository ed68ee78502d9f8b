"""Reads and writes of regions in loop programs, as loop IR: basic subscripts, stores into a
region, also at positions read from the data (``put``): a loop over it; where it overlaps its
source, NumPy's order (one axis by ``copies.assign_overlapping``, more through a buffer); writes
through getitem and transpose views, write-backs into the caller's arrays, views of values,
and the regions a kernel call reads and writes (for ``loops.program_parallel``).

A part of the program lowering (``programs._ProgramLowering``), whose statements and values it
adds to.
"""

from __future__ import annotations

from ...ir import layout, ops
from ...ir.alias import memory_of
from ...ir.graph import Node
from ...ir.layout import expanded_index
from ...ir.shape_env import using
from ...loops.nodes import (
    Assign,
    Attr,
    BinOp,
    BoolOp,
    Call,
    Compare,
    Const,
    Eval,
    If,
    Item,
    Let,
    Loop,
    Name,
    Raise,
    Slice,
    Store,
    Subscript,
    Tuple,
    Var,
)
from .copies import REGION_STORES
from .rules import NoTemplate

# views that keep the elements' C order: a reshape (of a contiguous copy when the input is not
# contiguous; a value in a loop body is only read, so a copy is as good as the view)
RESHAPING = (ops.RESHAPE, ops.EXPAND_DIMS, ops.SQUEEZE, ops.RAVEL)


def reshaped(value, shape: Tuple) -> Call:
    """``value.reshape(shape)``."""
    return Call(Attr(value, "reshape"), (shape,))


class RegionLowering:
    """The program lowering's region reads and writes (a part of ``programs._ProgramLowering``)."""

    def items(self, index, ndim: int) -> tuple:
        """The items of basic index ``index`` into an array of ``ndim`` axes (an Ellipsis
        spelled as the slices it stands for)."""
        items = tuple(index) if isinstance(index, (tuple, list)) else (index,)
        if any(isinstance(item, Node) for item in items):
            raise NoTemplate("an index array in a loop body")
        if any(item is Ellipsis for item in items):
            items = expanded_index(items, ndim)
        return tuple(self.item(item) for item in items)

    def item(self, item):
        if item is None:
            return None
        if not isinstance(item, slice):
            return self.size(item)
        start, stop, step = (
            None if p is None else self.size(p) for p in (item.start, item.stop, item.step)
        )
        return Slice(start, stop, step)

    def store(self, node: Node) -> None:
        """A store: element loops (``write``). Measured against the host's copy loop inlined
        (``copies.copy_serial``): as fast or faster (a 400x400 stencil's copy-back 13 ms, not
        19 ms, for 200 trips), and a tenth of its compile (Numba types and lowers an inlined
        function's IR at each call: 0.16 s a store; npbench's channel_flow has ten)."""
        base, value = node.args
        self.values[node] = self.values[base]
        array, meta = self.values[base], base.meta
        with using(base.graph.shape_env):
            for step in node.kwargs.get("views", ()):
                array, meta = self.view_step(array, meta, step)
        index = node.kwargs["index"]
        apart = not node.kwargs.get("views") and self.apart(value, base, index)
        self.write(array, base, index, value, meta, apart)

    def apart(self, value, base: Node, index) -> bool:
        """Whether ``value``, views of ``base``, provably shares no element with the region
        ``index`` of ``base`` (``p[-1, :] = p[-2, :]``): then its store needs neither NumPy's
        order of an overlapping copy nor a buffer."""
        views = []
        while isinstance(value, Node) and value is not base:
            if value.op != "call" or value.kind != "view" or not value.args:
                return False
            views.append(value)
            value = value.args[0]
        if value is not base:
            return False
        with using(base.graph.shape_env):
            region = read = layout.of_meta(base.meta)
            for view in reversed(views):
                read = view.target.strided(read, **view.kwargs)
                if read is None:
                    return False
            region = ops.GETITEM.strided(region, index=tuple(index))
            return layout.disjoint(read, region)

    def view_step(self, array, meta, step: ops.ViewStep) -> tuple:
        """``array`` seen through one step of a store's ``views``: ``(expression, meta)``; only
        the steps Numba's arrays take as views of the same memory (basic indexing, transposes)."""
        params = dict(step.params)
        if step.op not in (ops.GETITEM, ops.TRANSPOSE):
            raise NoTemplate(f"a store through a {step.op.name} view in a loop body")
        after = step.op.infer(meta, **params)
        return self.view_of(array, step.op, params, meta, after), after

    def write(self, array, base: Node, index, value, meta=None, apart=False) -> None:
        """``array[index] = value`` (``array`` of ``meta``, by default ``base``'s; ``apart``:
        ``value`` shares no element with the region)."""
        meta = base.meta if meta is None else meta
        with using(base.graph.shape_env):
            region = ops.GETITEM.infer(meta, index=tuple(index)).shape
        target = Item(array, self.items(index, meta.ndim))
        self.write_items(target, region, base, value, apart)

    def put(self, node: Node) -> None:
        """A write at positions read from the data (``put_store`` in place, ``put_update`` into
        a copy), after NumPy's IndexError when one is out of range."""
        base, value, *positions = node.args
        array, meta = self.values[base], base.meta
        if node.target is ops.PUT_UPDATE:
            if node.kwargs.get("views"):
                raise NoTemplate("an update through views")
            self.assign(node, Call(Attr(array, "copy")))
            array = self.values[node]
        else:
            self.values[node] = array
            with using(base.graph.shape_env):
                for step in node.kwargs.get("views", ()):
                    array, meta = self.view_step(array, meta, step)
        index = node.kwargs["index"]
        with using(base.graph.shape_env):
            region = ops.region_at_positions(meta, index)
        items = self.checked_items(meta.shape, index, positions)
        self.write_items(Item(array, items), region.shape, base, value)

    def write_items(self, target: Item, region: tuple, base: Node, value, apart=False) -> None:
        """``target = value``, ``target`` a subscript of ``base``'s memory picking a region of
        shape ``region``; an array region as element loops, broadcasting as NumPy does:
        Numba's array assignment compiles its error messages' string formatting (about 1.5 s
        in a process's first program that has one)."""
        shape = value.meta.shape if isinstance(value, Node) else ()
        source = self.value(value)
        overlap = shape and not apart and memory_of(value) is memory_of(base)
        if overlap and len(region) == 1 and tuple(shape) == tuple(region):
            self.helpers.add("copies")  # (one axis: NumPy's copy loop, without a buffer)
            callee = Attr(Name("_copies"), "assign_overlapping")
            self.emit(Eval(Call(callee, (target, source)), (target,)))
            return
        if overlap:  # B[1:, :] = B[:-1, :]: NumPy buffers it
            buffered = self.fresh("buffered")
            self.emit(Let(buffered, Call(Attr(source, "copy"))))
            source = buffered
        lead = len(region) - len(shape)
        if not region or lead < 0:
            self.emit(Assign(target, source))  # an element, or a value of leading ones
            return
        store = REGION_STORES.get((not shape, len(region)))
        if store is not None and (not shape or tuple(shape) == tuple(region)):
            self.helpers.add("copies")
            callee = Attr(Name("_copies"), store.py_func.__name__)
            self.emit(Eval(Call(callee, (target, source)), (target,)))
            return
        into = self.fresh("region")
        self.emit(Let(into, target))
        axes = tuple(self.fresh(f"t{axis}") for axis in range(len(region)))
        read = source
        if shape:
            read = Item(source, self.broadcast_items(into, source, shape, region, axes))
        statement = Store(into, Subscript(axes), read)
        for depth in reversed(range(len(axes))):
            extent = Item(Attr(into, "shape"), (Const(depth),))
            statement = Loop(axes[depth], Const(0), extent, 1, (statement,), kind="region")
        self.emit(statement)

    def broadcast_items(self, into, source, shape: tuple, region: tuple, axes: tuple) -> tuple:
        """The subscripts of ``source`` (of ``shape``) at position ``axes`` of region ``into``
        (of ``region``) under NumPy's broadcasting: an axis of the region's length the loop
        index, one of length 1 the first element, one the trace cannot tell either clamped to
        its length (equal or 1, checked here: NumPy's ValueError otherwise)."""
        lead = len(region) - len(shape)
        items = []
        for axis, extent in enumerate(shape):
            index = axes[lead + axis]
            if extent == region[lead + axis]:
                items.append(index)
                continue
            if extent == 1:
                items.append(Const(0))
                continue
            length = Item(Attr(source, "shape"), (Const(axis),))
            wanted = Item(Attr(into, "shape"), (Const(lead + axis),))
            mismatch = BoolOp(
                "and", tuple(Compare(("!=",), (length, v)) for v in (wanted, Const(1)))
            )
            message = f"could not broadcast the value into the region at axis {lead + axis}"
            self.emit(If(mismatch, (Raise("ValueError", message),)))
            items.append(Call(Name("min"), (index, BinOp("-", length, Const(1)))))
        return tuple(items)

    def view(self, node: Node):
        """A reshape, transpose, broadcast or sliding window of an array read in the body."""
        base = self.values[node.args[0]]
        return self.view_of(base, node.target, node.kwargs, node.args[0].meta, node.meta)

    def view_of(self, array, op, params: dict, before, after):
        """``array`` (of meta ``before``) through view op ``op`` (giving ``after``): basic
        indexing, a transpose, broadcast or sliding window; a reshape of a contiguous copy
        (read only)."""
        if op is ops.GETITEM:
            return Item(array, self.items(params["index"], before.ndim))
        if op in RESHAPING:
            return reshaped(Call(Name("np.ascontiguousarray"), (array,)), self.shape(after.shape))
        if op is ops.BROADCAST_TO:
            return Call(Name("np.broadcast_to"), (array, self.shape(after.shape)))
        if op is ops.SLIDING_WINDOW:
            windows = (Const(params["window_shape"]), Const(params.get("axis")))
            return Call(Name("np.lib.stride_tricks.sliding_window_view"), (array, *windows))
        if op is ops.TRANSPOSE:
            axes = params.get("axes")
            return self.transposed(array, tuple(range(after.ndim))[::-1] if axes is None else axes)
        raise NoTemplate(f"a {op.name} view in a loop body")

    def transposed(self, array, axes: tuple):
        """``array.transpose(axes)`` as a view Numba compiles cheaply: ``.T`` for the reversal of
        the axes, else ``as_strided`` with the permuted shape and strides. (Numba's transpose with
        axes compiles a helper whose error message formats strings: ~3 s in each process.)"""
        axes = tuple(axes)
        if axes == tuple(range(len(axes))):
            return array
        if axes == tuple(range(len(axes)))[::-1]:
            return Attr(array, "T")
        if not isinstance(array, Var):
            permuted = self.fresh("permuted")
            self.emit(Let(permuted, array))
            array = permuted
        shape, strides = (
            Tuple(tuple(Item(Attr(array, part), (Const(a),)) for a in axes))
            for part in ("shape", "strides")
        )
        return Call(Name("np.lib.stride_tricks.as_strided"), (array, shape, strides))

    def update(self, node: Node) -> None:
        """A functional update: a copy of the array with the region replaced."""
        if node.kwargs.get("views"):
            raise NoTemplate("an update through views")
        base, value = node.args
        self.assign(node, Call(Attr(self.values[base], "copy")))
        self.write(self.values[node], base, node.kwargs["index"], value)

    def call_regions(self, node: Node, code, arguments: tuple) -> tuple:
        """What a kernel call touches (``CallKernel.writes`` and ``reads``): its output
        buffers; of the input it writes in place, the region its store writes and the regions
        its body reads; every other array or scalar it is passed, whole."""
        writes, reads = [], []
        for argument, (_, value) in zip(code.arguments, arguments):
            kind = argument[0]
            if kind == "output":
                writes.append(value)
            elif kind in ("base", "array") and argument[1] == code.writes:
                store = node.target.graph.output_node.args[0][0]
                placeholder = node.target.graph.placeholders[0]
                array = self.value(node.args[0])
                if store.args[0] is placeholder:
                    writes.append(self.stored_region(array, placeholder.meta, store))
                else:
                    writes.append(array)
                reads += self.destination_reads(node, store)
            elif kind != "int":
                reads.append(value)
        return tuple(writes), tuple(reads)

    def stored_region(self, array, meta, store: Node):
        """The region ``store`` writes of ``array`` (its base, of ``meta``): an ``Item`` of its
        index, through its views; ``array`` itself when a view or the index has no such form."""
        try:
            with using(store.graph.shape_env):
                for step in store.kwargs.get("views", ()):
                    array, meta = self.view_step(array, meta, step)
            return Item(array, self.items(store.kwargs["index"], meta.ndim))
        except NoTemplate:
            return array

    def destination_reads(self, node: Node, store: Node) -> list:
        """The regions a kernel writing in place reads of its first argument: each getitem of
        it in the kernel's body, anything else the whole array."""
        placeholder = node.target.graph.placeholders[0]
        base = self.value(node.args[0])
        regions = []
        for user in placeholder.users:
            if user is store and store.args[1] is not placeholder:
                continue
            if user.target is ops.GETITEM:
                regions.append(self.region(base, user.kwargs["index"], placeholder.meta.ndim))
            else:
                regions.append(base)
        return regions

    def region(self, array, index, ndim: int):
        """``array[index]`` as an ``Item``, or ``array`` itself when the index has no such
        form (an index array, a size the program does not hold)."""
        try:
            return Item(array, self.items(index, ndim))
        except NoTemplate:
            return array

    def writeback(self, node: Node) -> None:
        """The newest value of an array written into the caller's array."""
        target, value = node.args
        if target.meta.ndim == 0:
            raise NoTemplate("a write into a 0-d argument")
        if self.swapped(node):  # (a carried array's new value: ``program_kernels``)
            return
        self.write(self.values[target], target, (Ellipsis,), value)
        self.values[node] = self.values[target]
