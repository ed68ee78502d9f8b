"""Logarithms: ``log``, ``log2``, ``log10``, ``log1p``, ``logaddexp`` and ``logit``.

All six share one reduction and one polynomial (fdlibm's arrangement, our own fit), and carry
the logarithm in two words so that its large parts are added exactly:

* **Reduction** (``_reduce``). A finite ``x > 0`` is written ``2**k * (1 + f)`` with ``1 + f``
  in [sqrt(2)/2, sqrt(2)): subtracting the bits of sqrt(2)/2 from those of ``x`` leaves ``k`` in
  the exponent field (an arithmetic shift reads it), and the mantissa bits with those of
  sqrt(2)/2 added back are ``1 + f``; ``f`` is exact. Integer work stays at the float's width
  (int32 lanes for float32) through the ``bits`` intrinsics. Subnormals are scaled by 2**54
  (float64) or 2**23 (float32) first, through a select.
* **Polynomial** (``_log1p_reduced``). With ``s = f / (2 + f)``, ``log(1 + f) = 2 atanh(s) =
  f + low``, ``low = s (f**2/2 + R(s**2)) - f**2/2`` in one fma. ``R(z) = z P(z)``, ``P`` a
  Remez minimax fit (mpmath, absolute error of ``R`` over z in [0, (3 - 2 sqrt 2)**2]) of
  degree 6 for float64 (error 2**-58.5) and 2 for float32 (2**-29.2), coefficients rounded to
  the dtype.
* **Assembly** (``_ln``). ``k ln 2 + f + low``: ``k * LN2_HI`` is exact (LN2_HI has 42 / 16
  significant bits), its sum with ``f`` is a fast two-sum, and ``k * LN2_LO`` joins ``low``.
  What is left is mostly the rounding of ``low`` (up to a fifth of the result when k = -1 and
  f is near sqrt(2) - 1) and the final rounding.

Per function, the worst error (ulp of the correctly rounded result) for float32 / float64: float32
over every finite input (logaddexp: sampled), float64 over >= 10**6 inputs per seed and several
seeds (``tests/mathlib/test_log.py`` sweeps one seed):

* ``log`` (0.86 / 0.82): 0 -> -inf, < 0 -> NaN, inf -> inf, NaN -> NaN.
* ``log2`` (1.04 / 1.09): ``k + log(1 + f) / ln 2``, 1/ln 2 split in two and the rounding error
  of the main product recovered by an fma. ``log2(2**k)`` is exactly ``k``.
* ``log10`` (1.02 / 0.92): ``k log10(2) + log(1 + f) / ln 10``, split the same way.
* ``log1p`` (0.91 / 0.84): ``u = 1 + x`` goes through the reduction; ``log1p(x) = log(u) + c/u``
  with ``c = x - (u - 1)`` the rounding error of ``u``, in the low word. |x| < 2**-54 (2**-25)
  gives ``x`` (so -0 stays -0); -1 -> -inf, < -1 -> NaN.
* ``logaddexp`` (1.53 / 1.49): NumPy's ``npy_logaddexp`` with selects: ``x + ln 2`` when
  ``x == y`` (inf, inf -> inf; -inf, -inf -> -inf), else ``max(x, y) + log1p(exp(-|x - y|))``,
  NaN when either is NaN. Unlike NumPy, ``x - y`` is kept exact (two-sum; its rounding error
  corrects the exp), and the log1p's two words are added to ``max(x, y)`` by a two-sum; the
  error left is mostly that of exp. Where the result cancels (``max(x, y)`` in (-2 ln 2, 0)
  and the result much smaller), the error is at most about 1 ulp of ``max(|x|, |y|, |result|)``
  (NumPy's is the same): the ulp bound does not hold there, and there NumPy itself can be
  several ulp off (logaddexp(-ln 2, -0.5): NumPy 5.3 ulp in float32, 3.1 in float64; ours 1.3, 0).
  exp comes from ``exp.py`` (``exp_f64`` / ``exp_f32``).
* ``logit`` (0.96 / 0.95): ``log(x / (1 - x))`` as ``scipy.special.logit`` (0 -> -inf,
  1 -> inf, outside [0, 1] -> NaN). Near 1/2 (``|2x - 1| < 0.1715``) it is ``2 atanh(2x - 1)``
  by the same polynomial (``2x - 1`` is exact there); elsewhere ``log(q)`` of the rounded ratio
  ``q = x / (1 - x)`` plus the relative rounding errors of ``1 - x`` (fast two-sum) and of
  ``q`` (fma residual), added to the low word.

Every function is branch-free (selects) and computes float32 in float32 with int32 lanes.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .bits import (
    as_float,
    as_int,
    fma,
    horner,
    iadd,
    iand,
    inline_in_numba_ir,
    ishr,
    isub,
    select,
    to_float,
)
from .exp import exp_f32, exp_f64
from .template import MathTemplate

_inline = inline_in_numba_ir


class _Constants(NamedTuple):
    """Every constant of the expansions, typed to one dtype (Numba freezes them as literals)."""

    zero: float
    half: float
    one: float
    two: float
    inf: float
    nan: float
    tiny: float  # smallest normal number
    subnormal_scale: float  # 2**subnormal_shift: makes every subnormal normal
    subnormal_shift: int
    int_zero: int
    sqrt_half_bits: int  # IEEE bits of sqrt(2)/2
    mantissa_mask: int
    mantissa_bits: int
    poly: tuple  # P(z), highest degree first: log(1 + f) = 2s + s * z * P(z)
    ln2: float
    ln2_hi: float  # trailing zeros: k * ln2_hi is exact
    ln2_lo: float
    inv_ln2_hi: float  # 1/ln 2 rounded; inv_ln2_lo the rest
    inv_ln2_lo: float
    inv_ln10_hi: float
    inv_ln10_lo: float
    log10_2_hi: float  # trailing zeros: k * log10_2_hi is exact
    log10_2_lo: float
    log1p_tiny: float  # below this log1p(x) rounds to x
    atanh_limit: float  # largest |2x - 1| for which logit uses the polynomial directly


_F64 = _Constants(
    zero=0.0,
    half=0.5,
    one=1.0,
    two=2.0,
    inf=np.inf,
    nan=np.nan,
    tiny=2.0**-1022,
    subnormal_scale=2.0**54,
    subnormal_shift=np.int64(54),
    int_zero=np.int64(0),
    sqrt_half_bits=np.int64(0x3FE6A09E667F3BCD),
    mantissa_mask=np.int64((1 << 52) - 1),
    mantissa_bits=np.int64(52),
    poly=(
        0.14796106032664633,
        0.15314035770607612,
        0.18183564869481744,
        0.22222198563424087,
        0.2857142874247558,
        0.39999999999414315,
        0.6666666666666734,
    ),
    ln2=0.6931471805599453,
    ln2_hi=0.6931471805598903,  # 42 significant bits
    ln2_lo=5.497923018708371e-14,
    inv_ln2_hi=1.4426950408889634,
    inv_ln2_lo=2.0355273740931033e-17,
    inv_ln10_hi=0.4342944819032518,
    inv_ln10_lo=1.098319650216765e-17,
    log10_2_hi=0.30102999566395283,  # 42 significant bits
    log10_2_lo=2.8363394551044964e-14,
    log1p_tiny=2.0**-54,
    atanh_limit=0.1715,
)

_F32 = _Constants(
    zero=np.float32(0.0),
    half=np.float32(0.5),
    one=np.float32(1.0),
    two=np.float32(2.0),
    inf=np.float32(np.inf),
    nan=np.float32(np.nan),
    tiny=np.float32(2.0**-126),
    subnormal_scale=np.float32(2.0**23),
    subnormal_shift=np.int32(23),
    int_zero=np.int32(0),
    sqrt_half_bits=np.int32(0x3F3504F3),
    mantissa_mask=np.int32((1 << 23) - 1),
    mantissa_bits=np.int32(23),
    poly=(
        np.float32(0.29871863),
        np.float32(0.39977536),
        np.float32(0.66666776),
    ),
    ln2=np.float32(0.6931472),
    ln2_hi=np.float32(0.69314575),  # 16 significant bits
    ln2_lo=np.float32(1.4286068e-06),
    inv_ln2_hi=np.float32(1.442695),
    inv_ln2_lo=np.float32(1.925963e-08),
    inv_ln10_hi=np.float32(0.4342945),
    inv_ln10_lo=np.float32(-1.010305e-08),
    log10_2_hi=np.float32(0.30103302),  # 16 significant bits
    log10_2_lo=np.float32(-3.0243555e-06),
    log1p_tiny=np.float32(2.0**-25),
    atanh_limit=np.float32(0.1715),
)


@_inline
def _reduce(x, c):
    """``(k, f)``, ``x = 2**k * (1 + f)`` with ``1 + f`` in [sqrt(2)/2, sqrt(2)) (finite x > 0)."""
    subnormal = x < c.tiny
    x = select(subnormal, x * c.subnormal_scale, x)
    offset = isub(as_int(x), c.sqrt_half_bits)
    k = isub(ishr(offset, c.mantissa_bits), select(subnormal, c.subnormal_shift, c.int_zero))
    mantissa = as_float(iadd(iand(offset, c.mantissa_mask), c.sqrt_half_bits))
    return to_float(k), mantissa - c.one


@_inline
def _atanh_tail(s, c):
    """``2 atanh(s) - 2s = s R(s**2)`` for ``|s| <= 3 - 2 sqrt(2)``."""
    z = s * s
    return s * (z * horner(z, c.poly))


@_inline
def _log1p_reduced(f, c):
    """``log(1 + f)`` for the reduced ``f`` as the word pair ``(f, low)``."""
    s = f / (c.two + f)
    half_f2 = c.half * f * f
    # log(1 + f) = f - f**2/2 + s (f**2/2 + R(s**2))
    return f, fma(s, half_f2 + (s * s) * horner(s * s, c.poly), -half_f2)


@_inline
def _ln(k, high, low, c):
    """``k ln 2 + high + low`` as a word pair ``(total, small)`` (``high + low = log(1 + f)``)."""
    k_ln2 = k * c.ln2_hi
    total = k_ln2 + high
    total_error = (k_ln2 - total) + high  # exact: |k ln 2| > |high| unless k == 0
    return total, total_error + fma(k, c.ln2_lo, low)


@_inline
def _positive_domain(x, y, c):
    """``y`` for finite x > 0; for the rest the logarithm's values: -inf, NaN, inf, NaN."""
    y = select(x > c.zero, y, select(x == c.zero, -c.inf, c.nan))
    return select(x < c.inf, y, x)


@_inline
def _log(x, c):
    k, f = _reduce(x, c)
    high, low = _log1p_reduced(f, c)
    total, small = _ln(k, high, low, c)
    return _positive_domain(x, total + small, c)


@_inline
def _log2(x, c):
    k, f = _reduce(x, c)
    high, low = _log1p_reduced(f, c)
    scaled = high * c.inv_ln2_hi
    scaled_error = fma(high, c.inv_ln2_hi, -scaled)
    total = k + scaled
    total_error = (k - total) + scaled  # exact: |k| >= 1 > |high / ln 2| unless k == 0
    small = fma(high, c.inv_ln2_lo, fma(low, c.inv_ln2_hi, scaled_error))
    return _positive_domain(x, total + (total_error + small), c)


@_inline
def _log10(x, c):
    k, f = _reduce(x, c)
    high, low = _log1p_reduced(f, c)
    k_scaled = k * c.log10_2_hi
    scaled = high * c.inv_ln10_hi
    scaled_error = fma(high, c.inv_ln10_hi, -scaled)
    total = k_scaled + scaled
    total_error = (k_scaled - total) + scaled  # exact: |k log10 2| > |high / ln 10| unless k == 0
    small = fma(k, c.log10_2_lo, fma(high, c.inv_ln10_lo, fma(low, c.inv_ln10_hi, scaled_error)))
    return _positive_domain(x, total + (total_error + small), c)


@_inline
def _log1p_parts(x, x_low, c):
    """``log1p(x + x_low)`` (``|x_low|`` tiny) as a word pair, meaningful for finite x > -1."""
    u = x + c.one
    rounding = (x - (u - c.one)) + x_low  # log1p(x + x_low) = log(u) + rounding / u
    k, f = _reduce(u, c)
    high, low = _log1p_reduced(f, c)
    return _ln(k, high, low + rounding / u, c)


@_inline
def _log1p(x, c):
    total, small = _log1p_parts(x, c.zero, c)
    y = _positive_domain(x + c.one, total + small, c)
    return select(abs(x) < c.log1p_tiny, x, y)


@_inline
def _logaddexp(x, y, c, exp):
    """NumPy's ``npy_logaddexp``, with ``x - y`` and ``log1p`` kept to twice the precision."""
    difference = x - y
    shift = difference - x
    difference_error = (x - (difference - shift)) + (-y - shift)  # two-sum: x - y exactly
    gap = -abs(difference)
    gap_error = select(difference > c.zero, -difference_error, difference_error)
    gap_error = select(abs(difference) < c.inf, gap_error, c.zero)
    exp_gap = exp(gap)  # in [0, 1], or NaN
    # exp(gap + gap_error) = exp_gap + exp_gap * gap_error
    high, low = _log1p_parts(exp_gap, exp_gap * gap_error, c)
    larger = select(difference > c.zero, x, y)
    total = larger + high
    shift = total - larger
    total_error = (larger - (total - shift)) + (high - shift)  # two-sum: larger + high exactly
    result = total + (total_error + low)
    # larger infinite: exp_gap is 0, or NaN when the other operand is NaN
    result = select(abs(larger) < c.inf, result, larger + exp_gap)
    return select(x == y, x + c.ln2, result)


@_inline
def _logit(x, c):
    centred = c.two * x - c.one  # exact for x >= 1/4
    near_half = centred * c.two + _atanh_tail(centred, c)
    complement = c.one - x
    complement_error = (c.one - complement) - x  # 1 - x = complement + complement_error
    ratio = x / complement
    ratio_error = fma(-ratio, complement, x)  # x = ratio * complement + ratio_error
    # log(x / (1 - x)) = log(ratio) + ratio_error / x - complement_error / (1 - x), to first order
    correction = (ratio_error - ratio * complement_error) / x
    k, f = _reduce(ratio, c)
    high, low = _log1p_reduced(f, c)
    total, small = _ln(k, high, low + correction, c)
    y = select(abs(centred) < c.atanh_limit, near_half, total + small)
    y = select(x > c.zero, y, select(x == c.zero, -c.inf, c.nan))
    return select(x < c.one, y, select(x == c.one, c.inf, c.nan))


@_inline
def log_f64(x):
    """Natural logarithm of a float64."""
    return _log(x, _F64)


@_inline
def log_f32(x):
    """Natural logarithm of a float32, computed in float32."""
    return _log(x, _F32)


@_inline
def log2_f64(x):
    """Base-2 logarithm of a float64 (exact on powers of two)."""
    return _log2(x, _F64)


@_inline
def log2_f32(x):
    """Base-2 logarithm of a float32 (exact on powers of two), computed in float32."""
    return _log2(x, _F32)


@_inline
def log10_f64(x):
    """Base-10 logarithm of a float64."""
    return _log10(x, _F64)


@_inline
def log10_f32(x):
    """Base-10 logarithm of a float32, computed in float32."""
    return _log10(x, _F32)


@_inline
def log1p_f64(x):
    """``log(1 + x)`` of a float64, accurate for small x."""
    return _log1p(x, _F64)


@_inline
def log1p_f32(x):
    """``log(1 + x)`` of a float32, accurate for small x, computed in float32."""
    return _log1p(x, _F32)


@_inline
def logaddexp_f64(x, y):
    """``log(exp(x) + exp(y))`` of float64s without overflow (NumPy's algorithm)."""
    return _logaddexp(x, y, _F64, exp_f64)


@_inline
def logaddexp_f32(x, y):
    """``log(exp(x) + exp(y))`` of float32s without overflow (NumPy's algorithm), in float32."""
    return _logaddexp(x, y, _F32, exp_f32)


@_inline
def logit_f64(x):
    """``log(x / (1 - x))`` of a float64, as ``scipy.special.logit``."""
    return _logit(x, _F64)


@_inline
def logit_f32(x):
    """``log(x / (1 - x))`` of a float32, as ``scipy.special.logit``, computed in float32."""
    return _logit(x, _F32)


TEMPLATES = (
    MathTemplate("log", 1, (0.9, 0.9)),
    MathTemplate("log2", 1, (1.1, 1.1)),
    MathTemplate("log10", 1, (1.05, 1.0)),
    MathTemplate("log1p", 1, (0.95, 0.9)),
    MathTemplate("logaddexp", 2, (1.75, 1.75)),
    MathTemplate("logit", 1, (1.0, 1.0)),
)
