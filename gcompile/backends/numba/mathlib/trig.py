"""sin, cos and tan: one Cody-Waite reduction, two polynomials, the quadrant by bits.

All three share the reduction and the evaluation of sin and cos on the reduced argument, carried
in two words so that each result is rounded about once:

* **Reduction** (``_reduce``). ``q = round(x * 2/pi)`` by adding and subtracting ``1.5 *
  2**mantissa_bits`` in one fma; ``n mod 4`` is in the low bits of the sum (a bit cast reads
  it). pi/2 is split into three words ``pio2_hi + pio2_mid + pio2_lo`` (to within 2**-163 in
  float64, 2**-76 in float32). ``r1 = x - q pio2_hi`` is exact in one fma: once q != 0,
  ``|x| > pi/4`` so x and ``q pio2_hi`` lie on the grid of ``ulp(pio2_hi) / 2`` and ``|r1| < 1``.
  ``q pio2_mid`` is taken as a rounded product plus its exact error (an fma), and its
  subtraction from r1 is a fast two-sum, exact here because r1 lies on the grid of the product's
  ulp; ``q pio2_lo`` joins the low word. The result ``r = rh + rl`` is within about
  ``q 2**-159`` (float64) or ``q 2**-71`` (float32) of ``x - q pi/2``.
* **sin and cos of r** (``_sin_cos_parts``). ``sin r = r + r**3 S(r**2)`` and ``cos r = 1 -
  r**2/2 + r**4 C(r**2)``; S and C are weighted Remez minimax fits (mpmath, relative error of sin
  and of cos; coefficients rounded to the dtype one at a time, the rest refitted): 6 + 6
  coefficients for |r| <= 0.79 in float64 (fit error 2**-57.8 and 2**-63.8), 4 + 3 for
  |r| <= 0.875 in float32 (2**-32.1 and 2**-31.3). Near the range limit ``x * 2/pi``
  rounded can miss the nearest integer, and |r| exceeds pi/4: the float64 interval covers
  that up to 2**46, the float32 one up to 2**21 (beyond, up to 2**22, |r| reaches 0.95 and
  the polynomials still meet the bound). ``r**3`` is carried with its rounding errors
  (``rh**2`` and ``rh * rh**2`` from fma residuals), ``rl`` enters sin as ``rl cos r`` and
  cos as ``-rh rl``, ``r**2/2`` is subtracted from 1 with its rounding error kept, and each
  result is ``high + tail`` summed once (fast two-sum, the low word kept for tan).
* **Quadrant.** ``sin(n pi/2 + r)`` is sin r, cos r, -sin r, -cos r for ``n mod 4 = 0..3``
  (a select on bit 0, then bit 1 of n shifted to the sign bit and XORed in); cos uses
  ``n + 1``. ``tan(n pi/2 + r)`` is ``sin r / cos r`` for even n, ``-cos r / sin r`` for odd n:
  the quotient of the two word pairs is the product by the reciprocal corrected once by its
  exact residual. sin(-0) and tan(-0) need a select (the sums turn -0 into +0).

Range limit: the fast path meets the bound for ``|x| <= 2**45`` in float64 and ``|x| <= 2**22``
in float32 (``range_limit``); generated loops flag larger arguments and recompute them with
libm. Beyond the limit the result is meaningless but nothing raises; inf and NaN give NaN.

* float32: the rounding trick needs ``|x * 2/pi| < 2**22``; every float32 in [0, 2**22] was
  checked against float64 NumPy (the expansion is odd/even bit for bit).
* float64: per binade, the smallest ``|x mod pi/2|`` is bounded below by the convergents of
  ``ulp * 2/pi`` (2**-60.5 at worst, near 2**5; 2**-54.9 near 2**44), so the reduction's
  relative error stays below 2**-58 up to 2**45. The tests sweep the doubles nearest to
  multiples of pi/2 from those convergents, where sin is tiny.

Worst error (ulp of the correctly rounded result; float32 over every float32 up to the limit,
float64 over 4 * 10**7 inputs and the tests): sin 0.78 / 0.65, cos 0.76 / 0.65, tan 0.81 /
0.74 (float32 / float64); below 2**21, float32 stays within 0.65 (sin, cos) and 0.75 (tan).
Every function is branch-free (selects), and float32 runs in float32 with int32 lanes.
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
    ishl,
    ishr,
    ixor,
    select,
)
from .template import MathTemplate

_inline = inline_in_numba_ir

LIMIT_F64 = 2.0**45
LIMIT_F32 = 2.0**22


class _Constants(NamedTuple):
    """Every constant of the expansions, typed to one dtype (Numba freezes them as literals)."""

    zero: float
    half: float
    one: float
    int_zero: int
    int_one: int
    sign_bit: int  # position of the sign bit
    two_over_pi: float
    shifter: float  # 1.5 * 2**mantissa_bits: t + shifter - shifter rounds t to an integer
    pio2_hi: float  # pi/2 = pio2_hi + pio2_mid + pio2_lo
    pio2_mid: float
    pio2_lo: float
    sin_poly: tuple  # S(z), highest degree first: sin r = r + r**3 S(r**2)
    cos_poly: tuple  # C(z), highest degree first: cos r = 1 - r**2/2 + r**4 C(r**2)


_F64 = _Constants(
    zero=0.0,
    half=0.5,
    one=1.0,
    int_zero=np.int64(0),
    int_one=np.int64(1),
    sign_bit=np.int64(63),
    two_over_pi=0.6366197723675814,
    shifter=6755399441055744.0,
    pio2_hi=1.5707963267948966,
    pio2_mid=6.123233995736766e-17,
    pio2_lo=-1.4973849048591698e-33,
    sin_poly=(
        1.5893462710745614e-10,
        -2.5050701024394242e-08,
        2.7557313329899286e-06,
        -0.00019841269828771606,
        0.008333333333321128,
        -0.16666666666666627,
    ),
    cos_poly=(
        -1.1357264527557733e-11,
        2.0875676842340506e-09,
        -2.755731400737405e-07,
        2.4801587288274786e-05,
        -0.0013888888888872167,
        0.04166666666666659,
    ),
)

_F32 = _Constants(
    zero=np.float32(0.0),
    half=np.float32(0.5),
    one=np.float32(1.0),
    int_zero=np.int32(0),
    int_one=np.int32(1),
    sign_bit=np.int32(31),
    two_over_pi=np.float32(0.63661975),
    shifter=np.float32(12582912.0),
    pio2_hi=np.float32(1.5707964),
    pio2_mid=np.float32(-4.371139e-08),
    pio2_lo=np.float32(-1.7151245e-15),
    sin_poly=(
        np.float32(2.7714818e-06),
        np.float32(-0.00019847609),
        np.float32(0.008333368),
        np.float32(-0.16666667),
    ),
    cos_poly=(np.float32(2.4345596e-05), np.float32(-0.001388648), np.float32(0.041666627)),
)


@_inline
def _reduce(x, c):
    """``(bits, rh, rl)``: ``x = n pi/2 + rh + rl`` with ``n mod 4`` in the low bits of ``bits``."""
    shifted = fma(x, c.two_over_pi, c.shifter)
    q = shifted - c.shifter
    r1 = fma(-q, c.pio2_hi, x)
    product = q * c.pio2_mid
    product_error = fma(q, c.pio2_mid, -product)
    rh = r1 - product
    rh_error = (r1 - rh) - product
    rl = fma(-q, c.pio2_lo, rh_error - product_error)
    return as_int(shifted), rh, rl


@_inline
def _sin_cos_parts(x, c):
    """``(bits, sin_hi, sin_lo, cos_hi, cos_lo)``: sin and cos of the reduced x as word pairs.

    sin and cos drop the low words, and LLVM the work that only they need.
    """
    bits, rh, rl = _reduce(x, c)
    z = rh * rh
    z_error = fma(rh, rh, -z)
    hz = c.half * z
    cube = rh * z
    cube_error = fma(rh, z, -cube) + rh * z_error  # rh**3 = cube + cube_error
    sin_poly = horner(z, c.sin_poly)
    # sin(rh + rl) = rh + rh**3 S + rl (1 - rh**2/2)
    sin_tail = fma(cube, sin_poly, fma(cube_error, sin_poly, fma(-hz, rl, rl)))
    sin_hi = rh + sin_tail
    sin_lo = (rh - sin_hi) + sin_tail
    # cos(rh + rl) = 1 - (hz + hz_error) + rh**4 C, with hz_error = z_error/2 + rh rl
    hz_error = fma(c.half, z_error, rh * rl)
    w = c.one - hz
    cos_tail = fma(z * z, horner(z, c.cos_poly), ((c.one - w) - hz) - hz_error)
    cos_hi = w + cos_tail
    cos_lo = (w - cos_hi) + cos_tail
    return bits, sin_hi, sin_lo, cos_hi, cos_lo


@_inline
def _quadrant(n, sin_r, cos_r, c):
    """sin(n pi/2 + r): sin r, cos r, -sin r, -cos r for ``n mod 4 = 0..3``."""
    value = select(iand(n, c.int_one) == c.int_zero, sin_r, cos_r)
    sign = ishl(ishr(n, c.int_one), c.sign_bit)  # bit 1 of n, moved to the sign bit
    return as_float(ixor(as_int(value), sign))


@_inline
def _sin(x, c):
    bits, sin_r, _, cos_r, _ = _sin_cos_parts(x, c)
    return select(x == c.zero, x, _quadrant(bits, sin_r, cos_r, c))


@_inline
def _cos(x, c):
    bits, sin_r, _, cos_r, _ = _sin_cos_parts(x, c)
    return _quadrant(iadd(bits, c.int_one), sin_r, cos_r, c)


@_inline
def _tan(x, c):
    bits, sin_hi, sin_lo, cos_hi, cos_lo = _sin_cos_parts(x, c)
    odd = iand(bits, c.int_one) != c.int_zero
    num_hi = select(odd, cos_hi, sin_hi)
    num_lo = select(odd, cos_lo, sin_lo)
    den_hi = select(odd, sin_hi, cos_hi)
    den_lo = select(odd, sin_lo, cos_lo)
    inverse = c.one / den_hi
    quotient = num_hi * inverse
    residual = fma(-quotient, den_hi, num_hi) + fma(-quotient, den_lo, num_lo)
    quotient = fma(residual, inverse, quotient)
    signed = as_float(ixor(as_int(quotient), ishl(bits, c.sign_bit)))  # odd n: bit 0 to the sign
    return select(x == c.zero, x, signed)


@_inline
def sin_f64(x):
    """sin of a float64 (within the bound for ``|x| <= 2**45``)."""
    return _sin(x, _F64)


@_inline
def sin_f32(x):
    """sin of a float32, in float32 (within the bound for ``|x| <= 2**22``)."""
    return _sin(x, _F32)


@_inline
def cos_f64(x):
    """cos of a float64 (within the bound for ``|x| <= 2**45``)."""
    return _cos(x, _F64)


@_inline
def cos_f32(x):
    """cos of a float32, in float32 (within the bound for ``|x| <= 2**22``)."""
    return _cos(x, _F32)


@_inline
def tan_f64(x):
    """tan of a float64 (within the bound for ``|x| <= 2**45``)."""
    return _tan(x, _F64)


@_inline
def tan_f32(x):
    """tan of a float32, in float32 (within the bound for ``|x| <= 2**22``)."""
    return _tan(x, _F32)


_LIMITS = (LIMIT_F32, LIMIT_F64)
TEMPLATES = (
    MathTemplate("sin", 1, (0.8, 0.7), range_limit=_LIMITS),
    MathTemplate("cos", 1, (0.8, 0.7), range_limit=_LIMITS),
    MathTemplate("tan", 1, (0.85, 0.8), range_limit=_LIMITS),
)
