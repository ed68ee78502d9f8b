"""Compiled functions over dask arrays: one trace on the arrays' structure (sizes symbolic),
the fused graph mapped onto dask one kernel at a time (``planner.py`` decides, ``executor.py``
builds the lazy dask graph, ``chunk_function.py`` is what the tasks run, ``merging.py`` joins
one-row chunks to a neighbour where a reduction sums along them).

dask is imported only when a call passes a dask array (``has_dask``).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

import numpy as np

from ..errors import UnsupportedError
from ..frontend import trace as trace_graph
from ..guards import SizeCheck, size_check
from ..ir.graph import Graph
from ..ir.pytree import map_leaves, unflatten
from ..passes import manager


def is_dask_array(value) -> bool:
    """Whether ``value`` is a ``dask.array.Array`` (without importing dask)."""
    module = sys.modules.get("dask.array")
    return module is not None and isinstance(value, module.Array)


def has_dask(args: tuple, kwargs: dict) -> bool:
    """Whether a call passes a dask array (at the top level or in a list, tuple or dict)."""
    if "dask.array" not in sys.modules:
        return False
    return any(_any_leaf(v) for v in (*args, *kwargs.values()))


def _any_leaf(value) -> bool:
    if isinstance(value, (list, tuple)):
        return any(_any_leaf(v) for v in value)
    if isinstance(value, dict):
        return any(_any_leaf(v) for v in value.values())
    return is_dask_array(value)


@dataclass
class DaskEntry:
    """One traced graph over dask arrays, its chunk plan and what it assumed about sizes."""

    graph: Graph
    steps: dict  # kernel node -> planner.KernelStep
    sizes: SizeCheck | None


class DaskCalls:
    """The dask side of one ``CompiledFunction``: its traced plans, by guard key."""

    def __init__(self, compiled):
        self.compiled = compiled
        self.entries: dict = {}  # guard key -> [DaskEntry]
        self.last: tuple | None = None  # (entry, inputs, plan lines) of the latest call

    def call(self, args: tuple, kwargs: dict):
        """The function's results over the call's dask arrays: lazy dask arrays whose tasks run
        the compiled kernels; a refusal runs the function on the dask arrays as written."""
        try:
            return self._lazy(args, kwargs)
        except UnsupportedError as error:
            return self.compiled.fallbacks.refused(error, args, kwargs)

    def _lazy(self, args: tuple, kwargs: dict):
        from .executor import execute  # imports dask: a dask array was passed

        stand_ins: dict = {}
        args, kwargs = _replace(args, stand_ins), _replace(kwargs, stand_ins)
        binder = self.compiled._binder
        entry, bound = binder.specialising(binder.bind(args, kwargs), self._entry)
        inputs = [stand_ins.get(id(v), v) for v in bound.inputs()]
        log: list = []
        outputs = execute(entry.graph, entry.steps, inputs, log, self.compiled.options)
        self.last = (entry, inputs, log)
        spec = entry.graph.out_spec
        return outputs[0] if spec.kind == "leaf" else unflatten(spec, outputs)

    def _entry(self, bound) -> DaskEntry:
        """The plan for ``bound``: an earlier one its sizes fit, else traced now."""
        traced = bound.inputs()
        for entry in self.entries.get(bound.key, ()):
            if entry.sizes is None or entry.sizes.check(traced):
                return entry
        entry = self._trace(bound)
        self.entries.setdefault(bound.key, []).append(entry)
        return entry

    def _trace(self, bound) -> DaskEntry:
        from .planner import plan_graph

        fn = self.compiled
        graph = trace_graph(
            fn.eager,
            getattr(fn.eager, "__name__", "fn"),
            bound.leaves,
            bound.is_input,
            bound.rebuild,
            dynamic=True,
            loops=fn.options.get("loops", True),
        )
        manager.run_pipeline(graph, "fused", {**fn.options, "backend": fn.backend})
        paths = [path for (path, _), flag in zip(bound.leaves, bound.is_input) if flag]
        sizes = size_check(paths, [p.meta for p in graph.placeholders], graph.shape_env)
        return DaskEntry(graph, plan_graph(graph), sizes)


def chunk_plan(calls: DaskCalls) -> list[str]:
    """The chunk plan of the latest call with dask arrays: one line per dask step."""
    if calls.last is None:
        return ["no call with dask arrays yet"]
    _, inputs, log = calls.last
    chunked = [
        f"argument {i}: shape {v.shape}, chunks {v.chunksize} ({v.npartitions} blocks)"
        for i, v in enumerate(inputs)
        if is_dask_array(v)
    ]
    return chunked + log


def _replace(value, stand_ins: dict):
    """``value`` with each dask array replaced by a NumPy stand-in of its shape and dtype
    (no memory: a broadcast zero), remembered in ``stand_ins`` by the stand-in's id."""

    def stand_in(leaf):
        if not is_dask_array(leaf):
            return leaf
        zeros = np.broadcast_to(np.zeros((), leaf.dtype), leaf.shape)
        stand_ins[id(zeros)] = leaf
        return zeros

    return map_leaves(stand_in, value)
