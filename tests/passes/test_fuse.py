"""Fusion (``passes/fuse.py``) and the pass manager that runs it.

* Kernel counts, styles and buffers for realistic programs (Black-Scholes, softmax,
  layernorm, RMSNorm, log-softmax, logsumexp, standardisation, a reduction of an
  expression, a stencil, a matmul epilogue), each also run against eager NumPy.
* The fusion report: every edge between a kernel and a node outside it is listed
  with a reason in words, and only those edges.
* Legality: kernels are convex, a reduction's result is read inside its own kernel
  only by a later phase of a row kernel over the same rows (numba#9139), the size cap.
* The printed form: each kernel's body indented under its node.
* The pass manager: selecting passes by name, refusals, ``PassError``, debug dumps,
  timings.
"""

from __future__ import annotations

import re
import sys
import textwrap

import numpy as np
import pytest

import gcompile
from gcompile.ir import ops
from gcompile.ir.alias import alias_parent
from gcompile.ir.graph import Graph, Node
from gcompile.ir.kernel import FusedKernel
from gcompile.ir.meta import TensorMeta, normalize_axes
from gcompile.ir.printer import format_graph
from gcompile.ir.shape_env import concrete
from gcompile.passes import manager
from gcompile.passes.manager import PassError, PassManager
from gcompile.tools.explain import graph_counts
from tests.realistic import black_scholes, layernorm, softmax
from tests.support import assert_same_value, check

STYLES = ("pointwise", "reduction", "row", "epilogue")


# -- programs --------------------------------------------------------------------------------------


def rmsnorm(x, weight, eps: float = 1e-6):
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps) * weight


def log_softmax(x):
    shifted = x - x.max(axis=-1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))


def logsumexp(x):
    m = x.max(axis=-1)
    return m + np.log(np.exp(x - m[:, None]).sum(axis=-1))


def standardize(x):
    return (x - x.mean(-1, keepdims=True)) / x.std(-1, keepdims=True)


def sum_of_expression(a, b, c):
    return np.sum(a * b + c)


def stencil(u):
    out = np.zeros_like(u)
    out[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])
    return out


def dense_relu(x, w, b):
    return np.maximum(x @ w + b, 0)


def shape_mismatch(a, b):
    return np.exp(a) + np.sin(b)


def column_sum_consumed(x):
    s = np.exp(x).sum(axis=0)
    return x * s


def column_sum_scaled(x):
    """numba#9139: the sum over axis 0 must be complete before any row is scaled by it."""
    s = x.sum(axis=0)
    return x * s


def row_sum_across_columns(x):
    """``s[i]`` is the sum of row i, but ``x * s`` reads it along columns: ``x[i, j] * s[j]``."""
    s = x.sum(axis=-1)
    return x * s


def row_sum_transposed(x):
    """Row sums read through a transpose: ``x[i, j] * s[j, 0]``."""
    return x * x.sum(axis=-1, keepdims=True).T


def row_sum_reversed(x):
    """Row sums read in reverse row order: ``x[i, j] * s[n - 1 - i, 0]``."""
    return x * x.sum(axis=-1, keepdims=True)[::-1]


def row_sums_minus_reversed(x):
    """A per-row op reading the row sums in reverse row order: ``s[i] - s[n - 1 - i]``."""
    s = x.sum(axis=-1)
    return s - s[::-1]


def matmul_between(x, w):
    """The convexity counterexample: {a, c} in one kernel would need b inside it."""
    a = np.exp(x)
    b = a @ w
    c = a + b
    return c


def long_chain(x):
    for _ in range(12):
        x = np.sin(x) + 1.0
    return x


def transposed_into_matmul(x, w):
    return np.exp(x).T @ w


def transposed_into_kernel(x):
    return np.sin(np.exp(x).T)


def crossed_siblings(p, q):
    """Two pairs of siblings, each pair reading the other's value through a transpose.

    Merging {x1, x2} (both read p) and {y1, y2} (both read q) makes each kernel need the
    other's output: x1 -> y1 and y2 -> x2.
    """
    x1 = np.exp(p)
    y2 = np.sin(q)
    y1 = x1.T + q
    x2 = y2.T + p
    return x2, y1


def condition_on_a_reduction(x, y):
    """Two groups, each convex on its own, that would need each other's outputs.

    ``b`` joins ``a``'s kernel and reads ``s > 0`` (a 0-d value computed outside every kernel
    from ``s``); ``c`` joins ``s``'s kernel and reads ``a``.
    """
    a = np.exp(x)
    s = y.sum()
    b = np.where(s > 0, a, x)
    c = np.maximum(s, y) + a
    return b, c


def capped_crossing(x):
    """With three ops per kernel, each ``where`` joins the group of a different producer."""
    n = -x
    e = np.exp(x)
    return np.where(n > 0, x, e), np.where(n >= 0, e, x)


def _uniform(shape, dtype=np.float64, low=0.5, high=2.0, seed=0):
    return np.random.default_rng(seed).uniform(low, high, shape).astype(dtype)


def _vectors(n, count):
    return tuple(_uniform(n, seed=i) for i in range(count))


PROGRAMS = {
    "black_scholes": (black_scholes, lambda: (*_vectors(64, 3), 0.03, 0.25)),
    "softmax": (softmax, lambda: (_uniform((8, 16), np.float32),)),
    "layernorm": (
        layernorm,
        lambda: (_uniform((8, 16), np.float32), _uniform(16, np.float32, seed=1), _uniform(16)),
    ),
    "rmsnorm": (rmsnorm, lambda: (_uniform((8, 16), np.float32), _uniform(16, np.float32))),
    "log_softmax": (log_softmax, lambda: (_uniform((8, 16)),)),
    "logsumexp": (logsumexp, lambda: (_uniform((8, 16), np.float32),)),
    "standardize": (standardize, lambda: (_uniform((8, 16)),)),
    "sum_of_expression": (sum_of_expression, lambda: _vectors(100, 3)),
    "stencil": (stencil, lambda: (_uniform((6, 7)),)),
    "dense_relu": (
        dense_relu,
        lambda: (_uniform((4, 5), low=-1), _uniform((5, 3), low=-1, seed=1), _uniform(3, low=-1)),
    ),
    "shape_mismatch": (shape_mismatch, lambda: (_uniform(5), _uniform((5, 1), seed=1))),
    "column_sum_consumed": (column_sum_consumed, lambda: (_uniform((4, 3)),)),
    "matmul_between": (matmul_between, lambda: (_uniform((4, 4)), _uniform((4, 4), seed=1))),
    "long_chain": (long_chain, lambda: (_uniform(10),)),
    "transposed_into_matmul": (
        transposed_into_matmul,
        lambda: (_uniform((4, 3)), _uniform((4, 2), seed=1)),
    ),
    "transposed_into_kernel": (transposed_into_kernel, lambda: (_uniform((4, 4)),)),
}

# Programs where a wrong fusion would read a reduction's result before it is complete.
REDUCTION_PROBES = {
    "column_sum_scaled": (column_sum_scaled, lambda: (_uniform((4, 4)),)),
    "row_sum_across_columns": (row_sum_across_columns, lambda: (_uniform((4, 4)),)),
    "row_sum_transposed": (row_sum_transposed, lambda: (_uniform((4, 4)),)),
    "row_sum_reversed": (row_sum_reversed, lambda: (_uniform((4, 4)),)),
    "row_sums_minus_reversed": (row_sums_minus_reversed, lambda: (_uniform((4, 3)),)),
}


# -- helpers ---------------------------------------------------------------------------------------


def fused(fn, *args, options: dict | None = None) -> Graph:
    """``fn``'s graph after fusion alone (``tests/passes/test_buffers.py`` tests the pass after
    it); the graph and every kernel's sub-graph verify."""
    options = {"disable": ["assign_buffers"], **(options or {})}
    graph = gcompile.trace(fn, *args, stage="fused", options=options)
    graph.verify()
    for kernel in kernel_nodes(graph):
        kernel.target.graph.verify()
    return graph


def kernel_nodes(graph: Graph) -> list[Node]:
    return [n for n in graph.nodes if n.op == "call" and isinstance(n.target, FusedKernel)]


def styles(graph: Graph) -> list[str]:
    return [k.target.style for k in kernel_nodes(graph)]


def members(kernel: Node) -> dict[str, Node]:
    """The ops the kernel computes (not the views cloned into it as index maps), by name."""
    return {
        n.name: n for n in kernel.target.graph.nodes if n.op == "call" and alias_parent(n) is None
    }


def kernel_results(kernel: Node) -> list[Node]:
    return list(kernel.target.graph.output_node.args[0])


def _root(value: Node) -> Node:
    while alias_parent(value) is not None:
        value = value.args[0]
    return value


def _origin(value: Node) -> Node:
    """The op whose result ``value`` carries: a kernel's output is the member that computes it."""
    value = _root(value)
    if value.op == "call" and value.target is ops.KERNEL_OUTPUT:
        return kernel_results(value.args[0])[value.kwargs["item"]]
    if value.op == "call" and isinstance(value.target, FusedKernel):
        return kernel_results(value)[0]
    return value


def _crosses(origin: Node) -> bool:
    """Whether the report must explain ``origin``'s value crossing a kernel boundary
    (graph inputs, constants and Python or 0-d scalars other than reductions need no reason)."""
    if origin.op != "call" or origin.meta.weak:
        return False
    return not origin.meta.scalar or origin.kind == "reduction"


def _readers_inside(value: Node) -> list[Node]:
    """The ops of a sub-graph reading ``value``, directly or through views cloned into it."""
    found = []
    for user in value.users:
        if alias_parent(user) is not None:
            found += _readers_inside(user)
        elif user.op == "call":
            found.append(user)
    return found


def kernel_edges(graph: Graph) -> set[tuple[str, str]]:
    """(producer, consumer) names of every value passed between a kernel and a node outside it,
    named like the fusion report names them (by the original ops)."""
    edges = set()
    for node in graph.nodes:
        if node.op != "call" or alias_parent(node) is not None or node.target is ops.KERNEL_OUTPUT:
            continue
        if isinstance(node.target, FusedKernel):
            for value, placeholder in zip(node.args, node.target.graph.placeholders):
                origin = _origin(value)
                if _crosses(origin):
                    edges |= {(origin.name, r.name) for r in _readers_inside(placeholder)}
        else:
            for value in node.all_input_nodes:
                origin = _origin(value)
                if origin.graph is not graph and _crosses(origin):
                    edges.add((origin.name, node.name))
    return edges


def boundaries(graph: Graph) -> dict[tuple[str, str], str]:
    return {(b.producer, b.consumer): b.reason for b in graph.notes.fusion.boundaries}


def _views_keep_order(value: Node, root: Node) -> bool:
    """Whether the views from ``root`` to ``value`` only add or drop size-1 axes (each element
    keeps its place in C order), tried on ``arange``."""
    chain = []
    while value is not root:
        chain.append(value)
        value = value.args[0]
    hint = root.graph.shape_env.hint  # (tried at the traced sizes)
    shape = tuple(hint(s) for s in root.meta.shape)
    size = int(np.prod(shape, dtype=np.int64))
    probe = np.arange(max(size, 1)).reshape(shape)
    for view in reversed(chain):
        probe = view.target.impl(probe, **concrete(view.kwargs, root.graph.shape_env.hints))
    return probe.size == size and np.array_equal(probe.ravel(), np.arange(size))


def misread_reductions(graph: Graph) -> list[str]:
    """Reads, inside a kernel, of a value computed from a reduction of that kernel that a loop
    over the kernel's space cannot do in a later phase of the same row.

    Legal only in a row kernel whose reduction runs over trailing axes, reading a per-row value
    aligned with the rows: at the keepdims shape (after NumPy's left padding) by ops over the
    whole space, at the reduced shape by per-row ops, through views that keep element order.
    """
    problems = []
    for kernel in kernel_nodes(graph):
        target = kernel.target
        sub_nodes = [n for n in target.graph.nodes if n.op == "call"]
        reductions = [n for n in sub_nodes if n.kind == "reduction"]
        if not reductions:
            continue
        space = tuple(target.space)
        axes = normalize_axes(reductions[0].kwargs.get("axis"), reductions[0].args[0].meta.ndim)
        rows = tuple(1 if i in axes else s for i, s in enumerate(space))
        reduced = tuple(s for i, s in enumerate(space) if i not in axes)
        trailing = axes == tuple(range(len(space) - len(axes), len(space)))
        later = set(reductions)
        for node in sub_nodes:
            if alias_parent(node) is not None:
                continue
            for value in node.all_input_nodes:
                root = _root(value)
                if root not in later:
                    continue
                later.add(node)
                where = f"{kernel.name} ({target.style}): %{node.name} reads %{root.name}"
                if target.style != "row" or not trailing:
                    problems.append(f"{where} in the loop computing it (axes {list(axes)})")
                elif not _views_keep_order(value, root):
                    problems.append(f"{where} through views that reorder it")
                elif root.meta.shape == space:
                    if value.meta.shape != space:
                        problems.append(f"{where} at shape {list(value.meta.shape)}")
                else:
                    want = rows if node.meta.ndim == len(space) else reduced
                    read = (1,) * (len(want) - value.meta.ndim) + tuple(value.meta.shape)
                    if read != want:
                        problems.append(
                            f"{where} as {list(value.meta.shape)}, not per row ({list(want)})"
                        )
    return problems


def non_convex_kernels(before: Graph, after: Graph) -> list[str]:
    """Kernels of ``after`` whose members, in the unfused graph ``before``, have a path that
    leaves the group and comes back (views of members are index maps, not exits)."""
    by_name = {n.name: n for n in before.nodes}
    found = []
    for kernel in kernel_nodes(after):
        group = {by_name[name] for name in members(kernel)}
        frontier = [u for n in group for u in n.users if u not in group]
        seen = set()
        while frontier:
            node = frontier.pop()
            if node in seen:
                continue
            seen.add(node)
            transparent = alias_parent(node) is not None and _root(node) in group
            if any(user in group for user in node.users) and not transparent:
                found.append(f"{kernel.name}: %{node.name} is outside and between its members")
                break
            frontier += [u for u in node.users if u not in group]
    return found


def run_compiled(fn, args: tuple, options: dict) -> None:
    """Compile ``fn`` with ``options`` and compare its result with eager NumPy's."""
    expected = fn(*args)
    compiled = gcompile.compile(fn, backend="interpreter", fullgraph=True, options=options)
    assert_same_value(expected, compiled(*args))


# -- kernel counts ---------------------------------------------------------------------------------

# name -> (styles of the kernels in order, library calls, intermediate buffers)
COUNTS = {
    "black_scholes": (["pointwise"], 0, 0),
    "softmax": (["row"], 0, 0),
    "layernorm": (["row"], 0, 0),
    "rmsnorm": (["row"], 0, 0),
    "log_softmax": (["row"], 0, 0),
    "logsumexp": (["row"], 0, 0),
    "standardize": (["row"], 0, 0),
    "sum_of_expression": (["reduction"], 0, 0),
    "dense_relu": (["epilogue"], 1, 0),
}


@pytest.mark.parametrize("name", sorted(COUNTS))
def test_kernel_counts(name):
    fn, make_args = PROGRAMS[name]
    expected_styles, library_calls, buffers = COUNTS[name]
    graph = fused(fn, *make_args())
    stats = graph_counts(graph)
    assert styles(graph) == expected_styles, str(graph)
    assert stats["kernels"] == len(expected_styles)
    assert stats["library_calls"] == library_calls, f"{stats}\n{graph}"
    assert stats["buffers"] == buffers, f"{stats}\n{graph}"
    check(fn, *make_args())


def test_black_scholes_is_one_kernel_with_two_outputs():
    graph = fused(black_scholes, *PROGRAMS["black_scholes"][1]())
    (kernel,) = kernel_nodes(graph)
    assert len(kernel.meta.items) == 2
    assert len(kernel_results(kernel)) == 2
    outputs = graph.output_node.args[0]
    assert [o.target for o in outputs] == [ops.KERNEL_OUTPUT] * 2
    assert [o.args[0] for o in outputs] == [kernel, kernel]
    assert [o.kwargs["item"] for o in outputs] == [0, 1]
    # Only Python-scalar arithmetic on rate and vol stays outside the kernel.
    outside = [n for n in graph.nodes if n.op == "call" and n is not kernel]
    assert all(n.meta.weak or n.target is ops.KERNEL_OUTPUT for n in outside), str(graph)


def test_sum_of_expression_reads_each_input_once():
    graph = fused(sum_of_expression, *_vectors(100, 3))
    (kernel,) = kernel_nodes(graph)
    assert [p.name for p in kernel.target.graph.placeholders] == ["a", "b", "c"]
    assert sorted(n.target.name for n in members(kernel).values()) == ["add", "multiply", "sum"]
    assert graph.output_node.args[0] == (kernel,)


def test_stencil_reads_its_input_through_views_cloned_into_the_kernel():
    u = _uniform((6, 7))
    graph = fused(stencil, u)
    assert graph_counts(graph)["kernels"] == 1
    (kernel,) = kernel_nodes(graph)
    assert [a.name for a in kernel.args] == ["u"]
    (placeholder,) = kernel.target.graph.placeholders
    views = list(placeholder.users)
    assert len(views) == 4
    assert {v.target for v in views} == {ops.GETITEM}
    assert sorted(str(v.kwargs["index"]) for v in views) == sorted(
        str(index)
        for index in (
            (slice(None, -2), slice(1, -1)),
            (slice(2, None), slice(1, -1)),
            (slice(1, -1), slice(None, -2)),
            (slice(1, -1), slice(2, None)),
        )
    )
    graph_input = graph.placeholders[0]
    assert list(graph_input.users) == [kernel], "a view of u was left outside the kernel"
    check(stencil, u)


def test_matmul_epilogue_writes_into_the_matmul_buffer():
    graph = fused(dense_relu, *PROGRAMS["dense_relu"][1]())
    matmuls = [n for n in graph.nodes if n.op == "call" and n.kind == "matmul"]
    (kernel,) = kernel_nodes(graph)
    assert len(matmuls) == 1
    assert kernel.target.style == "epilogue"
    assert kernel.args[kernel.target.inplace_input] is matmuls[0]
    assert sorted(n.target.name for n in members(kernel).values()) == ["add", "maximum"]


# -- the fusion report -----------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_report_explains_every_boundary(name):
    fn, make_args = PROGRAMS[name]
    graph = fused(fn, *make_args())
    report = graph.notes.fusion
    explained = boundaries(graph)
    assert set(explained) == kernel_edges(graph), f"{report}\n{graph}"
    for boundary in report.boundaries:
        assert len(boundary.reason.split()) >= 2, boundary
        assert str(boundary) == f"%{boundary.producer} -> %{boundary.consumer}: {boundary.reason}"
    listed = {
        name: (style, tuple(space), sorted(names)) for name, style, space, names in report.kernels
    }
    assert listed == {
        k.name: (
            k.target.style,
            tuple(k.target.space),
            sorted(n.target.name for n in members(k).values()),
        )
        for k in kernel_nodes(graph)
    }
    assert set(k.target.style for k in kernel_nodes(graph)) <= set(STYLES)


def test_report_text_lists_kernels_and_boundaries():
    graph = fused(dense_relu, *PROGRAMS["dense_relu"][1]())
    assert str(graph.notes.fusion) == textwrap.dedent(
        """\
        fusion report:
          kernel fused_1 (epilogue, space [s0, s3]): add, maximum
          boundary %matmul_1 -> %add_1: not an elementwise op: matmul is a library call (BLAS)"""
    )


def test_shape_mismatch_is_kept_apart_and_explained():
    a, b = PROGRAMS["shape_mismatch"][1]()
    graph = fused(shape_mismatch, a, b)
    for kernel in kernel_nodes(graph):
        shapes = {n.meta.shape for n in members(kernel).values()}
        assert shapes == {tuple(kernel.target.space)}, str(kernel.target.graph)
    reasons = " ".join(boundaries(graph).values())
    assert "shape mismatch" in reasons
    assert "[s0]" in reasons and "[s1, 1]" in reasons, reasons
    check(shape_mismatch, a, b)


def test_column_reduction_consumed_elementwise_needs_its_own_loop():
    (x,) = PROGRAMS["column_sum_consumed"][1]()
    graph = fused(column_sum_consumed, x)
    (sum_kernel,) = [k for k in kernel_nodes(graph) if "sum_1" in members(k)]
    assert "multiply_1" not in members(sum_kernel)
    assert "own loop" in boundaries(graph)[("sum_1", "multiply_1")]
    check(column_sum_consumed, x)


def test_matmul_boundary_is_explained():
    args = PROGRAMS["matmul_between"][1]()
    reasons = boundaries(fused(matmul_between, *args))
    assert "matmul" in reasons[("exp_1", "matmul_1")]
    assert "matmul" in reasons[("matmul_1", "add_1")]


def test_size_cap_splits_a_long_chain():
    (x,) = PROGRAMS["long_chain"][1]()
    assert graph_counts(fused(long_chain, x))["kernels"] == 1
    graph = fused(long_chain, x, options={"max_kernel_ops": 4})
    kernels = kernel_nodes(graph)
    assert len(kernels) >= 6
    assert all(len(members(k)) <= 4 for k in kernels)
    assert set(boundaries(graph)) == kernel_edges(graph)
    reasons = list(boundaries(graph).values())
    assert reasons and all("size cap" in r for r in reasons), reasons
    run_compiled(long_chain, (x,), {"max_kernel_ops": 4})


def test_convexity_counterexample():
    args = PROGRAMS["matmul_between"][1]()
    graph = fused(matmul_between, *args)
    for kernel in kernel_nodes(graph):
        assert not {"exp_1", "add_1"} <= set(members(kernel)), str(kernel.target.graph)
    reason = boundaries(graph)[("exp_1", "add_1")]
    assert "cycle" in reason or "convex" in reason, reason
    check(matmul_between, *args)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_kernels_are_convex(name):
    fn, make_args = PROGRAMS[name]
    before = gcompile.trace(fn, *make_args(), stage="optimized")
    assert non_convex_kernels(before, fused(fn, *make_args())) == []


MUTUAL = {  # name -> (function, number of (4, 4) array arguments, options)
    "crossed_siblings": (crossed_siblings, 2, {}),
    "condition_on_a_reduction": (condition_on_a_reduction, 2, {}),
    "capped_crossing": (capped_crossing, 1, {"max_kernel_ops": 3}),
}


@pytest.mark.parametrize("name", sorted(MUTUAL))
def test_kernels_do_not_depend_on_each_other(name):
    """Each group convex on its own is not enough: the kernels must have an order (no kernel
    needs an output of a kernel that needs one of its own)."""
    fn, count, options = MUTUAL[name]
    args = tuple(_uniform((4, 4), low=-1, seed=i) for i in range(count))
    graph = fused(fn, *args, options=options)
    assert graph_counts(graph)["kernels"] >= 2
    before = gcompile.trace(fn, *args, stage="optimized", options=options)
    assert non_convex_kernels(before, graph) == []
    assert set(boundaries(graph)) == kernel_edges(graph)
    run_compiled(fn, args, options)


# -- reductions are never read in their own loop (numba#9139) --------------------------------------


@pytest.mark.parametrize("name", sorted(REDUCTION_PROBES))
def test_reduction_result_is_not_read_in_its_own_loop(name):
    fn, make_args = REDUCTION_PROBES[name]
    graph = fused(fn, *make_args())
    for kernel in kernel_nodes(graph):
        inside = members(kernel)
        if "sum_1" in inside and "multiply_1" in inside:
            target = kernel.target
            assert target.style == "row" and normalize_axes(
                inside["sum_1"].kwargs.get("axis"), len(target.space)
            ) == (len(target.space) - 1,), str(target.graph)
    assert misread_reductions(graph) == [], str(graph)
    check(fn, *make_args())


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_reductions_are_read_per_row(name):
    fn, make_args = PROGRAMS[name]
    graph = fused(fn, *make_args())
    assert misread_reductions(graph) == [], str(graph)


def _hand_made_kernel(style: str, view=None, keepdims: bool = True) -> Graph:
    """A graph holding one kernel ``x * sum(x, axis=-1)`` of ``style`` over (4, 4), built by hand
    (the sum read through ``view`` when given), to test ``misread_reductions`` without the fuser."""
    meta = TensorMeta((4, 4), np.dtype("f8"))
    sub = Graph("fused_1")
    x = sub.placeholder("x", meta)
    total = sub.call(ops.SUM, (x,), {"axis": -1, "keepdims": keepdims})
    if view is not None:
        total = sub.call(view[0], (total,), view[1])
    out = sub.call(ops.MULTIPLY, (x, total))
    sub.output((out,))
    graph = Graph("hand_made")
    kernel = FusedKernel("fused_1", style, (4, 4), sub)
    graph.output((graph.call(kernel, (graph.placeholder("x", meta),), {}),))
    graph.verify()
    return graph


def test_the_per_row_check_tells_aligned_reads_from_misaligned_ones():
    assert misread_reductions(_hand_made_kernel("row")) == []
    assert misread_reductions(_hand_made_kernel("row", (ops.GETITEM, {"index": (Ellipsis,)}))) == []
    for graph in (
        _hand_made_kernel("reduction"),
        _hand_made_kernel("row", keepdims=False),
        _hand_made_kernel("row", (ops.TRANSPOSE, {})),
        _hand_made_kernel("row", (ops.GETITEM, {"index": (slice(None, None, -1),)})),
    ):
        (problem,) = misread_reductions(graph)
        assert "%multiply_1 reads %sum_1" in problem
    for fn in (softmax, logsumexp, layernorm):
        assert misread_reductions(fused(fn, *PROGRAMS[fn.__name__][1]())) == []


# -- printing --------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_kernel_bodies_print_indented_under_their_node(name):
    fn, make_args = PROGRAMS[name]
    graph = fused(fn, *make_args())
    lines = str(graph).splitlines()
    for kernel in kernel_nodes(graph):
        (at,) = [i for i, line in enumerate(lines) if re.match(rf"  %{kernel.name} +:", line)]
        body = ["    " + line for line in format_graph(kernel.target.graph).splitlines()]
        (region,) = kernel.target.regions
        body[0] += f"    # {kernel.target.region_note(region)}"
        assert lines[at + 1 : at + 1 + len(body)] == body
        assert body[0].startswith(f"    graph {kernel.name}(")
        space = ",".join(map(str, kernel.target.space))
        assert f"    # {kernel.target.style} over [{space}]" in body[0]


# Golden texts of fused graphs live in test_pass_golden.py (all three stages).


# -- the pass manager ------------------------------------------------------------------------------


def twice_exp(x):
    return np.exp(x) + np.exp(x)


def _count(graph: Graph, name: str) -> int:
    return sum(1 for n in graph.nodes if n.op == "call" and n.target.name == name)


def _records(fn, *args, stage="fused", options=None) -> list[str]:
    graph = gcompile.trace(fn, *args)
    return [r.name for r in manager.run_pipeline(graph, stage, options)]


def test_disable_skips_a_pass_by_name():
    x = _uniform(5)
    assert _count(gcompile.trace(twice_exp, x, stage="optimized"), "exp") == 1
    graph = gcompile.trace(twice_exp, x, stage="optimized", options={"disable": ["cse"]})
    assert _count(graph, "exp") == 2
    names = _records(twice_exp, x, options={"disable": ["cse"]})
    assert "cse" not in names and {"functionalize", "dce", "fuse"} <= set(names)
    run_compiled(twice_exp, (x,), {"disable": ["cse"]})


def test_passes_selects_the_passes_to_run():
    x = _uniform(5)
    names = _records(twice_exp, x, options={"passes": ["functionalize", "cse"]})
    assert names[0] == "functionalize"
    assert set(names) == {"functionalize", "cse"}
    graph = gcompile.trace(
        twice_exp, x, stage="fused", options={"passes": ["functionalize", "cse"]}
    )
    assert graph_counts(graph)["kernels"] == 0 and _count(graph, "exp") == 1
    assert manager.select(manager.OPTIMIZE, {"passes": ["dce", "functionalize"]}) == [
        step for step in manager.OPTIMIZE if step[0] in ("functionalize", "dce")
    ]
    run_compiled(twice_exp, (x,), {"passes": ["functionalize", "cse"]})


@pytest.mark.parametrize(
    "options", [{"disable": ["cse", "no_such_pass"]}, {"passes": ["functionalize", "fusion"]}]
)
def test_unknown_pass_names_raise(options):
    with pytest.raises(ValueError, match="unknown pass names") as info:
        gcompile.trace(twice_exp, _uniform(5), stage="optimized", options=options)
    assert "no_such_pass" in str(info.value) or "fusion" in str(info.value)


@pytest.mark.parametrize(
    "options", [{"disable": ["functionalize"]}, {"passes": ["cse", "dce", "fuse"]}]
)
def test_functionalize_cannot_be_disabled(options):
    with pytest.raises(ValueError, match="functionalize"):
        gcompile.trace(twice_exp, _uniform(5), stage="optimized", options=options)


def _boom(graph: Graph) -> bool:
    raise RuntimeError("boom went the pass")


def test_a_failing_pass_is_reported_with_the_passes_before_it():
    graph = gcompile.trace(twice_exp, _uniform(5))
    passes = PassManager([("ok", lambda g: False), ("boom", _boom), ("never", lambda g: False)])
    with pytest.raises(PassError) as info:
        passes.run(graph)
    message = str(info.value)
    assert "'boom'" in message and "['ok']" in message, message
    assert "boom went the pass" in message and "never" not in message
    assert isinstance(info.value.__cause__, RuntimeError)
    assert [r.name for r in passes.records] == ["ok"]


def test_a_pass_leaving_an_invalid_graph_is_reported():
    def corrupt(graph: Graph) -> bool:
        node = next(n for n in graph.nodes if n.op == "call")
        node.meta = TensorMeta((7,), node.meta.dtype)
        return False

    graph = gcompile.trace(twice_exp, _uniform(5))
    with pytest.raises(PassError, match="'corrupt' pass .after no passes"):
        PassManager([("corrupt", corrupt)], verify=True).run(graph)


def test_a_wrong_meta_is_reported_before_re_deriving_would_repair_it():
    def mislabel(graph: Graph) -> bool:  # says it changed the graph: metas are re-derived
        node = next(n for n in graph.nodes if n.op == "call")
        node.meta = TensorMeta(node.meta.shape, np.dtype(np.float32))
        return True

    graph = gcompile.trace(twice_exp, _uniform(5))
    with pytest.raises(PassError, match=r"the 'mislabel' pass left %exp_1 as f32\[s0\]"):
        PassManager([("mislabel", mislabel)], verify=True).run(graph)
    graph = gcompile.trace(twice_exp, _uniform(5))
    PassManager([("mislabel", mislabel)], verify=False).run(graph)  # (re-derived, unchecked)
    assert graph.find("exp_1").meta.dtype == np.float64


def _dump(monkeypatch, tmp_path) -> tuple[Graph, list, list]:
    """Run the pipeline on softmax with GCOMPILE_DEBUG_DIR set: (graph, records, files)."""
    monkeypatch.setenv("GCOMPILE_DEBUG_DIR", str(tmp_path))
    graph = gcompile.trace(softmax, _uniform((4, 8)))
    records = manager.run_pipeline(graph, "fused")
    return graph, records, sorted((tmp_path / "softmax").iterdir())


def test_debug_dir_receives_one_file_per_pass_run(monkeypatch, tmp_path):
    graph, records, files = _dump(monkeypatch, tmp_path)
    # unroll_loops, functionalize, one round of vector_products, scalar_factors, batched_rows,
    # hoist_invariants and the cleanup (4 passes), fuse, assign_buffers
    assert len(files) == len(records) == 12
    assert sorted(re.sub(r"^\d+_", "", f.stem) for f in files) == sorted(r.name for r in records)
    (fuse_dump,) = [f for f in files if f.stem.endswith("_fuse")]
    assert fuse_dump.read_text() == str(graph) + "\n"
    (functionalize_dump,) = [f for f in files if f.stem.endswith("_functionalize")]
    assert "fused_1" not in functionalize_dump.read_text()
    assert functionalize_dump.read_text().startswith("graph softmax(x: f64[s0,s1]):")


def test_debug_files_are_numbered_in_run_order(monkeypatch, tmp_path):
    _, records, files = _dump(monkeypatch, tmp_path)
    assert [f.name for f in files] == [
        f"{i:02d}_{record.name}.txt" for i, record in enumerate(records, 1)
    ]


def test_timings_have_a_time_per_pass():
    compiled = gcompile.compile(softmax, backend="interpreter")
    compiled(_uniform((4, 8)))
    timings = compiled.entries[0].timings
    for name in set(manager.PASS_NAMES) - set(manager.GENERATED_CODE_ONLY):
        assert isinstance(timings[f"pass {name}"], float) and timings[f"pass {name}"] >= 0
    assert not any(f"pass {name}" in timings for name in manager.GENERATED_CODE_ONLY)
    assert {"trace", "backend"} <= set(timings)


def test_a_shared_scalar_is_no_reason_for_a_sibling_merge():
    """Horizontal fusion saves reading a shared array twice; two kernels that share only a
    Python float (a step size) stay apart. (This also keeps long programs quick to fuse: every
    step of a time loop reads the step size.)"""

    def two_updates(a, b, alpha: float):
        return np.exp(a) * alpha, np.sin(b) * alpha

    graph = fused(two_updates, _uniform(8), _uniform(8, seed=1), 0.5)
    assert styles(graph) == ["pointwise", "pointwise"]

    def shared_array(a, alpha: float):
        return np.exp(a) * alpha, np.sin(a) * alpha

    assert styles(fused(shared_array, _uniform(8), 0.5)) == ["pointwise"]


def test_sibling_fusion_stops_past_its_budget_of_cycle_checks(monkeypatch):
    """A loop unrolled at trace time gives hundreds of small kernels reading one matrix;
    pairing them all, each pair with a walk of the graph, took minutes (a Kalman filter of
    200 steps: 54 s). Past ``SIBLING_WALKS`` visited kernels sibling fusion stops, noted."""

    def siblings(a):
        return np.exp(a) * 2.0, np.sin(a) * 3.0, np.cos(a) + 1.0

    assert styles(fused(siblings, _uniform(8))) == ["pointwise"]
    monkeypatch.setattr(sys.modules["gcompile.passes.fuse"], "SIBLING_WALKS", -1)
    graph = fused(siblings, _uniform(8))
    assert styles(graph) == ["pointwise"] * 3
    assert any("sibling fusion stopped" in note for note in graph.notes.fusion.notes)


def test_cycle_checks_in_a_loop_unrolled_at_trace_time_stay_near_the_kernel_checked(monkeypatch):
    """Each check of a merge walked the rest of the graph: in a loop unrolled at trace time, a
    walk per trip and a trip per walk (500 steps of a three-point stencil: 8 s of fusion).
    Past the last node a path back into the kernel could start from, it stops; the walks then
    visit a few kernels per merge, well within a budget linear in the trips."""

    def heat(u, alpha):
        for _ in range(120):
            u[1:-1] = u[1:-1] + alpha * (u[2:] - 2 * u[1:-1] + u[:-2])
        return u

    monkeypatch.setattr(sys.modules["gcompile.passes.fuse"], "SIBLING_WALKS", 10 * 120)
    graph = fused(heat, _uniform(16), 0.25, options={"loops": False})
    assert len(kernel_nodes(graph)) >= 120  # (one kernel per trip at least: it was unrolled)
    assert not any("sibling fusion stopped" in note for note in graph.notes.fusion.notes)
