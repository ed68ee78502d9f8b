"""The ``gcompile`` command: inspect a function in a file without writing a script.

    gcompile dump FILE.py:FN [--stage traced|optimized|fused] [--format text|table|dot|svg|png|json] [-o OUT]
    gcompile explain FILE.py:FN
    gcompile compare FILE.py:FN [--repeat N]

The inputs come from the file: ``example_inputs_<function>()`` or
``example_inputs()`` returning the argument tuple. Exit codes: 0 ok, 1 results
disagree or the function is refused (UnsupportedError), 2 usage error (a message on
stderr, no traceback: the spec, the file, its example inputs, or the function failing
on them under plain NumPy too), 3 an internal error of gcompile (a bug: traceback).
"""

from __future__ import annotations

import argparse
import importlib.util
import inspect
import json
import sys
import traceback
import types
import warnings
from pathlib import Path
from typing import Any, Callable

from .api import trace
from .errors import UnsupportedError
from .passes.manager import STAGES
from .tools.compare import compare
from .tools.explain import explain


class UsageError(Exception):
    """A command-line mistake; reported on stderr with exit code 2."""


def load_target(spec: str) -> tuple[Callable, tuple]:
    """``path/to/file.py:function`` -> (function, example arguments from the file).

    Every mistake in the file or the spec raises UsageError naming it: no such file, a
    file that fails to import, no such function, no example inputs, or example inputs
    that do not fit the function's signature.
    """
    path_text, _, name = spec.rpartition(":")
    if not path_text and Path(spec).is_file():
        module = _import_file(Path(spec))
        raise UsageError(
            f"name the function: {spec}:FUNCTION (functions in it: {', '.join(_functions(module))})"
        )
    if not path_text or not name:
        raise UsageError(f"expected FILE.py:FUNCTION, got {spec!r}")
    path = Path(path_text)
    if not path.is_file():
        raise UsageError(f"no such file: {path}")
    module = _import_file(path)
    if not hasattr(module, name):
        raise UsageError(
            f"{path} has no function {name!r} (functions in it: {', '.join(_functions(module))})"
        )
    fn = getattr(module, name)
    if not callable(fn):
        raise UsageError(f"{path}:{name} is not a function (its type is {type(fn).__name__})")
    maker_name = f"example_inputs_{name}"
    if not callable(getattr(module, maker_name, None)):
        maker_name = "example_inputs"
    maker = getattr(module, maker_name, None)
    if not callable(maker):
        raise UsageError(
            f"{path} defines neither example_inputs_{name}() nor example_inputs(): add one that "
            f"returns the argument tuple for {name}"
        )
    try:
        args = maker()
    except Exception as error:
        raise UsageError(f"{path}: {maker_name}() raised {_one_line(error)}") from None
    if args is None:
        raise UsageError(f"{path}: {maker_name}() returned None: return the argument tuple")
    returned = args
    args = args if isinstance(args, tuple) else (args,)
    if isinstance(returned, list) and not _binds(fn, args) and _binds(fn, tuple(returned)):
        raise UsageError(
            f"{path}: {maker_name}() returned a list, which is one argument: return a tuple "
            f"for the {len(returned)} arguments of {name}"
        )
    _check_arity(module, f"{path}:{name}", fn, args, f"{maker_name}()")
    return fn, args


def _import_file(path: Path) -> types.ModuleType:
    """Run the file as a module; UsageError (with the exception's one-line summary) if it fails."""
    module_spec = importlib.util.spec_from_file_location(path.stem, path)
    if module_spec is None or module_spec.loader is None:
        raise UsageError(f"{path} is not a Python file")
    module = importlib.util.module_from_spec(module_spec)
    sys.path.insert(0, str(path.parent.resolve()))
    try:
        module_spec.loader.exec_module(module)
    except (Exception, SystemExit) as error:
        raise UsageError(f"{path} failed to import: {_one_line(error)}") from None
    finally:
        sys.path.pop(0)
    return module


def _functions(module: types.ModuleType) -> list[str]:
    """Names of the functions defined in ``module`` itself (not imported into it)."""
    return [
        name
        for name, value in vars(module).items()
        if inspect.isfunction(value) and value.__module__ == module.__name__
    ] or ["none"]


def _check_arity(module: types.ModuleType, where: str, fn: Callable, args: tuple, source: str):
    """UsageError when ``args`` do not fit ``fn``'s signature, naming both (and the functions of
    the file they would fit)."""
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):  # a builtin without a signature: let the call decide
        return
    try:
        signature.bind(*args)
    except TypeError as error:
        fits = [
            other
            for other in _functions(module)
            if getattr(module, other) is not fn
            and not other.startswith("example_inputs")
            and _binds(getattr(module, other), args)
        ]
        hint = f" (for {' or '.join(fits)}?)" if fits else ""
        given, takes = len(args), _takes(signature)
        mismatch = (
            f"{takes}, but {source} gives {given}"
            if takes
            else f"does not accept the {given} argument{'s' * (given != 1)} {source} gives "
            f"({error})"
        )
        raise UsageError(f"{where}{signature} {mismatch}{hint}") from None


def _takes(signature: inspect.Signature) -> str:
    """``takes 1 argument``, ``takes 2 to 3 arguments``, ``takes at least 2 arguments``, or ""
    when a required keyword-only parameter (not the count) is what the inputs miss."""
    kinds = inspect.Parameter
    parameters = signature.parameters.values()
    if any(p.kind is kinds.KEYWORD_ONLY and p.default is p.empty for p in parameters):
        return ""
    positional = [
        p for p in parameters if p.kind in (kinds.POSITIONAL_ONLY, kinds.POSITIONAL_OR_KEYWORD)
    ]
    low = sum(p.default is p.empty for p in positional)
    high = len(positional)
    if any(p.kind is kinds.VAR_POSITIONAL for p in parameters):
        return f"takes at least {low} argument{'s' * (low != 1)}"
    count = f"{low}" if low == high else f"{low} to {high}"
    return f"takes {count} argument{'s' * (high != 1)}"


def _binds(fn: Any, args: tuple) -> bool:
    try:
        inspect.signature(fn).bind(*args)
    except (TypeError, ValueError):
        return False
    return True


def _one_line(error: BaseException) -> str:
    """``TypeError: message`` on one line (the first line of a multi-line message)."""
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {text[0].strip()}" if text else type(error).__name__


def _dump(options: argparse.Namespace) -> int:
    fn, args = load_target(options.target)
    graph = trace(fn, *args, stage=options.stage)
    if options.format in ("svg", "png"):
        from .tools.dot import GraphvizError, GraphvizNotFound, render

        path = Path(options.output or f"{fn.__name__}_{options.stage}.{options.format}")
        try:
            written = render(graph, path.with_suffix(f".{options.format}"))
        except (GraphvizNotFound, GraphvizError) as error:
            raise UsageError(str(error)) from None
        except OSError as error:
            raise UsageError(f"cannot write {path}: {error.strerror}") from None
        print(f"wrote {written}")
        return 0
    text = {
        "text": lambda: str(graph),
        "table": graph.tabular,
        "dot": lambda: _dot(graph),
        "json": lambda: json.dumps(graph_json(graph), indent=1),
    }[options.format]()
    if options.output:
        try:
            Path(options.output).write_text(text + "\n")
        except OSError as error:
            raise UsageError(f"cannot write {options.output}: {error.strerror}") from None
    else:
        print(text)
    return 0


def _dot(graph) -> str:
    from .tools.dot import to_dot

    return to_dot(graph)


def graph_json(graph) -> dict:
    """A graph as JSON-ready data: its nodes in order; a node holding sub-graphs (a fused
    kernel) with its ``params`` and its ``subgraphs``, each with its role and operands."""
    from .ir.graph import Node
    from .ir.subgraph import regions_of

    def value(v):
        if isinstance(v, Node):
            return {"node": v.name}
        if isinstance(v, (tuple, list)):
            return [value(x) for x in v]
        return repr(v)

    def plain(v):
        if v is None or isinstance(v, (str, bool, int, float)):
            return v
        return [plain(x) for x in v] if isinstance(v, (tuple, list)) else repr(v)

    nodes = []
    for node in graph.nodes:
        meta = getattr(node, "meta", None)
        item = {"name": node.name, "op": node.op}
        if node.op == "call":
            item["target"], item["kind"] = node.target.name, node.target.kind
            if regions_of(node):
                item["params"] = {k: plain(v) for k, v in node.target.params.items()}
                item["subgraphs"] = [
                    {"role": r.role, "operands": list(r.operands), **graph_json(r.graph)}
                    for r in regions_of(node)
                ]
        item["args"] = value(node.args)
        item["kwargs"] = {k: value(v) for k, v in node.kwargs.items()}
        if meta is not None and hasattr(meta, "shape"):
            item["shape"] = [s if isinstance(s, int) else str(s) for s in meta.shape]
            item["dtype"] = str(meta.dtype)
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


def _positive(text: str) -> int:
    """An argparse type: an integer of at least 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


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
    comp.add_argument(
        "--repeat", type=_positive, default=10, help="runs per variant for the medians"
    )
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
    except Exception as error:
        return _unexpected(options, error)


def _unexpected(options: argparse.Namespace, error: Exception) -> int:
    """An exception no command expects: the user's function failing on its example inputs
    (it raises eagerly too: exit 2, with where it raised), else a bug in gcompile (traceback)."""
    try:
        fn, args = load_target(options.target)
    except UsageError as usage:
        print(f"gcompile: {usage}", file=sys.stderr)
        return 2
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fn(*args)
    except Exception as eager_error:
        frame = _users_frame(eager_error, fn)
        print(
            f"gcompile: {options.target} raises {_one_line(eager_error)} on its example inputs "
            f"(at {frame.filename}:{frame.lineno}), when run with plain NumPy too",
            file=sys.stderr,
        )
        return 2
    traceback.print_exception(error)
    print(
        f"gcompile: internal error ({_one_line(error)}): this is a bug in gcompile, please report "
        "it with the traceback above",
        file=sys.stderr,
    )
    return 3


def _users_frame(error: Exception, fn) -> traceback.FrameSummary:
    """The innermost frame of ``error``'s traceback in the file defining ``fn`` (where the
    user's code called what raised, e.g. a NumPy function), else the innermost frame."""
    frames = traceback.extract_tb(error.__traceback__)
    code = getattr(fn, "__code__", None)
    mine = [f for f in frames if code is not None and f.filename == code.co_filename]
    return (mine or frames)[-1]


if __name__ == "__main__":
    sys.exit(main())
