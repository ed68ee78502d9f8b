"""The carried values of a traced loop body, on the node and after it: the values a loop
node carries by value (each a placeholder and an output of its body), the arrays of the
enclosing graph it writes in place (carried too, and written back into the caller's arrays
after the node, as eager mode wrote them), each initial value cast to the type the loop settles
on, and the values the user's code sees after the loop.

A part of the loop tracing (``loops.LoopTracer``, and ``branches.ControlTracer`` for while
loops and branches), which provides ``tracer``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import AbstractSet

import numpy as np

from ..capture import UNDEFINED
from ..ir import ops
from ..ir.alias import memories, root, written_placeholders
from ..ir.graph import Node
from ..ir.meta import TensorMeta, meta_of
from .declines import Declined, LoopEscape
from .symint import SymInt


@dataclass
class _Carry:
    """What a loop node carries (``CarriedValues.carry``)."""

    by_value: list  # the carried values that are placeholders (not by reference)
    carries: tuple  # ((placeholder position, output position), ...)
    arguments: list  # the node's arguments, one per placeholder
    in_place: list  # (placeholder position, the outer array the body writes in place)
    outputs: int  # how many outputs the body has
    consumed: dict  # name -> the initial array of a buffer it writes and rebinds (``consumable``)


class CarriedValues:
    """A loop node's carried values (see the module docstring)."""

    def _initial(self, value, name: str):
        """A carried value's initial value as a node argument (a node or a literal)."""
        if self.tracer.is_traced(value) or isinstance(value, (SymInt, np.ndarray)):
            return self.tracer.operand(value)
        if isinstance(value, (bool, int, float, complex, np.generic)):
            return value
        if value is UNDEFINED:
            raise Declined(f"{name!r} is unbound when the loop starts and read after it")
        raise Declined(f"it rebinds {name!r}, a {type(value).__name__} (not a number or array)")

    def carry(self, frame, outputs, inits, metas, names) -> "_Carry":
        """What a traced body carries (its graph's outputs set): the carried values by value
        (each its placeholder and output), then the lifted arrays it writes in place. Arrays
        the body writes while the loop rebinds them (``u, un = un, u``) are carried by value,
        their initial arrays consumed by the loop (``consumable``)."""
        graph = frame.graph
        by_value = [i for i in range(len(inits)) if i not in frame.by_reference]
        written = written_placeholders(graph)
        rebound = _rebound_written(frame, outputs, written, names)
        consumed = {names[i]: inits[i] for i in rebound}
        _consumable(consumed)
        in_place = []  # (placeholder position, the outer value the loop writes into)
        for position, i in enumerate(by_value):
            if frame.carried[i] in written and i not in rebound:
                in_place.append((position, inits[i]))
        carries = [(position, position) for position in range(len(by_value))]
        graph_outputs = [outputs[i] for i in by_value]
        arguments = [self._cast(inits[i], metas[i]) for i in by_value]
        lifted = graph.placeholders[len(by_value) :]
        for position, placeholder in enumerate(lifted, len(by_value)):
            arguments.append(frame.outer[placeholder])
            if placeholder in written:
                carries.append((position, len(graph_outputs)))
                graph_outputs.append(placeholder)
                in_place.append((position, frame.outer[placeholder]))
        self.tracer.regions.leaving(tuple(frame.outer.get(v, v) for v in graph_outputs))
        self.tracer.regions.looped([frame.outer[p] for p in lifted], [v for _, v in in_place])
        graph.output(tuple(graph_outputs))
        return _Carry(by_value, tuple(carries), arguments, in_place, len(graph_outputs), consumed)

    def check_consumed(self, node: Node) -> None:
        """Raise ``LoopEscape`` when ``node`` is (a view of) an array a loop consumed: the
        initial array of a buffer it writes and rebinds (``consumable``), which eager mode
        leaves holding one trip's values or another's."""
        owner = root(node)
        if owner in self.consumed:
            loop, name = self.consumed[owner]
            raise LoopEscape(
                loop.source,
                f"it writes {name!r} while it rebinds it (double buffering), and the array "
                f"{name!r} started as is used after it under another name",
            )

    def after_loop(self, node: Node, carry: "_Carry", carried: tuple, frame, outputs) -> tuple:
        """The carried values the user's code sees after a loop node; the arrays it wrote in
        place written back into the caller's arrays, as eager mode wrote them."""
        tracer = self.tracer
        for name, init in carry.consumed.items():
            self.consumed[init] = (node, name)
        items = self._items(node, carry.outputs)
        output_of = dict(carry.carries)
        for position, target in carry.in_place:
            tracer.write(tracer.wrap(target), tracer.wrap(items[output_of[position]]), (Ellipsis,))
        by_value = carry.by_value
        kept = {by_value[p] for p, _ in carry.in_place if p < len(by_value)}
        kept |= {i for i in range(len(carried)) if outputs[i] is frame.carried[i]}  # unchanged
        item_of = {i: items[position] for position, i in enumerate(by_value)}
        tracer.chose([item for i, item in item_of.items() if i not in kept])
        return tuple(
            carried[i] if i in kept else tracer.wrap(item_of[i]) for i in range(len(carried))
        )

    def _items(self, node: Node, count: int) -> list:
        """The loop's outputs as nodes (``kernel_output`` items when there are several)."""
        if count == 1:
            return [node]
        graph = self.tracer.graph
        return [
            graph.call(ops.KERNEL_OUTPUT, (node,), {"item": i}, source=node.source)
            for i in range(count)
        ]

    def _cast(self, init, meta: TensorMeta):
        """``init`` in the carried type ``meta`` (the type the loop settles on)."""
        current = value_meta(init)
        if current.dtype == meta.dtype and current.weak == meta.weak:
            return init
        weak = meta.weak and meta.dtype.kind in "if"  # (``t = 0`` then ``t += dt``: a float)
        if not isinstance(init, Node):
            return (
                (float if meta.dtype.kind == "f" else int)(init) if weak else meta.dtype.type(init)
            )
        if weak and current.dtype.kind in "biuf":
            kind = "float" if meta.dtype.kind == "f" else "int"
            return self.tracer.call(ops.PYTHON_SCALAR, self.tracer.wrap(init), kind=kind)._node
        return self.tracer.call(ops.ASTYPE, self.tracer.wrap(init), dtype=meta.dtype)._node


def _consumable(inits: dict) -> None:
    """Decline unless each of ``inits`` (name -> the initial value of a carried array the loop
    writes while it rebinds it: double buffering, ``u, un = un, u``) is an array the function
    made and no view of it: which trip's values eager mode leaves in that memory depends on
    the trips, so the loop may take it only where nothing but its names sees it after the loop
    (``check_consumed``)."""
    for name, init in inits.items():
        if not (isinstance(init, Node) and init.op == "call" and memories(init) == {init}):
            raise Declined(
                f"it writes {name!r} while it rebinds it, and {name!r} starts as memory the "
                "function does not own (an argument, a view or a constant): which trip's "
                "values eager mode leaves there depends on the trips"
            )


def _rebound_written(frame, outputs: list, written: AbstractSet, names: tuple) -> set:
    """The carried positions whose memory the loop writes while it rebinds them (their initial
    arrays are consumed): the body writes the array and carries out another value, or carries
    out a carried array whose memory a later trip writes (``u, un = un, u``: the buffers trade
    places). Declines where the next trip would hold written memory twice or from outside the
    loop, which carrying by value cannot stand for."""
    carried = {p: i for i, p in enumerate(frame.carried) if i not in frame.by_reference}
    held = {}  # position -> the body's placeholders its output's memory may be
    for i, output in enumerate(outputs):
        if i in frame.by_reference or not isinstance(output, Node) or output.meta.scalar:
            continue
        held[i] = {m for m in memories(output) if m.op == "placeholder"}
    found = {
        i
        for i, memory in held.items()
        if (frame.carried[i] in written and outputs[i] is not frame.carried[i])
        or (memory - {frame.carried[i]}) & written
    }
    pending = list(found)
    while pending:  # the arrays the found ones hold next are written from then on too
        i = pending.pop()
        for memory in held.get(i, ()):
            j = carried.get(memory)
            if j is None:
                raise Declined(f"it rebinds {names[i]!r} to memory the loop writes")
            if j not in found:
                found.add(j)
                pending.append(j)
    holders: dict = {}
    for i, memory in held.items():
        for shared in memory & (written | {frame.carried[j] for j in found}):
            if shared in holders:
                raise Declined(
                    f"{names[holders[shared]]!r} and {names[i]!r} share memory the loop writes "
                    "from its second trip on"
                )
            holders[shared] = i
    return found


def value_meta(value) -> TensorMeta:
    """The meta of a node argument: a node's, or a literal's."""
    return value.meta if isinstance(value, Node) else meta_of(value)
