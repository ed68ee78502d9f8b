"""Graphviz drawings: clusters per kernel, labels, styles, legend, escaping, rendering, Jupyter."""

from __future__ import annotations

import html
import re
import shutil
import time

import numpy as np
import pytest

import gcompile
from gcompile.ir import ops
from gcompile.ir.graph import Graph
from gcompile.ir.meta import TensorMeta
from gcompile.ir.printer import format_node
from gcompile.tools import dot
from gcompile.tools.dot import GraphvizError, GraphvizNotFound, render, svg, to_dot
from tests.realistic import black_scholes, layernorm, softmax

HAS_DOT = shutil.which("dot") is not None
needs_dot = pytest.mark.skipif(not HAS_DOT, reason="Graphviz's dot program is not installed")

WEIGHTS = np.linspace(0.0, 1.0, 10)


def shift_and_scale(x, y):
    """An in-place update of an argument (a writeback) and a captured constant."""
    x[1:] += y
    return x * WEIGHTS


def dense_relu(x, w, b):
    return np.maximum(x @ w + b, 0)


def deep(x, w, b):
    """Forty layers sharing ``w`` and ``b``: a few hundred vertices, one kernel per layer."""
    for _ in range(40):
        h = np.tanh(x @ w + b)
        x = h - h.mean(axis=-1, keepdims=True) * 0.5
    return x


def softmax_graph() -> Graph:
    return gcompile.trace(softmax, np.ones((64, 128), np.float32), stage="fused")


def vertex(text: str, vertex_id: str) -> str:
    """The attribute list of the vertex statement for ``vertex_id``."""
    match = re.search(rf'^\s*"{re.escape(vertex_id)}" \[(.*)\];$', text, re.MULTILINE)
    assert match, f"no vertex {vertex_id} in\n{text}"
    return match.group(1)


def label_lines(text: str, vertex_id: str) -> list[str]:
    """The lines of a vertex's HTML label, tags removed."""
    label = re.search(r"label=<(.*?)>, shape=", vertex(text, vertex_id)).group(1)
    return [re.sub(r"<[^>]*>", "", line) for line in label.split("<br/>")]


def look(text: str, vertex_id: str) -> tuple:
    """(shape, fillcolor, style) of a vertex."""
    attributes = vertex(text, vertex_id)
    shape = re.search(r"shape=(\w+)", attributes).group(1)
    fill = re.search(r'fillcolor="([^"]+)"', attributes).group(1)
    style = re.search(r'style="([^"]+)"', attributes)
    return shape, fill, style.group(1) if style else None


def block(text: str, name: str) -> str:
    """The body of ``subgraph "<name>" { ... }`` (clusters do not nest, except in the legend)."""
    start = text.index(f'subgraph "{name}" {{')
    return text[start : text.index("\n  }\n", start)]


def edges(text: str) -> set[tuple[str, str]]:
    return set(re.findall(r'^\s*"([^"]+)" -> "([^"]+)";$', text, re.MULTILINE))


def test_softmax_kernel_is_a_cluster_holding_its_members():
    text = to_dot(softmax_graph())
    cluster = block(text, "cluster_fused_1")
    members = ["amax_1", "subtract_1", "exp_1", "sum_1", "divide_1"]
    assert all(f'"fused_1.{m}" [' in cluster for m in members)
    assert "<b>fused_1</b> row [s0,s1]" in cluster
    # the kernel's placeholder is not drawn: the input feeds the members that read it
    assert '"fused_1.x"' not in text and '"fused_1" [' not in text
    assert {("x", "fused_1.amax_1"), ("x", "fused_1.subtract_1")} <= edges(text)
    assert ("fused_1.divide_1", "return") in edges(text)
    assert ("fused_1.exp_1", "fused_1.sum_1") in edges(text)


def test_labels_show_op_parameters_shape_and_dtype():
    f32 = np.float32
    graph = gcompile.trace(
        layernorm, np.ones((64, 128), f32), np.ones(128, f32), np.zeros(128, f32), stage="fused"
    )
    text = to_dot(graph)
    assert label_lines(text, "fused_1.mean_1") == ["mean", "axis=-1, keepdims=True", "f32[s0,1]"]
    assert label_lines(text, "fused_1.multiply_2") == ["multiply", "f32[s0,s1]"]
    assert label_lines(text, "x") == ["x", "f32[s0,s1]"]
    assert label_lines(text, "eps") == ["eps", "float"]
    tooltip = re.search(r'tooltip="([^"]*)"', vertex(text, "fused_1.mean_1")).group(1)
    assert tooltip.startswith("%mean_1 : f32[s0,1] = mean(%x, axis=-1, keepdims=True)\\n")
    assert re.search(r"realistic\.py:\d+$", tooltip)


def test_several_outputs_fold_the_kernel_output_projections():
    years = np.linspace(0.5, 2.0, 1000)
    graph = gcompile.trace(
        black_scholes, years * 100, np.full(1000, 100.0), years, 0.01, 0.2, stage="fused"
    )
    text = to_dot(graph)
    assert '"kernel_output_1"' not in text
    assert {("fused_1.subtract_2", "return"), ("fused_1.subtract_3", "return")} <= edges(text)
    # scalar arithmetic outside the kernel is drawn apart and feeds the member that reads it
    assert look(text, "add_1")[0] == "ellipse"
    assert ("add_1", "fused_1.multiply_3") in edges(text)
    assert text.count('subgraph "cluster_fused') == 1


def test_inputs_constants_outputs_and_mutations_look_different():
    alone = {"disable": ["assign_buffers"]}  # (fusion alone keeps the update and write-back)
    graph = gcompile.trace(shift_and_scale, np.ones(10), np.ones(9), stage="fused", options=alone)
    text = to_dot(graph)
    looks = {
        name: look(text, name) for name in ("x", "const_1", "return", "update_1", "writeback_1")
    }
    assert len(set(looks.values())) == len(looks), looks
    assert ("update_1", "writeback_1") in edges(text) and ("x", "writeback_1") in edges(text)
    assert label_lines(text, "update_1") == ["update", "index=[1:]", "f64[10]"]


def test_library_call_feeds_its_epilogue_kernel():
    graph = gcompile.trace(dense_relu, np.ones((8, 4)), np.ones((4, 3)), np.ones(3), stage="fused")
    text = to_dot(graph)
    assert look(text, "matmul_1")[0] == "box3d"
    assert "epilogue" in block(text, "cluster_fused_1")
    assert {("matmul_1", "fused_1.add_1"), ("b", "fused_1.add_1")} <= edges(text)
    assert ("fused_1.maximum_1", "return") in edges(text)


def test_interpreted_kernel_is_marked_with_its_reason():
    graph = gcompile.trace(lambda x: np.exp(x) + 1, np.ones(10, np.float16), stage="fused")
    cluster = block(to_dot(graph), "cluster_fused_1")
    assert "interpreter: float16" in cluster and "dashed" in cluster


def test_legend_explains_the_styles_used():
    legend = block(to_dot(softmax_graph()), "cluster_legend")
    assert '"legend/input"' in legend and '"legend/output"' in legend
    assert "fused kernel: one loop nest" in legend
    assert "library call" not in legend  # only the styles that appear in the drawing
    alone = {"disable": ["assign_buffers"]}
    mutated = gcompile.trace(shift_and_scale, np.ones(10), np.ones(9), stage="fused", options=alone)
    legend = block(to_dot(mutated), "cluster_legend")
    assert "writes memory in place" in legend and "functional update" in legend


def odd_graph() -> Graph:
    """A graph whose name and literal hold quotes, a backslash and angle brackets."""
    graph = Graph('odd"name')
    x = graph.placeholder("x", TensorMeta((3,), "f8"))
    y = graph.call(ops.MULTIPLY, (x, 'a "b" \\c <d>'), meta=x.meta)
    graph.output((y,))
    return graph


def test_quotes_backslashes_and_angle_brackets_are_escaped():
    graph = odd_graph()
    text = to_dot(graph, title='say "hi" <b>')
    assert text.startswith('digraph "odd\\"name" {')
    assert "label=<<b>say &quot;hi&quot; &lt;b&gt;</b>>" in text
    assert "<d>" not in vertex(text, "multiply_1").split("tooltip=")[0]
    shown = html.unescape(label_lines(text, "multiply_1")[1]).replace("\\\\", "\\")
    assert shown == repr('a "b" \\c <d>')
    tooltip = re.search(r'tooltip="((?:[^"\\]|\\.)*)"', vertex(text, "multiply_1")).group(1)
    assert re.sub(r"\\(.)", r"\1", tooltip) == format_node(graph.find("multiply_1"))


@needs_dot
def test_dot_reads_the_escaped_text():
    drawing = svg(odd_graph())
    assert "&lt;d&gt;" in drawing and "<d>" not in drawing
    assert repr('a "b" \\c <d>') in html.unescape(drawing)
    assert "<title>odd&quot;name</title>" in drawing


def test_long_literals_are_truncated_in_labels_not_in_tooltips():
    clip = lambda x: np.clip(x, 0.123456789012345, 0.987654321098765)  # noqa: E731
    text = to_dot(gcompile.trace(clip, np.ones(5)))
    assert label_lines(text, "clip_1")[1] == "0.123456789012345, 0.98765432..."
    assert "0.987654321098765)" in vertex(text, "clip_1")


def test_a_few_hundred_nodes_draw_quickly_with_shared_inputs_drawn_again():
    graph = gcompile.trace(
        deep,
        np.ones((16, 32)),
        np.full((32, 32), 0.01),
        np.zeros(32),
        stage="fused",
        options={"loops": False},  # (forty layers unrolled: the drawing's size is the point)
    )
    start = time.perf_counter()
    text = to_dot(graph)
    assert time.perf_counter() - start < 2.0
    assert text.count('subgraph "cluster_fused_') == 40
    assert len(re.findall(r'^\s*"[^"]+" \[label=', text, re.MULTILINE)) > 250
    # w feeds 40 matmuls: far ones read a dashed copy, so no edge spans the whole drawing
    copies = re.findall(r'^\s*"(w/\d+)" \[.*style="filled,dashed"', text, re.MULTILINE)
    assert 3 <= len(copies) < 40
    readers_of_w = [dst for src, dst in edges(text) if src == "w" or src.startswith("w/")]
    assert len(readers_of_w) == 40
    assert "input or constant, drawn again" in block(text, "cluster_legend")


@needs_dot
def test_a_few_hundred_nodes_render_in_seconds(tmp_path):
    graph = gcompile.trace(
        deep,
        np.ones((16, 32)),
        np.full((32, 32), 0.01),
        np.zeros(32),
        stage="fused",
        options={"loops": False},  # (forty layers unrolled: the drawing's size is the point)
    )
    start = time.perf_counter()
    render(graph, tmp_path / "deep.svg")
    assert time.perf_counter() - start < 30.0  # minutes before shared inputs were drawn again


@needs_dot
@pytest.mark.parametrize("suffix, magic", [("svg", b"<svg"), ("png", b"\x89PNG"), ("pdf", b"%PDF")])
def test_render_writes_the_dot_file_and_the_drawing(tmp_path, suffix, magic):
    drawing = render(softmax_graph(), tmp_path / f"softmax.{suffix}")
    assert drawing == tmp_path / f"softmax.{suffix}"
    assert magic in drawing.read_bytes()[:400]
    assert (tmp_path / "softmax.dot").read_text().startswith('digraph "softmax"')


@needs_dot
def test_render_format_overrides_the_suffix(tmp_path):
    drawing = render(softmax_graph(), tmp_path / "sub" / "softmax.v2", format="png")
    assert drawing == tmp_path / "sub" / "softmax.v2.png"
    assert drawing.read_bytes().startswith(b"\x89PNG")
    assert (tmp_path / "sub" / "softmax.v2.dot").exists()


def test_render_refuses_an_unknown_format(tmp_path):
    with pytest.raises(ValueError, match=r"\.svg, \.png or \.pdf"):
        render(softmax_graph(), tmp_path / "softmax.jpg")
    with pytest.raises(ValueError, match="svg, png, pdf"):
        render(softmax_graph(), tmp_path / "softmax", format="gif")


def test_missing_dot_names_the_package_and_keeps_the_dot_file(tmp_path, monkeypatch):
    monkeypatch.setattr(shutil, "which", lambda name: None)
    with pytest.raises(GraphvizNotFound) as caught:
        render(softmax_graph(), tmp_path / "softmax.svg")
    message = str(caught.value)
    assert isinstance(caught.value, RuntimeError)
    assert "apt-get install graphviz" in message and str(tmp_path / "softmax.dot") in message
    assert "cluster_fused_1" in (tmp_path / "softmax.dot").read_text()
    assert not (tmp_path / "softmax.svg").exists()
    assert svg(softmax_graph()) is None


def test_a_failing_dot_reports_its_stderr(tmp_path, monkeypatch):
    fake = tmp_path / "dot"
    fake.write_text("#!/bin/sh\necho 'Error: syntax error in line 3' >&2\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setattr(shutil, "which", lambda name: str(fake))
    with pytest.raises(GraphvizError, match="syntax error in line 3"):
        render(softmax_graph(), tmp_path / "softmax.svg")
    with pytest.raises(GraphvizError, match="syntax error in line 3"):
        svg(softmax_graph())


def test_graph_methods_are_installed(tmp_path, monkeypatch):
    graph = softmax_graph()
    assert graph.to_dot(title="t") == to_dot(graph, title="t")
    assert graph.to_networkx().number_of_nodes() == 8
    assert Graph.render.__name__ == "render" and "Graphviz" in Graph.render.__doc__
    monkeypatch.setattr(shutil, "which", lambda name: None)
    with pytest.raises(GraphvizNotFound):
        graph.render(tmp_path / "g.png")
    assert (tmp_path / "g.dot").exists()


@needs_dot
def test_jupyter_shows_the_svg_and_the_text():
    graph = softmax_graph()
    bundle = graph._repr_mimebundle_()
    assert bundle["text/plain"] == str(graph)
    assert "<svg" in bundle["image/svg+xml"] and "cluster_fused_1" in bundle["image/svg+xml"]
    assert graph._repr_mimebundle_(exclude={"image/svg+xml"}) == {"text/plain": str(graph)}
    assert graph._repr_svg_().lstrip().startswith("<?xml")


def test_jupyter_without_dot_shows_the_text(monkeypatch):
    monkeypatch.setattr(shutil, "which", lambda name: None)
    graph = softmax_graph()
    assert graph._repr_mimebundle_() == {"text/plain": str(graph)}
    assert graph._repr_svg_() is None


def test_stages_without_kernels_draw_too():
    text = to_dot(gcompile.trace(shift_and_scale, np.ones(10), np.ones(9)))  # stage "traced"
    assert "cluster_fused" not in text
    assert look(text, "setitem_1")[0] == dot.STYLES["mutation"].shape
