"""Pending lazy values computed: their steps as one generated function, compiled once per
structure.

The steps the values need become the lines of a function of the computed arrays and Python
numbers they read (its inputs, so a new value of either is a new call, not a new compile)::

    def lazy_replay(i0, i1):
        v0 = _f0(i0, i1)            # np.multiply(x, t)
        v1 = _f1(v0, axis=_c0)      # np.sum(..., axis=-1)
        return (v1,)

Other arguments (ints, strings, dtypes, slices, tuples of them) are the function's constants.
Two flushes whose steps have the same functions, constants and wiring share one
``CompiledFunction`` (``_COMPILED``), whose guards then decide on dtypes, ranks and sizes as for
any compiled function: a loop that records the same lines each time compiles once.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..api import CompiledFunction
from ..ir.literals import literal_key
from .record import Step

_COMPILED: dict = {}  # structure -> CompiledFunction
_MAX_COMPILED = 256  # structures kept before the cache starts again


def run(values: list) -> None:
    """Compute ``values`` (pending ``LazyArray``s, in recording order) in one compiled call."""
    steps = _steps_of(values)
    plan = _Plan(steps)
    outputs = [plan.position[v.step] for v in values]
    key = plan.key(outputs)
    compiled = _COMPILED.get(key) if key is not None else None
    if compiled is None:
        compiled = CompiledFunction(_function(plan, outputs), options={"loops": False})
        if key is not None:
            if len(_COMPILED) >= _MAX_COMPILED:
                _COMPILED.clear()
            _COMPILED[key] = compiled
    results = compiled(*plan.inputs)
    for value, result in zip(values, results):
        value.computed(result)


def _steps_of(values: list) -> list:
    """Every step not yet computed that ``values`` need, in recording order."""
    found, stack = {}, [v.step for v in values]
    while stack:
        step = stack.pop()
        if step.order in found:
            continue
        found[step.order] = step
        stack += [s for s in _steps_in((step.args, step.kwargs)) if not s.done]
    return [found[order] for order in sorted(found)]


def _steps_in(value: Any) -> list:
    if isinstance(value, Step):
        return [value]
    if isinstance(value, (tuple, list)):
        return [item for v in value for item in _steps_in(v)]
    if isinstance(value, dict):
        return [item for v in value.values() for item in _steps_in(v)]
    return []


class _Plan:
    """The steps as templates: each argument a step's value, an input or a constant."""

    def __init__(self, steps: list):
        self.position = {step: i for i, step in enumerate(steps)}
        self.inputs: list = []
        self.constants: list = []
        self._input_of: dict = {}
        self.lines = [
            (
                step.function,
                tuple(self.template(a) for a in step.args),
                {k: self.template(v) for k, v in step.kwargs.items()},
            )
            for step in steps
        ]

    def template(self, value: Any) -> Any:
        if isinstance(value, Step):
            if not value.done:
                return ("v", self.position[value])
            value = value.result
        if isinstance(value, (np.ndarray, np.generic, float, complex)) and not isinstance(
            value, bool
        ):
            if not isinstance(value, np.ndarray) or id(value) not in self._input_of:
                # (an array read twice is one input; a number is one per use, so that which
                # numbers happen to be the same object does not change the structure)
                self._input_of[id(value)] = len(self.inputs)
                self.inputs.append(value)
            return ("i", self._input_of[id(value)])
        if isinstance(value, (tuple, list)):
            return (type(value).__name__, tuple(self.template(v) for v in value))
        self.constants.append(value)
        return ("c", len(self.constants) - 1)

    def key(self, outputs: list) -> tuple | None:
        """The structure (functions, constants by value, wiring), or None when a constant
        cannot be compared by value."""
        try:
            constants = tuple(literal_key(c) for c in self.constants)
            hash(constants)
        except TypeError:
            return None
        functions = tuple(
            (f, args, tuple(sorted(kwargs.items()))) for f, args, kwargs in self.lines
        )
        return functions, constants, tuple(outputs), len(self.inputs)


def _function(plan: _Plan, outputs: list) -> Any:
    """The generated function computing the plan's outputs from its inputs."""
    namespace = {f"_c{i}": c for i, c in enumerate(plan.constants)}
    lines = []
    for position, (function, args, kwargs) in enumerate(plan.lines):
        given = [_source(a) for a in args] + [f"{k}={_source(v)}" for k, v in kwargs.items()]
        if isinstance(function, str):  # a method of the first argument
            call = f"{given[0]}.{function}({', '.join(given[1:])})"
        else:
            namespace[f"_f{position}"] = function
            call = f"_f{position}({', '.join(given)})"
        lines.append(f"    v{position} = {call}\n")
    parameters = ", ".join(f"i{i}" for i in range(len(plan.inputs)))
    results = "".join(f"v{i}, " for i in outputs)
    source = f"def lazy_replay({parameters}):\n{''.join(lines)}    return ({results})\n"
    exec(compile(source, "<gcompile lazy replay>", "exec"), namespace)
    return namespace["lazy_replay"]


def _source(template: tuple) -> str:
    kind, value = template
    if kind in ("v", "i", "c"):
        return f"{kind}{value}" if kind != "c" else f"_c{value}"
    items = ", ".join(_source(t) for t in value)
    return f"({items},)" if kind == "tuple" else f"[{items}]"
