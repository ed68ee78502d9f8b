"""The Numba backend on every argument form: C, Fortran, strided, reversed, read-only, broadcast,
0-d, empty, and views folded into the kernels' index arithmetic.

The generated op tests (``tests/ir/test_ops.py``) compile one or two kernels per op and dtype on
the Numba backend; the forms are op-independent (index maps, loop order, output order), so they
are swept here for a few ops of different dtypes.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.ir.op_cases import F, reversed_, strided
from tests.ir.test_ops import AUGMENTED_SHAPES, BINARY_SHAPES, UNARY_SHAPES, build
from tests.support import check

NUMBA = ("numba",)
DTYPES = [np.float64, np.int8, np.bool_, np.complex128]


def _make(shape, dtype, seed=0):
    return build(
        np.random.default_rng(seed), shape if not isinstance(shape, tuple) else _arg(shape), dtype
    )


def _arg(shape):
    from tests.ir.op_cases import Arg

    return Arg(shape)


def _binary(a, b):
    return a * b + a


def _logical(a, b):
    return (a != b) | (a == 0)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shapes", BINARY_SHAPES, ids=str)
def test_binary_forms(shapes, dtype):
    first, second = shapes
    fn = _logical if dtype == np.bool_ else _binary
    check(fn, _make(first, dtype), _make(second, dtype, 1), backends=NUMBA)


@pytest.mark.parametrize("dtype", [np.float64, np.int32], ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape", UNARY_SHAPES, ids=str)
def test_unary_forms(shape, dtype):
    check(lambda x: np.abs(x) * 2 - x, _make(shape, dtype), backends=NUMBA)


@pytest.mark.parametrize("shapes", AUGMENTED_SHAPES, ids=str)
def test_augmented_assignment_forms(shapes):
    def update(a, b):
        a += b * 2.0
        return a

    first, second = shapes
    check(update, _make(first, np.float64), _make(second, np.float64, 1), backends=NUMBA)


VIEWS = {
    "transpose": lambda x: x.T * 2.0 + x.T,
    "reversed": lambda x: x[::-1, ::-1] - x,
    "steps": lambda x: x[::2, 1::3] * 3.0,
    "negative step and offset": lambda x: x[-2::-2, :] + 1.0,
    "row and column": lambda x: x[1][:, None] * x[:, 2][None, :],
    "broadcast_to": lambda x: np.broadcast_to(x[0], (3, 4, 6)) + 1.0,
    "reshape": lambda x: x.reshape(6, 4) * 2.0 + x.reshape(6, 4),
    "ravel": lambda x: np.ravel(x) * 0.5,
    "expand and squeeze": lambda x: np.squeeze(np.expand_dims(x, 1), 1) + x,
    "swapaxes": lambda x: np.swapaxes(x[None], 0, 2) * 2.0,
    "stencil": lambda x: x[:-2, 1:-1] + x[2:, 1:-1] - 2.0 * x[1:-1, 1:-1],
}


@pytest.mark.parametrize("form", ["C", "F", "strided", "reversed"])
@pytest.mark.parametrize("view", sorted(VIEWS))
def test_views_are_index_maps(view, form):
    x = {"C": _make((4, 6), np.float64)}.get(form)
    if x is None:
        x = _make({"F": F, "strided": strided, "reversed": reversed_}[form]((4, 6)), np.float64)
    check(VIEWS[view], x, backends=NUMBA)


REDUCTIONS = {
    "sum": lambda x, axis: x.sum(axis=axis),
    "mean keepdims": lambda x, axis: x.mean(axis=axis, keepdims=True),
    "max": lambda x, axis: x.max(axis=axis),
    "argmin": lambda x, axis: (
        np.argmin(x, axis=axis) if axis is None or np.ndim(axis) == 0 else x.min(axis)
    ),
    "any": lambda x, axis: (x > 0.5).any(axis=axis),
    "prod": lambda x, axis: np.prod(x * 0.5 + 0.75, axis=axis),
    "std": lambda x, axis: x.std(axis=axis, ddof=1),
}


@pytest.mark.parametrize("form", ["C", "F"])
@pytest.mark.parametrize("axis", [None, 0, -1, (0, 2)], ids=str)
def test_reductions_over_each_axis(axis, form):
    shape = (3, 4, 5)
    arg = {"C": _arg(shape), "F": F(shape), "strided": strided(shape)}[form]
    x = np.abs(_make(arg, np.float64)) + 0.25
    # every reduction of the table in one function (result i: the i-th in sorted order): the
    # fused kernels compile together, one Numba compile per kernel instead of one per reduction
    reductions = [REDUCTIONS[name] for name in sorted(REDUCTIONS)]
    check(lambda a: tuple(reduce(a, axis) for reduce in reductions), x, backends=NUMBA)


ALL_DTYPES = [np.bool_, np.int8, np.int32, np.int64, np.uint8, np.uint32, np.float32, np.float64]


@pytest.mark.parametrize("dtype", ALL_DTYPES + [np.complex128], ids=lambda d: np.dtype(d).name)
def test_reductions_of_every_dtype(dtype):
    x = _make(strided((4, 6)), dtype)

    def reductions(a):
        return a.sum(axis=1), a.prod(axis=0), np.mean(a), a.any(axis=1), a.all()

    check(reductions, x, backends=NUMBA)
    if dtype != np.complex128:
        check(lambda a: (a.max(axis=0), np.argmax(a), np.argmin(a, axis=1)), x, backends=NUMBA)


@pytest.mark.parametrize("dtype", [np.float32, np.int64], ids=lambda d: np.dtype(d).name)
def test_row_kernels(dtype):
    x = _make((5, 7), dtype) * 3

    def normalise(a):
        shifted = a - a.max(axis=-1, keepdims=True)
        e = np.exp(shifted * 0.25)
        return e / e.sum(axis=-1, keepdims=True), np.log(e.sum(axis=1)) + a.max(axis=1)

    check(normalise, x, backends=NUMBA)


def test_empty_and_zero_d():
    check(lambda a, b: (a * b + 1.0, np.sum(a * b)), np.ones((0, 3)), np.ones(3), backends=NUMBA)
    check(lambda a: (a * 2.0 + 1.0, a.sum()), np.float64(2.5), backends=NUMBA)
    check(lambda a, s: a * s + s, np.arange(6.0).reshape(2, 3), 1.5, backends=NUMBA)


def test_matmul_epilogue_writes_into_the_matmul_buffer():
    def dense_relu(x, w, b):
        return np.maximum(x @ w + b, 0.0)

    rng = np.random.default_rng(5)
    check(
        dense_relu,
        rng.random((6, 4)) - 0.5,
        rng.random((4, 3)) - 0.5,
        rng.random(3),
        backends=NUMBA,
    )
