"""The op table: the single source of truth for every operation gcompile supports.

One ``OpDef`` per op. The tracer maps NumPy callables to ops through
``OpDef.numpy`` (and ``reduces``/``accumulates`` for ufunc methods), installs
Python operators from ``OpDef.dunder``, the interpreter runs ``OpDef.impl``,
shape propagation and ``verify`` call ``OpDef.infer``. Nothing else keeps a list
of ops. Adding an op is one entry here plus its case in ``tests/ir/op_cases.py``
(a test fails for any op without one).

Semantics are NumPy's exactly because ``impl`` *is* NumPy and ``infer`` asks
NumPy for dtypes on data-free stand-ins (``meta.dtype_probe``). Shapes may hold
symbolic sizes: the rules compute them symbolically, views through their
``strided`` rule (``ir/layout.py``), and questions NumPy would answer from the
sizes go through ``shape_env.decide`` (proved, or guarded at the traced sizes).

Kinds: ``elementwise``, ``reduction``, ``matmul``, ``view``, ``shape``
(copies that rearrange data: ``concatenate``, ``stack``), ``creation``,
``scatter`` (writes into its first argument), ``opaque``.

``DECOMPOSITIONS`` lists NumPy callables that are supported by rewriting them
into table ops at trace time (``np.divmod`` -> ``floor_divide``, ``remainder``).
"""

from __future__ import annotations

import operator
import sys
import warnings
from dataclasses import dataclass, field, replace
from typing import Any, Callable, NamedTuple

import numpy as np

from . import layout
from .einsum import MatmulPlan, eager_result, matmul_plan
from .meta import TensorMeta, broadcast_shapes, dtype_probe, meta_of, normalize_axes
from .shape_env import SymbolicError, decide, hint
from .symbolic import is_expr, product_of, prove_le, sym_max

KINDS = ("elementwise", "reduction", "matmul", "view", "shape", "creation", "scatter", "opaque")


@dataclass(frozen=True, eq=False)
class OpDef:
    """One supported operation.

    Attributes:
        name: printed name and node-name prefix (``exp`` -> ``%exp_1``).
        kind: one of ``KINDS``.
        impl: the NumPy reference, called as ``impl(*args, **kwargs)`` of a node.
        infer: ``infer(*metas_or_literals, **kwargs) -> TensorMeta``.
        numpy: NumPy callables (ufuncs or functions) that the tracer maps here.
        operands: parameter names of those NumPy functions that are array
            operands (the rest are static parameters); ufuncs use positions.
        params: keyword parameters this op accepts (others are refused).
        dunder: Python operator installed on traced arrays (``add`` gives
            ``__add__``, ``__radd__`` and ``__iadd__``; unary ops only ``__neg__``...).
        reduces / accumulates: the ufunc whose ``.reduce`` / ``.accumulate`` is this op.
        commutative: swapping the operands changes no bit of the result for real dtypes
            (complex products round differently when swapped; CSE checks).
        identity: the ufunc's identity, the starting value of its reduction (``np.add.identity``);
            not a licence to drop operands (``x + 0`` is not ``x`` for -0.0).
        loop_reduction: a reduction a fused loop can compute (one accumulator per output).
        may_copy: a view op that copies when the input's strides do not allow a view
            (``reshape``, ``ravel`` of a strided array).
        mutates: the op writes into its first argument's memory (a side effect passes keep).
        binding: a callable whose signature maps NumPy calls to this op, when the NumPy
            function's own signature does not name its parameters (``np.arange``).
        strided: for a view op, its rule on memory layouts (``ir/layout.py``):
            ``strided(layout.Strided, **params) -> Strided`` (None: NumPy copies); shape
            inference and the code generator's index maps both come from it.
    """

    name: str
    kind: str
    impl: Callable
    infer: Callable
    numpy: tuple = ()
    operands: tuple = ()
    params: tuple = ()
    dunder: str | None = None
    reduces: Any = None
    accumulates: Any = None
    commutative: bool = False
    identity: Any = None
    mutates: bool = False
    loop_reduction: bool = False
    may_copy: bool = False
    binding: Callable | None = None
    strided: Callable | None = None
    doc: str = field(default="", repr=False)

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"op {self.name}: unknown kind {self.kind!r}")

    def __repr__(self) -> str:
        return f"<op {self.name}>"


def evaluate(op: "OpDef", args: tuple, kwargs: dict) -> Any:
    """Run ``op`` on concrete values, as eager mode would have computed it.

    An op with a Python operator (``OpDef.dunder``) applied to scalars only is Python or
    NumPy *scalar* arithmetic in eager mode (``dt ** 0.5``, ``x.sum() ** b``), which differs
    from the ufunc: Python raises ZeroDivisionError and returns complex powers, NumPy scalar
    ``**`` calls libm. Running the operator reproduces it; everything else runs ``impl``.
    """
    if op.dunder and not kwargs and args and all(_is_scalar_value(a) for a in args):
        return getattr(operator, f"__{op.dunder}__")(*args)
    return op.impl(*args, **kwargs)


def _is_scalar_value(value: Any) -> bool:
    return isinstance(value, (bool, int, float, complex, np.generic))


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


# ---------------------------------------------------------------------------------
# infer rules
# ---------------------------------------------------------------------------------


def _elementwise_infer(impl: Callable) -> Callable:
    """Broadcast the operand shapes; ask NumPy for the dtype on size-0 stand-ins.

    When every operand is weak (Python scalars), the result is weak too: that is
    Python arithmetic (``dt * 2.0`` stays a Python float), which the tracer only
    records for Python operators; so is an op whose operands all became Python
    literals (an unrolled loop's carried float).
    """

    def infer(*xs: Any, **params: Any) -> TensorMeta:
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


def _ordered_layout(x: TensorMeta, order: str, ndim: int) -> str:
    """Layout of a copy of ``x`` made in ``order`` (``"K"`` keeps ``x``'s order)."""
    if order in ("C", "F"):
        return order if ndim > 1 else "C"
    return _fresh_layout([x], ndim)


def _reduced_shape(shape: tuple, axis: Any, keepdims: bool) -> tuple:
    axes = normalize_axes(axis, len(shape))
    if keepdims:
        return tuple(1 if i in axes else s for i, s in enumerate(shape))
    return tuple(s for i, s in enumerate(shape) if i not in axes)


def _cumulative_shape(shape: tuple, axis: Any, keepdims: bool) -> tuple:
    return (product_of(shape),) if axis is None else tuple(shape)


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
    empty; one that raises there (``max``) cannot be captured."""
    try:
        return decide("==", x.size, 0, "an empty reduction")
    except SymbolicError:
        try:
            _quiet(impl, np.empty((0,) * x.ndim, x.dtype), **params)
        except Exception:
            raise SymbolicError(
                f"{impl.__name__} of an array that is empty on some trips"
            ) from None
        return False


def _reduction_infer(impl: Callable, shape_rule: Callable = _reduced_shape) -> Callable:
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


def _view_infer(rule: Callable) -> Callable:
    """A view's meta from its ``strided`` rule (``ir/layout.py``): shape and layout, no data."""

    def infer(x: TensorMeta, **params: Any) -> TensorMeta:
        return layout.meta_of(rule(layout.of_meta(x), **params), x)

    return infer


def _broadcast_to_infer(x: TensorMeta, shape: Any) -> TensorMeta:
    """``broadcast_to`` is a read-only view."""
    return layout.meta_of(layout.broadcast_to(layout.of_meta(x), shape), x, writeable=False)


def _reshape_infer(x: TensorMeta, shape: Any) -> TensorMeta:
    view = layout.reshape(layout.of_meta(x), shape)
    if view is None:  # NumPy copies: a new C array
        return TensorMeta(layout.new_shape(x.size, shape), x.dtype, "C")
    return layout.meta_of(view, x)


def _ravel_infer(x: TensorMeta) -> TensorMeta:
    view = layout.ravel(layout.of_meta(x))
    if view is None:
        return TensorMeta((x.size,), x.dtype, "C")
    return layout.meta_of(view, x)


def _getitem(x: np.ndarray, index: tuple) -> Any:
    return x[index]


def _reads_element(x: TensorMeta, index: tuple) -> bool:
    """Whether ``x[index]`` reads one element (every axis an int, no Ellipsis, no None)."""
    return all(
        i is not Ellipsis and i is not None and not isinstance(i, slice) for i in index
    ) and (len(index) == x.ndim)


def _getitem_infer(x: TensorMeta, index: tuple) -> TensorMeta:
    view = layout.getitem(layout.of_meta(x), index)
    if _reads_element(x, index):
        return TensorMeta((), x.dtype, scalar=True, writeable=False)
    return layout.meta_of(view, x)


def _setitem(target: np.ndarray, value: Any, index: tuple) -> np.ndarray:
    target[index] = value
    return target


def _setitem_infer(target: TensorMeta, value: Any, index: tuple) -> TensorMeta:
    if not target.writeable or target.scalar:
        raise ValueError("assignment destination is read-only")
    python_complex = isinstance(value, complex) or (
        isinstance(value, TensorMeta) and value.weak and value.dtype.kind == "c"
    )
    if python_complex and target.dtype.kind in "iuf":
        # Python converts the scalar with float()/int(), as NumPy does for a Python complex.
        raise TypeError(f"cannot assign a Python complex into an array of {target.dtype}")
    dest = _getitem_infer(target, index).shape
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


def _matmul_infer(a: Any, b: Any, **params: Any) -> TensorMeta:
    a, b = _as_meta(a), _as_meta(b)
    shape = _matmul_shape(a.shape, b.shape)
    out = _probe_dtype(np.matmul, a, b, **params)
    return TensorMeta(shape, out.dtype, scalar=isinstance(out, np.generic))


def _dot_infer(a: Any, b: Any) -> TensorMeta:
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


def _outer_infer(a: Any, b: Any) -> TensorMeta:
    a, b = _as_meta(a), _as_meta(b)
    out = _probe_dtype(np.outer, a, b)
    return TensorMeta((a.size, b.size), out.dtype)


def _trace_infer(
    a: TensorMeta, offset: int = 0, axis1: int = 0, axis2: int = 1, **params: Any
) -> TensorMeta:
    out = _probe_dtype(np.trace, a, offset=offset, axis1=axis1, axis2=axis2, **params)
    drop = {axis1 % a.ndim, axis2 % a.ndim}
    shape = tuple(s for i, s in enumerate(a.shape) if i not in drop)
    return TensorMeta(shape, out.dtype, scalar=isinstance(out, np.generic))


def _concatenate(*arrays: Any, axis: Any = 0) -> np.ndarray:
    return np.concatenate(arrays, axis=axis)


def _concatenate_infer(*arrays: TensorMeta, axis: Any = 0) -> TensorMeta:
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


def _stack(*arrays: Any, axis: int = 0) -> np.ndarray:
    return np.stack(arrays, axis=axis)


def _stack_infer(*arrays: Any, axis: int = 0) -> TensorMeta:
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


def _creation_infer(impl: Callable) -> Callable:
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


def _full(fill_value: Any, shape: Any, dtype: Any = None, order: str = "C") -> np.ndarray:
    return np.full(shape, fill_value, dtype=dtype, order=order)


def _arange(
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


def _eye_infer(
    N: int, M: Any = None, k: int = 0, dtype: Any = float, order: str = "C"
) -> TensorMeta:
    shape = (N, N if M is None else M)
    _nonnegative_sizes(shape)
    _quiet(np.eye, 0, 0, 0 if is_expr(k) else k, dtype)  # NumPy's argument checks
    return TensorMeta(shape, np.dtype(dtype), "F" if order == "F" else "C")


def _run_infer(impl: Callable, length: Callable) -> Callable:
    """Creation ops whose length NumPy computes from values (``arange``, ``linspace``): run at
    the traced sizes for the dtype; a symbolic length comes from ``length(**params)``."""

    def infer(**params: Any) -> TensorMeta:
        out = _quiet(impl, **{k: hint(v) if is_expr(v) else v for k, v in params.items()})
        if not any(is_expr(v) for v in params.values()):
            return TensorMeta(out.shape, out.dtype)
        return TensorMeta((length(**params),), out.dtype)

    return infer


def _arange_length(start=None, stop=None, step=None, dtype=None, **_: Any):
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


def _linspace_length(num=50, **_: Any):
    if not decide(">=", num, 0, "np.linspace's num"):
        raise ValueError(f"Number of samples, {hint(num)}, must be non-negative.")
    return num


def _astype(x: Any, dtype: Any, order: str = "K") -> Any:
    if isinstance(x, np.ndarray):
        return x.astype(dtype, order=order)
    if isinstance(x, np.generic):
        return x.astype(dtype)
    return np.dtype(dtype).type(x)


def _astype_infer(x: TensorMeta, dtype: Any, order: str = "K") -> TensorMeta:
    x = x if isinstance(x, TensorMeta) else meta_of(x)  # a literal (a carried scalar, unrolled)
    return TensorMeta(x.shape, np.dtype(dtype), _ordered_layout(x, order, x.ndim), scalar=x.scalar)


def _copy(x: Any, order: str = "K") -> np.ndarray:
    return np.copy(x, order=order)


def _copy_infer(x: TensorMeta, order: str = "K") -> TensorMeta:
    """A copy is always a new array (of a scalar too: a 0-d array)."""
    return TensorMeta(x.shape, x.dtype, _ordered_layout(x, order, x.ndim))


# ---------------------------------------------------------------------------------
# the table
# ---------------------------------------------------------------------------------

OPS: list[OpDef] = []
_BY_NAME: dict[str, OpDef] = {}


def _add(op: OpDef) -> OpDef:
    if op.name in _BY_NAME:
        raise ValueError(f"op {op.name} defined twice")
    OPS.append(op)
    _BY_NAME[op.name] = op
    return op


def _ufunc(
    name: str,
    ufunc: np.ufunc,
    *,
    aliases: tuple = (),
    dunder: str | None = None,
    commutative: bool = False,
    identity: Any = None,
) -> OpDef:
    return _add(
        OpDef(
            name,
            "elementwise",
            ufunc,
            _elementwise_infer(ufunc),
            numpy=(ufunc, *aliases),
            params=("dtype",),
            dunder=dunder,
            commutative=commutative,
            identity=identity,
        )
    )


# -- binary arithmetic -------------------------------------------------------------------
ADD = _ufunc("add", np.add, dunder="add", commutative=True, identity=0)
SUBTRACT = _ufunc("subtract", np.subtract, dunder="sub")
MULTIPLY = _ufunc("multiply", np.multiply, dunder="mul", commutative=True, identity=1)
DIVIDE = _ufunc("divide", np.divide, dunder="truediv")
FLOOR_DIVIDE = _ufunc("floor_divide", np.floor_divide, dunder="floordiv")
REMAINDER = _ufunc("remainder", np.remainder, dunder="mod")
FMOD = _ufunc("fmod", np.fmod)
POWER = _ufunc("power", np.power, dunder="pow")
FLOAT_POWER = _ufunc("float_power", np.float_power)
MAXIMUM = _ufunc("maximum", np.maximum)  # not commutative: of 0.0 and -0.0 it keeps the second
MINIMUM = _ufunc("minimum", np.minimum)
FMAX = _ufunc("fmax", np.fmax)
FMIN = _ufunc("fmin", np.fmin)
ARCTAN2 = _ufunc("arctan2", np.arctan2)
HYPOT = _ufunc("hypot", np.hypot, commutative=True)
COPYSIGN = _ufunc("copysign", np.copysign)
NEXTAFTER = _ufunc("nextafter", np.nextafter)
LDEXP = _ufunc("ldexp", np.ldexp)
LOGADDEXP = _ufunc("logaddexp", np.logaddexp, commutative=True)
LOGADDEXP2 = _ufunc("logaddexp2", np.logaddexp2, commutative=True)
HEAVISIDE = _ufunc("heaviside", np.heaviside)
GCD = _ufunc("gcd", np.gcd, commutative=True)
LCM = _ufunc("lcm", np.lcm, commutative=True)
# -- comparison and logic ----------------------------------------------------------------
EQUAL = _ufunc("equal", np.equal, dunder="eq", commutative=True)
NOT_EQUAL = _ufunc("not_equal", np.not_equal, dunder="ne", commutative=True)
LESS = _ufunc("less", np.less, dunder="lt")
LESS_EQUAL = _ufunc("less_equal", np.less_equal, dunder="le")
GREATER = _ufunc("greater", np.greater, dunder="gt")
GREATER_EQUAL = _ufunc("greater_equal", np.greater_equal, dunder="ge")
LOGICAL_AND = _ufunc("logical_and", np.logical_and, commutative=True, identity=True)
LOGICAL_OR = _ufunc("logical_or", np.logical_or, commutative=True, identity=False)
LOGICAL_XOR = _ufunc("logical_xor", np.logical_xor, commutative=True, identity=False)
LOGICAL_NOT = _ufunc("logical_not", np.logical_not)
# -- bitwise ------------------------------------------------------------------------------
BITWISE_AND = _ufunc("bitwise_and", np.bitwise_and, dunder="and", commutative=True)
BITWISE_OR = _ufunc("bitwise_or", np.bitwise_or, dunder="or", commutative=True, identity=0)
BITWISE_XOR = _ufunc("bitwise_xor", np.bitwise_xor, dunder="xor", commutative=True, identity=0)
INVERT = _ufunc("invert", np.invert, dunder="invert")
LEFT_SHIFT = _ufunc("left_shift", np.left_shift, dunder="lshift")
RIGHT_SHIFT = _ufunc("right_shift", np.right_shift, dunder="rshift")
BITWISE_COUNT = _ufunc("bitwise_count", np.bitwise_count)
# -- unary arithmetic ---------------------------------------------------------------------
NEGATIVE = _ufunc("negative", np.negative, dunder="neg")
POSITIVE = _ufunc("positive", np.positive, dunder="pos")
ABSOLUTE = _ufunc("absolute", np.absolute, dunder="abs")
FABS = _ufunc("fabs", np.fabs)
SIGN = _ufunc("sign", np.sign)
SQUARE = _ufunc("square", np.square)
SQRT = _ufunc("sqrt", np.sqrt)
CBRT = _ufunc("cbrt", np.cbrt)
RECIPROCAL = _ufunc("reciprocal", np.reciprocal)
CONJUGATE = _ufunc("conjugate", np.conjugate)
# -- exponentials and logarithms -------------------------------------------------------------
EXP = _ufunc("exp", np.exp)
EXP2 = _ufunc("exp2", np.exp2)
EXPM1 = _ufunc("expm1", np.expm1)
LOG = _ufunc("log", np.log)
LOG2 = _ufunc("log2", np.log2)
LOG10 = _ufunc("log10", np.log10)
LOG1P = _ufunc("log1p", np.log1p)
# -- trigonometric and hyperbolic -------------------------------------------------------------
SIN = _ufunc("sin", np.sin)
COS = _ufunc("cos", np.cos)
TAN = _ufunc("tan", np.tan)
ARCSIN = _ufunc("arcsin", np.arcsin)
ARCCOS = _ufunc("arccos", np.arccos)
ARCTAN = _ufunc("arctan", np.arctan)
SINH = _ufunc("sinh", np.sinh)
COSH = _ufunc("cosh", np.cosh)
TANH = _ufunc("tanh", np.tanh)
ARCSINH = _ufunc("arcsinh", np.arcsinh)
ARCCOSH = _ufunc("arccosh", np.arccosh)
ARCTANH = _ufunc("arctanh", np.arctanh)
DEG2RAD = _ufunc("deg2rad", np.deg2rad, aliases=(np.radians,))
RAD2DEG = _ufunc("rad2deg", np.rad2deg, aliases=(np.degrees,))
# -- rounding -----------------------------------------------------------------------------------
FLOOR = _ufunc("floor", np.floor)
CEIL = _ufunc("ceil", np.ceil)
TRUNC = _ufunc("trunc", np.trunc)
RINT = _ufunc("rint", np.rint)
# -- classification -------------------------------------------------------------------------------
ISNAN = _ufunc("isnan", np.isnan)
ISINF = _ufunc("isinf", np.isinf)
ISFINITE = _ufunc("isfinite", np.isfinite)
SIGNBIT = _ufunc("signbit", np.signbit)
SPACING = _ufunc("spacing", np.spacing)

# -- SciPy's special functions ------------------------------------------------------------------
SCIPY_SPECIAL = ("erf", "expit", "logit")


def load_scipy_special() -> list[OpDef]:
    """Add ``scipy.special``'s ``erf``, ``expit`` and ``logit`` ufuncs to the table, once.

    SciPy is optional and slow to import (about 0.7 s), so gcompile never imports it: the ops
    are added when the tracer meets a ufunc it does not know while ``scipy.special`` is loaded
    (a function calling them has imported it). Returns the ops added by this call.
    """
    special = sys.modules.get("scipy.special")
    if special is None or SCIPY_SPECIAL[0] in _BY_NAME:
        return []
    return [_ufunc(name, getattr(special, name)) for name in SCIPY_SPECIAL]


# -- elementwise, not ufuncs ----------------------------------------------------------------------
WHERE = _add(
    OpDef(
        "where",
        "elementwise",
        np.where,
        _elementwise_infer(np.where),
        numpy=(np.where,),
        operands=("condition", "x", "y"),
    )
)
CLIP = _add(
    OpDef(
        "clip",
        "elementwise",
        np.clip,
        _elementwise_infer(np.clip),
        operands=("a", "a_min", "a_max"),
        doc="reached through the np.clip decomposition, which accepts min=/max= too",
    )
)
ROUND = _add(
    OpDef(
        "round",
        "elementwise",
        np.round,
        _elementwise_infer(np.round),
        numpy=(np.round, np.around),
        operands=("a",),
        params=("decimals",),
    )
)
ASTYPE = _add(
    OpDef(
        "astype",
        "elementwise",
        _astype,
        _astype_infer,
        numpy=(np.astype,),
        operands=("x",),
        params=("dtype", "order"),
    )
)
COPY = _add(
    OpDef(
        "copy",
        "elementwise",
        _copy,
        _copy_infer,
        numpy=(np.copy,),
        operands=("a",),
        params=("order",),
    )
)


def _part(numpy_part: Callable) -> Callable:
    """``np.real``/``np.imag`` as a new array: NumPy returns a view, a graph value owns its memory."""

    def part(x: Any) -> Any:
        out = numpy_part(x)
        return np.array(out, order="K") if isinstance(out, np.ndarray) else out

    return part


def _part_infer(numpy_part: Callable) -> Callable:
    """Elementwise shape and dtype. NumPy's part of a complex array is a strided view (layout
    ``"A"``: no contiguity promised), the imaginary part of a real array read-only zeros."""
    elementwise = _elementwise_infer(numpy_part)

    def infer(x: Any) -> TensorMeta:
        meta = elementwise(x)
        if not isinstance(x, TensorMeta) or meta.scalar:
            return meta
        if x.dtype.kind == "c":  # (a view: as writeable as the complex array)
            return replace(meta, layout="A" if meta.ndim > 0 else "C", writeable=x.writeable)
        return replace(meta, writeable=False) if numpy_part is np.imag else meta

    return infer


# ``.real``/``.imag`` and ``np.real``/``np.imag`` (the tracer returns a real array itself for
# ``.real``). In NumPy they are views into the complex array; here they are values: the tracer
# turns a write through a part into a write of the complex array (``complex`` below), and takes a
# part again when it is read after its array was written.
REAL = _add(
    OpDef(
        "real",
        "elementwise",
        _part(np.real),
        _part_infer(np.real),
        doc="the real part (float32 of complex64, float64 of complex128)",
    )
)
IMAG = _add(
    OpDef(
        "imag",
        "elementwise",
        _part(np.imag),
        _part_infer(np.imag),
        doc="the imaginary part; zeros of the input's dtype for a real input",
    )
)


def _complex(real: Any, imag: Any, dtype: Any) -> np.ndarray:
    """A complex array of ``dtype`` from its parts, each cast as ``z.real[...] = part`` casts it
    (a complex part gives its real part, as NumPy does with a ComplexWarning)."""
    out = np.empty(np.broadcast_shapes(np.shape(real), np.shape(imag)), dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
        out.real = real
        out.imag = imag
    return out


def _complex_infer(real: Any, imag: Any, dtype: Any) -> TensorMeta:
    shapes = (x.shape if isinstance(x, TensorMeta) else np.shape(x) for x in (real, imag))
    return TensorMeta(broadcast_shapes(*shapes), np.dtype(dtype))


COMPLEX = _add(
    OpDef(
        "complex",
        "elementwise",
        _complex,
        _complex_infer,
        params=("dtype",),
        doc="a complex array from its real and imaginary parts: what a write into z.real or "
        "z.imag stores into z (made by the tracer)",
    )
)

# -- reductions -----------------------------------------------------------------------------------
_RED = ("axis", "dtype", "keepdims")
SUM = _add(
    OpDef(
        "sum",
        "reduction",
        np.sum,
        _reduction_infer(np.sum),
        numpy=(np.sum,),
        operands=("a",),
        params=_RED,
        reduces=np.add,
        identity=0,
        loop_reduction=True,
    )
)
PROD = _add(
    OpDef(
        "prod",
        "reduction",
        np.prod,
        _reduction_infer(np.prod),
        numpy=(np.prod,),
        operands=("a",),
        params=_RED,
        reduces=np.multiply,
        identity=1,
        loop_reduction=True,
    )
)
MEAN = _add(
    OpDef(
        "mean",
        "reduction",
        np.mean,
        _reduction_infer(np.mean),
        numpy=(np.mean,),
        operands=("a",),
        params=_RED,
        loop_reduction=True,
    )
)
AMAX = _add(
    OpDef(
        "amax",
        "reduction",
        np.max,
        _reduction_infer(np.max),
        numpy=(np.max, np.amax),
        operands=("a",),
        params=("axis", "keepdims"),
        reduces=np.maximum,
        loop_reduction=True,
    )
)
AMIN = _add(
    OpDef(
        "amin",
        "reduction",
        np.min,
        _reduction_infer(np.min),
        numpy=(np.min, np.amin),
        operands=("a",),
        params=("axis", "keepdims"),
        reduces=np.minimum,
        loop_reduction=True,
    )
)
ARGMAX = _add(
    OpDef(
        "argmax",
        "reduction",
        np.argmax,
        _reduction_infer(np.argmax),
        numpy=(np.argmax,),
        operands=("a",),
        params=("axis", "keepdims"),
        loop_reduction=True,
    )
)
ARGMIN = _add(
    OpDef(
        "argmin",
        "reduction",
        np.argmin,
        _reduction_infer(np.argmin),
        numpy=(np.argmin,),
        operands=("a",),
        params=("axis", "keepdims"),
        loop_reduction=True,
    )
)
ANY = _add(
    OpDef(
        "any",
        "reduction",
        np.any,
        _reduction_infer(np.any),
        numpy=(np.any,),
        operands=("a",),
        params=("axis", "keepdims"),
        reduces=np.logical_or,
        identity=False,
        loop_reduction=True,
    )
)
ALL = _add(
    OpDef(
        "all",
        "reduction",
        np.all,
        _reduction_infer(np.all),
        numpy=(np.all,),
        operands=("a",),
        params=("axis", "keepdims"),
        reduces=np.logical_and,
        identity=True,
        loop_reduction=True,
    )
)
VAR = _add(
    OpDef(
        "var",
        "reduction",
        np.var,
        _reduction_infer(np.var),
        numpy=(np.var,),
        operands=("a",),
        params=(*_RED, "ddof"),
        loop_reduction=True,
    )
)
STD = _add(
    OpDef(
        "std",
        "reduction",
        np.std,
        _reduction_infer(np.std),
        numpy=(np.std,),
        operands=("a",),
        params=(*_RED, "ddof"),
        loop_reduction=True,
    )
)
CUMSUM = _add(
    OpDef(
        "cumsum",
        "reduction",
        np.cumsum,
        _reduction_infer(np.cumsum, _cumulative_shape),
        numpy=(np.cumsum,),
        operands=("a",),
        params=("axis", "dtype"),
        accumulates=np.add,
    )
)
CUMPROD = _add(
    OpDef(
        "cumprod",
        "reduction",
        np.cumprod,
        _reduction_infer(np.cumprod, _cumulative_shape),
        numpy=(np.cumprod,),
        operands=("a",),
        params=("axis", "dtype"),
        accumulates=np.multiply,
    )
)


def _ufunc_reduce(
    x: Any, ufunc: np.ufunc, axis: Any = 0, dtype: Any = None, keepdims: bool = False
):
    return ufunc.reduce(x, axis=axis, dtype=dtype, keepdims=keepdims)


def _ufunc_accumulate(x: Any, ufunc: np.ufunc, axis: int = 0, dtype: Any = None):
    return ufunc.accumulate(x, axis=axis, dtype=dtype)


REDUCE = _add(
    OpDef(
        "reduce",
        "reduction",
        _ufunc_reduce,
        _reduction_infer(_ufunc_reduce),
        params=("ufunc", "axis", "dtype", "keepdims"),
        doc="ufunc.reduce of a table ufunc without a reduction op of its own (np.subtract.reduce)",
    )
)
ACCUMULATE = _add(
    OpDef(
        "accumulate",
        "reduction",
        _ufunc_accumulate,
        _reduction_infer(_ufunc_accumulate, _cumulative_shape),
        params=("ufunc", "axis", "dtype"),
        doc="ufunc.accumulate of a table ufunc other than add and multiply (np.maximum.accumulate)",
    )
)

# -- linear algebra --------------------------------------------------------------------------------
MATMUL = _add(
    OpDef(
        "matmul",
        "matmul",
        np.matmul,
        _matmul_infer,
        numpy=(np.matmul,),
        params=("dtype",),
        dunder="matmul",
    )
)
DOT = _add(OpDef("dot", "matmul", np.dot, _dot_infer, numpy=(np.dot,), operands=("a", "b")))
OUTER = _add(
    OpDef("outer", "matmul", np.outer, _outer_infer, numpy=(np.outer,), operands=("a", "b"))
)
TRACE = _add(
    OpDef(
        "trace",
        "reduction",
        np.trace,
        _trace_infer,
        numpy=(np.trace,),
        operands=("a",),
        params=("offset", "axis1", "axis2", "dtype"),
    )
)

# -- views and shapes ----------------------------------------------------------------------------------
_transpose_rule = layout.rearranged(np.transpose)
_swapaxes_rule = layout.rearranged(np.swapaxes)
_moveaxis_rule = layout.rearranged(np.moveaxis)
_expand_dims_rule = layout.rearranged(np.expand_dims)
RESHAPE = _add(
    OpDef(
        "reshape",
        "view",
        np.reshape,
        _reshape_infer,
        numpy=(np.reshape,),
        operands=("a",),
        params=("shape",),
        may_copy=True,
        strided=layout.reshape,
    )
)
TRANSPOSE = _add(
    OpDef(
        "transpose",
        "view",
        np.transpose,
        _view_infer(_transpose_rule),
        numpy=(np.transpose,),
        operands=("a",),
        params=("axes",),
        strided=_transpose_rule,
    )
)
SWAPAXES = _add(
    OpDef(
        "swapaxes",
        "view",
        np.swapaxes,
        _view_infer(_swapaxes_rule),
        numpy=(np.swapaxes,),
        operands=("a",),
        params=("axis1", "axis2"),
        strided=_swapaxes_rule,
    )
)
MOVEAXIS = _add(
    OpDef(
        "moveaxis",
        "view",
        np.moveaxis,
        _view_infer(_moveaxis_rule),
        numpy=(np.moveaxis,),
        operands=("a",),
        params=("source", "destination"),
        strided=_moveaxis_rule,
    )
)
EXPAND_DIMS = _add(
    OpDef(
        "expand_dims",
        "view",
        np.expand_dims,
        _view_infer(_expand_dims_rule),
        numpy=(np.expand_dims,),
        operands=("a",),
        params=("axis",),
        strided=_expand_dims_rule,
    )
)
SQUEEZE = _add(
    OpDef(
        "squeeze",
        "view",
        np.squeeze,
        _view_infer(layout.squeeze),
        numpy=(np.squeeze,),
        operands=("a",),
        params=("axis",),
        strided=layout.squeeze,
    )
)
BROADCAST_TO = _add(
    OpDef(
        "broadcast_to",
        "view",
        np.broadcast_to,
        _broadcast_to_infer,
        numpy=(np.broadcast_to,),
        operands=("array",),
        params=("shape",),
        strided=layout.broadcast_to,
    )
)
RAVEL = _add(
    OpDef(
        "ravel",
        "view",
        np.ravel,
        _ravel_infer,
        numpy=(np.ravel,),
        operands=("a",),
        may_copy=True,
        strided=layout.ravel,
    )
)
GETITEM = _add(
    OpDef(
        "getitem",
        "view",
        _getitem,
        _getitem_infer,
        params=("index",),
        strided=layout.getitem,
        doc="basic indexing: ints, slices, None, Ellipsis",
    )
)
CONCATENATE = _add(
    OpDef(
        "concatenate",
        "shape",
        _concatenate,
        _concatenate_infer,
        numpy=(np.concatenate,),
        operands=("arrays",),
        params=("axis",),
    )
)
STACK = _add(
    OpDef(
        "stack",
        "shape",
        _stack,
        _stack_infer,
        numpy=(np.stack,),
        operands=("arrays",),
        params=("axis",),
    )
)

# -- creation (static arguments) ------------------------------------------------------------------------
_CREATE = ("shape", "dtype", "order")
ZEROS = _add(
    OpDef(
        "zeros", "creation", np.zeros, _creation_infer(np.zeros), numpy=(np.zeros,), params=_CREATE
    )
)
ONES = _add(
    OpDef("ones", "creation", np.ones, _creation_infer(np.ones), numpy=(np.ones,), params=_CREATE)
)
EMPTY = _add(
    OpDef(
        "empty", "creation", np.empty, _creation_infer(np.empty), numpy=(np.empty,), params=_CREATE
    )
)
FULL = _add(
    OpDef(
        "full",
        "creation",
        _full,
        _creation_infer(_full),
        numpy=(np.full,),
        operands=("fill_value",),
        params=_CREATE,
    )
)
ARANGE = _add(
    OpDef(
        "arange",
        "creation",
        _arange,
        _run_infer(_arange, _arange_length),
        numpy=(np.arange,),
        params=("start", "stop", "step", "dtype"),
        binding=_arange,
    )
)
LINSPACE = _add(
    OpDef(
        "linspace",
        "creation",
        np.linspace,
        _run_infer(np.linspace, _linspace_length),
        numpy=(np.linspace,),
        params=("start", "stop", "num", "endpoint", "dtype", "axis"),
    )
)
EYE = _add(
    OpDef(
        "eye",
        "creation",
        np.eye,
        _eye_infer,
        numpy=(np.eye,),
        params=("N", "M", "k", "dtype", "order"),
    )
)

SYMINT = _add(
    OpDef(
        "symint",
        "creation",
        lambda expr: expr,
        lambda expr: TensorMeta((), np.int64, weak=True, scalar=True),
        params=("expr",),
        doc="a size used as a value (x / x.shape[0]): the Python int a symbolic size expression "
        "has at run time (backends evaluate symbolic parameters before calling impl)",
    )
)

# -- mutation ----------------------------------------------------------------------------------------------
SETITEM = _add(
    OpDef(
        "setitem",
        "scatter",
        _setitem,
        _setitem_infer,
        params=("index",),
        mutates=True,
        doc="target[index] = value, in place; the node's value is the target",
    )
)


KERNEL_OUTPUT = _add(
    OpDef(
        "kernel_output",
        "opaque",
        lambda values, item: values[item],
        lambda meta, item: meta.items[item],
        params=("item",),
        doc="output ``item`` of a fused kernel with several outputs",
    )
)


class ViewStep(NamedTuple):
    """One view applied on the way from an array to the region an ``update`` writes."""

    op: OpDef
    params: tuple  # sorted (name, value) pairs

    def __repr__(self) -> str:
        from .printer import format_index, format_literal

        params = (
            f"{k}={format_index(v) if k == 'index' else format_literal(v)}" for k, v in self.params
        )
        return f"{self.op.name}({', '.join(params)})"


def _region(x: Any, views: tuple) -> Any:
    for step in views:
        x = step.op.impl(x, **dict(step.params))
    return x


def _update(base: Any, value: Any, index: tuple, views: tuple = ()) -> np.ndarray:
    out = np.array(base, copy=True, order="K")
    _region(out, views)[index] = value
    return out


def _update_infer(base: TensorMeta, value: Any, index: tuple, views: tuple = ()) -> TensorMeta:
    region = base
    for step in views:
        region = step.op.infer(region, **dict(step.params))
    _setitem_infer(TensorMeta(region.shape, region.dtype, region.layout), value, index)
    return TensorMeta(base.shape, base.dtype, _ordered_layout(base, "K", base.ndim))


UPDATE = _add(
    OpDef(
        "update",
        "scatter",
        _update,
        _update_infer,
        params=("index", "views"),
        doc="functional setitem: a copy of base with base[views...][index] = value "
        "(made by passes/functionalize.py)",
    )
)


def _store(base: np.ndarray, value: Any, index: tuple, views: tuple = ()) -> np.ndarray:
    _region(base, views)[index] = value
    return base


def _store_infer(base: TensorMeta, value: Any, index: tuple, views: tuple = ()) -> TensorMeta:
    _update_infer(base, value, index, views)  # NumPy's checks of the assignment
    return base


STORE = _add(
    OpDef(
        "store",
        "scatter",
        _store,
        _store_infer,
        params=("index", "views"),
        mutates=True,
        doc="base[views...][index] = value in place; the node's value is base, written: "
        "an update whose old value nothing needs any more (made by passes/buffers.py)",
    )
)


def _writeback(target: np.ndarray, value: Any) -> np.ndarray:
    target[...] = value
    return target


WRITEBACK = _add(
    OpDef(
        "writeback",
        "scatter",
        _writeback,
        lambda target, value: target,
        mutates=True,
        doc="copies a mutated argument's final value into the caller's array; the node's value is "
        "that array (made by passes/functionalize.py)",
    )
)


# ---------------------------------------------------------------------------------
# decompositions: NumPy callables supported by rewriting into table ops at trace time
# ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Decomposition:
    """``fn(rec, *args, **kwargs)`` records the NumPy call through ``rec.call(op, *operands, **params)``.

    ``patch`` marks functions NumPy does not dispatch to traced arrays (they take
    no array argument, or convert instead of dispatching); the tracer replaces
    them in the ``numpy`` namespace while it traces.
    """

    fn: Callable
    patch: bool = False


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


def _divmod(rec, x1, x2):
    return np.floor_divide(x1, x2), np.remainder(x1, x2)


_NO_VALUE = getattr(np, "_NoValue", object())


def _clip(rec, a, a_min=_NO_VALUE, a_max=_NO_VALUE, *, min=_NO_VALUE, max=_NO_VALUE):  # noqa: A002
    low = min if a_min is _NO_VALUE else a_min
    high = max if a_max is _NO_VALUE else a_max
    return rec.call(CLIP, a, None if low is _NO_VALUE else low, None if high is _NO_VALUE else high)


def _identity(rec, n, dtype=None):
    return rec.call(EYE, N=n, dtype=float if dtype is None else dtype)


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


def _real(rec, val):
    return val.real  # the traced array's property: the array itself unless it is complex


def _imag(rec, val):
    return val.imag


def _angle(rec, z, deg=False):
    """NumPy's own definition: ``arctan2(z.imag, z.real)`` (``arctan2(0, z)`` of a real ``z``)."""
    angle = np.arctan2(z.imag, z.real) if z.dtype.kind == "c" else np.arctan2(0, z)
    # (NumPy multiplies in place: the same rounding, and the same dtype for a float32 angle)
    return angle * (180 / np.pi) if deg else angle


def _sizes(x: Any) -> tuple:
    """The shape of a traced array as sizes (ints or expressions), or of a concrete array."""
    meta = getattr(x, "meta", None)
    return tuple(meta.shape) if meta is not None else tuple(x.shape)


def _einsum(rec, operands=(), optimize=False, **kwargs):
    """``np.einsum`` that is a matrix product: ``matmul`` of transposed operands (ir/einsum.py)."""
    defaults = (("dtype", None), ("order", "K"), ("casting", "safe"))
    if any(kwargs.get(key, default) != default for key, default in defaults):
        rec.refuse("np.einsum(..., dtype=/order=/casting=...)", hint="cast the operands first")
    if len(operands) != 3 or not isinstance(operands[0], str):
        rec.refuse("np.einsum other than einsum('subscripts', a, b)", hint="write it with @")
    subscripts, a, b = operands
    if not all(hasattr(x, "shape") and hasattr(x, "dtype") for x in (a, b)):
        rec.refuse("np.einsum of a Python scalar", hint="multiply by the scalar instead")
    plan = matmul_plan(subscripts, _sizes(a), _sizes(b))
    if not isinstance(plan, MatmulPlan):
        rec.refuse(
            plan
            or f"np.einsum({subscripts!r}) on operands of shapes {_hinted(_sizes(a))} and "
            f"{_hinted(_sizes(b))}",
            hint="write the product with @ or np.matmul, the rest with NumPy operations",
        )
    eager = eager_result(subscripts, (a, b))
    if isinstance(eager, str):
        rec.refuse(eager, hint="write the product with @ or np.matmul")
    probes = [np.ones((1,) * x.ndim, x.dtype) for x in (a, b)]
    if eager[0] != _quiet(np.matmul, *probes).dtype:
        rec.refuse(f"np.einsum on {a.dtype} and {b.dtype}: its dtype is not matmul's")
    left = a if plan.a_axes == tuple(range(a.ndim)) else np.transpose(a, plan.a_axes)
    right = b if plan.b_axes == tuple(range(b.ndim)) else np.transpose(b, plan.b_axes)
    if eager[1] == "F":  # (a @ b) laid out as the transpose of b.T @ a.T
        if left.ndim != 2 or right.ndim != 2:
            rec.refuse("np.einsum with batch axes whose result NumPy lays out in F order")
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


DECOMPOSITIONS: dict[Callable, Decomposition] = {
    np.einsum: Decomposition(_einsum),
    np.divmod: Decomposition(_divmod),
    np.clip: Decomposition(_clip),
    np.zeros_like: Decomposition(_like(ZEROS)),
    np.ones_like: Decomposition(_like(ONES)),
    np.empty_like: Decomposition(_empty_like),
    np.full_like: Decomposition(_full_like),
    np.identity: Decomposition(_identity, patch=True),
    np.asarray: Decomposition(_asarray, patch=True),
    np.asanyarray: Decomposition(_asarray, patch=True),
    np.array: Decomposition(_array, patch=True),
    np.ascontiguousarray: Decomposition(_ascontiguousarray, patch=True),
    np.copyto: Decomposition(_copyto),
    np.diff: Decomposition(_diff),
    np.flip: Decomposition(_flip),
    np.real: Decomposition(_real),
    np.imag: Decomposition(_imag),
    np.angle: Decomposition(_angle),
}
