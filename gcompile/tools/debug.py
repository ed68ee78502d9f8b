"""Debug dumps: with ``GCOMPILE_DEBUG_DIR=dir``, every compile writes a folder ``dir/<fn>_<n>/``.

It holds the graph text after every pass (``NN_<pass>.txt``, written by the pass
manager), and, written here: ``graph.txt`` (the fused graph), ``fusion_report.txt``,
``guards.txt``, ``code.py`` (the generated host function and kernels), ``graph.dot``
and, when Graphviz's ``dot`` exists, ``graph.svg``; ``refusal.txt`` when the compile
was refused; and ``repro.py``, which rebuilds arguments of the same shapes, dtypes
and C/F orders (strided arrays come back contiguous) and compares eager against
compiled: ``python repro.py``.
"""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

import numpy as np


def write_compile_dump(folder: Path, compiled: Any, entry: Any, bound: Any) -> None:
    """Write the files of one compile of ``compiled`` (a CompiledFunction) into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    graph = entry.graph
    if graph is not None:
        (folder / "graph.txt").write_text(str(graph) + "\n")
        report = graph.notes.fusion
        if report is not None:
            (folder / "fusion_report.txt").write_text(str(report) + "\n")
        _drawing(graph, folder)
    (folder / "guards.txt").write_text("\n".join(entry.guards()) + "\n")
    program = getattr(entry.run, "program", None)
    if program is not None:
        (folder / "code.py").write_text(program.code + "\n")
    problem = entry.refusal or entry.failure
    if problem is not None:
        (folder / "refusal.txt").write_text(f"{type(problem).__name__}: {problem}\n")
    (folder / "repro.py").write_text(repro_source(compiled, bound))


def _drawing(graph: Any, folder: Path) -> None:
    from .dot import GraphvizError, render

    try:
        render(graph, folder / "graph.svg")
    except GraphvizError:
        pass  # graph.dot is written all the same; the drawing is a convenience


def repro_source(compiled: Any, bound: Any) -> str:
    """A standalone script calling the function on arguments shaped like ``bound``'s."""
    fn = compiled.eager
    try:
        path = inspect.getsourcefile(fn)
    except TypeError:  # a functools.partial or a callable object
        path = None
    name = getattr(fn, "__name__", type(fn).__name__)
    args, kwargs = bound.rebuild([value for _, value in bound.leaves])
    lines = [
        f'"""Reproduce a gcompile compile of {name} (written by GCOMPILE_DEBUG_DIR).',
        "",
        "Arguments have the shapes, dtypes and layouts of the call that compiled; array values",
        'are random. Run: python repro.py"""',
        "",
        "import importlib.util",
        "",
        "import numpy as np",
        "",
        "import gcompile",
        "",
        "RNG = np.random.default_rng(0)",
        "",
        "",
        "def array(shape, dtype, order, writeable=True):",
        '    """Random values of ``dtype`` in an array of ``shape`` and ``order``."""',
        "    data = RNG.standard_normal(shape) * 4",
        "    data = np.asarray(data > 0 if np.dtype(dtype) == np.bool_ else data).astype(dtype)",
        "    data = np.asfortranarray(data) if order == 'F' else np.ascontiguousarray(data)",
        "    data.flags.writeable = writeable",
        "    return data",
        "",
        "",
    ]
    qualname = getattr(fn, "__qualname__", "<locals>")
    if path and "<locals>" not in qualname and name != "<lambda>":
        lines += [
            f"spec = importlib.util.spec_from_file_location('user_module', {path!r})",
            "module = importlib.util.module_from_spec(spec)",
            "spec.loader.exec_module(module)",
            f"fn = getattr(module.{name}, 'eager', module.{name})",
        ]
    else:
        source = _source(fn)
        lines += [source, f"fn = {name}"]
    lines += [
        f"args = {_literal(args)}",
        f"kwargs = {_literal(kwargs)}",
        f"options = {compiled.options!r}",
        f"static_argnames = {tuple(compiled.static_argnames)!r}",
        "",
        "if __name__ == '__main__':",
        "    compiled = gcompile.compile(",
        f"        fn, backend={compiled.backend!r}, static_argnames=static_argnames, options=options",
        "    )",
        "    print(gcompile.compare(compiled, *args, **kwargs))",
        "",
    ]
    return "\n".join(lines)


def _source(fn: Any) -> str:
    try:
        return "import numpy as np\n\n" + inspect.cleandoc(inspect.getsource(fn))
    except (OSError, TypeError):
        return f"raise SystemExit('the source of {fn!r} is not available')"


def _literal(value: Any) -> str:
    """Source text rebuilding ``value``: arrays as random arrays of the same kind."""
    if isinstance(value, np.ndarray):
        order = (
            "F"
            if value.ndim > 1 and value.flags.f_contiguous and not value.flags.c_contiguous
            else "C"
        )
        writeable = "" if value.flags.writeable else ", writeable=False"
        return f"array({value.shape!r}, np.{value.dtype.name}, {order!r}{writeable})"
    if isinstance(value, np.generic):
        return f"np.{value.dtype.name}({value.item()!r})"
    if isinstance(value, tuple):
        items = ", ".join(_literal(v) for v in value)
        return f"({items}{',' if len(value) == 1 else ''})"
    if isinstance(value, list):
        return "[" + ", ".join(_literal(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k!r}: {_literal(v)}" for k, v in value.items()) + "}"
    if isinstance(value, np.dtype):
        return f"np.dtype({value.str!r})"
    if isinstance(value, (float, complex)) and not np.isfinite(value):
        return f"{type(value).__name__}({str(value)!r})"
    if value is None or isinstance(value, (bool, int, float, complex, str)):
        return repr(value)
    return f"None  # a {type(value).__name__} could not be rebuilt"
