"""explain(fn, *args): everything the compiler did with one call, as one report.

The report answers "why did it not fuse?", "why did it fall back?" and "where did
the compile time go?": the graph at each stage with its node counts, every fused
kernel and the reason for every kernel boundary, every refusal with the user's
line and a suggested rewrite, kernels left to the interpreter, how each math function
in a kernel is computed (vectorised expansion or libm call, and why), the guards the
compiled code assumes, the generated code, and the time of each compile phase
(trace, each pass, code generation, each Numba compile with its cache event).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from ..api import CompiledFunction, compile, trace
from ..dask import chunk_plan, has_dask
from ..errors import UnsupportedError
from ..ir import ops
from ..ir.graph import Graph
from ..ir.subgraph import subgraphs_of
from ..passes.manager import STAGES
from .compare import copy_inputs
from .loops_report import loop_lines, symbol_lines


@dataclass
class ExplainReport:
    """The parts of an explanation; ``str(report)`` is the readable whole."""

    name: str
    backend: str
    graphs: dict = field(default_factory=dict)  # stage -> Graph
    counts: dict = field(default_factory=dict)  # stage -> graph_counts(graph)
    fusion: Any = None  # the fused graph's FusionReport
    refusals: list = field(default_factory=list)  # UnsupportedError
    notes: list = field(default_factory=list)  # kernels left to the interpreter, and why
    library_calls: list = field(default_factory=list)  # extern nodes: who runs them, what it costs
    guards: list = field(default_factory=list)
    code: str = ""
    timings: dict = field(default_factory=dict)  # phase -> seconds
    kernel_events: list = field(default_factory=list)  # (kernel, "compiled"|"disk"|"memory")
    math: list = field(default_factory=list)  # (kernel, function, how it is computed and why)
    breaks: list = field(default_factory=list)  # one line per graph break (``graph_breaks``)
    chunks: list = field(default_factory=list)  # the chunk plan of a call with dask arrays
    chunk_notes: dict = field(default_factory=dict)  # kernel name -> its dask steps, for drawings
    python: str = ""  # why the call ran the function as Python though nothing refused it

    @property
    def chunk_plan(self) -> str:
        """The chunk plan of a call with dask arrays, as text (empty for NumPy calls)."""
        return "\n".join(["== chunk plan (dask)"] + [f"  {line}" for line in self.chunks])

    @property
    def compiled(self) -> bool:
        """True when the call ran compiled code (no refusal)."""
        return not self.refusals

    def __str__(self) -> str:
        lines = [f"gcompile explain: {self.name} (backend {self.backend})"]
        for stage in STAGES:
            if stage in self.graphs:
                counts = ", ".join(f"{k} {v}" for k, v in self.counts[stage].items())
                lines += ["", f"== {stage} graph ({counts})", str(self.graphs[stage])]
        traced = self.graphs.get("optimized") or self.graphs.get("traced")
        if traced is not None and (loop_lines(traced) or traced.shape_env.loops):
            lines += ["", "== loops (from the optimized graph)", *loop_lines(traced)]
        env = traced.shape_env if traced is not None else None
        if env is not None and env.symbols + list(env.loops) + list(env.data_sizes):
            lines += ["", "== symbols", *symbol_lines(traced)]
        if self.fusion is not None:
            lines += ["", "== fusion", str(self.fusion)]
        lines += ["", "== refusals"]
        lines += [_refusal_text(r) for r in self.refusals] or [
            f"  none: {self.python}" if self.python else "  none: the whole function compiled"
        ]
        if self.breaks:
            lines += ["", "== graph breaks (compiled regions around a statement run in Python)"]
            lines += [f"  {line}" for line in self.breaks]
        if self.chunks:
            lines += ["", self.chunk_plan]
        if self.notes:
            lines += ["", "== kernels left to the interpreter"] + [f"  {n}" for n in self.notes]
        if self.library_calls:
            lines += ["", "== library calls (NumPy runs them)"]
            lines += [f"  {call}" for call in self.library_calls]
        if self.math:
            lines += ["", "== math functions in kernels"]
            lines += [f"  {kernel}: {function}: {how}" for kernel, function, how in self.math]
        lines += ["", "== guards (a call must match these to reuse the compiled code)"]
        lines += [f"  {g}" for g in self.guards]
        lines += ["", "== compile time"]
        lines += [
            f"  {phase:<34} {seconds * 1e3:9.2f} ms" for phase, seconds in self.timings.items()
        ]
        for kernel, event in self.kernel_events:
            lines.append(f"  kernel {kernel}: {_EVENTS[event]}")
        if self.code:
            lines += ["", "== generated code", self.code]
        return "\n".join(lines)


_EVENTS = {
    "compiled": "compiled by Numba (disk cache miss)",
    "disk": "machine code loaded from the disk cache",
    "memory": "already compiled in this process (shared)",
}


def _library_calls(graph) -> list:
    """The extern nodes of ``graph``'s top level: called by the host (Python) between kernels."""
    return [
        f"{node.kwargs['call'].name} ({node.name} at {node.source or 'an unknown line'}): "
        "called by the host"
        for node in graph.nodes
        if node.op == "call" and node.target is ops.EXTERN
    ]


def _refusal_text(error: UnsupportedError) -> str:
    text = f"  {error.construct}"
    if error.detail:
        text += f": {error.detail}"
    if error.source:
        text += f"\n    at {error.source}"
    if error.hint:
        text += f"\n    rewrite: {error.hint}"
    return text


def explain(fn: Callable, *args: Any, **kwargs: Any) -> ExplainReport:
    """Compile ``fn`` for this call afresh and report what the compiler did (see the module doc).

    ``fn`` may be a plain function or a ``CompiledFunction`` (its backend, static_argnames and
    options are used; its cache is not touched). The arguments are copied: ``fn`` may write them.
    """
    if has_dask(args, kwargs):
        return _explain_dask(fn, args, kwargs)
    settings: dict = {}
    backend = "numba"
    if isinstance(fn, CompiledFunction):
        settings = {"static_argnames": fn.static_argnames, "options": fn.options}
        backend = fn.backend
        fn = fn.eager
    report = ExplainReport(getattr(fn, "__name__", "fn"), backend)
    for stage in STAGES:
        try:
            graph = trace(fn, *copy_inputs(args), stage=stage, **settings, **copy_inputs(kwargs))
        except UnsupportedError as error:
            report.refusals.append(error)
            break
        report.graphs[stage] = graph
        report.counts[stage] = graph_counts(graph)
    if "fused" in report.graphs:
        report.fusion = report.graphs["fused"].notes.fusion
    compiled = compile(fn, backend=backend, **settings)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        compiled(*copy_inputs(args), **copy_inputs(kwargs))  # refusals land in compiled.refusals
    _add_entry(report, compiled)
    return report


def _add_entry(report: ExplainReport, compiled: CompiledFunction) -> None:
    for error in compiled.refusals:
        if all(error.reason != known.reason for known in report.refusals):
            report.refusals.append(error)
    report.breaks = compiled.breaks.text()
    if not compiled.entries:
        return
    entry = compiled.entries[-1]
    report.python = entry.python or ""
    report.guards = entry.guards()
    report.timings = dict(entry.timings)
    program = getattr(entry.run, "program", None)
    if program is not None:
        report.timings.update(program.timings)
        report.notes = list(program.notes)
        report.library_calls = _library_calls(entry.graph) + list(program.callbacks)
        report.code = program.code
        report.kernel_events = [(code.name, loaded.event) for code, loaded in program.kernels]
        report.math = [
            (code.name, function, how)
            for code, _ in program.kernels
            for function, how in code.math.items()
        ]
    if entry.failure is not None:
        report.refusals.append(
            UnsupportedError("an internal compiler error", detail=f"{entry.failure!r}")
        )


def graph_counts(graph: Graph) -> dict:
    """Counts: ``nodes`` (calls), ``kernels`` (fused), ``library_calls`` (ops run as one NumPy or
    BLAS call each), ``buffers`` (intermediate arrays that library calls and ops holding
    sub-graphs allocate; returned values, views and scalars excluded; an epilogue writing into
    its matmul's buffer, and a kernel writing into its first argument, allocate none)."""
    calls = [n for n in graph.nodes if n.op == "call"]
    returned = set(graph.output_node.all_input_nodes)
    kernels = [n for n in calls if n.kind == "fused"]
    # kernels, and any other op with graphs, that make a new array
    holders = [n for n in calls if subgraphs_of(n) and not n.is_mutation]
    library = [
        n
        for n in calls
        if not subgraphs_of(n)
        and n.kind not in ("view", "opaque")
        and not n.is_mutation
        and not n.meta.scalar
    ]
    buffers = 0
    for node in holders + library:
        if hasattr(node.meta, "items"):  # several outputs, read through kernel_output nodes
            by_item = {u.kwargs["item"]: u for u in node.users if u.target.name == "kernel_output"}
            values = [(by_item.get(i), meta) for i, meta in enumerate(node.meta.items)]
        else:
            values = [(node, node.meta)]
        buffers += sum(1 for value, meta in values if value not in returned and not meta.scalar)
        reused = getattr(node.target, "inplace_input", None)
        if reused is not None and node.args[reused] not in returned:
            buffers -= 1
    return {
        "nodes": len(calls),
        "kernels": len(kernels),
        "library_calls": len(library),
        "buffers": buffers,
    }


def _explain_dask(fn: Callable, args: tuple, kwargs: dict) -> ExplainReport:
    """A call with dask arrays: the fused graph and the chunk plan (nothing is computed)."""
    compiled = fn if isinstance(fn, CompiledFunction) else compile(fn)
    fresh = compile(
        compiled.eager,
        backend=compiled.backend,
        static_argnames=compiled.static_argnames,
        options=compiled.options,
    )
    report = ExplainReport(getattr(compiled.eager, "__name__", "fn"), compiled.backend)
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        fresh(*args, **kwargs)
    report.refusals = list(fresh.refusals)
    if fresh.dask.last is not None:
        graph = fresh.dask.last[0].graph
        report.graphs["fused"] = graph
        report.counts["fused"] = graph_counts(graph)
        report.fusion = graph.notes.fusion
    report.chunks = chunk_plan(fresh.dask)
    graph = report.graphs.get("fused")
    kernels = {n.name for n in graph.nodes} if graph is not None else set()
    for line in report.chunks:  # "fused_2: overlap ...": the drawing's note on that kernel
        name, _, step = line.partition(": ")
        if name in kernels:
            report.chunk_notes[name] = "; ".join(filter(None, [report.chunk_notes.get(name), step]))
    return report
