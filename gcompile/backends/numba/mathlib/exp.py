"""exp, exp2 and expm1: one range reduction, a polynomial, an exact power-of-two scaling.

Reduction (all functions)
    ``k = round(x / ln 2)`` by adding and subtracting ``SHIFT = 1.5 * 2**mantissa_bits``; the
    integer k is also the low bits of the sum, read with a bit cast. ``x - k * LN2_HI`` is exact
    in one fma (LN2_HI is ln 2 rounded to the dtype; for k != 0, |x| >= 0.34 and the difference
    is a multiple of ulp(x) below 1/2), then ``LN2_LO = ln 2 - LN2_HI`` is subtracted, giving
    ``r`` with |r| <= ln2/2 and, where wanted, its rounding error ``r_lo``.
Scaling
    ``p * 2**k`` as ``p * 2**(k >> 1) * 2**(k - (k >> 1))`` with both powers built from exponent
    bits, so results that overflow become inf and results in the subnormal range are rounded
    once (from p, itself rounded: up to 0.75 ulp there). The input is clamped to where the
    result is already 0 or inf; NaN passes the clamp and propagates.
exp (``exp_f64``, ``exp_f32``)
    ``e**r = 1 + r (1 + r P(r))`` by Horner's scheme, the last step one fma. The cheap form:
    the rounding of r (r_lo is dropped) and of the inner sum add about 0.4 ulp to the final
    rounding's 0.5.
exp2 (``exp2_f64``, ``exp2_f32``)
    ``k = round(x)``, ``r = x - k`` (exact, |r| <= 1/2), ``2**r = 1 + r P2(r)`` (its own fit, so
    no product with ln 2 is rounded), then exp's scaling. Integer x give exact powers of two.
expm1 (``expm1_f64``, ``expm1_f32``)
    The careful form: ``q = e**(r + r_lo) - 1 = r + r**2/2 + r**3 Q(r)`` with ``r**2/2``
    exact (an fma residual) and ``r_lo`` kept, summed as ``q + q_lo`` (Fast2Sum). With
    ``T = 2**k``: ``expm1(x) = (T - 1) + T q``, the first sum by Fast2Sum (|T - 1| >= |T q|),
    the low parts (``T q_lo``, the rounding error of ``T - 1``, that of the sum) added last, so
    the result is rounded once. T is capped at the largest finite power of two and the result
    doubled when k is one above, so expm1 overflows where NumPy's does. Below the lower clamp
    expm1 rounds to -1; -0 is passed through by a select (the sums would make it +0); tiny x
    give x exactly.
Shared pieces
    ``reduce_*``, ``power_of_two_*`` and ``scale_*`` are also used by sinh and cosh
    (``hyperbolic.py``), which evaluate e**r and e**-r from one even and one odd polynomial.

Coefficients (float64 / float32 counts): P (``EXP_P_*``, 10 / 5) fits ``(e**r - 1 - r) / r**2``
weighted by ``r**2`` and Q (``EXPM1_Q_*``, 10 / 5) fits ``(e**r - 1 - r - r**2/2) / r**3``
weighted by ``r**2``, both on |r| <= ln2/2; P2 (``EXP2_P_*``, 11 / 6) fits ``(2**r - 1) / r``
weighted by |r| on |r| <= 1/2. Lawson's algorithm in mpmath at 50 digits, each coefficient
rounded to the dtype before the higher ones were refitted. Errors of the fitted terms (float64 /
float32): P 2**-58 / 2**-28.2 and P2 2**-57.9 / 2**-28.3 absolute, Q 2**-61.7 / 2**-31.1
relative to r.

Measured by ``tests/mathlib/test_exp.py`` and 1.2e7-input sweeps per function and dtype (against
long double for float64, float64 for float32): exp 0.90 ulp, exp2 0.88 (0.81 for normal
results), expm1 0.57 / 0.60 (float32 / float64); ``TEMPLATES`` declares them rounded up (exp2 to
1: at x = +-0.5 it is 0.7 ulp from sqrt(2), one unit from the correctly rounded value the sweep's
special-value check compares with).
"""

from __future__ import annotations

import numpy as np

from .bits import as_float, as_int, fma, iadd, inline_in_numba_ir, ishl, ishr, isub, select
from .template import MathTemplate

_inline = inline_in_numba_ir

# float64 constants
F64_SHIFT = 6755399441055744.0  # 1.5 * 2**52: x + SHIFT - SHIFT rounds x to an integer
F64_INV_LN2 = 1.4426950408889634
F64_LN2_HI = 0.6931471805599453  # ln 2 rounded to float64
F64_LN2_LO = 2.3190468138462996e-17  # ln 2 - F64_LN2_HI
F64_EXPONENT_BIAS = np.int64(1023)
F64_MANTISSA_BITS = np.int64(52)
F64_MAX_EXPONENT = np.int64(1023)
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
EXP2_P_F64 = (
    0.6931471805599453,
    0.2402265069591012,
    0.05550410866482261,
    0.009618129107597653,
    0.0013333558146255448,
    0.0001540353045355546,
    1.5252733948764004e-05,
    1.321543676334202e-06,
    1.017802131530134e-07,
    7.073564153772107e-09,
    4.4603600882480595e-10,
)
EXPM1_Q_F64 = (
    0.16666666666666677,
    0.04166666666666667,
    0.00833333333332142,
    0.0013888888888882122,
    0.00019841269886647838,
    2.4801587330241264e-05,
    2.7557243701225854e-06,
    2.7557268582874966e-07,
    2.5109208093191664e-08,
    2.091651761991941e-09,
)

# float32 constants (np.float32 / np.int32 so that no expression widens to float64 / int64)
F32_SHIFT = np.float32(12582912.0)  # 1.5 * 2**23
F32_INV_LN2 = np.float32(1.442695)
F32_LN2_HI = np.float32(0.6931472)  # ln 2 rounded to float32
F32_LN2_LO = np.float32(-1.9046542e-09)  # ln 2 - F32_LN2_HI
F32_EXPONENT_BIAS = np.int32(127)
F32_MANTISSA_BITS = np.int32(23)
F32_MAX_EXPONENT = np.int32(127)
EXP_P_F32 = (
    np.float32(0.5),
    np.float32(0.1666652),
    np.float32(0.041666415),
    np.float32(0.008368822),
    np.float32(0.0013939538),
)
EXP2_P_F32 = (
    np.float32(0.6931472),
    np.float32(0.2402265),
    np.float32(0.055503592),
    np.float32(0.00961807),
    np.float32(0.0013391159),
    np.float32(0.00015459668),
)
EXPM1_Q_F32 = (
    np.float32(0.16666667),
    np.float32(0.04166649),
    np.float32(0.008333208),
    np.float32(0.001393267),
    np.float32(0.0001994422),
)
_F32_ZERO = np.float32(0.0)
_F32_HALF = np.float32(0.5)
_F32_ONE = np.float32(1.0)
_I64_ONE = np.int64(1)
_I32_ZERO = np.int32(0)
_I32_ONE = np.int32(1)

# Clamps: beyond them the result is already 0, -1 or inf (and 2**k stays within scale's range)
F64_EXP_LOW, F64_EXP_HIGH = -746.0, 712.0
F32_EXP_LOW, F32_EXP_HIGH = np.float32(-104.0), np.float32(90.0)
F64_EXP2_LOW, F64_EXP2_HIGH = -1080.0, 1030.0
F32_EXP2_LOW, F32_EXP2_HIGH = np.float32(-152.0), np.float32(130.0)
F64_EXPM1_LOW, F64_EXPM1_HIGH = -40.0, 710.0
F32_EXPM1_LOW, F32_EXPM1_HIGH = np.float32(-20.0), np.float32(89.0)


# --- shared pieces --------------------------------------------------------------------------


@_inline
def _clamp(x, low, high):
    """``x`` limited to [low, high]; NaN passes through."""
    return select(x > high, high, select(x < low, low, x))


@_inline
def reduce_f64(x):
    """``(k, r, r_lo)``: x = k ln2 + r + r_lo, k = round(x / ln2) an int64, |r| <= ln2/2."""
    t = fma(x, F64_INV_LN2, F64_SHIFT)
    k = t - F64_SHIFT
    r_hi = fma(-k, F64_LN2_HI, x)  # exact
    r = fma(-k, F64_LN2_LO, r_hi)
    r_lo = fma(-k, F64_LN2_LO, r_hi - r)
    return isub(as_int(t), as_int(F64_SHIFT)), r, r_lo


@_inline
def reduce_f32(x):
    """``(k, r, r_lo)``: x = k ln2 + r + r_lo, k = round(x / ln2) an int32, |r| <= ln2/2."""
    t = fma(x, F32_INV_LN2, F32_SHIFT)
    k = t - F32_SHIFT
    r_hi = fma(-k, F32_LN2_HI, x)  # exact
    r = fma(-k, F32_LN2_LO, r_hi)
    r_lo = fma(-k, F32_LN2_LO, r_hi - r)
    return isub(as_int(t), as_int(F32_SHIFT)), r, r_lo


@_inline
def power_of_two_f64(k):
    """2.0**k for an int64 -1022 <= k <= 1023."""
    return as_float(ishl(iadd(k, F64_EXPONENT_BIAS), F64_MANTISSA_BITS))


@_inline
def power_of_two_f32(k):
    """2.0**k as float32 for an int32 -126 <= k <= 127."""
    return as_float(ishl(iadd(k, F32_EXPONENT_BIAS), F32_MANTISSA_BITS))


@_inline
def scale_f64(p, k):
    """``p * 2**k`` rounded once (|k| <= 2044): overflow gives inf, underflow subnormals."""
    half = ishr(k, _I64_ONE)
    return (p * power_of_two_f64(half)) * power_of_two_f64(isub(k, half))


@_inline
def scale_f32(p, k):
    """``p * 2**k`` rounded once (|k| <= 252): overflow gives inf, underflow subnormals."""
    half = ishr(k, _I32_ONE)
    return (p * power_of_two_f32(half)) * power_of_two_f32(isub(k, half))


@_inline
def _exp_reduced_f64(r):
    """``e**r`` for |r| <= ln2/2: 1 + r (1 + r P(r))."""
    c = EXP_P_F64
    p = fma(c[9], r, c[8])
    p = fma(p, r, c[7])
    p = fma(p, r, c[6])
    p = fma(p, r, c[5])
    p = fma(p, r, c[4])
    p = fma(p, r, c[3])
    p = fma(p, r, c[2])
    p = fma(p, r, c[1])
    p = fma(p, r, c[0])
    return fma(fma(p, r, 1.0), r, 1.0)


@_inline
def _exp_reduced_f32(r):
    """``e**r`` for |r| <= ln2/2: 1 + r (1 + r P(r))."""
    c = EXP_P_F32
    p = fma(c[4], r, c[3])
    p = fma(p, r, c[2])
    p = fma(p, r, c[1])
    p = fma(p, r, c[0])
    return fma(fma(p, r, _F32_ONE), r, _F32_ONE)


@_inline
def _exp2_reduced_f64(r):
    """``2**r`` for |r| <= 1/2: 1 + r P(r)."""
    c = EXP2_P_F64
    p = fma(c[10], r, c[9])
    p = fma(p, r, c[8])
    p = fma(p, r, c[7])
    p = fma(p, r, c[6])
    p = fma(p, r, c[5])
    p = fma(p, r, c[4])
    p = fma(p, r, c[3])
    p = fma(p, r, c[2])
    p = fma(p, r, c[1])
    p = fma(p, r, c[0])
    return fma(p, r, 1.0)


@_inline
def _exp2_reduced_f32(r):
    """``2**r`` for |r| <= 1/2: 1 + r P(r)."""
    c = EXP2_P_F32
    p = fma(c[5], r, c[4])
    p = fma(p, r, c[3])
    p = fma(p, r, c[2])
    p = fma(p, r, c[1])
    p = fma(p, r, c[0])
    return fma(p, r, _F32_ONE)


@_inline
def _expm1_q_f64(r):
    """``(e**r - 1 - r - r**2/2) / r**3`` for |r| <= ln2/2."""
    c = EXPM1_Q_F64
    q = fma(c[9], r, c[8])
    q = fma(q, r, c[7])
    q = fma(q, r, c[6])
    q = fma(q, r, c[5])
    q = fma(q, r, c[4])
    q = fma(q, r, c[3])
    q = fma(q, r, c[2])
    q = fma(q, r, c[1])
    return fma(q, r, c[0])


@_inline
def _expm1_q_f32(r):
    """``(e**r - 1 - r - r**2/2) / r**3`` for |r| <= ln2/2."""
    c = EXPM1_Q_F32
    q = fma(c[4], r, c[3])
    q = fma(q, r, c[2])
    q = fma(q, r, c[1])
    return fma(q, r, c[0])


@_inline
def _expm1_reduced_f64(r, r_lo):
    """``(q, q_lo)``: q + q_lo = e**(r + r_lo) - 1 to about 2**-60 relative (|r| <= ln2/2).

    q = r + r**2/2 rounded; |q_lo| < |q| / 50 (not normalised: it is added last).
    """
    half_r = 0.5 * r
    h = half_r * r
    # e**(r + r_lo) - 1 - r - h = (r**2/2 - h) + r_lo (1 + r) + r**3 Q(r) + O(r_lo r**2 < 2**-59)
    rest = fma(r * (r * r), _expm1_q_f64(r), fma(half_r, r, -h) + fma(r, r_lo, r_lo))
    q = r + h
    return q, ((r - q) + h) + rest


@_inline
def _expm1_reduced_f32(r, r_lo):
    """``(q, q_lo)``: q + q_lo = e**(r + r_lo) - 1 to about 2**-30 relative (|r| <= ln2/2).

    q = r + r**2/2 rounded; |q_lo| < |q| / 50 (not normalised: it is added last).
    """
    half_r = _F32_HALF * r
    h = half_r * r
    rest = fma(r * (r * r), _expm1_q_f32(r), fma(half_r, r, -h) + fma(r, r_lo, r_lo))
    q = r + h
    return q, ((r - q) + h) + rest


# --- exp and exp2 ---------------------------------------------------------------------------


@_inline
def exp_f64(x):
    """e**x of a float64."""
    k, r, _ = reduce_f64(_clamp(x, F64_EXP_LOW, F64_EXP_HIGH))
    return scale_f64(_exp_reduced_f64(r), k)


@_inline
def exp_f32(x):
    """e**x of a float32, computed in float32."""
    k, r, _ = reduce_f32(_clamp(x, F32_EXP_LOW, F32_EXP_HIGH))
    return scale_f32(_exp_reduced_f32(r), k)


@_inline
def exp2_f64(x):
    """2**x of a float64; exact for integer x."""
    xc = _clamp(x, F64_EXP2_LOW, F64_EXP2_HIGH)
    t = xc + F64_SHIFT
    r = xc - (t - F64_SHIFT)
    return scale_f64(_exp2_reduced_f64(r), isub(as_int(t), as_int(F64_SHIFT)))


@_inline
def exp2_f32(x):
    """2**x of a float32, computed in float32; exact for integer x."""
    xc = _clamp(x, F32_EXP2_LOW, F32_EXP2_HIGH)
    t = xc + F32_SHIFT
    r = xc - (t - F32_SHIFT)
    return scale_f32(_exp2_reduced_f32(r), isub(as_int(t), as_int(F32_SHIFT)))


# --- expm1 ----------------------------------------------------------------------------------


@_inline
def expm1_f64(x):
    """e**x - 1 of a float64; tiny x give x, -0 gives -0."""
    k, r, r_lo = reduce_f64(_clamp(x, F64_EXPM1_LOW, F64_EXPM1_HIGH))
    q, q_lo = _expm1_reduced_f64(r, r_lo)
    capped = select(k > F64_MAX_EXPONENT, F64_MAX_EXPONENT, k)  # 2**k finite
    t = power_of_two_f64(capped)
    a = t - 1.0
    a_lo = select(k >= 0, (t - a) - 1.0, t - (a + 1.0))  # t - 1 = a + a_lo exactly
    tq = t * q
    s = a + tq
    tail = fma(t, q_lo, ((a - s) + tq) + a_lo)
    y = (s + tail) * power_of_two_f64(isub(k, capped))
    return select(x == 0.0, x, y)


@_inline
def expm1_f32(x):
    """e**x - 1 of a float32, computed in float32; tiny x give x, -0 gives -0."""
    k, r, r_lo = reduce_f32(_clamp(x, F32_EXPM1_LOW, F32_EXPM1_HIGH))
    q, q_lo = _expm1_reduced_f32(r, r_lo)
    capped = select(k > F32_MAX_EXPONENT, F32_MAX_EXPONENT, k)
    t = power_of_two_f32(capped)
    a = t - _F32_ONE
    a_lo = select(k >= _I32_ZERO, (t - a) - _F32_ONE, t - (a + _F32_ONE))
    tq = t * q
    s = a + tq
    tail = fma(t, q_lo, ((a - s) + tq) + a_lo)
    y = (s + tail) * power_of_two_f32(isub(k, capped))
    return select(x == _F32_ZERO, x, y)


TEMPLATES = (
    MathTemplate("exp", 1, (0.95, 0.95)),
    MathTemplate("exp2", 1, (0.9, 0.9)),
    MathTemplate("expm1", 1, (0.6, 0.65)),
)
