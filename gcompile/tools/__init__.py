"""Tools on top of the compiler: comparison reports, drawings, networkx export, explain().

``ir`` may not import ``tools``, so the Graph methods that draw live here and
``install_graph_methods()`` (called by ``gcompile/__init__.py``) attaches them::

    graph = gcompile.trace(softmax, x, stage="fused")
    graph.render("softmax.svg")    # graph.to_dot(), graph.to_networkx(); Jupyter shows the SVG
"""

from __future__ import annotations

from pathlib import Path

from ..ir.graph import Graph
from . import dot


def _to_dot(self: Graph, *, title: str | None = None, notes: dict | None = None) -> str:
    """Graphviz DOT text of this graph, ops holding sub-graphs as clusters (``tools/dot.py``;
    ``notes``: a line per kernel name, such as ``ExplainReport.chunk_notes``)."""
    return dot.to_dot(self, title=title, notes=notes)


def _render(self: Graph, path: str | Path, *, format: str | None = None) -> Path:  # noqa: A002
    """Draw this graph to ``path`` (``.svg``, ``.png``, ``.pdf``; ``.dot`` is written beside it)
    with Graphviz's ``dot`` (``tools/dot.py: render``); returns the drawing's path."""
    return dot.render(self, path, format=format)


def _to_networkx(self: Graph):
    """This graph as a ``networkx.DiGraph``, nested graphs opened (``tools/nx.py``)."""
    from .nx import to_networkx  # networkx takes 0.2 s to import: only when asked for

    return to_networkx(self)


def _repr_svg_(self: Graph) -> str | None:
    """Jupyter: the drawing as SVG text, or None (plain text is shown) without Graphviz."""
    return dot.svg(self)


def _repr_mimebundle_(self: Graph, include=None, exclude=None) -> dict:
    """Jupyter: the SVG drawing (when Graphviz's ``dot`` exists) and the text form."""
    bundle = {"text/plain": str(self)}
    wanted = (include is None or "image/svg+xml" in include) and "image/svg+xml" not in (
        exclude or ()
    )
    image = dot.svg(self) if wanted else None
    if image is not None:
        bundle["image/svg+xml"] = image
    return bundle


_METHODS = {
    "to_dot": _to_dot,
    "render": _render,
    "to_networkx": _to_networkx,
    "_repr_svg_": _repr_svg_,
    "_repr_mimebundle_": _repr_mimebundle_,
}


def install_graph_methods() -> None:
    """Attach ``to_dot``, ``render``, ``to_networkx`` and Jupyter's display methods to Graph."""
    for name, method in _METHODS.items():
        method.__name__, method.__qualname__ = name, f"Graph.{name}"  # as help() shows them
        setattr(Graph, name, method)
