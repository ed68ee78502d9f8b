"""Text and table forms of a Graph: deterministic, one line per node.

The text form is the contract of the golden tests::

    graph softmax(x: f32[64,16,128]):
      %amax_1 : f32[64,16,1]   = amax(%x, axis=-1, keepdims=True)
      %sub_1  : f32[64,16,128] = subtract(%x, %amax_1)
      return %sub_1

Keyword parameters are sorted, scalar literals are printed inline, array
constants as ``const<f64[100]>`` (with their values, each as an exact text, when they have
at most 8 elements, or all of them with ``values=True``: the form ``Graph.parse`` reads
back whole), index tuples as ``[1:-1, ::2, None, ...]``. The graphs
of a node holding sub-graphs (``ir/subgraph.py``) are printed indented under its line, each
headed by its role when the op has several, and by what the op says of it (``region_note``:
how the node's arguments feed it, what a loop carries)::

      %cond_1 : f64[3] = cond(%p, %x)
        then: graph then(x: f64[3]):    # operands (1,); outputs y
          ...
        else: graph else(x: f64[3]):    # operands (1,)
          ...
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .graph import Graph, Node
from .meta import dtype_abbrev
from .pytree import RowsOf, SliceOf, unflatten
from .subgraph import regions_of

_SMALL_CONSTANT = 8


def format_literal(value: Any) -> str:
    """Deterministic text for a literal argument or parameter."""
    if isinstance(value, Node):
        return f"%{value.name}"
    if isinstance(value, np.dtype):
        return str(value)
    if isinstance(value, np.ufunc):
        return f"np.{value.__name__}"
    if isinstance(value, type) and issubclass(value, np.generic):
        return np.dtype(value).name
    if isinstance(value, np.generic):
        return f"{dtype_abbrev(value.dtype)}({value.item()!r})"
    if isinstance(value, slice):
        return _format_slice(value)
    if value is Ellipsis:
        return "..."
    if isinstance(value, RowsOf):
        return f"rows({format_literal(value.array)}, {value.how!r})"
    if isinstance(value, SliceOf):
        parts = (value.array, value.axes, value.bounds)
        return f"sliced({', '.join(format_literal(part) for part in parts)})"
    if isinstance(value, tuple) and hasattr(type(value), "_fields"):
        return repr(value)  # a named record (ops.ViewStep) prints itself
    if isinstance(value, tuple):
        inner = ", ".join(format_literal(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, list):
        return "[" + ", ".join(format_literal(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k!r}: {format_literal(v)}" for k, v in value.items()) + "}"
    if isinstance(value, np.ndarray):
        return _format_array(value)
    return repr(value)


def format_index(index: tuple) -> str:
    """``[1:-1, ::2, None, ...]`` for a basic-indexing tuple."""
    return "[" + ", ".join("None" if i is None else format_literal(i) for i in index) + "]"


def _format_slice(s: slice) -> str:
    text = ("" if s.start is None else str(s.start)) + ":" + ("" if s.stop is None else str(s.stop))
    if s.step is not None:
        text += f":{s.step}"
    return text


def _format_array(value: np.ndarray, values: bool = False) -> str:
    """``const<f64[2]>[0.1, 2.5]``: the values (each exact) when small or ``values``."""
    text = f"const<{dtype_abbrev(value.dtype)}[{','.join(map(str, value.shape))}]>"
    if value.size <= _SMALL_CONSTANT:  # (NumPy's shortest text of each)
        text += np.array2string(value, separator=", ", floatmode="unique").replace("\n", "")
    elif values:  # (Python's: NumPy's text of many values takes seconds)
        text += str(value.tolist())
    return text


def format_call(node: Node) -> str:
    """The right-hand side of a node's line: ``op(%a, 2.0, axis=-1)``."""
    parts = [format_literal(a) for a in node.args]
    for key in sorted(node.kwargs):
        value = node.kwargs[key]
        text = format_index(value) if key == "index" else format_literal(value)
        parts.append(f"{key}={text}")
    return f"{node.target.name}({', '.join(parts)})"


def _rhs(node: Node, values: bool = False) -> str:
    if node.op == "constant":
        return _format_array(np.asarray(node.target), values)
    return format_call(node)


def format_node(node: Node) -> str:
    """One unaligned line of the text form."""
    if node.op == "placeholder":
        return f"%{node.name} : {node.meta.short()} = placeholder"
    if node.op == "output":
        return "return " + _format_output(node)
    return f"%{node.name} : {node.meta.short()} = {_rhs(node)}"


def _format_output(node: Node) -> str:
    values = node.args[0]
    if node.graph.out_spec is None:
        return format_literal(values)
    return format_literal(unflatten(node.graph.out_spec, list(values)))


def format_graph(graph: Graph, values: bool = False) -> str:
    """The text form of ``graph`` (see the module docstring); ``values``: every constant's."""
    params = ", ".join(f"{p.name}: {p.meta.short()}" for p in graph.placeholders)
    lines = [f"graph {graph.name}({params}):"]
    body = [n for n in graph.nodes if n.op in ("constant", "call")]
    name_width = max((len(n.name) + 1 for n in body), default=0)
    meta_width = max((len(n.meta.short()) for n in body), default=0)
    for node in body:
        lhs = f"%{node.name}".ljust(name_width) + " : " + node.meta.short().ljust(meta_width)
        lines.append(f"  {lhs} = {_rhs(node, values)}")
        lines.extend("    " + line for line in _format_regions(node, values))
    if graph.nodes and graph.nodes[-1].op == "output":
        lines.append("  return " + _format_output(graph.output_node))
    return "\n".join(lines)


def _format_regions(node: Node, values: bool = False) -> list[str]:
    """The text of the graphs ``node`` holds, each headed by its role when there are several
    and by the op's note on it."""
    regions = regions_of(node)
    lines = []
    for region in regions:
        head, _, rest = format_graph(region.graph, values).partition("\n")
        note = node.target.region_note(region)
        text = f"{head}    # {note}\n{rest}" if note else f"{head}\n{rest}"
        lines.extend((f"{region.role}: {text}" if len(regions) > 1 else text).splitlines())
    return lines


def format_tabular(graph: Graph) -> str:
    """A plain-text table of the nodes (no extra dependency)."""
    header = ("opcode", "name", "target", "args", "kwargs", "meta", "source")
    rows = [header]
    for node in graph.nodes:
        if node.op == "output":
            target, args, kwargs = "output", _format_output(node), ""
        elif node.op == "call":
            target = node.target.name
            args = ", ".join(format_literal(a) for a in node.args)
            kwargs = ", ".join(
                f"{k}={format_index(v) if k == 'index' else format_literal(v)}"
                for k, v in sorted(node.kwargs.items())
            )
        elif node.op == "constant":
            target, args, kwargs = _format_array(np.asarray(node.target)), "", ""
        else:
            target, args, kwargs = node.name, "", ""
        meta = node.meta.short() if node.meta is not None else ""
        rows.append((node.op, node.name, target, args, kwargs, meta, _short_source(node.source)))
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _short_source(source: str | None) -> str:
    if not source:
        return ""
    path, _, line = source.rpartition(":")
    return f"{path.rsplit('/', 1)[-1]}:{line}"
