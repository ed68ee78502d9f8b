"""Loop programs whose loops run in parallel (``loops.program_parallel``), compiled: the loops
with independent trips become a ``prange`` beside their serial form, chosen by their work; the
others stay serial; results are NumPy's either way. A compile costs ~1 s: each function holds
several loops."""

from __future__ import annotations

import numpy as np

import gcompile
from gcompile.loops.program_parallel import ELEMENT, PARALLEL_COMPILE, SCALE

FORCED = {"parallel_threshold": 1}  # every independent loop runs in parallel


def rows_and_recurrences(a, b, c):
    n = a.shape[0]
    out = np.empty_like(a)
    for i in range(n):  # independent: a kernel writing row i in place
        out[i, :] = a[i, :] * b + 1.0
    acc = np.empty_like(a)
    acc[0] = out[0]
    for i in range(1, n):  # dependent: reads row i - 1
        acc[i] = acc[i - 1] * 0.5 + out[i]
    y = np.empty(n)
    for i in range(n):  # independent: a sum into a buffer made once, one per trip in parallel
        y[i] = np.sum(out[i] * b)
    s = 0.0
    for i in range(n):  # dependent: carries s
        s = s + y[i]
    for i in range(n):  # dependent: reads row 0, which trip 0 writes
        c[i, :] = c[i, :] + c[0, :]
    return out, acc, y, s


def elements(a):
    n, m = a.shape
    out = np.empty_like(a)
    for i in range(n):
        for j in range(m):
            out[i, j] = a[i, j] * 2.0 + 1.0
    columns = np.empty_like(a)
    for j in range(m):
        columns[:, j] = a[:, j] * 3.0 - out[:, j]
    triangle = np.zeros((n, n))
    for i in range(n):
        for j in range(i):
            triangle[i, j] = a[i, 0] - a[j, 0]
    shifted = a.copy()
    for i in range(n - 1):  # dependent: reads the next row
        shifted[i] = shifted[i + 1] * 0.5
    return out, columns, triangle, shifted


def loop_text(compiled) -> str:
    ((_, source),) = compiled.entries[-1].run.program.loops
    return source


def parallel_headers(source: str) -> list:
    return [line.strip() for line in source.splitlines() if "prange(" in line]


def test_independent_rows_run_in_parallel_and_dependent_loops_stay_serial():
    rng = np.random.default_rng(0)
    a, b, c = rng.random((40, 30)), rng.random(30), rng.random((40, 30))
    expected = rows_and_recurrences(a, b, c.copy())
    by_work = gcompile.compile(
        rows_and_recurrences, fullgraph=True, options={"parallel_threshold": 8}
    )
    forced = gcompile.compile(rows_and_recurrences, fullgraph=True, options=FORCED)
    c_serial, c_parallel = c.copy(), c.copy()
    serial, parallel = by_work(a, b, c_serial), forced(a, b, c_parallel)
    small = (a[:3, :4].copy(), b[:4].copy(), c[:3, :4].copy())
    small_expected = rows_and_recurrences(*(x.copy() for x in small))
    for got, want in zip(by_work(*small), small_expected):  # (below: the serial loops run)
        np.testing.assert_allclose(got, want, rtol=1e-13)
    source = loop_text(by_work)
    assert parallel_headers(source) == ["for k0 in prange(s0):", "for k2 in prange(s0):"]
    assert f">= {SCALE * ELEMENT * 8}:" in source  # (traced at 40 x 30: each copy chosen by work)
    assert len(parallel_headers(loop_text(forced))) == 2
    for ran in (serial, parallel):
        np.testing.assert_array_equal(ran[0], expected[0])
        np.testing.assert_array_equal(ran[1], expected[1])
        np.testing.assert_allclose(ran[2], expected[2], rtol=1e-13)
        np.testing.assert_allclose(ran[3], expected[3], rtol=1e-13)
    np.testing.assert_array_equal(parallel[2], serial[2])  # the same sums, in the same order
    assert parallel[3] == serial[3]
    c_expected = c.copy()
    rows_and_recurrences(a, b, c_expected)
    np.testing.assert_array_equal(c_parallel, c_expected)
    np.testing.assert_array_equal(c_serial, c_expected)


def test_no_parallel_copy_when_the_traced_work_is_below_the_threshold():
    a = np.random.default_rng(2).random((40, 30))  # (Numba compiles a parallel loop seconds longer)
    compiled = gcompile.compile(elements, fullgraph=True)
    for got, want in zip(compiled(a), elements(a)):
        np.testing.assert_array_equal(got, want)
    assert parallel_headers(loop_text(compiled)) == []


def test_a_parallel_copy_is_compiled_only_for_work_that_pays_for_its_compile():
    """The first loop's traced work reaches PARALLEL_COMPILE times 16 (it gets its copy under
    that threshold), so at 32 it is over the run-time bar, SCALE * ELEMENT * 32, yet under
    PARALLEL_COMPILE times 32: no copy (Numba compiles a parallel loop seconds longer)."""
    a = np.random.default_rng(2).random((40, 30))
    headers = {}
    for threshold in (16, 32):
        compiled = gcompile.compile(
            elements, fullgraph=True, options={"parallel_threshold": threshold}
        )
        for got, want in zip(compiled(a), elements(a)):
            np.testing.assert_array_equal(got, want)
        headers[threshold] = parallel_headers(loop_text(compiled))
    assert PARALLEL_COMPILE * 16 >= SCALE * 32
    assert "for k0 in prange(s0):" in headers[16] and "for k0 in prange(s0):" not in headers[32]


def test_element_loops_columns_and_triangles_run_in_parallel():
    a = np.random.default_rng(1).random((33, 21))
    compiled = gcompile.compile(elements, fullgraph=True, options=FORCED)
    results = compiled(a)
    assert parallel_headers(loop_text(compiled)) == [
        "for k0 in prange(s0):",
        "for k2 in prange(s1):",
        "for k3 in prange(s0):",
    ]
    for got, want in zip(results, elements(a)):
        np.testing.assert_array_equal(got, want)


def test_the_parallel_option_keeps_every_loop_serial():
    a = np.random.default_rng(2).random((8, 5))
    compiled = gcompile.compile(elements, fullgraph=True, options={"parallel": False})
    compiled(a)
    assert parallel_headers(loop_text(compiled)) == []
