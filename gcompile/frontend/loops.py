"""Tracing a captured loop: its body traced once, as the sub-graph of a ``for_range`` node.

The capture front-end (``gcompile/capture``) rewrites ``for i in range(a, b, c): BODY`` into a
call handing the tracer the body as a function ``body(i, *carried) -> carried`` (the names the
loop rebinds and reads later). ``LoopTracer`` is that handler. It traces the body once, with a
symbolic index (``ShapeEnv.loop_symbol``) into a graph of its own:

* carried values become the body's first placeholders; a value whose type changes in the first
  iteration (``s = 0`` then ``s += x[i]``) is traced again with the type it settles on, and its
  initial value is cast to it;
* arrays and scalars of the enclosing graph the body reads are *lifted*: a placeholder stands
  for the array owning their memory (views are replayed on it, so aliasing stays visible), and
  the loop node reads the outer value;
* an array the body writes in place (``A[i, j] = v``, ``x += 1``) is carried as well: its
  placeholder's final state is a body output, and after the loop the enclosing graph writes the
  loop's result into the array, so eager mode's in-place semantics hold;
* a carried array sharing memory with another value of the body (``u = U[1:]`` carried, ``U``
  read) is carried by reference, as a view of that memory's one placeholder, so that the body
  sees its own writes through every alias (``_sharing_carried``).

The handler declines (returns ``NotImplemented``: the loop then runs in Python, i.e. is
unrolled, as before) when the loop cannot be kept rolled: bounds computed from data, a
question about the index that the ranges cannot answer (``if i == 0``, an index that may be
negative), a carried value that is not a number or an array, or one whose shape changes, a
body that changes Python objects (``out.append``: capture's ``effects``) or raises on a traced
value, a carried array rebound while it shares memory the body writes. Every
decision is a ``LoopNote`` on the graph (``graph.notes.loops``), which ``explain()`` shows.

The loop node's carried values, and those after it, are ``carried``'s; Python's builtins on
traced values (``len``, ``max``, ``int``), which capture hands the same handler, ``builtins``'s.
"""

from __future__ import annotations

import collections
import contextlib
from dataclasses import dataclass, field, replace
from typing import Any, Callable

import numpy as np

from ..capture import UNDEFINED
from ..capture.exits import BREAK
from ..capture.returns import RESULT
from ..capture.runtime import Enumerated, Repeated, Zipped
from ..errors import UnsupportedError, refusal_from
from ..ir.alias import alias_chain, memories, shared_with_written, written_placeholders
from ..ir.control import ForRange, LoopNote
from ..ir.graph import Graph, Node
from ..ir.meta import TensorMeta
from ..ir.shape_env import IndexQuestion, SymbolicError, trip_count
from ..ir.symbolic import free_symbols, is_int, prove_nonnegative, sym_max, sym_min
from .builtins import PythonBuiltins
from .carried import CarriedValues, value_meta
from .complex_parts import ComplexParts
from .declines import Declined, LoopEscape
from .list_rows import GrowingList, LoopRows
from .loop_ranges import RangeLoops
from .number_lists import NumberList
from .passed_through import PassedThrough
from .symint import SymInt

_WIDENING_ROUNDS = 4  # a carried type settles after one or two iterations (weak -> strong)
_MAX_PIECES = 4  # a loop's range is split in at most this many pieces (``if i == 0``, ``i < n-1``)
# ... and only when no enclosing loop is split: nested splits copy the innermost body once per
# combination of pieces (an erosion's border tests, four loops deep: 81 copies, 9 s of Numba)
_MAX_SPLIT_DEPTH = 1
_FEW_TRIPS = 8  # ... unless it has at most this many trips, known at trace time


class _BecomesArray(Declined):
    """A carried number becomes an array on a trip (``M = 0``, then ``M = M + (x - M) / k``):
    the loop runs once more from its second trip, its first traced before it."""


class _Split(Exception):
    """The body asked a question on its own index whose answer changes at ``points``: the loop
    runs as one loop per piece of its range (``points`` None: no piece answers it)."""

    def __init__(self, points: list, question: str):
        super().__init__(question)
        self.points = points


@dataclass
class _Frame:
    """A body being traced: its graph, and the outer values lifted into it."""

    graph: Graph
    parent: "_Frame | None"
    lifted: dict = field(default_factory=dict)  # outer node -> its placeholder here
    outer: dict = field(default_factory=dict)  # placeholder -> the outer node it stands for
    parts: ComplexParts | None = None
    constants: dict = field(default_factory=dict)
    # per carried value: its placeholder, or (carried by reference) its view of lifted memory
    carried: list = field(default_factory=list)
    rows: LoopRows | None = None  # a for loop's appends to lists made outside it
    index: SymInt | None = None  # a for loop's index
    by_reference: frozenset = frozenset()  # the positions of the latter


class LoopTracer(PythonBuiltins, CarriedValues, RangeLoops):
    """The capture front-end's loop handler for one ``Tracer`` (see the module docstring)."""

    def __init__(self, tracer: Any):
        self.tracer = tracer
        self.frame: _Frame | None = None
        self.notes: list[LoopNote] = []
        self.unroll_all = False  # option loops="unroll": every loop runs in Python (unrolled)
        self.in_python: dict = {}  # loops whose body values escape (LoopEscape): source -> why
        self.consumed: dict = {}  # arrays loops took as buffers (``check_consumed``) -> (loop, name)
        self.list_reads: list = []  # GrowingLists read inside bodies (``LoopRows.check_reads``)
        self.journal: list = []  # GrowingLists in the order they grew (undone when declined)
        self._top = tracer.graph
        self._bodies: dict = {}  # each body graph traced -> its loop's source
        self._split_depth = 0  # the enclosing loops whose ranges are split
        self.index_values = False  # the user's questions on loop indices answered per trip

    # -- the handler protocol ---------------------------------------------------------------------
    def capture_range(self, body, start, stop, step, carried, info, reverse=False):
        """``for i in range(start, stop, step)`` (reversed if ``reverse``): the carried values
        after the loop, or ``NotImplemented`` to run it in Python."""
        passed = PassedThrough(self.tracer, tuple(carried), info)
        if passed:
            kept = passed.carried(carried)
            bounds = (start, stop, step)
            after = self.capture_range(
                passed.body(body, 1), *bounds, kept, passed.kept_info(), reverse
            )
            return passed.after(after)
        source = _source_of(info)
        if self.unroll_all:
            return NotImplemented
        effects = getattr(info, "effects", ())
        if effects:
            reason = f"its body {effects[0]}, which a loop traced once would do once"
            self.notes.append(LoopNote(source, False, reason))
            return NotImplemented
        if source in self.in_python:
            self.notes.append(LoopNote(source, False, self.in_python[source]))
            return NotImplemented
        if not reverse and self._positive_size(step):
            return self._stepped(body, start, stop, step, carried, info)
        graph = self.tracer.graph
        mark = self._mark()
        try:
            bounds = self.range_bounds(start, stop, step, reverse)
            carried, bounds = self._peeled(body, bounds, tuple(carried), info, source)
            if bounds is None:
                return carried
            peeled = self._mark()
            try:
                return self._capture(body, bounds, carried, info, source)
            except _BecomesArray as becomes:
                if not self._surely_runs(bounds, str(becomes)):
                    raise Declined(str(becomes)) from None
                self._rewind(graph, peeled)
                reason = f"its first trip traced before it: {becomes}"
                carried, bounds = self._peel(body, bounds, carried, source, reason)
                return (
                    carried
                    if bounds is None
                    else self._capture(body, bounds, carried, info, source)
                )
        except Declined as declined:
            self._rewind(graph, mark)  # (it runs in Python from its start: nothing stays)
            self.notes.append(LoopNote(source, False, str(declined)))
            return NotImplemented

    def _surely_runs(self, bounds: tuple, why: str) -> bool:
        """Whether the loop over ``bounds`` runs at least once, asked of its sizes (guarded)
        or, where an enclosing loop's index decides it, of that loop, whose range is then
        split (back substitution: ``for col in range(row + 1, n)`` runs on every row but the
        last)."""
        trips = trip_count(*bounds)
        if prove_nonnegative(trips - 1) is True:
            return True
        env = self.tracer.graph.shape_env
        try:
            return env.decide(">=", trips, 1, f"whether a loop runs ({why})")
        except IndexQuestion:
            raise  # (the enclosing loop splits its range where the answer changes)
        except SymbolicError:
            return False

    def _mark(self) -> tuple:
        """Where the trace is: its graph's last node, its journal's and its texts' lengths."""
        texts = len(self.tracer.texts.fields)
        return self.tracer.graph.insertion_anchor(), len(self.journal), texts

    def _rewind(self, graph: Graph, mark: tuple) -> None:
        """Take back what tracing a loop or branch recorded since ``mark`` (``_mark``): its
        nodes, the placeholders lifted for it into enclosing bodies, lists grown, strings
        formatted from its values (a ``print`` of them is traced again, or runs in Python)."""
        anchor, grown, texts = mark
        self._forget(graph.nodes_after(anchor))
        _roll_back(graph, anchor)
        self.undo_growth(grown)
        self.tracer.texts.forget_since(texts)

    def capture_each(self, body, iterable, carried, info):
        """``for x in iterable``: a traced array is looped over its first axis, and so are
        ``enumerate`` and ``zip`` of traced arrays (``_rows``)."""
        rows = None if self.unroll_all else _rows(self.tracer, iterable)
        if rows is None:
            return NotImplemented
        count, item = rows
        return self.capture_range(
            lambda i, *values: body(item(i), *values), 0, count, 1, carried, info
        )

    def growing_list(self, items: list) -> GrowingList:
        """A list the function appends to in its loops (``list_rows``)."""
        return GrowingList(self, items)

    def capture_append(self, items, value):
        """``items.append(value)``: a row of a buffer when a rolled loop appends to a list
        made outside it (``list_rows``); else NotImplemented (Python's append)."""
        if not isinstance(items, GrowingList) or items.graph is self.tracer.graph:
            return NotImplemented
        frame = self.frame
        if frame is None:  # (a list made in a loop's body, grown after it)
            raise LoopEscape(self._bodies.get(items.graph))
        parent = frame.parent.graph if frame.parent is not None else self._top
        if frame.rows is None or items.graph is not parent:
            raise Declined(
                "it appends to a list in a branch, a while loop, or a loop nested in the one "
                "enclosing the list"
            )
        frame.rows.append(items, value, frame.graph, frame.index)
        return None

    def undo_growth(self, mark: int) -> None:
        """Take back what lists grew since the journal had ``mark`` entries."""
        for items in reversed(self.journal[mark:]):
            items.undo()
        del self.journal[mark:]

    # -- lifting ------------------------------------------------------------------------------------
    def lift(self, node: Node) -> Node:
        """``node`` of an enclosing graph as a value of the body being traced."""
        if node.graph in self._bodies and not self.encloses(node.graph):
            raise LoopEscape(self._bodies[node.graph])
        root, views = alias_chain(node)
        value = self._lift_root(root, self.frame)
        graph = self.frame.graph
        for view in views:
            value = graph.call(view.target, (value,), view.kwargs, source=view.source)
        return value

    def _forget(self, erased: list) -> None:
        """Drop the lifted values among ``erased`` nodes from the bodies being traced, and the
        constants the tracer made for them (a loop's first trip, traced before it and rolled
        back with it, made them in the enclosing graph)."""
        erased = set(erased)
        tracer = self.tracer
        tracer._constants = {k: v for k, v in tracer._constants.items() if v[1] not in erased}
        tracer.regions.forget(erased)
        self.consumed = {k: v for k, v in self.consumed.items() if v[0] not in erased}
        frame = self.frame
        while frame is not None:
            frame.lifted = {k: v for k, v in frame.lifted.items() if v not in erased}
            frame.outer = {k: v for k, v in frame.outer.items() if k not in erased}
            frame = frame.parent

    def is_top(self, graph: Graph) -> bool:
        """Whether ``graph`` is the function's own (not a loop body's or a branch's)."""
        return graph is self._top

    def encloses(self, graph: Graph) -> bool:
        """Whether ``graph`` is the body being traced or one enclosing it."""
        frame = self.frame
        while frame is not None and frame.graph is not graph:
            frame = frame.parent
        return frame is not None or graph is self._top

    def _lift_root(self, root: Node, frame: _Frame) -> Node:
        if frame is None or root.graph is frame.graph:
            return root
        outer = self._lift_root(root, frame.parent)
        if outer not in frame.lifted:
            placeholder = frame.graph.placeholder(root.name, root.meta)
            frame.lifted[outer], frame.outer[placeholder] = placeholder, outer
            name = self.tracer.argument_of.get(outer)
            if name is not None:
                self.tracer.argument_of[placeholder] = name
        return frame.lifted[outer]

    # -- one loop -----------------------------------------------------------------------------------
    def _capture(self, body: Callable, bounds: tuple, carried: tuple, info, source, pieces=1):
        """The loop over ``bounds`` as ``for_range`` nodes: one, or one per piece of its range
        where the body's answers to questions on its index differ (index-set splitting)."""
        try:
            return self._capture_piece(body, bounds, carried, info, source)
        except _Split as split:
            few = trip_count(*bounds)  # (a few trips known now: unrolled, as before, is faster)
            asking = not (is_int(few) and few <= _FEW_TRIPS) and not self.index_values
            unsplit = split.points is None  # (``i % 30 == 0``: no piece of the range answers)
            if asking and (self._split_depth >= _MAX_SPLIT_DEPTH or unsplit):
                asked = self._asking_per_trip(body, bounds, carried, info, source, split)
                if asked is not NotImplemented:
                    return asked
            if unsplit:
                reason = f"a question about the loop index has no answer for every trip: {split}"
                raise Declined(reason) from None
            if pieces >= _MAX_PIECES or abs(bounds[2]) != 1:
                reason = f"a question about the loop index changes from trip to trip: {split}"
                raise Declined(reason) from None
            where = ", ".join(str(point) for point in split.points)
            self.notes.append(LoopNote(source, True, reason=f"range split at {where}: {split}"))
            self._split_depth += 1
            try:
                for part in _pieces(bounds, split.points):
                    carried = self._capture(body, part, carried, info, source, pieces + 1)
            finally:
                self._split_depth -= 1
            return carried

    def per_trip_positions(self, index: Any) -> Any:
        """``index`` with its positions of loop indices traced values (checked on each trip,
        ``element``) while questions on loop indices are asked per trip, else ``index`` itself."""
        if not self.index_values:
            return index
        items = index if isinstance(index, tuple) else (index,)
        env = self.tracer.graph.shape_env
        moved = tuple(
            self.tracer.symint_value(item.expr)
            if isinstance(item, SymInt) and free_symbols(item.expr) & set(env.loops)
            else item
            for item in items
        )
        if all(new is item for new, item in zip(moved, items)):
            return index
        return moved if isinstance(index, tuple) else moved[0]

    def _asking_per_trip(self, body: Callable, bounds: tuple, carried: tuple, info, source, split):
        """The loop over ``bounds`` whole, rather than its range split inside a split loop: the
        user's questions on loop indices (``if i + ii < 2: continue``) traced comparisons,
        branched on per trip, and elements at positions of loop indices read with checks per
        trip (``element``); NotImplemented when a question still needs the split, or Python
        a bool (``0 <= j + d < w``, ``abs(j - k)``): nothing it traced stays."""
        graph = self.tracer.graph
        mark = self._mark()
        self.index_values = True
        try:
            after = self._capture_piece(body, bounds, carried, info, source)
        except _BecomesArray:  # (its first trip peeled, the loop is asked again)
            self._rewind(graph, mark)
            raise
        except (_Split, Declined, UnsupportedError):
            self._rewind(graph, mark)
            return NotImplemented
        finally:
            self.index_values = False
        self.notes.append(LoopNote(source, True, reason=f"asked on each trip: {split}"))
        return after

    def _capture_piece(self, body: Callable, bounds: tuple, carried: tuple, info, source):
        start, stop, step = bounds
        trips = trip_count(start, stop, step)
        if prove_nonnegative(-trips) is True:  # the loop never runs
            self.notes.append(LoopNote(source, True, node="(none)", trips=0))
            return carried
        env = self.tracer.graph.shape_env
        index = env.loop_symbol(start, stop, step)
        names = tuple(getattr(info, "carried", ()) or (f"carried_{i}" for i in range(len(carried))))
        inits = [self._initial(value, name) for value, name in zip(carried, names)]
        by_reference: frozenset = frozenset()
        rows = LoopRows(self.tracer, bounds, source)
        while True:  # grows by_reference at most once per carried value
            frame, outputs, metas = self._settle(
                body, index, inits, names, by_reference, source, rows
            )
            if rows.allocate():  # (appends seen: traced again, writing their buffers)
                continue
            sharing = _sharing_carried(frame, inits, outputs, names)
            if not sharing:
                break
            by_reference |= sharing
        rows.check_writes(frame, outputs)
        after = self._finish(
            frame, outputs, index, bounds, carried, inits, metas, names, source, trips
        )
        rows.extend(frame, inits, outputs, after)
        return after

    def _settle(self, body: Callable, index, inits: list, names: tuple, by_reference, source, rows):
        """Trace the body until the types of its carried values settle: ``(frame, outputs,
        metas)``. Carried values in ``by_reference`` are not placeholders but views of the
        memory they share with other values of the body (see ``_sharing_carried``)."""
        metas = [value_meta(value) for value in inits]
        for _ in range(_WIDENING_ROUNDS):
            frame, outputs = self._trace_body(
                body, index, inits, metas, names, by_reference, source, rows
            )
            env = self.tracer.graph.shape_env
            settled = [
                meta if i in by_reference else _widened(meta, value_meta(out), name, env)
                for i, (meta, out, name) in enumerate(zip(metas, outputs, names))
            ]
            if settled == metas:
                return frame, outputs, metas
            metas = settled
        raise Declined("the type of a carried value does not settle")

    def _trace_body(self, body: Callable, index, inits, metas, names, by_reference, source, rows):
        """Trace ``body`` once into a new graph: ``(frame, output nodes or literals)``."""
        tracer = self.tracer
        rows.begin(len(self.list_reads))

        def run(*values):
            self.frame.rows, self.frame.index = rows, SymInt(tracer, index)
            return body(self.frame.index, *values)

        try:
            frame, outputs = self.trace_graph(
                run, inits, metas, names, by_reference, source, "body"
            )
            rows.check_reads(self.list_reads)
        except IndexQuestion as question:
            if index not in free_symbols(question.expr):
                raise  # a question on an enclosing loop's index: that loop splits
            raise _Split(_change_point(question, index), str(question)) from None
        unbound = [name for name, value in zip(names, outputs) if value is UNDEFINED]
        if unbound:
            raise Declined(f"its body leaves {unbound[0]!r} unbound")
        return frame, outputs

    def trace_graph(
        self, run: Callable, inits, metas, names, by_reference, source, role: str, returns=None
    ):
        """Trace ``run(*carried)`` (a loop's body, a branch, a while loop's test) once into a
        new graph, the carried values its first placeholders (none for a metas entry of None: a
        value unbound there, passed as UNDEFINED): ``(frame, output nodes or literals, or
        UNDEFINED)``, ``run`` returning the carried values, or the values named ``returns``.
        IndexQuestion passes through (the loop asking it splits); other failures decline."""
        tracer = self.tracer
        outer_graph = tracer.graph
        graph = Graph(role, outer_graph.shape_env)
        graph.repeated = role == "body" or outer_graph.repeated  # (a branch in a loop body)
        self._bodies[graph] = source  # (a value of it used after the loop: ``LoopEscape``)
        frame = _Frame(graph, self.frame, parts=ComplexParts(tracer), by_reference=by_reference)
        frame.carried = [
            None if i in by_reference or m is None else graph.placeholder(n, m)
            for i, (n, m) in enumerate(zip(names, metas))
        ]
        saved = (tracer.graph, tracer.parts, tracer._constants, self.frame)
        tracer.graph, tracer.parts, tracer._constants, self.frame = graph, frame.parts, {}, frame
        outer_graph.shape_env.in_body += 1
        containers = _Containers(run)
        try:
            for i in by_reference:  # after the carried placeholders: lifted ones follow them
                frame.carried[i] = self.lift(inits[i])
            given = [UNDEFINED if c is None else tracer.wrap(c) for c in frame.carried]
            with containers.kept(role):
                results = run(*given)
            returns = names if returns is None else returns
            if len(results) != len(returns):
                raise Declined(f"the {role} returned a different number of carried values")
            outputs = [_output(tracer, v, name, role) for v, name in zip(results, returns)]
            _check_by_reference(frame, outputs, names, by_reference)
        except IndexQuestion:
            raise
        except SymbolicError as error:
            raise Declined(
                f"a question about the loop index has no answer for every trip: {error}"
            ) from None
        except UnsupportedError as error:
            raise Declined(error.construct) from None
        except (Declined, RecursionError):
            raise
        except SystemExit:  # (a branch never taken that calls sys.exit(): Python runs it)
            raise Declined(f"its {role} exits the program (sys.exit)") from None
        except Exception as error:  # the user's code met a traced value it cannot take
            refusal = refusal_from(error)
            if refusal is None:
                raise
            raise Declined(f"{refusal.construct} ({refusal.detail})") from None
        finally:
            outer_graph.shape_env.in_body -= 1
            tracer.graph, tracer.parts, tracer._constants, self.frame = saved
        return frame, outputs

    def _finish(self, frame, outputs, index, bounds, carried, inits, metas, names, source, trips):
        """Make the ``for_range`` node; the carried values the user's code sees after it."""
        carry = self.carry(frame, outputs, inits, metas, names)
        by_value = carry.by_value
        kept = tuple(names[i] for i in by_value)
        flag = next((i for i, name in enumerate(kept) if name.startswith(BREAK)), None)
        op = ForRange(frame.graph, index, carry.carries, kept, source, exit=flag)
        start, stop, step = bounds
        kwargs = {"start": start, "stop": stop, "step": step}
        node = self.tracer.graph.call(op, tuple(carry.arguments), kwargs, source=source)
        frame.graph.name = f"{node.name}_body"
        self.notes.append(LoopNote(source, True, node=node.name, trips=trips, carried=names))
        return self.after_loop(node, carry, carried, frame, outputs)


def _rows(tracer, iterable) -> tuple | None:
    """``(count, item)`` of an iterable a loop may run over by index: a traced array's rows,
    ``enumerate`` and ``zip`` of those, a counted ``itertools.repeat`` (``item(i)`` the i-th
    item); None for any other."""
    if isinstance(iterable, Enumerated):
        inner = _rows(tracer, iterable.iterable)
        if inner is None or not isinstance(iterable.start, int):
            return None
        count, item = inner
        return count, lambda i: (i + iterable.start, item(i))
    if isinstance(iterable, Zipped):
        parts = [_rows(tracer, part) for part in iterable.iterables]
        if not parts or None in parts:
            return None
        counts = [count for count, _ in parts]
        if iterable.strict and any(count != counts[0] for count in counts):
            return None  # (Python raises at the end of the shortest)
        return min(counts), lambda i: tuple(item(i) for _, item in parts)
    if isinstance(iterable, Repeated) and isinstance(iterable.times, (int, SymInt)):
        return iterable.times, lambda i: iterable.value
    if tracer.is_traced(iterable) and iterable.ndim > 0:
        return iterable.shape[0], lambda i: iterable[i]
    return None


def _roll_back(graph: Graph, mark: Node | None) -> None:
    """Remove the nodes recorded after ``mark`` (``Graph.insertion_anchor`` then), newest first
    (a value inserted earlier since, a gather made where ``x[m]`` was written, stays)."""
    for node in graph.nodes_after(mark)[::-1]:
        graph.erase(node)


def _change_point(question: IndexQuestion, index) -> list | None:
    """Where the answer to ``question`` changes along ``index``, ascending: the first index
    value of each new piece (``k < n - 1``: ``[n - 1]``; ``k == 0``: ``[0, 1]``); None unless
    the question is ``±index + rest`` with ``rest`` free of ``index``."""
    expr = question.expr
    terms = dict(expr.terms) if hasattr(expr, "terms") else {expr: 1}
    coefficient = terms.get(index, 0)
    rest = expr - coefficient * index
    if coefficient not in (1, -1) or index in free_symbols(rest):
        return None
    at = -rest if coefficient == 1 else rest  # where ``expr`` is 0
    if question.kind == "==":
        return [at, at + 1]
    return [at] if coefficient == 1 else [at + 1]  # index >= at, or index <= at


def _pieces(bounds: tuple, points: list) -> list:
    """``bounds`` (step 1 or -1) cut where the index reaches each of ``points`` (clamped to
    the range); a loop going down meets them in the opposite order."""
    start, stop, step = bounds
    if step == 1:
        cuts = [sym_min(sym_max(point, start), stop) for point in points]
    else:  # first the indices >= the last point, going down
        cuts = [sym_min(sym_max(point - 1, stop), start) for point in reversed(points)]
    ends = [start, *cuts, stop]
    return [(ends[i], ends[i + 1], step) for i in range(len(ends) - 1)]


def _source_of(info) -> str | None:
    filename, line = getattr(info, "filename", None), getattr(info, "line", None)
    return f"{filename}:{line}" if filename and line else None


_BRANCHES = ("then", "else")


def _output(tracer, value, name: str, role: str = "body"):
    """A carried value the body returns, as an output of the body graph (UNDEFINED: a branch
    left the name unbound; None: a branch returns None, ``branches._rerun_on_none``)."""
    if value is UNDEFINED or value is None and role in _BRANCHES and name.startswith(RESULT):
        return value
    if tracer.is_traced(value) or isinstance(value, SymInt):
        return tracer.operand(value)
    if isinstance(value, (bool, int, float, complex, np.generic)):
        return value
    raise Declined(f"the loop makes {name!r} a {type(value).__name__} (not a number or array)")


def _widened(before: TensorMeta, after: TensorMeta, name: str, env) -> TensorMeta:
    """The carried type after an iteration: ``after``'s dtype, the shape kept, the layout kept
    only if unchanged. Sizes that differ as expressions but agree at the traced sizes are
    taken as equal, guarded (``x = A @ x`` with ``A`` square: ``x``'s size is ``A``'s)."""
    if not _same_shape(before, after, name, env) or before.scalar != after.scalar:
        what = f"{name!r} changes shape in the loop ({before.short()} to {after.short()})"
        # (a Python number becoming an array, or a 0-d array a NumPy scalar, ``b - a * g``:
        # from the second trip on it stays what it became)
        settles = before.scalar and before.weak or not before.ndim and after.scalar
        raise (_BecomesArray if settles else Declined)(what)
    before, after = before.map_sizes(env.simplify), after.map_sizes(env.simplify)
    if before == after:
        return before
    layout = before.layout if before.layout == after.layout else "A"
    # the shape in the initial value's form (the placeholder is bound to that value)
    return replace(
        after, shape=before.shape, layout=layout, writeable=before.writeable and after.writeable
    )


def _same_shape(before: TensorMeta, after: TensorMeta, name: str, env) -> bool:
    if before.ndim != after.ndim:
        return False
    reason = f"the shape of the carried {name!r}"
    try:
        return all(
            b == a or (env.hint(b) == env.hint(a) and env.decide("==", b, a, reason))
            for b, a in zip(before.shape, after.shape)
        )
    except SymbolicError:  # (a size that changes from trip to trip)
        return False


def _sharing_carried(frame: _Frame, inits: list, outputs: list, names: tuple) -> frozenset:
    """The carried values that must be carried by reference: those sharing memory with
    another value of the body when the body writes either.

    The invariant this keeps (``verify`` checks it on every loop): **no argument of a loop that
    its body writes shares memory with another argument.** Each placeholder is separate memory
    to the body's own alias analysis, so a write through one would not be seen through the
    other (``u = U[1:]`` carried, ``U`` read: the next trip would read ``U`` stale). Lifted
    values share one placeholder per memory root (their views are replayed on it). A carried
    array that the body keeps (writes in place, or leaves alone) is the same memory on every
    trip: it becomes a view of that lifted root. One that the body rebinds is that memory on
    the first trip only: the loop is declined (it runs in Python)."""
    placeholders = frame.graph.placeholders
    values = [
        frame.outer[p] if p in frame.outer else inits[frame.carried.index(p)] for p in placeholders
    ]
    written_at = written_placeholders(frame.graph)
    written = {placeholders.index(p) for p in written_at}
    found = set()
    for pair in shared_with_written(values, written):
        carried = [
            frame.carried.index(placeholders[k]) for k in pair if placeholders[k] in frame.carried
        ]
        what = " and ".join(repr(placeholders[k].name) for k in pair)
        if not carried:
            raise Declined(f"{what} share memory that the loop writes")
        for i in carried:
            if outputs[i] is not frame.carried[i]:
                raise Declined(
                    f"{what} share memory that the loop writes, and it rebinds {names[i]!r} "
                    "(that memory on the first trip only)"
                )
            found.add(i)
    for i, output in enumerate(outputs):  # (what the next trip's carried value may share)
        if i in found | frame.by_reference or not isinstance(output, Node) or output.meta.scalar:
            continue  # (one carried by reference stays its memory: ``_check_by_reference``)
        others = {m for m in memories(output) if m in placeholders and m is not frame.carried[i]}
        if others - set(frame.carried) and (others | {frame.carried[i]}) & written_at:
            raise Declined(
                f"it rebinds {names[i]!r} to memory the loop writes (that memory from the "
                "second trip on)"
            )
    return frozenset(found)


class _Containers:
    """The lists, dicts, sets and deques a body or branch function reads through its closure
    (and the closures of the functions there: the user's body inside the tracer's wrapper), and
    those they hold, with their items: a trace that changes one (``s[0:2] = s[1:2] + s[0:1]``
    of a local list, a memo a helper fills) declines, since tracing once would change it once
    where Python changes it on every trip, and leaves the ones it changed as they were."""

    KINDS = (list, dict, set, collections.deque)
    SCANNED = 4096  # the most items of one whose own containers are looked at

    def __init__(self, function: Callable):
        self.saved: list = []
        seen: set = set()
        pending = [(function, 0)]
        while pending:
            value, depth = pending.pop()
            if id(value) in seen or depth > 3:
                continue
            seen.add(id(value))
            if isinstance(value, self.KINDS) and not isinstance(value, (GrowingList, NumberList)):
                items = self._items(value)
                self.saved.append((value, items))
                if len(items) <= self.SCANNED:  # (the containers a long list holds: not seen)
                    pending += [(item, depth + 1) for item in items]
            elif callable(value) and getattr(value, "__closure__", None):
                for cell in value.__closure__:
                    try:
                        pending.append((cell.cell_contents, depth + 1))
                    except ValueError:  # (a variable not bound yet)
                        continue

    @staticmethod
    def _items(value) -> list:
        """Its items (a dict's keys and values in turn), compared by identity."""
        if isinstance(value, dict):
            return [part for pair in value.items() for part in pair]
        return list(value)

    def _changed(self) -> list:
        return [
            (value, items)
            for value, items in self.saved
            if len(now := self._items(value)) != len(items)
            or any(a is not b for a, b in zip(now, items))
        ]

    @contextlib.contextmanager
    def kept(self, role: str):
        """Run the trace; decline when it changed one of them, and restore the changed ones
        on any failure (the construct then runs as Python on them as they were)."""
        try:
            yield
            for value, _ in self._changed():
                kind = type(value).__name__
                raise Declined(f"its {role} changes a {kind} it reads (tracing changes it once)")
        except BaseException:
            self.restore()
            raise

    def restore(self) -> None:
        for value, items in self._changed():
            value.clear()
            if isinstance(value, dict):
                value.update(zip(items[::2], items[1::2]))
            elif isinstance(value, set):
                value.update(items)
            else:
                value.extend(items)


def _check_by_reference(frame: _Frame, outputs: list, names: tuple, by_reference) -> None:
    """A value carried by reference must stay that memory: written in place or unchanged."""
    for i in by_reference:
        if outputs[i] is not frame.carried[i]:
            raise Declined(
                f"{names[i]!r} shares memory with an array the loop writes, and is rebound"
            )
