"""Scalar helpers that generated kernels call where NumPy's semantics differ from Numba's.

Each reproduces the NumPy C loop for one element: integer division and modulo by
zero give 0 (NumPy warns, we cannot), ``INT_MIN // -1`` wraps instead of
trapping, shifts by at least the bit width give 0 (or -1), ``maximum``/``minimum``
propagate NaN and keep the second operand on ties (``maximum(0.0, -0.0)`` is
``-0.0``), float ``floor_divide``/``remainder`` follow ``npy_divmod``. LLVM inlines
them into the loop. Results may come back wider than the loop dtype (Numba
promotes small integers); the generated code casts every result to the node's dtype.

The end of the module holds the flat view of an array's memory, what split loops use: a stack buffer for one block of values and
the eight-lane reductions of such a block; then what the online-max loop of ``online`` calls.
"""

from __future__ import annotations

import math

import numpy as np
from llvmlite import ir
from numba import njit
from numba.core import cgutils, types
from numba.core.imputils import impl_ret_borrowed
from numba.extending import intrinsic
from numba.np.arrayobj import make_array, populate_array

from . import mathlib

_jit = njit(error_model="numpy", cache=True, nogil=True)


@_jit
def int_floor_divide(a, b):
    """``np.floor_divide`` on integers: 0 for a zero divisor, wrap-around for ``MIN // -1``."""
    if b == 0:
        return a - a
    if b == -1:
        return -a
    return a // b


@_jit
def int_remainder(a, b):
    """``np.remainder`` on integers (the divisor's sign), 0 for a zero divisor."""
    if b == 0 or b == -1:
        return a - a
    return a % b


@_jit
def int_fmod(a, b):
    """``np.fmod`` on integers (the dividend's sign), 0 for a zero divisor."""
    if b == 0 or b == -1:
        return a - a
    r = a % b
    if r != 0 and (r < 0) != (a < 0):
        r -= b
    return r


@_jit
def float_divmod(a, b):
    """``(floor_divide, remainder)`` of floats, as NumPy's ``npy_divmod``."""
    mod = np.fmod(a, b)
    if b == 0:
        return a / b, mod
    div = (a - mod) / b
    if mod != 0:
        if (b < 0) != (mod < 0):
            mod += b
            div -= 1.0
    else:
        mod = math.copysign(0.0, b)
    if div != 0:
        floordiv = np.floor(div)
        if div - floordiv > 0.5:
            floordiv += 1.0
    else:
        floordiv = math.copysign(0.0, a / b)
    return floordiv, mod


@_jit
def float_floor_divide(a, b):
    """``np.floor_divide`` on floats."""
    return float_divmod(a, b)[0]


@_jit
def float_remainder(a, b):
    """``np.remainder`` on floats."""
    return float_divmod(a, b)[1]


@_jit
def int_power(a, b):
    """``np.power`` on integers: repeated squaring with wrap-around; negative powers raise."""
    if b < 0:
        raise ValueError("Integers to negative integer powers are not allowed.")
    result = a - a + 1
    while b != 0:
        if b & 1:
            result = result * a
        a = a * a
        b = b >> 1
    return result


@_jit
def complex_power(a, b):
    """``np.power`` on complex numbers as NumPy computes it: an integer exponent below 100 by
    repeated squaring (a negative one: the reciprocal of that), any other as ``exp(b log a)``."""
    one = a - a + 1
    if b.real == 0.0 and b.imag == 0.0:
        return one
    if a.real == 0.0 and a.imag == 0.0:
        return a - a if b.real > 0 and b.imag == 0 else (a - a) * np.nan
    if b.imag != 0.0 or b.real != math.floor(b.real) or not -100 < b.real < 100:
        return np.exp(b * np.log(a))
    n = int(b.real)
    if n == 1 or n == 2 or n == 3:
        return a if n == 1 else (a * a if n == 2 else a * a * a)
    m = -n if n < 0 else n
    result, square, mask = one, a, 1
    while True:
        if m & mask:
            result = result * square
        mask <<= 1
        if m < mask:
            break
        square = square * square
    return one / result if n < 0 else result


@_jit
def complex_multiply(a, b):
    """``np.multiply`` of complex numbers as NumPy's vector loops compute it on a machine with
    FMA (``rules.NUMPY_FUSES_COMPLEX``): the real part ``fma(ar, br, -(ai bi))``, the
    imaginary one ``fma(ar, bi, ai br)``, each rounded once where ``*`` rounds twice. The
    caller casts the result (a complex of the parts' precision) to the loop's type."""
    real = fused_multiply_add(a.real, b.real, -(a.imag * b.imag))
    imag = fused_multiply_add(a.real, b.imag, a.imag * b.real)
    return complex(real, imag)


@_jit
def complex_divide(a, b, one):
    """``np.divide`` of complex numbers as NumPy's loops compute it (Smith's algorithm, scaled
    by a reciprocal; ``one`` is 1 in the parts' type): the same bits, and inf or nan for a zero
    divisor where Numba's division (CPython's) raises. The caller casts the result (a complex
    of the parts' precision) to the loop's type."""
    ar, ai, br, bi = a.real, a.imag, b.real, b.imag
    br_abs, bi_abs = abs(br), abs(bi)
    if br_abs >= bi_abs:
        if br_abs == 0 and bi_abs == 0:
            return complex(ar / br_abs, ai / br_abs)
        ratio = bi / br
        scale = one / (br + bi * ratio)
        return complex((ar + ai * ratio) * scale, (ai - ar * ratio) * scale)
    ratio = br / bi
    scale = one / (bi + br * ratio)
    return complex((ar * ratio + ai) * scale, (ai * ratio - ar) * scale)


@intrinsic
def fused_multiply_add(typingctx, a, b, c):
    """``a * b + c`` rounded once (LLVM's ``fma``), for floats of one type."""
    if not isinstance(a, types.Float) or not a == b == c:
        return None

    def codegen(context, builder, signature, args):
        kind = args[0].type
        fma = builder.module.declare_intrinsic(
            "llvm.fma", [kind], ir.FunctionType(kind, [kind] * 3)
        )
        return builder.call(fma, args)

    return a(a, b, c), codegen


@_jit
def complex_abs(z):
    """``np.absolute`` of a complex number as NumPy's vector loop computes it (not libm's
    ``hypot``, which differs from it by an ulp on a third of the values): the larger part
    times ``sqrt(fma(ratio, ratio, 1))``, ratio the smaller part over the larger."""
    re, im = abs(z.real), abs(z.imag)
    if re == np.inf or im == np.inf:
        return re if re == np.inf else im
    if re != re or im != im:
        return re + im  # (NaN)
    larger, smaller = max(re, im), min(re, im)
    if larger == 0:
        return larger
    ratio, one = smaller / larger, larger / larger  # (one of the parts' own type)
    return np.sqrt(fused_multiply_add(ratio, ratio, one)) * larger


@_jit
def maximum(a, b):
    """``np.maximum``: NaN wins, ties keep the second operand."""
    return a if (a > b or a != a) else b


@_jit
def minimum(a, b):
    """``np.minimum``: NaN wins, ties keep the second operand."""
    return a if (a < b or a != a) else b


@_jit
def fmax(a, b):
    """``np.fmax``: NaN loses unless both are NaN."""
    return a if (a > b or b != b) else b


@_jit
def fmin(a, b):
    """``np.fmin``: NaN loses unless both are NaN."""
    return a if (a < b or b != b) else b


@_jit
def left_shift(a, b, bits):
    """``np.left_shift``: a shift by ``bits`` or more (or a negative one) gives 0."""
    if b < 0 or b >= bits:
        return a - a
    return a << b


@_jit
def right_shift(a, b, bits):
    """``np.right_shift``: a shift by ``bits`` or more gives 0, or -1 for a negative ``a``."""
    if b < 0 or b >= bits:
        return a - a - 1 if a < 0 else a - a
    return a >> b


@_jit
def heaviside(x, h0):
    """``np.heaviside``: 0 below zero, ``h0`` at zero, 1 above, NaN for NaN."""
    if x < 0:
        return 0.0
    if x == 0:
        return h0
    if x > 0:
        return 1.0
    return x


@_jit
def sign(x):
    """``np.sign`` of a real number (NaN stays NaN)."""
    if x > 0:
        return 1
    if x < 0:
        return -1
    if x == 0:
        return 0
    return x


@_jit
def bitwise_count(x):
    """``np.bitwise_count``: the 1-bits of ``|x|``."""
    v = np.uint64(abs(np.int64(x))) if x < 0 else np.uint64(x)
    count = 0
    while v != 0:
        v &= v - np.uint64(1)
        count += 1
    return count


@_jit
def int_reciprocal(x, of_zero):
    """``np.reciprocal`` on integers: ``1 // x`` in C; ``of_zero`` is what NumPy's loop gives for 0
    on this machine (the caller asks NumPy)."""
    if x == 0:
        return of_zero
    if x == 1 or x == -1:
        return x
    return x - x


@_jit
def round_decimals(x, decimals):
    """``np.round(x, decimals)`` of a float, as NumPy's loop: scale, round half to even, unscale."""
    if decimals >= 0:
        f = 10.0**decimals
        return np.rint(x * f) / f
    f = 10.0 ** (-decimals)
    return np.rint(x / f) * f


# -- blocks of a split loop: values are computed by a vector loop into a block buffer, then
# reduced here with eight independent partial results (NumPy's pairwise unrolling), which
# LLVM turns into vector operations; one running total would add one element per latency.


@intrinsic
def flat(typingctx, array):
    """A contiguous array's memory as one C axis, sharing its data (``reshape(-1)`` in memory
    order without Numba's general reshape, which costs a kernel ~0.1 s to compile).

    An array Numba types as of any layout (``A``: a view a program made, ``w[None]``) is taken
    when the graph's layout says it is contiguous, and checked at run time."""
    if not isinstance(array, types.Array):
        return None
    result = array.copy(ndim=1, layout="C")

    def codegen(context, builder, signature, args):
        source = make_array(array)(context, builder, args[0])
        if array.layout not in ("C", "F"):
            dense = builder.or_(
                _dense(builder, source, array.ndim, reversed(range(array.ndim))),
                _dense(builder, source, array.ndim, range(array.ndim)),
            )
            with builder.if_then(builder.not_(dense), likely=False):
                context.call_conv.return_user_exc(
                    builder, RuntimeError, ("gcompile: a view taken as contiguous is not",)
                )
        view = make_array(result)(context, builder)
        populate_array(
            view,
            data=source.data,
            shape=cgutils.pack_array(builder, [source.nitems]),
            strides=cgutils.pack_array(builder, [source.itemsize]),
            itemsize=source.itemsize,
            meminfo=source.meminfo,
            parent=source.parent,
        )
        return impl_ret_borrowed(context, builder, result, view._getvalue())

    return result(array), codegen


def _dense(builder, source, ndim: int, axes) -> object:
    """Whether an array's strides, taken along ``axes`` from the fastest, are those of dense
    memory (C order: the last axis first; F: the first), axes of length 1 aside."""
    shape = cgutils.unpack_tuple(builder, source.shape, ndim)
    strides = cgutils.unpack_tuple(builder, source.strides, ndim)
    expected = source.itemsize
    dense = cgutils.true_bit
    for axis in axes:
        single = builder.icmp_signed("==", shape[axis], shape[axis].type(1))
        matches = builder.icmp_signed("==", strides[axis], expected)
        dense = builder.and_(dense, builder.or_(single, matches))
        expected = builder.mul(expected, shape[axis])
    return dense


@intrinsic
def block_buffer(typingctx, like, size):
    """Pointer to ``size`` (a literal) elements of ``like``'s type on the calling function's stack.

    The slot is allocated once in the function's entry block, so a loop asking for it every
    iteration (a ``prange`` body is its own function, one per thread) costs nothing.
    """
    like = types.unliteral(like)
    if not isinstance(size, types.IntegerLiteral) or not isinstance(
        like, (types.Number, types.Boolean)
    ):
        return None
    count = size.literal_value

    def codegen(context, builder, signature, args):
        return cgutils.alloca_once(builder, context.get_data_type(like), size=count)

    return types.CPointer(like)(like, size), codegen


@_jit
def lane_sum(buf, m, zero):
    """Sum of ``buf[:m]`` by eight partial sums, combined pairwise (``zero`` gives the type)."""
    r0 = r1 = r2 = r3 = r4 = r5 = r6 = r7 = zero
    j = 0
    while j + 8 <= m:
        r0 += buf[j]
        r1 += buf[j + 1]
        r2 += buf[j + 2]
        r3 += buf[j + 3]
        r4 += buf[j + 4]
        r5 += buf[j + 5]
        r6 += buf[j + 6]
        r7 += buf[j + 7]
        j += 8
    total = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while j < m:
        total += buf[j]
        j += 1
    return total


def _lane_fold(combine):
    """A reduction of ``buf[:m]`` (m >= 1) by an idempotent ``combine``, eight lanes at a time."""

    def fold(buf, m):
        r0 = r1 = r2 = r3 = r4 = r5 = r6 = r7 = buf[0]
        j = 0
        while j + 8 <= m:
            r0 = combine(r0, buf[j])
            r1 = combine(r1, buf[j + 1])
            r2 = combine(r2, buf[j + 2])
            r3 = combine(r3, buf[j + 3])
            r4 = combine(r4, buf[j + 4])
            r5 = combine(r5, buf[j + 5])
            r6 = combine(r6, buf[j + 6])
            r7 = combine(r7, buf[j + 7])
            j += 8
        r0 = combine(
            combine(combine(r0, r1), combine(r2, r3)), combine(combine(r4, r5), combine(r6, r7))
        )
        while j < m:
            r0 = combine(r0, buf[j])
            j += 1
        return r0

    # no disk cache: a closure's cache key differs in every process (see float_lane_max)
    return njit(error_model="numpy", nogil=True)(fold)


@_jit
def _or(a, b):
    return a | b


@_jit
def _and(a, b):
    return a & b


lane_max = _lane_fold(maximum)
lane_min = _lane_fold(minimum)
lane_any = _lane_fold(_or)
lane_all = _lane_fold(_and)


# Float blocks: LLVM's SLP vectoriser leaves the eight scalar partial results above scalar, so
# for float buffers the partial results are one explicit 8-wide vector.
_LANES = 8


def _vector_fold(kind: str):
    """An intrinsic folding ``array[:count]`` (count a multiple of 8, float elements) into 8
    vector lanes by ``kind`` ("sum", "max", "min") and the lanes pairwise into one value of
    ``like``'s type (a sum widens float32 elements to a float64 ``like`` exactly)."""

    def combine(builder, a, b):
        if kind == "sum":
            return builder.fadd(a, b)
        # NumPy's maximum/minimum: the first operand if it wins or is NaN, else the second
        wins = builder.fcmp_ordered(">" if kind == "max" else "<", a, b)
        return builder.select(builder.or_(wins, builder.fcmp_unordered("uno", a, a)), a, b)

    def typer(typingctx, array, count, like):
        floats = isinstance(array, types.Array) and isinstance(array.dtype, types.Float)
        if not (floats and isinstance(like, types.Float)):
            return None
        if kind != "sum" and like != array.dtype:
            return None

        def codegen(context, builder, signature, args):
            data = context.make_array(array)(context, builder, args[0]).data
            count = args[1]
            element = context.get_value_type(array.dtype)
            result = context.get_value_type(like)
            loaded_type = ir.VectorType(element, _LANES)
            lanes_type = ir.VectorType(result, _LANES)

            def load(offset):
                pointer = builder.bitcast(builder.gep(data, [offset]), loaded_type.as_pointer())
                value = builder.load(pointer, align=1)
                return value if element == result else builder.fpext(value, lanes_type)

            if kind == "sum":
                start = ir.Constant(lanes_type, [ir.Constant(result, 0.0)] * _LANES)
            else:
                start = load(ir.Constant(count.type, 0))
            slot = cgutils.alloca_once_value(builder, start)
            blocks = builder.udiv(count, ir.Constant(count.type, _LANES))
            with cgutils.for_range(builder, blocks) as loop:
                offset = builder.mul(loop.index, ir.Constant(count.type, _LANES))
                builder.store(combine(builder, builder.load(slot), load(offset)), slot)
            lanes_value = builder.load(slot)
            lanes = [
                builder.extract_element(lanes_value, ir.Constant(ir.IntType(32), k))
                for k in range(_LANES)
            ]
            while len(lanes) > 1:
                lanes = [combine(builder, a, b) for a, b in zip(lanes[::2], lanes[1::2])]
            return lanes[0]

        return like(array, count, like), codegen

    typer.__name__ = f"vector_{kind}"
    return intrinsic(typer)


_vector_sum = _vector_fold("sum")
_vector_max = _vector_fold("max")
_vector_min = _vector_fold("min")


@_jit
def float_lane_sum(buf, m, zero):
    """``lane_sum`` of a float buffer: eight vector lanes, then the remaining m % 8 in order."""
    whole = m & ~7
    total = _vector_sum(buf, whole, zero)
    for j in range(whole, m):
        total += buf[j]
    return total


# The two folds below are written out, not made by a factory: Numba keys a closure's disk cache
# on the pickled objects it captures, which differ in every process, so a closure never loads
# from the cache (it was compiled again in every process, ~70 ms, its cache one entry longer).


@_jit
def float_lane_max(buf, m):
    """The largest of a float buffer's ``buf[:m]`` (m >= 1) by eight vector lanes, then
    ``maximum`` over the remaining m % 8 in order."""
    whole = m & ~7
    result = _vector_max(buf, whole, buf[0]) if whole else buf[0]
    for j in range(whole, m):
        result = maximum(result, buf[j])
    return result


@_jit
def float_lane_min(buf, m):
    """``float_lane_max`` for the smallest (``minimum``)."""
    whole = m & ~7
    result = _vector_min(buf, whole, buf[0]) if whole else buf[0]
    for j in range(whole, m):
        result = minimum(result, buf[j])
    return result


# -- the online-max loop (``online``): a block's exps against a new reference max, and the
# row's sum scaled from the last reference to the row's max.


@_jit
def shifted_exp_f32(values, out, count, ref):
    """``out[:count] = exp(values[:count] - ref)`` in float32 (a vector loop)."""
    for j in range(count):
        out[j] = mathlib.exp_f32(values[j] - ref)


@_jit
def shifted_exp_f64(values, out, count, ref):
    """``out[:count] = exp(values[:count] - ref)`` in float64 (a vector loop)."""
    for j in range(count):
        out[j] = mathlib.exp_f64(values[j] - ref)


@_jit
def rescaled_total(total, ref, top):
    """``total * exp(ref - top)``: a sum of ``exp(x - ref)`` as the sum of ``exp(x - top)``; NaN
    when ``top`` (the row's max) is not finite, as NumPy's ``x - top`` then has a NaN."""
    if not (-np.inf < top < np.inf):
        return np.nan
    if ref == top:
        return total
    return total * math.exp(np.float64(ref) - np.float64(top))


@_jit
def length_carrier(n):
    """``np.empty(n, dtype=bool)`` with NumPy's error for a negative ``n``: the vector whose
    length makes a traced integer a size in a loop program (``externs.CARRIER``)."""
    if n < 0:
        raise ValueError("negative dimensions are not allowed")
    return np.empty(n, np.bool_)
