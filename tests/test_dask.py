"""Compiled functions over dask arrays (``gcompile/dask``): lazy results equal to eager NumPy on
the materialised inputs, one task per chunk per kernel, each kernel kind mapped onto dask
(blockwise, whole-axis rechunk, tree reduction, overlap), and the calls that go through dask's
own NumPy path say so. The synchronous scheduler throughout; ``test_dask_distributed.py`` runs
worker processes."""

import warnings

import numpy as np
import pytest

import gcompile
from gcompile.dask import chunk_function, merging
from gcompile.errors import GcompileWarning

from .support import assert_same_value

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")


@pytest.fixture(autouse=True)
def synchronous():
    with dask.config.set(scheduler="synchronous"), warnings.catch_warnings():
        warnings.simplefilter("error", GcompileWarning)
        yield


def formula(x, y, a):
    return np.exp(-x * a) * np.sin(y) + np.sqrt(np.abs(x) + 1.0)


def rows(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True), np.cumsum(x, axis=1)


def spread(x):
    return x.var(axis=1), x.argmax(axis=0)


def reductions(x):
    return x.sum(axis=0), x.max(axis=1), x.mean(), (x * x).sum(axis=1, keepdims=True), x.min()


def stencil(x):
    return x[1:-1, 2:] + 0.5 * x[:-2, :-2] - x[2:, 1:-1]


def pipeline(x, y):
    z = np.tanh(x) * y
    centred = z - z.mean()
    return centred, centred.sum(axis=0), (np.cos(x) * y).sum(axis=1)  # (two arrays reduced)


def edge_reductions(x):
    """Sums, products and means along axis 0, 1 and both, fused with elementwise work (the
    products of halves and twos exact in any order)."""
    return (
        (x * 3 - 1).sum(axis=0),
        np.exp(x * 0.1).mean(axis=0),
        np.where(x > 0, 2.0, 0.5).prod(axis=0),
        (x * 0.5 + 1).mean(axis=1),
        (x % 2 + 1).prod(axis=1),
        (x - 1).sum(),
        np.where(x < 0, 2.0, 0.5).prod(),
        (x * x).mean(),
    )


def arrays_and_reductions(x, w):
    """Arrays of a kernel's space returned beside reductions of them along axis 0, 1 and both
    (sums, means, a max), one kernel's work reading an argument that is NumPy's or dask's, one
    returning two arrays that share no work."""
    y = x * 3 - 1
    z = np.exp(-np.abs(x)) * w
    t = np.cos(x)
    return y, y.sum(axis=0), (y * 0.5).mean(axis=1), z, z.max(axis=1), t, x / 2, t.sum(), t.mean(0)


def pair(x):
    """Two arrays of one kernel sharing no work: a step each, no tuple and item tasks."""
    return x + 1, x * 2


compiled = {
    f: gcompile.compile(f)
    for f in (
        formula,
        rows,
        spread,
        reductions,
        stencil,
        pipeline,
        edge_reductions,
        arrays_and_reductions,
        pair,
    )
}


def check(fn, *args):
    """The compiled function over dask arrays against eager NumPy on the materialised inputs."""
    lazy = compiled[fn](*args)
    eager = fn(*[a.compute() if isinstance(a, da.Array) else a for a in args])
    lazy = lazy if isinstance(lazy, tuple) else (lazy,)
    eager = eager if isinstance(eager, tuple) else (eager,)
    for got, want in zip(lazy, eager, strict=True):
        assert isinstance(got, da.Array)
        # partial sums add in another order than NumPy's one pass: a few ulp at the result's
        # magnitude (ints exact)
        assert_same_value(np.asarray(want), np.asarray(got.compute()), ulps=8, scale=want.dtype)
    return lazy


def random(shape, chunks, dtype=np.float64, seed=0):
    values = np.random.default_rng(seed).standard_normal(shape).astype(dtype)
    return da.from_array(values, chunks=chunks)


@pytest.mark.parametrize(
    "shape, chunks, dtype",
    [
        ((40, 30), (7, 11), np.float64),
        ((33,), (10,), np.float32),
        ((5, 6, 7), (2, 3, 4), np.float64),
    ],
)
def test_elementwise_one_task_per_chunk(shape, chunks, dtype):
    x = random(shape, chunks, dtype)
    y = np.random.default_rng(1).standard_normal(shape[-1:]).astype(dtype)
    (out,) = check(formula, x, y, 0.5)
    assert out.chunks == x.chunks
    assert (
        len(out.dask.layers[out.name]) == x.npartitions
    )  # the kernel: one task per chunk = compiled[formula].dask.entries


def test_rows_rechunk_the_axis_into_one_chunk():
    x = random((30, 20), (8, 6))
    softmax, cumulative = check(rows, x)
    assert softmax.chunks == ((8, 8, 8, 6), (20,))
    assert cumulative.chunks[1] == (20,)
    variance, where = check(spread, x)  # reductions no tree combines: their axis in one chunk
    assert variance.chunks == ((8, 8, 8, 6),) and where.chunks == ((6, 6, 6, 2),)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int32])
def test_reductions_along_each_axis(dtype):
    x = random((45, 26), (10, 7), dtype)
    if dtype == np.int32:
        x = (x * 100).astype(dtype)
    check(reductions, x)


def test_tree_steps_are_compiled_and_no_kernel_is_traced_for_dasks_probe():
    check(reductions, random((44, 26), (4, 3)))  # 11 x 9 blocks: combine levels below the top
    check(reductions, random((9, 25), (4, 4)))  # one-row and one-column blocks
    steps = {key[1]: f for key, f in chunk_function._COMPILED.items()}
    assert {"combine_sum", "combine_max", "combine_min"} <= set(steps)
    assert all(f.stats["fallbacks"] == 0 for f in steps.values())
    sizes = [a[2] for f in steps.values() for e in f.entries for a in e.key[1] if a[0] == "array"]
    assert sizes and 0 not in {n for s in sizes for n in s}  # no entry for an empty probe
    combines = [f for name, f in steps.items() if name.startswith("combine")]
    keys = [a[2] for f in combines for e in f.entries for a in e.key[1] if a[0] == "array"]
    assert 1 not in {n for s in keys for n in s}  # sizes of 1 made 2: no trace of their own


def test_task_graphs_are_not_larger_than_dasks_own():
    x = random((64, 64), (8, 8))
    for fn, args in (
        (reductions, (x,)),
        (pipeline, (x, np.ones(64))),
        (stencil, (x,)),
        (pair, (x,)),
    ):
        ours, own = compiled[fn](*args), fn(*args)  # (the eager function on dask arrays)
        assert len(dask.array.core.HighLevelGraph.merge(*[o.dask for o in ours])) <= len(
            dask.array.core.HighLevelGraph.merge(*[o.dask for o in own])
        )


@pytest.mark.parametrize("chunks", [(9, 8), (3, 2), (40, 30)])
def test_stencil_maps_onto_overlapping_chunks(chunks):
    (out,) = check(stencil, random((40, 30), chunks))
    assert out.shape == (38, 28)


def weighted_stencil(x, w, profile):
    """A stencil with a coefficient per result element and one per column of the result."""
    return (x[2:, 1:-1] - x[:-2, 1:-1]) * w + profile * x[1:-1, 2:]


def test_a_stencil_reads_arrays_of_its_results_shape_whole():
    x, w, profile = random((30, 22), (7, 6)), random((28, 20), (5, 9), seed=1), np.ones(20)
    want = weighted_stencil(x.compute(), w.compute(), profile)
    for coefficient in (w, w.compute()):  # (a dask array, chunked otherwise, or NumPy's)
        compiled = gcompile.compile(weighted_stencil)
        got = compiled(x, coefficient, profile)
        assert_same_value(want, got.compute(), ulps=4, scale=np.float64)
        assert [s.mode for s in compiled.dask.last[0].steps.values()] == ["overlap"]


def test_mixed_numpy_and_dask_arguments_and_a_global_mean():
    x = random((24, 18), (5, 18))
    check(pipeline, x, np.linspace(0.0, 1.0, 18))
    check(pipeline, np.ones((24, 18)), random((18,), (4,)))


def wave(x):
    return np.cos(x) * 3.0 - 1.0


def test_map_blocks_and_edge_chunks_compile_nothing_new():
    x = random((49, 11), (12, 5))  # blocks of 12 and 1 row, 5 and 1 column
    got = da.map_blocks(compiled[formula], x, np.ones(1), 2.0, dtype=x.dtype)
    assert_same_value(
        formula(x.compute(), np.ones(1), 2.0), got.compute(), ulps=4, scale=np.float64
    )
    waves = gcompile.compile(wave)
    assert_same_value(wave(x.compute()), waves(x).compute(), ulps=4, scale=np.float64)
    (step,) = waves.dask.last[0].steps.values()
    function = chunk_function.ChunkFunction(step.source, step.unit.name, {}, 1).function()
    assert function.stats["traces"] == 1  # one trace served every chunk shape, a single row too
    peaks = gcompile.compile(peak_rows)
    for got, want in zip(peaks(x), peak_rows(x.compute()), strict=True):
        assert_same_value(want, got.compute(), ulps=4, scale=np.float64)
    for step in peaks.dask.last[0].steps.values():
        function = chunk_function.ChunkFunction(step.source, step.unit.name, {}, 1).function()
        assert function.stats["traces"] == 1
    check(spread, random((48, 10), (12, 5)))  # kernels dropping the axis they run along
    before = traces()
    check(spread, x)
    assert traces() == before


def test_the_empty_last_block_of_a_stencils_result_compiles_nothing_new():
    """A stencil's result over 49 rows in blocks of 24 has blocks of 23, 24 and 0 rows (its
    last block cut to nothing): the next function's kernel runs the empty one padded."""
    waves = gcompile.compile(wave)
    before = None
    for rows_, seed in ((48, 0), (49, 1), (73, 2)):  # blocks 23, 23; 23, 24, 0; 23, 24, 24, 0
        x = random((rows_, 11), (24, 11), seed=seed)
        smoothed = compiled[stencil](x)
        assert (smoothed.chunks[0][-1] == 0) == (rows_ != 48)
        want = wave(stencil(x.compute()))
        assert_same_value(want, waves(smoothed).compute(), ulps=4, scale=np.float64)
        before = traces() if before is None else before
    assert traces() == before


def traces() -> int:
    """The traces of every chunk function (kernels and tree steps) this process has made."""
    return sum(f.stats["traces"] for f in chunk_function._COMPILED.values() if hasattr(f, "stats"))


def graph_size(results) -> int:
    return len(dask.array.core.HighLevelGraph.merge(*[r.dask for r in results]))


@pytest.mark.parametrize("dtype", [np.float64, np.int32])  # (float32: the same steps)
def test_sums_products_and_means_over_one_row_chunks_trace_nothing_new(dtype):
    values = np.random.default_rng(2).standard_normal((41, 21)) * 3
    values = np.round(values).astype(dtype) if dtype == np.int32 else values.astype(dtype)
    check(edge_reductions, da.from_array(values, chunks=(11, 7)))  # no chunk of one row
    before = traces()
    for chunks in [
        (10, 7),  # a one-row edge chunk: 4 x 10 + 1 rows
        (11, 10),  # a one-column edge chunk: 2 x 10 + 1 columns
        (10, 10),  # both
        ((1, 20, 20), 7),  # a leading one-row chunk
        ((20, 1, 20), (1, 10, 10)),  # one row in the middle, a leading column
    ]:
        x = da.from_array(values, chunks=chunks)
        ours = check(edge_reductions, x)
        assert traces() == before, chunks  # (the kernels' chunk steps and the tree's steps)
        assert graph_size(ours) <= graph_size(edge_reductions(x))
    plan = gcompile.explain(compiled[edge_reductions], x).chunk_plan
    assert "merge one-row chunks into their neighbours in the chunk step's tasks" in plan
    assert "axis 0 chunks (3 of 1..20) -> (2 of 20..21), axis 1 chunks (3 of 1..10)" in plan


@pytest.mark.parametrize(
    "sizes, runs",
    [
        ((100, 100, 1), ((0, 1), (1, 3))),
        ((1, 100, 100), ((0, 2), (2, 3))),
        ((1, 1, 5, 1, 5), ((0, 4), (4, 5))),
        ((16, 16, 15, 0), ((0, 1), (1, 2), (2, 4))),  # an empty chunk (a stencil's last) too
        ((1, 1, 1), None),  # every chunk one row: one trace serves them all
        ((1,), None),  # an axis of size 1
        ((5, 5), None),
    ],
)
def test_which_chunks_join_a_neighbour(sizes, runs):
    assert merging.runs(sizes) == runs


def peak_rows(x):
    """A row kernel (its axis in one chunk) and a max along the chunked axis: a chunk of one
    row runs doubled, its result cut back, in the trace of larger chunks."""
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True), np.abs(x).max(axis=0)


def test_xarray_apply_ufunc_parallelized():
    xr = pytest.importorskip("xarray")
    x = random((20, 16), (5, 8))
    array = xr.DataArray(x, dims=("t", "s"))
    got = xr.apply_ufunc(
        compiled[formula],
        array,
        xr.DataArray(np.ones(16), dims=("s",)),
        0.25,
        dask="parallelized",
        output_dtypes=[x.dtype],
    )
    assert isinstance(got.data, da.Array)
    np.testing.assert_allclose(got.values, formula(x.compute(), np.ones(16), 0.25), rtol=1e-15)


def sorted_rows(x):
    return np.sort(x, axis=1) * 2.0


def test_an_op_dask_cannot_run_lazily_is_refused_with_its_line():
    x = random((12, 10), (4, 10))
    with pytest.warns(GcompileWarning, match=r"(?s)'extern' over dask arrays.*test_dask.py:\d+"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)  # dask's own, on np.sort
            out = gcompile.compile(sorted_rows)(x)
    np.testing.assert_array_equal(np.asarray(out), sorted_rows(x.compute()))


def test_what_travels_is_small_source_text():
    import pickle

    x = random((10, 10), (5, 5))
    compiled[formula](x, np.ones(10), 1.0)
    step = list(compiled[formula].dask.last[0].steps.values())[-1]  # exp(-x * a) * sin(y) + ...
    function = chunk_function.ChunkFunction(step.source, step.unit.name, {1: 1.0}, 3)
    travelled = pickle.loads(pickle.dumps(function))
    assert len(pickle.dumps(function)) < 2000 and "def " in travelled.source
    chunk = x.blocks[0, 0].compute()
    got = travelled(chunk, np.sin(np.ones(5)))
    assert_same_value(formula(chunk, np.ones(5), 1.0), got, ulps=4, scale=np.float64)


def test_explain_shows_the_chunk_plan():
    x = random((40, 30), (8, 6))
    plan = gcompile.explain(compiled[rows], x).chunk_plan
    assert "rechunk" in plan and "axes (1,) into one chunk" in plan and "whole (row kernel)" in plan
    plan = gcompile.explain(compiled[stencil], x).chunk_plan
    assert "map_overlap depth (before, after) by axis {0: (0, 2), 1: (0, 2)}" in plan
    plan = gcompile.explain(compiled[pipeline], x, np.ones(30)).chunk_plan
    assert "mean over axes (0, 1): compiled chunk step, tree of depth" in plan
    assert "after the whole-array reductions" in plan
    report = gcompile.explain(compiled[stencil], x)  # the drawing shows it too
    assert "overlap (pointwise kernel)" in report.graphs["fused"].to_dot(notes=report.chunk_notes)


def running_sum(x):
    total = np.zeros(x.shape[1])
    for i in range(x.shape[0]):
        total = total + np.sin(x[i])
    return total


def test_a_loop_over_the_chunked_axis_runs_as_written_with_a_warning():
    x = random((12, 10), (4, 5))
    with pytest.warns(GcompileWarning, match=r"(?s)a loop node over dask arrays.*test_dask.py:\d+"):
        out = gcompile.compile(running_sum)(x)
    assert_same_value(running_sum(x.compute()), np.asarray(out), ulps=4)


def test_the_compiled_functions_options_reach_the_chunk_functions():
    serial = gcompile.compile(wave, options={"parallel": False})
    x = random((20, 10), (10, 10))
    assert_same_value(wave(x.compute()), serial(x).compute(), ulps=4, scale=np.float64)
    (step,) = serial.dask.last[0].steps.values()
    key = (step.source, step.unit.name, True, repr([("parallel", False)]))
    assert chunk_function._COMPILED[key].options["parallel"] is False


def test_arrays_returned_beside_reductions_of_them_run_compiled():
    """A kernel returning an array of its space and reductions of it: the array by blockwise,
    then the reductions' trees reading it, with one-row chunks along the reduced axes, no
    larger a graph than dask's, no new trace (the fixture makes dask's NumPy path an error)."""
    values = np.random.default_rng(3).standard_normal((41, 21))
    w = np.linspace(0.5, 2.0, 21)
    check(arrays_and_reductions, da.from_array(values, chunks=(11, 7)), w)
    before = traces()
    for chunks in [(10, 7), (11, 10), (10, 10), ((1, 20, 20), 7), ((20, 1, 20), (1, 10, 10))]:
        x = da.from_array(values, chunks=chunks)
        ours = check(arrays_and_reductions, x, w)
        assert traces() == before, chunks
        assert graph_size(ours) <= graph_size(arrays_and_reductions(x, w)), chunks
        assert ours[0].chunks == x.chunks  # (the array keeps the argument's chunks)
    plan = gcompile.explain(compiled[arrays_and_reductions], x, w).chunk_plan
    chains = [line for line in plan.splitlines() if "chain (each step reads those before)" in line]
    assert len(chains) == 3 and all(", then reduce makes " in line for line in chains)
    assert any("then blockwise makes" in line for line in chains)  # (arrays sharing no work)
    assert "dask's NumPy path" not in plan
    check(arrays_and_reductions, x, da.from_array(w, chunks=5))  # both of dask
    check(arrays_and_reductions, values, da.from_array(w, chunks=5))  # x of NumPy


def grouped_columns(x, groups):
    return x.reshape(int(groups), -1).sum(axis=0)  # (a float argument decides the shape)


def test_a_float_deciding_a_shape_is_specialised_for_dask_arrays_too():
    compiled, x = gcompile.compile(grouped_columns), np.arange(12.0)
    for groups in (3.0, 4.0, 3.0):
        got = compiled(da.from_array(x, chunks=6), groups)
        assert_same_value(got.compute(), grouped_columns(x, groups))
    assert compiled._binder.static_scalars == {"groups"}
