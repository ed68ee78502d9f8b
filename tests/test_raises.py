"""The user's tests that raise (``if test: raise E("...")``, ``assert``) on traced values: one
``raise_unless`` node each (``capture/raises.py``), so that the loop around one stays a loop and
the compiled function raises what eager raises, where eager raises it."""

import warnings

import numpy as np
import pytest

import gcompile
from gcompile.capture import convert
from gcompile.ir import ops
from gcompile.ir.subgraph import walk

RNG = np.random.default_rng(11)


def eliminate(A, b):
    """Gaussian elimination without pivoting, refusing a zero pivot (a loop of loops)."""
    A, b = A.copy(), b.copy()
    n = A.shape[0]
    for k in range(n):
        if A[k, k] == 0.0:
            raise ValueError("zero pivot")
        for i in range(k + 1, n):
            m = A[i, k] / A[k, k]
            A[i, k:] -= m * A[k, k:]
            b[i] -= m * b[k]
    return A, b


def converge(x, tol):
    """Halve towards zero until below ``tol``: a while loop, its count checked, an assert."""
    steps = 0
    while np.abs(x).max() > tol:
        x = x * 0.5
        steps += 1
        if steps > 60:
            raise RuntimeError("no convergence")
        assert x.min() >= -1e300, "diverged"
    return x, steps


def newton_root(x0, tol):
    """Newton's method for x**3 = 2, with ``for ... else: raise`` (no break: no convergence)."""
    x = x0.copy()
    for _ in range(6):
        fx = x**3 - 2.0
        if np.abs(fx).max() < tol:
            break
        x = x - fx / (3.0 * x**2)
    else:
        raise ArithmeticError
    return x


def newton_or_raise(data, x0):
    """A loop returning once converged, raising after it (djeada/Numerical-Methods' Newton)."""
    x = x0
    for _ in range(30):
        x_new = x - np.sum(np.tanh(x - data)) / np.sum(1.0 - np.tanh(x - data) ** 2)
        if np.abs(x_new - x) < 1e-8:
            return x_new
        x = x_new
    raise ValueError("did not converge")


def validated(x):
    """A test before the work, outside any loop (the host runs the node)."""
    if np.isnan(x).any():
        raise ValueError("x holds a NaN")
    return np.sqrt(x * x + 1.0)


def test_raising_tests_compile_to_nodes_and_loops_stay_rolled():
    rng = np.random.default_rng(3)
    for fn, args in (
        (eliminate, (rng.random((6, 6)) + 6 * np.eye(6), rng.random(6))),
        (converge, (rng.random(5) * 100, 1e-3)),
        (newton_root, (np.full(3, 1.5), 1e-9)),
        (newton_or_raise, (rng.standard_normal(50), 0.0)),
        (validated, (rng.random(7),)),
    ):
        graph = gcompile.trace(fn, *args, stage="optimized")
        found = [v.node for v in walk(graph) if v.node.target is ops.RAISE_UNLESS]
        assert found, f"{fn.__name__}: no raise_unless node\n{graph}"
        report = str(gcompile.explain(fn, *args))
        assert "unrolled" not in report, report


def _outcome(fn, *args):
    """``fn``'s result, or its exception's type and message."""
    try:
        return "result", fn(*[a.copy() if isinstance(a, np.ndarray) else a for a in args])
    except Exception as error:  # noqa: BLE001 - the outcome compared
        return "raised", (type(error), str(error))


def _same(expected, actual):
    assert expected[0] == actual[0], (expected, actual)
    if expected[0] == "raised":
        assert expected[1] == actual[1]
        return
    results = [r if isinstance(r, tuple) else (r,) for r in (expected[1], actual[1])]
    assert len(results[0]) == len(results[1])
    for e, a in zip(*results):
        e, a = np.asarray(e), np.asarray(a)
        assert e.dtype == a.dtype and e.shape == a.shape
        np.testing.assert_allclose(a, e, rtol=1e-13)


def test_compiled_functions_raise_what_eager_raises_and_return_what_it_returns():
    rng = np.random.default_rng(4)
    good = rng.random((5, 5)) + 5 * np.eye(5)
    singular = good.copy()
    singular[2] = singular[0] * 2  # (row 2 eliminates to a zero pivot, exactly)
    singular[:, 2] = [1.0, 0.0, 2.0, 0.0, 0.0]
    singular[2, 2] = 2.0 * singular[0, 2]
    calls = {
        eliminate: [
            (good, rng.random(5)),
            (singular, rng.random(5)),
            (np.zeros((3, 3)), np.ones(3)),
        ],
        converge: [(rng.random(4) * 10, 1e-2), (np.full(3, 1e30), 1e-3), (np.zeros(0), 1.0)],
        newton_root: [(np.full(4, 1.2), 1e-10), (np.full(2, 1e6), 1e-12)],
        newton_or_raise: [(rng.standard_normal(40) + 0.3, 0.0), (np.full(4, 1e300), 0.0)],
        validated: [(rng.random(6),), (np.array([1.0, np.nan]),)],
    }
    seen = set()
    for fn, arguments in calls.items():
        compiled = gcompile.compile(fn, fullgraph=True)
        for args in arguments:
            expected, actual = _outcome(fn, *args), _outcome(compiled, *args)
            _same(expected, actual)
            seen.add(expected[0])
        assert compiled.stats["fallbacks"] == 0 and compiled.stats["traces"] == 1
    assert seen == {"result", "raised"}


def checked_prints(x):
    for i in range(x.shape[0]):
        print("at", i)
        if x[i] < 0:
            raise ValueError("negative")
    print("all positive")
    return x.sum()


def test_a_raise_comes_after_the_prints_before_it(capsys):
    compiled = gcompile.compile(checked_prints, fullgraph=True)
    for x in (np.array([1.0, 2.0, -3.0, 4.0]), np.array([1.0, 2.0])):
        expected = _outcome(checked_prints, x), capsys.readouterr().out
        actual = _outcome(compiled, x), capsys.readouterr().out
        assert actual[1] == expected[1]
        _same(expected[0], actual[0])


class PivotError(Exception):
    pass


def message_of_data(x):
    for i in range(x.shape[0]):
        if x[i] < 0:
            raise ValueError(f"negative at {x[i]:.3f}")  # (made from the data)
    return x * 2


def own_exception(x):
    if x.min() < 0:
        raise PivotError("negative")
    return x * 2


def newton_reporting(data, x0):
    """djeada/Numerical-Methods' Newton: a raise whose message formats the loop's values (a
    lambda over them, made where it stands: the loop stays rolled) and an early return."""
    x = x0
    for iteration in range(1, 50):
        fx = np.sum(np.tanh(x - data))
        dfx = np.sum(1.0 - np.tanh(x - data) ** 2)
        if np.isclose(dfx, 0.0, atol=1e-12):
            raise ValueError(f"Derivative is zero at iteration {iteration}, x = {x}.")
        x_new = x - fx / dfx
        if np.abs(x_new - x) < 1e-8:
            return x_new
        x = x_new
    raise ValueError("did not converge")


def test_raises_a_node_cannot_repeat_run_the_call_again_eagerly():
    """A message made from the data, or an exception class of the user's: the compiled code
    raises ``RerunEagerly`` there, and the call runs again eagerly, which raises it."""
    cases = {
        message_of_data: [np.array([1.0, 2.0]), np.array([1.0, -2.0])],
        own_exception: [np.array([1.0, 2.0]), np.array([1.0, -2.0])],
        newton_reporting: [(np.linspace(-1.0, 2.0, 30), 0.5), (np.full(3, 1e300), 0.0)],
    }
    for fn, inputs in cases.items():
        compiled = gcompile.compile(fn, fullgraph=True)
        for args in inputs:
            args = args if isinstance(args, tuple) else (args,)
            _same(_outcome(fn, *args), _outcome(compiled, *args))
        graph = gcompile.trace(fn, *args)
        errors = [v.node.kwargs["error"] for v in walk(graph) if v.node.target is ops.RAISE_UNLESS]
        assert "RerunEagerly" in errors and all(note.rolled for note in graph.notes.loops)


def reporting_with_prints(x):
    print("checking", x.shape[0])
    if x.min() < 0:
        raise ValueError(f"negative first value {x[0]}")  # (a second eager run: prints again)
    return x * 2


def test_a_raise_made_from_the_data_beside_a_print_runs_in_python(capsys):
    compiled = gcompile.compile(reporting_with_prints)
    messages = []
    for x in (np.array([-1.0, 2.0]), np.array([1.0, 2.0])):
        expected = _outcome(reporting_with_prints, x), capsys.readouterr().out
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", gcompile.GcompileWarning)
            actual = _outcome(compiled, x), capsys.readouterr().out
        assert actual[1] == expected[1]
        _same(expected[0], actual[0])
        messages += [str(w.message) for w in caught]
    assert len(messages) == 1 and "in a function that prints" in messages[0]


def branches(x, mode):
    if mode == 0:
        raise ValueError("mode 0")
    elif mode == 1:
        y = x + 1
    else:
        y = x - 1
    assert mode < 5  # (the eager one's message is pytest's: compared by type)
    return y


def test_converted_statements_run_as_python_on_plain_values():
    converted = convert(branches).function
    outcomes = set()
    for mode in range(7):
        expected, actual = _outcome(branches, 2.0, mode), _outcome(converted, 2.0, mode)
        if expected[0] == "raised" and expected[1][0] is AssertionError:
            assert actual[0] == "raised" and actual[1] == (AssertionError, ""), actual
        else:
            _same(expected, actual)
        outcomes.add(str(actual[1]))
    assert len(outcomes) == 4  # (mode 0, mode 1, modes 2-4, the assert)


def _describe(x):
    x[0] = -x[0]  # (making the message writes: it must not run unless the test holds)
    return "negative"


def written_by_the_message(x):
    if x.sum() < -100:
        raise ValueError(_describe(x))
    return x * 2


def written_before_the_raise(x):
    x *= 2  # (the caller sees this write even when the call raises)
    if x.max() > 10:
        raise ValueError("big")
    return x


def message_of_str(x):
    if x[0] < 0:
        raise ValueError("bad first value " + str(x[0]))
    return x


SHARED = ValueError("shared error")


def prebuilt_and_named(x):
    if x[0] < 0:
        raise SHARED  # (the very object: not repeated by a compiled raise)
    if x[1] < 0:
        raise ImportError("no module", name="mymod")  # (more than a message)
    return x


def test_raises_whose_making_or_writes_a_node_would_change_run_as_python():
    cases = {
        written_by_the_message: [np.array([1.0, 2.0]), np.array([-200.0, 1.0])],
        written_before_the_raise: [np.array([1.0, 2.0]), np.array([1.0, 9.0])],
        message_of_str: [np.array([1.0, 2.0]), np.array([-1.0, 2.0])],
        prebuilt_and_named: [np.array([1.0, 2.0]), np.array([-1.0, 2.0]), np.array([1.0, -2.0])],
    }
    for fn, inputs in cases.items():
        compiled = gcompile.compile(fn)
        for x in inputs:
            eager_x, compiled_x = x.copy(), x.copy()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", gcompile.GcompileWarning)  # (graph breaks)
                expected, actual = _outcome(fn, eager_x), _outcome(compiled, compiled_x)
            _same(expected, actual)
            np.testing.assert_array_equal(compiled_x, eager_x)
    compiled = gcompile.compile(prebuilt_and_named)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", gcompile.GcompileWarning)
        with pytest.raises(ValueError) as shared:
            compiled(np.array([-1.0, 2.0]))
        with pytest.raises(ImportError) as named:
            compiled(np.array([1.0, -2.0]))
    assert shared.value is SHARED and named.value.name == "mymod"


def damped_newton_steps(A, b, n):
    """djeada's Newton system solver's form: a solve in a `try` whose handler only raises."""
    x = np.zeros_like(b)
    for i in range(n):
        try:
            d = np.linalg.solve(A + i * np.eye(A.shape[0]), b - A @ x)
        except (np.linalg.LinAlgError, FloatingPointError):
            raise ValueError(f"Jacobian is singular at iteration {i}, x = {x}.")  # noqa: B904
        x = x + 0.5 * d
    return x


def damped_in_place(A, b, out):
    try:
        out[:] = np.linalg.solve(A, b)
    except np.linalg.LinAlgError:
        raise ValueError("singular") from None  # (a run again would see `out` written)
    return out


def test_a_try_whose_handlers_only_raise_is_compiled_and_runs_again_eagerly_when_it_raises():
    A, b = RNG.random((4, 4)) + 4 * np.eye(4), RNG.random(4)
    compiled = gcompile.compile(damped_newton_steps, fullgraph=True)
    for args in ((A, b, 12), (np.zeros((4, 4)), b, 1)):  # (the second: a singular solve)
        _same(_outcome(damped_newton_steps, *args), _outcome(compiled, *args))
    graph = gcompile.trace(damped_newton_steps, A, b, 12)
    assert graph.reruns_on == (np.linalg.LinAlgError, FloatingPointError)
    assert all(note.rolled for note in graph.notes.loops)
    with pytest.raises(gcompile.UnsupportedError, match="handlers raise, in a function that"):
        gcompile.compile(damped_in_place, fullgraph=True)(A, b, np.zeros(4))


def reciprocal_or_raise(x):
    with np.errstate(divide="raise"):
        try:
            y = 1.0 / x
        except FloatingPointError:
            raise ValueError("x has a zero") from None
    return y


def test_errstate_that_raises_is_refused_where_compiled_code_would_not_raise():
    compiled = gcompile.compile(reciprocal_or_raise)
    for x in (np.ones(3), np.zeros(3)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", gcompile.GcompileWarning)
            _same(_outcome(reciprocal_or_raise, x), _outcome(compiled, x))
    with pytest.raises(gcompile.UnsupportedError, match="np.errstate"):
        gcompile.compile(reciprocal_or_raise, fullgraph=True)(np.ones(3))
