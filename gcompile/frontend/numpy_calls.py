"""NumPy calls on traced arrays, recorded through the op table: ufuncs (with ``out=``, ``where``,
``.reduce``/``.accumulate``), NumPy functions, creation functions and decompositions. Each call's
parameters are bound to NumPy's signature, checked against the op's, and normalised; the
recorder (``recorder.Tracer``) adds the node.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from ..errors import user_source
from ..ir import externs, ops
from ..ir.meta import TupleMeta, broadcast_shapes, meta_of, unsupported_dtype_reason
from ..ir.shape_env import SymbolicError, decide, hint
from ..ir.symbolic import is_expr
from .decompositions import DECOMPOSITIONS, Decomposition
from .scatters import ufunc_at
from .symint import SymInt, unwrap
from .traced_array import (
    UFUNC_OPS,
    TracedArray,
    decided_by_scalars,
    holds_traced,
    optional_ufunc_op,
)

if TYPE_CHECKING:
    from .recorder import Tracer

_FUNCTION_OPS = {
    f: op
    for op in ops.OPS
    for f in op.numpy
    if not isinstance(f, np.ufunc) and op.kind != "creation"
}

CREATION_OPS = {f: op for op in ops.OPS if op.kind == "creation" for f in op.numpy}
_REDUCE_OPS = {op.reduces: op for op in ops.OPS if op.reduces is not None}

_ACCUMULATE_OPS = {op.accumulates: op for op in ops.OPS if op.accumulates is not None}

_ALLOWED_UFUNC_KWARGS = {
    "where": True,
    "casting": "same_kind",
    "order": "K",
    "subok": True,
    "signature": None,
}


# functions whose one length the data decide depends on one argument (named) alone, and on
# which of their parameters: calls alike share it (``x[m]``, ``y[m]``, ``np.flatnonzero(m)``:
# the count of the condition's nonzero elements; two ``np.bincount`` of one array)
_LENGTH_OF = {
    np.nonzero: ("nonzero", "a", ()),
    np.flatnonzero: ("nonzero", "a", ()),
    np.argwhere: ("nonzero", "a", ()),
    np.extract: ("nonzero", "condition", ()),
    np.compress: ("nonzero", "condition", ()),
    np.unique: ("unique", "ar", ("equal_nan",)),
    np.bincount: ("bincount", "x", ("minlength",)),
    externs.CARRIER: ("length", "shape", ()),  # (a traced integer used as a size: ``size_of``)
}


def _length_key(call: externs.ExternCall, operands: list) -> tuple | None:
    """What decides ``call``'s one data length (``_LENGTH_OF``), or None."""
    found = _LENGTH_OF.get(call.function)
    argument = call.get(found[1]) if found else None
    if not isinstance(argument, externs.Operand):
        return None
    kind, _, parameters = found
    return (kind, operands[argument.index]._node, *(call.get(p) for p in parameters))


def _numpy_name(func: Any) -> str:
    library = externs.library_name(func)
    if library is not None:
        return library
    module = getattr(func, "__module__", None) or "numpy"
    module = "np" if module in ("numpy", "numpy._core.multiarray", "numpy._core.umath") else module
    return f"{module}.{getattr(func, '__name__', repr(func))}"


def _library_of(name: str) -> str:
    """Whose function ``name`` (of ``_numpy_name``) is, for messages: SciPy's or NumPy's."""
    return "SciPy" if name.startswith("scipy.") else "NumPy"


def _same(value: Any, default: Any) -> bool:
    if value is default:
        return True
    try:
        return bool(value == default)
    except Exception:
        return False


def _normalize_param(key: str, value: Any) -> Any:
    value = unwrap(value)
    if key == "dtype" and value is not None:
        return np.dtype(value)
    if key == "shape" and is_expr(value):
        return (value,)
    if key == "shape" and np.ndim(value) == 0:
        return (int(value),)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, list):
        value = tuple(value)
    if isinstance(value, tuple):
        return tuple(int(v) if isinstance(v, np.integer) else v for v in value)
    return value


@functools.lru_cache(maxsize=None)
def _signature(func: Callable) -> inspect.Signature:
    return inspect.signature(func)


def _bind(func: Callable, args: tuple, kwargs: dict) -> dict:
    """NumPy's own signature binding: the arguments passed explicitly, by parameter name."""
    bound = _signature(func).bind(*args, **kwargs)
    arguments = dict(bound.arguments)
    for param in _signature(func).parameters.values():
        if param.kind is inspect.Parameter.VAR_KEYWORD and param.name in arguments:
            arguments.update(arguments.pop(param.name))
    return arguments


# -- the tracer active in this thread ------------------------------------------------------------


class NumpyCalls:
    """The NumPy calls of one trace, recorded by its ``tracer``."""

    def __init__(self, tracer: "Tracer"):
        self.tracer = tracer

    def ufunc(
        self,
        ufunc: np.ufunc,
        method: str,
        inputs: tuple,
        kwargs: dict,
        python_operator: bool = False,
    ) -> Any:
        """Record a ufunc call or ufunc method (``reduce``, ``accumulate``, ``outer``, ``at``)."""
        if method == "reduce":
            return self._ufunc_reduction(ufunc, _REDUCE_OPS, ufunc.reduce, inputs, kwargs)
        if method == "accumulate":
            return self._ufunc_reduction(ufunc, _ACCUMULATE_OPS, ufunc.accumulate, inputs, kwargs)
        if method == "outer":
            return self._outer(ufunc, inputs, kwargs)
        if method == "at":
            return ufunc_at(self.tracer, ufunc, inputs, kwargs)
        if method != "__call__":
            self.tracer.refuse(f"the ufunc method np.{ufunc.__name__}.{method}")
        if len(inputs) > ufunc.nin:  # outputs given positionally
            kwargs = {**kwargs, "out": inputs[ufunc.nin :]}
            inputs = inputs[: ufunc.nin]
        out = kwargs.pop("out", None)
        if out is not None and not isinstance(out, tuple):
            out = (out,)
        if out is not None and all(o is None for o in out):
            out = None
        for key, value in kwargs.items():
            if key == "dtype":
                continue
            if key not in _ALLOWED_UFUNC_KWARGS or not _same(value, _ALLOWED_UFUNC_KWARGS[key]):
                self.tracer.refuse(f"np.{ufunc.__name__}(..., {key}=...)")
        params = {"dtype": np.dtype(kwargs["dtype"])} if kwargs.get("dtype") is not None else {}
        decomposition = DECOMPOSITIONS.get(ufunc)
        if decomposition is not None:
            return self._finish(
                decomposition.fn(self.tracer, *inputs, **params), out, ufunc.__name__
            )
        op = UFUNC_OPS.get(ufunc) or optional_ufunc_op(ufunc)
        if op is None and (out is not None or params):
            self.tracer.refuse(f"the ufunc {ufunc.__name__} with out= or dtype=")
        if op is None:  # (SciPy's special functions: a library call, its results probed)
            return self.probed_extern(ufunc, tuple(inputs), {})
        operands = list(inputs)
        if op.kind == "elementwise" and not python_operator:
            operands = self._strengthen(operands)
        boolean = params.get("dtype", np.dtype(bool)) == np.dtype(bool)
        exact = _exact_comparison(ufunc, operands) if boolean else None
        if exact is not None:
            return self._finish(exact, out, ufunc.__name__)
        if ufunc not in _COMPARISONS:
            operands = self._weak_ints_in_range(ufunc, operands, params.get("dtype"))
        result = self.tracer.call(op, *operands, **params)
        if op.dunder and not python_operator and not params and _scalars(operands):
            # np.power(2, s) of NumPy scalars runs the ufunc's loop, 2 ** s scalar arithmetic
            # (an ulp apart): the dtype, as given, keeps evaluation on the ufunc (ops.evaluate)
            result._node.kwargs = {"dtype": result.dtype}
        return self._finish(result, out, ufunc.__name__)

    def _strengthen(self, operands: list) -> list:
        """NumPy functions return NumPy scalars: a call on Python scalars only is not Python arithmetic."""
        weak = [isinstance(x, TracedArray) and x.meta.weak for x in operands]
        strong = [
            isinstance(x, TracedArray)
            and not x.meta.weak
            or isinstance(x, (np.ndarray, np.generic))
            for x in operands
        ]
        if any(strong) or not any(weak):
            return operands
        first = weak.index(True)
        operands[first] = self.tracer.call(ops.ASTYPE, operands[first], dtype=operands[first].dtype)
        return operands

    def _outer(self, ufunc: np.ufunc, inputs: tuple, kwargs: dict) -> Any:
        """``ufunc.outer(a, b)``: the call on ``a`` given ``b``'s axes after its own."""
        a, b = inputs
        a_shape = np.shape(a) if not isinstance(a, TracedArray) else a.shape
        b_ndim = np.ndim(b) if not isinstance(b, TracedArray) else b.ndim
        return self.ufunc(ufunc, "__call__", (np.reshape(a, a_shape + (1,) * b_ndim), b), kwargs)

    def _weak_ints_in_range(self, ufunc: np.ufunc, operands: list, dtype: Any) -> list:
        """A Python int known at run time only, which NumPy converts to the integer dtype of
        the loop it picks for it (``int8_array + i``: int8; ``int8_array / i``: float64, no
        conversion), checked against that dtype's range: NumPy 2 raises OverflowError for
        ``int8_array + 200`` where a kernel would wrap the int."""
        weak = [_weak_int(o) for o in operands]
        if not any(weak) or all(weak):
            return operands
        given = [int if w else getattr(o, "dtype", type(o)) for o, w in zip(operands, weak)]
        given = (*given, *(None,) * ufunc.nout)
        fixed = {} if dtype is None else {"signature": (None,) * ufunc.nin + (dtype,) * ufunc.nout}
        try:
            loop = ufunc.resolve_dtypes(given, **fixed)
        except (TypeError, ValueError):  # (NumPy picks no loop: the call raises as eager's)
            return operands
        return [
            self._int_in_range(o, loop[i]) if w and loop[i].kind in "iu" else o
            for i, (o, w) in enumerate(zip(operands, weak))
        ]

    def _int_in_range(self, value: Any, dtype: np.dtype) -> TracedArray:
        """``value``, a run-time Python int, checked to fit ``dtype`` (else OverflowError)."""
        info = np.iinfo(dtype)
        if info.min <= np.iinfo(np.int64).min and info.max >= np.iinfo(np.int64).max:
            return value
        traced = self.tracer.symint_value(value.expr) if isinstance(value, SymInt) else value
        in_range = (traced >= int(info.min)) & (traced <= int(info.max))
        message = f"Python integer out of bounds for {dtype}"
        return self.tracer.call(ops.CHECK, traced, in_range, error="OverflowError", message=message)

    def _ufunc_reduction(
        self, ufunc: np.ufunc, table: dict, method: Callable, inputs: tuple, kwargs: dict
    ) -> Any:
        name = f"np.{ufunc.__name__}.{method.__name__}"
        if ufunc not in UFUNC_OPS or ufunc.nin != 2:
            self.tracer.refuse(f"the ufunc method {name}")
        bound = _bind(method, inputs, kwargs)
        out = bound.pop("out", None)
        array = bound.pop("array")
        op = table.get(ufunc)
        generic = ops.REDUCE if method.__name__ == "reduce" else ops.ACCUMULATE
        params = {} if op is not None else {"ufunc": ufunc}
        params["axis"] = _normalize_param("axis", bound.pop("axis", 0))
        if bound.get("dtype") is not None:
            params["dtype"] = np.dtype(bound["dtype"])
        bound.pop("dtype", None)
        if bound.pop("keepdims", False):
            params["keepdims"] = True
        op = op or generic
        for key in [*bound, *(k for k in params if k not in op.params)]:
            self.tracer.refuse(f"{name}(..., {key}=...)")
        return self._finish(self.tracer.call(op, array, **params), out, name)

    def array_function(self, func: Callable, args: tuple, kwargs: dict) -> Any:
        """Record a NumPy function call dispatched through ``__array_function__``."""
        name = _numpy_name(func)
        decomposition = DECOMPOSITIONS.get(func)
        if decomposition is not None:
            return self.decompose(func, decomposition, args, kwargs)
        op = _FUNCTION_OPS.get(func)
        if op is None and func in externs.RULES:
            return self.extern(func, args, kwargs)
        if op is None and externs.probeable(func):
            return self.probed_extern(func, args, kwargs)
        if op is None:
            self.tracer.refuse(
                f"the {_library_of(name)} function {name}",
                hint="compute it with supported NumPy operations, or "
                "call it outside the compiled function",
            )
        bound = _bind(func, args, kwargs)
        out = bound.pop("out", None)
        operands = []
        for key in op.operands:
            if key not in bound:
                break
            value = bound.pop(key)
            operands.extend(value if key == "arrays" else [value])
        if op is ops.WHERE and len(operands) == 1:  # (NumPy's own spelling of np.nonzero)
            return self.extern(np.nonzero, tuple(operands), {})
        params = self._params(op, name, func, bound)
        return self._finish(self.tracer.call(op, *operands, **params), out, name)

    def extern(self, func: Callable, args: tuple, kwargs: dict) -> Any:
        """A library call (``ir/externs.py``): one ``extern`` node whose operands are the
        call's arrays; its results (``kernel_output`` of each, for several) as traced values."""
        name, _, arrays = externs.RULES[func]
        bound = _bind(func, args, kwargs)
        if bound.get("out") is not None:
            self.tracer.refuse(f"{name}(..., out=...)")
        operands, arguments = [], []
        for key, value in bound.items():
            if key in arrays and (
                isinstance(value, TracedArray)  # (a 0-d one too, which np.isscalar calls scalar)
                or (value is not None and not np.isscalar(value) and not isinstance(value, SymInt))
            ):
                arguments.append((key, externs.Operand(len(operands))))
                operands.append(value)
            elif holds_traced(value):
                decided_by_scalars(value)
                self.tracer.refuse(f"a traced value as the {key!r} argument of {name}")
            else:  # (a list as the tuple NumPy takes it for: the call is a hashable parameter)
                value = tuple(value) if isinstance(value, list) else value
                arguments.append((key, int(value) if isinstance(value, SymInt) else value))
        call = externs.ExternCall(name, func, tuple(arguments), len(args))
        try:
            if func in externs.DATA_SIZED:
                call = self._with_lengths(call, operands)
            return self._extern_results(operands, call)
        except TypeError as error:
            self.tracer.refuse(f"{name} on these arguments ({error})")

    def _with_lengths(self, call: externs.ExternCall, operands: list) -> externs.ExternCall:
        """``call`` holding a new unbacked symbol for each result length the data decide."""
        env = self.tracer.graph.shape_env
        metas = {k: _operand_meta(operands[v.index]) for k, v in call.arguments
                 if isinstance(v, externs.Operand)}  # fmt: skip
        key = _length_key(call, operands)
        known = self._known_length(key)
        graph = self.tracer.graph
        if known is not None and known[1] is graph and not graph.written_after(known[2], key[1]):
            return dataclasses.replace(call, lengths=(known[0],))
        origin = f"{call.name} at {user_source()}"
        lengths = tuple(
            env.data_size(lo, hi, origin)
            for lo, hi in externs.DATA_SIZED[call.function](call, metas)
        )
        if key is not None:
            self.tracer.data_lengths[key] = (lengths[0], graph, graph.insertion_anchor())
        return dataclasses.replace(call, lengths=lengths)

    def _known_length(self, key: tuple | None) -> tuple | None:
        """The length recorded for ``key``, or for a key alike whose argument is the same
        computation (``(x > 0).nonzero()`` and ``np.argwhere(x > 0)``)."""
        lengths = self.tracer.data_lengths
        if key is None or key in lengths:
            return lengths.get(key)
        from .masks import same_value  # (masks builds on this module's calls)

        for other, known in lengths.items():
            if other[0] == key[0] and other[2:] == key[2:] and same_value(other[1], key[1]):
                return known
        return None

    def probed_extern(self, func: Callable, args: tuple, kwargs: dict) -> Any:
        """A NumPy function without a rule (``ir/externs.py``): one ``extern`` node whose
        results are what the function returned when probed at the traced sizes, guarded."""
        name = _numpy_name(func).replace("numpy.", "np.", 1)
        operands: list = []
        try:
            arguments = [
                (f"#{i}", self._probe_argument(name, v, operands)) for i, v in enumerate(args)
            ]
            arguments += [(k, self._probe_argument(name, v, operands)) for k, v in kwargs.items()]
        except SymbolicError as error:
            self.tracer.refuse(f"{name} on sizes that vary in a loop", detail=str(error))
        call = externs.ExternCall(name, func, tuple(arguments), len(args))
        try:
            call = dataclasses.replace(call, probed=externs.probe(call, _stand_ins(operands)))
        except Exception as error:  # noqa: BLE001 - any failure of the probe: not captured
            self.tracer.refuse(
                f"the {_library_of(name)} function {name} on these arguments "
                f"({type(error).__name__}: {error})"
            )
        try:
            again = externs.probe(call, _stand_ins(operands, second=True))
        except Exception:  # noqa: BLE001 - (values it refuses: the first probe stands)
            again = call.probed
        if again != call.probed:
            self.tracer.refuse(
                f"{name} here: the shape of its result depends on its arguments' values",
                hint="keep the values at full shape, or call it outside the compiled function",
            )
        return self._extern_results(operands, call)

    def _extern_results(self, operands: list, call: externs.ExternCall) -> Any:
        """One ``extern`` node of ``call``: its result, or a tuple of ``kernel_output``s."""
        result = self.tracer.call(ops.EXTERN, *operands, call=call)
        if not isinstance(result.meta, TupleMeta):
            if not result.meta.writeable and operands and isinstance(operands[0], TracedArray):
                self.tracer.regions.take(result._node)  # (NumPy's read-only view: np.diagonal)
            return result
        items = range(len(result.meta.items))
        return tuple(self.tracer.call(ops.KERNEL_OUTPUT, result, item=i) for i in items)

    def _probe_argument(self, name: str, value: Any, operands: list) -> Any:
        """An argument of a probed call: a traced array an ``Operand`` (its sizes guarded as
        they are), a size an int, a list or tuple of those a tuple; nothing deeper."""
        env = self.tracer.graph.shape_env
        if isinstance(value, TracedArray) and not value.ndim and value.dtype.kind in "biu":
            decided_by_scalars(value)  # (an int argument's, which may decide a size: np.tile)
        if isinstance(value, TracedArray):
            for size in value.meta.shape:
                env.specialize(size, f"{name} was probed at these sizes")
            operands.append(value)
            return externs.Operand(len(operands) - 1)
        if isinstance(value, np.ndarray):  # (a constant: the probe calls with its values)
            operands.append(value)
            return externs.Operand(len(operands) - 1)
        if isinstance(value, SymInt):
            return int(value)
        if isinstance(value, (list, tuple)):  # (a tuple: a call's arguments are hashable)
            if any(holds_traced(v) for v in value if isinstance(v, (list, tuple))):
                self.tracer.refuse(f"nested lists of traced arrays as an argument of {name}")
            return tuple(self._probe_argument(name, v, operands) for v in value)
        try:
            hash(value)
        except TypeError:
            self.tracer.refuse(f"a {type(value).__name__} as an argument of {name}")
        return value

    def _params(self, op: ops.OpDef, name: str, func: Callable, bound: dict) -> dict:
        defaults = {p.name: p.default for p in _signature(func).parameters.values()}
        params = {}
        for key, value in bound.items():
            if key not in op.params:
                if _same(value, defaults.get(key, inspect.Parameter.empty)):
                    continue
                self.tracer.refuse(f"{name}(..., {key}=...)")
            params[key] = _normalize_param(key, value)
        return params

    def decompose(
        self, func: Callable, decomposition: Decomposition, args: tuple, kwargs: dict
    ) -> Any:
        name = _numpy_name(func)
        bound = _bind(func, args, kwargs)
        out = bound.pop("out", None)
        accepted = _signature(decomposition.fn).parameters
        if not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in accepted.values()):
            defaults = {p.name: p.default for p in _signature(func).parameters.values()}
            for key in list(bound):
                if key not in accepted:
                    if _same(bound[key], defaults.get(key, inspect.Parameter.empty)):
                        del bound[key]
                    else:
                        self.tracer.refuse(f"{name}(..., {key}=...)")
        return self._finish(decomposition.fn(self.tracer, **bound), out, name)

    def creation(self, func: Callable, args: tuple, kwargs: dict) -> TracedArray:
        """Record a creation function (``np.zeros``) called while tracing; a traced integer
        given as a size (``np.zeros(n + 1)``, ``np.linspace(a, b, n)``, ``np.arange(n)``) is
        one the data decide (``size_of``)."""
        op = CREATION_OPS[func]
        signature = op.binding or func
        bound = _bind(signature, args, kwargs)
        dtype = bound.get("dtype")
        reason = None if dtype is None else unsupported_dtype_reason(np.dtype(dtype))
        if reason:
            self.tracer.refuse(f"{_numpy_name(func)} of a {reason}")
        if op is ops.ARANGE and any(isinstance(v, TracedArray) for v in bound.values()):
            return self._arange_of_data_length(**bound)
        bound = {k: self.as_size(v) if k in _SIZE_PARAMETERS else v for k, v in bound.items()}
        decomposition = DECOMPOSITIONS.get(func)
        if decomposition is not None and holds_traced(tuple(bound.values())):
            return self.decompose(func, decomposition, (), bound)  # (linspace's bounds)
        operands = [bound.pop(key) for key in op.operands if key in bound]
        params = self._params(op, _numpy_name(func), signature, bound)
        return self.tracer.call(op, *operands, **params)

    def _arange_of_data_length(self, start, stop=None, step=1, dtype=None) -> TracedArray:
        """``np.arange`` of traced Python integers (``np.arange(n + 1)``, ``n = int(...)``):
        ``start + step * np.arange(length)``, its length ``max(ceil((stop - start) / step),
        0)`` one the data decide (``size_of``)."""
        start, stop = (0, start) if stop is None else (start, stop)
        bounds = (start, stop)
        weak = all(
            v.meta.weak and v.meta.scalar and v.dtype.kind == "i"
            if isinstance(v, TracedArray)
            else isinstance(v, (int, SymInt))
            for v in bounds
        )
        if not weak or dtype is not None or not isinstance(step, int) or step == 0:
            self.tracer.refuse(
                "np.arange of traced values other than Python integers, with a literal step",
                hint="np.arange(n) * h for a float grid",
            )
        length = np.maximum(-((start - stop) // step), 0)
        positions = self.tracer.call(
            ops.ARANGE, start=0, stop=self.size_of(length), step=1, dtype=np.dtype(np.int64)
        )
        return start + positions * step

    def as_size(self, value: Any) -> Any:
        """``value`` (a size, or a tuple or list of them) with each traced integer scalar made a
        size (``size_of``)."""
        if isinstance(value, (tuple, list)):
            return type(value)(self.as_size(v) for v in value)
        if isinstance(value, TracedArray) and value.meta.scalar and value.dtype.kind in "iu":
            return self.size_of(value)
        return value

    def size_of(self, value: TracedArray) -> SymInt:
        """A traced integer scalar used as a size (``n = int(np.ceil(t_end / h))``): a length
        the data decide (an unbacked symbol), bound on each call by a vector of that length,
        ``np.empty(n, dtype=bool)`` (which raises NumPy's ValueError for a negative one).
        Values alike share the symbol."""
        call = externs.ExternCall(
            "np.empty", externs.CARRIER, (("shape", externs.Operand(0)), ("dtype", "bool"))
        )
        env = self.tracer.graph.shape_env
        known = len(env.data_sizes)
        call = self._with_lengths(call, [value])
        if len(env.data_sizes) > known:  # (a new length: its vector binds it)
            self._extern_results([value], call)
            self.tracer.sized_by[call.lengths[0]] = value._node
        return SymInt(self.tracer, call.lengths[0])

    def _finish(self, result: Any, out: tuple | None, name: str) -> Any:
        """Write ``result`` into ``out`` as NumPy would (same_kind casting, exact shape) and return ``out``."""
        if out is None:
            return result
        out = out if isinstance(out, tuple) else (out,)
        results = result if isinstance(result, tuple) else (result,)
        if len(out) != len(results):
            raise ValueError(f"{name}: expected {len(results)} output arrays, got {len(out)}")
        for target, value in zip(out, results):
            if not isinstance(target, TracedArray):
                self.tracer.refuse(
                    f"{name}(..., out=...) writing into an array that is not an argument of the function",
                    hint="let the function return the result, or pass the output array as an argument",
                )
            if not np.can_cast(value.dtype, target.dtype, "same_kind"):
                raise TypeError(
                    f"Cannot cast {name} output from {value.dtype!r} to {target.dtype!r} with "
                    f"casting rule 'same_kind'"
                )
            value_shape = value.meta.shape if isinstance(value, TracedArray) else np.shape(value)
            broadcast = broadcast_shapes(value_shape, target.meta.shape)
            if (
                not all(
                    decide("==", a, b, "an out= array's shape")
                    for a, b in zip(broadcast, target.meta.shape)
                )
                or len(broadcast) != target.ndim
            ):
                raise ValueError(
                    f"non-broadcastable output operand with shape {target.shape} doesn't match the "
                    f"broadcast shape {broadcast}"
                )
            self.tracer.write(target, value, (Ellipsis,))
        return out[0] if len(out) == 1 else out


# the parameters of creation functions that are sizes (or shapes): a traced integer given there
# is a length the data decide
_SIZE_PARAMETERS = frozenset(("shape", "num", "N", "M"))


def _operand_meta(operand: Any) -> Any:
    """The meta of a library call's array operand: a traced one's, or a constant's (a list)."""
    return operand.meta if isinstance(operand, TracedArray) else meta_of(np.asarray(operand))


def _stand_ins(operands: list, second: bool = False) -> list:
    """A probe's values for a library call's operands: the traced ones' ``probe_value``s at
    the traced sizes, constants as they are."""
    return [
        externs.probe_value(
            dataclasses.replace(v.meta, shape=tuple(map(hint, v.meta.shape))), second
        )
        if isinstance(v, TracedArray)
        else v
        for v in operands
    ]


def _scalars(operands: list) -> bool:
    """Whether every operand is a scalar (traced or not), one of them a traced NumPy scalar."""
    traced = [v for v in operands if isinstance(v, TracedArray)]
    return (
        bool(traced)
        and all(v.meta.scalar if isinstance(v, TracedArray) else np.ndim(v) == 0 for v in operands)
        and any(not v.meta.weak for v in traced)
    )


_COMPARISONS = (np.greater, np.greater_equal, np.less, np.less_equal, np.equal, np.not_equal)


def _exact_comparison(ufunc: np.ufunc, operands: list) -> TracedArray | None:
    """An integer array compared with a Python int as NumPy compares (NEP 50: exactly), where a
    kernel would cast the int to the array's dtype first; None for any other call.

    An int outside the dtype's range (``x > -1`` of uint8) gives every element one answer, its
    own on data-free stand-ins, computed as ``x == x`` or ``x != x`` (shape and scalar type
    kept). A weak int known at run time only (an int argument) is compared with the array
    widened to int64 (exact for every dtype but uint64)."""
    if ufunc not in _COMPARISONS or len(operands) != 2:
        return None
    weak = [_weak_int(o) for o in operands]
    arrays = [
        isinstance(o, TracedArray) and o.dtype.kind in "iu" and not w
        for o, w in zip(operands, weak)
    ]
    literal = [type(o) is int for o in operands]
    if sorted(arrays) != [False, True] or not any(literal + weak):
        return None
    array = operands[arrays.index(True)]
    value = operands[arrays.index(False)]
    if _weak_int(value):
        if array.dtype.itemsize == 8:
            return None
        return ufunc(*(o.astype(np.int64) if o is array else o for o in operands))
    info = np.iinfo(array.dtype)
    if info.min <= value <= info.max:
        return None
    stand_ins = [np.zeros(1, array.dtype) if o is array else o for o in operands]
    same = np.equal if ufunc(*stand_ins)[0] else np.not_equal  # (of integers: all True, False)
    return same(array, array)


def _weak_int(value: Any) -> bool:
    """A Python int known at run time only: a size used as a value, an int argument."""
    if isinstance(value, SymInt):
        return True
    return isinstance(value, TracedArray) and value.meta.weak and value.dtype.kind == "i"
