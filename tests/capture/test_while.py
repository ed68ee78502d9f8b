"""Converted ``while`` loops compute what the originals compute when no handler is installed;
those that must run in the function's own frame are left as written, with the reason."""

import numpy as np
import pytest

from gcompile.capture import convert

from .test_convert import same


def count_squares(n):
    total, i = 0, 0
    while i < n:
        total += i * i
        i += 1
    return total, i


def newton(x, tol):
    err, steps = 1.0, 0
    while err > tol:
        new = 0.5 * (x + 2.0 / x)
        err = abs(new - x)
        x = new
        steps += 1
    return x, steps


def bound_in_the_body(n):
    while n > 10:
        last = n
        n -= 7
    return n, last  # unbound when the loop never runs


def loops_inside(a):
    k = 0
    while k < len(a) and a[k] < 5:
        for j in range(k):
            a[j] += 1
        k += 1
    return k


def while_in_for(rows):
    out = []
    for r in rows:
        steps = 0
        while r > 1:
            r = r // 2 if r % 2 == 0 else 3 * r + 1
            steps += 1
        out.append(steps)
    return out


def with_break(n):
    while True:
        n -= 1
        if n < 3:
            break
    return n


def with_else(n):
    while n > 0:
        n -= 2
    else:
        n = -n
    return n


def walrus_test(items):
    seen = 0
    while (k := len(items)) > 2:
        items = items[1:]
        seen += k
    return seen


@pytest.mark.parametrize(
    ("fn", "calls"),
    [
        (count_squares, [(10,), (0,)]),
        (newton, [(1.0, 1e-12), (3.0, 1e-3)]),
        (bound_in_the_body, [(30,), (5,)]),
        (loops_inside, [([1, 2, 7, 1],), ([],)]),
        (while_in_for, [([27, 6, 1],)]),
        (with_break, [(9,)]),
        (with_else, [(5,)]),
        (walrus_test, [([1, 2, 3, 4],)]),
    ],
)
def test_converted_while_loops_compute_what_python_does(fn, calls):
    for args in calls:
        same(fn, *args)


def test_which_while_loops_convert_and_why_the_others_do_not():
    assert "__gc_rt.while_loop(" in convert(newton).source
    assert "while_loop" in convert(while_in_for).source
    converted = convert(with_break)  # (a break: a flag in its test, ``exits.py``)
    assert "__gc_rt.while_loop(" in converted.source and "__gc_break_0" in converted.source
    for n in (10, 3, 1):
        assert converted.function(n) == with_break(n)
    reasons = {
        with_else: "has an `else:` clause",
        walrus_test: "its test assigns a name",
    }
    for fn, reason in reasons.items():
        converted = convert(fn)
        assert any(reason in why for _, why in converted.notes), fn


def test_an_unbound_name_read_after_a_while_loop_raises_as_in_python():
    with pytest.raises(UnboundLocalError):
        convert(bound_in_the_body).function(5)
    assert np.array_equal(convert(newton).function(2.0, 1e-9)[0], newton(2.0, 1e-9)[0])
