"""Index maps of reads: where element ``(i0, i1, ...)`` of a value read through views lies in
the memory of the kernel input it comes from.

An input whose layout is C or F is passed flat (a 1-D view of its memory), and every read of
it, through any chain of views the kernel folded in (slices, transposes, broadcasts, reshapes),
is an affine index ``o + s0*i0 + i1`` into that memory. Offsets and strides are kernel
parameters (``o0``, ``s0``, ... trace-time integers the host passes), never literals in the
loop body, so a new size of the same structure reuses the compiled kernel; strides of 0
(broadcast) vanish and strides of 1 and -1 stay literal, so the innermost loop walks
contiguous memory and LLVM can vectorise it.

``flat_index`` is the one place that computes such a map; everything else calls it.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from ..ir import ops
from ..ir.graph import Node
from ..ir.meta import TensorMeta
from ..ir.shape_env import hint, map_symbolic
from .nodes import Affine, Var


def view_chain(value: Node) -> tuple[Node, list]:
    """``(root, views)`` inside a kernel's sub-graph: views are the cloned index maps."""
    views = []
    while value.op == "call" and value.kind == "view":
        views.append(value)
        value = value.args[0]
    return value, views[::-1]


def alias_root(value: Node) -> Node:
    """The value a chain of views starts from."""
    return view_chain(value)[0]


def flat_index(
    meta: TensorMeta, views: list, loop_vars: list, int_param: Callable[[str, int], Var]
) -> Affine | None:
    """The flat index of a read of an input of ``meta`` through ``views``, for the loop
    variables of the value's axes (None: index 0); None when the input is not passed flat or
    the views are not affine. ``int_param(prefix, value)`` gives the parameter ``o<k>`` or
    ``s<k>`` holding ``value``."""
    if meta.layout not in "CF":
        return None
    probe = _probe_affine(map_symbolic(tuple(meta.shape), hint), meta.layout, views)
    if probe is None:
        return None
    offset, strides = probe
    start = int_param("o", offset) if offset else None
    terms = []
    for var, stride in zip(loop_vars, strides):
        if var is None or stride == 0:
            continue
        coefficient = stride if stride in (1, -1) else int_param("s", stride)
        terms.append((coefficient, var))
    return Affine(start, tuple(terms))


def _probe_affine(shape: tuple, layout: str, views: list) -> tuple | None:
    """``(offset, strides)`` in elements of the memory of an array of ``shape`` and ``layout``
    after ``views``, found by applying the views to a data-free stand-in; None if not affine."""
    memory = np.zeros(1, np.int64)
    step, strides = 1, [0] * len(shape)
    axes = range(len(shape)) if layout == "F" else reversed(range(len(shape)))
    for axis in axes:
        strides[axis] = step * 8
        step *= max(shape[axis], 1)
    value = np.lib.stride_tricks.as_strided(memory, shape, strides, writeable=False)
    try:
        for view in views:
            params = map_symbolic(dict(view.kwargs), hint)
            if view.target is ops.RESHAPE:
                value = np.reshape(value, params["shape"], copy=False)
            elif view.target is ops.RAVEL:
                value = np.reshape(value, -1, copy=False)
            else:
                value = view.target.impl(value, **params)
    except (ValueError, TypeError):
        return None
    base = memory.__array_interface__["data"][0]
    offset = (value.__array_interface__["data"][0] - base) // 8
    return offset, [s // 8 for s in value.strides]
