"""Strided views with symbolic sizes: what each view op does to shape, strides and offset.

A ``Strided`` describes an array as a view of a *root* array's memory, counted in elements of
the root: element ``(i0, i1, ...)`` lies ``offset + i0*strides[0] + i1*strides[1] + ...``
elements after the root's first element. Sizes, strides and offset are ints or expressions of
the trace's symbolic sizes (``ir/symbolic.py``).

``of_meta`` gives a value's own memory: C or F strides from its shape. A meta of layout ``"A"``
promises no order: C strides stand in for its unknown ones and the Strided is marked inexact,
so every view of it is ``"A"`` too (NumPy answers the same on such a stand-in).

Each view op of the table (``ir/ops.py``, ``OpDef.strided``) is a rule ``(Strided, **params)
-> Strided`` here, or ``None`` for a reshape NumPy must copy. Shape inference derives a view's
meta from it (shape, layout) and the code generator derives a kernel's index maps from the
same rules, so the two cannot disagree. Questions about symbolic sizes (is this slice empty,
is this stride the contiguous one) go through ``shape_env.decide``, which proves them or
guards them; NumPy's own errors (out-of-bounds index, bad axis) are raised with its messages.

Limits: contiguity is judged as for a non-empty array (NumPy calls every empty array
contiguous); a reshape of a strided view follows NumPy's no-copy algorithm, deciding its size
comparisons like any other.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from .meta import TensorMeta, normalize_axes
from .shape_env import decide, decide_in_loops, hint
from .symbolic import is_expr, is_int, product_of, prove_lt, prove_nonnegative, sym_max, sym_min


@dataclass(frozen=True)
class Strided:
    """A view of a root's memory (see the module docstring); ``exact`` False when the root's
    strides are unknown (C strides assumed)."""

    shape: tuple
    strides: tuple
    offset: object = 0
    exact: bool = True

    @property
    def ndim(self) -> int:
        return len(self.shape)


def c_strides(shape: tuple) -> tuple:
    """Element strides of a C-ordered array of ``shape``."""
    strides, step = [], 1
    for size in reversed(shape):
        strides.append(step)
        step = step * size
    return tuple(reversed(strides))


def f_strides(shape: tuple) -> tuple:
    """Element strides of a Fortran-ordered array of ``shape``."""
    return tuple(reversed(c_strides(tuple(reversed(shape)))))


def of_meta(meta: TensorMeta) -> Strided:
    """The memory of a value with ``meta``, as a view of itself."""
    if meta.layout == "F":
        return Strided(meta.shape, f_strides(meta.shape))
    return Strided(meta.shape, c_strides(meta.shape), 0, exact=meta.layout == "C")


def _is_one(size) -> bool:
    """Whether a size is 1 (a symbolic size may be: decided, guarded if need be)."""
    return size == 1 if not is_expr(size) else decide("==", size, 1, "size-1 axis")


def _matches(view: Strided, expected: tuple) -> bool:
    """Whether ``view``'s strides are ``expected`` wherever the size is not 1.

    A symbolic size that may be 1 counts as not 1: the answer is then "no promise", which holds
    either way, and needs no guard."""
    for size, stride, want in zip(view.shape, view.strides, expected):
        if stride == want or (not is_expr(size) and size == 1):
            continue
        if not decide("==", stride, want, "memory layout"):
            return False
    return True


def disjoint(a: Strided, b: Strided) -> bool:
    """Whether two views of one memory provably touch no common element: their address
    ranges (of non-negative strides) do not meet."""
    spans = []
    for view in (a, b):
        if not all(_nonnegative(s) for s in view.strides):
            return False
        last = view.offset
        for size, stride in zip(view.shape, view.strides):
            last = last + (size - 1) * stride
        spans.append((view.offset, last))
    (a_first, a_last), (b_first, b_last) = spans
    return prove_lt(a_last, b_first) is True or prove_lt(b_last, a_first) is True


def _nonnegative(value) -> bool:
    return value >= 0 if not is_expr(value) else prove_nonnegative(value) is True


def layout(view: Strided) -> str:
    """``"C"``, ``"F"`` or ``"A"`` for a view: C when both hold (1-D, at most one element)."""
    if view.ndim == 0:
        return "C"
    if not view.exact:
        small = all(not is_expr(s) and s <= 1 for s in view.shape)
        return "C" if small else "A"
    if _matches(view, c_strides(view.shape)):
        return "C"
    if _matches(view, f_strides(view.shape)):
        return "F"
    return "A"


def meta_of(view: Strided, base: TensorMeta, writeable: bool | None = None) -> TensorMeta:
    """The meta of ``view``, a view of a value with meta ``base``."""
    access = base.writeable if writeable is None else writeable
    return TensorMeta(view.shape, base.dtype, layout(view), writeable=access)


# -- axis rearrangements: NumPy's own axis rules, read off a stand-in ------------------------------


def _axis_origins(fn, ndim: int, **params) -> list:
    """Per output axis of ``fn(array of ndim axes, **params)``: the input axis it is, or None
    for a new axis. Asked of NumPy on a data-free stand-in whose strides name the axes, so
    NumPy's argument checks and errors are its own."""
    base = np.zeros(1)
    strides = tuple(8 * (axis + 1) for axis in range(ndim))
    probe = np.lib.stride_tricks.as_strided(base, (2,) * ndim, strides, writeable=False)
    result = fn(probe, **params)
    return [
        None if size == 1 else stride // 8 - 1 for size, stride in zip(result.shape, result.strides)
    ]


def rearranged(fn):
    """The rule of a view op that only reorders axes or adds size-1 ones (``np.transpose``,
    ``np.swapaxes``, ``np.moveaxis``, ``np.expand_dims``)."""

    def rule(view: Strided, **params) -> Strided:
        origins = _axis_origins(fn, view.ndim, **params)
        shape = tuple(1 if k is None else view.shape[k] for k in origins)
        strides = tuple(0 if k is None else view.strides[k] for k in origins)
        return replace(view, shape=shape, strides=strides)

    return rule


def squeeze(view: Strided, axis=None) -> Strided:
    """``np.squeeze``: drop the given size-1 axes (all of them when ``axis`` is None)."""
    if axis is None:
        keep = [k for k, size in enumerate(view.shape) if not _is_one(size)]
    else:
        axes = normalize_axes(axis, view.ndim)
        for k in axes:
            if not _is_one(view.shape[k]):
                raise ValueError(
                    "cannot select an axis to squeeze out which has size not equal to one"
                )
        keep = [k for k in range(view.ndim) if k not in axes]
    return replace(
        view,
        shape=tuple(view.shape[k] for k in keep),
        strides=tuple(view.strides[k] for k in keep),
    )


def broadcast_to(view: Strided, shape) -> Strided:
    """``np.broadcast_to``: new leading axes and size-1 axes read with stride 0."""
    shape = (shape,) if not isinstance(shape, (tuple, list)) else tuple(shape)
    for size in shape:
        if (is_expr(size) and not decide(">=", size, 0, "broadcast_to size")) or (
            not is_expr(size) and size < 0
        ):
            raise ValueError("all elements of broadcast shape must be non-negative")
    lead = len(shape) - view.ndim
    if lead < 0:
        raise ValueError("input operand has more dimensions than allowed by the axis remapping")
    strides = [0] * lead
    for size, target, stride in zip(view.shape, shape[lead:], view.strides):
        if size is target or decide("==", size, target, "broadcasting"):
            strides.append(stride)
        elif _is_one(size):
            strides.append(0)
        else:
            shown = tuple(hint(s) for s in view.shape), tuple(hint(s) for s in shape)
            raise ValueError(
                "operands could not be broadcast together with remapped shapes "
                f"[original->remapped]: {shown[0]} and requested shape {shown[1]}"
            )
    return replace(view, shape=tuple(shape), strides=tuple(strides))


def sliding_window(view: Strided, window_shape, axis=None) -> Strided:
    """``np.lib.stride_tricks.sliding_window_view``: each windowed axis shortened by its
    window less one, and an axis per window after the others, read with that axis's stride;
    NumPy's errors."""
    windows = tuple(window_shape) if isinstance(window_shape, (tuple, list)) else (window_shape,)
    if axis is None:
        axes = tuple(range(view.ndim))
        if len(windows) != view.ndim:
            raise ValueError(
                "Since axis is `None`, must provide window_shape for all dimensions of `x`; "
                f"got {len(windows)} window_shape elements and `x.ndim` is {view.ndim}."
            )
    else:
        axes = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
        if len(windows) != len(axes):
            raise ValueError(
                "Must provide matching length window_shape and axis; got "
                f"{len(windows)} window_shape elements and {len(axes)} axes elements."
            )
        if any(not -view.ndim <= a < view.ndim for a in axes):
            raise np.exceptions.AxisError(f"axis out of bounds for array of dimension {view.ndim}")
        axes = tuple(a % view.ndim for a in axes)
    if any(w < 0 for w in windows):
        raise ValueError("`window_shape` cannot contain negative values")
    shape = list(view.shape)
    for a, window in zip(axes, windows):
        if not decide(">=", shape[a], window, "a sliding window"):
            raise ValueError("window shape cannot be larger than input array shape")
        shape[a] = shape[a] - window + 1
    strides = view.strides + tuple(view.strides[a] for a in axes)
    return replace(view, shape=tuple(shape) + windows, strides=strides)


# -- indexing -------------------------------------------------------------------------------------


def without_trailing_slices(index: Any, ndim: int) -> Any:
    """``a[idx, :]`` as ``a[idx]`` (the same selection): an index whose integer array or list
    (advanced indexing) is followed by full slices only, without them; any other as given."""
    if not isinstance(index, tuple) or not 1 < len(index) <= ndim:
        return index
    end = len(index)
    while end > 1 and _full_slice(index[end - 1]):
        end -= 1
    kept = index[:end]
    advanced = any(isinstance(i, list) or getattr(i, "ndim", 0) > 0 for i in kept)
    masks = any(_boolean(i) for i in kept)  # (a mask of k axes counts k: NumPy's errors)
    if end == len(index) or not advanced or masks or any(i is None or i is Ellipsis for i in kept):
        return index
    return kept if len(kept) > 1 else kept[0]


def _boolean(item: Any) -> bool:
    """Whether an index item is a boolean mask (an array of booleans, or a list holding one)."""
    if isinstance(item, list):
        return any(_boolean(i) or isinstance(i, (bool, np.bool_)) for i in item)
    dtype = getattr(item, "dtype", None)
    return dtype is not None and np.dtype(dtype) == np.bool_


def _full_slice(item: Any) -> bool:
    """Whether ``item`` is ``:`` (its bounds compared by identity: a size's ``==`` traces)."""
    return (
        isinstance(item, slice) and item.start is None and item.stop is None and (item.step is None)
    )


def expanded_index(index: tuple, ndim: int) -> tuple:
    """``index`` with its Ellipsis replaced by full slices (NumPy's errors for bad indices)."""
    ellipses = sum(1 for item in index if item is Ellipsis)
    if ellipses > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    consumed = sum(1 for item in index if item is not None and item is not Ellipsis)
    if consumed > ndim:
        raise IndexError(
            f"too many indices for array: array is {ndim}-dimensional, but {consumed} were indexed"
        )
    fill = (slice(None),) * (ndim - consumed)
    if not ellipses:
        return tuple(index) + fill
    at = next(i for i, item in enumerate(index) if item is Ellipsis)  # (not ==: traced items)
    return tuple(index[:at]) + fill + tuple(index[at + 1 :])


def _position(item, size, axis: int):
    """The element an int index ``item`` picks on an axis of ``size`` (IndexError if none)."""
    negative = item < 0 if not is_expr(item) else not decide(">=", item, 0, "index sign")
    position = size + item if negative else item
    inside = decide(">=", position, 0, "index bounds") and decide(
        "<", position, size, "index bounds"
    )
    if not inside:
        raise IndexError(
            f"index {hint(item)} is out of bounds for axis {axis} with size {hint(size)}"
        )
    return position


def _negative(value) -> bool:
    return value < 0 if not is_expr(value) else not decide(">=", value, 0, "slice bound sign")


def _clamped(bound, size, default, low, high):
    """One bound of Python's ``slice.indices``: negative counts from the end, then clamped."""
    if bound is None:
        return default
    if _negative(bound):
        return _tightened(sym_max, bound + size, low)
    return _tightened(sym_min, bound, high)


def _tightened(extreme, value, limit):
    """``extreme(value, limit)``; in a loop body, ``value`` itself when that holds on every
    trip (``A[i, :i]`` has ``i`` elements, not ``min(i, n)``: guarded on the sizes)."""
    relation = "<=" if extreme is sym_min else ">="
    if decide_in_loops(relation, value, limit, "a slice bound inside the axis") is True:
        return value
    return extreme(value, limit)


def slice_indices(size, item: slice) -> tuple:
    """``(first, length, step)`` of ``item`` on an axis of ``size`` (NumPy's clamping)."""
    step = 1 if item.step is None else item.step
    if is_expr(step):
        raise TypeError("a slice step must be a Python int, not a symbolic size")
    if step == 0:
        raise ValueError("slice step cannot be zero")
    if step > 0:
        first = _clamped(item.start, size, 0, 0, size)
        stop = _clamped(item.stop, size, size, 0, size)
        # (a start of at least 0 counts unclamped: past the end the count is 0 either way, and
        # x[1:-1] of a length the data decide has max(u0-2,0) elements, as x[0:-2] has)
        counted = item.start if is_int(item.start) and item.start >= 0 else first
        return first, _tightened(sym_max, (stop - counted + step - 1) // step, 0), step
    first = _clamped(item.start, size, size - 1, -1, size - 1)
    stop = _clamped(item.stop, size, -1, -1, size - 1)
    return first, _tightened(sym_max, (first - stop - step - 1) // -step, 0), step


def getitem(view: Strided, index: tuple) -> Strided:
    """Basic indexing (ints, slices, None, Ellipsis) of ``view``."""
    shape, strides, offset, axis = [], [], view.offset, 0
    for item in expanded_index(index, view.ndim):
        if item is None:
            shape.append(1)
            strides.append(0)
            continue
        size, stride = view.shape[axis], view.strides[axis]
        if isinstance(item, slice):
            first, length, step = slice_indices(size, item)
            shape.append(length)
            strides.append(stride * step)
            offset = offset + first * stride
        else:
            offset = offset + _position(item, size, axis) * stride
        axis += 1
    return replace(view, shape=tuple(shape), strides=tuple(strides), offset=offset)


# -- reshape ------------------------------------------------------------------------------------------


def _exact_quotient(total, known):
    """``total / known`` for NumPy's ``-1``: exact as polynomials, or by a guarded division."""
    from .symbolic import exact_divide

    quotient = exact_divide(total, known) if is_expr(total) or is_expr(known) else None
    if quotient is not None:
        return quotient
    if is_expr(known):
        known = hint(known) if decide("==", known, hint(known), "reshape with -1") else known
    if known == 0:
        return None
    if decide("==", total % known, 0, "reshape with -1"):
        return total // known
    return None


def new_shape(size, shape) -> tuple:
    """NumPy's target shape of a reshape of ``size`` elements (``-1`` resolved)."""
    shape = (shape,) if not isinstance(shape, (tuple, list)) else tuple(shape)
    unknown = [k for k, s in enumerate(shape) if not is_expr(s) and s == -1]
    if len(unknown) > 1:
        raise ValueError("can only specify one unknown dimension")
    if any(not is_expr(s) and s < -1 for s in shape):
        raise ValueError("negative dimensions not allowed")
    known = product_of(s for k, s in enumerate(shape) if k not in unknown)
    if unknown:
        quotient = _exact_quotient(size, known)
        if quotient is None:
            raise ValueError(
                f"cannot reshape array of size {hint(size)} into shape "
                f"{tuple(hint(s) for s in shape)}"
            )
        shape = shape[: unknown[0]] + (quotient,) + shape[unknown[0] + 1 :]
    elif not decide("==", product_of(shape), size, "reshape size"):
        raise ValueError(
            f"cannot reshape array of size {hint(size)} into shape {tuple(hint(s) for s in shape)}"
        )
    return tuple(shape)


def reshape(view: Strided, shape) -> Strided | None:
    """``np.reshape`` in C order: the view, or None when NumPy must copy."""
    size = product_of(view.shape)
    target = new_shape(size, shape)
    if not view.exact or size == 0 or layout(view) == "C":  # (NumPy: an empty array is contiguous)
        return replace(view, shape=target, strides=c_strides(target))
    strides = _nocopy_strides(view, target)
    if strides is None:
        return None
    return replace(view, shape=target, strides=strides)


def _nocopy_strides(view: Strided, target: tuple) -> tuple | None:
    """NumPy's ``_attempt_nocopy_reshape`` (C order): the strides of ``target`` over ``view``'s
    memory, grouping axes whose sizes multiply to the same count, or None."""
    old = [(s, st) for s, st in zip(view.shape, view.strides) if not _is_one(s)]
    new_strides = [0] * len(target)
    oi = ni = 0
    while ni < len(target) and oi < len(old):
        oj, nj = oi + 1, ni + 1
        new_count, old_count = target[ni], old[oi][0]
        while not decide("==", new_count, old_count, "reshape of a strided view"):
            if nj == len(target) or oj == len(old):
                return None  # (only an empty array gets here; it is copied)
            if decide("<", new_count, old_count, "reshape of a strided view"):
                new_count, nj = new_count * target[nj], nj + 1
            else:
                old_count, oj = old_count * old[oj][0], oj + 1
        for k in range(oi, oj - 1):
            if not decide(
                "==", old[k][1], old[k + 1][0] * old[k + 1][1], "reshape of a strided view"
            ):
                return None
        new_strides[nj - 1] = old[oj - 1][1]
        for k in range(nj - 1, ni, -1):
            new_strides[k - 1] = new_strides[k] * target[k]
        ni, oi = nj, oj
    return tuple(new_strides)


def ravel(view: Strided) -> Strided | None:
    """``np.ravel`` (C order): a view when the memory is C-contiguous, else None (a copy)."""
    if view.exact and layout(view) == "C":
        return reshape(view, (-1,))
    return None
