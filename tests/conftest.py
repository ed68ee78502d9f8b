"""Test-suite settings: every graph the compiler builds is verified after every pass (and every
traced, optimized and fused graph read back from its text form), compiled
kernels go to a cache of the test suite's own (not the user's), kept between local runs, and
under CI (``CI`` set) hypothesis draws the same examples on every run, so a CI result depends on
the commit alone; a local run explores new examples each time.

Numba compiles the suite's kernels without LLVM's optimisation passes (level 0, where users
get 3): the suite tests what generated code computes, which the level does not change (no pass
reorders floating-point operations without ``fastmath``), and level 0 saves about a fifth of the
suite's time. Tests marked ``optimized`` compile at the users' level: those that read machine
code (a loop vectorised), load machine code from Numba's disk cache (which refuses unoptimised
modules: they keep "dynamic globals"), or compare the sign of a NaN (a NaN LLVM folds from
constants is positive, one the x86 makes at run time negative). ``bench/`` and users run at the
default level."""

import os
import tempfile

os.environ.setdefault("NUMBA_OPT", "0")  # before Numba reads its configuration

import numba
import pytest
from hypothesis import settings

from gcompile import frontend
from gcompile.ir import ops
from gcompile.ir.graph import Graph
from gcompile.ir.parser import ParseError
from gcompile.ir.printer import format_graph
from gcompile.ir.subgraph import walk
from gcompile.passes import manager

os.environ.setdefault("GCOMPILE_VERIFY", "1")
os.environ.setdefault(
    "GCOMPILE_CACHE_DIR", os.path.join(tempfile.gettempdir(), f"gcompile-tests-{os.getuid()}")
)

settings.register_profile("ci", derandomize=True, database=None)
if os.environ.get("CI"):
    settings.load_profile("ci")


USERS_OPT_LEVEL = 3  # Numba's default


@pytest.fixture(autouse=True)
def _optimized_when_marked(request, monkeypatch):
    """Under the ``optimized`` mark, Numba runs LLVM's passes at the users' level: in this process
    (its pass builders read the level at each compile) and in processes the test starts."""
    if request.node.get_closest_marker("optimized"):
        monkeypatch.setattr(numba.core.config, "OPT", numba.core.config._OptLevel(USERS_OPT_LEVEL))
        monkeypatch.setenv("NUMBA_OPT", str(USERS_OPT_LEVEL))


@pytest.fixture(autouse=True, scope="session")
def _every_graph_reads_back():
    """Every graph the suite traces, and every graph it brings to a stage (optimized, fused), is
    read back from its text form: ``Graph.parse`` of ``format_graph(g, values=True)`` (``str(g)``
    with every constant's values) prints the same. Only a graph calling back into Python (a
    ``print``: a function the text cannot hold) is refused with ``ParseError``;
    ``tests/ir/test_parser.py`` tests that."""
    trace, run_pipeline = frontend.trace, manager.run_pipeline

    def traced(*args, **kwargs):
        return _read_back(trace(*args, **kwargs))

    def staged(graph, stage, *args, **kwargs):
        records = run_pipeline(graph, stage, *args, **kwargs)
        if stage != "traced":
            _read_back(graph)
        return records

    frontend.trace, manager.run_pipeline = traced, staged
    yield
    frontend.trace, manager.run_pipeline = trace, run_pipeline


_READ_BACK: set = set()  # the texts read back already (a text parses the same every time)


def _read_back(graph: Graph) -> Graph:
    text = format_graph(graph, values=True)
    if text in _READ_BACK:
        return graph
    _READ_BACK.add(text)
    try:
        parsed = Graph.parse(text)
    except ParseError:
        if any(visit.node.target is ops.CALLBACK for visit in walk(graph)):
            return graph
        raise
    assert format_graph(parsed, values=True) == text, f"read back differently:\n{text}"
    return graph
