"""Values whose length the data decide, kept without one: a boolean-mask gather ``x[m]``
(``masks.MaskedValue``) and a slice with bounds read from the data ``x[lo:hi]``
(``segments.Segment``).

What the two share: NumPy's protocols and Python's operators (from the op table's ``dunder``s)
routed to the value's own ``elementwise``; NumPy's reduction functions (``np.sum(v)``) routed
to its reduction methods, their keywords checked; and every use that needs the length (its
shape, ``len``, indexing it, NumPy functions without a rule for it) made on the value as a
whole array (``whole``: a gather whose length is an unbacked symbol), or refused naming the
user's line where the value cannot be one (a segment).
"""

from __future__ import annotations

import inspect
import operator
from typing import Any, Callable

import numpy as np

from ..ir import ops
from .traced_array import DEFERRED

REDUCTIONS = {
    np.sum: "sum",
    np.prod: "prod",
    np.mean: "mean",
    np.max: "max",
    np.amax: "max",
    np.min: "min",
    np.amin: "min",
    np.any: "any",
    np.all: "all",
}
_UFUNC_KEYWORDS = {"dtype"}  # (``out=``, ``where=``, ``casting=``... are refused)


class LengthFromData:
    """The shared part of a value whose length the data decide (see the module docstring).
    A subclass names itself (``NAME``), says what compiles (``HINT``), and provides
    ``tracer``, ``where`` (the line that made it), ``elementwise`` and the reductions."""

    __slots__ = ()
    __array_priority__ = 2000
    __hash__ = None
    NAME = ""
    HINT = ""

    def refuse(self, use: str, detail: str = "", made_here: bool = False, hint: str = ""):
        """Refuse ``use`` ("len() of", "returning") of this value, at the user's current
        line, or where it was made (``made_here``)."""
        self.tracer.refuse(
            f"{use} {self.NAME}, whose length the data decide",
            detail=detail,
            source=self.where if made_here else "",
            hint=hint or self.HINT,
        )

    def functions(self) -> dict:
        """NumPy functions of this value beyond the reductions: function -> its handler
        ``(args, kwargs) -> result``."""
        return {}

    # -- NumPy protocols ------------------------------------------------------------------------------
    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
        if method != "__call__" or set(kwargs) - _UFUNC_KEYWORDS or len(inputs) > ufunc.nin:
            keywords = "".join(f", {key}=" for key in kwargs)
            self.refuse(f"np.{ufunc.__name__}.{method}(..{keywords}) of")
        return self.elementwise(lambda *values: ufunc(*values, **kwargs), inputs)

    def __array_function__(self, func: Callable, types: tuple, args: tuple, kwargs: dict) -> Any:
        name = REDUCTIONS.get(func)
        if name is not None and args and args[0] is self:
            return self.reduce_by_name(name, args[1:], kwargs, func)
        if (func is np.where and len(args) == 3 and not kwargs) or func is np.clip:
            return self.elementwise(lambda *values: func(*values, **kwargs), args)
        handler = self.functions().get(func)
        if handler is not None:
            return handler(args, kwargs)
        use = f"np.{func.__name__} of"
        return func(*as_arrays(args, use), **as_arrays(kwargs, use))

    def reduce_by_name(self, name: str, args: tuple, kwargs: dict, func: Callable) -> Any:
        """``np.sum(value, ...)`` as ``value.sum(...)``; a keyword the method has not
        (``initial=``, ``where=``) refused."""
        method = getattr(self, name)
        try:
            inspect.signature(method).bind(*args, **kwargs)
        except TypeError:
            keywords = "".join(f", {key}=..." for key in kwargs)
            self.refuse(f"np.{func.__name__}(..{keywords}) of")
        return method(*args, **kwargs)

    # -- uses that need the length --------------------------------------------------------------------
    def whole(self, use: str) -> Any:
        """This value as an array of its length, for ``use`` ("len() of"): a subclass that can
        make one (``MaskedValue``) returns it; here, refused."""
        self.refuse(use)

    @property
    def shape(self) -> tuple:
        return self.whole("the shape of").shape

    def __len__(self) -> int:
        return len(self.whole("len() of"))

    def __iter__(self):
        return iter(self.whole("iterating over"))

    def __getitem__(self, index: Any) -> Any:
        return self.whole("indexing")[index]

    def __setitem__(self, index: Any, value: Any) -> None:
        self.refuse("assigning into")

    def __bool__(self) -> bool:
        return bool(self.whole("bool() of"))

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        self.refuse("converting to a NumPy array")

    def __getattr__(self, name: str) -> Any:
        if hasattr(np.ndarray, name) and not name.startswith("__"):
            return getattr(self.whole(f"the method or attribute .{name} of"), name)
        raise AttributeError(f"'{type(self).__name__}' object has no attribute {name!r}")


def as_arrays(value: Any, use: str) -> Any:
    """``value`` (arguments: tuples, lists, dicts) with each value of a length the data decide
    as a whole array (``LengthFromData.whole``)."""
    if isinstance(value, LengthFromData):
        return value.whole(use)
    if type(value) in (tuple, list):  # (not a list of its own kind: a grown list)
        return type(value)(as_arrays(v, use) for v in value)
    if type(value) is dict:
        return {k: as_arrays(v, use) for k, v in value.items()}
    return value


def extreme_identity(dtype: np.dtype, name: str) -> Any:
    """The value no element passes in a ``maximum`` or ``minimum`` (``name``) of ``dtype``:
    an infinity, the integer range's end, or a bool; None for complex (no order)."""
    lowest = name == "maximum"
    if dtype.kind == "c":
        return None
    if dtype.kind == "f":
        return dtype.type(-np.inf if lowest else np.inf)
    if dtype.kind == "b":
        return np.bool_(not lowest)
    info = np.iinfo(dtype)
    return dtype.type(info.min if lowest else info.max)


def mean_dtypes(dtype: np.dtype, wanted: Any) -> tuple:
    """``(result, accumulator)`` dtypes of NumPy's mean of ``dtype`` values (``wanted``: its
    ``dtype=``): floats in their own dtype (float16 summed in float32), others in float64;
    accumulator None: the sum's own."""
    if wanted is not None:
        return np.dtype(wanted), np.dtype(wanted)
    if dtype.kind in "fc":
        return dtype, (np.dtype(np.float32) if dtype == np.float16 else None)
    return np.dtype(np.float64), np.dtype(np.float64)


def empty_check(tracer: Any, result: Any, present: Any, name: str) -> Any:
    """``result`` of a ``maximum``/``minimum`` reduction, raising NumPy's ValueError (a
    ``check`` node) unless ``present`` (a traced bool: some element)."""
    message = f"zero-size array to reduction operation {name} which has no identity"
    return tracer.call(ops.CHECK, result, present, error="ValueError", message=message)


def install_operators(cls: type) -> None:
    """Python operators on ``cls`` from the op table's ``dunder``s, each its values' own
    operator (with the traced array's scalar rules) through ``cls.elementwise``; the class
    joins the types a traced array leaves its operations to (``DEFERRED``)."""
    for op in ops.OPS:
        function = getattr(operator, op.dunder or "", None) or getattr(
            operator, f"{op.dunder}_", None
        )
        if function is None or op.dunder == "matmul":
            continue
        if op.kind == "elementwise" and op.numpy[0].nin == 1:
            setattr(cls, f"__{op.dunder}__", _unary(function))
            continue
        setattr(cls, f"__{op.dunder}__", _binary(function, reflected=False))
        setattr(cls, f"__r{op.dunder}__", _binary(function, reflected=True))
    DEFERRED.add(cls)


def _unary(function: Callable) -> Callable:
    return lambda self: self.elementwise(function, (self,))


def _binary(function: Callable, reflected: bool) -> Callable:
    if reflected:
        return lambda self, other: self.elementwise(lambda a, b: function(b, a), (self, other))
    return lambda self, other: self.elementwise(function, (self, other))
