"""The Numba backend: fused kernels become loop nests (``codegen``), compiled once per
structure (``cache``), called from one generated host function per graph (``host``)."""

from __future__ import annotations

import os
import warnings
from typing import Callable

from ... import config
from ...errors import GcompileWarning
from ...ir.graph import Graph
from . import host

# Numba's OpenMP threads spin while they wait for work by default. When another process
# holds a core (a shared 2-core machine, a BLAS call, a test runner), a spinning thread
# slowed parallel kernels 8-25x (a 262144-element kernel: 8 ms instead of 0.2 ms). Passive
# waiting costs a few microseconds per parallel loop instead. A value the user set wins;
# it must be set before Numba loads its OpenMP runtime, so it is set on import.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


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
