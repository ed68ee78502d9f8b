"""Graphviz drawings of a graph: ops holding sub-graphs as clusters, one style per kind of node.

``to_dot`` needs nothing but Python; ``render`` and ``svg`` run Graphviz's ``dot`` program::

    graph = gcompile.trace(softmax, x, stage="fused")
    graph.render("softmax.svg")        # writes softmax.dot, then softmax.svg

A node holding sub-graphs (``ir/subgraph.py``: a fused kernel) is drawn as
``subgraph cluster_<node>`` holding the ops of its graphs, one inner cluster per graph
when it has several (``then``, ``else``), and nested ops as nested clusters. The
graphs' placeholders are not drawn: an edge goes from the outer value straight into
the member that reads it, and from the members the graphs return straight to the
node's readers (``kernel_output`` projections are folded away)::

    %x -> fused_1(%x) -> %out    =>    x -> [fused_1: amax -> ... -> divide] -> return

An argument that no placeholder receives (a branch's predicate) points at the cluster's
border. A fused kernel's cluster shows its loop structure and whether the Numba backend
runs it as one loop nest or in the interpreter (and why).

Node labels are HTML-like (op, literal parameters, ``f32[64,128]``); the full text-form
line and the user's source line are in the tooltip. ``VertexIndex`` names the vertices
for this module and for ``tools/nx.py``.
"""

from __future__ import annotations

import html
import shutil
import subprocess
from pathlib import Path
from typing import Any, NamedTuple

from ..backends.numba import codegen
from ..ir import ops
from ..ir.graph import Graph, Node, nodes_in
from ..ir.kernel import FusedKernel
from ..ir.printer import format_index, format_literal, format_node
from ..ir.shape_env import using
from ..ir.subgraph import Region, body_of, loop_of, regions_of, walk

OUTPUT_ID = "return"  # a keyword, so no node can be called that
FORMATS = ("svg", "png", "pdf")

_PARAMS_LIMIT = 32  # characters of literal parameters shown in a label
_TOOLTIP_LIMIT = 400
_REASON_LIMIT = 60
_FAR = 24  # vertices between an input's drawing and a reader before it is drawn again


class GraphvizError(RuntimeError):
    """Graphviz's ``dot`` program failed."""


class GraphvizNotFound(GraphvizError):
    """Graphviz's ``dot`` program is not installed (the .dot text can still be written)."""


class Style(NamedTuple):
    """How one kind of vertex is drawn, and what the legend says about it."""

    legend: str
    shape: str
    fill: str
    extra: str = ""  # further DOT attributes


STYLES = {
    "input": Style("input", "invhouse", "#d5efd5"),
    "constant": Style("constant", "note", "#ececec"),
    "copy": Style("input or constant, drawn again", "invhouse", "#d5efd5", 'style="filled,dashed"'),
    "output": Style("output", "house", "#f7d4d4"),
    "kernel op": Style("op in a fused kernel", "box", "#ffffff", 'style="rounded,filled"'),
    "numpy": Style("op run as one NumPy call", "ellipse", "#e3e3f3"),
    "view": Style("view (no copy)", "box", "#ffffff", 'style="dashed,filled"'),
    "library": Style("library call (BLAS)", "box3d", "#c9dcff"),
    "update": Style("functional update (a copy)", "cds", "#ffe3b8"),
    "mutation": Style("writes memory in place", "cds", "#ff9f80", 'penwidth=2, color="#b02000"'),
}

_KERNEL_CLUSTER = 'style="rounded,filled", fillcolor="#fff6dc", color="#d99a00", penwidth=1.5'
_INTERPRETED_CLUSTER = (
    'style="rounded,filled,dashed", fillcolor="#fde4e4", color="#c00000", penwidth=1.5'
)
_SUBGRAPH_CLUSTER = 'style="rounded,filled", fillcolor="#eef3fb", color="#4a6fa5", penwidth=1.5'
_REGION_CLUSTER = 'style="rounded,dashed", color="#4a6fa5"'
_CLUSTERS = {  # key: (legend, look, style of the legend's sample op)
    "kernel": ("fused kernel: one loop nest", _KERNEL_CLUSTER, "kernel op"),
    "interpreted": ("kernel run by the interpreter", _INTERPRETED_CLUSTER, "kernel op"),
    "subgraph": ("op holding sub-graphs", _SUBGRAPH_CLUSTER, "numpy"),
}
_LEGEND_ORDER = (
    "input",
    "constant",
    "copy",
    "kernel",
    "interpreted",
    "subgraph",
    "numpy",
    "view",
    "library",
    "update",
    "mutation",
    "output",
)
_OPCODE_STYLES = {"placeholder": "input", "constant": "constant", "output": "output"}


class VertexIndex:
    """The vertices of a graph with the graphs of its ops opened, at any depth: ids shared by
    the drawing and networkx.

    An outer node's id is its name (the output is ``"return"``); a node of an op's graph is
    ``"<op's id>.<name>"``, with the graph's role in between when the op has several
    (``"cond_1.then.multiply_1"``); a nested graph's placeholder stands for the argument it
    receives.
    """

    def __init__(self, graph: Graph):
        self.graph = graph
        self.holders: list[Node] = []  # nodes holding sub-graphs, at any depth, in walk order
        self.prefix: dict[Node, str] = {}  # a nested node -> the id of its graph
        self.outer: dict[Node, Any] = {}  # a nested placeholder -> the argument it receives
        for visit in walk(graph):
            call, regions = visit.node, regions_of(visit.node)
            if regions:
                self.holders.append(call)
            for region in regions:
                prefix = self.region_id(call, region)
                self.outer.update(zip(region.graph.placeholders, region.inputs(call.args)))
                self.prefix.update((member, prefix) for member in region.graph.nodes)

    def region_id(self, call: Node, region: Region) -> str:
        """The id prefix of the nodes of ``region``'s graph: the op's id, then the role when
        the op has several graphs."""
        several = len(regions_of(call)) > 1
        return self.vertex_id(call) + (f".{region.role}" if several else "")

    @staticmethod
    def members(call: Node, region: Region | None = None) -> list[Node]:
        """The ops (and constants) in the graphs of ``call``, or in ``region``'s only."""
        regions = regions_of(call) if region is None else (region,)
        return [n for r in regions for n in r.graph.nodes if n.op in ("call", "constant")]

    @staticmethod
    def results(call: Node, item: int) -> list:
        """The values ``call``'s graphs return at position ``item``, one per graph (but a
        while loop's test, which returns its predicate alone)."""
        return [
            region.graph.output_node.args[0][item]
            for region in regions_of(call)
            if region.role != "test"
        ]

    @staticmethod
    def unbound(call: Node) -> list[Node]:
        """The nodes ``call`` reads that no placeholder of its graphs receives (a predicate)."""
        bound = {i for region in regions_of(call) for i in region.operands}
        free = [a for i, a in enumerate(call.args) if i not in bound]
        return nodes_in((free, call.kwargs))

    def vertex_id(self, node: Any) -> str | None:
        """The id of ``node``; None for a literal (which no edge comes from)."""
        if not isinstance(node, Node):
            return None
        if node in self.outer:
            return self.vertex_id(self.outer[node])
        if node in self.prefix:
            return f"{self.prefix[node]}.{node.name}"
        return OUTPUT_ID if node.op == "output" else node.name


def to_dot(graph: Graph, *, title: str | None = None, notes: dict | None = None) -> str:
    """Graphviz DOT text of ``graph``, top to bottom, ops holding sub-graphs as clusters, with
    a legend.

    Args:
        graph: any stage; kernels appear at stage ``"fused"``.
        title: drawn above the graph (default: the graph's name).
        notes: node name -> a line drawn in its cluster's title (the chunk plan of a call with
            dask arrays: ``ExplainReport.chunk_notes``).

    Example:
        >>> print(to_dot(gcompile.trace(softmax, x, stage="fused")))
        digraph "softmax" { ... subgraph "cluster_fused_1" { ... } ... }
    """
    index = VertexIndex(graph)
    used: dict[str, None] = {}
    lines = [f"digraph {_quote(graph.name)} {{", *_header(title or graph.name)]
    for node in graph.nodes:
        if regions_of(node):
            lines += _cluster(index, node, used, (notes or {}).get(node.name))
        elif node.target is not ops.KERNEL_OUTPUT:
            lines.append(_vertex(index.vertex_id(node), node, _style_of(node), used))
    inputs = " ".join(_quote(p.name) + ";" for p in graph.placeholders)
    if inputs:
        lines.append(f"  {{rank=min; {inputs}}}")  # inputs on the top row, as in a signature
    copies, edges = _wiring(index, used)
    lines += copies + edges + _legend(used)
    lines.append("}")
    return "\n".join(lines) + "\n"


def _header(title: str) -> list[str]:
    """Graph, node and edge defaults: compact spacing and small fonts keep big graphs legible."""
    return [
        f"  graph [rankdir=TB, newrank=true, compound=true, nodesep=0.25, ranksep=0.35, "
        f"fontname=Helvetica, fontsize=11, labelloc=t, label=<<b>{_html(title)}</b>>];",
        '  node [fontname=Helvetica, fontsize=10, style=filled, margin="0.08,0.03", height=0.3];',
        '  edge [color="#555555", arrowsize=0.6, penwidth=0.8];',
    ]


def _style_of(node: Node) -> str:
    """The key in ``STYLES`` of a node, by its own kind (not the kernel it may be in)."""
    if node.op in _OPCODE_STYLES:
        return _OPCODE_STYLES[node.op]
    if node.is_mutation:
        return "mutation"
    if node.target in (ops.UPDATE, ops.PUT_UPDATE):
        return "update"
    if node.kind == "matmul":
        return "library"
    return "view" if node.kind == "view" else "numpy"


def _vertex(vertex_id: str, node: Node, style: str, used: dict, copy: bool = False) -> str:
    """One vertex statement; a ``copy`` (an input drawn again near far readers) is dashed."""
    used[style] = None
    look = STYLES[style]
    tooltip = _tooltip(node)
    attributes = [f"label={_label(node)}", f"shape={look.shape}", f'fillcolor="{look.fill}"']
    if copy:
        used["copy"] = None
        attributes.append('style="filled,dashed"')
        tooltip = f"%{node.name} drawn again near its readers\n{tooltip}"
    elif look.extra:
        attributes.append(look.extra)
    attributes.append(f"tooltip={_quote(tooltip)}")
    return f"  {_quote(vertex_id)} [{', '.join(attributes)}];"


def _label(node: Node) -> str:
    """``<<b>op</b><br/>params<br/>f32[64,128]>``: op (or input name), literal parameters, meta."""
    if node.op == "output":
        return f"<<b>{OUTPUT_ID}</b>>"
    head = node.target.name if node.op == "call" else node.name
    parts = [f"<b>{_html(head)}</b>"]
    params = _params(node)
    if params:
        parts.append(f'<font point-size="8">{_html(_truncate(params, _PARAMS_LIMIT))}</font>')
    parts.append(f'<font point-size="9" color="#444444">{_html(node.meta.short())}</font>')
    return "<" + "<br/>".join(parts) + ">"


def _params(node: Node) -> str:
    """The literal arguments and keyword parameters of a call (Node arguments are the edges)."""
    if node.op != "call":
        return ""
    parts = [format_literal(a) for a in node.args if not isinstance(a, Node)]
    for key in sorted(node.kwargs):
        value = node.kwargs[key]
        parts.append(f"{key}={format_index(value) if key == 'index' else format_literal(value)}")
    return ", ".join(parts)


def _tooltip(node: Node) -> str:
    """The node's text-form line and the user's source line (file name and line number)."""
    text = format_node(node)
    if node.source:
        path, _, line = node.source.rpartition(":")
        text += f"\n{Path(path).name}:{line}"
    return _truncate(text, _TOOLTIP_LIMIT)


def _cluster(index: VertexIndex, call: Node, used: dict, note: str | None = None) -> list[str]:
    """The cluster of ``call``'s graphs: the op's name and params (and ``note``), then the
    members of each graph (in a cluster of their own, titled with the role, when there are
    several)."""
    title, look, op_style = _cluster_look(call, used)
    if note:
        short = _html(_truncate(note, _REASON_LIMIT))
        title += f'<br/><font point-size="9" color="#1f4e96">{short}</font>'

    names = ", ".join(m.target.name for m in index.members(call) if m.op == "call")
    tooltip = f"{format_node(call)}\nmembers: {names}"
    lines = [
        f"  subgraph {_quote('cluster_' + index.vertex_id(call))} {{",
        f"  graph [label=<{title}>, tooltip={_quote(_truncate(tooltip, _TOOLTIP_LIMIT))}, "
        f"fontsize=10, {look}];",
    ]
    regions = regions_of(call)
    for region in regions:
        body = []
        for member in index.members(call, region):
            if regions_of(member):
                body += _cluster(index, member, used)
            elif member.target is not ops.KERNEL_OUTPUT:
                style = op_style if op_style and member.op == "call" else _style_of(member)
                body.append("  " + _vertex(index.vertex_id(member), member, style, used))
        if len(regions) > 1:
            name = _quote("cluster_" + index.region_id(call, region))
            role = f"label=<<i>{_html(region.role)}</i>>, fontsize=9, {_REGION_CLUSTER}"
            body = [f"  subgraph {name} {{", f"  graph [{role}];", *body, "  }"]
        lines += body
    lines += _back_edges(index, call)
    lines.append("  }")
    return lines


def _back_edges(index: VertexIndex, call: Node) -> list[str]:
    """A loop's carried values: an edge from each body output back to the ops reading the
    placeholder it feeds in the next iteration (placeholders are not drawn)."""
    loop = loop_of(call)
    if loop is None:
        return []
    placeholders, outputs = body_of(loop).placeholders, body_of(loop).output_node.args[0]
    edges = []
    for position, output in loop.carries:
        value = outputs[output]
        if not isinstance(value, Node) or value.op == "placeholder":
            continue
        source = index.vertex_id(value)
        for reader in placeholders[position].users:
            if reader.op != "call":
                continue
            target = index.vertex_id(reader)
            edges.append(
                f'  {_quote(source)} -> {_quote(target)} [style=dashed, color="#1f6fb4", '
                f'constraint=false, label=<<font point-size="8">next</font>>];'
            )
    return edges


def _cluster_look(call: Node, used: dict) -> tuple[str, str, str | None]:
    """The title and attributes of ``call``'s cluster, and the style of its ops (None: each
    its own). A fused kernel's ops are drawn alike, and the title says when the Numba backend
    runs the kernel in the interpreter, and why."""
    params = "".join(f" {_html(_param_text(v))}" for v in call.target.params.values())
    title = f"<b>{_html(call.name)}</b>{params}"
    if not isinstance(call.target, FusedKernel):
        used["subgraph"] = None
        return title, _SUBGRAPH_CLUSTER, None
    reason = interpreted_reason(call.target)
    if reason is None:
        used["kernel"] = None
        return title, _KERNEL_CLUSTER, "kernel op"
    used["interpreted"] = None
    short = _html(_truncate(reason, _REASON_LIMIT))
    title += f'<br/><font point-size="9" color="#c00000">interpreter: {short}</font>'
    return title, _INTERPRETED_CLUSTER, "kernel op"


def _param_text(value: Any) -> str:
    """A param in a cluster's title: a tuple of sizes as ``[64,128]``."""
    if isinstance(value, tuple):
        return "[" + ",".join(str(v) for v in value) + "]"
    return str(value)


def interpreted_reason(kernel: FusedKernel) -> str | None:
    """Why the Numba backend runs ``kernel`` in the interpreter (no template), or None."""
    try:
        with using(kernel.graph.shape_env):  # (symbolic sizes at the traced call's values)
            codegen.generate(kernel, {})
    except codegen.NoTemplate as missing:
        return str(missing)
    return None


def _wiring(index: VertexIndex, used: dict) -> tuple[list[str], list[str]]:
    """The edges, producer to reader, once each, through cluster boundaries; and the copies.

    An input or constant whose reader comes more than ``_FAR`` vertices after its latest
    drawing is drawn again (dashed) above that reader: weights read by every layer of a deep
    model would otherwise pull edges across the whole drawing, making it wide and ``dot``
    slow (minutes for a few hundred nodes).
    """
    copies: list[str] = []
    edges: dict[str, None] = {}
    latest: dict[Node, tuple[str, int]] = {}  # input or constant -> (id, position) drawn last
    for position, (reader_id, reader, reads) in enumerate(_drawn(index, index.graph)):
        if reader.op in ("placeholder", "constant") and reader.graph is index.graph:
            latest[reader] = (reader_id, position)
        for value, attributes in reads:
            for producer in _drawn_producers(index, value):
                source = index.vertex_id(producer)
                if producer in latest:
                    source, since = latest[producer]
                    if position - since > _FAR:
                        source = f"{producer.name}/{position}"
                        copy = _vertex(source, producer, _style_of(producer), used, copy=True)
                        copies.append(copy)
                        latest[producer] = (source, position)
                edges[f"  {_quote(source)} -> {_quote(reader_id)}{attributes};"] = None
    return copies, list(edges)


def _drawn(index: VertexIndex, graph: Graph) -> list[tuple[str, Node, list]]:
    """Every vertex drawn for ``graph``, with its id and the values it reads (each with the
    edge's attributes), in program order, the members of an op's graphs in its place.

    The nodes an op reads that no placeholder receives are read by its first member, the
    edge ending at the op's cluster (``lhead``)."""
    drawn = []
    for node in graph.nodes:
        if regions_of(node):
            inner = [d for region in regions_of(node) for d in _drawn(index, region.graph)]
            if inner:
                lhead = f" [lhead={_quote('cluster_' + index.vertex_id(node))}]"
                first_id, first, reads = inner[0]
                inner[0] = (first_id, first, [(v, lhead) for v in index.unbound(node)] + reads)
            drawn += inner
        elif graph is index.graph or node.op in ("call", "constant"):
            if node.target is not ops.KERNEL_OUTPUT:
                reads = [(value, "") for value in node.all_input_nodes]
                drawn.append((index.vertex_id(node), node, reads))
    return drawn


def _drawn_producers(index: VertexIndex, value: Any) -> list[Node]:
    """The nodes drawn for ``value``: an op's value is the members its graphs return (one
    per graph), a nested placeholder the outer value it receives (a graph may return its
    input, itself an op's value)."""
    if not isinstance(value, Node):
        return []
    if value in index.outer:
        return _drawn_producers(index, index.outer[value])
    if regions_of(value):
        return [p for r in VertexIndex.results(value, 0) for p in _drawn_producers(index, r)]
    if value.target is ops.KERNEL_OUTPUT:
        results = VertexIndex.results(value.args[0], value.kwargs["item"])
        return [p for r in results for p in _drawn_producers(index, r)]
    return [value]


def _legend(used: dict) -> list[str]:
    """A cluster with one sample per style used in the drawing, stacked by invisible edges."""
    lines = [
        '  subgraph "cluster_legend" {',
        '  graph [label=<<b>legend</b>>, style=rounded, color="#aaaaaa", fontsize=10];',
        "  node [fontsize=9, height=0.25];",
    ]
    ids = []
    for key in (k for k in _LEGEND_ORDER if k in used):
        vertex_id = _quote(f"legend/{key}")
        ids.append(vertex_id)
        if key in _CLUSTERS:
            text, look, sample = _CLUSTERS[key]
            lines += [
                f"    subgraph {_quote('cluster_legend/' + key)} {{",
                f"    graph [label={_quote(text)}, fontsize=9, {look}];",
                f"    {_sample(vertex_id, 'op', STYLES[sample])}",
                "    }",
            ]
        else:
            lines.append(f"  {_sample(vertex_id, STYLES[key].legend, STYLES[key])}")
    lines += [f"  {a} -> {b} [style=invis];" for a, b in zip(ids, ids[1:])]
    lines.append("  }")
    return lines


def _sample(vertex_id: str, text: str, look: Style) -> str:
    """A legend vertex drawn in style ``look``."""
    extra = f", {look.extra}" if look.extra else ""
    return (
        f'{vertex_id} [label={_quote(text)}, shape={look.shape}, fillcolor="{look.fill}"{extra}];'
    )


def _quote(text: str) -> str:
    """A DOT double-quoted string: backslashes and quotes escaped, newlines as ``\\n``."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{escaped}"'


def _html(text: str) -> str:
    """Text for an HTML-like label: ``<``, ``>``, ``&`` and quotes as entities, and backslashes
    doubled: even in HTML text, ``dot`` reads ``\\\\`` as one backslash and ``\\N`` as the
    node's name."""
    return html.escape(text, quote=True).replace("\\", "\\\\")


def _truncate(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, ending in ``...`` when cut."""
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _dot_program() -> str | None:
    """The path of Graphviz's ``dot``, or None."""
    return shutil.which("dot")


def render(graph: Graph, path: str | Path, *, format: str | None = None) -> Path:  # noqa: A002
    """Write ``graph``'s DOT text next to ``path``, then draw it with Graphviz; returns the drawing.

    Args:
        path: ``out.svg``, ``out.png`` or ``out.pdf``, and ``out.dot`` is written too; a path
            ending in ``.dot`` or with no suffix is drawn as SVG (or as ``format`` says).
        format: ``"svg"``, ``"png"`` or ``"pdf"``, overriding the suffix (``out.graph`` with
            ``format="png"`` gives ``out.graph.png``).

    Raises:
        GraphvizNotFound: ``dot`` is not installed (the .dot file is written all the same).
        GraphvizError: ``dot`` failed (its message is included).

    Example:
        >>> render(graph, "softmax.svg")
        PosixPath('softmax.svg')
    """
    dot_path, target, fmt = _paths(Path(path), format)
    dot_path.parent.mkdir(parents=True, exist_ok=True)
    dot_path.write_text(to_dot(graph), encoding="utf-8")
    program = _dot_program()
    if program is None:
        raise GraphvizNotFound(
            f"Graphviz's `dot` program is not installed, so {target.name} was not drawn; "
            f"install the OS package graphviz (apt-get install graphviz, brew install graphviz, "
            f"conda install graphviz; the Python package of that name is not enough). "
            f"The DOT text is in {dot_path}"
        )
    _run(program, [f"-T{fmt}", str(dot_path), "-o", str(target)])
    return target


def _paths(path: Path, requested: str | None) -> tuple[Path, Path, str]:
    """The .dot file, the drawing and its format for ``render(graph, path, format=requested)``."""
    suffix = path.suffix.lstrip(".").lower()
    known = suffix in (*FORMATS, "dot")
    if requested is None and suffix and not known:
        raise ValueError(f"cannot draw to {path.name}: use a .svg, .png or .pdf path, or format=")
    fmt = (requested or (suffix if suffix in FORMATS else "svg")).lower()
    if fmt not in FORMATS:
        raise ValueError(f"cannot draw to {fmt!r}: choose one of {', '.join(FORMATS)}")
    base = path.with_suffix("") if known else path
    return base.with_name(f"{base.name}.dot"), base.with_name(f"{base.name}.{fmt}"), fmt


def svg(graph: Graph) -> str | None:
    """The SVG drawing of ``graph`` as text (for Jupyter), or None when ``dot`` is not installed."""
    program = _dot_program()
    if program is None:
        return None
    return _run(program, ["-Tsvg"], stdin=to_dot(graph))


def _run(program: str, arguments: list[str], stdin: str | None = None) -> str:
    """Run ``dot`` and return its output; raises GraphvizError with its stderr when it fails."""
    result = subprocess.run(
        [program, *arguments], input=stdin, capture_output=True, text=True, encoding="utf-8"
    )
    if result.returncode != 0:
        raise GraphvizError(f"dot {' '.join(arguments)} failed:\n{result.stderr.strip()}")
    return result.stdout
