"""Products for generated code (``passes/products.py``): scalar factors moved out of matrix
products and batches of rows made one matrix product, against NumPy through ``check`` (the
error bound of a product holds for both evaluations), and the cases left alone."""

from __future__ import annotations

import numpy as np

import gcompile
from gcompile.ir.subgraph import walk

from ..support import check

RNG = np.random.default_rng(11)


def gesummv(alpha, beta, A, B, x):  # polybench: two scaled matrix-vector products
    return alpha * A @ x + beta * B @ x


def scaled_both_sides(A, x, s):
    return (x / s) @ (A * s) + (2.0 * A) @ A.T


def scaled_twice(A, x, alpha):
    scaled = alpha * A
    return scaled @ x, scaled.sum()


def promoted(A32, x32, alpha):
    return (alpha * A32) @ x32  # alpha a float64 0-d array: alpha * A32 is float64


def _products(graph) -> list:
    return [v.node for v in walk(graph) if v.node.op == "call" and v.node.target.name == "matmul"]


def _optimized(fn, *args, backend="numba"):
    return gcompile.trace(fn, *args, stage="optimized", options={"backend": backend})


def test_a_scalar_factor_moves_out_of_the_product():
    args = (1.5, 1.2, RNG.random((40, 40)), RNG.random((40, 40)), RNG.random(40))
    for product in _products(_optimized(gesummv, *args)):
        assert product.args[0].op == "placeholder", product.format_node()
        (user,) = product.users
        assert user.target.name == "multiply"
    check(gesummv, *args)


def test_either_operand_and_a_division_and_only_where_the_matrix_is_larger():
    A, x = RNG.random((30, 30)), RNG.random(30)
    graph = _optimized(scaled_both_sides, A, x, 3.0)
    operands = {v.name for product in _products(graph) for v in product.args}
    assert "A" in operands  # (A * s) split off; (2.0 * A) @ A.T is as large as its operand
    assert any(p.args[0].target.name == "multiply" for p in _products(graph))
    check(scaled_both_sides, A, x, 3.0)


def test_left_alone_when_the_scaled_matrix_is_read_elsewhere_or_promoted():
    A, x = RNG.random((30, 30)), RNG.random(30)
    (product,) = _products(_optimized(scaled_twice, A, x, 2.0))
    assert product.args[0].target.name == "multiply"
    A32, x32 = A.astype(np.float32), x.astype(np.float32)
    (product,) = _products(_optimized(promoted, A32, x32, np.array(2.0)))
    assert product.args[0].target.name == "multiply"
    check(scaled_twice, A, x, 2.0)
    check(promoted, A32, x32, np.array(2.0))


def test_the_interpreter_keeps_numpys_order():
    args = (1.5, 1.2, RNG.random((40, 40)), RNG.random((40, 40)), RNG.random(40))
    for product in _products(_optimized(gesummv, *args, backend="interpreter")):
        assert product.args[0].target.name == "multiply"


def doitgen(A, C4):  # npbench's polybench doitgen
    NR, NQ, NP = A.shape
    A[:] = np.reshape(np.reshape(A, (NR, NQ, 1, NP)) @ C4, (NR, NQ, NP))


def batch_of_transposed(A, W):
    return np.swapaxes(A, 0, 1) @ W  # not C-ordered: NumPy's batched product stays


def test_a_batch_of_rows_times_a_matrix_is_one_matrix_product():
    A, C4 = RNG.random((5, 4, 6)), RNG.random((6, 6))
    (product,) = _products(_optimized(doitgen, A, C4))
    assert [v.meta.ndim for v in product.args] == [2, 2]
    assert product.args[0].target.name == "reshape"
    check(doitgen, A, C4)
    (product,) = _products(_optimized(batch_of_transposed, A, C4))
    assert product.args[0].meta.ndim == 3
    check(batch_of_transposed, A, C4)
    (product,) = _products(_optimized(doitgen, A, C4, backend="interpreter"))
    assert product.args[0].meta.ndim == 4
