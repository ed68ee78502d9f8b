"""``np.histogram`` of a number of equal bins, compiled once per machine and computing what
NumPy's computes, bit for bit, in one pass over the data instead of NumPy's dozen.

NumPy's fast path (``numpy/lib/_histograms_impl.py``) finds the outer edges (the data's extremes,
or ``range``; an empty span widened by a half on each side), makes the edges with ``linspace``,
and puts each value in bin ``int((x - first) / span * bins)``, corrected by one against the
edges (a value on the last edge goes in the last bin): the bin whose edges hold the value. Here
the estimate multiplies by ``bins / span``, and only one near a bin's ends (``_slack``) is
checked against the edges. The precision of each step follows
NumPy's promotion rules: for float32 data the edges and indices are float32 arithmetic when
the extremes are the data's, but the span of a ``range=`` is a float64 (``_float32``,
``_ranged32``); anything else bins in float64 (``_float64``). Counts are exact; sums of weights
add each block of 65536 values in order in float64 (``np.bincount``), then add the block's sums,
cast to the weights' type, to the total: done here in the same order, so the result is the same
to the bit.

A loop program calls ``counts`` or ``weighted`` in place of NumPy's function (``program_externs``)
where ``supports`` says so, with the range as floats; anything else stays NumPy's call. Values
are compared to a ``range=`` as float64, so 64-bit integer data with a range stays NumPy's
(it compares integers to integers exactly).
"""

from __future__ import annotations

import numpy as np
from numba import njit, types
from numba.extending import overload

BLOCK = 65536  # (NumPy's block of values between additions of weight sums to the total)


def _exact_span(first, last):
    """``last - first`` as NumPy's ``_unsigned_subtract`` computes it (exactly for integers,
    in their unsigned type), as a float64; compiled code takes the overload below, which
    makes the same choice once per type."""
    if isinstance(first, (int, np.integer)) and isinstance(last, (int, np.integer)):
        return float((int(last) - int(first)) % 2**64)
    return float(last) - float(first)


@overload(_exact_span)
def _exact_span_typed(first, last):
    if isinstance(first, types.Integer) and isinstance(last, types.Integer):
        return lambda first, last: np.float64(np.uint64(last) - np.uint64(first))
    return lambda first, last: np.float64(last) - np.float64(first)


@njit(cache=True, nogil=True)
def _linspace(low, high, bins, compute, dtype):
    """NumPy's ``np.linspace(low, high, bins + 1)`` in the type ``compute``, cast to ``dtype``;
    ``ValueError`` for bins too narrow to tell apart, as NumPy's."""
    edges = np.empty(bins + 1, dtype)
    step = (high - low) / compute(bins)
    for i in range(bins + 1):
        if step == 0:  # (NumPy's special case of a step that underflows)
            edges[i] = compute(i) / compute(bins) * (high - low) + low
        else:
            edges[i] = compute(i) * step + low
    edges[bins] = high
    for i in range(bins):
        if edges[i] >= edges[i + 1]:
            raise ValueError("Too many bins for data range. Cannot create finite-sized bins.")
    return edges


@njit(cache=True, nogil=True)
def _extremes(values):
    """The data's least and greatest values (``(0, 1)`` for no data); ``ValueError`` where they
    are not finite, as NumPy's."""
    if values.size == 0:
        return values.dtype.type(0), values.dtype.type(1)
    low, high, unordered = values[0], values[0], False
    for x in values:
        low = x if x < low else low
        high = x if x > high else high
        unordered |= x != x  # (NaN: NumPy's min and max give NaN)
    if unordered or not (np.isfinite(low) and np.isfinite(high)):
        raise ValueError("np.histogram: the autodetected range of the data is not finite")
    return low, high


@njit(cache=True, nogil=True)
def _checked_range(first, last):
    """``range=(first, last)``, widened by a half on each side when empty, as NumPy takes it."""
    if first > last:
        raise ValueError("max must be larger than min in range parameter.")
    if not (np.isfinite(first) and np.isfinite(last)):
        raise ValueError("np.histogram: the supplied range is not finite")
    if first == last:
        return np.float64(first) - 0.5, np.float64(last) + 0.5
    return np.float64(first), np.float64(last)


@njit(cache=True, nogil=True)
def _float64(values, bins, first, last, ranged):
    """Edges and binning in float64 (data of float64 or an integer type): ``(edges, low,
    span, scale, keep_low, keep_high)``, a value ``x`` in the histogram when ``keep_low <= x
    <= keep_high`` (compared as float64: exact for integers within 2**53), in bin
    ``(x - low) / span * scale``."""
    edges_of = lambda low, high: _linspace(low, high, bins, np.float64, np.float64)  # noqa: E731
    if ranged:
        low, high = _checked_range(first, last)
        span = _exact_span(first, last) if first != last else high - low
        return edges_of(low, high), low, span, np.float64(bins), low, high
    least, greatest = _extremes(values)
    low, high = np.float64(least), np.float64(greatest)
    if least == greatest:
        low, high = low - 0.5, high + 0.5
        span = high - low
    else:
        span = _exact_span(least, greatest)
    return edges_of(low, high), low, span, np.float64(bins), low, high


@njit(cache=True, nogil=True)
def _float32(values, bins):
    """Edges and binning of float32 data over its extremes: float32 arithmetic throughout
    (no data: NumPy's edges over ``(0, 1)``, Python ints, in float64)."""
    if values.size == 0:
        edges = _linspace(0.0, 1.0, bins, np.float64, np.float32)
        return edges, np.float32(0), np.float32(1), np.float32(bins), np.float32(0), np.float32(1)
    low, high = _extremes(values)
    if low == high:
        low, high = low - np.float32(0.5), high + np.float32(0.5)
    span = high - low
    edges = _linspace(low, high, bins, np.float32, np.float32)
    return edges, low, span, np.float32(bins), low, high


@njit(cache=True, nogil=True)
def _ranged32(bins, first, last):
    """Edges and binning of float32 data over ``range=``: edges in float64 cast to float32,
    the offset from the first edge in float32, the span a float64."""
    low, high = _checked_range(first, last)
    span = _exact_span(first, last) if first != last else high - low
    edges = _linspace(low, high, bins, np.float64, np.float32)
    scale = np.float64(bins)
    return edges, np.float32(low), span, scale, np.float32(low), np.float32(high)


def _binning(values, bins, first, last, ranged):
    """The edges and binning of ``values`` (see ``_float64``), in NumPy's precision; compiled
    code takes the overload below, which makes the same choice once per type (the two float32
    paths then share one type: their span and scale are float64, exact for float32 ones)."""
    if values.dtype != np.float32:
        return _float64(values, bins, first, last, ranged)
    return _ranged32(bins, first, last) if ranged else _float32(values, bins)


@overload(_binning)
def _binning_typed(values, bins, first, last, ranged):
    if values.dtype != types.float32:
        return lambda values, bins, first, last, ranged: _float64(values, bins, first, last, ranged)

    def single(values, bins, first, last, ranged):
        if ranged:
            return _ranged32(bins, first, last)
        return _float32(values, bins)

    return single


@njit(cache=True, nogil=True, inline="always")
def _bin(x, low, factor, bins, edges, slack):
    """The bin of ``x`` (within the edges), as NumPy's ``histogram`` finds it: the offset from
    the first edge in the data's precision (float64 for integers), times ``factor`` (the bins
    over the span: NumPy divides by the span, then multiplies). NumPy corrects its estimate by
    one against the edges, so its bin is the one whose edges hold ``x``; an estimate farther
    than ``slack`` (``_slack``) from a bin's ends is surely that bin, any other is corrected
    against the edges as NumPy corrects its own."""
    position = (x - low) * factor
    index = np.intp(position)
    if slack < position - index < 1.0 - slack:
        return index
    if index == bins:
        index -= 1
    if x < edges[index]:
        index -= 1
    elif x >= edges[index + 1] and index != bins - 1:
        index += 1
    return index


@njit(cache=True, nogil=True)
def _slack(factor, bins, edges):
    """How far, in bins, an estimate of ``_bin`` may be from the bin whose edges hold its
    value: the rounding of the offset and product, and of the edges NumPy's ``linspace``
    made (each a few units of the data's precision, here counted 16 times)."""
    unit = 2.0**-23 if edges.itemsize == 4 else 2.0**-52  # (float32 edges: float32 data)
    reach = (abs(np.float64(edges[0])) + abs(np.float64(edges[-1]))) * abs(factor)
    return 16.0 * unit * (reach + bins)


@njit(cache=True, nogil=True)
def counts(a, bins, first, last, ranged):
    """``np.histogram(a, bins)`` (``range=(first, last)`` when ``ranged``): its counts (intp)
    and edges."""
    values = a.ravel()
    edges, low, span, scale, keep_low, keep_high = _binning(values, bins, first, last, ranged)
    result = np.zeros(bins, np.intp)
    factor = scale / span
    slack = _slack(factor, bins, edges)
    for x in values:
        if not ranged or keep_low <= x <= keep_high:
            result[_bin(x, low, factor, bins, edges, slack)] += 1
    return result, edges


@njit(cache=True, nogil=True)
def weighted(a, bins, first, last, ranged, weights):
    """``np.histogram(a, bins, weights=weights)``: the sums of the weights in each bin (of the
    weights' type, added as NumPy adds them) and the edges."""
    values, masses = a.ravel(), weights.ravel()
    if masses.size != values.size:
        raise ValueError("weights should have the same shape as a.")
    edges, low, span, scale, keep_low, keep_high = _binning(values, bins, first, last, ranged)
    result = np.zeros(bins, weights.dtype)
    block = np.zeros(bins, np.float64)
    factor = scale / span
    slack = _slack(factor, bins, edges)
    for start in range(0, values.size, BLOCK):
        block[:] = 0.0
        for i in range(start, min(start + BLOCK, values.size)):
            x = values[i]
            if not ranged or keep_low <= x <= keep_high:
                block[_bin(x, low, factor, bins, edges, slack)] += np.float64(masses[i])
        for j in range(bins):
            result[j] += weights.dtype.type(block[j])
    return result, edges


@njit(cache=True, nogil=True)
def at_edges(a, edges):
    """``np.histogram(a, edges)`` of the edges given: the counts (intp) of each half-open bin,
    the last closed, as NumPy's search of the sorted data counts them (a NaN in none), and the
    edges; ``ValueError`` for edges that decrease, as NumPy's."""
    bins = edges.size - 1
    for i in range(bins):
        if edges[i] > edges[i + 1]:
            raise ValueError("`bins` must increase monotonically, when an array")
    result = np.zeros(max(bins, 0), np.intp)
    if bins < 1:
        return result, edges.copy()
    for x in a.ravel():
        if not edges[0] <= x <= edges[bins]:
            continue
        low, high = 0, bins  # (the last edge at or below x, among the first ``bins``)
        while high - low > 1:
            middle = (low + high) // 2
            if edges[middle] <= x:
                low = middle
            else:
                high = middle
        result[low] += 1
    return result, edges.copy()


def supports_edges(a: np.dtype, edges: np.dtype, weights, density) -> bool:
    """Whether ``at_edges`` computes ``np.histogram`` of data of dtype ``a`` over edges of
    dtype ``edges``: no weights (NumPy sums them as differences of sums in sorted order), no
    density, and no uint64 (compared with signed integers through floats)."""
    kinds = all(d.kind in "iuf" and d != np.uint64 and d != np.float16 for d in (a, edges))
    return kinds and weights is None and not density


def supports(a: np.dtype, weights: np.dtype | None, bins, span, density) -> bool:
    """Whether these functions compute ``np.histogram`` of data of dtype ``a`` (and
    ``weights``) with these arguments: equal bins (an int), ``range`` absent or two Python
    numbers (integers within 2**53: they are passed as floats; not over 64-bit integer data,
    which NumPy compares exactly), no density."""
    ranged = span is None or (
        isinstance(span, tuple)
        and len(span) == 2
        and all(type(v) is float or type(v) is int and abs(v) <= 2**53 for v in span)
    )  # (Python's own numbers: a NumPy scalar is not weak, NumPy promotes by it)
    wide = a.kind in "iu" and a.itemsize == 8 and span is not None  # (compared as float64)
    kinds = (a in (np.float64, np.float32) or a.kind in "iu") and not wide
    masses = weights is None or weights in (np.float64, np.float32) or weights.kind == "i"
    whole = isinstance(bins, int) and not isinstance(bins, bool) and bins >= 1
    return kinds and masses and whole and ranged and not density
