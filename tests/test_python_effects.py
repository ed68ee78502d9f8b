"""Statements that change Python state outside the function (``capture/effects.py``), seeding
NumPy's global generator, ``try`` statements, and ndarray subclasses as arguments: each runs as
eager Python runs it, on every call (a graph break, or the whole call eagerly), never once at
trace time."""

import queue
import warnings

import numpy as np
import pytest

import gcompile

ncalls = 0
history: list = []


def counted(x):
    global ncalls
    ncalls += 1
    history.append(x.sum())
    return x * 2


class Accumulator:
    def __init__(self):
        self.state = np.zeros(3)

    def step(self, x):
        self.state = self.state + x
        return self.state.sum() * 2


class NearestMean:
    """A model in the style of course code: fit stores, predict loops over rows in a method."""

    def __init__(self, k=2):
        self.k = k

    def fit(self, X, y):
        self.X_train, self.y_train = X, y

    def predict(self, X):
        return np.array([self._predict(x) for x in X])

    def _predict(self, x):
        distances = np.sqrt(np.sum((self.X_train - x) ** 2, axis=1))
        return self.y_train[np.argsort(distances)[: self.k]].mean()


def fit_predict(X_train, y_train, X):
    model = NearestMean(k=2)
    model.fit(X_train, y_train)
    return model.predict(X)


def predict_with(model, X):
    model.fit(X, X[:, 0])
    return model.predict(X)


class Generator:
    """A linear congruential generator: its state a method changes on every call."""

    def __init__(self, seed):
        self.state = np.uint32(seed)

    def next(self):
        self.state = np.uint32(1664525) * self.state + np.uint32(1013904223)
        return self.state


def stream(seed, n):
    rng = Generator(seed)
    out = np.zeros(n, dtype=np.uint32)
    for i in range(n):
        out[i] = rng.next()
    return out, rng.state


class Scaled:
    """A callable whose ``__init__`` and ``__call__`` test their argument's type."""

    def __init__(self, factor):
        self.factor = factor if isinstance(factor, float) else 1.0

    def __call__(self, x):
        return x * self.factor if type(self.factor) is float else x


def scaled(x, factor):
    return Scaled(factor)(x)


class Logger:
    def __init__(self):
        self.log = history  # (the module's list: not the function's own)

    def record(self, x):
        self.log.append(x.shape[0])
        return x * 2


def logged(x):
    return Logger().record(x)


def seeded(s, seed):
    np.random.seed(seed)
    return s + np.random.rand(3)


def robust_solve(a, b):
    try:
        x = np.linalg.solve(a, b)
    except np.linalg.LinAlgError:
        x = np.linalg.lstsq(a, b, rcond=None)[0]
    return x * 2


def _quiet(fn, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", gcompile.GcompileWarning)
        return fn(*args)


def test_globals_lists_and_attributes_change_on_every_call():
    global ncalls
    ncalls = 0
    history.clear()
    fn = gcompile.compile(counted)
    for _ in range(3):
        np.testing.assert_array_equal(_quiet(fn, np.ones(3)), np.full(3, 2.0))
    assert ncalls == 3 and history == [3.0, 3.0, 3.0]
    assert all(type(v) is np.float64 for v in history)
    compiled, eager = Accumulator(), Accumulator()
    step = gcompile.compile(compiled.step)
    for _ in range(3):
        assert _quiet(step, np.ones(3)) == eager.step(np.ones(3))
    assert type(compiled.state) is np.ndarray
    np.testing.assert_array_equal(compiled.state, eager.state)


def test_methods_of_an_object_the_function_makes_are_its_own_state():
    """``model = NearestMean(); model.fit(X, y)``: ``self.X_train = X`` changes an object the
    call made, not Python state outside it: no graph break; ``predict``'s comprehension, in a
    method, is captured as a loop (not unrolled over the rows). An object passed in is
    outside state: its ``fit`` still runs in Python on every call."""
    rng = np.random.default_rng(3)
    X_train, y_train, X = rng.random((12, 3)), rng.random(12), rng.random((40, 3))
    fn = gcompile.compile(fit_predict)
    with warnings.catch_warnings():
        warnings.simplefilter("error", gcompile.GcompileWarning)
        np.testing.assert_allclose(fn(X_train, y_train, X), fit_predict(X_train, y_train, X))
    loops = gcompile.trace(fit_predict, X_train, y_train, X).notes.loops
    assert [note.rolled for note in loops] == [True], loops
    model, eager_model = NearestMean(), NearestMean()
    step = gcompile.compile(predict_with)
    for rows in (X, X[:20]):
        got = _quiet(step, model, rows)
        np.testing.assert_allclose(got, predict_with(eager_model, rows))
        np.testing.assert_array_equal(model.X_train, rows)


def test_an_objects_state_changed_by_a_method_in_a_loop_changes_on_every_trip():
    """``rng.next()`` in a loop: the loop, traced once, would see one change of ``state``;
    it runs in Python instead (its trips traced one by one)."""
    fn = gcompile.compile(stream)
    for seed, n in ((7, 5), (12345, 6)):
        got, expected = _quiet(fn, seed, n), stream(seed, n)
        assert np.array_equal(got[0], expected[0]) and got[1] == expected[1]


class Totals:
    """A helper object: ``push`` changes it through another method, ``doubled`` does not."""

    def __init__(self):
        self.items = []

    def push(self, v):
        self._store(v)

    def _store(self, v):
        self.items.append(v)

    def doubled(self, v):
        return v * 2.0


def queued(x):
    """Calls that change Python objects no statement of the loop shows changing."""
    q, steps, s = queue.Queue(), iter(range(100)), 0.0
    for i in range(x.shape[0]):
        q.put(i)
        s += x[i] * next(steps)
    return q.qsize(), next(steps), s


def pushed(x):
    totals, s = Totals(), 0.0
    for i in range(x.shape[0]):
        totals.push(x[i])
        s += x[i]
    return len(totals.items), s


def counted_steps(x):
    steps = iter(range(100))
    for _ in range(x.shape[0]):
        next(steps)
    return next(steps)


def doubled_sum(x):
    totals, s = Totals(), 0.0
    for i in range(x.shape[0]):
        s += totals.doubled(x[i])
    return s


def test_calls_changing_a_queue_an_iterator_or_a_helper_object_run_on_every_trip():
    """A queue's ``put``, ``next`` of an iterator and a method that appends to the object's
    list, in a loop, would run once in a body traced once: the loop runs in Python (a method
    that changes nothing keeps its loop rolled)."""
    for function in (queued, pushed):
        fn = gcompile.compile(function)
        for x in (np.arange(5.0), np.array([3.0, 0.0, 9.0])):
            assert _quiet(fn, x) == function(x)
    notes = gcompile.trace(counted_steps, np.arange(5.0)).notes.loops
    assert "calls next(steps) (a change to a range_iterator it holds)" in notes[0].reason
    assert [note.rolled for note in gcompile.trace(doubled_sum, np.arange(5.0)).notes.loops] == [
        True
    ]


class Stepper:
    """Methods changing the object in the ways a statement does not show."""

    def __init__(self):
        self._it, self.n = iter(range(100)), 0

    def step(self):
        return next(self._it)

    def bump(self):
        setattr(self, "n", self.n + 1)  # noqa: B010 - (a change no assignment shows)

    def bump_state(self):
        state = self.__dict__
        state["n"] += 1


RECEIVED = queue.Queue()


def stepped(x):
    s, stepper, cells = 0.0, Stepper(), np.ndindex(50)
    for i in range(x.shape[0]):
        s += x[i] * stepper.step() + next(cells)[0]
        stepper.bump()
        stepper.bump_state()
        RECEIVED.put(i)
    return s, stepper.n


def test_methods_changing_their_object_by_next_setattr_or_its_dict_run_on_every_trip():
    """(Review: next(self._it) in a method, setattr, self.__dict__, next of np.ndindex and a
    module's queue each ran once in a body traced once.)"""
    fn = gcompile.compile(stepped)
    for x in (np.arange(1.0, 5.0), np.ones(7)):
        before = RECEIVED.qsize()
        expected = stepped(x)
        middle = RECEIVED.qsize()
        assert _quiet(fn, x) == expected and RECEIVED.qsize() - middle == middle - before


def test_type_tests_in_init_and_call_of_the_users_class_answer_as_eager():
    fn = gcompile.compile(scaled)
    x = np.arange(4.0)
    for factor in (3.0, 2.5, 4):
        np.testing.assert_array_equal(_quiet(fn, x, factor), scaled(x, factor))


def test_a_module_list_an_object_the_function_made_holds_changes_on_every_call():
    history.clear()
    fn = gcompile.compile(logged)
    for n in (3, 4, 5):
        np.testing.assert_array_equal(_quiet(fn, np.ones(n)), np.full(n, 2.0))
    assert history == [3, 4, 5]


def test_a_seed_and_a_try_run_on_every_call():
    fn = gcompile.compile(seeded)
    first, second = _quiet(fn, 0.0, 1), _quiet(fn, 0.0, 1)
    np.testing.assert_array_equal(first, second)
    np.testing.assert_array_equal(first, seeded(0.0, 1))
    solve = gcompile.compile(robust_solve)
    for a in (np.array([[2.0, 1.0], [1.0, 3.0]]), np.array([[1.0, 2.0], [2.0, 4.0]])):
        b = np.array([1.0, 2.0])
        np.testing.assert_allclose(_quiet(solve, a, b), robust_solve(a, b), rtol=1e-12)
    with pytest.raises(gcompile.UnsupportedError, match="a `try` around operations on the data"):
        gcompile.compile(robust_solve, fullgraph=True)(np.eye(2), np.ones(2))


@pytest.mark.parametrize(
    "value",
    [
        np.ma.masked_array([1.0, 2.0, 100.0], mask=[0, 0, 1]),
        np.matrix([[1.0, 2.0], [3.0, 4.0]]),
    ],
)
def test_an_ndarray_subclass_argument_runs_eagerly_with_its_own_semantics(value):
    def total(x):
        return (x * x).sum()  # (a matrix product for np.matrix)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PendingDeprecationWarning)
        with pytest.warns(gcompile.GcompileWarning, match="an ndarray subclass"):
            result = gcompile.compile(total)(value)
        assert result == total(value)


COUNTS = np.zeros(2)
TABLE: dict = {}


def bump(x):
    COUNTS[0] += 1  # (an item of a global array: the caller's, changed on every call)
    TABLE["last"] = x.sum()
    return x * 2


def sqrt_or_zero(x):
    with np.errstate(invalid="raise"):
        try:
            return np.sqrt(x - 2.0)  # (the check runs before the return too)
        except FloatingPointError:
            return x * 0


def guarded_sum(x):
    try:
        y = x * 2
    finally:
        pass  # (no handler: nothing to catch, the statement compiles)
    return y.sum()


def test_items_of_outside_objects_and_trys_that_return_run_as_eager():
    COUNTS[:] = 0
    fn = gcompile.compile(bump)
    for _ in range(3):
        np.testing.assert_array_equal(_quiet(fn, np.ones(2)), np.full(2, 2.0))
    assert COUNTS[0] == 3 and TABLE["last"] == 2.0
    for x in (np.arange(4.0), np.arange(4.0) + 5):
        np.testing.assert_array_equal(_quiet(gcompile.compile(sqrt_or_zero), x), sqrt_or_zero(x))
    assert gcompile.compile(guarded_sum, fullgraph=True)(np.ones(3)) == 6.0


def python_draws(n, seed):
    import random

    random.seed(seed)
    inside = 0
    for _ in range(n):
        x, y = random.random(), random.random()
        if x * x + y * y <= 1.0:
            inside += 1
    return 4.0 * inside / n


def reported(x, limit):
    import logging

    total = np.sum(np.abs(x))
    if total > limit:  # (a branch on the data: its warning only when the data take it)
        warnings.warn("over the limit", stacklevel=2)
    logging.getLogger("gcompile.tests").warning("total = %.2f of %s", total, limit)
    steps = []
    for k in range(3):
        steps.append(np.sum(x[k:]))
    print(steps)  # (a list grown in a loop: its values, as eager prints them)
    return total


def test_python_draws_warnings_logging_and_printed_lists_happen_on_every_call(capsys, caplog):
    fn = gcompile.compile(python_draws)
    assert _quiet(fn, 200, 1) == python_draws(200, 1) and _quiet(fn, 200, 2) == python_draws(200, 2)
    compiled = gcompile.compile(reported)
    for x, limit in ((np.arange(4.0), 100.0), (np.arange(4.0), 1.0), (-np.ones(5), 2.0)):
        outcomes = []
        for run in (reported, compiled):
            caplog.clear()
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                run(x, limit)
            warned = [(str(w.message), w.filename, w.lineno) for w in caught]
            logged = [(r.getMessage(), r.filename, r.lineno, r.funcName) for r in caplog.records]
            outcomes.append((warned, logged, capsys.readouterr().out))  # (at the user's lines)
        assert outcomes[0] == outcomes[1]
    assert compiled.stats["fallbacks"] == 0 and not compiled.breaks.splits  # (callbacks)
