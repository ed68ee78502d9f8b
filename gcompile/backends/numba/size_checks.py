"""A program's size assumptions checked by one function compiled once per machine.

A whole graph's program checks on entry what its trace assumed about the sizes
(``program_entry``): each symbol is 2 or more, and equalities and bounds such as
``s1*s2*s3 != s3`` or ``s0*s1 < 4194304``. Written out as Python, a few dozen such conditions
cost Numba half a second to type and lower (resnet's entry: 0.5 of its program's 2.8 s). Those
that are polynomials over the symbols are instead a table of integers, passed as an array,
that ``broken`` reads; the entry writes ::

    if _size_checks.broken((s0, s1, s2), c0):
        raise _GuardFailure('the inputs have sizes this program was not compiled for')

``broken`` is in Numba's disk cache like the copy loops (one compilation per count of symbols,
ever), and its arithmetic is the int64 arithmetic the conditions written out would do.

The table, one row after another: a relation (its position in ``RELATIONS``: the condition
``polynomial <relation> 0`` must hold), the count of terms, then per term its coefficient, its
count of factors and the position of each factor's symbol in the tuple of sizes.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ...ir.symbolic import polynomial

RELATIONS = ("==", "!=", "<", "<=", ">", ">=")


def encode(conditions: list, positions: dict) -> tuple[np.ndarray, list]:
    """The table of the ``(relation, lhs, rhs)`` of ``conditions`` that are polynomials over the
    symbols of ``positions`` (symbol -> its position in the tuple of sizes), and the list of
    the others."""
    table, others = [], []
    for relation, lhs, rhs in conditions:
        terms = polynomial(lhs - rhs)
        if terms is None or any(s not in positions for mono in terms for s in mono):
            others.append((relation, lhs, rhs))
            continue
        table += [RELATIONS.index(relation), len(terms)]
        for monomial, coefficient in terms.items():
            table += [coefficient, len(monomial), *(positions[s] for s in monomial)]
    return np.array(table, dtype=np.int64), others


@njit(cache=True, nogil=True)
def broken(sizes, table):
    """Whether ``sizes`` (a tuple of ints) break a condition of ``table`` (see the module)."""
    position = 0
    while position < len(table):
        relation, count = table[position], table[position + 1]
        position += 2
        value = 0
        for _ in range(count):
            term, factors = table[position], table[position + 1]
            for factor in range(factors):
                term *= sizes[table[position + 2 + factor]]
            value += term
            position += 2 + factors
        holds = (value == 0, value != 0, value < 0, value <= 0, value > 0, value >= 0)
        if not holds[relation]:
            return True
    return False
