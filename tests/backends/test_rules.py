"""The Numba rules table (``backends/numba/rules.py``): one rule per op, keyed by ``OpDef``; every
op of the table either has a rule or a stated reason for having none."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
import scipy.special  # noqa: F401  (SciPy's ops join the table once SciPy is imported)

from gcompile.backends.numba import rules
from gcompile.ir import ops
from gcompile.loops.nodes import Apply

ops.load_scipy_special()


def test_every_op_has_a_numba_rule_or_a_stated_reason():
    missing = [
        op.name for op in ops.OPS if rules.rule_of(op) is None and op not in rules.WITHOUT_RULE
    ]
    assert not missing, f"ops with neither a Numba rule nor a reason in WITHOUT_RULE: {missing}"
    both = [op.name for op in ops.OPS if rules.rule_of(op) is not None and op in rules.WITHOUT_RULE]
    assert not both, f"ops with a rule and a reason not to have one: {both}"
    assert all(isinstance(reason, str) and reason for reason in rules.WITHOUT_RULE.values())


def test_every_elementwise_op_has_a_rule_and_the_table_is_keyed_by_opdef():
    elementwise = [op for op in ops.OPS if op.kind == "elementwise"]
    assert all(rules.rule_of(op) is not None for op in elementwise)
    assert all(isinstance(op, ops.OpDef) and op in ops.OPS for op in rules.RULES)
    assert set(rules.SCIPY_RULES) == set(ops.SCIPY_SPECIAL)


def element(op, dtypes, *, fast=False, args=(), meta=None, **kwargs):
    """An ``Apply`` of ``op`` computing in ``dtypes`` (its operands as the node's args)."""
    dtypes = tuple(np.dtype(d) for d in dtypes)
    meta = meta or SimpleNamespace(dtype=dtypes[-1])
    node = SimpleNamespace(args=args, meta=meta, kwargs=kwargs)
    return Apply(op, node, args, dtypes, dtypes, fast=fast)


def write(op, operands, dtypes, **options):
    return rules.rule_of(op).write(list(operands), element(op, dtypes, **options))


@pytest.mark.parametrize(
    "op, dtypes, expected",
    [
        (ops.ADD, ("f8", "f8", "f8"), "(a + b)"),
        (ops.ADD, ("?", "?", "?"), "(a | b)"),
        (ops.MULTIPLY, ("?", "?", "?"), "(a & b)"),
        (  # NumPy's order of complex numbers: real parts, then imaginary (no NaN on the left)
            ops.LESS,
            ("c16", "c16", "?"),
            "(((a).real < (b).real and (a).imag == (a).imag and (b).imag == (b).imag) or "
            "((a).real == (b).real and (a).imag < (b).imag))",
        ),
        (ops.MAXIMUM, ("i4", "i4", "i4"), "_s.maximum(a, b)"),
        (ops.MAXIMUM, ("c16", "c16", "c16"), None),
        (ops.FLOOR_DIVIDE, ("i8", "i8", "i8"), "_s.int_floor_divide(a, b)"),
        (ops.LEFT_SHIFT, ("u1", "u1", "u1"), "_s.left_shift(a, b, 8)"),
        (ops.LOGICAL_AND, ("i4", "?", "?"), "((a != 0) & b)"),
        (ops.EXP, ("c8", "c8"), "cmath.exp(a)"),
        (ops.EXPM1, ("c8", "c8"), None),
        (ops.FLOOR, ("i2", "i2"), "a"),
        (ops.HYPOT, ("f4", "f4", "f4"), "np.hypot(a, b)"),
    ],
)
def test_rules_write_numpys_loop_semantics(op, dtypes, expected):
    operands = ["a", "b"][: len(dtypes) - 1]
    assert write(op, operands, dtypes) == expected


def test_a_fast_call_is_written_as_its_mathlib_expansion():
    assert write(ops.EXP, ["a"], ("f4", "f4"), fast=True) == "_m.exp_f32(a)"
    assert write(ops.EXP, ["a"], ("f4", "f4")) == "math.exp(a)"
    erf = next(op for op in ops.OPS if op.name == "erf")
    assert write(erf, ["a"], ("f8", "f8"), fast=True) == "_m.erf_f64(a)"
    assert write(erf, ["a"], ("f8", "f8")) is None  # SciPy's functions have no scalar form


def test_small_literal_powers_are_products_and_a_half_is_a_square_root():
    assert write(ops.POWER, ["x", "2.0"], ("f8", "f8", "f8"), args=("x", 2.0)) == "(x * x)"
    assert write(ops.POWER, ["x", "0.5"], ("f8", "f8", "f8"), args=("x", 0.5)) == "math.sqrt(x)"
    assert write(ops.POWER, ["x", "y"], ("f8", "f8", "f8"), args=("x", "y")) == "(x ** y)"
    assert write(ops.POWER, ["x", "y"], ("i8", "i8", "i8"), args=("x", "y")) == "_s.int_power(x, y)"


def test_libm_marks_the_functions_explain_reports():
    assert rules.RULES[ops.SIN].libm and rules.RULES[ops.ARCTAN2].libm
    assert not rules.RULES[ops.SQRT].libm and not rules.RULES[ops.ADD].libm
