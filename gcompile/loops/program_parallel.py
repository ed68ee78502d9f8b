"""Parallel program loops: a top-level loop of a loop program whose trips are independent runs
them on all threads (a ``prange``) when its work is large enough; else it runs as it was.

::

    out0_fused_1 = alloc once[(1,)] f64 C        out0_fused_1 = alloc once[(1,)] f64 C
    for k0 in range(s0) [program]:               if 8*s0*s1+s0 >= 4194304:
      call _fused_1(out0_fused_1, A, x, ...)       for k0 in prange(s0) [program]:
      fused_1 = out0_fused_1[0]         =>           out0_fused_1_2 = alloc[(1,)] f64 C
      empty_1[k0] = fused_1                          call _fused_1(out0_fused_1_2, A, x, ...)
                                                     fused_1 = out0_fused_1_2[0]
                                                     empty_1[k0] = fused_1
                                                 else:
                                                   for k0 in range(s0) [program]: (as before)

A loop's trips are independent (``parallel_copy``; else ``Dependent`` says why) when:

- its index counts up by 1 from a start proved >= 0 (an index never wraps around to the end);
- it carries no values (but an array carried as itself, ``empty_1_2, = empty_1_3,`` where
  ``empty_1_3 = empty_1_2``: that assignment is dropped from the parallel copy);
- its body holds only statements whose reads and writes are known: no call back into Python
  (``ObjectMode``), ``Return``, parallel loop, or helper call that does not say what it writes
  (a matrix product: BLAS runs threads of its own);
- every variable its body sets is set nowhere else and read nowhere after the loop (so each
  trip has its own: Numba's ``prange`` makes them private; no value is reduced across trips);
- every array it writes (a store, a region assigned, a kernel's output buffer or the region a
  kernel writes in place, a copy's destination) is new in the trip (allocated in the body), or
  every access of that array in the body, read or written, holds the loop index as the plain
  index of one same axis (``out[k0, :]``, ``out[k0, k1]``, a view ``row = out[k0]``; not
  ``out[k0 - 1]``, ``out[:, k0]`` beside ``out[k0]``, nor a view whose axes it does not follow:
  a reshape, a transpose, a slice not from the start by step 1). A kernel call or a copy says
  which regions it reads and writes (``CallKernel.writes``/``reads``, ``Eval.writes``); one
  that does not reads and writes every array it is passed, anywhere.

A buffer made once for every trip (``once``, hoisted by ``allocations``) becomes one per trip in
the parallel copy (Numba makes one per thread when only stores write it). Only top-level loops
run in parallel: a loop in a trip of another stays serial.

A loop of more than ``MAX_STATEMENTS`` graph statements stays serial (its parallel compile would
be long). The parallel copy runs when the loop's work reaches ``SCALE * parallel_threshold``
elements (``Context.parallel_threshold``, a kernel's threshold), tested where the loop starts.
A loop gets a parallel copy only when its work at the traced sizes reaches ``PARALLEL_COMPILE``
times that: Numba compiles a program with a parallel loop seconds longer, which pays on large
arrays only (a later call with sizes that large runs the loop serially).
The work is counted from the graph node each group of statements comes from (its ``Comment``):
``ELEMENT`` per element of a kernel's iteration space or of an array value, 1 per scalar
statement; times the trips of an inner loop (at its middle trip), and of the loop itself. The
rewrite runs after ``allocations`` and ``select_math``: both copies compute the same values in
the same way.
"""

from __future__ import annotations

import dataclasses
import sys
from dataclasses import dataclass

from ..ir import ops
from ..ir.kernel import FusedKernel
from ..ir.shape_env import SymbolicError, hint
from ..ir.subgraph import subgraphs_of
from ..ir.symbolic import free_symbols, is_int, product_of, prove_nonnegative, substitute
from .nodes import (
    Alloc,
    Apply,
    Assign,
    Attr,
    BinOp,
    BoolOp,
    Call,
    CallKernel,
    Cast,
    Comment,
    Compare,
    Const,
    Convert,
    Eval,
    If,
    Intrinsic,
    Item,
    Kernel,
    Let,
    Load,
    Loop,
    Name,
    ObjectMode,
    Size,
    Slice,
    Store,
    Subscript,
    Tuple,
    Update,
    Var,
    size_of,
)
from .rewrite import Context, map_exprs

# The work of a loop is counted in scalar statements, an element of a kernel's iteration space or
# of an array value as ELEMENT of them (measured on 2 free cores: an element of a kernel in a
# loop 0.2 ns (a row sum) to 0.9 ns (tanh); a scalar statement of an element loop LLVM vectorises
# 0.04 ns, of one calling exp 0.6 ns). A loop runs in parallel from SCALE * ``parallel_threshold``
# elements: starting a parallel loop costs ~30-45 us there (threads waiting passively), so it pays
# from ~100 us of serial work. Loops of row sums (y[i] = sum(A[i] * x)): 512 x 512 55 us serial,
# 82 us parallel; 1024 x 1024 212 us and 173 us. Of tanh rows: 512 x 512 235 us and 164 us.
ELEMENT = 8
SCALE = 4
# Parallel code is compiled only for work of PARALLEL_COMPILE times the parallel threshold at
# the traced sizes (2^22 elements by default): a loop's parallel copy, or a whole program's
# parallel kernel variant (``program_kernels.in_parallel``), takes 2-4 times a serial one's
# compile. npbench at preset S, 2 cores: lenet 5.9 s first call with its loops' parallel copies,
# 3.9 s without, at the same speed; hdiff 6.8 s with parallel kernels, 2.5 s without, 1.24x
# slower.
PARALLEL_COMPILE = 32
# The most graph statements a loop's body may hold to get a parallel copy: Numba compiles a
# program with a parallel loop about 4 times slower (measured: a loop of 120 statements 0.25 s
# serial, 0.9 s with its parallel copy; of 300 statements 0.56 s and 2.1 s).
MAX_STATEMENTS = 128
_FRESH = ("np.empty", "np.zeros", "np.ones", "np.full")  # calls making a new array
_SCALARS = (Apply, BinOp, BoolOp, Cast, Compare, Const, Convert, Intrinsic, Load, Size)
_SKIPPED = ("node", "op", "site", "acc")  # fields that hold no variable of the loop IR


class Dependent(Exception):
    """Why a loop's trips may not run in parallel."""


def parallel_program_loops(kernel: Kernel, ctx: Context) -> Kernel:
    """Each independent top-level program loop of enough work as a ``prange`` beside its serial
    form (see the module docstring); nothing when the options turn parallelism off."""
    if not ctx.parallel:
        return kernel
    body = list(kernel.body)
    for position, stmt in enumerate(body):
        if isinstance(stmt, Loop) and stmt.kind == "program":
            body[position] = _parallel_choice(kernel, position, ctx.parallel_threshold)
    if all(new is old for new, old in zip(body, kernel.body)):
        return kernel
    return dataclasses.replace(kernel, body=tuple(body), parallel=True)


def _parallel_choice(kernel: Kernel, position: int, elements: int):
    """The loop at ``position``; or its parallel copy, alone or chosen by its work."""
    loop = kernel.body[position]
    work, threshold = trip_work(kernel, position), SCALE * ELEMENT * elements
    if work is None or _statements(loop) > MAX_STATEMENTS:
        return loop
    if _traced(work) < PARALLEL_COMPILE * ELEMENT * elements:  # (past the run-time bar)
        return loop
    try:
        parallel = parallel_copy(kernel, position)
    except Dependent:
        return loop
    if is_int(work):
        return parallel
    return If(Compare((">=",), (size_of(work), Const(int(threshold)))), (parallel,), (loop,))


def _traced(work) -> int:
    """The work at the traced sizes (a trace's sizes active: ``shape_env.using``), or at
    least the threshold when no sizes are known."""
    if is_int(work):
        return work
    try:
        return hint(work)
    except SymbolicError:
        return sys.maxsize


def parallel_copy(kernel: Kernel, position: int) -> Loop:
    """The top-level loop at ``position`` as a ``prange`` with a buffer of its own for each
    buffer made once; raises ``Dependent`` when its trips may depend on each other."""
    loop = kernel.body[position]
    if loop.exit is not None:
        raise Dependent("a loop that breaks")
    symbol = dict((var, symbol) for symbol, var in kernel.symbols).get(loop.var)
    _check_range(loop)
    body = _private_buffers(kernel, position, _without_noop_carries(loop))
    _Trips(kernel, position, symbol).check(body)
    return dataclasses.replace(loop, body=body, carried=(), parallel=True)


def _check_range(loop: Loop) -> None:
    """Step 1 from a start proved >= 0: every trip's index is its own element."""
    if loop.step != 1:
        raise Dependent(f"a loop of step {loop.step}")
    start = loop.start
    if isinstance(start, Const) and is_int(start.value) and start.value >= 0:
        return
    if isinstance(start, Size) and prove_nonnegative(start.expr) is True:
        return
    raise Dependent("a loop whose start may be negative")


def _without_noop_carries(loop: Loop) -> tuple:
    """The body, once every carried value is checked to be the variable itself (``t = v``
    where the body's ``v = t`` is its only setting of ``v``); else ``Dependent``."""
    for target, value in loop.carried:
        settings = [s for s in _settings(loop.body) if value in _set_by(s)]
        alias = Let(value, target)
        if settings != [alias] or alias not in loop.body or target in _assigned(loop.body):
            raise Dependent(f"a loop carrying {_display(target)}")
    return loop.body


def _private_buffers(kernel: Kernel, position: int, body: tuple) -> tuple:
    """``body`` with a buffer of its own (allocated first in each trip) for each buffer made
    once before the loops that it uses; ``Dependent`` for one used elsewhere too."""
    loop, renames, allocations = kernel.body[position], {}, []
    for stmt in kernel.body[:position]:
        if not (isinstance(stmt, Alloc) and stmt.once and stmt.var in _vars_in(body)):
            continue
        others = [s for s in kernel.body if s is not stmt and s is not loop]
        if stmt.var in _vars_in(tuple(others)):
            raise Dependent(f"a buffer made once, {_display(stmt.var)}, used beside the loop")
        renames[stmt.var] = Var("", _Private(_display(stmt.var)))
        allocations.append(dataclasses.replace(stmt, var=renames[stmt.var], once=False))
    if not renames:
        return body
    body = map_exprs(body, lambda e: renames.get(e, e) if isinstance(e, Var) else e)
    return tuple(allocations) + body


@dataclass(frozen=True, eq=False)
class _Private:
    """A stand-in with a name, for a trip's own buffer (the namespace makes it unique)."""

    name: str


@dataclass(frozen=True)
class _View:
    """Memory an array value may be: part of ``root``'s. Its axes are ``lead`` (each the axis
    of ``root`` it runs along, None when unknown) then ``root``'s axes from ``tail`` on (None:
    unknown); ``pins`` are the axes of ``root`` it holds at the trip's own index."""

    root: Var
    lead: tuple = ()
    tail: int | None = 0
    pins: frozenset = frozenset()


class _Trips:
    """What a loop body reads and writes, per array it may touch (see the module docstring)."""

    def __init__(self, kernel: Kernel, position: int, symbol):
        self.kernel, self.position = kernel, position
        self.index, self.symbol = kernel.body[position].var, symbol
        self.views: dict = {self.index: ()}  # variable -> the _Views its value may be
        self.private: set = set()  # arrays allocated in the trip
        self.accesses: list = []  # (root, pins, written)
        for stmt in kernel.entry + kernel.body[:position]:
            if isinstance(stmt, Let):
                self.define(stmt.var, stmt.value)

    def check(self, body: tuple) -> None:
        """Raise ``Dependent`` unless the trips of ``body`` are independent."""
        self.block(body)
        self.check_variables(body)
        roots: dict = {}
        for root, pins, written in self.accesses:
            roots.setdefault(root, []).append((pins, written))
        for root, uses in roots.items():
            if root in self.private or not any(written for _, written in uses):
                continue
            if not frozenset.intersection(*(pins for pins, _ in uses)):
                raise Dependent(f"{_display(root)} is written beyond the trip's own index")

    def check_variables(self, body: tuple) -> None:
        """Every variable the body sets is set nowhere else and read nowhere after the loop."""
        kernel, position = self.kernel, self.position
        outside = _assigned(kernel.entry + kernel.body[:position] + kernel.body[position + 1 :])
        outside |= {param.var for param in kernel.params}
        outside |= _vars_in(kernel.body[position + 1 :])
        shared = (_assigned(body) | {self.index}) & outside
        if shared:
            raise Dependent(f"{_display(min(shared, key=_display))} is set in the trip and outside")

    def block(self, stmts: tuple) -> None:
        for stmt in stmts:
            self.statement(stmt)

    def statement(self, stmt) -> None:
        """Record what ``stmt`` reads, writes and defines; ``Dependent`` for one that does
        something the rewrite does not follow."""
        if isinstance(stmt, Comment):
            return
        if isinstance(stmt, Let):
            self.read_indices(stmt.value)
            self.define(stmt.var, stmt.value, trip=True)
        elif isinstance(stmt, Alloc):
            if stmt.once:
                raise Dependent(f"a buffer made once for every trip, {_display(stmt.var)}")
            self.read((stmt.size, stmt.fill))
            self.define(stmt.var, None, trip=True)
        elif isinstance(stmt, Assign):
            self.assign(stmt)
        elif isinstance(stmt, Store):
            self.touch(stmt.buffer, True, _index_items(stmt.index))
            self.read(stmt.value)
        elif isinstance(stmt, CallKernel):
            self.call(stmt)
        elif isinstance(stmt, Eval):
            self.helper(stmt)
        elif isinstance(stmt, Loop):
            self.inner_loop(stmt)
        elif isinstance(stmt, If):
            self.read(stmt.cond)
            self.block(stmt.body + stmt.orelse)
        elif isinstance(stmt, Update):
            self.read((stmt.var, stmt.value))
        else:
            raise Dependent(f"a {type(stmt).__name__} in the loop body")

    def define(self, var: Var, value, trip: bool = False) -> None:
        """``var`` set to ``value`` (None: a new array) may be what ``value`` may be, besides
        what an earlier setting of it made it: a new array (of the trip's own when ``trip``),
        or a view of the arrays ``value`` mentions (and maybe new memory, for an expression
        the rewrite does not follow)."""
        if value is None or _fresh(value):
            self.private.update((var,) if trip else ())
            views = (_View(var),)
        elif isinstance(value, (Var, Item) + _SCALARS):
            views = self.view_of(value)
        else:
            views = self.view_of(value) + (_View(var),)
        self.views[var] = tuple(dict.fromkeys(self.views.get(var, ()) + views))

    def assign(self, stmt: Assign) -> None:
        """A store into a region, or results unpacked into variables."""
        self.read(stmt.value)
        if isinstance(stmt.target, Tuple):
            for var in stmt.target.items:
                self.define(var, stmt.value, trip=True)
        else:
            self.touch(stmt.target, True)

    def call(self, stmt: CallKernel) -> None:
        """A kernel call: what it says it touches, else every array it is passed, read and
        written anywhere."""
        self.read(tuple(v for keyword, v in stmt.arguments if keyword is not None))
        if stmt.writes is None or stmt.reads is None:
            for keyword, value in stmt.arguments:
                if keyword is None:
                    self.touch(value, True)
                    self.touch(value, False)
            return
        for region in stmt.writes:
            self.touch(region, True)
        for region in stmt.reads:
            self.touch(region, False)

    def helper(self, stmt: Eval) -> None:
        """A helper call that says which regions it writes (it reads its other arguments);
        any other refuses (a matrix product: BLAS runs threads of its own)."""
        value = stmt.value
        if stmt.writes is None or not isinstance(value, Call):
            name = getattr(getattr(value, "function", None), "text", "a helper")
            raise Dependent(f"a call of {name} in the loop body")
        written = set()
        for region in stmt.writes:
            self.touch(region, True)
            while isinstance(region, Item):
                region = region.value
            written.add(region)
        self.read(tuple(v for v in value.args + value.keywords if v not in written))

    def inner_loop(self, loop: Loop) -> None:
        """A loop in the body: walked twice, so that a value carried into its next trip is
        seen where it is read."""
        if loop.parallel:
            raise Dependent("a parallel loop in the loop body")
        self.read((loop.start, loop.stop))
        self.define(loop.var, loop.start)
        for _ in range(2):
            self.block(loop.body)
            for target, value in loop.carried:
                self.read(value)
                self.define(target, value, trip=True)

    def read(self, value) -> None:
        """Record the arrays ``value`` reads (a shape is no read of the array's elements)."""
        if isinstance(value, (Var, Item)):
            self.touch(value, False)
        elif isinstance(value, Load):
            self.touch(value.buffer, False, _index_items(value.index))
        elif isinstance(value, (Size, Const, Name)) or _is_shape(value):
            return
        elif isinstance(value, tuple):
            for item in value:
                self.read(item)
        elif dataclasses.is_dataclass(value) and not isinstance(value, type):
            for field in dataclasses.fields(value):
                if field.name not in _SKIPPED:
                    self.read(getattr(value, field.name))

    def read_indices(self, value) -> None:
        """Record what ``value`` reads, but for a variable or region ``Item`` (a view: its
        uses are its reads) the indices only."""
        while isinstance(value, Item):
            self.read(value.items)
            value = value.value
        if not isinstance(value, Var):
            self.read(value)

    def touch(self, value, written: bool, items: tuple | None = ()) -> None:
        """Record an access of ``value`` (a variable, a region ``Item``, an expression) at
        ``items`` (None: at flat positions)."""
        base, groups = value, [items]
        while isinstance(base, Item):
            base, groups = base.value, [base.items] + groups
        for group in groups:
            self.read(group)
        if not isinstance(base, Var):
            self.read(base)
        views = self.view_of(base)
        for group in groups:
            views = tuple(self.compose(view, group) for view in views)
        self.accesses += [(view.root, view.pins, written) for view in views]

    def view_of(self, value) -> tuple:
        """The _Views ``value`` may be: none for a scalar or a shape; for an expression this
        does not follow, a view of unknown axes of every array it mentions."""
        if isinstance(value, Var):
            return self.views[value] if value in self.views else (_View(value),)
        if isinstance(value, Item):
            return tuple(self.compose(v, value.items) for v in self.view_of(value.value))
        if value is None or isinstance(value, _SCALARS + (int, float, complex, str)):
            return ()
        if _is_shape(value):
            return ()
        views = [self.view_of(var) for var in _vars_in(value)]
        return tuple(dataclasses.replace(v, lead=(), tail=None) for vs in views for v in vs)

    def compose(self, view: _View, items) -> _View:
        """``view`` indexed by ``items`` (None: a flat index, which keeps its pins only)."""
        if items is None:
            return dataclasses.replace(view, lead=(), tail=None)
        lead, tail, pins, axes = list(view.lead), view.tail, set(view.pins), []
        for item in items:
            if item is None:
                axes.append(None)
                continue
            if lead:
                axis = lead.pop(0)
            else:
                axis, tail = tail, None if tail is None else tail + 1
            if isinstance(item, Slice):
                axes.append(axis if _whole_axis(item) else None)
            elif axis is not None and self.is_index(item):
                pins.add(axis)
        return _View(view.root, tuple(axes + lead), tail, frozenset(pins))

    def is_index(self, item) -> bool:
        """Whether ``item`` is the loop index itself."""
        if isinstance(item, Size):
            return self.symbol is not None and item.expr == self.symbol
        return item == self.index


def _whole_axis(item: Slice) -> bool:
    """A slice from the start by step 1: its positions are the axis's own."""
    return item.start in (None, Const(0)) and item.step in (None, Const(1))


def _is_shape(value) -> bool:
    """Whether ``value`` is an array's shape (no read of its elements)."""
    return isinstance(value, Attr) and value.name == "shape"


def _index_items(index) -> tuple | None:
    """A ``Store``/``Load`` index as items (None: a flat index)."""
    if isinstance(index, Subscript):
        return tuple(Const(0) if var is None else var for var in index.items)
    return None


def _fresh(value) -> bool:
    """Whether ``value`` is a new array (an allocation, a copy)."""
    if not isinstance(value, Call):
        return False
    function = value.function
    if isinstance(function, Name):
        return function.text in _FRESH
    return isinstance(function, Attr) and function.name == "copy"


def _inner(stmt) -> tuple:
    """The statements ``stmt`` holds (a loop's body, a branch's, a test's)."""
    blocks = (getattr(stmt, name, ()) for name in ("test", "body", "orelse"))
    return tuple(inner for block in blocks if isinstance(block, tuple) for inner in block)


def _settings(stmts: tuple) -> list:
    """The statements of ``stmts`` (nested ones too) that set variables."""
    found = []
    for stmt in stmts:
        if _set_by(stmt):
            found.append(stmt)
        found += _settings(_inner(stmt))
    return found


def _set_by(stmt) -> tuple:
    """The variables ``stmt`` itself sets (a loop: its index first, then its carried values)."""
    if isinstance(stmt, (Let, Alloc, Update)):
        return (stmt.var,)
    if isinstance(stmt, Assign) and isinstance(stmt.target, Tuple):
        return tuple(stmt.target.items)
    if isinstance(stmt, ObjectMode):
        return tuple(var for var, _ in stmt.outputs)
    index = (stmt.var,) if isinstance(stmt, Loop) else ()
    return index + tuple(target for target, _ in getattr(stmt, "carried", ()))


def _assigned(stmts: tuple) -> set:
    """Every variable ``stmts`` set, nested statements included."""
    return {var for stmt in _settings(stmts) for var in _set_by(stmt)}


def _vars_in(value) -> set:
    """Every variable in ``value`` (statements or expressions)."""
    if isinstance(value, Var):
        return {value}
    if isinstance(value, (Size, Const, Name)):
        return set()
    if isinstance(value, tuple):
        return set().union(*(_vars_in(item) for item in value))
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = (f for f in dataclasses.fields(value) if f.name not in _SKIPPED)
        return set().union(*(_vars_in(getattr(value, f.name)) for f in fields))
    return set()


def _display(var: Var) -> str:
    return var.name + getattr(var.node, "name", "") + var.suffix


# -- the work of a loop ---------------------------------------------------------------------------


def trip_work(kernel: Kernel, position: int):
    """The work of the top-level loop at ``position`` in all its trips (an int, or a size over
    the sizes the program holds before it); None when it has no such estimate."""
    symbols = {var: symbol for symbol, var in kernel.symbols}
    work = _loop_work(kernel.body[position], symbols)
    given = {symbol for symbol, var in kernel.symbols if var in _set_before(kernel, position)}
    if work is None or not is_int(work) and not free_symbols(work) <= given:
        return None
    return work


def _set_before(kernel: Kernel, position: int) -> set:
    """The variables set before the top-level statement at ``position``: the parameters, and
    what the entry and the top-level statements before it set (a loop: its carried values)."""
    found = {param.var for param in kernel.params}
    for stmt in kernel.entry + kernel.body[:position]:
        found.update(_set_by(stmt)[1:] if isinstance(stmt, Loop) else _set_by(stmt))
    return found


def _loop_work(loop: Loop, symbols: dict):
    """A loop's trips times the work of its middle trip."""
    start, stop = _symbolic(loop.start), _symbolic(loop.stop)
    work = _work(loop.body, symbols)
    if start is None or stop is None or work is None:
        return None
    step = loop.step
    trips = (stop - start + step - 1) // step if step > 0 else (start - stop - step - 1) // -step
    if loop.var in symbols:
        work = substitute(work, {symbols[loop.var]: (start + stop) // 2})
    return trips * work


def _work(stmts: tuple, symbols: dict):
    """The elements one run of ``stmts`` touches: each graph node's (its ``Comment`` heads the
    statements it became), and each program loop's."""
    total = 0
    for stmt in stmts:
        if isinstance(stmt, Comment) and stmt.node is not None:
            part = _node_work(stmt.node)
        elif isinstance(stmt, Loop) and stmt.kind == "program":
            part = _loop_work(stmt, symbols)
        elif isinstance(stmt, (Loop, If)):  # (a region's loops: their node counts them)
            part = _work(stmt.body + getattr(stmt, "orelse", ()), symbols)
        else:
            continue
        if part is None:
            return None
        total = total + part
    return total


def _node_work(node):
    """The work of a node's statements: of a kernel's iteration space, of a stored value's
    elements or of its result's elements (``ELEMENT`` each); one scalar statement for a view or a
    scalar; none for a loop (its statements count)."""
    target = node.target
    if isinstance(target, FusedKernel):
        return ELEMENT * product_of(target.space)
    if subgraphs_of(node):
        return 0
    value = node.args[1] if target in (ops.STORE, ops.PUT_STORE) else node
    shape = getattr(getattr(value, "meta", None), "shape", ())
    if not shape or getattr(target, "kind", None) == "view":
        return 1
    return ELEMENT * product_of(shape)


def _statements(stmt) -> int:
    """The graph statements of ``stmt`` and the statements it holds (each heads its statements
    with a ``Comment``)."""
    if isinstance(stmt, Comment):
        return stmt.node is not None
    return sum(_statements(inner) for inner in _inner(stmt))


def _symbolic(value):
    """A loop bound as an int or a symbolic size; None for another expression."""
    if isinstance(value, Const) and is_int(value.value):
        return value.value
    if isinstance(value, Size):
        return value.expr
    return None
