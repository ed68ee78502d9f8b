"""The Numba backend: caching, shape-generic kernels, numerics, parallel loops, failures, threads."""

from __future__ import annotations

import math
import os
import re
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import numba
import numpy as np
import pytest

import gcompile
from gcompile.backends.numba import cache, linking, rules
from gcompile.ir import ops
from tests.support import check, quiet

ROOT = Path(__file__).resolve().parents[2]


def compiled(fn, **options):
    return gcompile.compile(fn, fullgraph=True, options=options or None)


def program(fn):
    return fn.entries[-1].run.program


# -- generated code ----------------------------------------------------------------------------------


def scale_shift(x, y):
    return x * 2.5 + np.exp(y)


def test_code_shows_every_node_with_its_line():
    fn = compiled(scale_shift)
    fn(np.ones((3, 4)), np.ones((3, 4)))
    code = fn.code
    assert "def host_scale_shift(inputs):" in code
    assert "def kernel(" in code
    for line in ("multiply(%x, 2.5)", "exp(%y)", "add(%multiply_1, %exp_1)"):
        assert line in code, line
    assert "test_numba.py:" in code  # the user's file:line above the generated line
    assert "_m.exp_f64(" in code  # the vectorisable expansion: this loop has no accumulator


def test_kernel_reads_views_as_index_arithmetic_on_the_base_array():
    def stencil(u):
        return u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:] - 4.0 * u[1:-1, 1:-1]

    fn = compiled(stencil)
    u = np.random.default_rng(0).random((9, 7))
    np.testing.assert_allclose(fn(u), stencil(u), rtol=0, atol=1e-15)
    ((code, _),) = program(fn).kernels
    # the input itself, read flat at five offsets; no slices or temporaries in the kernel
    assert [a[0] for a in code.arguments].count("base") == 1
    reads = [line for line in code.readable.splitlines() if "u[" in line and "#" not in line]
    assert len(reads) == 5 and not any(":" in line for line in reads)
    # the host computes offsets and strides from the sizes: no size is a literal anywhere
    host = program(fn).source
    assert "_serial_fused_1(_out0_fused_1, v_u, n0=s0 - 2, n1=s1 - 2, " in host
    code_lines = [line for line in (host + code.source).splitlines() if "#" not in line]
    assert "st0=s1" in host and not re.search(r"\b(9|7)\b", "\n".join(code_lines))


def test_broadcast_reads_do_not_copy():
    def f(x, row, col):
        return x * row + col

    fn = compiled(f)
    x, row, col = np.ones((4, 5)), np.arange(5.0), np.arange(4.0)[:, None]
    np.testing.assert_array_equal(fn(x, row, col), f(x, row, col))
    ((code, _),) = program(fn).kernels
    assert "broadcast" not in code.readable
    assert (
        code.readable.count("[np.uint64(i1)]") == 1 and code.readable.count("[np.uint64(i0)]") == 1
    )


# -- caching -------------------------------------------------------------------------------------------


def polynomial(a):
    return a * a * 0.5 + a * 3.0 + 1.0


def test_a_new_size_neither_retraces_nor_compiles_again():
    fn = compiled(polynomial)
    fn(np.random.rand(10))
    compiles = fn.stats["kernel_compiles"]
    for n in (11, 1000, 37):
        x = np.random.rand(n)
        np.testing.assert_array_equal(fn(x), polynomial(x))
    assert fn.stats["traces"] == 1
    assert fn.stats["kernel_compiles"] == compiles  # the same kernel, sizes are arguments
    np.testing.assert_array_equal(fn(np.zeros(0)), polynomial(np.zeros(0)))
    assert fn.stats["traces"] == 2  # (sizes 0 and 1 are specialised: another trace)


def test_two_functions_with_the_same_kernel_share_it():
    def first(a):
        return a * a * 0.5 + a * 3.0 + 1.0

    def second(b):
        return b * b * 0.5 + b * 3.0 + 1.0

    one, two = compiled(first), compiled(second)
    one(np.random.rand(3, 3))
    two(np.random.rand(5, 8))
    assert two.stats["kernel_compiles"] == 0
    ((code_one, loaded_one),) = program(one).kernels
    ((code_two, loaded_two),) = program(two).kernels
    assert loaded_one.function is loaded_two.function
    assert code_one.readable != code_two.readable  # each shows its own names


_SECOND_PROCESS = textwrap.dedent(
    """
    import numpy as np, gcompile
    def f(a, b):
        return np.sqrt(a * b + 7.25) - b
    fn = gcompile.compile(f, fullgraph=True)
    a, b = np.random.rand(50), np.random.rand(50)
    assert np.allclose(fn(a, b), f(a, b))
    import sys  # (machine code from the disk cache needs no compiler: ~0.25 s spared)
    print(fn.stats["kernel_compiles"], fn.stats["disk_cache_hits"], "numba.np.arraymath" in sys.modules)
    """
)


def outputs_of_two_processes(script: str, **environment: str) -> list:
    """The printed words of ``script`` run twice, each in a new Python process."""
    env = {**os.environ, **environment, "PYTHONPATH": str(ROOT)}
    return [
        subprocess.run(
            [sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True
        ).stdout.split()
        for _ in range(2)
    ]


@pytest.mark.optimized  # loads machine code from disk
def test_a_second_process_loads_the_machine_code_from_disk(tmp_path):
    runs = outputs_of_two_processes(_SECOND_PROCESS, GCOMPILE_CACHE_DIR=str(tmp_path / "kernels"))
    assert runs[0] == ["1", "0", "True"]  # compiled
    assert runs[1] == ["0", "1", "False"]  # loaded, not compiled, no compiler set up
    directory = tmp_path / "kernels"
    assert directory.stat().st_mode & 0o777 == 0o700
    (module,) = directory.glob("k_*.py")
    first_line = module.read_text().splitlines()[0]
    assert first_line.startswith("# gcompile kernel module, sha256")


_PROGRAM_PROCESS = textwrap.dedent(
    """
    import sys
    import numpy as np, gcompile
    from gcompile.backends.numba import linking
    linking.INLINED_SIZE = 0  # (every kernel called by name, however small)
    def rows(a, w):
        out = np.empty_like(a)
        for i in range(a.shape[0]):
            out[i] = a[i] * w + a[i].max()
        return out
    fn = gcompile.compile(rows, fullgraph=True)
    a = np.random.rand(6, 40)
    assert np.array_equal(fn(a, 2.0), rows(a, 2.0))
    timings = fn.entries[-1].run.program.timings
    (loop,) = [event for event in timings if event.startswith("numba loop")]
    print(loop.split()[-1], "numba.np.arraymath" in sys.modules)
    """
)


@pytest.mark.optimized  # loads machine code from disk
def test_a_loop_program_calls_its_kernels_by_name_in_every_process(tmp_path):
    """A program is linked to its kernels' code by their symbols (``linking``): the second
    process loads the kernels it recorded, then its machine code (without that record, the
    next test)."""
    cache_dir = tmp_path / "kernels"
    runs = outputs_of_two_processes(_PROGRAM_PROCESS, GCOMPILE_CACHE_DIR=str(cache_dir))
    assert runs == [["(compiled)", "True"], ["(disk)", "False"]]


def _rows_max(a, w):
    out = np.empty_like(a)
    for i in range(a.shape[0]):
        out[i] = a[i] * w + a[i].max()
    return out


def _rows_min(a, w):
    out = np.empty_like(a)
    for i in range(a.shape[0]):
        out[i] = a[i] * w - a[i].min()
    return out


@pytest.mark.parametrize("rows, size", [(_rows_max, 0), (_rows_min, 10**6)])
def test_a_kernel_is_linked_into_its_program_as_declarations_unless_small(
    monkeypatch, tmp_path, rows, size
):
    """(Each case its own kernel: a kernel's library keeps how it was first linked; and its
    own cache, where no program compiled before is loaded from.)"""
    monkeypatch.setattr(linking, "INLINED_SIZE", size)
    monkeypatch.setenv("GCOMPILE_CACHE_DIR", str(tmp_path))
    fn = gcompile.compile(rows, fullgraph=True)
    a = np.random.rand(5, 9)
    assert np.array_equal(fn(a, 0.5), rows(a, 0.5))
    dispatcher = program(fn).entry.function
    (kernel,) = linking.kernel_signatures(dispatcher)
    (kernel_overload,) = dispatcher.py_func.__globals__[kernel].overloads.values()
    kernel_name = kernel_overload.fndesc.mangled_name
    assert linking._KERNEL_TAG in kernel_name  # (the same in every process)
    (program_overload,) = dispatcher.overloads.values()
    linked = program_overload.library._get_module_for_linking()
    (linked_kernel,) = [f for f in linked.functions if f.name == kernel_name]
    # (called by name, its body not compiled again; a small one linked whole, to be inlined)
    assert linked_kernel.is_declaration == (size == 0)
    (record,) = tmp_path.glob("*.links")  # (written before Numba wrote the program's code)
    record.unlink()  # (as a process stopped between the two writes leaves it)
    signature = next(iter(dispatcher.overloads))
    assert dispatcher._cache._load_overload(signature, dispatcher.targetctx) is None  # compiled


_FOLD_PROCESS = textwrap.dedent(
    """
    import numpy as np
    from gcompile.backends.numba import scalar
    scalar.float_lane_max(np.arange(20.0), 20)
    print(sum(scalar.float_lane_max.stats.cache_hits.values()))
    """
)


@pytest.mark.optimized  # loads machine code from disk
def test_block_folds_load_from_numbas_disk_cache_or_keep_none(tmp_path):
    # A closure's cache key changed in every process: it never loaded, and its cache grew.
    hits = outputs_of_two_processes(_FOLD_PROCESS, NUMBA_CACHE_DIR=str(tmp_path))
    assert hits == [["0"], ["1"]]  # compiled, then loaded
    from numba.core.caching import NullCache

    from gcompile.backends.numba import scalar

    assert isinstance(scalar.lane_max._cache, NullCache)  # made by a factory: not cached


def test_a_blocked_loop_compiles_no_numba_overload_for_its_block_end(tmp_path, monkeypatch):
    # ``min(b + 128, n)`` made Numba compile its overload of ``min`` for every kernel (twice in a
    # parallel one, ~25 ms each): the block end is a conditional expression instead.
    monkeypatch.setenv("GCOMPILE_CACHE_DIR", str(tmp_path))
    compiled = []

    class Recorder(numba.core.event.Listener):
        def on_start(self, event):
            compiled.append(event.data["dispatcher"].py_func.__qualname__)

        def on_end(self, event):
            pass

    def sum_of_squares_plus(a):
        return np.sum(a * a + 0.6180339887)

    fn = gcompile.compile(sum_of_squares_plus, fullgraph=True)
    x = np.linspace(0.0, 1.0, 1000)
    with numba.core.event.install_listener("numba:compile", Recorder()):
        result = fn(x)
    assert np.isclose(result, sum_of_squares_plus(x), rtol=1e-12, atol=0)
    assert "kernel" in compiled  # compiled here, not loaded: the check below can fail
    assert "b0 + 128" in fn.code  # a blocked loop
    assert [name for name in compiled if name.startswith("ol_min")] == []


def test_a_tampered_cache_entry_is_rewritten_not_imported(tmp_path, monkeypatch):
    monkeypatch.setenv("GCOMPILE_CACHE_DIR", str(tmp_path))
    text = cache.module_text("def kernel(out0):\n    out0[0] = 1.0\n", False, False)
    key = cache.key_of(text)
    path = tmp_path / f"k_{key}.py"
    path.write_text(f"{cache._HEADER}{'0' * 64}\nraise SystemExit('imported a tampered file')\n")
    cache._dispatchers.pop(key, None)
    loaded = cache.load(
        "def kernel(out0):\n    out0[0] = 1.0\n", (numba.float64[::1],), False, False
    )
    out = np.zeros(1)
    loaded.function(out)
    assert out[0] == 1.0
    assert cache._intact(path, text)


def test_cache_key_includes_versions_cpu_and_optimisation_level(monkeypatch):
    key = cache._environment_key()
    assert numba.__version__ in key and np.__version__ in key
    at_suite_level = cache.key_of("x")
    assert len(at_suite_level) == 40
    other_level = numba.core.config._OptLevel(3 - int(numba.core.config.OPT))
    monkeypatch.setattr(numba.core.config, "OPT", other_level)
    assert cache.key_of("x") != at_suite_level  # a kernel of another NUMBA_OPT is not loaded


def test_large_constants_are_kernel_arguments_not_globals():
    table = np.linspace(0.0, 1.0, 300_000)

    def f(x):
        return x * table + 1.0

    fn = compiled(f)
    x = np.random.rand(300_000)
    np.testing.assert_array_equal(fn(x), f(x))
    ((code, loaded),) = program(fn).kernels
    assert [a[0] for a in code.arguments].count("base") == 2
    assert "300000" not in code.source and loaded.path is not None


# -- numerics ------------------------------------------------------------------------------------------


def ulps_between(a, b) -> float:
    return float(abs(a - b) / np.spacing(np.abs(np.asarray(a, dtype=np.asarray(b).dtype))))


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_long_sums_agree_with_numpy_pairwise_summation(dtype):
    n = 10**7
    x = np.random.default_rng(1).random(n).astype(dtype) + dtype(0.5)
    fn = compiled(lambda a: np.sum(a))
    ours, numpy = fn(x), np.sum(x)
    assert ours.dtype == numpy.dtype
    assert ulps_between(ours, numpy) <= 4 * math.log2(n)
    exact = math.fsum(x.astype(np.float64))
    assert abs(float(ours) - exact) <= abs(float(numpy) - exact) + 4 * np.spacing(dtype(exact))
    naive = np.cumsum(x)[-1]  # one accumulator, element after element
    assert ulps_between(naive, numpy) > 4 * math.log2(n)  # what the scheme avoids


def test_row_sums_and_means_agree_with_numpy():
    x = np.random.default_rng(2).random((64, 100_000)).astype(np.float32)
    fn = compiled(lambda a: (a.sum(axis=1), a.mean(axis=1)))
    for ours, numpy in zip(fn(x), (x.sum(axis=1), x.mean(axis=1))):
        assert ours.dtype == numpy.dtype
        assert max(ulps_between(o, n) for o, n in zip(ours, numpy)) <= 4 * math.log2(100_000)


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64, np.uint8, np.uint64])
def test_integer_overflow_wraps_like_numpy(dtype):
    info = np.iinfo(dtype)
    x = np.array([info.max, info.min, info.max - 1, 3], dtype)
    check(lambda a: (a + a * 3 - 1, a * a, np.sum(a * 2)), x)  # one compile, not three


def test_float_division_by_zero_gives_inf_and_nan():
    a = np.array([1.0, -1.0, 0.0, np.nan])
    with quiet():
        check(lambda x, y: (x / y, x // y, x % y), a, np.zeros(4))


@pytest.mark.parametrize("dtype", [np.int8, np.int64, np.uint32])
def test_integer_division_by_zero_gives_zero_without_crashing(dtype):
    info = np.iinfo(dtype)
    a = np.array([7, info.min, info.max, 0, 5], dtype)
    b = np.array([0, -1 if info.min else 1, 0, 0, 3], dtype)
    with quiet():
        check(lambda x, y: (x // y, x % y, np.fmod(x, y)), a, b)


def test_shifts_by_the_bit_width_or_more_follow_numpy():
    a = np.array([5, -5, 1, -1], np.int64)
    b = np.array([64, 70, 63, 100], np.int64)
    check(lambda x, y: (x << y, x >> y), a, b)
    check(lambda x, y: (x << y, x >> y), a.astype(np.int8), np.array([8, 9, 7, 0], np.int8))


def test_maximum_and_minimum_propagate_nan_and_keep_the_second_zero():
    a = np.array([np.nan, 1.0, 0.0, -0.0, 2.0])
    b = np.array([1.0, np.nan, -0.0, 0.0, np.nan])
    check(lambda x, y: (np.maximum(x, y), np.minimum(x, y), np.fmax(x, y), np.fmin(x, y)), a, b)
    check(lambda x: (x.max(), x.min(), np.argmax(x), np.argmin(x)), a)


def test_integer_powers_and_their_error():
    a = np.arange(-3, 4, dtype=np.int64)
    check(lambda x, y: x**y, a, np.arange(7, dtype=np.int64))
    fn = compiled(lambda x, y: x**y)
    with pytest.raises(ValueError, match="negative integer powers"):
        fn(a, -np.ones(7, np.int64))


def test_casts_follow_numpy_promotion():
    i8, f32 = np.arange(-4, 4, dtype=np.int8), np.linspace(-2, 2, 8, dtype=np.float32)
    check(lambda a, b: a + b, i8, f32)  # float32
    check(lambda a: a + 300, np.arange(4, dtype=np.int16))  # weak Python int stays int16
    check(lambda a: (a * 2.5).astype(np.int32), f32)
    check(lambda a, b: np.where(a > 0, a, b), i8, f32)


def test_fastmath_is_opt_in():
    fn = compiled(scale_shift)
    fn(np.ones(4), np.ones(4))
    assert all(not code.fastmath for code, _ in program(fn).kernels)
    fast = compiled(scale_shift, fastmath=True)
    x = np.linspace(0, 1, 16)
    np.testing.assert_allclose(fast(x, x), scale_shift(x, x), rtol=1e-12)
    assert all(code.fastmath for code, _ in program(fast).kernels)


# -- parallel loops ----------------------------------------------------------------------------------------


def softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


@pytest.mark.parametrize(
    "fn", [polynomial, softmax, lambda a: np.sum(a * 2.0), lambda a: np.argmax(a)]
)
def test_parallel_kernels_match_serial_ones(fn):
    x = np.random.default_rng(3).random((300, 70))
    serial, parallel = compiled(fn), compiled(fn, parallel_threshold=1)
    expected = serial(x)
    assert not any(code.parallel for code, _ in program(serial).kernels)
    result = parallel(x)
    assert all(code.parallel for code, _ in program(parallel).kernels)
    assert "prange(" in parallel.code
    np.testing.assert_array_equal(result, expected) if np.asarray(expected).dtype.kind != "f" else (
        np.testing.assert_allclose(result, expected, rtol=1e-14)
    )


def bits_of_calls(fn, *args, calls: int = 5) -> set:
    """The distinct results (as bytes) of ``fn(*args)`` called ``calls`` times on one thread and
    on all, each under Numba's default schedule and two fixed chunk sizes of its ``prange`` loops
    (which decide how the iterations are dealt to the threads, by arrival)."""
    threads = numba.get_num_threads()
    seen = set()
    try:
        for count in sorted({1, threads}):
            numba.set_num_threads(count)
            for chunk_size in (0, 1, 3):
                previous = numba.set_parallel_chunksize(chunk_size)
                try:
                    seen.update(np.asarray(fn(*args)).tobytes() for _ in range(calls))
                finally:
                    numba.set_parallel_chunksize(previous)
    finally:
        numba.set_num_threads(threads)
    return seen


@pytest.mark.parametrize(
    "fn",
    [
        lambda a: np.sum(a * 2.0),  # over all axes: fixed chunks, combined in chunk order
        lambda a: np.argmax(a),  # the same for an index (ties: the first)
        softmax,  # per row (prange over rows), two phases
        lambda a: np.sum(a * 2.0, axis=0),  # per column, the rows summed inside each
    ],
    ids=["total", "argmax", "rows", "columns"],
)
def test_parallel_reductions_give_the_same_bits_on_every_call_and_thread_count(fn):
    x = np.random.default_rng(3).random((300, 70))  # the kernels of the test above
    compiled_fn = compiled(fn, parallel_threshold=1)
    assert len(bits_of_calls(compiled_fn, x)) == 1
    assert all(code.parallel for code, _ in program(compiled_fn).kernels)


def column_statistics(a, g):
    """Reductions whose kept axes follow the reduced ones: NumPy adds the rows in order (for
    ``std``/``var`` the rows, then their squared deviations from the means)."""
    sums = a.sum(axis=0), (a * 2.0 - 1.0).max(axis=0), (g > 0.5).any(axis=(0, 1)), g.mean(axis=1)
    centred = a - a.mean(axis=0)  # (the second pass computes it again)
    return (*sums, a.std(axis=0), g.var(axis=1, ddof=1), centred.std(axis=0), np.cov(a.T))


def test_reductions_over_leading_axes_run_by_columns_and_give_numpys_bits():
    rng = np.random.default_rng(11)
    fn = compiled(column_statistics)
    for rows, columns in [(300, 70), (2, 4), (7, 1)]:
        a, g = rng.random((rows, columns)), rng.random((3, rows, columns))
        a[:, 0] = np.nan if rows > 5 else a[:, 0]  # (a NaN propagates through the max)
        for ours, numpys in zip(fn(a, g), column_statistics(a, g)):
            assert ours.dtype == numpys.dtype and ours.shape == numpys.shape
            np.testing.assert_array_equal(ours, numpys)  # the same order of terms: equal
    sources = [code.source for code, _ in program(fn).kernels]
    assert sum("colmean_" in s for s in sources) == 3  # (a, g and centred's variances)
    assert sum("col_" in s and "colmean_" not in s for s in sources) == 1  # (sums, max, any)


def test_a_long_total_gives_the_same_bits_on_every_call_and_thread_count():
    # the kernel of test_values_computed_after_a_parallel_total_reduction_are_stored: 146 blocks
    # of 128 per chunk, so block sums collect into the chunk's total too
    y = np.random.default_rng(8).random(300_000)
    fn = compiled(lambda a: np.sqrt((a * a).sum(keepdims=True)) * 2, parallel_threshold=1)
    assert len(bits_of_calls(fn, y)) == 1


@pytest.mark.skipif(numba.get_num_threads() < 2, reason="needs two threads to differ")
def test_bits_of_calls_sees_a_reduction_combined_in_thread_order():
    @numba.njit(parallel=True)
    def thread_sum(a):
        total = 0.0
        for i in numba.prange(a.shape[0]):
            total += a[i]  # Numba's reduction variable: one partial sum per thread
        return total

    x = np.random.default_rng(4).random(100_003)
    assert len(bits_of_calls(thread_sum, x)) > 1


def test_the_parallel_threshold_is_configurable(monkeypatch):
    monkeypatch.setenv("GCOMPILE_PARALLEL_THRESHOLD", "50")
    fn = gcompile.compile(polynomial, fullgraph=True)
    fn(np.ones(100))
    assert all(code.parallel for code, _ in program(fn).kernels)


# -- failures -----------------------------------------------------------------------------------------------


def test_a_kernel_numba_cannot_compile_runs_eagerly_with_numbas_message(monkeypatch):
    broken = rules.Rule(lambda args, apply: "no_such_function(1)")
    monkeypatch.setitem(rules.RULES, ops.SIN, broken)

    def f(x):
        return np.sin(x) * 3.0 + 0.125

    fn = gcompile.compile(f)
    x = np.linspace(0, 1, 7)
    with pytest.warns(gcompile.GcompileWarning, match="Numba cannot compile.*no_such_function"):
        np.testing.assert_array_equal(fn(x), f(x))
    np.testing.assert_array_equal(fn(x), f(x))  # once per reason: no second warning
    assert fn.stats["fallbacks"] == 2
    with pytest.raises(gcompile.UnsupportedError, match="Numba cannot compile") as refused:
        gcompile.compile(f, fullgraph=True)(x)
    assert "\x1b[" not in str(refused.value)  # (Numba's terminal colours left out)


def test_a_kernel_without_a_template_runs_in_the_interpreter_and_says_so():
    fn = gcompile.compile(lambda z: np.maximum(z, 1j) * 2)
    z = np.array([1 + 2j, 3 - 1j])
    with pytest.warns(
        gcompile.GcompileWarning, match="runs in the interpreter: no template for maximum"
    ):
        np.testing.assert_array_equal(fn(z), np.maximum(z, 1j) * 2)
    assert "runs in the interpreter" in fn.code


# -- threads ----------------------------------------------------------------------------------------------


def test_threads_calling_one_compiled_function_get_their_own_results():
    fn = compiled(softmax)
    inputs = [np.random.default_rng(i).random((50, 33 + i % 3)) for i in range(16)]
    fn(inputs[0])
    results: dict = {}

    def work(i):
        for _ in range(20):
            results[i] = fn(inputs[i])

    threads = [threading.Thread(target=work, args=(i,)) for i in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i, x in enumerate(inputs):
        np.testing.assert_allclose(results[i], softmax(x), rtol=1e-14)


def test_returned_buffers_are_reused_only_when_nobody_holds_them():
    fn = compiled(polynomial)
    x = np.random.rand(400_000)
    first = fn(x)
    second = fn(x)
    assert first is not second and not np.shares_memory(first, second)
    kept = first.copy()
    address = first.__array_interface__["data"][0]
    view = second[::2]
    del first, second
    third = fn(x)  # first's buffer is free again; second's is held through its view
    assert third.__array_interface__["data"][0] == address
    assert not np.shares_memory(third, view)
    np.testing.assert_array_equal(kept, third)
    fourth = fn(x)  # nothing free: a new buffer
    assert not np.shares_memory(fourth, third) and not np.shares_memory(fourth, view)


# -- found in review: parallel total reductions, integer reciprocal, read-only inputs -----------------


def test_parallel_arg_reductions_over_all_axes():
    grid = (
        -np.random.default_rng(6).random((600, 500)) - 1.0
    )  # all negative: no chunk may invent a 0
    grid[246, 456] = -0.5  # flat index 123_456

    def arg_max_and_min(a):
        return np.argmax(a), np.argmin(a * -1.0)

    assert check(arg_max_and_min, grid) == (123_456, 123_456)  # 300_000 elements: parallel
    compiled_fn = compiled(arg_max_and_min, parallel_threshold=1)  # the same kernel, shared
    assert compiled_fn(grid) == (123_456, 123_456)
    assert all(code.parallel for code, _ in program(compiled_fn).kernels)


def test_values_computed_after_a_parallel_total_reduction_are_stored():
    y = np.random.default_rng(8).random(300_000)
    fn = compiled(lambda a: np.sqrt((a * a).sum(keepdims=True)) * 2, parallel_threshold=1)
    np.testing.assert_allclose(fn(y), np.sqrt((y * y).sum(keepdims=True)) * 2, rtol=1e-13)
    assert "prange(" in fn.code
    grid = np.random.default_rng(9).random((600, 500))
    check(lambda a: (a - 0.5).mean(axis=(0, 1), keepdims=True) + 1, grid)


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64, np.uint32, np.uint64])
def test_integer_reciprocal_of_zero_is_numpys(dtype):
    with quiet():
        check(lambda a: np.reciprocal(a), np.array([0, 1, 2, 0], dtype))


def test_read_only_inputs_compile_once():
    def only_here(a):  # a kernel no other test compiles, so its overloads are this test's
        return a * 1.375 - 0.0625

    x = np.arange(300.0)
    x.flags.writeable = False
    fn = compiled(only_here)
    np.testing.assert_array_equal(fn(x), only_here(x))
    ((code, loaded),) = program(fn).kernels
    assert len(loaded.function.overloads) == 1  # the declared types match what the host passes


def periodic_laplacian(u, dx):
    lap = np.empty_like(u)
    lap[1:-1] = u[:-2] - 2.0 * u[1:-1] + u[2:]
    lap[0] = u[-1] - 2.0 * u[0] + u[1]
    lap[-1] = u[-2] - 2.0 * u[-1] + u[0]
    lap /= dx * dx
    return lap


def test_a_graph_of_many_small_steps_runs_as_one_numba_function():
    fn = compiled(periodic_laplacian)
    for n in (2, 3, 100):
        u = np.random.default_rng(n).random(n)
        np.testing.assert_array_equal(fn(u, 0.1), periodic_laplacian(u, 0.1))
    assert "# the host is one Numba function" in fn.code
    assert "_op_" not in fn.code.split("# loop")[0]  # (no Python step per scalar op)
    check(periodic_laplacian, np.random.default_rng(0).random(50), 0.25)


def windowed_products(x, w):  # the program makes w[None]: contiguous, typed 'A' by Numba
    out = np.empty((x.shape[0], x.shape[1] - 2, w.shape[1]))
    wb = w[None, :, :]
    for j in range(x.shape[1] - 2):
        out[:, j, :] = np.sum(x[:, j : j + 3, None] * wb, axis=1)
    return out


def window_ranges(x, w):  # a sliding window view read in a loop
    v = np.lib.stride_tricks.sliding_window_view(x, w)
    out = np.zeros(v.shape[0])
    for i in range(v.shape[0]):
        out[i] = v[i].max() - v[i].min()
    return out


def test_views_a_program_makes_are_numbas_own():
    fn = compiled(windowed_products)
    x, w = np.random.default_rng(1).random((4, 9)), np.random.default_rng(2).random((3, 2))
    np.testing.assert_array_equal(fn(x, w), windowed_products(x, w))
    assert "# the host is one Numba function" in fn.code  # (it was a Numba typing error)
    fn = compiled(window_ranges)
    np.testing.assert_array_equal(fn(x[0], 4), window_ranges(x[0], 4))
    assert "# the host is one Numba function" in fn.code


def test_a_few_steps_stay_a_python_host():
    fn = compiled(lambda x, y: np.sum(x) * y)
    np.testing.assert_array_equal(fn(np.arange(5.0), np.arange(3.0)), 10.0 * np.arange(3.0))
    assert "the host is one Numba function" not in fn.code


def scalar_ratio(x, y):
    return np.sum(x) / np.max(y)


def test_an_operator_on_numpy_scalars_runs_as_the_operator_itself_in_the_host():
    fn = compiled(scalar_ratio)
    for x, y in ((np.arange(4.0), np.ones(3)), (np.arange(4.0), np.zeros(3))):
        with np.errstate(divide="ignore"):
            expected, actual = scalar_ratio(x, y), fn(x, y)
        assert type(actual) is type(expected) and actual == expected  # (inf, not an error)
    assert "v_divide_1 = _operator_truediv(v_fused_1, v_fused_2)" in fn.code


def _row_totals(x, n):
    out = np.empty(n)
    for k in range(n):
        out[k] = (x * k).sum()
    return out


def _tail_totals(x, n):
    out = np.empty(n)
    for k in range(n):
        out[k] = (x[k:] * k).sum()  # (a length the loop index sizes: a triangular nest's)
    return out


def test_a_sum_in_a_loop_program_compiles_the_variants_its_traced_length_needs():
    """A length no loop index sizes sums as NumPy does (lanes: its bits up to 128 terms). One
    the loop index sizes sums in order when short, in blocks of lanes when long: both variants
    (chosen by the length at run time) only for a traced length near the bar."""
    x = np.random.default_rng(7).random(100)
    fn = gcompile.compile(_row_totals, fullgraph=True)
    np.testing.assert_array_equal(fn(x, 5), _row_totals(x, 5))
    assert fn.code.count("def kernel") == 2 and "lane_sum" in fn.code
    for length, both in ((100, False), (600, True), (2000, False)):
        fn = gcompile.compile(_tail_totals, fullgraph=True)
        x = np.random.default_rng(length).random(length)
        np.testing.assert_allclose(fn(x, 5), _tail_totals(x, 5), rtol=1e-12)  # (n eps: any order)
        assert ("_long" in fn.code) == both
        assert fn.code.count("def kernel") == (3 if both else 2)
