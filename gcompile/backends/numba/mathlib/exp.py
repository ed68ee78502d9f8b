"""exp, exp2 and expm1: one range reduction, one polynomial, an exact power-of-two scaling.

exp (``exp_f64``, ``exp_f32``)
    ``k = round(x / ln 2)`` by adding and subtracting ``SHIFT = 1.5 * 2**mantissa_bits`` (the
    integer k is also the low bits of the sum, read with a bit cast). ``r = x - k ln 2`` as an
    unevaluated sum ``r + r_lo``: ``x - k * LN2_HI`` is exact in one fma (LN2_HI is ln 2 rounded
    to the dtype; for k != 0, |x| >= 0.34 and the difference is a multiple of ulp(x) below 1/2),
    then ``LN2_LO = ln 2 - LN2_HI`` is subtracted and its rounding error kept in ``r_lo``.
    ``e**r = 1 + r + r**2 P(r)`` on |r| <= ln2/2, with ``1 + r`` added by Fast2Sum so that only
    the final addition rounds at the scale of the result. ``2**k`` is built from exponent bits in
    two halves, ``2**(k >> 1) * 2**(k - (k >> 1))``, so results that overflow become inf and
    results in the subnormal range are rounded once. The input is clamped (NaN passes the clamp
    and propagates).
exp2 (``exp2_f64``, ``exp2_f32``)
    ``k = round(x)``, ``r = x - k`` (exact, |r| <= 1/2), ``r * ln 2`` as a double-word product
    (fma residual), then the same ``e**r`` and scaling as exp.
expm1 (``expm1_f64``, ``expm1_f32``)
    The reduction of exp; ``q = e**r - 1 = r + r**2 P(r)`` kept as ``q + q_lo`` (Fast2Sum). With
    ``T = 2**k``: ``expm1(x) = (T - 1) + T q``, the first sum by Fast2Sum (|T - 1| >= |T q|),
    the low parts (``T q_lo``, the rounding error of ``T - 1``, that of the sum) added last. T is
    capped at 2**(emax) and the result doubled when k = emax + 1, so expm1 overflows where
    NumPy's does. The lower clamp is where expm1 rounds to -1; -0 is passed through by a select
    (the sums would turn it into +0); tiny x give x exactly.

P (``EXP_P_F64``, 10 coefficients; ``EXP_P_F32``, 5) is a minimax fit of ``(e**r - 1 - r) / r**2``
weighted by ``r**2`` on |r| <= ln2/2 (Lawson's algorithm in mpmath at 50 digits, each coefficient
rounded to the dtype before the higher ones were refitted): absolute error of ``r**2 P(r)``
2**-58 (float64) and 2**-28.2 (float32), against a result ulp of at least 2**-53 and 2**-24.
``exp_scaled_f64``/``exp_scaled_f32`` (``e**x * 2**n`` for a small integer n; sinh and cosh use
n = -1 to overflow where they do, not where exp does) are the shared form of exp.

Measured by ``tests/mathlib/test_exp.py`` (10**6 inputs: 40% random bit patterns, the rest across
the finite range, against long double for float64 and float64 for float32): exp 0.55 / 0.54 ulp
(float32 / float64), exp2 0.54 / 0.53, expm1 0.55 / 0.55. Special values (+-0, subnormals, +-inf,
NaN, the overflow and underflow thresholds) give NumPy's results.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .bits import as_float, as_int, fma, iadd, ishl, ishr, isub, select
from .template import MathTemplate

_inline = njit(inline="always", error_model="numpy", cache=True, nogil=True)

# float64 constants
F64_SHIFT = 6755399441055744.0  # 1.5 * 2**52: x + SHIFT - SHIFT rounds x to an integer
F64_INV_LN2 = 1.4426950408889634
F64_LN2_HI = 0.6931471805599453  # ln 2 rounded to float64
F64_LN2_LO = 2.3190468138462996e-17  # ln 2 - F64_LN2_HI
F64_EXPONENT_BIAS = 1023
F64_MANTISSA_BITS = 52
EXP_P_F64 = (
    0.5000000000000013,
    0.1666666666666667,
    0.04166666666651115,
    0.008333333333324115,
    0.0013888888948036936,
    0.00019841269882009348,
    2.4801488958537788e-05,
    2.7557247121723877e-06,
    2.763161079841809e-07,
    2.5108286694676718e-08,
)

# float32 constants (np.float32 / np.int32 so that no expression widens to float64 / int64)
F32_SHIFT = np.float32(12582912.0)  # 1.5 * 2**23
F32_INV_LN2 = np.float32(1.442695)
F32_LN2_HI = np.float32(0.6931472)  # ln 2 rounded to float32
F32_LN2_LO = np.float32(-1.9046542e-09)  # ln 2 - F32_LN2_HI
F32_EXPONENT_BIAS = np.int32(127)
F32_MANTISSA_BITS = np.int32(23)
EXP_P_F32 = (
    np.float32(0.5),
    np.float32(0.1666652),
    np.float32(0.041666415),
    np.float32(0.008368822),
    np.float32(0.0013939538),
)
_F32_ONE = np.float32(1.0)
_I32_ONE = np.int32(1)


# --- shared pieces --------------------------------------------------------------------------


@_inline
def _clamp(x, low, high):
    """``x`` limited to [low, high]; NaN passes through."""
    return select(x > high, high, select(x < low, low, x))


@_inline
def reduce_f64(x):
    """``(k, r, r_lo)`` with x = k ln2 + r + r_lo, k an int64 = round(x / ln2), |r| <= ln2/2."""
    t = fma(x, F64_INV_LN2, F64_SHIFT)
    k = t - F64_SHIFT
    r_hi = fma(-k, F64_LN2_HI, x)  # exact
    r = fma(-k, F64_LN2_LO, r_hi)
    r_lo = fma(-k, F64_LN2_LO, r_hi - r)
    return isub(as_int(t), as_int(F64_SHIFT)), r, r_lo


@_inline
def reduce_f32(x):
    """``(k, r, r_lo)`` with x = k ln2 + r + r_lo, k an int32 = round(x / ln2), |r| <= ln2/2."""
    t = fma(x, F32_INV_LN2, F32_SHIFT)
    k = t - F32_SHIFT
    r_hi = fma(-k, F32_LN2_HI, x)  # exact
    r = fma(-k, F32_LN2_LO, r_hi)
    r_lo = fma(-k, F32_LN2_LO, r_hi - r)
    return isub(as_int(t), as_int(F32_SHIFT)), r, r_lo


@_inline
def _exp_poly_f64(r):
    """``(e**r - 1 - r) / r**2`` for |r| <= ln2/2."""
    c = EXP_P_F64
    p = fma(c[9], r, c[8])
    p = fma(p, r, c[7])
    p = fma(p, r, c[6])
    p = fma(p, r, c[5])
    p = fma(p, r, c[4])
    p = fma(p, r, c[3])
    p = fma(p, r, c[2])
    p = fma(p, r, c[1])
    return fma(p, r, c[0])


@_inline
def _exp_poly_f32(r):
    """``(e**r - 1 - r) / r**2`` for |r| <= ln2/2."""
    c = EXP_P_F32
    p = fma(c[4], r, c[3])
    p = fma(p, r, c[2])
    p = fma(p, r, c[1])
    return fma(p, r, c[0])


@_inline
def exp_reduced_f64(r, r_lo):
    """``e**(r + r_lo)`` for |r| <= ln2/2, |r_lo| <= ulp(r): one rounding at the result's scale."""
    s = 1.0 + r
    tail = ((1.0 - s) + r) + fma(r * r, _exp_poly_f64(r), r_lo)
    return s + tail


@_inline
def exp_reduced_f32(r, r_lo):
    """``e**(r + r_lo)`` for |r| <= ln2/2, |r_lo| <= ulp(r): one rounding at the result's scale."""
    s = _F32_ONE + r
    tail = ((_F32_ONE - s) + r) + fma(r * r, _exp_poly_f32(r), r_lo)
    return s + tail


@_inline
def _power_of_two_f64(k):
    """2.0**k for an int64 -1022 <= k <= 1023."""
    return as_float(ishl(iadd(k, F64_EXPONENT_BIAS), F64_MANTISSA_BITS))


@_inline
def _power_of_two_f32(k):
    """2.0**k as float32 for an int32 -126 <= k <= 127."""
    return as_float(ishl(iadd(k, F32_EXPONENT_BIAS), F32_MANTISSA_BITS))


@_inline
def scale_f64(p, k):
    """``p * 2**k`` rounded once, for |k| <= 2044: overflow gives inf, underflow subnormals."""
    half = ishr(k, 1)
    return (p * _power_of_two_f64(half)) * _power_of_two_f64(isub(k, half))


@_inline
def scale_f32(p, k):
    """``p * 2**k`` rounded once, for |k| <= 252: overflow gives inf, underflow subnormals."""
    half = ishr(k, _I32_ONE)
    return (p * _power_of_two_f32(half)) * _power_of_two_f32(isub(k, half))


# --- exp ------------------------------------------------------------------------------------


@_inline
def exp_scaled_f64(x, n):
    """``e**x * 2**n`` of a float64 for a small int64 ``n`` (|n| <= 2), rounded once."""
    k, r, r_lo = reduce_f64(_clamp(x, -746.0, 712.0))
    return scale_f64(exp_reduced_f64(r, r_lo), iadd(k, n))


@_inline
def exp_scaled_f32(x, n):
    """``e**x * 2**n`` of a float32 for a small int32 ``n`` (|n| <= 2), rounded once."""
    k, r, r_lo = reduce_f32(_clamp(x, np.float32(-104.0), np.float32(90.0)))
    return scale_f32(exp_reduced_f32(r, r_lo), iadd(k, n))


@_inline
def exp_f64(x):
    """e**x of a float64 (<= 0.55 ulp)."""
    return exp_scaled_f64(x, 0)


@_inline
def exp_f32(x):
    """e**x of a float32, computed in float32 (<= 0.55 ulp)."""
    return exp_scaled_f32(x, np.int32(0))


# --- exp2 -----------------------------------------------------------------------------------


@_inline
def exp2_f64(x):
    """2**x of a float64 (<= 0.55 ulp); exact for integer x."""
    xc = _clamp(x, -1080.0, 1030.0)
    t = xc + F64_SHIFT
    r = xc - (t - F64_SHIFT)
    r_hi = r * F64_LN2_HI
    r_lo = fma(r, F64_LN2_LO, fma(r, F64_LN2_HI, -r_hi))
    return scale_f64(exp_reduced_f64(r_hi, r_lo), isub(as_int(t), as_int(F64_SHIFT)))


@_inline
def exp2_f32(x):
    """2**x of a float32, computed in float32 (<= 0.55 ulp); exact for integer x."""
    xc = _clamp(x, np.float32(-152.0), np.float32(130.0))
    t = xc + F32_SHIFT
    r = xc - (t - F32_SHIFT)
    r_hi = r * F32_LN2_HI
    r_lo = fma(r, F32_LN2_LO, fma(r, F32_LN2_HI, -r_hi))
    return scale_f32(exp_reduced_f32(r_hi, r_lo), isub(as_int(t), as_int(F32_SHIFT)))


# --- expm1 ----------------------------------------------------------------------------------


@_inline
def expm1_f64(x):
    """e**x - 1 of a float64 (<= 0.6 ulp); tiny x give x, -0 gives -0."""
    k, r, r_lo = reduce_f64(_clamp(x, -40.0, 710.0))
    h = fma(r * r, _exp_poly_f64(r), r_lo)
    q = r + h
    q_lo = (r - q) + h
    capped = select(k > 1023, np.int64(1023), k)
    t = _power_of_two_f64(capped)
    a = t - 1.0
    a_lo = select(k >= 0, (t - a) - 1.0, t - (a + 1.0))  # T - 1 = a + a_lo exactly
    tq = t * q
    s = a + tq
    tail = fma(t, q_lo, ((a - s) + tq) + a_lo)
    y = (s + tail) * _power_of_two_f64(isub(k, capped))
    return select(x == 0.0, x, y)


@_inline
def expm1_f32(x):
    """e**x - 1 of a float32, computed in float32 (<= 0.6 ulp); tiny x give x, -0 gives -0."""
    k, r, r_lo = reduce_f32(_clamp(x, np.float32(-20.0), np.float32(89.0)))
    h = fma(r * r, _exp_poly_f32(r), r_lo)
    q = r + h
    q_lo = (r - q) + h
    capped = select(k > np.int32(127), np.int32(127), k)
    t = _power_of_two_f32(capped)
    a = t - _F32_ONE
    a_lo = select(k >= np.int32(0), (t - a) - _F32_ONE, t - (a + _F32_ONE))
    tq = t * q
    s = a + tq
    tail = fma(t, q_lo, ((a - s) + tq) + a_lo)
    y = (s + tail) * _power_of_two_f32(isub(k, capped))
    return select(x == np.float32(0.0), x, y)


TEMPLATES = (
    MathTemplate("exp", 1, (0.6, 0.6)),
    MathTemplate("exp2", 1, (0.6, 0.6)),
    MathTemplate("expm1", 1, (0.6, 0.6)),
)
