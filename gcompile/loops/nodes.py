"""The loop IR's nodes: expressions, statements, accumulators, parameters and the kernel.

Grammar (every node a frozen dataclass; bodies are tuples)::

    Kernel     name, params: Param*, entry: Let*, body: Stmt*, values: Node*,
               accumulators: Accumulator*
    Stmt     = Loop(var, start, stop, step, body, parallel, kind, carried)
             | Let(var, value) | Update(var, op, value)          x = e ; x op= e
             | Store(buffer, index, value)                         b[index] = e
             | Assign(target, value)                               a[2:n, k] = e
             | Init(acc, part) | Accumulate(acc, value, source, part, index)
             | Alloc(var, size, dtype, fill, stack, order, once) | If(cond, body, orelse)
             | Eval(value, writes) | Comment(node, text, names)
             | CallKernel(function, arguments, writes, reads) | Return(values)
             | Release(vars)
             | ObjectMode(outputs, body)
    Expr     = Var(name, node, suffix) | Const(value, dtype) | Load(buffer, index)
             | Cast(value, source, target) | Convert(value, dtype)
             | Apply(op, node, args, loop, kinds, where, fast, exact)
             | BinOp(op, left, right) | Compare(ops, operands) | BoolOp(op, values)
             | IfExp(cond, then, orelse) | Intrinsic(name, args, dtype)
             | RangeCheck(site, value, bound)
             | Size(expr) | Name(text) | Call(function, args) | Attr(value, name)
             | Item(value, items) | Slice(start, stop, step) | Tuple(items)
    Index    = Affine(offset, terms)      flat: offset + sum of coefficient * variable
             | Subscript(items)           one variable (or 0) per axis

A ``Var`` names a variable: ``Var("i1")`` a loop index, ``Var("acc_", node)`` a value derived from
a graph node, whose identifier the renderer's namespace chooses (``acc_v0`` or ``acc_sum_1``).
``Kernel.values`` lists the graph nodes in the order the lowering first referred to them: the
canonical names are numbered in that order, so equal kernels print equal text.

A loop program (a graph with loops, ``backends``) is a ``Kernel`` too: its loops carry values
(``Loop.carried``), it calls kernels (``CallKernel``, integers by keyword), allocates arrays of
a shape (``Alloc`` of a ``Tuple`` size, made once before the loops when ``once``), reads and
writes regions (``Item`` of ``Slice`` items, ``Assign``), computes sizes (``Size``: a symbolic
expression over the symbols of ``Kernel.symbols``) and returns its results (``Return``).

An ``Accumulator`` is the state of one reduction: its kind (how values combine), dtype, start
value, the expression of the result once its loop is done (``final``), whether its sum is
blocked, and its lane kind (how a block of values reduces in vector lanes). Its variables are
``acc_``, ``mid_`` and ``blk_`` (blocked sums), ``lane_`` (a split loop's block buffer) and
``best_``/``at_`` (argmax, argmin); ``part`` selects one of them.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Union

import numpy as np

from ..ir.graph import Node
from ..ir.symbolic import is_expr


class Unsupported(Exception):
    """The kernel holds something the loop IR cannot express (it runs in the interpreter)."""


# -- expressions ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Var:
    """A variable: ``name`` alone (``i1``, ``cnt``, ``n0``), or ``name`` + the identifier of
    ``node`` + ``suffix`` (``acc_`` + ``sum_1``; an input read through views: ``x`` + ``_4``)."""

    name: str
    node: Node | None = None
    suffix: str = ""


@dataclass(frozen=True)
class Const:
    """A literal of ``dtype`` (a Python int with ``dtype`` None: loop and index arithmetic)."""

    value: Any
    dtype: np.dtype | None = None


@dataclass(frozen=True)
class Affine:
    """A flat index ``offset + sum(coefficient * variable)``; a coefficient is 1, -1 or a
    kernel parameter (a stride), the offset a parameter or None."""

    offset: Var | None
    terms: tuple  # ((coefficient, Var), ...)


@dataclass(frozen=True)
class Subscript:
    """One index per axis: a loop variable, or None for index 0."""

    items: tuple


Index = Union[Affine, Subscript]


@dataclass(frozen=True)
class Load:
    """``buffer[index]``."""

    buffer: Var
    index: Index


@dataclass(frozen=True)
class Cast:
    """``value`` of dtype ``source`` converted to ``target`` as NumPy's ``astype`` does (no
    conversion when they are equal)."""

    value: Any
    source: np.dtype
    target: np.dtype


@dataclass(frozen=True)
class Convert:
    """``value`` made a ``dtype`` scalar (always written out: results keep their node's dtype)."""

    value: Any
    dtype: np.dtype


@dataclass(frozen=True)
class Apply:
    """One element of the elementwise op of ``node``, in the node's dtype.

    ``args`` are already in the dtypes the op computes in (``loop``: NumPy's loop for a ufunc,
    inputs then outputs; None when NumPy has none); ``kinds`` are the operands' own dtypes (or
    Python types, for weak scalars), for messages. ``where`` is ``"row"`` for a value computed
    once per row, outside the loops over the row, ``"scalar"`` for a scalar op of a loop
    program, else ``"loop"``. ``fast``: the backend's
    vectorisable expansion is used; ``exact``: a recomputation that must not use a fast path
    with a range limit (set by the rewrites).
    """

    op: Any  # OpDef
    node: Node
    args: tuple
    loop: tuple | None
    kinds: tuple
    where: str = "loop"
    fast: bool = False
    exact: bool = False


@dataclass(frozen=True)
class BinOp:
    """``left op right`` (Python's arithmetic and bitwise operators)."""

    op: str
    left: Any
    right: Any


@dataclass(frozen=True)
class Compare:
    """A chained comparison ``operands[0] ops[0] operands[1] ...``."""

    ops: tuple
    operands: tuple


@dataclass(frozen=True)
class BoolOp:
    """``values`` joined by ``and`` or ``or``."""

    op: str
    values: tuple


@dataclass(frozen=True)
class IfExp:
    """``then if cond else orelse``."""

    cond: Any
    then: Any
    orelse: Any


@dataclass(frozen=True)
class Intrinsic:
    """A helper the backend provides: ``lane_sum``, ``lane_max``, ``rescaled_total``,
    ``shifted_exp``, ``exp`` (float64), ``sqrt``, ``abs``, ``max``. ``dtype``: the element type
    it works on, where the backend's helper depends on it."""

    name: str
    args: tuple
    dtype: np.dtype | None = None


@dataclass(frozen=True)
class RangeCheck:
    """``abs(value) > bound``: the argument of the fast path at ``site`` left its range."""

    site: Node
    value: Any
    bound: Const


@dataclass(frozen=True)
class Size:
    """A symbolic size (``ir.symbolic``) over the symbols ``Kernel.symbols`` names."""

    expr: Any


def size_of(value: Any) -> Any:
    """An int as a ``Const``, a symbolic size as a ``Size``."""
    return Size(value) if is_expr(value) else Const(int(value))


def shape_of(sizes: tuple) -> Any:
    """A shape (ints and symbolic sizes) as a ``Tuple`` of ``size_of`` each."""
    return Tuple(tuple(size_of(size) for size in sizes))


@dataclass(frozen=True)
class Name:
    """A global or builtin the generated code reads (``np.empty``, ``np.float64``)."""

    text: str


@dataclass(frozen=True)
class Call:
    """``function(*args, **dict(keywords))``."""

    function: Any
    args: tuple = ()
    keywords: tuple = ()  # ((name, value), ...)


@dataclass(frozen=True)
class Attr:
    """``value.name``."""

    value: Any
    name: str


@dataclass(frozen=True)
class Slice:
    """``start:stop:step`` in an ``Item`` (None: omitted)."""

    start: Any = None
    stop: Any = None
    step: Any = None


@dataclass(frozen=True)
class Item:
    """``value[items]``: basic indexing, an item an expression, a ``Slice`` or None (a new
    axis); no items is ``value[()]``."""

    value: Any
    items: tuple


@dataclass(frozen=True)
class Tuple:
    """``(item, ...)``: a shape, several results."""

    items: tuple


# -- accumulators and parameters ----------------------------------------------------------------


@dataclass(frozen=True)
class Accumulator:
    """The state of one reduction (see the module docstring).

    ``kind``: ``sum``, ``prod``, ``max``, ``min``, ``any``, ``all`` or ``arg`` (``high``: argmax).
    ``prefix``: ``m_`` for the mean pass of var/std. ``operand``: the dtype of the values
    accumulated. ``online``: for the sum of ``exp(x - max)`` computed with its max in one loop,
    ``(max accumulator, shift node, exp node)``.
    """

    node: Node
    kind: str
    dtype: np.dtype
    init: Any
    final: Any
    operand: np.dtype
    prefix: str = ""
    blocked: bool = False
    lane: str | None = None
    high: bool = False
    online: tuple | None = None

    def var(self, part: str = "acc") -> Var:
        """The variable ``part`` (``acc``, ``mid``, ``blk``, ``lane``, ``best``, ``at``)."""
        prefix = "" if part in ("best", "at") else self.prefix
        return Var(f"{part}_{prefix}", self.node)


@dataclass(frozen=True)
class Param:
    """A kernel parameter: ``var`` and how the host passes it (``argument``, as in
    ``KernelCode.arguments``). ``ndim`` is None for a scalar; ``layout`` and ``readonly``
    describe an array."""

    var: Var
    argument: tuple
    dtype: np.dtype
    ndim: int | None = None
    layout: str = "C"
    readonly: bool = False


# -- statements ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Loop:
    """``for var in range(start, stop, step)``; ``kind`` says what it iterates: ``kept`` (the
    output's axes), ``reduce`` (a reduced axis, or the element loop of a pointwise kernel that
    runs in blocks), ``block`` (blocks of a strip-mined loop), ``fixup`` (a block recomputed),
    ``chunk`` (parallel chunks), ``combine`` (over partial results), or ``columns`` and
    ``column`` (a reduced axis, and a kept one inside it: ``columns``)."""

    var: Var
    start: Any
    stop: Any
    step: int
    body: tuple
    parallel: bool = False
    kind: str = "reduce"
    carried: tuple = ()  # ((var, value), ...): each var set to its value at the end of a trip
    exit: Any = None  # a carried flag (a ``break``'s): true at the end of a trip, the loop ends


@dataclass(frozen=True)
class While:
    """``while True: test; if not cond: break; body; carried``: a loop that runs while a
    condition computed by the ``test`` statements holds (a program's ``while_loop``); each
    ``carried`` var is set to its value at the end of a trip."""

    test: tuple
    cond: Any
    body: tuple
    carried: tuple = ()


@dataclass(frozen=True)
class Let:
    """``var = value``."""

    var: Var
    value: Any


@dataclass(frozen=True)
class Update:
    """``var op= value`` (``cnt += 1``, ``acc_x *= shrink_x``)."""

    var: Var
    op: str
    value: Any


@dataclass(frozen=True)
class Store:
    """``buffer[index] = value``."""

    buffer: Var
    index: Index
    value: Any


@dataclass(frozen=True)
class Init:
    """The accumulator's variable ``part`` set to its start value."""

    acc: Accumulator
    part: str = "acc"


@dataclass(frozen=True)
class Accumulate:
    """``value`` (of dtype ``source``) combined into the accumulator's variable ``part``;
    an ``arg`` accumulator records ``index`` with a better value."""

    acc: Accumulator
    value: Any
    source: Any
    part: str = "acc"
    index: Var | None = None


@dataclass(frozen=True)
class Alloc:
    """``var``: a new buffer of ``size`` elements of ``dtype`` (or of a shape: a ``Tuple``, in
    memory ``order``), on the stack (``stack``: a block buffer) or the heap, filled with
    ``fill`` when not None. ``once``: one buffer serves every trip of the loops around it
    (the ``allocations`` rewrite moves it before them)."""

    var: Var
    size: Any
    dtype: np.dtype
    fill: Any = None
    stack: bool = False
    order: str = "C"
    once: bool = False


@dataclass(frozen=True)
class Assign:
    """``target = value``, ``target`` an ``Item`` (a store into a region of an array)."""

    target: Any
    value: Any


@dataclass(frozen=True)
class CallKernel:
    """A call of a compiled kernel: ``arguments`` are ``(keyword, value)`` pairs, keyword None
    for the arrays and scalars passed by position, the parameter's name for an integer.

    ``writes`` and ``reads``, when the caller knows them (loop programs), are what the call
    touches: the arrays it writes (an output buffer) or the region it writes of one (an
    ``Item`` of the input it writes in place), and the arrays and regions it reads. None:
    every array passed by position may be read and written anywhere."""

    function: Var
    arguments: tuple
    writes: tuple | None = None
    reads: tuple | None = None


@dataclass(frozen=True)
class Return:
    """``return (values...)``: a program's results; ``bare``: its one value as itself, not in a
    1-tuple (a program of one result: its callers neither box nor index a tuple), none
    as ``return``."""

    values: tuple
    bare: bool = False


@dataclass(frozen=True)
class ObjectMode:
    """``body`` run by the Python interpreter from compiled code (a library call Numba has no
    implementation of), setting ``outputs``: ``((var, Numba type text), ...)``."""

    outputs: tuple
    body: tuple


@dataclass(frozen=True)
class Release:
    """``del vars``: values no later statement reads (their memory goes back when nothing else
    holds it)."""

    vars: tuple


@dataclass(frozen=True)
class Raise:
    """``raise exception(message)``, ``exception`` the global naming its class (a program's
    entry refusing inputs it was not compiled for); ``message`` None: ``raise exception()``."""

    exception: str
    message: str | None


@dataclass(frozen=True)
class If:
    """``if cond: body else: orelse``."""

    cond: Any
    body: tuple
    orelse: tuple = ()


@dataclass(frozen=True)
class Eval:
    """An expression evaluated for its effect (a helper writing into buffers); ``writes``: the
    regions it writes (``Item``s of its arguments), when the caller knows them; it reads its
    other arguments, and nothing else of those it writes."""

    value: Any
    writes: tuple | None = None


@dataclass(frozen=True)
class Comment:
    """A line of the readable form: the IR line of ``node``, or ``text`` formatted with the
    identifiers of ``names``."""

    node: Node | None = None
    text: str = ""
    names: tuple = ()


@dataclass(frozen=True)
class Kernel:
    """One fused kernel as a loop nest (see the module docstring).

    ``outputs``: ``(meta, order)`` per output buffer; ``reduced``: the reduced axes;
    ``parallel``: some loop is a ``prange`` (the rewrites decide); ``entry``: what runs once
    before the body, which no rewrite touches (the flat views of the inputs read as memory);
    ``writes``: the input the result is written into, in place (None: into output buffers).
    """

    name: str
    params: tuple
    body: tuple
    values: tuple
    accumulators: tuple
    outputs: tuple = ()
    reduced: tuple = ()
    parallel: bool = False
    entry: tuple = ()
    writes: int | None = None
    symbols: tuple = ()  # ((symbol, Var), ...): the variable holding each symbol of a Size


def typed(value: Any, kind: Any, dtype: np.dtype) -> Any:
    """An operand of dtype (or Python type) ``kind`` converted to ``dtype``: a Python literal
    becomes a typed literal; None (an absent operand) stays None."""
    if value is None:
        return None
    if not dataclasses.is_dataclass(value):
        return Const(value, dtype)
    return Cast(value, np.dtype(kind), dtype)  # np.dtype(float) is float64, and so on


COUNTER = Var("cnt")  # the position of the element in its row (argmax, stashed values)


def size_var(axis: int) -> Var:
    """The parameter holding the size of ``axis`` of the iteration space."""
    return Var(f"n{axis}")


def index_var(axis: int) -> Var:
    """The loop variable of ``axis``."""
    return Var(f"i{axis}")


def product(factors: list) -> Any:
    """``f0 * f1 * ...`` associated to the left, or the literal 1."""
    if not factors:
        return Const(1)
    total = factors[0]
    for factor in factors[1:]:
        total = BinOp("*", total, factor)
    return total
