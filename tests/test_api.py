"""The public API: the compile decorator, its cache and guards, stats, fallbacks and options."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from numpy import ones, zeros

import gcompile
from gcompile import backends
from tests.support import assert_same_value, tolerance


def scale_shift(x, a: float, n: int):
    return x * a + n


def test_decorator_forms():
    @gcompile.compile
    def plain(x):
        return x + 1

    @gcompile.compile()
    def called(x):
        return x + 2

    @gcompile.compile(backend="interpreter", fullgraph=True)
    def configured(x):
        return x + 3

    x = np.arange(3.0)
    np.testing.assert_array_equal(plain(x), x + 1)
    np.testing.assert_array_equal(called(x), x + 2)
    np.testing.assert_array_equal(configured(x), x + 3)
    assert isinstance(plain, gcompile.CompiledFunction)
    assert plain.__name__ == "plain" and plain.eager(x).tolist() == (x + 1).tolist()


def test_stats_count_calls_traces_and_hits():
    fn = gcompile.compile(scale_shift)
    x = np.arange(4.0)
    fn(x, 2.0, 1)
    fn(x + 1, 3.0, 1)  # same structure, new values: cache hit, no re-trace for the float
    np.testing.assert_array_equal(fn(x, 5.0, 1), x * 5.0 + 1)
    stats = fn.stats
    # one kernel: compiled, loaded from disk, or already in memory from another test
    assert stats.pop("kernel_compiles") + stats.pop("disk_cache_hits") <= 1
    assert stats == {
        "calls": 3,
        "traces": 1,
        "cache_hits": 2,
        "fallbacks": 0,
        "graph_breaks": 0,
        "cache_entries": 1,
    }


_X = np.arange(4.0)
_GUARD_CHANGES = {
    "dtype": ((_X, 2.0, 1), (_X.astype(np.float32), 2.0, 1)),
    "size 1": ((_X, 2.0, 1), (np.arange(1.0), 2.0, 1)),
    "ndim": ((_X, 2.0, 1), (_X.reshape(2, 2), 2.0, 1)),
    "layout": ((_X.reshape(2, 2), 2.0, 1), (np.asfortranarray(_X.reshape(2, 2)), 2.0, 1)),
    "strided": ((_X, 2.0, 1), (np.arange(8.0)[::2], 2.0, 1)),
    "static-int": ((_X, 2.0, 1), (_X, 2.0, 7)),
}


@pytest.mark.parametrize("change", sorted(_GUARD_CHANGES))
def test_guard_changes_retrace(change):
    first, second = _GUARD_CHANGES[change]
    fn = gcompile.compile(scale_shift)
    fn(*first)
    fn(*first)
    assert fn.stats["traces"] == 1
    np.testing.assert_array_equal(fn(*second), scale_shift(*second))
    assert fn.stats["traces"] == 2


def test_read_only_flag_is_guarded():
    fn = gcompile.compile(lambda x: x * 2)
    x = np.arange(3.0)
    fn(x)
    x.flags.writeable = False
    fn(x)
    assert fn.stats["traces"] == 2


def test_float_argument_is_an_input_and_int_is_static():
    graph = gcompile.trace(scale_shift, np.ones(2), 0.5, 3)
    assert [p.name for p in graph.placeholders] == ["x", "a"]
    assert "add(%multiply_1, 3)" in str(graph)


def test_static_argnames_fix_a_float_and_accept_strings():
    def f(x, a, mode):
        return x * a if mode == "scale" else x + a

    fn = gcompile.compile(f, static_argnames=("a", "mode"))
    x = np.arange(3.0)
    np.testing.assert_array_equal(fn(x, 2.0, "scale"), x * 2.0)
    np.testing.assert_array_equal(fn(x, 2.0, "shift"), x + 2.0)
    np.testing.assert_array_equal(fn(x, 3.0, "shift"), x + 3.0)
    assert fn.stats["traces"] == 3
    assert (
        "placeholder"
        not in gcompile.trace(f, x, 2.0, "scale", static_argnames="a").tabular().split("\n")[3]
    )


def test_static_argnames_must_name_parameters():
    with pytest.raises(ValueError, match="static_argnames names no parameter"):
        gcompile.compile(scale_shift, static_argnames=("b",))


def test_unknown_backend_fails_at_compile_time():
    with pytest.raises(ValueError, match="unknown gcompile backend 'gpu'"):
        gcompile.compile(scale_shift, backend="gpu")


@pytest.mark.parametrize(
    "args, kwargs",
    [((np.ones(2),), {}), ((np.ones(2), 1.0, 2, 3), {}), ((np.ones(2), 1.0, 2), {"b": 1})],
    ids=["missing", "too-many", "unknown-keyword"],
)
def test_wrong_arity_raises_the_eager_type_error(args, kwargs):
    fn = gcompile.compile(scale_shift)
    with pytest.raises(TypeError) as eager_error:
        scale_shift(*args, **kwargs)
    with pytest.raises(TypeError) as compiled_error:
        fn(*args, **kwargs)
    assert str(compiled_error.value) == str(eager_error.value)


def test_keywords_defaults_varargs_and_containers():
    def f(params, *extra, scale=2.0, **named):
        w, b = params["w"], params["b"]
        total = w * scale + b
        for e in extra:
            total = total + e
        return {"out": total, "parts": [total.sum(), named["bias"] * 1]}

    fn = gcompile.compile(f, fullgraph=True)
    params = {"w": np.arange(3.0), "b": np.ones(3)}
    result = fn(params, np.ones(3), np.full(3, 2.0), bias=np.float32(4), scale=0.5)
    expected = f(params, np.ones(3), np.full(3, 2.0), bias=np.float32(4), scale=0.5)
    np.testing.assert_array_equal(result["out"], expected["out"])
    assert result["parts"][0] == expected["parts"][0] and type(result["parts"][1]) is np.float32


def test_returning_python_values_and_none():
    fn = gcompile.compile(lambda x, n: (x + 1, n, None, "tag"), fullgraph=True)
    out = fn(np.zeros(2), 3)
    assert out[1:] == (3, None, "tag")


def test_calls_of_arrays_and_scalars_reuse_their_entry_with_the_right_inputs():
    def mix(x, a, n, flag, y):
        return x * a + y[:n].sum() if flag else x - a

    fn = gcompile.compile(mix, backend="interpreter")
    x, y = np.arange(4.0), np.arange(6.0)
    calls = [(2.0, 3, True), (2.5, 3, True), (np.float64(1.5), 3, True), (2.0, 3, True)]
    calls += [(2.0, 4, True), (0.5, 5, True), (2.0, 5, False), (0.5, 4, True)]
    for a, n, flag in calls:
        np.testing.assert_array_equal(fn(x, a, n, flag, y), mix(x, a, n, flag, y))
    # a float, a NumPy scalar; n symbolic from its second value; one per value of the bool
    assert fn.stats["traces"] == 4 and fn.stats["cache_hits"] == 4


def test_numpy_and_python_scalar_arguments():
    fn = gcompile.compile(lambda x, s, c: x * s + c, fullgraph=True)
    x = np.ones(3, np.float32)
    out = fn(x, np.float64(2.0), 1j)
    assert out.dtype == (x * np.float64(2.0) + 1j).dtype
    out32 = fn(x, np.float32(2.0), 1.5 + 0j)
    assert out32.dtype == np.complex64


X32 = np.arange(3, dtype=np.float32)
F32 = [np.float32(1.5), np.float32(-2.0)]
PAIR = (np.ones(2), np.arange(2.0))


@pytest.mark.parametrize(
    "fn, args",
    [
        (lambda a: np.sin(a), ([0.5, 1.0, 2.0],)),
        (lambda a: np.sum(a, axis=0), ([[1.0, 2.0], [3.0, 4.0]],)),
        (lambda a: np.asarray(a), (F32,)),  # float32 stays float32
        (lambda a: np.asarray(a), ([np.float32(1.5), 2],)),  # float32 and int: float64
        (lambda a: np.asarray(a), ([True, 2.5, 1j],)),
        (lambda a: np.array(a, dtype=np.float32), ([0.1, 0.2],)),
        (lambda a, x: x + a, ([1.0, 2.0, 3.0], X32)),  # a list of floats is float64, not weak
        (lambda a, x: a * x, (F32 + [np.float32(3)], X32)),
        (lambda a: a * 2, ([1.0, 2.0],)),  # Python list repetition, not arithmetic
        (lambda a: a + [3.0], ([1.0, 2.0],)),
        (lambda a: len(a) * a[0] + sum(a), ([1.0, 2.0],)),
        (lambda a: np.concatenate([a, a]), ([1.0, 2.0],)),
        (lambda a: np.maximum(a, np.float32(0.5)), ([[1.0, 0.0], [0.25, 3.0]],)),
        (lambda p: np.exp(p["w"]) * p["b"], ({"w": [1.0, 2.0], "b": 0.5},)),
        (lambda a, b: np.dot(a, b), ([1.0, 2.0], (3.0, 4.0))),
        (lambda t: np.sum(t), (PAIR,)),  # a tuple of arrays is stacked by NumPy
        (lambda t: np.mean(t, axis=0) + t[0], (PAIR,)),
        (lambda t: np.stack(t, axis=1), (PAIR,)),
        (lambda x: np.array([x[0], x[1] * 2]) + x[:2], (X32,)),  # a list made in the function
    ],
)
def test_list_and_tuple_arguments_are_converted_as_numpy_converts_them(fn, args):
    expected = fn(*args)
    actual = gcompile.compile(fn, backend="interpreter", fullgraph=True)(*args)
    assert_same_value(expected, actual)


def test_a_list_of_floats_is_an_input_and_its_length_is_guarded():
    fn = gcompile.compile(lambda a: np.sin(a), fullgraph=True)
    np.testing.assert_array_equal(fn([0.5, 1.0]), np.sin([0.5, 1.0]))
    np.testing.assert_array_equal(fn([2.0, 3.0]), np.sin([2.0, 3.0]))
    assert fn.stats["traces"] == 1
    assert_same_value(np.sin([2.0, 3.0, 4.0]), fn([2.0, 3.0, 4.0]))
    assert fn.stats["traces"] == 2


def test_explain_shows_a_list_argument_converted():
    text = str(gcompile.explain(lambda a: np.sin(a), [0.5, 1.0]))
    assert "(a_0: float, a_1: float)" in text and "stack(%astype_1, %astype_2)" in text
    assert "the whole function compiled" in text


def test_disable_runs_eagerly(monkeypatch):
    monkeypatch.setenv("GCOMPILE_DISABLE", "1")
    fn = gcompile.compile(scale_shift)
    np.testing.assert_array_equal(fn(np.ones(2), 2.0, 1), np.full(2, 3.0))
    assert fn.stats["traces"] == 0 and fn.stats["calls"] == 1


def test_verify_option_verifies_each_graph(monkeypatch):
    monkeypatch.setenv("GCOMPILE_VERIFY", "1")
    seen = []
    original = gcompile.ir.Graph.verify

    def spy(graph):
        seen.append(graph.name)
        original(graph)

    monkeypatch.setattr(gcompile.ir.Graph, "verify", spy)
    gcompile.compile(scale_shift)(np.ones(2), 1.0, 1)
    # after tracing and at the end of each pass pipeline
    assert set(seen) == {"scale_shift"} and len(seen) >= 3
    stages = len(seen)
    monkeypatch.setenv("GCOMPILE_VERIFY", "each")  # (and after every pass that changed it)
    gcompile.compile(scale_shift)(np.ones(2), 1.0, 1)
    assert len(seen) - stages > stages


def test_past_the_cache_size_limit_new_argument_structures_run_eagerly(monkeypatch):
    """A recompile storm (a shape, dtype or static value changing every call) would trace and
    compile every call: past the limit, calls of new structures run eagerly, without a trace,
    warned once; the structures compiled before still run compiled."""
    monkeypatch.setenv("GCOMPILE_CACHE_LIMIT", "2")
    fn = gcompile.compile(lambda x: x + 1)
    fn(np.ones(1))
    fn(np.ones(2))
    with pytest.warns(gcompile.GcompileWarning, match="compiled for 2 already"):
        assert fn(np.ones(3, np.float32)).dtype == np.float32
    for value in (np.ones(4, np.int8), np.ones(5, np.float32), np.ones(6, np.int8)):
        np.testing.assert_array_equal(fn(value), value + 1)  # (no second warning: errors here)
    np.testing.assert_array_equal(fn(np.ones(7)), np.full(7, 2.0))
    assert fn.stats["traces"] == 2 and fn.stats["fallbacks"] == 4


def test_the_cache_size_limit_option_overrides_the_environment(monkeypatch):
    monkeypatch.setenv("GCOMPILE_CACHE_LIMIT", "1")
    fn = gcompile.compile(lambda x: x + 1, backend="interpreter", options={"cache_size_limit": 2})
    fn(np.ones(1))
    fn(np.ones(2))  # two entries: within the option's limit, past the environment's
    with pytest.warns(gcompile.GcompileWarning, match="compiled for 2 already"):
        fn(np.ones(3, np.float32))


def test_user_error_during_tracing_is_eagers_own_error():
    fn = gcompile.compile(lambda a, b: a + b)
    with pytest.raises(ValueError, match="could not be broadcast"):
        fn(np.ones(3), np.ones(4))


def test_internal_failure_runs_eagerly_with_a_warning(monkeypatch):
    def broken_backend(graph, options):
        raise RuntimeError("backend exploded")

    backends.register_backend("broken", broken_backend)
    fn = gcompile.compile(lambda x: x * 2, backend="broken")
    with pytest.warns(gcompile.GcompileWarning, match="backend exploded"):
        np.testing.assert_array_equal(fn(np.ones(2)), np.full(2, 2.0))
    strict = gcompile.compile(lambda x: x * 2, backend="broken", fullgraph=True)
    with pytest.raises(RuntimeError, match="backend exploded"):
        strict(np.ones(2))


def test_registered_backend_receives_the_graph():
    received = []

    def recording_backend(graph, options):
        received.append((str(graph), options))
        return lambda inputs: [inputs[0] * 10]

    backends.register_backend("recording", recording_backend)
    fn = gcompile.compile(lambda x: x + 1, backend="recording", options={"k": 1})
    np.testing.assert_array_equal(fn(np.ones(2)), np.full(2, 10.0))
    assert received[0][1] == {"k": 1} and "add(%x, 1)" in received[0][0]


def test_decorated_method_binds_self():
    class Model:
        def __init__(self):
            self.scale = 3

        @gcompile.compile(static_argnames="self")
        def forward(self, x):
            return x * self.scale

    model = Model()
    np.testing.assert_array_equal(model.forward(np.ones(2)), np.full(2, 3.0))
    other = Model()
    other.scale = 5
    np.testing.assert_array_equal(other.forward(np.ones(2)), np.full(2, 5.0))  # guarded by identity
    assert Model.forward.stats["traces"] == 2


def test_concurrent_callers_get_correct_results():
    fn = gcompile.compile(lambda x, a: np.sqrt(x) * a + x.sum())
    inputs = [np.arange(n, dtype=np.float64) for n in (5, 6, 7, 8)] * 8
    results: list = [None] * len(inputs)

    def worker(i):
        results[i] = fn(inputs[i], float(i))

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(len(inputs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i, x in enumerate(inputs):
        np.testing.assert_array_equal(results[i], np.sqrt(x) * float(i) + x.sum())
    assert fn.stats["cache_entries"] == 1  # one trace serves the four sizes


def test_trace_accepts_a_compiled_function_and_keywords():
    fn = gcompile.compile(scale_shift, static_argnames=("a",))
    graph = gcompile.trace(fn, np.ones(2), a=0.5, n=1)
    assert [p.name for p in graph.placeholders] == ["x"]
    assert "multiply(%x, 0.5)" in str(graph)


def test_a_compiled_function_called_while_tracing_is_inlined():
    @gcompile.compile
    def inner(x):
        return np.exp(x) * 2

    @gcompile.compile(fullgraph=True)
    def outer(x):
        return inner(x) + 1

    x = np.linspace(0.0, 1.0, 5)
    assert_same_value(np.exp(x) * 2 + 1, outer(x), tolerance("numba"))
    assert inner.stats["traces"] == 0  # recorded into outer's graph, not compiled on its own
    assert "exp(%x)" in str(gcompile.trace(outer, x))


def test_python_scalar_results_and_creation_only_functions():
    assert gcompile.compile(lambda x, a: a * 2, fullgraph=True)(np.ones(2), 1.5) == 3.0
    np.testing.assert_array_equal(
        gcompile.compile(lambda n: np.arange(n) * 2, fullgraph=True)(5), np.arange(5) * 2
    )

    def keyword_only(x, *, scale=2.0):
        return x * scale

    np.testing.assert_array_equal(
        gcompile.compile(keyword_only, fullgraph=True)(np.ones(2), scale=3.0), [3.0, 3.0]
    )


def from_numpy_names(a):
    """NumPy functions imported by name: the tracer routes them as it routes ``np.zeros``."""
    out = zeros(a.shape)
    for k in range(a.shape[0]):
        out[k] = a[k] + ones(())
    return out


def test_names_imported_from_numpy_are_traced_and_restored_after():
    graph = gcompile.trace(from_numpy_names, np.arange(4.0))
    assert [n.target.name for n in graph.nodes if n.op == "call"][:1] == ["zeros"]
    assert zeros is np.zeros and globals()["zeros"] is np.zeros  # the module's names restored
    compiled = gcompile.compile(from_numpy_names, backend="interpreter", fullgraph=True)
    np.testing.assert_array_equal(compiled(np.arange(4.0)), np.arange(4.0) + 1)


def python_tables(a, b):  # lists of Python numbers sized by the arrays: nothing on arrays
    m, n = len(a), len(b)
    return [[0] * (n + 1) for _ in range(m + 1)], {"pairs": [(i, i + 1) for i in range(m)]}


def test_a_trace_that_computes_nothing_runs_the_function_as_python():
    fn = gcompile.compile(python_tables, fullgraph=True)
    a, b = np.zeros(5), np.zeros(3)
    result = fn(a, b)
    assert result == python_tables(a, b) and type(result[1]["pairs"][0][0]) is int
    assert fn.entries[-1].python and fn.entries[-1].run is None
    assert fn(np.zeros(7), b) == python_tables(np.zeros(7), b)
    assert "computes nothing on arrays" in str(gcompile.explain(python_tables, a, b))
