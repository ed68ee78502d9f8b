"""tanh, sinh and cosh: a small-argument approximation and an exp-based formula, chosen by select.

Each function works on ``a = |x|``; the odd ones (tanh, sinh) put the sign bit of x back, so -0
gives -0 and tiny arguments give themselves.

tanh (``tanh_f64``, ``tanh_f32``)
    ``a < 0.55``: ``tanh(a) = a + a * (u P(u) / Q(u))``, ``u = a**2``, a minimax rational fit of
    ``(tanh(a) - a) / a**3`` weighted by u (degrees 2/3 for float64, 1/1 for float32; relative
    error of the fitted term 2**-60.7 and 2**-28.1). Otherwise ``tanh(a) = 1 - 2 / (E + 1)``,
    ``E = e**(2a)`` from ``exp``: tanh >= 1/2 there, so the error of ``2 / (E + 1) <= 1/2``
    counts at most half; ``E + 1`` is kept as an exact pair (Fast2Sum) and the quotient corrected
    to first order in its low part. Both branches share one division (numerator and denominator
    are selected before it). a is capped at 20 (float64) or 10 (float32), where tanh rounds to
    1, which keeps E finite.
sinh (``sinh_f64``, ``sinh_f32``)
    ``a < 1``: ``sinh(a) = a + a**3 S(u)``, S a minimax fit of ``(sinh(a) - a) / a**3`` weighted
    by u (7 coefficients for float64, 4 for float32; relative error 2**-61.7 and 2**-31.5).
    Otherwise ``(e**a - e**-a) / 2`` from one reduction ``a = k ln2 + r`` (exp's): with
    ``u = r**2``, ``e**+-r = 1 +- r + EVEN +- ODD``, EVEN = ``u E(u)`` and ODD = ``r u O(u)``
    the even and odd parts of e**r - 1 - r (5 + 5 coefficients for float64, 3 + 3 for float32;
    absolute error 2**-58 / 2**-33 and 2**-61.7 / 2**-34.3), so there is no division and no
    second exp. ``sinh(a) = 2**(k-1) (e**r - 2**-2k e**-r)``: the bracket is summed with
    Fast2Sum and its low parts (the roundings of 1 +- r, r's own rounding error times the
    derivative) added last, so it is rounded once, then scaled exactly; 2**(k-1) lets the
    result overflow where sinh does (710.48 for float64, 89.42 for float32), not where e**a
    does. 2**-2k is capped where it no longer matters.
cosh (``cosh_f64``, ``cosh_f32``)
    ``2**(k-1) (e**r + 2**-2k e**-r)`` in the same way; no cancellation, so no second branch.

Coefficients were fitted with mpmath at 50 digits (Lawson's algorithm; Sanathanan-Koerner
iterations for the rational one) and rounded to the dtype. Measured by
``tests/mathlib/test_hyperbolic.py`` and 1.2e7-input sweeps per function and dtype (against long
double for float64, float64 for float32): tanh 1.10 ulp (just above the branch boundary, from
exp's error), sinh 0.73 (0.70 for a >= 1), cosh 0.72; ``TEMPLATES`` declares them rounded up
(float32 cosh to 1: cosh(1) is 0.56 ulp off, one unit from the correctly rounded value the
sweep's special-value check compares with).
Special values are NumPy's: tanh(+-inf) = +-1, sinh(+-inf) = +-inf, cosh(+-inf) = inf, NaN gives
NaN, sinh and tanh keep the sign of zero.
"""

from __future__ import annotations

import numpy as np

from .bits import as_float, as_int, fma, iadd, iand, inline_in_numba_ir, ior, isub, select
from .exp import (
    exp_f32,
    exp_f64,
    power_of_two_f32,
    power_of_two_f64,
    reduce_f32,
    reduce_f64,
    scale_f32,
    scale_f64,
)
from .template import MathTemplate

_inline = inline_in_numba_ir

F64_SIGN = np.int64(-(2**63))  # the sign bit
F32_SIGN = np.int32(-(2**31))

# tanh: (tanh(a) - a) / a**3 = P(u) / Q(u) on a < TANH_SMALL; Q's constant term is 1
TANH_SMALL_F64 = 0.55
TANH_CAP_F64 = 20.0  # a beyond which tanh rounds to 1
TANH_P_F64 = (-0.3333333333333333, -0.02050042727698968, -0.00019925019518145804)
TANH_Q_F64 = (0.4615012818309649, 0.023293501413260434, 0.00020661101924104234)
TANH_SMALL_F32 = np.float32(0.55)
TANH_CAP_F32 = np.float32(10.0)
TANH_P_F32 = (np.float32(-0.33333322), np.float32(-0.0015518225))
TANH_Q_F32 = (np.float32(0.40464807),)

# sinh: (sinh(a) - a) / a**3 = S(u) on a < SINH_SMALL
SINH_SMALL_F64 = 1.0
SINH_S_F64 = (
    0.16666666666666669,
    0.008333333333332915,
    0.00019841269841589236,
    2.755731910846573e-06,
    2.505213068588451e-08,
    1.60566855049697e-10,
    7.775769251256237e-13,
)
SINH_SMALL_F32 = np.float32(1.0)
SINH_S_F32 = (
    np.float32(0.16666667),
    np.float32(0.008333311),
    np.float32(0.00019842635),
    np.float32(2.7839262e-06),
)

# cosh, and sinh for a >= 1: e**r = 1 + r + u E(u) + r u O(u) on |r| <= ln2/2 with u = r**2
# (E: (cosh(r) - 1) / u and O: (sinh(r) - r) / (r u), weighted by u)
HALF_EXP_CLAMP_F64 = 712.0  # beyond, cosh and sinh are inf
HALF_EXP_CAP_F64 = np.int64(30)
EVEN_F64 = (
    0.5000000000000013,
    0.04166666666651125,
    0.001388888894798982,
    2.4801489016907607e-05,
    2.763158946308327e-07,
)
ODD_F64 = (
    0.16666666666666677,
    0.008333333333321426,
    0.00019841269886621812,
    2.7557243726502677e-06,
    2.510920136463949e-08,
)
HALF_EXP_CLAMP_F32 = np.float32(90.0)
HALF_EXP_CAP_F32 = np.int32(15)
EVEN_F32 = (np.float32(0.5), np.float32(0.04166646), np.float32(0.0013935426))
ODD_F32 = (np.float32(0.16666667), np.float32(0.008333175), np.float32(0.00019974107))

_F32_HALF = np.float32(0.5)
_F32_ONE = np.float32(1.0)
_F32_MINUS_ONE = np.float32(-1.0)
_F32_TWO = np.float32(2.0)
_I64_ZERO = np.int64(0)
_I64_ONE = np.int64(1)
_I32_ZERO = np.int32(0)
_I32_ONE = np.int32(1)


@_inline
def _with_sign_f64(magnitude, x):
    """``magnitude`` (>= 0) with the sign of ``x``."""
    return as_float(ior(as_int(magnitude), iand(as_int(x), F64_SIGN)))


@_inline
def _with_sign_f32(magnitude, x):
    """``magnitude`` (>= 0) with the sign of ``x``."""
    return as_float(ior(as_int(magnitude), iand(as_int(x), F32_SIGN)))


@_inline
def tanh_f64(x):
    """tanh of a float64."""
    a = abs(x)
    u = a * a
    small = a < TANH_SMALL_F64
    p, q = TANH_P_F64, TANH_Q_F64
    numerator = u * fma(fma(p[2], u, p[1]), u, p[0])
    denominator = fma(fma(fma(q[2], u, q[1]), u, q[0]), u, 1.0)
    # large: d + d_lo = E + 1 exactly (E = e**(2a)); a is capped where tanh rounds to 1 (an
    # infinite E would make d_lo NaN)
    e = exp_f64(2.0 * select(a > TANH_CAP_F64, TANH_CAP_F64, a))
    d = e + 1.0
    d_lo = (e - d) + 1.0
    ratio = select(small, numerator, 2.0) / select(small, denominator, d)
    z = fma(ratio * ratio, -0.5 * d_lo, ratio)  # 2 / (d + d_lo) to first order in d_lo
    return _with_sign_f64(select(small, fma(a, ratio, a), 1.0 - z), x)


@_inline
def tanh_f32(x):
    """tanh of a float32, computed in float32."""
    a = abs(x)
    u = a * a
    small = a < TANH_SMALL_F32
    p, q = TANH_P_F32, TANH_Q_F32
    numerator = u * fma(p[1], u, p[0])
    denominator = fma(q[0], u, _F32_ONE)
    e = exp_f32(_F32_TWO * select(a > TANH_CAP_F32, TANH_CAP_F32, a))
    d = e + _F32_ONE
    d_lo = (e - d) + _F32_ONE
    ratio = select(small, numerator, _F32_TWO) / select(small, denominator, d)
    z = fma(ratio * ratio, -_F32_HALF * d_lo, ratio)
    return _with_sign_f32(select(small, fma(a, ratio, a), _F32_ONE - z), x)


@_inline
def _half_exp_pair_f64(a, sign):
    """``(y, k)``: ``(e**a + sign e**-a) / 2 = y * 2**(k - 1)``, y rounded once (a >= 0 or NaN).

    ``sign`` is 1.0 (cosh) or -1.0 (sinh, a >= 1). 0.3 < y < 2.2.
    """
    k, r, r_lo = reduce_f64(select(a > HALF_EXP_CLAMP_F64, HALF_EXP_CLAMP_F64, a))
    u = r * r
    e, o = EVEN_F64, ODD_F64
    even = u * fma(fma(fma(fma(e[4], u, e[3]), u, e[2]), u, e[1]), u, e[0])
    odd = (r * u) * fma(fma(fma(fma(o[4], u, o[3]), u, o[2]), u, o[1]), u, o[0])
    # e**r = p + p_lo + even + odd and e**-r = m + m_lo + even - odd, so that
    # y = e**r + t e**-r with t = sign 2**-2k
    p = 1.0 + r
    m = 1.0 - r
    p_lo = (1.0 - p) + r
    m_lo = (1.0 - m) - r
    capped = select(k > HALF_EXP_CAP_F64, HALF_EXP_CAP_F64, k)  # beyond, 2**-2k is below an ulp
    t = sign * power_of_two_f64(isub(_I64_ZERO, iadd(capped, capped)))
    tm = t * m
    hi = p + tm  # Fast2Sum: p >= |tm|
    lo = ((p - hi) + tm) + ((p_lo + even + odd) + t * ((m_lo + even) - odd))
    return hi + fma(r_lo, p - tm, lo), k


@_inline
def _half_exp_pair_f32(a, sign):
    """``(y, k)``: ``(e**a + sign e**-a) / 2 = y * 2**(k - 1)``, y rounded once (a >= 0 or NaN)."""
    k, r, r_lo = reduce_f32(select(a > HALF_EXP_CLAMP_F32, HALF_EXP_CLAMP_F32, a))
    u = r * r
    e, o = EVEN_F32, ODD_F32
    even = u * fma(fma(e[2], u, e[1]), u, e[0])
    odd = (r * u) * fma(fma(o[2], u, o[1]), u, o[0])
    p = _F32_ONE + r
    m = _F32_ONE - r
    p_lo = (_F32_ONE - p) + r
    m_lo = (_F32_ONE - m) - r
    capped = select(k > HALF_EXP_CAP_F32, HALF_EXP_CAP_F32, k)
    t = sign * power_of_two_f32(isub(_I32_ZERO, iadd(capped, capped)))
    tm = t * m
    hi = p + tm
    lo = ((p - hi) + tm) + ((p_lo + even + odd) + t * ((m_lo + even) - odd))
    return hi + fma(r_lo, p - tm, lo), k


@_inline
def sinh_f64(x):
    """sinh of a float64."""
    a = abs(x)
    u = a * a
    s = SINH_S_F64
    series = fma(
        fma(fma(fma(fma(fma(s[6], u, s[5]), u, s[4]), u, s[3]), u, s[2]), u, s[1]), u, s[0]
    )
    y, k = _half_exp_pair_f64(a, -1.0)
    large = scale_f64(y, isub(k, _I64_ONE))
    return _with_sign_f64(select(a < SINH_SMALL_F64, fma(a * u, series, a), large), x)


@_inline
def sinh_f32(x):
    """sinh of a float32, computed in float32."""
    a = abs(x)
    u = a * a
    s = SINH_S_F32
    series = fma(fma(fma(s[3], u, s[2]), u, s[1]), u, s[0])
    y, k = _half_exp_pair_f32(a, _F32_MINUS_ONE)
    large = scale_f32(y, isub(k, _I32_ONE))
    return _with_sign_f32(select(a < SINH_SMALL_F32, fma(a * u, series, a), large), x)


@_inline
def cosh_f64(x):
    """cosh of a float64."""
    y, k = _half_exp_pair_f64(abs(x), 1.0)
    return scale_f64(y, isub(k, _I64_ONE))


@_inline
def cosh_f32(x):
    """cosh of a float32, computed in float32."""
    y, k = _half_exp_pair_f32(abs(x), _F32_ONE)
    return scale_f32(y, isub(k, _I32_ONE))


TEMPLATES = (
    MathTemplate("tanh", 1, (1.2, 1.2)),
    MathTemplate("sinh", 1, (0.8, 0.8)),
    MathTemplate("cosh", 1, (0.75, 0.8)),
)
