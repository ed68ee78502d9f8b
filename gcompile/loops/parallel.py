"""Parallel loops: above a size threshold (``Context.parallel``) the outer loop is a ``prange``.

A reduction over all axes has no outer loop of its own: it is split into ``CHUNKS`` fixed
chunks of its first axis, reduced in parallel and combined in chunk order, so the result does
not depend on the number of threads.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from .blocks import BLOCK, rebound
from .nodes import (
    COUNTER,
    Accumulate,
    Alloc,
    BinOp,
    BoolOp,
    Compare,
    Const,
    If,
    Init,
    Kernel,
    Let,
    Load,
    Loop,
    Store,
    Subscript,
    Var,
    product,
    size_var,
)
from .reductions import better
from .rewrite import NEST_KINDS, Context

CHUNKS = 16  # parallel chunks of a reduction over all axes (fixed: results must not vary)
CHUNK, LOW, HIGH = Var("c"), Var("lo"), Var("hi")


def chunk_total(kernel: Kernel, ctx: Context) -> Kernel:
    """A one-phase reduction over all axes as ``CHUNKS`` partial results, combined in order::

    init acc_sum_1 = f64(0.0)                  part_sum_1 = alloc[16] f64
    for i0 in range(n0) [reduce]:              for c in prange(16) [chunk]:
      acc_sum_1 += ld0                            lo = n0 * c // 16
    sum_1 = f64(acc_sum_1)            =>          hi = n0 * (c + 1) // 16
    out0[0] = sum_1                               init acc_sum_1 = f64(0.0)
                                                  for i0 in range(lo, hi) [reduce]:
                                                    acc_sum_1 += ld0
                                                  part_sum_1[c] = acc_sum_1
                                                init acc_sum_1 = f64(0.0)
                                                for c in range(16) [combine]:
                                                  acc_sum_1 += part_sum_1[c]
                                                sum_1 = f64(acc_sum_1)
                                                out0[0] = sum_1
    """
    body = list(kernel.body)
    nests = [i for i, s in enumerate(body) if isinstance(s, Loop) and s.kind in NEST_KINDS]
    kept = any(isinstance(s, Loop) and s.kind == "kept" for s in body)
    if not ctx.parallel or not kernel.reduced or kept or len(nests) != 1:
        return kernel
    (position,) = nests
    results, rest = _results(body[position + 1 :], kernel.accumulators)
    first, others = kernel.reduced[0], kernel.reduced[1:]
    start = product([LOW] + ([size_var(a) for a in others] or [Const(1)]))
    before = [
        Let(COUNTER, start) if isinstance(s, Let) and s.var == COUNTER else s
        for s in body[:position]
    ]
    bounds = chunk_bounds(size_var(first))
    partials = [_partial(acc, blocked) for acc, (blocked, _) in zip(kernel.accumulators, results)]
    chunk = bounds + before + [rebound(body[position], LOW, HIGH)] + partials
    combined: list = []
    for acc, (_, group) in zip(kernel.accumulators, results):
        combined += _combine(acc) + group
    allocs = [alloc for acc in kernel.accumulators for alloc in _part_buffers(acc)]
    chunks = Loop(CHUNK, Const(0), Const(CHUNKS), 1, tuple(chunk), parallel=True, kind="chunk")
    return dataclasses.replace(
        kernel, body=tuple(allocs + [chunks] + combined + rest), parallel=True
    )


def parallel_loops(kernel: Kernel, ctx: Context) -> Kernel:
    """The outermost kept loop as a ``prange``; a pointwise kernel whose only loop runs in
    blocks (range-limited calls) runs its blocks in parallel::

        for i0 in range(n0) [kept]:        =>    for i0 in prange(n0) [kept]:

        for b0 in range(0, n0, 128) [block]:  => for c0 in prange((n0 + 127) // 128) [block]:
                                                   b0 = c0 * 128
    """
    if not ctx.parallel or kernel.parallel:
        return kernel
    body = list(kernel.body)
    for position, stmt in enumerate(body):
        if not isinstance(stmt, Loop):
            continue
        if stmt.kind == "kept":
            body[position] = dataclasses.replace(stmt, parallel=True)
        elif kernel.accumulators:
            return kernel
        elif stmt.kind == "block":
            body[position] = _parallel_blocks(stmt)
        return dataclasses.replace(kernel, body=tuple(body), parallel=True)
    return kernel


def _parallel_blocks(block: Loop) -> Loop:
    chunk = Var(f"c{block.var.name[1:]}")
    count = BinOp("//", BinOp("+", block.stop, Const(BLOCK - 1)), Const(BLOCK))
    start = Let(block.var, BinOp("*", chunk, Const(BLOCK)))
    return Loop(chunk, Const(0), count, 1, (start,) + block.body, parallel=True, kind="block")


def _results(after: list, accumulators: tuple) -> tuple[list, list]:
    """Per accumulator, ``(blocked, [result, store])`` from the statements after the loop (its
    block sums folded in, its result, its store as an output); and the statements after them."""
    groups, rest = [], list(after)
    for acc in accumulators:
        blocked = bool(rest) and isinstance(rest[0], Accumulate) and rest[0].acc == acc
        if blocked:
            rest.pop(0)
        group = [rest.pop(0)]
        if rest and isinstance(rest[0], Store) and rest[0].value == group[0].var:
            group.append(rest.pop(0))
        groups.append((blocked, group))
    return groups, rest


def chunk_bounds(size) -> list:
    """``lo`` and ``hi`` of chunk ``c`` of ``CHUNKS`` over ``range(size)``: fixed, so that
    results do not depend on the number of threads."""
    return [
        Let(LOW, BinOp("//", BinOp("*", size, CHUNK), Const(CHUNKS))),
        Let(HIGH, BinOp("//", BinOp("*", size, BinOp("+", CHUNK, Const(1))), Const(CHUNKS))),
    ]


def _partial(acc, blocked: bool):
    """Inside a chunk: its partial result into the accumulator's part buffers."""
    at_chunk = Subscript((CHUNK,))
    if acc.kind == "arg":
        saved = (
            Store(_part(acc, "best"), at_chunk, acc.var("best")),
            Store(_part(acc, "at"), at_chunk, acc.var("at")),
        )
        return If(Compare((">",), (HIGH, LOW)), saved)
    total = acc.var("acc")
    if blocked:
        total = BinOp("+", total, acc.var("mid"))
    return Store(_part(acc, ""), at_chunk, total)


def _combine(acc) -> list:
    """After the chunks: their partial results combined in chunk order."""
    at_chunk = Subscript((CHUNK,))
    if acc.kind != "arg":
        step = Accumulate(acc, Load(_part(acc, ""), at_chunk), acc.dtype)
        return [Init(acc), Loop(CHUNK, Const(0), Const(CHUNKS), 1, (step,), kind="combine")]
    best, at = acc.var("best"), acc.var("at")
    value, position = Load(_part(acc, "best"), at_chunk), Load(_part(acc, "at"), at_chunk)
    wins = BoolOp("or", (Compare(("<",), (at, Const(0))), better(acc, value)))
    test = BoolOp("and", (Compare((">=",), (position, Const(0))), wins))
    step = If(test, (Let(best, value), Let(at, position)))
    first = Subscript((None,))
    return [
        Let(best, Load(_part(acc, "best"), first)),
        Let(at, Load(_part(acc, "at"), first)),
        Loop(CHUNK, Const(1), Const(CHUNKS), 1, (step,), kind="combine"),
    ]


def _part_buffers(acc) -> list:
    if acc.kind == "arg":
        return [
            Alloc(_part(acc, "best"), Const(CHUNKS), acc.dtype),
            Alloc(_part(acc, "at"), Const(CHUNKS), np.dtype(np.int64), fill=Const(-1)),
        ]
    return [Alloc(_part(acc, ""), Const(CHUNKS), acc.dtype)]


def _part(acc, role: str) -> Var:
    return Var(f"part_{role}_" if role else "part_", acc.node)
