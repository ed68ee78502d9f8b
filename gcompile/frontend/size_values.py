"""Values computed from sizes alone, where Python needs them as an int, a float or a bool.

``int(n * 0.25)``, ``round(n / 2)``, ``x[: int(0.8 * n)]`` or ``if n / 2 > 10:`` (``n`` a
symbolic size) go through float arithmetic, which a size expression cannot hold. No data is
involved (each value on the way a scalar: immutable, so no write can change it), so the value
is the one at the traced sizes, and the trace is guarded on each size
it was computed from, as a size used as a Python int is (``SymInt.specialize``): another size
traces again. A value that reads data, or a loop index (one value for every trip cannot be),
is not one of these: the caller refuses it as before.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from ..errors import ScalarsDecide
from ..ir import ops
from ..ir.graph import Node, map_arg
from ..ir.shape_env import ShapeEnv, is_symbolic
from ..ir.subgraph import has_effects
from ..ir.symbolic import free_symbols

REASON = "a value computed from sizes by float arithmetic, used as a Python number"


class _NotFromSizes(Exception):
    """The value reads data, a loop index, or something with effects."""


def size_value(node: Node, env: ShapeEnv, scalars: dict | None = None) -> Any:
    """The value of ``node`` at the traced sizes when it is computed from sizes and constants
    alone, with the trace guarded on those sizes; None otherwise. ``scalars``: placeholder ->
    ``(path, value)`` of the scalar arguments; a value computed from some of them raises
    ``ScalarsDecide``."""
    sizes: list = []
    used: set = set()
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            value = _evaluate(node, env, sizes, {}, (scalars or {}, used))
    except (_NotFromSizes, RecursionError):  # (data; or too deep a chain to walk here)
        return None
    except (ArithmeticError, ValueError, TypeError):  # (1 / 0, int(nan): raised at run time)
        return None
    if used:
        raise ScalarsDecide(tuple(sorted(used)))
    for expr in sizes:
        env.specialize(expr, REASON)
    return value


def _evaluate(node: Node, env: ShapeEnv, sizes: list, done: dict, scalars: tuple) -> Any:
    if node in done:
        return done[node]
    arguments, used = scalars
    if node in arguments:
        path, value = arguments[node]
        used.add(path)
        done[node] = value
        return value
    if not getattr(node.meta, "scalar", False):  # (an array's node is its value before writes)
        raise _NotFromSizes
    if node.op == "constant" and not node.captured:
        value = node.target
    elif node.op == "call" and node.target is ops.SYMINT:
        expr = node.kwargs["expr"]
        if any(symbol in env.loops or symbol in env.data_sizes for symbol in free_symbols(expr)):
            raise _NotFromSizes  # (an index, or a length the data decide: no value to take)
        sizes.append(expr)
        value = ops.evaluate(ops.SYMINT, (), {"expr": env.hint(expr)})
    elif (
        node.op == "call"
        and isinstance(node.target, ops.OpDef)
        and not node.is_mutation
        and not has_effects(node)
    ):
        if is_symbolic(node.kwargs):
            raise _NotFromSizes
        args = map_arg(node.args, lambda n: _evaluate(n, env, sizes, done, scalars))
        kwargs = map_arg(node.kwargs, lambda n: _evaluate(n, env, sizes, done, scalars))
        value = ops.evaluate(node.target, args, kwargs)
    else:
        raise _NotFromSizes
    done[node] = value
    return value
