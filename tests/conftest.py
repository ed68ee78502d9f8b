"""Test-suite settings: every graph the compiler builds is verified after every pass (and every
traced graph read back from its text form), compiled
kernels go to a cache of the test suite's own (not the user's), kept between local runs, and
under CI (``CI`` set) hypothesis draws the same examples on every run, so a CI result depends on
the commit alone; a local run explores new examples each time."""

import os
import tempfile

import pytest
from hypothesis import settings

from gcompile import frontend
from gcompile.ir.graph import Graph
from gcompile.ir.parser import ParseError

os.environ.setdefault("GCOMPILE_VERIFY", "1")
os.environ.setdefault(
    "GCOMPILE_CACHE_DIR", os.path.join(tempfile.gettempdir(), f"gcompile-tests-{os.getuid()}")
)

settings.register_profile("ci", derandomize=True, database=None)
if os.environ.get("CI"):
    settings.load_profile("ci")


@pytest.fixture(autouse=True, scope="session")
def _every_traced_graph_reads_back():
    """Every graph the suite traces is read back from its text form: ``Graph.parse(str(g))``
    prints as ``g`` does (a graph holding what the text cannot give back, a loop, a branch, a
    callback, a probed library call or a large constant, is refused with ``ParseError``:
    ``tests/ir/test_parser.py`` tests those)."""
    original = frontend.trace

    def trace(*args, **kwargs):
        graph = original(*args, **kwargs)
        text = str(graph)
        try:
            parsed = Graph.parse(text)
        except ParseError:
            return graph
        assert str(parsed) == text, f"read back differently:\n{text}\n---\n{parsed}"
        return graph

    frontend.trace = trace
    yield
    frontend.trace = original
