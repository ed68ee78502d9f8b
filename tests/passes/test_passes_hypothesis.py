"""Random DAGs (hypothesis): every pass keeps the interpreter's results exact and is idempotent.

A program is a list of steps over a growing pool of values, on float32, float64,
int32 and bool inputs of shapes (4,3), (1,3), (4,1), (3,) and () (floats sometimes
holding NaN, +-inf and -0.0): unary and binary ufuncs with broadcasting and
Python-scalar operands, ``where``, reductions over axis -1, 0 or None with and
without keepdims, views, and in-place updates of intermediate arrays made with
``np.zeros`` (``z[...] = v``, ``z[1:] += v``, ``z[1:] = f(z[1:], v)``, ``z[0] = v``),
which later reads of ``z`` and of views of it must see.

For each pass of ``manager.OPTIMIZE + manager.FUSE`` (and ``fuse`` with a cap of 3
ops per kernel), on a fresh trace, functionalized first when it writes memory (as
the pipeline runs them):

* the graph verifies and the interpreter gives eager NumPy's results bit for bit
  (types, dtypes and shapes too; NaN == NaN, -0.0 != 0.0);
* a second run returns False and leaves ``str(graph)`` unchanged;
* outputs share memory exactly when eager NumPy's do.

The whole pipeline (``run_pipeline(graph, "fused")``) must keep the results too,
and its fusion report must explain every kernel boundary, with convex kernels
that read reductions only per row.
"""

from __future__ import annotations

import functools
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gcompile
from gcompile.backends import interpreter
from gcompile.ir import ops
from gcompile.ir.graph import Graph
from gcompile.ir.pytree import unflatten
from gcompile.passes import manager
from gcompile.passes.functionalize import functionalize
from gcompile.passes.fuse import fuse
from gcompile.passes.manager import PassManager
from tests.error_bounds import bounds
from tests.passes.test_fuse import (
    boundaries,
    kernel_edges,
    misread_reductions,
    non_convex_kernels,
)
from tests.support import (
    assert_same_value,
    call_compiled,
    narrowest_float,
    supports,
    tolerance,
)

UNARY = [
    np.negative,
    np.absolute,
    np.exp,
    np.sin,
    np.sqrt,
    np.square,
    np.floor,
    np.sign,
    np.logical_not,
    np.isfinite,
]
BINARY = [
    np.add,
    np.subtract,
    np.multiply,
    np.divide,
    np.maximum,
    np.minimum,
    np.less,
    np.equal,
    np.logical_and,
    np.bitwise_and,
]
REDUCTIONS = [np.sum, np.max, np.min, np.mean, np.prod, np.any]
SCALARS = [2, -1, 0.5, 3.0, True, -0.0]
SHAPES = [(4, 3), (1, 3), (4, 1), (3,), ()]
DTYPES = [np.float32, np.float64, np.int32, np.bool_]
KINDS = ["unary", "binary", "scalar", "where", "reduce", "view", "zeros", "write"]

PASSES = [
    *manager.OPTIMIZE,
    *manager.FUSE,
    ("fuse(max_kernel_ops=3)", functools.partial(fuse, max_kernel_ops=3)),
]


def broadcasts(shape: tuple, target: tuple) -> bool:
    """Whether ``shape`` broadcasts to exactly ``target``."""
    try:
        return np.broadcast_shapes(shape, target) == tuple(target)
    except ValueError:
        return False


@st.composite
def programs(draw):
    """(input specs, steps, float specials): a random program over a pool of values."""
    inputs = [
        (draw(st.sampled_from(SHAPES)), draw(st.sampled_from(DTYPES)))
        for _ in range(draw(st.integers(1, 3)))
    ]
    steps = []
    for _ in range(draw(st.integers(1, 9))):
        kind = draw(st.sampled_from(KINDS))
        picks = tuple(draw(st.integers(0, 50)) for _ in range(3))
        if kind == "unary":
            steps.append((kind, draw(st.sampled_from(UNARY)), picks))
        elif kind in ("binary", "write"):
            steps.append((kind, draw(st.sampled_from(BINARY)), picks))
        elif kind == "scalar":
            op = draw(st.sampled_from(BINARY))
            steps.append((kind, (op, draw(st.sampled_from(SCALARS))), picks))
        elif kind == "reduce":
            op = draw(st.sampled_from(REDUCTIONS))
            axis = draw(st.sampled_from([-1, 0, None]))
            steps.append((kind, (op, axis, draw(st.booleans())), picks))
        else:
            steps.append((kind, None, picks))
    return inputs, steps, draw(st.booleans())


def build(steps):
    """The program as a function of its inputs; steps NumPy would reject are skipped by shape and
    dtype (known while tracing), so eager and traced runs take the same steps."""

    def program(*arrays):
        pool, owned = list(arrays), []
        for kind, param, (a, b, c) in steps:
            x, y, z = (pool[i % len(pool)] for i in (a, b, c))
            if kind == "unary" and supports(param, x.dtype):
                pool.append(param(x))
            elif kind == "binary" and supports(param, x.dtype, y.dtype):
                pool.append(param(x, y))
            elif kind == "scalar" and supports(param[0], x.dtype, np.asarray(param[1]).dtype):
                op, scalar = param
                pool.append(op(x, scalar) if a % 2 else op(scalar, x))
            elif kind == "where":
                pool.append(np.where(x > 0, y, z))
            elif kind == "reduce":
                op, axis, keepdims = param
                pool.append(op(x, axis=axis if x.ndim else None, keepdims=keepdims))
            elif kind == "view" and x.ndim:
                pool.append((x[::-1], x.T, x[1:], x[..., None])[b % 4])
            elif kind == "zeros":
                buffer = np.zeros(x.shape, x.dtype)
                buffer[...] = x
                owned.append(buffer)
                pool.append(buffer)
            elif kind == "write" and owned:
                write(owned[a % len(owned)], y, param, b % 4)
        return tuple(pool[len(arrays) :]) or (pool[0] * 1,)

    return program


def write(target, value, op, variant: int) -> None:
    """One in-place update of ``target`` (an array the program owns), when NumPy allows it."""
    if variant == 0:
        if broadcasts(value.shape, target.shape) and castable(value.dtype, target.dtype):
            target[...] = value
    elif variant in (1, 2) and target.ndim and target.shape[0] > 1:
        region = (target.shape[0] - 1, *target.shape[1:])
        if not broadcasts(value.shape, region):
            return
        if variant == 1 and supports(np.add, target.dtype, value.dtype):
            if castable(result_dtype(np.add, target.dtype, value.dtype), target.dtype):
                target[1:] += value
        elif variant == 2 and supports(op, target.dtype, value.dtype):
            if castable(result_dtype(op, target.dtype, value.dtype), target.dtype):
                target[1:] = op(target[1:], value)
    elif variant == 3 and target.ndim:
        if broadcasts(value.shape, target.shape[1:]) and castable(value.dtype, target.dtype):
            target[0] = value


def castable(source, target) -> bool:
    return np.can_cast(source, target, "same_kind")


def result_dtype(ufunc: np.ufunc, *dtypes) -> np.dtype:
    with np.errstate(all="ignore"):
        return ufunc(*(np.ones(1, d) for d in dtypes)).dtype


def make_inputs(specs, seed: int, specials: bool) -> list:
    """Arrays for ``specs``; with ``specials``, floats include NaN, +-inf and -0.0."""
    rng = np.random.default_rng(seed)
    arrays = []
    for shape, dtype in specs:
        values = np.asarray(rng.uniform(-3, 3, shape))
        if specials and np.dtype(dtype).kind == "f" and values.size:
            flat = values.reshape(-1)
            picks = rng.integers(0, flat.size, 2)
            flat[picks] = rng.choice([np.nan, np.inf, -np.inf, -0.0, 0.0], 2)
        if dtype == np.bool_:
            arrays.append(np.asarray(values > 0))
        elif np.dtype(dtype).kind == "i":
            arrays.append(np.asarray(np.round(values * 2)).astype(dtype))
        else:
            arrays.append(np.asarray(values).astype(dtype))
    return arrays


def outputs(result) -> list:
    return list(result) if isinstance(result, tuple) else [result]


def assert_exact(expected, actual, where: str) -> None:
    """Same types, dtypes, shapes and values (NaN == NaN), and floats bit for bit up to NaN
    payloads: -0.0 and 0.0 differ (``assert_same_value`` alone takes them as equal)."""
    assert_same_value(expected, actual, where=where)
    for i, (e, a) in enumerate(zip(outputs(expected), outputs(actual))):
        e, a = np.asarray(e), np.asarray(a)
        if e.dtype.kind == "f":
            same_sign = (np.signbit(e) == np.signbit(a)) | np.isnan(e)
            assert same_sign.all(), f"{where}[{i}]: signs of zeros differ: {e} vs {a}"


def sharing(result) -> list[tuple[int, int]]:
    """Pairs of returned arrays that share memory (a view and its base, or one array twice)."""
    flat = outputs(result)
    return [
        (i, j)
        for i in range(len(flat))
        for j in range(i + 1, len(flat))
        if isinstance(flat[i], np.ndarray)
        and isinstance(flat[j], np.ndarray)
        and np.shares_memory(flat[i], flat[j])
    ]


def run(graph: Graph, inputs: list):
    """The interpreter's result for ``graph``, structured like the function's."""
    return unflatten(graph.out_spec, interpreter.run(graph, [a.copy() for a in inputs]))


def writes(graph: Graph) -> bool:
    return any(n.op == "call" and n.target is ops.SETITEM for n in graph.nodes)


def after_pass(fn, inputs: list, name: str, step) -> Graph:
    """A fresh trace of ``fn`` after the pass (functionalized first if it writes memory, as in
    the pipeline, unless the pass is functionalize itself)."""
    graph = gcompile.trace(fn, *inputs)
    if name != "functionalize" and writes(graph):
        PassManager([("functionalize", functionalize)], verify=True).run(graph)
    PassManager([(name, step)], verify=True).run(graph)
    return graph


def after_pipeline(fn, inputs: list) -> Graph:
    graph = gcompile.trace(fn, *inputs)
    manager.run_pipeline(graph, "fused")
    return graph


def eager_or_none(fn, inputs):
    """``fn``'s eager result, or None when NumPy itself rejects the program."""
    try:
        return fn(*[a.copy() for a in inputs])
    except (ValueError, TypeError, OverflowError, ZeroDivisionError):
        return None


def quietly(test):
    """Run ``test`` with NumPy's floating-point warnings off (NaN and inf are part of the data)."""

    @functools.wraps(test)
    def wrapper(*args, **kwargs):
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            return test(*args, **kwargs)

    return wrapper


def examples(count: int) -> settings:
    """Hypothesis settings for ``count`` examples (about 40 ms each for the per-pass tests)."""
    return settings(
        max_examples=count,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
    )


@examples(50)
@given(programs(), st.integers(0, 2**16))
@quietly
def test_every_pass_keeps_results_and_is_idempotent(program, seed):
    """Each pass: the graph verifies, no setitem is left, results are exact, and a second run
    returns False without changing the text; the whole pipeline keeps the results too."""
    specs, steps, specials = program
    fn = build(steps)
    inputs = make_inputs(specs, seed, specials)
    expected = eager_or_none(fn, inputs)
    if expected is None:
        return  # NumPy rejects the program (a broadcast or a cast): nothing to compare
    for name, step in PASSES:
        graph = after_pass(fn, inputs, name, step)
        graph.verify()
        assert not writes(graph), f"setitem left after {name}"
        assert_exact(expected, run(graph, inputs), f"after {name}")
        text = str(graph)
        again = PassManager([(name, step)], verify=True).run(graph)
        assert again is False, f"{name} changed the graph again:\n{text}\n=>\n{graph}"
        assert str(graph) == text
    graph = after_pipeline(fn, inputs)
    graph.verify()
    assert not writes(graph)
    assert_exact(expected, run(graph, inputs), "after the pipeline")


@examples(50)
@given(programs(), st.integers(0, 2**16))
@quietly
def test_every_pass_keeps_distinct_outputs_distinct(program, seed):
    """Outputs share memory after each pass exactly as in eager NumPy (two results that eager
    returns as separate arrays must not become one array, which a caller could write through)."""
    specs, steps, specials = program
    fn = build(steps)
    inputs = make_inputs(specs, seed, specials)
    expected = eager_or_none(fn, inputs)
    if expected is None:
        return
    for name, step in PASSES:
        shared = sharing(run(after_pass(fn, inputs, name, step), inputs))
        assert shared == sharing(expected), f"after {name}: outputs {shared} share memory"
    shared = sharing(run(after_pipeline(fn, inputs), inputs))
    assert shared == sharing(expected), f"after the pipeline: outputs {shared} share memory"


@examples(100)
@given(programs(), st.integers(0, 2**16), st.sampled_from([{}, {"max_kernel_ops": 3}]))
@quietly
def test_random_fusions_are_explained_and_legal(program, seed, options):
    """Every edge between a kernel and the rest has a reason in the report, kernels are convex
    and have an order, and a reduction's result is read in its own kernel only per row."""
    specs, steps, specials = program
    fn = build(steps)
    inputs = make_inputs(specs, seed, specials)
    expected = eager_or_none(fn, inputs)
    if expected is None:
        return
    fusion_only = {**options, "disable": ["assign_buffers"]}  # (the report is fusion's)
    graph = gcompile.trace(fn, *inputs, stage="fused", options=fusion_only)
    graph.verify()
    assert set(boundaries(graph)) == kernel_edges(graph), f"{graph.notes.fusion}\n{graph}"
    before = gcompile.trace(fn, *inputs, stage="optimized", options=options)
    assert non_convex_kernels(before, graph) == []
    assert misread_reductions(graph) == []


@pytest.mark.slow
@examples(15)
@given(programs(), st.integers(0, 2**16))
@quietly
def test_random_programs_compile_with_numba_like_eager(program, seed):
    """The whole pipeline and the Numba backend (loop nests, phases, index maps, casts) give
    eager NumPy's results: integers and booleans exactly, floats within the backend's ulps.
    (30 examples: each compiles its own kernels, ~0.15 s apiece.)"""
    specs, steps, specials = program
    fn = build(steps)
    inputs = make_inputs(specs, seed, specials)
    expected = eager_or_none(fn, inputs)
    if expected is None:
        return
    compiled = gcompile.compile(fn, backend="numba", fullgraph=True)
    actual = call_compiled(compiled, *[a.copy() for a in inputs])
    scale = narrowest_float(inputs)
    bound, _, _ = bounds(fn, inputs, {})  # where the program cancels
    assert_same_value(
        outputs(expected), outputs(actual), tolerance("numba"), "numba", scale, outputs(bound)
    )
