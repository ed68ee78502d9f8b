"""TensorMeta and the dtype/shape/layout rules: NumPy's own, NEP 50 weak scalars included."""

from __future__ import annotations

import numpy as np
import pytest

import gcompile
from gcompile.ir.meta import TensorMeta, dtype_abbrev, meta_of, normalize_axes


def out_meta(fn, *args):
    graph = gcompile.trace(fn, *args)
    return graph.output_node.args[0][0].meta


@pytest.mark.parametrize(
    "dtype, text",
    [
        (np.bool_, "bool"),
        (np.int8, "i8"),
        (np.uint32, "u32"),
        (np.float32, "f32"),
        (np.complex128, "c128"),
    ],
)
def test_dtype_abbreviations(dtype, text):
    assert dtype_abbrev(np.dtype(dtype)) == text
    assert TensorMeta((2, 3), dtype).short() == f"{text}[2,3]"


def test_meta_of_values():
    assert meta_of(np.ones((2, 3), order="F")).layout == "F"
    assert meta_of(np.ones((4, 4))[:, ::2]).layout == "A"
    assert meta_of(np.float32(1)) == TensorMeta((), np.float32, scalar=True, writeable=False)
    assert meta_of(1.5).weak and meta_of(1.5).short() == "float"


@pytest.mark.parametrize(
    "fn, args, dtype",
    [
        (lambda x: x * 2.5, (np.ones(2, np.float32),), np.float32),  # weak float keeps float32
        (lambda x: x + 3, (np.ones(2, np.int8),), np.int8),  # weak int keeps int8
        (lambda x: x * 2.5, (np.ones(2, np.int8),), np.float64),  # int array * float -> float64
        (lambda x, dt: x * dt, (np.ones(2, np.float32), 0.1), np.float32),  # float argument is weak
        (
            lambda x: x * np.float64(2),
            (np.ones(2, np.float32),),
            np.float64,
        ),  # NumPy scalar is strong
        (lambda x: x / 2, (np.ones(2, np.int32),), np.float64),
        (lambda x: np.sqrt(x), (np.ones(2, np.int16),), np.float32),
        (lambda x: x.sum(), (np.ones(2, np.int8),), np.int64),
        (lambda x: x.mean(), (np.ones(2, np.float32),), np.float32),
        (lambda x, y: x + y, (np.ones(2, np.uint8), np.ones(2, np.int8)), np.int16),
    ],
)
def test_result_dtypes_follow_numpy(fn, args, dtype):
    assert out_meta(fn, *args).dtype == np.dtype(dtype)
    assert np.asarray(fn(*args)).dtype == np.dtype(dtype)


def test_out_of_range_python_int_raises_like_numpy():
    x = np.ones(2, np.uint8)
    with pytest.raises(OverflowError):
        x + 300
    with pytest.raises(OverflowError):
        gcompile.trace(lambda a: a + 300, x)


def test_numpy_functions_of_python_floats_are_strong():
    graph = gcompile.trace(lambda x, dt: x * np.exp(dt), np.ones(2, np.float32), 0.5)
    assert out_meta(lambda x, dt: x * np.exp(dt), np.ones(2, np.float32), 0.5).dtype == np.float64
    assert "astype(%dt, dtype=float64)" in str(graph)


@pytest.mark.parametrize(
    "fn, layout, writeable",
    [
        (lambda x: x.T, "F", True),
        (lambda x: x[:, ::2], "A", True),
        (lambda x: x[1:], "C", True),
        (lambda x: np.broadcast_to(x[:1], (5, 4)), "A", False),
        (lambda x: x.reshape(2, 10), "C", True),
        (lambda x: x + 1, "C", True),
        (lambda x: x.T + 1, "F", True),
    ],
)
def test_layout_and_writeability_of_views(fn, layout, writeable):
    meta = out_meta(fn, np.ones((5, 4)))
    assert (meta.layout, meta.writeable) == (layout, writeable)


def test_full_integer_index_gives_a_numpy_scalar():
    meta = out_meta(lambda x: x[1, 2], np.ones((3, 4)))
    assert meta.scalar and meta.shape == ()
    assert out_meta(lambda x: x[1, 2, ...], np.ones((3, 4))).scalar is False


def test_normalize_axes():
    assert normalize_axes(None, 3) == (0, 1, 2)
    assert normalize_axes(-1, 3) == (2,)
    assert normalize_axes((2, 0), 3) == (0, 2)
    with pytest.raises(np.exceptions.AxisError):
        normalize_axes(3, 3)
    with pytest.raises(ValueError, match="duplicate"):
        normalize_axes((0, -3), 3)
