"""Lists of numbers traced as arrays (``capture/number_lists.py`` finds them).

``[x] * n`` of a Python int, float or bool (rows: ``[[x] * m for _ in range(n)]``) is, while
tracing, a ``NumberList``: an array of int64, float64 or bool behind the list's operations. An
item read is the array's element as a Python number of the list's kind (``PYTHON_SCALAR``); an
item written is stored in the array. A position may be a loop index or a traced int, so a loop
reading and writing the list stays rolled (a dynamic programme's table, a signal).

What the list holds must read back as eager mode's list would give it and compute alike: a
list of ints takes Python ints and int64 values, a list of floats Python floats and float64
values, a list of bools bools (an int written into a list of floats would read back as an
int there: refused). Where the function stores NumPy scalars (``dp[i] = dp[j] + a[i]`` of an
int64 array), the trace runs again with the items of lists made at that line read back as
NumPy scalars (``StrongItems``), as the items eager mode stored read (the items never written
then read as NumPy scalars too). Anything else written, or any list operation but ``len``, ``max`` and
``min`` (``builtins``), a NumPy function given it (its values, as ``np.asarray`` converts it)
and returning it (a list again on each call: ``RowsOf``), is refused naming the list.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import user_source
from ..ir import ops
from ..ir.pytree import RowsOf
from .declines import StrongItems
from .sequences import ConvertedByNumPy
from .symint import SymInt

_KINDS = {bool: "bool", int: "int", float: "float"}
_DTYPES = {"bool": np.dtype(np.bool_), "int": np.dtype(np.int64), "float": np.dtype(np.float64)}
_INT64 = np.iinfo(np.int64)


def make(tracer: Any, value: Any, counts: tuple) -> Any:
    """A ``NumberList`` for ``[value] * n`` (rows for counts ``(n, m)``), or ``NotImplemented``
    (the list is made as Python makes it) for a value that is not a Python number, or a
    count that may be negative."""
    kind = _KINDS.get(type(value))
    if kind is None or (kind == "int" and not _INT64.min <= value <= _INT64.max):
        return NotImplemented
    env = tracer.graph.shape_env
    for count in counts:
        if isinstance(count, SymInt):
            if not env.decide(">=", count.expr, 0, "a list of numbers has items"):
                return NotImplemented
        elif type(count) is not int or count < 0:
            return NotImplemented
    full = getattr(np.full, "__wrapped__", np.full)  # (NumPy's, not its tracing patch)
    array = tracer.numpy.creation(full, (tuple(counts), value), {"dtype": _DTYPES[kind]})
    site = user_source()
    return NumberList(tracer, array, kind, site, site in tracer.strong_lists)


class NumberList(list):
    """A list of numbers traced as an array (see the module docstring). It subclasses list so
    that NumPy's conversions see a list; its own items are none."""

    __array_function__ = ConvertedByNumPy.__array_function__
    __array_ufunc__ = ConvertedByNumPy.__array_ufunc__
    _as_array_in = ConvertedByNumPy._as_array_in
    has_rows = True  # (``holds_traced``: NumPy's conversions take ``as_array``)

    def __init__(self, tracer: Any, array: Any, kind: str, site: str, strong: bool, row=None):
        list.__init__(self)
        self._tracer, self.array, self.kind = tracer, array, kind
        self.site, self.strong = site, strong  # (``strong``: its items read as NumPy scalars)
        self.row = row  # (a row of rows: its position, its items the array's at (row, j))

    def __getitem__(self, index: Any) -> Any:
        if self.row is None and self.array.ndim > 1:
            place = self._position(index)
            return NumberList(self._tracer, self.array, self.kind, self.site, self.strong, place)
        return self._item(self.array[self._at(index)])

    def _at(self, index: Any) -> Any:
        """The array's position of the item at ``index``."""
        index = self._position(index)
        return index if self.row is None else (self.row, index)

    def _item(self, element: Any) -> Any:
        """An element as the list gives it: a Python number of its kind, or a NumPy scalar."""
        if self.strong:
            return element
        return self._tracer.call(ops.PYTHON_SCALAR, element, kind=self.kind)

    def __setitem__(self, index: Any, value: Any) -> None:
        if self.row is None and self.array.ndim > 1:
            self._refuse("a row of a list of lists assigned")
        self.array[self._at(index)] = self._stored(value)

    @property
    def values(self) -> Any:
        """The array of its items (a row of rows: a view of the array)."""
        return self.array if self.row is None else self.array[self.row]

    def length(self) -> Any:
        """``len(self)``: its first size (symbolic when the trace's sizes are)."""
        return self.values.shape[0]

    def as_array(self, tracer: Any) -> Any:
        """The array NumPy makes of the list: a new one holding its values."""
        return self.values.copy()

    def returned(self, tracer: Any) -> RowsOf:
        """The list as a result of the function: a list again on each call (new lists: the
        array itself is no result), of Python numbers or NumPy scalars."""
        values = self.values
        return RowsOf(values, "list" if self.strong and values.ndim == 1 else "tolist")

    def extreme(self, function: Any) -> Any:
        """``max(self)`` or ``min(self)`` as Python computes them, as a Python number."""
        from .builtins import extreme_loop  # (builtins gives lists to this module)

        values = self.values
        if values.ndim > 1:
            self._refuse(f"{function.__name__}() of a list of lists")
        return self._item(extreme_loop(self._tracer, values, function))

    def __len__(self) -> int:
        length = self.length()
        if isinstance(length, SymInt):
            self._refuse("the length of a list of numbers taken as an int by NumPy or C code")
        return length

    def __bool__(self) -> bool:
        env = self._tracer.graph.shape_env
        length = self.length()
        if not isinstance(length, SymInt):
            return length > 0
        return env.decide(">", length.expr, 0, "a list of numbers is not empty")

    def _position(self, index: Any) -> Any:
        if isinstance(index, (slice, tuple)) or index is None or index is Ellipsis:
            self._refuse("a slice or tuple index of a list of numbers")
        if type(index) is bool or (self._tracer.is_traced(index) and index.dtype.kind == "b"):
            self._refuse("a bool index of a list of numbers")
        return index

    def _stored(self, value: Any) -> Any:
        """``value`` as the list's item; refused unless it has the list's dtype (a Python
        number of its kind, a size for ints, a traced or NumPy value of that dtype), so that
        it reads back as the number eager mode's list holds and computes alike."""
        if isinstance(value, SymInt):
            dtype = np.dtype(np.int64)
        elif self._tracer.is_traced(value) and value.ndim == 0:
            dtype = value.dtype
        elif type(value) in _KINDS or isinstance(value, np.generic):
            dtype = np.asarray(value).dtype
            if type(value) is int and not _INT64.min <= value <= _INT64.max:
                dtype = np.dtype(object)
        else:
            dtype = type(value).__name__
        if dtype != _DTYPES[self.kind]:
            whole = self.kind == "float" and getattr(dtype, "kind", "") in "iu"
            hint = "store floats (0.0): eager mode's list would hold an int there" if whole else ""
            self._refuse(f"a value of {dtype} stored in a list of {self.kind}s", hint)
        numpy_scalar = isinstance(value, np.generic) or (
            self._tracer.is_traced(value) and not value.meta.weak
        )
        if numpy_scalar and not self.strong:
            raise StrongItems(self.site)
        return value

    def _refuse(self, construct: str, hint: str = "") -> None:
        self._tracer.refuse(
            construct,
            hint=hint
            or "the list is traced as an array (its items read and written by position); "
            "make it an array (np.zeros(n)) to use it otherwise",
        )


def _refusing(name: str):
    def refused(self, *args: Any, **kwargs: Any) -> Any:
        self._refuse(f"list.{name} of a list of numbers traced as an array")

    refused.__name__ = name
    return refused


for _name in (
    "__delitem__ __iter__ __reversed__ __contains__ __eq__ __ne__ __lt__ __le__ __gt__ "
    "__ge__ __add__ __mul__ __rmul__ __iadd__ __imul__ copy index count append extend insert "
    "pop remove clear sort reverse"
).split():
    setattr(NumberList, _name, _refusing(_name))
