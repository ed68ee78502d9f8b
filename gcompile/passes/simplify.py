"""Exact algebraic simplification: rewrites that change no result, ever.

Each rule is a function ``(node, graph) -> replacement | None`` (``graph`` for rules
that build a new node); its docstring shows
``before => after`` and says why the rewrite is exact for every input, NaN,
infinities, -0.0 and integer wrap-around included. A rewrite is applied only
when the replacement has the node's shape, dtype and weakness; a replacement
that would make a returned value alias an argument (``return x * 1``) is
skipped, since eager mode returns a new array there; so is one that would make a value written
into an array share that array's memory (``A[k] = A[:, -1] * 1``).

Not here, because they are not exact: ``x * 0 -> 0`` (NaN, inf, -0.0),
``x + 0.0 -> x`` (-0.0 + 0.0 is +0.0), ``maximum(x, x)`` swaps (-0.0 vs 0.0),
``x ** 2 -> x * x`` for complex (``power`` rounds differently).
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..ir import ops
from ..ir.alias import memory_of, returned
from ..ir.graph import Graph, Node


def _is_literal(value: Any, number: float) -> bool:
    """``value`` is the literal ``number`` (a Python or NumPy scalar, not a bool)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.number)):
        return False
    return bool(value == number) and not (isinstance(value, complex) and value.imag)


def _call(node: Any, op: ops.OpDef) -> bool:
    return isinstance(node, Node) and node.op == "call" and node.target is op


def multiply_by_one(node: Node, graph: Graph) -> Any:
    """``multiply(x, 1) => x`` (either side). Exact: x * 1 is x for every real float (NaN, inf, -0.0
    keep their value and sign) and every integer; the dtype check rejects promotions (``bool * 1`` is
    int). Not for complex: (inf+1j) * 1 computes inf*0 = nan in the imaginary part."""
    if (
        node.target is ops.MULTIPLY and node.meta.dtype.kind != "c"
    ):  # complex: inf * (1+0j) has a nan
        x, y = node.args
        if _is_literal(y, 1):
            return x
        if _is_literal(x, 1):
            return y
    return None


def divide_by_one(node: Node, graph: Graph) -> Any:
    """``divide(x, 1) => x``. Exact: x / 1 is x for every real float; integer x gives a float result,
    which the dtype check rejects. Not for complex (as for multiply)."""
    if node.target is ops.DIVIDE and node.meta.dtype.kind != "c" and _is_literal(node.args[1], 1):
        return node.args[0]
    return None


def subtract_zero(node: Node, graph: Graph) -> Any:
    """``subtract(x, 0) => x``. Exact: x - (+0) is x for every float, -0.0 included (-0.0 - 0.0 is
    -0.0), NaN and inf too, and for integers. (``x + 0`` is *not* exact: -0.0 + 0.0 is +0.0.)"""
    if (
        node.target is ops.SUBTRACT
        and _is_literal(node.args[1], 0)
        and not _negative_zero(node.args[1])
    ):
        return node.args[0]
    return None


def _negative_zero(value: Any) -> bool:
    return isinstance(value, (float, np.floating)) and np.signbit(value)


def power_one(node: Node, graph: Graph) -> Any:
    """``power(x, 1) => x``. Exact: pow(x, 1) is x for every float (IEEE 754 pow(x, 1) = x) and
    integer."""
    if node.target is ops.POWER and _is_literal(node.args[1], 1):
        return node.args[0]
    return None


def power_two(node: Node, graph: Graph) -> Any:
    """``power(x, 2) => multiply(x, x)`` for real dtypes. Exact: both are correctly rounded (pow(x, 2)
    is the rounded square, as x * x), overflow gives inf either way, and integers wrap identically.
    Not for complex, where ``power`` and a product round differently."""
    if node.target is ops.POWER and _is_literal(node.args[1], 2) and isinstance(node.args[0], Node):
        x = node.args[0]
        if x.meta.dtype.kind in "iuf" and node.meta.dtype == x.meta.dtype:
            with graph.inserting_before(node):
                return graph.call(ops.MULTIPLY, (x, x), source=node.source)
    return None


def involution(node: Node, graph: Graph) -> Any:
    """``negative(negative(x)) => x``, ``invert(invert(x)) => x``, ``logical_not(logical_not(b)) => b``
    (b boolean), ``conjugate(conjugate(z)) => z``. Exact: each flips a sign bit or every bit, twice;
    integer negation wraps symmetrically (-(-INT_MIN) is INT_MIN)."""
    if (
        node.target in (ops.NEGATIVE, ops.INVERT, ops.LOGICAL_NOT, ops.CONJUGATE)
        and _call(node.args[0], node.target)
        and not node.kwargs
        and not node.args[0].kwargs  # a dtype= on either changes the arithmetic
    ):
        return node.args[0].args[0]  # for non-boolean b, the dtype check rejects logical_not
    return None


def astype_same(node: Node, graph: Graph) -> Any:
    """``astype(x, dtype=x.dtype) => x``. Exact: the cast changes nothing."""
    if node.target is ops.ASTYPE and isinstance(node.args[0], Node):
        if node.args[0].meta.dtype == np.dtype(node.kwargs["dtype"]):
            return node.args[0]
    return None


def astype_round_trip(node: Node, graph: Graph) -> Any:
    """``astype(astype(x, wide), x.dtype) => x`` when ``wide`` holds every value of x's dtype exactly
    (f32 -> f64 -> f32, i8 -> i64 -> i8, i32 -> f64 -> i32; not i64 -> f64). Exact: the widening is
    lossless, so narrowing back returns each original value."""
    if node.target is ops.ASTYPE and _call(node.args[0], ops.ASTYPE):
        inner = node.args[0]
        x = inner.args[0]
        if isinstance(x, Node) and x.meta.dtype == node.meta.dtype:
            if _lossless(x.meta.dtype, inner.meta.dtype):
                return x
    return None


def _lossless(source: np.dtype, wide: np.dtype) -> bool:
    """Every value of ``source`` is exactly representable in ``wide``. NumPy calls int64 -> float64
    "safe", but 2**53 + 1 does not survive it: integer -> float needs enough mantissa bits."""
    if source.kind in "iu" and wide.kind in "fc":  # (finfo of a complex dtype describes its parts)
        value_bits = np.iinfo(source).bits - (1 if source.kind == "i" else 0)
        return np.finfo(wide).nmant + 1 >= value_bits
    return bool(np.can_cast(source, wide, "safe"))


def where_same(node: Node, graph: Graph) -> Any:
    """``where(c, x, x) => x``. Exact: both branches are the same value."""
    if node.target is ops.WHERE and len(node.args) == 3 and node.args[1] is node.args[2]:
        return node.args[1]
    return None


def update_with_own_region(node: Node, graph: Graph) -> Any:
    """``update(b, getitem(b, index=i), index=i) => b`` (also through the same views). Exact: the
    region is written with the values it already holds (``u[1:-1] += d`` ends with such a write)."""
    if node.target is not ops.UPDATE or not isinstance(node.args[1], Node):
        return None
    base, value = node.args
    steps = list(node.kwargs.get("views", ())) + [
        ops.ViewStep(ops.GETITEM, (("index", node.kwargs["index"]),))
    ]
    for step in reversed(steps):
        if not (isinstance(value, Node) and value.op == "call" and value.target is step.op):
            return None
        if tuple(sorted(value.kwargs.items())) != step.params:
            return None
        value = value.args[0]
    return base if value is base else None


def update_whole(node: Node, graph: Graph) -> Any:
    """``update(b, v, index=[...]) => v`` (or ``[:]``, ``[:, :]``) when v has b's shape,
    dtype and layout. Exact: every element of b is replaced by v's (``m *= beta`` after
    functionalization, ``D = np.empty(...); D[:] = v``)."""
    if node.target is ops.UPDATE and _whole(node.kwargs["index"]) and not node.kwargs.get("views"):
        base, value = node.args
        if isinstance(value, Node) and (
            value.meta.shape,
            value.meta.dtype,
            value.meta.layout,
        ) == (base.meta.shape, base.meta.dtype, base.meta.layout):
            return value  # (in b's layout: the metas its users derived stay theirs)
    return None


def _whole(index: tuple) -> bool:
    """Whether ``index`` selects every element: ``...`` and ``:`` only."""
    return all(item is Ellipsis or item == slice(None) for item in index)


def copy_of_unread(node: Node, graph: Graph) -> Any:
    """``copy(x) => x`` when nothing else reads ``x`` (a write-back into it does not) and ``x`` is
    a value of the function's own
    (not an argument, a constant or a view) in the copy's layout. Exact: values are immutable
    here, and buffer assignment copies again where a write would reach memory still needed
    (the unroller copies the array a one-trip loop writes, which the next trip then reads)."""
    if node.target is not ops.COPY or not isinstance(node.args[0], Node):
        return None
    x = node.args[0]
    # (a write-back into x, at the end of a loop body, overwrites x: it does not read it)
    readers = [u for u in x.users if u is not node and not _writes_back_into(u, x)]
    if readers or x.meta.layout != node.meta.layout or x.meta.layout not in ("C", "F"):
        return None
    own = x.op == "call" and x.kind != "view" and not x.is_mutation
    carried = x.op == "placeholder" and x.graph.repeated  # (a loop body's value, not an argument)
    return x if own or carried else None


def _writes_back_into(user: Node, x: Node) -> bool:
    return _call(user, ops.WRITEBACK) and user.args[0] is x and user.args[1] is not x


def positive(node: Node, graph: Graph) -> Any:
    """``positive(x) => x``. Exact: ``positive`` copies the value unchanged."""
    if node.target is ops.POSITIVE:
        return node.args[0]
    return None


def transpose_transpose(node: Node, graph: Graph) -> Any:
    """``transpose(transpose(x, p), q) => transpose(x, p∘q)``, and ``=> x`` when the composition is the
    identity. Exact: transposes only reorder axes."""
    if node.target is ops.TRANSPOSE and _call(node.args[0], ops.TRANSPOSE):
        inner = node.args[0]
        x = inner.args[0]
        ndim = x.meta.ndim
        first = inner.kwargs.get("axes") or tuple(reversed(range(ndim)))
        second = node.kwargs.get("axes") or tuple(reversed(range(ndim)))
        axes = tuple(first[a % ndim] % ndim for a in second)
        if axes == tuple(range(ndim)):
            return x
        with graph.inserting_before(node):
            return graph.call(ops.TRANSPOSE, (x,), {"axes": axes}, source=node.source)
    return None


def reshape_reshape(node: Node, graph: Graph) -> Any:
    """``reshape(reshape(x, s1), s2) => reshape(x, s2)``, and ``=> x`` when s2 is x's shape. Exact:
    C-order reshapes keep the element order, so two in a row equal one."""
    if node.target is ops.RESHAPE and _call(node.args[0], ops.RESHAPE):
        x = node.args[0].args[0]
        if node.meta.shape == x.meta.shape:
            return x
        with graph.inserting_before(node):
            return graph.call(ops.RESHAPE, (x,), {"shape": node.meta.shape}, source=node.source)
    return None


def outer_as_product(node: Node, graph: Graph) -> Any:
    """``outer(a, b) => multiply(ravel(a)[:, None], ravel(b)[None, :])``. Exact: NumPy's
    ``outer`` is that multiply; as an elementwise op it fuses with what reads it
    (``A += np.outer(u, v)`` is one pass over A, not a temporary the size of A)."""
    if node.target is not ops.OUTER or node.kwargs:
        return None
    a, b = node.args
    if not all(isinstance(v, Node) and v.meta.ndim >= 1 for v in (a, b)):
        return None
    with graph.inserting_before(node):
        column, row = (
            graph.call(
                ops.GETITEM,
                (v if v.meta.ndim == 1 else graph.call(ops.RAVEL, (v,), source=node.source),),
                {"index": index},
                source=node.source,
            )
            for v, index in ((a, (slice(None), None)), (b, (None, slice(None))))
        )
        return graph.call(ops.MULTIPLY, (column, row), source=node.source)


RULES: list[Callable] = [
    multiply_by_one,
    divide_by_one,
    subtract_zero,
    power_one,
    power_two,
    involution,
    astype_same,
    astype_round_trip,
    where_same,
    update_with_own_region,
    update_whole,
    copy_of_unread,
    positive,
    transpose_transpose,
    reshape_reshape,
    outer_as_product,
]


def _acceptable(node: Node, replacement: Any) -> bool:
    """The replacement has the node's shape, dtype, weakness and scalar-ness, and does not make a
    returned value share memory with an argument, a constant or another returned value."""
    if not isinstance(replacement, Node) or replacement is node:
        return False
    same = all(
        getattr(replacement.meta, field) == getattr(node.meta, field)
        for field in ("shape", "dtype", "weak", "scalar")
    )
    if node.returned and replacement.meta.layout != node.meta.layout:
        return False  # the caller sees C/F contiguity
    aliases = replacement.op in ("placeholder", "constant") or replacement.kind == "view"
    if node.returned and (aliases or returned(replacement, excluding=node)):
        return False
    return same and not _written_into_its_memory(node, replacement)


def _written_into_its_memory(node: Node, replacement: Node) -> bool:
    """Whether ``node``'s value is written into the memory ``replacement`` lives in: eager
    assigns a new array there (``A[k] = A[:, -1] * 1``), the replacement would be read while
    it is written (NumPy's overlapping copy, another result)."""
    memory = memory_of(replacement)
    return any(
        user.op == "call"
        and user.target in (ops.UPDATE, ops.STORE, ops.PUT_UPDATE, ops.PUT_STORE)
        and user.args[1] is node
        and memory_of(user.args[0]) is memory
        for user in node.users
    )


def simplify(graph: Graph) -> bool:
    """Apply ``RULES`` to every call node; True if any rewrite was made."""
    changed = False
    for node in graph.nodes:
        if node.op != "call" or not node.users:
            continue
        for rule in RULES:
            replacement = rule(node, graph)
            if replacement is None:
                continue
            if _acceptable(node, replacement):
                graph.replace_all_uses_with(node, replacement)
                changed = True
                break
            if isinstance(replacement, Node) and not replacement.users and replacement is not node:
                if replacement.op == "call" and replacement not in node.all_input_nodes:
                    graph.erase(replacement)  # a node a rule built but that cannot be used
    return changed
