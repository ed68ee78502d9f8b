"""TracedArray: the proxy NumPy dispatches to while a function is traced into a Graph.

A traced function receives ``TracedArray`` objects in place of its array (and
Python ``float``) arguments. NumPy hands every operation on them back to us
through ``__array_ufunc__`` and ``__array_function__``; Python operators,
indexing and methods are defined here. Each operation becomes one node of the
graph, looked up in the op table (``ir/ops.py``) - this module keeps no list of
ops of its own. Creation functions that take no array (``np.zeros``) and
conversions that NumPy does not dispatch (``np.asarray``) are replaced in the
``numpy`` namespace while tracing, for the tracing thread only.

Shapes and dtypes are concrete, so Python control flow on them runs normally.
Anything that needs a *value* (``bool(t)``, ``float(t)``, boolean masks) raises
``UnsupportedError`` naming the construct and the user's line.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import os
import sys
import threading
from dataclasses import replace
from typing import Any, Callable

import numpy as np

from . import capture
from .complex_parts import ComplexParts
from .errors import GCOMPILE_DIR, NUMPY_DIR, UnsupportedError, refusal_from, source_text
from .ir import ops
from .ir.alias import root
from .ir.control import LoopNote
from .ir.graph import Graph, Node
from .ir.meta import TensorMeta, broadcast_shapes, meta_of, unsupported_dtype_reason
from .ir.pytree import TreeSpec, flatten
from .ir.shape_env import SIZE_LOW, SymbolicError, decide, is_symbolic, map_symbolic, using
from .ir.symbolic import is_expr
from .loop_tracing import LoopEscape, LoopTracer
from .symint import SymInt, unwrap

_CAPTURE_DIR = os.path.join(GCOMPILE_DIR, "capture") + os.sep  # converted loops' runtime

# Lookups built from the op table.
_UFUNC_OPS = {f: op for op in ops.OPS for f in op.numpy if isinstance(f, np.ufunc)}
_FUNCTION_OPS = {
    f: op
    for op in ops.OPS
    for f in op.numpy
    if not isinstance(f, np.ufunc) and op.kind != "creation"
}
_CREATION_OPS = {f: op for op in ops.OPS if op.kind == "creation" for f in op.numpy}
_REDUCE_OPS = {op.reduces: op for op in ops.OPS if op.reduces is not None}
_ACCUMULATE_OPS = {op.accumulates: op for op in ops.OPS if op.accumulates is not None}

_ALLOWED_UFUNC_KWARGS = {
    "where": True,
    "casting": "same_kind",
    "order": "K",
    "subok": True,
    "signature": None,
}


def user_source() -> str | None:
    """``file:line`` of the innermost frame outside gcompile and NumPy (the user's code)."""
    frame = sys._getframe(1)
    while frame is not None:
        filename = frame.f_code.co_filename
        if not (
            filename.startswith(GCOMPILE_DIR)
            or filename.startswith(NUMPY_DIR)
            or filename.startswith("<__array")
        ):
            return f"{filename}:{frame.f_lineno}"
        frame = frame.f_back
    return None


def _numpy_name(func: Any) -> str:
    module = getattr(func, "__module__", None) or "numpy"
    module = "np" if module in ("numpy", "numpy._core.multiarray", "numpy._core.umath") else module
    return f"{module}.{getattr(func, '__name__', repr(func))}"


class _Flags:
    """The subset of ``ndarray.flags`` a traced array can answer from its meta."""

    def __init__(self, meta: TensorMeta):
        contiguous_1d = meta.ndim <= 1 or decide("<=", meta.size, 1, "x.flags")
        self.c_contiguous = meta.layout == "C" or (contiguous_1d and meta.layout != "A")
        self.f_contiguous = meta.layout == "F" or (contiguous_1d and meta.layout != "A")
        self.writeable = meta.writeable

    def __getitem__(self, key: str) -> bool:
        return {
            "C_CONTIGUOUS": self.c_contiguous,
            "F_CONTIGUOUS": self.f_contiguous,
            "WRITEABLE": self.writeable,
        }[key.upper()]


class TracedArray:
    """Stands for an array (or scalar) while a function is traced; every operation is recorded."""

    __slots__ = ("_tracer", "_node")
    __array_priority__ = 1000
    __hash__ = None  # like ndarray

    def __init__(self, tracer: "Tracer", node: Node):
        self._tracer = tracer
        self._node = node

    # -- attributes known at trace time ---------------------------------------------
    @property
    def meta(self) -> TensorMeta:
        return self._node.meta

    @property
    def shape(self) -> tuple:
        """The sizes: ints, and ``SymInt`` for sizes known only at call time."""
        return tuple(SymInt.wrap(self._tracer, s) for s in self._node.meta.shape)

    @property
    def dtype(self) -> np.dtype:
        return self._node.meta.dtype

    @property
    def ndim(self) -> int:
        return self._node.meta.ndim

    @property
    def size(self) -> int | SymInt:
        return SymInt.wrap(self._tracer, self._node.meta.size)

    @property
    def itemsize(self) -> int:
        return self._node.meta.dtype.itemsize

    @property
    def nbytes(self) -> int | SymInt:
        return SymInt.wrap(self._tracer, self._node.meta.nbytes)

    @property
    def flags(self) -> _Flags:
        return _Flags(self._node.meta)

    @property
    def T(self) -> "TracedArray":
        return np.transpose(self)

    @property
    def real(self) -> "TracedArray":
        """The real part: the array itself unless it is complex (as NumPy's ``.real``)."""
        if self.dtype.kind != "c":
            return self
        return self._tracer.parts.take(ops.REAL, self)

    @real.setter
    def real(self, value: Any) -> None:
        self._tracer.parts.assign(self, ops.REAL, value)

    @property
    def imag(self) -> "TracedArray":
        """The imaginary part (read-only zeros for a real array, as NumPy's ``.imag``)."""
        return self._tracer.parts.take(ops.IMAG, self)

    @imag.setter
    def imag(self, value: Any) -> None:
        self._tracer.parts.assign(self, ops.IMAG, value)

    def __repr__(self) -> str:
        return f"TracedArray(%{self._node.name}: {self._node.meta.short()})"

    # -- NumPy protocols -----------------------------------------------------------------
    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
        return self._tracer.ufunc(ufunc, method, inputs, kwargs)

    def __array_function__(self, func: Callable, types: tuple, args: tuple, kwargs: dict) -> Any:
        return self._tracer.array_function(func, args, kwargs)

    # -- indexing ----------------------------------------------------------------------------
    def __getitem__(self, index: Any) -> "TracedArray":
        return self._tracer.call(ops.GETITEM, self, index=self._tracer.basic_index(index))

    def __setitem__(self, index: Any, value: Any) -> None:
        self._tracer.write(self, value, self._tracer.basic_index(index))

    def __len__(self) -> int:
        if self.ndim == 0:
            raise TypeError("len() of unsized object")
        return int(self.shape[0])  # Python wants an int: a symbolic size is specialised

    def __iter__(self):
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(len(self)))

    # -- conversions that need data: refused ------------------------------------------------------
    def __bool__(self) -> bool:
        self._tracer.refuse(
            "bool() of a traced value (Python `if`, `while`, `and`, `or`, `not` on array data)",
            hint="use np.where(cond, a, b) to choose elementwise, or pass the deciding value in "
            "static_argnames so it is fixed at compile time",
        )

    def __float__(self) -> float:
        self._tracer.refuse(
            "float() of a traced value (also math.* functions, which convert to float)",
            hint="use the NumPy function instead (np.exp, np.sqrt, ...)",
        )

    def __int__(self) -> int:
        self._tracer.refuse(
            "int() of a traced value", hint="keep the value as an array: x.astype(np.int64)"
        )

    def __complex__(self) -> complex:
        self._tracer.refuse("complex() of a traced value", hint="use x.astype(np.complex128)")

    def __index__(self) -> int:
        self._tracer.refuse(
            "a traced value used as a Python integer (an index, a size or a range bound)",
            hint="sizes must come from shapes (x.shape[0]) or static arguments",
        )

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        self._tracer.refuse(
            "converting a traced value to a concrete NumPy array (a NumPy function given a Python "
            "list or tuple of traced values made in the function, np.asarray inside a library "
            "that NumPy does not dispatch, or writing a traced value into an array that is not an "
            "argument)",
            hint="build an array from traced values with np.stack([...]); create a destination "
            "inside the function (np.zeros, np.empty_like) or pass it as an argument",
        )

    def __contains__(self, item: Any) -> bool:
        self._tracer.refuse("`in` on a traced array (needs data)", hint="use np.any(x == item)")

    def item(self, *args: Any) -> Any:
        self._tracer.refuse("x.item() (reads a value)", hint="keep the value as a 0-d array")

    def tolist(self) -> Any:
        self._tracer.refuse("x.tolist() (reads the data)")

    def __getattr__(self, name: str) -> Any:
        # Protocol probes (``__array_struct__``...) must see AttributeError so NumPy tries the next protocol.
        if hasattr(np.ndarray, name) and not name.startswith("__"):
            self._tracer.refuse(f"the ndarray attribute or method .{name}")
        raise AttributeError(f"'TracedArray' object has no attribute {name!r}")

    # -- methods: the same NumPy functions, so the table and the binding rules are shared -----------------
    def sum(self, *args, **kwargs):
        return np.sum(self, *args, **kwargs)

    def prod(self, *args, **kwargs):
        return np.prod(self, *args, **kwargs)

    def mean(self, *args, **kwargs):
        return np.mean(self, *args, **kwargs)

    def max(self, *args, **kwargs):
        return np.max(self, *args, **kwargs)

    def min(self, *args, **kwargs):
        return np.min(self, *args, **kwargs)

    def argmax(self, *args, **kwargs):
        return np.argmax(self, *args, **kwargs)

    def argmin(self, *args, **kwargs):
        return np.argmin(self, *args, **kwargs)

    def any(self, *args, **kwargs):
        return np.any(self, *args, **kwargs)

    def all(self, *args, **kwargs):
        return np.all(self, *args, **kwargs)

    def var(self, *args, **kwargs):
        return np.var(self, *args, **kwargs)

    def std(self, *args, **kwargs):
        return np.std(self, *args, **kwargs)

    def cumsum(self, *args, **kwargs):
        return np.cumsum(self, *args, **kwargs)

    def cumprod(self, *args, **kwargs):
        return np.cumprod(self, *args, **kwargs)

    def clip(self, *args, **kwargs):
        return np.clip(self, *args, **kwargs)

    def dot(self, *args, **kwargs):
        return np.dot(self, *args, **kwargs)

    def round(self, *args, **kwargs):
        return np.round(self, *args, **kwargs)

    def __round__(self, ndigits=None):
        if not self.meta.scalar:
            raise TypeError("type numpy.ndarray doesn't define __round__ method")
        if ndigits is None:  # round() of a scalar is a Python int: it needs the value
            self._tracer.refuse(
                "round() of a traced scalar (returns a Python int)",
                hint="use np.round(x) to keep an array value",
            )
        return np.round(self, ndigits)

    def trace(self, *args, **kwargs):
        return np.trace(self, *args, **kwargs)

    def conj(self):
        return np.conjugate(self)

    conjugate = conj

    def swapaxes(self, axis1, axis2):
        return np.swapaxes(self, axis1, axis2)

    def squeeze(self, axis=None):
        return np.squeeze(self, axis)

    def ravel(self, order="C"):
        return np.ravel(self, order)

    def flatten(self, order="C"):
        return np.copy(np.ravel(self, order))

    def reshape(self, *shape, order="C"):
        return np.reshape(self, shape[0] if len(shape) == 1 else shape, order=order)

    def transpose(self, *axes):
        return np.transpose(self, axes[0] if len(axes) == 1 else (axes or None))

    def astype(self, dtype, order="K", casting="unsafe", subok=True, copy=True):
        if not copy and np.dtype(dtype) == self.dtype:
            return self
        if casting != "unsafe" and not np.can_cast(self.dtype, dtype, casting):
            raise TypeError(
                f"Cannot cast array data from {self.dtype!r} to {np.dtype(dtype)!r} according to "
                f"the rule {casting!r}"
            )
        params = {"order": order} if order != "K" else {}
        return self._tracer.call(ops.ASTYPE, self, dtype=np.dtype(dtype), **params)

    def copy(self, order="C"):
        if self.meta.scalar:  # a NumPy scalar's copy is an equal (immutable) scalar
            return self
        return self._tracer.call(ops.COPY, self, order=order)

    def fill(self, value):
        self[...] = value


_REFLECTED_BY_PYTHON = frozenset({"eq", "ne", "lt", "le", "gt", "ge"})  # no __r*__ or __i*__


def _optional_ufunc_op(ufunc: np.ufunc) -> ops.OpDef | None:
    """The op of a ufunc from an optional library (SciPy), registered on first use."""
    ops.load_scipy_special()
    for op in ops.OPS:
        if op.kind == "elementwise" and isinstance(op.impl, np.ufunc):
            _UFUNC_OPS.setdefault(op.impl, op)
    return _UFUNC_OPS.get(ufunc)


def _install_operators() -> None:
    """Python operators from ``OpDef.dunder`` (FX's magic_methods, read from our table)."""
    for op in ops.OPS:
        if not op.dunder:
            continue
        ufunc = op.numpy[0]
        if op.kind == "elementwise" and ufunc.nin == 1:
            setattr(TracedArray, f"__{op.dunder}__", _unary_operator(ufunc))
            continue
        setattr(TracedArray, f"__{op.dunder}__", _binary_operator(ufunc, reflected=False))
        if op.dunder not in _REFLECTED_BY_PYTHON:
            setattr(TracedArray, f"__r{op.dunder}__", _binary_operator(ufunc, reflected=True))
            setattr(TracedArray, f"__i{op.dunder}__", _inplace_operator(ufunc))


def _unary_operator(ufunc: np.ufunc) -> Callable:
    def method(self: TracedArray) -> TracedArray:
        return self._tracer.ufunc(ufunc, "__call__", (self,), {}, python_operator=True)

    return method


def _binary_operator(ufunc: np.ufunc, reflected: bool) -> Callable:
    def method(self: TracedArray, other: Any) -> TracedArray:
        operands = (other, self) if reflected else (self, other)
        return self._tracer.ufunc(ufunc, "__call__", operands, {}, python_operator=True)

    return method


def _inplace_operator(ufunc: np.ufunc) -> Callable:
    def method(self: TracedArray, other: Any) -> TracedArray:
        if self.meta.scalar:  # scalars are immutable: Python rebinds the name
            return self._tracer.ufunc(ufunc, "__call__", (self, other), {}, python_operator=True)
        return self._tracer.ufunc(ufunc, "__call__", (self, other), {"out": (self,)})

    return method


def _fast_power(base: TracedArray, exponent: Any) -> np.ufunc | None:
    """The ufunc NumPy's ``array ** scalar`` uses instead of ``power`` for special exponents.

    ``ndarray.__pow__`` takes a fast path for an exact Python int 2 (``square``, any
    dtype: ``bool ** 2`` is int8), and for float or complex arrays an exact int -1
    (``reciprocal``) or float 0.5 (``sqrt``). The results differ from ``power`` in
    dtype or in the last bit, so the graph records what NumPy actually runs.
    """
    if base.meta.scalar or type(exponent) not in (int, float):
        return None
    if type(exponent) is int and exponent == 2:
        return np.square
    if base.dtype.kind not in "fc":
        return None
    if type(exponent) is int and exponent == -1:
        return np.reciprocal
    if type(exponent) is float and exponent == 0.5:
        return np.sqrt
    return None


def _power_operator(self: TracedArray, other: Any) -> TracedArray:
    fast = _fast_power(self, other)
    if fast is not None:
        return self._tracer.ufunc(fast, "__call__", (self,), {}, python_operator=True)
    return self._tracer.ufunc(np.power, "__call__", (self, other), {}, python_operator=True)


def _inplace_power_operator(self: TracedArray, other: Any) -> TracedArray:
    fast = _fast_power(self, other)
    if fast is None:
        return _inplace_operator(np.power)(self, other)
    return self._tracer.ufunc(fast, "__call__", (self,), {"out": (self,)})


def _divmod_operator(self: TracedArray, other: Any) -> tuple:
    return self // other, self % other


def _rdivmod_operator(self: TracedArray, other: Any) -> tuple:
    return other // self, other % self


_install_operators()
TracedArray.__pow__ = _power_operator
TracedArray.__ipow__ = _inplace_power_operator
TracedArray.__divmod__ = _divmod_operator
TracedArray.__rdivmod__ = _rdivmod_operator


class Tracer:
    """Records the operations applied to TracedArrays into ``self.graph``."""

    def __init__(self, name: str, dynamic: bool = True, budget: int | None = None):
        self.graph = Graph(name)
        self.budget = budget  # most operations recorded before the trace is refused
        self.recorded = 0
        self.unconverted: list = []  # LoopNotes of the loops capture left to Python
        self.graph.shape_env.locate = user_source
        self.dynamic = dynamic  # array sizes of 2 or more are symbols (else every size is fixed)
        self._constants: dict[int, tuple[Any, Node]] = {}
        self.argument_of: dict[Node, str] = {}
        # ``real``/``imag`` nodes of complex arrays, and those whose array was written since
        self.parts = ComplexParts(self)  # z.real, z.imag: values that see writes of z
        self.loops = LoopTracer(self)  # captured loops: their bodies traced as sub-graphs

    # -- refusals -----------------------------------------------------------------------------------
    def refuse(self, construct: str, hint: str = "", detail: str = "") -> None:
        """Raise UnsupportedError for ``construct`` at the user's current line."""
        source = user_source()
        text = source_text(source)
        if text:
            detail = (detail + "; " if detail else "") + f"in `{text}`"
        raise UnsupportedError(construct, source, hint, detail)

    # -- inputs ----------------------------------------------------------------------------------------
    def input(self, name: str, value: Any) -> TracedArray | SymInt:
        """A graph input standing for ``value`` (array, NumPy scalar, or Python float/complex;
        a Python int is a size symbol, given to the function as a ``SymInt``).

        An array's sizes of 2 or more are symbols (``s0, s1, ...``) unless tracing is static."""
        meta = meta_of(value)
        if isinstance(value, int) and not isinstance(value, bool):  # a size (guards.dynamic_ints)
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
            return node if node.graph is self.graph else self.loops.lift(node)
        if isinstance(value, SymInt):
            return self.symint_value(value.expr)._node
        if value is None or isinstance(value, (bool, int, float, complex, np.generic)):
            return value
        if isinstance(value, (list, tuple)) and _holds_traced(value):
            return self.operand(self.sequence_as_array(value))
        array = np.asarray(value)
        reason = unsupported_dtype_reason(array.dtype)
        if reason:
            self.refuse(f"a constant array of {reason}")
        return self._constant(value if isinstance(value, np.ndarray) else array)

    def sequence_as_array(self, value: list | tuple) -> TracedArray:
        """``np.asarray(value)`` for a (nested) list or tuple holding traced values: NumPy's
        dtype (its elements' dtypes promoted, a Python float as float64, not weak) and shape."""
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

    def _stacked(self, value: Any, dtype: np.dtype) -> Any:
        if not _holds_traced(value):
            return np.asarray(value, dtype)
        if isinstance(value, TracedArray):
            return value.astype(dtype)
        return np.stack([self._stacked(v, dtype) for v in value])

    def _constant(self, array: np.ndarray) -> Node:
        key = id(array)
        if key in self._constants:
            return self._constants[key][1]
        node = self.graph.constant(array, meta_of(array), source=user_source(), captured=True)
        self._constants[key] = (array, node)  # keep ``array`` alive so its id stays unique
        return node

    # -- recording ---------------------------------------------------------------------------------------
    def call(self, op: ops.OpDef, *args: Any, **params: Any) -> TracedArray:
        """Record ``op(*args, **params)`` and return its proxy."""
        operands = tuple(self.operand(a) for a in args)
        params = {key: unwrap(value) for key, value in params.items()}
        for key, value in params.items():
            if any(isinstance(v, TracedArray) for v in _leaves(value)):
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
        return TracedArray(self, node)

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

    def ufunc(
        self,
        ufunc: np.ufunc,
        method: str,
        inputs: tuple,
        kwargs: dict,
        python_operator: bool = False,
    ) -> Any:
        """Record a ufunc call or ufunc method (``reduce``, ``accumulate``, ``outer``)."""
        if method == "reduce":
            return self._ufunc_reduction(ufunc, _REDUCE_OPS, ufunc.reduce, inputs, kwargs)
        if method == "accumulate":
            return self._ufunc_reduction(ufunc, _ACCUMULATE_OPS, ufunc.accumulate, inputs, kwargs)
        if method == "outer":
            a, b = inputs
            a_shape = np.shape(a) if not isinstance(a, TracedArray) else a.shape
            b_ndim = np.ndim(b) if not isinstance(b, TracedArray) else b.ndim
            return self.ufunc(
                ufunc, "__call__", (np.reshape(a, a_shape + (1,) * b_ndim), b), kwargs
            )
        if method != "__call__":
            self.refuse(f"the ufunc method np.{ufunc.__name__}.{method}")
        if len(inputs) > ufunc.nin:  # outputs given positionally
            kwargs = {**kwargs, "out": inputs[ufunc.nin :]}
            inputs = inputs[: ufunc.nin]
        out = kwargs.pop("out", None)
        if out is not None and not isinstance(out, tuple):
            out = (out,)
        if out is not None and all(o is None for o in out):
            out = None
        for key, value in kwargs.items():
            if key == "dtype":
                continue
            if key not in _ALLOWED_UFUNC_KWARGS or not _same(value, _ALLOWED_UFUNC_KWARGS[key]):
                self.refuse(f"np.{ufunc.__name__}(..., {key}=...)")
        params = {"dtype": np.dtype(kwargs["dtype"])} if kwargs.get("dtype") is not None else {}
        decomposition = ops.DECOMPOSITIONS.get(ufunc)
        if decomposition is not None:
            return self._finish(decomposition.fn(self, *inputs, **params), out, ufunc.__name__)
        op = _UFUNC_OPS.get(ufunc) or _optional_ufunc_op(ufunc)
        if op is None:
            self.refuse(f"the NumPy ufunc np.{ufunc.__name__}")
        operands = list(inputs)
        if op.kind == "elementwise" and not python_operator:
            operands = self._strengthen(operands)
        return self._finish(self.call(op, *operands, **params), out, ufunc.__name__)

    def _strengthen(self, operands: list) -> list:
        """NumPy functions return NumPy scalars: a call on Python scalars only is not Python arithmetic."""
        weak = [isinstance(x, TracedArray) and x.meta.weak for x in operands]
        strong = [
            isinstance(x, TracedArray)
            and not x.meta.weak
            or isinstance(x, (np.ndarray, np.generic))
            for x in operands
        ]
        if any(strong) or not any(weak):
            return operands
        first = weak.index(True)
        operands[first] = self.call(ops.ASTYPE, operands[first], dtype=operands[first].dtype)
        return operands

    def _ufunc_reduction(
        self, ufunc: np.ufunc, table: dict, method: Callable, inputs: tuple, kwargs: dict
    ) -> Any:
        name = f"np.{ufunc.__name__}.{method.__name__}"
        if ufunc not in _UFUNC_OPS or ufunc.nin != 2:
            self.refuse(f"the ufunc method {name}")
        bound = _bind(method, inputs, kwargs)
        out = bound.pop("out", None)
        array = bound.pop("array")
        op = table.get(ufunc)
        generic = ops.REDUCE if method.__name__ == "reduce" else ops.ACCUMULATE
        params = {} if op is not None else {"ufunc": ufunc}
        params["axis"] = _normalize_param("axis", bound.pop("axis", 0))
        if bound.get("dtype") is not None:
            params["dtype"] = np.dtype(bound["dtype"])
        bound.pop("dtype", None)
        if bound.pop("keepdims", False):
            params["keepdims"] = True
        op = op or generic
        for key in [*bound, *(k for k in params if k not in op.params)]:
            self.refuse(f"{name}(..., {key}=...)")
        return self._finish(self.call(op, array, **params), out, name)

    def array_function(self, func: Callable, args: tuple, kwargs: dict) -> Any:
        """Record a NumPy function call dispatched through ``__array_function__``."""
        name = _numpy_name(func)
        decomposition = ops.DECOMPOSITIONS.get(func)
        if decomposition is not None:
            return self._decompose(func, decomposition, args, kwargs)
        op = _FUNCTION_OPS.get(func)
        if op is None:
            self.refuse(
                f"the NumPy function {name}",
                hint="compute it with supported NumPy operations, or "
                "call it outside the compiled function",
            )
        bound = _bind(func, args, kwargs)
        out = bound.pop("out", None)
        operands = []
        for key in op.operands:
            if key not in bound:
                break
            value = bound.pop(key)
            operands.extend(value if key == "arrays" else [value])
        if op is ops.WHERE and len(operands) == 1:
            self.refuse(
                "np.where(condition) with one argument (np.nonzero): its shape depends on the data"
            )
        params = self._params(op, name, func, bound)
        return self._finish(self.call(op, *operands, **params), out, name)

    def _params(self, op: ops.OpDef, name: str, func: Callable, bound: dict) -> dict:
        defaults = {p.name: p.default for p in _signature(func).parameters.values()}
        params = {}
        for key, value in bound.items():
            if key not in op.params:
                if _same(value, defaults.get(key, inspect.Parameter.empty)):
                    continue
                self.refuse(f"{name}(..., {key}=...)")
            params[key] = _normalize_param(key, value)
        return params

    def _decompose(
        self, func: Callable, decomposition: ops.Decomposition, args: tuple, kwargs: dict
    ) -> Any:
        name = _numpy_name(func)
        bound = _bind(func, args, kwargs)
        out = bound.pop("out", None)
        accepted = _signature(decomposition.fn).parameters
        if not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in accepted.values()):
            defaults = {p.name: p.default for p in _signature(func).parameters.values()}
            for key in list(bound):
                if key not in accepted:
                    if _same(bound[key], defaults.get(key, inspect.Parameter.empty)):
                        del bound[key]
                    else:
                        self.refuse(f"{name}(..., {key}=...)")
        return self._finish(decomposition.fn(self, **bound), out, name)

    def creation(self, func: Callable, args: tuple, kwargs: dict) -> TracedArray:
        """Record a creation function (``np.zeros``) called while tracing."""
        op = _CREATION_OPS[func]
        name = _numpy_name(func)
        signature = op.binding or func
        bound = _bind(signature, args, kwargs)
        operands = [bound.pop(key) for key in op.operands if key in bound]
        params = self._params(op, name, signature, bound)
        return self.call(op, *operands, **params)

    def _finish(self, result: Any, out: tuple | None, name: str) -> Any:
        """Write ``result`` into ``out`` as NumPy would (same_kind casting, exact shape) and return ``out``."""
        if out is None:
            return result
        out = out if isinstance(out, tuple) else (out,)
        results = result if isinstance(result, tuple) else (result,)
        if len(out) != len(results):
            raise ValueError(f"{name}: expected {len(results)} output arrays, got {len(out)}")
        for target, value in zip(out, results):
            if not isinstance(target, TracedArray):
                self.refuse(
                    f"{name}(..., out=...) writing into an array that is not an argument of the function",
                    hint="let the function return the result, or pass the output array as an argument",
                )
            if not np.can_cast(value.dtype, target.dtype, "same_kind"):
                raise TypeError(
                    f"Cannot cast {name} output from {value.dtype!r} to {target.dtype!r} with "
                    f"casting rule 'same_kind'"
                )
            value_shape = value.meta.shape if isinstance(value, TracedArray) else np.shape(value)
            broadcast = broadcast_shapes(value_shape, target.meta.shape)
            if (
                not all(
                    decide("==", a, b, "an out= array's shape")
                    for a, b in zip(broadcast, target.meta.shape)
                )
                or len(broadcast) != target.ndim
            ):
                raise ValueError(
                    f"non-broadcastable output operand with shape {target.shape} doesn't match the "
                    f"broadcast shape {broadcast}"
                )
            self.write(target, value, (Ellipsis,))
        return out[0] if len(out) == 1 else out

    def write(self, target: TracedArray, value: Any, index: tuple) -> None:
        """Record ``target[index] = value``; the caller's memory is written as in eager mode."""
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
        chain = self.parts.chain(target._node) if self.parts.taken else None
        if chain is not None:
            self.parts.write(*chain, value, index)
            return
        self.call(ops.SETITEM, target, value, index=index)
        self.parts.written(root(target._node))

    def wrap(self, node: Node) -> TracedArray:
        """The proxy of ``node`` the traced function sees."""
        return TracedArray(self, node)

    def root_argument(self, node: Node) -> str | None:
        """The read-only argument whose memory ``node`` views (following view ops back), if any."""
        owner = root(node)
        return self.argument_of.get(owner) if not owner.meta.writeable else None

    def basic_index(self, index: Any) -> tuple:
        """``index`` as a tuple of ints, slices, None and Ellipsis; other indices are refused."""
        items = index if isinstance(index, tuple) else (index,)
        out = []
        for item in items:
            if isinstance(item, TracedArray):
                if item.dtype == bool:
                    self.refuse(
                        "boolean-mask indexing x[mask] (its shape depends on the data)",
                        hint="use np.where(mask, x, fill) to keep the shape",
                    )
                self.refuse(
                    "indexing with a traced integer array or value (x[idx]: gather by data)"
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
            self.refuse("a slice bound computed from data")
        return int(bound.__index__())


def _same(value: Any, default: Any) -> bool:
    if value is default:
        return True
    try:
        return bool(value == default)
    except Exception:
        return False


def _leaves(value: Any) -> list:
    if isinstance(value, (list, tuple)):
        return [leaf for v in value for leaf in _leaves(v)]
    return [value]


def _holds_traced(value: Any) -> bool:
    return any(isinstance(v, TracedArray) for v in _leaves(value))


def _concrete(value: Any) -> bool:
    return not isinstance(value, TracedArray)


class _ConvertedByNumPy:
    """A list or tuple argument holding traced values. Python operations on it are list
    operations (``a * 2`` repeats it); a NumPy function or ufunc given it converts it as
    ``np.asarray`` would, as eager NumPy does."""

    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
        inputs = self._as_array_in(inputs[: ufunc.nin]) + inputs[ufunc.nin :]
        return getattr(ufunc, method)(*inputs, **kwargs)

    def __array_function__(self, func: Callable, types: tuple, args: tuple, kwargs: dict) -> Any:
        args, kwargs = self._as_array_in((args, kwargs))
        return func(*args, **kwargs)

    def _as_array_in(self, value: Any) -> Any:
        """``value`` with this sequence, wherever it occurs in it (not as ``out=``), replaced
        by its array."""
        array = current_tracer().sequence_as_array(self)
        found = []

        def swap(v: Any, key: Any = None) -> Any:
            if v is self and key != "out":
                found.append(v)
                return array
            if isinstance(v, dict):
                return {k: swap(x, k) for k, x in v.items()}
            if type(v) in (list, tuple):
                return type(v)(swap(x) for x in v)
            return v

        swapped = swap(value)
        if not found:  # only given as out=, which NumPy requires to be an array
            raise TypeError("return arrays must be of ArrayType")
        return swapped


class TracedList(_ConvertedByNumPy, list):
    """A list argument holding traced values (see ``_ConvertedByNumPy``)."""


class TracedTuple(_ConvertedByNumPy, tuple):
    """A tuple argument holding traced values (see ``_ConvertedByNumPy``)."""


def convertible_sequences(value: Any) -> Any:
    """``value`` (an argument) with its lists and tuples that hold traced values, at any
    depth, made TracedList and TracedTuple, so NumPy functions given them convert them."""
    if isinstance(value, dict):
        return {k: convertible_sequences(v) for k, v in value.items()}
    if type(value) in (list, tuple) and _holds_traced(value):
        items = [convertible_sequences(v) for v in value]
        return TracedList(items) if isinstance(value, list) else TracedTuple(items)
    return value


def _normalize_param(key: str, value: Any) -> Any:
    value = unwrap(value)
    if key == "dtype" and value is not None:
        return np.dtype(value)
    if key == "shape" and is_expr(value):
        return (value,)
    if key == "shape" and np.ndim(value) == 0:
        return (int(value),)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, list):
        value = tuple(value)
    if isinstance(value, tuple):
        return tuple(int(v) if isinstance(v, np.integer) else v for v in value)
    return value


@functools.lru_cache(maxsize=None)
def _signature(func: Callable) -> inspect.Signature:
    return inspect.signature(func)


def _bind(func: Callable, args: tuple, kwargs: dict) -> dict:
    """NumPy's own signature binding: the arguments passed explicitly, by parameter name."""
    bound = _signature(func).bind(*args, **kwargs)
    arguments = dict(bound.arguments)
    for param in _signature(func).parameters.values():
        if param.kind is inspect.Parameter.VAR_KEYWORD and param.name in arguments:
            arguments.update(arguments.pop(param.name))
    return arguments


# -- thread-local active tracer and NumPy namespace patches --------------------------------------------------

_state = threading.local()
_patch_lock = threading.Lock()
_patch_depth = 0


def current_tracer() -> Tracer | None:
    """The tracer active in this thread, if any."""
    return getattr(_state, "tracer", None)


# Random draws at trace time would be baked into the graph as constants and replayed on every call.
_RANDOM_FUNCTIONS = (
    "default_rng",
    "rand",
    "randn",
    "random",
    "random_sample",
    "randint",
    "normal",
    "uniform",
    "standard_normal",
    "choice",
    "permutation",
    "shuffle",
    "exponential",
    "poisson",
    "binomial",
)


def _patch_targets() -> list[tuple[Any, str, Callable, Callable]]:
    """(module, attribute, original, replacement) for NumPy functions that do not dispatch to us."""
    targets = []
    for func in _CREATION_OPS:
        targets.append((np, func.__name__, func, _creation_patch(func)))
    for func, decomposition in ops.DECOMPOSITIONS.items():
        if decomposition.patch:
            targets.append((np, func.__name__, func, _conversion_patch(func, decomposition)))
    for name in _RANDOM_FUNCTIONS:
        func = getattr(np.random, name)
        targets.append((np.random, name, func, _random_patch(func)))
    for module, name, func, _ in targets:
        assert getattr(module, name) is func, (
            f"{module.__name__}.{name} is not the function we patch"
        )
    return targets


def _unconverted(fn: Callable, converted: Any, why: str) -> list:
    """Notes on the loops that stay Python loops whatever they do (so are unrolled)."""
    if converted is None:
        if why.startswith("no `for` loop") or not why:
            return []
        return [LoopNote(None, False, f"the function's loops were not converted: {why}")]
    filename = fn.__code__.co_filename
    return [LoopNote(f"{filename}:{line}", False, reason) for line, reason in converted.notes]


def _called_by_library() -> bool:
    """True when a patched function is called from NumPy or gcompile itself, which need the original."""
    frame = sys._getframe(2)
    while frame.f_code.co_filename.startswith(_CAPTURE_DIR):  # a call routed for the user
        frame = frame.f_back
    filename = frame.f_code.co_filename
    return filename.startswith(GCOMPILE_DIR) or filename.startswith(NUMPY_DIR)


def _creation_patch(func: Callable) -> Callable:
    @functools.wraps(func)
    def patched(*args: Any, **kwargs: Any) -> Any:
        tracer = current_tracer()
        if tracer is None or kwargs.get("like") is not None or _called_by_library():
            return func(*args, **kwargs)
        return tracer.creation(func, args, kwargs)

    return patched


def _conversion_patch(func: Callable, decomposition: ops.Decomposition) -> Callable:
    @functools.wraps(func)
    def patched(*args: Any, **kwargs: Any) -> Any:
        tracer = current_tracer()
        if tracer is None or _called_by_library():
            return func(*args, **kwargs)
        first = args[0] if args else next(iter(kwargs.values()), None)
        if isinstance(first, TracedArray):
            return tracer._decompose(func, decomposition, args, kwargs)
        if isinstance(first, (list, tuple)) and _holds_traced(first):
            array = tracer.sequence_as_array(first)
            if args:
                args = (array, *args[1:])
            else:
                kwargs = {**kwargs, next(iter(kwargs)): array}
            return tracer._decompose(func, decomposition, args, kwargs)
        return func(*args, **kwargs)

    return patched


def _random_patch(func: Callable) -> Callable:
    @functools.wraps(func)
    def patched(*args: Any, **kwargs: Any) -> Any:
        tracer = current_tracer()
        if tracer is None or _called_by_library():
            return func(*args, **kwargs)
        tracer.refuse(
            f"random numbers drawn inside the function (np.random.{func.__name__})",
            hint="draws would be frozen into the compiled graph; draw them outside and pass the arrays in",
        )

    return patched


_PATCHES: list[tuple[Any, str, Callable, Callable]] | None = None


# (id of a globals dict or closure cell, name) -> [its holder, the original, how many patch it]
_NAMESPACE_PATCHES: dict[tuple[int, str], list] = {}


@contextlib.contextmanager
def tracing(tracer: Tracer, fn: Callable | None = None):
    """Make ``tracer`` active in this thread and route undispatched NumPy functions to it: in
    NumPy's namespace, and where ``fn`` (the traced function) names them itself, in its globals
    and closure cells (``from numpy import zeros``)."""
    global _patch_depth, _PATCHES
    if current_tracer() is not None:
        raise UnsupportedError(
            "tracing a compiled function while another is being traced (nested compile)",
            user_source(),
        )
    with _patch_lock:
        if _PATCHES is None:
            _PATCHES = _patch_targets()
        if _patch_depth == 0:
            for module, name, _, replacement in _PATCHES:
                setattr(module, name, replacement)
        _patch_depth += 1
        keys = _patch_names(fn) if fn is not None else []
    _state.tracer = tracer
    try:
        yield tracer
    finally:
        _state.tracer = None
        with _patch_lock:
            _patch_depth -= 1
            if _patch_depth == 0:
                for module, name, original, _ in _PATCHES:
                    setattr(module, name, original)
            _unpatch_names(keys)


def _names_of(fn: Callable):
    """``(holder, name, value)`` for ``fn``'s globals and closure cells."""
    namespace = getattr(fn, "__globals__", None) or {}
    for name, value in list(namespace.items()):
        yield namespace, name, value
    for cell in getattr(fn, "__closure__", None) or ():
        try:
            yield cell, "cell_contents", cell.cell_contents
        except ValueError:  # an empty cell
            continue


def _assign(holder: Any, name: str, value: Any) -> None:
    if isinstance(holder, dict):
        holder[name] = value
    else:
        setattr(holder, name, value)


def _patch_names(fn: Callable) -> list:
    """Bind the names of ``fn`` that hold a patched NumPy function to its replacement (counted,
    so that concurrent traces of one module restore it once); the keys patched."""
    replacements = {id(original): replacement for _, _, original, replacement in _PATCHES}
    keys = []
    for holder, name, value in _names_of(fn):
        key = (id(holder), name)
        if key in _NAMESPACE_PATCHES:
            _NAMESPACE_PATCHES[key][2] += 1
        elif id(value) in replacements:
            _assign(holder, name, replacements[id(value)])
            _NAMESPACE_PATCHES[key] = [holder, value, 1]
        else:
            continue
        keys.append(key)
    return keys


def _unpatch_names(keys: list) -> None:
    for key in keys:
        entry = _NAMESPACE_PATCHES[key]
        entry[2] -= 1
        if entry[2] == 0:
            _assign(entry[0], key[1], entry[1])
            del _NAMESPACE_PATCHES[key]


def trace(
    fn: Callable,
    name: str,
    leaves: list,
    is_input: list[bool],
    rebuild: Callable,
    dynamic: bool = True,
    budget: int | None = None,
    loops: bool | str = True,
) -> Graph:
    """Trace ``fn`` into a Graph.

    Args:
        fn: the user's function.
        name: the graph's name.
        leaves: ``(path, value)`` for every flattened argument.
        is_input: per leaf, True for a graph input (arrays, floats), False for a static value.
        rebuild: ``rebuild(leaf_values) -> (args, kwargs)`` puts the leaves back into a call.
        dynamic: array sizes of 2 or more are symbolic (one trace for every size), else fixed.
        budget: the most operations to record; a bigger trace is refused (``UnsupportedError``).
        loops: capture ``for`` loops as loops (``gcompile/capture`` converts the function's
            source); ``"unroll"``: convert, but unroll every loop (``max``/``min`` of traced
            scalars still traced); False: no conversion, every loop unrolled.
    """
    in_python: set = set()  # loops whose body values escaped them: run in Python
    while True:
        try:
            return _trace_once(
                fn, name, leaves, is_input, rebuild, dynamic, budget, loops, in_python
            )
        except LoopEscape as escape:
            if escape.source is None or escape.source in in_python:
                raise UnsupportedError(str(escape), escape.source) from None
            in_python.add(escape.source)


def _trace_once(fn, name, leaves, is_input, rebuild, dynamic, budget, loops, in_python) -> Graph:
    """One trace of ``fn`` (see ``trace``), the loops at ``in_python`` run in Python."""
    tracer = Tracer(name, dynamic, budget)
    tracer.loops.unroll_all = loops == "unroll"
    tracer.loops.in_python = in_python
    converted, why = capture.convert_or_reason(fn) if loops else (None, "option loops=False")
    values = [
        tracer.input(path, value) if flag else value
        for (path, value), flag in zip(leaves, is_input)
    ]
    function = fn if converted is None else converted.function
    tracer.unconverted = _unconverted(fn, converted, why)
    with tracing(tracer, fn), using(tracer.graph.shape_env), capture.handling(tracer.loops):
        args, kwargs = rebuild(values)
        args = tuple(convertible_sequences(v) for v in args)
        kwargs = {k: convertible_sequences(v) for k, v in kwargs.items()}
        before = _container_snapshot(fn, args, kwargs)
        try:
            result = function(*args, **kwargs)
        except (UnsupportedError, RecursionError):
            raise
        except Exception as error:
            refusal = refusal_from(error)
            if refusal is None:
                raise
            raise refusal from error
        _refuse_changed_containers(before, fn)
        out_leaves, out_spec = flatten(result)
        code = getattr(fn, "__code__", None)
        where = f"{code.co_filename}:{code.co_firstlineno}" if code else None
        outputs = [tracer_output(tracer, value, where) for _, value in out_leaves]
    tracer.graph.output(tuple(outputs), out_spec)
    tracer.graph.loop_notes += tracer.loops.notes + tracer.unconverted
    env = tracer.graph.shape_env
    if env.replacements:  # sizes recorded before an equality was learned take its form, and
        tracer.graph.substitute_sizes(env.simplify)  # the metas derived from them agree again
        _rederive(tracer.graph)
    return tracer.graph


def _rederive(graph: Graph) -> None:
    """The graph's metas derived again from its sizes' final forms; a question on a loop index
    that has no answer for every trip once sizes are known equal is a refusal, not a guess."""
    with using(graph.shape_env):
        try:
            graph.propagate_metas()
        except SymbolicError as error:
            raise UnsupportedError(
                "a loop whose range was split on sizes the trace later found equal to others",
                detail=str(error),
                hint="compute the loop's bounds from one array's sizes",
            ) from None


def _container_snapshot(fn: Callable, args: tuple, kwargs: dict) -> list:
    """Per list or dict argument: its name, itself, its structure and its leaves' identities."""
    try:
        named = list(inspect.signature(fn).bind(*args, **kwargs).arguments.items())
    except (TypeError, ValueError):
        named = [(f"#{i}", v) for i, v in enumerate(args)] + list(kwargs.items())
    snapshot = []
    for name, value in named:
        leaves, spec = flatten(value)
        if _holds_mutable(spec):
            snapshot.append((f"argument '{name}'", value, spec, [id(leaf) for _, leaf in leaves]))
    return snapshot


def _holds_mutable(spec: TreeSpec) -> bool:
    """Whether a flattened value has a list or dict at any depth."""
    return spec.kind in ("list", "dict") or any(_holds_mutable(c) for c in spec.children)


def _refuse_changed_containers(snapshot: list, fn: Callable) -> None:
    """Refuse a function that changed a list or dict it was given (``d['w'] = ...``,
    ``a.append(...)``): eager NumPy leaves that change in the caller's container, a compiled
    call would not replay it."""
    for label, value, spec, ids in snapshot:
        leaves, now = flatten(value)
        if now != spec or [id(leaf) for _, leaf in leaves] != ids:
            code = getattr(fn, "__code__", None)
            raise UnsupportedError(
                f"changing the list or dict passed as {label} (an item set, added or removed): "
                "a compiled call cannot repeat changes to a Python container",
                f"{code.co_filename}:{code.co_firstlineno}" if code else None,
                hint="update arrays in place (d['w'][...] = new) or return the new values",
            )


def tracer_output(tracer: Tracer, value: Any, function_source: str | None) -> Any:
    """A node or literal for one returned leaf (``function_source``: where the function is defined)."""
    if isinstance(value, (TracedArray, np.ndarray, SymInt)):
        return tracer.operand(value)
    if value is None or isinstance(value, (bool, int, float, complex, str, np.generic)):
        return value
    raise UnsupportedError(
        f"returning a value of type {type(value).__name__}",
        function_source,
        hint="return arrays, scalars, or tuples, lists and dicts of them",
    )
