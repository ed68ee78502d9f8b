"""Index maps of reads: where element ``(i0, i1, ...)`` of a value read through views lies in
the memory of the kernel input it comes from.

An input whose layout is C or F is passed as the array itself (its base: never a view made per
call) and read flat, as its memory; every read of it, through any chain of views the kernel
folded in (slices, transposes, broadcasts, reshapes), is an affine index ``o + s0*i0 + i1`` into
that memory. Offsets and strides are expressions of the symbolic sizes (``x[1:-1, 2:]`` of an
``[s0, s1]`` array: offset ``s1+2``, strides ``s1, 1``) that the host computes at each call into
kernel parameters (``o0``, ``st0``, ...), never literals in the loop body, so a new size reuses
the compiled kernel; strides of 0 (broadcast) vanish and strides of 1 and -1 stay literal, so
the innermost loop walks contiguous memory and LLVM can vectorise it.

``flat_index`` is the one place that computes such a map; everything else calls it.
"""

from __future__ import annotations

from typing import Callable

from ..ir import layout
from ..ir.alias import chain
from ..ir.graph import Node
from ..ir.meta import TensorMeta
from .nodes import Affine, Var


def view_chain(value: Node) -> tuple[Node, list]:
    """``(root, views)`` inside a kernel's sub-graph: views are the cloned index maps (every
    view, a reshape that may copy included: in a kernel it is an index map)."""
    return chain(value, lambda v: v.args[0] if v.op == "call" and v.kind == "view" else None)


def alias_root(value: Node) -> Node:
    """The value a chain of views starts from."""
    return view_chain(value)[0]


def flat_index(
    meta: TensorMeta, steps: list, loop_vars: list, int_param: Callable[[str, object], Var]
) -> Affine | None:
    """The flat index of an access of an input of ``meta`` through the views ``steps`` (each
    ``(op, params)``), for the loop variables of the value's axes (None: index 0); None when
    the input is not passed flat (its layout promises no order) or a view must copy. Each
    view's own ``strided`` rule (``ir/layout.py``) maps the memory, so offsets and strides are
    expressions of the symbolic sizes; ``int_param(prefix, value)`` gives the parameter
    ``o<k>`` or ``st<k>`` the host computes them into."""
    if meta.layout not in "CF":
        return None
    strided = layout.of_meta(meta)
    for op, params in steps:
        strided = op.strided(strided, **params)
        if strided is None:
            return None
    start = None if strided.offset == 0 else int_param("o", strided.offset)
    terms = []
    for var, stride in zip(loop_vars, strided.strides):
        if var is None or stride == 0:
            continue
        coefficient = stride if stride in (1, -1) else int_param("st", stride)
        terms.append((coefficient, var))
    return Affine(start, tuple(terms))
