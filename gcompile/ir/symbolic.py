"""Symbolic integers for sizes: polynomials over named symbols with min, max and floor division.

A symbolic size is a plain ``int`` or an ``Expr``. Every ``Expr`` is immutable, hashable and kept in
one canonical form, so equal expressions compare and hash equal (they can sit in cache keys;
see the limits below for min/max):

- ``Symbol(name, lo=0, hi=math.inf)``: a named integer known to lie in ``[lo, hi]``; each end is
  an int, an infinity (``-math.inf`` / ``math.inf``) or an expression over older symbols (a loop
  index of ``range(n)`` is ``Symbol("i", 0, n - 1)``). Symbols are equal when name and interval
  are equal; ``SymbolTable`` hands out ``s0, s1, ...`` for one graph.
- ``Sum(const, terms)``: ``const + sum(coef * term)`` with ``terms`` a tuple of ``(term, coef)``
  sorted canonically (products first, higher degree first), every ``coef`` a non-zero int, every
  term an atom (a ``Symbol``, ``Min`` or ``FloorDiv``; a max is stored as a min, see below) or a
  ``Prod`` (never a ``Sum``). A sum of one term with coefficient 1 and no constant *is* that
  term.
- ``Prod(factors)``: a monomial, the product of two or more atoms sorted canonically, a repeated
  atom being a power (``s0*s0``, printed ``s0**2``); its coefficient sits in the sum holding it.
  Products distribute over sums, so every value is a polynomial over atoms with int
  coefficients: ``(s0+1)*(s1-2) == s0*s1-2*s0+s1-2``, ``s0*s1 - s1*s0 == 0``.
- ``Min(args)`` / ``Max(args)``: flattened, deduplicated, sorted, constants merged, and every
  argument that is provably not the result dropped (``min(s, s+1) == s``).
- ``FloorDiv(num, den)``: ``num // den`` with ``den >= 2``; the multiples of ``den`` in the
  coefficients of ``num`` are pulled out (``(3*s+7)//3 == s+2``, ``(4*s-2)//3 == s+(s-2)//3``), the
  constant stays in (``(s-2)//3``; so ``(s+1)//3-1`` is equal in value but not in form), a division
  whose value the bounds pin down folds (``d//3 == 0`` for ``d`` in ``[0, 2]``), nested
  divisions merge.

Min and max absorb the rest of a sum that holds exactly one of them
(``n - min(1, n) == max(n-1, 0)``), and floor division and scaling distribute over them
(they are monotone), so min/max terms stay inside a sum only when it holds two or more of them.
A min or max factor of a product stays an atom of it: a product is never distributed into a min
or max (the sign of the other factors is often unknown, and a form that depended on the bounds
would not be canonical). A max term or factor is stored as ``-min(-a, -b)`` so that equal terms
cancel (it still prints as ``max(a,b)``), and a min term that is not alone in its sum, or a min
factor, is reduced to a core so that equal values meet (``_min_split``): the terms all its
arguments share, a constant and a positive common factor are taken out of it. So a sum that was
absorbed into a min multiplies out like the sum (``(s1 + min(s0,3)) * s2 == s1*s2 +
s2*min(s0,3)``), ``2*(min(a,1) + min(b,0)) == 2*min(a,1) + 2*min(b,0)``, and ``s1*max(s0,1)`` is
``s1*max(s0-1,0)+s1``.
A result that is constant is returned as a plain ``int``.

Arithmetic: ``+``, ``-``, unary ``-`` and ``*`` mix freely with Python ints and expressions;
``expr ** k`` needs an int ``k >= 0``. ``expr // d`` and ``expr % d`` need an int ``d`` (a
divisor or modulus that is an expression raises ``TypeError``): ``d == 0`` raises
``ZeroDivisionError``, a negative ``d`` uses ``e // d == (-e) // (-d)`` (Python's floor
semantics), and ``e % d`` *is* ``e - d*(e//d)`` (Python's sign, no node of its own:
``s0 % 3`` prints ``s0-3*(s0//3)``). ``sym_min`` / ``sym_max`` build min and max.
``bool(expr)`` raises: ask ``prove_*``. ``exact_divide(a, b)`` is ``a / b`` when ``b`` divides
``a`` as a polynomial (``(s0*s1+2*s1) / s1 == s0+2``), else ``None``; ``is_expr(v)`` tells an
expression from an int.

Reasoning: ``bounds(e) -> (lo, hi)`` by interval arithmetic over the symbol intervals (``lo``
may be ``-math.inf``, ``hi`` ``math.inf``, never nan): a product multiplies the intervals of its
factors, a repeated factor as a power (``k*k >= 0``), ``0 * inf`` counting as 0. The bounds of a
sum are sharpened by substitution, putting for one term a stand-in known to be no greater (for
a lower bound): a min/max argument (``min(a,b) <= a``, so ``s - min(s, t) >= 0`` is proved), a
symbol's symbolic interval end (``n - i - 1 >= 0`` for ``i`` in ``[0, n-1]``), a multiple of a
floor division's numerator (``num-den+1 <= den*(num//den) <= num``, so ``0 <= s % 3 <= 2``),
and inside a product the same for one factor when the other factors have a known sign, or the
factor's numeric bound when that lowers the term to one the sum also has (``s0 <= s0*s1`` for
``s1 >= 1``; ``i*s1*s2 + j*s2 + k < s0*s1*s2`` for indices in range).
``prove_nonnegative(e)`` answers ``True`` (``e >= 0`` for every value of the symbols), ``False``
(``e < 0`` for every value) or ``None`` (unknown); ``prove_le``, ``prove_lt`` and ``prove_eq`` are
built on it.

Limits: substitution replaces at most ``_REFINE_DEPTH`` terms in a row, inside products only in
sums of at most ``_REFINE_PRODUCT_TERMS`` terms (a stand-in there multiplies out into new terms),
never inside a floor division (``i//2 < n`` is not proved for ``i`` in ``[0, n-1]``); other
correlations are lost (``s//2 - s//3`` gets a loose bound, and ``k*k - 2*k`` gets ``[-8, 22]`` for
``k`` in ``[-3, 4]``, not ``[-1, 15]``), and ``(s+1)//3 - 1`` vs ``(s-2)//3`` is not proved equal.
Forms are canonical for polynomials over atoms, but a core is blind to a sum that shares symbols
with the arguments of its min, or to a constant inside a nested min/max: ``b*(a + min(a, 1))`` is
``b*min(a+1,2*a)``, equal to ``a*b + b*min(a, 1)`` in value, not in form. No one rule for cores can
see through the first case and keep both ``min(s0, 1)`` and ``max(s0-1, 0) == s0 - min(s0, 1)`` as
they read. ``None`` means "could not prove", never "maybe false". The search tries every stand-in
of every term, so its cost grows quickly with the number of min/max terms and symbolic ends: fine
for shapes and loop bounds, not for huge sums.

Output: ``str(e)`` is compact (``2*s0+s1-1``, ``max(s0-1,0)``, ``(s0-2)//3``, ``s0**2*s1``) for
printed shapes; ``to_source(e, names)`` is valid Python (``max(n0 - 1, 0)``, ``s0 * s1``) for code
generation; ``substitute`` and ``evaluate`` replace symbols by expressions or ints.

Example::

    >>> n = Symbol("n")
    >>> slice_length(n, 1, -1, None)
    max(n-2,0)
    >>> prove_le(sym_min(n, 4), 4)
    True
    >>> s0, s1 = Symbol("s0"), Symbol("s1")
    >>> (s0 + 1) * (s1 - 2)
    s0*s1-2*s0+s1-2
    >>> exact_divide(s0 * s1 + 2 * s1, s1)
    s0+2
"""

from __future__ import annotations

import functools
import itertools
import math
import re
from dataclasses import dataclass

INF = math.inf


class _Arith:
    """Operators shared by every expression node; results are canonical (see the module doc)."""

    __slots__ = ()

    def __add__(self, other):
        return _add(self, other) if _is_value(other) else NotImplemented

    __radd__ = __add__

    def __sub__(self, other):
        return _add(self, _scale(other, -1)) if _is_value(other) else NotImplemented

    def __rsub__(self, other):
        return _add(other, _scale(self, -1)) if _is_value(other) else NotImplemented

    def __neg__(self):
        return _scale(self, -1)

    def __mul__(self, other):
        return _mul(self, other) if _is_value(other) else NotImplemented

    __rmul__ = __mul__

    def __floordiv__(self, other):
        if isinstance(other, _Arith):
            raise TypeError(
                f"cannot floor-divide {self} by the symbolic size {other}: only by an int"
            )
        return _floordiv(self, other) if _is_value(other) else NotImplemented

    def __rfloordiv__(self, other):
        raise TypeError(f"cannot floor-divide {other} by the symbolic size {self}: only by an int")

    def __mod__(self, other):
        if isinstance(other, _Arith):
            raise TypeError(f"cannot take {self} modulo the symbolic size {other}: only an int")
        return _mod(self, other) if _is_value(other) else NotImplemented

    def __rmod__(self, other):
        raise TypeError(f"cannot take {other} modulo the symbolic size {self}: only an int")

    def __pow__(self, exponent, modulo=None):
        if modulo is not None or not is_int(exponent) or exponent < 0:
            raise TypeError(
                f"a symbolic size can only be raised to an int power >= 0, got {exponent!r}"
            )
        return functools.reduce(_mul, [self] * exponent, 1)

    def __rpow__(self, other):
        raise TypeError(f"cannot raise {other} to the symbolic power {self}")

    def __bool__(self):
        raise TypeError(
            f"the truth value of the symbolic size {self} is unknown; use prove_nonnegative()"
        )

    def __str__(self):
        return _render(self, lambda sym: sym.name, compact=True)

    def __repr__(self):
        return str(self)


@dataclass(frozen=True, repr=False)
class Symbol(_Arith):
    """A named integer known to lie in ``[lo, hi]`` (``lo`` may be ``-inf``, ``hi`` ``inf``)."""

    name: str
    lo: int | float | _Arith = 0
    hi: int | float | _Arith = INF

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name.isidentifier():
            raise ValueError(f"Symbol name must be an identifier, got {self.name!r}")
        for end, infinite in ((self.lo, -INF), (self.hi, INF)):
            if not (_is_value(end) or end == infinite):
                raise TypeError(
                    f"Symbol {self.name}: each end must be an int, an expression or "
                    f"{infinite}, got [{self.lo!r}, {self.hi!r}]"
                )
            if isinstance(end, _Arith) and self.name in _names_below(end):
                raise ValueError(f"Symbol {self.name}: its interval cannot refer to itself")
        if INF not in (-self.lo, self.hi) and prove_le(self.lo, self.hi) is False:
            raise ValueError(f"Symbol {self.name}: empty interval [{self.lo}, {self.hi}]")


@dataclass(frozen=True, repr=False)
class Sum(_Arith):
    """``const + sum(coef * term for term, coef in terms)``; build it with operators."""

    const: int
    terms: tuple


@dataclass(frozen=True, repr=False)
class Min(_Arith):
    """The least of ``args`` (two or more); build it with ``sym_min``."""

    args: tuple


@dataclass(frozen=True, repr=False)
class Max(_Arith):
    """The greatest of ``args`` (two or more); build it with ``sym_max``."""

    args: tuple


@dataclass(frozen=True, repr=False)
class FloorDiv(_Arith):
    """``num // den`` with ``den >= 2``; build it with ``//``."""

    num: _Arith
    den: int


@dataclass(frozen=True, repr=False)
class Prod(_Arith):
    """The product of ``factors``: two or more atoms (``Symbol``, ``Min``, ``FloorDiv``) sorted by
    ``_key``, a repeated factor being a power; build it with ``*``."""

    factors: tuple


Expr = Symbol | Sum | Min | Max | FloorDiv | Prod
_DUAL = {Min: Max, Max: Min}


class SymbolTable:
    """Hands out fresh symbols ``s0, s1, ...`` (one table per graph)."""

    def __init__(self, prefix: str = "s"):
        self.prefix = prefix
        self.symbols: list[Symbol] = []

    def new(self, lo: int | float | Expr = 0, hi: int | float | Expr = INF) -> Symbol:
        """A new symbol ``<prefix><count>`` with interval ``[lo, hi]`` (sizes: ``[0, inf)``)."""
        sym = Symbol(f"{self.prefix}{len(self.symbols)}", lo, hi)
        self.symbols.append(sym)
        return sym


# ---- construction -------------------------------------------------------------------------------


def is_int(value) -> bool:
    """A Python int, not a bool."""
    return isinstance(value, int) and not isinstance(value, bool)


def _is_value(value) -> bool:
    return is_int(value) or isinstance(value, _Arith)


def _check(value, what: str = "value"):
    if not _is_value(value):
        raise TypeError(f"{what} must be an int or a symbolic expression, got {value!r}")
    return value


def _linear(value) -> tuple[int, dict]:
    """``value`` as ``(const, {term: coef})``."""
    if is_int(value):
        return value, {}
    if isinstance(value, Sum):
        return value.const, dict(value.terms)
    if isinstance(value, Max):  # one spelling per term in a sum, so max(a,b) - max(a,b) cancels
        return 0, {Min(tuple(sorted((_scale(arg, -1) for arg in value.args), key=_key))): -1}
    return 0, {value: 1}


def _make(const: int, coefs: dict):
    """The canonical value of ``const + sum(coef * term)``."""
    coefs = {term: coef for term, coef in coefs.items() if coef}
    if not coefs:
        return const
    minmax = [term for term in coefs if isinstance(term, (Min, Max))]
    if len(minmax) == 1:
        # rest + c*min(args) == min(rest + c*arg) for c > 0, max(...) for c < 0
        (term,) = minmax
        coef = coefs.pop(term)
        rest = _make(const, coefs)
        kind = type(term) if coef > 0 else _DUAL[type(term)]
        return _minmax(kind, [_add(rest, _scale(arg, coef)) for arg in term.args])
    if any(_min_split(term) != (0, 1, term) for term in minmax):
        # min terms that are not alone are cores, as in products: 2*(min(a,1)+min(b,0)) ==
        # min(2*a,2)+min(2*b,0) and (min(a,1)+min(b,0))+1 == min(a+1,2)+min(b,0)
        return _from_poly(_terms_poly(const, coefs))
    if const == 0 and len(coefs) == 1 and next(iter(coefs.values())) == 1:
        return next(iter(coefs))
    return Sum(const, tuple(sorted(coefs.items(), key=lambda item: _key(item[0]))))


def _add(a, b):
    const_a, coefs_a = _linear(a)
    const_b, coefs_b = _linear(b)
    for term, coef in coefs_b.items():
        coefs_a[term] = coefs_a.get(term, 0) + coef
    return _make(const_a + const_b, coefs_a)


def _scale(value, factor: int):
    if not is_int(factor):
        raise TypeError(f"a symbolic size can only be multiplied by an int, got {factor!r}")
    const, coefs = _linear(value)
    return _make(const * factor, {term: coef * factor for term, coef in coefs.items()})


def _floordiv(value, den: int):
    if not is_int(den):
        raise TypeError(f"a symbolic size can only be floor-divided by an int, got {den!r}")
    if den == 0:
        raise ZeroDivisionError(f"symbolic floor division of {value} by zero")
    if den < 0:
        return _floordiv(_scale(value, -1), -den)
    if den == 1:
        return value
    if is_int(value):
        return value // den
    if isinstance(value, (Min, Max)):
        return _minmax(type(value), [_floordiv(arg, den) for arg in value.args])
    if isinstance(value, FloorDiv):
        return _floordiv(value.num, value.den * den)
    const, coefs = _linear(value)
    # the constant stays in the numerator: (s-2)//3 reads better than (s+1)//3-1
    quotient = _make(0, {term: coef // den for term, coef in coefs.items()})
    rest = _make(const, {term: coef % den for term, coef in coefs.items()})
    if is_int(rest) or isinstance(rest, (Min, Max, FloorDiv)):
        return _add(quotient, _floordiv(rest, den))
    lo, hi = bounds(rest)
    if lo != -INF and hi != INF and lo // den == hi // den:
        return _add(quotient, lo // den)
    return _add(quotient, FloorDiv(rest, den))


def _mod(value, den: int):
    """``value % den`` as ``value - den * (value // den)``: Python's sign (that of ``den``)."""
    return _add(value, _scale(_floordiv(value, den), -den))


def _minmax(kind, args):
    """Canonical ``kind(*args)`` for ``kind`` in (Min, Max)."""
    flat = []
    for arg in args:
        what = f"{kind.__name__.lower()} argument"
        flat.extend(arg.args if isinstance(arg, kind) else [_check(arg, what)])
    never_worse = prove_le if kind is Min else (lambda a, b: prove_le(b, a))
    kept = []
    for arg in sorted(flat, key=_key):  # sorted first: of two provably equal args, keep the same
        if any(never_worse(other, arg) for other in kept):
            continue
        kept = [other for other in kept if not never_worse(arg, other)] + [arg]
    if len(kept) == 1:
        return kept[0]
    return kind(tuple(sorted(kept, key=_key)))


def sym_min(*args):
    """``min(*args)`` of ints and expressions, simplified (an int when it is constant)."""
    if not args:
        raise TypeError("sym_min needs at least one argument")
    return _minmax(Min, list(args))


def sym_max(*args):
    """``max(*args)`` of ints and expressions, simplified (an int when it is constant)."""
    if not args:
        raise TypeError("sym_max needs at least one argument")
    return _minmax(Max, list(args))


_NAME_NUMBER = re.compile(r"(.*?)(\d*)$")


@functools.lru_cache(maxsize=1 << 14)  # sorting products and sums asks again and again
def _key(value) -> tuple:
    """Total order of canonical values: products (higher degree first), symbols (natural name
    order), sums, min, max, div, ints."""
    if is_int(value):
        return (9, value)
    if isinstance(value, Prod):
        return (-1, -len(value.factors), tuple(_key(factor) for factor in value.factors))
    if isinstance(value, Symbol):
        prefix, number = _NAME_NUMBER.match(value.name).groups()
        ends = tuple(
            (1, _key(end)) if isinstance(end, _Arith) else (0, end) for end in (value.lo, value.hi)
        )
        return (0, prefix, int(number) if number else -1, value.name, ends)
    if isinstance(value, Sum):
        return (1, tuple((_key(term), coef) for term, coef in value.terms), value.const)
    if isinstance(value, FloorDiv):
        return (4, _key(value.num), value.den)
    return (2 if isinstance(value, Min) else 3, tuple(_key(arg) for arg in value.args))


# ---- polynomials --------------------------------------------------------------------------------
# A polynomial is a dict {monomial: coef}: a monomial is a tuple of atoms sorted by _key, () for
# the constant; its atoms are symbols, floor divisions and min cores (see _min_split).


def _mul(a, b):
    """The canonical value of ``a * b``: an int scales, two expressions multiply as polynomials."""
    if is_int(a) or is_int(b):
        return _scale(b, a) if is_int(a) else _scale(a, b)
    product = {}
    for mono_a, coef_a in _poly(a).items():
        for mono_b, coef_b in _poly(b).items():
            mono = _mono_mul(mono_a, mono_b)
            product[mono] = product.get(mono, 0) + coef_a * coef_b
    return _from_poly(product)


def _mono_mul(a: tuple, b: tuple) -> tuple:
    return tuple(sorted(a + b, key=_key))


def _mono_divide(mono: tuple, by: tuple) -> tuple | None:
    """``mono / by`` as a monomial, or ``None`` when ``by`` does not divide ``mono``."""
    rest = list(mono)
    for atom in by:
        if atom not in rest:
            return None
        rest.remove(atom)
    return tuple(rest)


def _monomial(mono: tuple):
    """The term of a non-constant monomial: its atom, or the ``Prod`` of two or more."""
    return mono[0] if len(mono) == 1 else Prod(mono)


def _from_poly(poly: dict):
    """The canonical value of a polynomial."""
    coefs = {_monomial(mono): coef for mono, coef in poly.items() if mono}
    return _make(poly.get((), 0), coefs)


def _poly(value) -> dict:
    """``value`` as a polynomial; a min/max term is split by ``_min_split``."""
    return _terms_poly(*_linear(value))


def _terms_poly(const: int, coefs: dict) -> dict:
    """``const + sum(coef * term)`` as a polynomial."""
    poly = {(): const}
    for term, coef in coefs.items():
        if isinstance(term, Prod):
            parts = {term.factors: 1}
        else:
            parts = _min_poly(term) if isinstance(term, Min) else {(term,): 1}
        for mono, part in parts.items():
            poly[mono] = poly.get(mono, 0) + coef * part
    return {mono: coef for mono, coef in poly.items() if coef}


def _min_poly(term: Min) -> dict:
    """``min(args)`` as the polynomial ``rest + scale * core`` of ``_min_split``."""
    rest, scale, core = _min_split(term)
    poly = _poly(rest)
    # a core is its own core; a core that lost a dominated argument is split again
    for mono, coef in ({(core,): 1} if core == term else _poly(core)).items():
        poly[mono] = poly.get(mono, 0) + scale * coef
    return poly


@functools.lru_cache(maxsize=1 << 12)  # _make asks it of every min term of a sum
def _min_split(term: Min) -> tuple:
    """``(rest, scale, core)`` with ``min(args) == rest + scale * core`` and ``scale > 0``.

    ``rest`` holds the terms every argument has and a constant chosen by ``_core_shift``,
    ``scale`` is the gcd of what is left, so ``core`` is one min for a family of mins that differ
    by a constant, a common sum or a positive factor: ``min(s1+s0, s1+3) -> s1 + min(s0, 3)``,
    ``min(-s0, -1)`` (``-max(s0, 1)``) ``-> -1 + min(1-s0, 0)``. A sum that was absorbed into a
    min then multiplies out like the sum: ``(s1 + min(s0, 3)) * s2 == s1*s2 + s2*min(s0, 3)``.
    """
    linears = [_linear(arg) for arg in term.args]
    first = linears[0][1]
    common = {t: c for t, c in first.items() if all(co.get(t) == c for _, co in linears[1:])}
    rests = [
        _make(const, {t: c for t, c in coefs.items() if t not in common})
        for const, coefs in linears
    ]
    shift = _core_shift(rests)
    rests = [_linear(_add(rest, -shift)) for rest in rests]
    scale = math.gcd(*(number for const, coefs in rests for number in (const, *coefs.values())))
    core = _minmax(
        Min,
        [
            _make(const // scale, {t: c // scale for t, c in coefs.items()})
            for const, coefs in rests
        ],
    )
    return _make(shift, common), scale, core


def _core_shift(args: list) -> int:
    """The constant to take out of ``min(args)`` so that it reads simply: a min that prints as a
    max (see ``_max_like``) keeps an int argument 0 (``max(s0-1,0)``), any other the least
    constant of a non-int argument 0 (``min(s0,3)``). Adding a constant to every argument adds
    it to the answer, so the core does not depend on how the min was built."""
    ints = [arg for arg in args if is_int(arg)]
    others = [arg for arg in args if not is_int(arg)]
    if ints and all(map(_leads_negative, others)):
        return ints[0]
    return min(_linear(arg)[0] for arg in others)


def _leads_negative(value) -> bool:
    """Whether the first term of ``value`` in ``_key`` order has a negative coefficient."""
    _, coefs = _linear(value)
    return bool(coefs) and coefs[min(coefs, key=_key)] < 0


def _max_like(value: Min) -> bool:
    """Whether ``min(args)`` reads better as ``-max(-args)``: its non-int arguments all lead
    with a negative coefficient (``min(1-s0, 0) == -max(s0-1, 0)``)."""
    return all(_leads_negative(arg) for arg in value.args if not is_int(arg))


def _poly_divide(num: dict, den: dict) -> dict | None:
    """The polynomial ``q`` with int coefficients and ``num == q * den``, or ``None``.

    Long division by leading terms in graded lexicographic order, a monomial order (multiplying
    keeps it), so when ``q`` exists each leading term of the rest is a multiple of the leading
    term of ``den`` and the rest reaches zero; when a step does not divide, no ``q`` exists.
    """
    atoms = sorted({atom for mono in itertools.chain(num, den) for atom in mono}, key=_key)
    place = {atom: index for index, atom in enumerate(atoms)}

    def order(mono: tuple) -> tuple:
        exponents = [0] * len(atoms)
        for atom in mono:
            exponents[place[atom]] += 1
        return len(mono), exponents

    lead = max(den, key=order)
    quotient, rest = {}, dict(num)
    while rest:
        top = max(rest, key=order)
        factor = _mono_divide(top, lead)
        if factor is None or rest[top] % den[lead]:
            return None
        quotient[factor] = coef = rest[top] // den[lead]
        for mono, den_coef in den.items():
            product = _mono_mul(factor, mono)
            rest[product] = rest.get(product, 0) - coef * den_coef
            if not rest[product]:
                del rest[product]
    return quotient


def exact_divide(a, b):
    """``a / b`` when ``b`` divides ``a`` exactly as polynomials with int coefficients, else
    ``None`` (never a guess); ``b`` is a non-zero int or an expression.

    NumPy's ``reshape(-1)`` infers the unknown size as total / known. Atoms count as unknowns, so
    ``max(s0-1, 0) * s1`` divides by ``max(s0-1, 0)``, but ``s0`` does not divide by 2 even when
    it is known to be even, and a min/max that a core is blind to (see the module's limits) may
    not divide the products it entered.

    Example: ``exact_divide(s0*s1 + 2*s1, s1) == s0 + 2``; ``exact_divide(6*s0, 3) == 2*s0``;
    ``exact_divide(s0, 2) is None``.
    """
    _check(a, "dividend")
    if is_int(_check(b, "divisor")) and b == 0:
        raise ZeroDivisionError(f"exact_divide of {a} by zero")
    quotient = _poly_divide(_poly(a), _poly(b))
    return None if quotient is None else _from_poly(quotient)


def polynomial(value) -> dict | None:
    """``value`` as ``{monomial: coef}`` over symbols alone (a monomial is a tuple of symbols, a
    power repeating its symbol, ``()`` the constant), or None when it holds a min, a max or a
    floor division."""
    poly = _poly(_check(value))
    if all(isinstance(atom, Symbol) for monomial in poly for atom in monomial):
        return poly
    return None


def is_expr(value) -> bool:
    """Whether ``value`` is a symbolic expression (an ``Expr``, not an int)."""
    return isinstance(value, _Arith)


# ---- bounds and proofs --------------------------------------------------------------------------


_REFINE_DEPTH = 3  # terms replaced in a row while sharpening a bound; keeps the search small
# a stand-in inside a product multiplies out into new terms, so products are searched only in
# small sums (a flattened 4-d index i*s1*s2*s3 + j*s2*s3 + k*s3 + l against s0*s1*s2*s3 has 5)
_REFINE_PRODUCT_TERMS = 6


def _floor_div_bound(bound, den: int):
    return bound if bound in (INF, -INF) else bound // den


@functools.lru_cache(maxsize=1 << 14)  # values are immutable; the search meets a sum many times
def _bound(value, upper: bool, depth: int = _REFINE_DEPTH):
    """The least (``upper=False``) or greatest value of ``value``, as far as intervals tell;
    ``depth`` limits how many terms ``_refine`` replaces in a row."""
    if is_int(value):
        return value
    if isinstance(value, Symbol):
        end = value.hi if upper else value.lo
        return _bound(end, upper, depth) if isinstance(end, _Arith) else end
    if isinstance(value, (Min, Max)):
        pick = min if isinstance(value, Min) else max
        return pick(_bound(arg, upper, depth) for arg in value.args)
    if isinstance(value, FloorDiv):
        return _floor_div_bound(_bound(value.num, upper, depth), value.den)
    if isinstance(value, Prod):
        return _product_interval(value, depth)[upper]
    ends = (coef * _bound(term, upper != (coef < 0), depth) for term, coef in value.terms)
    naive = value.const + sum(ends)
    return _refine(value, naive, upper, depth) if depth else naive


def _product_interval(value: Prod, depth: int) -> tuple:
    """``(lo, hi)`` of a product by interval multiplication, a repeated factor as a power
    (``s*s >= 0`` whatever the sign of ``s``)."""
    interval = (1, 1)
    for factor, copies in itertools.groupby(value.factors):
        ends = _bound(factor, False, depth), _bound(factor, True, depth)
        interval = _interval_mul(interval, _interval_pow(ends, len(list(copies))))
    return interval


def _interval_mul(a: tuple, b: tuple) -> tuple:
    # 0 * inf is 0 here: the values are finite, so a zero end times an unbounded one stays 0
    corners = [0 if 0 in (x, y) else x * y for x in a for y in b]
    return min(corners), max(corners)


def _interval_pow(ends: tuple, power: int) -> tuple:
    lo, hi = ends
    if power % 2 or lo >= 0:
        return lo**power, hi**power
    if hi <= 0:
        return hi**power, lo**power
    return 0, max(lo**power, hi**power)


def _stand_ins(term, coef: int, upper: bool, terms: dict) -> list:
    """Values ``r`` with ``coef*term >= r`` (``<= r`` when ``upper``) for every value of the
    symbols, ``term`` being one of ``terms`` (a sum's ``{term: coef}``):

    - ``coef*arg`` for a min/max argument (``min(a, b) <= a``);
    - ``coef*end`` for a symbolic interval end (``i <= n-1`` for ``Symbol("i", 0, n - 1)``);
    - ``k*(num-den+1)`` or ``k*num`` for ``num//den`` when ``coef == k*den``, as
      ``num-den+1 <= den*(num//den) <= num`` (so ``0 <= s % 3 <= 2``);
    - for a product, the stand-ins of one factor times the others (``_product_stand_ins``).
    """
    lower = (coef > 0) != upper  # whether a lower bound of the term itself is wanted
    if isinstance(term, (Min, Max)):
        return [_scale(arg, coef) for arg in term.args] if isinstance(term, Max) == lower else []
    if isinstance(term, Symbol):
        end = term.lo if lower else term.hi
        return [_scale(end, coef)] if isinstance(end, _Arith) else []
    if isinstance(term, FloorDiv) and coef % term.den == 0:
        multiple = _add(term.num, 1 - term.den) if lower else term.num
        return [_scale(multiple, coef // term.den)]
    if isinstance(term, Prod):
        return _product_stand_ins(term, coef, upper, terms)
    return []


def _product_stand_ins(term: Prod, coef: int, upper: bool, terms: dict) -> list:
    """Stand-ins of ``coef * factor * others`` for each factor whose co-factor ``others`` has a
    known sign: ``others >= 0`` and ``coef*factor >= r`` give ``coef*factor*others >= r*others``.
    Besides the factor's own stand-ins, its numeric bound is tried when ``others`` is a term of
    the sum too, where the lower degree can cancel (``s0*s1 - s0 >= 0`` for ``s1 >= 1``);
    elsewhere interval multiplication already gives that bound. Only in sums of at most
    ``_REFINE_PRODUCT_TERMS`` terms."""
    if len(terms) > _REFINE_PRODUCT_TERMS:
        return []
    found = []
    for index, factor in enumerate(term.factors):
        if index and factor == term.factors[index - 1]:
            continue  # another copy of a power gives the same stand-ins
        others = _monomial(term.factors[:index] + term.factors[index + 1 :])
        if _bound(others, False, 0) >= 0:
            sign = 1
        elif _bound(others, True, 0) <= 0:
            sign = -1
        else:
            continue
        inner = _stand_ins(factor, coef * sign, upper, {})
        if others in terms:
            end = _bound(factor, (coef * sign > 0) == upper, 0)
            inner += [coef * sign * end] if end not in (INF, -INF) else []
        found.extend(_mul(stand_in, _scale(others, sign)) for stand_in in inner)
    return found


def _refine(value: Sum, naive, upper: bool, depth: int):
    """Sharpen a bound of a sum by putting a stand-in (see ``_stand_ins``) for one of its terms.

    For a lower bound, if ``coef*term >= r`` then the sum is at least the sum with ``r`` in
    place of ``coef*term``; every stand-in of every term gives such a bound and the best one wins.
    """
    candidates = [naive]
    const, coefs = _linear(value)
    for term, coef in value.terms:
        rest = _make(const, {other: c for other, c in coefs.items() if other != term})
        for stand_in in _stand_ins(term, coef, upper, coefs):
            candidates.append(_bound(_add(rest, stand_in), upper, depth - 1))
    return min(candidates) if upper else max(candidates)


def bounds(value) -> tuple[int | float, int | float]:
    """``(lo, hi)`` with ``lo <= value <= hi`` for every value of the symbols in their intervals."""
    _check(value)
    return _bound(value, upper=False), _bound(value, upper=True)


def prove_nonnegative(value) -> bool | None:
    """``True`` if ``value >= 0`` always, ``False`` if ``value < 0`` always, else ``None``."""
    lo, hi = bounds(value)
    if lo >= 0:
        return True
    if hi < 0:
        return False
    return None


def prove_le(a, b) -> bool | None:
    """``True`` if ``a <= b`` always, ``False`` if ``a > b`` always, else ``None``."""
    return prove_nonnegative(_check(b) - _check(a))


def prove_lt(a, b) -> bool | None:
    """``True`` if ``a < b`` always, ``False`` if ``a >= b`` always, else ``None``."""
    return prove_nonnegative(_check(b) - _check(a) - 1)


def prove_eq(a, b) -> bool | None:
    """``True`` if ``a == b`` always, ``False`` if ``a != b`` always, else ``None``."""
    lo, hi = bounds(_check(a) - _check(b))
    if lo == hi == 0:
        return True
    if lo > 0 or hi < 0:
        return False
    return None


# ---- substitution and output --------------------------------------------------------------------


def _names_below(value) -> set:
    """Names of the symbols ``value`` depends on, through their interval ends too."""
    names = set()
    for sym in free_symbols(value):
        names.add(sym.name)
        names.update(*(_names_below(end) for end in (sym.lo, sym.hi) if isinstance(end, _Arith)))
    return names


def free_symbols(value) -> frozenset:
    """The symbols ``value`` depends on."""
    if is_int(_check(value)):
        return frozenset()
    if isinstance(value, Symbol):
        return frozenset([value])
    if isinstance(value, FloorDiv):
        return free_symbols(value.num)
    if isinstance(value, Prod):
        parts = value.factors
    else:
        parts = value.args if isinstance(value, (Min, Max)) else [term for term, _ in value.terms]
    return frozenset().union(*(free_symbols(part) for part in parts))


def substitute(value, mapping: dict):
    """``value`` with each symbol in ``mapping`` replaced by its int or expression, simplified."""
    if is_int(_check(value)):
        return value
    if isinstance(value, Symbol):
        return _check(mapping.get(value, value), f"value for symbol {value.name}")
    if isinstance(value, FloorDiv):
        return _floordiv(substitute(value.num, mapping), value.den)
    if isinstance(value, (Min, Max)):
        return _minmax(type(value), [substitute(arg, mapping) for arg in value.args])
    if isinstance(value, Prod):
        return functools.reduce(_mul, (substitute(factor, mapping) for factor in value.factors))
    # one _make for the whole sum: adding term by term would let the first min term absorb the
    # terms before it, and a sum would not rebuild to itself
    const, coefs = value.const, {}
    for term, coef in value.terms:
        term_const, term_coefs = _linear(substitute(term, mapping))
        const += coef * term_const
        for inner, inner_coef in term_coefs.items():
            coefs[inner] = coefs.get(inner, 0) + coef * inner_coef
    return _make(const, coefs)


def evaluate(value, values: dict) -> int:
    """The int ``value`` takes when each symbol has the int given in ``values``."""
    result = substitute(value, values)
    if not is_int(result):
        missing = sorted(sym.name for sym in free_symbols(result))
        raise ValueError(
            f"cannot evaluate {value}: no int value for symbol(s) {', '.join(missing)}"
        )
    return result


def to_source(value, names: dict | None = None) -> str:
    """Python source computing ``value``; symbol ``sym`` is named ``names.get(sym, sym.name)``."""
    names = names or {}
    return _render(_check(value), lambda sym: names.get(sym, sym.name), compact=False)


def _render(value, name_of, compact: bool) -> str:
    """Text of ``value``: compact (``2*s0-1``) or spaced Python source (``2 * s0 - 1``)."""
    if is_int(value):
        return str(value)
    if isinstance(value, Symbol):
        return name_of(value)
    if isinstance(value, (Min, Max)):
        args = ("," if compact else ", ").join(_render(arg, name_of, compact) for arg in value.args)
        return f"{type(value).__name__.lower()}({args})"
    if isinstance(value, FloorDiv):
        num = _render(value.num, name_of, compact)
        num = f"({num})" if isinstance(value.num, (Sum, Prod)) else num
        return f"{num}//{value.den}" if compact else f"{num} // {value.den}"
    if isinstance(value, Prod):
        return _render_terms(0, ((value, 1),), name_of, compact)
    return _render_terms(value.const, value.terms, name_of, compact)


def _render_terms(const: int, terms: tuple, name_of, compact: bool) -> str:
    """Text of ``const + sum(coef * term for term, coef in terms)``."""
    pad = "" if compact else " "
    pieces = []
    for index, (term, coef) in enumerate(terms):
        if isinstance(term, Prod):
            text, sign = _render_product(term, name_of, compact)
            coef *= sign
        else:
            if isinstance(term, Min) and coef < 0:  # print -min(-a,-b) as the max(a,b) it is
                term, coef = _negated_dual(term), -coef
            text = _render(term, name_of, compact)
            if isinstance(term, FloorDiv) and (abs(coef) != 1 or (coef < 0 and index == 0)):
                text = f"({text})"  # 2*s//3 and -s//3 would divide the scaled or negated numerator
        magnitude = abs(coef) if index else coef
        if magnitude == -1:
            text = "-" + text
        elif magnitude != 1:
            text = f"{magnitude}{pad}*{pad}{text}"
        pieces.append(text if index == 0 else f"{pad}{'+' if coef > 0 else '-'}{pad}{text}")
    if const:
        pieces.append(f"{pad}{'+' if const > 0 else '-'}{pad}{abs(const)}")
    return "".join(pieces)


def _render_product(value: Prod, name_of, compact: bool) -> tuple[str, int]:
    """Text of a product (``s0**2*(s1//2)``) and the sign it takes: a min factor that is
    ``_max_like`` prints as the max it stands for (``min(1-s0,0) == -max(s0-1,0)``)."""
    pad = "" if compact else " "
    sign, pieces = 1, []
    for factor, copies in itertools.groupby(value.factors):
        power = len(list(copies))
        if isinstance(factor, Min) and _max_like(factor):
            factor, sign = _negated_dual(factor), sign * (-1) ** power
        text = _render(factor, name_of, compact)
        text = f"({text})" if isinstance(factor, FloorDiv) else text
        pieces.append(text if power == 1 else f"{text}{pad}**{pad}{power}")
    return f"{pad}*{pad}".join(pieces), sign


def _negated_dual(value: Min) -> Max:
    """``max(-a, -b)`` for ``min(a, b)``, for printing only (it is ``-min(a, b)``)."""
    return Max(tuple(_scale(arg, -1) for arg in value.args))


# ---- shape rules ---------------------------------------------------------------------------------


def _clamp_index(index: int | None, n, default, lowest: int, highest):
    """Python's ``slice.indices`` clamping of one bound: negative counts from ``n``."""
    if index is None:
        return default
    if index < 0:
        return sym_max(n + index, lowest)
    return sym_min(index, highest)


def slice_length(n, start: int | None, stop: int | None, step: int | None):
    """``len(range(*slice(start, stop, step).indices(n)))`` for a size ``n`` (int or expression)."""
    _check(n, "slice_length size")
    for name, bound in (("start", start), ("stop", stop), ("step", step)):
        if bound is not None and not is_int(bound):
            raise TypeError(f"slice_length {name} must be an int or None, got {bound!r}")
    step = 1 if step is None else step
    if step == 0:
        raise ValueError("slice step cannot be zero")
    # The bound a range starts from needs no clamp at n when it is >= 0: past n the count is 0
    # either way, which keeps min() out of the result (a[1:-1] has length max(n-2,0)).
    if step > 0:
        first = start if start is not None and start >= 0 else _clamp_index(start, n, 0, 0, n)
        end = _clamp_index(stop, n, n, 0, n)
        return sym_max((end - first + step - 1) // step, 0)
    first = _clamp_index(start, n, n - 1, -1, n - 1)
    end = stop if stop is not None and stop >= 0 else _clamp_index(stop, n, -1, -1, n - 1)
    return sym_max((first - end - step - 1) // -step, 0)


def product_of(sizes):
    """The product of ``sizes`` (ints or expressions): an array's element count."""
    total = 1
    for size in sizes:
        total = total * size
    return total
