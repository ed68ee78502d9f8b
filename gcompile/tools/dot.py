"""Graphviz drawings of a graph: fused kernels as clusters, one style per kind of node.

``to_dot`` needs nothing but Python; ``render`` and ``svg`` run Graphviz's ``dot`` program::

    graph = gcompile.trace(softmax, x, stage="fused")
    graph.render("softmax.svg")        # writes softmax.dot, then softmax.svg

A kernel is drawn as ``subgraph cluster_<kernel>`` holding its member ops. Its
sub-graph's placeholders are not drawn: an edge goes from the outer value straight
into the member that reads it, and from the member a kernel returns straight to
the kernel's readers (``kernel_output`` projections are folded away)::

    %x -> fused_1(%x) -> %out    =>    x -> [fused_1: amax -> ... -> divide] -> return

Node labels are HTML-like (op, literal parameters, ``f32[64,128]``); the full text-form
line and the user's source line are in the tooltip. ``KernelIndex`` names the vertices
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
from ..ir.graph import Graph, Node
from ..ir.kernel import FusedKernel
from ..ir.printer import format_index, format_literal, format_node
from ..ir.shape_env import using

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
_CLUSTERS = {
    "kernel": ("fused kernel: one loop nest", _KERNEL_CLUSTER),
    "interpreted": ("kernel run by the interpreter", _INTERPRETED_CLUSTER),
}
_LEGEND_ORDER = (
    "input",
    "constant",
    "copy",
    "kernel",
    "interpreted",
    "numpy",
    "view",
    "library",
    "update",
    "mutation",
    "output",
)
_OPCODE_STYLES = {"placeholder": "input", "constant": "constant", "output": "output"}


class KernelIndex:
    """The vertices of a graph with its kernels opened: ids shared by the drawing and networkx.

    An outer node's id is its name (the output is ``"return"``); a kernel member's id is
    ``"<kernel>.<member>"``; a kernel's placeholder stands for the outer value it reads.
    """

    def __init__(self, graph: Graph):
        self.graph = graph
        self.kernels = [n for n in graph.nodes if isinstance(n.target, FusedKernel)]
        self.owner: dict[Node, Node] = {}
        self.outer: dict[Node, Any] = {}
        for call in self.kernels:
            self.outer.update(zip(call.target.graph.placeholders, call.args))
            self.owner.update((member, call) for member in self.members(call))

    @staticmethod
    def members(call: Node) -> list[Node]:
        """The ops (and constants) inside the kernel called by ``call``."""
        return [n for n in call.target.graph.nodes if n.op in ("call", "constant")]

    @staticmethod
    def returned(call: Node) -> tuple:
        """The values the kernel called by ``call`` returns, in output order."""
        return call.target.graph.output_node.args[0]

    def vertex_id(self, node: Any) -> str | None:
        """The id of ``node``; None for a literal (which no edge comes from)."""
        if not isinstance(node, Node):
            return None
        if node in self.outer:
            return self.vertex_id(self.outer[node])
        if node in self.owner:
            return f"{self.owner[node].name}.{node.name}"
        return OUTPUT_ID if node.op == "output" else node.name


def to_dot(graph: Graph, *, title: str | None = None) -> str:
    """Graphviz DOT text of ``graph``, top to bottom, fused kernels as clusters, with a legend.

    Args:
        graph: any stage; kernels appear at stage ``"fused"``.
        title: drawn above the graph (default: the graph's name).

    Example:
        >>> print(to_dot(gcompile.trace(softmax, x, stage="fused")))
        digraph "softmax" { ... subgraph "cluster_fused_1" { ... } ... }
    """
    index = KernelIndex(graph)
    used: dict[str, None] = {}
    lines = [f"digraph {_quote(graph.name)} {{", *_header(title or graph.name)]
    for node in graph.nodes:
        if isinstance(node.target, FusedKernel):
            lines += _cluster(index, node, used)
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
        f"  graph [rankdir=TB, newrank=true, nodesep=0.25, ranksep=0.35, fontname=Helvetica, "
        f"fontsize=11, labelloc=t, label=<<b>{_html(title)}</b>>];",
        '  node [fontname=Helvetica, fontsize=10, style=filled, margin="0.08,0.03", height=0.3];',
        '  edge [color="#555555", arrowsize=0.6, penwidth=0.8];',
    ]


def _style_of(node: Node) -> str:
    """The key in ``STYLES`` of a node outside kernels."""
    if node.op in _OPCODE_STYLES:
        return _OPCODE_STYLES[node.op]
    if node.is_mutation:
        return "mutation"
    if node.target is ops.UPDATE:
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


def _cluster(index: KernelIndex, call: Node, used: dict) -> list[str]:
    """The cluster of the kernel called by ``call``: name, style and space, then its members."""
    kernel: FusedKernel = call.target
    space = "[" + ",".join(str(s) for s in kernel.space) + "]"
    title = f"<b>{_html(kernel.name)}</b> {_html(kernel.style)} {_html(space)}"
    reason = interpreted_reason(kernel)
    if reason is None:
        used["kernel"] = None
        look = _KERNEL_CLUSTER
    else:
        used["interpreted"] = None
        look = _INTERPRETED_CLUSTER
        short = _html(_truncate(reason, _REASON_LIMIT))
        title += f'<br/><font point-size="9" color="#c00000">interpreter: {short}</font>'
    tooltip = f"{format_node(call)}\nmembers: {', '.join(kernel.members)}"
    lines = [
        f"  subgraph {_quote('cluster_' + call.name)} {{",
        f"  graph [label=<{title}>, tooltip={_quote(_truncate(tooltip, _TOOLTIP_LIMIT))}, "
        f"fontsize=10, {look}];",
    ]
    for member in index.members(call):
        style = "kernel op" if member.op == "call" else _style_of(member)
        lines.append("  " + _vertex(index.vertex_id(member), member, style, used))
    lines.append("  }")
    return lines


def interpreted_reason(kernel: FusedKernel) -> str | None:
    """Why the Numba backend runs ``kernel`` in the interpreter (no template), or None."""
    try:
        with using(kernel.graph.shape_env):  # (symbolic sizes at the traced call's values)
            codegen.generate(kernel, {})
    except codegen.NoTemplate as missing:
        return str(missing)
    return None


def _wiring(index: KernelIndex, used: dict) -> tuple[list[str], list[str]]:
    """The edges, producer to reader, once each, through kernel boundaries; and the copies.

    An input or constant whose reader comes more than ``_FAR`` vertices after its latest
    drawing is drawn again (dashed) above that reader: weights read by every layer of a deep
    model would otherwise pull edges across the whole drawing, making it wide and ``dot``
    slow (minutes for a few hundred nodes).
    """
    copies: list[str] = []
    edges: dict[str, None] = {}
    latest: dict[Node, tuple[str, int]] = {}  # input or constant -> (id, position) drawn last
    for position, (reader_id, reader) in enumerate(_drawn(index)):
        if reader.op in ("placeholder", "constant") and reader.graph is index.graph:
            latest[reader] = (reader_id, position)
        for value in reader.all_input_nodes:
            producer = _drawn_producer(index, value)
            if producer is None:
                continue
            source = index.vertex_id(producer)
            if producer in latest:
                source, since = latest[producer]
                if position - since > _FAR:
                    source = f"{producer.name}/{position}"
                    copies.append(_vertex(source, producer, _style_of(producer), used, copy=True))
                    latest[producer] = (source, position)
            edges[f"  {_quote(source)} -> {_quote(reader_id)};"] = None
    return copies, list(edges)


def _drawn(index: KernelIndex) -> list[tuple[str, Node]]:
    """Every vertex drawn, with its id, in program order (a kernel's members in its place)."""
    drawn = []
    for node in index.graph.nodes:
        if isinstance(node.target, FusedKernel):
            drawn += [(index.vertex_id(member), member) for member in index.members(node)]
        elif node.target is not ops.KERNEL_OUTPUT:
            drawn.append((index.vertex_id(node), node))
    return drawn


def _drawn_producer(index: KernelIndex, value: Any) -> Node | None:
    """The node drawn for ``value``: a kernel's value is the member it returns, a kernel's
    placeholder the outer value it reads (a kernel may return an input, itself a kernel's)."""
    if not isinstance(value, Node):
        return None
    if value in index.outer:
        return _drawn_producer(index, index.outer[value])
    if isinstance(value.target, FusedKernel):
        return _drawn_producer(index, KernelIndex.returned(value)[0])
    if value.target is ops.KERNEL_OUTPUT:
        item = value.kwargs["item"]
        return _drawn_producer(index, KernelIndex.returned(value.args[0])[item])
    return value


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
            text, look = _CLUSTERS[key]
            lines += [
                f"    subgraph {_quote('cluster_legend/' + key)} {{",
                f"    graph [label={_quote(text)}, fontsize=9, {look}];",
                f"    {_sample(vertex_id, 'op', STYLES['kernel op'])}",
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
