"""The calls converted loops and ``if`` statements make, and the slot where a tracer takes them
over.

A converted ``for NAME in ITER:`` calls ``for_range`` (for ``range(...)`` and
``reversed(range(...))``) or ``for_each`` (any other iterable) with:

- ``body(index, *carried) -> tuple``: one iteration. It takes the loop index (or item) and the
  current values of the carried names, runs the loop body, and returns their new values.
- ``carried``: a tuple, the values of ``info.carried`` names before the loop, in that order;
  ``UNDEFINED`` stands for a name unbound at that point (a body that reads one raises
  UnboundLocalError as Python would, one that assigns it replaces it).
- ``info``: a ``LoopInfo``, the loop's place in the user's source and its carried names.

Both return the tuple of carried values after the loop, in the order of ``info.carried``. When
``info.target`` is one of them, the body returns the loop variable's last value in its slot
(a loop of no iteration leaves the value it had, or UNDEFINED).

A converted ``if TEST: ... else: ...`` calls ``cond(test, then, orelse, carried, info)``:
``test`` is the evaluated test (not yet passed to ``bool``), ``then(*carried) -> tuple`` and
``orelse(*carried) -> tuple`` run the branches (an absent ``else`` returns its arguments), and
``carried`` (UNDEFINED as for loops) and ``info`` (a ``BranchInfo``) are as above; it returns
the carried values after the ``if``.

Handler protocol. ``handling(handler)`` installs a handler for the current context (thread or
task); while one is installed the runtime first offers every loop to it:

- ``handler.capture_range(body, start, stop, step, carried, info, reverse)``: ``start``, ``stop``
  and ``step`` are the objects the user's ``range(...)`` received, untouched (ints, symbolic
  sizes, traced scalars); an omitted start is ``0`` and an omitted step ``1``. ``reverse`` is
  True for ``reversed(range(start, stop, step))``.
- ``handler.capture_each(body, iterable, carried, info)``: ``iterable`` is the evaluated
  iterable expression, not yet passed to ``iter()`` (``enumerate(...)`` and ``zip(...)`` as an
  ``Enumerated`` or ``Zipped``, which say what they iterate).

- ``handler.capture_cond(test, then, orelse, carried, info)``, when the handler has it (else
  every ``if`` runs in Python): ``test`` as the user's code computed it (a bool, a traced
  value, any object). A conditional expression, ``and`` and ``or`` (``if_exp``, ``and_``,
  ``or_``) come as an ``if`` of one carried value, UNDEFINED before it.
- ``handler.capture_not(value)``, when the handler has it: ``not value``.
- ``handler.capture_raise_if(test, make, negate, built)``, when the handler has it: ``if test:
  raise make()`` (``negate``: ``if not test``); None once it recorded the test, or NotImplemented.
- ``handler.capture_array(function, element, start, stop, step, info, args, kwargs)``, when
  the handler has it: ``function([element(i) for i in range(start, stop, step)], *args,
  **kwargs)``, ``function`` as the user's code named it (``np.array``, ``np.asarray``,
  ``np.stack`` or any other); the array, or NotImplemented.
- ``handler.capture_sum(element, start, stop, step, info, args)``, when the handler has it:
  ``sum(element(i) for i in range(start, stop, step), *args)``; the sum, or NotImplemented.
- ``handler.growing_list(items)`` and ``handler.capture_append(items, value)``, when the
  handler has them: a list the function grows in its loops (``accumulations``), and an append
  to one (NotImplemented: ``items.append(value)``).

Each returns the tuple of carried values after the statement (same length and order as
``carried``), or ``NotImplemented`` to decline: the runtime then runs it as Python would,
calling ``body`` once per item, or ``then`` or ``orelse`` as ``bool(test)`` (evaluated once)
says. A handler that captures a loop must raise what Python would for bounds ``range`` rejects
(or decline). Loops and ``if`` statements nested in a captured body or branch call the handler
again while it is capturing the outer one. With no handler, they run in Python at once.
"""

from __future__ import annotations

import builtins
import contextlib
import itertools
import operator
import re
import types
from contextvars import ContextVar
from dataclasses import dataclass, replace
from typing import Any, Callable, Iterable, Iterator

from .object_calls import object_effect

_BUILTINS = {False: (range,), True: (reversed, range)}
_HANDLER: ContextVar[Any] = ContextVar("gcompile_capture_handler", default=None)


class _Undefined:
    """The value of a carried name that is unbound (the one instance is ``UNDEFINED``)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "UNDEFINED"

    def __reduce__(self) -> str:
        return "UNDEFINED"  # copies and pickles are the instance itself


UNDEFINED = _Undefined()


@dataclass(frozen=True)
class LoopInfo:
    """One converted loop, as the user wrote it.

    Attributes:
        filename: the user's source file.
        line: the line of the ``for``; ``end_line`` the last line of its body.
        target: the loop variable's name.
        carried: the carried names, in the order of the ``carried`` tuples.
        source: the text of the ``for`` line, stripped (for messages).
        kind: ``"range"``, ``"reversed_range"`` or ``"each"``.
        effects: changes the body makes to Python objects other than arrays (``out.append``,
            ``self.n += 1``), which a handler tracing the body once would make once.
        calls_on: the body's calls of methods of named objects (``object_calls``), which
            ``effects`` gains the changes of when the loop starts (``_with_object_effects``).
    """

    filename: str
    line: int
    end_line: int
    target: str
    carried: tuple[str, ...]
    source: str
    kind: str
    effects: tuple[str, ...] = ()
    calls_on: tuple[tuple[str, str], ...] = ()

    @property
    def where(self) -> str:
        """``file:line`` of the ``for`` statement."""
        return f"{self.filename}:{self.line}"

    @classmethod
    def at(cls, where: str | None, text: str, carried: tuple[str, ...]) -> "LoopInfo":
        """A loop a handler makes for a statement at ``where`` (``file:line``, or None) that is
        no ``for`` of the user's (``max(v)``, ``np.add.at``): index ``i``, ``text`` for
        messages."""
        filename, _, line = (where or "<unknown>:0").rpartition(":")
        return cls(filename, int(line), int(line), "i", carried, text, "range")


@dataclass(frozen=True)
class BranchInfo:
    """One converted ``if`` statement, as the user wrote it.

    Attributes:
        filename: the user's source file.
        line: the line of the ``if`` (or ``elif``); ``end_line`` the last line of the
            statement, ``else`` included.
        carried: the carried names, in the order of the ``carried`` tuples.
        source: the text of the ``if`` line, stripped (for messages).
        effects: changes the branches make to Python objects other than arrays (as a loop's).
        calls_on: as a loop's.
    """

    filename: str
    line: int
    end_line: int
    carried: tuple[str, ...]
    source: str
    effects: tuple[str, ...] = ()
    calls_on: tuple[tuple[str, str], ...] = ()

    @property
    def where(self) -> str:
        """``file:line`` of the ``if`` statement."""
        return f"{self.filename}:{self.line}"


def current_handler() -> Any:
    """The handler installed for the current context, or None."""
    return _HANDLER.get()


@contextlib.contextmanager
def handling(handler: Any) -> Iterator[Any]:
    """Offer the loops run in this block to ``handler`` (None: run them in Python)."""
    token = _HANDLER.set(handler)
    try:
        yield handler
    finally:
        _HANDLER.reset(token)


def for_range(
    body: Callable[..., tuple],
    bounds: tuple,
    carried: tuple,
    info: LoopInfo,
    reverse: bool = False,
    *,
    resolved: tuple | None = None,
) -> tuple:
    """Run ``for info.target in range(*bounds)`` (reversed when ``reverse``) and return the
    carried values after it.

    ``resolved``: what the names ``reversed`` and ``range`` (just ``range`` when not
    ``reverse``) meant where the loop was written; when they are not the builtins, the loop
    runs in Python over what they return.
    """
    if resolved is not None and any(a is not b for a, b in zip(resolved, _BUILTINS[reverse])):
        iterable = resolved[-1](*bounds)
        return _run(body, resolved[0](iterable) if reverse else iterable, carried)
    handler = _HANDLER.get()
    if handler is not None:
        start, stop, step = _full_bounds(bounds)
        info = _with_object_effects(info, (body,), carried)
        result = handler.capture_range(body, start, stop, step, carried, info, reverse)
        if result is not NotImplemented:
            return _checked(result, carried, info, "loop")
    iterable = range(*bounds)
    return _run(body, reversed(iterable) if reverse else iterable, carried)


def for_each(body: Callable[..., tuple], iterable: Any, carried: tuple, info: LoopInfo) -> tuple:
    """Run ``for info.target in iterable`` and return the carried values after it."""
    handler = _HANDLER.get()
    if handler is not None:
        info = _with_object_effects(info, (body,), carried)
        result = handler.capture_each(body, iterable, carried, info)
        if result is not NotImplemented:
            return _checked(result, carried, info, "loop")
    return _run(body, iterable, carried)


def while_loop(
    test: Callable[..., Any], body: Callable[..., tuple], carried: tuple, info: LoopInfo
) -> tuple:
    """Run ``while test(*carried): carried = body(*carried)`` and return the carried values.

    A handler declining the loop (its test on constants: ``err = 1.0`` before
    ``while err > tol``) is offered it again after one trip run here, where the test is
    often on data."""
    capture = getattr(_HANDLER.get(), "capture_while", None)
    if capture is not None:
        info = _with_object_effects(info, (test, body), carried)
        result = capture(test, body, carried, info)
        if result is not NotImplemented:
            return _checked(result, carried, info, "loop")
        if not test(*carried):
            return carried
        carried = body(*carried)
        result = capture(test, body, carried, info)
        if result is not NotImplemented:
            return _checked(result, carried, info, "loop")
    counted = getattr(_HANDLER.get(), "capture_counted_while", None)
    mark = python_effect_mark() if counted is not None else None
    trips = 1
    while test(*carried):
        carried = body(*carried)
        trips += 1
        if trips == COUNTED_TRIPS and counted is not None:
            result = counted(test, body, carried, info, since=mark)
            if result is not NotImplemented:
                return _checked(result, carried, info, "loop")
    return carried


# A while loop on Python values (``while k < kmax:``) run this many trips in Python is offered
# once more as one on those values traced (``capture_counted_while``): a short one stays as run.
COUNTED_TRIPS = 2


def cond(
    test: Any,
    then: Callable[..., tuple],
    orelse: Callable[..., tuple],
    carried: tuple,
    info: BranchInfo,
) -> tuple:
    """Run ``if test: ... else: ...`` and return the carried values after it."""
    capture = getattr(_HANDLER.get(), "capture_cond", None)
    if capture is not None:
        info = _with_object_effects(info, (then, orelse), carried)
        result = capture(test, then, orelse, carried, info)
        if result is not NotImplemented:
            return _checked(result, carried, info, "`if`")
    return then(*carried) if test else orelse(*carried)


def _with_object_effects(info: Any, functions: tuple, carried: tuple) -> Any:
    """``info`` with the change its calls make to the Python objects they are made on when it
    starts (``object_calls``) among its ``effects``, which a handler declines."""
    why = object_effect(info, functions, carried)
    return replace(info, effects=(*info.effects, why)) if why else info


class Enumerated:
    """``enumerate(iterable, start)`` that a handler can see into (``iterables.py``)."""

    def __init__(self, iterable: Any, start: int = 0):
        self.iterable, self.start = iterable, start
        self._items: Iterator | None = None  # (made when iterated: not when a handler takes it)

    def __iter__(self) -> Iterator:
        if self._items is None:
            self._items = enumerate(self.iterable, self.start)
        return self._items


class Zipped:
    """``zip(*iterables)`` that a handler can see into (``iterables.py``)."""

    def __init__(self, *iterables: Any, strict: bool = False):
        self.iterables, self.strict = iterables, strict
        self._items: Iterator | None = None

    def __iter__(self) -> Iterator:
        if self._items is None:
            self._items = zip(*self.iterables, strict=self.strict)
        return self._items


class Repeated:
    """``itertools.repeat(value, times)`` that a handler can see into (``iterables.py``)."""

    def __init__(self, value: Any, times: Any):
        self.value, self.times = value, times
        self._items: Iterator | None = None

    def __iter__(self) -> Iterator:
        if self._items is None:
            self._items = itertools.repeat(self.value, self.times)
        return self._items


def iterate(function: Callable, *args: Any, **kwargs: Any) -> Any:
    """``function(*args, **kwargs)``; the builtin ``enumerate`` or ``zip``, or a finite
    ``itertools.repeat``, as an ``Enumerated``, ``Zipped`` or ``Repeated`` iterator (it
    iterates as they do)."""
    if function is enumerate:
        return Enumerated(*args, **kwargs)
    if function is zip:
        return Zipped(*args, **kwargs)
    if function is itertools.repeat and len(args) + len(kwargs) == 2:
        return Repeated(*args, **kwargs)
    return function(*args, **kwargs)


def array_of(
    function: Callable,
    element: Callable[[Any], Any],
    resolved_range: Any,
    bounds: tuple,
    info: LoopInfo,
    *args: Any,
    **kwargs: Any,
) -> Any:
    """``function([element(i) for i in range(*bounds)], *args, **kwargs)`` (``np.array`` of a
    comprehension, ``comprehensions.py``): offered to the handler's ``capture_array`` when
    ``range`` is the builtin."""
    capture = _range_capture("capture_array", resolved_range)
    if capture is not None:
        result = capture(function, element, *_full_bounds(bounds), info, args, kwargs)
        if result is not NotImplemented:
            return result
    return function([element(i) for i in resolved_range(*bounds)], *args, **kwargs)


def array_of_each(
    function: Callable,
    element: Callable[[Any], Any],
    iterable: Any,
    info: LoopInfo,
    *args,
    **kwargs,
) -> Any:
    """``function([element(x) for x in iterable], *args, **kwargs)`` (``comprehensions.py``):
    offered to the handler's ``capture_array_each`` (a traced array's rows)."""
    capture = getattr(_HANDLER.get(), "capture_array_each", None)
    if capture is not None:
        result = capture(function, element, iterable, info, args, kwargs)
        if result is not NotImplemented:
            return result
    return function([element(x) for x in iterable], *args, **kwargs)


def sum_of(
    function: Callable,
    element: Callable[[Any], Any],
    resolved_range: Any,
    bounds: tuple,
    info: LoopInfo,
    *args: Any,
) -> Any:
    """``function(element(i) for i in range(*bounds), *args)`` (``sum`` of a comprehension,
    ``comprehensions.py``): offered to the handler's ``capture_sum`` when ``function`` and
    ``range`` are the builtins."""
    capture = _range_capture("capture_sum", resolved_range) if function is sum else None
    if capture is not None:
        result = capture(element, *_full_bounds(bounds), info, args)
        if result is not NotImplemented:
            return result
    return function((element(i) for i in resolved_range(*bounds)), *args)


def _range_capture(name: str, resolved_range: Any) -> Callable | None:
    """The handler's method ``name`` for a comprehension over ``range``, when it has one and
    ``range`` is the builtin."""
    return getattr(_HANDLER.get(), name, None) if resolved_range is range else None


def if_exp(test: Any, then: Callable[[], Any], orelse: Callable[[], Any], info: BranchInfo) -> Any:
    """``then() if test else orelse()`` (a conditional expression, ``expressions.py``): offered
    to the handler's ``capture_cond`` as an ``if`` of one carried value."""
    capture = getattr(_HANDLER.get(), "capture_cond", None)
    if capture is not None:
        branches = (lambda _: (_operand(then),), lambda _: (_operand(orelse),))
        result = capture(test, *branches, (UNDEFINED,), info)
        if result is not NotImplemented:
            return _checked(result, (UNDEFINED,), info, "conditional expression")[0]
    return _operand(then) if test else _operand(orelse)


def and_(first: Any, rest: Callable[[], Any], info: BranchInfo) -> Any:
    """``first and rest()``."""
    return if_exp(first, rest, lambda: first, info)


def compare_chain(left: Any, links: tuple, info: BranchInfo) -> Any:
    """``left op1 b op2 c ...`` (``links``: ``(operator name, lambda: operand)`` each): each
    operand evaluated once, in order, a later one only while the comparisons before it hold,
    as Python's chained comparison; each step after the first an ``and_``."""
    (name, right), rest = links[0], links[1:]
    right = right()
    result = getattr(operator, name)(left, right)
    if not rest:
        return result
    return and_(result, lambda: compare_chain(right, rest, info), info)


def or_(first: Any, rest: Callable[[], Any], info: BranchInfo) -> Any:
    """``first or rest()``."""
    return if_exp(first, lambda: first, rest, info)


_FREE = re.compile(r"cannot access free variable '(\w+)' where it is not associated with a value")


def _operand(thunk: Callable[[], Any]) -> Any:
    """``thunk()``: an operand the expression evaluated in place. Reading a local name that
    is unbound raises UnboundLocalError there, as it did in place (in the lambda, a NameError
    about a free variable)."""
    try:
        return thunk()
    except NameError as error:
        found = _FREE.match(str(error))
        if found is None or isinstance(error, UnboundLocalError):
            raise
        message = (
            f"cannot access local variable '{found[1]}' where it is not associated with a value"
        )
        raise UnboundLocalError(message) from None


def not_(value: Any) -> Any:
    """``not value``; offered first to the handler's ``capture_not`` (NotImplemented: Python's)."""
    capture = getattr(_HANDLER.get(), "capture_not", None)
    if capture is not None:
        result = capture(value)
        if result is not NotImplemented:
            return result
    return not value


def raise_if(test: Any, make: Callable[[], Any], negate: bool = False, built: bool = False) -> None:
    """``if test: raise make()`` (``negate``: ``if not test``, an ``assert``; ``built``: ``make``
    calls the exception's class, else it names a class or an instance); offered first to the
    handler's ``capture_raise_if`` (``raises``)."""
    capture = getattr(_HANDLER.get(), "capture_raise_if", None)
    if capture is not None and capture(test, make, negate, built) is not NotImplemented:
        return
    if (not test) if negate else test:
        raise make()


def bound(value: Any, flag: Any, name: str) -> Any:
    """``value``, the value of ``name`` read where an ``if`` may have left it unbound;
    ``flag`` tells whether it is bound (``unbound.py``). Raises UnboundLocalError as Python
    does where it is not; a traced flag is offered to the handler's ``capture_bound`` (a
    check of the data)."""
    if flag is True:
        return value
    capture = getattr(_HANDLER.get(), "capture_bound", None)
    if capture is not None and capture(flag, name) is not NotImplemented:
        return value
    if not flag:
        message = f"cannot access local variable '{name}' where it is not associated with a value"
        raise UnboundLocalError(message)
    return value


def python_effect(reason: str, *reached: Any, since: Any = None) -> None:
    """A statement that may change Python state outside the function follows (``effects``;
    ``reached``: the object it starts from and the steps to the one it changes, if known;
    ``since``: a ``python_effect_mark``, for a statement that matters only when operations
    were recorded since): offered to the handler's ``python_effect``, which refuses it while
    tracing; nothing in Python."""
    capture = getattr(_HANDLER.get(), "python_effect", None)
    if capture is not None:
        capture(reason, *reached, since=since)


def growing_list(items: list) -> list:
    """A list display (or ``list()``) of a list the function appends to in its loops: the
    list, or the handler's ``growing_list`` of it."""
    make = getattr(_HANDLER.get(), "growing_list", None)
    return items if make is None else make(items)


def append_to(items: Any, value: Any) -> None:
    """``items.append(value)`` of such a list; offered first to the handler's
    ``capture_append`` (NotImplemented: Python's)."""
    capture = getattr(_HANDLER.get(), "capture_append", None)
    if capture is None or capture(items, value) is NotImplemented:
        items.append(value)


def rerun_on(caught: tuple) -> None:
    """A ``try`` whose handlers only raise follows (``effects``): what its handlers catch
    (``caught``: their classes, or tuples of them) offered to the handler's ``rerun_on``;
    nothing in Python."""
    capture = getattr(_HANDLER.get(), "rerun_on", None)
    if capture is not None:
        capture(caught)


def python_effect_mark() -> Any:
    """The handler's note of what was recorded so far (None in Python)."""
    mark = getattr(_HANDLER.get(), "python_effect_mark", None)
    return None if mark is None else mark()


# calls offered to ``handler.builtin`` (``call``): these builtins, ``np.ndarray`` and the
# functions of ``math`` (``math.exp(x[i])``, or ``exp`` imported from it)
OFFERED_BUILTINS = ("max", "min", "len", "int", "float", "type", "isinstance", "ndarray")
_OFFERED = tuple(getattr(builtins, name) for name in OFFERED_BUILTINS[:-1])
MATH_MODULE = "math"


def is_ndarray(function: Any) -> bool:
    """Whether ``function`` is NumPy's array type (``np.ndarray(shape, dtype)``, offered to
    a handler as the builtins are; this module imports no NumPy)."""
    return (
        isinstance(function, type)
        and function.__module__ == "numpy"
        and (function.__name__ == "ndarray")
    )


def is_math(function: Any) -> bool:
    """Whether ``function`` is one of Python's ``math`` module (offered as the builtins are)."""
    return getattr(function, "__module__", None) == MATH_MODULE


def call(module: str, function: Any, /, *args: Any, **kwargs: Any) -> Any:
    """Call ``function(*args, **kwargs)``; while a handler is installed, a plain Python function
    of ``module`` (the caller's), or a method bound to one, runs converted, so that its loops
    are offered too (an object a class makes is told to ``handler.made_object``), and the
    builtins ``max``, ``min``, ``len``, ``int``, ``float``, ``type`` and ``isinstance`` (and
    ``np.ndarray`` and ``math``'s functions) are first offered to
    ``handler.builtin(function, args, kwargs)``, which returns the result or
    ``NotImplemented``; any other function to ``handler.library_call`` alike (a library's
    function given traced values).

    Converted functions make their calls of global or free names through this.
    """
    handler = _HANDLER.get()
    if handler is None:
        return function(*args, **kwargs)
    offered = function in _OFFERED or is_ndarray(function) or is_math(function)
    if offered and hasattr(handler, "builtin"):
        result = handler.builtin(function, args, kwargs)
        if result is not NotImplemented:
            return result
    if isinstance(function, type):
        return _made(module, function, args, kwargs, getattr(handler, "made_object", None))
    library = getattr(handler, "library_call", None)  # (SciPy's functions: one extern each)
    result = NotImplemented if library is None else library(function, args, kwargs)
    if result is not NotImplemented:
        return result
    return _converted(module, _bound_call(module, function))(*args, **kwargs)


def _converted(module: str, function: Any) -> Any:
    """``function`` converted when it is a plain function of ``module`` or a method bound to
    one (and converts), else itself."""
    plain = function.__func__ if type(function) is types.MethodType else function
    if type(plain) is not types.FunctionType or plain.__module__ != module:
        return function
    from .convert import convert  # convert imports this module

    converted = convert(function)
    return function if converted is None else converted.function


def _bound_call(module: str, function: Any) -> Any:
    """An instance of a class of ``module`` with a ``__call__`` of its own as that method,
    bound (``Poly(c)(x)``: converted like any method); else ``function``."""
    method = next(
        (vars(k)["__call__"] for k in type(function).__mro__ if "__call__" in vars(k)), None
    )
    if type(method) is types.FunctionType and method.__module__ == module:
        return types.MethodType(method, function)
    return function


def _made(module: str, cls: type, args: tuple, kwargs: dict, made_object: Any) -> Any:
    """``cls(*args, **kwargs)``, told to ``made_object`` (its changes are the function's own
    state), its ``__init__`` converted when it is the module's own and the class makes its
    instances as ``object`` does (a test of an argument's type in it then answers as eager
    mode's)."""
    init = getattr(cls, "__init__", None)
    plain = type(init) is types.FunctionType and init.__module__ == module
    own = plain and cls.__new__ is object.__new__ and type(cls) is type
    made = object.__new__(cls) if own else cls(*args, **kwargs)
    if made_object is not None:
        made_object(made)  # (before its __init__ runs: changes to it there are its own)
    if own:
        _converted(module, types.MethodType(init, made))(*args, **kwargs)
    return made


def table(sequence: Any, index: Any, made: bool = False) -> Any:
    """``sequence[index]``, read in a converted function from a name it does not bind; a list
    or tuple of numbers (``tables.is_table``) is first offered to
    ``handler.capture_table(sequence, index, made)``, which returns the element or
    ``NotImplemented``."""
    handler = _HANDLER.get()
    capture = getattr(handler, "capture_table", None)
    if capture is not None and type(sequence) in (list, tuple):
        result = capture(sequence, index, made)
        if result is not NotImplemented:
            return result
    return sequence[index]


def number_list(value: Any, *counts: Any) -> list:
    """``[value] * n`` (rows ``[[value] * m for _ in range(n)]`` for counts ``(n, m)``), made
    in a converted function (``number_lists``); first offered to
    ``handler.number_list(value, counts)``, which returns an object that reads and writes as
    the list would, or ``NotImplemented``."""
    handler = _HANDLER.get()
    make = getattr(handler, "number_list", None)
    if make is not None:
        made = make(value, counts)
        if made is not NotImplemented:
            return made
    if len(counts) == 1:
        return [value] * counts[0]
    return [[value] * counts[1] for _ in range(counts[0])]


def local_table(sequence: Any, index: Any) -> Any:
    """``sequence[index]`` of a list the converted function made and never changes
    (``tables.read_only_lists``): ``table``, the list read as a table without a guard."""
    return table(sequence, index, made=True)


def _run(body: Callable[..., tuple], iterable: Iterable, carried: tuple) -> tuple:
    for item in iterable:
        carried = body(item, *carried)
    return carried


def _full_bounds(bounds: tuple) -> tuple:
    """``(start, stop, step)`` from the one to three arguments of ``range``."""
    if len(bounds) == 1:
        return 0, bounds[0], 1
    if len(bounds) == 2:
        return bounds[0], bounds[1], 1
    return tuple(bounds)


def _checked(result: Any, carried: tuple, info: LoopInfo | BranchInfo, statement: str) -> tuple:
    result = tuple(result)
    if len(result) != len(carried):
        raise TypeError(
            f"the {statement} handler returned {len(result)} values for the {len(carried)} "
            f"carried names {info.carried} of the {statement} at {info.where}"
        )
    return result
