"""One-row chunks along the axes a reduction step sums over (sum, prod, mean), merged into a
neighbouring chunk inside the step's own tasks.

A chunk of size 1 would need a trace of its own (size 1 broadcasts: the tracer specialises it),
and doubling it (``chunk_function.Widening``) would change a sum. So the chunk step's task for a
block next to one-row blocks reads them too and runs the kernel once on their concatenation,
laid out as that block is (the trace's guard keys on layout): the trace of the larger chunks
serves it. No rechunk layer: one task per merged block, fewer than the input's blocks.
"""

from __future__ import annotations

import itertools

import dask.array as da
import numpy as np
from dask.array.core import concatenate3, unify_chunks
from dask.base import tokenize
from dask.highlevelgraph import HighLevelGraph

from ..ir.shape_env import SIZE_LOW
from .chunk_function import laid_out


def runs(sizes: tuple) -> tuple | None:
    """The runs of blocks ``(start, stop)`` along one axis, each one larger chunk with the
    one-row (or empty: a size the trace specialises too) chunks after it, leading ones before
    it; None when nothing needs merging: no such chunk, or only such chunks (one trace serves
    them all: an axis of size 1, or the user's chunks of one row)."""
    small = [size < SIZE_LOW for size in sizes]
    if not any(small) or all(small):
        return None
    found: list = []
    for i in range(len(sizes)):
        leading = found and all(small[found[-1][0] : i])  # (only the first run can be)
        if found and (small[i] or leading):
            found[-1][1] = i + 1
        else:
            found.append([i, i + 1])
    return tuple(tuple(run) for run in found)


def plan(arrays: list, rank: int, axes: set) -> tuple[list, dict]:
    """``arrays`` (right-aligned to a space of ``rank``) with common chunks, and the runs
    (``runs``) of each space axis among ``axes`` that has chunks to merge."""
    pairs = [p for a in arrays for p in (a, tuple(range(rank - a.ndim, rank)))]
    chunks, arrays = unify_chunks(*pairs)
    merged = {a: runs(chunks[a]) for a in sorted(axes) if a in chunks}
    return list(arrays), {a: r for a, r in merged.items() if r is not None}


def partials(function, arrays: list, rank: int, merged: dict, axes: tuple, meta) -> da.Array:
    """The chunk step over ``arrays`` (common chunks, right-aligned to a space of ``rank``):
    ``function`` per block of the chunking with the ``merged`` runs joined, its results keeping
    the reduced ``axes`` (size 1); ``meta``: an empty array of the results' kind."""
    space = [space_chunks(arrays, rank, a) for a in range(rank)]
    grid = [merged.get(a) or tuple((i, i + 1) for i in range(len(c))) for a, c in enumerate(space)]
    name = f"gcompile-{function.entry}-chunk-" + tokenize(function, arrays, merged, axes)
    tasks = {}
    for index in itertools.product(*(range(len(g)) for g in grid)):
        blocks = [_blocks(x, rank, [grid[a][i] for a, i in enumerate(index)]) for x in arrays]
        single = all(not isinstance(b, list) for b in blocks)
        tasks[(name, *index)] = (function, *blocks) if single else (joined_call, function, *blocks)
    chunks = [
        (1,) * len(g) if a in axes else tuple(sum(space[a][i:j]) for i, j in g)
        for a, g in enumerate(grid)
    ]
    graph = HighLevelGraph.from_collections(name, tasks, dependencies=arrays)
    return da.Array(graph, name, chunks, meta=meta)


def space_chunks(arrays: list, rank: int, axis: int) -> tuple:
    """The chunks along space ``axis`` of ``arrays`` (common chunks, right-aligned to a space of
    ``rank``): those of an array not broadcast there (not of size 1), else (1,)."""
    for x in arrays:
        own = axis - rank + x.ndim
        if own >= 0 and x.shape[own] != 1:
            return x.chunks[own]
    return (1,)


def _blocks(x: da.Array, rank: int, spans: list):
    """The key of ``x``'s block for one output block (its run ``spans`` per space axis), or
    nested lists of keys (``concatenate3``'s form) when the run holds several blocks."""
    own = [
        range(i, j) if n > 1 else range(1) for (i, j), n in zip(spans[rank - x.ndim :], x.numblocks)
    ]
    if all(len(r) == 1 for r in own):
        return (x.name, *(r[0] for r in own))

    def nest(prefix: tuple, rest: list):
        if not rest:
            return (x.name, *prefix)
        return [nest(prefix + (i,), rest[1:]) for i in rest[0]]

    return nest((), own)


def joined_call(function, *blocks):
    """``function`` on each argument's blocks joined (nested lists of blocks, or one block),
    each laid out as the largest of its blocks (the larger chunk of its run)."""
    return function(*(_joined(b) if isinstance(b, list) else b for b in blocks))


def _joined(nested: list) -> np.ndarray:
    return laid_out(concatenate3(nested), max(_leaves(nested), key=np.size))


def _leaves(nested):
    for item in nested:
        if isinstance(item, list):
            yield from _leaves(item)
        else:
            yield item
