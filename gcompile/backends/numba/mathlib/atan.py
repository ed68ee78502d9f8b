"""Inverse tangent: ``arctan`` and ``arctan2``, branch-free for float32 and float64; ``arcsin``
and ``arccos`` through ``arctan2``.

``arctan2(y, x)`` (NumPy's argument order) works on the magnitudes. With ``hi = max(|x|, |y|)``
and ``lo = min(|x|, |y|)`` the angle ``A = atan(lo / hi)`` lies in [0, pi/4]. When
``lo > hi / 2`` it is folded once more: ``A = pi/4 + atan(z)`` with ``z = (lo - hi) / (lo + hi)``
(|z| <= 1/3), otherwise ``z = lo / hi`` (z <= 1/2). The fold is at 1/2 rather than at
tan(pi/8) = 0.414, which would balance the two ranges, because from 1/2 on ``lo - hi`` is exact
(Sterbenz). Folding at tan(pi/8) rounds it for ratios in (0.414, 0.5), which cost 0.4 ulp there
(worst 1.87 ulp instead of 1.47 in the same sweep); the price is one more coefficient. Both
magnitudes are scaled by 1/4 when ``hi`` exceeds 2**1000 (float64) or 2**120 (float32), so
``lo + hi`` cannot overflow (a ``lo`` that loses bits to the scaling gives a ratio that
underflows anyway).

``atan(z) = z + z * w * P(w)`` with ``w = z*z``; ``P`` is a minimax polynomial for the relative
error of atan on |z| <= 1/2 (12 coefficients for float64, relative error 7.7e-18; 6 for float32,
4.5e-10), fitted by a Remez exchange in mpmath at 50 digits and rounded to the dtype.

The octant is restored as ``m * pi/4 + s * atan(z)``, with an integer ``m`` in [0, 4] and
``s = +-1`` chosen by selects from whether ``|y| > |x|``, the sign bit of ``x`` and the fold.
``pi/4`` is split into a high part with two trailing zero bits (``m * PI_4_HI`` is exact) and a
low part, and ``m * PI_4_HI + s * z`` is carried with its exact rounding error (Fast2Sum), so the
error left is essentially that of ``z`` (the rounding of ``lo + hi`` and of the division) and the
final rounding. The sign of ``y`` is copied onto the result (the angle before it is >= 0).

Special pairs are NumPy's (C99 ``atan2``): ``0/0`` and ``inf/inf`` make ``z`` NaN, which is
replaced by 0 so that the octant constant alone is the answer (0, pi/4, pi/2, 3pi/4 or pi; for
zeros the sign bit of ``x`` chooses 0 or pi, so atan2(+-0, -0) = +-pi); a NaN operand gives NaN.

``arctan(x)`` is ``arctan2(x, 1)``: the same code with ``|x|`` against 1 and the sign of x.
``arcsin(x)`` is ``arctan2(x, sqrt((1 - x)(1 + x)))`` and ``arccos(x)`` is
``arctan2(sqrt((1 - x)(1 + x)), x)``: ``1 - x`` is exact near 1 (Sterbenz), so no bits are lost
where the square root is small; |x| > 1 makes the square root NaN, as NumPy's result.

Measured worst errors: arctan 1.44 ulp (float64, the test's sweep plus 6.4e7 inputs around the
fold), 1.38 ulp (float32, every float32); arctan2 1.59 ulp (float64), 1.52 ulp (float32), over
the test's sweep plus 9.6e7 pairs at all angles; against NumPy in long double (float64) or
float64 (float32). All crossed special pairs give NumPy's result. arcsin and arccos: 2.16 ulp
(float32) and 2.11 ulp (float64) over the test's sweep, which crowds both ends of [-1, 1]. NumPy's own float32 arctan2 is
up to 3.3 ulp off (``shared/notes/vector-math.md``).
"""

from __future__ import annotations

import math

import numpy as np

from .bits import as_float, as_int, fma, iand, inline_in_numba_ir, ior, select
from .template import MathTemplate

_inline = inline_in_numba_ir

# float64 -------------------------------------------------------------------------------------

PI_4_HI_F64 = 0.7853981633974483  # pi/4 rounded to 51 bits: m * PI_4_HI_F64 is exact for m <= 4
PI_4_LO_F64 = 3.061616997868383e-17
SCALE_ABOVE_F64 = 2.0**1000
SIGN_F64 = np.int64(-(2**63))
ZERO_I64 = np.int64(0)
INF_F64 = np.inf

# P(w) for atan(z) = z + z * w * P(w), w = z*z <= 1/4.
ATAN_F64 = (
    -0.33333333333333176,
    0.19999999999939072,
    -0.1428571427868118,
    0.11111110731267065,
    -0.09090897502043567,
    0.07692087054745986,
    -0.0666389199614657,
    0.058585638902880446,
    -0.0512216025268046,
    0.0418460650606341,
    -0.02737389146301874,
    0.010056505592359809,
)
A0_F64, A1_F64, A2_F64, A3_F64, A4_F64, A5_F64, A6_F64, A7_F64, A8_F64, A9_F64, A10_F64, A11_F64 = (
    ATAN_F64
)


@_inline
def _atan_poly_f64(w):
    p = fma(w, A11_F64, A10_F64)
    p = fma(w, p, A9_F64)
    p = fma(w, p, A8_F64)
    p = fma(w, p, A7_F64)
    p = fma(w, p, A6_F64)
    p = fma(w, p, A5_F64)
    p = fma(w, p, A4_F64)
    p = fma(w, p, A3_F64)
    p = fma(w, p, A2_F64)
    p = fma(w, p, A1_F64)
    return fma(w, p, A0_F64)


@_inline
def _angle_f64(ay, ax, x_negative):
    """atan2(|y|, x) in [0, pi] from ``ay = |y|``, ``ax = |x|`` and the sign bit of x."""
    swap = ay > ax
    hi = select(swap, ay, ax)
    lo = select(swap, ax, ay)
    scale = select(hi > SCALE_ABOVE_F64, 0.25, 1.0)
    hi = hi * scale
    lo = lo * scale
    folded = (lo > 0.5 * hi) | (lo == INF_F64)
    z = select(folded, lo - hi, lo) / select(folded, lo + hi, hi)
    z = select(z == z, z, 0.0)  # 0/0 and inf/inf: the octant constant alone is the angle
    s = select(swap == x_negative, 1.0, -1.0)
    m = select(swap, 2.0, select(x_negative, 4.0, 0.0)) + select(folded, s, 0.0)
    zs = s * z
    k_hi = m * PI_4_HI_F64
    head = k_hi + zs
    tail = (k_hi - head) + zs  # exact: |k_hi| >= |zs| or k_hi == 0
    return head + (tail + fma(zs * (z * z), _atan_poly_f64(z * z), m * PI_4_LO_F64))


@_inline
def _copysign_f64(magnitude, sign_source):
    """``magnitude`` (sign bit clear) with the sign bit of ``sign_source``."""
    return as_float(ior(as_int(magnitude), iand(as_int(sign_source), SIGN_F64)))


@_inline
def arctan2_f64(y, x):
    """The angle of the point (x, y), in [-pi, pi], as ``numpy.arctan2(y, x)`` for float64."""
    angle = _angle_f64(abs(y), abs(x), as_int(x) < ZERO_I64)
    return select((x != x) | (y != y), x + y, _copysign_f64(angle, y))


@_inline
def arctan_f64(x):
    """The inverse tangent of a float64, in [-pi/2, pi/2], as ``numpy.arctan``."""
    angle = _angle_f64(abs(x), 1.0, False)
    return select(x != x, x, _copysign_f64(angle, x))


# float32 -------------------------------------------------------------------------------------

PI_4_HI_F32 = np.float32(0.78539824)  # pi/4 rounded to 22 bits: m * PI_4_HI_F32 is exact
PI_4_LO_F32 = np.float32(-8.146034e-08)
SCALE_ABOVE_F32 = np.float32(2.0**120)
SIGN_F32 = np.int32(-(2**31))
ZERO_I32 = np.int32(0)
INF_F32 = np.float32(np.inf)
ZERO_F32 = np.float32(0.0)
QUARTER_F32 = np.float32(0.25)
HALF_F32 = np.float32(0.5)
ONE_F32 = np.float32(1.0)
MINUS_ONE_F32 = np.float32(-1.0)
TWO_F32 = np.float32(2.0)
FOUR_F32 = np.float32(4.0)

A0_F32 = np.float32(-0.33333328)
A1_F32 = np.float32(0.19999538)
A2_F32 = np.float32(-0.14272335)
A3_F32 = np.float32(0.109391205)
A4_F32 = np.float32(-0.07965979)
A5_F32 = np.float32(0.038353913)


@_inline
def _atan_poly_f32(w):
    p = fma(w, A5_F32, A4_F32)
    p = fma(w, p, A3_F32)
    p = fma(w, p, A2_F32)
    p = fma(w, p, A1_F32)
    return fma(w, p, A0_F32)


@_inline
def _angle_f32(ay, ax, x_negative):
    """atan2(|y|, x) in [0, pi] from ``ay = |y|``, ``ax = |x|`` and the sign bit of x."""
    swap = ay > ax
    hi = select(swap, ay, ax)
    lo = select(swap, ax, ay)
    scale = select(hi > SCALE_ABOVE_F32, QUARTER_F32, ONE_F32)
    hi = hi * scale
    lo = lo * scale
    folded = (lo > HALF_F32 * hi) | (lo == INF_F32)
    z = select(folded, lo - hi, lo) / select(folded, lo + hi, hi)
    z = select(z == z, z, ZERO_F32)  # 0/0 and inf/inf: the octant constant alone is the angle
    s = select(swap == x_negative, ONE_F32, MINUS_ONE_F32)
    m = select(swap, TWO_F32, select(x_negative, FOUR_F32, ZERO_F32)) + select(folded, s, ZERO_F32)
    zs = s * z
    k_hi = m * PI_4_HI_F32
    head = k_hi + zs
    tail = (k_hi - head) + zs  # exact: |k_hi| >= |zs| or k_hi == 0
    return head + (tail + fma(zs * (z * z), _atan_poly_f32(z * z), m * PI_4_LO_F32))


@_inline
def _copysign_f32(magnitude, sign_source):
    """``magnitude`` (sign bit clear) with the sign bit of ``sign_source``."""
    return as_float(ior(as_int(magnitude), iand(as_int(sign_source), SIGN_F32)))


@_inline
def arctan2_f32(y, x):
    """The angle of the point (x, y), in [-pi, pi], as ``numpy.arctan2(y, x)`` for float32."""
    angle = _angle_f32(abs(y), abs(x), as_int(x) < ZERO_I32)
    return select((x != x) | (y != y), x + y, _copysign_f32(angle, y))


@_inline
def arctan_f32(x):
    """The inverse tangent of a float32, in [-pi/2, pi/2], as ``numpy.arctan``."""
    angle = _angle_f32(abs(x), ONE_F32, False)
    return select(x != x, x, _copysign_f32(angle, x))


# arcsin and arccos -------------------------------------------------------------------------------


@_inline
def arcsin_f64(x):
    """The inverse sine of a float64, as ``numpy.arcsin``: ``arctan2(x, sqrt((1 - x)(1 + x)))``."""
    return arctan2_f64(x, math.sqrt((1.0 - x) * (1.0 + x)))


@_inline
def arccos_f64(x):
    """The inverse cosine of a float64, as ``numpy.arccos``: ``arctan2(sqrt((1 - x)(1 + x)), x)``."""
    return arctan2_f64(math.sqrt((1.0 - x) * (1.0 + x)), x)


@_inline
def arcsin_f32(x):
    """The inverse sine of a float32, as ``numpy.arcsin`` (see ``arcsin_f64``)."""
    return arctan2_f32(x, math.sqrt((ONE_F32 - x) * (ONE_F32 + x)))


@_inline
def arccos_f32(x):
    """The inverse cosine of a float32, as ``numpy.arccos`` (see ``arccos_f64``)."""
    return arctan2_f32(math.sqrt((ONE_F32 - x) * (ONE_F32 + x)), x)


TEMPLATES = (
    MathTemplate("arctan", 1, (1.5, 1.75)),
    MathTemplate("arctan2", 2, (1.75, 1.75)),
    MathTemplate("arcsin", 1, (2.25, 2.25)),
    MathTemplate("arccos", 1, (2.25, 2.25)),
)
