"""The loop IR's text and the operator precedence renderers share (``loops/printer.py``)."""

from __future__ import annotations

import numpy as np
import pytest

from gcompile.loops.nodes import BinOp, BoolOp, Compare, Const, IfExp, RangeCheck, Var
from gcompile.loops.printer import format_value as text

a, b, c = Var("a"), Var("b"), Var("c")


@pytest.mark.parametrize(
    "expr, expected",
    [
        (BinOp("*", BinOp("+", a, b), c), "(a + b) * c"),
        (BinOp("-", a, BinOp("-", b, c)), "a - (b - c)"),
        (BinOp("-", BinOp("-", a, b), c), "a - b - c"),
        (BinOp("//", BinOp("*", a, BinOp("+", b, Const(1))), Const(16)), "a * (b + 1) // 16"),
        (Compare(("==",), (BinOp("&", a, Const(127)), Const(0))), "a & 127 == 0"),
        (BinOp("|", a, Compare((">",), (b, c))), "a | (b > c)"),
        (Compare(("<", "<"), (a, b, c)), "a < b < c"),
        (
            BoolOp("or", (Compare(("<",), (a, b)), BoolOp("and", (b, BoolOp("or", (a, c)))))),
            "a < b or b and (a or c)",
        ),
        (IfExp(Compare((">",), (a, b)), b, BinOp("+", a, Const(1))), "b if a > b else a + 1"),
    ],
)
def test_operators_get_the_parentheses_python_needs_and_no_more(expr, expected):
    assert text(expr) == expected


def test_a_range_check_is_an_absolute_value_against_its_bound():
    check = RangeCheck(None, a, Const(4.0, np.dtype(np.float32)))
    assert text(BinOp("|", b, check)) == "b | (abs(a) > f32(4.0))"


def test_literals_show_their_dtype_and_negative_ones_bind_as_unary_minus():
    assert text(Const(-np.inf, np.dtype(np.float64))) == "f64(-inf)"
    assert text(BinOp("*", a, Const(-2))) == "a * -2"
    assert text(Const(True, np.dtype(bool))) == "True"
