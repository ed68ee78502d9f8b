"""Python's builtins called on traced values inside converted code (the capture front-end
hands them to the loop handler): ``len`` of a traced array, ``max``/``min`` of traced scalars
or over a traced vector (a loop),
``int``/``float`` of a traced scalar, ``math`` functions of them (``math_calls``),
``np.ndarray(shape, dtype)`` as a new array, ``type`` and ``isinstance`` as eager mode answers.

A part of the loop tracing (``loops.LoopTracer``), which provides ``tracer``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..capture.runtime import LoopInfo, is_math
from ..capture.tables import is_table
from ..errors import source_text, user_source
from ..ir import externs, ops
from ..ir.shape_env import data_sizes_in
from ..ir.symbolic import free_symbols
from . import number_lists
from .data_lengths import LengthFromData
from .list_rows import GrowingList
from .math_calls import math_call
from .number_lists import NumberList
from .symint import SymInt
from .traced_array import TracedArray, holds_traced


class PythonBuiltins:
    """The handler's ``builtin`` (see the module docstring), and ``capture_table``."""

    def capture_table(self, table, index, made=False):
        """``table[index]`` of a lookup table (``capture.tables``: a list or tuple of ints or
        floats the compiled function reads from its module or closure, or is given, which its
        guard holds, or one it ``made`` itself and never changes) at a traced integer or a loop
        index: the element of the table as a constant array, as a Python int or float (weak),
        out of range an IndexError as Python's; else NotImplemented."""
        tracer = self.tracer
        if isinstance(index, SymInt) and free_symbols(index.expr) & set(
            tracer.graph.shape_env.loops
        ):
            index = tracer.symint_value(index.expr)  # (a loop index: one read for every trip)
        if not (tracer.is_traced(index) and index.ndim == 0 and index.dtype.kind in "iu"):
            return NotImplemented
        if not is_table(table) or type(table[0]) is bool:
            return NotImplemented
        if not made and not any(table is own for own in tracer.tables):
            return NotImplemented
        kind = "int" if type(table[0]) is int else "float"
        try:  # (NumPy makes ints past int64 floats, or objects: not as Python reads them)
            values = np.array(table, dtype=np.int64 if kind == "int" else np.float64)
        except OverflowError:
            return NotImplemented
        return tracer.call(ops.PYTHON_SCALAR, tracer.wrap(tracer.operand(values))[index], kind=kind)

    def number_list(self, value, counts: tuple):
        """``[value] * n`` (or rows) made in converted code: a ``NumberList`` (an array behind
        the list) or NotImplemented (``number_lists.make``)."""
        return number_lists.make(self.tracer, value, counts)

    def library_call(self, function, args: tuple, kwargs: dict):
        """A SciPy function (``externs.library_name``) given traced arrays: one ``extern`` node
        of its probed results (``NumpyCalls.probed_extern``); else NotImplemented."""
        if externs.library_name(function) is None:
            return NotImplemented
        if not any(holds_traced(v) for v in (*args, *kwargs.values())):
            return NotImplemented
        return self.tracer.numpy.probed_extern(function, args, kwargs)

    def builtin(self, function, args: tuple, kwargs: dict):
        """``len(x)`` of a traced array: its first size, symbolic (Python's ``len`` must return
        an int, which would specialise the trace). Python's ``max``/``min`` of traced scalars
        of one dtype (and Python numbers of their kind), given one by one or as one list or
        tuple: ``max(a, b)`` is ``a`` unless ``b > a`` (so NaN and ties pick as Python does),
        as a select. ``int`` of a symbolic int (a loop index): itself; ``float`` of one, and
        ``int`` and ``float`` of a traced scalar: ``scalar_builtin``; ``math`` functions of
        them: ``math_call``. ``np.ndarray(shape, dtype)``: ``np.empty``. Else
        ``NotImplemented``: Python runs it."""
        if function in (type, isinstance) and args and not kwargs:
            return _type_question(self.tracer, function, args)
        if function in (int, float) and len(args) == 1 and not kwargs:
            if isinstance(args[0], SymInt):  # (a loop index or a size stays symbolic)
                if function is int:
                    return args[0]
                args = (self.tracer.symint_value(args[0].expr),)
        if function in (int, float):
            return scalar_builtin(self.tracer, function, args, kwargs)
        if is_math(function):
            to_int = lambda value: scalar_builtin(self.tracer, int, (value,), {})  # noqa: E731
            return math_call(self.tracer, function, args, kwargs, to_int)
        if function is np.ndarray:
            return _new_array(self.tracer, args, kwargs)
        whole = args[0] if len(args) == 1 and not kwargs else None
        if isinstance(whole, NumberList):  # (a list of numbers traced as an array)
            return whole.length() if function is len else whole.extreme(function)
        if function is len:
            if isinstance(whole, GrowingList):
                return whole.length()
            if isinstance(whole, LengthFromData):
                whole = whole.whole("len() of")
            traced = self.tracer.is_traced(whole) and whole.ndim > 0
            return whole.shape[0] if traced else NotImplemented
        if len(args) == 1 and not kwargs and self.tracer.is_traced(args[0]) and args[0].ndim == 1:
            return extreme_loop(self.tracer, args[0], function)
        if len(args) == 1 and not kwargs and type(args[0]) in (list, tuple) and len(args[0]) > 1:
            args = tuple(args[0])  # (``max(diffs)`` of a list of scalars: as ``max(*diffs)``)
        beside_data = any(self.tracer.is_traced(a) for a in args)
        args = tuple(  # (``max(len(x[m]), 1)``: a length the data decide, as a value; and
            # ``min(left + 1, n - 1)``, a size beside a value read from the data)
            a.value() if isinstance(a, SymInt) and (beside_data or data_sizes_in(a.expr)) else a
            for a in args
        )
        traced = [a for a in args if self.tracer.is_traced(a)]
        if kwargs or len(args) < 2 or not traced or any(a.ndim for a in traced):
            return NotImplemented
        strong = {a.dtype for a in traced if not a.meta.weak} or {a.dtype for a in traced}
        if len(strong) != 1 or not all(_fits(a, *strong) for a in args):
            return NotImplemented
        result = args[0]
        for value in args[1:]:
            better = value > result if function is max else value < result
            result = np.where(better, value, result)
            result = result if result.meta.scalar else result[()]  # (Python floats stay so)
        return result


def _type_question(tracer, function, args: tuple):
    """``type(x)`` and ``isinstance(x, cls)`` of a traced value as eager mode answers them, by
    the type the value has there: an array is an ``np.ndarray``, a scalar read from one its
    NumPy type (``np.float64``, a ``float``), a Python scalar (weak) its Python type, a size
    an ``int``. NotImplemented for anything else."""
    value = args[0]
    if isinstance(value, SymInt):
        eager = int
    elif tracer.is_traced(value):
        meta = value.meta
        python = {"b": bool, "i": int, "u": int, "f": float, "c": complex}
        eager = np.ndarray if not meta.scalar else meta.dtype.type
        eager = python[meta.dtype.kind] if meta.scalar and meta.weak else eager
    else:
        return NotImplemented
    if function is type:
        return eager if len(args) == 1 else NotImplemented
    return issubclass(eager, args[1]) if len(args) == 2 else NotImplemented


def extreme_loop(tracer, vector, function):
    """Python's ``max(vector)`` (``min``) of a traced 1-d array, as Python computes it: the
    first element, replaced by each later one that compares greater (smaller; a NaN never
    does, nor is replaced unless first), as one loop over the elements."""
    name = function.__name__
    length = vector.shape[0]
    if not isinstance(length, SymInt) and length == 0:
        return function(())  # (Python's own ValueError)
    source = user_source()
    info = LoopInfo.at(source, f"{name}() over a vector ({source_text(source)})", ("best",))

    def body(i, best):
        item = vector[i]
        better = item > best if function is max else item < best
        return (np.where(better, item, best)[()],)

    after = tracer.loops.capture_range(body, 1, length, 1, (vector[0],), info)
    if after is not NotImplemented:
        return after[0]
    best = vector[0]  # (loops unrolled: as many selects, the length specialised)
    for i in range(1, int(length)):
        (best,) = body(i, best)
    return best


def scalar_builtin(tracer, function, args: tuple, kwargs: dict):
    """``int(x)`` and ``float(x)`` of one traced real scalar: a ``python_scalar`` node (weak,
    as a Python scalar is). ``int`` truncates toward zero; on the call a NaN raises Python's
    ValueError, an infinity or a value past int64 its OverflowError (``check`` nodes).
    NotImplemented for anything else (Python runs it: a traced value refuses)."""
    value = args[0] if len(args) == 1 and not kwargs else None
    if not tracer.is_traced(value) or value.ndim or value.dtype.kind not in "biuf":
        return NotImplemented
    kind = "float" if function is float else "int"
    result = tracer.call(ops.PYTHON_SCALAR, value, kind=kind)
    if kind == "float" or value.dtype.kind != "f":
        return result
    result = tracer.call(
        ops.CHECK,
        result,
        ~np.isnan(value),
        error="ValueError",
        message="cannot convert float NaN to integer",
    )
    in_range = np.abs(value) < 2.0**63
    message = "cannot convert float infinity (or a value past int64) to integer"
    return tracer.call(ops.CHECK, result, in_range, error="OverflowError", message=message)


def _new_array(tracer, args: tuple, kwargs: dict) -> Any:
    """``np.ndarray(shape, dtype, order=...)`` without a buffer: a new array, as ``np.empty``
    makes it (so that traced values can be written into it); NotImplemented otherwise."""

    def new(shape, dtype=float, buffer=None, offset=0, strides=None, order=None):
        if buffer is not None or offset or strides is not None:
            return NotImplemented
        shape = tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)
        return tracer.call(ops.EMPTY, shape=shape, dtype=np.dtype(dtype), order=order or "C")

    return new(*args, **kwargs)


def _fits(value: Any, dtype: np.dtype) -> bool:
    """Whether a value beside traced scalars of ``dtype`` in ``max``/``min`` keeps their type:
    one of them; a Python number (as a traced one, weak: ``m = 0`` carried by a loop) an int
    beside ints or floats, a float beside floats: whichever wins, the value is the same."""
    if isinstance(value, TracedArray):
        if not value.meta.weak:
            return value.dtype == dtype
        value = value.dtype.type(0).item()
    if type(value) is int:
        return dtype.kind in "iuf"
    return type(value) is float and dtype.kind == "f"
