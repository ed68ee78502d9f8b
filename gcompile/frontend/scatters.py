"""``np.add.at(a, indices, b)`` and the other ufuncs' ``at``: an unbuffered scatter, one loop
over the indices, each trip ``a[indices[i]] = ufunc(a[indices[i]], b[i])`` (an element read and
a ``put`` at a position read from the data, so repeated indices accumulate as NumPy's do).
``a[indices] = b`` (``scatter_assign``) is the same loop writing ``b[i]`` (``b`` broadcast to
the rows written first): a repeated index keeps its last value, as NumPy's assignment does,
and ``a[idx] += b`` reads ``a[idx]`` (a copy) before any write, as Python's augmented
assignment of NumPy's does.

Taken: ``a`` a traced array, ``indices`` one 1-d integer array (or a tuple of them, one per
leading axis of ``a``), ``b`` absent (a unary ufunc), a number, or an array with one item per
index. NumPy's casting is checked on a probe (``np.add.at`` of a float into an int array raises
as it does); anything else is refused, naming the line.

``a[start::step] = v`` of a 1-d ``a``, a number ``v`` and a step a loop index gives (a sieve's
``mask[j * j :: j] = False``), whose length sizes cannot count (``stepped_assign``), is the loop
``p = start; while p < len(a): a[p] = v; p += step``, a while loop.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from ..capture.runtime import LoopInfo
from ..errors import source_text, user_source
from ..ir import ops
from ..ir.alias import root
from ..ir.symbolic import prove_nonnegative
from .indices import integer_array
from .symint import SymInt


def ufunc_at(tracer: Any, ufunc: np.ufunc, inputs: tuple, kwargs: dict) -> None:
    """``ufunc.at(*inputs)`` on a traced array as one loop (see the module docstring)."""
    a, indices, *rest = inputs if len(inputs) >= 2 else (*inputs, None)
    b = rest[0] if rest else None
    b = _traced_int(tracer, b, a)
    positions = indices if isinstance(indices, tuple) else (indices,)
    if kwargs or not tracer.is_traced(a) or not _vectors(tracer, positions, a):
        tracer.refuse(
            f"np.{ufunc.__name__}.at with these arguments",
            hint="a traced array, one 1-d integer index array (or a tuple of them, one per "
            "axis) and values that are a number or one per index",
        )
    _check_casting(ufunc, a, b)
    count = positions[0].shape[0]
    per_index = tracer.is_traced(b) and b.ndim > 0 or isinstance(b, np.ndarray) and b.ndim > 0
    source = user_source()
    info = LoopInfo.at(source, f"np.{ufunc.__name__}.at ({source_text(source)})", ())

    def body(i):
        where = tuple(p[i] for p in positions)
        value = (b[i] if per_index else b,) if ufunc.nin == 2 else ()
        a[where] = ufunc(a[where], *value)
        return ()

    done = tracer.loops.capture_range(body, 0, count, 1, (), info)
    if done is NotImplemented:
        for i in range(int(count)):  # (loops unrolled: as many element writes)
            body(i)


def scatter_assign(tracer: Any, a: Any, index: Any, b: Any) -> bool:
    """``a[index] = b`` for ``index`` one 1-d integer array (or a tuple of them, one per
    leading axis) as one loop of writes at those positions; False (nothing recorded) for any
    other index."""
    positions = index if isinstance(index, tuple) else (index,)
    positions = tuple(integer_array(tracer, p) for p in positions)
    if any(p is None for p in positions) or not _vectors(tracer, positions, a):
        return False
    positions = tuple(tracer.wrap(tracer.operand(p)) for p in positions)  # (a constant: traced)
    count = positions[0].shape[0]
    rows = (count,) + tuple(a.shape[len(positions) :])
    values = _traced_int(tracer, b, a)
    values = values if tracer.is_traced(values) else np.asarray(values)
    if values.ndim:  # (NumPy broadcasts the values to the rows written, before any write)
        values = np.broadcast_to(values, rows)
    source = user_source()
    info = LoopInfo.at(source, f"a write at an index array ({source_text(source)})", ())

    def body(i):
        a[tuple(p[i] for p in positions)] = values[i] if values.ndim else values
        return ()

    done = tracer.loops.capture_range(body, 0, count, 1, (), info)
    if done is NotImplemented:
        for i in range(int(count)):  # (loops unrolled: as many element writes)
            body(i)
    return True


def _vectors(tracer: Any, positions: tuple, a: Any) -> bool:
    """Whether the positions are 1-d integer arrays of one length, at most one per axis."""
    if not positions or len(positions) > a.ndim:
        return False
    for p in positions:
        dtype = p.dtype if tracer.is_traced(p) or isinstance(p, np.ndarray) else None
        if dtype is None or dtype.kind not in "iu" or p.ndim != 1:
            return False
    env = tracer.graph.shape_env
    lengths = [p.shape[0].expr if isinstance(p.shape[0], SymInt) else p.shape[0] for p in positions]
    return all(
        env.hint(n) == env.hint(lengths[0]) and env.decide("==", n, lengths[0], "np.ufunc.at")
        for n in lengths[1:]
    )


def _traced_int(tracer: Any, value: Any, target: Any) -> Any:
    """``value``, a traced scalar if it is an int that varies between calls (a ``SymInt``),
    written into ``target``'s dtype as NumPy writes a Python int (exactly, or rounded to a
    float64's or complex128's precision); refused for other dtypes, where NumPy raises for
    some values (OverflowError into an int8) or rounds otherwise (into a float32)."""
    if not isinstance(value, SymInt):
        return value
    if target.dtype not in _HOLD_INT64:
        tracer.refuse(
            f"an int that varies between calls written into a {target.dtype} array",
            hint="NumPy checks or rounds each value: pass it as a NumPy scalar of that dtype",
        )
    return tracer.symint_value(value.expr)


_HOLD_INT64 = (np.dtype(np.int64), np.dtype(np.float64), np.dtype(np.complex128))


def _check_casting(ufunc: np.ufunc, a: Any, b: Any) -> None:
    """Raise what NumPy's ``ufunc.at`` raises for these dtypes (a same_kind cast of the result
    into ``a``), on a one-element probe."""
    probe = np.zeros(1, a.dtype)
    if ufunc.nin == 1:
        ufunc.at(probe, [0])
        return
    value = np.zeros(1, b.dtype) if hasattr(b, "dtype") and b.ndim > 0 else b
    if hasattr(b, "dtype") and b.ndim == 0:
        value = np.zeros((), b.dtype)[()]
    with np.errstate(all="ignore"):
        ufunc.at(probe, [0], value)


def stepped_assign(tracer: Any, a: Any, index: Any, value: Any) -> bool:
    """Record ``a[start::step] = value`` (see the module docstring) when ``a`` is 1-d, ``value``
    a number (cast to ``a``'s dtype first, as NumPy does: its errors raised here) or a 0-d
    traced value, and ``step`` a loop index or size surely positive (a plain int is NumPy's
    basic slice), ``start`` none or surely not negative; False (nothing recorded) else."""
    item = index[0] if type(index) is tuple and len(index) == 1 else index
    if not isinstance(item, slice) or a.ndim != 1 or item.stop is not None:
        return False
    start, step = 0 if item.start is None else item.start, item.step
    if isinstance(step, (int, np.integer)) or not _number(tracer, value):
        return False
    if not _positive(tracer, a, step, 1) or not _positive(tracer, a, start, 0):
        return False
    if not tracer.is_traced(value):
        value = a.dtype.type(value)  # (NumPy's cast of a number: OverflowError, ValueError)
    source = user_source()
    text = f"a write at every step of a slice ({source_text(source)})"
    info = replace(LoopInfo.at(source, text, ("position",)), kind="while")
    start, stop, step = (_position(tracer, b) for b in (start, a.shape[0], step))

    def test(position):
        return position < stop

    def trip(position):
        a[position] = value
        return (position + step,)

    return tracer.loops.capture_while(test, trip, (start,), info) is not NotImplemented


def _number(tracer: Any, value: Any) -> bool:
    """A Python or NumPy number, or a 0-d traced value."""
    if tracer.is_traced(value):
        return value.ndim == 0
    return isinstance(value, (bool, int, float, complex, np.generic))


def _position(tracer: Any, bound: Any) -> Any:
    """A slice bound as a position of the loop: a size's value, a traced int as int64 (an
    int8 step would wrap), an int as it is."""
    if isinstance(bound, SymInt):
        return bound.value()
    if tracer.is_traced(bound) and bound.dtype != np.int64:
        return bound.astype(np.int64)
    return bound


def _positive(tracer: Any, a: Any, bound: Any, least: int) -> bool:
    """Whether ``bound`` (a slice's start or step) is at least ``least``: surely, a size or loop
    index; or, a traced int (a loop index whose questions are asked on each trip) into an array
    the function made, on the data, the call run again eagerly where it is not (a write into
    an argument would be seen twice then: not taken)."""
    if isinstance(bound, int) and not isinstance(bound, bool):
        return bound >= least
    if isinstance(bound, SymInt):
        return prove_nonnegative(bound.expr - least) is True
    traced = tracer.is_traced(bound) and bound.ndim == 0 and bound.dtype.kind in "iu"
    if not traced or root(a._node).op == "placeholder":
        return False
    tracer.raise_unless(bound >= least, ops.RerunEagerly.__name__, None)
    return True
