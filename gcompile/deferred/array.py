"""``LazyArray``: a value whose NumPy operations are recorded until it is needed.

Recorded (``record.Step``): ufunc calls (``np.exp(x)``, ``x * 2``), the NumPy functions of the
op table (``np.sum``, ``np.where``, ``np.concatenate``, ...) through ``__array_function__``,
basic indexing (``x[1:, None]``), and the methods ``astype``, ``reshape``, ``transpose``/``T``,
``sum``, ``mean``, ``max``, ``min``, ``prod``, ``any``, ``all``, ``std``, ``var``.

Computed (every pending value at once, ``record.Session.flush``) when something needs the
value: ``np.asarray``, printing, ``bool``/``float``/``int``/``len``/iteration, any other
attribute (``x.shape``, ``x.dtype``), a NumPy function that is not recorded, the end of a
``with gcompile.lazy()`` block. A write into a lazy value (``out=``, ``x[i] = v``, ``x += 1``)
computes the pending values first, then writes eagerly: what was recorded before it sees the
memory as eager NumPy would, and views share memory as NumPy's do.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.lib.mixins import NDArrayOperatorsMixin

from ..ir import ops
from ..ir.pytree import map_leaves
from .record import SESSION, Step

# NumPy functions recorded: those of the op table (``OpDef.numpy``), which compile
RECORDED = frozenset(f for op in ops.OPS for f in op.numpy if not isinstance(f, np.ufunc))
_METHODS = ("astype", "reshape", "transpose", "sum", "mean", "max", "min", "prod")
_METHODS += ("any", "all", "std", "var")


class LazyArray(NDArrayOperatorsMixin):
    """A lazy value: ``step`` until computed, then ``value`` (see the module docstring)."""

    __slots__ = ("step", "value", "__weakref__")

    def __init__(self, value: Any = None, step: Step | None = None):
        self.value = value
        self.step = step
        if step is not None:
            SESSION.record(self)

    @classmethod
    def of(cls, function: Any, args: tuple, kwargs: dict) -> "LazyArray":
        """The lazy result of ``function(*args, **kwargs)``, recorded (lazy arguments as their
        steps, or their values once computed)."""
        step = Step(function, _steps(args), _steps(kwargs), next(SESSION.counter))
        return cls(step=step)

    def computed(self, value: Any) -> None:
        """The value is ``value`` now (its step keeps it for the steps that read it)."""
        self.step.done, self.step.result = True, value
        self.value, self.step = value, None

    def get(self) -> Any:
        """The value, computed now (with every other pending value) if it is not yet."""
        if self.step is not None:
            SESSION.flush(self)
        return self.value

    # -- NumPy's dispatch --------------------------------------------------------------------
    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
        if method == "__call__" and "out" not in kwargs and ufunc.nout == 1:
            return LazyArray.of(ufunc, inputs, kwargs)
        out = kwargs.get("out", ())
        if out:
            SESSION.flush()  # a write: what was recorded before it reads the old memory
            kwargs["out"] = tuple(_concrete(o) for o in out)
        result = getattr(ufunc, method)(*_concrete(inputs), **_concrete(kwargs))
        if len(out) == 1 and isinstance(out[0], LazyArray):
            return out[0]  # (``x += 1`` keeps ``x`` the lazy value it was)
        return result

    def __array_function__(self, function: Any, types: tuple, args: tuple, kwargs: dict) -> Any:
        if function in RECORDED and "out" not in kwargs:
            return LazyArray.of(function, args, kwargs)
        if "out" in kwargs:
            SESSION.flush()
        return function(*_concrete(args), **_concrete(kwargs))

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        value = np.asarray(self.get())
        return value if dtype is None else value.astype(dtype, copy=False)

    # -- indexing and methods ----------------------------------------------------------------
    def __getitem__(self, index: Any) -> Any:
        if _basic(index):
            return LazyArray.of("__getitem__", (self, index), {})
        return self.get()[_concrete(index)]

    def __setitem__(self, index: Any, value: Any) -> None:
        SESSION.flush()
        self.get()[_concrete(index)] = _concrete(value)

    @property
    def T(self) -> "LazyArray":  # noqa: N802 (NumPy's name)
        return LazyArray.of("transpose", (self,), {})

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):  # (protocols NumPy probes for: ``__array__`` answers them)
            raise AttributeError(name)
        if name in _METHODS:
            return lambda *args, **kwargs: LazyArray.of(name, (self, *args), kwargs)
        return getattr(self.get(), name)

    # -- what needs the value ----------------------------------------------------------------
    def __repr__(self) -> str:
        return f"lazy({self.get()!r})"

    def __str__(self) -> str:
        return str(self.get())

    def __bool__(self) -> bool:
        return bool(self.get())

    def __float__(self) -> float:
        return float(self.get())

    def __int__(self) -> int:
        return int(self.get())

    def __index__(self) -> int:
        return self.get().__index__()

    def __len__(self) -> int:
        return len(self.get())

    def __iter__(self):
        return iter(self.get())


def _basic(index: Any) -> bool:
    """A basic index (ints, slices of ints, None, Ellipsis, tuples of them)."""
    items = index if isinstance(index, tuple) else (index,)
    return all(
        item is None
        or item is Ellipsis
        or (isinstance(item, int) and not isinstance(item, bool))
        or (
            isinstance(item, slice)
            and all(p is None or type(p) is int for p in (item.start, item.stop, item.step))
        )
        for item in items
    )


def _steps(value: Any) -> Any:
    """``value`` with each lazy value in it replaced by its step, or its value once computed."""
    return map_leaves(_step_of, value)


def _step_of(value: Any) -> Any:
    if isinstance(value, LazyArray):
        return value.step if value.step is not None else value.value
    return value


def _concrete(value: Any) -> Any:
    """``value`` with every lazy value in it computed."""
    return map_leaves(lambda v: v.get() if isinstance(v, LazyArray) else v, value)
