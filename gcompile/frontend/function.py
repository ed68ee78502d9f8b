"""Tracing a whole function: its arguments as graph inputs, its loops converted (``capture``),
its body run under the tracer, its outputs and the containers it may not change.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from .. import capture
from ..errors import UnsupportedError, refusal_from
from ..ir import ops
from ..ir.alias import written_placeholders
from ..ir.control import LoopNote
from ..ir.graph import Graph
from ..ir.pytree import TreeSpec, flatten
from ..ir.shape_env import DataSizeError, SymbolicError, using
from ..ir.subgraph import walk
from . import segments
from .data_lengths import LengthFromData
from .declines import LiteralsNeeded, LoopEscape, StrongItems
from .masks import MaskedValue
from .numpy_patching import tracing
from .random_states import RandomStateArgument, stand_in
from .recorder import Tracer
from .segments import Segment
from .sequences import convertible_sequences
from .size_values import size_value
from .symint import SymInt
from .texts import holds_marker
from .traced_array import TracedArray


def trace(
    fn: Callable,
    name: str,
    leaves: list,
    is_input: list[bool],
    rebuild: Callable,
    dynamic: bool = True,
    budget: int | None = None,
    loops: bool | str = True,
    values: frozenset = frozenset(),
) -> Graph:
    """Trace ``fn`` into a Graph.

    Args:
        fn: the user's function.
        name: the graph's name.
        leaves: ``(path, value)`` for every flattened argument.
        is_input: per leaf, True for a graph input (arrays, floats), False for a static value.
        values: the paths of int inputs traced as weak int values, not as size symbols
            (``guards.ArgumentBinder.value_ints``).
        rebuild: ``rebuild(leaf_values) -> (args, kwargs)`` puts the leaves back into a call.
        dynamic: array sizes of 2 or more are symbolic (one trace for every size), else fixed.
        budget: the most operations to record; a bigger trace is refused (``UnsupportedError``).
        loops: capture ``for`` loops as loops (``gcompile/capture`` converts the function's
            source); ``"unroll"``: convert, but unroll every ``for`` loop (``max``/``min`` of
            traced scalars, branches and ``while`` loops on traced values still traced: they
            cannot be unrolled); False: no conversion, every loop unrolled.
    """
    again = _Retrace()
    while True:
        try:
            return _trace_once(
                fn, name, leaves, is_input, values, rebuild, dynamic, budget, loops, again
            )
        except LoopEscape as escape:
            if escape.source is None or escape.source in again.in_python:
                raise UnsupportedError(str(escape), escape.source) from None
            again.in_python[escape.source] = escape.reason
        except LiteralsNeeded:
            again.literals = True
        except StrongItems as found:
            if found.site in again.strong:
                raise UnsupportedError(str(found), found.site) from None
            again.strong.add(found.site)


@dataclass
class _Retrace:
    """What an earlier trace of the function found, for the next one."""

    in_python: dict = field(default_factory=dict)  # loops whose values escaped: source -> why
    literals: bool = False  # np.array of Python numbers made as arrays of the graph
    strong: set = field(default_factory=set)  # where lists of numbers holding NumPy scalars are


def _trace_once(
    fn, name, leaves, is_input, value_paths, rebuild, dynamic, budget, loops, again: _Retrace
) -> Graph:
    """One trace of ``fn`` (see ``trace``), as ``again`` says: the loops at ``in_python`` run
    in Python, arrays of Python numbers the graph's when ``literals``, the lists of numbers
    made at ``strong`` giving back NumPy scalars."""
    tracer = Tracer(name, dynamic, budget)
    tracer.literals_traced = again.literals
    tracer.strong_lists = again.strong
    tracer.loops.unroll_all = loops == "unroll"
    tracer.loops.in_python = again.in_python
    converted, why = capture.convert_or_reason(fn) if loops else (None, "option loops=False")
    values = [
        tracer.input(path, value, path in value_paths) if flag else stand_in(path, value)
        for (path, value), flag in zip(leaves, is_input)
    ]
    function = fn if converted is None else converted.function
    tracer.unconverted = _unconverted(fn, converted, why)
    tracer.tables = capture.own_tables(fn)
    with tracing(tracer, fn), using(tracer.graph.shape_env), capture.handling(tracer.loops):
        args, kwargs = rebuild(values)
        args = tuple(convertible_sequences(v) for v in args)
        kwargs = {k: convertible_sequences(v) for k, v in kwargs.items()}
        given = (*args, *kwargs.values())  # (lists of static numbers: guarded by the key)
        tracer.tables += tuple(value for value in given if capture.is_table(value))
        before = _container_snapshot(fn, args, kwargs)
        bound_state = _bound_state(fn)
        try:
            result = function(*args, **kwargs)
        except UnsupportedError as refusal:
            refusal.lines = refusal.lines or _lines_in(function, refusal.__traceback__)
            raise
        except Exception as error:
            if _literal_written(error, tracer):
                raise LiteralsNeeded() from None
            refusal = _refusal_of(error, tracer)
            if refusal is None:
                raise
            refusal.lines = _lines_in(function, error.__traceback__)
            raise refusal from (None if isinstance(error, _OWN_ERRORS) else error)
        finally:
            changed_state = _restored(bound_state)
        _refuse_changed_state(changed_state, fn)
        _refuse_changed_containers(before, fn)
        _refuse_raises_beside_effects(tracer)
        _refuse_unprinted_texts(tracer)
        out_leaves, out_spec = flatten(_lists_as_rows(result, tracer))
        code = getattr(fn, "__code__", None)
        where = f"{code.co_filename}:{code.co_firstlineno}" if code else None
        outputs = [tracer_output(tracer, value, where) for _, value in out_leaves]
        tracer.regions.leaving(tuple(outputs))
    tracer.graph.output(tuple(outputs), out_spec)
    tracer.graph.reruns_on = tuple(tracer.reruns_on)
    tracer.graph.notes.loops += tracer.loops.notes + tracer.unconverted
    env = tracer.graph.shape_env
    if env.replacements:  # sizes recorded before an equality was learned take its form, and
        tracer.graph.substitute_sizes(env.simplify)  # the metas derived from them agree again
    if env.replacements or env.loops and env.guards:  # (a loop body guards simple sizes:
        _rederive(tracer.graph)  # ``min(s0, 3)`` recorded before it is 3 from then on)
    return tracer.graph


def _literal_written(error: Exception, tracer: Tracer) -> bool:
    """Whether ``error`` may be NumPy's, writing a traced value into an array it made from
    Python numbers, in a trace that left those arrays NumPy's."""
    sequence = "setting an array element with a sequence"
    written = isinstance(error, ValueError) and str(error).startswith(sequence)
    return written and tracer.made_literals and not tracer.literals_traced


_OWN_ERRORS = (RecursionError, DataSizeError)  # (refused for what they are: no chained cause)


def _refusal_of(error: Exception, tracer: Tracer) -> UnsupportedError | None:
    """The refusal a trace's error stands for (None: the user's own error, raised as eager
    would): a recursion whose depth the data decide, a question on a length the data decide
    (unless scalar arguments decide it: ``ScalarsDecide``), or what ``refusal_from`` says."""
    if isinstance(error, RecursionError):
        return UnsupportedError(
            "a recursion whose depth the data decide (its trace, taking every branch of each "
            "level, recursed to Python's recursion limit)",
            hint="the recursive call runs in Python; write the recursion as a loop to compile it",
        )
    if isinstance(error, DataSizeError):
        _sizes_decided_by_scalars(tracer, error.symbols)
        return UnsupportedError(
            "a decision on a length the data decide",
            error.source,
            hint="keep the values at their full shape (np.where(mask, x, fill)), or decide "
            "it outside the compiled function",
            detail=str(error),
        )
    return refusal_from(error)


def _lists_as_rows(result: Any, tracer: Tracer) -> Any:
    """The function's result with each list a rolled loop appended to as its rows
    (``GrowingList.returned``; one it cannot give back so escapes, as before), and each slice
    with bounds read from the data as the view taken on return (``segments.returned``)."""
    if getattr(result, "has_rows", False):
        return result.returned(tracer) or result
    if isinstance(result, LengthFromData):
        return segments.returned(result)
    if isinstance(result, tuple) and not hasattr(type(result), "_fields"):
        return tuple(_lists_as_rows(item, tracer) for item in result)
    if type(result) is list:
        return [_lists_as_rows(item, tracer) for item in result]
    if type(result) is dict:
        return {key: _lists_as_rows(item, tracer) for key, item in result.items()}
    return result


def _sizes_decided_by_scalars(tracer: Tracer, symbols: tuple) -> None:
    """Raise ``ScalarsDecide`` when one of the lengths a refused question needs is a traced int
    computed from scalar arguments alone (``n = int(np.ceil(t_end / h))``, then ``y.squeeze()``
    asks whether ``n + 1 == 1``): the call is traced again with them static, as a ``range`` of
    such an int is."""
    for symbol in symbols:
        node = tracer.sized_by.get(symbol)
        if node is not None and node.graph is tracer.graph:
            size_value(node, tracer.graph.shape_env, tracer.scalar_arguments)


def _rederive(graph: Graph) -> None:
    """The graph's metas derived again from its sizes' final forms; a question on a loop index
    that has no answer for every trip once sizes are known equal is a refusal, not a guess."""
    with using(graph.shape_env):
        try:
            graph.propagate_metas()
        except SymbolicError as error:
            raise UnsupportedError(
                "a loop whose range was split on sizes the trace later found equal to others",
                detail=str(error),
                hint="compute the loop's bounds from one array's sizes",
            ) from None


def _container_snapshot(fn: Callable, args: tuple, kwargs: dict) -> list:
    """Per list or dict argument: its name, itself, its structure and its leaves' identities."""
    try:
        named = list(inspect.signature(fn).bind(*args, **kwargs).arguments.items())
    except (TypeError, ValueError):
        named = [(f"#{i}", v) for i, v in enumerate(args)] + list(kwargs.items())
    snapshot = []
    for name, value in named:
        leaves, spec = flatten(value)
        if _holds_mutable(spec):
            snapshot.append((f"argument '{name}'", value, spec, [id(leaf) for _, leaf in leaves]))
    return snapshot


def _bound_state(fn: Callable) -> tuple | None:
    """The object a method is bound to and a copy of its attributes, or None."""
    owner = getattr(fn, "__self__", None)
    state = getattr(owner, "__dict__", None)
    return (owner, dict(state)) if isinstance(state, dict) else None


def _restored(saved: tuple | None) -> bool:
    """Put a bound object's attributes back as they were before the trace (it may have set
    traced values on it); whether the trace had changed them."""
    if saved is None:
        return False
    owner, before = saved
    now = owner.__dict__
    changed = now.keys() != before.keys() or any(now[k] is not v for k, v in before.items())
    if changed:
        now.clear()
        now.update(before)
    return changed


def _refuse_changed_state(changed: bool, fn: Callable) -> None:
    """Refuse a method that sets attributes of the object it is bound to (``self.w = ...``):
    a compiled call would not set them (the trace's values were taken back)."""
    if changed:
        code = getattr(fn, "__code__", None)
        raise UnsupportedError(
            "setting attributes of the object the method is bound to (self.x = ...)",
            f"{code.co_filename}:{code.co_firstlineno}" if code else None,
            hint="return the new values, or set them outside the compiled call",
        )


def _holds_mutable(spec: TreeSpec) -> bool:
    """Whether a flattened value has a list or dict at any depth."""
    return spec.kind in ("list", "dict") or any(_holds_mutable(c) for c in spec.children)


def _refuse_changed_containers(snapshot: list, fn: Callable) -> None:
    """Refuse a function that changed a list or dict it was given (``d['w'] = ...``,
    ``a.append(...)``): eager NumPy leaves that change in the caller's container, a compiled
    call would not replay it."""
    for label, value, spec, ids in snapshot:
        leaves, now = flatten(value)
        if now != spec or [id(leaf) for _, leaf in leaves] != ids:
            code = getattr(fn, "__code__", None)
            raise UnsupportedError(
                f"changing the list or dict passed as {label} (an item set, added or removed): "
                "a compiled call cannot repeat changes to a Python container",
                f"{code.co_filename}:{code.co_firstlineno}" if code else None,
                hint="update arrays in place (d['w'][...] = new) or return the new values",
            )


def _lines_in(function: Any, traceback: Any) -> tuple:
    """The lines of ``function``'s code, and of the functions nested in it (a converted loop's
    body), that were running when the traceback was made, outermost first."""
    codes, pending = set(), [getattr(function, "__code__", None)]
    while pending:
        code = pending.pop()
        if code is not None and code not in codes:
            codes.add(code)
            pending += [c for c in code.co_consts if isinstance(c, type(code))]
    lines = []
    while traceback is not None:
        if traceback.tb_frame.f_code in codes:
            lines.append(traceback.tb_lineno)
        traceback = traceback.tb_next
    return tuple(lines)


def _refuse_unprinted_texts(tracer: Tracer) -> None:
    """A string formatted from traced values that no ``print`` took is refused at its line."""
    unprinted = tracer.texts.unprinted()
    if unprinted:
        raise UnsupportedError(
            "a string formatted from traced values used other than by print",
            unprinted,
            hint="its text would be made once, while tracing (a log line, a warning)",
        )


def _refuse_raises_beside_effects(tracer: Tracer) -> None:
    """A raising test (``raise_unless``) in a function that writes its arguments is refused at
    its line (it runs in Python there): the compiled function writes arguments back at its
    end, so a raise would lose the writes eager mode made before it. So is one whose exception
    the eager call makes (``RerunEagerly``) in a function that prints: it would print twice;
    and a ``try`` whose handlers raise (``Graph.reruns_on``) beside either."""
    nodes = [visit.node for visit in walk(tracer.graph) if visit.node.op == "call"]
    raises = [node for node in nodes if node.target is ops.RAISE_UNLESS]
    written = bool(written_placeholders(tracer.graph))
    prints = any(node.target is ops.CALLBACK for node in nodes)
    reruns = [node for node in raises if node.kwargs["error"] == ops.RerunEagerly.__name__]
    if raises and written:
        raise UnsupportedError(
            "a raising test in a function that writes its arguments",
            raises[0].source,
            hint="the writes made before the raise would be lost; raise outside the "
            "function, or write into a copy and return it",
        )
    if reruns and prints:
        raise UnsupportedError(
            "a raise of an exception made from the data in a function that prints",
            reruns[0].source,
            hint="the call runs again eagerly to make the exception, which would print twice; "
            "format the message outside the function, or raise a fixed message",
        )
    if tracer.reruns_on and (written or prints):
        raise UnsupportedError(
            "a `try` whose handlers raise, in a function that prints or writes its arguments",
            next(iter(tracer.reruns_on.values())),
            hint="the call runs again eagerly when its body raises, which would repeat the "
            "prints or lose the writes; handle the error outside the function",
        )


def tracer_output(tracer: Tracer, value: Any, function_source: str | None) -> Any:
    """A node or literal for one returned leaf (``function_source``: where the function is defined)."""
    if isinstance(value, (TracedArray, np.ndarray, SymInt)):
        return tracer.operand(value)
    if holds_marker(value):
        raise UnsupportedError(
            "returning a string formatted from traced values",
            function_source,
            hint="the string would be made once, while tracing; return the values instead",
        )
    if value is None or isinstance(value, (bool, int, float, complex, str, np.generic)):
        return value
    if isinstance(value, MaskedValue):
        return tracer.operand(value.whole("returning"))
    if isinstance(value, Segment):
        value.refuse("returning", made_here=True)
    if isinstance(value, RandomStateArgument):
        raise UnsupportedError(
            f"returning {value.described()}",
            function_source,
            hint="a compiled graph holds no generator: where a region hands one on (`if rng is "
            "None: rng = ...`), that statement runs in Python",
        )
    raise UnsupportedError(
        f"returning a value of type {type(value).__name__}",
        function_source,
        hint="return arrays, scalars, or tuples, lists and dicts of them",
    )


def _unconverted(fn: Callable, converted: Any, why: str) -> list:
    """Notes on the loops that stay Python loops whatever they do (so are unrolled)."""
    if converted is None:
        if why.startswith("nothing to convert") or not why:
            return []
        return [LoopNote(None, False, f"the function's loops were not converted: {why}")]
    filename = fn.__code__.co_filename
    return [LoopNote(f"{filename}:{line}", False, reason) for line, reason in converted.notes]
