"""Loops in blocks, and the blocked float sums.

``strip_mine`` runs the innermost loop of a phase in blocks of ``BLOCK`` elements; the rewrites
that need blocks (split loops, blocked sums, range fix-ups) call it, and add their statements
before the block's element loop (its *prologue*, after the block's end ``e``) or after it.
"""

from __future__ import annotations

import dataclasses

from .nodes import (
    Accumulate,
    BinOp,
    Compare,
    Const,
    If,
    IfExp,
    Init,
    Kernel,
    Let,
    Loop,
    Update,
    Var,
    typed,
)
from .rewrite import (
    Context,
    accumulators_in,
    init_order,
    insert_after_inits,
    map_nests,
    mentions,
    with_innermost,
)

BLOCK = 128  # elements per block of a blocked or split loop
BLOCK_BITS = 7  # blocked summation: 2**7 block sums per partial total
BLOCKS = Var("blocks")  # blocks summed since the last partial total


def strip_mine(loop: Loop) -> Loop:
    """``for i in range(start, stop)`` as blocks ``for b in range(start, stop, BLOCK)`` of
    ``for i in range(b, e)``."""
    axis = loop.var.name[1:]
    start, end = Var(f"b{axis}"), Var(f"e{axis}")
    element = dataclasses.replace(loop, start=start, stop=end, kind="reduce")
    body = (Let(end, _block_end(start, loop.stop)), element)
    return Loop(start, loop.start, loop.stop, BLOCK, body, kind="block")


def rebound(loop: Loop, start, stop) -> Loop:
    """The outermost loop of a nest over ``range(start, stop)``, its blocks' ends too."""
    if loop.kind != "block":
        return dataclasses.replace(loop, start=start, stop=stop)
    end = loop.body[0]
    body = (Let(end.var, _block_end(loop.var, stop)),) + loop.body[1:]
    return dataclasses.replace(loop, start=start, stop=stop, body=body)


def _block_end(start: Var, stop):
    # not min(): Numba compiles its overload of min per kernel (twice if parallel)
    after = BinOp("+", start, Const(BLOCK))
    return IfExp(Compare((">",), (after, stop)), stop, after)


def block_parts(block: Loop) -> tuple[list, object, list]:
    """``(prologue, element loop, epilogue)`` of a block loop's body."""
    for position, stmt in enumerate(block.body):
        if isinstance(stmt, (Loop, If)):
            return list(block.body[:position]), stmt, list(block.body[position + 1 :])
    raise ValueError(f"block loop {block.var.name} has no element loop")


def innermost(nest: Loop) -> Loop:
    """The innermost loop of a phase nest (a block loop once strip-mined)."""
    found = []
    with_innermost(nest, lambda loop: found.append(loop) or loop)
    return found[0]


def blocked_sums(kernel: Kernel, ctx: Context) -> Kernel:
    """Float64 sums in blocks: each block summed from zero into ``blk_``, block sums collected
    2**BLOCK_BITS at a time into ``mid_``, and those into the total, so no partial sum takes
    more than BLOCK (or 2**BLOCK_BITS) terms of similar size::

        init acc_sum_1 = f64(0.0)                   init acc_sum_1 = f64(0.0)
        for i1 in range(n1) [reduce]:               init mid_sum_1 = f64(0.0)
          acc_sum_1 += ld0                          blocks = 0
        sum_1 = f64(acc_sum_1)            =>        for b1 in range(0, n1, 128) [block]:
                                                      e1 = n1 if b1 + 128 > n1 else b1 + 128
                                                      init blk_sum_1 = f64(0.0)
                                                      for i1 in range(b1, e1) [reduce]:
                                                        blk_sum_1 += ld0
                                                      blocks += 1
                                                      mid_sum_1 += blk_sum_1
                                                      if blocks & 127 == 0:
                                                        acc_sum_1 += mid_sum_1
                                                        init mid_sum_1 = f64(0.0)
                                                    acc_sum_1 += mid_sum_1
                                                    sum_1 = f64(acc_sum_1)

    A split loop's block sum is its lane reduction: ``blk_sum_1 = lane_sum(...)``.
    """
    order = init_order(kernel)
    done: list = []

    def nest(before: list, loop: Loop, after: list) -> tuple:
        inner = innermost(loop)
        element = block_parts(inner)[1] if inner.kind == "block" else inner
        fed = accumulators_in(element.body) + (
            accumulators_in(inner.body) if inner.kind == "block" else []
        )
        blocked = sorted({a for a in fed if a.blocked}, key=order.__getitem__)
        if not blocked:
            return before, [loop], after
        done.extend(blocked)
        before = list(before) + [Let(BLOCKS, Const(0))]
        return (
            before,
            [with_innermost(loop, lambda _: _sum_blocks(inner, blocked))],
            _fold(after, blocked),
        )

    body = map_nests(kernel.body, nest)
    body = insert_after_inits(body, {acc: [Init(acc, "mid")] for acc in done})
    return dataclasses.replace(kernel, body=body)


def _sum_blocks(inner: Loop, blocked: list) -> Loop:
    """The innermost loop with its sums into ``blk_`` and the block sums after each block."""
    block = inner if inner.kind == "block" else strip_mine(inner)
    prologue, element, epilogue = block_parts(block)
    fed = [s.acc for s in element.body if isinstance(s, Accumulate) and s.acc in blocked]
    element = dataclasses.replace(
        element,
        body=tuple(
            dataclasses.replace(s, part="blk")
            if isinstance(s, Accumulate) and s.acc in blocked
            else s
            for s in element.body
        ),
    )
    prologue += [Init(acc, "blk") for acc in blocked if acc in fed]
    epilogue = [
        Let(s.acc.var("blk"), typed(s.value, s.source, s.acc.dtype))
        if isinstance(s, Accumulate) and s.acc in blocked
        else s
        for s in epilogue
    ]
    body = prologue + [element] + epilogue + _block_sum_lines(blocked)
    return dataclasses.replace(block, body=tuple(body))


def _block_sum_lines(blocked: list) -> list:
    """After each block: its sum into the block sums, every 2**BLOCK_BITS blocks those into the
    total, so no partial sum collects more than 2**BLOCK_BITS terms."""
    mask = (1 << BLOCK_BITS) - 1
    lines: list = [Update(BLOCKS, "+", Const(1))]
    lines += [Accumulate(acc, acc.var("blk"), acc.dtype, part="mid") for acc in blocked]
    flush = [
        stmt
        for acc in blocked
        for stmt in (Accumulate(acc, acc.var("mid"), acc.dtype), Init(acc, "mid"))
    ]
    full = Compare(("==",), (BinOp("&", BLOCKS, Const(mask)), Const(0)))
    return lines + [If(full, tuple(flush))]


def _fold(after: list, blocked: list) -> list:
    """``acc += mid`` before the first statement after the loop that reads the total."""
    after = list(after)
    for acc in blocked:
        total = acc.var("acc")
        for position, stmt in enumerate(after):
            if mentions(stmt, total):
                after.insert(position, Accumulate(acc, acc.var("mid"), acc.dtype))
                break
    return after
