"""The ``gcompile`` command: inspect a function in a file without writing a script.

    gcompile dump FILE.py:FN [--stage traced|optimized|fused] [--format text|table|dot|svg|png|json] [-o OUT]
    gcompile explain FILE.py:FN
    gcompile compare FILE.py:FN [--repeat N]

The inputs come from the file: ``example_inputs_<function>()`` or
``example_inputs()`` returning the argument tuple. Exit codes: 0 ok, 1 results
disagree or the function is refused (UnsupportedError), 2 usage error.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from pathlib import Path
from typing import Callable

from .api import trace
from .errors import UnsupportedError
from .passes.manager import STAGES
from .tools.compare import compare
from .tools.explain import explain


class UsageError(Exception):
    """A command-line mistake; reported on stderr with exit code 2."""


def load_target(spec: str) -> tuple[Callable, tuple]:
    """``path/to/file.py:function`` -> (function, example arguments from the file)."""
    path_text, _, name = spec.rpartition(":")
    if not path_text or not name:
        raise UsageError(f"expected FILE.py:FUNCTION, got {spec!r}")
    path = Path(path_text)
    if not path.is_file():
        raise UsageError(f"no such file: {path}")
    module_spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(module_spec)
    sys.path.insert(0, str(path.parent.resolve()))
    try:
        module_spec.loader.exec_module(module)
    finally:
        sys.path.pop(0)
    fn = getattr(module, name, None)
    if not callable(fn):
        raise UsageError(f"{path} has no function {name!r}")
    maker = getattr(module, f"example_inputs_{name}", None) or getattr(
        module, "example_inputs", None
    )
    if maker is None:
        raise UsageError(
            f"{path} defines neither example_inputs_{name}() nor example_inputs(): add one that "
            f"returns the argument tuple for {name}"
        )
    args = maker()
    return fn, args if isinstance(args, tuple) else (args,)


def _dump(options: argparse.Namespace) -> int:
    fn, args = load_target(options.target)
    graph = trace(fn, *args, stage=options.stage)
    if options.format in ("svg", "png"):
        from .tools.dot import GraphvizNotFound, render

        path = Path(options.output or f"{fn.__name__}_{options.stage}.{options.format}")
        try:
            written = render(graph, path.with_suffix(f".{options.format}"))
        except GraphvizNotFound as error:
            raise UsageError(str(error)) from None
        print(f"wrote {written}")
        return 0
    text = {
        "text": lambda: str(graph),
        "table": graph.tabular,
        "dot": lambda: _dot(graph),
        "json": lambda: json.dumps(graph_json(graph), indent=1),
    }[options.format]()
    if options.output:
        Path(options.output).write_text(text + "\n")
    else:
        print(text)
    return 0


def _dot(graph) -> str:
    from .tools.dot import to_dot

    return to_dot(graph)


def graph_json(graph) -> dict:
    """A graph as JSON-ready data: its nodes in order, fused kernels with their own graphs."""
    from .ir.graph import Node
    from .ir.kernel import FusedKernel

    def value(v):
        if isinstance(v, Node):
            return {"node": v.name}
        if isinstance(v, (tuple, list)):
            return [value(x) for x in v]
        return repr(v)

    nodes = []
    for node in graph.nodes:
        meta = getattr(node, "meta", None)
        item = {"name": node.name, "op": node.op}
        if node.op == "call":
            target = node.target
            item["target"] = target.name
            item["kind"] = "fused" if isinstance(target, FusedKernel) else target.kind
            if isinstance(target, FusedKernel):
                item["kernel"] = {"style": target.style, **graph_json(target.graph)}
        item["args"] = value(node.args)
        item["kwargs"] = {k: value(v) for k, v in node.kwargs.items()}
        if meta is not None and hasattr(meta, "shape"):
            item["shape"], item["dtype"] = list(meta.shape), str(meta.dtype)
        if node.source:
            item["source"] = node.source
        nodes.append(item)
    return {"name": graph.name, "nodes": nodes}


def _explain(options: argparse.Namespace) -> int:
    fn, args = load_target(options.target)
    report = explain(fn, *args)
    print(report)
    return 0 if report.compiled else 1


def _compare(options: argparse.Namespace) -> int:
    fn, args = load_target(options.target)
    report = compare(fn, *args, repeat=options.repeat)
    print(report)
    return 0 if report.ok else 1


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``gcompile`` command."""
    parser = argparse.ArgumentParser(
        prog="gcompile", description="Inspect what gcompile does with a function."
    )
    commands = parser.add_subparsers(dest="command", required=True)
    dump = commands.add_parser("dump", help="print or draw the graph at a stage")
    dump.add_argument("target", help="path/to/file.py:function")
    dump.add_argument("--stage", choices=STAGES, default="traced")
    dump.add_argument(
        "--format", choices=("text", "table", "dot", "svg", "png", "json"), default="text"
    )
    dump.add_argument(
        "-o",
        "--output",
        help="write to this file instead of stdout (svg/png: default FN_STAGE.FMT)",
    )
    dump.set_defaults(run=_dump)
    why = commands.add_parser(
        "explain",
        help="what the compiler did: stages, kernels, fusion boundaries, refusals, guards, code, "
        "compile time",
    )
    why.add_argument("target", help="path/to/file.py:function")
    why.set_defaults(run=_explain)
    comp = commands.add_parser(
        "compare", help="compare eager and compiled runs (agreement and time)"
    )
    comp.add_argument("target", help="path/to/file.py:function")
    comp.add_argument("--repeat", type=int, default=10, help="runs per variant for the medians")
    comp.set_defaults(run=_compare)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``gcompile`` console script."""
    options = build_parser().parse_args(argv)
    try:
        return options.run(options)
    except UsageError as error:
        print(f"gcompile: {error}", file=sys.stderr)
        return 2
    except UnsupportedError as error:
        print(f"gcompile: {error}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
