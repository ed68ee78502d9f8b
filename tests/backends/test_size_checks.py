"""The table of size checks a program's entry reads (``size_checks``) against the conditions."""

import operator
import random

from gcompile.backends.numba import size_checks
from gcompile.ir.symbolic import Symbol, polynomial, sym_max, sym_min

SYMBOLS = [Symbol(f"s{i}", 2) for i in range(4)]
POSITIONS = {symbol: position for position, symbol in enumerate(SYMBOLS)}
COMPARE = {
    "==": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}


def _random_polynomial(rng: random.Random):
    value = rng.randint(-6, 6)
    for _ in range(rng.randint(1, 3)):
        term = rng.randint(-3, 3)
        for _ in range(rng.randint(1, 3)):
            term = term * rng.choice(SYMBOLS)
        value = value + term
    return value


def _holds(condition, sizes) -> bool:
    relation, lhs, rhs = condition
    values = dict(zip(SYMBOLS, sizes))

    def evaluate(value):
        if isinstance(value, int):
            return value
        return sum(
            coefficient * _product(values[s] for s in monomial)
            for monomial, coefficient in polynomial(value).items()
        )

    return COMPARE[relation](evaluate(lhs), evaluate(rhs))


def _product(factors) -> int:
    result = 1
    for factor in factors:
        result *= factor
    return result


def test_the_table_breaks_exactly_when_a_condition_fails():
    rng = random.Random(21)
    checked = 0
    for _ in range(60):
        conditions = [
            (rng.choice(list(COMPARE)), _random_polynomial(rng), rng.choice([0, 2, SYMBOLS[1]]))
            for _ in range(rng.randint(1, 4))
        ]
        table, others = size_checks.encode(conditions, POSITIONS)
        assert others == []
        for _ in range(20):
            sizes = tuple(rng.randint(2, 9) for _ in SYMBOLS)
            expected = not all(_holds(c, sizes) for c in conditions)
            assert size_checks.broken(sizes, table) == expected, (conditions, sizes)
            checked += expected
    assert 0 < checked < 1200  # (both outcomes met)


def test_conditions_with_min_max_or_floor_division_stay_written_out():
    s0, s1 = SYMBOLS[:2]
    kept = [(">=", sym_min(s0, s1), 3), ("==", sym_max(s0, 4), s1), ("<", s0 // 3, 2)]
    polynomial = ("!=", s0 * s1, s1)
    unknown = ("<", Symbol("t", 2) + s0, 9)  # (a symbol the entry does not read)
    table, others = size_checks.encode([*kept, polynomial, unknown], POSITIONS)
    assert others == [*kept, unknown]
    assert size_checks.broken((2, 5, 2, 2), table) is False
    assert size_checks.broken((1, 5, 2, 2), table) is True  # (1 * 5 == 5)
