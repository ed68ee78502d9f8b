"""Running a fused graph over dask arrays by its chunk plan (``planner.py``): each kernel one
dask step (or a chain of a few) whose tasks run the kernel's chunk function
(``chunk_function.py``); any other node
through dask's own implementation of its NumPy function (matrix products, views), with a
warning for those that are not views or products. Nothing is computed here: the result is lazy.
"""

from __future__ import annotations

import functools
import math
import operator
import warnings

import dask.array as da
import numpy as np
from dask.array.overlap import ensure_minimum_chunksize
from dask.array.reductions import _tree_reduce  # da.reduction's tree, after its chunk step

from ..errors import GcompileWarning, UnsupportedError
from ..ir import ops
from ..ir.graph import Graph, Node, map_arg
from ..ir.shape_env import concrete
from . import merging
from .chunk_function import ChunkFunction, Widening
from .planner import TREE, KernelStep

_DASK_OWN = ("view", "shape", "matmul")  # kinds dask runs as NumPy does, without a warning
_IDEMPOTENT = ("amax", "amin", "any", "all")  # reductions of a chunk twice: of the chunk


def execute(graph: Graph, steps: dict, inputs: list, log: list, options: dict) -> list:
    """The graph's outputs (lazy dask arrays, or plain values) for the call's ``inputs``; one
    line per dask step in ``log`` (the chunk plan ``explain()`` shows); ``options``: the
    compiled function's, for the chunk functions."""
    sizes = graph.shape_env.bind(inputs)
    env: dict = {}
    for node, value in zip(graph.placeholders, inputs):
        env[node] = da.asarray(value) if isinstance(value, np.ndarray) else value
    for node in graph.nodes:
        if node.op == "constant":
            env[node] = node.target
        elif node.op == "call":
            args = map_arg(node.args, env.__getitem__)
            if node in steps:
                env[node] = run_kernel(steps[node], list(args), log, options)
            else:
                env[node] = _run_op(
                    node, args, concrete(map_arg(node.kwargs, env.__getitem__), sizes)
                )
    return [env[v] if isinstance(v, Node) else v for v in graph.output_node.args[0]]


def _run_op(node: Node, args: tuple, kwargs: dict):
    """An op outside kernels: dask's own implementation of its NumPy function; a refusal
    when dask has none (it would compute the arrays here)."""
    op = node.target
    if not isinstance(op, ops.OpDef):  # a loop or a branch: its trips would not be chunked
        raise UnsupportedError(f"a {op.kind} node over dask arrays", node.source)
    if op.kind in ("scatter",) or op.effects:
        raise UnsupportedError(f"'{op.name}' over dask arrays (they are immutable)", node.source)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # dask's "not implemented": refused below
        value = ops.evaluate(op, args, kwargs)
    lazy = any(isinstance(a, da.Array) for a in args)
    if lazy and isinstance(value, np.ndarray):
        raise UnsupportedError(
            f"'{op.name}' over dask arrays (dask has no lazy form of it)", node.source
        )
    if lazy and op.kind not in _DASK_OWN and op.name != "kernel_output":
        _warn(f"'{op.name}' ({node.source or 'unknown line'})")
    return value


def _warn(what: str) -> None:
    warnings.warn(
        f"gcompile over dask: {what} runs through dask's own NumPy implementation, not compiled",
        GcompileWarning,
        stacklevel=6,
    )


def run_kernel(step: KernelStep, args: list, log: list, options: dict):
    """One kernel over its arguments (dask arrays and scalars): a dask array, or a tuple."""
    if step.mode == "chain":
        return _chain(step, args, log, options)
    if step.first is not None:
        found = run_kernel(step.first, args, log, options)
        args = args + list(found if isinstance(found, tuple) else (found,))
    arrays = [a for a in args if isinstance(a, da.Array)]
    bound = {i: a for i, a in enumerate(args) if not isinstance(a, da.Array)}
    compiled = step.mode != "numpy" and bool(arrays)  # scalars only: Python runs it, as eager
    widening = _widening(step, arrays)
    function = ChunkFunction(
        step.source, step.unit.name, bound, len(args), compiled, options, widening
    )
    if not compiled:
        if arrays:
            _warn(step.reason)
            log.append(f"{step.unit.name}: dask's NumPy path: {step.reason}")
        return function(*arrays)
    if step.mode == "overlap":
        aligned = [i for i, a in enumerate(args) if isinstance(a, da.Array) and i in step.aligned]
        positions = [i for i, a in enumerate(args) if isinstance(a, da.Array)]
        result = _overlap(step, function, arrays, [p in aligned for p in positions])
    elif step.mode == "reduce":
        result = _reduce(step, function, arrays, log)
    else:
        if step.whole:
            arrays = [_rechunk_whole(a, step.whole, len(step.unit.space), log) for a in arrays]
        result = _blockwise(step, function, arrays)
    log.append(_describe(step, result, arrays))
    return result


def _widening(step: KernelStep, arrays: list) -> Widening | None:
    """How the step's chunk functions serve chunks of size 1 with the trace of larger ones:
    along the axes where the kernel is pointwise (not the axes it runs along, nor those it sums
    along: a max over a row twice is the row's max, a sum is not), of the arguments longer
    than 1 there; and empty chunks, along the pointwise axes every output keeps (not in a
    reduction's chunk step)."""
    if step.mode not in ("blockwise", "whole", "reduce"):
        return None
    rank = len(step.unit.space)
    pointwise = set(range(rank)) - set(step.whole) - _summed(step)
    arguments = tuple(
        tuple(a for a in sorted(pointwise) if a >= rank - x.ndim and x.shape[a - rank + x.ndim] > 1)
        for x in arrays
    )
    kept = tuple(a for a in range(rank) if a not in step.dropped)  # (an output drops them all)
    outputs = tuple(kept[len(kept) - len(o.meta.shape) :] for o in step.unit.outputs)
    padded = tuple(a for a in sorted(pointwise) if all(a in space for space in outputs))
    if step.mode == "reduce":  # (each output's chunk step keeps the reduced axes)
        outputs, padded = (tuple(range(rank)),), ()
    return Widening(rank, arguments, outputs, padded) if any(arguments) else None


def _summed(step: KernelStep) -> set:
    """The space axes a reduction of the step sums (or multiplies) along: a row twice is not
    the row there, as it is for a max."""
    return {a for name, axes, _, _ in step.reducers for a in axes if name not in _IDEMPOTENT}


def _describe(step: KernelStep, result, arrays: list) -> str:
    """One line of the chunk plan: the step, its chunks and its tasks."""
    first = result[0] if isinstance(result, tuple) else result
    chunks = " x ".join(str(len(c)) for c in arrays[0].chunks) or "1"
    text = f"{step.unit.name}: {step.mode} ({step.unit.style} kernel), {chunks} blocks in"
    if step.mode == "overlap":
        text += f"; map_overlap depth (before, after) by axis {step.depth}, no edge padding"
    if step.mode == "reduce":
        for name, axes, _, _ in step.reducers:
            text += f"; {name} over axes {axes}: compiled chunk step, tree of depth {_depth(first, step.unit.name)}"
        return text
    if step.first is not None:
        text += f"; after the whole-array reductions of {step.first.unit.name}"
    return text + f"; {first.npartitions} tasks, chunks {_short(first.chunks)}"


def _depth(result: da.Array, unit: str) -> int:
    """The levels of the unit's tree reduction: its combine layers and the aggregate."""
    prefix = f"gcompile-{unit}-partial"
    return 1 + sum(1 for name in result.dask.layers if name.startswith(prefix))


def _short(chunks: tuple) -> str:
    return "(" + ", ".join(_axis(c) for c in chunks) + ")"


def _axis(sizes: tuple) -> str:
    if len(set(sizes)) == 1:
        return str(sizes[0]) if len(sizes) == 1 else f"{len(sizes)}x{sizes[0]}"
    return f"{len(sizes)} of {min(sizes)}..{max(sizes)}"


def _chain(step: KernelStep, args: list, log: list, options: dict):
    """Steps in turn, each reading the unit's inputs and the outputs of the steps before it (a
    stencil or elementwise steps, then reductions of their values); the unit's outputs from
    any of them."""
    made = (f"{p.mode} makes {', '.join(o.name for o in p.unit.outputs)}" for p in step.parts)
    log.append(f"{step.unit.name}: chain (each step reads those before): " + ", then ".join(made))
    values = dict(zip(step.unit.inputs, args))
    for part in step.parts:
        found = run_kernel(part, [values[n] for n in part.unit.inputs], log, options)
        values.update(zip(part.unit.outputs, _tuple(found)))
    outputs = [values[o] for o in step.unit.outputs]
    return outputs[0] if len(outputs) == 1 else tuple(outputs)


def _tuple(value) -> tuple:
    return value if isinstance(value, tuple) else (value,)


def _rechunk_whole(array: da.Array, axes: tuple, rank: int, log: list) -> da.Array:
    """``array`` with the kernel's whole axes (space axes ``axes``) in one chunk each."""
    own = [a - (rank - array.ndim) for a in axes if a >= rank - array.ndim]
    own = {a: -1 for a in own if len(array.chunks[a]) > 1}
    if own:
        log.append(
            f"rechunk {array.name[:24]}: axes {tuple(own)} into one chunk (a kernel along them)"
        )
    return array.rechunk(own) if own else array


def _blockwise(step: KernelStep, function: ChunkFunction, arrays: list):
    """One task per block of the kernel's space; several outputs through a tuple per block."""
    rank = len(step.unit.space)
    index = tuple(a for a in range(rank) if a not in step.dropped)  # a dropped axis: one block
    pairs = [p for a in arrays for p in (a, tuple(range(rank - a.ndim, rank)))]
    metas = [o.meta for o in step.unit.outputs]
    adjust = [
        {a: 1 for a, size in zip(index, meta.shape) if a in step.whole and size == 1}
        for meta in metas
    ]
    if len(metas) == 1:
        return da.blockwise(
            function,
            index,
            *pairs,
            adjust_chunks=adjust[0] or None,
            concatenate=True,
            meta=_empty(metas[0]),
        )
    meta = np.empty((0,) * len(index), dtype=object)
    blocks = da.blockwise(function, index, *pairs, concatenate=True, meta=meta)
    return tuple(_item(blocks, i, m, adjust[i] or None, index) for i, m in enumerate(metas))


def _item(blocks: da.Array, i: int, meta, adjust: dict | None, index=None) -> da.Array:
    """Output ``i`` of a tuple per block (``index``: the blocks' axis labels)."""
    index = tuple(range(blocks.ndim)) if index is None else index
    getter = operator.itemgetter(i)
    meta = _empty(meta, blocks.ndim)
    return da.blockwise(getter, index, blocks, index, adjust_chunks=adjust, meta=meta)


def _empty(meta, rank: int | None = None) -> np.ndarray:
    return np.empty((0,) * (len(meta.shape) if rank is None else rank), dtype=meta.dtype)


def _reduce(step: KernelStep, function: ChunkFunction, arrays: list, log: list):
    """Per output, the compiled chunk step per block (reduced axes kept, size 1) and dask's
    tree combining the partial results with NumPy's same reduction (a mean: the sums', divided
    by the count). One-row chunks along an axis summed over join a neighbour in its chunk task
    (``merging.py``), said in ``log``."""
    rank = len(step.unit.space)
    shape = np.broadcast_shapes(*(a.shape for a in arrays))
    shape = (1,) * (rank - len(shape)) + shape
    arrays, merged = merging.plan(arrays, rank, _summed(step))
    if merged:
        log.append(_merge_line(arrays, rank, merged))
    index = tuple(range(rank))
    pairs = [p for a in arrays for p in (a, tuple(range(rank - a.ndim, rank)))]
    results = []
    for (name, axes, keepdims, source), out in zip(step.reducers, step.unit.outputs):
        chunk = ChunkFunction(
            source,
            function.entry,
            function.bound,
            function.arity,
            options=function.options,
            widening=function.widening,
        )
        meta = _empty(out.meta, rank)
        if merged:
            partial = merging.partials(chunk, arrays, rank, merged, axes, meta)
        else:
            ones = {a: 1 for a in axes}
            partial = da.blockwise(chunk, index, *pairs, adjust_chunks=ones, meta=meta)
        reducer = (name, axes, keepdims)
        results.append(_tree(partial, reducer, out.meta.dtype, shape, function.entry))
    return results[0] if len(results) == 1 else tuple(results)


def _merge_line(arrays: list, rank: int, merged: dict) -> str:
    """The chunk plan's line for one-row chunks merged into their neighbours."""
    axes = []
    for axis, runs in merged.items():
        sizes = merging.space_chunks(arrays, rank, axis)
        joined = tuple(sum(sizes[i:j]) for i, j in runs)
        axes.append(f"axis {axis} chunks ({_axis(sizes)}) -> ({_axis(joined)})")
    where = "into their neighbours in the chunk step's tasks (a sum, product or mean along them)"
    return f"merge one-row chunks {where}: " + ", ".join(axes)


def _tree(partial: da.Array, reducer: tuple, dtype, shape: tuple, unit: str) -> da.Array:
    """dask's tree reduction of the chunk step's ``partial`` results (``da.reduction``'s own
    tree, its chunk step the kernel's: no task passing them through), its combine and
    aggregate steps compiled functions too."""
    name, axes, keepdims = reducer
    count = math.prod(shape[a] for a in axes)
    divides = name == "mean"
    return _tree_reduce(
        partial,
        functools.partial(_combine, _combiner(name, dtype, count), axes, keepdims, divides),
        axes,
        keepdims,
        dtype,
        combine=functools.partial(_combine, _combiner(name, dtype, None), axes, True, False),
        name=f"gcompile-{unit}",
    )


def _combine(function, axes: tuple, keep: bool, divides: bool, x: np.ndarray, **_):
    """The tree's combine and aggregate steps: the partial results' reduced axes merged into
    one first axis (one compiled function then serves every axis choice and grouping), reduced
    by ``function``, the axes put back (``keep``) or dropped. A single partial result is its
    own total unless the step ``divides`` it (a mean's count): no call for it. (dask passes
    ``axis`` and ``keepdims`` too.)"""
    kept = [a for a in range(x.ndim) if a not in axes]
    merged = x.transpose(list(axes) + kept).reshape([-1] + [x.shape[a] for a in kept])
    if merged.shape[0] == 1 and not divides:
        total = merged[0]
    else:
        total = _reduce_first_axis(function, np.ascontiguousarray(merged))
    if keep:
        return np.reshape(total, [1 if a in axes else x.shape[a] for a in range(x.ndim)])
    return total


def _reduce_first_axis(function, merged: np.ndarray):
    """``function`` (a reduction of the first axis) of ``merged``, each axis of size 1 made 2
    first, exactly, so that the trace of the other calls serves it: the kept axes by the chunk
    functions' ``Widening``, the reduced axis (a mean's single partial sum) padded with -0.0,
    the sum's exact identity."""
    if merged.shape[0] == 1:
        merged = np.concatenate((merged, np.full_like(merged, -0.0)))
    kept = tuple(range(1, merged.ndim))
    widening = Widening(merged.ndim, (kept,), (kept,))
    wide, doubled = widening.widen((merged,))
    total = function(*wide)
    return widening.cut(total, doubled) if doubled else total


def _combiner(name: str, dtype, count: int | None) -> ChunkFunction:
    """The compiled function reducing the first axis of partial results of reduction ``name``
    into dtype ``dtype``: a combine step (``count`` None) or the aggregate (a mean's divides
    the partial sums' total by ``count``)."""
    combine = TREE[name]
    extra = f", dtype=np.dtype({np.dtype(dtype).str!r})" if combine in ("sum", "prod") else ""
    total = f"np.{combine}(partials, axis=0{extra})"
    if name == "mean" and count is not None:
        total = f"{total} / {count}"
    entry = f"combine_{combine}"
    return ChunkFunction(f"def {entry}(partials):\n    return {total}\n", entry, {}, 1)


def _overlap(step: KernelStep, function: ChunkFunction, arrays: list, aligned: list) -> da.Array:
    """``map_overlap`` with the slices' depth: block i's extended chunk gives exactly the output
    rows whose lowest read falls in block i (fewer at the array's two ends). An ``aligned``
    array (read whole, of the result's shape) is chunked as the result, with no depth."""
    first = next(a for a, whole in zip(arrays, aligned) if not whole)
    chunks = list(first.chunks)
    for axis, (before, after) in step.depth.items():
        chunks[axis] = ensure_minimum_chunksize(max(before, after, 1), chunks[axis])
    out = list(chunks)
    for axis, (before, after) in step.depth.items():
        sizes = list(chunks[axis])
        sizes[0] -= before
        sizes[-1] -= after
        out[axis] = tuple(sizes)
    depths, inputs = [], []
    for array, whole in zip(arrays, aligned):
        own = tuple(out[len(out) - array.ndim :]) if whole else tuple(chunks)
        inputs.append(array.rechunk(own))
        depths.append({a: 0 for a in range(array.ndim)} if whole else dict(step.depth))
    metas = [o.meta for o in step.unit.outputs]
    several = len(metas) > 1
    blocks = da.map_overlap(
        function,
        *inputs,
        depth=depths if any(aligned) else depths[0],
        boundary="none",
        trim=False,
        align_arrays=False,
        allow_rechunk=False,
        chunks=tuple(out),
        meta=np.empty((0,) * len(out), dtype=object) if several else _empty(metas[0]),
    )
    return tuple(_item(blocks, i, m, None) for i, m in enumerate(metas)) if several else blocks
