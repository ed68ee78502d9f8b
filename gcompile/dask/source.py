"""A fused kernel's sub-graph printed as the source of a NumPy function.

The text is what travels to dask workers: small, picklable, and compiled there by
``gcompile.compile`` (``chunk_function.py``), whose trace of it gives the kernel again. Each
symbolic size is read from the shape of the argument it first appears in, so the function
serves a chunk of any size (a stencil's extended chunk included).
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import UnsupportedError
from ..ir.graph import Node
from ..ir.shape_env import source_of
from ..ir.symbolic import Symbol, is_expr

# Reductions printed with keepdims=True in a tree reduction's chunk step, and mean printed as
# the sum its aggregate divides.
PARTIAL = {"mean": "sum"}


def function_source(
    entry: str, inputs: list, nodes: list, outputs: list, partial: bool = False
) -> str:
    """Source of ``def entry(<inputs>)`` computing ``nodes`` (in order) and returning
    ``outputs`` (one as itself, several as a tuple).

    ``partial``: the returned reductions keep their axes (``keepdims=True``) and a mean is its
    sum: the chunk step of a tree reduction. Raises ``UnsupportedError`` for an op with no
    NumPy spelling (naming the op and the user's line)."""
    names = {p: f"v_{p.name}" for p in inputs}
    lines = [f"def {entry}({', '.join(names[p] for p in inputs)}):"]
    sizes = _size_names(inputs, names, lines)
    for node in nodes:
        if node.op in ("call", "constant"):
            names[node] = f"v_{node.name}"
            keep = partial and node in outputs
            lines.append(f"    {names[node]} = {_expression(node, names, sizes, keep)}")
    results = [_literal(value, names, sizes) for value in outputs]
    lines.append(
        f"    return {results[0] if len(results) == 1 else '(' + ', '.join(results) + ',)'}"
    )
    return "\n".join(lines) + "\n"


def _size_names(inputs: list, names: dict, lines: list) -> dict:
    """Each size symbol of the inputs' shapes, read from the first axis that is it."""
    sizes: dict = {}
    for placeholder in inputs:
        for axis, size in enumerate(getattr(placeholder.meta, "shape", ()) or ()):
            if isinstance(size, Symbol) and size not in sizes:
                sizes[size] = size.name
                lines.append(f"    {size.name} = {names[placeholder]}.shape[{axis}]")
    return sizes


def _expression(node: Node, names: dict, sizes: dict, keep: bool) -> str:
    """The right-hand side computing ``node``."""
    if node.op == "constant":
        return _literal(node.target, names, sizes)
    op = node.target
    args = [_literal(a, names, sizes) for a in node.args]
    kwargs = dict(node.kwargs)
    if op.name == "getitem":
        return f"{args[0]}[{_literal(tuple(kwargs['index']), names, sizes)}]"
    name = op.name
    if keep and op.kind == "reduction":
        name = PARTIAL.get(name, name)
        kwargs["keepdims"] = True
        if op.name == "mean":
            kwargs["dtype"] = node.meta.dtype
    text = ", ".join(args + [f"{k}={_literal(v, names, sizes)}" for k, v in kwargs.items()])
    if op.name == "astype":
        return f"{args[0]}.astype({_literal(kwargs['dtype'], names, sizes)})"
    if op.name in ("reduce", "accumulate"):
        ufunc = kwargs.pop("ufunc")
        rest = ", ".join(args + [f"{k}={_literal(v, names, sizes)}" for k, v in kwargs.items()])
        return f"np.{ufunc.__name__}.{op.name}({rest})"
    function = getattr(np, _numpy_name(op, name), None)
    if function is None:
        raise UnsupportedError(
            f"'{op.name}' inside a fused kernel has no NumPy spelling for a chunk function",
            node.source,
        )
    return f"np.{_numpy_name(op, name)}({text})"


def _numpy_name(op, name: str) -> str:
    """The NumPy function an op's ``impl`` is (``amax`` is ``np.max``)."""
    if name != op.name:
        return name
    impl = op.impl
    if getattr(impl, "__module__", None) == "numpy" and getattr(np, impl.__name__, None) is impl:
        return impl.__name__
    return "" if not hasattr(np, op.name) else op.name


def _literal(value, names: dict, sizes: dict) -> str:
    """Python source of an argument or parameter."""
    if isinstance(value, Node):
        return names[value]
    if is_expr(value):
        return source_of(value, sizes)
    if isinstance(value, slice):
        parts = (_literal(p, names, sizes) for p in (value.start, value.stop, value.step))
        return "slice(" + ", ".join(parts) + ")"
    if isinstance(value, tuple):
        inner = ", ".join(_literal(v, names, sizes) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, list):
        return "[" + ", ".join(_literal(v, names, sizes) for v in value) + "]"
    if isinstance(value, np.dtype) or (isinstance(value, type) and issubclass(value, np.generic)):
        return f"np.dtype({np.dtype(value).str!r})"
    if isinstance(value, np.generic):
        return f"np.{value.dtype.name}({_literal(value.item(), names, sizes)})"
    if isinstance(value, np.ndarray):
        return f"np.array({value.tolist()!r}, dtype={np.dtype(value.dtype).str!r})"
    if isinstance(value, float) and not math.isfinite(value):
        return f"float({str(value)!r})"
    if value is Ellipsis:
        return "..."
    return repr(value)
