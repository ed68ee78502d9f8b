"""Matrix products in loop programs: BLAS's ``gemm`` into a fresh array (``blas``), and the
matrix-vector products of a loop's trips as one matrix product per block of trips.

A loop ``for k in range(start, stop)`` whose trip multiplies a column of one matrix by the
columns of another from ``k`` on, ``X[:, k] @ Y[:, k + c:E]`` (``X`` and ``Y`` not written by
the loop, ``E`` not depending on ``k``: the covariance of polybench), runs one ``gemv`` per trip
that streams all of ``Y[:, k + c:E]`` through the cache again. The products of ``BLOCK`` trips
are rows of one ``gemm``, computed at the first trip of each block::

    trip = (k - start) % 32
    if trip == 0:
        rows = min(32, stop - k)
        table = np.empty((rows, Y[:, k + c:E].shape[1]), np.float64)
        if rows == 1:
            _matmul_into(table[0], X[:, k], Y[:, k + c:E])
        else:
            _matmul_into(table, X[:, k:k + rows].T, Y[:, k + c:E])
    product = table[trip, trip:]          (trip k + r: row r, from column r on)

The extra columns (the triangle left of the diagonal) are BLOCK / (2 (E - k)) of the work.
Measured on the covariance of the loop bench (500 x 600, 1 thread): 7.6 ms with a ``gemv`` per
trip, 3.9 ms blocked (NumPy 8.5 ms); blocks of 64 and 128 were no faster. The sums are BLAS's
in either case, in another order than NumPy's per-trip product (within a few ulp).

A part of the program lowering (``programs._ProgramLowering``).
"""

from __future__ import annotations

from ...ir import ops
from ...ir.control import ForRange
from ...ir.graph import Node
from ...ir.symbolic import free_symbols, is_expr, is_int, product_of, prove_nonnegative
from ...loops.nodes import (
    Attr,
    BinOp,
    Call,
    Compare,
    Const,
    Eval,
    If,
    Item,
    Let,
    Name,
    Slice,
    Tuple,
)
from . import blas
from .program_regions import reshaped
from .rules import NoTemplate
from .syntax import type_name

BLOCK = 32  # trips whose products are one gemm


class ProgramProducts:
    """The program lowering's matrix products (see the module docstring)."""

    def product(self, node: Node) -> None:
        """A matrix (or matrix-vector) product: BLAS's ``gemm`` into a fresh array (``blas``).
        A left operand of more than two axes and a matrix on the right (``x @ W`` over a batch
        of rows) is one product of its rows, read as a matrix."""
        meta = node.meta
        operands = [v for v in node.args if isinstance(v, Node) and not v.meta.scalar]
        if node.kwargs or len(operands) != 2 or len(node.args) != 2 or meta.dtype.kind not in "fc":
            raise NoTemplate(f"{node.target.name} of {meta.dtype} operands in a loop body")
        if self.top():  # (the host's product and epilogue: ``host``)
            raise NoTemplate("a matrix product outside loops runs in the host, through NumPy")
        unavailable = blas.available()
        if unavailable:
            raise NoTemplate(unavailable)
        a, b = (self.cast(v, meta.dtype) for v in operands)
        ndims = tuple(v.meta.ndim for v in operands)
        if max(ndims) > 2 and (ndims[1] != 2 or node.target is ops.DOT):
            raise NoTemplate(f"a product of {ndims[0]}-d and {ndims[1]}-d arrays in a loop body")
        if self.blocked_product(node):
            return
        out = self.output_buffer(node, 0, meta, "C")
        into = out
        if ndims[0] > 2:  # the rows of a (batch, k) matrix; out as (batch, n)
            rows = product_of(operands[0].meta.shape[:-1])
            inner, columns = (v.meta.shape[-1] for v in operands)
            a = reshaped(Call(Name("np.ascontiguousarray"), (a,)), self.shape((rows, inner)))
            into = reshaped(out, self.shape((rows, columns)))
        self.emit(Eval(Call(Name("_matmul_into"), (into, a, b))))
        self.blas = True
        self.assign(node, Item(out, (Const(0),)) if meta.ndim == 0 else out)

    def cast(self, value: Node, dtype):
        """An operand's value, converted to ``dtype`` when it has another."""
        expression = self.values[value]
        if value.meta.dtype == dtype:
            return expression
        return Call(Attr(expression, "astype"), (Name(type_name(dtype)),))

    def blocked_product(self, node: Node) -> bool:
        """Emit ``node`` (a product in a loop body) as a row of its block's ``gemm``; False
        when it is not ``X[:, k] @ Y[:, k + c:E]`` of the innermost open loop."""
        if not self.open_loops or len(node.args) != 2 or node.kwargs:
            return False
        loop_node, outer = self.open_loops[-1]
        if not isinstance(loop_node.target, ForRange):  # (a while loop: no index to block)
            return False
        shape = _blocked_shape(node, loop_node)
        if shape is None:
            return False
        x_node, y_node, offset, end = shape
        k = self.symbols[loop_node.target.index]
        x, y = self.values[x_node], self.values[y_node]
        dtype = Name(type_name(node.meta.dtype))
        table, trip, rows = self.fresh("block_products"), self.fresh("trip"), self.fresh("rows")
        outer.append(Let(table, Call(Name("np.empty"), (Tuple((Const(0), Const(0))), dtype))))
        start, stop = (self.size(loop_node.kwargs[key]) for key in ("start", "stop"))
        first = BinOp("+", k, Const(offset)) if offset else k
        columns = Item(y, (Slice(), Slice(first, None if end is None else self.size(end))))
        width = Item(Attr(columns, "shape"), (Const(1),))
        one = Eval(
            Call(Name("_matmul_into"), (Item(table, (Const(0),)), Item(x, (Slice(), k)), columns))
        )
        block = Attr(Item(x, (Slice(), Slice(k, BinOp("+", k, rows)))), "T")
        several = Eval(Call(Name("_matmul_into"), (table, block, columns)))
        since = k if start == Const(0) else BinOp("-", k, start)
        self.emit(Let(trip, BinOp("%", since, Const(BLOCK))))
        compute = (
            Let(rows, Call(Name("min"), (Const(BLOCK), BinOp("-", stop, k)))),
            Let(table, Call(Name("np.empty"), (Tuple((rows, width)), dtype))),
            If(Compare(("==",), (rows, Const(1))), (one,), (several,)),
        )
        self.emit(If(Compare(("==",), (trip, Const(0))), compute))
        self.blas = True
        self.assign(node, Item(table, (trip, Slice(trip, None))))
        return True


def _blocked_shape(node: Node, loop_node: Node) -> tuple | None:
    """``(X, Y, c, E)`` of a product ``X[:, k] @ Y[:, k + c:E]`` in ``loop_node``'s body (step
    1, from a start >= 0; ``X``, ``Y`` 2-d values the loop only reads; ``c >= 0``; ``E`` None
    or free of ``k``), else None."""
    loop: ForRange = loop_node.target
    start = loop_node.kwargs["start"]
    if int(loop_node.kwargs["step"]) != 1 or prove_nonnegative(start) is not True:
        return None
    carried = dict(loop.carries)
    read_only = {p for i, p in enumerate(loop.body.placeholders) if i not in carried}
    a, b = node.args
    items = [_column_items(v, read_only, node.meta.dtype) for v in (a, b)]
    if None in items:
        return None
    column, columns = items[0], items[1]
    k = loop.index
    if not is_expr(column) or column != k or not isinstance(columns, slice):
        return None
    if columns.step is not None or columns.start is None:
        return None
    offset = columns.start - k
    if not is_int(offset) or offset < 0:
        return None
    if columns.stop is not None and is_expr(columns.stop) and k in free_symbols(columns.stop):
        return None
    return a.args[0], b.args[0], int(offset), columns.stop


def _column_items(value, read_only: set, dtype):
    """The column item of ``value = M[:, item]``, ``M`` a 2-d read-only value of ``dtype``."""
    if not isinstance(value, Node) or value.target is not ops.GETITEM:
        return None
    base, index = value.args[0], value.kwargs["index"]
    if base not in read_only or base.meta.ndim != 2 or base.meta.dtype != dtype:
        return None
    if not isinstance(index, (tuple, list)) or len(index) != 2 or index[0] != slice(None):
        return None
    return index[1]
