"""Special functions SciPy provides as ufuncs: ``erf`` and ``expit`` (``scipy.special``).

gcompile traces ``scipy.special.erf`` and ``scipy.special.expit`` when SciPy is installed; the
generated kernels run these expansions instead. This module does not import SciPy.

erf (``erf_f64``, ``erf_f32``)
    Computed on ``a = |x|``; the sign bit of x is copied onto the result (erf(-0) = -0).

    ``a <= 1``: ``erf = a + a * R(a**2)``, ``R(w) = erf(sqrt(w)) / sqrt(w) - 1`` (12
    coefficients for float64, 7 for float32). Written as ``a + a * R`` rather than ``a * P``,
    the rounding errors of the polynomial are scaled by |R| <= 0.16 of the result.

    ``a > 1``: ``erf = 1 - exp(-a**2) * Q(1/a)``, with ``a`` clamped to 6 (float64) or 4
    (float32), beyond which erf rounds to 1. ``Q(u) = erfc(1/u) * exp(1/u**2)`` on ``u`` in
    [1/6, 1] (float32: [1/4, 1]) is a polynomial in ``s = SCALE * u + SHIFT``, which maps that
    interval onto [-1, 1], evaluated by Horner's scheme (23 coefficients for float64, 8 for
    float32). In ``s`` the coefficients are small (at most 0.29, their sum 0.49 against
    Q >= 0.09) so Horner loses nothing: the Chebyshev form of the same fit evaluated by
    Clenshaw's recurrence gave the same worst error with 21 more operations. (In ``u`` itself the
    coefficients reach 805, their sum 4469: that monomial form cancels by thousands of ulp.)
    ``a**2`` is not exact; its rounding error ``d = fma(a, a, -a**2)`` is folded in as
    ``exp(-a**2 - d) = exp(-a**2) * (1 - d)``, since ``d`` is up to 2**-48 absolute and would
    otherwise reach erfc as a relative error. ``1 - e * Q`` is one fma.

    Coefficients: minimax fits by a Remez exchange in mpmath at 40 digits, rounded to the dtype:
    R for the relative error of erf (2**-56.9 for float64, 2**-29.6 for float32) and Q weighted
    by ``exp(-a**2) / erf(a)``, i.e. for its contribution to the relative error of erf
    (2**-60.5, 2**-31.8). ``exp`` is ``exp_f64`` / ``exp_f32`` of ``.exp``.

expit (``expit_f64``, ``expit_f32``)
    ``e = exp(-|x|)``, then ``1 / (1 + e)`` for x >= 0 and ``e / (1 + e)`` for x < 0, one
    division with a select on the numerator. The negative side keeps exp's gradual underflow:
    expit(x) is subnormal, not 0, for x below -708.4 (float32: -87.3), where SciPy's
    ``1 / (1 + exp(-x))`` returns 0 once exp(-x) overflows (x < -709.78, float32 -88.72). The
    rounding error of ``1 + e`` (Fast2Sum) and the division's remainder (fma) are added back
    as one correction ``residual / (1 + e)``, with ``1 / (1 + e)`` taken from the quotient
    itself (it is the quotient for x >= 0 and 1 minus it for x < 0): that takes the worst error
    from 2.26 to 1.49 ulp without a second division. What is left is mostly exp's own error,
    which for x < 0 the result inherits whole. expit(-inf) = 0, expit(inf) = 1, NaN -> NaN.

Measured worst errors: erf 1.22 ulp (float64; at |x| just below 1, the end of the polynomial),
1.08 ulp (float32, every float32); expit 1.49 ulp (float64), 1.48 ulp (float32, every float32).
float64 over the test's sweep plus 4e7 inputs per function against a long double reference,
float32 against float64. Special values are SciPy's, apart from the underflow above.
"""

from __future__ import annotations

import numpy as np

from .bits import as_float, as_int, fma, iand, inline_in_numba_ir, ior, select
from .exp import exp_f32, exp_f64
from .template import MathTemplate

_inline = inline_in_numba_ir

# erf float64 ---------------------------------------------------------------------------------

SIGN_F64 = np.int64(-(2**63))
ERF_CLAMP_F64 = 6.0  # erf(x) rounds to 1 from 5.93 on

# R(w) for erf(a) = a + a * R(a*a), a <= 1.
ERF_SMALL_F64 = (
    0.12837916709551256,
    -0.3761263890318352,
    0.11283791670944174,
    -0.026866170643109713,
    0.00522397760610364,
    -0.000854832592858532,
    0.00012055293554611636,
    -1.4924711865453411e-05,
    1.6447126089935795e-06,
    -1.620627110461525e-07,
    1.3710793154741474e-08,
    -7.779114114995273e-10,
)

# Q(u) = erfc(1/u) exp(1/u**2) = sum c_k s**k, s = ERF_Q_SCALE_F64 * u + ERF_Q_SHIFT_F64.
ERF_Q_SCALE_F64 = 2.4
ERF_Q_SHIFT_F64 = -1.4
ERF_Q_F64 = (
    0.28972211632346423,
    0.16536269001261458,
    -0.030831050508430043,
    0.002821131897874454,
    0.001034432226338052,
    -0.0007383867426640037,
    0.00026560546699672333,
    -5.528650116660415e-05,
    -4.0466052515955396e-06,
    1.0882690790634937e-05,
    -6.4981799833481015e-06,
    2.5829358670123667e-06,
    -6.631245362171604e-07,
    1.7162869310378627e-09,
    1.2602344628542852e-07,
    -9.501239654712759e-08,
    4.73303658506471e-08,
    -1.8714147589441167e-08,
    5.737475218624885e-09,
    4.382610207127614e-10,
    -2.407747841427612e-09,
    1.4549320841944108e-09,
    -3.0258227383590413e-10,
)


@_inline
def _erf_small_f64(w):
    c = ERF_SMALL_F64
    p = fma(w, c[11], c[10])
    p = fma(w, p, c[9])
    p = fma(w, p, c[8])
    p = fma(w, p, c[7])
    p = fma(w, p, c[6])
    p = fma(w, p, c[5])
    p = fma(w, p, c[4])
    p = fma(w, p, c[3])
    p = fma(w, p, c[2])
    p = fma(w, p, c[1])
    return fma(w, p, c[0])


@_inline
def _erfc_scaled_f64(u):
    """Q(u) = erfc(1/u) * exp(1/u**2) for u in [1/6, 1]."""
    c = ERF_Q_F64
    s = fma(u, ERF_Q_SCALE_F64, ERF_Q_SHIFT_F64)
    p = fma(s, c[22], c[21])
    p = fma(s, p, c[20])
    p = fma(s, p, c[19])
    p = fma(s, p, c[18])
    p = fma(s, p, c[17])
    p = fma(s, p, c[16])
    p = fma(s, p, c[15])
    p = fma(s, p, c[14])
    p = fma(s, p, c[13])
    p = fma(s, p, c[12])
    p = fma(s, p, c[11])
    p = fma(s, p, c[10])
    p = fma(s, p, c[9])
    p = fma(s, p, c[8])
    p = fma(s, p, c[7])
    p = fma(s, p, c[6])
    p = fma(s, p, c[5])
    p = fma(s, p, c[4])
    p = fma(s, p, c[3])
    p = fma(s, p, c[2])
    p = fma(s, p, c[1])
    return fma(s, p, c[0])


@_inline
def erf_f64(x):
    """The error function of a float64, as ``scipy.special.erf``."""
    a = abs(x)
    small = fma(a, _erf_small_f64(a * a), a)
    clamped = select(a > ERF_CLAMP_F64, ERF_CLAMP_F64, select(a < 1.0, 1.0, a))
    square = clamped * clamped
    square_error = fma(clamped, clamped, -square)
    e = exp_f64(-square)
    e = fma(-square_error, e, e)
    large = fma(-e, _erfc_scaled_f64(1.0 / clamped), 1.0)
    magnitude = select(a <= 1.0, small, large)
    result = as_float(ior(as_int(magnitude), iand(as_int(x), SIGN_F64)))
    return select(x != x, x, result)


# erf float32 ---------------------------------------------------------------------------------

SIGN_F32 = np.int32(-(2**31))
ONE_F32 = np.float32(1.0)
ERF_CLAMP_F32 = np.float32(4.0)  # erf(x) rounds to 1 from 3.92 on

ERF_SMALL_F32 = (
    np.float32(0.12837917),
    np.float32(-0.37612626),
    np.float32(0.11283585),
    np.float32(-0.026853807),
    np.float32(0.005188318),
    np.float32(-0.0008010101),
    np.float32(7.85353e-05),
)

ERF_Q_SCALE_F32 = np.float32(2.6666667)
ERF_Q_SHIFT_F32 = np.float32(-1.6666666)
ERF_Q_F32 = (
    np.float32(0.30595297),
    np.float32(0.14335644),
    np.float32(-0.024243163),
    np.float32(0.0023076506),
    np.float32(0.00046370047),
    np.float32(-0.0003495858),
    np.float32(0.0001142479),
    np.float32(-1.8713623e-05),
)


@_inline
def _erf_small_f32(w):
    c = ERF_SMALL_F32
    p = fma(w, c[6], c[5])
    p = fma(w, p, c[4])
    p = fma(w, p, c[3])
    p = fma(w, p, c[2])
    p = fma(w, p, c[1])
    return fma(w, p, c[0])


@_inline
def _erfc_scaled_f32(u):
    """Q(u) = erfc(1/u) * exp(1/u**2) for u in [1/4, 1]."""
    c = ERF_Q_F32
    s = fma(u, ERF_Q_SCALE_F32, ERF_Q_SHIFT_F32)
    p = fma(s, c[7], c[6])
    p = fma(s, p, c[5])
    p = fma(s, p, c[4])
    p = fma(s, p, c[3])
    p = fma(s, p, c[2])
    p = fma(s, p, c[1])
    return fma(s, p, c[0])


@_inline
def erf_f32(x):
    """The error function of a float32, as ``scipy.special.erf``."""
    a = abs(x)
    small = fma(a, _erf_small_f32(a * a), a)
    clamped = select(a > ERF_CLAMP_F32, ERF_CLAMP_F32, select(a < ONE_F32, ONE_F32, a))
    square = clamped * clamped
    square_error = fma(clamped, clamped, -square)
    e = exp_f32(-square)
    e = fma(-square_error, e, e)
    large = fma(-e, _erfc_scaled_f32(ONE_F32 / clamped), ONE_F32)
    magnitude = select(a <= ONE_F32, small, large)
    result = as_float(ior(as_int(magnitude), iand(as_int(x), SIGN_F32)))
    return select(x != x, x, result)


# expit -------------------------------------------------------------------------------------------

ZERO_F32 = np.float32(0.0)


@_inline
def expit_f64(x):
    """The logistic sigmoid ``1 / (1 + exp(-x))`` of a float64, as ``scipy.special.expit``."""
    e = exp_f64(-abs(x))
    positive = x >= 0.0
    numerator = select(positive, 1.0, e)
    denominator = 1.0 + e
    denominator_error = (1.0 - denominator) + e
    quotient = numerator / denominator
    residual = fma(-quotient, denominator_error, fma(-quotient, denominator, numerator))
    return fma(residual, select(positive, quotient, 1.0 - quotient), quotient)


@_inline
def expit_f32(x):
    """The logistic sigmoid ``1 / (1 + exp(-x))`` of a float32, as ``scipy.special.expit``."""
    e = exp_f32(-abs(x))
    positive = x >= ZERO_F32
    numerator = select(positive, ONE_F32, e)
    denominator = ONE_F32 + e
    denominator_error = (ONE_F32 - denominator) + e
    quotient = numerator / denominator
    residual = fma(-quotient, denominator_error, fma(-quotient, denominator, numerator))
    return fma(residual, select(positive, quotient, ONE_F32 - quotient), quotient)


TEMPLATES = (
    MathTemplate("erf", 1, (1.25, 1.5)),
    MathTemplate("expit", 1, (1.5, 1.75)),
)
