"""The ``gcompile`` command: inspect a function in a file without writing a script.

    gcompile dump examples/black_scholes.py:black_scholes [--format text|table]
    gcompile compare examples/black_scholes.py:black_scholes [--repeat N]

The inputs come from the file: ``example_inputs_<function>()`` or
``example_inputs()`` returning the argument tuple. Exit codes: 0 ok, 1 results
disagree or the function is refused (UnsupportedError), 2 usage error.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path
from typing import Callable

from .api import trace
from .errors import UnsupportedError
from .tools.compare import compare


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
    graph = trace(fn, *args)
    text = graph.tabular() if options.format == "table" else str(graph)
    if options.output:
        Path(options.output).write_text(text + "\n")
    else:
        print(text)
    return 0


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
    dump = commands.add_parser("dump", help="print the traced graph")
    dump.add_argument("target", help="path/to/file.py:function")
    dump.add_argument("--format", choices=("text", "table"), default="text")
    dump.add_argument("-o", "--output", help="write to this file instead of stdout")
    dump.set_defaults(run=_dump)
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
