"""The Numba backend: fused kernels become loop nests (``codegen``), compiled once per
structure (``cache``), called from one generated host function per graph (``host``)."""

from __future__ import annotations

import warnings
from typing import Callable

from ... import config
from ...errors import GcompileWarning
from ...ir.graph import Graph
from . import host


def compile_graph(graph: Graph, options: dict | None = None) -> Callable[[list], list]:
    """Backend entry point: ``graph`` as a host function calling compiled kernels.

    Options: ``fastmath`` (default False), ``parallel`` (default True: kernels of at
    least ``parallel_threshold`` elements run their outer loop on all threads),
    ``parallel_threshold`` (default ``GCOMPILE_PARALLEL_THRESHOLD``).
    """
    options = dict(options or {})
    options.setdefault("parallel_threshold", config.get("parallel_threshold"))
    run = host.compile_graph(graph, options)
    for note in run.program.notes:
        warnings.warn(f"gcompile ({graph.name}): {note}", GcompileWarning, stacklevel=4)
    return run
