"""Library calls: NumPy functions with no op and no decomposition (and SciPy's functions), each
one ``extern`` node that calls the library at run time (linear algebra, FFTs, sorting).

    %extern_1 : f64[s0] = extern(%A, %b, call=np.linalg.solve(a=#0, b=#1))

The node's operands are the call's arrays; ``call`` (an ``ExternCall``) holds the function and
every other argument. Its meta comes from the function's rule in ``RULES``: output shapes from
the operands' (symbolic) shapes, dtypes as NumPy computes them. A function with several results
(``eigh``) has a ``TupleMeta``, read by ``kernel_output`` nodes. Nothing fuses across an extern
node; everything around it compiles.

Another NumPy function (``np.cross``, ``np.pad``, ``np.linalg.svd``), or a SciPy function
(``scipy.spatial.distance.cdist``, ``scipy.linalg.solve``), is *probed*: called once
while tracing on arrays of its operands' traced sizes and dtypes, whose sizes are then guarded
(a call at other sizes traces again). Its results' shapes and dtypes are the probe's
(``Probed``); each run checks it returns them again. Functions that write into their
arguments (``np.fill_diagonal``) or draw random numbers are never probed (``UNPROBED``): the
tracer refuses them, naming them.

A function whose result length the data decide (``np.nonzero``, ``np.unique``, ``np.extract``,
``np.bincount``: ``DATA_SIZED``) has a rule too: its call holds an unbacked symbol per such
length (``lengths``: ``u0``, made by the tracer in the interval ``DATA_SIZED`` gives, bound at
run time from the result, ``shape_env.data_size_bindings``).
"""

from __future__ import annotations

import sys
import types
import warnings
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from .meta import TensorMeta, TupleMeta
from .shape_env import decide
from .symbolic import sym_max, sym_min


@dataclass(frozen=True)
class Operand:
    """The ``index``-th array operand of an extern node, in an ``ExternCall``."""

    index: int

    def __repr__(self) -> str:
        return f"#{self.index}"


@dataclass(frozen=True)
class Probed:
    """What a function without a rule returned when probed: each result's meta (int sizes);
    ``several``: a tuple of them (else one)."""

    results: tuple  # (TensorMeta, ...)
    several: bool

    def metas(self) -> TensorMeta | TupleMeta:
        return TupleMeta(self.results) if self.several else self.results[0]


@dataclass(frozen=True)
class ExternCall:
    """A library call: ``function(**arguments)``, an argument an ``Operand`` (or a tuple of
    them and values) or a value; ``probed`` for a function without a rule."""

    name: str
    function: Callable
    arguments: tuple  # ((parameter name, Operand or value), ...)
    positional: int = 0  # the first arguments are passed by position (positional-only ones)
    probed: Probed | None = None
    lengths: tuple = ()  # the unbacked symbols of results whose length the data decide

    def __repr__(self) -> str:
        given = [_text(v) if i < self.positional and k.startswith("#") else f"{k}={_text(v)}"
                 for i, (k, v) in enumerate(self.arguments)]  # fmt: skip
        return f"{self.name}({', '.join(given)})"

    @property
    def raises_on_data(self) -> bool:
        """Whether the call may raise on the values it is given (``TOTAL``: none of those)."""
        return self.function not in TOTAL

    def get(self, name: str, default: Any = None) -> Any:
        """The argument ``name`` as given (an ``Operand`` for an array), else ``default``."""
        return dict(self.arguments).get(name, default)

    def run(self, operands: tuple) -> Any:
        """Call the function on the operands' values: its results, with memory of their own."""
        result, values = self.call(operands)
        if self.probed is not None:
            result = _as_probed(self, result)
        arrays = [*operands, *(v for v in values if isinstance(v, np.ndarray))]
        return _own(result, [v for v in arrays if isinstance(v, np.ndarray)])

    def call(self, operands: tuple) -> tuple:
        """Call the function on the operands' values: ``(what it returns, the arguments)``."""
        values = [_value(v, operands) for _, v in self.arguments]
        names = [k for k, _ in self.arguments[self.positional :]]
        keywords = dict(zip(names, values[self.positional :]))
        return self.function(*values[: self.positional], **keywords), values


def _text(value: Any) -> str:
    """An argument in the text form: a dtype, or a type standing for one (``np.float32``,
    ``float``), by its name (which the parser reads back as that dtype)."""
    if isinstance(value, np.dtype) or (
        isinstance(value, type) and issubclass(value, (np.generic, bool, int, float, complex))
    ):
        return np.dtype(value).name
    return repr(value)


def _value(argument: Any, operands: tuple) -> Any:
    if isinstance(argument, Operand):
        return operands[argument.index]
    if isinstance(argument, tuple):
        return tuple(_value(v, operands) for v in argument)
    return argument


# -- probed functions ---------------------------------------------------------------------------

UNPROBED = frozenset(
    {
        # result shapes that follow the data
        "unique", "unique_all", "unique_counts", "unique_inverse", "unique_values", "nonzero",
        "flatnonzero", "argwhere", "bincount", "extract", "compress", "trim_zeros", "setdiff1d",
        "intersect1d", "union1d", "setxor1d", "histogram_bin_edges", "histogramdd", "select",
        # result dtypes that follow the data (real where every eigenvalue or root is)
        "eig", "eigvals", "roots", "real_if_close",
        # writes into an argument, or a result that is not an array
        "fill_diagonal", "put", "place", "putmask", "copyto", "put_along_axis", "shares_memory",
        "may_share_memory", "array2string", "array_repr", "array_str", "save", "savez",
        "savetxt", "tofile", "result_type", "can_cast", "min_scalar_type", "shape", "ndim",
        "size", "iterable", "isscalar", "busday_count", "datetime_as_string",
    }
)  # fmt: skip


def probeable(func: Any) -> bool:
    """Whether ``func`` is a public function of NumPy (or its ``linalg`` or ``fft``), or of
    SciPy (``scipy.linalg.solve``, ``scipy.spatial.distance.cdist``: ``library_name``), that a
    probe may stand for (``UNPROBED``)."""
    module = getattr(func, "__module__", None) or ""
    name = getattr(func, "__name__", "")
    public = module in ("numpy", "numpy.linalg", "numpy.fft") or library_name(func) is not None
    return public and not name.startswith("_") and name not in UNPROBED


def library_name(func: Any) -> str | None:
    """``scipy.<public modules>.<name>`` of a SciPy function, the shortest public module
    path that holds it (``scipy.linalg.solve``, not its defining ``scipy.linalg._basic``);
    None for anything else."""
    module = getattr(func, "__module__", None) or ""
    name = getattr(func, "__name__", "")
    if isinstance(func, np.ufunc) and not module:  # (SciPy's ufuncs name no module)
        module = "scipy.special"
    plain = isinstance(func, (types.FunctionType, types.BuiltinFunctionType, np.ufunc))
    if not plain or not module.startswith("scipy.") or name.startswith("_"):
        return None  # (a class makes an object: not a library call)
    parts = module.split(".")
    public = [p for p in parts if not p.startswith("_")]
    for end in range(2, len(public) + 1):
        path = ".".join(public[:end])
        loaded = sys.modules.get(path)
        if loaded is not None and getattr(loaded, name, None) is func:
            return f"{path}.{name}"
    return None


def probe(call: ExternCall, values: list) -> Probed:
    """Call ``call``'s function on the operand ``values`` (``probe_value``s, or constants):
    what it returns. Raises ``TypeError`` for what is no array or NumPy scalar (or a tuple of
    those), and whatever the function raises."""
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (the call's own warnings come when it runs)
        result, _ = call.call(tuple(values))
    several, items = _items(result)
    results = []
    arrays = [v for v in values if isinstance(v, np.ndarray)]
    for item in items:
        if isinstance(item, np.ndarray) and any(np.shares_memory(item, a) for a in arrays):
            raise TypeError(f"{call.name} returns a view of its argument")
        if not isinstance(item, (np.ndarray, np.generic)) or item.dtype.kind in "OVSUMm":
            raise TypeError(f"{call.name} returns a {type(item).__name__}, not numbers")
        results.append(_result_meta(item))
    return Probed(tuple(results), several)


def _items(result: Any) -> tuple[bool, list]:
    """``(several, items)`` of a function's result: whether it is a tuple (or list) of
    results, and each one, a Python number as a NumPy scalar."""
    several = isinstance(result, (tuple, list))
    items = [np.asarray(r)[()] if isinstance(r, (bool, int, float, complex)) else r
             for r in (result if several else (result,))]  # fmt: skip
    return several, items


def _result_meta(item: Any) -> TensorMeta:
    """The meta of a probe's result: its shape, dtype and writeability; C-ordered, as every
    run makes it (``_own``: the probe's own order need not be the run's)."""
    if isinstance(item, np.generic):
        return _meta((), item.dtype, scalar=True)
    return TensorMeta(item.shape, item.dtype, "C", writeable=item.flags.writeable)


def probe_value(meta: TensorMeta, second: bool = False) -> Any:
    """Values in [0.25, 0.75), or half true, of ``meta``'s (int) shape and dtype; the
    ``second`` probe's in [1.5, 4.5) (integers 1 to 4), a third true: a result whose shape
    the values decide (``np.repeat(x, counts)``) differs between the two."""
    values = np.random.default_rng(1 if second else 0).random(meta.shape)
    values = 1.5 + 3.0 * values if second else 0.25 + 0.5 * values
    if meta.dtype.kind == "b":
        values = values > (3.5 if second else 0.5)
    elif meta.dtype.kind == "c":
        values = values + 1j * values[::-1]
    array = np.asarray(values).astype(meta.dtype)
    return array[()] if meta.scalar else array


def _as_probed(call: ExternCall, result: Any) -> Any:
    """``result`` as the probe found it (NumPy scalars for Python numbers, a tuple for a list),
    or a ``RuntimeError`` when its shapes or dtypes differ."""
    several, items = _items(result)
    found = [(tuple(np.shape(r)), getattr(r, "dtype", None)) for r in items]
    expected = [(m.shape, m.dtype) for m in call.probed.results]
    if several != call.probed.several or found != expected:
        raise RuntimeError(
            f"gcompile: {call.name} returned {found} at run time, where its trace found {expected}"
        )
    return tuple(items) if several else items[0]


def _own(result: Any, operands: list) -> Any:
    """``result`` with memory of its own: a view of an operand (``np.diag`` of a matrix) is
    copied, read-only as the view was, so that no later write into the operand changes it
    unseen by the graph (which holds an extern's results as values); C-ordered, as the
    result's meta says (``np.vstack`` of transposed arrays is Fortran-ordered)."""
    if isinstance(result, tuple):
        items = [_own(r, operands) for r in result]
        return type(result)(*items) if hasattr(type(result), "_fields") else tuple(items)
    if isinstance(result, np.ndarray) and any(
        np.may_share_memory(result, o) and np.shares_memory(result, o) for o in operands
    ):  # (the bounds first: the exact test costs a microsecond or more)
        writeable = result.flags.writeable
        result = result.copy()
        result.flags.writeable = writeable
    if isinstance(result, np.ndarray) and not result.flags.c_contiguous:
        result = np.ascontiguousarray(result)  # (as its meta says: kernels read it flat)
    return result


def infer(*metas: TensorMeta, call: ExternCall) -> TensorMeta | TupleMeta:
    """The meta of ``call`` on operands of ``metas`` (``TypeError`` where NumPy would raise)."""
    if call.probed is not None:
        return call.probed.metas()
    operands = {k: metas[v.index] for k, v in call.arguments if isinstance(v, Operand)}
    return RULES[call.function][1](call, operands)


def impl(*operands: Any, call: ExternCall) -> Any:
    """Run the call (the node's NumPy implementation)."""
    return call.run(operands)


def _meta(shape: tuple, dtype: Any, scalar: bool = False) -> TensorMeta:
    return TensorMeta(tuple(shape), np.dtype(dtype), scalar=scalar)


def _linalg_dtype(*metas: TensorMeta) -> np.dtype:
    """The dtype NumPy's linear algebra computes in: integers and booleans as float64."""
    dtype = np.result_type(*(m.dtype for m in metas))
    if dtype.kind in "biu":
        return np.dtype(np.float64)
    if dtype not in (np.float32, np.float64, np.complex64, np.complex128):
        raise TypeError(f"array type {dtype} is unsupported in linalg")
    return dtype


def _real(dtype: np.dtype) -> np.dtype:
    return np.empty(0, dtype).real.dtype


def _square(a: TensorMeta, name: str) -> None:
    """NumPy's checks of a (stack of) square matrices, with its exception."""
    if a.ndim < 2:
        raise np.linalg.LinAlgError(
            f"{a.ndim}-dimensional array given. Array must be at least two-dimensional"
        )
    if not decide("==", a.shape[-1], a.shape[-2], f"{name}: a square matrix"):
        raise np.linalg.LinAlgError("Last 2 dimensions of the array must be square")


def _solve(call: ExternCall, ops: dict) -> TensorMeta:
    a, b = ops.get("a"), ops.get("b")
    if a is None or b is None or a.ndim != 2 or b.ndim not in (1, 2):
        raise TypeError("np.linalg.solve of a matrix and a vector or matrix (no batches)")
    _square(a, call.name)
    if not decide("==", a.shape[-1], b.shape[0], f"{call.name}: b's rows"):
        raise ValueError("solve: Input operand 1 has a mismatch in its core dimension 0")
    return _meta(b.shape, _linalg_dtype(a, b))


def _lstsq(call: ExternCall, ops: dict) -> TupleMeta:
    """``(x, residuals, rank, s)``: the residuals' length the data decide (0 unless ``a`` has
    full column rank and more rows than columns: one per column of ``b``)."""
    a, b = ops.get("a"), ops.get("b")
    if a is None or b is None or a.ndim != 2 or b.ndim not in (1, 2):
        raise TypeError("np.linalg.lstsq of a matrix and a vector or matrix")
    if not decide("==", a.shape[0], b.shape[0], f"{call.name}: b's rows"):
        raise np.linalg.LinAlgError("Incompatible dimensions")
    dtype = _linalg_dtype(a, b)
    return TupleMeta(
        (
            _meta((a.shape[1], *b.shape[1:]), dtype),
            _meta(call.lengths, _real(dtype)),
            _meta((), np.int32, scalar=True),
            _meta((sym_min(*a.shape),), _real(dtype)),
        )
    )


def _same_shape(call: ExternCall, ops: dict) -> TensorMeta:  # inv, cholesky
    a = ops["a"]
    _square(a, call.name)
    return _meta(a.shape, _linalg_dtype(a))


def _det(call: ExternCall, ops: dict) -> TensorMeta:
    a = ops["a"]
    _square(a, call.name)
    return _meta(a.shape[:-2], _linalg_dtype(a), scalar=a.ndim == 2)


def _eigh(call: ExternCall, ops: dict) -> TupleMeta:
    a = ops["a"]
    _square(a, call.name)
    dtype = _linalg_dtype(a)
    return TupleMeta((_meta(a.shape[:-1], _real(dtype)), _meta(a.shape, dtype)))


def _eigvalsh(call: ExternCall, ops: dict) -> TensorMeta:
    a = ops["a"]
    _square(a, call.name)
    return _meta(a.shape[:-1], _real(_linalg_dtype(a)))


def _axis(call: ExternCall, a: TensorMeta) -> int:
    """The call's ``axis`` (default -1) as a non-negative int; NumPy's ``AxisError``."""
    axis = call.get("axis", -1)
    if not isinstance(axis, int):
        raise TypeError(f"{call.name}: axis {axis!r} is not an int")
    if not -a.ndim <= axis < a.ndim:
        raise np.exceptions.AxisError(axis, a.ndim)
    return axis % a.ndim


def _complex_of(dtype: np.dtype) -> np.dtype:
    """NumPy 2's FFT result type: single precision stays single."""
    if dtype in (np.float32, np.complex64):
        return np.dtype(np.complex64)
    if dtype.kind not in "biufc" or dtype == np.float16 or dtype.itemsize > 16:
        raise TypeError(f"{dtype} is not supported by gcompile's FFT calls")
    return np.dtype(np.complex128)


def _resized(a: TensorMeta, axis: int, size: Any) -> tuple:
    return tuple(size if i == axis else s for i, s in enumerate(a.shape))


def _fft(call: ExternCall, ops: dict) -> TensorMeta:  # fft, ifft
    a = ops["a"]
    axis, n = _axis(call, a), call.get("n")
    return _meta(_resized(a, axis, a.shape[axis] if n is None else n), _complex_of(a.dtype))


def _rfft(call: ExternCall, ops: dict) -> TensorMeta:
    a = ops["a"]
    if a.dtype.kind == "c":
        raise TypeError("np.fft.rfft of a complex array")
    axis, n = _axis(call, a), call.get("n")
    size = a.shape[axis] if n is None else n
    return _meta(_resized(a, axis, size // 2 + 1), _complex_of(a.dtype))


def _irfft(call: ExternCall, ops: dict) -> TensorMeta:
    a = ops["a"]
    axis, n = _axis(call, a), call.get("n")
    size = 2 * (a.shape[axis] - 1) if n is None else n
    return _meta(_resized(a, axis, size), _real(_complex_of(a.dtype)))


def _sorted(call: ExternCall, ops: dict, dtype: Any = None) -> TensorMeta:  # sort, argsort
    a = ops["a"]
    dtype = a.dtype if dtype is None else dtype
    if call.get("order") is not None or a.dtype.kind in "OV":
        raise TypeError(f"{call.name} of a structured array")
    axis = call.get("axis", -1)
    if axis is None:
        size = 1
        for s in a.shape:
            size = size * s
        return _meta((size,), dtype)
    if a.ndim == 0:
        raise np.exceptions.AxisError(axis, 0)
    _axis(call, a)
    return TensorMeta(a.shape, np.dtype(dtype), "C" if a.layout == "C" else "A")  # (F stays F)


def _take(call: ExternCall, ops: dict) -> TensorMeta:
    """``np.take`` (and ``x[idx]``, ``idx`` an integer array): the indices' shape in place of
    the axis (``axis=None``: of the flattened array); an index out of range raises IndexError
    at run time, as NumPy does."""
    a, indices = ops["a"], ops.get("indices")
    if indices is not None and indices.dtype.kind not in "iu":
        raise IndexError("arrays used as indices must be of integer type")
    if call.get("out") is not None:
        raise TypeError("np.take with out=")
    taken = () if indices is None else tuple(indices.shape)
    if call.get("axis") is None:
        return _meta(taken, a.dtype, scalar=indices is None or indices.scalar)
    axis = _axis(call, a)
    return _meta(a.shape[:axis] + taken + a.shape[axis + 1 :], a.dtype)


def _argsort(call: ExternCall, ops: dict) -> TensorMeta:
    return _sorted(call, ops, np.intp)


def _searchsorted(call: ExternCall, ops: dict) -> TensorMeta:
    a, v = ops["a"], ops.get("v")
    if a.ndim != 1:
        raise TypeError("np.searchsorted: the sorted array must be 1-d")
    if v is None:  # a Python number
        return _meta((), np.intp, scalar=True)
    return _meta(v.shape, np.intp, scalar=v.scalar)


def _probe(function: Callable, *dtypes: np.dtype, **kwargs: Any) -> np.dtype:
    """The dtype of ``function`` on three-element arrays of ``dtypes`` (NumPy's own rules)."""
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (the call's own warnings come when it runs)
        return np.asarray(function(*(np.ones(3, d) for d in dtypes), **kwargs)).dtype


def _axis_reduction(call: ExternCall, a: TensorMeta, dtype: np.dtype) -> TensorMeta:
    """A reduction's meta: over ``axis`` (None: all; an int or a tuple), ``keepdims``."""
    axis, keepdims = call.get("axis"), bool(call.get("keepdims", False))
    axes = range(a.ndim) if axis is None else (axis,) if isinstance(axis, int) else axis
    if not all(isinstance(i, int) and -a.ndim <= i < a.ndim for i in axes):
        raise np.exceptions.AxisError(axis, a.ndim)
    reduced = {i % a.ndim for i in axes}
    shape = tuple(
        1 if i in reduced else s for i, s in enumerate(a.shape) if keepdims or i not in reduced
    )
    return _meta(shape, dtype, scalar=not shape)


def _statistic(function: Callable) -> Callable:  # median, nanmean, nansum, ptp, average
    def rule(call: ExternCall, ops: dict) -> TensorMeta:
        a = ops["a"]
        if call.get("weights") is not None:
            raise TypeError(f"{call.name} with weights")
        return _axis_reduction(call, a, _probe(function, a.dtype))

    return rule


def _quantile(function: Callable) -> Callable:  # percentile, quantile of a scalar q
    def rule(call: ExternCall, ops: dict) -> TensorMeta:
        a = ops["a"]
        if "q" in ops or not np.isscalar(call.get("q")):
            raise TypeError(f"{call.name} of several quantiles")
        return _axis_reduction(call, a, _probe(function, a.dtype, q=call.get("q")))

    return rule


def _diagonal_length(rows: Any, cols: Any, k: int) -> Any:
    return sym_max(sym_min(rows, cols - k) if k >= 0 else sym_min(rows + k, cols), 0)


def _diag(call: ExternCall, ops: dict) -> TensorMeta:
    v, k = ops["v"], call.get("k", 0)
    if not isinstance(k, int):
        raise TypeError("np.diag with a traced k")
    if v.ndim == 1:
        return _meta((v.shape[0] + abs(k),) * 2, v.dtype)
    if v.ndim == 2:  # (NumPy's read-only view of the diagonal, copied: ``_own``)
        meta = TensorMeta((_diagonal_length(*v.shape, k),), v.dtype, "A", writeable=False)
        return meta
    raise ValueError("Input must be 1- or 2-d.")


def _diagonal(call: ExternCall, ops: dict) -> TensorMeta:
    """``np.diagonal`` of a matrix, its first two axes (``np.diag``'s read-only view, copied)."""
    a, offset = ops["a"], call.get("offset", 0)
    axes = (call.get("axis1", 0) % max(a.ndim, 1), call.get("axis2", 1) % max(a.ndim, 1))
    if a.ndim != 2 or axes != (0, 1) or not isinstance(offset, int):
        raise TypeError("np.diagonal of a matrix along its two axes, with an int offset")
    return TensorMeta((_diagonal_length(*a.shape, offset),), a.dtype, "A", writeable=False)


def _convolve(call: ExternCall, ops: dict) -> TensorMeta:
    a, v, mode = ops["a"], ops["v"], call.get("mode", "full")
    if a.ndim != 1 or v.ndim != 1 or mode not in ("full", "same", "valid"):
        raise TypeError(f"{call.name} of 1-d arrays, mode full, same or valid")
    n, m = a.shape[0], v.shape[0]
    size = {"full": n + m - 1, "same": sym_max(n, m), "valid": sym_max(n, m) - sym_min(n, m) + 1}
    return _meta((size[mode],), _probe(np.convolve, a.dtype, v.dtype))


def _interp(call: ExternCall, ops: dict) -> TensorMeta:
    x, fp = ops.get("x"), ops["fp"]
    dtype = np.dtype(np.complex128 if fp.dtype.kind == "c" else np.float64)
    return _meta((), dtype, scalar=True) if x is None else _meta(x.shape, dtype, scalar=x.scalar)


def _histogram(call: ExternCall, ops: dict) -> TupleMeta:
    """``np.histogram`` of a number of bins, or of the edges given (an array, or a sequence
    the tracer made a constant one): their counts (or sums of ``weights``, or a density) and
    edges; without ``range=`` the edges follow the data's extremes, a value of its own type,
    but their number does not."""
    a, bins, weights = ops["a"], call.get("bins", 10), ops.get("weights")
    edges = ops.get("bins")  # (edges given: an array, or a sequence made a constant one)
    if edges is not None and edges.ndim != 1:
        raise ValueError("`bins` must be 1d, when an array")
    if edges is None and (not isinstance(bins, int) or isinstance(bins, bool)):
        raise TypeError("np.histogram with bins given as a string")
    if weights is not None and (
        weights.ndim != a.ndim
        or not all(
            decide("==", w, n, "np.histogram's weights") for w, n in zip(weights.shape, a.shape)
        )
    ):
        raise ValueError("weights should have the same shape as a.")
    span = call.get("range") or (0, 1)
    dtypes = (a.dtype,) if weights is None else (a.dtype, weights.dtype)
    density = bool(call.get("density"))
    span = None if edges is not None else span  # (NumPy ignores a range beside edges)
    counts = _probe(lambda x, *w: np.histogram(x, 2, span, density, *w)[0], *dtypes)
    if edges is not None:  # (NumPy's edges are the array given)
        return TupleMeta((_meta((edges.shape[0] - 1,), counts), _meta(edges.shape, edges.dtype)))
    edges = _probe(lambda x: np.histogram(x, 2, call.get("range"))[1], a.dtype)
    return TupleMeta((_meta((bins,), counts), _meta((bins + 1,), edges)))


def _norm(call: ExternCall, ops: dict) -> TensorMeta:
    """``np.linalg.norm``: a vector norm over one axis, a matrix norm over two, or the 2-norm
    of the flattened array (``axis=None``, no ``ord``); real, single precision stays single."""
    x, axis, order = ops["x"], call.get("axis"), call.get("ord")
    if axis is None and order is not None and x.ndim not in (1, 2):
        raise ValueError("Improper number of dimensions to norm.")
    if axis is not None and not isinstance(axis, (int, tuple)):
        raise TypeError("'axis' must be None, an integer or a tuple of integers")
    if isinstance(axis, tuple) and len(axis) > 2:
        raise ValueError("Improper number of dimensions to norm.")
    dtype = _probe(np.linalg.norm, x.dtype)
    return _axis_reduction(call, x, dtype)


def _count(a: TensorMeta) -> Any:
    total = 1
    for size in a.shape:
        total = total * size
    return total


def _positions(call: ExternCall, ops: dict) -> TensorMeta | TupleMeta:  # nonzero, argwhere, ...
    a = next(iter(ops.values()))
    if a.ndim == 0:
        raise TypeError(f"{call.name} of a 0-d array")
    (length,) = call.lengths
    if call.function is np.nonzero:
        return TupleMeta(tuple(_meta((length,), np.intp) for _ in range(a.ndim)))
    if call.function is np.argwhere:
        return _meta((length, a.ndim), np.intp)
    return _meta((length,), np.intp)  # flatnonzero


def _extract(call: ExternCall, ops: dict) -> TensorMeta:
    return _meta(call.lengths, ops["arr"].dtype)


def _compress(call: ExternCall, ops: dict) -> TensorMeta:
    a, axis = ops["a"], call.get("axis")
    if ops["condition"].ndim != 1:
        raise ValueError("condition must be a 1-d array")
    if axis is None:
        return _meta(call.lengths, a.dtype)
    return _meta(_resized(a, _axis(call, a), call.lengths[0]), a.dtype)


def _unique(call: ExternCall, ops: dict) -> TensorMeta | TupleMeta:
    a = ops["ar"]
    if call.get("axis") is not None or a.dtype.kind not in "biuf":
        raise TypeError("np.unique of numbers along no axis")
    (length,) = call.lengths
    results = [_meta((length,), a.dtype)]
    if call.get("return_index"):
        results.append(_meta((length,), np.intp))
    if call.get("return_inverse"):
        results.append(_meta(a.shape, np.intp))
    if call.get("return_counts"):
        results.append(_meta((length,), np.intp))
    return TupleMeta(tuple(results)) if len(results) > 1 else results[0]


def _set_operation(call: ExternCall, ops: dict) -> TensorMeta | TupleMeta:
    """``np.setdiff1d`` (``ar1``'s dtype), ``np.union1d``, ``np.intersect1d`` (its positions
    too, with ``return_indices``) and ``np.setxor1d``: a sorted vector of a length the data
    decide."""
    ar1, ar2 = ops["ar1"], ops["ar2"]
    if any(m.dtype.kind not in "biufc" for m in (ar1, ar2)):
        raise TypeError(f"{call.name} of numbers")
    dtype = ar1.dtype if call.function is np.setdiff1d else np.result_type(ar1.dtype, ar2.dtype)
    values = _meta(call.lengths, dtype)
    if call.function is np.intersect1d and call.get("return_indices"):
        return TupleMeta((values, _meta(call.lengths, np.intp), _meta(call.lengths, np.intp)))
    return values


def _set_interval(call: ExternCall, ops: dict) -> tuple:
    first, second = _count(ops["ar1"]), _count(ops["ar2"])
    if call.function is np.setdiff1d:
        return ((0, first),)
    if call.function is np.intersect1d:
        return ((0, sym_min(first, second)),)
    return ((0, first + second),)


def _bincount(call: ExternCall, ops: dict) -> TensorMeta:
    x, weights = ops["x"], ops.get("weights")
    if x.ndim != 1 or x.dtype.kind not in "iub":
        raise TypeError("np.bincount of a 1-d array of integers")
    return _meta(call.lengths, np.float64 if weights is not None else np.intp)


def _trim_zeros(call: ExternCall, ops: dict) -> TensorMeta:
    a = ops["filt"]
    if a.ndim != 1 or call.get("axis") is not None:
        raise TypeError("np.trim_zeros of a 1-d array")
    return _meta(call.lengths, a.dtype)


def _bincount_interval(call: ExternCall, ops: dict) -> tuple:
    minlength = call.get("minlength", 0)
    if not isinstance(minlength, int) or minlength < 0:
        raise TypeError("np.bincount with minlength a non-negative int")
    return ((minlength, None),)


CARRIER = np.empty  # (NumPy's own: while tracing, ``np.empty`` is the tracer's patch)


def _carrier(call: ExternCall, ops: dict) -> TensorMeta:
    """``np.empty(shape=#0, dtype=bool)`` of a traced integer scalar: the vector whose length
    makes that integer a size (``numpy_calls.size_of``)."""
    shape = ops["shape"]  # (a traced integer, or the int it was folded to)
    folded = isinstance(shape, (int, np.integer)) and not isinstance(shape, bool)
    if not folded and (shape.ndim or shape.dtype.kind not in "iu"):
        raise TypeError("np.empty of a length: an integer scalar")
    return _meta(call.lengths, call.get("dtype", np.float64))


# function -> the intervals of its result lengths the data decide (``(lo, hi)``, hi None:
# unbounded), from the call and its operands' metas
DATA_SIZED: dict[Callable, Callable] = {
    np.empty: lambda call, ops: ((0, None),),
    np.nonzero: lambda call, ops: ((0, _count(ops["a"])),),
    np.flatnonzero: lambda call, ops: ((0, _count(ops["a"])),),
    np.argwhere: lambda call, ops: ((0, _count(ops["a"])),),
    np.extract: lambda call, ops: ((0, _count(ops["arr"])),),
    np.compress: lambda call, ops: (
        (
            0,
            _count(ops["a"]) if call.get("axis") is None else ops["a"].shape[_axis(call, ops["a"])],
        ),
    ),
    np.unique: lambda call, ops: ((0, _count(ops["ar"])),),
    np.bincount: _bincount_interval,
    np.trim_zeros: lambda call, ops: ((0, ops["filt"].shape[0] if ops["filt"].ndim else 0),),
    np.linalg.lstsq: lambda call, ops: ((0, ops["b"].shape[1] if ops["b"].ndim == 2 else 1),),
    **dict.fromkeys((np.setdiff1d, np.union1d, np.intersect1d, np.setxor1d), _set_interval),
}

# function -> (printed name, rule(call, operand metas by parameter name) -> meta, the parameters
# that take arrays: the node's operands; every other argument is a value in the call)
RULES: dict[Callable, tuple[str, Callable, tuple]] = {
    np.empty: ("np.empty", _carrier, ("shape",)),
    np.linalg.solve: ("np.linalg.solve", _solve, ("a", "b")),
    np.linalg.inv: ("np.linalg.inv", _same_shape, ("a",)),
    np.linalg.lstsq: ("np.linalg.lstsq", _lstsq, ("a", "b")),
    np.linalg.cholesky: ("np.linalg.cholesky", _same_shape, ("a",)),
    np.linalg.det: ("np.linalg.det", _det, ("a",)),
    np.linalg.eigh: ("np.linalg.eigh", _eigh, ("a",)),
    np.linalg.eigvalsh: ("np.linalg.eigvalsh", _eigvalsh, ("a",)),
    np.linalg.norm: ("np.linalg.norm", _norm, ("x",)),
    np.fft.fft: ("np.fft.fft", _fft, ("a",)),
    np.fft.ifft: ("np.fft.ifft", _fft, ("a",)),
    np.fft.rfft: ("np.fft.rfft", _rfft, ("a",)),
    np.fft.irfft: ("np.fft.irfft", _irfft, ("a",)),
    np.sort: ("np.sort", _sorted, ("a",)),
    np.argsort: ("np.argsort", _argsort, ("a",)),
    np.take: ("np.take", _take, ("a", "indices")),
    np.searchsorted: ("np.searchsorted", _searchsorted, ("a", "v", "sorter")),
    np.median: ("np.median", _statistic(np.median), ("a",)),
    np.nanmean: ("np.nanmean", _statistic(np.nanmean), ("a",)),
    np.nansum: ("np.nansum", _statistic(np.nansum), ("a",)),
    np.nanmax: ("np.nanmax", _statistic(np.nanmax), ("a",)),
    np.nanmin: ("np.nanmin", _statistic(np.nanmin), ("a",)),
    np.ptp: ("np.ptp", _statistic(np.ptp), ("a",)),
    np.average: ("np.average", _statistic(np.average), ("a", "weights")),
    np.percentile: ("np.percentile", _quantile(np.percentile), ("a", "q")),
    np.quantile: ("np.quantile", _quantile(np.quantile), ("a", "q")),
    np.diag: ("np.diag", _diag, ("v",)),
    np.diagonal: ("np.diagonal", _diagonal, ("a",)),
    np.convolve: ("np.convolve", _convolve, ("a", "v")),
    np.interp: ("np.interp", _interp, ("x", "xp", "fp")),
    np.histogram: ("np.histogram", _histogram, ("a", "bins", "weights")),
    np.nonzero: ("np.nonzero", _positions, ("a",)),
    np.flatnonzero: ("np.flatnonzero", _positions, ("a",)),
    np.argwhere: ("np.argwhere", _positions, ("a",)),
    np.extract: ("np.extract", _extract, ("condition", "arr")),
    np.compress: ("np.compress", _compress, ("condition", "a")),
    np.unique: ("np.unique", _unique, ("ar",)),
    **{
        f: (f"np.{f.__name__}", _set_operation, ("ar1", "ar2"))
        for f in (np.setdiff1d, np.union1d, np.intersect1d, np.setxor1d)
    },
    np.bincount: ("np.bincount", _bincount, ("x", "weights")),
    np.trim_zeros: ("np.trim_zeros", _trim_zeros, ("filt",)),
}

# Library calls that raise nothing the values decide (only their shapes, known when traced): a
# loop may compute them once, before it (``passes/hoist.py``), even when it runs no trip.
TOTAL = frozenset(
    {
        np.diag,
        np.diagonal,
        np.sort,
        np.argsort,
        np.searchsorted,
        np.nonzero,
        np.flatnonzero,
        np.argwhere,
        np.unique,
        np.trim_zeros,
    }
)
