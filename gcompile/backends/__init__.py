"""Backend registry: a backend turns a Graph into a callable on the graph's flat inputs.

A backend is ``compile_fn(graph, options) -> run`` where ``run(inputs: list) ->
list`` takes the values of the graph's placeholders in order and returns the
flat output values (the structure is ``graph.out_spec``).
"""

from __future__ import annotations

from typing import Callable

from ..ir.graph import Graph

CompileFn = Callable[[Graph, dict], Callable[[list], list]]

_BACKENDS: dict[str, CompileFn] = {}


def register_backend(name: str, compile_fn: CompileFn) -> None:
    """Make ``compile_fn`` available as ``gcompile.compile(..., backend=name)``."""
    if not callable(compile_fn):
        raise TypeError(f"backend {name!r}: compile_fn must be callable")
    _BACKENDS[name] = compile_fn


def get(name: str) -> CompileFn:
    """The compile function registered as ``name``."""
    try:
        return _BACKENDS[name]
    except KeyError:
        raise ValueError(
            f"unknown gcompile backend {name!r}; registered: {sorted(_BACKENDS)}"
        ) from None


def names() -> list[str]:
    """Names of the registered backends."""
    return sorted(_BACKENDS)


def _register_builtin() -> None:
    from . import interpreter, numba

    register_backend("interpreter", interpreter.compile_graph)
    register_backend("numba", numba.compile_graph)


_register_builtin()
