"""Forward error bounds of a traced program, for comparing two valid implementations of it.

``bounds(fn, args, kwargs)`` runs ``fn``'s traced graph once on copies of the arguments and, beside
every value, a bound on how far any implementation that rounds correctly (arithmetic), sums in any
order and computes library functions within ``FUNCTION_ULPS`` can be from the exact result. Bounds
are first-order running error bounds (Higham, *Accuracy and Stability of Numerical Algorithms*,
chapters 3-4): a sum of ``n`` terms adds ``(n - 1) u sum|x_i|``, which holds for every order of
summation; a product adds ``|b| e_a + |a| e_b``; a function adds its slope times its argument's
bound.

Only where a program cancels is the bound returned: a sum, difference or dot product at least
``CANCELLATION`` times smaller than the sum of its terms' magnitudes (``sum(p - y)`` of terms 100
times the result), and every value computed from one. There the bound is many ulps of the result,
and two implementations may differ by up to twice it. Elsewhere, and for ops without a rule here
(unless their inputs are exact), the bound is ``nan``: the caller keeps its fixed ulp rule.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from gcompile import trace
from gcompile.backends import interpreter
from gcompile.guards import ArgumentBinder
from gcompile.ir.graph import Node, map_arg
from gcompile.ir.ops import element_impl
from gcompile.ir.pytree import unflatten
from gcompile.ir.shape_env import concrete, data_size_bindings
from gcompile.ir.subgraph import subgraphs_of
from gcompile.tools.compare import copy_inputs

FUNCTION_ULPS = 4  # a library function (NumPy's SIMD loops, libm, the expansions) is this close
CANCELLATION = 4.0  # a result this much smaller than its terms lost two bits: the program cancels
SUMS = ("add", "subtract", "sum", "mean", "cumsum", "matmul", "dot")
EXACT = ("negative", "positive", "absolute", "fabs", "copy", "conjugate")
LIPSCHITZ = ("maximum", "minimum", "fmax", "fmin", "clip")  # |f(x) - f(y)| <= max |x_i - y_i|
SLOPE_ONE = ("sin", "cos", "tanh", "arctan")  # |f'| <= 1 everywhere


def bounds(fn: Callable, args: tuple, kwargs: dict, graph: Any = None) -> tuple:
    """``(result bound, argument bounds after the call, keyword argument bounds)``, shaped like
    ``fn``'s result and arguments: a float64 array (or scalar) per float leaf, ``nan`` where
    no bound is known. ``graph``: ``fn``'s traced graph for these arguments, if the caller
    has it."""
    if graph is None or graph.shape_env.symbols or graph.shape_env.loops:
        # bounds are per element: fixed sizes, loops unrolled, past the trace budget
        options = {"dynamic": False, "loops": "unroll", "max_graph_nodes": None}
        graph = trace(fn, *args, options=options, **kwargs)
    call = ArgumentBinder(fn).bind(copy_inputs(args), copy_inputs(kwargs))
    values: dict = {}
    errors: dict = {}
    cancelled: dict = {}  # 1.0 where a value cancelled or was computed from one that did
    lengths: dict = {}  # the lengths the data decide (``u0``), read from the values making them
    for node, value in zip(graph.placeholders, call.inputs()):
        values[node] = value
        errors[node] = np.zeros_like(value, np.float64)  # the same layout: views alias alike
        cancelled[node] = np.zeros_like(value, np.float64)
    for node in graph.nodes:
        if node.op == "constant":
            values[node] = node.target
            errors[node] = cancelled[node] = np.zeros(np.shape(node.target))
        elif node.op == "call":
            arguments = map_arg(node.args, values.__getitem__)
            keywords = concrete(map_arg(node.kwargs, values.__getitem__), lengths)
            if subgraphs_of(node):  # a branch or a while loop: run, no bound known
                run = interpreter.runner(node, dict(lengths) or None)  # (lengths made before)
                values[node] = node.target.interpret(run, arguments, keywords)
                errors[node] = _unknown(values[node])
            else:
                values[node] = interpreter.evaluate_node(node, arguments, keywords)
                errors[node] = _node_bound(node, values, errors)
            cancelled[node] = _node_cancelled(node, values, cancelled)
            for symbol, item, axis in data_size_bindings(node.meta):
                made = values[node] if item is None else values[node][item]
                lengths[symbol] = np.shape(made)[axis]

    def where_cancelled(node: Any) -> Any:
        if not isinstance(node, Node):
            return np.nan
        with np.errstate(invalid="ignore"):
            return np.where(cancelled[node] > 0, errors[node], np.nan)

    bounds = _slice_bounds(graph.out_spec)  # (a view's bounds: the values, to slice by)
    outputs = [
        (values[v] if isinstance(v, Node) else v) if i in bounds else where_cancelled(v)
        for i, v in enumerate(graph.output_node.args[0])
    ]
    after = iter(where_cancelled(p) for p in graph.placeholders)
    leaves = [next(after) if flag else None for flag in call.is_input]
    after_args, after_kwargs = call.rebuild(leaves)
    return unflatten(graph.out_spec, outputs), after_args, after_kwargs


def _slice_bounds(spec: Any) -> set:
    """The positions of the leaves of ``spec`` that are the bounds of a returned slice."""
    found, position = set(), 0

    def walk(node: Any) -> None:
        nonlocal position
        if node.kind == "leaf":
            position += 1
            return
        if node.kind == "slice":
            found.update(range(position + 1, position + len(node.children)))
        for child in node.children:
            walk(child)

    walk(spec)
    return found


def _element_of(node: Node, values: dict, per_element: dict) -> Any:
    """``per_element`` of an ``element`` node's array at the element it reads."""
    array, *positions = node.args
    index = node.kwargs["index"]  # (sizes are fixed here)
    positions = [values[p] if isinstance(p, Node) else p for p in positions]
    return np.asarray(element_impl(np.asarray(per_element[array]), *positions, index=index))


def _unknown(value: Any) -> Any:
    """No bound: ``nan`` shaped like ``value`` (each item of a tuple)."""
    if isinstance(value, tuple):
        return tuple(np.full(np.shape(item), np.nan) for item in value)
    return np.full(np.shape(value), np.nan)


def _node_bound(node: Node, values: dict, errors: dict) -> Any:
    """The bound of call ``node`` from its operands' values and bounds."""
    op = node.target
    value = values[node]
    operands = [values[a] if isinstance(a, Node) else a for a in node.args]
    operand_errors = [errors[a] if isinstance(a, Node) else 0.0 for a in node.args]
    if op.kind in ("view", "shape", "scatter"):
        return _structural(node, values, errors)
    if op.name == "kernel_output":
        return errors[node.args[0]][node.kwargs["item"]]
    if op.name == "extern":  # a library call: no bound known (its operands are exact or not)
        return _unknown(value)
    if op.name == "element":  # the element read: its own bound
        return _element_of(node, values, errors)
    if np.asarray(value).dtype.kind != "f":
        exact = all(np.all(np.asarray(e) == 0) for e in _leaves(operand_errors))
        return np.zeros(np.shape(value)) if exact else np.full(np.shape(value), np.nan)
    with np.errstate(all="ignore"):
        bound = _rule(op, node, value, operands, operand_errors)
    if bound is None:
        exact = all(np.all(np.asarray(e) == 0) for e in _leaves(operand_errors))
        own = FUNCTION_ULPS * 2 * _unit(value) * np.abs(value)
        bound = own if exact and op.kind in ("elementwise", "creation") else np.nan
    return np.broadcast_to(np.asarray(bound, np.float64), np.shape(value)).copy()


def _rule(op, node: Node, r: Any, x: list, e: list) -> Any:
    """The bound of a float result ``r`` of ``op`` on values ``x`` with bounds ``e`` (None: no
    rule)."""
    name, u = op.name, _unit(r)
    r_abs = np.abs(r)
    function = FUNCTION_ULPS * 2 * u * r_abs
    if name in ("add", "subtract") and len(x) == 2:
        return e[0] + e[1] + u * r_abs
    if name == "multiply" and len(x) == 2:
        a, b = np.abs(x[0]), np.abs(x[1])
        return (a + e[0]) * (b + e[1]) - a * b + u * r_abs
    if name == "divide" and len(x) == 2:
        room = np.abs(x[1]) - e[1]  # a denominator that may be 0 has no bound
        return np.where(room > 0, (e[0] + r_abs * e[1]) / room, np.nan) + u * r_abs
    if name in EXACT:
        return e[0]
    if name in LIPSCHITZ:
        return np.maximum.reduce([np.broadcast_to(b, np.shape(r)) for b in e], initial=0.0)
    if name == "square":
        return 2 * np.abs(x[0]) * e[0] + e[0] ** 2 + u * r_abs
    if name == "sqrt":
        return np.fmin(e[0] / r_abs, np.sqrt(e[0])) + u * r_abs  # (fmin: 0/0 at sqrt(0))
    if name == "exp":
        return r_abs * np.expm1(e[0]) + function
    if name == "expm1":
        return (r_abs + 1) * np.expm1(e[0]) + function
    if name in ("log", "log2", "log10", "log1p"):
        base = {"log": 1.0, "log2": np.log(2), "log10": np.log(10), "log1p": 1.0}[name]
        arg = np.abs(x[0] + 1.0 if name == "log1p" else x[0])
        slope = np.where(e[0] < arg, -np.log1p(-e[0] / arg), np.nan)
        return slope / base + function
    if name in SLOPE_ONE:
        return e[0] + function
    if name == "where" and np.all(np.asarray(e[0]) == 0):
        return np.where(x[0], e[1], e[2])
    if name == "astype":
        return e[0] + u * r_abs
    if op.kind == "reduction" and name in ("sum", "mean", "cumsum"):
        return _sum_bound(op, node, r, x[0], e[0])
    if name in ("amax", "amin"):
        return op.impl(np.broadcast_to(e[0], np.shape(x[0])), **node.kwargs)
    if op.kind == "matmul":
        a, b = np.abs(x[0]), np.abs(x[1])
        terms = np.shape(x[0])[-1] if np.ndim(x[0]) else 1
        products = op.impl(a + e[0], b + e[1]) - op.impl(a, b)
        return products + terms * u * op.impl(a, b) + u * r_abs
    return None


def _node_cancelled(node: Node, values: dict, cancelled: dict) -> Any:
    """1.0 where call ``node`` cancels or reads a value that did (0.0 elsewhere)."""
    op, value = node.target, values[node]
    if op.kind in ("view", "shape", "scatter"):
        return _structural(node, values, cancelled)
    if op.name == "kernel_output":  # an item of a node with several results
        return cancelled[node.args[0]][node.kwargs["item"]]
    if op.name == "element":
        return _element_of(node, values, cancelled)
    if op.name in ("extern", "callback") or subgraphs_of(node):  # (mixes its operands' elements)
        flag = float(any(np.any(cancelled[a]) for a in node.args if isinstance(a, Node)))
        if isinstance(value, tuple):
            return tuple(np.full(np.shape(item), flag) for item in value)
        return np.full(np.shape(value), flag)
    shape = np.shape(value)
    operands = [values[a] if isinstance(a, Node) else a for a in node.args]
    flags = [np.asarray(cancelled[a]) for a in node.args if isinstance(a, Node)]
    with np.errstate(all="ignore"):
        if op.kind in ("reduction", "matmul"):
            inherited = any(np.any(f) for f in flags)  # (a reduction mixes its operand's elements)
        else:
            inherited = np.logical_or.reduce([np.broadcast_to(f, shape) > 0 for f in flags])
        own = False
        if op.name in SUMS and np.asarray(value).dtype.kind == "f":
            if op.kind == "elementwise":
                magnitude = np.abs(operands[0]) + np.abs(operands[1])
            elif op.kind == "matmul":
                magnitude = op.impl(np.abs(operands[0]), np.abs(operands[1]))
            else:
                kwargs = {k: v for k, v in node.kwargs.items() if k != "dtype"}
                magnitude = op.impl(np.abs(np.asarray(operands[0], np.float64)), **kwargs)
            own = magnitude >= CANCELLATION * np.abs(value)
        return np.broadcast_to(np.asarray(inherited | own, np.float64), shape).copy()


def _sum_bound(op, node: Node, r: Any, x: Any, e: Any) -> Any:
    """A sum of n terms in any order: the terms' bounds plus (n - 1) u sum|x_i| (mean: over n)."""
    kwargs = {k: v for k, v in node.kwargs.items() if k != "dtype"}
    terms = max(np.size(x) // max(np.size(r), 1), 1)
    if op.name == "cumsum":
        terms = (
            np.shape(x)[kwargs["axis"]]
            if kwargs.get("axis") is not None and np.ndim(x)
            else np.size(x)
        )
    u = _unit(r)
    carried = op.impl(np.broadcast_to(e, np.shape(x)).astype(np.float64), **kwargs)
    magnitude = op.impl(np.abs(np.asarray(x, np.float64)), **kwargs)
    extra = 2 if op.name == "mean" else 1  # the mean's division rounds once more
    return carried + (terms - 1) * u * magnitude + extra * u * np.abs(r)


def _structural(node: Node, values: dict, errors: dict) -> Any:
    """Views, copies and writes move values without arithmetic: the same op moves their bounds.

    Array operands are replaced by their bounds (as float64 arrays of the same layout, so a
    view's bound is a view of its base's bound and a write lands in the base's bound); the
    index and other parameters keep their values, as do the positions of a ``put`` (its
    operands after the value).
    """

    def bound_of(a):
        if isinstance(a, Node):
            bound = errors[a]
            return bound if isinstance(bound, np.ndarray) else np.asarray(bound, np.float64)
        return 0.0

    moved = 2 if node.target.name.startswith("put") else len(node.args)
    args = map_arg(node.args[:moved], bound_of) + map_arg(node.args[moved:], values.__getitem__)
    kwargs = map_arg(node.kwargs, values.__getitem__)
    with np.errstate(all="ignore"):
        result = node.target.impl(*args, **kwargs)
    return result if isinstance(result, np.ndarray) else np.asarray(result, np.float64)


def _unit(value: Any) -> float:
    """Unit roundoff of ``value``'s float type (half an ulp of 1)."""
    dtype = np.asarray(value).dtype
    return float(np.finfo(dtype if dtype.kind == "f" else np.float64).eps) / 2


def _leaves(value: Any) -> list:
    if isinstance(value, (list, tuple)):
        return [leaf for v in value for leaf in _leaves(v)]
    return [value]
