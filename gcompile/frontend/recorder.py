"""The recorder: ``Tracer`` turns each operation on traced arrays into a node of its graph.

NumPy functions and ufuncs are looked up in the op table (``ir/ops.py``: ``OpDef.numpy``,
``reduces``, ``accumulates``) or its decompositions (``decompositions.py``); their parameters are
bound to NumPy's signature and normalised; Python scalars and lists become literals or constant
nodes; the user's ``file:line`` goes on every node. ``current_tracer()`` is the tracer active in
this thread (``numpy_patching.tracing`` makes one active).
"""

from __future__ import annotations

import contextlib
import math
import threading
import warnings
from dataclasses import replace
from typing import Any, Callable

import numpy as np

from ..errors import UnsupportedError, source_text, user_source
from ..ir import ops
from ..ir.alias import chosen_memories, memory_of, root
from ..ir.callbacks import Callback
from ..ir.externs import Operand
from ..ir.graph import Graph, Node
from ..ir.meta import meta_of, normalize_axes, unsupported_dtype_reason
from ..ir.shape_env import SIZE_LOW, data_sizes_in, is_symbolic, map_symbolic
from ..ir.symbolic import is_int
from . import masks
from .branches import ControlTracer
from .complex_parts import ComplexParts
from .data_regions import DataRegions
from .declines import LiteralsNeeded
from .indices import Indices
from .numpy_calls import NumpyCalls
from .scatters import scatter_assign, stepped_assign
from .symint import SymInt, unwrap
from .texts import TracedTexts, as_text, holds_marker
from .traced_array import TracedArray, decided_by_scalars, holds_traced

# Lookups built from the op table.


class Tracer(Indices):
    """Records the operations applied to TracedArrays into ``self.graph``."""

    def __init__(self, name: str, dynamic: bool = True, budget: int | None = None):
        self.graph = Graph(name)
        self.budget = budget  # most operations recorded before the trace is refused
        self.recorded = 0
        self.unconverted: list = []  # LoopNotes of the loops capture left to Python
        self.tables: tuple = ()  # the lookup tables of the function (``capture.tables``)
        self.graph.shape_env.locate = user_source
        self.dynamic = dynamic  # array sizes of 2 or more are symbols (else every size is fixed)
        self._constants: dict[int, tuple[Any, Node]] = {}
        self.numpy = NumpyCalls(self)  # ufuncs, NumPy functions, creation, decompositions
        self.argument_of: dict[Node, str] = {}
        # placeholder -> (path, value) of a scalar argument (``size_values.ScalarsDecide``)
        self.scalar_arguments: dict[Node, tuple[str, Any]] = {}
        self.sized_by: dict = {}  # a length the data decide -> the traced int it stands for
        # ``real``/``imag`` nodes of complex arrays, and those whose array was written since
        self.parts = ComplexParts(self)  # z.real, z.imag: values that see writes of z
        self.regions = DataRegions(self)  # regions read at data positions (``data_regions``)
        # what decides a length the data decide (a condition's node, ...) -> (its unbacked
        # symbol, the graph and its node then): calls alike share the length (``numpy_calls``)
        self.data_lengths: dict[tuple, tuple] = {}
        self.loops = ControlTracer(self)  # captured loops and branches, traced as sub-graphs
        self.texts = TracedTexts()  # strings formatted from traced values (for ``print``)
        # exception classes a ``try`` whose handlers only raise catches -> the try's line
        self.reruns_on: dict[type, str] = {}
        # graph -> [(a branch's output, the memories it may be: ``alias.chosen_memories``)]
        self.choices: dict[Graph, list] = {}
        # ``np.array([4.0, 4, 5])``: made by NumPy (False) or as the graph's (``literal_array``)
        self.literals_traced = False
        self.strong_lists: set = set()  # lists of numbers giving back NumPy scalars (sites)
        self.made_literals = False

    # -- refusals -----------------------------------------------------------------------------------
    def refuse(self, construct: str, hint: str = "", detail: str = "", source: str = "") -> None:
        """Raise UnsupportedError for ``construct`` at the user's current line (or ``source``)."""
        source = source or user_source()
        text = source_text(source)
        if text:
            detail = (detail + "; " if detail else "") + f"in `{text}`"
        raise UnsupportedError(construct, source, hint, detail)

    # -- inputs ----------------------------------------------------------------------------------------
    def input(self, name: str, value: Any, as_value: bool = False) -> TracedArray | SymInt:
        """A graph input standing for ``value`` (array, NumPy scalar, or Python float/complex;
        a Python int is a size symbol, given to the function as a ``SymInt``, unless it is
        traced ``as_value``: a weak int, as a Python float is a weak float).

        An array's sizes of 2 or more are symbols (``s0, s1, ...``) unless tracing is static."""
        meta = meta_of(value)
        if is_int(value) and not as_value:  # a size the call passes (guards.dynamic_ints)
            symbol = self.graph.shape_env.size_symbol(
                value, name, (len(self.graph.placeholders), None)
            )
            self.argument_of[self.graph.placeholder(name, meta)] = name
            return SymInt(self, symbol)
        if self.dynamic and meta.ndim:
            env = self.graph.shape_env
            position = len(self.graph.placeholders)
            sizes = tuple(
                env.size_symbol(size, f"{name}.shape[{axis}]", (position, axis))
                if size >= SIZE_LOW
                else size
                for axis, size in enumerate(meta.shape)
            )
            meta = replace(meta, shape=sizes)
        node = self.graph.placeholder(name, meta)
        self.argument_of[node] = name
        if not meta.ndim and not isinstance(value, np.ndarray):
            self.scalar_arguments[node] = (name, value)
        return TracedArray(self, node)

    def is_traced(self, value: Any) -> bool:
        """Whether ``value`` is a traced array or scalar (of any trace)."""
        return isinstance(value, TracedArray)

    def symint_value(self, expr: Any) -> TracedArray:
        """A size used as a value (``x / x.shape[0]``): a weak Python int computed at run time."""
        return self.call(ops.SYMINT, expr=expr)

    def operand(self, value: Any) -> Any:
        """A node argument for ``value``: a Node, or a literal kept inline (Python and NumPy scalars, None)."""
        if isinstance(value, TracedArray):
            if value._tracer is not self:
                raise UnsupportedError(
                    "mixing values from two different traces (a nested compiled call?)",
                    user_source(),
                )
            node = self.parts.retaken(value._node) if self.parts.stale else value._node
            if self.regions.stale:
                self.regions.read(node)
            if self.loops.consumed:
                self.loops.check_consumed(node)
            return node if node.graph is self.graph else self.loops.lift(node)
        if isinstance(value, SymInt):
            return self.symint_value(value.expr)._node
        if value is None or isinstance(value, (bool, int, float, complex, np.generic)):
            return value
        if isinstance(value, (list, tuple)) and (
            holds_traced(value) or any(isinstance(v, SymInt) for v in _leaves(value))
        ):
            return self.operand(self.sequence_as_array(value))
        array = np.asarray(value)
        reason = unsupported_dtype_reason(array.dtype)
        if reason:
            self.refuse(f"a constant array of {reason}")
        return self._constant(value if isinstance(value, np.ndarray) else array)

    def literal_array(self, array: np.ndarray) -> Any:
        """``array``, made by ``np.array`` or ``np.asarray`` from Python numbers in the
        function: as NumPy made it, unless an earlier trace gave such an array traced values
        (``declines.LiteralsNeeded``): then an array of the graph, made afresh on each call
        and holding those numbers."""
        self.made_literals = True
        if not self.literals_traced or unsupported_dtype_reason(array.dtype):
            return array
        empty = getattr(np.empty, "__wrapped__", np.empty)  # (NumPy's, not its tracing patch)
        fresh = self.numpy.creation(empty, (array.shape, array.dtype), {})
        fresh[...] = array
        return fresh

    def concrete_needed(self) -> None:
        """A traced value is being made a concrete array or int for NumPy (``__array__``,
        ``__index__``): the trace runs again with the arrays of Python numbers it made the
        graph's (``LiteralsNeeded``: ``rules[7 - code]`` indexes one), when it made some and
        they were NumPy's."""
        if self.made_literals and not self.literals_traced:
            raise LiteralsNeeded()

    def sequence_as_array(self, value: list | tuple) -> TracedArray:
        """``np.asarray(value)`` for a (nested) list or tuple holding traced values: NumPy's
        dtype (its elements' dtypes promoted, a Python float as float64, not weak) and shape."""
        if getattr(value, "has_rows", False):  # (a list a rolled loop appended to: list_rows)
            return value.as_array(self)
        value = self._sizes_as_values(value)
        leaves = _leaves(value)
        numbers = (TracedArray, bool, int, float, complex, np.generic, np.ndarray)
        for leaf in leaves:
            if not isinstance(leaf, numbers):
                self.refuse(
                    f"a Python list or tuple holding traced values and a {type(leaf).__name__}",
                    hint="NumPy would convert it to an array of that type; keep such values apart",
                )
        dtype = np.result_type(*(np.asarray(v).dtype if _concrete(v) else v.dtype for v in leaves))
        reason = unsupported_dtype_reason(dtype)
        if reason:
            self.refuse(f"a Python list or tuple that NumPy converts to an array of {reason}")
        return self._stacked(value, dtype)

    def _sizes_as_values(self, value: Any) -> Any:
        """``value`` with each size in it (``len(x)``, a ``SymInt``) its value (``[0, len(x)]``:
        NumPy's int64 array of them)."""
        if isinstance(value, SymInt):
            return self.symint_value(value.expr)
        if type(value) in (list, tuple):
            return type(value)(self._sizes_as_values(v) for v in value)
        return value

    def _stacked(self, value: Any, dtype: np.dtype) -> Any:
        if not holds_traced(value):
            return np.asarray(value, dtype)
        if isinstance(value, TracedArray):
            return value.astype(dtype)
        whole = _rows_of_one_array(value)
        if whole is not None:  # (``np.array(tuple(x))``: a copy of x, not a node per row)
            return whole.astype(dtype)
        if len(value) > 1 and all(v is value[0] for v in value):  # (``[x0] * n``: one row, n times)
            row = self._stacked(value[0], dtype)
            return np.broadcast_to(row, (len(value), *np.shape(row))).copy()
        return np.stack([self._stacked(v, dtype) for v in value])

    def made_constant(self, array: np.ndarray) -> TracedArray:
        """An array the trace made itself (``np.mgrid``'s grid) as a constant of the graph: not
        read from outside (no caller holds it: its shape may be set)."""
        return self.wrap(self._constant(array, captured=False))

    def _constant(self, array: np.ndarray, captured: bool = True) -> Node:
        # (an array the trace made may take another shape later: ``Xi.shape = n``, a new constant;
        # the node holds a view, whose shape stays the one its meta says)
        key = (id(array), array.shape, array.strides)
        if key in self._constants:
            return self._constants[key][1]
        view = array.view()
        node = self.graph.constant(view, meta_of(view), source=user_source(), captured=captured)
        self._constants[key] = (array, node)  # keep ``array`` alive so its id stays unique
        return node

    # -- recording ---------------------------------------------------------------------------------------
    def call(self, op: ops.OpDef, *args: Any, **params: Any) -> TracedArray:
        """Record ``op(*args, **params)`` and return its proxy."""
        operands = tuple(self.operand(a) for a in args)
        params = {key: unwrap(value) for key, value in params.items()}
        for key, value in params.items():
            if holds_traced(value):
                decided_by_scalars(value)
                self.refuse(
                    f"a traced value as the {key!r} argument of {op.name}",
                    hint=f"{key!r} must be known at compile time; take it from a shape or a static argument",
                )
        try:
            node = self.graph.call(op, operands, params, source=user_source())
        except TypeError:  # a size where the op needs an int (``axis=n - 3``): specialise it
            params = self._specialised(op, params)
            if params is None:
                raise
            node = self.graph.call(op, operands, params, source=user_source())
        self.recorded += 1
        if self.budget is not None and self.recorded > self.budget:
            self._over_budget()
        if op.kind == "reduction" and isinstance(node.args[0], Node):
            return self.empty_reduction_check(op, node, params)
        return TracedArray(self, node)

    def empty_reduction_check(self, op: ops.OpDef, node: Node, params: dict) -> TracedArray:
        """A reduction over a length the data decide (``np.bincount(x).max()``): NumPy's error
        when nothing is reduced, for a reduction that raises on no element (a ``check`` node;
        the kernel itself would give its start value)."""
        x, result = node.args[0].meta, TracedArray(self, node)
        axes = normalize_axes(params.get("axis"), x.ndim)
        reduced = math.prod(x.shape[axis] for axis in axes)
        if not data_sizes_in(reduced):
            return result
        empty = tuple(0 if axis in axes else 1 for axis in range(x.ndim))
        try:
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                op.impl(np.empty(empty, x.dtype), **params)
        except ValueError as error:
            present = self.symint_value(reduced) > 0
            return self.call(ops.CHECK, result, present, error="ValueError", message=str(error))
        return result

    def _specialised(self, op: ops.OpDef, params: dict) -> dict | None:
        """``params`` with every symbolic size replaced by its int at the traced sizes, guarded;
        None when none is symbolic."""
        if not is_symbolic(params):
            return None
        env = self.graph.shape_env
        reason = f"a parameter of {op.name} that must be an int"
        return map_symbolic(params, lambda expr: env.specialize(expr, reason))

    def _over_budget(self) -> None:
        """Refuse a trace grown past the budget, naming the loops that were unrolled."""
        unrolled = self.unconverted + [n for n in self.loops.notes if not n.rolled]
        hint = "; ".join(f"the loop at {n.source} was unrolled: {n.reason}" for n in unrolled[:3])
        self.refuse(
            "a function too large to compile",
            detail=f"more than {self.budget} operations recorded (option max_graph_nodes); Numba's "
            "compile time grows about quadratically with a function's size",
            hint=hint or "split the function, or keep its loops rolled (range loops over arrays)",
        )

    def write(
        self, target: TracedArray, value: Any, index: tuple, positions: tuple | list = ()
    ) -> None:
        """Record ``target[index] = value``; the caller's memory is written as in eager mode.
        With ``positions`` (ints read from the data), ``index`` is ``element_index``'s template
        and the write a ``put``."""
        if not target.meta.writeable:
            argument = self.root_argument(target._node)
            if argument:
                whose = f"argument '{argument}'"
            elif root(target._node).target is ops.IMAG:
                whose = "the imaginary part of a real array (NumPy's read-only zeros)"
            else:
                whose = "a read-only view (such as np.broadcast_to's)"
            source = user_source()
            raise ValueError(
                f"assignment destination is read-only: the function writes into {whose}, "
                f"which is not writeable\n  at {source}"
            )
        written = self.operand(target)  # (as this graph sees it: lifted)
        self._refuse_write_through_choice(written)
        chain = self.parts.chain(target._node) if self.parts.taken else None
        if chain is not None and positions:
            self.refuse(
                "writing at a position read from the data into a view of a complex array's "
                "real or imaginary part (z.real[k] = v, k from the data)",
                hint="write the complex array itself: z[k] = complex(v, z[k].imag)",
            )
        if chain is not None:
            self.parts.write(*chain, value, index)
            return
        if positions:
            self.call(ops.PUT, target, value, *positions, index=index)
        else:
            self.call(ops.SETITEM, target, value, index=index)
        if self.regions.taken:  # (after: the value written may be such a region, read before)
            self.regions.written(written)
        self.parts.written(root(target._node))

    def chose(self, items: list) -> None:
        """Note a branch's outputs that are one of several memories as the data decide
        (``y = x if c else z``), which writes must not reach unseen."""
        for item in items:
            chosen = chosen_memories(item) if not item.meta.scalar else set()
            if chosen:
                self.choices.setdefault(self.graph, []).append((item, chosen))

    def _refuse_write_through_choice(self, node: Node) -> None:
        """Refuse a write into an array a branch chose, or into an array one may be: the
        graph holds the chosen one as a value of its own, which would not see the write."""
        memory = memory_of(node)
        noted = any(memory in chosen for _, chosen in self.choices.get(self.graph, ()))
        if noted or chosen_memories(node):
            self.refuse(
                "a write into an array a branch chose, or into one it may be",
                detail="after `y = x if c else z`, y is x or z as the data decide, and a write "
                "through y, or into x or z, changes the other name too",
                hint="copy the chosen array (`y = (x if c else z).copy()`), or choose values "
                "with np.where",
            )

    def gather_by_mask(self, array: TracedArray, index: Any) -> masks.MaskedValue | None:
        """``array[index]`` kept at ``array``'s shape when ``index`` is a traced boolean array
        (``masks``); None for any other index."""
        mask = masks.mask_of(array, index)
        if mask is None:
            beside = masks.beside_basic(index)  # (X[m, :], X[m, 0]: X[:, 0][m])
            return None if beside is None else self.gather_by_mask(array[beside[0]], beside[1])
        return masks.MaskedValue(array, mask, user_source())

    def callback(self, function: Callable, args: tuple, kwargs: dict) -> None:
        """Record ``function(*args, **kwargs)``, called for its effect (``print``): a
        ``callback`` node, run on every call with that call's values (``ir/callbacks.py``)."""
        operands: list = []

        def leaf(value: Any) -> Any:
            if isinstance(value, (TracedArray, SymInt)):
                operands.append(value)
                return Operand(len(operands) - 1)
            if holds_marker(value):  # (``f"r={r}"``: formatted on each call)
                return as_text(self.texts, value, leaf)
            if isinstance(value, (tuple, list)) and not hasattr(type(value), "_fields"):
                items = [leaf(v) for v in value]  # (a list grown in loops: its items, or escape)
                return tuple(items) if isinstance(value, tuple) else items
            if type(value) is dict:
                return {k: leaf(v) for k, v in value.items()}
            return value

        template = (tuple(leaf(a) for a in args), {k: leaf(v) for k, v in kwargs.items()})
        call = Callback(getattr(function, "__name__", "call"), function, template)
        self.graph.call(
            ops.CALLBACK,
            (self._effect_token(), *(self.operand(v) for v in operands)),
            {"call": call},
            source=user_source(),
        )

    def raise_unless(self, ok: TracedArray, error: str, message: str | None) -> None:
        """Record the user's ``if not ok: raise error(message)``: a ``raise_unless`` node, run on every
        call, in order among the function's prints."""
        self.graph.call(
            ops.RAISE_UNLESS,
            (self._effect_token(), self.operand(ok)),
            {"error": error, "message": message},
            source=user_source(),
        )

    def _effect_token(self) -> Node | bool:
        """The token of the graph's last ``callback`` or ``raise_unless`` (True for its first): the
        next one takes it, so that no pass reorders two of them."""
        effects = (ops.CALLBACK, ops.RAISE_UNLESS)
        previous = [n for n in self.graph.nodes if n.op == "call" and n.target in effects]
        return previous[-1] if previous else True

    def write_by_mask(self, target: TracedArray, index: Any, value: Any) -> bool:
        """Record ``target[index] = value`` when ``index`` is a traced boolean array; False
        (nothing recorded) for any other index."""
        beside = masks.beside_basic(index)  # (data[m, i] = v: data[:, i][m] = v)
        if beside is not None:
            target, index = target[beside[0]], beside[1]
        mask = masks.mask_of(target, index)
        if mask is not None:
            masks.assign(target, mask, value)
        return mask is not None

    @contextlib.contextmanager
    def recording_after(self, graph: Graph, anchor: Node | None):
        """Record into ``graph`` (``loops.encloses``) right after ``anchor`` (None: first) inside the
        ``with`` block: a value as it was there (NumPy's copy made by ``x[m]``)."""
        saved = self.graph, self._constants, self.loops.frame
        self.graph, self._constants = graph, {}
        frame = self.loops.frame  # (values are lifted into ``graph``'s body, not the current)
        while frame is not None and frame.graph is not graph:
            frame = frame.parent
        self.loops.frame = frame
        place = graph.inserting_after(anchor) if anchor else graph.inserting_before(graph.nodes[0])
        try:
            with place:
                yield
        finally:
            self.graph, self._constants, self.loops.frame = saved
            graph.placeholders_first()  # (an input lifted into a loop body meanwhile)

    def write_by_indices(self, target: TracedArray, index: Any, value: Any) -> bool:
        """Record ``target[idx] = value`` when ``idx`` is an integer array (or a tuple of them:
        ``scatters.scatter_assign``), or a slice stepping by a loop index (``stepped_assign``);
        False (nothing recorded) for any other index."""

        def gathered(item: Any) -> Any:  # (positions gathered by a mask: ``N[Xi[I], Yi[I]]``)
            if isinstance(item, masks.MaskedValue):
                return item.whole("writing at the positions of")
            return item

        index = tuple(map(gathered, index)) if type(index) is tuple else gathered(index)
        items = index if type(index) is tuple else (index,)
        if isinstance(value, masks.MaskedValue) and any(isinstance(i, TracedArray) for i in items):
            value = value.whole("writing")  # (``out[idx[m]] = x[m]``: as many values)
        return scatter_assign(self, target, index, value) or stepped_assign(
            self, target, index, value
        )

    def wrap(self, node: Node) -> TracedArray:
        """The proxy of ``node`` the traced function sees."""
        return TracedArray(self, node)

    def root_argument(self, node: Node) -> str | None:
        """The read-only argument whose memory ``node`` views (following view ops back), if any."""
        owner = root(node)
        return self.argument_of.get(owner) if not owner.meta.writeable else None


def _rows_of_one_array(items: Any) -> TracedArray | None:
    """The array whose rows ``items`` are, each once and in order (``tuple(x)``, ``list(x)``,
    ``[x[0], x[1], x[2]]`` of a traced ``x`` of three rows), or None."""
    if not items or not all(isinstance(v, TracedArray) for v in items):
        return None
    nodes = [v._node for v in items]
    base = nodes[0].args[0] if nodes[0].target is ops.GETITEM else None
    if base is None or base.meta.ndim == 0:
        return None
    graph = items[0]._tracer.graph
    if nodes[0].graph is not graph or graph.written_after(nodes[0], base):
        return None  # (rows taken before a write: their values, not the array's new ones)
    if graph.shape_env.specialize(base.meta.shape[0], "iterated") != len(items):
        return None  # (iterating ``x`` specialised its length already)
    for position, node in enumerate(nodes):
        if node.target is not ops.GETITEM or node.args[0] is not base:
            return None
        if tuple(node.kwargs["index"]) != (position,):
            return None
    return items[0]._tracer.wrap(base)


def _leaves(value: Any) -> list:
    if isinstance(value, (list, tuple)):
        return [leaf for v in value for leaf in _leaves(v)]
    return [value]


def _concrete(value: Any) -> bool:
    return not isinstance(value, TracedArray)


class _Active(threading.local):
    """Per thread: the tracer recording there (None: none). A class attribute, so that a thread
    that never traced reads None without the cost of a failed attribute lookup."""

    tracer: "Tracer | None" = None


ACTIVE = _Active()


def current_tracer() -> Tracer | None:
    """The tracer active in this thread, if any."""
    return ACTIVE.tracer
