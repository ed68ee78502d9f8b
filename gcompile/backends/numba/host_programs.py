"""The host lines that call loop programs: a top-level loop nest, or the whole graph as one
Numba function (``programs``), and how their results become the graph's values.

A part of the host's lowering (``host._HostLowering``), whose statements, globals, sizes and
options it adds to.
"""

from __future__ import annotations

from ...errors import UnsupportedError
from ...ir import ops
from ...ir.control import Cond
from ...ir.graph import Node
from ...ir.subgraph import loop_of
from ...loops.nodes import Attr, Call, Comment, Const, Item, Let, Name, Return, Tuple, Var
from . import codegen, program_externs, program_host, programs
from .program_entry import ProgramEntry, caller_buffers, result_type

# A graph without loops whose host would run this many steps (kernel calls, scalar ops, stores)
# one by one is one Numba function too: a step of the Python host costs 1-2 us a call, the
# function one compile (about 0.5 s, then kept on disk).
WHOLE_PROGRAM_STEPS = 6


def host_variable(node: Node) -> str:
    """The host function's variable holding ``node``'s value."""
    return f"v_{node.name}"


class ProgramCalls:
    """The host's calls of loop programs (a part of ``host._HostLowering``)."""

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
        self.emit(Comment(node))
        results = self.program_call(node.name, program, function)
        self.emit(
            Let(
                Var(host_variable(node)), results[0] if len(results) == 1 else Tuple(tuple(results))
            )
        )

    def program_call(self, name: str, program, function) -> list:
        """Emit the call of a program's function; the expression of each of its results."""
        self.globals[f"_loop_{name}"] = function
        arguments = [
            self.value(v)
            if v.meta.ndim
            else Call(Attr(self.dtype_name(v.meta.dtype), "type"), (self.value(v),))
            for v in program.inputs
        ]
        for position, (shape, dtype, order) in enumerate(program.buffers):
            made = Call(Name("_empty"), (self.shape(shape), self.dtype_name(dtype), Const(order)))
            self.emit(Let(Var(f"_buffer{position}"), made))
            arguments.append(Var(f"_buffer{position}"))
        arguments += [Var(size) for size in program.sizes]
        for position, constant in enumerate(program.constants):
            self.globals[f"_loop_{name}_c{position}"] = constant
            arguments.append(Name(f"_loop_{name}_c{position}"))
        self.emit(Let(Var("_results"), Call(Name(f"_loop_{name}"), tuple(arguments))))
        returned = sum(1 for buffer in program.in_buffers if buffer is None)
        items = iter(
            [Var("_results")]
            if returned == 1
            else [Item(Var("_results"), (Const(i),)) for i in range(returned)]
        )
        return [
            self.program_result(next(items) if buffer is None else Var(f"_buffer{buffer}"), meta)
            for buffer, meta in zip(program.in_buffers, program.outputs)
        ]

    def program_result(self, value, meta):
        """A program's result as the graph's value: an array as it is (a 0-d one made an array
        again: Numba returns its element); a scalar as its NumPy type, or a Python one when weak
        (``s = x * 0.5`` of a Python float stays a float)."""
        convert = result_type(meta)
        if convert is None:
            return value
        if not meta.scalar:
            return Call(Name("np.asarray"), (value, self.dtype_name(meta.dtype)))
        if meta.weak:
            return Call(Name(convert.__name__), (value,))
        return Call(Attr(self.dtype_name(meta.dtype), "type"), (value,))

    def whole_program(self) -> bool:
        """A graph with a loop, or of many steps (any step under the option ``whole_program``),
        or a library call a program computes faster than NumPy (``np.histogram``): the whole
        graph as one Numba function (``programs``), the host only calling it; False (and why,
        in ``whole``) when some node has no form there."""
        graph = self.graph
        loops = [n for n in graph.nodes if loop_of(n) is not None]
        branches = [n for n in graph.nodes if isinstance(n.target, Cond)]
        steps = sum(1 for n in graph.nodes if n.op == "call" and n.target is not ops.KERNEL_OUTPUT)
        budget = int(self.options.get("max_loop_statements", programs.MAX_LOOP_STATEMENTS))
        fewest = 1 if self.options.get("whole_program") else WHOLE_PROGRAM_STEPS  # (export's)
        faster = any(program_externs.computes_histogram(n) for n in graph.nodes)
        if not loops and not branches and not faster and not fewest <= steps <= budget:
            return False
        if not loops:  # (branches: many, of a loop unrolled, would compile for minutes)
            programs.check_budget_of(graph, graph.name, self.options)
        for node in loops:
            programs.check_budget(node, self.options)
        if loops:
            programs.check_program_budget(graph)
        try:
            program = programs.generate_graph(graph, self.options)
            function = program_host.load(program, graph.name, self.options, self.program)
        except (codegen.NoTemplate, UnsupportedError) as why:
            programs.check_budget_of(graph, graph.name, self.options, separately=True)
            self.program.whole = f"the host stays Python: {why}"
            return False
        self.program.whole = "the host is one Numba function"
        if program.sizes or program.buffers:  # (else the program reads its sizes itself)
            self.statements += self.size_bindings()
        results = iter(self.program_call(graph.name, program, function))
        values = graph.output_node.args[0]
        self.globals["_literal_outputs"] = values
        items = [
            next(results) if isinstance(v, Node) else Item(Name("_literal_outputs"), (Const(i),))
            for i, v in enumerate(values)
        ]
        self.emit(Return(tuple(items)))
        if len(items) == len(program.outputs) and not program.objmode:
            function.disable_compile()  # another type is the general path's (``fast_entry``)
            buffers = caller_buffers(graph, program.buffers)
            constants = tuple(program.constants)
            converts = tuple(result_type(meta) for meta in program.outputs)
            entry = ProgramEntry(
                function, constants, buffers, program.in_buffers, self.pool.empty, converts
            )
            self.program.entry = entry
        return True
