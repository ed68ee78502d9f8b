"""Tracing a captured ``if`` on a traced value: both branches traced, as the graphs of a
``cond`` node.

The capture front-end rewrites ``if test: THEN else: ELSE`` into a call handing the tracer the
evaluated test and the two branches as functions ``branch(*carried) -> carried`` (the names
either branch assigns). When the test is a traced scalar, ``ControlTracer.capture_cond`` traces
each branch once into a graph of its own, as a loop body is traced (``LoopTracer.trace_graph``:
carried values are placeholders, outer values the branch reads are lifted, arrays it writes in
place become outputs), makes the outputs of the two agree, and records one ``cond`` node::

    if x[i] > best:          %greater_1 : bool[] = greater(%getitem_1, %best)
        best = x[i]    =>    %cond_1 : (f64[], i64[]) = cond(%greater_1, %best, %at, ...)
        at = i

After the node, the user's code sees each name as the branches left it; an array a branch wrote
is written back into the caller's array, as eager mode wrote it. A name one branch leaves
unbound is unbound after (reading it raises, as in Python, and the trace stops there).

The tracer declines (the ``if`` then runs as Python would, where ``bool()`` of the traced test
refuses as before) when: the test is not a traced scalar, a branch changes Python objects, a
carried value is not a number or an array, the two branches give a name different dtypes
(beyond a Python scalar and a NumPy value of one kind) or shapes, or a written array shares
memory with another value the branches read.
"""

from __future__ import annotations

import types
from dataclasses import dataclass, replace

import numpy as np

from ..capture import UNDEFINED
from ..capture.returns import RESULT
from ..capture.unbound import flag_of
from ..errors import user_source
from ..ir import ops
from ..ir.alias import shared_with_written, written_placeholders
from ..ir.control import MAX_BRANCHES, Cond, LoopNote, WhileLoop
from ..ir.graph import Graph, Node
from ..ir.meta import WEAK_ZERO, TensorMeta, meta_of
from ..ir.shape_env import data_sizes_in
from .carried import value_meta
from .comprehensions import capture_array, capture_sum
from .declines import Declined
from .loops import (
    _WIDENING_ROUNDS,
    LoopTracer,
    _roll_back,
    _rows,
    _same_shape,
    _source_of,
    _widened,
)
from .passed_through import PassedThrough
from .sequences import TracedList
from .symint import SymInt
from .texts import holds_marker
from .traced_array import TracedArray

# what a marked statement may change without being a change to Python state: the tracer's
# arrays and modules (``np.add(a, b, out=b)``); an array it did not trace is the caller's
_NOT_PYTHON_STATE = (TracedArray, types.ModuleType)
_VALUES = (type(None), bool, int, float, complex, str, bytes, np.generic)  # (no state to change)

_INDEX = "range index"  # the carried index of a for loop over bounds read from the data


class ControlTracer(LoopTracer):
    """The capture front-end's handler: loops (``LoopTracer``), branches and while loops."""

    def __init__(self, tracer):
        super().__init__(tracer)
        self._first_trips: dict = {}  # id(body) -> _FirstTrip: a while loop's, run in Python
        self._made: dict = {}  # id -> an object the function made by calling a class

    def capture_range(self, body, start, stop, step, carried, info, reverse=False):
        """A ``for`` loop; one whose bounds are read from the data (``range(row[i], row[i +
        1])``) is the while loop it means: its index a carried int, counted up to the stop
        the range was given (a ``reversed`` one of those runs in Python)."""
        bounds = (start, stop)
        if not any(self.tracer.is_traced(b) for b in bounds) or self.tracer.is_traced(step):
            return super().capture_range(body, start, stop, step, carried, info, reverse)
        if reverse or not isinstance(step, int) or step == 0:
            return NotImplemented
        if any(self.tracer.is_traced(b) and (b.ndim or b.dtype.kind not in "iu") for b in bounds):
            return NotImplemented  # (range() raises on those, as it will)

        def test(index, *values):
            return index < stop if step > 0 else index > stop

        def trip(index, *values):
            return (index + step, *body(index, *values))

        counted = replace(info, carried=(_INDEX, *info.carried))
        after = self.capture_while(test, trip, (start, *carried), counted)
        return after if after is NotImplemented else after[1:]

    def capture_cond(self, test, then, orelse, carried, info):
        """``if test: then(*carried) else: orelse(*carried)``: the carried values after it, or
        ``NotImplemented`` to run it in Python."""
        tracer = self.tracer
        test = _size_truth(test)
        if not tracer.is_traced(test) or test.ndim != 0:
            return NotImplemented
        passed = PassedThrough(tracer, tuple(carried), info)
        if passed:
            branches = (passed.body(then), passed.body(orelse))
            kept = passed.carried(carried)
            return passed.after(self.capture_cond(test, *branches, kept, passed.kept_info()))
        source = _source_of(info)
        if self._declined_early(info, source, "branch"):
            return NotImplemented
        self._check_branch_count()

        def attempt():
            return self._cond(test, (then, orelse), tuple(carried), info, source)

        return self._capturing(source, "branch", attempt)

    def _check_branch_count(self) -> None:
        """Refuse a function whose graph already holds ``MAX_BRANCHES`` branches (a loop
        unrolled at trace time, an ``if`` of the data a trip): its one program would take Numba
        seconds to compile, and tracing the trips left would take seconds more."""
        graph = self.tracer.graph
        if self.unroll_all or not self.is_top(graph):  # (unrolling was asked for)
            return
        if sum(isinstance(node.target, Cond) for node in graph.nodes) >= MAX_BRANCHES:
            python = {(n.source, n.kind): n.reason for n in self.notes if not n.rolled and n.reason}
            why = "; ".join(
                f"the {'`if`' if kind == 'branch' else 'loop'} at {source} ran in Python: {reason}"
                for (source, kind), reason in python.items()
            )
            self.tracer.refuse(
                "a function too large to compile",
                detail=f"more than {MAX_BRANCHES} branches, each an `if` of the data in a loop "
                f"unrolled at trace time ({why or 'the loop ran in Python'})",
                hint="keep its loops rolled (see why above and in explain())",
            )

    def capture_array(self, function, element, start, stop, step, info, args, kwargs):
        """``np.array([element(i) for i in range(...)])``: one loop (``comprehensions``)."""
        return capture_array(self, function, element, start, stop, step, info, args, kwargs)

    def capture_array_each(self, function, element, iterable, info, args, kwargs):
        """``np.array([element(x) for x in X])`` of a traced array's rows (or ``enumerate``,
        ``zip`` of them: ``_rows``): one loop, as over their positions."""
        rows = None if self.unroll_all else _rows(self.tracer, iterable)
        if rows is None:
            return NotImplemented
        count, item = rows
        row = lambda i: element(item(i))  # noqa: E731
        return capture_array(self, function, row, 0, count, 1, info, args, kwargs)

    def capture_sum(self, element, start, stop, step, info, args):
        """``sum(element(i) for i in range(...))``: one loop (``comprehensions``)."""
        return capture_sum(self, element, start, stop, step, info, args)

    def python_effect(self, reason: str, *reached, since=None) -> None:
        """A statement that may change Python state outside the function
        (``capture/effects.py``; ``reached``: the object it starts from and the steps to the
        one it changes): refused, so that it runs in Python on every call (a graph break), not
        once here; unless a traced array or a module is met on the way (the array changes in
        place: the tracer's), or it starts from a list argument (``function`` refuses changes
        to those) or, outside loops and branches, stays within objects the function made
        (``model = KNN(); model.fit(X)``: ``self.X = X`` changes the function's own state; a
        list of the module's that ``self.log`` holds is not its own); or, given ``since`` (a
        ``python_effect_mark``), unless nothing was recorded since."""
        if since is not None and since == self.python_effect_mark():
            return
        if reached:
            current, steps = reached
            if isinstance(current, TracedList):
                return
            own = self._made_here(current)  # (and each object after it made here, or a value)
            for kind, key in (*steps, (None, None)):
                if isinstance(current, _NOT_PYTHON_STATE):
                    return
                if kind is None:
                    break
                try:
                    current = getattr(current, key) if kind == "attr" else current[key]
                except Exception:  # noqa: BLE001 - (what eager would raise: it runs there)
                    break
                own = own and (self._made_here(current) or isinstance(current, _VALUES))
            if own:
                return
        what = f" {type(current).__name__}" if reached else ""
        self.tracer.refuse(
            f"a statement that {reason}{what}",
            hint="it runs in Python on every call (a graph break); a compiled function would "
            "run it once, while tracing",
        )

    def rerun_on(self, caught: tuple) -> None:
        """A ``try`` whose handlers only raise (``capture/effects.py``): the exception classes
        they catch, which the compiled call, raising one, answers by running again eagerly
        (``Tracer.reruns_on``; refused beside argument writes and prints at the end)."""
        classes = [c for item in caught for c in (item if isinstance(item, tuple) else (item,))]
        if not all(isinstance(c, type) and issubclass(c, Exception) for c in classes):
            self.tracer.refuse("a `try` whose handlers raise, catching more than exceptions")
        for caught_class in classes:
            self.tracer.reruns_on.setdefault(caught_class, user_source())

    def made_object(self, value) -> None:
        """``value`` was made by a class the function called (``runtime.call``)."""
        self._made[id(value)] = value

    def _made_here(self, value) -> bool:
        """Whether ``value`` is an object the function made, changed where its code runs once
        a call (not in a loop body or a branch traced once for every trip or either way: its
        changes there would be the trace's, not each trip's)."""
        return self._made.get(id(value)) is value and self.is_top(self.tracer.graph)

    def python_effect_mark(self) -> tuple:
        """What was recorded so far: the graph being traced and its size."""
        graph = self.tracer.graph
        return (id(graph), len(graph.nodes))

    def capture_not(self, value):
        """``not value`` of a traced scalar: its logical not; else NotImplemented (Python's)."""
        value = _size_truth(value)
        if not self.tracer.is_traced(value) or value.ndim != 0:
            return NotImplemented
        return np.logical_not(value)

    def capture_raise_if(self, test, make, negate: bool, built: bool = False):
        """``if test: raise make()`` on a traced scalar (``negate``: an ``assert``): a ``raise_unless``
        node raising the same error, when ``make()`` gives a built-in exception of one
        string argument or none, made without the data; else one raising ``RerunEagerly``
        (the call runs again eagerly, and makes the exception); NotImplemented (``bool()``)
        for a test that is not a traced scalar."""
        tracer = self.tracer
        test = _size_truth(test)
        if not tracer.is_traced(test) or test.ndim != 0:
            return NotImplemented
        made = len(tracer.texts.fields)
        raised = _static_exception(make, built)
        if raised is None:  # (made from the data, or not repeatable: the eager call makes it)
            tracer.texts.forget_since(made)
            raised = (ops.RerunEagerly.__name__, None)
        ok = _truth(test) if negate else np.logical_not(_truth(test))
        tracer.raise_unless(ok, *raised)
        return None

    def capture_bound(self, flag, name: str):
        """A read of ``name`` where a branch may have left it unbound, its ``flag`` a traced
        bool: a ``raise_unless`` node raising UnboundLocalError as Python does; else
        NotImplemented (Python's test)."""
        if not self.tracer.is_traced(flag) or flag.ndim != 0:
            return NotImplemented
        message = f"cannot access local variable '{name}' where it is not associated with a value"
        self.tracer.raise_unless(flag, "UnboundLocalError", message)
        return None

    def capture_while(self, test, body, carried, info):
        """``while test(*carried): carried = body(*carried)``: the carried values after it, or
        ``NotImplemented`` to run it in Python (its test is not a traced value before it)."""
        tracer = self.tracer
        source = _source_of(info)
        if self._declined_early(info, source, "while"):
            return NotImplemented
        graph = tracer.graph
        first_trip = self._first_trips.pop(id(body), None)  # (offered again after that trip)

        def attempt():
            mark = graph.insertion_anchor()
            first = test(*carried)  # (traced again into the loop's test graph)
            self._forget(graph.nodes_after(mark))
            _roll_back(graph, mark)
            if not (tracer.is_traced(first) and first.ndim == 0):
                if first_trip is None and isinstance(first, (bool, np.bool_)) and first:
                    self._first_trips[id(body)] = _FirstTrip(
                        body, mark, tuple(carried), len(self.journal), len(self.notes)
                    )
                return NotImplemented
            return self._while(test, body, tuple(carried), info, source, first_trip)

        return self._capturing(source, "while", attempt)

    def capture_counted_while(self, test, body, carried, info, since):
        """A while loop whose test holds on Python values that ran ``COUNTED_TRIPS`` trips
        in Python (``k = 0`` ... ``while k < kmax: ...; k += 1``, ``while t < T``): the trips
        left as one ``while_loop`` node, its Python numbers carried as traced values (weak,
        as Python's), when those trips recorded operations (since the ``python_effect_mark``
        ``since``) and its test on them is traced; else NotImplemented (it runs on in Python)."""
        source = _source_of(info)
        if since == self.python_effect_mark() or self._declined_early(info, source, "while"):
            return NotImplemented
        if not any(type(value) in (int, float) for value in carried):
            return NotImplemented

        def attempt():
            return self._while(test, body, tuple(carried), info, source)

        return self._capturing(source, "while", attempt)

    def _capturing(self, source, kind: str, capture):
        """``capture()``; when it declines, the nodes it recorded are gone (and the values it
        lifted into enclosing bodies), a note says why, and the result is NotImplemented."""
        graph = self.tracer.graph
        mark = self._mark()
        try:
            return capture()
        except Declined as declined:
            self._rewind(graph, mark)
            self.notes.append(LoopNote(source, False, str(declined), kind=kind))
            return NotImplemented

    def _declined_early(self, info, source, kind: str) -> bool:
        """Whether the construct changes Python objects, or made values that escaped it on an
        earlier trace (noted)."""
        effects = getattr(info, "effects", ())
        why = f"it {effects[0]}" if effects else ""
        if source in self.in_python:
            why = self.in_python[source]
        if why:
            self.notes.append(LoopNote(source, False, why, kind=kind))
        return bool(why)

    def _while(self, test, body, carried: tuple, info, source, first_trip=None) -> tuple:
        """The ``while_loop`` node from ``carried``; given the ``first_trip`` run before it (in
        Python, its test held on Python values), the node from before that trip instead when
        it computes that trip as eager did (``_FirstTrip``): its body is then traced once."""
        names = tuple(getattr(info, "carried", ()) or (f"carried_{i}" for i in range(len(carried))))
        after, frame, outputs, metas = self._while_node(test, body, carried, names, source)
        if first_trip is None or not first_trip.computed_by(self, frame, outputs, metas):
            return after
        graph = self.tracer.graph  # (the loop node just made goes with the trip)
        self._forget(graph.nodes_after(first_trip.mark))
        _roll_back(graph, first_trip.mark)
        self.undo_growth(first_trip.grown)
        del self.notes[first_trip.noted :]
        try:  # (the same body and test, traced on the same types: this cannot decline)
            return self._while_node(test, body, first_trip.carried, names, source, metas)[0]
        except Declined as declined:  # (its first trip is gone: no going back to it)
            raise RuntimeError(f"a while loop traced from its first trip: {declined}") from None

    def _while_node(self, test, body, carried: tuple, names: tuple, source, metas=None):
        """The ``while_loop`` node from ``carried`` (its carried types ``metas`` if known):
        ``(the values after it, the body's frame, its outputs, the carried types)``."""
        inits = [self._initial(value, name) for value, name in zip(carried, names)]
        frame, outputs, metas = self._settle_while(body, inits, names, source, metas)
        _separate_memory(frame, inits)
        carry = self.carry(frame, outputs, inits, metas, names)
        arguments = carry.arguments

        def predicate(*values):
            return (_truth(test(*values)),)

        checked, (flag,) = self.trace_graph(
            predicate, inits, metas, names, frozenset(), source, "test", returns=("test",)
        )
        if not isinstance(flag, Node) or written_placeholders(checked.graph):
            raise Declined("its test is not a traced value, or writes an array")
        checked.graph.output((flag,))
        operands = []
        lifted = len(carry.by_value)  # (a carried value may be the same node as a lifted one)
        for placeholder in checked.graph.placeholders:
            if placeholder in checked.outer:
                outer = checked.outer[placeholder]
                if outer not in arguments[lifted:]:  # the body's placeholders are the arguments
                    _add_placeholder(frame.graph, outer)
                    arguments.append(outer)
                operands.append(lifted + arguments[lifted:].index(outer))
            else:
                operands.append(checked.carried.index(placeholder))
        op = WhileLoop(frame.graph, checked.graph, tuple(operands), carry.carries, names, source)
        node = self.tracer.graph.call(op, tuple(arguments), {}, source=source)
        frame.graph.name, checked.graph.name = f"{node.name}_body", f"{node.name}_test"
        note = LoopNote(source, True, node=node.name, trips="data-dependent", carried=names)
        self.notes.append(note)
        return self.after_loop(node, carry, carried, frame, outputs), frame, outputs, metas

    def _settle_while(self, body, inits: list, names: tuple, source, metas=None) -> tuple:
        """Trace the body until the types of its carried values settle, as a loop's (from
        ``metas``, the types they settled on before, if given)."""
        env = self.tracer.graph.shape_env
        metas = metas or [value_meta(value) for value in inits]
        for _ in range(_WIDENING_ROUNDS):
            frame, outputs = self.trace_graph(
                body, inits, metas, names, frozenset(), source, "body"
            )
            unbound = [name for name, value in zip(names, outputs) if value is UNDEFINED]
            if unbound:
                raise Declined(f"its body leaves {unbound[0]!r} unbound")
            settled = [_widened(m, value_meta(o), n, env) for m, o, n in zip(metas, outputs, names)]
            if settled == metas:
                return frame, outputs, metas
            metas = settled
        raise Declined("the type of a carried value does not settle")

    def _cond(self, test, branches: tuple, carried: tuple, info, source) -> tuple:
        tracer = self.tracer
        names = tuple(getattr(info, "carried", ()) or (f"carried_{i}" for i in range(len(carried))))
        inits = [self._branch_initial(value, name) for value, name in zip(carried, names)]
        metas = [None if init is UNDEFINED else value_meta(init) for init in inits]
        traced = [
            self.trace_graph(run, inits, metas, names, frozenset(), source, role)
            for run, role in zip(branches, ("then", "else"))
        ]
        _fill_flagged(traced, names)
        predicate = test if test.dtype == bool else test != 0
        self._rerun_on_none(traced, names, predicate)
        kept = [i for i in range(len(names)) if all(o[i] is not UNDEFINED for _, o in traced)]
        outputs = [[outs[i] for i in kept] for _, outs in traced]
        for i, position in enumerate(kept):
            _agree(traced, outputs, i, names[position], tracer.graph.shape_env)
        written = [i for i in kept if outputs_written(traced, i)]
        node, items = self._node(predicate, traced, outputs, inits, kept, names, source)
        updates = [(inits[i], items[kept.index(i)]) for i in written]
        updates += list(zip(_updated_outer(traced), items[len(kept) :]))
        for target, item in updates:  # eager mode wrote these arrays themselves
            tracer.write(tracer.wrap(target), tracer.wrap(item), (Ellipsis,))
        tracer.chose(items)
        self.notes.append(
            LoopNote(
                source, True, node=node.name, carried=tuple(names[i] for i in kept), kind="branch"
            )
        )
        after = dict(zip(kept, items))
        return tuple(
            UNDEFINED if i not in after else carried[i] if i in written else tracer.wrap(after[i])
            for i in range(len(names))
        )

    def _rerun_on_none(self, traced: list, names: tuple, predicate) -> None:
        """Where one branch returns None and the other a number (``if``/``elif`` without an
        ``else`` in a function returning from each: Python's ``return None`` at its end), the
        None branch gives a zero of the other's type and the call runs again eagerly when the
        data take it (a ``raise_unless`` of ``RerunEagerly``): what eager does with the None
        the compiled call cannot tell. None on both sides declines."""
        for i, name in enumerate(names):
            sides = [outs[i] for _, outs in traced]
            if not any(side is None for side in sides):
                continue
            if sides.count(None) != 1 or any(side is UNDEFINED for side in sides):
                raise Declined(f"the branches return None as {name!r}")
            empty = sides.index(None)
            frame, outs = traced[empty]
            outs[i] = _zero_of(frame.graph, value_meta(sides[1 - empty]))
            if outs[i] is None:
                raise Declined(f"a branch returns None as {name!r}, the other an array")
            ok = np.logical_not(predicate) if empty == 0 else predicate
            self.tracer.raise_unless(ok, ops.RerunEagerly.__name__, None)

    def _branch_initial(self, value, name: str):
        """A carried value before the ``if`` (UNDEFINED when unbound there)."""
        return value if value is UNDEFINED else self._initial(value, name)

    def _node(self, predicate, traced, outputs, inits, kept, names, source):
        """The ``cond`` node, and its outputs as nodes (the kept names', then each outer
        array's a branch writes)."""
        tracer = self.tracer
        arguments = [tracer.operand(predicate)]
        position_of = {}
        for i, init in enumerate(inits):
            if init is not UNDEFINED:
                position_of[("carried", i)] = len(arguments)
                arguments.append(init)
        lifted_outer = []
        for frame, _ in traced:
            for outer in frame.outer.values():
                if outer not in lifted_outer:
                    lifted_outer.append(outer)
        for outer in lifted_outer:
            position_of[("lifted", outer)] = len(arguments)
            arguments.append(outer)
        updated = _updated_outer(traced)
        operands, carries = [], []
        for (frame, _), outs in zip(traced, outputs):
            operands.append(self._finish_branch(frame, outs, updated, position_of, inits))
        for k, i in enumerate(kept):
            if outputs_written(traced, i):
                carries.append((position_of[("carried", i)], k))
        for j, outer in enumerate(updated):
            carries.append((position_of[("lifted", outer)], len(kept) + j))
        _check_sharing(arguments, carries)
        op = Cond(
            traced[0][0].graph,
            traced[1][0].graph,
            operands[0],
            operands[1],
            tuple(carries),
            tuple(names[i] for i in kept) + tuple(o.name for o in updated),
            source,
        )
        node = tracer.graph.call(op, tuple(arguments), {}, source=source)
        op.then.name, op.orelse.name = f"{node.name}_then", f"{node.name}_else"
        return node, self._items(node, len(kept) + len(updated))

    def _finish_branch(self, frame, outs, updated, position_of, inits) -> tuple:
        """Give a branch a placeholder for every array either branch writes, and its outputs;
        the node arguments its placeholders receive."""
        graph: Graph = frame.graph
        lifted = {outer: placeholder for placeholder, outer in frame.outer.items()}
        for outer in updated:
            if outer not in lifted:  # written by the other branch: this one returns it unchanged
                lifted[outer] = graph.placeholder(outer.name, outer.meta)
                frame.outer[lifted[outer]] = outer
        self.tracer.regions.leaving(tuple(frame.outer.get(v, v) for v in outs))
        graph.output(tuple(outs) + tuple(lifted[outer] for outer in updated))
        operands = []
        for placeholder in graph.placeholders:
            if placeholder in frame.outer:
                operands.append(position_of[("lifted", frame.outer[placeholder])])
            else:
                operands.append(position_of[("carried", frame.carried.index(placeholder))])
        return tuple(operands)


def _fill_flagged(traced: list, names: tuple) -> None:
    """Where one branch leaves a name unbound that the other binds and the name has a flag
    (``capture/unbound.py``: a read checks it), that branch gives it a zero of the other's
    type (of a known shape), so that the name stays one value of the graph."""
    for i, name in enumerate(names):
        sides = [outs[i] for _, outs in traced]
        if flag_of(name) not in names or [side is UNDEFINED for side in sides].count(True) != 1:
            continue
        empty = sides.index(UNDEFINED)
        frame, outs = traced[empty]
        zero = _zero_of(frame.graph, value_meta(sides[1 - empty]))
        if zero is not None:
            outs[i] = zero


def _zero_of(graph: Graph, meta: TensorMeta):
    """A zero of ``meta``'s type: a literal for a scalar, a constant of ``graph`` for an array
    of a fixed shape; None for one whose shape has sizes."""
    if meta.scalar:
        return WEAK_ZERO[meta.dtype.kind] if meta.weak else meta.dtype.type(0)
    if not all(isinstance(size, int) for size in meta.shape):
        return None
    value = np.zeros(meta.shape, meta.dtype)
    return graph.constant(value, meta_of(value))


def outputs_written(traced: list, i: int) -> bool:
    """Whether some branch writes carried value ``i``'s placeholder in place (and returns it)."""
    for frame, outs in traced:
        placeholder = frame.carried[i]
        if placeholder is not None and placeholder in written_placeholders(frame.graph):
            if outs[i] is not placeholder:
                raise Declined("a branch both writes an array in place and rebinds its name")
            return True
    return False


def _updated_outer(traced: list) -> list:
    """The outer arrays some branch writes in place, in a fixed order."""
    found = []
    for frame, _ in traced:
        for placeholder in written_placeholders(frame.graph):
            outer = frame.outer.get(placeholder)
            if outer is not None and outer not in found:
                found.append(outer)
    return found


def _agree(traced: list, outputs: list, i: int, name: str, env) -> None:
    """Make output ``i`` of the two branches one type: the same dtype (a Python scalar takes
    the other branch's NumPy dtype) and shape; else decline."""
    values = [outs[i] for outs in outputs]
    metas = [value_meta(v) for v in values]
    if not _same_shape(metas[0], metas[1], name, env) or metas[0].scalar != metas[1].scalar:
        raise Declined(f"the branches give {name!r} different shapes")
    if len({m.map_sizes(env.simplify).shape for m in metas}) != 1:
        # (f64[min(s0,3),s1] and f64[3,s1]: sizes guarded equal, not equal as expressions:
        # the second branch's value takes the first's shape, as a reshape)
        if metas[1].scalar or not isinstance(values[1], Node):
            raise Declined(f"the branches give {name!r} shapes that agree at these sizes only")
        graph = traced[1][0].graph
        outputs[1][i] = graph.call(ops.RESHAPE, (values[1],), {"shape": metas[0].shape})
        metas[1] = value_meta(outputs[1][i])
    if metas[0].dtype == metas[1].dtype and metas[0].weak == metas[1].weak:
        return
    if name.startswith(RESULT) and metas[0].weak != metas[1].weak:
        # (the function's result: a Python number on one path, a NumPy one on the other)
        raise Declined(f"the branches return a Python and a NumPy scalar as {name!r}")
    strong = [m for m in metas if not m.weak]
    if len(strong) != 1:
        raise Declined(f"the branches give {name!r} different dtypes")
    target = strong[0]
    for (frame, _), outs, meta in zip(traced, outputs, metas):
        if meta.weak:
            outs[i] = _cast(frame.graph, outs[i], target)


def _add_placeholder(graph: Graph, outer: Node) -> None:
    """A placeholder of ``graph`` after its others, bound to ``outer`` (read by another
    graph of the op only)."""
    placeholders = graph.placeholders
    place = graph.inserting_after(placeholders[-1]) if placeholders else None
    with place or graph.inserting_before(graph.nodes[0]):
        graph.placeholder(outer.name, outer.meta)


# exceptions a compiled ``raise`` repeats: their class and message are all there is to them
_REPEATABLE = frozenset(
    {
        Exception,
        ArithmeticError,
        AssertionError,
        FloatingPointError,
        IndexError,
        KeyError,
        LookupError,
        NotImplementedError,
        OverflowError,
        RuntimeError,
        TypeError,
        ValueError,
        ZeroDivisionError,
    }
)


def _static_exception(make, built: bool) -> tuple[str, str | None] | None:
    """``(class name, message or None)`` of the exception ``make()`` gives, when it is one of
    ``_REPEATABLE`` with no argument or one string and nothing else set on it (what a compiled
    ``raise`` can repeat), made by calling its class (``built``) or named by its class (an
    instance made before, ``raise ERR``, is that object: not repeated); None otherwise, or
    when making it needs the data (a string formatted from a traced value)."""
    try:
        error = make()
    except Exception:  # noqa: BLE001 - (the statement then runs as Python would, and refuses)
        return None
    if isinstance(error, type) and error in _REPEATABLE:
        error = error()
    elif not built:
        return None
    if type(error) not in _REPEATABLE or vars(error):
        return None
    if error.args == ():
        return type(error).__name__, None
    if len(error.args) == 1 and type(error.args[0]) is str and not holds_marker(error.args[0]):
        return type(error).__name__, error.args[0]
    return None


def _size_truth(value):
    """``value != 0`` of a length the data decide (``if idx.size:``: a traced bool, unless its
    interval answers it); any other value as it is."""
    if isinstance(value, SymInt) and data_sizes_in(value.expr):
        return value != 0
    return value


def _truth(value):
    """A while loop's test as a bool (``while n:`` of a number: ``n != 0``)."""
    if hasattr(value, "dtype") and value.dtype != bool:
        return value != 0
    return value


def _cast(graph: Graph, value, meta: TensorMeta):
    """``value`` (a literal, or a node of ``graph``) as ``meta``'s dtype; a literal that dtype
    cannot hold exactly (``-1`` beside a ``uint8``) declines."""
    if not isinstance(value, Node):
        try:
            with np.errstate(all="ignore"):
                cast = meta.dtype.type(value)
        except (OverflowError, ValueError, TypeError):
            cast = None
        if cast is None or cast != value:
            raise Declined(f"a branch gives {value!r}, which the other's {meta.dtype} cannot hold")
        return cast
    return graph.call(ops.ASTYPE, (value,), {"dtype": meta.dtype})


def _check_sharing(arguments: list, carries: list) -> None:
    """Decline when an array a branch writes shares memory with another argument (each
    placeholder is separate memory to the branch's own alias analysis)."""
    if shared_with_written(arguments, {position for position, _ in carries}):
        raise Declined("an array a branch writes shares memory with another value it reads")


@dataclass
class _FirstTrip:
    """A while loop's first trip, run in Python because its test held on Python values
    (``udiff = 1`` before ``while udiff > tol:``), the loop then offered again: the graph's
    insertion point before the trip (``mark``), the carried values then, and the lengths of
    the list journal and of the notes. When the loop is captured from its second trip, its
    body traced once more from before the first computes that trip as eager did if each carried
    value is of its settled type there, or is a Python number the body does not read (its
    test alone does) whose value that type keeps, and no two of them, nor one of them and a
    value the body reads from outside, share memory (the trip stays in Python otherwise)."""

    body: object  # (kept: its id keys the entry)
    mark: Node | None
    carried: tuple
    grown: int
    noted: int

    def computed_by(self, handler, frame, outputs: list, metas: list) -> bool:
        """Whether the loop's body graph (``frame``, its ``outputs``, its carried types
        ``metas``) computes this trip as eager did."""
        tracer = handler.tracer
        if not all(_scalar_or_traced(tracer, value) for value in self.carried):
            return False
        try:
            _separate_memory(frame, [tracer.operand(value) for value in self.carried])
        except Declined:
            return False
        for value, placeholder, output, meta in zip(self.carried, frame.carried, outputs, metas):
            scalar = not tracer.is_traced(value)
            if value_meta(tracer.operand(value)) == meta:
                continue
            if not scalar or placeholder is None or placeholder.users or output is placeholder:
                return False
            if handler._cast(value, meta) != value:
                return False
        return True


def _scalar_or_traced(tracer, value) -> bool:
    """Whether ``value`` is a number or a traced value (not unbound, not another object)."""
    return isinstance(value, (bool, int, float, complex, np.generic)) or tracer.is_traced(value)


def _separate_memory(frame, inits: list) -> None:
    """Decline a while loop whose carried values (``inits``) share memory with another value
    its body (``frame``) reads, when the body writes either: a while loop carries by value, and
    its body's alias analysis takes each placeholder as separate memory, so a write through one
    would be missed through the other (``x = a`` then ``a[:] = x * 0.5``: it runs in Python,
    and is offered again from its next trip)."""
    placeholders = frame.graph.placeholders
    values = [
        frame.outer[p] if p in frame.outer else inits[frame.carried.index(p)] for p in placeholders
    ]
    written = {placeholders.index(p) for p in written_placeholders(frame.graph)}
    for pair in shared_with_written(values, written):
        what = " and ".join(repr(placeholders[k].name) for k in pair)
        raise Declined(f"{what} share memory that the loop writes")
