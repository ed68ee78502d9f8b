"""Cumulative sums and products (``backends/numba/scans.py``): the loop of ``scans`` gives
NumPy's bits for every dtype (a float32 sum in float32, small integers wrapping, ``-0.0`` kept),
along any axis of any layout, in the host and inside loop programs."""

from __future__ import annotations

import numpy as np

import gcompile
from gcompile.backends.numba import scans
from tests.support import check

_RNG = np.random.default_rng(5)


def _values(dtype) -> np.ndarray:
    x = _RNG.standard_normal((3, 4, 5)) * 40
    x[1, 2, 3] = np.nan  # (NaN wins a maximum)
    if np.dtype(dtype).kind == "c":
        return (x + 1j * x[::-1]).astype(dtype)
    if np.dtype(dtype).kind == "f":
        return x.astype(dtype)
    return np.nan_to_num(x).astype(dtype) if np.dtype(dtype).kind != "b" else x > 0


_KINDS = {
    scans.SUM: np.cumsum,
    scans.PRODUCT: np.cumprod,
    scans.MAXIMUM: np.maximum.accumulate,
    scans.MINIMUM: np.minimum.accumulate,
}


def _compare(source, axis, result=None) -> None:
    for kind, numpy in _KINDS.items():
        if kind >= scans.MAXIMUM and (axis is None or source.dtype.kind == "c"):
            continue
        with np.errstate(over="ignore"):  # (float32 products of int8 overflow)
            expected = numpy(source, axis=axis, dtype=result)
        out = np.empty(expected.shape, expected.dtype)
        scans.accumulate(source, out, axis, kind)
        np.testing.assert_array_equal(out, expected, strict=True)


def test_the_scan_loop_gives_numpys_bits():
    """(Each dtype, rank and layout is a Numba compile of its own, cached on disk: few forms.)"""
    for dtype in (np.float64, np.float32, np.int8, np.bool_, np.complex128):
        for axis in (None, 0, -1):
            _compare(_values(dtype), axis)
    for dtype in (np.float64, np.int8):
        _compare(_values(dtype)[:, ::-1, ::2], 1)
        _compare(_values(dtype), -1, np.float32)
    signed_zeros = np.array([-0.0, -0.0, 0.0])
    summed = scans.accumulate(signed_zeros, np.empty(3), 0, scans.SUM)
    np.testing.assert_array_equal(np.signbit(summed), [True, True, False])


def _scans_in_a_loop(x, n):
    total = np.zeros(x.shape[1:])
    rows = np.zeros(x.shape[2])
    cube = np.zeros((x.shape[2], x.shape[0], x.shape[1]))
    for i in range(n):
        total += np.cumsum(x[i], axis=0) - np.cumprod(x[i] * 0.5, axis=1)
        rows = rows + np.cumsum(x[i].T)[: x.shape[2]] + np.maximum.accumulate(x[i, 0])
        cube += np.cumsum(x * i, axis=0).transpose(2, 0, 1)  # (a scan of axis 0 of three)
        cube[:, 0, :] += x.transpose(2, 0, 1)[:, i % 2, :]
    return total, rows, cube


def test_a_scan_in_a_loop_body_is_part_of_the_loop_program():
    """Scans along leading axes and transposes in the body are views Numba compiles cheaply:
    ``.T`` or ``as_strided`` (its transpose with axes took ~3 s to compile in each process)."""
    x = np.random.default_rng(2).standard_normal((4, 5, 6))
    check(_scans_in_a_loop, x, 4)
    compiled = gcompile.compile(_scans_in_a_loop, fullgraph=True)
    compiled(x, 4)
    assert "_scans.last_axis" in compiled.code
    assert "interpreter" not in compiled.code
    code = [line for line in compiled.code.splitlines() if not line.lstrip().startswith("#")]
    assert any("as_strided" in line for line in code)
    assert not any(".transpose(" in line or "np.transpose" in line for line in code)


def test_scans_numba_cannot_run_and_of_0d_values_are_numpys():
    check(lambda x: (np.cumsum(x), np.cumprod(x, axis=0)), np.ones(4, np.float16))
    check(lambda x: (np.cumsum(x.sum(), axis=0), np.cumprod(x.sum(), axis=-1)), np.ones(3))
