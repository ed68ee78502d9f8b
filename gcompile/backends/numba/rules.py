"""The Numba rules: how one element of each op is written, keyed by ``OpDef`` in one table.

``RULES[op].write(args, apply)`` returns the source text of one element of the ``Apply`` node
``apply``, or None when there is no rule for these dtypes (the kernel then runs in the
interpreter, and the host says so). The operands ``args`` arrive as source text, already
converted to the dtypes the op computes in (``loops.dtypes``: NumPy's loop for a ufunc); the
renderer converts the result to the node's dtype, so a rule may return a wider Numba type.
``Rule.libm``: a float function that is a libm call unless ``mathlib`` expands it (``explain``
lists how each was computed). A call the math selection marked ``fast`` is written as its
``mathlib`` expansion.

Semantics are NumPy's C loops, not Python's or LLVM's: see ``scalar.py`` for the helpers used
where they differ (integer division by zero, shifts, NaN in ``maximum``). Complex numbers are
second class: ordering (max, min, sign; comparisons follow NumPy's order), powers, the inverse trigonometric
functions, exp2/expm1/log2/log1p, var/std and rounding with decimals have no rule for complex
operands, and their kernels run in the interpreter.

Every op of ``ops.OPS`` either has a rule here or is listed in ``WITHOUT_RULE`` with the reason
(``tests/backends/test_rules.py`` checks). SciPy's ops are created only once SciPy is imported
(``ops.load_scipy_special``), so their rules are keyed by the names in ``ops.SCIPY_SPECIAL``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Callable

import numpy as np

from ...ir import ops
from ...loops.nodes import Apply
from . import mathlib
from .syntax import literal


class NoTemplate(Exception):
    """The kernel uses something the code generator cannot express (it runs in the interpreter)."""


@dataclass(frozen=True)
class Rule:
    """How the Numba backend writes one element of an op (see the module docstring)."""

    write: Callable[[list, Apply], str | None]
    libm: bool = False
    # "arithmetic" (+ - * /) or "comparison": a Python operator (see ``typed_by_numba``)
    operator: str = ""

    def typed_by_numba(self, apply: Apply) -> bool:
        """Whether this rule's text for ``apply`` has the node's dtype in Numba already (the
        renderer then converts nothing): an arithmetic operator on operands of one dtype of
        ``_KEPT_BY_ARITHMETIC``, a comparison of real numbers."""
        if self.operator == "" or apply.fast:
            return False
        dtype = apply.node.meta.dtype
        if self.operator == "arithmetic":
            return dtype in _KEPT_BY_ARITHMETIC and all(d == dtype for d in apply.loop)
        return dtype == np.bool_ and all(d.kind in "fiu" for d in apply.loop[:-1])


# The dtypes whose arithmetic (+ - * /) Numba computes in the operands' type, as NumPy's loop
# of that type does (narrower integers widen to int64 in Numba)
_KEPT_BY_ARITHMETIC = {np.dtype(t) for t in (np.float64, np.float32, np.int64, np.uint64)}


Scalar = Callable[[list, list], "str | None"]  # (operand texts, loop dtypes) -> text


def _ufunc(scalar: Scalar, libm: bool = False, operator: str = "") -> Rule:
    """The rule of a ufunc written by ``scalar``, or by its ``mathlib`` expansion when fast."""

    def write(args: list, apply: Apply) -> str | None:
        loop = list(apply.loop)
        if apply.fast and loop[0].kind == "f":
            template = mathlib.TEMPLATES[apply.op.name]
            return f"_m.{template.function(loop[0])}({', '.join(args)})"
        return scalar(args, loop)

    return Rule(write, libm, operator)


def _infix(symbol: str, on_bool: str | None = None, ordered: bool = False, integer: bool = True):
    def scalar(args, loop):
        kind = loop[0].kind
        if on_bool and kind == "b":
            return f"({args[0]} {on_bool} {args[1]})"
        if ordered and kind == "c":
            return _complex_order(symbol, args[0], args[1])
        if not integer and kind in "iub":
            return None
        return f"({args[0]} {symbol} {args[1]})"

    return scalar


def _numpy_fuses_complex() -> bool:
    """Whether NumPy's complex multiply loop rounds each part once (an FMA, as its loops for
    machines with FMA3 do), probed against both forms on pairs where they differ; False when
    it matches neither (the plain form then)."""
    rng = np.random.default_rng(7)
    a, b = (rng.standard_normal(64) + 1j * rng.standard_normal(64) for _ in range(2))
    got = a * b

    def fused(x, y, z):
        return float(Fraction(float(x)) * Fraction(float(y)) + Fraction(float(z)))

    real = [fused(p.real, q.real, -(p.imag * q.imag)) for p, q in zip(a, b)]
    imag = [fused(p.real, q.imag, p.imag * q.real) for p, q in zip(a, b)]
    return bool(np.array_equal(got.real, real) and np.array_equal(got.imag, imag))


NUMPY_FUSES_COMPLEX = _numpy_fuses_complex()


def _multiply(square: bool = False):
    """``*`` (``square``: of the operand by itself); of complex numbers NumPy's fused form
    where its loops fuse (``NUMPY_FUSES_COMPLEX``), so iterations (``z = z * z + c``) keep its
    bits."""
    infix = _any_kind("({a} * {a})") if square else _infix("*", on_bool="&")

    def scalar(args, loop):
        t = loop[0]
        if t.kind != "c" or not NUMPY_FUSES_COMPLEX:
            return infix(args, loop)
        b = args[0] if square else args[1]
        return f"np.{t.name}(_s.complex_multiply({args[0]}, {b}))"

    return scalar


_REAL_DIVIDE = _infix("/", integer=False)


def _divide(args, loop):
    """``/``; of complex numbers NumPy's algorithm (``_s.complex_divide``): Numba's, CPython's,
    raises on a zero divisor and rounds otherwise."""
    t = loop[0]
    if t.kind != "c":
        return _REAL_DIVIDE(args, loop)
    one = literal(1, np.dtype(f"f{t.itemsize // 2}"))
    return f"np.{t.name}(_s.complex_divide({args[0]}, {args[1]}, {one}))"


def _complex_order(symbol: str, a: str, b: str) -> str:
    """NumPy's order of complex numbers (its C loops' ``CGT`` and kin): by the real parts when
    neither imaginary part is NaN, by the imaginary parts when the real parts are equal."""
    strict = symbol[0]
    real_a, real_b, imag_a, imag_b = f"({a}).real", f"({b}).real", f"({a}).imag", f"({b}).imag"
    numbers = f"{imag_a} == {imag_a} and {imag_b} == {imag_b}"
    return (
        f"(({real_a} {strict} {real_b} and {numbers}) or "
        f"({real_a} == {real_b} and {imag_a} {symbol} {imag_b}))"
    )


def _by_kind(integer: str | None = None, floating: str | None = None, real: str | None = None):
    """A call written ``integer`` for integer loops, ``floating`` for float loops, ``real``
    for both (``{a}``, ``{b}``: the operands; ``{bits}``: the loop dtype's width)."""

    def scalar(args, loop):
        kind = loop[0].kind
        template = integer if kind in "iu" else floating if kind == "f" else None
        if template is None and real is not None and kind != "c":
            template = real
        if template is None:
            return None
        b = args[1] if len(args) > 1 else None
        return template.format(a=args[0], b=b, bits=loop[0].itemsize * 8)

    return scalar


def _any_kind(template: str):
    """A call written ``template`` for every kind of loop."""

    def scalar(args, loop):
        b = args[1] if len(args) > 1 else None
        return template.format(a=args[0], b=b, bits=loop[0].itemsize * 8)

    return scalar


def _complex_else(on_complex: str, other: str):
    """``on_complex`` for a complex loop, ``other`` for the rest."""

    def scalar(args, loop):
        return (on_complex if loop[0].kind == "c" else other).format(a=args[0])

    return scalar


def _bool_else(on_bool: str, other: str):
    """``on_bool`` for a bool loop, ``other`` for the rest."""

    def scalar(args, loop):
        return (on_bool if loop[0].kind == "b" else other).format(a=args[0])

    return scalar


def _libm(function: str, complex_too: bool = False):
    """A ``math`` function for real floats, its ``cmath`` twin for complex when it has one."""

    def scalar(args, loop):
        kind = loop[0].kind
        if kind == "c":
            return f"cmath.{function}({args[0]})" if complex_too else None
        return f"math.{function}({args[0]})" if kind == "f" else None

    return scalar


def _numpy(name: str, keep_integers: bool = False):
    """NumPy's scalar function for real floats (its Numba implementation follows NumPy's loop);
    ``keep_integers``: integers pass unchanged (NumPy 2's floor, ceil and trunc)."""

    def scalar(args, loop):
        kind = loop[0].kind
        if keep_integers and kind in "iub":
            return args[0]
        return f"np.{name}({', '.join(args)})" if kind == "f" else None

    return scalar


def _truth(expr: str, dtype: np.dtype) -> str:
    return expr if dtype == np.bool_ else f"({expr} != 0)"


def _logical(symbol: str):
    def scalar(args, loop):
        return f"({_truth(args[0], loop[0])} {symbol} {_truth(args[1], loop[1])})"

    return scalar


def _power(name: str):
    def write(args: list, apply: Apply) -> str | None:
        loop = list(apply.loop)
        shortcut = power_expression(name, apply.node.args, args, loop)
        if shortcut is not None:
            return shortcut
        kind = loop[0].kind
        if kind in "iu" and name == "power":
            return f"_s.int_power({args[0]}, {args[1]})"
        if kind == "c" and name == "power":  # (NumPy's algorithm: Numba's ** differs by more)
            return f"_s.complex_power({args[0]}, {args[1]})"
        return f"({args[0]} ** {args[1]})" if kind == "f" else None

    return Rule(write, libm=True)


def _reciprocal(args, loop):
    t = loop[0]
    if t.kind in "iu":
        return f"_s.int_reciprocal({args[0]}, {literal(_reciprocal_of_zero(t), t)})"
    return f"({literal(1, t)} / {args[0]})"


def _scaled(factor: float):
    def scalar(args, loop):
        return f"({args[0]} * {literal(factor, loop[0])})"

    return scalar


_MATH = {  # ufunc -> math-module function (real floats), and whether cmath has it
    ops.EXP: ("exp", True),
    ops.EXPM1: ("expm1", False),
    ops.LOG: ("log", True),
    ops.LOG2: ("log2", False),
    ops.LOG10: ("log10", True),
    ops.LOG1P: ("log1p", False),
    ops.SIN: ("sin", True),
    ops.COS: ("cos", True),
    ops.TAN: ("tan", True),
    ops.ARCSIN: ("asin", False),
    ops.ARCCOS: ("acos", False),
    ops.ARCTAN: ("atan", False),
    ops.SINH: ("sinh", True),
    ops.COSH: ("cosh", True),
    ops.TANH: ("tanh", True),
    ops.ARCSINH: ("asinh", False),
    ops.ARCCOSH: ("acosh", False),
    ops.ARCTANH: ("atanh", False),
}
_NUMPY_LIBM = (ops.EXP2, ops.CBRT, ops.LOGADDEXP, ops.LOGADDEXP2, ops.ARCTAN2, ops.HYPOT)
_NUMPY = (ops.RINT, ops.SPACING, ops.NEXTAFTER, ops.LDEXP, ops.COPYSIGN, ops.SIGNBIT)

RULES: dict[ops.OpDef, Rule] = {
    # -- arithmetic and comparison: infix operators
    ops.ADD: _ufunc(_infix("+", on_bool="|"), operator="arithmetic"),
    ops.MULTIPLY: _ufunc(_multiply(), operator="arithmetic"),
    ops.SUBTRACT: _ufunc(_infix("-"), operator="arithmetic"),
    ops.DIVIDE: _ufunc(_divide, operator="arithmetic"),
    ops.EQUAL: _ufunc(_infix("=="), operator="comparison"),
    ops.NOT_EQUAL: _ufunc(_infix("!="), operator="comparison"),
    ops.LESS: _ufunc(_infix("<", ordered=True), operator="comparison"),
    ops.LESS_EQUAL: _ufunc(_infix("<=", ordered=True), operator="comparison"),
    ops.GREATER: _ufunc(_infix(">", ordered=True), operator="comparison"),
    ops.GREATER_EQUAL: _ufunc(_infix(">=", ordered=True), operator="comparison"),
    ops.BITWISE_AND: _ufunc(_infix("&")),
    ops.BITWISE_OR: _ufunc(_infix("|")),
    ops.BITWISE_XOR: _ufunc(_infix("^")),
    # -- NumPy's C semantics through scalar.py
    ops.FLOOR_DIVIDE: _ufunc(
        _by_kind("_s.int_floor_divide({a}, {b})", "_s.float_floor_divide({a}, {b})")
    ),
    ops.REMAINDER: _ufunc(_by_kind("_s.int_remainder({a}, {b})", "_s.float_remainder({a}, {b})")),
    ops.FMOD: _ufunc(_by_kind("_s.int_fmod({a}, {b})", "np.fmod({a}, {b})")),
    ops.POWER: _power("power"),
    ops.FLOAT_POWER: _power("float_power"),
    ops.MAXIMUM: _ufunc(_by_kind(real="_s.maximum({a}, {b})")),
    ops.MINIMUM: _ufunc(_by_kind(real="_s.minimum({a}, {b})")),
    ops.FMAX: _ufunc(_by_kind(real="_s.fmax({a}, {b})")),
    ops.FMIN: _ufunc(_by_kind(real="_s.fmin({a}, {b})")),
    ops.SIGN: _ufunc(_by_kind(real="_s.sign({a})")),
    ops.LOGICAL_AND: _ufunc(_logical("&")),
    ops.LOGICAL_OR: _ufunc(_logical("|")),
    ops.LOGICAL_XOR: _ufunc(_logical("!=")),
    ops.LOGICAL_NOT: _ufunc(lambda args, loop: f"(not {_truth(args[0], loop[0])})"),
    ops.INVERT: _ufunc(_bool_else("(not {a})", "(~{a})")),
    ops.LEFT_SHIFT: _ufunc(_any_kind("_s.left_shift({a}, {b}, {bits})")),
    ops.RIGHT_SHIFT: _ufunc(_any_kind("_s.right_shift({a}, {b}, {bits})")),
    ops.BITWISE_COUNT: _ufunc(_any_kind("_s.bitwise_count({a})")),
    ops.GCD: _ufunc(_any_kind("np.gcd({a}, {b})")),
    ops.LCM: _ufunc(_any_kind("np.lcm({a}, {b})")),
    ops.HEAVISIDE: _ufunc(_any_kind("_s.heaviside({a}, {b})")),
    # -- unary arithmetic
    ops.NEGATIVE: _ufunc(_any_kind("(-{a})")),
    ops.POSITIVE: _ufunc(_bool_else("{a}", "(+{a})")),
    ops.ABSOLUTE: _ufunc(_complex_else("_s.complex_abs({a})", "abs({a})")),
    ops.FABS: _ufunc(_any_kind("abs({a})")),
    ops.SQUARE: _ufunc(_multiply(square=True)),
    ops.RECIPROCAL: _ufunc(_reciprocal),
    ops.CONJUGATE: _ufunc(
        lambda args, loop: f"{args[0]}.conjugate()" if loop[0].kind == "c" else args[0]
    ),
    ops.DEG2RAD: _ufunc(_scaled(math.pi / 180.0)),
    ops.RAD2DEG: _ufunc(_scaled(180.0 / math.pi)),
    ops.ISNAN: _ufunc(_any_kind("np.isnan({a})")),
    ops.ISINF: _ufunc(_any_kind("np.isinf({a})")),
    ops.ISFINITE: _ufunc(_any_kind("np.isfinite({a})")),
    ops.SQRT: _ufunc(_libm("sqrt", complex_too=True)),
    ops.FLOOR: _ufunc(_numpy("floor", keep_integers=True)),
    ops.CEIL: _ufunc(_numpy("ceil", keep_integers=True)),
    ops.TRUNC: _ufunc(_numpy("trunc", keep_integers=True)),
    **{op: _ufunc(_libm(*_MATH[op]), libm=True) for op in _MATH},
    **{op: _ufunc(_numpy(op.name), libm=True) for op in _NUMPY_LIBM},
    **{op: _ufunc(_numpy(op.name)) for op in _NUMPY},
}


def _clip(args: list, apply: Apply) -> str | None:
    if apply.node.meta.dtype.kind == "c":
        return None
    expr = args[0]
    low, high = (args + [None, None])[1:3]
    if low is not None:
        expr = f"_s.maximum({expr}, {low})"
    if high is not None:
        expr = f"_s.minimum({expr}, {high})"
    return expr


def _part(args: list, apply: Apply) -> str:
    """``a.real`` or ``a.imag`` of operand ``a``, in the node's dtype: of a real operand, the
    real part is the operand and the imaginary part is zero."""
    a, source, dtype = args[0], apply.loop[0], apply.node.meta.dtype
    if source.kind != "c":
        return a if apply.op is ops.REAL else literal(0, dtype)
    return f"({a}).{apply.op.name}"


def _round(args: list, apply: Apply) -> str | None:
    """``np.round(a, decimals)``: integers round only for negative ``decimals``."""
    a, dtype = args[0], apply.node.meta.dtype
    decimals = int(apply.node.kwargs.get("decimals", 0))
    if dtype.kind in "iub":
        return a if decimals >= 0 else None
    if dtype.kind == "c":
        return f"complex(np.rint({a}.real), np.rint({a}.imag))" if decimals == 0 else None
    if dtype.kind != "f":
        return None
    return f"np.rint({a})" if decimals == 0 else f"_s.round_decimals({a}, {decimals})"


RULES.update(
    {
        ops.WHERE: Rule(lambda args, apply: f"({args[1]} if {args[0]} else {args[2]})"),
        ops.CLIP: Rule(_clip),
        ops.ASTYPE: Rule(lambda args, apply: args[0]),
        ops.PYTHON_SCALAR: Rule(lambda args, apply: args[0]),
        ops.COPY: Rule(lambda args, apply: args[0]),
        ops.REAL: Rule(_part),
        ops.IMAG: Rule(_part),
        ops.COMPLEX: Rule(lambda args, apply: f"complex({args[0]}, {args[1]})"),
        ops.ROUND: Rule(_round),
    }
)
# SciPy's functions have no scalar form here: their mathlib expansion serves every loop.
SCIPY_RULES: dict[str, Rule] = {name: _ufunc(lambda args, loop: None) for name in ops.SCIPY_SPECIAL}

_LOOP = "computed by the loop structure, not per element"
_HOST = "run by the host function with NumPy (not fused into kernels)"
WITHOUT_RULE: dict[ops.OpDef, str] = {
    **{
        op: f"{_LOOP}: an accumulator of the loop over the reduced axes (loops.reductions)"
        for op in ops.OPS
        if op.loop_reduction
    },
    **{
        op: f"{_LOOP}: folded into the index map of the read (loops.indexing)"
        for op in ops.OPS
        if op.kind == "view"
    },
    ops.MATMUL: f"{_HOST}: np.matmul into a pooled buffer (BLAS)",
    ops.DOT: f"{_HOST}: np.dot into a pooled buffer (BLAS)",
    ops.OUTER: f"{_HOST}: a matrix product",
    ops.TRACE: f"{_HOST}: a reduction along a diagonal, no loop of a kernel",
    ops.CUMSUM: f"{_HOST}: a scan carries a value from element to element",
    ops.CUMPROD: f"{_HOST}: a scan carries a value from element to element",
    ops.REDUCE: f"{_HOST}: a ufunc's reduce with any ufunc",
    ops.ACCUMULATE: f"{_HOST}: a scan carries a value from element to element",
    **{
        op: f"{_HOST}: it rearranges or creates whole arrays"
        for op in ops.OPS
        if op.kind in ("shape", "creation")
    },
    **{
        op: f"{_HOST}: it writes into its first argument's memory"
        for op in ops.OPS
        if op.kind == "scatter"
    },
    ops.KERNEL_OUTPUT: f"{_HOST}: it picks one output of a kernel",
    ops.EXTERN: f"{_HOST}: a library call NumPy runs (linear algebra, FFTs, sorting)",
    ops.CALLBACK: f"{_HOST}: a call made for its effect (print; in a loop program, a call back "
    "into Python: program_externs.callback)",
    ops.CHECK: f"{_HOST}: a test of the data raising NumPy's error (in a loop program, an if "
    "and a raise: programs.check)",
    ops.RAISE_UNLESS: f"{_HOST}: the user's test of the data raising their error (in a loop program, "
    "an if and a raise: programs.check)",
    ops.ELEMENT: f"{_HOST}: an element read at a position from the data (in a loop program, a "
    "subscript with NumPy's range check: programs.element)",
    **{
        op: f"{_HOST}: a write at positions read from the data (in a loop program, a subscript "
        "assigned after NumPy's range check: program_regions.put)"
        for op in (ops.PUT, ops.PUT_UPDATE, ops.PUT_STORE)
    },
}


def rule_of(op: ops.OpDef) -> Rule | None:
    """The rule of ``op``, or None."""
    rule = RULES.get(op)
    if rule is None and op.name in ops.SCIPY_SPECIAL:
        rule = SCIPY_RULES[op.name]
    return rule


def power_shortcut(apply: Apply) -> bool:
    """Whether ``apply`` is a power the rules write as products or a square root (no call)."""
    if apply.op not in (ops.POWER, ops.FLOAT_POWER):
        return False
    return (
        power_expression(apply.op.name, apply.node.args, ["x", "y"], list(apply.loop)) is not None
    )


_POWER_BOUNDS = {
    2: 0.5,
    3: 1.5,
    4: 2.0,
    -1: 0.5,
    -2: 2.0,
    -3: 3.0,
    -4: 4.0,
    -1.5: 2.5,
}  # ulp, tested


def power_expression(name: str, operands: tuple, args: list, loop: list) -> str | None:
    """``x ** n`` for a literal float exponent n: multiplications for integral |n| <= 4 (of the
    reciprocal for negative n), ``sqrt`` for ``power(x, 0.5)`` as NumPy's own fast path,
    ``r * sqrt(r)`` of ``r = 1 / x`` for ``power(x, -1.5)`` (softened gravity); None otherwise.

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
    if exponent == -1.5 and name == "power":  # (r**1.5 of r = 1/x: no overflow on the way; +0.0
        # makes -0.0 +0.0, whose power is +inf as pow's)
        reciprocal = f"({literal(1, t)} / ({x} + {literal(0, t)}))"
        return f"({reciprocal} * math.sqrt({reciprocal}))"
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
