"""Split loops: a loop that accumulates computes each block's values in a vector loop into a
stack buffer, then reduces the block by eight lanes.

One running max or sum waits for the previous element (2-6 ns per element), and a loop that
carries one does not vectorise: a split loop's element loop carries nothing, and the lane
reduction keeps eight independent partial results (NumPy's pairwise unrolling).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from .blocks import BLOCK, block_parts, strip_mine
from .nodes import (
    Accumulate,
    Accumulator,
    Affine,
    Alloc,
    BinOp,
    Const,
    Intrinsic,
    Kernel,
    Loop,
    Store,
    typed,
)
from .rewrite import (
    Context,
    accumulators_in,
    init_order,
    insert_after_inits,
    map_nests,
    with_innermost,
)


def lane_dtype(acc: Accumulator) -> np.dtype:
    """The element type of an accumulator's block buffer: its operand's own float type when
    that is narrower than the accumulator (the lane reduction widens it exactly), so the
    vector loop keeps its width (LLVM declines a float32 loop that stores float64)."""
    if acc.operand.kind == acc.dtype.kind and acc.operand.itemsize < acc.dtype.itemsize:
        return acc.operand
    return acc.dtype


def lane_reduction(acc: Accumulator, count) -> Intrinsic:
    """The reduction of the first ``count`` elements of the accumulator's block buffer."""
    args = (acc.var("lane"), count)
    if acc.lane == "sum":
        args += (Const(0, acc.dtype),)
    return Intrinsic(f"lane_{acc.lane}", args, lane_dtype(acc))


def split_lanes(kernel: Kernel, ctx: Context) -> Kernel:
    """Loops whose every accumulator has a lane kind run in blocks, their values stored in a
    stack buffer per accumulator, each block reduced by lanes::

        init acc_amax_1 = f32(-inf)                 init acc_amax_1 = f32(-inf)
        for i1 in range(n1) [reduce]:               lane_amax_1 = stack[128] f32
          ld0 = x[s0*i0 + i1]             =>        for b1 in range(0, n1, 128) [block]:
          acc_amax_1 max= ld0                         e1 = n1 if b1 + 128 > n1 else b1 + 128
                                                      for i1 in range(b1, e1) [reduce]:
                                                        ld0 = x[s0*i0 + i1]
                                                        lane_amax_1[i1 - b1] = ld0
                                                      acc_amax_1 max= lane_max(lane_amax_1, e1 - b1)
    """
    order = init_order(kernel)
    split: list = []

    def nest(before: list, loop: Loop, after: list) -> tuple:
        return before, [with_innermost(loop, lambda inner: _split(inner, order, split))], after

    body = map_nests(kernel.body, nest)
    buffers = {
        acc: [Alloc(acc.var("lane"), Const(BLOCK), lane_dtype(acc), stack=True)] for acc in split
    }
    return dataclasses.replace(kernel, body=insert_after_inits(body, buffers))


def _split(inner: Loop, order: dict, split: list) -> Loop:
    accumulators = accumulators_in(inner.body)
    if not accumulators or any(acc.lane is None for acc in accumulators):
        return inner
    split.extend(accumulators)
    block = strip_mine(inner)
    prologue, element, _ = block_parts(block)
    lane = Affine(None, ((1, element.var), (-1, block.var)))
    body = tuple(
        Store(s.acc.var("lane"), lane, typed(s.value, s.source, lane_dtype(s.acc)))
        if isinstance(s, Accumulate)
        else s
        for s in element.body
    )
    count = BinOp("-", element.stop, block.var)
    reductions = [
        Accumulate(acc, lane_reduction(acc, count), acc.dtype)
        for acc in sorted(accumulators, key=order.__getitem__)
    ]
    element = dataclasses.replace(element, body=body)
    return dataclasses.replace(block, body=tuple(prologue + [element] + reductions))
