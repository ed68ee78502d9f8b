"""The reads of a fused kernel's inputs, as loop IR, and the parameters they take.

An operand read in a loop body is a load into a ``ld<k>`` variable, once per loop body (a
phase loop's loads never overwrite the row's around it): from the input's memory at a flat
index (``indexing``: the input a parameter ``nd_<name>``, its flat view a variable made on
entry), or, for an input whose views have no flat index, by subscripts of the array the host
passes through its views. Scalars are parameters of their own; the offsets and strides of the
indices are integer parameters the host computes from the sizes at each call. Each axis of a
value is indexed by the loop variable of the axis of the iteration space it lines up with, or
not at all where it is broadcast.

A part of the lowering (``lower._Lowering``), which provides ``plan``, ``params``,
``int_params``, ``loads``, ``enclosing``, ``index``, ``flats`` and ``named``.
"""

from __future__ import annotations

import numpy as np

from ..ir.graph import Node
from ..ir.shape_env import active
from ..ir.symbolic import is_expr
from .indexing import alias_root, flat_index, view_chain
from .nodes import Intrinsic, Let, Load, Param, Subscript, Var, index_var

INTP = np.dtype(np.intp)  # the dtype of the integer parameters (sizes, offsets, strides)


class KernelReads:
    """The lowering's reads of inputs and its parameters (see the module docstring)."""

    def consumer_vars(self, shape: tuple) -> list:
        """Loop variable (or None for index 0) of each axis of a value of ``shape`` in the loops."""
        plan = self.plan
        if len(shape) == plan.nd:
            axes = list(range(plan.nd))
        elif (
            plan.axes
            and len(shape) == len(plan.kept)
            and all(s == plan.space[k] or _is_one(s) for s, k in zip(shape, plan.kept))
        ):
            axes = plan.kept
        else:
            axes = list(range(plan.nd - len(shape), plan.nd))
        return [None if _is_one(size) else index_var(axis) for size, axis in zip(shape, axes)]

    def read(self, value: Node, consumer_shape: tuple, body: list):
        """The expression of ``value`` (an input, or a view of one) for a consumer of
        ``consumer_shape``: a load into a new ``ld<k>`` variable, once per loop body."""
        cvars = self.consumer_vars(consumer_shape)
        shape = tuple(value.meta.shape)
        pad = len(cvars) - len(shape)
        loop_vars = [None if _is_one(size) else cvars[pad + j] for j, size in enumerate(shape)]
        root, views = view_chain(value)
        key = (value, tuple(loop_vars))
        if key in self.loads:
            return self.loads[key]
        position = self.index[root]
        if root.meta.ndim == 0 or value.meta.ndim == 0 and not views:
            self.loads[key] = self.scalar_input(root, position)
            return self.loads[key]
        steps = [(view.target, view.kwargs) for view in views]
        index = flat_index(root.meta, steps, loop_vars, self.int_param)
        if index is not None:
            expr = Load(self.flat_input(root, position), index)
        else:
            array = self.view_input(value, position, views)
            if value.meta.ndim == 0:
                self.loads[key] = array
                return array
            expr = Load(array, Subscript(tuple(loop_vars)))
        load = self.load_variable()
        body.append(Let(load, expr))
        self.loads[key] = load
        return load

    def load_variable(self) -> Var:
        """A new ``ld<k>``: numbered by the loads of the current scope, and unlike the loads of
        the scope around it (a phase loop's loads must not overwrite the row's, which are read
        again after the loop)."""
        taken = self.enclosing | {v.name for v in self.loads.values() if isinstance(v, Var)}
        number = len(self.loads)
        while f"ld{number}" in taken:
            number += 1
        return Var(f"ld{number}")

    def param(self, var: Var, argument: tuple, dtype, **array) -> Var:
        if var not in self.params:
            self.params[var] = Param(var, argument, np.dtype(dtype), **array)
        return var

    def int_param(self, prefix: str, value) -> Var:
        """The parameter holding ``value``, an int or an expression of the symbolic sizes
        (the host computes it at each call)."""
        key = (prefix, value)
        if key not in self.int_params:
            name = f"{prefix}{sum(1 for p, _ in self.int_params if p == prefix)}"
            self.int_params[key] = self.param(Var(name), ("int", value), INTP)
        return self.int_params[key]

    def scalar_input(self, root: Node, position: int) -> Var:
        # (a weak Python scalar's meta dtype is already the type Numba gives it)
        return self.param(self.named(root), ("scalar", position), root.meta.dtype)

    def flat_input(self, root: Node, position: int) -> Var:
        """Input ``position`` read as its memory: the array is the parameter (``nd_<name>``),
        its flat view a variable made on entry (``<name>``)."""
        meta = root.meta
        order = "F" if meta.layout == "F" and meta.ndim > 1 else "C"
        flat, base = self.named(root), Var("nd_", root)
        if base not in self.params:
            readonly = not meta.writeable
            self.param(
                base,
                ("base", position),
                meta.dtype,
                ndim=meta.ndim,
                layout=order,
                readonly=readonly,
            )
            self.flats.append(Let(flat, Intrinsic(f"flat_{order}", (base,), meta.dtype)))
        return flat

    def view_input(self, value: Node, position: int, views: list) -> Var:
        if views:
            self.named(alias_root(value))
            var = Var("", alias_root(value), f"_{len(self.params)}")
        else:
            var = self.named(value)
        meta = value.meta
        argument = ("array", position, tuple(views))
        if meta.ndim == 0:
            return self.param(var, argument, meta.dtype)
        return self.param(
            var, argument, meta.dtype, ndim=meta.ndim, layout="A", readonly=not meta.writeable
        )


def _is_one(size) -> bool:
    """Whether an axis of ``size`` is broadcast: 1, or a size the trace found to be 1 (proved, or
    guarded when broadcasting decided it: ``B[1:(s0+1)//2]`` against ``A[:s0-k]``)."""
    if not is_expr(size):
        return size == 1
    env = active()
    return env is not None and env.known("==", size, 1) is True
