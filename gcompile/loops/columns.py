"""Reductions over leading axes, run in memory order: the result's elements accumulate side by
side while the reduced axes advance, as NumPy reduces them.

A reduction whose kept axes come after its reduced ones (``x.sum(axis=0)`` of a C-ordered
matrix, ``G.mean(axis=1)`` of a 3-D array) would, in the usual nest (``lower``), read each
row's values a whole stride apart. NumPy instead adds the rows one after the other into the
result, each element's terms in order; here too, into one buffer per accumulator spanning the
trailing kept axes (``col_``), and each result is then exactly NumPy's::

    for i1 in range(n1) [column]:                  (start values)
      col_sum_1[cnt] = 0.0
    for i0 in range(n0) [reduce-column]:
      for i1 in range(n1) [column]:
        acc_sum_1 = col_sum_1[cnt]
        ld0 = x[st0 * i0 + i1]
        acc_sum_1 += ld0
        col_sum_1[cnt] = acc_sum_1
    for i1 in range(n1) [column]:                  (results)
      acc_sum_1 = col_sum_1[cnt]
      sum_1 = f64(acc_sum_1)
      out0[i1] = sum_1

(``cnt`` counts the trailing kept elements in each nest.) Kept axes before the reduced ones
stay the outer loops, the first of them parallel. ``var``/``std`` take two such passes, as NumPy
computes them: the sums, each column's mean kept in a column of its own (``colmean_``), then the
squared deviations from it (the values the second pass reads computed again: ``_recomputed``). Softmax-like kernels and argmax keep the usual nest.
"""

from __future__ import annotations

import dataclasses

from ..ir import ops
from .nodes import (
    COUNTER,
    Affine,
    Alloc,
    BinOp,
    Const,
    Kernel,
    Let,
    Load,
    Loop,
    Store,
    Update,
    Var,
    index_var,
    product,
    size_var,
)
from .parallel import CHUNK, CHUNKS, HIGH, LOW, chunk_bounds
from .plan import Plan
from .rewrite import Context, map_exprs

_AT = Affine(None, ((1, COUNTER),))


def runs_by_columns(plan: Plan, order: str) -> bool:
    """Whether ``plan``'s reductions run by columns (see the module docstring): one phase of
    plain accumulators (or two, of ``var``/``std`` alone) over a block of axes that some kept
    axis follows, in a C-ordered space."""
    axes = list(plan.axes)
    if not axes or order != "C" or (plan.stashed and not plan.var_pass) or plan.online:
        return False
    if plan.phases != (2 if plan.var_pass else 1) or not _variances_alone(plan):
        return False
    if axes != list(range(axes[0], axes[-1] + 1)) or axes[-1] == plan.nd - 1:
        return False
    if any(r.target in (ops.ARGMAX, ops.ARGMIN) for r in plan.reductions):
        return False
    arrays = [p.meta for p in plan.kernel.graph.placeholders if p.meta.ndim > 1]
    return not any(meta.layout == "F" for meta in arrays)


def _variances_alone(plan: Plan) -> bool:
    """Without a mean pass, any plan; with one, ``var``/``std`` whose mean passes come first,
    beside reductions of that first pass that are only results (``x.mean(0), x.std(0)``): no
    value of the first pass is read element by element or after the second."""
    if not plan.var_pass:
        return True
    if set(plan.var_pass.values()) != {0} or 1 in plan.loop_of.values():
        return False
    for node, after in plan.after_of.items():
        variance = node.target in (ops.VAR, ops.STD)
        if variance != (after == 1):
            return False
        result_only = all(user.op == "output" for user in node.users)
        if after == 0 and not (node.target.loop_reduction and result_only):
            return False
    return True


def column_nest(lowering) -> list:
    """The statements of a kernel whose reductions run by columns (a ``lower._Lowering``'s)."""
    plan = lowering.plan
    inner = [a for a in plan.kept if a > plan.axes[-1]]
    outer = [a for a in plan.kept if a < plan.axes[0]]
    for reduction in plan.reductions:  # (each element's terms in order: no blocks, no lanes)
        lowering.accumulators[reduction] = [
            dataclasses.replace(a, blocked=False, lane=None)
            for a in lowering.accumulators[reduction]
        ]
    length = product([size_var(a) for a in inner])
    lowering.recomputing = _recomputed(plan)  # (values of the first pass the second reads)
    plan.stashed = set()
    body: list = []
    means: dict = {}  # a variance's node -> the column of its means (the first pass's results)
    for phase in range(plan.phases):
        lowering.phase = phase
        accumulators = lowering.accumulating(phase)
        prefix = "colm_" if phase + 1 < plan.phases else "col_"
        columns = {acc: lowering.named(acc.node, prefix) for acc in accumulators}
        body += [Alloc(column, length, acc.dtype) for acc, column in columns.items()]
        body += _across(inner, [Store(c, _AT, acc.init) for acc, c in columns.items()])
        step = _across(inner, _accumulate(lowering, columns, means))
        for axis in reversed(plan.axes):
            step = [Loop(index_var(axis), Const(0), size_var(axis), 1, tuple(step), kind="columns")]
        body += step
        if phase + 1 < plan.phases:
            passes = [acc for acc in accumulators if acc.prefix]  # (the variances' means)
            means = {acc.node: lowering.named(acc.node, "colmean_") for acc in passes}
            body += [Alloc(means[a.node], length, a.node.meta.dtype) for a in passes]
            body += _across(inner, _means(lowering, columns, means))
    body += _across(inner, _results(lowering, columns))
    for axis in reversed(outer):
        body = [Loop(index_var(axis), Const(0), size_var(axis), 1, tuple(body), kind="kept")]
    return body


def _across(axes: list, statements: list) -> list:
    """``statements`` for each element of the trailing kept ``axes``, counted by ``cnt``."""
    body = [*statements, Update(COUNTER, "+", Const(1))]
    for axis in reversed(axes):
        body = [Loop(index_var(axis), Const(0), size_var(axis), 1, tuple(body), kind="column")]
    return [Let(COUNTER, Const(0)), *body]


def _accumulate(lowering, columns: dict, means: dict) -> list:
    """One element's step: the accumulators from their columns (and the variances' means
    from theirs), the phase's values and updates, the accumulators back."""
    plan = lowering.plan
    lowering.loads = {}
    body: list = []
    lowering.row_values(-1, body)  # (values of the kept indices alone, as the usual nest has)
    lowering.enclosing = {v.name for v in lowering.loads.values() if isinstance(v, Var)}
    body += [Let(Var("mean_", node), Load(column, _AT)) for node, column in means.items()]
    body += [Let(acc.var(), Load(column, _AT)) for acc, column in columns.items()]
    phase = lowering.phase
    again = lowering.recomputing if phase else set()
    fulls = [n for n in plan.members if plan.loop_of.get(n) == phase or n in again]
    body += lowering.phase_body(fulls, list(columns))
    lowering.enclosing = set()
    return body + [Store(column, _AT, acc.var()) for acc, column in columns.items()]


def _recomputed(plan: Plan) -> set:
    """The values of the first pass that the second reads (``x - m`` of ``(x - m).std(0)``),
    and the values of that pass they are computed from: the second pass computes them again
    (a stash of them, as the usual nest keeps, would span the reduced axes)."""
    needed, pending = set(), list(plan.stashed)
    while pending:
        node = pending.pop()
        if node in needed:
            continue
        needed.add(node)
        pending += [v for v in node.all_input_nodes if plan.loop_of.get(v) == 0]
    return needed


def _means(lowering, columns: dict, means: dict) -> list:
    """One element's means after the first pass of variances, into their columns."""
    body = [Let(acc.var(), Load(column, _AT)) for acc, column in columns.items()]
    lowering.phase_results(list(columns), body)
    return body + [Store(column, _AT, Var("mean_", node)) for node, column in means.items()]


def _results(lowering, columns: dict) -> list:
    """One element's results: the reductions' final values and what follows from them."""
    lowering.loads = {}
    body: list = []
    lowering.row_values(-1, body)
    body += [Let(acc.var(), Load(column, _AT)) for acc, column in columns.items()]
    lowering.phase_results(list(columns), body)
    lowering.row_values(lowering.phase, body)
    return body


def parallel_columns(kernel: Kernel, ctx: Context) -> Kernel:
    """A column nest with no kept loop around it, in ``CHUNKS`` parallel chunks of its first
    trailing kept axis, each with columns of its own (every result's terms still in order)::

        col_sum_1 = alloc[n1] f64              for c in prange(16) [chunk]:
        cnt = 0                                  lo = n1 * c // 16
        for i1 in range(n1) [column]: ...   =>   hi = n1 * (c + 1) // 16
        for i0 in range(n0) [columns]:           col_sum_1 = alloc[hi - lo] f64
          for i1 in range(n1) [column]: ...      cnt = 0
        ...                                      for i1 in range(lo, hi) [column]: ...
    """
    body = kernel.body
    if not ctx.parallel or kernel.parallel or not any(_is_columns(s) for s in body):
        return kernel
    first = next(s for s in body if isinstance(s, Loop) and s.kind == "column")
    size, span = first.stop, BinOp("-", HIGH, LOW)
    chunk = chunk_bounds(size)
    for stmt in body:
        if isinstance(stmt, Alloc):
            stmt = dataclasses.replace(stmt, size=map_exprs(stmt.size, _swap(size, span)))
        chunk.append(_within(stmt, first.var))
    loop = Loop(CHUNK, Const(0), Const(CHUNKS), 1, tuple(chunk), parallel=True, kind="chunk")
    return dataclasses.replace(kernel, body=(loop,), parallel=True)


def _is_columns(stmt) -> bool:
    return isinstance(stmt, Loop) and stmt.kind == "columns"


def _swap(old, new):
    return lambda expr: new if expr == old else expr


def _within(stmt, var: Var):
    """``stmt`` with every loop over ``var`` running from ``lo`` to ``hi``."""
    if not isinstance(stmt, Loop):
        return stmt
    if stmt.var == var:
        return dataclasses.replace(stmt, start=LOW, stop=HIGH)
    return dataclasses.replace(stmt, body=tuple(_within(s, var) for s in stmt.body))
