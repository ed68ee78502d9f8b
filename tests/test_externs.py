"""Library calls (``extern`` nodes): NumPy functions without an op run by NumPy at run time,
with everything around them compiled; in a loop program, through a call back into Python."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy import fftpack, ndimage, signal, special
from scipy import linalg as sl
from scipy.spatial.distance import cdist

import gcompile
from gcompile.ir import ops

from .support import check

RNG = np.random.default_rng(7)


def newton_with_library_calls(A, c, x, steps):
    """A loop calling a solver, a determinant, eigenvalues (a tuple result) and a sort."""
    total = 0.0
    for _ in range(steps):
        r = A @ x - np.tanh(x) - c
        J = A - np.diag(1 - np.tanh(x) ** 2)
        x = x - np.linalg.solve(J, r)
        w, v = np.linalg.eigh(J + J.T)
        total = total + np.linalg.det(J) + np.sort(w)[-1] + np.abs(v).sum()
        total = total + np.linalg.norm(r, np.inf)  # (an argument spelled float('inf'))
    return x, total


def test_a_loop_calling_library_functions_compiles_around_them():
    A, c, x = RNG.random((5, 5)) + 5 * np.eye(5), RNG.random(5) + 1.0, RNG.random(5)
    compiled = gcompile.compile(newton_with_library_calls, fullgraph=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error", gcompile.GcompileWarning)  # (no loop in the interpreter)
        got = compiled(A, c, x, 6)
    expected = newton_with_library_calls(A, c, x, 6)
    np.testing.assert_allclose(got[0], expected[0], rtol=1e-12)  # (tanh within an ulp or two)
    np.testing.assert_allclose(got[1], expected[1], rtol=1e-12)
    assert type(got[1]) is type(expected[1])
    program = compiled.entries[-1].run.program
    ((_, source),) = program.loops
    assert "with _objmode(" in source and "np.linalg.solve(" in source
    text = str(gcompile.explain(newton_with_library_calls, A, c, x, 6))
    assert "== library calls" in text and "np.linalg.eigh" in text and "6 us a call" in text


def line_fits(x, Y):
    """One least-squares line per column, in a loop (the residuals' length the data decide)."""
    out = np.zeros((Y.shape[1], 3))
    A = np.stack([x, np.ones_like(x)], axis=1)
    for j in range(Y.shape[1]):
        coef, residuals, rank, _ = np.linalg.lstsq(A, Y[:, j], rcond=None)
        out[j, :2] = coef
        out[j, 2] = residuals.sum() + rank
    return out


def test_least_squares_in_a_loop_compiles_around_the_call():
    compiled = gcompile.compile(line_fits, fullgraph=True)
    for x in (RNG.random(30), np.ones(4)):  # (a constant column: rank 1, no residuals)
        Y = RNG.random((x.shape[0], 3))
        np.testing.assert_allclose(compiled(x, Y), line_fits(x, Y), rtol=1e-12)
    assert compiled.stats["traces"] == 1 and compiled.stats["fallbacks"] == 0


def spectrum_and_histogram(x):
    power = np.abs(np.fft.rfft(x - np.median(x))) ** 2
    counts, edges = np.histogram(x, 8, range=(0.0, 1.0))
    return power / x.shape[0], counts, edges[1:] - edges[:-1]


def test_library_calls_between_kernels_run_in_the_host_for_every_size():
    compiled = gcompile.compile(spectrum_and_histogram, fullgraph=True)
    for n in (16, 33, 100):
        x = RNG.random(n)
        for got, expected in zip(compiled(x), spectrum_and_histogram(x)):
            assert got.dtype == expected.dtype and got.shape == expected.shape
            np.testing.assert_allclose(got, expected, rtol=1e-12)
    assert compiled.stats["traces"] == 1
    text = str(gcompile.explain(spectrum_and_histogram, RNG.random(16)))
    assert "np.fft.rfft" in text and "called by the host" in text


def azimuthal_means(data, radius, bins):
    counts, edges = np.histogram(radius, bins)  # (no range: edges from the data's extremes)
    sums = np.histogram(radius, bins, weights=data)[0]
    return sums / counts, edges, np.histogram(radius, 3, density=True)[0]


def test_histograms_without_a_range_or_with_weights_compile():
    compiled = gcompile.compile(azimuthal_means, fullgraph=True)
    for radius, data in (
        (RNG.random(200), RNG.random(200)),
        (RNG.integers(0, 9, 50), RNG.integers(0, 4, 50)),
        (RNG.random(40).astype(np.float32), RNG.random(40).astype(np.float32)),
    ):
        with np.errstate(invalid="ignore", divide="ignore"):
            pairs = zip(compiled(data, radius, 6), azimuthal_means(data, radius, 6))
            for got, expected in pairs:
                assert got.dtype == expected.dtype and got.shape == expected.shape
                np.testing.assert_allclose(got, expected, rtol=1e-6)
    with pytest.raises(ValueError, match="autodetected range"):
        compiled(np.ones(4), np.array([0.0, np.nan, 1.0, 2.0]), 3)  # (NumPy's own error)
    with pytest.raises(ValueError, match="same shape"):
        compiled(np.ones(5), np.ones(6), 3)


def test_a_call_whose_shape_the_data_decide_without_a_rule_is_refused_with_its_reason():
    def edges(x):
        return np.histogram_bin_edges(x, bins="auto")  # (as many bins as the data ask for)

    compiled = gcompile.compile(edges, fullgraph=True)
    with pytest.raises(gcompile.UnsupportedError, match="histogram_bin_edges"):
        compiled(RNG.random(10))


def geometry_with_unruled_functions(points, w):
    """NumPy functions with no op and no rule: probed at the traced sizes."""
    normals = np.cross(points[1:] - points[:-1], w)  # (broadcast against one vector)
    X, Y = np.meshgrid(points[:, 0], points[:, 1])  # (a list of results, varargs)
    padded = np.pad(points[:, 2], (2, 1), mode="edge")
    _, s, _ = np.linalg.svd(points.T @ points)
    close = np.isclose(points, 0.5, atol=0.2)
    return normals.sum(axis=0), np.hypot(X, Y).max(), padded * 2, s, close


def test_functions_without_a_rule_are_probed_at_the_traced_sizes_and_guarded():
    compiled = gcompile.compile(geometry_with_unruled_functions, fullgraph=True)
    w = np.array([0.0, 0.0, 1.0])
    for rows in (6, 6, 9):
        points = RNG.random((rows, 3))
        got = compiled(points, w)
        for ours, numpys in zip(got, geometry_with_unruled_functions(points, w)):
            assert np.asarray(ours).dtype == np.asarray(numpys).dtype
            assert np.shape(ours) == np.shape(numpys)
            np.testing.assert_allclose(ours, numpys, rtol=1e-12)
    assert compiled.stats["traces"] == 2  # (another size: probed again)
    assert "np.cross(" in str(gcompile.trace(geometry_with_unruled_functions, points, w))


@pytest.mark.parametrize(
    "fn, why",
    [
        (lambda x: np.histogram_bin_edges(x, "auto") + 1, "np.histogram_bin_edges"),  # (the data)
        (lambda x: np.unstack(x)[0] + 1, "returns a view of its argument"),
        (lambda x: np.diagonal(x, 0, 1, 0) + 1, "along its two axes"),
        (lambda x: np.putmask(x, x > 0, 0.0), "np.putmask"),  # writes its argument
        (lambda x: np.array2string(x), "np.array2string"),
    ],
)
def test_functions_a_probe_cannot_stand_for_are_refused_naming_them(fn, why):
    with pytest.raises(gcompile.UnsupportedError, match=why):
        gcompile.compile(fn, fullgraph=True)(RNG.random((4, 4)))


def diagonals_and_order(A, b, x):
    """A Jacobi step (public solvers' ``np.diagonal``, ``A.diagonal()``) and a pivot order."""
    T = A - np.diag(np.diagonal(A))
    for _ in range(3):
        x = (b - np.dot(T, x)) / A.diagonal()
    order = np.abs(A[:, 0]).argsort()[::-1]
    return x, order, np.diagonal(A, 1), A.diagonal(-2)


def test_diagonals_and_argsort_methods_are_library_calls():
    A, b = RNG.random((6, 6)) + 6 * np.eye(6), RNG.random(6)
    compiled = gcompile.compile(diagonals_and_order, fullgraph=True)
    for size in (6, 3):
        args = (A[:size, :size], b[:size], np.zeros(size))
        for got, expected in zip(compiled(*args), diagonals_and_order(*args)):
            assert got.dtype == expected.dtype and got.shape == expected.shape
            np.testing.assert_array_equal(got, expected)


def ndarray_methods(x, idx):
    """ndarray methods that are NumPy functions: the same calls (``y.sort()``: in place)."""
    y, z = x.copy(), x.copy()
    y.sort()
    z.partition(2)
    repeated, taken = np.arange(x.shape[0]).repeat(3), x.take(idx)
    found, kept = y.searchsorted(np.array([0.2, 0.5])), x.compress(x > 0.5)
    return repeated, taken, found, kept.sum(), y, z[2], x.argpartition(2)[2], np.outer(x, y).mT


def test_ndarray_methods_that_are_numpy_functions_compile_as_those():
    compiled = gcompile.compile(ndarray_methods, fullgraph=True)
    for size in (7, 4):
        args = (RNG.random(size), np.array([0, 3, 2]))
        for got, expected in zip(compiled(*args), ndarray_methods(*args)):
            np.testing.assert_array_equal(got, expected, strict=True)


def diagonal_seen_after_a_write(A):
    d = np.diagonal(A)  # (NumPy's read-only view: the write below shows through it)
    A[0, 0] = 100.0
    return d + 0


def test_a_diagonal_read_after_its_array_is_written_is_refused():
    with pytest.raises(gcompile.UnsupportedError, match="library call's view"):
        gcompile.compile(diagonal_seen_after_a_write, fullgraph=True)(RNG.random((3, 3)))


def jacobi_sweeps(A, b, sweeps):
    """A public Jacobi solver's loop: the diagonal taken in the loop, an infinity norm."""
    x = np.zeros_like(b)
    T = A - np.diag(np.diagonal(A))
    change = 0.0
    for _ in range(sweeps):
        x_old = x.copy()
        x[:] = (b - np.dot(T, x)) / np.diagonal(A)
        change = np.linalg.norm(x - x_old, ord=np.inf) / np.linalg.norm(x, ord=np.inf)
    return x, change


def test_a_diagonal_in_a_loop_is_taken_once_before_it_and_norms_are_reductions():
    A, b = RNG.random((6, 6)) + 6 * np.eye(6), RNG.random(6)
    compiled = gcompile.compile(jacobi_sweeps, fullgraph=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error", gcompile.GcompileWarning)  # (no loop in the interpreter)
        got = compiled(A, b, 8)
    expected = jacobi_sweeps(A, b, 8)
    np.testing.assert_allclose(got[0], expected[0], rtol=1e-13)
    np.testing.assert_allclose(got[1], expected[1], rtol=1e-10)
    ((_, source),) = compiled.entries[-1].run.program.loops
    assert "_objmode(" not in source  # (no call back into Python on any trip)


def insertion_points(a, queries):  # a traced 0-d value as np.searchsorted's v, in a loop
    out = np.empty(queries.shape[0], np.int64)
    for i in range(queries.shape[0]):
        out[i] = np.searchsorted(a, queries[i]) + 10 * np.searchsorted(a, queries[i], "right")
    return out


def test_searchsorted_of_integers_in_a_loop_is_numbas_own():
    a, queries = np.array([1, 3, 3, 7, 9]), np.array([0, 3, 8, 10, 3, 1])
    check(insertion_points, a, queries)
    compiled = gcompile.compile(insertion_points, fullgraph=True)
    compiled(a, queries)
    ((_, source),) = compiled.entries[-1].run.program.loops
    assert "np.searchsorted(" in source and "_objmode(" not in source


def repeated_rows(X):
    rows = []
    for x in X:
        rows.append(np.repeat(x, int(x[0]) % 2 + 1))  # (a length the counts, data, decide)
    return np.array(rows)


def test_a_probed_call_whose_result_shape_the_values_decide_is_refused():
    """(Probed twice, on other values: the result's shapes differ. It ran before, and raised
    when a call's shapes were not its probe's.)"""
    X = np.array([[2.0, 1.0, 5.0], [4.0, 3.0, 3.0]])
    compiled = gcompile.compile(repeated_rows)
    with pytest.warns(gcompile.GcompileWarning, match="depends on its arguments' values"):
        np.testing.assert_array_equal(compiled(X), repeated_rows(X))
    counts = np.array([2, 0, 3])
    repeated = gcompile.compile(lambda x, n: np.repeat(x, n) * 2.0, fullgraph=True)
    with pytest.raises(gcompile.UnsupportedError, match="np.repeat here"):
        repeated(X[0], counts)
    unique = gcompile.compile(lambda x: np.setdiff1d(np.round(x), [1.0, 2.0]), fullgraph=True)
    x = np.array([0.2, 1.1, 2.9, 4.4, 0.8])
    np.testing.assert_array_equal(unique(x), np.setdiff1d(np.round(x), [1.0, 2.0]))


def frequencies(x, dt):
    spectrum = np.fft.rfft(x)
    spectrum[np.fft.rfftfreq(len(x), dt) > 20.0] = 0  # (a size as n: no specialisation)
    return spectrum, np.fft.fftfreq(x.shape[0], d=dt), np.shape(x)[0] + np.ndim(x) + np.size(x)


def test_fft_frequencies_and_shape_functions_are_decomposed():
    compiled = gcompile.compile(frequencies, fullgraph=True)
    for n in (16, 17, 2):
        x = RNG.random(n)
        for got, expected in zip(compiled(x, 0.01), frequencies(x, 0.01)):
            assert np.array_equal(got, expected) and np.result_type(got) == np.result_type(expected)


def triangles(m, v, b):
    """np.triu and np.tril at diagonals above and below, of a 1-d array, of a stack of
    bool matrices, and summed (nbody's energy)."""
    upper = np.triu(m, 1), np.triu(m, -1), np.triu(v), np.tril(b, 1)
    return (*upper, np.tril(m), np.tril(m, 2), np.sum(np.triu(-(m @ m.T), 1)))


def test_triangles_are_masks_of_positions():
    for shape in ((5, 5), (3, 6), (6, 2)):
        b = RNG.random((2, *shape)) > 0.5
        check(triangles, RNG.random(shape), np.arange(4.0), b)
    graph = gcompile.trace(triangles, np.ones((4, 4)), np.ones(3), np.ones((2, 4, 4), bool))
    assert not any(node.target is ops.EXTERN for node in graph.nodes)


def norms_computed_as_the_default(x, M):
    return np.linalg.norm(x, 2), np.linalg.norm(M, "fro"), np.linalg.norm(M.T, "f")


def test_a_vectors_2_norm_and_a_matrixs_frobenius_are_numpys_default_computation():
    """(NumPy computes them as its default order: sweep I's Verlet called them back.)"""
    check(norms_computed_as_the_default, RNG.random(7), RNG.random((3, 4)))
    graph = gcompile.trace(norms_computed_as_the_default, RNG.random(7), RNG.random((3, 4)))
    assert not any(n.op == "call" and n.target is ops.EXTERN for n in graph.nodes)


def test_eigenvalues_whose_dtype_the_data_decide_are_left_to_numpy():
    """(np.linalg.eig gives float64 where every eigenvalue is real: a probe's dtype crashed.)"""
    first = lambda A: np.linalg.eig(A)[0]  # noqa: E731
    compiled = gcompile.compile(first)
    with pytest.warns(gcompile.GcompileWarning, match="numpy.linalg.eig"):
        compiled(np.eye(2))
    for A in (np.eye(4) * 2.0, np.array([[0.0, -1.0], [1.0, 0.0]])):
        got = compiled(A)
        assert got.dtype == first(A).dtype and np.array_equal(got, first(A))


def scipy_calls(X, C, A, b, img):
    """SciPy's functions, called by their module (``sl.solve``) or imported (``cdist``), and
    its ufuncs without an op (``gammaln``): each one library call, the rest compiled. NumPy's
    functions SciPy's modules hold (``fftpack.fftfreq``) are NumPy's, traced."""
    labels = np.argmin(cdist(X, C), axis=1)
    x = sl.solve(A, b) * 2.0
    smooth = ndimage.gaussian_filter(img, 1.5) - img
    freqs = fftpack.fftfreq(X.shape[0], b[1] - b[0])
    return labels, x, signal.convolve(b, x, mode="same"), smooth, special.gammaln(b + x), freqs


def scipy_kmeans(X, C, iters):
    for _ in range(iters):
        labels = np.argmin(cdist(X, C), axis=1)
        for k in range(C.shape[0]):
            members = labels == k
            C[k] = (X * members[:, None]).sum(axis=0) / max(members.sum(), 1)
    return C, labels


def test_scipy_functions_are_library_calls_in_graphs_and_loops():
    X, A = RNG.random((40, 2)), RNG.random((4, 4)) + 4 * np.eye(4)
    check(scipy_calls, X, X[:3].copy(), A, RNG.random(4), RNG.random((9, 9)), ulps=4)
    text = str(gcompile.trace(scipy_calls, X, X[:3].copy(), A, RNG.random(4), RNG.random((9, 9))))
    called = ("scipy.spatial.distance.cdist(", "scipy.linalg.solve(", "scipy.special.gammaln(")
    for name in called:
        assert name in text, text
    check(scipy_kmeans, X, X[:3].copy(), 4)
    graph = gcompile.trace(scipy_kmeans, X, X[:3].copy(), 4)
    assert all(note.rolled for note in graph.notes.loops)
