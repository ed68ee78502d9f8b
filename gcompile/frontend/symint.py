"""SymInt: a size as the traced function sees it (``x.shape[0]``, ``x.size``).

Sizes are symbolic while a function is traced (``ir/shape_env.py``), so that one trace serves
every size. The function gets ``SymInt`` objects where it reads a size, and they behave like
Python ints as far as a trace can follow without knowing the value:

* ``n - 1``, ``2 * n``, ``n // 2``, ``n % 4``, ``n * m`` stay symbolic (an ``int`` when the
  result is a constant), and may be used in slices, shapes and ``np.zeros((n, m))``;
* ``n / 2``, ``n * 0.5``, ``x * n``, ``np.sqrt(n)`` use the size as a value: it becomes a
  ``symint`` node of the graph, a Python int computed at run time;
* ``n > 10``, ``n == m``, ``bool(n)`` are decided at the traced sizes and guarded: a later
  call whose sizes decide otherwise traces again; of a length the data decide (``u0``,
  unbacked) they are traced booleans, unless its interval answers them;
* ``range(n)``, ``int(n)``, ``float(n)``, ``len(x)``, ``hash(n)`` need the value itself: the
  trace specialises on it (a guard ``n == value``), so another size traces again.
"""

from __future__ import annotations

import operator
import sys
from typing import Any, Callable

from ..errors import GCOMPILE_DIR
from ..ir.shape_env import IndexQuestion, SymbolicError, data_sizes_in
from ..ir.symbolic import is_expr, is_int

_COMPARISONS = {
    "==": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}
_VALUE_TYPES_NOTE = "a size used as a Python int (range(), an index, int(), len(), hash())"


class SymInt:
    """A symbolic size read by the traced function (see the module docstring)."""

    __slots__ = ("_tracer", "expr")
    __array_priority__ = 1001  # above TracedArray: NumPy asks us first and we hand values on

    def __init__(self, tracer: Any, expr: Any):
        self._tracer = tracer
        self.expr = expr

    @staticmethod
    def wrap(tracer: Any, value: Any) -> "SymInt | int":
        """``value`` (an int or an expression) as what the traced function should see."""
        return SymInt(tracer, value) if is_expr(value) else value

    def _env(self):
        return self._tracer.graph.shape_env

    def value(self) -> Any:
        """This size as a traced value (a ``symint`` node: a weak Python int)."""
        return self._tracer.symint_value(self.expr)

    # -- symbolic arithmetic -------------------------------------------------------------------------
    def _size_operand(self, other: Any) -> Any:
        if isinstance(other, SymInt):
            return other.expr
        return other if is_int(other) else None

    def _arith(self, other: Any, fn: Callable, reflected: bool = False) -> Any:
        if isinstance(other, (list, tuple, str)):
            return NotImplemented  # Python's own: [0.0] * n repeats the list (n as an int)
        size = self._size_operand(other)
        if size is None:
            value = self.value()
            return fn(other, value) if reflected else fn(value, other)
        lhs, rhs = (size, self.expr) if reflected else (self.expr, size)
        if fn in (operator.floordiv, operator.mod) and is_expr(rhs):
            rhs = self._env().specialize(rhs, "a division by a size")
        return SymInt.wrap(self._tracer, fn(lhs, rhs))

    def __add__(self, other):
        return self._arith(other, operator.add)

    def __radd__(self, other):
        return self._arith(other, operator.add, reflected=True)

    def __sub__(self, other):
        return self._arith(other, operator.sub)

    def __rsub__(self, other):
        return self._arith(other, operator.sub, reflected=True)

    def __mul__(self, other):
        return self._arith(other, operator.mul)

    def __rmul__(self, other):
        return self._arith(other, operator.mul, reflected=True)

    def __floordiv__(self, other):
        return self._arith(other, operator.floordiv)

    def __rfloordiv__(self, other):
        return self._arith(other, operator.floordiv, reflected=True)

    def __mod__(self, other):
        return self._arith(other, operator.mod)

    def __rmod__(self, other):
        return self._arith(other, operator.mod, reflected=True)

    def __pow__(self, other):
        if is_int(other) and 0 <= other <= 8:
            return SymInt.wrap(self._tracer, self.expr**other)
        return self.value() ** other

    def __rpow__(self, other):
        return other ** self.value()

    def __truediv__(self, other):
        return self.value() / other

    def __rtruediv__(self, other):
        return other / self.value()

    def __neg__(self):
        return SymInt.wrap(self._tracer, -self.expr)

    def __pos__(self):
        return self

    def __abs__(self):
        return self if self._decide(">=", 0, "abs() of a size") else -self

    # -- decisions --------------------------------------------------------------------------------------
    def _decide(self, relation: str, other: Any, reason: str) -> Any:
        size = self._size_operand(other)
        if size is None:
            return _COMPARISONS[relation](self.value(), other)
        env = self._env()
        if data_sizes_in((self.expr, size)):  # (a length the data decide: known, or traced)
            known = env.known(relation, self.expr, size)
            if known is not None:
                return known
            other = self._tracer.symint_value(size) if is_expr(size) else size
            return _COMPARISONS[relation](self.value(), other)
        try:
            return env.decide(relation, self.expr, size, reason)
        except IndexQuestion:
            if not self._tracer.loops.index_values or _asked_by_gcompile():
                raise
            other = self._tracer.symint_value(size) if is_expr(size) else size
            return _COMPARISONS[relation](self.value(), other)  # (``LoopTracer.index_values``)

    def __eq__(self, other):
        return self._decide("==", other, "a comparison of sizes")

    def __ne__(self, other):
        return self._decide("!=", other, "a comparison of sizes")

    def __lt__(self, other):
        return self._decide("<", other, "a comparison of sizes")

    def __le__(self, other):
        return self._decide("<=", other, "a comparison of sizes")

    def __gt__(self, other):
        return self._decide(">", other, "a comparison of sizes")

    def __ge__(self, other):
        return self._decide(">=", other, "a comparison of sizes")

    def __bool__(self):
        answer = self._decide("!=", 0, "the truth value of a size")
        if not isinstance(answer, bool):  # (traced: Python needs the answer now)
            self._tracer.refuse(
                "bool() of a length the data decide",
                hint="write `if x.size > 0:` in the compiled function itself, whose branches "
                "compile; or keep the values at their full shape (np.where)",
            )
        return answer

    # -- the value itself: specialised ----------------------------------------------------------------
    def specialize(self) -> int:
        """The int this size is at the traced call; the trace is guarded on it."""
        return self._env().specialize(self.expr, _VALUE_TYPES_NOTE)

    def __index__(self):
        return self.specialize()

    def __int__(self):
        return self.specialize()

    def __float__(self):
        return float(self.specialize())

    def bit_length(self) -> int:
        """``int.bit_length`` (``1 << (n - 1).bit_length()``, a power of two for an FFT):
        of the value, specialised."""
        return self.specialize().bit_length()

    def __complex__(self):
        return complex(self.specialize())

    def __hash__(self):
        return hash(self.specialize())

    def __round__(self, ndigits=None):
        return self if ndigits is None else round(self.specialize(), ndigits)

    # -- NumPy: a size given to a ufunc or function is a value --------------------------------------
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        inputs = tuple(v.value() if isinstance(v, SymInt) else v for v in inputs)
        return getattr(ufunc, method)(*inputs, **kwargs)

    def __array_function__(self, func, types, args, kwargs):
        args = tuple(v.value() if isinstance(v, SymInt) else v for v in args)
        return func(*args, **kwargs)

    def __format__(self, spec: str) -> str:
        """The size's text: its int, guarded; a loop index's, one for every trip, a marker that
        a ``print`` formats on each call (``texts``)."""
        try:
            return format(self.specialize(), spec)
        except SymbolicError:
            return self._tracer.texts.marker(self, spec)

    def __str__(self) -> str:
        """``str(n)``: as ``format(n, "")``, the size's digits."""
        return self.__format__("")

    def __repr__(self) -> str:  # (the expression: gcompile's own messages, no guard)
        return str(self.expr)


def unwrap(value: Any) -> Any:
    """``value`` (a parameter: shapes, indices, bounds) with every SymInt as its expression."""
    if isinstance(value, SymInt):
        return value.expr
    if isinstance(value, slice):
        return slice(unwrap(value.start), unwrap(value.stop), unwrap(value.step))
    if isinstance(value, (tuple, list)) and not hasattr(type(value), "_fields"):
        return type(value)(unwrap(v) for v in value)
    return value


def _asked_by_gcompile() -> bool:
    """Whether the comparison being decided is gcompile's own (an index's bounds), not the
    user's: those need a Python answer."""
    frame = sys._getframe(3)  # (this, ``_decide``, the comparison operator, its caller)
    return frame.f_code.co_filename.startswith(GCOMPILE_DIR)
