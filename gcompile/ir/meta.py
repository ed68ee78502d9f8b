"""TensorMeta (shape, dtype, layout) and the dtype/broadcast rules built on NumPy's own.

Every value in a graph carries a ``TensorMeta``. Output metas are derived from
input metas by each op's ``infer`` rule (``ir/ops.py``); the helpers here let
those rules ask NumPy itself for dtype promotion (so NEP 50 weak scalars,
integer rules and casting are NumPy's exactly) without touching real data:

* ``dtype_probe`` gives a size-0 stand-in of a value, or a Python scalar for a
  weak value, on which a ufunc resolves its loop at no cost;
* ``broadcast_shapes`` is NumPy's broadcasting rule on sizes that may be symbolic.

Views (their shapes, strides and layouts) are ``ir/layout.py``'s.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from .shape_env import decide, hint
from .symbolic import Expr, is_expr

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
        shape: tuple of sizes: ints, or expressions of the trace's symbolic sizes
            (``ir/symbolic.py``; printed ``f64[s0-1,s1]``).
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
        object.__setattr__(self, "shape", tuple(_size(s) for s in self.shape))
        object.__setattr__(self, "dtype", np.dtype(self.dtype))

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int | Expr:
        """The number of elements: an int, or an expression of the symbolic sizes."""
        total = 1
        for s in self.shape:
            total = total * s
        return total

    @property
    def nbytes(self) -> int | Expr:
        return self.size * self.dtype.itemsize

    @property
    def symbolic(self) -> bool:
        """Whether a size is an expression (not known until the call)."""
        return any(is_expr(s) for s in self.shape)

    def map_sizes(self, fn) -> "TensorMeta":
        """This meta with every symbolic size ``s`` replaced by ``fn(s)``."""
        if not self.symbolic:
            return self
        return replace(self, shape=tuple(fn(s) if is_expr(s) else s for s in self.shape))

    def short(self) -> str:
        """Printed form: ``f32[64,128]``; weak Python scalars print as ``float``/``int``/``bool``."""
        if self.weak:
            return _WEAK_NAMES[self.dtype.kind]
        return f"{dtype_abbrev(self.dtype)}[{','.join(str(s) for s in self.shape)}]"

    def __str__(self) -> str:
        return self.short()


def _size(value: Any) -> int | Expr:
    if is_expr(value):
        return value
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"a size must be an int or a symbolic size, got {value!r}")
    return int(value)


@dataclass(frozen=True)
class TupleMeta:
    """Meta of a value made of several arrays (a fused kernel with several outputs)."""

    items: tuple

    def short(self) -> str:
        return "(" + ", ".join(item.short() for item in self.items) + ")"

    @property
    def nbytes(self) -> int | Expr:
        return sum(item.nbytes for item in self.items)

    def map_sizes(self, fn) -> "TupleMeta":
        """This meta with every symbolic size of its items replaced by ``fn(size)``."""
        return TupleMeta(tuple(item.map_sizes(fn) for item in self.items))

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


# the zero of each kind as a Python scalar
WEAK_ZERO = {"b": False, "i": 0, "u": 0, "f": 0.0, "c": 0j}


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
        return WEAK_ZERO[x.dtype.kind]
    if x.scalar:
        return x.dtype.type(0)
    if zero_d:
        return np.zeros((), x.dtype)
    return np.empty((0,), x.dtype)


def broadcast_shapes(*shapes: tuple) -> tuple:
    """NumPy's broadcast of ``shapes`` (sizes ints or symbolic); ValueError when they do not
    broadcast. A symbolic size that may be 1, or two that may differ, are decided by the active
    trace (``shape_env.decide``: proved, or guarded at the traced sizes)."""
    ndim = max((len(shape) for shape in shapes), default=0)
    result = []
    for axis in range(ndim):
        sizes = [
            shape[axis - ndim + len(shape)] for shape in shapes if axis - ndim + len(shape) >= 0
        ]
        result.append(_broadcast_axis(sizes, shapes))
    return tuple(result)


def _broadcast_axis(sizes: list, shapes: tuple) -> Any:
    """The broadcast of one axis's ``sizes``: sizes that are the same expression need no
    decision (the common case: operands sliced alike)."""
    distinct = list(dict.fromkeys(s for s in sizes if is_expr(s) or s != 1))
    if len(distinct) <= 1:
        return distinct[0] if distinct else 1
    out = 1
    for size in distinct:
        if _is_one(size):
            continue
        if _is_one(out):
            out = size
        elif not decide("==", size, out, "broadcasting"):
            shown = " ".join(str(tuple(hint(s) for s in shape)) for shape in shapes)
            raise ValueError(f"operands could not be broadcast together with shapes {shown}")
    return out


def _is_one(size: Any) -> bool:
    if is_expr(size):
        return decide("==", size, 1, "broadcasting (a size that may be 1)")
    return size == 1


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


# Arguments whose every use changes them: a trace sees a stand-in, and a statement drawing from
# one runs in Python (``frontend/random_states.py``).
RANDOM_STATE_TYPES = (np.random.Generator, np.random.RandomState)


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
