"""Matrix products on the Numba backend: NumPy's own BLAS call into a pooled buffer, the epilogue
updating that buffer in one serial pass, and einsum's matrix-product forms.

Float einsum cases use integer-valued inputs: einsum sums in its own order and BLAS with fused
multiply-adds, so only exact sums make the two agree bit for bit (as they must for ``check``'s
interpreter run).
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import gcompile
from gcompile import UnsupportedError
from tests.support import check


def compiled(fn, **options):
    return gcompile.compile(fn, fullgraph=True, options=options or None)


def program(fn):
    return fn.entries[-1].run.program


def uniform(shape, dtype=np.float64, seed=0):
    values = np.random.default_rng(seed).uniform(-1, 1, shape)
    if np.dtype(dtype).kind == "c":
        values = values + 1j * np.random.default_rng(seed + 100).uniform(-1, 1, shape)
    return values.astype(dtype)


def small_integers(shape, dtype=np.float64, seed=0):
    return np.random.default_rng(seed).integers(-3, 4, shape).astype(dtype)


# -- every form of matmul and dot, against NumPy ---------------------------------------------------

PRODUCTS = {
    "matrix": (lambda a, b: a @ b, (5, 4), (4, 3)),
    "batch": (lambda a, b: np.matmul(a, b), (2, 5, 4), (2, 4, 3)),
    "broadcast batch": (lambda a, b: a @ b, (2, 1, 5, 4), (3, 4, 3)),
    "matrix with stacked right": (lambda a, b: a @ b, (5, 4), (2, 4, 3)),
    "vector-matrix": (lambda a, b: a @ b, (4,), (4, 3)),
    "matrix-vector": (lambda a, b: np.matmul(a, b), (5, 4), (4,)),
    "vector-vector": (lambda a, b: a @ b, (4,), (4,)),
    "dot matrix": (lambda a, b: np.dot(a, b), (5, 4), (4, 3)),
    "dot matrix-vector": (lambda a, b: a.dot(b), (5, 4), (4,)),
    "dot vector-vector": (lambda a, b: np.dot(a, b), (4,), (4,)),
    "dot n-d": (lambda a, b: np.dot(a, b), (2, 5, 4), (3, 4, 2)),
    "transposed left": (lambda a, b: a.T @ b, (4, 5), (4, 3)),
    "transposed right": (lambda a, b: a @ b.T, (5, 4), (3, 4)),
    "both transposed": (lambda a, b: np.dot(a.T, b.T), (4, 5), (3, 4)),
    "strided": (lambda a, b: a[::2] @ b[:, ::2], (9, 4), (4, 6)),
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.complex128])
@pytest.mark.parametrize("name", list(PRODUCTS))
def test_products_match_numpy(name, dtype):
    fn, a_shape, b_shape = PRODUCTS[name]
    check(fn, uniform(a_shape, dtype) * 4, uniform(b_shape, dtype, seed=1) * 4)


@pytest.mark.parametrize(
    "a_dtype, b_dtype", [(np.int64, np.float32), (np.int32, np.int8), (np.float32, np.float64)]
)
def test_mixed_dtypes_promote_like_numpy(a_dtype, b_dtype):
    a, b = small_integers((5, 4), a_dtype), small_integers((4, 3), b_dtype, seed=1)
    check(lambda a, b: a @ b, a, b)
    check(lambda a, b: np.dot(a, b), a, b)
    check(lambda a, b: np.matmul(a, b, dtype=np.float64), a, b)


def test_a_product_of_a_scalar_is_not_a_blas_call():
    check(lambda a: np.dot(a, 3.0), uniform((3, 2)))
    check(lambda a, s: np.dot(s, a), uniform((3, 2)), np.float64(2.5))


def test_f_ordered_inputs_and_an_empty_product():
    a = np.asfortranarray(uniform((6, 5)))
    check(lambda a, b: a @ b, a, uniform((5, 4), seed=1))
    check(lambda a, b: a @ b, uniform((3, 0)), uniform((0, 2)))


# -- epilogues ----------------------------------------------------------------------------------


def dense_relu(x, w, b):
    return np.maximum(x @ w + b, 0)


def dense_gelu(x, w, b):
    y = x @ w + b
    return 0.5 * y * (1.0 + np.tanh(0.7978845608 * (y + 0.044715 * y * y * y)))


def batched_bias_scale(x, w, b):
    return (np.matmul(x, w) + b) * 0.5


@pytest.mark.parametrize(
    "fn, x_shape, dtype",
    [
        (dense_relu, (64, 48), np.float32),
        (dense_gelu, (64, 48), np.float64),
        (batched_bias_scale, (3, 20, 48), np.float64),
        (dense_relu, (64, 48), np.int64),
    ],
)
def test_epilogues_match_numpy(fn, x_shape, dtype):
    scale = 4 if np.dtype(dtype).kind == "i" else 1
    x, w = uniform(x_shape, dtype) * scale, uniform((48, 32), dtype, seed=1) * scale
    check(fn, x, w, uniform((32,), dtype, seed=2) * scale)


def test_epilogue_that_changes_dtype_or_reads_the_product_transposed():
    x, w = uniform((16, 16)), uniform((16, 16), seed=1)
    check(lambda x, w: (x @ w).astype(np.float32) * 2, x, w)
    check(lambda x, w: x @ w > 0, x, w)
    check(lambda x, w, v: (v @ w) + (x @ w).T, x, w, uniform((16, 16), seed=2))


def reads_a_product_through_a_broadcast_view(a, b):
    p = a @ b
    q = b @ a
    return (p + 1) + q[:, :1]


def test_an_epilogue_never_overwrites_a_product_it_reads_through_a_view():
    """``q[:, :1]`` is read for every column of a row: writing the result into ``q``'s buffer
    would overwrite ``q[i, 0]`` before the row's other columns read it."""
    a, b = uniform((16, 16)), uniform((16, 16), seed=1)
    fn = compiled(reads_a_product_through_a_broadcast_view)
    np.testing.assert_array_equal(fn(a, b), reads_a_product_through_a_broadcast_view(a, b))
    assert "= v_matmul_2" not in program(fn).source


# -- what the host runs --------------------------------------------------------------------------


def test_the_product_is_one_numpy_call_into_the_buffer_the_epilogue_updates():
    fn = compiled(dense_relu, parallel_threshold=1)
    x, w = uniform((64, 48), np.float32), uniform((48, 32), np.float32, seed=1)
    b = uniform(32, np.float32, seed=2)
    np.testing.assert_array_equal(fn(x, w, b), dense_relu(x, w, b))
    host = program(fn).source
    assert re.findall(r"np\.(?:matmul|dot)\(.*\)", host) == ["np.matmul(v_x, v_w, out=v_matmul_1)"]
    assert host.count("_empty(") == 1  # the product's buffer; the epilogue writes into it
    assert "_out0_fused_1 = v_matmul_1" in host
    ((code, _),) = program(fn).kernels
    # Serial even above the parallel threshold: OpenBLAS's threads are still spinning.
    assert not code.parallel and "prange" not in code.source


def test_a_returned_product_is_not_overwritten_by_the_next_call():
    fn = compiled(lambda a, b: np.dot(a, b))
    a, b = uniform((512, 256)), uniform((256, 512), seed=1)
    first = fn(a, b)
    kept = first.copy()
    second = fn(b.T, a.T)
    assert "out=v_dot_1" in program(fn).source
    np.testing.assert_array_equal(first, kept)
    np.testing.assert_array_equal(second, np.dot(b.T, a.T))


# -- einsum ---------------------------------------------------------------------------------------

EINSUMS = [
    ("ij,jk->ik", (5, 4), (4, 3)),
    ("ij,jk", (5, 4), (4, 3)),
    ("ij,kj->ik", (5, 4), (3, 4)),
    ("ji,jk->ik", (4, 5), (4, 3)),
    ("bij,bjk->bik", (2, 5, 4), (2, 4, 3)),
    ("bij,bjk->bik", (1, 5, 4), (3, 4, 3)),
    ("bij,bkj->bik", (2, 5, 4), (2, 3, 4)),
    ("bji,bjk->bik", (2, 4, 5), (2, 4, 3)),
    ("...ij,...jk->...ik", (2, 3, 5, 4), (4, 3)),
    ("j,jk->k", (4,), (4, 3)),
    ("ij,j->i", (5, 4), (4,)),
    ("i,i->", (4,), (4,)),
    ("bj,bjk->bk", (2, 4), (2, 4, 3)),
    ("bij,bj->bi", (2, 5, 4), (2, 4)),
    ("...j,...j->...", (3, 4), (3, 4)),
]


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.complex128])
@pytest.mark.parametrize("subscripts, a_shape, b_shape", EINSUMS)
def test_einsum_matrix_products_match_numpy(subscripts, a_shape, b_shape, dtype):
    a, b = small_integers(a_shape, dtype), small_integers(b_shape, dtype, seed=1)
    check(lambda a, b: np.einsum(subscripts, a, b), a, b)
    graph = gcompile.trace(lambda a, b: np.einsum(subscripts, a, b), a, b)
    assert [n.target.name for n in graph.nodes if n.op == "call" and n.kind == "matmul"] == [
        "matmul"
    ]


def test_einsum_keeps_numpys_memory_order():
    a, b = np.asfortranarray(small_integers((5, 4))), np.asfortranarray(small_integers((4, 3)))
    fn = compiled(lambda a, b: np.einsum("ij,jk->ik", a, b))
    result = fn(a, b)
    np.testing.assert_array_equal(result, np.einsum("ij,jk->ik", a, b))
    assert result.flags.f_contiguous and not result.flags.c_contiguous


def einsum_into(a, b, out):
    np.einsum("ij,jk->ik", a, b, out=out, optimize=True)
    return out


def test_einsum_into_an_argument_with_optimize():
    check(einsum_into, small_integers((5, 4)), small_integers((4, 3), seed=1), np.zeros((5, 3)))


def test_einsum_with_an_epilogue_is_a_product_and_one_kernel():
    x, w = small_integers((32, 16), np.float32), small_integers((16, 8), np.float32, 1)
    b = small_integers(8, np.float32, 2)
    fn = lambda x, w, b: np.maximum(np.einsum("ij,jk->ik", x, w) + b, 0)  # noqa: E731
    check(fn, x, w, b)
    graph = gcompile.trace(fn, x, w, b, stage="fused")
    kinds = [n.kind for n in graph.nodes if n.op == "call"]
    assert kinds == ["matmul", "fused"]


@pytest.mark.parametrize(
    "subscripts, a_shape, b_shape",
    [
        ("ij,jk->ki", (5, 4), (4, 3)),
        ("ij,jk->ijk", (5, 4), (4, 3)),
        ("bij,bjk", (2, 5, 4), (2, 4, 3)),
        ("ij,jk->ik", (5, 1), (4, 3)),  # (einsum broadcasts a label of size 1)
        ("ibj,bkj->bik", (5, 2, 4), (2, 3, 4)),
        ("ijk,ijk->ij", (5, 2, 4), (5, 2, 4)),  # (a dot product per batch item: fused)
    ],
)
def test_other_einsums_are_broadcast_products_summed(subscripts, a_shape, b_shape):
    a, b = small_integers(a_shape), small_integers(b_shape, seed=1)
    check(lambda a, b: np.einsum(subscripts, a, b), a, b)
    graph = gcompile.trace(lambda a, b: np.einsum(subscripts, a, b), a.astype(float), b)
    assert subscripts != "ijk,ijk->ij" or "matmul" not in str(graph)


def test_an_einsum_diagonal_is_refused_and_runs_eagerly():
    a, b = small_integers((3, 3)), small_integers((3, 2), seed=1)
    with pytest.raises(UnsupportedError, match="repeated in one operand"):
        compiled(lambda a, b: np.einsum("ii,ij->j", a, b))(a, b)
    fn = gcompile.compile(lambda a, b: np.einsum("ii,ij->j", a, b))
    with pytest.warns(gcompile.GcompileWarning, match="a diagonal"):
        result = fn(a, b)
    np.testing.assert_array_equal(result, np.einsum("ii,ij->j", a, b))
