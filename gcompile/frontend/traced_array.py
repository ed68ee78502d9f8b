"""TracedArray: the proxy NumPy dispatches to while a function is traced into a Graph.

A traced function receives ``TracedArray`` objects in place of its array (and Python ``float``)
arguments. NumPy hands every operation on them back through ``__array_ufunc__`` and
``__array_function__``, which call the recorder (``recorder.Tracer``); Python operators,
indexing and methods are defined here, the operators read from the op table's ``dunder``.
Shapes and dtypes are concrete (sizes ``SymInt``), so Python control flow on them runs; anything
that needs a *value* (``bool(t)``, ``float(t)``) is refused by the recorder with the user's line.
"""

from __future__ import annotations

import operator
import sys
from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from ..errors import GCOMPILE_DIR, user_frame
from ..ir import ops
from ..ir.alias import reshape_is_view
from ..ir.graph import Node
from ..ir.layout import without_trailing_slices
from ..ir.meta import TensorMeta
from ..ir.shape_env import IndexQuestion, decide
from .size_values import size_value
from .symint import SymInt

if TYPE_CHECKING:
    from .recorder import Tracer

# ufunc -> op, from the op table (optional libraries' ufuncs are added on first use)
UFUNC_OPS = {f: op for op in ops.OPS for f in op.numpy if isinstance(f, np.ufunc)}


class _Flags:
    """The subset of ``ndarray.flags`` a traced array can answer from its meta."""

    def __init__(self, meta: TensorMeta):
        contiguous_1d = meta.ndim <= 1 or decide("<=", meta.size, 1, "x.flags")
        self.c_contiguous = meta.layout == "C" or (contiguous_1d and meta.layout != "A")
        self.f_contiguous = meta.layout == "F" or (contiguous_1d and meta.layout != "A")
        self.writeable = meta.writeable
        self.aligned = True  # (every array the graph makes is; scipy.fft asks)

    def __getitem__(self, key: str) -> bool:
        return {
            "C_CONTIGUOUS": self.c_contiguous,
            "F_CONTIGUOUS": self.f_contiguous,
            "WRITEABLE": self.writeable,
            "ALIGNED": self.aligned,
        }[key.upper()]


# Types whose operations a traced array leaves to them (their own operators and NumPy
# protocols): ``masks.MaskedValue`` registers itself.
DEFERRED: set = set()


_REBIND = "rebind the name instead: a = a.reshape(shape)"  # (where ``a.shape = ...`` is refused)


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

    @shape.setter
    def shape(self, shape: Any) -> None:
        """``a.shape = ...``: ``a`` itself becomes the reshape of its memory (every name bound to
        it sees that, views made before do not, as in NumPy), where no copy is needed."""
        if self.meta.scalar:
            raise AttributeError("attribute 'shape' of 'numpy.generic' objects is not writable")
        tracer = self._tracer
        own = self._node
        if own.op == "placeholder" or own.op == "constant" and own.captured:  # (its caller's)
            tracer.refuse(
                "setting the shape of an array the function was given or reads from outside",
                hint=_REBIND,
            )
        if not (tracer.loops.is_top(tracer.graph) and self._node.graph is tracer.graph):
            tracer.refuse("setting an array's shape inside a loop body or branch", hint=_REBIND)
        node = np.reshape(self, shape)._node
        if node is not self._node and node.target.may_copy:
            view = reshape_is_view(node)
            if view is False:
                raise AttributeError(
                    "Incompatible shape for in-place modification. Use `.reshape()` to make a "
                    "copy with the desired shape."
                )
            if view is None:
                tracer.refuse(
                    "setting the shape of an array whose strides the trace does not know "
                    "(NumPy refuses where that needs a copy)",
                    hint=_REBIND,
                )
        self._node = node

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
        if not sys._getframe(1).f_code.co_filename.startswith(GCOMPILE_DIR):
            return self._tracer.texts.marker(self, "", "r")  # (the user's repr(x), f"{x!r}")
        return f"TracedArray(%{self._node.name}: {self._node.meta.short()})"

    # -- NumPy protocols -----------------------------------------------------------------
    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
        if any(type(value) in DEFERRED for value in inputs):
            return NotImplemented
        return self._tracer.numpy.ufunc(ufunc, method, inputs, kwargs)

    def __array_function__(self, func: Callable, types: tuple, args: tuple, kwargs: dict) -> Any:
        if DEFERRED.intersection(types):
            return NotImplemented
        return self._tracer.numpy.array_function(func, args, kwargs)

    # -- indexing ----------------------------------------------------------------------------
    def __getitem__(self, index: Any) -> "TracedArray":
        return self._per_trip(self._item, index)

    def _item(self, index: Any) -> "TracedArray":
        added = _new_axes_beside_traced(index, self.ndim)
        if added is not None:  # (B[None, :, y[i]]: B[:, y[i]][None, :])
            return self._item(added[0])[added[1]]
        composed = self._tracer.regions.indexed(self, index)
        if composed is not None:  # (A[k][j]: A's element, not a copy of its row)
            return composed
        index = without_trailing_slices(index, self.ndim)
        index = self._tracer.positions_on_data_sizes(self, index)
        gathered = self._tracer.gather_by_mask(self, index)
        if gathered is not None:  # x[mask]: kept at x's shape (masks.py)
            return gathered
        taken = self._tracer.gather_by_indices(self, index)
        if taken is not None:  # x[idx]: np.take(x, idx, axis=0)
            return taken
        segment = self._tracer.segment(self, index)
        if segment is not None:  # x[lo:hi] with bounds from the data, x[cols] of one
            return segment
        element = self._tracer.element_index(self, index)
        if element is not None:  # x[i, k] with k read from the data: one element (or a region)
            template, positions = element
            found = self._tracer.call(ops.ELEMENT, self, *positions, index=template)
            if found.ndim:
                self._tracer.regions.take(found._node)
            return found
        return self._tracer.call(ops.GETITEM, self, index=self._tracer.basic_index(index))

    def __setitem__(self, index: Any, value: Any) -> None:
        self._per_trip(self._assign, index, value)

    def _per_trip(self, action: Callable, index: Any, *value: Any) -> Any:
        """``action(index, *value)``; in a loop asking its questions per trip, once more with
        the positions of loop indices traced (checked on each trip) when a question needs it."""
        try:
            return action(index, *value)
        except IndexQuestion:
            moved = self._tracer.loops.per_trip_positions(index)
            if moved is index:
                raise
            return action(moved, *value)

    def _assign(self, index: Any, value: Any) -> None:
        if self._tracer.regions.assigned(self, index, value):  # (A[k][j] = v: into A)
            return
        index = without_trailing_slices(index, self.ndim)
        index = self._tracer.positions_on_data_sizes(self, index)
        if self._tracer.write_by_mask(self, index, value):
            return
        if self._tracer.write_by_indices(self, index, value):  # x[idx] = v: a loop of writes
            return
        element = self._tracer.element_index(self, index)
        if element is not None:  # x[k] = v with k read from the data: a put
            self._tracer.write(self, value, *element)
        else:
            self._tracer.write(self, value, self._tracer.basic_index(index))

    def __len__(self) -> int:
        if self.ndim == 0:
            raise TypeError("len() of unsized object")
        return int(self.shape[0])  # Python wants an int: a symbolic size is specialised

    def __iter__(self):
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(len(self)))

    # -- conversions that need data: refused (values of sizes alone: taken, guarded) ----------------
    def _from_sizes(self) -> Any:
        """This value at the traced sizes when it is computed from sizes alone (``size_values``),
        the trace guarded on them; else None."""
        if self.ndim:
            return None
        return size_value(self._node, self._tracer.graph.shape_env)

    def _refused_as(self, construct: str, hint: str) -> None:
        """Refuse a conversion that needs data (unless the scalar arguments decide this value:
        ``decided_by_scalars``)."""
        decided_by_scalars(self)
        self._tracer.refuse(construct, hint=hint)

    def __bool__(self) -> bool:
        value = self._from_sizes()
        if value is not None:
            return bool(value)
        self._refused_as(
            "bool() of a traced value (Python `if`, `while`, `and`, `or`, `not` on array data)",
            hint="use np.where(cond, a, b) to choose elementwise, or pass the deciding value in "
            "static_argnames so it is fixed at compile time",
        )

    def __float__(self) -> float:
        value = self._from_sizes()
        if value is not None:
            return float(value)
        self._refused_as(
            "float() of a traced value (also math.* functions, which convert to float)",
            hint="use the NumPy function instead (np.exp, np.sqrt, ...)",
        )

    def __int__(self) -> int:
        value = self._from_sizes()
        if value is not None:
            return int(value)
        self._refused_as(
            "int() of a traced value", hint="keep the value as an array: x.astype(np.int64)"
        )

    def __complex__(self) -> complex:
        self._tracer.refuse("complex() of a traced value", hint="use x.astype(np.complex128)")

    def __format__(self, spec: str) -> str:
        return self._tracer.texts.marker(self, spec)  # (a print formats it on each call)

    def __str__(self) -> str:
        return self._tracer.texts.marker(self, "")  # (str(x), "%s" % x: as format(x, ""))

    def __index__(self) -> int:
        value = self._from_sizes()
        if value is not None and self.dtype.kind in "iu":
            return operator.index(value)
        self._tracer.concrete_needed()
        self._refused_as(
            "a traced value used as a Python integer (an index, a size or a range bound)",
            hint="sizes must come from shapes (x.shape[0]) or static arguments",
        )

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        self._tracer.concrete_needed()
        library = _library_function_asking()
        if library is not None:
            self._refused_as(
                f"converting a traced value to a concrete NumPy array inside {library} (a "
                "library function that converts its arguments itself, which gcompile cannot "
                "trace through)",
                hint="compute it with NumPy functions and array methods, or call it outside the "
                "compiled function and pass its result in",
            )
        self._refused_as(
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
        value = self._from_sizes() if ndigits is None else None
        if value is not None:
            return round(value)
        if ndigits is None:  # (a Python int: the value rounded half to even, as round())
            from .builtins import scalar_builtin  # (builtins builds on this module)

            rounded = self if self.dtype.kind in "biu" else np.rint(self)
            result = scalar_builtin(self._tracer, int, (rounded,), {})
            if result is NotImplemented:
                self._tracer.refuse(
                    "round() of a traced complex scalar", hint="round its real part"
                )
            return result
        return np.round(self, ndigits)

    def trace(self, *args, **kwargs):
        return np.trace(self, *args, **kwargs)

    def diagonal(self, offset=0, axis1=0, axis2=1):
        return np.diagonal(self, offset, axis1, axis2)

    def argsort(self, axis=-1, kind=None, order=None, *, stable=None):
        return np.argsort(self, axis, kind, order, stable=stable)

    def nonzero(self):
        return np.nonzero(self)

    def repeat(self, repeats, axis=None):
        return np.repeat(self, repeats, axis)

    def take(self, indices, axis=None, out=None, mode="raise"):
        return np.take(self, indices, axis, out, mode)

    def compress(self, condition, axis=None, out=None):
        return np.compress(condition, self, axis, out)

    def searchsorted(self, v, side="left", sorter=None):
        return np.searchsorted(self, v, side, sorter)

    def sort(self, axis=-1, kind=None, order=None, *, stable=None):
        """In place, as NumPy's method: the array's values sorted along ``axis``."""
        self[...] = np.sort(self, axis, kind, order, stable=stable)

    def partition(self, kth, axis=-1, kind="introselect", order=None):
        self[...] = np.partition(self, kth, axis, kind, order)

    def argpartition(self, kth, axis=-1, kind="introselect", order=None):
        return np.argpartition(self, kth, axis, kind, order)

    @property
    def mT(self):
        return np.swapaxes(self, -1, -2)

    def conj(self):
        """The complex conjugate; of a real array, the array itself (NumPy's method returns
        ``self`` then, so a write through the result writes the array)."""
        return np.conjugate(self) if self.dtype.kind == "c" else self

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

    def __copy__(self):
        return self.copy(order="K")  # (ndarray's: its layout kept)

    def __deepcopy__(self, memo):
        return self.copy(order="K")  # (numbers: no objects inside to copy)

    def fill(self, value):
        self[...] = value


_REFLECTED_BY_PYTHON = frozenset({"eq", "ne", "lt", "le", "gt", "ge"})  # no __r*__ or __i*__


def optional_ufunc_op(ufunc: np.ufunc) -> ops.OpDef | None:
    """The op of a ufunc from an optional library (SciPy), registered on first use."""
    ops.load_scipy_special()
    for op in ops.OPS:
        if op.kind == "elementwise" and isinstance(op.impl, np.ufunc):
            UFUNC_OPS.setdefault(op.impl, op)
    return UFUNC_OPS.get(ufunc)


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
        return self._tracer.numpy.ufunc(ufunc, "__call__", (self,), {}, python_operator=True)

    return method


def _binary_operator(ufunc: np.ufunc, reflected: bool) -> Callable:
    def method(self: TracedArray, other: Any) -> TracedArray:
        if type(other) in DEFERRED:
            return NotImplemented
        operands = (other, self) if reflected else (self, other)
        return self._tracer.numpy.ufunc(ufunc, "__call__", operands, {}, python_operator=True)

    return method


def _inplace_operator(ufunc: np.ufunc) -> Callable:
    def method(self: TracedArray, other: Any) -> TracedArray:
        if self.meta.scalar:  # scalars are immutable: Python rebinds the name
            return self._tracer.numpy.ufunc(
                ufunc, "__call__", (self, other), {}, python_operator=True
            )
        return self._tracer.numpy.ufunc(ufunc, "__call__", (self, other), {"out": (self,)})

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


def _python_int_base(base: TracedArray, exponent: Any) -> TracedArray:
    """A Python int raised to a negative int is a float (``i ** -1``, 0 raising
    ZeroDivisionError) where NumPy's integer power refuses: the base as a Python float."""
    if not (base.meta.weak and base.dtype.kind == "i" and type(exponent) is int and exponent < 0):
        return base
    tracer = base._tracer
    base = tracer.call(ops.PYTHON_SCALAR, base, kind="float")
    message = "0.0 cannot be raised to a negative power"
    return tracer.call(ops.CHECK, base, base != 0, error="ZeroDivisionError", message=message)


def _power_operator(self: TracedArray, other: Any) -> TracedArray:
    self = _python_int_base(self, other)
    fast = _fast_power(self, other)
    if fast is not None:
        return self._tracer.numpy.ufunc(fast, "__call__", (self,), {}, python_operator=True)
    return self._tracer.numpy.ufunc(np.power, "__call__", (self, other), {}, python_operator=True)


def _inplace_power_operator(self: TracedArray, other: Any) -> TracedArray:
    fast = _fast_power(self, other)
    if fast is None:
        return _inplace_operator(np.power)(self, other)
    return self._tracer.numpy.ufunc(fast, "__call__", (self,), {"out": (self,)})


def _divmod_operator(self: TracedArray, other: Any) -> tuple:
    return self // other, self % other


def _rdivmod_operator(self: TracedArray, other: Any) -> tuple:
    return other // self, other % self


_install_operators()
TracedArray.__pow__ = _power_operator
TracedArray.__ipow__ = _inplace_power_operator
TracedArray.__divmod__ = _divmod_operator
TracedArray.__rdivmod__ = _rdivmod_operator


def decided_by_scalars(value: Any) -> None:
    """Raise ``ScalarsDecide`` when ``value`` is (or a list or tuple holds) a traced scalar of
    the function's own graph computed from scalar arguments and sizes alone, which Python or
    NumPy needs as a concrete value (``range(int(T / dt))``, ``np.round(x, int(p))``): the call
    is traced again with those arguments static, rather than refused."""
    if isinstance(value, (list, tuple)):
        for item in value:
            decided_by_scalars(item)
    elif isinstance(value, TracedArray) and not value.ndim:
        tracer = value._tracer
        size_value(value._node, tracer.graph.shape_env, tracer.scalar_arguments)


def holds_traced(value: Any) -> bool:
    """Whether ``value`` is a traced array or a (nested) list or tuple holding one (a list a
    rolled loop appended rows to does: ``list_rows``)."""
    if getattr(value, "has_rows", False):
        return True
    if isinstance(value, (list, tuple)):
        return any(holds_traced(v) for v in value)
    return isinstance(value, TracedArray)


def _new_axes_beside_traced(index: Any, ndim: int) -> tuple[tuple, tuple] | None:
    """``(index without its Nones, the index adding their axes to its result)`` when ``index``
    has ``None`` (``np.newaxis``) beside a traced scalar and otherwise basic items: an int read
    from the data stays basic indexing, so NumPy's result is the one without the new axes with
    them put back where they stood; else None."""
    if not isinstance(index, tuple) or not any(item is None for item in index):
        return None
    traced = [item for item in index if isinstance(item, TracedArray)]
    ellipses = sum(item is Ellipsis for item in index)
    if not traced or any(item.ndim for item in traced) or ellipses > 1:
        return None
    ints = (int, np.integer, TracedArray, SymInt)
    kept = [item for item in index if item is not None]
    consumed = sum(item is not Ellipsis for item in kept)
    positions, axis = [], 0
    for item in index:
        if item is None:
            positions.append(axis)
        elif not (item is Ellipsis or isinstance(item, (slice, *ints))) or isinstance(item, bool):
            return None
        if item is None or isinstance(item, slice):
            axis += 1
        elif item is Ellipsis:
            axis += ndim - consumed
    total = axis + (0 if ellipses else ndim - consumed)
    return tuple(kept), tuple(None if a in positions else slice(None) for a in range(total))


def _library_function_asking() -> str | None:
    """``module.function`` of the NumPy function written in Python that the user's code called
    and that asks for a concrete array (``numpy.ma.core.masked_equal``), or None when the user's
    own code, another library or NumPy's C code (which has no frame) asked."""
    _, numpy = user_frame(sys._getframe(2))
    return (
        None if numpy is None else f"{numpy.f_globals.get('__name__', '?')}.{numpy.f_code.co_name}"
    )
