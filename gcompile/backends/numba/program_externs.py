"""Library calls (``extern`` nodes, ``ir/externs.py``) and calls made for their effect
(``callback`` nodes: ``print``) in loop programs: a call back into Python.

Numba's own versions of these functions take fewer arguments and compute in other ways (its
``np.linalg`` calls LAPACK through SciPy, its ``np.sort`` is a different algorithm), so a
program calls NumPy itself, through Numba's object mode::

    with _objmode(extern_1='float64[:]'):
        extern_1 = np.linalg.solve(J, r)

Its results are declared with the types the extern's meta gives, in its layout. A call costs
about 6 us (measured: ``np.linalg.solve`` of a 3x3 matrix and ``det`` in one block, 5.8 us a
trip), against a trip of a loop run by the interpreter, and the rest of the loop compiles.

A part of the program lowering (``programs._ProgramLowering``).
"""

from __future__ import annotations

import math
from dataclasses import replace

import numba
import numpy as np

from ...ir import callbacks, externs, ops
from ...ir.externs import ExternCall, Operand
from ...ir.graph import Node
from ...ir.meta import TupleMeta
from ...ir.shape_env import data_size_bindings
from ...loops.nodes import (
    Assign,
    Attr,
    Call,
    Compare,
    Const,
    Eval,
    If,
    Item,
    Let,
    Name,
    ObjectMode,
    Raise,
    Tuple,
)
from . import histograms
from .copies import ROW_GATHERS
from .rules import NoTemplate

# the per-call cost ``explain`` states for a library call in a loop program
CALLBACK_COST = "about 6 us a call (Numba's object mode)"


def objmode_type(meta) -> str:
    """The Numba type text of a value of ``meta``: an array in the layout its meta promises
    (``float64[:, ::1]``: C), so kernels reading it flat accept it."""
    base = "boolean" if meta.dtype == np.bool_ else str(numba.from_dtype(meta.dtype))
    if meta.ndim == 0:
        return base
    axes = [":"] * meta.ndim
    if meta.layout in ("C", "F"):
        axes[-1 if meta.layout == "C" else 0] = "::1"
    return f"{base}[{', '.join(axes)}]"


def _spelled(call: ExternCall, value):
    """A call's argument as program source: its ``repr`` where that reads back as the value,
    ``float('inf')`` for a non-finite float; else ``NoTemplate``."""
    if isinstance(value, float) and not math.isfinite(value):
        return Call(Name("float"), (Const(repr(value)),))
    try:
        same = eval(repr(value), {"np": np}) == value  # noqa: S307 - our own literal's repr
    except Exception:
        same = False
    if same is not True:
        raise NoTemplate(f"{call.name}: an argument the program cannot spell ({value!r})")
    return Const(value)


def _native(call: ExternCall, node: Node, arguments: list, named: dict):
    """Numba's own version of a library call whose result it computes exactly as NumPy (the
    positions and counts of integers and booleans, where integers go in a sorted array of
    integers, a diagonal: no object mode), else None. Not
    ``np.extract``: Numba's raises on an empty array, where NumPy's gives an empty one."""
    dtypes = [v.meta.dtype for v in node.args]
    if call.function in (np.nonzero, np.flatnonzero) and len(named) == 1:
        return Call(Name(call.name), (named.get("a", arguments[0]),))
    if call.function is np.argwhere and len(named) == 1:  # (Numba's is Fortran-ordered)
        return Call(Name("np.ascontiguousarray"), (Call(Name("np.argwhere"), tuple(arguments)),))
    if call.function is np.diag and set(named) <= {"v", "k"} and node.args[0].meta.ndim in (1, 2):
        return Call(Name("np.diag"), (named["v"], named.get("k", Const(0))))  # (a copy, as wanted)
    if call.function is externs.CARRIER:  # (a length from a traced integer: NumPy's error too)
        return Call(Name("_s.length_carrier"), (named["shape"],))
    integers = all(d.kind == "i" for d in dtypes[:1])
    if call.function is np.unique and integers and len(named) == 1:
        return Call(Name("np.unique"), (named["ar"],))
    if call.function is np.searchsorted and set(named) <= {"a", "v", "side"}:
        if all(d.kind in "iu" for d in dtypes) and node.args[0].meta.ndim == 1:
            side = named.get("side", Const("left"))  # (positions among integers: exact)
            return Call(Name("np.searchsorted"), (named["a"], named["v"], side))
    if call.function is np.bincount and integers and set(named) <= {"x", "weights", "minlength"}:
        weights = named.get("weights", Const(None))
        return Call(Name("np.bincount"), (named["x"], weights, named.get("minlength", Const(0))))
    return None


# a gather of rows -> (its ``ROW_GATHERS`` kind, the names of its array and its selector)
_ROW_GATHER_ARGUMENTS = {
    np.take: ("take", "a", "indices"),
    np.compress: ("compress", "a", "condition"),
    np.extract: ("compress", "arr", "condition"),
}


def _row_gather(call: ExternCall, node: Node, named: dict):
    """``np.take(a, indices, axis=0)`` or ``np.compress(condition, a, axis=0)`` of a vector or
    a matrix (``X[M == k]`` in a loop), or ``np.extract`` of a vector by a boolean vector of
    its length (``x[m]``), by a loop of ``copies``, else None."""
    found = _ROW_GATHER_ARGUMENTS.get(call.function)
    if found is None or set(named) - {"a", "arr", "indices", "condition", "axis"}:
        return None
    kind, array_name, selector_name = found
    array, selector = call.get(array_name), call.get(selector_name)
    if not isinstance(selector, Operand) or not isinstance(array, Operand):
        return None
    rows, chosen = node.args[array.index].meta, node.args[selector.index].meta
    if call.function is np.extract:  # (it flattens both: the same for vectors of one length)
        if rows.ndim != 1 or chosen.shape != rows.shape:
            return None
    elif call.get("axis") != 0:
        return None
    gather = ROW_GATHERS.get((kind, rows.ndim))
    if chosen.ndim != 1 or chosen.dtype.kind != ("i" if kind == "take" else "b") or gather is None:
        return None
    given = (named[array_name], named[selector_name])
    if kind == "compress":
        given = given[::-1]
    return Call(Attr(Name("_copies"), gather.py_func.__name__), given)


def computes_histogram(node: Node) -> bool:
    """Whether ``node`` is a ``np.histogram`` call that ``histograms`` computes (in one pass,
    to the same bits as NumPy's, and faster: so a program computes it outside loops too)."""
    call = node.kwargs.get("call") if node.target is ops.EXTERN else None
    if call is None or call.function is not np.histogram:
        return False
    weights = call.get("weights")
    weights_dtype = node.args[weights.index].meta.dtype if weights is not None else None
    a_dtype = node.args[call.get("a").index].meta.dtype
    bins, span, density = call.get("bins", 10), call.get("range"), call.get("density")
    if isinstance(bins, Operand):  # (the edges given)
        edges = node.args[bins.index].meta.dtype
        return histograms.supports_edges(a_dtype, edges, weights_dtype, density)
    return histograms.supports(a_dtype, weights_dtype, bins, span, density)


def _histogram(call: ExternCall, named: dict):
    """The call of ``histograms`` computing a ``np.histogram`` that ``computes_histogram``."""
    if isinstance(call.get("bins"), Operand):
        return Call(Attr(Name("_histograms"), "at_edges"), (named["a"], named["bins"]))
    span = call.get("range")
    first, last = span if span is not None else (0, 0)  # (floats: one signature for any range)
    given = (named["a"], Const(call.get("bins", 10)), Const(float(first)), Const(float(last)))
    given += (Const(span is not None),)
    if call.get("weights") is None:
        return Call(Attr(Name("_histograms"), "counts"), given)
    return Call(Attr(Name("_histograms"), "weighted"), (*given, named["weights"]))


def _probed_shape_checks(call: ExternCall, outputs: tuple) -> list:
    """A function a probe stood for returns, on each trip, the shapes the probe found, or a
    RuntimeError says so (as the host's call does: ``externs.ExternCall.run``), never an array
    of another length written on (``np.repeat`` whose counts are data)."""
    if call.probed is None:
        return []
    checks = []
    for output, found in zip(outputs, call.probed.results):
        if not found.shape:  # (a 0-d result comes back as a scalar: object mode converted it)
            continue
        shape = Tuple(tuple(Const(int(size)) for size in found.shape))
        message = f"gcompile: {call.name} returned another shape at run time than its trace's"
        wrong = Compare(("!=",), (Attr(output, "shape"), shape))
        checks.append(If(wrong, (Raise("RuntimeError", message),)))
    return checks


class ExternCalls:
    """The program lowering's library calls and calls made for their effect (see the module
    docstring)."""

    def callback(self, node: Node) -> None:
        """A call made for its effect (``print``, ``ir/callbacks.py``): run by Python through
        object mode on each trip, with the trip's values."""
        call = node.kwargs["call"]
        if self.top() and node.args[1:]:  # (of values: printed as the host's own values)
            raise NoTemplate(f"a {call.name} call outside loops runs in the host")
        values = Tuple(tuple(self.value(v) for v in node.args[1:]))
        run = Call(Name("_run_callback"), (Const(callbacks.register(call)), values))
        self.emit(ObjectMode((), (Eval(run),)))
        self.objmode = True
        self.callbacks.append(f"{call.name} ({node.name}) in {self.where()}: {CALLBACK_COST}")
        self.values[node] = Const(True)

    def extern(self, node: Node) -> None:
        call: ExternCall = node.kwargs["call"]
        arguments = [self.extern_argument(node, call, v) for _, v in call.arguments]
        named = dict(zip((k for k, _ in call.arguments), arguments))
        if computes_histogram(node):  # (outside loops too: faster than NumPy's)
            self.helpers.add("histograms")
            self.assign(node, _histogram(call, named))
            return
        gather = _row_gather(call, node, named)
        if gather is not None:  # (outside loops too: a program needs no host step for it)
            self.helpers.add("copies")
        elif self.top():  # (NumPy's own beats Numba's there: its nonzero is 10x faster)
            raise NoTemplate(f"a library call outside loops ({call.name}) runs in the host")
        native = gather or _native(call, node, arguments, named)
        if native is not None:
            self.assign(node, native)
            self.bind_lengths(node, self.values[node])
            return
        metas = node.meta.items if isinstance(node.meta, TupleMeta) else (node.meta,)
        read_only = not metas[0].writeable and len(metas) == 1  # (np.diagonal's view: copied)
        if any(not m.writeable and not read_only or m.ndim == 0 and not m.scalar for m in metas):
            raise NoTemplate(f"{call.name} (a read-only or 0-d array result) in a loop body")
        if read_only:
            metas = (replace(metas[0], writeable=True, layout="C"),)
        several = isinstance(node.meta, TupleMeta)  # (``np.nonzero`` of a vector: a 1-tuple)
        outputs = tuple(
            self.fresh(f"{node.name}_{i}" if several else node.name) for i in range(len(metas))
        )
        values = [self.extern_argument(node, call, v) for _, v in call.arguments]
        names = [k for k, _ in call.arguments]
        positional = tuple(values[: call.positional])
        keywords = tuple(zip(names[call.positional :], values[call.positional :]))
        function = Call(Name(call.name), positional, keywords)
        if not call.name.startswith("np."):  # (another library's: its module imported)
            self.libraries.add(call.name.rpartition(".")[0])
        if read_only:
            function = Call(Name("np.array"), (function,))
        body = [Assign(Tuple(outputs), function) if several else Let(outputs[0], function)]
        body += [  # (as the meta promises: ``np.nonzero`` of a matrix gives strided views)
            Let(o, Call(Name("np.ascontiguousarray"), (o,)))
            for o, m in zip(outputs, metas)
            if m.ndim and m.layout == "C"
        ]
        self.emit(
            ObjectMode(tuple((o, objmode_type(m)) for o, m in zip(outputs, metas)), tuple(body))
        )
        for check in _probed_shape_checks(call, outputs):  # (Numba raises outside object mode)
            self.emit(check)
        self.objmode = True
        self.callbacks.append(f"{call.name} ({node.name}) in {self.where()}: {CALLBACK_COST}")
        if several:
            self.assign(node, Tuple(outputs))
        else:
            self.values[node] = outputs[0]
        self.bind_lengths(node, self.values[node])

    def bind_lengths(self, node: Node, result) -> None:
        """Each length the data decide that ``node``'s ``result`` (a variable, or a tuple of
        them) has, read from it (``np.nonzero``'s count)."""
        for symbol, item, axis in data_size_bindings(node.meta):
            if symbol in self.symbols:  # (bound by an earlier value of that length: x[m], y[m])
                continue
            value = result if item is None else Item(result, (Const(item),))
            length = self.fresh(symbol.name)
            self.emit(Let(length, Item(Attr(value, "shape"), (Const(axis),))))
            self.symbols[symbol] = length

    def where(self) -> str:
        """The innermost open loop (``loop for_range_1``), or a branch outside loops."""
        return f"loop {self.open_loops[-1][0].name}" if self.open_loops else "a branch"

    def extern_argument(self, node: Node, call: ExternCall, value):
        """An argument of a library call as program source: an operand's value, a tuple of
        arguments, or a literal."""
        if isinstance(value, Operand):
            return self.value(node.args[value.index])
        if isinstance(value, tuple) and any(isinstance(v, Operand) for v in value):
            return Tuple(tuple(self.extern_argument(node, call, v) for v in value))
        return _spelled(call, value)
