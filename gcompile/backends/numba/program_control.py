"""Loops and branches in loop programs, as loop IR: a ``for_range`` as a ``Loop``, a
``while_loop`` as a ``While`` (its test, then its body), a ``cond`` as an ``If`` whose branches
set every output variable. Carried values are variables, set from the loop's arguments before
it; a carried array the loop does not run in place (``in_place``), or an array a branch may
write and does not own, is copied first, as the interpreter does.

A part of the program lowering (``programs._ProgramLowering``), whose statements and values it
adds to.
"""

from __future__ import annotations

from ...ir.control import Cond, ForRange, WhileLoop
from ...ir.graph import Graph, Node
from ...loops.nodes import Attr, Call, If, Let, Loop, Var, While

CONTROL = (ForRange, Cond, WhileLoop)  # the sub-graph ops with a program form


class ControlLowering:
    """The program lowering's loops and branches (see the module docstring); the lowering
    provides ``statements``, ``values``, ``symbols``, ``loop_indices``, ``depth``,
    ``open_loops``, ``emit``, ``fresh``, ``size``, ``value`` and ``graph``."""

    def control(self, node: Node, arguments: list) -> list:
        """A loop's or branch's statements (``arguments``: the expressions of its node's
        arguments); the variables of its outputs."""
        lower = {ForRange: self.loop, Cond: self.branch, WhileLoop: self.while_loop}
        return lower[type(node.target)](node, arguments)

    def loop(self, node: Node, arguments: list) -> list:
        """The statements of ``node``'s loop; returns the variables of its outputs."""
        loop: ForRange = node.target
        body = loop.body
        variables = self.carried_variables(loop, body, arguments)
        index = self.fresh(loop.index.name)
        self.symbols[loop.index] = index
        self.loop_indices.add(loop.index)
        start, stop = self.size(node.kwargs["start"]), self.size(node.kwargs["stop"])
        outer, self.statements = self.statements, []
        self.depth += 1
        self.open_loops.append((node, outer))
        self.graph(body)
        self.open_loops.pop()
        self.depth -= 1
        statements, self.statements = tuple(self.statements), outer
        outputs = body.output_node.args[0]
        pairs = [(variables[p], self.value(outputs[o])) for p, o in loop.carries]
        pairs = tuple((target, value) for target, value in pairs if target != value)
        step = int(node.kwargs["step"])
        by_output = {o: variables[p] for p, o in loop.carries}
        flag = None if loop.exit is None else by_output[loop.exit]  # (the trips after do nothing)
        self.emit(
            Loop(index, start, stop, step, statements, kind="program", carried=pairs, exit=flag)
        )
        return [by_output[o] for o in range(len(outputs))]

    def while_loop(self, node: Node, arguments: list) -> list:
        """``while True: test; if not flag: break; body``, carried values as a loop's."""
        op: WhileLoop = node.target
        body, test = op.regions
        variables = self.carried_variables(op, body.graph, arguments)
        outer, self.statements = self.statements, []
        self.depth += 1
        self.open_loops.append((node, outer))
        for placeholder, position in zip(test.graph.placeholders, test.operands):
            given = variables[position] if position < len(variables) else arguments[position]
            self.values[placeholder] = given
        self.graph(test.graph)
        flag = self.value(test.graph.output_node.args[0][0])
        checks, self.statements = tuple(self.statements), []
        self.graph(body.graph)
        self.open_loops.pop()
        self.depth -= 1
        statements, self.statements = tuple(self.statements), outer
        outputs = body.graph.output_node.args[0]
        pairs = [(variables[p], self.value(outputs[o])) for p, o in op.carries]
        pairs = tuple((target, value) for target, value in pairs if target != value)
        self.emit(While(checks, flag, statements, carried=pairs))
        by_output = {o: variables[p] for p, o in op.carries}
        return [by_output[o] for o in range(len(outputs))]

    def carried_variables(self, op, body: Graph, arguments: list) -> list:
        """A variable per placeholder of a loop's body, set from its argument (a copy of a
        carried array the loop does not run in place, as the interpreter makes)."""
        carried = dict(op.carries)
        return [
            self.bound(placeholder, argument, position in carried and position not in op.in_place)
            for position, (placeholder, argument) in enumerate(zip(body.placeholders, arguments))
        ]

    def branch(self, node: Node, arguments: list) -> list:
        """``if predicate: then else: orelse``, each branch setting every output variable; an
        array a branch may write and does not own is copied first, as a loop's is."""
        cond: Cond = node.target
        outputs = [self.fresh(name) for name in cond.names]
        copied = {position for position, _ in cond.carries} - cond.in_place
        blocks = []
        for region in cond.regions:
            outer, self.statements = self.statements, []
            for placeholder, position in zip(region.graph.placeholders, region.operands):
                self.bound(placeholder, arguments[position], position in copied)
            self.graph(region.graph)
            for target, value in zip(outputs, region.graph.output_node.args[0]):
                self.emit(Let(target, self.value(value)))
            blocks.append(tuple(self.statements))
            self.statements = outer
        self.emit(If(arguments[0], blocks[0], blocks[1]))
        return outputs

    def bound(self, placeholder: Node, argument, copy: bool) -> Var:
        """A new variable holding a region's ``placeholder``, set from ``argument``: a copy of
        it when ``copy`` and the placeholder is an array."""
        variable = self.fresh(placeholder.name)
        copy = copy and placeholder.meta.ndim > 0
        self.emit(Let(variable, Call(Attr(argument, "copy")) if copy else argument))
        self.values[placeholder] = variable
        return variable
