"""``np.histogram`` in programs (``backends/numba/histograms.py``): the same counts, sums and
edges as NumPy's, to the bit, for each precision NumPy's promotion picks, and the same errors.

Each compiled signature (a data dtype, ranged or not, weighted or not) costs about half a
second, so each test runs many data sets through few signatures.
"""

from __future__ import annotations

import numpy as np
import pytest

import gcompile
from gcompile.backends.numba import histograms

RNG = np.random.default_rng(20)


def _data_sets(dtype):
    """Data that reach each branch: spread, tight, equal values, values on edges, strided,
    more than one block of weights."""
    spread = RNG.normal(size=70_000) * 1e3
    sets = [
        spread,
        RNG.random(257),
        np.full(5, 2.5),
        np.array([0.1, 0.2, 0.30000000000000004, 0.7]),
        np.linspace(0.0, 1.0, 11),
        np.array([1e-300, 2e-300, 5e-300]),
        np.array([]),
        1e5 + RNG.random(3000) * 1e-3,  # (a span far narrower than the values: edges rounded)
        np.linspace(-3.0, 7.0, 2571),  # (values on and beside many edges)
    ]
    if np.dtype(dtype).kind in "iu":
        info = np.iinfo(dtype)
        sets = [np.clip(s, max(info.min, -1000), min(info.max, 1000)) for s in sets]
    return [s.astype(dtype) for s in sets]


def _outcome(function, *args, **kwargs):
    try:
        return function(*args, **kwargs)
    except ValueError as error:
        return type(error)


def _assert_same(got, expected, what):
    if isinstance(expected, type):
        assert got is expected, what
        return
    for mine, numpy in zip(got, expected):
        assert mine.dtype == numpy.dtype and mine.shape == numpy.shape, what
        assert np.array_equal(mine, numpy), what


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int16])
def test_counts_and_sums_are_numpys_bits(dtype):
    weights = RNG.random(70_000) * 10
    for data in _data_sets(dtype):
        for bins in (1, 3, 10, 257):
            for span in (None, (0.25, 0.75), (0, 10), (-100, 100.5), (5, 5), (0.1, 0.7)):
                first, last = span or (0.0, 0.0)  # (as programs pass them: floats)
                first, last = float(first), float(last)
                expected = _outcome(np.histogram, data, bins, span)
                got = _outcome(histograms.counts, data, bins, first, last, span is not None)
                _assert_same(got, expected, (data.dtype, data.shape, bins, span))
                mass = weights[: data.size].reshape(data.shape)
                expected = _outcome(np.histogram, data, bins, span, weights=mass)
                got = _outcome(histograms.weighted, data, bins, first, last, span is not None, mass)
                _assert_same(got, expected, (data.dtype, data.shape, bins, span, "weighted"))


def test_weights_of_other_types_add_as_numpy_adds_them():
    data = RNG.random(70_000)
    for mass in (RNG.random(70_000).astype(np.float32), RNG.integers(-9, 9, 70_000)):
        _assert_same(histograms.weighted(data, 7, 0.0, 0.0, False, mass),
                     np.histogram(data, 7, weights=mass), mass.dtype)  # fmt: skip


def test_errors_are_numpys():
    for data, span in (
        (np.array([1.0, np.nan]), None),
        (np.array([1.0, np.inf]), None),
        (np.array([1.0, 2.0]), (2.0, 1.0)),
        (np.array([1.0, 2.0]), (0.0, np.inf)),
    ):
        first, last = span or (0.0, 0.0)
        with pytest.raises(ValueError):
            np.histogram(data, 4, span)
        with pytest.raises(ValueError):
            histograms.counts(data, 4, first, last, span is not None)


def test_supports_only_what_it_computes_as_numpy():
    f8, f4, i8 = np.dtype(np.float64), np.dtype(np.float32), np.dtype(np.int64)
    assert histograms.supports(f8, None, 10, None, None)
    assert histograms.supports(f4, f8, 10, (0, 1.5), False)
    assert histograms.supports(i8, i8, 3, None, None)
    assert not histograms.supports(f8, None, 10, None, True)  # (a density)
    assert not histograms.supports(np.dtype(np.float16), None, 10, None, None)
    assert not histograms.supports(f8, np.dtype(np.complex128), 10, None, None)
    assert not histograms.supports(f8, None, True, None, None)
    assert not histograms.supports(f8, None, 10, (0, "1"), None)
    assert not histograms.supports(f8, None, 10, (0, 2**60), None)  # (passed as a float)
    assert not histograms.supports(f4, None, 10, (np.float64(0), 1.0), None)  # (not weak)
    assert not histograms.supports(i8, None, 10, (0, 5), None)  # (NumPy compares exactly)


def azimuthal_profile(data, radius, bins):
    counts = np.histogram(radius, bins)[0]
    sums = np.histogram(radius, bins, weights=data)[0]
    return sums / counts


def binned_rows(x, n):
    total = np.zeros(16)
    for i in range(n):
        counts, edges = np.histogram(x[i], 16, range=(0.0, 1.0))
        total += counts * edges[:-1]
    return total


def test_programs_compute_histograms_outside_and_inside_loops():
    strided = RNG.random((6, 8))[:, ::3]  # (read as the array it is)
    _assert_same(histograms.counts(strided, 4, 0.0, 0.0, False), np.histogram(strided, 4), "")
    compiled = gcompile.compile(azimuthal_profile, fullgraph=True)
    for dtype in (np.float64, np.float32):
        for n in (400, 70_000):
            data, radius = RNG.random(n).astype(dtype), RNG.random(n).astype(dtype)
            got, expected = compiled(data, radius, 50), azimuthal_profile(data, radius, 50)
            assert got.dtype == expected.dtype and np.array_equal(got, expected, equal_nan=True)
    text = str(gcompile.explain(azimuthal_profile, data, radius, 50))
    assert "the host is one Numba function" in text and "_histograms.weighted" in text
    looped = gcompile.compile(binned_rows, fullgraph=True)
    x = RNG.random((30, 200))
    assert np.array_equal(looped(x, 30), binned_rows(x, 30))
    assert "_histograms.counts" in str(gcompile.explain(binned_rows, x, 30))


def test_counts_at_given_edges_are_numpys():
    edges_sets = (
        np.array([0.0, 0.25, 0.5, 1.0]),
        np.array([0.0, 1.0, 1.0, 2.0]),
        np.array([-3.0, 0.0, 3.0]),
        np.array([0.5]),
        np.array([2.0, 1.0]),  # (decreasing: NumPy's ValueError)
    )
    data_sets = (RNG.random(100) * 3 - 1, np.array([np.nan, 0.5, 1.0, 2.0, -3.0, 3.0]))
    for data in data_sets:
        for edges in edges_sets:
            expected = _outcome(np.histogram, data, edges)
            _assert_same(_outcome(histograms.at_edges, data, edges), expected, edges)
    pixels = RNG.integers(0, 256, (20, 30)).astype(np.uint8)
    edges = np.arange(256)
    _assert_same(histograms.at_edges(pixels, edges), np.histogram(pixels, edges), "uint8")


def grey_levels(image):
    return np.histogram(image, bins=range(256))[0].astype(np.float64)  # (Otsu's threshold)


def test_a_histogram_over_a_range_of_edges_is_a_program():
    compiled = gcompile.compile(grey_levels, fullgraph=True)
    image = RNG.integers(0, 256, (25, 40)).astype(np.uint8)
    assert np.array_equal(compiled(image), grey_levels(image))
    assert "_histograms.at_edges" in str(gcompile.explain(grey_levels, image))


def test_the_binning_choices_run_from_python_as_compiled():
    for data in (RNG.random(50), RNG.random(50).astype(np.float32), RNG.integers(-9, 9, 50)):
        for span in (None, (0.25, 0.75)):
            first, last = span or (0.0, 0.0)
            edges = histograms._binning(data, 6, first, last, span is not None)[0]
            assert np.array_equal(edges, np.histogram(data, 6, span)[1])
    assert histograms._exact_span(np.int8(-5), np.int8(3)) == 8.0
    assert histograms._exact_span(-(2**62), 2**62) == 2.0**63
