"""``print`` in a compiled function prints on every call, with that call's values, in order
(``callback`` nodes, ``ir/callbacks.py``): in the host, and from loop programs through Numba's
object mode."""

import numpy as np
import pytest

import gcompile
from gcompile.ir import ops
from gcompile.ir.subgraph import walk

from .support import check


def straight(x):
    y = x * 2
    print("y", y.shape, y.max(), sep="|", end=";\n")
    print("done")
    return y + 1


def rolled(x, steps):
    s = 0.0
    for k in range(steps):
        x = np.sin(x) + 0.5 * x
        s = s + x.sum()
        print("step", k, "above one:", (x > 1).sum())  # (an integer: no rounding to differ)
    return x, s


def unused_print(x):
    print(x[0])  # (its value is not used: the print is what the call is for)
    return x * 3


def _printed(capsys, fn, *args):
    result = fn(*[a.copy() if isinstance(a, np.ndarray) else a for a in args])
    return result, capsys.readouterr().out


def test_prints_run_on_every_call_with_that_calls_values(capsys):
    for fn, calls in (
        (straight, [(np.arange(3.0),), (np.arange(5.0),)]),
        (unused_print, [(np.arange(4.0),), (np.ones(4),)]),
        (rolled, [(np.linspace(0, 1, 4), 40), (np.linspace(1, 2, 4), 40)]),
    ):
        compiled = gcompile.compile(fn, fullgraph=True)
        for args in calls:
            expected, eager_out = _printed(capsys, fn, *args)
            actual, compiled_out = _printed(capsys, compiled, *args)
            assert compiled_out == eager_out
            check_value = expected if isinstance(expected, tuple) else (expected,)
            got = actual if isinstance(actual, tuple) else (actual,)
            for e, a in zip(check_value, got):
                np.testing.assert_allclose(a, e, rtol=1e-12)


def test_a_print_in_a_rolled_loop_is_a_callback_from_the_program(capsys):
    compiled = gcompile.compile(rolled, fullgraph=True)
    compiled(np.linspace(0, 1, 4), 40)
    capsys.readouterr()
    assert "_run_callback" in compiled.code and "with _objmode():" in compiled.code
    graph = gcompile.trace(rolled, np.linspace(0, 1, 4), 40)
    assert sum(v.node.target is ops.CALLBACK for v in walk(graph) if v.node.op == "call") == 1


def bisected(f1, x1, x2):
    """Sweep H's bisection: a constant message printed outside the loop, under a branch."""
    if f1 * (x2**3 - 5.0) > 0:
        print("f(x1) and f(x2) can't have the same signs")
    while x2 - x1 > 1e-9:
        middle = 0.5 * (x1 + x2)
        if middle**3 - 5.0 > 0:
            x2 = middle
        else:
            x1 = middle
    return x1


def test_a_constant_print_outside_loops_stays_in_the_whole_program(capsys):
    compiled = gcompile.compile(bisected, fullgraph=True)
    for f1 in (-4.0, 4.0):  # (prints on the second call only)
        args = (np.float64(f1), np.float64(1.0), np.float64(3.0))
        expected, eager_out = _printed(capsys, bisected, *args)
        actual, compiled_out = _printed(capsys, compiled, *args)
        assert compiled_out == eager_out and actual == expected
    assert "the host is one Numba function" in compiled.code


def test_a_print_never_folds_or_drops(capsys):
    def constant_print(x):
        print("hello", 3)
        return x

    check(constant_print, np.ones(2))
    out = capsys.readouterr().out
    assert out.count("hello 3") == 1 + 2  # eager, two backends


def formatted(x, tol):
    total, k = 0.0, 0
    while total < tol:
        total = total + x[k % x.shape[0]]
        print(f"trip {k}: total={total:.4f}", "mean {:.3e}".format(x.mean()), repr(x[0]))
        print(f"{x[1]!r} {x[1]=}", str(x.max()), "%s" % x[2])
        k += 1
    print(f"{k} trips, last {x.astype(np.float32)[k % x.shape[0]]}, n={x.shape[0]:>4}")
    return total


def test_strings_formatted_from_traced_values_print_each_calls_values(capsys):
    compiled = gcompile.compile(formatted, fullgraph=True)
    for x, tol in ((np.array([0.1, 0.25, 0.3]), 1.0), (np.array([0.5, 0.7, 0.2]), 2.0)):
        expected, eager_out = _printed(capsys, formatted, x, tol)
        actual, compiled_out = _printed(capsys, compiled, x, tol)
        assert compiled_out == eager_out and actual == expected
    assert compiled.stats["traces"] == 1  # (a size formatted is fixed, guarded: n=3)


def test_a_string_formatted_from_traced_values_is_not_returned():
    def label(x):
        return f"max {x.max()}"

    with pytest.raises(gcompile.UnsupportedError, match="string formatted from traced"):
        gcompile.compile(label, fullgraph=True)(np.ones(3))


def measured(x):
    label = f"max {x.max()}"  # (its length is the data's: made once, it would be wrong)
    return x * len(label)


def logged(x):
    import logging

    logging.getLogger("gcompile.tests").warning(f"max {x.max()}")  # (a callback, as print)
    return x * 2


def test_a_string_formatted_from_traced_values_and_not_printed_is_refused_at_its_line():
    with pytest.raises(gcompile.UnsupportedError, match="used other than by print"):
        gcompile.compile(measured, fullgraph=True)(np.ones(3))


def test_a_log_line_formatted_from_traced_values_is_made_on_every_call(caplog):
    compiled = gcompile.compile(logged, fullgraph=True)
    for x in (np.ones(3), np.arange(4.0)):
        caplog.clear()
        np.testing.assert_array_equal(compiled(x), x * 2)
        assert [r.getMessage() for r in caplog.records] == [f"max {x.max()}"]
