"""Per-op scalar templates: the Numba expression one element of an elementwise op becomes.

``expression(op, operands, dtypes, params)`` returns the source text of the
value, or None when there is no template (the kernel then runs in the
interpreter, and the host says so). Operands arrive already cast to the
loop's dtypes, which ``loop_dtypes`` takes from NumPy itself
(``ufunc.resolve_dtypes``, NEP 50 for Python scalars); the caller casts the
result to the node's dtype, so templates may return a wider Numba type.

Semantics are NumPy's C loops, not Python's or LLVM's: see ``scalar.py`` for the
helpers used where they differ (integer division by zero, shifts, NaN in
``maximum``).
"""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from ...ir import ops
from . import mathlib

_MATH = {  # ufunc -> math-module function (real floats); cmath for complex
    "exp": "exp",
    "expm1": "expm1",
    "log": "log",
    "log2": "log2",
    "log10": "log10",
    "log1p": "log1p",
    "sin": "sin",
    "cos": "cos",
    "tan": "tan",
    "arcsin": "asin",
    "arccos": "acos",
    "arctan": "atan",
    "sinh": "sinh",
    "cosh": "cosh",
    "tanh": "tanh",
    "arcsinh": "asinh",
    "arccosh": "acosh",
    "arctanh": "atanh",
    "sqrt": "sqrt",
}
# float functions that are a libm call unless mathlib expands them (``explain`` lists them)
LIBM_FUNCTIONS = frozenset(_MATH) - {"sqrt"} | {
    "exp2",
    "cbrt",
    "logaddexp",
    "logaddexp2",
    "arctan2",
    "hypot",
    "power",
    "float_power",
}
_CMATH = {"exp", "log", "log10", "sqrt", "sin", "cos", "tan", "sinh", "cosh", "tanh"}
# Complex numbers are second class: ordering (max, min, comparisons, sign), powers, the
# inverse trigonometric functions, exp2/expm1/log2/log1p, var/std and rounding with decimals
# have no template for complex operands, and their kernels run in the interpreter.
_NUMPY_SCALAR = {  # ufuncs whose Numba scalar implementation follows NumPy's loop (real floats)
    "exp2",
    "cbrt",
    "rint",
    "floor",
    "ceil",
    "trunc",
    "spacing",
    "nextafter",
    "ldexp",
    "logaddexp",
    "logaddexp2",
    "copysign",
    "arctan2",
    "hypot",
    "fmod",
    "signbit",
}
_ORDERED = {
    "less",
    "less_equal",
    "greater",
    "greater_equal",
    "maximum",
    "minimum",
    "fmax",
    "fmin",
    "sign",
}
_INFIX = {
    "add": "+",
    "subtract": "-",
    "multiply": "*",
    "divide": "/",
    "equal": "==",
    "not_equal": "!=",
    "less": "<",
    "less_equal": "<=",
    "greater": ">",
    "greater_equal": ">=",
    "bitwise_and": "&",
    "bitwise_or": "|",
    "bitwise_xor": "^",
}


def type_name(dtype: np.dtype) -> str:
    """The Numba-callable constructor of ``dtype`` (``np.float32``)."""
    return "np.bool_" if dtype == np.bool_ else f"np.{np.dtype(dtype).name}"


def cast(expr: str, source: np.dtype, target: np.dtype) -> str:
    """``expr`` of dtype ``source`` converted as NumPy's ``astype`` would (unsafe casting)."""
    source, target = np.dtype(source), np.dtype(target)
    if source == target:
        return expr
    if target == np.bool_:
        return f"({expr} != 0)"
    if source.kind == "c" and target.kind != "c":
        return f"{type_name(target)}(({expr}).real)"
    return f"{type_name(target)}({expr})"


def literal(value: Any, dtype: np.dtype) -> str:
    """A Python or NumPy scalar as source text of ``dtype``."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return repr(bool(value))
    if dtype.kind == "c":
        value = complex(value)
        return f"{type_name(dtype)}(complex({_float_text(value.real)}, {_float_text(value.imag)}))"
    if dtype.kind == "f":
        text = _float_text(float(value))
        return text if dtype == np.float64 else f"{type_name(dtype)}({text})"
    text = repr(int(value))
    return text if dtype == np.int64 else f"{type_name(dtype)}({text})"


def _float_text(value: float) -> str:
    if math.isnan(value):
        return "np.nan"
    if math.isinf(value):
        return "np.inf" if value > 0 else "-np.inf"
    return repr(value)


def loop_dtypes(op: ops.OpDef, operands: list, params: dict) -> list | None:
    """The dtypes NumPy's loop for ``op`` uses (inputs then outputs), or None if it has none.

    ``operands`` holds a dtype, or a Python type (``float``) for a weak Python scalar.
    """
    ufunc = op.impl
    # a Python bool is not weak under NEP 50: it is a bool operand like any other
    operands = [np.dtype(bool) if o is bool else o for o in operands]
    extra = {}
    if params.get("dtype") is not None:
        extra["signature"] = (None,) * ufunc.nin + (np.dtype(params["dtype"]),) * ufunc.nout
    try:
        resolved = ufunc.resolve_dtypes(tuple(operands) + (None,) * ufunc.nout, **extra)
    except (TypeError, ValueError, np.exceptions.DTypePromotionError):
        return None
    return [np.dtype(d) for d in resolved]


def _truth(expr: str, dtype: np.dtype) -> str:
    return expr if dtype == np.bool_ else f"({expr} != 0)"


def ufunc_expression(name: str, args: list, loop: list, vector: bool = False) -> str | None:
    """The expression of ufunc ``name`` on operands ``args`` already in the loop dtypes ``loop``.

    ``vector``: the loop can vectorise, so functions with a branch-free expansion in
    ``mathlib`` use it (elsewhere libm's scalar call is as fast and more accurate).
    """
    t = loop[0]
    kind = t.kind
    a = args[0]
    b = args[1] if len(args) > 1 else None
    if name in ("add", "multiply") and kind == "b":
        return f"({a} {'|' if name == 'add' else '&'} {b})"
    if kind == "c" and name in _ORDERED:
        return None  # NumPy orders complex numbers lexicographically; Numba does not order them
    if name in ("floor", "ceil", "trunc") and kind in "iub":
        return a  # NumPy 2 keeps integers as they are
    if name in _INFIX and not (name == "divide" and kind in "iub"):
        return f"({a} {_INFIX[name]} {b})"
    integer = kind in "iu"
    bits = t.itemsize * 8
    table: dict[str, Callable[[], str | None]] = {
        "floor_divide": lambda: (
            f"_s.int_floor_divide({a}, {b})"
            if integer
            else f"_s.float_floor_divide({a}, {b})"
            if kind == "f"
            else None
        ),
        "remainder": lambda: (
            f"_s.int_remainder({a}, {b})"
            if integer
            else f"_s.float_remainder({a}, {b})"
            if kind == "f"
            else None
        ),
        "fmod": lambda: (
            f"_s.int_fmod({a}, {b})" if integer else f"np.fmod({a}, {b})" if kind == "f" else None
        ),
        # complex powers: NumPy's own algorithm, which Numba's differs from by more than a few ulp
        "power": lambda: (
            f"_s.int_power({a}, {b})" if integer else f"({a} ** {b})" if kind == "f" else None
        ),
        "float_power": lambda: f"({a} ** {b})" if kind == "f" else None,
        "maximum": lambda: f"_s.maximum({a}, {b})" if kind != "c" else None,
        "minimum": lambda: f"_s.minimum({a}, {b})" if kind != "c" else None,
        "fmax": lambda: f"_s.fmax({a}, {b})" if kind != "c" else None,
        "fmin": lambda: f"_s.fmin({a}, {b})" if kind != "c" else None,
        "logical_and": lambda: f"({_truth(a, t)} & {_truth(b, loop[1])})",
        "logical_or": lambda: f"({_truth(a, t)} | {_truth(b, loop[1])})",
        "logical_xor": lambda: f"({_truth(a, t)} != {_truth(b, loop[1])})",
        "logical_not": lambda: f"(not {_truth(a, t)})",
        "invert": lambda: f"(not {a})" if kind == "b" else f"(~{a})",
        "left_shift": lambda: f"_s.left_shift({a}, {b}, {bits})",
        "right_shift": lambda: f"_s.right_shift({a}, {b}, {bits})",
        "bitwise_count": lambda: f"_s.bitwise_count({a})",
        "gcd": lambda: f"np.gcd({a}, {b})",
        "lcm": lambda: f"np.lcm({a}, {b})",
        "heaviside": lambda: f"_s.heaviside({a}, {b})",
        "negative": lambda: f"(-{a})",
        "positive": lambda: f"(+{a})" if kind != "b" else a,
        "absolute": lambda: f"abs({a})",
        "fabs": lambda: f"abs({a})",
        "sign": lambda: f"_s.sign({a})" if kind != "c" else None,
        "square": lambda: f"({a} * {a})",
        "reciprocal": lambda: (
            f"_s.int_reciprocal({a}, {literal(_reciprocal_of_zero(t), t)})"
            if integer
            else f"({literal(1, t)} / {a})"
        ),
        "conjugate": lambda: f"{a}.conjugate()" if kind == "c" else a,
        "deg2rad": lambda: f"({a} * {literal(math.pi / 180.0, t)})",
        "rad2deg": lambda: f"({a} * {literal(180.0 / math.pi, t)})",
        "isnan": lambda: f"np.isnan({a})",
        "isinf": lambda: f"np.isinf({a})",
        "isfinite": lambda: f"np.isfinite({a})",
    }
    if name in table:
        return table[name]()
    if vector and name in mathlib.TEMPLATES and kind == "f":
        return f"_m.{mathlib.TEMPLATES[name].function(t)}({', '.join(args)})"
    if name in _MATH:
        if kind == "c":
            return f"cmath.{_MATH[name]}({a})" if name in _CMATH else None
        return f"math.{_MATH[name]}({a})" if kind == "f" else None
    if name in _NUMPY_SCALAR and kind == "f":
        return f"np.{name}({', '.join(args)})"
    return None


_POWER_BOUNDS = {2: 0.5, 3: 1.5, 4: 2.0, -1: 0.5, -2: 2.0, -3: 3.0, -4: 4.0}  # ulp, tested


def power_expression(name: str, operands: tuple, args: list, loop: list) -> str | None:
    """``x ** n`` for a literal float exponent n: multiplications for integral |n| <= 4 (of the
    reciprocal for negative n), ``sqrt`` for ``power(x, 0.5)`` as NumPy's own fast path; None
    otherwise.

    The products round once per multiplication, so they may differ from ``pow`` in the last
    bits: the error bounds in ulp are ``_POWER_BOUNDS`` (``pow`` itself is within 0.5-0.7).
    """
    if name not in ("power", "float_power") or loop[0].kind != "f" or len(operands) != 2:
        return None
    exponent = operands[1]
    if isinstance(exponent, (bool, np.bool_)) or not isinstance(exponent, (int, float, np.number)):
        return None
    exponent = float(exponent)
    x, t = args[0], loop[0]
    if exponent == 0.5 and name == "power":  # (float_power calls pow: sqrt differs at -0, -inf)
        return f"math.sqrt({x})"
    if exponent == 0:
        return literal(1, t)
    if exponent == 1:
        return x
    if not exponent.is_integer() or abs(exponent) > 4:
        return None
    n = abs(int(exponent))

    def power(base: str) -> str:
        return {
            1: base,
            2: f"({base} * {base})",
            3: f"({base} * {base} * {base})",
            4: f"(({base} * {base}) * ({base} * {base}))",
        }[n]

    if exponent > 0:
        return power(x)
    # 1 / x**n, unless x**n is out of the normal range (its overflow would flush a subnormal
    # result to 0, its subnormal loses bits): then the power of the reciprocal
    one, tiny = literal(1, t), literal(np.finfo(t).tiny, t)
    direct, reciprocal = f"({one} / {power(x)})", power(f"({one} / {x})")
    if n == 1:
        return direct
    return f"({direct} if {tiny} <= abs({power(x)}) < np.inf else {reciprocal})"


def _reciprocal_of_zero(dtype: np.dtype) -> int:
    """What NumPy's integer ``reciprocal`` loop returns for 0 (the C division's result here)."""
    with np.errstate(all="ignore"):
        return int(np.reciprocal(np.zeros(1, dtype))[0])


def round_expression(a: str, dtype: np.dtype, decimals: int) -> str | None:
    """``np.round(a, decimals)``: integers round only for negative ``decimals``."""
    if dtype.kind in "iub":
        return a if decimals >= 0 else None
    if dtype.kind == "c":
        return f"complex(np.rint({a}.real), np.rint({a}.imag))" if decimals == 0 else None
    if dtype.kind != "f":
        return None
    return f"np.rint({a})" if decimals == 0 else f"_s.round_decimals({a}, {decimals})"


def part_expression(name: str, a: str, source: np.dtype, dtype: np.dtype) -> str:
    """``a.real`` or ``a.imag`` (``name``) of operand ``a`` of dtype ``source``, in ``dtype``.

    Of a real operand, the real part is the operand and the imaginary part is zero."""
    if np.dtype(source).kind != "c":
        return a if name == "real" else literal(0, dtype)
    return f"({a}).{name}"
