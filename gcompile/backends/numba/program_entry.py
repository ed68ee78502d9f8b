"""A whole graph's program as an entry of its own: it reads its sizes from its inputs and checks
what the trace assumed about them, so a call can reach it from Python with nothing between
(``api``'s fast entry; the host function calls it the same way)::

    def kernel(a0, a1, c0):
        s0, s1 = a0.shape
        s2, = a1.shape
        # sizes checked by table c0: s0 >= 2, s1 >= 2, s2 >= 2, s2 == s1
        if _size_checks.broken((s0, s1, s2), c0):
            raise _GuardFailure('the inputs have sizes this program was not compiled for')
        ...

The checks are those of the entry's guard key and size check (``guards``) that types do not
express: each symbol is 2 or more (0 and 1 are specialised), a size the trace fixed is that
size, and the trace's learned equalities and guards hold; the polynomial ones are a table
(``c0``: the program's first constant) that one function compiled once reads
(``size_checks``). Dtypes, ranks, layouts and writeability are in the program's Numba
signature.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from ...ir.graph import Graph
from ...ir.shape_env import SIZE_LOW, source_of
from ...ir.symbolic import product_of
from ...loops.nodes import (
    Assign,
    Attr,
    BoolOp,
    Call,
    Comment,
    Compare,
    Const,
    If,
    Item,
    Let,
    Name,
    Raise,
    Tuple,
    Var,
    size_of,
)
from . import size_checks
from .memory import POOLED

_NEGATED = {"==": "!=", "!=": "==", "<": ">=", "<=": ">", ">": "<=", ">=": "<"}
MESSAGE = "the inputs have sizes this program was not compiled for"


class GuardFailure(Exception):
    """A program's entry called with inputs whose sizes its trace did not assume (the caller
    then takes the general path, which checks the guards and compiles for them). Raised
    before anything is written."""


def entry_statements(graph: Graph, inputs: list, symbols: dict, constant: Callable) -> list:
    """The statements binding each size symbol to its input's size (``symbols``, symbol ->
    ``Var``, receives them) and raising ``GuardFailure`` when the sizes break an assumption:
    those that are polynomials in a table ``size_checks.broken`` reads (``constant`` makes an
    array a parameter and returns its variable), the others written out."""
    env = graph.shape_env
    placeholders = graph.placeholders
    statements, failures = [], []
    by_input: dict = {}
    for symbol, (position, axis) in env.sources.items():
        symbols[symbol] = Var(symbol.name)
        if axis is None:  # a Python int argument, itself the size
            statements.append(Let(symbols[symbol], inputs[position]))
        else:
            by_input.setdefault(position, {})[axis] = symbols[symbol]
    for position, placeholder in enumerate(placeholders):
        read = by_input.get(position, {})
        shape = Attr(inputs[position], "shape")
        if read:
            names = tuple(read.get(axis, Var("_")) for axis in range(placeholder.meta.ndim))
            statements.append(Assign(Tuple(names), shape))
        for axis, size in enumerate(getattr(placeholder.meta, "shape", ())):
            if axis not in read:
                failures.append(Compare(("!=",), (Item(shape, (Const(axis),)), size_of(size))))
    conditions = [(">=", symbol, SIZE_LOW) for symbol in env.sources]
    conditions += [(relation, lhs, rhs) for relation, lhs, rhs, _ in env.conditions()]
    positions = {symbol: position for position, symbol in enumerate(env.sources)}
    table, others = size_checks.encode(conditions, positions)
    if len(table):
        parameter = constant(table)
        tabled = [c for c in conditions if c not in others]
        text = ", ".join(f"{lhs} {relation} {rhs}" for relation, lhs, rhs in tabled)
        statements.append(Comment(text=f"sizes checked by table {{}}: {text}", names=(parameter,)))
        sizes = Tuple(tuple(symbols[symbol] for symbol in env.sources))
        failures.append(Call(Name("_size_checks.broken"), (sizes, parameter)))
    for relation, lhs, rhs in others:
        failures.append(Compare((_NEGATED[relation],), (size_of(lhs), size_of(rhs))))
    if failures:
        failed = failures[0] if len(failures) == 1 else BoolOp("or", tuple(failures))
        statements.append(If(failed, (Raise("_GuardFailure", MESSAGE),)))
    return statements


@dataclass(frozen=True)
class ProgramEntry:
    """What a call needs to reach a whole graph's program straight from Python (``fast_entry``):
    ``function(*inputs, *buffers, *constants)`` writes each output whose ``in_buffers`` item is
    a buffer's position there and returns the others (one bare, none as None)."""

    function: Any  # the Numba dispatcher (compiling nothing more)
    constants: tuple  # the arrays it reads, passed last
    buffers: tuple  # a ``CallerBuffer`` per buffer it is passed
    in_buffers: list  # per output of the graph, the buffer it is written into, else None
    pooled: Callable  # the allocator of large buffers (the host's pool)
    converts: tuple  # per output of the graph, its ``result_type`` (None: as returned)


def result_type(meta) -> Callable | None:
    """What makes a program's result of ``meta`` the graph's value in Python: None for an
    array (as Numba returns it); for a 0-d array, the array again (Numba returns its element);
    for a scalar, its NumPy type, or Python's when weak (``s = x * 0.5`` of a Python float
    stays a float)."""
    if meta.ndim:
        return None
    if not meta.scalar:
        return functools.partial(np.asarray, dtype=meta.dtype)
    if meta.weak:
        return type(np.zeros((), meta.dtype).item())
    return meta.dtype.type


@dataclass(frozen=True)
class CallerBuffer:
    """An array a whole graph's program is passed to write (its ``buffers``), as a caller that
    has only the graph's inputs makes it (``fast_entry``): ``shape`` over the symbols, read from
    the inputs as ``sources`` says (symbol -> (input position, axis; None: an int input)).
    ``pooled``: large at the traced sizes, so taken from the host's buffer pool."""

    shape: tuple
    dtype: np.dtype
    order: str
    pooled: bool
    sources: dict
    ranks: tuple = ()  # each input's rank (its whole shape stands for a buffer's of its rank)

    def shape_source(self, inputs: list) -> str:
        """Python source of the shape, the inputs named ``inputs`` (in the graph's order)."""
        whole = {(position, axis): symbol for symbol, (position, axis) in self.sources.items()}
        for position, name in enumerate(inputs):  # (an input's shape: read at once)
            if (
                self.shape
                and self.ranks[position] == len(self.shape)
                and [whole.get((position, a)) for a in range(len(self.shape))] == list(self.shape)
            ):
                return f"{name}.shape"
        names = {
            symbol: inputs[position] if axis is None else f"{inputs[position]}.shape[{axis}]"
            for symbol, (position, axis) in self.sources.items()
        }
        sizes = [source_of(size, names) for size in self.shape]
        return f"({', '.join(sizes)}{',' if len(sizes) == 1 else ''})"


def caller_buffers(graph: Graph, buffers: list) -> tuple:
    """The ``CallerBuffer`` of each of a whole graph's program's ``buffers`` ((shape, dtype,
    order) each)."""
    env = graph.shape_env
    sources, ranks = dict(env.sources), tuple(p.meta.ndim for p in graph.placeholders)
    return tuple(
        CallerBuffer(
            tuple(shape),
            np.dtype(dtype),
            order,
            env.hint(product_of(shape)) * np.dtype(dtype).itemsize >= POOLED,
            sources,
            ranks,
        )
        for shape, dtype, order in buffers
    )
