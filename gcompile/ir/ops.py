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

NumPy callables supported by recording other ops (``np.divmod``, ``np.einsum``) are the front
end's decompositions (``frontend/decompositions.py``).
"""

from __future__ import annotations

import builtins
import operator
import sys
import warnings
from dataclasses import dataclass, field, replace
from typing import Any, Callable, NamedTuple

import numpy as np

from . import callbacks, externs, layout
from .inference import (
    arange_impl,
    arange_length,
    astype_impl,
    astype_infer,
    broadcast_to_infer,
    concatenate_impl,
    concatenate_infer,
    copy_impl,
    copy_infer,
    creation_infer,
    cumulative_shape,
    dot_infer,
    elementwise_infer,
    eye_infer,
    full_impl,
    getitem_impl,
    getitem_infer,
    linspace_length,
    matmul_infer,
    ordered_layout,
    outer_infer,
    ravel_infer,
    reduction_infer,
    reshape_infer,
    run_infer,
    setitem_impl,
    setitem_infer,
    sliding_window_infer,
    stack_impl,
    stack_infer,
    trace_infer,
    view_infer,
)
from .meta import TensorMeta, broadcast_shapes, meta_of

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
        raises_on_data: the op raises on some values (an index out of range): passes do not
            move it out of a loop or branch, ahead of the tests that guard it.
        effects: the op runs for its effect (printing): passes never drop, fold, merge, hoist
            or reorder it (``subgraph.has_effects``).
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
    raises_on_data: bool = False
    effects: bool = False
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
    if op.dunder and not kwargs and args and all(is_scalar_value(a) for a in args):
        return getattr(operator, f"__{op.dunder}__")(*args)
    return op.impl(*args, **kwargs)


def is_scalar_value(value: Any) -> bool:
    """A Python or NumPy scalar: what eager applies a Python operator to as itself."""
    return isinstance(value, (bool, int, float, complex, np.generic))


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
            elementwise_infer(ufunc),
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
        elementwise_infer(np.where),
        numpy=(np.where,),
        operands=("condition", "x", "y"),
    )
)
CLIP = _add(
    OpDef(
        "clip",
        "elementwise",
        np.clip,
        elementwise_infer(np.clip),
        operands=("a", "a_min", "a_max"),
        doc="reached through the np.clip decomposition, which accepts min=/max= too",
    )
)
ROUND = _add(
    OpDef(
        "round",
        "elementwise",
        np.round,
        elementwise_infer(np.round),
        numpy=(np.round, np.around),
        operands=("a",),
        params=("decimals",),
    )
)
ASTYPE = _add(
    OpDef(
        "astype",
        "elementwise",
        astype_impl,
        astype_infer,
        numpy=(np.astype,),
        operands=("x",),
        params=("dtype", "order"),
    )
)


_PYTHON_SCALARS = {"int": (int, np.int64), "float": (float, np.float64), "bool": (bool, np.bool_)}


def python_scalar_impl(x: Any, kind: str) -> int | float | bool:
    """``int(x)``, ``float(x)`` or ``bool(x)``, as Python computes them."""
    return _PYTHON_SCALARS[kind][0](x)


def python_scalar_infer(x: TensorMeta, kind: str) -> TensorMeta:
    """A Python int (int64), float (float64) or bool: weak, as Python scalars are under NEP 50."""
    if kind not in _PYTHON_SCALARS:
        raise ValueError(f"python_scalar: kind {kind!r}")
    dtype = np.dtype(_PYTHON_SCALARS[kind][1])
    return TensorMeta((), dtype, weak=True, scalar=True, writeable=False)


PYTHON_SCALAR = _add(
    OpDef(
        "python_scalar",
        "elementwise",
        python_scalar_impl,
        python_scalar_infer,
        operands=("x",),
        params=("kind",),
        doc="``int(x)``, ``float(x)`` or ``bool(x)`` of a traced scalar (``kind``): a Python "
        "scalar, so weak in arithmetic as in eager mode (``x * int(k)`` keeps ``x``'s float32)",
    )
)
COPY = _add(
    OpDef(
        "copy",
        "elementwise",
        copy_impl,
        copy_infer,
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
    elementwise = elementwise_infer(numpy_part)

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
        reduction_infer(np.sum),
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
        reduction_infer(np.prod),
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
        reduction_infer(np.mean),
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
        reduction_infer(np.max),
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
        reduction_infer(np.min),
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
        reduction_infer(np.argmax),
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
        reduction_infer(np.argmin),
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
        reduction_infer(np.any),
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
        reduction_infer(np.all),
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
        reduction_infer(np.var),
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
        reduction_infer(np.std),
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
        reduction_infer(np.cumsum, cumulative_shape),
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
        reduction_infer(np.cumprod, cumulative_shape),
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
        reduction_infer(_ufunc_reduce),
        params=("ufunc", "axis", "dtype", "keepdims"),
        doc="ufunc.reduce of a table ufunc without a reduction op of its own (np.subtract.reduce)",
    )
)
ACCUMULATE = _add(
    OpDef(
        "accumulate",
        "reduction",
        _ufunc_accumulate,
        reduction_infer(_ufunc_accumulate, cumulative_shape),
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
        matmul_infer,
        numpy=(np.matmul,),
        params=("dtype",),
        dunder="matmul",
    )
)
DOT = _add(OpDef("dot", "matmul", np.dot, dot_infer, numpy=(np.dot,), operands=("a", "b")))
OUTER = _add(
    OpDef("outer", "matmul", np.outer, outer_infer, numpy=(np.outer,), operands=("a", "b"))
)
TRACE = _add(
    OpDef(
        "trace",
        "reduction",
        np.trace,
        trace_infer,
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
        reshape_infer,
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
        view_infer(_transpose_rule),
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
        view_infer(_swapaxes_rule),
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
        view_infer(_moveaxis_rule),
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
        view_infer(_expand_dims_rule),
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
        view_infer(layout.squeeze),
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
        broadcast_to_infer,
        numpy=(np.broadcast_to,),
        operands=("array",),
        params=("shape",),
        strided=layout.broadcast_to,
    )
)
SLIDING_WINDOW = _add(
    OpDef(
        "sliding_window",
        "view",
        np.lib.stride_tricks.sliding_window_view,
        sliding_window_infer,
        numpy=(np.lib.stride_tricks.sliding_window_view,),
        operands=("x",),
        params=("window_shape", "axis"),
        strided=layout.sliding_window,
    )
)
RAVEL = _add(
    OpDef(
        "ravel",
        "view",
        np.ravel,
        ravel_infer,
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
        getitem_impl,
        getitem_infer,
        params=("index",),
        strided=layout.getitem,
        doc="basic indexing: ints, slices, None, Ellipsis",
    )
)
CONCATENATE = _add(
    OpDef(
        "concatenate",
        "shape",
        concatenate_impl,
        concatenate_infer,
        numpy=(np.concatenate,),
        operands=("arrays",),
        params=("axis",),
    )
)
STACK = _add(
    OpDef(
        "stack",
        "shape",
        stack_impl,
        stack_infer,
        numpy=(np.stack,),
        operands=("arrays",),
        params=("axis",),
    )
)

# -- creation (static arguments) ------------------------------------------------------------------------
_CREATE = ("shape", "dtype", "order")
ZEROS = _add(
    OpDef(
        "zeros", "creation", np.zeros, creation_infer(np.zeros), numpy=(np.zeros,), params=_CREATE
    )
)
ONES = _add(
    OpDef("ones", "creation", np.ones, creation_infer(np.ones), numpy=(np.ones,), params=_CREATE)
)
EMPTY = _add(
    OpDef(
        "empty", "creation", np.empty, creation_infer(np.empty), numpy=(np.empty,), params=_CREATE
    )
)
FULL = _add(
    OpDef(
        "full",
        "creation",
        full_impl,
        creation_infer(full_impl),
        numpy=(np.full,),
        operands=("fill_value",),
        params=_CREATE,
    )
)
ARANGE = _add(
    OpDef(
        "arange",
        "creation",
        arange_impl,
        run_infer(arange_impl, arange_length),
        numpy=(np.arange,),
        params=("start", "stop", "step", "dtype"),
        binding=arange_impl,
    )
)
LINSPACE = _add(
    OpDef(
        "linspace",
        "creation",
        np.linspace,
        run_infer(np.linspace, linspace_length),
        numpy=(np.linspace,),
        params=("start", "stop", "num", "endpoint", "dtype", "axis"),
    )
)
EYE = _add(
    OpDef(
        "eye",
        "creation",
        np.eye,
        eye_infer,
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
        setitem_impl,
        setitem_infer,
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


def _element_index(index: tuple, positions: tuple) -> tuple:
    """``index`` with each None (a position read from the data) replaced, in order."""
    given = iter(positions)
    return tuple(next(given) if item is None else item for item in index)


def element_impl(x: Any, *positions: Any, index: tuple) -> Any:
    """``x[index]``, the Nones of ``index`` taken from ``positions`` (ints read from data); a
    region (slices among them) as a copy: the graph's value, where NumPy's is a view."""
    found = x[
        tuple(p if isinstance(p, slice) else int(p) for p in _element_index(index, positions))
    ]
    return found.copy() if isinstance(found, np.ndarray) else found


def element_infer(x: TensorMeta, *positions: Any, index: tuple) -> TensorMeta:
    """One element of ``x``, or a region (slices beside the positions): every axis indexed by
    an int, a size expression, a data int or a slice."""
    if len(index) != x.ndim or sum(item is None for item in index) != len(positions):
        raise IndexError(f"element: {len(index)} indices for {x.ndim} axes")
    for position in positions:
        kind = getattr(position, "dtype", np.asarray(position).dtype).kind
        if kind not in "iu" or getattr(position, "ndim", 0):
            raise IndexError("only integers can index an element")
    if not any(isinstance(item, slice) for item in index):
        return TensorMeta((), x.dtype, scalar=True, writeable=False)
    return TensorMeta(region_at_positions(x, index).shape, x.dtype)


def region_at_positions(x: TensorMeta, index: tuple) -> TensorMeta:
    """The meta of ``x[index]``, Nones in ``index`` positions read from the data: each such axis
    taken as of size 1 at 0, so that nothing is asked about its size (a length the data decide
    has no answer); the positions' range is checked when the op runs."""
    return getitem_infer(*_at_positions(x, index))


def _at_positions(x: TensorMeta, index: tuple) -> tuple:
    shape = tuple(1 if item is None else size for item, size in zip(index, x.shape))
    return replace(x, shape=shape), tuple(0 if i is None else i for i in index)


ELEMENT = _add(
    OpDef(
        "element",
        "opaque",
        element_impl,
        element_infer,
        params=("index",),
        raises_on_data=True,
        doc="one element at positions read from the data (``x[i, k]``, ``k`` a traced int), or "
        "a copy of the region they pick with slices beside them (``x[k, 1:]``): ``index`` holds "
        "the other positions and the slices, None where the next operand goes; an index out "
        "of range raises IndexError, as NumPy does",
    )
)


class RerunEagerly(Exception):
    """Raised by compiled code that reached the user's ``raise`` of an exception it cannot make
    itself (its message formats the data: ``ValueError(f"no root near {x}")``). The traced
    function writes no argument and prints nothing, so the call runs again eagerly, which
    raises that exception as Python does (``api``). The one exception a ``raise_unless`` node raises that is not a built-in."""

    def __init__(self):
        super().__init__(
            "the function raised an exception made from the data, which only its Python code "
            "makes (a loaded function has none: call the original function)"
        )


def raised_class(error: str) -> type:
    """The exception class a ``check`` or ``raise_unless`` node raises: a built-in one, by name (what
    a loop program's ``raise`` can name too), or ``RerunEagerly`` (the user's exception made by
    running the call again eagerly)."""
    if error == RerunEagerly.__name__:
        return RerunEagerly
    found = getattr(builtins, error, None)
    if not (isinstance(found, type) and issubclass(found, Exception)):
        raise ValueError(f"check: cannot raise {error!r} (not a built-in exception)")
    return found


def check_impl(value: Any, ok: Any, error: str, message: str | None) -> Any:
    """``value`` itself, once ``ok`` holds; else raises ``error`` with ``message`` (None: no
    argument)."""
    if not ok:
        raise raised_class(error)(*(() if message is None else (message,)))
    return value


def check_infer(value: TensorMeta, ok: TensorMeta, error: str, message: str | None) -> TensorMeta:
    """``value``'s meta; ``ok`` a boolean scalar, ``error`` a built-in exception's name."""
    if getattr(ok, "ndim", 0) or getattr(ok, "dtype", np.dtype(bool)) != np.dtype(bool):
        raise TypeError("check: the test must be a boolean scalar")
    raised_class(error)
    return value if isinstance(value, TensorMeta) else meta_of(value)  # (a folded literal)


CHECK = _add(
    OpDef(
        "check",
        "opaque",
        check_impl,
        check_infer,
        params=("error", "message"),
        raises_on_data=True,
        doc="``value`` (a fresh result) once the 0-d boolean ``ok`` holds, else NumPy's error "
        "that the data decide (the maximum of no element of a masked gather)",
    )
)


def raise_unless_impl(token: Any, ok: Any, error: str, message: str | None) -> np.bool_:
    """A new effect token, once ``ok`` holds; else raises ``error`` with ``message``."""
    check_impl(token, ok, error, message)
    return np.bool_(True)


def raise_unless_infer(token: Any, ok: TensorMeta, error: str, message: str | None) -> TensorMeta:
    """An effect token (a boolean scalar); ``ok`` a boolean scalar."""
    check_infer(token, ok, error, message)
    return callbacks.TOKEN


RAISE_UNLESS = _add(
    OpDef(
        "raise_unless",
        "opaque",
        raise_unless_impl,
        raise_unless_infer,
        params=("error", "message"),
        raises_on_data=True,
        effects=True,
        doc="the user's ``if test: raise E(message)`` or ``assert``: raises unless the 0-d "
        "boolean ``ok`` holds; its first operand and value are the effect token that orders "
        "it among the function's other effects (``callback``)",
    )
)


CALLBACK = _add(
    OpDef(
        "callback",
        "opaque",
        callbacks.impl,
        callbacks.infer,
        params=("call",),
        effects=True,
        doc="a call made for its effect (``print``, ``ir/callbacks.py``), run on every call: its "
        "first operand is the previous callback's token, the rest the call's traced values",
    )
)


EXTERN = _add(
    OpDef(
        "extern",
        "opaque",
        externs.impl,
        externs.infer,
        params=("call",),
        raises_on_data=True,
        doc="a library call NumPy runs (``ir/externs.py``): ``call`` holds the function and "
        "its non-array arguments; the operands are its arrays",
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


def _viewed(base: TensorMeta, views: tuple) -> TensorMeta:
    """The meta of ``base[views...]``, the region an update writes into."""
    region = base
    for step in views:
        region = step.op.infer(region, **dict(step.params))
    return TensorMeta(region.shape, region.dtype, region.layout)


def _copy_meta(base: TensorMeta) -> TensorMeta:
    """The meta of a copy of ``base`` in its own order (``np.array(base, order="K")``)."""
    return TensorMeta(base.shape, base.dtype, ordered_layout(base, "K", base.ndim))


def _update_infer(base: TensorMeta, value: Any, index: tuple, views: tuple = ()) -> TensorMeta:
    setitem_infer(_viewed(base, views), value, index)
    return _copy_meta(base)


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


def _put_index(index: tuple, positions: tuple) -> tuple:
    """``index`` with its Nones replaced by ``positions`` (ints read from the data)."""
    return tuple(p if isinstance(p, slice) else int(p) for p in _element_index(index, positions))


def put_impl(target: np.ndarray, value: Any, *positions: Any, index: tuple) -> np.ndarray:
    """``target[index] = value``, the Nones of ``index`` taken from ``positions``."""
    target[_put_index(index, positions)] = value
    return target


def put_infer(target: TensorMeta, value: Any, *positions: Any, index: tuple) -> TensorMeta:
    """``target``'s meta: the positions checked as ``element``'s, the assignment as
    ``setitem``'s into the region at position 0."""
    element_infer(target, *positions, index=index)
    region_of, at = _at_positions(target, index)
    setitem_infer(region_of, value, at)
    return target


PUT = _add(
    OpDef(
        "put",
        "scatter",
        put_impl,
        put_infer,
        params=("index",),
        mutates=True,
        raises_on_data=True,
        doc="target[index] = value in place at positions read from the data (``h[b[i]] += 1``, "
        "``A[k, 1:] = row``): ``index`` as ``element``'s, None where the next operand after "
        "the value goes; an index out of range raises IndexError, as NumPy does",
    )
)


def _put_update(base: Any, value: Any, *positions: Any, index: tuple, views: tuple = ()) -> Any:
    out = np.array(base, copy=True, order="K")
    _region(out, views)[_put_index(index, positions)] = value
    return out


def _put_update_infer(
    base: TensorMeta, value: Any, *positions: Any, index: tuple, views: tuple = ()
) -> TensorMeta:
    put_infer(_viewed(base, views), value, *positions, index=index)
    return _copy_meta(base)


PUT_UPDATE = _add(
    OpDef(
        "put_update",
        "scatter",
        _put_update,
        _put_update_infer,
        params=("index", "views"),
        raises_on_data=True,
        doc="functional put: a copy of base with base[views...][index] = value at the positions "
        "(made by passes/functionalize.py)",
    )
)


def _put_store(base: np.ndarray, value: Any, *positions: Any, index: tuple, views: tuple = ()):
    _region(base, views)[_put_index(index, positions)] = value
    return base


def _put_store_infer(
    base: TensorMeta, value: Any, *positions: Any, index: tuple, views: tuple = ()
) -> TensorMeta:
    _put_update_infer(base, value, *positions, index=index, views=views)
    return base


PUT_STORE = _add(
    OpDef(
        "put_store",
        "scatter",
        _put_store,
        _put_store_infer,
        params=("index", "views"),
        mutates=True,
        raises_on_data=True,
        doc="base[views...][index] = value in place at the positions; the node's value is base: "
        "a put_update whose old value nothing needs any more (made by passes/buffers.py)",
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
