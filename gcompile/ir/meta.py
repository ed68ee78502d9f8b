"""TensorMeta (shape, dtype, layout) and the dtype/broadcast rules built on NumPy's own.

Every value in a graph carries a ``TensorMeta``. Output metas are derived from
input metas by each op's ``infer`` rule (``ir/ops.py``); the helpers here let
those rules ask NumPy itself for dtype promotion (so NEP 50 weak scalars,
integer rules and casting are NumPy's exactly) without touching real data:

* ``dtype_probe`` gives a size-0 stand-in of a value, or a Python scalar for a
  weak value, on which a ufunc resolves its loop at no cost;
* ``view_probe`` gives a stand-in with the real shape and strides but a
  one-element buffer, on which view operations (which never read data) report
  the result's shape, strides, contiguity and writeability.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

_WEAK_NAMES = {"b": "bool", "i": "int", "u": "int", "f": "float", "c": "complex"}


def dtype_abbrev(dtype: np.dtype) -> str:
    """Short dtype name used in printed graphs: ``f32``, ``i64``, ``u8``, ``c128``, ``bool``."""
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return "bool"
    if dtype.kind in "iufc":
        return f"{dtype.kind}{dtype.itemsize * 8}"
    return str(dtype)


@dataclass(frozen=True)
class TensorMeta:
    """What the compiler knows about a value: shape, dtype and memory layout.

    Attributes:
        shape: tuple of sizes (Python ints today; symbolic sizes may appear later).
        dtype: NumPy dtype.
        layout: ``"C"`` (row-major contiguous), ``"F"`` (column-major contiguous)
            or ``"A"`` (no contiguity promised: a strided view, or a result whose
            order NumPy's stride heuristics choose).
        weak: a Python scalar (``float``, ``complex``, ``bool``), which takes part
            in dtype promotion as a NEP 50 *weak* type.
        scalar: an immutable scalar (a Python scalar or a NumPy scalar such as
            ``np.float64``) rather than an array; augmented assignment rebinds it
            instead of writing memory.
        writeable: the value's memory may be written (False for read-only
            arguments and ``broadcast_to`` views).
    """

    shape: tuple
    dtype: np.dtype
    layout: str = "C"
    weak: bool = False
    scalar: bool = False
    writeable: bool = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "shape", tuple(int(s) for s in self.shape))
        object.__setattr__(self, "dtype", np.dtype(self.dtype))

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    def short(self) -> str:
        """Printed form: ``f32[64,128]``; weak Python scalars print as ``float``/``int``/``bool``."""
        if self.weak:
            return _WEAK_NAMES[self.dtype.kind]
        return f"{dtype_abbrev(self.dtype)}[{','.join(str(s) for s in self.shape)}]"

    def __str__(self) -> str:
        return self.short()


@dataclass(frozen=True)
class TupleMeta:
    """Meta of a value made of several arrays (a fused kernel with several outputs)."""

    items: tuple

    def short(self) -> str:
        return "(" + ", ".join(item.short() for item in self.items) + ")"

    @property
    def nbytes(self) -> int:
        return sum(item.nbytes for item in self.items)

    weak = False
    scalar = False

    def __str__(self) -> str:
        return self.short()


def layout_of(array: np.ndarray) -> str:
    """``"C"``, ``"F"`` or ``"A"`` for a real array, preferring ``"C"`` when both hold."""
    if array.flags.c_contiguous:
        return "C"
    if array.flags.f_contiguous:
        return "F"
    return "A"


def meta_of(value: Any) -> TensorMeta:
    """TensorMeta of a concrete value: ndarray, NumPy scalar, or Python scalar (weak)."""
    if isinstance(value, np.ndarray):
        return TensorMeta(
            value.shape, value.dtype, layout_of(value), writeable=value.flags.writeable
        )
    if isinstance(value, np.generic):
        return TensorMeta((), value.dtype, scalar=True, writeable=False)
    if isinstance(value, (bool, int, float, complex)):
        return TensorMeta((), weak_dtype(value), weak=True, scalar=True, writeable=False)
    raise TypeError(f"no TensorMeta for a value of type {type(value).__name__}")


def weak_dtype(value: bool | int | float | complex) -> np.dtype:
    """The dtype NumPy gives a Python scalar when it stands alone."""
    if isinstance(value, bool):
        return np.dtype(bool)
    if isinstance(value, int):
        return np.dtype(np.int64)
    if isinstance(value, float):
        return np.dtype(np.float64)
    return np.dtype(np.complex128)


_WEAK_ZERO = {"b": False, "i": 0, "u": 0, "f": 0.0, "c": 0j}


def dtype_probe(x: Any, zero_d: bool = False) -> Any:
    """A data-free stand-in of ``x`` for asking NumPy a result dtype.

    A weak meta becomes a Python scalar of its kind, a NumPy-scalar meta a NumPy
    scalar, any other meta a size-0 array (or a 0-d array with ``zero_d``, used
    when the result is 0-d and NumPy's choice between scalar and 0-d array
    matters). Literals pass through unchanged, so value-dependent NEP 50 rules
    (``uint8 + 300`` overflows) behave as in NumPy.
    """
    if not isinstance(x, TensorMeta):
        return x
    if x.weak:
        return _WEAK_ZERO[x.dtype.kind]
    if x.scalar:
        return x.dtype.type(0)
    if zero_d:
        return np.zeros((), x.dtype)
    return np.empty((0,), x.dtype)


def contiguous_strides(shape: tuple, itemsize: int, order: str) -> tuple:
    """Strides of a freshly allocated array of ``shape`` in ``order`` ``"C"`` or ``"F"``."""
    strides = []
    step = itemsize
    dims = reversed(shape) if order == "C" else shape
    for size in dims:
        strides.append(step)
        step *= max(int(size), 1)
    return tuple(reversed(strides)) if order == "C" else tuple(strides)


def view_probe(meta: TensorMeta) -> np.ndarray:
    """An array with ``meta``'s shape and strides over a one-element buffer.

    Only for operations that never read or write data (views, reshapes with
    ``copy=False``, basic indexing ending in ``...``): the result's shape,
    strides and flags are NumPy's own. A layout-``"A"`` meta gets C strides; the
    caller must treat the result's layout as ``"A"``.
    """
    order = "F" if meta.layout == "F" else "C"
    strides = contiguous_strides(meta.shape, meta.dtype.itemsize, order)
    if meta.size == 0:
        strides = (0,) * meta.ndim
    base = np.zeros(1, meta.dtype)
    probe = np.lib.stride_tricks.as_strided(base, meta.shape, strides, writeable=meta.writeable)
    return probe


def meta_of_view(result: np.ndarray, base: TensorMeta, scalar: bool = False) -> TensorMeta:
    """Meta of a view computed on ``view_probe(base)``."""
    layout = layout_of(result)
    if base.layout == "A" and result.size > 1:
        layout = "A"
    return TensorMeta(
        result.shape, result.dtype, layout, scalar=scalar, writeable=result.flags.writeable
    )


def broadcast_shapes(*shapes: tuple) -> tuple:
    """NumPy's broadcast of ``shapes``; raises NumPy's ValueError when they do not broadcast."""
    return tuple(np.broadcast_shapes(*shapes))


def normalize_axes(axis: Any, ndim: int) -> tuple:
    """Axis argument (None, int or tuple, negatives allowed) as sorted non-negative ints."""
    if axis is None or ndim == 0:  # NumPy reductions accept axis 0 and -1 on 0-d input
        return tuple(range(ndim))
    axes = axis if isinstance(axis, tuple) else (axis,)
    out = []
    for a in axes:
        if not -ndim <= a < ndim:
            raise np.exceptions.AxisError(a, ndim)
        out.append(a % ndim)
    if len(set(out)) != len(out):
        raise ValueError("duplicate value in 'axis'")
    return tuple(sorted(out))


def unsupported_dtype_reason(dtype: np.dtype) -> str | None:
    """Why gcompile cannot compile arrays of ``dtype``, or None when it can."""
    dtype = np.dtype(dtype)
    if dtype.fields is not None or dtype.kind == "V":
        return f"structured dtype {dtype}"
    if dtype.kind == "O":
        return "object dtype"
    if dtype.kind in "SUT":
        return f"string dtype {dtype}"
    if dtype.kind in "mM":
        return f"datetime dtype {dtype}"
    if not dtype.isnative:
        return (
            f"non-native byte order dtype {dtype.str} (use arr.astype(arr.dtype.newbyteorder('='))"
        )
    if dtype.kind not in "biufc":
        return f"dtype {dtype}"
    return None
