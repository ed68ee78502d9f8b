"""The host lines that call loop programs: a top-level loop nest, or the whole graph as one
Numba function (``programs``), and how their results become the graph's values.

A part of the host writer (``host._HostWriter``), whose lines, globals, sizes and options it
writes into.
"""

from __future__ import annotations

import numpy as np

from ...errors import UnsupportedError
from ...ir import ops
from ...ir.graph import Node
from ...ir.printer import format_node
from ...ir.subgraph import loop_of
from . import codegen, program_host, programs

# A graph without loops whose host would run this many steps (kernel calls, scalar ops, stores)
# one by one is one Numba function too: a step of the Python host costs 1-2 us a call, the
# function one compile (about 0.5 s, then kept on disk).
WHOLE_PROGRAM_STEPS = 6


def host_variable(node: Node) -> str:
    """The host function's variable holding ``node``'s value."""
    return f"v_{node.name}"


class ProgramCalls:
    """The host writer's calls of loop programs (a part of ``host._HostWriter``)."""

    def loop(self, node: Node) -> None:
        """A top-level loop nest: one Numba function (``programs``), else the interpreter."""
        programs.check_budget(node, self.options)
        try:
            program = programs.generate(node, self.sizes, self.options)
            function = program_host.load(program, node.name, self.options, self.program)
        except codegen.NoTemplate as missing:
            self.interpreted(node, "loop", str(missing))
            return
        except UnsupportedError as failed:
            self.interpreted(node, "loop", f"{failed} ({failed.detail})")
            return
        self.lines.append(f"    # {format_node(node)}")
        results = self.program_call(node.name, program, function)
        value = results[0] if len(results) == 1 else f"({', '.join(results)},)"
        self.lines.append(f"    {host_variable(node)} = {value}")

    def program_call(self, name: str, program, function) -> list:
        """Emit the call of a program's function; the source of each of its results."""
        self.globals[f"_loop_{name}"] = function
        arguments = [
            host_variable(v)
            if v.meta.ndim
            else f"{self.dtype_name(v.meta.dtype)}.type({host_variable(v)})"
            for v in program.inputs
        ]
        for position, constant in enumerate(program.constants):
            self.globals[f"_loop_{name}_c{position}"] = constant
            arguments.append(f"_loop_{name}_c{position}")
        given = len(program.inputs)
        buffers = [
            f"_empty({self.shape_source(shape)}, {self.dtype_name(dtype)}, {order!r})"
            for shape, dtype, order in program.buffers
        ]
        arguments[given:given] = buffers + program.sizes  # inputs, buffers, sizes, constants
        self.lines.append(f"    _results = _loop_{name}({', '.join(arguments)})")
        return [
            self.program_result(f"_results[{i}]", meta) for i, meta in enumerate(program.outputs)
        ]

    def program_result(self, value: str, meta) -> str:
        """A program's result as the graph's value: an array as it is (a 0-d one made an array
        again: Numba returns its element); a scalar as its NumPy type, or a Python one when weak
        (``s = x * 0.5`` of a Python float stays a float)."""
        if meta.ndim:
            return value
        if not meta.scalar:
            return f"np.asarray({value}, {self.dtype_name(meta.dtype)})"
        if meta.weak:
            return f"{type(np.zeros((), meta.dtype).item()).__name__}({value})"
        return f"{self.dtype_name(meta.dtype)}.type({value})"

    def whole_program(self) -> bool:
        """A graph with a loop, or of many steps: the whole graph as one Numba function
        (``programs``), the host only calling it; False (and why, in ``whole``) when some node
        has no form there."""
        graph = self.graph
        loops = [n for n in graph.nodes if loop_of(n) is not None]
        steps = sum(1 for n in graph.nodes if n.op == "call" and n.target is not ops.KERNEL_OUTPUT)
        budget = int(self.options.get("max_loop_statements", programs.MAX_LOOP_STATEMENTS))
        if not loops and not WHOLE_PROGRAM_STEPS <= steps <= budget:
            return False
        for node in loops:
            programs.check_budget(node, self.options)
        try:
            program = programs.generate_graph(graph, self.sizes, self.options)
            function = program_host.load(program, graph.name, self.options, self.program)
        except (codegen.NoTemplate, UnsupportedError) as why:
            self.program.whole = f"the host stays Python: {why}"
            return False
        self.program.whole = "the host is one Numba function"
        results = iter(self.program_call(graph.name, program, function))
        values = graph.output_node.args[0]
        self.globals["_literal_outputs"] = values
        items = [
            next(results) if isinstance(v, Node) else f"_literal_outputs[{i}]"
            for i, v in enumerate(values)
        ]
        self.lines.append(f"    return [{', '.join(items)}]")
        return True
