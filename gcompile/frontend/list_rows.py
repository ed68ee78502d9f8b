"""Lists grown by a rolled loop: ``ys = [y0]; for t in range(n): ...; ys.append(y)`` then
``np.array(ys)``.

Capture marks the lists a function grows in its loops (``capture/accumulations.py``); while
tracing they are ``GrowingList`` objects. A loop traced once cannot append one Python item per
trip, so each append of a rolled loop to a list made outside it writes a row of a buffer
(``LoopRows``): the body is traced once to learn what each append site gives (shape, dtype),
the buffers ``np.empty((trips, *shape))`` are made before the loop, and the body is traced
again writing ``buffer[k] = value`` on trip ``k`` (a write into an outer array, carried as any
other). After the loop the list holds its items and that block of rows, in order.

Such a list becomes an array where NumPy converts it (``np.array(ys)``, ``np.asarray``, a
NumPy function or ufunc given it): its items and blocks concatenated, in NumPy's dtype. Any
other use of it (``len`` aside: a symbolic size), iteration, indexing, returning it, needs
its items as Python objects: the trace runs again with that loop run in Python
(``LoopEscape``), as before.

Eager mode's list holds the appended objects themselves; the buffer holds their values at
the append. The two agree unless an appended array is written in place afterwards: a body
that writes it later, or writes the array it views, is declined (the loop runs in Python);
a write after the loop into memory an item may share (the last trip's value carried out, an
outer array appended) makes the conversion escape. A body that reads the list it appends to
(``ys[-1]``) is declined as well.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.lib.array_utils import normalize_axis_index

from ..ir import ops
from ..ir.alias import memory_of, written_memories, written_placeholders
from ..ir.graph import Node
from ..ir.meta import TensorMeta
from ..ir.pytree import RowsOf
from ..ir.shape_env import SymbolicError, trip_count
from ..ir.symbolic import free_symbols
from .data_lengths import LengthFromData
from .data_regions import array_of
from .declines import Declined, LoopEscape
from .sequences import ConvertedByNumPy
from .symint import SymInt


class GrowingList(list):
    """A list the function grows in its loops (see the module docstring). Until a rolled loop
    appends to it, it is a plain list of its items (Python's operators and NumPy's ufuncs
    treat it as one; a NumPy function converts it, traced items too); then it becomes a
    ``GrownList``."""

    __array_function__ = ConvertedByNumPy.__array_function__
    _as_array_in = ConvertedByNumPy._as_array_in

    def __init__(self, loops: Any, items: list):
        list.__init__(self, items)
        self._loops = loops
        self.graph = loops.tracer.graph  # the graph where it was made
        self._parts: list | None = None  # once rows exist: ("item", value) or ("rows", _Block)

    @property
    def has_rows(self) -> bool:
        """Whether a rolled loop appended rows to it (its items are no longer Python's)."""
        return self._parts is not None

    def add_rows(self, block: "_Block") -> None:
        """Append the rows a rolled loop wrote."""
        if self._parts is None:
            self._parts = [("item", item) for item in list.__iter__(self)]
            list.clear(self)
            list.append(self, _Pending(self))  # (what C code reading its items directly sees)
            self.__class__ = GrownList
        self._parts.append(("rows", block))
        self._loops.journal.append(self)

    def append(self, value: Any) -> None:
        if isinstance(value, LengthFromData):  # (``x[m]``: the list holds NumPy's copy)
            value = value.whole("appending to a list")
        self._read(rows_ok=True)
        if self._parts is None:
            list.append(self, value)
        else:
            self._parts.append(("item", value))
        self._loops.journal.append(self)

    def undo(self) -> None:
        """Take back the last append or block of rows (a loop that declined made it)."""
        if self._parts is None:
            list.pop(self)
            return
        self._parts.pop()
        if not any(kind == "rows" for kind, _ in self._parts):
            list.clear(self)
            list.extend(self, [item for _, item in self._parts])
            self._parts = None
            self.__class__ = GrowingList

    def length(self) -> Any:
        """``len(self)``: an int, or a symbolic size once rows exist."""
        self._read(rows_ok=True)
        if self._parts is None:
            return list.__len__(self)
        return SymInt.wrap(self._loops.tracer, self._total())

    def _total(self) -> Any:
        total = 0
        for kind, part in self._parts:
            total = total + (1 if kind == "item" else part.count)
        return total

    def maybe_empty(self, tracer) -> bool:
        """Whether the list has no item at this call (rows only, none written; guarded)."""
        only_rows = all(kind == "rows" for kind, _ in self._parts)
        env = tracer.graph.shape_env
        return only_rows and not env.decide(">", self._total(), 0, "a list grown in loops is empty")

    def as_array(self, tracer) -> Any:
        """The array NumPy makes of this list with rows: its items and blocks concatenated."""
        if tracer.graph is not self.graph:
            raise LoopEscape(self._escape_source())
        if self.maybe_empty(tracer):
            return tracer.call(ops.ZEROS, shape=(0,), dtype=np.dtype(np.float64))  # (NumPy's)
        alone = len(self._parts) == 1  # (its array is the result: handed out once)
        pieces = []
        for kind, part in self._parts:
            if kind == "rows":
                part.check_unwritten(tracer)
                pieces.append(part.array(tracer, alone))
            else:
                pieces.append(tracer.wrap(tracer.operand(tracer.sequence_as_array([part]))))
        env = tracer.graph.shape_env
        first = pieces[0].meta.shape[1:]
        for piece in pieces[1:]:
            if not _same_sizes(env, first, piece.meta.shape[1:]):
                raise LoopEscape(self._escape_source())  # (NumPy's ragged error, in Python)
        if alone:
            return pieces[0]
        dtype = np.result_type(*(piece.dtype for piece in pieces))
        return np.concatenate([piece.astype(dtype, copy=False) for piece in pieces])

    def returned(self, tracer) -> RowsOf | None:
        """This list as a result of the function: its rows (and items, a loop's first trip
        traced before it) as one array, made a list again on each call (``RowsOf``), when
        they all read alike in Python, of one dtype and row shape; else None (returning it
        escapes)."""
        if self._parts is None or tracer.graph is not self.graph:
            return None
        blocks = [part for kind, part in self._parts if kind == "rows"]
        kinds = {block.kind for block in blocks}
        row = blocks[0].buffers[0].meta
        for item in (part for kind, part in self._parts if kind == "item"):
            try:
                meta = _item_meta(tracer, item)
            except Declined:  # (an item the rows cannot give back: a 0-d array)
                return None
            kinds.add(_item_kind(meta) if meta.dtype == row.dtype else None)
            if meta.shape != row.shape[1:]:
                return None
        if len(kinds) != 1 or None in kinds:
            return None
        return RowsOf(self.as_array(tracer), kinds.pop())

    def _escape_source(self) -> str | None:
        blocks = [part for kind, part in self._parts or () if kind == "rows"]
        return blocks[0].source if blocks else None

    def _read(self, rows_ok: bool = False) -> None:
        """Any use of the list: noted when made inside a body (a loop appending to the list
        must not read it); with rows, an escape unless ``rows_ok``."""
        if self._loops.tracer.graph is not self.graph:
            self._loops.list_reads.append(self)
        if self._parts is not None and not rows_ok:
            raise LoopEscape(self._escape_source())


def _reading(name: str):
    method = getattr(list, name)

    def read(self, *args, **kwargs):
        self._read()
        try:
            return method(self, *args, **kwargs)
        except IndexError:  # (in a body appending to it, ``ys[-1]``: its rows are not items)
            if self._loops.tracer.graph is self.graph:
                raise
            raise Declined("its body reads a list it appends to") from None

    read.__name__ = name
    return read


for _name in (
    "__len__ __getitem__ __setitem__ __delitem__ __iter__ __reversed__ __contains__ __eq__ "
    "__ne__ __lt__ __le__ __gt__ __ge__ __add__ __mul__ __rmul__ __iadd__ __imul__ __repr__ "
    "copy index count extend insert pop remove clear sort reverse"
).split():
    setattr(GrowingList, _name, _reading(_name))


class GrownList(ConvertedByNumPy, GrowingList):
    """A ``GrowingList`` a rolled loop appended rows to: NumPy functions and ufuncs given it
    convert it (``as_array``); Python's uses of its items escape (``LoopEscape``), ``[a] + ys``
    too (the reflected ``__radd__``, which Python asks first), and so does a NumPy scalar
    operator (``np.int64(2) * ys`` repeats a list in eager mode)."""

    def __radd__(self, other):
        self._read()
        return NotImplemented

    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
        if any(isinstance(value, np.generic) for value in inputs):
            raise LoopEscape(self._escape_source())  # (an operator of a NumPy scalar, maybe)
        return super().__array_ufunc__(ufunc, method, *inputs, **kwargs)


class _Pending:
    """The one item a grown list holds as Python sees it: any use of it escapes (code in C
    reading the list's items directly, ``str.join``, NumPy's conversion from a library)."""

    def __init__(self, items: GrowingList):
        self._items = items

    def _escape(self, *args, **kwargs):
        raise LoopEscape(self._items._escape_source())

    __array__ = __float__ = __int__ = __index__ = __complex__ = __len__ = __iter__ = _escape
    __add__ = __radd__ = __mul__ = __rmul__ = __sub__ = __rsub__ = __truediv__ = _escape
    __repr__ = __str__ = __bool__ = _escape


class _Block:
    """The rows one rolled loop appended to one list: a buffer per append site of its body
    (``count`` rows in all, trip-major), and what a later write must not touch."""

    def __init__(self, buffers, trips, source: str | None, watched: set, mark: int, kind):
        self.buffers = buffers
        self.kind = kind  # how Python sees its items (``_item_kind``), None when they differ
        self.count = trips * len(buffers)
        self.source = source
        self.watched = watched  # memories an item may share after the loop
        self.mark = mark  # the enclosing graph's size after the loop
        self._handed_out: int | None = None  # the graph's size when the buffer was a result

    def array(self, tracer, alone: bool):
        """The rows as one array; ``alone``: it is a conversion's result, a new array each
        time (the buffer itself the first time: later ones copy it, unwritten since)."""
        if len(self.buffers) > 1:
            stacked = np.stack(self.buffers, axis=1)
            return stacked.reshape((-1, *stacked.shape[2:]))
        buffer = self.buffers[0]
        if self._handed_out is not None:  # (a result the function may have written since)
            self._check_unwritten(tracer, self._handed_out, {memory_of(buffer._node)})
            return buffer.copy() if alone else buffer
        if alone:
            self._handed_out = len(tracer.graph.nodes)
        return buffer

    def check_unwritten(self, tracer) -> None:
        """Escape when memory an item may share was written since the loop (eager's list
        would see the write)."""
        self._check_unwritten(tracer, self.mark, self.watched)

    def _check_unwritten(self, tracer, mark: int, memories: set) -> None:
        if not memories:
            return
        for node in tracer.graph.nodes[mark:]:
            if written_memories(node) & memories:
                raise LoopEscape(self.source)


class LoopRows:
    """The appends of one rolled loop (one piece of its range) to lists made outside it (see
    the module docstring): recorded on a first trace, written into buffers on the next."""

    def __init__(self, tracer: Any, bounds: tuple, source: str | None):
        self.tracer = tracer
        self.start, stop, self.step = bounds
        self.trips = trip_count(self.start, stop, self.step)
        self.source = source
        self.buffers: list | None = None  # per append site, once made
        self.sites: list = []  # this trace's appends: (list, value, meta, graph position)
        self._reads = 0

    def begin(self, reads: int) -> None:
        """A new trace of the body starts (``reads``: the lists read so far, a mark)."""
        self.sites = []
        self._reads = reads

    def append(self, items: GrowingList, value: Any, graph, index: SymInt) -> None:
        """``items.append(value)`` on the trip ``index`` of the body traced into ``graph``."""
        if isinstance(value, SymInt):  # (the loop index, a size: a Python int)
            value = value.value()
        meta = _item_meta(self.tracer, value)
        node = self.tracer.operand(value) if self.tracer.is_traced(value) else None
        self.sites.append((items, node, meta, len(graph.nodes)))
        if self.buffers is None:
            return
        site = len(self.sites) - 1
        env = self.tracer.graph.shape_env
        if (
            site >= len(self.buffers)
            or self.buffers[site].meta.dtype != meta.dtype
            or not _same_sizes(env, self.buffers[site].meta.shape[1:], meta.shape)
        ):
            raise Declined("its appends to a list differ from one trace of its body to the next")
        trip = (index - self.start) // self.step
        self.buffers[site][trip] = value

    def allocate(self) -> bool:
        """After a trace that appended and had no buffers: make them (in the enclosing graph,
        before the loop) and say so (the body is traced again to write them)."""
        if self.buffers is not None or not self.sites:
            return False
        env = self.tracer.graph.shape_env
        shapes: dict = {}
        for items, _, meta, _ in self.sites:
            shape = shapes.setdefault(id(items), meta.shape)
            if not _same_sizes(env, shape, meta.shape):
                raise Declined("it appends arrays of different shapes to one list in a trip")
        self.buffers = [
            self.tracer.call(ops.EMPTY, shape=(self.trips, *meta.shape), dtype=meta.dtype)
            for _, _, meta, _ in self.sites
        ]
        return True

    def check_reads(self, reads: list) -> None:
        """Decline a body that read a list it appends to."""
        appended = {id(items) for items, *_ in self.sites}
        if any(id(items) in appended for items in reads[self._reads :]):
            raise Declined("its body reads a list it appends to (the items of earlier trips)")

    def check_writes(self, frame, outputs: list) -> None:
        """Decline a body writing an array it appended, after the append or on a later trip
        (eager's list holds that array, the buffer its value at the append)."""
        written = written_placeholders(frame.graph)
        for _, node, _, position in self.sites:
            if node is None:
                continue
            memory = memory_of(array_of(node))  # (a region read at data positions: A's)
            if memory.op == "placeholder":
                late = memory in written
            else:
                late = any(memory in written_memories(n) for n in frame.graph.nodes[position:])
            if late:
                raise Declined("it writes in place into an array it appended to a list")

    def extend(self, frame, inits: list, outputs: list, after: tuple) -> None:
        """Give each list its block of rows, after the loop node."""
        if not self.sites:
            return
        watched = self._watched(frame, inits, outputs, after)
        mark = len(self.tracer.graph.nodes)
        order: dict = {}
        for site, (items, *_) in enumerate(self.sites):
            order.setdefault(id(items), (items, []))[1].append(self.buffers[site])
        kinds: dict = {}
        for items, _, meta, _ in self.sites:
            kinds.setdefault(id(items), set()).add(_item_kind(meta))
        for items, buffers in order.values():
            kind = kinds[id(items)].pop() if len(kinds[id(items)]) == 1 else None
            items.add_rows(_Block(buffers, self.trips, self.source, watched, mark, kind))

    def _watched(self, frame, inits: list, outputs: list, after: tuple) -> set:
        """The memories of the enclosing graph an appended item may share after the loop."""
        watched = set()
        memories = {memory_of(array_of(n)) for _, n, _, _ in self.sites if n is not None}
        for placeholder, outer in frame.outer.items():
            if placeholder in memories:
                watched.add(memory_of(outer))
        for i, placeholder in enumerate(frame.carried):
            if isinstance(placeholder, Node) and memory_of(placeholder) in memories:
                if self.tracer.is_traced(inits[i]):
                    watched.add(memory_of(inits[i]._node))
        for output, value in zip(outputs, after):
            if isinstance(output, Node) and memory_of(output) in memories:
                if self.tracer.is_traced(value):
                    watched.add(memory_of(value._node))
        return watched


def _same_sizes(env, sizes: tuple, others: tuple) -> bool:
    """Whether two shapes are equal: as expressions, or at the traced sizes (guarded)."""
    if len(sizes) != len(others):
        return False
    try:
        return all(
            a == b or (env.hint(a) == env.hint(b) and env.decide("==", a, b, "a list's items"))
            for a, b in zip(sizes, others)
        )
    except SymbolicError:
        return False


def _item_kind(meta: TensorMeta) -> str | None:
    """How a list's item of ``meta`` reads in Python, as ``RowsOf`` gives it back: a Python
    number ("tolist"), a NumPy scalar or an array of one or more axes ("list": a row); None
    for a 0-d array (a row of a vector is a scalar)."""
    if meta.scalar:
        return "tolist" if meta.weak else "list"
    return "list" if meta.ndim else None


def _item_meta(tracer, value: Any) -> TensorMeta:
    """What an appended item is: a traced array or scalar, or a Python or NumPy number."""
    if tracer.is_traced(value):
        meta = value.meta
        env = tracer.graph.shape_env
        if any(free_symbols(size) & (set(env.loops) | set(env.data_sizes)) for size in meta.shape):
            raise Declined("it appends to a list an array whose shape changes from trip to trip")
        return meta
    if isinstance(value, (bool, int, float, complex, np.generic)):
        array = np.asarray(value)
        return TensorMeta((), array.dtype, scalar=True, weak=not isinstance(value, np.generic))
    raise Declined(f"it appends a {type(value).__name__} to a list (not a number or array)")


JOINS = ("stack", "concatenate", "vstack", "hstack", "column_stack")


def join_rows(function, items: GrowingList, tracer, rest: tuple, kwargs: dict) -> Any:
    """``function(items, *rest, **kwargs)`` (NumPy's, named in ``JOINS``) of a list a rolled
    loop appended rows to, from its array (the items stacked on a new first axis). Arguments
    other than ``axis`` and ``dtype`` escape (the loop runs in Python); a list with no item
    raises NumPy's error."""
    name = function.__name__
    kwargs = dict(kwargs)
    dtype = kwargs.pop("dtype", None)
    takes_axis = name in ("stack", "concatenate")
    axis = kwargs.pop("axis", rest[0] if rest and takes_axis else 0)
    if len(rest) > int(takes_axis) or kwargs.pop("casting", "same_kind") != "same_kind" or kwargs:
        raise LoopEscape(items._escape_source())
    if items.maybe_empty(tracer):
        return function([])  # (NumPy's ValueError: nothing to join)
    rows = items.as_array(tracer)
    if dtype is not None:
        rows = rows.astype(dtype, casting="same_kind")
    item = rows.ndim - 1  # (the dimensions of one item)
    if name == "stack":
        return np.moveaxis(rows, 0, axis)
    if name == "vstack":
        if item < 2:
            return rows.reshape((rows.shape[0], 1)) if item == 0 else rows
        return _concatenated(rows, 0)
    if name == "hstack":
        return rows if item == 0 else _concatenated(rows, 0 if item == 1 else 1)
    if name == "column_stack":
        if item == 0:
            return rows.reshape((1, rows.shape[0]))
        return rows.T.copy() if item == 1 else _concatenated(rows, 1)
    if item == 0:
        raise ValueError("zero-dimensional arrays cannot be concatenated")
    return rows.reshape(-1) if axis is None else _concatenated(rows, axis)


def _concatenated(rows, axis: int):
    """``np.concatenate`` of the items along their ``axis``, from their stack ``rows``."""
    sizes = rows.shape[1:]
    axis = normalize_axis_index(axis, len(sizes))
    moved = np.moveaxis(rows, 0, axis)
    return moved.reshape((*sizes[:axis], rows.shape[0] * sizes[axis], *sizes[axis + 1 :]))
