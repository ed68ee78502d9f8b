"""Small local lists used at constant places become one variable per place (``capture/lists``):
the converted function computes what the original does, and lists used otherwise are kept."""

import math
import re

import numpy as np
import pytest

from ..support import check
from .test_convert import same


def goertzel(samples, coeff):
    s = [0, 0, 0]
    for sample in samples:
        s[0] = float(sample) + coeff * s[1] - s[2]
        s[1:3] = s[0:2]
    return s[1] ** 2 + s[2] ** 2 - s[1] * s[2] * coeff


def biquad(x, b0, a1):
    z = [0.0] * 2
    out = np.empty_like(x)
    for i in range(len(x)):
        out[i] = b0 * x[i] + z[0]
        z[0], z[1] = z[1] - a1 * out[i], -z[-2]
    return out, z[::-1], z[0:5]


def displays_and_negative_places(a, n):
    w = [a, a + 1, a + 2, a + 3]
    for _ in range(n):
        w[-1] += w[0]
        w[0:2] = [w[3], (w[2], 5)]
        w[1::2] = w[0::2]
    return w[-4], w[1:], w[3]


def repeated_mutable_item(n):
    rows = [[]] * 2
    for i in range(n):
        rows[0].append(i)
    return rows[1], rows[0] is rows[1]


@pytest.mark.parametrize(
    "fn, args",
    [
        (goertzel, (np.sin(np.arange(40) * 0.3), 2 * math.cos(0.5))),
        (biquad, (np.linspace(-1.0, 1.0, 9), 0.5, -0.25)),
        (displays_and_negative_places, (3, 2)),
        (repeated_mutable_item, (3,)),
    ],
)
def test_lists_at_constant_places_become_variables(fn, args):
    converted = same(fn, *args)
    assert re.search(r"__gc_(s|z|w|rows)_1\b", converted.source), converted.source


def unbound_read_raises(flag):
    if flag:
        print(s[0])  # noqa: F821
    s = [1, 2]
    return s[0]


def passed_on(a, n):
    s = [a, a]
    for i in range(n):
        s[0] = i
    return sum(s)


def read_at_a_traced_place(a, n):
    s = [a, a + 1]
    for i in range(n):
        s[i] = 0
    return s[0] + s[1]


def grown_by_a_slice(a, n):
    s = [a, a]
    for i in range(n):
        s[0:1] = list(range(i + 2))
    return s[0] + s[2]


def appended(a, n):
    s = [a]
    for i in range(n):
        s.append(i)
    return s[0] + s[1]


def rebound(a, n):
    s = [a, a]
    for i in range(n):
        s[0] = i
    s = [2]
    return s[0]


def captured_by_a_lambda(a, n):
    s = [a, a]
    f = lambda: s[0]  # noqa: E731
    for i in range(n):
        s[0] = i
    return f()


def a_parameter(s, n):
    for i in range(n):
        s[0] = i
    return s[0]


STATE = None


def declared_global(a, n):
    global STATE
    STATE = [a, a]
    for i in range(n):
        STATE[0] = STATE[0] + i
    return STATE[0]


def stored_by_a_for_target(a, n):
    s = [a, a]
    for s[0:2] in [(1, 2), (3, 4, 5)][:n]:
        pass
    return s[0] + s[-1]


def annotated_slice_store(a, n):
    s = [a, a]
    for i in range(n):
        s[0:2]: list = [i, i + 1]
    return s[0] + s[1]


def rebound_by_a_def(a, n):
    s = [a, a]
    for i in range(n):
        s[0] = i

    def s():  # noqa: F811
        return 0

    return s()


def out_of_range(a, n):
    s = [a]
    for i in range(n):
        s[0] = i
    return s[1]


@pytest.mark.parametrize(
    "fn, args",
    [
        (unbound_read_raises, (True,)),
        (passed_on, (1, 2)),
        (read_at_a_traced_place, (1, 2)),
        (grown_by_a_slice, (1, 2)),
        (appended, (1, 2)),
        (rebound, (1, 2)),
        (captured_by_a_lambda, (1, 2)),
        (a_parameter, ([1, 2], 2)),
        (out_of_range, (1, 2)),
        (declared_global, (1, 3)),
        (stored_by_a_for_target, (1, 2)),
        (annotated_slice_store, (1, 2)),
        (rebound_by_a_def, (1, 2)),
    ],
)
def test_lists_used_otherwise_stay_lists(fn, args):
    converted = same(fn, *args)
    assert "__gc_s_" not in converted.source and "__gc_STATE_" not in converted.source


def test_a_recurrence_kept_in_a_list_compiles_as_one_loop():
    samples = np.sin(np.arange(300) * 0.3)
    check(goertzel, samples, 2 * math.cos(0.5))  # (fullgraph: no graph break, no eager run)
    check(biquad, np.linspace(-1.0, 1.0, 50), 0.5, -0.25)


def converged_or_raise(x, tol):
    for _ in range(50):
        x_new = 0.5 * (x + 2.0 / x)  # (bound in the loop only: the conversion's temporaries)
        if abs(x_new - x) < tol:
            return x_new
        x = x_new
    raise ValueError("did not converge")


def test_the_conversions_own_names_are_no_table_reads():
    converted = same(converged_or_raise, 1.0, 1e-12)
    assert "table(__gc_" not in converted.source
