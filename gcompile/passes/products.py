"""Vector products in loop bodies become fusible elementwise products and sums.

``matmul(a, b)`` or ``dot(a, b)`` of two 1-D arrays => ``sum(multiply(a, b))``. Run once per
iteration of a loop (``Graph.repeated``), a BLAS call costs a library call and its dispatch for
a few dozen elements (``A[i, :j] @ A[:j, j]`` in a factorisation); as a multiply and a sum it
fuses with the slices around it into one reduction kernel, which the loop program calls
natively and whose sum the kernel rewrites vectorise. Not bitwise NumPy's result: BLAS
accumulates in its own order, the kernel in another, both valid summation orders (the error
bound of a sum holds for either). Not applied to straight-line code, where NumPy's own call
runs at BLAS speed, nor to integer products narrower than int64 (``sum`` would widen them)
or booleans (``dot`` of booleans is an ``or`` of ``and``s).
"""

from __future__ import annotations

from ..ir import ops
from ..ir.graph import Graph, Node


def _vector(value) -> bool:
    return isinstance(value, Node) and value.meta.ndim == 1 and not value.meta.scalar


def _decomposable(node: Node) -> bool:
    if node.op != "call" or node.target not in (ops.MATMUL, ops.DOT) or node.kwargs:
        return False
    if not all(_vector(v) for v in node.args) or len(node.args) != 2:
        return False
    dtype = node.meta.dtype
    return dtype.kind in "fc" or (dtype.kind in "iu" and dtype.itemsize == 8)


def vector_products(graph: Graph) -> bool:
    """Rewrite each product of two vectors in a loop body (see the module docstring)."""
    if not graph.repeated:
        return False
    changed = False
    for node in list(graph.nodes):
        if not _decomposable(node):
            continue
        with graph.inserting_before(node):
            product = graph.call(ops.MULTIPLY, node.args, source=node.source)
            total = graph.call(ops.SUM, (product,), source=node.source)
        graph.replace_all_uses_with(node, total)  # dce removes the product node
        changed = True
    return changed


vector_products.skips_kernels = True
