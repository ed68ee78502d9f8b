"""Products for generated code: short vector products in loop bodies become fusible elementwise
products and sums, scalar factors move out of products (``scalar_factors``), and a batch of
rows times one matrix is one matrix product (``batched_rows``).

``matmul(a, b)`` or ``dot(a, b)`` of two 1-D arrays => ``sum(multiply(a, b))``; of a matrix
and a vector => ``sum(multiply(M, v), axis=1)``; of a vector and a matrix =>
``sum(multiply(v[:, None], M), axis=0)``. Run once per
iteration of a loop (``Graph.repeated``), a BLAS call costs a library call and its dispatch for
a few dozen elements (``A[i, :j] @ A[:j, j]`` in a factorisation); as a multiply and a sum it
fuses with the slices around it into one reduction kernel, which the loop program calls
natively and whose sum the kernel rewrites vectorise. A matrix of ``SMALL_MATRIX`` elements or
more (at the traced sizes, guarded: a call with a larger one traces again) stays a product,
which the loop program hands to BLAS: a kernel
would sum ``v @ M`` down M's columns, one strided pass per column. Not bitwise NumPy's result: BLAS
accumulates in its own order, the kernel in another, both valid summation orders (the error
bound of a sum holds for either). Not applied to straight-line code, where NumPy's own call
runs at BLAS speed, nor to integer products narrower than int64 (``sum`` would widen them)
or booleans (``dot`` of booleans is an ``or`` of ``and``s).
"""

from __future__ import annotations

from ..ir import ops
from ..ir.graph import Graph, Node
from ..ir.shape_env import IndexQuestion, decide, hint, using
from ..ir.symbolic import product_of

SMALL_MATRIX = 4096  # elements of the largest matrix a matrix-vector product is fused with


def _ndim(value) -> int | None:
    if not isinstance(value, Node) or value.meta.scalar:
        return None
    return value.meta.ndim


def _decomposable(node: Node) -> bool:
    """A product of a vector with a vector or a matrix (either side) of a summable dtype."""
    if node.op != "call" or node.target not in (ops.MATMUL, ops.DOT) or node.kwargs:
        return False
    if len(node.args) != 2 or tuple(_ndim(v) for v in node.args) not in _SUMMED_AXIS:
        return False
    dtype = node.meta.dtype
    if not (dtype.kind in "fc" or (dtype.kind in "iu" and dtype.itemsize == 8)):
        return False
    if dtype.kind in "iu":  # BLAS has no integer product
        return True
    with using(node.graph.shape_env):
        return all(_small(v) for v in node.args)


def _small(operand: Node) -> bool:
    """Whether ``operand`` has fewer than ``SMALL_MATRIX`` elements: for a matrix whose sizes
    are no loop index's, a guarded question (a call past it traces again, for BLAS); else at
    the traced sizes, as a vector's or a window's that a loop index sizes."""
    size = product_of(operand.meta.shape)
    if operand.meta.ndim == 2:
        try:
            return decide("<", size, SMALL_MATRIX, "a matrix product fused, not BLAS")
        except IndexQuestion:
            pass
    return hint(size) < SMALL_MATRIX


# (ndim of a, ndim of b) -> the axis of multiply(a', b') summed: v @ w, M @ v (rows), v @ M
_SUMMED_AXIS = {(1, 1): None, (2, 1): 1, (1, 2): 0}


def vector_products(graph: Graph) -> bool:
    """Rewrite each product of two vectors in a loop body (see the module docstring)."""
    if not graph.repeated:
        return False
    changed = False
    for node in list(graph.nodes):
        if not _decomposable(node):
            continue
        a, b = node.args
        axis = _SUMMED_AXIS[(a.meta.ndim, b.meta.ndim)]
        with graph.inserting_before(node):
            if axis == 0:  # v @ M: v as a column, broadcast along M's rows
                a = graph.call(
                    ops.GETITEM, (a,), {"index": (slice(None), None)}, source=node.source
                )
            product = graph.call(ops.MULTIPLY, (a, b), source=node.source)
            params = {} if axis is None else {"axis": axis}
            total = graph.call(ops.SUM, (product,), params, source=node.source)
        graph.replace_all_uses_with(node, total)  # dce removes the product node
        changed = True
    return changed


vector_products.skips_kernels = True


def scalar_factors(graph: Graph) -> bool:
    """``matmul(s * M, x) => s * matmul(M, x)`` (and ``M * s``, ``M / s``, on either operand;
    ``dot`` too) when the scaled operand has more elements than the product, at the traced
    sizes, and nothing else reads it: ``alpha * A @ x`` scales a vector, not the matrix. Not
    bitwise NumPy's result (one rounding moves from each term to the sum); the error bound of
    the product holds for both. Dtypes must not change: the scalar does not promote M."""
    changed = False
    for node in list(graph.nodes):
        if node.op != "call" or node.target not in (ops.MATMUL, ops.DOT) or node.kwargs:
            continue
        for position, operand in enumerate(node.args):
            scaled = _scaled(operand, node)
            if scaled is None:
                continue
            matrix, factor, op, matrix_first = scaled
            args = list(node.args)
            args[position] = matrix
            with graph.inserting_before(node):
                product = graph.call(node.target, tuple(args), source=node.source)
                pair = (product, factor) if matrix_first else (factor, product)
                result = graph.call(op, pair, source=node.source)
            if result.meta.dtype != node.meta.dtype or result.meta.shape != node.meta.shape:
                graph.erase(result)
                graph.erase(product)
                continue
            graph.replace_all_uses_with(node, result)
            changed = True
            break
    return changed


scalar_factors.skips_kernels = True


def _scaled(operand, product: Node) -> tuple | None:
    """``(M, s, op, M first)`` of an operand ``s * M``, ``M * s`` or ``M / s`` worth splitting."""
    if not isinstance(operand, Node) or operand.op != "call" or len(operand.users) != 1:
        return None
    if operand.target not in (ops.MULTIPLY, ops.DIVIDE) or operand.kwargs:
        return None
    sides = [(0, 1)] if operand.target is ops.DIVIDE else [(0, 1), (1, 0)]
    for m, f in sides:
        matrix, factor = operand.args[m], operand.args[f]
        if not isinstance(matrix, Node) or matrix.meta.ndim == 0:
            continue
        if isinstance(factor, Node) and factor.meta.ndim != 0 or isinstance(factor, (list, tuple)):
            continue
        if matrix.meta.dtype != operand.meta.dtype or operand.meta.dtype.kind not in "fc":
            continue
        with using(product.graph.shape_env):
            larger = hint(product_of(operand.meta.shape)) > hint(product_of(product.meta.shape))
        if larger:
            return matrix, factor, operand.target, m == 0
    return None


def batched_rows(graph: Graph) -> bool:
    """``matmul(a, B)`` of a C-ordered ``a`` of more than two axes and a matrix ``B`` =>
    ``reshape(matmul(reshape(a, (-1, k)), B), (..., m, n))``: the batch's rows are the rows
    of one matrix (a view of ``a``), so BLAS runs one ``gemm`` instead of NumPy's loop of one
    small product per batch entry (npbench's doitgen: 3600 ``(1 x 128) @ (128 x 128)``). Not
    bitwise NumPy's result (another BLAS kernel sums each dot product); the error bound holds."""
    changed = False
    for node in list(graph.nodes):
        if node.op != "call" or node.target is not ops.MATMUL or node.kwargs:
            continue
        a, b = node.args
        if not all(isinstance(v, Node) and not v.meta.scalar for v in (a, b)):
            continue
        if a.meta.ndim <= 2 or b.meta.ndim != 2 or a.meta.layout != "C":
            continue
        with graph.inserting_before(node):
            rows = graph.call(
                ops.RESHAPE, (a,), {"shape": (-1, a.meta.shape[-1])}, source=node.source
            )
            product = graph.call(ops.MATMUL, (rows, b), source=node.source)
            result = graph.call(
                ops.RESHAPE, (product,), {"shape": node.meta.shape}, source=node.source
            )
        graph.replace_all_uses_with(node, result)
        changed = True
    return changed


batched_rows.skips_kernels = True
