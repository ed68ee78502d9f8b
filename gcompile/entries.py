"""A compiled function's cache entries: ``CacheEntry``, one specialisation (or the refusal
that made it run eagerly), and its making on a cache miss (``build``): the trace, the pass
pipeline to the fused graph, the backend's compile, and what later calls check before running
it (the sizes the trace assumed; arguments written back must not share memory,
``overlapping_write``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np

from . import backends, config, frontend
from .captured_globals import GlobalsGuard
from .errors import UnsupportedError
from .guards import BoundCall, SizeCheck, guard_text, size_check
from .ir import ops
from .ir.alias import returns_a_choice, written_inputs
from .ir.graph import Graph
from .passes import manager

UNBUILT = object()  # a cache entry's fast entry before the entry's first call


@dataclass
class CacheEntry:
    """One compiled specialisation, or the refusal that made it run eagerly."""

    key: tuple
    graph: Graph | None = None
    run: Callable[[list], list] | None = None
    refusal: UnsupportedError | None = None
    failure: Exception | None = None  # an internal error while compiling (the call runs eagerly)
    timings: dict = field(default_factory=dict)
    written: list = field(default_factory=list)  # input positions of arguments written back
    labels: list = field(default_factory=list)  # "argument 'x'" per input, for messages
    captured: list = field(default_factory=list)  # (label, array) read from outside the arguments
    paths: list = field(default_factory=list)  # the name of each flattened argument leaf
    sizes: SizeCheck | None = None  # what the trace assumed about sizes of 2 or more
    globals: GlobalsGuard | None = None  # the globals and closure variables the trace read
    fast: Any = None  # its fast_entry.FastEntry (None: it has none; UNBUILT before its first call)
    results: Callable | None = None  # gives array results back as the caller's kind of array
    order: int = 0  # how many entries the function had before this one
    python: str | None = None  # why the call runs the Python function (its trace computes nothing)

    def guards(self) -> list[str]:
        """What this entry assumes about the arguments: one line per leaf, then the sizes."""
        lines = [guard_text(key, path) for key, path in zip(self.key[1], self.paths)]
        lines += self.globals.describe() if self.globals is not None else []
        return lines + (self.sizes.conditions if self.sizes is not None else [])

    def holds(self, inputs: list) -> bool:
        """Whether a call with the entry's guard key and these inputs may use the entry."""
        if self.globals is not None and not self.globals.holds():
            return False
        return self.sizes is None or self.sizes.check(inputs)


# The most operations a trace may record (option ``max_graph_nodes``): past it the function runs
# eagerly, with a warning naming the loops that were unrolled. An unrolled 2000-step loop records
# about 16,000; generated code grows with the graph, and Numba's compile time about quadratically
# with a function's size (1000 statements ~15 s, 5000 ~460 s on the reference machine).
MAX_GRAPH_NODES = 10_000


# Why a call whose trace records no operation (Python values and sizes alone, arguments returned
# as they are) runs the function itself: a compiled call would rebuild its results from the graph's
# constants on every call (lists of thousands of numbers, a dict of lists), for nothing.
PYTHON_ONLY = "its trace computes nothing on arrays: the function runs as Python"


def _computes_nothing(graph: Graph) -> bool:
    """Whether ``graph`` computes nothing Python would not compute as fast: no call but sizes
    used as values, and arrays made only to be returned (a list of numbers traced as an array,
    ``frontend/number_lists.py``, that a graph break's region hands on)."""
    for node in graph.nodes:
        if node.op != "call" or node.target is ops.SYMINT:
            continue
        made = node.target.kind == "creation"
        if not (made and all(user.op == "output" for user in node.users)):
            return False
    return True


def build(
    entry: CacheEntry,
    bound: BoundCall,
    function: Callable,
    backend: str,
    options: dict,
    stats: dict,
    dump: Path | None,
    region: bool = False,
) -> None:
    """Trace ``function`` for the call ``bound``, run the pass pipeline and compile the graph
    with ``backend``, into ``entry``: its graph, run function, memory and size checks and
    timings (``stats`` counts the trace; ``dump``: the debug folder the passes write to).
    Raises what tracing or compiling raises; for a graph break's ``region``, an
    UnsupportedError when it returns an array that may be one of its arguments (Python, which
    goes on with it, must hold that very array: the region runs as Python)."""
    guard = GlobalsGuard.of(function)  # (the values the trace reads)
    entry.graph = _traced(function, bound, options, entry.timings, stats)
    if _computes_nothing(entry.graph):
        entry.python = PYTHON_ONLY
        entry.sizes, entry.globals = _size_check(entry.graph, bound), guard
        return
    if region and returns_a_choice(entry.graph):
        raise UnsupportedError(
            "a region returning an array that a branch or loop may have chosen from its "
            "arguments (Python goes on with that very array; the region's value is a copy)"
        )
    config.log("graph", lambda: f"traced {entry.graph}")
    records = manager.run_pipeline(entry.graph, "fused", {**options, "backend": backend}, dump)
    for record in records:
        key = f"pass {record.name}"
        entry.timings[key] = entry.timings.get(key, 0.0) + record.seconds
    config.log("fusion", lambda: str(entry.graph.notes.fusion))
    entry.written, entry.labels, entry.captured = _memory_check(entry.graph)
    start = time.perf_counter()
    entry.run = backends.get(backend)(entry.graph, options)
    entry.timings["backend"] = time.perf_counter() - start
    entry.sizes = _size_check(entry.graph, bound)
    entry.globals = guard
    config.log("code", lambda: _code_of(entry))
    config.log("perf", lambda: f"compile of {graph_name(function)}: {_timings_text(entry)}")


def _traced(
    function: Callable, bound: BoundCall, options: dict, timings: dict, stats: dict
) -> Graph:
    """``function``'s graph for the call ``bound`` (``options``: ``dynamic``, ``loops``,
    ``max_graph_nodes``), counted in ``stats`` and timed in ``timings``."""
    start = time.perf_counter()
    graph = frontend.trace(
        function,
        graph_name(function),
        bound.leaves,
        bound.is_input,
        bound.rebuild,
        dynamic=options.get("dynamic", True),
        budget=options.get("max_graph_nodes", MAX_GRAPH_NODES),
        loops=options.get("loops", True),
        values=frozenset(bound.binder.value_ints),
    )
    stats["traces"] += 1
    timings["trace"] = time.perf_counter() - start
    if config.get("verify"):
        graph.verify()
    return graph


def _code_of(entry: CacheEntry) -> str:
    """The generated code an entry runs, for the log."""
    program = getattr(entry.run, "program", None)
    return program.code if program is not None else "(interpreted: no generated code)"


def _size_check(graph: Graph, bound: BoundCall) -> SizeCheck | None:
    """What the compiled graph assumes about its inputs' sizes (``guards.size_check``)."""
    paths = [path for (path, _), flag in zip(bound.leaves, bound.is_input) if flag]
    metas = [p.meta for p in graph.placeholders]
    return size_check(paths, metas, graph.shape_env)


def _memory_check(graph: Graph) -> tuple[list[int], list[str], list[tuple[str, np.ndarray]]]:
    """What a call must check when the graph writes arguments back, computed once per entry:
    the written input positions, a label per input, and the arrays read from outside."""
    written = written_inputs(graph)
    if not written:
        return [], [], []
    labels = [f"argument '{p.name}'" for p in graph.placeholders]
    captured = [
        (f"the array read from outside as %{n.name}", n.target)
        for n in graph.nodes
        if n.op == "constant" and n.captured and isinstance(n.target, np.ndarray)
    ]
    return written, labels, captured


def overlapping_write(entry: CacheEntry, inputs: list) -> UnsupportedError | None:
    """A refusal when a written argument shares memory with another argument (or with an array
    the function reads from outside), else None.

    The compiled graph reads every argument before writing any back; eager mode
    interleaves, so a shared buffer could be read after a write. Eager mode runs instead.
    """
    others = list(zip(entry.labels, inputs)) + entry.captured
    for written in entry.written:
        target = inputs[written]
        for label, value in others:
            if (
                label != entry.labels[written]
                and isinstance(value, np.ndarray)
                and np.may_share_memory(target, value)
            ):
                return UnsupportedError(
                    f"arrays that share memory ({entry.labels[written]} is written, {label} overlaps it)",
                    hint="pass separate arrays (e.g. b.copy()); eager mode runs this call",
                )
    return None


def graph_name(fn: Callable) -> str:
    """The name of ``fn``'s graph (``lambda`` for a lambda)."""
    name = getattr(fn, "__name__", "fn")
    return "lambda" if name == "<lambda>" else name


def _timings_text(entry: CacheEntry) -> str:
    parts = [f"{name} {seconds * 1e3:.1f} ms" for name, seconds in entry.timings.items()]
    program = getattr(entry.run, "program", None)
    if program is not None:
        parts += [f"{name} {seconds * 1e3:.1f} ms" for name, seconds in program.timings.items()]
    return ", ".join(parts)
