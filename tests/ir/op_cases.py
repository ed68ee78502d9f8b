"""Realistic uses of every op that the generic ufunc tests do not reach, and of every decomposition.

``CASES`` maps a target to its cases. A target is an op name from
``gcompile.ir.ops.OPS`` (every op except the ufunc-backed elementwise ones,
which ``test_ops.py`` generates from the table) or a NumPy callable that is a
key of ``gcompile.frontend.decompositions.DECOMPOSITIONS``. Each ``Case`` is a small function
written the way users write NumPy, the arguments to build for it and the dtypes
it applies to. ``ERROR_CASES`` are calls that NumPy rejects; tracing them must
raise the same exception.

``test_ops.py`` runs every case through ``tests.support.check`` for each of its
dtypes, and fails when an op or a decomposition has no case.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

BOOL = (np.bool_,)
INTS = (np.int8, np.int32, np.int64, np.uint8, np.uint32)
FLOATS = (np.float32, np.float64)
COMPLEX = (np.complex128,)
BOTH_COMPLEX = (np.complex64, np.complex128)
REAL = INTS + FLOATS
NUMERIC = REAL + COMPLEX
ALL = BOOL + NUMERIC
SIGNED = (np.int8, np.int32, np.int64) + FLOATS
LINALG = (np.float32, np.float64, np.int64, np.complex64, np.complex128)  # NumPy's linalg
FFT = (np.float32, np.float64, np.int32, np.complex64, np.complex128)

FORMS = ("C", "F", "strided", "reversed", "readonly", "scalar")


@dataclass(frozen=True)
class Arg:
    """One argument to build.

    Attributes:
        shape: the argument's shape.
        form: ``"C"``, ``"F"`` (Fortran order), ``"strided"`` (every other element of a
            bigger array along each axis), ``"reversed"`` (negative strides), ``"readonly"``
            (a C array that is not writeable) or ``"scalar"`` (a NumPy scalar of shape ``()``).
        dtype: a fixed dtype, or None for the dtype the case runs with.
    """

    shape: tuple
    form: str = "C"
    dtype: Any = None

    def __post_init__(self) -> None:
        if self.form not in FORMS:
            raise ValueError(f"unknown argument form {self.form!r}")
        if self.form == "scalar" and self.shape != ():
            raise ValueError("a NumPy scalar argument has shape ()")


@dataclass(frozen=True)
class Case:
    """A function, the arguments to call it with, and the dtypes to run it for.

    ``dtypes`` is ``(None,)`` when every argument has a fixed dtype (or there is
    none): the case then runs once. With ``specials``, float and complex
    arguments include nan, inf and -0.0.
    """

    fn: Callable
    args: tuple
    dtypes: tuple
    specials: bool = False


def _block_of_one_written(x):
    y = np.block(x)
    y[0] = -1
    return x, y


def case(fn: Callable, *args: tuple | Arg, dtypes: tuple = ALL, specials: bool = False) -> Case:
    """A ``Case``; a plain tuple argument is a C-order array of that shape."""
    built = tuple(a if isinstance(a, Arg) else Arg(a) for a in args)
    if all(a.dtype is not None for a in built):
        dtypes = (None,)
    return Case(fn, built, dtypes, specials)


def F(shape: tuple) -> Arg:  # upper case, like NumPy's order="F"
    """A Fortran-order array argument."""
    return Arg(shape, "F")


def strided(shape: tuple) -> Arg:
    """A non-contiguous view argument: ``base[::2, ::2]``."""
    return Arg(shape, "strided")


def reversed_(shape: tuple) -> Arg:
    """A negative-stride view argument: ``base[::-1, ::-1]``."""
    return Arg(shape, "reversed")


def scalar() -> Arg:
    """A NumPy scalar argument (``np.float32(1.5)``)."""
    return Arg((), "scalar")


def of(shape: tuple, dtype: Any) -> Arg:
    """A C-order array argument of a fixed dtype."""
    return Arg(shape, dtype=dtype)


def _fill_empty(x):
    out = np.empty((2, 3), dtype=x.dtype)
    out[...] = x
    return out


def _empty_f(x):
    out = np.empty(x.shape, x.dtype, order="F")
    out[:] = x * 2
    return out


def _empty_like_then_fill(x):
    out = np.empty_like(x)
    out.fill(3)
    return out


def _empty_like_assign(x):
    out = np.empty_like(x, dtype=np.float64)
    out[...] = x
    out[0] = -1
    return out


def _setitem_row(x, row):
    x[1] = row
    return x


def _setitem_scalar(x):
    x[0, 1] = 7
    return x


def _setitem_broadcast(x):
    x[:, ::2] = x[0, ::2]
    return x


def _setitem_inplace_slice(x):
    x[1:] += 1
    return x


def _setitem_fresh(x):
    out = np.zeros_like(x)
    out[1:] = x[:-1]
    return out


def _setitem_ellipsis(x, y):
    x[...] = y
    return None


def _setitem_view_chain(x):
    v = x.T
    v[0] = 5
    return x


def _put_element(x, k):
    x[k[1] % 3] = x[0]
    return x


def _put_region(x, k):
    out = np.zeros_like(x)
    out[k[0] % 2 - 2, 1:] = x[0, :-1]
    return out, x


def _put_through_view(x, k):
    x.T[1, k[0] % 3 - 3] = 7
    return x


def _put_counts(x, k):
    for i in range(k.shape[0]):
        x[k[i] % 3] += 1
    return x


def _set_real_region(z, x):
    z.real[1:] = x
    return z


def _zero_imag_row(z):
    z.imag[0] = 0
    return z


def _shift_real(z):
    z.real += 1
    return z


def _write_through_part(z):
    part = z.imag.T  # a view of the part: the write reaches z
    part[0] = -1
    return z, part


def _part_sees_later_write(z):
    before = z.real
    z *= 2
    return before, z


def _copy_is_independent(x):
    y = x.copy()
    y[0] = 0
    return x, y


def _array_is_a_copy(x):
    y = np.array(x)
    y[...] = 1
    return x, y


def _array_no_copy_aliases(x):
    y = np.array(x, copy=False)
    y[0] = 0
    return x


def _asarray_aliases(x):
    y = np.asarray(x)
    y[-1] = 1
    return y


def _asarray_c_copies(x):
    y = np.asarray(x, order="C")
    y[0] = 0
    return x, y


def _copyto(dst, src):
    np.copyto(dst, src)


def _copyto_unsafe(dst, src):
    np.copyto(dst, src, casting="unsafe")
    return dst


def _copyto_scalar(dst):
    np.copyto(dst, 3)
    return dst


def _fill_diagonal(a, values):
    np.fill_diagonal(a, values)


def _fill_diagonal_scalar(a):
    np.fill_diagonal(a, 7)
    return a * 2


def _imatmul(a, b):
    a @= b
    return a


def _clip_inplace(x):
    np.clip(x, 0, 3, out=x)
    return x


def _eigh(a):
    w, v = np.linalg.eigh(a + a.T)  # (unpacked: compiled, the result is a tuple, not EighResult)
    return w, np.abs(v)  # (an eigenvector's sign is the library's choice)


def _printed(x):
    print("x", x.shape, x.sum(axis=0))
    return x * 2


def _checked_sum(x):  # (a def: the user's raising tests are converted, not lambdas')
    if np.isnan(x.sum()):
        raise ValueError("a NaN in x")
    assert x.size == 0 or x.max() >= x.min(), "unordered"
    return x * 2


def _times_int_of_sum(x):
    return x * int(x.sum() / 3)  # (a def: lambdas are not converted, int() is not offered)


def _plus_float_of_max(x):
    return x + float(x.max())


CASES: dict[Any, list[Case]] = {
    # -- elementwise, not ufuncs -------------------------------------------------------------------
    "where": [
        case(lambda x: np.where(x > 0, x, 0), (3, 4), dtypes=NUMERIC),
        case(lambda c, a, b: np.where(c, a, b), of((3, 1), np.bool_), (1, 4), (4,)),
        case(lambda c, a: np.where(c, a, -1.5), of((2, 3), np.bool_), (2, 3), dtypes=SIGNED),
        case(lambda x: np.where(x != 0, np.float32(1), x), F((3, 4))),
        case(lambda x, y: np.where(x < y, y, x), strided((3, 4)), reversed_((3, 4)), dtypes=REAL),
        case(lambda x: np.where(x, 1, 0), (), dtypes=ALL),
        case(lambda x: np.where(x > 1, x, x * 2), (0, 3), dtypes=REAL),
    ],
    "clip": [
        case(lambda x: x.clip(min=0), (3, 4), dtypes=REAL),
        case(lambda x: x.clip(-1, 1), (2, 3), dtypes=SIGNED),
        case(lambda x: x.clip(max=2), strided((5,)), dtypes=REAL),
        case(lambda x: x.clip(1, None), F((3, 4)), dtypes=REAL),
    ],
    "round": [
        case(lambda x: np.round(x), (2, 3), dtypes=NUMERIC),
        case(lambda x: np.round(x, 1), (2, 3), dtypes=NUMERIC),
        case(lambda x: np.around(x, decimals=-1), (4,), dtypes=NUMERIC),
        case(lambda x: x.round(2), reversed_((5,)), dtypes=FLOATS),
        case(lambda x: np.round(x * 3.7, 1), (), dtypes=FLOATS),
        case(lambda x: np.round(x), scalar(), dtypes=FLOATS),
        case(lambda x: round(x, 1), scalar(), dtypes=FLOATS),
    ],
    "astype": [
        case(lambda x: x.astype(np.float32), (2, 3)),
        case(lambda x: x.astype(np.int32), F((3, 4)), dtypes=REAL),
        case(lambda x: x.astype(bool), (5,)),
        case(lambda x: x.astype(np.complex128), strided((3, 2))),
        # (for int8 input this returns x itself and records nothing)
        case(lambda x: x.astype(np.int8, copy=False), (4,), dtypes=(np.int32, np.float64)),
        case(lambda x: np.astype(x, np.float64) / 2, (2, 2)),
        case(lambda x: x.astype(np.int64), scalar(), dtypes=REAL),
        case(lambda x: x.astype(np.float32), (), dtypes=REAL),
        case(lambda x: np.abs(x).astype(np.uint8), (3,), dtypes=REAL),
    ],
    # -- complex parts (np.abs and np.conj are ufuncs: complex128 is in the sweep, complex64 here)
    "real": [
        case(lambda z: z.real, of((2, 3), np.complex64)),
        case(lambda z: z.real * 2, of((3, 4), np.complex128), specials=True),
        case(lambda z, x: z.real + x, of((3, 1), np.complex64), of((1, 4), np.float32)),
        case(lambda z: z.real, F((3, 4)), dtypes=BOTH_COMPLEX, specials=True),
        case(lambda z: z.real, strided((3, 2)), dtypes=BOTH_COMPLEX),
        case(lambda z: z.real, reversed_((5,)), dtypes=BOTH_COMPLEX),
        case(lambda z: z.real, (), dtypes=BOTH_COMPLEX),
        case(lambda z: z.real, scalar(), dtypes=BOTH_COMPLEX),
        case(lambda z: z.real, (0, 3), dtypes=BOTH_COMPLEX),
        case(_part_sees_later_write, (3,), dtypes=BOTH_COMPLEX),
    ],
    "imag": [
        case(lambda z: z.imag, of((2, 3), np.complex128), specials=True),
        case(lambda z: z.imag - z.real, of((3, 4), np.complex64)),
        case(lambda x: x.imag + x, of((2, 3), np.int32)),  # zeros of a real array
        case(lambda z: z.imag, F((3, 4)), dtypes=BOTH_COMPLEX),
        case(lambda z: z.imag, strided((3, 2)), dtypes=BOTH_COMPLEX),
        case(lambda z: z.imag, reversed_((5,)), dtypes=BOTH_COMPLEX),
        case(lambda z: z.imag, (), dtypes=BOTH_COMPLEX),
        case(lambda z: z.imag, scalar(), dtypes=BOTH_COMPLEX),
        case(lambda z: z.imag, (0, 3), dtypes=BOTH_COMPLEX),
        case(lambda x: x.imag, (2, 3), dtypes=BOOL + REAL),
        case(lambda x: x.imag, scalar(), dtypes=REAL),
    ],
    "complex": [  # writes into a part of a complex array
        case(_set_real_region, of((3, 4), np.complex64), of((4,), np.float64)),
        case(_zero_imag_row, of((3, 4), np.complex128), specials=True),
        # (a complex value: its real part is written)
        case(_set_real_region, F((3, 4)), (4,), dtypes=BOTH_COMPLEX),
        case(_shift_real, strided((3, 2)), dtypes=BOTH_COMPLEX),
        case(_zero_imag_row, reversed_((4, 2)), dtypes=BOTH_COMPLEX),
        case(_shift_real, (), dtypes=BOTH_COMPLEX),
        case(_shift_real, (0, 2), dtypes=BOTH_COMPLEX),
        case(_write_through_part, (2, 3), dtypes=BOTH_COMPLEX),
    ],
    "absolute": [  # a complex magnitude as NumPy's vector loop computes it (not libm's hypot)
        case(lambda z: np.abs(z), of((3, 4), np.complex64), specials=True),
        case(lambda z: np.abs(z) + abs(z[::-1]) * 2, (5, 4), dtypes=BOTH_COMPLEX, specials=True),
    ],
    "conjugate": [
        case(lambda z: z.conj() * z, of((3, 4), np.complex64), specials=True),
        case(lambda x: np.conj(x), (3,), dtypes=REAL),
    ],
    "copy": [
        case(lambda x: np.copy(x), (2, 3)),
        case(lambda x: x.copy(), F((3, 4))),
        case(_copy_is_independent, (3,)),
        case(lambda x: x.flatten(), strided((3, 2))),
        case(lambda x: np.copy(x), scalar()),
    ],
    # -- reductions --------------------------------------------------------------------------------
    "sum": [
        case(lambda x: np.sum(x), (2, 3)),
        case(lambda x: x.sum(axis=1), (2, 3)),
        case(lambda x: np.sum(x, axis=(0, 2), keepdims=True), (2, 3, 4)),
        case(lambda x: x.sum(axis=-1), F((3, 4))),
        case(lambda x: np.sum(x, axis=0, dtype=np.float64), strided((3, 4))),
        case(lambda x: x.sum(0, keepdims=True), reversed_((4, 2))),
        case(lambda x: np.add.reduce(x, axis=1), (2, 3)),
        case(lambda x: np.add.reduce(x), (4, 2)),
        case(lambda x: np.sum(x), ()),
        case(lambda x: np.sum(x, axis=0), (0, 3)),
        case(lambda x: x.sum(), (0,)),
        case(lambda x: np.sum(x), scalar()),
        case(lambda x: x.sum(keepdims=True), Arg((2, 3), "readonly")),
    ],
    "prod": [
        case(lambda x: np.prod(x), (2, 3)),
        case(lambda x: x.prod(axis=0), (3, 4)),
        case(lambda x: np.prod(x, axis=(-1, -2), keepdims=True), (2, 2, 3)),
        case(lambda x: np.prod(x, axis=1, dtype=np.int8), strided((2, 3)), dtypes=INTS),
        case(lambda x: np.multiply.reduce(x, axis=-1), F((3, 3))),
        case(lambda x: x.prod(), (0, 2)),
    ],
    "mean": [
        case(lambda x: np.mean(x), (2, 3)),
        case(lambda x: x.mean(axis=0), (3, 4)),
        case(lambda x: np.mean(x, axis=(1, 2), keepdims=True), (2, 3, 4)),
        case(lambda x: x.mean(axis=-1, dtype=np.float32), F((3, 4)), dtypes=REAL),
        case(lambda x: np.mean(x), ()),
        case(lambda x: np.mean(x), (0,), dtypes=NUMERIC),
        case(lambda x: x - x.mean(axis=1, keepdims=True), strided((3, 4)), dtypes=NUMERIC),
    ],
    "amax": [
        case(lambda x: np.max(x), (2, 3), specials=True),
        case(lambda x: np.amax(x, axis=0), (3, 4), specials=True),
        case(lambda x: x.max(axis=-1, keepdims=True), F((3, 4))),
        case(lambda x: np.max(x, axis=(0, 1)), (2, 3, 2)),
        case(lambda x: np.maximum.reduce(x, axis=1), strided((3, 4))),
        case(lambda x: x.max(), scalar()),
        case(lambda x: np.max(x, axis=1), (0, 3)),
    ],
    "amin": [
        case(lambda x: np.min(x), (2, 3), specials=True),
        case(lambda x: np.amin(x, axis=1, keepdims=True), (3, 4)),
        case(lambda x: x.min(axis=0), reversed_((3, 4))),
        case(lambda x: np.minimum.reduce(x), (4, 2)),
        case(lambda x: x.min(axis=(1, 2)), (2, 2, 3)),
    ],
    "argmax": [
        case(lambda x: np.argmax(x), (2, 3), specials=True),
        case(lambda x: x.argmax(axis=1), (3, 4)),
        case(lambda x: np.argmax(x, axis=0, keepdims=True), F((3, 4))),
        case(lambda x: np.argmax(x, axis=-1), strided((2, 3, 4))),
        case(lambda x: x.argmax(), ()),
        case(lambda x: np.argmax(x, keepdims=True), (2, 3)),
    ],
    "argmin": [
        case(lambda x: np.argmin(x), (2, 3), specials=True),
        case(lambda x: x.argmin(axis=0), reversed_((3, 4))),
        case(lambda x: np.argmin(x, axis=1, keepdims=True), (2, 5)),
    ],
    "any": [
        case(lambda x: np.any(x), (2, 3)),
        case(lambda x: (x > 1).any(axis=0), (3, 4), dtypes=REAL),
        case(lambda x: np.any(x, axis=(0, 1), keepdims=True), F((2, 3))),
        case(lambda x: np.logical_or.reduce(x, axis=1), (3, 4)),
        case(lambda x: x.any(), (0,)),
    ],
    "all": [
        case(lambda x: np.all(x), (2, 3)),
        case(lambda x: x.all(axis=-1), strided((3, 4))),
        case(lambda x: np.all(x != 0, axis=0, keepdims=True), (3, 4)),
        case(lambda x: np.logical_and.reduce(x), (4, 2)),
        case(lambda x: np.all(x), ()),
    ],
    "var": [
        case(lambda x: np.var(x), (2, 3)),
        case(lambda x: x.var(axis=0, ddof=1), (4, 3)),
        case(lambda x: np.var(x, axis=(0, 2), keepdims=True), (2, 3, 4)),
        case(lambda x: x.var(axis=-1, dtype=np.float64), F((3, 4)), dtypes=REAL),
    ],
    "std": [
        case(lambda x: np.std(x), (2, 3)),
        case(lambda x: x.std(ddof=1), (5,)),
        case(lambda x: np.std(x, axis=1, keepdims=True), strided((3, 4))),
        case(lambda x: (x - x.mean(axis=0)) / x.std(axis=0), (4, 3), dtypes=REAL),
    ],
    "cumsum": [
        case(lambda x: np.cumsum(x), (2, 3)),
        case(lambda x: x.cumsum(axis=0), (3, 4)),
        case(lambda x: np.cumsum(x, axis=-1, dtype=np.float64), F((3, 4))),
        case(lambda x: np.add.accumulate(x, axis=1), strided((2, 3))),
        case(lambda x: np.add.accumulate(x), (4,)),
        case(lambda x: x.cumsum(), ()),
        case(lambda x: np.cumsum(x, axis=0), (0, 2)),
    ],
    "reduce": [
        case(lambda x: np.subtract.reduce(x), (3, 2), dtypes=NUMERIC),
        case(lambda x: np.bitwise_or.reduce(x, axis=1), (3, 4), dtypes=BOOL + INTS),
        case(lambda x: np.logical_xor.reduce(x, axis=-1, keepdims=True), F((2, 3))),
        case(lambda x: np.fmax.reduce(x, axis=(0, 1)), (2, 3, 2), dtypes=REAL, specials=True),
        case(lambda x: np.hypot.reduce(x, axis=None), strided((2, 3)), dtypes=FLOATS),
        case(lambda x: np.bitwise_and.reduce(x, axis=0, dtype=np.int64), (3, 2), dtypes=INTS),
        case(lambda x: np.gcd.reduce(x), (4,), dtypes=INTS),
        case(lambda x: np.subtract.reduce(x, axis=1), (0, 2), dtypes=NUMERIC),
    ],
    "accumulate": [
        case(lambda x: np.maximum.accumulate(x), (5,), specials=True),
        case(lambda x: np.minimum.accumulate(x, axis=1), (3, 4)),
        case(lambda x: np.subtract.accumulate(x, axis=-1), F((2, 3)), dtypes=NUMERIC),
        case(lambda x: np.logical_or.accumulate(x), reversed_((4, 2))),
        case(lambda x: np.bitwise_xor.accumulate(x, dtype=np.int64), strided((3, 2)), dtypes=INTS),
    ],
    "cumprod": [
        case(lambda x: np.cumprod(x), (2, 3)),
        case(lambda x: x.cumprod(axis=1), (3, 4)),
        case(lambda x: np.multiply.accumulate(x, axis=0), reversed_((3, 2))),
        case(lambda x: np.cumprod(x, dtype=np.float32), (4,), dtypes=REAL),
    ],
    # -- linear algebra ----------------------------------------------------------------------------
    "callback": [case(_printed, (2, 3), dtypes=(np.int32,))],  # (print: on each call)
    "python_scalar": [  # int(), float(), np.allclose's bool of a traced scalar: weak, as Python's
        case(_times_int_of_sum, (3, 2), dtypes=(np.float32, np.uint32)),
        case(lambda x: x * np.allclose(x, x[::-1]), (2, 3), dtypes=(np.float32, np.int8)),
        case(_plus_float_of_max, strided((2, 4)), dtypes=(np.int64,)),
    ],
    "raise_unless": [case(_checked_sum, (2, 3), dtypes=(np.float64, np.int16))],  # (if ...: raise)
    "check": [  # a maximum or minimum of a boolean-mask gather (``frontend/masks.py``)
        case(lambda x: x[x > 0].max() - x[x <= 2].min(), (3, 4), dtypes=FLOATS, specials=True),
        case(lambda x: x[x[:, 0] >= x[:, 1]].max(axis=0), strided((6, 3)), dtypes=(np.int8,)),
        case(lambda x: x[x != 3].min(), F((2, 5)), dtypes=(np.uint32, np.bool_)),
    ],
    "put": [  # a write at positions read from the data (a negative one from the end)
        case(_put_element, (3,), of((4,), np.int64)),
        case(_put_region, F((2, 4)), of((3,), np.int32)),
        case(_put_through_view, strided((3, 2)), of((2,), np.int16)),
        case(_put_counts, (3,), of((5,), np.int64), dtypes=NUMERIC),
    ],
    "element": [  # an element at a position read from the data (a negative one from the end)
        case(lambda x, k: x[k[1] % 3], (3,), of((4,), np.int64)),
        case(lambda x, k: x[1, k[0] % 4 - 4] * 2, strided((2, 4)), of((3,), np.int32)),
        case(lambda x, k: x[k[0] % 2, k[2] % 3], F((2, 3)), of((3,), np.uint8)),
        # a region beside the positions (a copy of NumPy's view): a row, slices, ``...``
        case(lambda x, k: x[k[1] % 3] * 2, (3, 4), of((2,), np.int64)),
        case(lambda x, k: x[1:, k[0] % 4 - 4] * 2, F((3, 4)), of((3,), np.int16)),
        case(lambda x, k: x[..., k[0] % 3][::2] + 1, strided((5, 3)), of((2,), np.int32)),
    ],
    np.linalg.norm: [  # (a whole array: the default order, and orders that are reductions)
        case(lambda a: np.linalg.norm(a), (3, 4), dtypes=ALL),
        case(
            lambda v: tuple(np.linalg.norm(v, p) for p in (np.inf, -np.inf, 0, 1)),
            strided((7,)),
            dtypes=FLOATS + BOTH_COMPLEX,
        ),
        case(lambda a: (np.linalg.norm(a, 1), np.linalg.norm(a, np.inf)), F((4, 3))),
        case(lambda a: np.linalg.norm(a.T), strided((4, 3)), dtypes=FLOATS + BOTH_COMPLEX),
        case(lambda a: np.linalg.norm(a), (), dtypes=FLOATS),
    ],
    np.cov: [
        case(lambda m: np.cov(m), (3, 8), dtypes=REAL + BOTH_COMPLEX),
        case(lambda m, y: np.cov(m, y, rowvar=False), (9, 2), F((9, 3)), dtypes=FLOATS),
        case(lambda m: np.cov(m, rowvar=False, ddof=0), F((6, 2)), dtypes=FLOATS),
        case(lambda v: np.cov(v, bias=True), (7,), dtypes=FLOATS),
    ],
    np.linspace: [  # bounds from the data (the ``linspace`` op takes constant ones)
        case(lambda x: np.linspace(x.min(), x.max(), 9) * 2, (3, 4), dtypes=REAL),
        case(lambda x: np.linspace(x[0], x[1], x.shape[0], endpoint=False), strided((6,))),
        case(lambda x: np.linspace(x[2], -3.0, 7, dtype=np.int32), (4,), dtypes=FLOATS),
        case(lambda x: np.linspace(0.5, x[0], 5, retstep=True)[::-1], (2,), dtypes=FLOATS),
        case(lambda x: np.linspace(x[0], x[0], 4) + np.linspace(x[1], 2, 1), (2,), dtypes=FLOATS),
    ],
    np.corrcoef: [
        case(lambda m: np.corrcoef(m), (3, 8), dtypes=FLOATS + BOTH_COMPLEX),
        case(lambda x, y: np.corrcoef(x, y)[0, 1], (12,), (12,), dtypes=(np.float64,)),
        case(lambda m: np.corrcoef(m, rowvar=False), strided((6, 2)), dtypes=(np.float64,)),
    ],
    "extern": [  # library calls NumPy runs (``ir/externs.py``): shapes and dtypes inferred
        # (lstsq: the residuals' length the data decide: one per column of b, or none when
        # the columns are dependent or the rows too few)
        case(lambda a, b: np.linalg.lstsq(a, b, rcond=None), (6, 3), (6,), dtypes=LINALG),
        case(lambda a, b: np.linalg.lstsq(a, b, rcond=None)[::2], strided((5, 2)), F((5, 3))),
        case(lambda a, b: np.linalg.lstsq(np.hstack([a, a]), b)[1:3], (4, 2), (4, 2)),
        case(lambda a, b: np.linalg.lstsq(a, b, rcond=1e-3)[0] * 2, (2, 3), (2,)),
        # (set operations: sorted vectors of lengths the data decide)
        case(lambda a, b: (np.setdiff1d(a, a[::2]), np.union1d(a, b[1:])), (6,), (2, 3)),
        case(lambda a, b: np.intersect1d(a, np.append(b, a[:2]), return_indices=True), (5,), (3,)),
        case(lambda a, b: np.setxor1d(a, a[1:3]) + np.setdiff1d(b, a).size, strided((4,)), (2,)),
        case(
            lambda a, b: np.linalg.solve(a + 4 * np.eye(4, dtype=a.dtype), b),
            (4, 4),
            (4,),
            dtypes=LINALG,
        ),
        case(
            lambda a, b: np.linalg.solve(a + 4 * np.eye(4, dtype=a.dtype), b),
            (4, 4),
            (4, 2),
            dtypes=(np.float64,),
        ),
        case(lambda a: np.linalg.inv(a + 4 * np.eye(3, dtype=a.dtype)), (3, 3), dtypes=LINALG),
        case(lambda a: np.linalg.det(a), (3, 3), dtypes=LINALG),
        case(lambda a: np.linalg.det(a), (2, 3, 3), dtypes=(np.float32,)),
        case(
            lambda a: np.linalg.cholesky(a @ a.T + 3 * np.eye(3, dtype=a.dtype)),
            (3, 3),
            dtypes=(np.float32, np.float64, np.int64),
        ),
        case(_eigh, (4, 4), dtypes=(np.float32, np.float64)),
        case(lambda a: np.linalg.eigvalsh(a + a.T), (4, 4), dtypes=LINALG),
        case(lambda a: np.fft.fft(a), (8,), dtypes=FFT),
        case(lambda a: np.fft.ifft(a, n=5, axis=0), (4, 3), dtypes=FFT),
        case(lambda a: np.fft.rfft(a), (3, 7), dtypes=REAL),
        case(lambda a: np.fft.irfft(a), (6,), dtypes=BOTH_COMPLEX),
        case(lambda a: np.fft.irfft(a, 9, axis=0), (6, 2), dtypes=(np.complex128,)),
        case(lambda a: np.sort(a), (3, 5), dtypes=ALL),
        case(lambda a: np.sort(a, axis=None), F((3, 4))),
        case(lambda a: np.sort(a, axis=0, kind="stable"), strided((4, 3))),
        case(lambda a: np.argsort(-a, axis=0), (5, 2), dtypes=SIGNED),
        case(lambda a, v: np.searchsorted(np.sort(a), v), (7,), (3, 2), dtypes=REAL),
        case(lambda a: np.searchsorted(np.sort(a), 0.5, side="right"), (7,), dtypes=FLOATS),
        case(lambda a: (np.linalg.norm(a, axis=0), np.linalg.norm(a, 1)), (3, 4), dtypes=LINALG),
        case(lambda a: np.linalg.norm(a, np.inf, axis=(0, 1), keepdims=True), (3, 4)),
        case(lambda a: np.linalg.norm(a, ord=3, axis=-1), strided((2, 5)), dtypes=FLOATS),
        case(lambda a: np.median(a), (5,), dtypes=REAL),
        case(lambda a: np.median(a, axis=0, keepdims=True), (4, 3), dtypes=FLOATS),
        case(lambda a: np.nanmean(a, axis=1), (3, 4), dtypes=FLOATS),
        case(lambda a: np.nansum(a), (3, 4), dtypes=REAL),
        case(lambda a: (np.nanmax(a, axis=-1), np.nanmin(a)), (3, 4), dtypes=REAL),
        case(lambda a: np.ptp(a, axis=(0, 1)), (2, 3, 2), dtypes=(np.int32, np.float64)),
        case(lambda a: np.average(a, axis=0), (4, 2), dtypes=REAL),
        case(lambda a: np.percentile(a, 90), (9,), dtypes=REAL),
        case(lambda a: np.quantile(a, 0.25, axis=1), (2, 9), dtypes=FLOATS),
        case(lambda a: np.roll(a, 7, axis=0), (5, 3), dtypes=ALL),  # (past the axis: a gather)
        case(lambda a: np.roll(a, -13), reversed_((3, 4))),
        case(lambda a: np.roll(a, [4, -5], axis=[0, 1]), (3, 4)),
        case(lambda a: np.diag(a), (4,), dtypes=ALL),
        case(lambda a: np.diag(a, -1) + 0, (3,)),
        case(lambda a: (np.diag(a), np.diag(a, 2), np.diag(a, -2)), (4, 3)),
        case(lambda a, v: np.convolve(a, v), (6,), (3,), dtypes=REAL + BOOL),
        case(lambda a, v: np.convolve(a, v, mode="same"), (3,), (6,), dtypes=FLOATS),
        case(lambda a, v: np.convolve(a, v, "valid"), (6,), (4,), dtypes=FLOATS),
        case(lambda x, p: np.interp(x, np.sort(p), p * 2), (5,), (4,), dtypes=REAL),
        case(lambda p: np.interp(0.5, [0.0, 1.0], p), of((2,), np.float64)),
        case(lambda a: np.histogram(a, 4, range=(0.0, 1.0)), (20,), dtypes=REAL),
        case(lambda a: np.histogram(a, 3, range=(0.2, 0.9), density=True)[0], (20,)),
    ],
    "matmul": [
        case(lambda a, b: a @ b, (2, 3), (3, 4)),
        case(lambda a, b: np.matmul(a, b), (3,), (3, 2)),
        case(lambda a, b: a @ b, (2, 3), (3,)),
        case(lambda a, b: a @ b, (4,), (4,)),
        case(lambda a, b: a @ b, (2, 3, 4), (4, 5)),
        case(lambda a, b: np.matmul(a, b), (2, 1, 3, 4), (5, 4, 2)),
        case(lambda a, b: a @ b, F((3, 3)), strided((3, 2))),
        case(lambda a, b: a.T @ b, (4, 3), reversed_((4, 2))),
        case(lambda a, b: a @ b, (0, 3), (3, 2)),
        case(lambda a, b: a @ b, (2, 0), (0, 3)),
        case(lambda a, b: np.matmul(a, b, dtype=np.float64), (2, 2), (2, 2), dtypes=REAL),
        case(lambda a, b: a @ b, of((2, 3), np.float32), (3, 2), dtypes=INTS),
        case(_imatmul, (3, 3), (3, 3), dtypes=NUMERIC),
    ],
    "dot": [
        case(lambda a, b: np.dot(a, b), (3,), (3,)),
        case(lambda a, b: np.dot(a, b), (2, 3), (3, 4)),
        case(lambda a, b: a.dot(b), (2, 3), (3,)),
        case(lambda a, b: np.dot(a, b), (3,), (3, 2)),
        case(lambda a, b: np.dot(a, b), (2, 3, 4), (5, 4, 2)),
        case(lambda a, b: np.dot(a, b), F((3, 3)), strided((3, 3))),
        case(lambda a, b: np.dot(a, b), (), (2, 3)),
        case(lambda a: np.dot(a, 3), (2, 2)),
        case(lambda a: np.dot(a, np.float32(2)), (3,)),
        case(lambda a: a.dot(a.T), (2, 3)),
    ],
    "outer": [
        case(lambda a, b: np.outer(a, b), (3,), (4,)),
        case(lambda a, b: np.outer(a, b), (2, 2), (3,)),
        case(lambda a, b: np.outer(a, b), reversed_((3,)), of((2,), np.float32), dtypes=NUMERIC),
        case(lambda a: np.outer(a, a), ()),
        case(lambda a, b: np.outer(a, b), (0,), (3,)),
        case(lambda a: np.outer(a, 2.0), (3,)),
    ],
    "trace": [
        case(lambda x: np.trace(x), (3, 3)),
        case(lambda x: np.trace(x, offset=1), (3, 4)),
        case(lambda x: np.trace(x, offset=-1, dtype=np.float64), F((4, 3)), dtypes=REAL),
        case(lambda x: np.trace(x, axis1=1, axis2=2), (2, 3, 3)),
        case(lambda x: x.trace(), (3, 3)),
    ],
    # -- views and shapes --------------------------------------------------------------------------
    "reshape": [
        case(lambda x: x.reshape(-1), (2, 3)),
        case(lambda x: np.reshape(x, (3, -1)), (2, 3)),
        case(lambda x: x.reshape(3, 2), (2, 3)),
        case(lambda x: x.reshape((2, 2, 3)), F((3, 4))),
        case(lambda x: x.reshape(-1, 2), strided((2, 4))),
        case(lambda x: np.reshape(x, 6), reversed_((3, 2))),
        case(lambda x: x.reshape(1, 1), ()),
        case(lambda x: x.reshape(3, 0), (0, 3)),
        case(lambda x: np.reshape(x, (4, 3)).T.reshape(2, 6), (3, 4)),
    ],
    "transpose": [
        case(lambda x: x.T, (2, 3)),
        case(lambda x: np.transpose(x), (2, 3, 4)),
        case(lambda x: np.transpose(x, (1, 0, 2)), (2, 3, 4)),
        case(lambda x: x.transpose(2, 0, 1), F((2, 3, 4))),
        case(lambda x: x.transpose(), strided((3, 2))),
        case(lambda x: np.transpose(x, axes=(-1, 0)), reversed_((3, 2))),
        case(lambda x: x.T, (4,)),
        case(lambda x: x.T, Arg((2, 3), "readonly")),
        case(lambda x: x.T + 1, (3, 2), dtypes=NUMERIC),
    ],
    "swapaxes": [
        case(lambda x: np.swapaxes(x, 0, 2), (2, 3, 4)),
        case(lambda x: x.swapaxes(-1, 0), F((3, 4))),
        case(lambda x: np.swapaxes(x, 1, 1), (2, 3)),
    ],
    "moveaxis": [
        case(lambda x: np.moveaxis(x, 0, -1), (2, 3, 4)),
        case(lambda x: np.moveaxis(x, [0, 1], [-1, -2]), (2, 3, 4)),
        case(lambda x: np.moveaxis(x, -1, 0), strided((2, 3))),
    ],
    "expand_dims": [
        case(lambda x: np.expand_dims(x, 0), (2, 3)),
        case(lambda x: np.expand_dims(x, axis=-1), F((2, 3))),
        case(lambda x: np.expand_dims(x, (0, 2)), (3,)),
        case(lambda x: np.expand_dims(x, 0), ()),
    ],
    "squeeze": [
        case(lambda x: np.squeeze(x), (1, 3, 1)),
        case(lambda x: x.squeeze(axis=0), (1, 3)),
        case(lambda x: np.squeeze(x, axis=(0, 2)), (1, 2, 1, 3)),
        case(lambda x: x.squeeze(), (1,)),
        case(lambda x: np.squeeze(x, -1), strided((3, 1))),
    ],
    "broadcast_to": [
        case(lambda x: np.broadcast_to(x, (4, 3)), (3,)),
        case(lambda x: np.broadcast_to(x, (2, 3, 4)), (3, 1)),
        case(lambda x: np.broadcast_to(x[:, None], (3, 5)) * 2, (3,), dtypes=NUMERIC),
        case(lambda x: np.broadcast_to(x, (2, 2)), ()),
        case(lambda x: np.broadcast_to(x, 3), (1,)),
        case(lambda x: np.broadcast_to(x, (0, 3)), F((1, 3))),
    ],
    "ravel": [
        case(lambda x: np.ravel(x), (2, 3)),
        case(lambda x: x.ravel(), F((2, 3))),
        case(lambda x: np.ravel(x), strided((3, 2))),
        case(lambda x: x.T.ravel(), (2, 3)),
        case(lambda x: np.ravel(x), ()),
        case(lambda x: x.ravel(), reversed_((2, 3))),
    ],
    "getitem": [
        case(lambda x: x[1:-1, ::2], (4, 5)),
        case(lambda x: x[..., None], (2, 3)),
        case(lambda x: x[-1], (3, 4)),
        case(lambda x: x[0, 1], (2, 3)),
        case(lambda x: x[np.newaxis, :, 1:], F((3, 4))),
        case(lambda x: x[::-1], (5,)),
        case(lambda x: x[::-1, 1], Arg((3, 2), "readonly")),
        case(lambda x: x[1, ..., 2], (2, 3, 4)),
        case(lambda x: x[...], ()),
        case(lambda x: x[()], ()),
        case(lambda x: x[None], ()),
        case(lambda x: x[5:], (3,)),
        case(lambda x: x[np.int64(1)][0], strided((3, 4))),
        case(lambda x: x[:, -2:0:-1], reversed_((3, 4))),
        case(lambda x: (x[0] + x[-1]) * x[1:2], (3, 2), dtypes=NUMERIC),
    ],
    "concatenate": [
        case(lambda a, b: np.concatenate([a, b]), (2, 3), (4, 3)),
        case(lambda a, b: np.concatenate((a.T, b.T)).mean(axis=1), (5, 2), (5, 3), dtypes=FLOATS),
        case(lambda a, b: np.concatenate((a, b), axis=1), (2, 3), F((2, 2))),
        case(lambda a, b: np.concatenate([a, b], axis=None), (2, 3), (4,)),
        case(lambda a, b: np.concatenate([a, b, a], axis=-1), strided((2, 2)), (2, 1)),
        case(lambda a, b: np.concatenate([a, b]), (3,), of((2,), np.int8)),
        case(lambda a: np.concatenate([a, np.zeros(3, a.dtype)]), (2,)),
        case(lambda a: np.concatenate([a, a[::-1]]), (0, 2)),
    ],
    "stack": [
        case(lambda a, b: np.stack([a, b]), (2, 3), (2, 3)),
        case(lambda a, b: np.stack((a, b), axis=-1), (3,), F((3,))),
        case(lambda a, b: np.stack([a, b, a], axis=1), strided((2, 2)), (2, 2)),
        case(lambda a, b: np.stack([a, b]), (2,), of((2,), np.float32)),
        case(lambda a, b: np.stack([a, b]), (), ()),
        case(lambda a: np.stack([a, a * 2], axis=-1), (2, 3), dtypes=NUMERIC),
    ],
    # -- creation ----------------------------------------------------------------------------------
    "zeros": [
        case(lambda: np.zeros((2, 3))),
        case(lambda: np.zeros(4, dtype=np.int8)),
        case(lambda: np.zeros((3, 2), order="F")),
        case(lambda: np.zeros(())),
        case(lambda x: np.zeros(x.shape, x.dtype) + x, (2, 3)),
        case(lambda x: np.zeros((2, 3), dtype=x.dtype, order="F"), (1,)),
    ],
    "ones": [
        case(lambda: np.ones((2, 3))),
        case(lambda: np.ones(3, dtype=bool)),
        case(lambda x: np.ones((2, 2), order="F", dtype=x.dtype) * x, (2, 2)),
        case(lambda x: x - np.ones(x.shape[-1]), (3, 4), dtypes=NUMERIC),
    ],
    "empty": [
        case(_fill_empty, (3,)),
        case(_empty_f, (2, 3), dtypes=NUMERIC),
    ],
    "full": [
        case(lambda: np.full((2, 3), 7)),
        case(lambda: np.full(4, 2.5, dtype=np.float32)),
        case(lambda: np.full((2, 3), True, order="F")),
        case(lambda: np.full((2, 2), np.nan)),
        case(lambda x: np.full((2, 3), 7, dtype=x.dtype), (1,)),
        case(lambda x: np.full((2, 2), x[0]), (3,)),
        case(lambda x: np.full(x.shape, x), ()),
    ],
    "arange": [
        case(lambda x: np.arange(5) * x[0], (3,), dtypes=NUMERIC),
        case(lambda: np.arange(2, 11, 3)),
        case(lambda: np.arange(0.0, 1.0, 0.25)),
        case(lambda x: np.arange(6, dtype=np.float32).reshape(2, 3) + x, (2, 3)),
        case(lambda x: np.arange(x.shape[0]) + x, (4,)),
        case(lambda x: np.arange(1, x.shape[0] - 1, 2) * x[1:-1:2], (9,), dtypes=NUMERIC),
        case(lambda x: np.arange(x.shape[0], 0, -3) + x[::3], (8,), dtypes=NUMERIC),
        case(lambda: np.arange(5, 0, -1)),
    ],
    "symint": [
        case(lambda x: x.sum() / x.shape[0], (5,), dtypes=NUMERIC),
        case(lambda x: x * (x.shape[-1] - 1), (2, 3), dtypes=NUMERIC),
        case(lambda x: np.float32(1) / x.size + x, (3, 4), dtypes=FLOATS),
        case(lambda x: (x.shape[0] // 2, x[: x.shape[0] // 2] * 2), (7,), dtypes=INTS),
        case(lambda x: np.sqrt(x.shape[0]) * x, (4,), dtypes=FLOATS),
    ],
    "power": [  # complex powers as NumPy computes them: integer exponents by squaring
        case(lambda x: x**3 * np.power(x, -2.0) + x**0.5, (3, 4), dtypes=BOTH_COMPLEX),
        case(
            lambda x, y: np.power(x, y[:, :1].real.round() - 2) - x**1j,
            (5, 3),
            (5, 3),
            dtypes=BOTH_COMPLEX,
        ),  # fmt: skip
        case(lambda x: np.power(x * 0, np.array([0, 1, -1, 2j])), (4,), dtypes=BOTH_COMPLEX),
    ],
    "linspace": [
        case(lambda x: np.linspace(0, 1, 7) + x, (7,)),
        case(lambda x: np.linspace(0, 1, x.shape[0]) + x, (6,), dtypes=FLOATS),
        case(lambda: np.linspace(0, 10, 5, endpoint=False)),
        case(lambda: np.linspace(1, 2, 4, dtype=np.float32)),
        case(lambda: np.linspace(-1, 1)),
        case(lambda x: x * np.linspace(0, 1, x.shape[-1]), (2, 3), dtypes=NUMERIC),
    ],
    "eye": [
        case(lambda: np.eye(3, k=1)),
        case(lambda: np.eye(2, 3, dtype=np.int32)),
        case(lambda: np.eye(3, order="F")),
        case(lambda x: x @ np.eye(3), (2, 3)),
        case(lambda x: x * np.eye(3, 4, k=-1, dtype=x.dtype), (3, 4)),
    ],
    # -- mutation ----------------------------------------------------------------------------------
    "setitem": [
        case(_setitem_row, (3, 4), (4,)),
        case(_setitem_scalar, F((2, 3))),
        case(_setitem_broadcast, (3, 4)),
        case(_setitem_inplace_slice, (3, 2), dtypes=NUMERIC),
        case(_setitem_fresh, strided((4,))),
        case(_setitem_ellipsis, (2, 3), of((3,), np.int8)),
        case(_setitem_view_chain, (2, 3)),
    ],
    # -- decompositions ----------------------------------------------------------------------------
    np.divmod: [
        case(lambda a, b: np.divmod(a, b), (2, 3), (3,), dtypes=REAL),
        case(lambda a: np.divmod(a, 3), F((2, 3)), dtypes=REAL),
        case(lambda a: np.divmod(a, 2.5), strided((4,)), dtypes=REAL),
        case(lambda a, b: divmod(a, b), (3,), (3,), dtypes=REAL),
        case(lambda a, b: np.divmod(a, b), scalar(), scalar(), dtypes=REAL),
    ],
    np.isclose: [
        case(lambda a, b: np.isclose(a, b), (3, 4), (4,), dtypes=NUMERIC, specials=True),
        case(
            lambda a, b: np.isclose(a, b, 1e-3, 0.5, True), F((2, 3)), strided((3,)), specials=True
        ),
        case(lambda a: np.isclose(a, 0.0, atol=1e-12), scalar(), dtypes=NUMERIC),
        case(lambda a: np.isclose(a, 1), reversed_((2, 3)), dtypes=REAL),
    ],
    np.allclose: [
        case(lambda a, b: np.allclose(a, b), (3, 4), (4,), dtypes=NUMERIC, specials=True),
        case(lambda a: np.allclose(a, a[::-1], 1e-3, 0.5, True), strided((4,)), specials=True),
        case(lambda a: np.allclose(a, 2), scalar(), dtypes=REAL),
    ],
    np.clip: [
        case(lambda x: np.clip(x, None, 5), (3, 4), dtypes=REAL),
        case(lambda x: np.clip(x, -1, 1), F((2, 3)), dtypes=SIGNED),
        case(lambda x, lo, hi: np.clip(x, lo, hi), (3, 4), (4,), (3, 1), dtypes=REAL),
        case(lambda x: np.clip(x, 0.5, 2.5), (5,), dtypes=REAL),
        case(lambda x: np.clip(x, min=0, max=3), strided((3, 2)), dtypes=REAL),
        case(lambda x: np.clip(x, 0, 1), (), dtypes=REAL, specials=True),
        case(_clip_inplace, (2, 3), dtypes=REAL),
    ],
    np.zeros_like: [
        case(lambda x: np.zeros_like(x, dtype=np.int8), (2, 3)),
        case(lambda x: np.zeros_like(x), F((2, 3))),
        case(lambda x: np.zeros_like(x) + x, strided((3,))),
        case(lambda x: np.zeros_like(x, shape=(4,)), (2, 2)),
    ],
    np.ones_like: [
        case(lambda x: np.ones_like(x), (2, 3)),
        case(lambda x: np.ones_like(x, dtype=np.float32, order="F"), (3, 2)),
        case(lambda x: x - np.ones_like(x), (), dtypes=NUMERIC),
    ],
    np.empty_like: [
        case(_empty_like_then_fill, (2, 3)),
        case(_empty_like_assign, F((3, 2)), dtypes=REAL),
    ],
    np.full_like: [
        case(lambda x: np.full_like(x, 7), (2, 3)),
        case(lambda x: np.full_like(x, 0.5, dtype=np.float32), F((2, 3))),
        case(lambda x: np.full_like(x, np.nan), (3,), dtypes=FLOATS),
        case(lambda x: np.full_like(x, x[0]), (3,)),
    ],
    np.identity: [
        case(lambda: np.identity(3)),
        case(lambda x: np.identity(2, dtype=x.dtype) * x, (2, 2)),
    ],
    np.fft.fftfreq: [  # (of a size: even and odd)
        case(lambda x: np.fft.fftfreq(x.shape[0], 0.1) + x, (4,), dtypes=FLOATS),
        case(lambda x: np.fft.fftfreq(x.shape[1], d=x[0, 0]), (2, 5), dtypes=FLOATS),
    ],
    np.fft.rfftfreq: [
        case(lambda x: np.fft.rfftfreq(x.shape[0], 0.25) * x[0], (5,), dtypes=FLOATS),
    ],
    np.shape: [case(lambda x: x * np.shape(x)[1], (2, 3))],
    np.ndim: [case(lambda x: x + np.ndim(x), (2, 3), dtypes=REAL)],
    np.size: [
        case(lambda x: x * np.size(x) + np.size(x, 0) + np.size(x, (0, 1)), (2, 3), dtypes=REAL)
    ],
    np.count_nonzero: [  # (every argument form in one function: one compile per dtype)
        case(
            lambda x: (
                np.count_nonzero(x)
                + np.count_nonzero(x, axis=0)
                + np.count_nonzero(x, axis=(0, 1), keepdims=True)
            ),
            strided((4, 3)),
            dtypes=(np.bool_, np.int32, np.float64, np.complex128),
        )
    ],
    np.asarray: [
        case(lambda x: np.asarray(x, dtype=np.float32), (2, 3)),
        case(lambda x: np.asarray(x) + 1, F((2, 3)), dtypes=NUMERIC),
        case(_asarray_aliases, (3,)),
        case(lambda x: np.asarray(x, order="C"), strided((3, 2))),
        case(lambda x: np.asarray(x), scalar()),
        case(_asarray_c_copies, F((2, 3))),
    ],
    np.asanyarray: [
        case(lambda x: np.asanyarray(x), (2, 3)),
        case(lambda x: np.asanyarray(x, dtype=np.complex128), (3,)),
    ],
    np.array: [
        case(_array_is_a_copy, (2, 3)),
        case(lambda x: np.array(x, dtype=np.float64), F((2, 3))),
        case(_array_no_copy_aliases, (3,)),
        case(lambda x: np.array(x), scalar()),
    ],
    np.ascontiguousarray: [
        case(lambda x: np.ascontiguousarray(x), F((2, 3))),
        case(lambda x: np.ascontiguousarray(x), strided((3, 2))),
        case(lambda x: np.ascontiguousarray(x, dtype=np.float32), (2, 3)),
        case(lambda x: np.ascontiguousarray(x), ()),
        case(lambda x: np.ascontiguousarray(x), scalar()),
    ],
    np.copyto: [
        case(_copyto, (2, 3), (3,)),
        case(_copyto, F((2, 3)), of((2, 3), np.int8), dtypes=SIGNED + COMPLEX),
        case(_copyto_unsafe, of((3,), np.int32), (3,)),
        case(_copyto_scalar, strided((2, 2)), dtypes=NUMERIC),
    ],
    "sliding_window": [  # (np.lib.stride_tricks.sliding_window_view: a read-only view)
        case(lambda x: np.lib.stride_tricks.sliding_window_view(x, 3).sum(axis=-1), (7,)),
        case(
            lambda x: np.lib.stride_tricks.sliding_window_view(x, (2, 2)).max(axis=(-2, -1)),
            F((4, 5)),
            dtypes=(np.float64, np.int16),
        ),
        case(
            lambda x: np.lib.stride_tricks.sliding_window_view(x, 2, axis=0) * 2,
            strided((3, 4)),
            dtypes=(np.float32,),
        ),
        case(  # (an axis twice: windows of windows)
            lambda x: np.lib.stride_tricks.sliding_window_view(x, (1, 2), axis=(1, -1)) + 1,
            (2, 5),
            dtypes=(np.int64,),
        ),
    ],
    np.fill_diagonal: [  # (an index-array write at a[i, i, ...], i below the shortest axis)
        case(_fill_diagonal_scalar, (3, 5), dtypes=(np.float64, np.int8, np.bool_)),
        case(_fill_diagonal_scalar, F((5, 3)), dtypes=(np.float32,)),
        case(_fill_diagonal, (4, 4), (4,), dtypes=(np.int64,)),
        case(_fill_diagonal, strided((3, 3, 3)), (), dtypes=(np.complex128,)),
        case(_fill_diagonal, (2, 3), (1,), dtypes=(np.float64,)),
    ],
    np.diff: [
        case(lambda x: np.diff(x), (5,)),
        case(lambda x: np.diff(x, n=2), (3, 5)),
        case(lambda x: np.diff(x, axis=0), F((4, 3))),
        case(lambda x: np.diff(x, axis=-2), strided((3, 2, 2))),
        case(lambda x: np.diff(x, n=0), (3,)),
    ],
    # np.einsum sums in its own order and BLAS with FMA: exact dtypes only here (integer-valued
    # floats in tests/backends/test_matmul.py).
    np.einsum: [
        case(lambda a, b: np.einsum("ij,jk->ik", a, b), (2, 3), (3, 4), dtypes=BOOL + INTS),
        case(lambda a, b: np.einsum("bij,bjk->bik", a, b), (2, 2, 3), (2, 3, 4), dtypes=INTS),
        case(lambda a, b: np.einsum("ij,kj", a, b), F((2, 3)), (4, 3), dtypes=INTS),
        case(lambda a, b: np.einsum("ji,jk->ik", a, b), F((3, 2)), F((3, 4)), dtypes=INTS),
        case(lambda a, b: np.einsum("...j,...jk->...k", a, b), (2, 3), (3, 2), dtypes=INTS),
        case(lambda a, b: np.einsum("i,i->", a, b), (3,), (3,), dtypes=INTS),
        case(lambda a, b: np.einsum("ij,jk->ik", a, b), of((2, 3), np.int8), (3, 2), dtypes=INTS),
        # no matrix products: a broadcast product summed (``frontend/contractions.py``)
        case(lambda g, w: np.einsum("kij,k->ij", g, w), (3, 2, 4), (3,), dtypes=BOOL + (np.int8,)),
        case(lambda a: np.einsum("ij->", a), strided((3, 4)), dtypes=(np.uint32,)),
        case(lambda a, b: np.einsum("i,j", a, b), (3,), (2,), dtypes=(np.int64,)),
        case(
            lambda a, b, c: np.einsum("ij,jk,kl->li", a, b, c),
            (2, 3),
            (3, 2),
            (2, 4),
            dtypes=(np.int32,),
        ),
    ],
    np.atleast_1d: [  # (views: one dtype is enough)
        case(lambda x: np.atleast_1d(x), (), dtypes=(np.float64,)),
        case(lambda x: np.atleast_1d(x, x[None])[0], (), dtypes=(np.int32,)),
    ],
    np.atleast_2d: [
        case(lambda x: np.atleast_2d(x), (4,), dtypes=(np.float64,)),
        case(lambda x: np.atleast_2d(x), (), dtypes=(np.bool_,)),
        case(lambda x: np.atleast_2d(x), F((2, 3)), dtypes=(np.float64,)),
    ],
    np.vstack: [  # (concatenations of NumPy's promoted dtype)
        case(lambda x, y: np.vstack([x, y[0], x * 2]), (4,), (2, 4), dtypes=(np.float64, np.int32)),
        case(lambda x: np.vstack((x[0], x[1])), strided((2, 3)), dtypes=(np.bool_,)),
    ],
    np.block: [  # (nested lists: the innermost along the last axis; vectors as rows)
        case(
            lambda x, y: np.block([[x, y[:2, :1]], [y[2:], np.zeros((2, 1), x.dtype)]]),
            (2, 2),
            (4, 2),
            dtypes=(np.float64, np.int32),
        ),
        case(lambda x, y: np.block([x, 2, y[0]]), (3,), (2, 2), dtypes=(np.float32,)),
        case(lambda x: np.block([[x[0]], [x[1]]]), strided((2, 3)), dtypes=(np.complex128,)),
        case(_block_of_one_written, (3,), dtypes=(np.float64,)),  # (a copy, not the argument)
    ],
    np.array_split: [  # (sections: the first n % sections one longer; indices: slicing's)
        case(lambda x: np.array_split(x, 3)[2] * 2, (7,), dtypes=(np.float64, np.int16)),
        case(lambda x: tuple(np.array_split(x, [1, -1, 9], axis=-1)), (2, 4), dtypes=(np.int32,)),
    ],
    np.split: [
        case(lambda x: tuple(np.split(x, 2, axis=1)), strided((2, 4)), dtypes=(np.float32,)),
        case(lambda x: np.split(x, [3, 1])[1].sum() + np.split(x, [2])[0], (5,), dtypes=REAL),
    ],
    np.hsplit: [
        case(lambda x: np.hsplit(x, [1])[1], (2, 3), dtypes=(np.complex128,)),
        case(lambda x: np.hsplit(x, 2)[0] - x[-1], (4,), dtypes=(np.float64,)),
    ],
    np.vsplit: [case(lambda x: tuple(np.vsplit(x, [1])), F((3, 2)), dtypes=(np.bool_,))],
    np.dsplit: [case(lambda x: np.dsplit(x, 2)[1], (1, 2, 4), dtypes=(np.uint8,))],
    np.hstack: [
        case(lambda x, y: np.hstack([x, y[1], x[:1]]), (3,), (2, 4), dtypes=(np.float32,)),
        case(lambda x: np.hstack((x, x[:, :1] * 3)), (3, 2), dtypes=(np.int64, np.float64)),
    ],
    np.column_stack: [  # (of vectors, NumPy's result is F-ordered, the compiled one C: one row)
        case(lambda x, y: np.column_stack([x, y.T, x * 2]), (1,), (2, 1), dtypes=(np.float64,)),
        case(lambda x, y: np.column_stack([x, y]), (3, 2), F((3, 1)), dtypes=(np.int32,)),
        case(lambda x: np.column_stack((x[:, 0], x[0, 0])), reversed_((1, 3)), dtypes=(np.int8,)),
    ],
    np.atleast_3d: [
        case(lambda x: np.atleast_3d(x), (4,), dtypes=(np.float64,)),
        case(lambda x: np.atleast_3d(x), strided((3, 2)), dtypes=(np.complex128,)),
    ],
    np.rot90: [  # (views, as NumPy's flips and transposes)
        case(lambda x: np.rot90(x) * 2, (3, 4), dtypes=(np.float64, np.int32)),
        case(lambda x: np.rot90(x, 2) + np.rot90(x, -1).T, F((3, 3)), dtypes=(np.float32,)),
        case(lambda x: np.rot90(x, 3, axes=(2, 0)).copy(), strided((2, 3, 4)), dtypes=(np.int8,)),
    ],
    np.append: [  # (both flattened and joined, or joined along an axis; scalars as arrays)
        case(lambda x: np.append(x, 3) * 2, (2, 3), dtypes=(np.float32, np.int8, np.bool_)),
        case(lambda x: np.append(-1, x[0]), F((3, 4))),
        case(lambda x: np.append(x, x[:1], axis=0), strided((3, 4)), dtypes=(np.int32,)),
        case(lambda x: np.append(np.nonzero(x > 0.5), x.shape[0]), (6,)),
        case(lambda x: np.append(x, x), (), dtypes=(np.complex64,)),
    ],
    np.roll: [  # (a gather at (arange(n) - shift) % n; two slices for an int shift within the axis)
        case(
            lambda x: np.roll(x, 2) + np.roll(x, -7, axis=0), (3, 4), dtypes=(np.float64, np.bool_)
        ),
        case(lambda x: np.roll(x, (1, -2), axis=(1, 1)) * 2, F((3, 4)), dtypes=(np.int32,)),
        case(lambda x: np.roll(x, (1, 2), axis=(0, -1)), strided((2, 3, 4)), dtypes=(np.int8,)),
        case(lambda x: np.roll(x, 1, axis=()), reversed_((3,)), dtypes=(np.complex64,)),
        case(lambda x: np.roll(x[:0], 3, axis=0), (2, 3), dtypes=(np.float32,)),
        case(lambda x, s: np.roll(x, s[()], axis=-1), (2, 5), Arg((), "scalar", np.int64)),
    ],
    np.meshgrid: [  # (views of the inputs broadcast; copies unless copy=False)
        case(lambda x, y: np.meshgrid(x, y), (4,), (3,), dtypes=ALL),
        case(
            lambda x, y: np.meshgrid(x, y, indexing="ij", sparse=True),
            (3,),
            strided((2, 2)),
            dtypes=(np.float64,),
        ),
        case(
            lambda x, y, z: [g * 2 for g in np.meshgrid(x, y, z, copy=False)],
            (2,),
            (3,),
            (2,),
            dtypes=(np.int32,),
        ),
    ],
    np.triu: [  # (np.where of a mask of positions)
        case(lambda a: (np.triu(a), np.triu(a, -1) * 2), (4, 3), dtypes=ALL),
        case(lambda a: np.triu(a, 2), strided((2, 3, 5)), dtypes=(np.float32,)),
        case(lambda a: np.triu(a), (4,), dtypes=(np.int64,)),
        case(
            lambda a: np.triu(a, a.shape[0] - 3) + np.tril(a, -(a.shape[1] // 2)),
            (5, 4),
            dtypes=(np.float64,),
        ),
    ],
    np.tril: [
        case(lambda a: (np.tril(a), np.tril(a, -1)), F((3, 4)), dtypes=(np.float64, np.bool_)),
        case(lambda a: np.tril(a[:0], 1), (2, 3), dtypes=(np.complex64,)),
    ],
    np.flipud: [case(lambda x: np.flipud(x) - x, (4, 3), dtypes=(np.float64,))],
    np.fliplr: [case(lambda x: np.fliplr(x) * x, reversed_((2, 5)), dtypes=(np.int64,))],
    np.flip: [
        case(lambda x: np.flip(x, 0), (3, 4)),
        case(lambda x: np.flip(x), (2, 3, 2)),
        case(lambda x: np.flip(x, axis=(0, 2)), F((2, 3, 2))),
        case(lambda x: np.flip(x, -1), reversed_((3, 4))),
        case(lambda x: np.flip(x), ()),
    ],
    np.real: [
        case(lambda x: np.real(x), (2, 3), dtypes=ALL + BOTH_COMPLEX[:1]),
        case(lambda x: np.real(x) * 2, scalar(), dtypes=NUMERIC),
    ],
    np.imag: [
        case(lambda x: np.imag(x), (2, 3), dtypes=ALL + BOTH_COMPLEX[:1]),
        case(lambda z: np.imag(z), reversed_((4,)), dtypes=BOTH_COMPLEX),
    ],
    np.angle: [
        case(lambda z: np.angle(z), (2, 3), dtypes=NUMERIC + BOTH_COMPLEX[:1], specials=True),
        case(lambda z: np.angle(z, deg=True), of((3, 4), np.complex64), specials=True),
        case(lambda z: np.angle(z, True), (), dtypes=BOTH_COMPLEX + FLOATS),
        case(lambda z: np.angle(z), scalar(), dtypes=(np.complex64, np.int32, np.float32)),
    ],
}


def _write_readonly(x):
    x[0] = 1
    return x


def _write_broadcast_view(x):
    v = np.broadcast_to(x, (2, 3))
    v[0] = 1
    return v


def _write_complex(x):
    x[0] = 1j
    return x


def _iadd(a, b):
    a += b
    return a


def _set_imag_of_real(x):
    x.imag = 1
    return x


def _write_imag_of_real(x):
    x.imag[...] = 1
    return x


def _write_python_complex_into_part(z):
    z.real[0] = 1j
    return z


ERROR_CASES: dict[Any, list[Case]] = {
    "where": [case(lambda c, x: np.where(c, x, 0), of((3,), np.bool_), of((4,), np.float64))],
    np.split: [case(lambda x: np.split(x, 2), of((5,), np.float64))],  # (unequal sections)
    np.vsplit: [case(lambda x: np.vsplit(x, 1), of((3,), np.float64))],
    np.array_split: [case(lambda x: np.array_split(x, 0), of((3,), np.float64))],
    np.block: [  # (uneven depths, shapes that do not join)
        case(lambda x: np.block([[x], x]), of((2,), np.float64)),
        case(lambda x: np.block([[x], [x[:1], x]]), of((2, 2), np.float64)),
    ],
    "clip": [case(lambda x: x.clip(np.zeros(4), 1), of((3,), np.float64))],
    "astype": [case(lambda x: x.astype(np.int8, casting="safe"), of((3,), np.float64))],
    "sum": [
        case(lambda x: np.sum(x, axis=2), of((2, 3), np.float64)),
        case(lambda x: x.sum(axis=(0, 0)), of((2, 3), np.float64)),
    ],
    "prod": [case(lambda x: np.prod(x, axis=-3), of((2, 3), np.int64))],
    "mean": [case(lambda x: np.mean(x, axis=(1, 5)), of((2, 3), np.float64))],
    "amax": [
        case(lambda x: np.max(x), of((0,), np.float64)),
        case(lambda x: x.max(axis=1), of((2, 0), np.float64)),
    ],
    "amin": [case(lambda x: np.min(x, axis=0), of((0, 3), np.int32))],
    "argmax": [case(lambda x: np.argmax(x), of((0,), np.float64))],
    "argmin": [case(lambda x: x.argmin(axis=2), of((2, 3), np.float64))],
    "any": [case(lambda x: np.any(x, axis=-3), of((2, 3), np.bool_))],
    "all": [case(lambda x: x.all(axis=(0, -2)), of((2, 3), np.bool_))],
    "var": [case(lambda x: np.var(x, axis=2), of((2, 3), np.float64))],
    "std": [case(lambda x: x.std(axis=-3), of((2, 3), np.float64))],
    "cumsum": [case(lambda x: np.cumsum(x, axis=2), of((2, 3), np.float64))],
    "cumprod": [case(lambda x: x.cumprod(axis=-2), of((3,), np.float64))],
    "reduce": [
        case(lambda x: np.subtract.reduce(x), of((0,), np.float64)),
        case(lambda x: np.bitwise_or.reduce(x, axis=2), of((2, 3), np.int32)),
    ],
    "accumulate": [case(lambda x: np.maximum.accumulate(x, axis=-3), of((2, 3), np.float64))],
    "extern": [
        case(lambda a, b: np.linalg.solve(a, b), of((2, 3), np.float64), of((2,), np.float64)),
        case(lambda a, b: np.linalg.lstsq(a, b), of((3, 2), np.float64), of((4,), np.float64)),
        case(lambda a: np.linalg.inv(a), of((3,), np.float64)),  # LinAlgError: 1-d
        case(lambda a: np.linalg.det(a), of((3, 2), np.float64)),  # LinAlgError: not square
        case(lambda a: np.fft.fft(a, axis=2), of((2, 3), np.float64)),
        case(lambda a: np.sort(a, axis=2), of((3,), np.float64)),
        case(lambda a: np.linalg.norm(a, 2), of((2, 2, 2), np.float64)),
    ],
    np.cov: [
        case(lambda a: np.cov(a), of((2, 2, 2), np.float64)),
    ],
    "matmul": [
        case(lambda a, b: a @ b, of((2, 3), np.float64), of((4, 2), np.float64)),
        case(lambda a: a @ 2.0, of((2, 2), np.float64)),
        case(lambda a, b: np.matmul(a, b), of((2, 2, 3), np.float64), of((3, 3, 2), np.float64)),
    ],
    "dot": [case(lambda a, b: np.dot(a, b), of((2, 3), np.float64), of((2, 3), np.float64))],
    "trace": [case(lambda x: np.trace(x), of((3,), np.float64))],
    "reshape": [
        case(lambda x: np.reshape(x, (4, 5)), of((2, 3), np.float64)),
        case(lambda x: x.reshape(-1, -1), of((2, 3), np.float64)),
    ],
    "transpose": [
        case(lambda x: np.transpose(x, (0, 0)), of((2, 3), np.float64)),
        case(lambda x: x.transpose(1, 0, 2), of((2, 3), np.float64)),
    ],
    "swapaxes": [case(lambda x: np.swapaxes(x, 0, 2), of((2, 3), np.float64))],
    "moveaxis": [case(lambda x: np.moveaxis(x, [0, 0], [0, 1]), of((2, 3), np.float64))],
    "expand_dims": [case(lambda x: np.expand_dims(x, 3), of((2, 3), np.float64))],
    "squeeze": [case(lambda x: np.squeeze(x, axis=0), of((2, 3), np.float64))],
    "broadcast_to": [case(lambda x: np.broadcast_to(x, (2, 4)), of((3,), np.float64))],
    "getitem": [
        case(lambda x: x[5], of((3,), np.float64)),
        case(lambda x: x[0, 0, 0], of((2, 3), np.float64)),
        case(lambda x: x[..., 0, ...], of((2, 3), np.float64)),
        case(lambda x: x[1.5], of((3,), np.float64)),
    ],
    "setitem": [
        case(_write_readonly, Arg((3,), "readonly", np.float64)),
        case(_write_broadcast_view, of((3,), np.float64)),
        case(_setitem_row, of((3, 4), np.float64), of((3,), np.float64)),
        case(_write_complex, of((3,), np.float64)),
    ],
    "concatenate": [
        case(lambda a, b: np.concatenate([a, b]), of((2, 3), np.float64), of((2, 4), np.float64)),
        case(
            lambda a, b: np.concatenate([a, b], axis=2),
            of((2, 3), np.float64),
            of((2, 3), np.float64),
        ),
        case(lambda a, b: np.concatenate([a, b]), of((), np.float64), of((), np.float64)),
    ],
    "stack": [
        case(lambda a, b: np.stack([a, b]), of((3,), np.float64), of((4,), np.float64)),
        case(lambda a, b: np.stack([a, b], axis=3), of((2, 3), np.float64), of((2, 3), np.float64)),
    ],
    "zeros": [case(lambda: np.zeros((2, -1)))],
    "ones": [case(lambda: np.ones(-3))],
    "empty": [case(lambda: np.empty((-1, 2)))],
    "full": [case(lambda x: np.full((2, 3), x), of((4,), np.float64))],
    "arange": [case(lambda: np.arange(0, 5, 0))],
    "linspace": [case(lambda: np.linspace(0, 1, -1))],
    "eye": [case(lambda: np.eye(-1))],
    np.divmod: [case(lambda a, b: np.divmod(a, b), of((3,), np.float64), of((2,), np.float64))],
    np.clip: [case(lambda x: np.clip(x, np.zeros(2), 1), of((3,), np.float64))],
    np.identity: [case(lambda: np.identity(-2))],
    np.asarray: [case(lambda x: np.asarray(x, dtype="no such dtype"), of((3,), np.float64))],
    "sliding_window": [
        case(lambda x: np.lib.stride_tricks.sliding_window_view(x, 4), of((3,), np.float64)),
        case(lambda x: np.lib.stride_tricks.sliding_window_view(x, (2, 2)), of((3,), np.int32)),
        case(lambda x: np.lib.stride_tricks.sliding_window_view(x, 2, 1), of((3,), np.int32)),
    ],
    np.fill_diagonal: [
        case(_fill_diagonal, of((3,), np.float64), of((), np.float64)),  # at least 2-d
        case(_fill_diagonal, of((2, 3, 3), np.float64), of((), np.float64)),  # equal lengths
    ],
    np.copyto: [
        case(_copyto, of((3,), np.int64), of((3,), np.float64)),
        case(_copyto, of((3,), np.float64), of((2,), np.float64)),
    ],
    np.diff: [case(lambda x: np.diff(x), of((), np.float64))],
    np.flip: [case(lambda x: np.flip(x, 2), of((2, 3), np.float64))],
    "imag": [
        case(_set_imag_of_real, of((3,), np.float64)),  # TypeError: no imaginary part to set
        case(_write_imag_of_real, of((3,), np.float64)),  # ValueError: read-only zeros
    ],
    "complex": [
        case(_set_real_region, of((3, 4), np.complex128), of((2,), np.float64)),  # shapes
        case(_write_python_complex_into_part, of((3,), np.complex128)),  # TypeError
    ],
    "add": [
        # augmented assignment: the result must cast to the target and fit its shape
        case(_iadd, of((3,), np.int64), of((3,), np.float64)),
        case(_iadd, of((3,), np.float64), of((2, 3), np.float64)),
        # a Python int out of the array dtype's range (NEP 50)
        case(lambda x: x + 300, of((3,), np.int8)),
        case(lambda x: x + (-1), of((3,), np.uint8)),
    ],
}
