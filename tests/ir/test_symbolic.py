"""Symbolic sizes: canonical form, printing, bounds, proofs and NumPy's slice length."""

from __future__ import annotations

import math
import operator

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from gcompile.ir.symbolic import (
    FloorDiv,
    Max,
    Min,
    Prod,
    Symbol,
    SymbolTable,
    bounds,
    evaluate,
    exact_divide,
    free_symbols,
    is_expr,
    prove_eq,
    prove_le,
    prove_lt,
    prove_nonnegative,
    slice_length,
    substitute,
    sym_max,
    sym_min,
    to_source,
)

s0, s1 = Symbol("s0"), Symbol("s1")
n = Symbol("n")


@pytest.mark.parametrize(
    "expr, compact, source",
    [
        (s0 - 1, "s0-1", "s0 - 1"),
        (2 * s0 + s1, "2*s0+s1", "2 * s0 + s1"),
        (s1 - 3 * s0 + 4, "-3*s0+s1+4", "-3 * s0 + s1 + 4"),
        (sym_max(s0 - 1, 0), "max(s0-1,0)", "max(s0 - 1, 0)"),
        (sym_min(s1, s0, 7), "min(s0,s1,7)", "min(s0, s1, 7)"),
        ((s0 - 2) // 3, "(s0-2)//3", "(s0 - 2) // 3"),
        (s0 // 3, "s0//3", "s0 // 3"),
        (2 * (s0 // 3) + 1, "2*(s0//3)+1", "2 * (s0 // 3) + 1"),
        (-(s0 // 3), "-(s0//3)", "-(s0 // 3)"),
        (s1 - s0 // 3, "s1-s0//3", "s1 - s0 // 3"),
        (s0 * s1, "s0*s1", "s0 * s1"),
        (2 * s0 * s1 - s1, "2*s0*s1-s1", "2 * s0 * s1 - s1"),
        (s1 * s0 * s0 - s1, "s0**2*s1-s1", "s0 ** 2 * s1 - s1"),
        (-(s0 * s1), "-s0*s1", "-s0 * s1"),
        ((s0 + 1) * s1 // 3, "(s0*s1+s1)//3", "(s0 * s1 + s1) // 3"),
        (s0 * s1 // 2, "(s0*s1)//2", "(s0 * s1) // 2"),
        (s1 * (s0 // 2), "s1*(s0//2)", "s1 * (s0 // 2)"),
        (-(s0 // 2) * (s1 // 3), "-(s0//2)*(s1//3)", "-(s0 // 2) * (s1 // 3)"),
        ((s0 // 2) * (s0 // 2), "(s0//2)**2", "(s0 // 2) ** 2"),
        (s1 * sym_max(s0 - 1, 0), "s1*max(s0-1,0)", "s1 * max(s0 - 1, 0)"),
        (-s1 * sym_max(s0 - 1, 0), "-s1*max(s0-1,0)", "-s1 * max(s0 - 1, 0)"),
        (s1 * sym_min(s0, 3) - s0 * s1, "-s0*s1+s1*min(s0,3)", "-s0 * s1 + s1 * min(s0, 3)"),
        (sym_min(s0 * s1, 3), "min(s0*s1,3)", "min(s0 * s1, 3)"),
    ],
)
def test_golden_printing(expr, compact, source):
    assert str(expr) == compact
    assert repr(expr) == compact
    assert to_source(expr) == source


def test_to_source_uses_the_given_names():
    expr = sym_max(s0 - 1, 0) + sym_min(s1, 3)
    assert to_source(expr, {s0: "n0", s1: "n1"}) == "min(n1, 3) + max(n0 - 1, 0)"


def test_symbol_table_hands_out_fresh_names_in_natural_order():
    table = SymbolTable()
    symbols = [table.new() for _ in range(12)]
    assert [sym.name for sym in symbols[:2]] == ["s0", "s1"]
    assert table.symbols == symbols
    assert str(symbols[10] + symbols[2]) == "s2+s10"
    assert table.new(1, 5) == Symbol("s12", 1, 5)


def test_canonical_form_makes_equal_expressions_equal():
    assert s0 + 1 - 1 == s0
    assert s0 + s1 == s1 + s0
    assert hash(2 * s0 + s1 - 1) == hash(s1 - 1 + s0 + s0)
    assert sym_min(s0, s1) == sym_min(s1, s0) == sym_min(s0, sym_min(s1, s0))
    assert {s0 - 1: "a"}[s0 + 2 - 3] == "a"
    assert s0 + 1 != s0 + 2


def test_products_are_canonical_polynomials():
    assert isinstance(s0 * s1, Prod) and (s1 * s0).factors == (s0, s1)
    assert s0 * s1 == s1 * s0 and hash(s0 * s1) == hash(s1 * s0)
    assert (s0 + 1) * (s1 - 2) == s0 * s1 - 2 * s0 + s1 - 2
    assert (s0 * s1) * n == s0 * (s1 * n) == n * s1 * s0
    assert (s0 - s1) * (s0 + s1) == s0 * s0 - s1 * s1
    assert (s0 + s1) * (s0 + s1) == s0 * s0 + 2 * s0 * s1 + s1 * s1
    assert s0 * 3 == 3 * s0 == s0 + s0 + s0
    difference = s0 * s1 - s1 * s0
    assert difference == 0 and type(difference) is int
    assert type((s0 + 1) * s1 - s0 * s1 - s1) is int


def test_min_and_max_stay_atoms_of_a_product():
    m = sym_min(s0, 3)
    assert isinstance(s1 * m, Prod) and m in (s1 * m).factors
    # a sum absorbed into a min, s1 + m == min(s0+s1, s1+3), multiplies out like the sum
    assert (s1 + m) * n == s1 * n + m * n
    assert (m + 1) * s1 == m * s1 + s1
    assert 2 * (s1 * m) == s1 * sym_min(2 * s0, 6) and 2 * (s1 * m) == s1 * (2 * m)
    assert s1 * sym_max(s0, 1) == -(s1 * sym_min(-s0, -1))
    assert s1 * sym_max(s0, 1) - sym_max(s0, 1) * s1 == 0
    assert s1 * sym_max(s0, 1) == s1 * sym_max(s0 - 1, 0) + s1
    # the absorption of the rest of a sum by its one min term sees products as plain terms
    assert s0 * s1 + m == sym_min(s0 * s1 + s0, s0 * s1 + 3)
    assert n - sym_min(1, n) + s0 * s1 == sym_max(n - 1 + s0 * s1, s0 * s1)


def test_min_terms_that_are_not_alone_in_a_sum_are_cores():
    a, b = Symbol("a"), Symbol("b", -5, 5)
    # hypothesis found these on the affine module: the same sum in two forms
    assert 2 * (sym_min(b, 0) + sym_min(a, 1)) == 2 * sym_min(b, 0) + 2 * sym_min(a, 1)
    assert (sym_min(a, 1) + sym_min(b, 0)) + 1 == sym_min(a + 1, 2) + sym_min(b, 0)
    assert (s1 + sym_min(s0, 3)) + sym_min(n, 4) == s1 + (sym_min(s0, 3) + sym_min(n, 4))
    assert str(sym_min(s0 + 1, 4) + sym_min(s1, 5)) == "min(s0,3)+min(s1,5)+1"
    assert str(sym_max(s0, 1) + sym_max(s1, 1)) == "max(s0-1,0)+max(s1-1,0)+2"
    assert sym_min(2 * a, 2) + sym_min(b, 0) - sym_min(a, 1) == sym_min(a, 1) + sym_min(b, 0)
    # substitute rebuilds a sum in one step: adding b to max(2*b, s0) first would give
    # max(3*b, b+s0), a min whose split cannot see the b again
    expr = (b + sym_max(s1, n)) + sym_max(2 * b, s0)
    assert str(expr) == "b+max(2*b,s0)+max(n,s1)"
    assert substitute(expr, {}) == expr
    assert str(substitute(expr, {n: 3})) == "b+max(2*b,s0)+max(s1-3,0)+3"


def test_constants_fold_to_plain_ints():
    for value in (s0 - s0, (s0 + 3) - s0, 0 * s0, (2 * s0 + 7) - 2 * s0 - 7, (s0 // 4) * 0):
        assert type(value) is int
    assert s0 - s0 == 0
    assert sym_min(3, 5) == 3 and sym_max(3, 5) == 5


def test_floor_division_simplifies():
    assert (3 * s0 + 6) // 3 == s0 + 2
    assert (3 * s0 + 7) // 3 == s0 + 2
    assert s0 // 1 == s0
    assert (s0 // 2) // 3 == s0 // 6
    assert (s0 // 2) // -2 == -(s0 // 2) + s0 // 4  # the nested division in the rest merges too
    assert s0 // -2 == (-s0) // 2
    assert isinstance(s0 // 3, FloorDiv)
    assert Symbol("d", 0, 2) // 3 == 0
    assert sym_max(s0 - 1, 0) // 2 == sym_max((s0 - 1) // 2, 0)


def test_mod_and_pow_follow_python_on_ints():
    x = Symbol("x", -math.inf, math.inf)
    for d in (-5, -3, -2, -1, 1, 2, 3, 7):
        for expr, reference in (
            (x, lambda v: v),
            (2 * x + 1, lambda v: 2 * v + 1),
            (x * x - 3, lambda v: v * v - 3),
        ):
            for v in range(-12, 13):
                assert evaluate(expr % d, {x: v}) == reference(v) % d, (expr, d, v)
    for k in range(5):
        for v in range(-4, 5):
            assert evaluate((x - 2) ** k, {x: v}) == (v - 2) ** k
    assert x**0 == 1 and x**1 == x and x**3 == x * x * x
    assert (s0 + 1) ** 2 == s0 * s0 + 2 * s0 + 1
    assert s0 % 1 == 0 and (2 * s0 + 1) % 2 == 1 and (6 * s0 + 4) % -3 == -2
    assert s0 % 3 == s0 - 3 * (s0 // 3) and str(s0 % 3) == "s0-3*(s0//3)"


def test_exact_divide_divides_polynomials_exactly_or_answers_none():
    s2 = Symbol("s2")
    assert exact_divide(s0 * s1 + 2 * s1, s1) == s0 + 2
    assert exact_divide(6 * s0, 3) == 2 * s0 and exact_divide(6 * s0 + 4, -2) == -3 * s0 - 2
    assert exact_divide(12, 4) == 3 and exact_divide(0, s0) == 0 and exact_divide(s0, s0) == 1
    assert exact_divide(s0 * s1 * s2, s0 * s2) == s1  # reshape(-1): total / known
    assert exact_divide(s0 * s1 - s1, s0 - 1) == s1
    assert exact_divide(s0 * s0 - s1 * s1, s0 + s1) == s0 - s1
    assert exact_divide((s0 + 1) ** 3, (s0 + 1) ** 2) == s0 + 1
    assert exact_divide((s0 + s1 + 2) * (s0 - 2 * s1 + 1), s0 - 2 * s1 + 1) == s0 + s1 + 2
    rows = sym_max(s0 - 1, 0)  # x[1:] of an [s0, s1] array, flattened
    assert exact_divide(rows * s1, s1) == rows and exact_divide(rows * s1, rows) == s1
    assert exact_divide(sym_min(2 * s0, 6), 2) == sym_min(s0, 3)
    assert exact_divide(2 * (s1 + sym_min(s0, 3)), 2) == s1 + sym_min(s0, 3)
    not_exact = [
        (12, 5),
        (s0, 2),
        (2 * s0 + 1, 2),
        (s0 * s1, s2),
        (s0 * s0 + 1, s0 + 1),
        (2 * s0 * s1, 4 * s1),
        (7, s0),
        (s0, s0 * s1),
        (s0 // 2, s0),
        (s0, sym_min(s0, 3)),
    ]
    for a, b in not_exact:
        assert exact_divide(a, b) is None, (a, b)
    with pytest.raises(ZeroDivisionError):
        exact_divide(s0, 0)
    with pytest.raises(TypeError, match="divisor"):
        exact_divide(s0, 1.5)


def test_is_expr_tells_expressions_from_ints():
    assert all(is_expr(value) for value in (s0, s0 + 1, s0 * s1, sym_min(s0, 3), s0 // 2))
    assert not any(is_expr(value) for value in (3, s0 - s0, 1.5, True, "s0"))


def test_min_and_max_drop_arguments_that_cannot_win():
    assert sym_min(s0, s0 + 1) == s0
    assert sym_max(s0, s0 + 1, -4) == s0 + 1
    assert sym_max(s0, 0) == s0  # sizes are >= 0
    assert sym_min(s0, -1) == -1
    assert isinstance(sym_min(s0, 3), Min)
    pinned = Symbol("p", 3, 3)  # provably equal to 3: the same argument survives in any order
    assert sym_min(pinned, 3) == sym_min(3, pinned) == pinned
    assert isinstance(sym_max(s0, s1), Max)


def test_min_and_max_absorb_the_affine_rest():
    assert n - sym_min(1, n) == sym_max(n - 1, 0)
    assert -sym_min(s0, s1) == sym_max(-s0, -s1)
    assert 2 * sym_max(s0, 3) + 1 == sym_max(2 * s0 + 1, 7)


def test_errors_are_clear():
    with pytest.raises(TypeError):
        s0 * 1.5
    with pytest.raises(TypeError, match="modulo the symbolic size s1: only an int"):
        s0 % s1
    with pytest.raises(TypeError, match="modulo the symbolic size s0: only an int"):
        7 % s0
    with pytest.raises(ZeroDivisionError):
        s0 % 0
    for bad in (-1, s1, 0.5):
        with pytest.raises(TypeError, match="int power >= 0"):
            s0**bad
    with pytest.raises(TypeError, match="int power >= 0"):
        pow(s0, 2, 5)
    with pytest.raises(TypeError, match="symbolic power"):
        2**s0
    with pytest.raises(ZeroDivisionError):
        s0 // 0
    with pytest.raises(TypeError, match="only by an int"):
        s0 // s1
    with pytest.raises(TypeError, match="only by an int"):
        6 // s0
    with pytest.raises(TypeError, match="truth value"):
        bool(s0 + 1)
    with pytest.raises(ValueError, match="empty interval"):
        Symbol("x", 3, 2)
    with pytest.raises(TypeError, match="each end must be an int"):
        Symbol("x", 0.5)
    with pytest.raises(ValueError, match="identifier"):
        Symbol("a b")
    with pytest.raises(ValueError, match="no int value for symbol.*s1"):
        evaluate(s0 + s1, {s0: 3})
    with pytest.raises(TypeError, match="value for symbol s0"):
        substitute(s0, {s0: 1.5})
    with pytest.raises(TypeError):
        s0 + 1.5


def test_bounds_by_interval_arithmetic():
    i = Symbol("i", 0, 9)
    k = Symbol("k", -3, 4)
    assert bounds(2 * i - k + 1) == (-3, 22)
    assert bounds(s0 - 1) == (-1, math.inf)
    assert bounds(-s0) == (-math.inf, 0)
    assert bounds(sym_min(i, k)) == (-3, 4)
    assert bounds(sym_max(i, k) // 2) == (0, 4)
    assert bounds(7) == (7, 7)


def test_bounds_of_products_by_interval_multiplication():
    i = Symbol("i", 0, 9)
    k = Symbol("k", -3, 4)
    d = Symbol("d", -math.inf, -2)
    zero = Symbol("z", 0, 0)
    anything = Symbol("u", -math.inf, math.inf)
    assert bounds(i * k) == (-27, 36)
    assert bounds(k * k) == (0, 16)  # a repeated factor is a power, not two free factors
    assert bounds(k * k * k) == (-27, 64)
    assert bounds(d * d) == (4, math.inf)
    assert bounds(s0 * s1) == (0, math.inf)
    assert bounds(s0 * d) == (-math.inf, 0)
    assert bounds(i * (s0 - 1)) == (-9, math.inf)
    assert bounds(zero * d) == (0, 0) and bounds(zero * anything) == (0, 0)
    assert bounds(k * anything) == (-math.inf, math.inf)
    assert bounds(i * sym_min(k, 2) // 2) == (-14, 9)


def test_prove_answers_true_false_or_unknown():
    i = Symbol("i", 0, 9)
    assert prove_nonnegative(s0) is True
    assert prove_nonnegative(-s0 - 1) is False
    assert prove_nonnegative(s0 - 1) is None
    assert prove_lt(i, 10) is True and prove_lt(i, 9) is None and prove_lt(i, 0) is False
    assert prove_le(sym_min(s0, 4), 4) is True
    assert prove_eq(s0 + 1, s0) is False
    assert prove_eq((2 * s0) // 2, s0) is True
    assert prove_eq(s0, s1) is None


def test_prove_sees_through_min_and_max_terms():
    # two min/max terms stay inside the sum; min(a, b) <= a still decides these
    expr = s0 - sym_min(s0, s1) + sym_max(s1, 2) - sym_max(s1, 2)
    assert prove_nonnegative(s0 - sym_min(s0, s1)) is True
    assert prove_nonnegative(expr) is True
    both = sym_max(s0, s1) - sym_min(s0, s1)
    assert prove_nonnegative(both) is True
    assert prove_nonnegative(sym_min(s0, s1) - sym_max(s0, s1) - 1) is False


def test_prove_substitutes_inside_products_when_the_co_factor_has_a_sign():
    a, b = Symbol("a", 1), Symbol("b", 1)
    assert prove_le(a, a * b) is True  # b >= 1 and a >= 0: a*b >= a
    assert prove_le(a, a * s1) is None  # s1 may be 0
    assert prove_le(a * b, a * b + a) is True and prove_lt(a * b, a * b * b + 1) is True
    i = Symbol("i", 0, n - 1)
    assert prove_le(i * s1, n * s1) is True
    assert prove_le(i * s1 + s1, n * s1) is True  # row i ends inside an [n, s1] array
    assert prove_lt(i * s1, n * s1) is None  # s1 may be 0
    anything = Symbol("u", -math.inf, math.inf)
    assert prove_le(i * anything, n * anything) is None  # u may be negative
    negative = Symbol("d", -math.inf, -1)
    assert prove_le(n * negative, i * negative) is True  # d < 0 turns the substitution around


def test_prove_a_flattened_index_stays_inside_the_array():
    s2 = Symbol("s2")
    i, j, k = Symbol("i", 0, s0 - 1), Symbol("j", 0, s1 - 1), Symbol("k", 0, s2 - 1)
    offset = i * s1 * s2 + j * s2 + k
    assert prove_le(0, offset) is True
    assert prove_lt(offset, s0 * s1 * s2) is True
    assert prove_lt(offset, s0 * s1 * s2 - 1) is None
    assert prove_lt(offset + s2, s0 * s1 * s2) is None


def test_bounds_of_mod_come_from_the_floor_division():
    x = Symbol("x", -math.inf, math.inf)
    assert bounds(x % 3) == (0, 2) and bounds(x % -3) == (-2, 0)
    assert bounds(s0 % 7) == (0, 6) and bounds((2 * x + 1) % 4) == (0, 3)
    assert prove_lt(s0 % 5, 5) is True and prove_le(0, s0 % 5) is True
    assert bounds(3 * (x // 3) - x) == (-2, 0)


def test_loop_index_bounds_against_a_constant_trip_count():
    i = Symbol("i", 0, 7)  # for i in range(0, 8)
    assert prove_lt(i, 8) is True
    assert prove_lt(i + 1, 8) is None
    assert prove_le(0, i - 1) is None


def test_loop_index_bounds_against_a_symbolic_trip_count():
    i = Symbol("i", 0, n - 1)  # for i in range(n)
    j = Symbol("j", i + 1, n - 1)  # for j in range(i + 1, n)
    assert bounds(i) == (0, math.inf)
    assert prove_lt(i, n) is True and prove_le(0, n - 1 - i) is True
    assert prove_lt(j, n) is True and prove_lt(i, j) is True
    assert prove_lt(2 * i + 1, 2 * n) is True
    assert prove_lt(i, n - 1) is None
    assert prove_lt(n, i) is False
    assert sym_min(i, n) == i and sym_max(i + 1, n) == n
    assert i != Symbol("i", 0, n - 2) and hash(i) == hash(Symbol("i", 0, n - 1))


def test_symbolic_interval_ends_are_checked():
    with pytest.raises(ValueError, match="cannot refer to itself"):
        Symbol("i", 0, Symbol("i") - 1)
    with pytest.raises(ValueError, match="empty interval"):
        Symbol("k", n + 1, n)


def test_substitute_and_free_symbols():
    expr = sym_max(s0 - s1, 0) + s0 // 2
    assert free_symbols(expr) == {s0, s1}
    assert substitute(expr, {s1: s0}) == s0 // 2
    assert substitute(expr, {s0: 2 * n}) == sym_max(2 * n - s1, 0) + n
    assert evaluate(expr, {s0: 7, s1: 3}) == 4 + 3


def test_substitute_and_evaluate_products():
    expr = (s0 - 1) * s1 + s0 * s0
    assert free_symbols(expr) == {s0, s1}
    assert free_symbols(s1 * sym_min(s0, 3)) == {s0, s1}
    assert substitute(expr, {s1: s0}) == 2 * s0 * s0 - s0
    assert substitute(expr, {s0: n + 1}) == n * s1 + n * n + 2 * n + 1
    assert evaluate(expr, {s0: 3, s1: 4}) == 2 * 4 + 9
    assert substitute(s1 * sym_min(s0, 3), {s1: 2}) == sym_min(2 * s0, 6)
    assert evaluate(s1 * (s0 // 2) * sym_max(s0, n), {s0: 5, s1: -3, n: 7}) == -3 * 2 * 7


SLICE_BOUNDS = [None, -13, -5, -3, -1, 0, 1, 2, 3, 5, 13]
SLICE_STEPS = [None, -4, -3, -2, -1, 1, 2, 3, 4]


@pytest.mark.parametrize("step", SLICE_STEPS)
def test_slice_length_matches_python_on_every_small_case(step):
    for start in SLICE_BOUNDS:
        for stop in SLICE_BOUNDS:
            length = slice_length(n, start, stop, step)
            for size in range(0, 16):
                expected = len(range(*slice(start, stop, step).indices(size)))
                assert evaluate(length, {n: size}) == expected, (start, stop, step, size, length)
                assert slice_length(size, start, stop, step) == expected


@settings(max_examples=300, deadline=None)
@given(
    size=st.integers(0, 50),
    start=st.none() | st.integers(-60, 60),
    stop=st.none() | st.integers(-60, 60),
    step=st.none() | st.integers(-7, 7).filter(bool),
)
def test_slice_length_matches_python(size, start, stop, step):
    length = slice_length(n, start, stop, step)
    expected = len(range(*slice(start, stop, step).indices(size)))
    assert evaluate(length, {n: size}) == expected
    assert eval(to_source(length, {n: "size"}), {"size": size}) == expected
    low, high = bounds(length)
    assert low >= 0 and low <= expected <= high


@pytest.mark.parametrize(
    "start, stop, step, text",
    [
        (1, -1, None, "max(n-2,0)"),
        (1, None, None, "max(n-1,0)"),
        (None, None, -1, "n"),
        (None, None, 2, "(n+1)//2"),
        (None, 5, None, "min(n,5)"),
        (2, None, 3, "n//3"),
    ],
)
def test_slice_length_prints_simply(start, stop, step, text):
    assert str(slice_length(n, start, stop, step)) == text


def test_slice_length_rejects_bad_input():
    with pytest.raises(ValueError, match="step cannot be zero"):
        slice_length(n, None, None, 0)
    with pytest.raises(TypeError, match="start must be an int or None"):
        slice_length(n, 1.0, None, None)


# ---- properties over random expressions ----------------------------------------------------

A, B, C = Symbol("a"), Symbol("b", -5, 5), Symbol("c", 2, 9)
# i in range(c), k in range(b, a + b + c): interval ends that are expressions of other symbols
SYMBOLS = [A, B, C, Symbol("d", -math.inf, 3), Symbol("i", 0, C - 1), Symbol("k", B, A + B + C - 1)]


@st.composite
def symbol_values(draw):
    """A value for each symbol inside its interval (unbounded ends sampled near the other end)."""
    values = {A: draw(st.integers(0, 40)), B: draw(st.integers(-5, 5)), C: draw(st.integers(2, 9))}
    values[SYMBOLS[3]] = draw(st.integers(-40, 3))
    values[SYMBOLS[4]] = draw(st.integers(0, values[C] - 1))
    values[SYMBOLS[5]] = draw(st.integers(values[B], values[A] + values[B] + values[C] - 1))
    return values


BY_INT = {"scale": operator.mul, "//": operator.floordiv, "%": operator.mod, "**": operator.pow}
BY_TREE = {"+": operator.add, "-": operator.sub, "*": operator.mul}


def extend(children, with_min_max: bool = True):
    """Trees ``(op, left, right)``: ``right`` is a tree for ``BY_TREE`` ops and min/max, an int
    for ``BY_INT`` ones (powers kept small: polynomials grow fast)."""
    return st.one_of(
        st.tuples(
            st.sampled_from([*BY_TREE, *(["min", "max"] if with_min_max else [])]),
            children,
            children,
        ),
        st.tuples(st.just("scale"), children, st.integers(-3, 3)),
        st.tuples(st.sampled_from(["//", "%"]), children, st.integers(-4, 4).filter(bool)),
        st.tuples(st.just("**"), children, st.integers(0, 3)),
    )


LEAVES = st.integers(-10, 10) | st.sampled_from(SYMBOLS)
TREES = st.recursive(LEAVES, extend, max_leaves=8)
POLYNOMIAL_TREES = st.recursive(LEAVES, lambda c: extend(c, with_min_max=False), max_leaves=6)
VALUATIONS = st.lists(symbol_values(), min_size=1, max_size=4)


def build(tree, env: dict, smallest, largest):
    """The tree's value with symbols read from ``env``, min/max from ``smallest``/``largest``."""
    if not isinstance(tree, tuple):
        return env.get(tree, tree) if isinstance(tree, Symbol) else tree
    op, left, right = tree
    a = build(left, env, smallest, largest)
    if op in BY_INT:
        return BY_INT[op](a, right)
    b = build(right, env, smallest, largest)
    if op in BY_TREE:
        return BY_TREE[op](a, b)
    return (smallest if op == "min" else largest)(a, b)


def symbolic(tree):
    """The tree as a symbolic expression."""
    return build(tree, {}, sym_min, sym_max)


@settings(max_examples=400, deadline=None)
@given(tree=TREES, valuations=VALUATIONS)
def test_random_expressions_evaluate_bound_print_and_prove_correctly(tree, valuations):
    expr = symbolic(tree)
    low, high = bounds(expr)
    verdict = prove_nonnegative(expr)
    names = {sym: f"v_{sym.name}" for sym in SYMBOLS}
    for values in valuations:
        expected = build(tree, values, min, max)  # plain Python ints: the reference
        assert evaluate(expr, values) == expected
        scope = {names[sym]: value for sym, value in values.items()}
        assert eval(to_source(expr, names), scope) == expected
        assert eval(str(expr), {sym.name: value for sym, value in values.items()}) == expected
        assert low <= expected <= high
        assert verdict is None or verdict == (expected >= 0)


@settings(max_examples=200, deadline=None)
@given(left=POLYNOMIAL_TREES, middle=POLYNOMIAL_TREES, right=POLYNOMIAL_TREES)
def test_polynomials_are_canonical_whatever_the_order_of_building(left, middle, right):
    a, b, c = symbolic(left), symbolic(middle), symbolic(right)
    assert a * b == b * a and hash(a * b) == hash(b * a)
    assert a * (b + c) == a * b + a * c and str(a * (b + c)) == str(a * b + a * c)
    assert (a * b) * c == a * (b * c)
    assert (a + b) - b == a and a * b - b * a == 0
    if b != 0:
        assert exact_divide(a * b, b) == a


@settings(max_examples=200, deadline=None)
@given(left=TREES, right=TREES, valuations=VALUATIONS)
def test_exact_divide_never_guesses(left, right, valuations):
    a, b = symbolic(left), symbolic(right)
    assume(b != 0)
    for dividend in (a, a * b, a * b + 1):
        quotient = exact_divide(dividend, b)
        if quotient is None:
            continue
        for values in valuations:
            assert evaluate(quotient, values) * evaluate(b, values) == evaluate(dividend, values)


@settings(max_examples=200, deadline=None)
@given(tree=TREES)
def test_rebuilding_a_random_expression_gives_an_equal_one(tree):
    first, second = symbolic(tree), symbolic(tree)
    assert first == second and hash(first) == hash(second) and str(first) == str(second)
    assert substitute(first, {}) == first
