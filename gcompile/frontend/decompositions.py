"""Decompositions: NumPy callables the tracer supports by recording other ops of the table.

``DECOMPOSITIONS`` maps a NumPy callable to a ``Decomposition``: a function
``fn(rec, *args, **kwargs)`` that records the call through ``rec.call(op, *operands,
**params)`` or through NumPy calls on the traced values (``np.divmod`` is ``floor_divide`` and
``remainder``; ``np.einsum`` of a matrix product is ``matmul`` of transposed operands). The op
table (``ir/ops.py``) knows nothing of them: they are the front end's.
"""

from __future__ import annotations

import builtins
import functools
import operator
import warnings
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from ..ir.einsum import MatmulPlan, eager_result, matmul_plan
from ..ir.meta import dtype_probe, normalize_axes
from ..ir.ops import (
    ARANGE,
    ASTYPE,
    CLIP,
    COPY,
    EMPTY,
    EYE,
    FULL,
    ONES,
    PYTHON_SCALAR,
    RESHAPE,
    ZEROS,
    OpDef,
)
from ..ir.shape_env import data_sizes_in, decide, hint
from .contractions import contraction
from .symint import SymInt
from .traced_array import TracedArray, holds_traced


@dataclass(frozen=True)
class Decomposition:
    """``fn(rec, *args, **kwargs)`` records the NumPy call through ``rec.call(op, *operands, **params)``.

    ``patch`` marks functions NumPy does not dispatch to traced arrays (they take
    no array argument, or convert instead of dispatching); the tracer replaces
    them in the ``numpy`` namespace while it traces. ``size_first``: the first argument is
    a size (``np.identity(x.shape[0])``): the call is recorded, not run at trace time (a
    symbolic size would be specialised, and a constant could not be indexed by traced values).
    """

    fn: Callable
    patch: bool = False
    size_first: bool = False


def _like_order(a: Any, order: str) -> str:
    if order in ("K", "A"):
        return "F" if a.ndim > 1 and a.flags.f_contiguous and not a.flags.c_contiguous else "C"
    return order


def _like(op: OpDef) -> Callable:
    def decompose(rec, a, dtype=None, order="K", subok=True, shape=None):
        shape = a.shape if shape is None else shape
        return rec.call(
            op, shape=shape, dtype=a.dtype if dtype is None else dtype, order=_like_order(a, order)
        )

    return decompose


def _empty_like(rec, prototype, dtype=None, order="K", subok=True, shape=None):
    return _like(EMPTY)(rec, prototype, dtype, order, subok, shape)


def _full_like(rec, a, fill_value, dtype=None, order="K", subok=True, shape=None):
    shape = a.shape if shape is None else shape
    return rec.call(
        FULL,
        fill_value,
        shape=shape,
        dtype=a.dtype if dtype is None else dtype,
        order=_like_order(a, order),
    )


def _norm(rec, x, ord=None, axis=None, keepdims=False):  # noqa: A002
    """``np.linalg.norm`` of a whole array as NumPy computes it: in the default order (and a
    vector's ``2``, a matrix's ``'fro'``, which NumPy computes alike) the square root of the
    raveled values' dot product with themselves (a complex array's real and imaginary parts
    apart, integers as floats); a vector's ``inf``, ``-inf``, ``0`` and ``1``
    orders and a matrix's ``inf`` and ``1`` orders by their reductions of ``abs(x)``. Any
    other order, axis or ``keepdims`` is the library call (``ir/externs``), which a loop
    program would call back through Python."""
    whole = axis is None and not keepdims and isinstance(x, TracedArray)
    reduced = _norm_by_reductions(x, ord) if whole else None
    if reduced is not None:
        return reduced
    as_default = whole and (ord == 2 and x.ndim == 1 or ord in ("f", "fro") and x.ndim == 2)
    if ord is not None and not as_default or not whole:
        keywords = {"ord": ord, "axis": axis, "keepdims": keepdims}
        return rec.numpy.extern(np.linalg.norm, (x,), keywords)
    if x.dtype.kind not in "fc":
        x = x.astype(np.float64)
    values = x.ravel()
    if values.dtype.kind == "c":
        squares = np.dot(values.real, values.real) + np.dot(values.imag, values.imag)
    else:
        squares = np.dot(values, values)
    return np.sqrt(squares)


def _norm_by_reductions(x, ord):  # noqa: A002
    """NumPy's norms of orders computed by reductions of ``abs(x)`` (its own expressions), or
    None for another order or rank."""
    if ord is None or isinstance(ord, str) or x.ndim not in (1, 2):
        return None
    if x.dtype.kind not in "fc":
        x = x.astype(np.float64)
    if x.ndim == 1 and ord in (np.inf, -np.inf):
        return np.abs(x).max() if ord > 0 else np.abs(x).min()
    if x.ndim == 1 and ord == 0:
        return (x != 0).astype(x.real.dtype).sum()
    if x.ndim == 1 and ord == 1:
        return np.add.reduce(np.abs(x))
    if x.ndim == 2 and ord in (1, np.inf):
        return np.add.reduce(np.abs(x), axis=0 if ord == 1 else 1).max()
    return None


def _divmod(rec, x1, x2):
    return np.floor_divide(x1, x2), np.remainder(x1, x2)


_NO_VALUE = getattr(np, "_NoValue", object())


def _clip(rec, a, a_min=_NO_VALUE, a_max=_NO_VALUE, *, min=_NO_VALUE, max=_NO_VALUE):  # noqa: A002
    low = min if a_min is _NO_VALUE else a_min
    high = max if a_max is _NO_VALUE else a_max
    low, high = (None if b is _NO_VALUE else _within(rec, a, b) for b in (low, high))
    return rec.call(CLIP, a, low, high)


def _within(rec, a, bound):
    """A Python int bound of an integer array's clip brought into its dtype's range (NumPy
    compares exactly: ``np.clip(u8, -1, 300)`` keeps every value; a kernel would cast -1 to
    255); one known at run time only, clamped there, a Python int still."""
    if np.dtype(getattr(a, "dtype", np.int64)).kind not in "iu":
        return bound
    info = np.iinfo(a.dtype)
    if type(bound) is int:
        return builtins.min(builtins.max(bound, int(info.min)), int(info.max))
    if isinstance(bound, SymInt):
        bound = rec.symint_value(bound.expr)
    if not (isinstance(bound, TracedArray) and bound.meta.weak and bound.dtype.kind == "i"):
        return bound
    clamped = np.minimum(np.maximum(bound, int(info.min)), int(info.max))
    return rec.call(PYTHON_SCALAR, clamped, kind="int")


def _isclose(rec, a, b, rtol=1.0e-5, atol=1.0e-8, equal_nan=False):
    """NumPy's own definition: ``|a - b| <= atol + rtol * |b|`` where ``b`` is finite, or
    ``a == b`` (equal infinities); NaNs equal with ``equal_nan``; ``b`` in floating point."""
    a, y = (
        v if isinstance(v, (int, float, complex, TracedArray)) else np.asanyarray(v) for v in (a, b)
    )
    if isinstance(y, TracedArray) and y.meta.weak and y.dtype.kind in "iub":
        y = rec.call(PYTHON_SCALAR, y, kind="float")  # (a Python int: float(y), weak)
    elif isinstance(y, TracedArray) and y.dtype.kind != "m":
        y = y.astype(np.result_type(y.dtype, 1.0), copy=False)
    elif isinstance(y, np.ndarray) and y.dtype.kind != "m":
        y = y.astype(np.result_type(y, 1.0), copy=False)
    elif isinstance(y, int):  # (bool too, as NumPy's)
        y = float(y)
    with np.errstate(invalid="ignore"):
        result = np.less_equal(abs(a - y), atol + rtol * abs(y)) & np.isfinite(y) | (a == y)
        if equal_nan:
            result = result | np.isnan(a) & np.isnan(y)
    return result[()]


def _allclose(rec, a, b, rtol=1.0e-5, atol=1.0e-8, equal_nan=False):
    """``bool(np.all(np.isclose(...)))``: a Python bool, as NumPy returns."""
    close = np.all(_isclose(rec, a, b, rtol, atol, equal_nan))
    return rec.call(PYTHON_SCALAR, close, kind="bool")


def _identity(rec, n, dtype=None):
    n = rec.numpy.as_size(n)  # (a traced integer: a length the data decide)
    return rec.call(EYE, N=n, dtype=np.dtype(float if dtype is None else dtype))


def _fftfreq(rec, n, d=1.0, device=None):
    """``np.fft.fftfreq`` as NumPy computes it: the integers ``0 .. (n - 1) // 2`` then
    ``-(n // 2) .. -1``, times ``1 / (n * d)``."""
    if device is not None:
        rec.refuse("np.fft.fftfreq with device=")
    n = rec.numpy.as_size(n)
    low = rec.call(ARANGE, start=0, stop=(n - 1) // 2 + 1, step=1, dtype=np.dtype(np.int64))
    high = rec.call(ARANGE, start=-(n // 2), stop=0, step=1, dtype=np.dtype(np.int64))
    return np.concatenate([low, high]) * (1.0 / (n * d))


def _rfftfreq(rec, n, d=1.0, device=None):
    """``np.fft.rfftfreq`` as NumPy computes it: ``0 .. n // 2`` times ``1 / (n * d)``."""
    if device is not None:
        rec.refuse("np.fft.rfftfreq with device=")
    n = rec.numpy.as_size(n)
    whole = rec.call(ARANGE, start=0, stop=n // 2 + 1, step=1, dtype=np.dtype(np.int64))
    return whole * (1.0 / (n * d))


def _shape(rec, a):
    return a.shape


def _count_nonzero(rec, a, axis=None, *, keepdims=False):
    """``np.count_nonzero``: the elements unequal to zero (NaN among them) summed, in NumPy's
    intp (a NumPy int64 without an axis)."""
    return np.sum(a != 0, axis=axis, keepdims=keepdims)


def _ndim(rec, a):
    return a.ndim


def _size(rec, a, axis=None):
    if axis is None:
        return a.size
    axes = normalize_axes(axis, a.ndim)
    return functools.reduce(operator.mul, (a.shape[i] for i in axes), 1)


def _asarray(rec, a, dtype=None, order=None, *, device=None, copy=None):
    if copy:
        return _array(rec, a, dtype, order=order or "K")
    if dtype is not None and np.dtype(dtype) != a.dtype:
        a = rec.call(ASTYPE, a, dtype=np.dtype(dtype))
    if a.meta.scalar:  # a NumPy scalar becomes a new 0-d array
        return rec.call(COPY, a)
    if order == "C" and not a.flags.c_contiguous or order == "F" and not a.flags.f_contiguous:
        return rec.call(COPY, a, order=order)
    return a


def _array(rec, object, dtype=None, *, copy=True, order="K", subok=False, ndmin=0):  # noqa: A002
    if ndmin > object.ndim:
        rec.refuse("np.array(..., ndmin=...)", hint="use x.reshape or x[None, ...]")
    if not copy:
        return _asarray(rec, object, dtype, order=None if order in ("K", "A") else order)
    if dtype is not None and np.dtype(dtype) != object.dtype:
        return rec.call(ASTYPE, object, dtype=np.dtype(dtype), order=order)
    return rec.call(COPY, object, order=order)


def _ascontiguousarray(rec, a, dtype=None):
    a = _asarray(rec, a, dtype)
    if a.ndim == 0:  # NumPy returns at least one dimension
        return rec.call(RESHAPE, rec.call(COPY, a, order="C"), shape=(1,))
    return a if a.flags.c_contiguous else rec.call(COPY, a, order="C")


def _copyto(rec, dst, src, casting="same_kind", where=True):
    if where is not True:
        rec.refuse(
            "np.copyto(..., where=...)",
            "compute np.where(mask, src, dst) and assign it with dst[...] = ...",
        )
    # Python scalars (and traced Python floats) are weak: they take the destination's kind (NEP 50).
    if isinstance(src, (bool, int, float, complex)):
        src_dtype = np.result_type(dst.dtype, src)
    elif getattr(getattr(src, "meta", None), "weak", False):
        src_dtype = np.result_type(dst.dtype, dtype_probe(src.meta))
    else:
        src_dtype = src.dtype if hasattr(src, "dtype") else np.asarray(src).dtype
    if not np.can_cast(src_dtype, dst.dtype, casting):
        raise TypeError(
            f"Cannot cast array data from {src_dtype!r} to {dst.dtype!r} according to the rule "
            f"{casting!r}"
        )
    dst[...] = src


def _fill_diagonal(rec, a, val, wrap=False):
    """``np.fill_diagonal``: ``val`` written at ``a[i, i, ...]`` for ``i`` below the shortest
    axis (NumPy's flat positions ``0, m + 1, ...``), an index-array write; refused where
    NumPy's flat write goes on otherwise: ``wrap`` down a tall matrix, a ``val`` of another
    length than the diagonal's (NumPy repeats it)."""
    if a.ndim < 2:
        raise ValueError("array must be at least 2-d")
    rows, columns = a.shape[0], a.shape[1]
    if a.ndim > 2:
        if not all(decide("==", size, rows, "np.fill_diagonal's sizes") for size in a.shape):
            raise ValueError("All dimensions of input must be of equal length")
        length = rows
    elif decide("<=", rows, columns, "np.fill_diagonal's shortest axis"):
        length = rows
    else:
        if wrap:
            rec.refuse("np.fill_diagonal(..., wrap=True) of a matrix taller than wide")
        length = columns
    values = np.asarray(val) if not isinstance(val, TracedArray) else val
    if values.ndim and not (
        decide("==", values.size, 1, "np.fill_diagonal's values")
        or decide("==", values.size, length, "np.fill_diagonal's values")
    ):
        rec.refuse("np.fill_diagonal with values of another length than the diagonal's")
    if isinstance(val, TracedArray) and val.ndim:
        val = val.reshape(-1)
    diagonal = rec.call(ARANGE, start=0, stop=length, step=1, dtype=np.dtype(np.intp))
    a[(diagonal,) * a.ndim] = val


def _diff(rec, a, n=1, axis=-1):
    if a.ndim == 0:
        raise ValueError("diff requires input that is at least one dimensional")
    if n < 0:
        raise ValueError(f"order must be non-negative but got {n!r}")
    for _ in range(n):
        axis_ = axis % a.ndim
        upper = (slice(None),) * axis_ + (slice(1, None),)
        lower = (slice(None),) * axis_ + (slice(None, -1),)
        a = np.not_equal(a[upper], a[lower]) if a.dtype == bool else a[upper] - a[lower]
    return a


def _flip(rec, m, axis=None):
    axes = normalize_axes(axis, m.ndim)
    return m[tuple(slice(None, None, -1) if i in axes else slice(None) for i in range(m.ndim))]


def _roll(rec, a, shift, axis=None):
    """``np.roll``: along each axis, the elements at ``(arange(n) - shift) % n`` (a gather, so
    a shift the loop index or the data give needs no Python int); of a shift and size known
    now, two slices joined. Without an axis, of the flattened array, reshaped back. Shifts are
    ints as NumPy takes them (``int(shift)``); one past int64 is refused."""
    if axis is None:
        return _roll(rec, a.reshape(-1), shift, 0).reshape(a.shape)
    shifts = list(shift) if isinstance(shift, (tuple, list)) else [shift]
    axes = list(axis) if isinstance(axis, (tuple, list)) else [axis]
    shifts = shifts * len(axes) if len(shifts) == 1 else shifts  # (NumPy broadcasts them)
    axes = axes * len(shifts) if len(axes) == 1 else axes
    if len(shifts) != len(axes):
        raise ValueError("shape mismatch: objects cannot be broadcast to a single shape")
    rolled = a
    for by, along in zip(shifts, axes):
        rolled = _roll_along(rec, rolled, _roll_shift(rec, by), normalize_axes(along, a.ndim)[0])
    result = np.empty_like(a)  # (NumPy's: its layout follows the array's)
    result[...] = rolled
    return result


def _triangle(upper: bool) -> Callable:
    """``np.triu``/``np.tril``: the elements of the last two axes on and above (below) the
    ``k``-th diagonal, zeros of the array's dtype elsewhere (of a 1-d array, its rows repeated
    as NumPy does): ``np.where`` of a mask of positions, as NumPy computes them, so the mask
    fuses with what reads the result (nbody's energy: ``np.sum(np.triu(..., 1))``)."""

    def triangle(rec, m, k=0):
        rows, cols = (m.shape[-2], m.shape[-1]) if m.ndim >= 2 else (m.shape[-1], m.shape[-1])
        offsets = np.arange(cols) - np.arange(rows).reshape(-1, 1)
        k = int(k) if isinstance(k, SymInt) else k  # (``x.shape[0] - 3``: specialised, guarded)
        keep = offsets >= k if upper else offsets <= k
        return np.where(keep, m, np.zeros(1, m.dtype))

    return triangle


def _meshgrid(rec, xi=(), copy=True, sparse=False, indexing="xy"):
    """``np.meshgrid`` as NumPy computes it: each input raveled along an axis of its own (the
    first two swapped for ``"xy"``), broadcast to one shape unless ``sparse``, copied when
    ``copy``: views of the inputs, which fuse with what reads them."""
    if indexing not in ("xy", "ij"):
        raise ValueError("Valid values for `indexing` are 'xy' and 'ij'.")
    ndim = len(xi)
    axes = list(range(ndim))
    if indexing == "xy" and ndim > 1:
        axes[0], axes[1] = 1, 0
    output, full = [], [1] * ndim
    for x, axis in zip(xi, axes):
        shape = [1] * ndim
        shape[axis] = -1
        array = x if isinstance(x, TracedArray) else np.asarray(x)
        output.append(array.reshape(shape))
        full[axis] = output[-1].shape[axis]
    if not sparse:
        output = [np.broadcast_to(x, tuple(full)) for x in output]
    if copy:
        return tuple(x.copy() for x in output)
    return output if sparse else tuple(output)  # (NumPy's: a list of the sparse views)


def _roll_shift(rec, shift):
    """A shift of ``np.roll`` as an int (a traced one as int64), refused past int64 (a
    position less the shift must not wrap) or as a traced array of shifts."""
    if isinstance(shift, TracedArray):
        if shift.ndim:
            rec.refuse("np.roll by a traced array of shifts")
        return shift if shift.dtype == np.int64 else shift.astype(np.int64)
    if hasattr(shift, "expr"):  # (a size or a loop index)
        return shift
    shift = int(shift)
    if abs(shift) >= 2**62:
        rec.refuse("np.roll by a shift past int64")
    return shift


def _roll_along(rec, a, shift, axis: int):
    """``a`` rolled by ``shift`` (an int, a size or a traced int64) along ``axis``."""
    n = a.shape[axis]
    before = (slice(None),) * axis
    if isinstance(n, int) and n == 0:
        return a
    if isinstance(n, int) and isinstance(shift, int):
        cut = n - shift % n
    elif isinstance(shift, int) and _within_axis(n, shift):
        cut = n - shift if shift >= 0 else -shift  # (n - shift % n, the shift within the axis)
    else:
        cut = None
    if cut is not None:
        return np.concatenate(
            [a[(*before, slice(cut, None))], a[(*before, slice(None, cut))]], axis
        )
    positions = rec.call(ARANGE, start=0, stop=n, step=1, dtype=np.dtype(np.int64))
    return a[(*before, (positions - shift) % n)]


def _within_axis(n: Any, shift: int) -> bool:
    """Whether an int ``shift`` is shorter than ``n``, a symbolic size (a guard when no proof):
    the roll is then two slices joined, which fuse, where a gather along another axis than the
    first is a library call in loops."""
    size = getattr(n, "expr", n)
    return not data_sizes_in(size) and decide(">", size, abs(shift), "np.roll's shift")


def _flip_along(axis: int, least: int) -> Callable:
    """``np.flipud`` (axis 0) and ``np.fliplr`` (axis 1): views of at least ``least`` axes."""

    def decompose(rec, m):
        if m.ndim < least:
            raise ValueError(f"Input must be >= {least}-d.")
        return _flip(rec, m, axis)

    return decompose


def _rot90(rec, m, k=1, axes=(0, 1)):
    """``np.rot90``: a view of ``m`` turned ``k`` quarter turns in the plane of ``axes``, as
    NumPy builds it from ``flip`` and ``transpose``."""
    axes = tuple(axes)
    if len(axes) != 2 or m.ndim < 2:
        raise ValueError("len(axes) must be 2." if len(axes) != 2 else "Axes must be different.")
    first, second = (normalize_axes(a, m.ndim)[0] for a in axes)
    if first == second:
        raise ValueError("Axes must be different.")
    k %= 4
    if k == 0:
        return m[...]
    if k == 2:
        return _flip(rec, _flip(rec, m, first), second)
    order = list(range(m.ndim))
    order[first], order[second] = order[second], order[first]
    if k == 1:
        return np.transpose(_flip(rec, m, second), order)
    return _flip(rec, np.transpose(m, order), second)


def _at_least(ndim: int) -> Callable:
    """``np.atleast_1d``/``2d``/``3d``: each array as a view with new axes of length 1 (a
    vector becomes a row, and for 3-D a row of one column: NumPy's placements)."""
    places = {1: {0: (None,)}, 2: {0: (None, None), 1: (None, slice(None))},
              3: {0: (None, None, None), 1: (None, slice(None), None),
                  2: (slice(None), slice(None), None)}}[ndim]  # fmt: skip

    def at_least(rec, arys=()):
        arrays = [a if hasattr(a, "meta") else np.asanyarray(a) for a in arys]
        made = tuple(a[places[a.ndim]] if a.ndim < ndim else a for a in arrays)
        return made[0] if len(made) == 1 else made

    return at_least


def _several(made: Any) -> tuple:
    """``np.atleast_*``'s result as a tuple (one array alone is not one)."""
    return made if isinstance(made, tuple) else (made,)


def _joined(arrays: tuple, axis: int, dtype: Any, casting: str) -> Any:
    """``np.concatenate(arrays, axis, dtype=dtype, casting=casting)``: NumPy's shape errors
    first (a join nothing reads), then its casting rule."""
    if dtype is not None or casting != "same_kind":
        np.concatenate(arrays, axis=axis)
    return np.concatenate(_cast_all(arrays, dtype, casting), axis=axis)


def _cast_all(arrays: tuple, dtype: Any, casting: str) -> tuple:
    """``arrays`` in ``dtype`` (None: the one NumPy joins them in), NumPy's ``casting`` rule
    checked."""
    if dtype is None and casting == "same_kind":
        return arrays
    target = np.result_type(*(a.dtype for a in arrays)) if dtype is None else np.dtype(dtype)
    for a in arrays:
        if not np.can_cast(a.dtype, target, casting):
            raise TypeError(
                f"Cannot cast array data from {a.dtype!r} to {dtype!r} according to the rule "
                f"{casting!r}"
            )
    return arrays if dtype is None else tuple(a.astype(target) for a in arrays)


def _append(rec, arr, values, axis=None):
    """``np.append``: ``values`` joined to ``arr`` along ``axis``; without one, both flattened
    (each made an array first, as NumPy does: a Python int is an int64 array)."""
    arr, values = _an_array(rec, arr), _an_array(rec, values)
    if axis is None:
        arr, values = np.ravel(arr), np.ravel(values)
        axis = 0
    return np.concatenate((arr, values), axis=axis)


def _an_array(rec, value: Any) -> Any:
    """``np.asanyarray(value)`` of a traced value, a list or tuple holding some, a size, or
    anything else (a NumPy array then): a Python scalar's array is strong, as NumPy's."""
    if isinstance(value, (list, tuple)) and any(isinstance(v, SymInt) for v in value):
        value = [rec.symint_value(v.expr) if isinstance(v, SymInt) else v for v in value]
    if isinstance(value, (list, tuple)) and holds_traced(value):
        return rec.sequence_as_array(value)
    if isinstance(value, SymInt):
        value = rec.symint_value(value.expr)
    if not isinstance(value, TracedArray):
        return np.asanyarray(value)
    if value.meta.weak:
        value = rec.call(ASTYPE, value, dtype=value.dtype)
    return _asarray(rec, value)


def _vstack(rec, tup, dtype=None, casting="same_kind"):
    """``np.vstack``: the arrays as rows (at least 2-d) joined along the first axis."""
    return _joined(_several(_at_least(2)(rec, arys=tuple(tup))), 0, dtype, casting)


def _hstack(rec, tup, dtype=None, casting="same_kind"):
    """``np.hstack``: the arrays (at least 1-d) joined along the first axis of vectors, else
    the second."""
    arrays = _several(_at_least(1)(rec, arys=tuple(tup)))
    return _joined(arrays, 0 if arrays and arrays[0].ndim == 1 else 1, dtype, casting)


def _block(rec, arrays):
    """``np.block``: nested lists of arrays, the innermost lists joined along the last axis,
    each list around them along the axis before; arrays given new leading axes up to the
    nesting depth. NumPy's own errors for the nesting (tuples, empty lists, uneven depths),
    found on stand-ins of one element."""
    np.block(_stand_ins(arrays))
    if not isinstance(arrays, list):  # (a bare array: NumPy's copy of it)
        return arrays.copy() if hasattr(arrays, "meta") else np.array(arrays)
    depth, leaf = 0, arrays
    while isinstance(leaf, list):
        depth, leaf = depth + 1, leaf[0]
    ndim = max(depth, *(a.ndim for a in _block_leaves(arrays)))

    def joined(item, level: int):
        if not isinstance(item, list):
            a = item if hasattr(item, "meta") else np.asanyarray(item)
            return a[(None,) * (ndim - a.ndim)] if a.ndim < ndim else a
        return np.concatenate([joined(part, level + 1) for part in item], axis=level - depth)

    return joined(arrays, 0)


def _stand_ins(item: Any) -> Any:
    """A nesting of lists (and tuples) like ``item``'s, each array a one-element array of its
    number of axes."""
    if isinstance(item, (list, tuple)):
        return type(item)(_stand_ins(part) for part in item)
    return np.zeros((1,) * np.ndim(item) if not hasattr(item, "meta") else (1,) * item.ndim)


def _block_leaves(item: Any) -> list:
    """The arrays (and numbers) of ``np.block``'s nesting, as arrays or traced values."""
    if isinstance(item, list):
        return [leaf for part in item for leaf in _block_leaves(part)]
    return [item if hasattr(item, "meta") else np.asanyarray(item)]


def _array_split(rec, ary, indices_or_sections, axis=0, equal=False):
    """``np.array_split`` (``np.split`` when ``equal``): views of ``ary`` cut along ``axis``
    at the given indices (slicing's clamping and negative indices, as NumPy's), or into
    sections, the first ``n % sections`` one longer; NumPy's errors."""
    ary = ary if hasattr(ary, "meta") else np.asanyarray(ary)
    n = ary.shape[axis]
    axis = axis + ary.ndim if axis < 0 else axis
    try:
        sections = operator.index(indices_or_sections)
    except TypeError:
        cuts = list(indices_or_sections)
    else:
        if sections <= 0:
            raise ValueError("number sections must be larger than 0.")
        if equal and n % sections:
            raise ValueError("array split does not result in an equal division")
        size, extras = n // sections, n % sections
        cuts = [k * size + builtins.min(k, extras) for k in range(1, sections)]
    bounds = [0, *cuts, None]
    lead = (slice(None),) * axis
    return [ary[(*lead, slice(a, b))] for a, b in zip(bounds[:-1], bounds[1:])]


def _split(rec, ary, indices_or_sections, axis=0):
    """``np.split``: ``np.array_split`` whose sections must be equal."""
    return _array_split(rec, ary, indices_or_sections, axis, equal=True)


def _split_along(name: str, least: int, axis_of: Callable) -> Callable:
    """``np.hsplit``/``vsplit``/``dsplit``: ``np.split`` along the axis ``axis_of(ndim)`` of
    an array of at least ``least`` axes (NumPy's error below)."""

    def split(rec, ary, indices_or_sections):
        ndim = np.ndim(ary) if not hasattr(ary, "meta") else ary.ndim
        if ndim < least:
            raise ValueError(f"{name} only works on arrays of {least} or more dimensions")
        return _split(rec, ary, indices_or_sections, axis_of(ndim))

    return split


def _column_stack(rec, tup):
    """``np.column_stack``: vectors (and scalars) as columns, joined along the second axis."""
    columns = []
    for a in tup:
        a = a if hasattr(a, "meta") else np.asanyarray(a)
        columns.append(a[:, None] if a.ndim == 1 else a[None, None] if a.ndim == 0 else a)
    return np.concatenate(columns, axis=1)


def _real(rec, val):
    return val.real  # the traced array's property: the array itself unless it is complex


def _imag(rec, val):
    return val.imag


def _angle(rec, z, deg=False):
    """NumPy's own definition: ``arctan2(z.imag, z.real)`` (``arctan2(0, z)`` of a real ``z``)."""
    angle = np.arctan2(z.imag, z.real) if z.dtype.kind == "c" else np.arctan2(0, z)
    # (NumPy multiplies in place: the same rounding, and the same dtype for a float32 angle)
    return angle * (180 / np.pi) if deg else angle


def _cov(
    rec, m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None, *, dtype=None
):
    """``np.cov`` of an array of variables (and ``y``'s, rows after them), as NumPy computes
    it: the rows centred on their means, their product with the conjugate transpose times
    ``1 / (N - ddof)``, squeezed."""
    if fweights is not None or aweights is not None:
        rec.refuse("np.cov with fweights= or aweights=")
    given = [m] if y is None else [m, y if isinstance(y, TracedArray) else np.asarray(y)]
    for name, value in zip("my", given):
        if value.ndim > 2:
            raise ValueError(f"{name} has more than 2 dimensions")
    if dtype is None:
        dtype = np.result_type(*(v.dtype for v in given), np.float64)
    x = _variables(given[0], rowvar, np.dtype(dtype))
    if y is not None:
        x = np.concatenate((x, _variables(given[1], rowvar, np.dtype(dtype))), axis=0)
    ddof = (0 if bias else 1) if ddof is None else ddof
    fact = x.shape[1] - ddof
    if not fact > 0:
        rec.refuse("np.cov with no more observations than ddof (NumPy warns and divides by 0)")
    # Of variables laid out as columns (F-ordered rows), their means over axis 0 of the
    # transpose: NumPy adds each one's terms in memory order, as a leading axis's reduction
    # of a C-ordered array does (loops/columns.py).
    columns = x.ndim == 2 and x.meta.layout == "F"
    means = np.mean(x.T, axis=0) if columns else np.mean(x, axis=1)
    x = x - means[:, None]
    c = x @ (x.T.conj() if x.dtype.kind == "c" else x.T)
    return (c * (1.0 / fact)).squeeze()


def _variables(a: Any, rowvar: bool, dtype: np.dtype) -> Any:
    """``a``'s variables as rows of ``dtype`` (NumPy's ``array(a, ndmin=2)``, transposed
    when ``rowvar`` is false and it has more than one row)."""
    x = (a if a.ndim == 2 else a[None, :]).astype(dtype)
    return x.T if not rowvar and x.shape[0] != 1 else x


def _corrcoef(rec, x, y=None, rowvar=True, *, dtype=None):
    """``np.corrcoef``: the covariance over the outer product of the standard deviations, the
    real part clipped to [-1, 1], as NumPy computes it."""
    c = _cov(rec, x, y, rowvar, dtype=dtype)
    if c.ndim == 0:
        return c / c  # (NumPy's answer for a single variable: 1, or nan)
    stddev = np.sqrt(np.diag(c).real)
    c = c / stddev[:, None] / stddev[None, :]
    if c.dtype.kind == "c":
        return np.clip(c.real, -1, 1) + 1j * np.clip(c.imag, -1, 1)
    return np.clip(c, -1, 1)


def _sizes(x: Any) -> tuple:
    """The shape of a traced array as sizes (ints or expressions), or of a concrete array."""
    meta = getattr(x, "meta", None)
    return tuple(meta.shape) if meta is not None else tuple(x.shape)


def _einsum(rec, operands=(), optimize=False, **kwargs):
    """``np.einsum``: a matrix product as ``matmul`` of transposed operands (``ir/einsum.py``),
    any other contraction as a broadcast product summed (``contractions.py``)."""
    defaults = (("dtype", None), ("order", "K"), ("casting", "safe"))
    if any(kwargs.get(key, default) != default for key, default in defaults):
        rec.refuse("np.einsum(..., dtype=/order=/casting=...)", hint="cast the operands first")
    if not operands or not isinstance(operands[0], str):
        rec.refuse("np.einsum without its subscripts as a string", hint="write it with @")
    subscripts, arrays = operands[0], operands[1:]
    if not all(hasattr(x, "shape") and hasattr(x, "dtype") for x in arrays):
        rec.refuse("np.einsum of a Python scalar", hint="multiply by the scalar instead")
    product = _as_matmul(subscripts, *arrays) if len(arrays) == 2 else None
    return product if product is not None else contraction(rec, subscripts, arrays)


def _as_matmul(subscripts: str, a, b):
    """A two-operand einsum as ``matmul`` when it is a matrix product of matmul's dtype and
    einsum's memory order; else None."""
    plan = matmul_plan(subscripts, _sizes(a), _sizes(b))
    eager = eager_result(subscripts, (a, b)) if isinstance(plan, MatmulPlan) else None
    if eager is None or isinstance(eager, str):
        return None
    probes = [np.ones((1,) * x.ndim, x.dtype) for x in (a, b)]
    if eager[0] != _quiet(np.matmul, *probes).dtype:
        return None
    left = a if plan.a_axes == tuple(range(a.ndim)) else np.transpose(a, plan.a_axes)
    right = b if plan.b_axes == tuple(range(b.ndim)) else np.transpose(b, plan.b_axes)
    if eager[1] == "F":  # (a @ b) laid out as the transpose of b.T @ a.T
        if left.ndim != 2 or right.ndim != 2:
            return None
        return np.matmul(right.T, left.T).T
    result = np.matmul(
        left[..., None, :] if plan.a_row_added else left,
        right[..., None] if plan.b_column_added else right,
    )
    if plan.b_column_added:
        result = result[..., 0]
    if plan.a_row_added:
        result = result[..., 0] if plan.b_column_added else result[..., 0, :]
    return result


def _linspace(rec, start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, **kw):
    """``np.linspace`` with traced bounds (constant ones are the ``linspace`` op), computed as NumPy computes it: ``arange`` times the
    step (or, where the step underflows to 0, over the divisor times the span), plus the start,
    the last element set to ``stop``."""
    bounds = [b for b in (start, stop) if isinstance(b, TracedArray)]
    if kw or not bounds or any(b.ndim for b in bounds) or axis not in (0, -1):
        rec.refuse("np.linspace with array bounds, axis= or device=")
    size = getattr(num, "expr", num)  # (a SymInt's expression: the decisions are on sizes)
    if not decide(">=", size, 0, "np.linspace's num"):
        raise ValueError(f"Number of samples, {hint(size)}, must be non-negative.")
    kind = np.result_type(*(b.dtype if isinstance(b, TracedArray) else b for b in (start, stop)))
    dt = kind if kind.kind in "fc" else np.dtype(np.float64)
    div = (num - 1) if endpoint else num
    delta = np.subtract(stop, start, dtype=dt)
    y = rec.call(ARANGE, start=0, stop=num, step=1, dtype=dt)
    if data_sizes_in(size):  # (no decision on a length the data decide)
        y, step = _linspace_of_data_length(y, num, div, delta, start, stop, dt, endpoint)
    elif decide(">", size - 1 if endpoint else size, 0, "np.linspace's num"):
        step = delta / div
        y = np.add(np.where(step == 0, y / div * delta, y * step).astype(dt), start, dtype=dt)
    else:
        step, y = np.nan, np.add((y * delta).astype(dt), start, dtype=dt)
    if endpoint and not data_sizes_in(size) and decide(">", size, 1, "np.linspace's num"):
        y[-1] = stop
    if dtype is not None and np.issubdtype(dtype, np.integer):
        y = np.floor(y)
    y = y if dtype is None else y.astype(dtype)
    return (y, step) if retstep else y


def _linspace_of_data_length(y, num, div, delta, start, stop, dt, endpoint) -> tuple:
    """``(values, step)`` of ``np.linspace`` for a ``num`` the data decide (``y``: its
    ``arange``), NumPy's for every ``num`` without deciding on it: the step over a divisor of at
    least 1 (a step for ``num > 1``, NaN below: a NumPy float, where NumPy's is Python's
    ``nan``), the last element ``stop`` when ``num > 1``."""
    divisor = np.maximum(div, 1)
    step = delta / divisor
    positive = div > 0
    values = np.where(positive, np.where(step == 0, y / divisor * delta, y * step), y * delta)
    values = np.add(values.astype(dt), start, dtype=dt)
    if endpoint:
        values = np.where((y == div) & positive, stop, values).astype(dt)
    return values, np.where(positive, step, np.nan)[()]


DECOMPOSITIONS: dict[Callable, Decomposition] = {
    np.einsum: Decomposition(_einsum),
    np.divmod: Decomposition(_divmod),
    np.clip: Decomposition(_clip),
    np.isclose: Decomposition(_isclose),
    np.allclose: Decomposition(_allclose),
    np.zeros_like: Decomposition(_like(ZEROS)),
    np.ones_like: Decomposition(_like(ONES)),
    np.empty_like: Decomposition(_empty_like),
    np.full_like: Decomposition(_full_like),
    np.identity: Decomposition(_identity, patch=True, size_first=True),
    np.asarray: Decomposition(_asarray, patch=True),
    np.asanyarray: Decomposition(_asarray, patch=True),
    np.array: Decomposition(_array, patch=True),
    np.ascontiguousarray: Decomposition(_ascontiguousarray, patch=True),
    np.copyto: Decomposition(_copyto),
    np.fill_diagonal: Decomposition(_fill_diagonal),
    np.diff: Decomposition(_diff),
    np.flip: Decomposition(_flip),
    np.rot90: Decomposition(_rot90),
    np.roll: Decomposition(_roll),
    np.meshgrid: Decomposition(_meshgrid),
    np.triu: Decomposition(_triangle(upper=True)),
    np.tril: Decomposition(_triangle(upper=False)),
    np.flipud: Decomposition(_flip_along(0, 1)),
    np.fliplr: Decomposition(_flip_along(1, 2)),
    np.atleast_1d: Decomposition(_at_least(1)),
    np.atleast_2d: Decomposition(_at_least(2)),
    np.atleast_3d: Decomposition(_at_least(3)),
    np.vstack: Decomposition(_vstack),
    np.append: Decomposition(_append, patch=True),
    np.block: Decomposition(_block),
    np.array_split: Decomposition(_array_split),
    np.split: Decomposition(_split),
    np.hsplit: Decomposition(_split_along("hsplit", 1, lambda ndim: 1 if ndim > 1 else 0)),
    np.vsplit: Decomposition(_split_along("vsplit", 2, lambda ndim: 0)),
    np.dsplit: Decomposition(_split_along("dsplit", 3, lambda ndim: 2)),
    np.hstack: Decomposition(_hstack),
    np.column_stack: Decomposition(_column_stack),
    np.real: Decomposition(_real),
    np.imag: Decomposition(_imag),
    np.angle: Decomposition(_angle),
    np.linalg.norm: Decomposition(_norm),
    np.cov: Decomposition(_cov),
    np.corrcoef: Decomposition(_corrcoef),
    np.linspace: Decomposition(_linspace),
    np.fft.fftfreq: Decomposition(_fftfreq, patch=True, size_first=True),
    np.fft.rfftfreq: Decomposition(_rfftfreq, patch=True, size_first=True),
    np.shape: Decomposition(_shape),
    np.ndim: Decomposition(_ndim),
    np.size: Decomposition(_size),
    np.count_nonzero: Decomposition(_count_nonzero),
}


def _quiet(fn: Callable, *args, **kwargs):
    """Run a probe without NumPy's floating-point and deprecation chatter."""
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)


def _hinted(shape: tuple) -> tuple:
    """A shape as the ints it has at the traced sizes (for NumPy's error messages)."""
    return tuple(hint(s) for s in shape)
