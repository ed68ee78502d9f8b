"""Inference rules of the op table: each op's result meta (shape, dtype, layout, weakness)
from its operands' metas and parameters, and the NumPy implementations they share with the
table (``getitem_impl``, ``concatenate_impl``, ...).

Dtypes are NumPy's: a rule asks NumPy on data-free stand-ins (``meta.dtype_probe``) or tiny
probes. Shapes may hold symbolic sizes: the rules compute them symbolically, views through their
``strided`` rule (``layout.py``), and questions NumPy would answer from the sizes go through
``shape_env.decide`` (proved, or guarded at the traced sizes). ``ops.py`` names a rule per op.
"""

from __future__ import annotations

import warnings
from typing import Any, Callable

import numpy as np

from . import layout
from .meta import TensorMeta, broadcast_shapes, dtype_probe, meta_of, normalize_axes
from .shape_env import DataSizeError, SymbolicError, active, decide, hint
from .symbolic import is_expr, product_of, prove_le, sym_max


def _quiet(fn: Callable, *args, **kwargs):
    """Run a probe without NumPy's floating-point and deprecation chatter."""
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)


def _is_weak(x: Any) -> bool:
    if isinstance(x, TensorMeta):
        return x.weak
    # np.float64 subclasses float (and np.complex128 complex) but is a strong NumPy scalar
    return isinstance(x, (bool, int, float, complex)) and not isinstance(x, np.generic)


def elementwise_infer(impl: Callable) -> Callable:
    """Broadcast the operand shapes; ask NumPy for the dtype on size-0 stand-ins.

    When every operand is weak (Python scalars), the result is weak too: that is
    Python arithmetic (``dt * 2.0`` stays a Python float), which the tracer only
    records for Python operators; so is an op whose operands all became Python
    literals (an unrolled loop's carried float).
    """

    def infer(*xs: Any, **params: Any) -> TensorMeta:
        env, key = active(), _operands_key(xs, params)
        if env is None or key is None:
            return derive(*xs, **params)
        return env.remembered((impl, *key), lambda: derive(*xs, **params))

    def derive(*xs: Any, **params: Any) -> TensorMeta:
        metas = [x for x in xs if isinstance(x, TensorMeta)]
        shape = broadcast_shapes(
            *(
                np.shape(x) if not isinstance(x, TensorMeta) else x.shape
                for x in xs
                if x is not None
            )
        )
        zero_d = len(shape) == 0
        out = _quiet(impl, *(dtype_probe(x, zero_d) for x in xs), **params)
        weak = all(_is_weak(x) for x in xs if x is not None)
        layout = _fresh_layout(metas, len(shape))
        scalar = weak or (zero_d and isinstance(out, np.generic))
        return TensorMeta(shape, np.asarray(out).dtype, layout, weak=weak, scalar=scalar)

    return infer


def _fresh_layout(metas: list, ndim: int) -> str:
    """Layout of a new array NumPy computes from ``metas`` in its default order ``"K"``.

    ``"C"`` or ``"F"`` only when certain; ``"A"`` (no promise) when operands of
    mixed or strided layouts leave it to NumPy's stride heuristics. Operands with
    at most one non-trivial dimension do not influence the order.
    """
    if ndim <= 1 or all(m.layout == "C" for m in metas):
        return "C"  # (whichever operands count, all are C: no size needs deciding)
    ordered = [
        m
        for m in metas
        if _more_than_one(m.size)
        and not (m.ndim == ndim and sum(_more_than_one(s) for s in m.shape) <= 1)
    ]
    if all(m.layout == "C" for m in ordered):
        return "C"
    if all(m.layout == "F" and m.ndim == ndim for m in ordered):
        return "F"
    return "A"


def _more_than_one(size) -> bool:
    """Whether an operand counts for the result's order. A symbolic size that may be 0 or 1
    counts: that can only weaken the promise (``"A"``), never make a wrong one, so it needs no
    guard."""
    if not is_expr(size):
        return size > 1
    return prove_le(size, 1) is not True


def ordered_layout(x: TensorMeta, order: str, ndim: int) -> str:
    """Layout of a copy of ``x`` made in ``order`` (``"K"`` keeps ``x``'s order)."""
    if order in ("C", "F"):
        return order if ndim > 1 else "C"
    return _fresh_layout([x], ndim)


def _reduced_shape(shape: tuple, axis: Any, keepdims: bool) -> tuple:
    axes = normalize_axes(axis, len(shape))
    if keepdims:
        return tuple(1 if i in axes else s for i, s in enumerate(shape))
    return tuple(s for i, s in enumerate(shape) if i not in axes)


def cumulative_shape(shape: tuple, axis: Any, keepdims: bool) -> tuple:
    """A scan's shape: its operand's, flattened without an axis (a 0-d one's: one element)."""
    return (product_of(shape),) if axis is None or not shape else tuple(shape)


def _small_probe(x: TensorMeta) -> Any:
    """Size-1 stand-in with ``x``'s ndim (for dtype and scalar-ness of reductions)."""
    if x.weak:
        return dtype_probe(x)
    if x.scalar:
        return x.dtype.type(1)
    return np.ones((1,) * x.ndim, x.dtype)


def _empty_reduction(impl: Callable, x: TensorMeta, params: dict) -> bool:
    """Whether ``x`` is empty. In a loop body whose trips differ on that (``A[i, :i]``), a
    reduction that NumPy runs on empty input alike (a sum: its identity) is treated as not
    empty; one that raises there (``max``) cannot be captured. An array of a length the data
    decide is taken as not empty: the tracer adds NumPy's error as a ``check``
    (``Tracer.empty_reduction_check``)."""
    try:
        return decide("==", x.size, 0, "an empty reduction")
    except DataSizeError:  # (a length the data decide: the tracer checks it when it runs)
        return False
    except SymbolicError:
        try:
            _quiet(impl, np.empty((0,) * x.ndim, x.dtype), **params)
        except Exception:
            raise SymbolicError(
                f"{impl.__name__} of an array that is empty on some trips"
            ) from None
        return False


def reduction_infer(impl: Callable, shape_rule: Callable = _reduced_shape) -> Callable:
    """Shape from ``shape_rule``; dtype, scalar-ness and axis errors from NumPy on a size-1 probe.

    A size-0 input is run for real (it costs nothing), so NumPy's own errors for
    empty reductions without identity (``max``, ``argmin``) come out unchanged.
    """

    def infer(x: TensorMeta, **params: Any) -> TensorMeta:
        if _empty_reduction(impl, x, params):
            shape = tuple(hint(s) for s in x.shape)  # (a symbolic size guarded to be 0 is 0)
            out = _quiet(impl, np.empty(shape, x.dtype), **params)
            return TensorMeta(np.shape(out), out.dtype, scalar=isinstance(out, np.generic))
        out = _quiet(impl, _small_probe(x), **params)
        shape = shape_rule(x.shape, params.get("axis"), params.get("keepdims", False))
        layout = "C" if len(shape) <= 1 or x.layout == "C" else "A"
        return TensorMeta(shape, out.dtype, layout, scalar=isinstance(out, np.generic))

    return infer


def view_infer(rule: Callable) -> Callable:
    """A view's meta from its ``strided`` rule (``ir/layout.py``): shape and layout, no data."""

    def infer(x: TensorMeta, **params: Any) -> TensorMeta:
        return layout.meta_of(rule(layout.of_meta(x), **params), x)

    return infer


def sliding_window_infer(x: TensorMeta, window_shape: Any, axis: Any = None) -> TensorMeta:
    """``sliding_window_view`` is a read-only view (windows overlap)."""
    windows = layout.sliding_window(layout.of_meta(x), window_shape, axis)
    return layout.meta_of(windows, x, writeable=False)


def broadcast_to_infer(x: TensorMeta, shape: Any) -> TensorMeta:
    """``broadcast_to`` is a read-only view."""
    return layout.meta_of(layout.broadcast_to(layout.of_meta(x), shape), x, writeable=False)


def reshape_infer(x: TensorMeta, shape: Any) -> TensorMeta:
    view = layout.reshape(layout.of_meta(x), shape)
    if view is None:  # NumPy copies: a new C array
        return TensorMeta(layout.new_shape(x.size, shape), x.dtype, "C")
    return layout.meta_of(view, x)


def ravel_infer(x: TensorMeta) -> TensorMeta:
    view = layout.ravel(layout.of_meta(x))
    if view is None:
        return TensorMeta((x.size,), x.dtype, "C")
    return layout.meta_of(view, x)


def getitem_impl(x: np.ndarray, index: tuple) -> Any:
    return x[index]


def _reads_element(x: TensorMeta, index: tuple) -> bool:
    """Whether ``x[index]`` reads one element (every axis an int, no Ellipsis, no None)."""
    return all(
        i is not Ellipsis and i is not None and not isinstance(i, slice) for i in index
    ) and (len(index) == x.ndim)


def getitem_infer(x: TensorMeta, index: tuple) -> TensorMeta:
    env, key = active(), _index_key(index)
    if env is None or key is None:
        return _getitem_meta(x, index)
    return env.remembered(("getitem", x, key), lambda: _getitem_meta(x, index))


def _getitem_meta(x: TensorMeta, index: tuple) -> TensorMeta:
    view = layout.getitem(layout.of_meta(x), index)
    if _reads_element(x, index):
        return TensorMeta((), x.dtype, scalar=True, writeable=False)
    return layout.meta_of(view, x)


def _operands_key(xs: tuple, params: dict) -> tuple | None:
    """Operands and parameters as a key (each operand with its type: ``1`` is not ``1.0``);
    None when one is not hashable."""
    return _hashable((tuple((type(x), x) for x in xs), tuple(sorted(params.items()))))


def _index_key(index: tuple) -> tuple | None:
    """``index`` as a key (slices as their bounds, each item with its type: ``x[True]`` is not
    ``x[1]``); None when an item is not hashable."""
    return _hashable(
        tuple(
            (slice, i.start, i.stop, i.step) if isinstance(i, slice) else (type(i), i)
            for i in index
        )
    )


def _hashable(key: tuple) -> tuple | None:
    try:
        hash(key)
    except TypeError:
        return None
    return key


def setitem_impl(target: np.ndarray, value: Any, index: tuple) -> np.ndarray:
    target[index] = value
    return target


def setitem_infer(target: TensorMeta, value: Any, index: tuple) -> TensorMeta:
    if not target.writeable or target.scalar:
        raise ValueError("assignment destination is read-only")
    python_complex = isinstance(value, complex) or (
        isinstance(value, TensorMeta) and value.weak and value.dtype.kind == "c"
    )
    if python_complex and target.dtype.kind in "iuf":
        # Python converts the scalar with float()/int(), as NumPy does for a Python complex.
        raise TypeError(f"cannot assign a Python complex into an array of {target.dtype}")
    dest = getitem_infer(target, index).shape
    src = value.shape if isinstance(value, TensorMeta) else np.shape(value)
    _check_fits(tuple(src), tuple(dest))
    return target


def _check_fits(src: tuple, dest: tuple) -> None:
    """NumPy's rule for assigning a value of shape ``src`` into a region of shape ``dest``."""
    trimmed = src
    while len(trimmed) > len(dest) and not is_expr(trimmed[0]) and trimmed[0] == 1:
        trimmed = trimmed[1:]
    try:
        ok = len(trimmed) <= len(dest) and _same_shape(
            broadcast_shapes(dest, trimmed), dest, "assignment into a region"
        )
    except ValueError:
        ok = False
    if not ok:
        raise ValueError(
            f"could not broadcast input array from shape {_hinted(src)} into shape {_hinted(dest)}"
        )


def _hinted(shape: tuple) -> tuple:
    """A shape as the ints it has at the traced sizes (for NumPy's error messages)."""
    return tuple(hint(s) for s in shape)


def _matmul_shape(a: tuple, b: tuple, name: str = "matmul") -> tuple:
    if len(a) == 0 or len(b) == 0:
        raise ValueError(
            f"{name}: Input operand {0 if len(a) == 0 else 1} does not have enough dimensions"
        )
    a2 = (1,) + a if len(a) == 1 else a
    b2 = b + (1,) if len(b) == 1 else b
    if not decide("==", a2[-1], b2[-2], "matmul: the contracted sizes"):
        raise ValueError(
            f"{name}: Input operand 1 has a mismatch in its core dimension 0, with gufunc signature "
            f"(n?,k),(k,m?)->(n?,m?) (size {hint(b2[-2])} is different from {hint(a2[-1])})"
        )
    rows = (a2[-2],) if len(a) > 1 else ()
    cols = (b2[-1],) if len(b) > 1 else ()
    return broadcast_shapes(a2[:-2], b2[:-2]) + rows + cols


def _probe_dtype(impl: Callable, *metas: TensorMeta, **params: Any) -> Any:
    return _quiet(impl, *(_small_probe(m) for m in metas), **params)


def matmul_infer(a: Any, b: Any, **params: Any) -> TensorMeta:
    a, b = _as_meta(a), _as_meta(b)
    shape = _matmul_shape(a.shape, b.shape)
    out = _probe_dtype(np.matmul, a, b, **params)
    return TensorMeta(shape, out.dtype, scalar=isinstance(out, np.generic))


def dot_infer(a: Any, b: Any) -> TensorMeta:
    a, b = _as_meta(a), _as_meta(b)
    if a.ndim == 0 or b.ndim == 0:
        shape = a.shape if b.ndim == 0 else b.shape
    else:
        inner = -1 if b.ndim == 1 else -2
        if not decide("==", a.shape[-1], b.shape[inner], "dot: the contracted sizes"):
            raise ValueError(
                f"shapes {_hinted(a.shape)} and {_hinted(b.shape)} not aligned: "
                f"{hint(a.shape[-1])} (dim {a.ndim - 1}) != {hint(b.shape[inner])} "
                f"(dim {b.ndim + inner})"
            )
        shape = a.shape[:-1] + (() if b.ndim == 1 else b.shape[:-2] + b.shape[-1:])
    out = _probe_dtype(np.dot, a, b)
    return TensorMeta(shape, out.dtype, scalar=isinstance(out, np.generic))


def outer_infer(a: Any, b: Any) -> TensorMeta:
    a, b = _as_meta(a), _as_meta(b)
    out = _probe_dtype(np.outer, a, b)
    return TensorMeta((a.size, b.size), out.dtype)


def trace_infer(
    a: TensorMeta, offset: int = 0, axis1: int = 0, axis2: int = 1, **params: Any
) -> TensorMeta:
    out = _probe_dtype(np.trace, a, offset=offset, axis1=axis1, axis2=axis2, **params)
    drop = {axis1 % a.ndim, axis2 % a.ndim}
    shape = tuple(s for i, s in enumerate(a.shape) if i not in drop)
    return TensorMeta(shape, out.dtype, scalar=isinstance(out, np.generic))


def concatenate_impl(*arrays: Any, axis: Any = 0) -> np.ndarray:
    """``np.concatenate``, C-ordered as the meta says (NumPy orders its result as its inputs
    are: Fortran for transposed ones, which a kernel reading it flat would misread)."""
    return np.ascontiguousarray(np.concatenate(arrays, axis=axis))


def concatenate_infer(*arrays: TensorMeta, axis: Any = 0) -> TensorMeta:
    probes = [
        np.empty((0,) * a.ndim, a.dtype) if isinstance(a, TensorMeta) else np.asarray(a)
        for a in arrays
    ]
    dtype = _quiet(np.concatenate, probes, axis=axis).dtype
    shapes = [a.shape if isinstance(a, TensorMeta) else np.shape(a) for a in arrays]
    if axis is None:
        return TensorMeta((sum(product_of(s) for s in shapes),), dtype)
    ax = axis % len(shapes[0])
    for i, s in enumerate(shapes[1:], start=1):
        for d in range(len(s)):
            if d != ax and not decide("==", s[d], shapes[0][d], "concatenate: the other sizes"):
                raise ValueError(
                    "all the input array dimensions except for the concatenation axis must "
                    f"match exactly, but along dimension {d}, the array at index 0 has size "
                    f"{hint(shapes[0][d])} and the array at index {i} has size {hint(s[d])}"
                )
    shape = list(shapes[0])
    shape[ax] = sum(s[ax] for s in shapes)
    return TensorMeta(tuple(shape), dtype)


def stack_impl(*arrays: Any, axis: int = 0) -> np.ndarray:
    """``np.stack``, C-ordered as the meta says (see ``concatenate_impl``)."""
    return np.ascontiguousarray(np.stack(arrays, axis=axis))


def stack_infer(*arrays: Any, axis: int = 0) -> TensorMeta:
    shapes = [a.shape if isinstance(a, TensorMeta) else np.shape(a) for a in arrays]
    if not all(_same_shape(s, shapes[0], "stack: the sizes") for s in shapes):
        raise ValueError("all input arrays must have the same shape")
    probes = [
        np.empty((0,) * len(shapes[0]), a.dtype) if isinstance(a, TensorMeta) else np.asarray(a)
        for a in arrays
    ]
    out = _quiet(np.stack, probes, axis=axis)
    ax = normalize_axes(axis, len(shapes[0]) + 1)[0]
    shape = shapes[0][:ax] + (len(arrays),) + shapes[0][ax:]
    return TensorMeta(shape, out.dtype)


def _same_shape(a: tuple, b: tuple, reason: str) -> bool:
    return len(a) == len(b) and all(decide("==", x, y, reason) for x, y in zip(a, b))


def _nonnegative_sizes(shape: tuple) -> None:
    """NumPy's check of a requested shape (symbolic sizes decided)."""
    for size in shape:
        if not decide(">=", size, 0, "a requested size"):
            raise ValueError("negative dimensions are not allowed")


def creation_infer(impl: Callable) -> Callable:
    """Allocation ops: run NumPy on the same arguments with the shape emptied, keep the real shape."""

    def infer(*fill: Any, shape: Any, dtype: Any = None, order: str = "C") -> TensorMeta:
        shape = (shape,) if not isinstance(shape, (tuple, list)) else tuple(shape)
        _nonnegative_sizes(shape)
        for value in fill:  # np.full broadcasts its fill value into the shape
            fill_shape = value.shape if isinstance(value, TensorMeta) else np.shape(value)
            _check_fits(tuple(fill_shape), shape)
        # Sizes clipped at 0 keep NumPy's own checks (dtype, order) without allocating.
        empty = (0,) * len(shape)
        probes = (dtype_probe(f, zero_d=True) for f in fill)
        out = _quiet(impl, *probes, shape=empty, dtype=dtype, order=order)
        return TensorMeta(shape, out.dtype, "F" if order == "F" and len(shape) > 1 else "C")

    return infer


def full_impl(fill_value: Any, shape: Any, dtype: Any = None, order: str = "C") -> np.ndarray:
    return np.full(shape, fill_value, dtype=dtype, order=order)


def arange_impl(
    start: Any = None,
    stop: Any = None,
    step: Any = None,
    dtype: Any = None,
    *,
    device=None,
    like=None,
) -> np.ndarray:
    """np.arange with its parameters named (NumPy's signature names only ``start_or_stop``)."""
    if start is None:
        start, stop = stop, None
    return np.arange(start, stop, step, dtype=dtype)


def _as_meta(x: Any) -> TensorMeta:
    """Operands given as literals (``np.dot(a, 3)``) as metas."""
    return x if isinstance(x, TensorMeta) else meta_of(x)


def eye_infer(
    N: int, M: Any = None, k: int = 0, dtype: Any = float, order: str = "C"
) -> TensorMeta:
    shape = (N, N if M is None else M)
    _nonnegative_sizes(shape)
    _quiet(np.eye, 0, 0, 0 if is_expr(k) else k, dtype)  # NumPy's argument checks
    return TensorMeta(shape, np.dtype(dtype), "F" if order == "F" else "C")


def run_infer(impl: Callable, length: Callable) -> Callable:
    """Creation ops whose length NumPy computes from values (``arange``, ``linspace``): run at
    the traced sizes for the dtype; a symbolic length comes from ``length(**params)``."""

    def infer(**params: Any) -> TensorMeta:
        out = _quiet(impl, **{k: hint(v) if is_expr(v) else v for k, v in params.items()})
        if not any(is_expr(v) for v in params.values()):
            return TensorMeta(out.shape, out.dtype)
        return TensorMeta((length(**params),), out.dtype)

    return infer


def arange_length(start=None, stop=None, step=None, dtype=None, **_: Any):
    """``len(np.arange(...))`` for int and symbolic bounds (a float bound is specialised)."""
    if start is None:
        start, stop = stop, None
    if stop is None:
        start, stop = 0, start
    step = 1 if step is None else step
    bounds = [start, stop, step]
    if is_expr(step) or any(
        not is_expr(b) and not isinstance(b, (int, np.integer)) for b in bounds
    ):
        env_hints = [hint(b) if is_expr(b) else b for b in bounds]
        for bound, value in zip(bounds, env_hints):
            if is_expr(bound):
                decide("==", bound, value, "np.arange with a symbolic and a float bound")
        return len(np.arange(*env_hints))
    if step > 0:
        return sym_max((stop - start + step - 1) // step, 0)
    return sym_max((start - stop - step - 1) // -step, 0)


def linspace_length(num=50, **_: Any):
    if not decide(">=", num, 0, "np.linspace's num"):
        raise ValueError(f"Number of samples, {hint(num)}, must be non-negative.")
    return num


def astype_impl(x: Any, dtype: Any, order: str = "K") -> Any:
    if isinstance(x, np.ndarray):
        return x.astype(dtype, order=order)
    if isinstance(x, np.generic):
        return x.astype(dtype)
    return np.dtype(dtype).type(x)


def astype_infer(x: TensorMeta, dtype: Any, order: str = "K") -> TensorMeta:
    x = x if isinstance(x, TensorMeta) else meta_of(x)  # a literal (a carried scalar, unrolled)
    return TensorMeta(x.shape, np.dtype(dtype), ordered_layout(x, order, x.ndim), scalar=x.scalar)


def copy_impl(x: Any, order: str = "K") -> np.ndarray:
    return np.copy(x, order=order)


def copy_infer(x: TensorMeta, order: str = "K") -> TensorMeta:
    """A copy is always a new array (of a scalar too: a 0-d array)."""
    return TensorMeta(x.shape, x.dtype, ordered_layout(x, order, x.ndim))
