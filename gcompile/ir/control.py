"""Control flow as sub-graph ops: ``for_range``, a Python ``for`` loop kept as one loop, and
``cond``, an ``if`` on a traced value with both branches kept.

::

    %for_range_1 : (f64[s0,s0],) = for_range(%A, start=0, stop=s0, step=1)
      graph body(A: f64[s0,s0]):                               index k0 in [0, s0-1]
        %getitem_1 : f64[s0-k0-1] = getitem(%A, index=[k0, k0+1:])
        ...
        return (%setitem_2,)           carried: A (placeholder 0 <- output 0)

The loop's index is a symbol of the trace's shape environment (``ShapeEnv.loop_symbol``),
bound to each value of ``range(start, stop, step)`` in turn; body shapes and indices may use it
(``A[k0, k0+1:]`` is ``f64[s0-k0-1]``). ``start`` and ``stop`` are ints or expressions of the
sizes and of outer loops' indices, kept in the node's kwargs; ``step`` is a non-zero int.

The node's arguments are the body's placeholders, one to one. Some are *carried*: each
``carries`` pair ``(placeholder, output)`` says that the body's output ``output`` is that
placeholder's value in the next iteration; the first iteration gets the node's argument. The
others are read-only captures (arrays and scalars the body reads from outside). The node's value
is the body's outputs after the last iteration, in the order of the outputs (for a loop that
does not run, the carried arguments themselves); one output is the value itself, several a
tuple read through ``kernel_output`` nodes.

Value semantics: a body may write a carried array in place (its placeholder's memory belongs
to the loop), so the loop runs on copies of the carried arrays, and its value is new memory;
except for the carried arguments in ``in_place``, which buffer assignment sets where nothing
reads the argument's old value afterwards: the loop then runs in that argument's memory and
its output is that array, written (``written_arguments``, ``output_argument``).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from .graph import Graph
from .meta import TensorMeta, TupleMeta
from .shape_env import active, trip_count
from .subgraph import Region, RunGraph, SubgraphOp, body_of, operand_problems, output_meta
from .symbolic import Symbol, is_expr, prove_eq


class _Carrying:
    """What loops and branches share: ``carries`` ``(argument, output)`` pairs, of which the
    arguments in ``in_place`` run in their own memory (written in place)."""

    carries: tuple
    in_place: frozenset

    @property
    def written_arguments(self) -> tuple:
        """The carried arguments the op writes in their own memory (``in_place``)."""
        return tuple(sorted(self.in_place))

    def output_argument(self, output: int) -> int | None:
        """The argument whose memory holds output ``output``, if it is written in place."""
        for position, carried in self.carries:
            if carried == output and position in self.in_place:
                return position
        return None


@dataclass(eq=False)
class ForRange(_Carrying, SubgraphOp):
    """``for index in range(start, stop, step)`` over a body graph (see the module docstring)."""

    body: Graph
    index: Symbol
    carries: tuple  # ((placeholder position, output position), ...)
    names: tuple = field(default=())  # the user's name of each output (carried value)
    source: str | None = None  # file:line of the ``for`` statement
    in_place: frozenset = frozenset()  # carried placeholders run in the argument's own memory
    exit: int | None = None  # the output that is a ``break``'s flag: once true, trips do nothing

    name = "for_range"
    kind = "loop"
    holds_program = True
    repeats = True

    @property
    def regions(self) -> tuple[Region, ...]:
        """One region, ``body``: its placeholders bound to the node's arguments in order."""
        return (Region("body", self.body, tuple(range(len(self.body.placeholders)))),)

    @property
    def params(self) -> dict:
        """The index symbol with its interval, and the carried names."""
        index = self.index
        return {"index": f"{index} in [{index.lo}, {index.hi}]", "carried": carried_text(self)}

    def region_note(self, region: Region) -> str:
        """The body's header comment: ``k0 in [0, s0-1]; carried A <- %store_1 (in place)``, and
        ``; until flag`` for a loop that a ``break``'s carried ``flag`` ends (``exit``)."""
        index = self.index
        carried = carried_text(self, marks=True) or "nothing"
        note = f"{index} in [{index.lo}, {index.hi}]; carried {carried}"
        if self.exit is not None:  # (a break's flag: its placeholder)
            position = next(p for p, output in self.carries if output == self.exit)
            note += f"; until {self.body.placeholders[position].name}"
        return note

    def interpret(self, run_graph: RunGraph, args: tuple, kwargs: dict) -> object:
        """Run the body once per index value, feeding each carried value to the next iteration
        (until a ``break``'s flag is set: the trips after it would do nothing)."""
        inputs = [
            _private(value) if self._is_carried(i) and i not in self.in_place else value
            for i, value in enumerate(args)
        ]
        outputs = [inputs[position] for position, _ in sorted(self.carries, key=lambda c: c[1])]
        for value in range(kwargs["start"], kwargs["stop"], kwargs["step"]):
            outputs = run_graph(self.body, inputs, {self.index: value})
            for position, output in self.carries:
                inputs[position] = outputs[output]
            if self.exit is not None and bool(outputs[self.exit]):
                break
        return outputs[0] if len(outputs) == 1 else tuple(outputs)

    @property
    def bound_symbols(self) -> tuple:
        """The loop's index."""
        return (self.index,)

    def trips(self, kwargs: dict) -> range | list | None:
        """``range(start, stop, step)`` of int bounds; ``[start]`` for one trip at a symbolic
        index (a piece of a split range); None when the count depends on the sizes."""
        start, stop, step = (kwargs[key] for key in ("start", "stop", "step"))
        if is_expr(start) or is_expr(stop):
            return [start] if prove_eq(trip_count(start, stop, step), 1) is True else None
        return range(start, stop, step)

    def summary(self, kwargs: dict) -> str:
        """``index k0 in [0, s0-1], s0 trips``."""
        trips = trip_count(*(kwargs[key] for key in ("start", "stop", "step")))
        return f"index {self.index} in [{self.index.lo}, {self.index.hi}], {trips} trips"

    def _is_carried(self, position: int) -> bool:
        return any(p == position for p, _ in self.carries)

    def map_sizes(self, fn) -> None:
        """Sizes held by the op itself: none besides the index's interval, which is kept (a
        replacement learned later names the same values)."""
        return None

    def __repr__(self) -> str:
        return f"<for_range {self.index}>"


# The most branches (each ``if`` of the data a loop unrolled at trace time left: a sieve's
# ``if mask[j]``) one graph may hold: compiled in one program, about 35 ms of Numba's time each;
# a trace reaching more is refused there, before it unrolls further.
MAX_BRANCHES = 64


@dataclass(eq=False)
class Cond(_Carrying, SubgraphOp):
    """``if predicate: then else: orelse`` on a traced value, each branch a graph::

        %cond_1 : (f64[], f64[s0]) = cond(%greater_1, %t, %a, %b)
          graph then(t: f64[], a: f64[s0]):                 operands (1, 2)
            ...
            return (%add_1, %store_1)
          graph orelse(t: f64[], a: f64[s0], b: f64[s0]):    operands (1, 2, 3)
            ...
            return (%t, %a)                updates: a (argument 2 <- output 1)

    The node's first argument is the predicate (a 0-d value, true when non-zero); each branch
    reads its own subset of the other arguments (``Region.operands``) and returns every output,
    with the same metas. ``carries`` pairs ``(argument, output)``: an array a branch writes in
    place, whose new value is that output (a branch that does not write it returns it as it
    came). As a loop's, the branches run on copies of those arrays, except for the arguments
    in ``in_place`` (set by buffer assignment), whose own memory they write.
    """

    then: Graph
    orelse: Graph
    then_operands: tuple
    else_operands: tuple
    carries: tuple = ()  # ((argument position, output position), ...)
    names: tuple = field(default=())  # the user's name of each output
    source: str | None = None  # file:line of the ``if`` statement
    in_place: frozenset = frozenset()

    name = "cond"
    kind = "branch"
    holds_program = True

    @property
    def regions(self) -> tuple[Region, ...]:
        """``then`` and ``else``, each bound to its operands."""
        return (
            Region("then", self.then, self.then_operands),
            Region("else", self.orelse, self.else_operands),
        )

    def region_note(self, region: Region) -> str:
        """A branch's header comment: ``operands (1, 2)``; the first's also the outputs' names and
        the arrays the branches update (``updates argument 2 <- output 1 (in place)``)."""
        clauses = [f"operands {region.operands}"]
        if region.role == "then" and self.names:
            clauses.append(f"outputs {', '.join(self.names)}")
        if region.role == "then" and self.carries:
            updates = ", ".join(
                f"argument {a} <- output {o}" + (" (in place)" if a in self.in_place else "")
                for a, o in self.carries
            )
            clauses.append(f"updates {updates}")
        return "; ".join(clauses)

    @property
    def params(self) -> dict:
        """The outputs' names, and the arrays the branches update."""
        updates = ", ".join(f"argument {a} <- output {o}" for a, o in self.carries)
        return {"outputs": ", ".join(self.names), "updates": updates}

    def infer(self, *inputs: Any, **params: Any) -> TensorMeta | TupleMeta:
        """The branches' output metas, which agree but for layout and writeability: a layout
        both promise (else ``A``), writeable only if both are."""
        problems = [p for region in self.regions for p in operand_problems(region, inputs)]
        if problems:
            raise ValueError("cond: " + "; ".join(problems))
        then, orelse = (_items(output_meta(region.graph)) for region in self.regions)
        merged = []
        for name, a, b in zip(self.names, then, orelse):
            loose = replace(b, layout=a.layout, writeable=a.writeable)
            if len(then) != len(orelse) or a.map_sizes(_simplify) != loose.map_sizes(_simplify):
                raise ValueError(f"cond: the branches give {name!r} different types ({a}, {b})")
            layout = a.layout if a.layout == b.layout else "A"
            merged.append(replace(a, layout=layout, writeable=a.writeable and b.writeable))
        return merged[0] if len(merged) == 1 else TupleMeta(tuple(merged))

    def interpret(self, run_graph: RunGraph, args: tuple, kwargs: dict) -> object:
        """Run the branch the predicate picks, on copies of the arrays it may write."""
        region = self.regions[0 if bool(args[0]) else 1]
        written = {a for a, _ in self.carries} - self.in_place
        inputs = [_private(args[i]) if i in written else args[i] for i in region.operands]
        outputs = run_graph(region.graph, inputs)
        return outputs[0] if len(outputs) == 1 else tuple(outputs)

    def summary(self, kwargs: dict) -> str:
        """``if at file:line, outputs t, a``."""
        return f"branch at {self.source}, outputs {', '.join(self.names) or 'none'}"

    def __repr__(self) -> str:
        return f"<cond {self.source}>"


@dataclass(eq=False)
class WhileLoop(_Carrying, SubgraphOp):
    """``while test(carried): carried = body(carried)``, a ``while`` loop on traced values::

        %while_loop_1 : (f64[], i64[]) = while_loop(%err, %count, %u)
          graph body(err: f64[], count: i64[], u: f64[s0]):      operands (0, 1, 2)
            ...
            return (%sqrt_1, %add_1)          carried: err <- output 0, count <- output 1
          graph test(err: f64[], count: i64[]):                  operands (0, 1)
            %greater_1 : bool[] = greater(%err, 0.001)
            return (%greater_1,)

    As ``for_range``'s, the body's placeholders are the node's arguments in order (carried
    values first, then values it or the test reads from outside), ``carries`` pairs each carried placeholder
    with the output feeding it on the next trip, and the body runs on copies of the arrays it
    writes but those in ``in_place``. The test reads any of the arguments (its operands) and
    returns one 0-d bool; the loop runs while it is true, so it may run no trip at all (its
    value is then the carried arguments themselves). The trip count is unknown until run time.
    """

    body: Graph
    test: Graph
    test_operands: tuple
    carries: tuple
    names: tuple = field(default=())
    source: str | None = None
    in_place: frozenset = frozenset()

    name = "while_loop"
    kind = "loop"
    holds_program = True
    repeats = True

    @property
    def regions(self) -> tuple[Region, ...]:
        """The body (its placeholders bound to the arguments in order), then the test."""
        body = Region("body", self.body, tuple(range(len(self.body.placeholders))))
        return (body, Region("test", self.test, self.test_operands))

    def region_note(self, region: Region) -> str:
        """The body's header comment (``carried err <- %sqrt_1, u <- %u (in place)``), the
        test's (``operands (0, 1)``)."""
        if region.role == "test":
            return f"operands {region.operands}"
        return f"carried {carried_text(self, marks=True) or 'nothing'}"

    @property
    def params(self) -> dict:
        """The carried names."""
        return {"carried": ", ".join(self.names)}

    def infer(self, *inputs: Any, **params: Any) -> TensorMeta | TupleMeta:
        """The body's outputs (the test returns the predicate, not a value of the node)."""
        problems = [p for region in self.regions for p in operand_problems(region, inputs)]
        if problems:
            raise ValueError("while_loop: " + "; ".join(problems))
        return output_meta(self.body)

    def interpret(self, run_graph: RunGraph, args: tuple, kwargs: dict) -> object:
        """Run the body while the test holds, feeding each carried value to the next trip."""
        carried = {position for position, _ in self.carries}
        inputs = [
            _private(value) if i in carried and i not in self.in_place else value
            for i, value in enumerate(args)
        ]
        outputs = [inputs[position] for position, _ in sorted(self.carries, key=lambda c: c[1])]
        test = self.regions[1]
        while bool(run_graph(self.test, test.inputs(inputs))[0]):
            outputs = run_graph(self.body, inputs[: len(self.body.placeholders)])
            for position, output in self.carries:
                inputs[position] = outputs[output]
        return outputs[0] if len(outputs) == 1 else tuple(outputs)

    def summary(self, kwargs: dict) -> str:
        """``while loop, trips decided by the data``."""
        return "a while loop: the data decide its trips"

    def __repr__(self) -> str:
        return f"<while_loop {self.source}>"


def carried_text(loop: SubgraphOp, marks: bool = False) -> str:
    """``A <- %setitem_2, s <- %add_3``: each carried placeholder of a loop's body and the
    output that feeds it, in the order of the outputs; ``marks``: `` (in place)`` after those
    the loop runs in their argument's memory."""
    body = body_of(loop)
    placeholders, outputs = body.placeholders, body.output_node.args[0]
    parts = []
    for position, output in loop.carries:
        value = outputs[output]
        shown = f"%{value.name}" if hasattr(value, "name") else repr(value)
        mark = " (in place)" if marks and position in loop.in_place else ""
        parts.append(f"{placeholders[position].name} <- {shown}{mark}")
    return ", ".join(parts)


def _items(meta) -> tuple:
    return meta.items if isinstance(meta, TupleMeta) else (meta,)


def _simplify(size):
    env = active()
    return env.simplify(size) if env is not None and is_expr(size) else size


def _private(value):
    """A carried array the body may write in place: the loop's own copy."""
    return np.array(value, copy=True) if isinstance(value, np.ndarray) else value


@dataclass
class LoopNote:
    """What became of one ``for`` loop the tracer met: rolled (a ``for_range`` node) or not."""

    source: str | None
    rolled: bool
    reason: str = ""
    node: str | None = None
    trips: Any = None
    carried: tuple = ()
    kind: str = "loop"  # or "branch": an ``if`` on a traced value

    def text(self) -> str:
        """One line for ``explain()``."""
        where = f"{self.source}: " if self.source else ""
        if self.kind == "branch":
            if not self.rolled:
                return f"{where}branch on a traced value not kept: {self.reason}"
            outputs = ", ".join(self.carried) or "nothing"
            return f"{where}branch kept as %{self.node}, setting {outputs}"
        if self.kind == "while" and not self.rolled:
            return f"{where}while loop run in Python: {self.reason}"
        if not self.rolled:
            return f"{where}loop unrolled while tracing: {self.reason}"
        carried = ", ".join(self.carried) or "nothing"
        return f"{where}loop kept as %{self.node} ({self.trips} trips), carrying {carried}"
