"""The fast entry of a compiled function: a call goes straight to the whole-graph program of the
entry it used last, when its arguments are of the same kinds, with nothing else between.

The general path (``CompiledFunction``'s) binds the arguments, builds the guard key, finds the
entry and runs its host function: about 2 us a call. A graph whose host is one Numba function
(``host_programs``) reads its sizes and checks them itself (``program_entry``), and its Numba
signature pins ranks, layouts and writeability (it compiles nothing on a call). What is left
to check in Python is each argument's type, in one generated function (an array's dtype is the
signature's too), with the user's signature, so keyword calls and defaults take it as well.
The arrays the program returns are made here and passed to it (its ``buffers``: Numba would
take 0.2-0.4 us to hand back an array), from the host's pool when they are large::

    def _gc_entry(u, dx):               # (named periodic_laplacian, as the user's function)
        if (_gc_disable not in _gc_environ and _gc_errors_state() in _gc_quiet_states
                and _gc_type(u) is _gc_ndarray and _gc_type(dx) is _gc_kind_dx):
            try:
                _gc_r0 = _gc_empty(u.shape, _gc_b0)
                _gc_program(u, dx, _gc_r0)  # (other results it returns: one bare, or a tuple)
            except Exception:  # a type or size the program refuses: the general path decides
                pass
            else:
                _gc_count()
                return _gc_r0
        return _gc_general(u, dx)

It is used only for entries that call nothing back into Python. For one that writes no argument,
a call the program refuses half-way has changed nothing: the general path runs it again, and
raises the user's own error if there is one. One that writes its arguments checks first that no
other array argument shares their memory (``np.may_share_memory``: the general path refuses such
a call); the general path runs it again only when the program raised before writing (its
guards, or Numba's dispatch of the arguments' types), and its other errors are the call's.
``GCOMPILE_DISABLE`` is seen on every call, as on the general path, and so is NumPy's
floating-point error state (one the general path found to raise nothing, ``floating_errors``);
``config.set`` takes the fast entries down (``api``), so they need not look.
"""

from __future__ import annotations

import copy
import itertools
import os
from typing import Any, Callable

import numpy as np

from . import floating_errors
from .backends.numba.program_entry import GuardFailure
from .ir.shape_env import SIZE_END


class FastEntry:
    """The generated function of one cache entry, and how many calls it served."""

    def __init__(self, function: Callable, source: str):
        self.function = function
        self.source = source
        self.counter = itertools.count()

    @property
    def calls(self) -> int:
        """How many calls this entry served (reading does not count one)."""
        return next(copy.copy(self.counter))


def build(
    entry: Any, bound: Any, binder: Any, general: Callable, eager: Callable
) -> FastEntry | None:
    """The fast entry of a cache entry ``entry`` (one the call ``bound`` just used), or None
    when it cannot have one: its host is not one program, it writes an argument and reads an
    array from outside (whose overlap it does not check), the function
    takes ``*args``, ``**kwargs`` or keyword-only parameters, an argument is not a plain leaf
    of a kind it checks (another library's array: the general path takes it), or the
    environment has no raw view to read ``GCOMPILE_DISABLE``."""
    program = getattr(entry.run, "program", None)
    environ = getattr(os.environ, "_data", None)
    if program is None or program.entry is None or environ is None:
        return None
    if entry.written and entry.captured:  # (the entry checks overlaps among its arguments)
        return None
    if bound.array_type is not None:
        return None
    parameters = list(binder.signature.parameters.values())
    if any(p.kind is not p.POSITIONAL_OR_KEYWORD or p.name.startswith("_gc_") for p in parameters):
        return None
    if bound.spec.kind != "dict" or any(c.kind != "leaf" for c in bound.spec.children):
        return None  # (a tuple, list or dict argument: the binder flattens those)
    out = entry.graph.out_spec
    if out.kind != "leaf" and (out.kind != "tuple" or any(c.kind != "leaf" for c in out.children)):
        return None
    names = [p.name for p in parameters]
    values = [value for _, value in bound.leaves]
    tests = [_test(n, v, flag) for n, v, flag in zip(names, values, bound.is_input)]
    if any(test is None for test in tests):
        return None
    if entry.globals is not None:  # (a global or closure variable the trace read, unchanged)
        tests.append("_gc_globals_hold()")
    tests += _apart(entry, names, values, bound.is_input)
    program = program.entry
    namespace = {
        "_gc_program": program.function,
        "_gc_general": general,
        "_gc_environ": environ,
        **_EVERY_ENTRYS,
        "_gc_pooled": program.pooled,
        "_gc_retried": _RETRIED_WRITING if entry.written else Exception,
        "_gc_globals_hold": entry.globals.holds if entry.globals is not None else None,
        **{f"_gc_c{i}": constant for i, constant in enumerate(program.constants)},
        **{f"_gc_b{i}": buffer.dtype for i, buffer in enumerate(program.buffers)},
        **{f"_gc_t{i}": convert for i, convert in enumerate(program.converts)},
        **{f"_gc_default_{p.name}": p.default for p in parameters if p.default is not p.empty},
        **{f"_gc_kind_{n}": type(v) for n, v in zip(names, values)},
    }
    inputs = [n for n, flag in zip(names, bound.is_input) if flag]
    source = _source(parameters, tests, _call(program, inputs), _results(program, out))
    exec(compile(source, f"<gcompile fast entry {entry.graph.name}>", "exec"), namespace)
    function = namespace["_gc_entry"]
    # a wrong arity raises the TypeError eager would raise, naming the user's function
    function.__name__, function.__qualname__ = eager.__name__, eager.__qualname__
    fast = FastEntry(function, source)
    namespace["_gc_count"] = fast.counter.__next__
    return fast


# the names every fast entry's function reads that are the same for all
_EVERY_ENTRYS = {
    "_gc_disable": os.environ.encodekey("GCOMPILE_DISABLE"),
    "_gc_type": type,
    "_gc_errors_state": floating_errors.current_state,
    "_gc_quiet_states": floating_errors.quiet_states,
    "_gc_ndarray": np.ndarray,
    "_gc_empty": np.empty,
    "_gc_overlap": np.may_share_memory,
}


# What a program that writes its arguments raises before it writes any: its guards failed
# (sizes), or Numba's dispatcher refused an argument's type. Anything else it raises is the
# call's own error (the arguments may be half-written, as eager mode leaves them): the general
# path would not run it again.
_RETRIED_WRITING = (GuardFailure, TypeError)


def _apart(entry: Any, names: list, values: list, is_input: list) -> list:
    """A test per pair of an argument the program writes and another array argument: that
    their memory does not meet (else the general path refuses the call: the program reads
    every input before writing any back, eager mode interleaves)."""
    inputs = [(n, v) for n, v, flag in zip(names, values, is_input) if flag]
    arrays = [n for n, v in inputs if isinstance(v, np.ndarray)]
    written = [inputs[i][0] for i in entry.written if inputs[i][0] in arrays]
    pairs = sorted({tuple(sorted((w, other))) for w in written for other in arrays if other != w})
    return [f"not _gc_overlap({a}, {b})" for a, b in pairs]


def _test(name: str, value: Any, is_input: bool) -> str | None:
    """The Python test an argument like ``value`` passes (None: not one the entry checks).
    An array's dtype, rank, layout and flags are the program's signature's to check."""
    kind = type(value)
    if kind is np.ndarray and is_input:
        return f"_gc_type({name}) is _gc_ndarray"
    if kind is int and is_input:  # (Numba's dispatch raises OverflowError past int64)
        return f"_gc_type({name}) is _gc_kind_{name} and {-SIZE_END} <= {name} < {SIZE_END}"
    if (isinstance(value, np.generic) or kind in (float, complex)) and is_input:
        return f"_gc_type({name}) is _gc_kind_{name}"
    if kind in (int, bool) and not is_input:
        return f"_gc_type({name}) is _gc_kind_{name} and {name} == {value!r}"
    if value is None and not is_input:
        return f"{name} is None"
    return None


def _call(program: Any, inputs: list) -> list:
    """The lines making the buffers the program writes (``program_entry.CallerBuffer``; a size
    the program refuses fails here or there, and the general path decides) and calling it."""
    lines = []
    for position, buffer in enumerate(program.buffers):
        allocator = "_gc_pooled" if buffer.pooled else "_gc_empty"
        order = "" if buffer.order == "C" and not buffer.pooled else f", {buffer.order!r}"
        shape = buffer.shape_source(inputs)
        lines.append(f"_gc_r{position} = {allocator}({shape}, _gc_b{position}{order})")
    arguments = inputs + [f"_gc_r{i}" for i in range(len(program.buffers))]
    arguments += [f"_gc_c{i}" for i in range(len(program.constants))]
    call = f"_gc_program({', '.join(arguments)})"
    returned = sum(1 for buffer in program.in_buffers if buffer is None)
    return lines + [f"_gc_returned = {call}" if returned else call]


def _results(program: Any, out: Any) -> str:
    """The expression of the call's result: each output its buffer or what the program
    returned (one bare, several a tuple; a 0-d one through its ``result_type``), in the user's
    structure (one value, or a tuple)."""
    returned = sum(1 for buffer in program.in_buffers if buffer is None)
    taken = itertools.count()
    items = [
        f"_gc_r{buffer}"
        if buffer is not None
        else "_gc_returned"
        if returned == 1
        else f"_gc_returned[{next(taken)}]"
        for buffer in program.in_buffers
    ]
    converts = program.converts
    items = [
        item if c is None else f"_gc_t{i}({item})"
        for i, (item, c) in enumerate(zip(items, converts))
    ]
    if out.kind == "leaf":
        return items[0]
    return f"({', '.join(items)}{',' if len(items) == 1 else ''})"


def _source(parameters: list, tests: list, call: list, results: str) -> str:
    signature = ", ".join(
        p.name if p.default is p.empty else f"{p.name}=_gc_default_{p.name}" for p in parameters
    )
    checks = ["_gc_disable not in _gc_environ", "_gc_errors_state() in _gc_quiet_states", *tests]
    arguments = ", ".join(p.name for p in parameters)
    body = "".join(f"            {line}\n" for line in call)
    return (
        f"def _gc_entry({signature}):\n"
        f"    if {' and '.join(checks)}:\n"
        "        try:\n"
        f"{body}"
        "        except _gc_retried:\n"
        "            pass\n"
        "        else:\n"
        "            _gc_count()\n"
        f"            return {results}\n"
        f"    return _gc_general({arguments})\n"
    )
