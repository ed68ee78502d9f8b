"""Test-suite settings: every graph the compiler builds is verified after every pass (and every
traced, optimized and fused graph read back from its text form), compiled
kernels go to a cache of the test suite's own (not the user's), kept between local runs, and
under CI (``CI`` set) hypothesis draws the same examples on every run, so a CI result depends on
the commit alone; a local run explores new examples each time."""

import os
import tempfile

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


# The files that take longest (a cold run, 2026-11-30), collected first: pytest-xdist's
# ``--dist loadfile`` hands files to the workers in collection order, so a long file collected
# late ran alone at the end while the other worker waited. (Only the order of files changes.)
LONGEST_FIRST = (
    "tests/ir/test_ops.py",
    "tests/test_programs.py",
    "tests/test_loops.py",
    "tests/backends/test_numba_layouts.py",
    "tests/backends/test_numba.py",
    "tests/test_loop_programs_compiled.py",
    "tests/test_dask.py",
    "tests/test_unbacked.py",
    "tests/test_examples.py",
    "tests/test_list_rows.py",
    "tests/passes/test_passes_hypothesis.py",
    "tests/test_loop_forms.py",
    "tests/test_loop_fuzz_numba.py",
)


def pytest_collection_modifyitems(session, config, items):
    """Collect ``LONGEST_FIRST``'s files first, in that order, the others after them as found."""
    rank = {path: position for position, path in enumerate(LONGEST_FIRST)}
    root = str(config.rootpath)
    items.sort(key=lambda item: rank.get(os.path.relpath(str(item.path), root), len(rank)))


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
